"""Failing and passing fixtures for the history rules (``validate --base``) on the fixture registry: a published
record's fields, kind, JSON types, identity and evidence bytes are never rewritten; a raised grade needs a new
observation; a change cannot baseline its own findings."""

from __future__ import annotations

from typing import Any

from evreg.check import rules
from evreg.check.pipeline import validate
from helpers import EVIDENCE, F, Reg, expect, only

RUN = f"{F}/pkt/measurements/run-1.json"


def _with_base(reg: Reg) -> list[Any]:
    return validate(reg.root, rules.discover(), base="HEAD", use_cache=False)[1].findings


def test_changing_a_published_measurements_kind_or_json_types_is_a_rewrite(reg: Reg) -> None:
    """Run and series measurements share a namespace (and a folder): a kind change is an edit of the
    same record; and JSON types count (``true`` is not ``1``)."""

    def to_series(d: dict[str, Any]) -> None:
        d.update(kind="series-measurement", points=[{"x": 0}])
        d["metrics"]["decode_tok_s"][1] = 999.0

    reg.edit(RUN, to_series)
    expect(_with_base(reg), "history-rewrite", RUN, "/kind")
    reg.repo.git.checkout("--", ".")
    reg.edit(RUN, lambda d: d["config"].update(natural_eos=1))
    expect(_with_base(reg), "history-rewrite", RUN, "/config")


def test_packet_identity_cannot_be_added_or_widened_later(reg: Reg) -> None:
    packet = f"{F}/pkt/packet.json"
    reg.edit(packet, lambda d: d.update(hardware="NVIDIA H100"))  # missing on the base
    expect(_with_base(reg), "history-rewrite", packet, "/hardware")
    reg.repo.git.checkout("--", ".")
    reg.edit(packet, lambda d: d.update(topologies=[1, 4]))
    expect(_with_base(reg), "history-rewrite", packet, "/topologies")


def test_grades_need_new_observations(reg: Reg) -> None:
    """A grade where there was none is a raise; a copy of a published run under a new id is not new
    evidence; a weight revision's grades are held the same way."""
    packet = f"{F}/pkt/packet.json"
    grade = {"grade": "B", "scope": "TP1", "basis": "repeats", "reviewed_at": "2026-11-30", "evidence": ["run-1"]}
    reg.edit(packet, lambda d: d.update(grades={"capability": grade}))
    copy = reg.read(RUN) | {"id": "run-copy"}
    reg.put(f"{F}/pkt/measurements/run-copy.json", copy)
    expect(_with_base(reg), "promotion-without-evidence", packet, "/grades/capability/grade")
    reg.repo.git.checkout("--", ".")
    (reg.root / f"{F}/pkt/measurements/run-copy.json").unlink()
    reg.edit(f"{F}/family.json", lambda d: d["weight_revisions"][0].update(grades={"capability": grade}))
    expect(
        _with_base(reg), "promotion-without-evidence", f"{F}/family.json", "/weight_revisions/0/grades/capability/grade"
    )


def test_evidence_of_a_published_record_cannot_be_rewritten_even_with_its_new_hash(reg: Reg) -> None:
    import hashlib

    new_bytes = b'{"decode_tok_s": [31.21, 30.25]}\n'
    reg.raw(EVIDENCE, new_bytes)
    reg.edit(RUN, lambda d: d["evidence_sha256"].update({EVIDENCE: hashlib.sha256(new_bytes).hexdigest()}))
    reg.edit(RUN, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 31.21))
    _registry, report = validate(reg.root, rules.discover(), base="HEAD", use_cache=False)
    messages = [f.message for f in only(report.findings, "history-rewrite")]
    assert any(f"evidence file {EVIDENCE} of published" in m for m in messages), messages
    assert only(report.findings, "evidence-hash-mismatch") == []  # the hashes agree: only history catches it


# -- the baseline cannot approve its own change ------------------------------------------------------------------------


def test_a_change_cannot_baseline_its_own_findings(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 99.0))
    [rewrite] = only(_with_base(reg), "history-rewrite")
    entry = {"code": rewrite.code, "file": rewrite.file, "pointer": rewrite.pointer, "message": rewrite.message}
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [entry | {"reason": "typo"}]})
    findings = _with_base(reg)
    assert [f.baselined for f in only(findings, "history-rewrite")] == [False]  # history is never baselinable
    expect(findings, "baseline-self-approval", "packets/baseline.json", "/entries/0")
    # nor is the self-approval finding, even by an entry that names itself
    itself = {"code": "baseline-self-approval", "file": "packets/baseline.json", "pointer": "/entries/1"}
    itself["message"] = "this change adds or edits a baseline entry (baseline-self-approval)"
    reg.put(
        "packets/baseline.json", {"kind": "baseline", "entries": [entry | {"reason": "x"}, itself | {"reason": "x"}]}
    )
    assert not any(f.baselined for f in only(_with_base(reg), "baseline-self-approval"))


def test_baseline_entries_name_the_exact_message(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(caveat="reaches 52.3 tok/s"))
    wildcard = {"code": "orphan-number", "file": RUN, "pointer": "/caveat", "reason": "lab prose"}
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [wildcard]})
    findings = reg.findings()
    assert not any(f.baselined for f in findings)
    expect(findings, "schema", "packets/baseline.json", "/entries/0")


def test_a_published_record_may_gain_its_model_and_workload_fields_once(reg: Reg) -> None:
    """Linking published data is adding what was unstated: a revision's canonical model and a run's workload
    fields; once stated they are identity like the rest."""
    family = f"{F}/family.json"
    reg.edit(family, lambda d: d["weight_revisions"][1].pop("model"))
    reg.edit(RUN, lambda d: d.pop("workload_fields", None))
    reg.commit("published without them")
    reg.edit(family, lambda d: d["weight_revisions"][1].update(model="qwen3.6-27b"))
    reg.edit(RUN, lambda d: d.update(workload_fields={"phase": "decode", "concurrency": 1}))  # a reclassification
    assert {f.pointer for f in only(_with_base(reg), "history-rewrite")} == {"/workload_fields"}
    read = {"output_tokens": 512, "output_end": "natural", "requests": 12}  # what its text and config state
    reg.edit(RUN, lambda d: d.update(workload_fields=read))
    assert only(_with_base(reg), "history-rewrite") == []
    reg.commit("linked")
    reg.edit(family, lambda d: d["weight_revisions"][1].update(model="qwen3.8-27b"))
    reg.edit(RUN, lambda d: d["workload_fields"].update(output_tokens=128))
    rewrites = {(f.file, f.pointer) for f in only(_with_base(reg), "history-rewrite")}
    assert rewrites == {(family, "/weight_revisions"), (RUN, "/workload_fields")}
    reg.edit(RUN, lambda d: d.pop("workload_fields"))  # dropping them again is a rewrite too
    assert (RUN, "/workload_fields") in {(f.file, f.pointer) for f in only(_with_base(reg), "history-rewrite")}
