"""The reviewed baseline accepts a finding by its code, file, pointer and fields (what it is about), so a message
reworded by a new version of a rule stays accepted, and a claim that changes at the same place does not."""

from __future__ import annotations

from typing import Any

from helpers import F, Reg, only

PKT = f"{F}/pkt/packet.json"


def _baseline(reg: Reg, entry: dict[str, Any]) -> None:
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [entry]})


def _entry(f: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A baseline entry for finding ``f`` naming it by code, file, pointer and ``keys``."""
    return {k: f[k] for k in ("code", "file", "pointer", *keys)} | {"reason": "a genuine defect of the data"}


def _orphan(reg: Reg, figure: str) -> dict[str, Any]:
    reg.edit(PKT, lambda d: d.update(caveat=f"Peak decode {figure} once."))
    [f] = only(reg.findings(), "orphan-number")
    return f.model_dump(mode="json")


def test_an_entry_accepts_the_finding_its_fields_name_whatever_the_message_says(reg: Reg) -> None:
    f = _orphan(reg, "40.1 tok/s")
    assert f["fields"] == {"figure": "40.1 tok/s", "field": "caveat"}
    _baseline(reg, _entry(f, "fields") | {"message": "an older wording of the same finding"})
    [accepted] = reg.findings()
    assert accepted.baselined and accepted.baseline_reason == "a genuine defect of the data"


def test_an_entry_does_not_accept_another_figure_at_the_same_place(reg: Reg) -> None:
    f = _orphan(reg, "40.1 tok/s")
    _baseline(
        reg, {"code": f["code"], "file": f["file"], "pointer": f["pointer"], "fields": f["fields"], "reason": "x"}
    )
    _orphan_again = reg.edit(PKT, lambda d: d.update(caveat="Peak decode 80.2 tok/s once."))
    assert _orphan_again is None
    found = reg.findings()
    assert [x.baselined for x in only(found, "orphan-number")] == [False]
    assert len(only(found, "baseline-stale")) == 1


def test_an_entry_by_exact_message_still_works(reg: Reg) -> None:
    f = _orphan(reg, "40.1 tok/s")
    _baseline(
        reg, {"code": f["code"], "file": f["file"], "pointer": f["pointer"], "message": f["message"], "reason": "x"}
    )
    assert [x.baselined for x in reg.findings()] == [True]


def test_an_entry_must_say_which_finding_it_accepts(reg: Reg) -> None:
    f = _orphan(reg, "40.1 tok/s")
    for what in ({}, {"fields": {}}, {"fields": {"figure": 40.1}}):
        _baseline(reg, _entry(f) | what)
        assert only(reg.findings(), "schema"), what
