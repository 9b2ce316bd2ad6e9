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
    _baseline(reg, _entry(f, "fields", "digest") | {"message": "an older wording of the same finding"})
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
    _baseline(reg, _entry(f, "message", "digest") | {"reason": "x"})
    assert [x.baselined for x in reg.findings()] == [True]


def test_an_entry_must_say_which_finding_it_accepts(reg: Reg) -> None:
    f = _orphan(reg, "40.1 tok/s")
    for what in ({}, {"fields": {}}, {"fields": {"figure": 40.1}}):
        _baseline(reg, _entry(f) | what)
        assert only(reg.findings(), "schema"), what


def test_an_entry_binds_the_text_it_accepted(reg: Reg) -> None:
    """The same figure in other words at the same place is another claim: the entry binds the reviewed text."""
    f = _orphan(reg, "40.1 tok/s")
    assert f["digest"].startswith("sha256:")
    _baseline(reg, _entry(f, "fields", "digest"))
    assert [x.baselined for x in reg.findings()] == [True]
    reg.edit(PKT, lambda d: d.update(caveat="Peak decode 40.1 tok/s once, and it is the fastest card."))
    found = reg.findings()
    assert [x.baselined for x in only(found, "orphan-number")] == [False]
    assert len(only(found, "baseline-stale")) == 1
    without = _entry(f, "fields")  # an entry that binds no text accepts nothing that has one
    _baseline(reg, without)
    assert [x.baselined for x in only(reg.findings(), "orphan-number")] == [False]


def test_an_entry_for_a_figure_on_a_page_accepts_that_line_only(reg: Reg) -> None:
    """One reviewed figure on a hand-written page does not accept every later copy of it on the page."""
    page = reg.root / "site/notes.md"
    page.parent.mkdir(exist_ok=True)
    page.write_text("# Notes\n\nThe card decodes 40.1 tok/s.\n", "utf-8")
    [f] = [x.model_dump(mode="json") for x in only(reg.findings(), "orphan-number")]
    assert f["file"] == "site/notes.md" and f["line"] == 3 and f["digest"]
    _baseline(reg, _entry(f, "fields", "digest"))
    assert [x.baselined for x in only(reg.findings(), "orphan-number")] == [True]
    page.write_text("# Notes\n\nThe card decodes 40.1 tok/s.\n\nAgain: 40.1 tok/s.\n", "utf-8")
    found = only(reg.findings(), "orphan-number")
    assert sorted((x.line, x.baselined) for x in found) == [(3, True), (5, False)]
