"""Failing and passing fixtures for the structural, reference and evidence rules.

Each failing case is the smallest change to a clean fixture registry that
breaks one rule; each asserts the rule code, the file and the JSON pointer."""

from __future__ import annotations

import os
from typing import Any

import pytest

from evreg.core import jsonio
from helpers import EVIDENCE, F, Reg, only

RUN = f"{F}/pkt/measurements/run-1.json"


def test_clean_fixture_registry_passes_every_rule(reg: Reg) -> None:
    assert reg.findings() == []


def one(reg: Reg, code: str, file: str, pointer: str) -> None:
    hits = only(reg.findings(), code)
    assert [(f.file, f.pointer) for f in hits] == [(file, pointer)], reg.findings()
    assert hits[0].message and hits[0].hint


# -- parse -------------------------------------------------------------------------------------------------------------


def test_truncated_json_reports_line_and_column(reg: Reg) -> None:
    reg.raw(RUN, b'{\n  "id": "run-1",\n  "metrics": {"decode_tok_s": [30.2, ')
    [f] = only(reg.findings(), "json-syntax")
    assert (f.file, f.line) == (RUN, 3)
    assert f.column is not None and f.column > 30


def test_duplicate_key_points_at_the_repeat(reg: Reg) -> None:
    reg.raw(RUN, b'{"kind": "run-measurement",\n "id": "run-1",\n "id": "run-2"}')
    [f] = only(reg.findings(), "json-duplicate-key")
    assert (f.file, f.pointer, f.line) == (RUN, "/id", 3)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers(reg: Reg, token: str) -> None:
    text = (reg.root / RUN).read_text().replace("30.21", token)
    reg.raw(RUN, text.encode())
    [f] = only(reg.findings(), "json-non-finite")
    assert (f.file, f.pointer) == (RUN, "/metrics/decode_tok_s/0")
    assert token in f.message


@pytest.mark.parametrize("token", ["100000000000000000000", "-9223372036854775809", "1" * 5000])
def test_integers_beyond_64_bits(reg: Reg, token: str) -> None:
    text = (reg.root / RUN).read_text().replace("30.21", token)
    reg.raw(RUN, text.encode())
    [f] = only(reg.findings(), "json-non-finite")
    assert (f.file, f.pointer) == (RUN, "/metrics/decode_tok_s/0")
    assert token[:20] in f.message and f.line is not None


@pytest.mark.parametrize("token", ["18446744073709551615", "-9223372036854775808", "1e+20"])
def test_numbers_within_range_pass_the_parser(reg: Reg, token: str) -> None:
    text = (reg.root / RUN).read_text().replace("30.21", token)
    reg.raw(RUN, text.encode())
    assert only(reg.findings(), "json-non-finite") == [] and only(reg.findings(), "json-syntax") == []


def test_boolean_where_a_number_belongs(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[True, 30.25]))
    one(reg, "json-non-finite", RUN, "/metrics/decode_tok_s/0")


def test_number_as_string_is_a_schema_violation(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=["30.21"]))
    one(reg, "schema", RUN, "/metrics/decode_tok_s/0")


@pytest.mark.parametrize("bad_id", ["Run-1", "run/1", "..", "run 1", "run--1", "", "run.-1", ".run", "run."])
def test_ids_must_follow_the_id_grammar(reg: Reg, bad_id: str) -> None:
    reg.edit(RUN, lambda d: d.update(id=bad_id))
    [finding] = [f for f in only(reg.findings(), "schema") if (f.file, f.pointer) == (RUN, "/id")]
    assert "is not an id: the id " in finding.message  # says what is wrong, not only the pattern


def test_missing_required_field(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.pop("evidence"))
    [f] = only(reg.findings(), "schema")
    assert (f.file, f.pointer) == (RUN, "")
    assert "evidence" in f.hint


def test_unknown_fields_are_kept_not_rejected(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(new_lab_field={"x": [1, "two"]}))
    assert reg.findings() == []


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "empty"),
        (b"\xef\xbb\xbf{}", "byte-order mark"),
        (b'{"id": "\xff\xfe"}', "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nest"),
    ],
)
def test_unreadable_files(reg: Reg, content: bytes, needle: str) -> None:
    reg.raw(RUN, content)
    [f] = only(reg.findings(), "json-syntax")
    assert f.file == RUN and needle in f.message


def test_array_where_an_object_belongs(reg: Reg) -> None:
    reg.raw(RUN, b"[1, 2]")
    one(reg, "schema", RUN, "")


def test_fifty_megabyte_file_is_refused_unread(reg: Reg) -> None:
    path = reg.root / RUN
    with path.open("wb") as fh:  # sparse: 50 MB of zero bytes on disk costs nothing
        fh.truncate(50 * 1024 * 1024)
    findings = reg.findings()
    assert [(f.code, f.file) for f in findings if f.file == RUN] == [("file-too-large", RUN)]


def test_baseline_has_its_own_larger_limit(reg: Reg) -> None:
    """The baseline grows with the registry (one entry per accepted finding): over the 8 MiB record
    limit it is still read and applied, in the work tree and from a commit; over its own limit it is refused."""
    reg.edit(RUN, lambda d: d.update(caveat="decode reached 91.5 tok/s here"))
    [orphan] = only(reg.findings(), "orphan-number")
    entry = {k: getattr(orphan, k) for k in ("code", "file", "pointer", "message", "digest")}
    reason = "accepted: " + "x" * (jsonio.MAX_RECORD_BYTES + 1024)
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [{**entry, "reason": reason}]})
    assert (reg.root / "packets/baseline.json").stat().st_size > jsonio.MAX_RECORD_BYTES
    reg.commit("a large baseline")
    for rev in (None, "HEAD"):
        findings = reg.findings(rev)
        assert not only(findings, "file-too-large")
        assert [f.baselined for f in findings if f.code == "orphan-number"] == [True]
    with (reg.root / "packets/baseline.json").open("wb") as fh:  # sparse, as above
        fh.truncate(jsonio.MAX_BASELINE_BYTES + 1)
    [refused] = only(reg.findings(), "file-too-large")
    assert refused.file == "packets/baseline.json" and f"{jsonio.MAX_BASELINE_BYTES:,}" in refused.message


# -- layout and ids ----------------------------------------------------------------------------------------------------


def test_id_differs_from_file_name(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(id="run-2"))
    one(reg, "layout", RUN, "/id")


def test_kind_that_does_not_belong_in_the_folder(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(kind="view"))
    one(reg, "layout", RUN, "/kind")


def test_file_in_no_record_place(reg: Reg) -> None:
    reg.put(f"{F}/notes.json", {"kind": "view"})
    one(reg, "layout", f"{F}/notes.json", "")


def test_record_symlink_is_refused(reg: Reg) -> None:
    link = reg.root / f"{F}/views/linked.json"
    os.symlink(reg.root / f"{F}/views/tp-view.json", link)
    one(reg, "layout", f"{F}/views/linked.json", "")


def test_duplicate_measurement_id_across_folders(reg: Reg) -> None:
    reg.put(f"{F}/measurements/run-1.json", reg.read(RUN))
    hits = only(reg.findings(), "duplicate-id")
    assert len(hits) == 1 and hits[0].pointer == "/id"
    assert {hits[0].file} <= {RUN, f"{F}/measurements/run-1.json"}


def test_duplicate_artifact_id_inside_the_family(reg: Reg) -> None:
    def dup(d: dict) -> None:
        d["weight_revisions"][1]["quantized_artifacts"][0]["id"] = "art-a"

    reg.edit(f"{F}/family.json", dup)
    codes = {(f.code, f.pointer) for f in reg.findings()}
    assert ("duplicate-id", "/weight_revisions/1/quantized_artifacts/0/id") in codes


# -- references --------------------------------------------------------------------------------------------------------


def test_artifact_id_that_names_no_artifact(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(artifact_id="art-zzz"))
    one(reg, "dangling-reference", RUN, "/artifact_id")


def test_unknown_revision(reg: Reg) -> None:
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(revision="rev-z"))
    one(reg, "dangling-reference", f"{F}/pkt/packet.json", "/revision")


def test_view_citing_unknown_measurement(reg: Reg) -> None:
    reg.edit(f"{F}/views/tp-view.json", lambda d: d["series"][0]["measurement_ids"].append("nope"))
    one(reg, "dangling-reference", f"{F}/views/tp-view.json", "/series/0/measurement_ids/1")


def test_coverage_cell_citing_unknown_packet(reg: Reg) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:1"].update(packet_id="other"))
    one(reg, "dangling-reference", f"{F}/coverage/matrix.json", "/cells/0:1/packet_id")


def test_primary_packet_must_exist(reg: Reg) -> None:
    reg.edit(f"{F}/family.json", lambda d: d.update(primary_packet_id="ghost"))
    one(reg, "dangling-reference", f"{F}/family.json", "/primary_packet_id")


def test_external_evidence_needs_a_declared_source(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(evidence="lab:data/run.json"))
    one(reg, "dangling-reference", RUN, "/evidence")
    reg.edit(f"{F}/family.json", lambda d: d.update(sources={"lab": {"repository": "https://example.org/lab"}}))
    assert only(reg.findings(), "dangling-reference") == []


def test_artifact_of_another_revision(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(artifact_id="art-b"))
    one(reg, "artifact-mismatch", RUN, "/artifact_id")


def test_quantization_unlike_the_artifacts(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(quantization="FP8"))
    one(reg, "artifact-mismatch", RUN, "/quantization")


def test_an_artifacts_quantization_needs_the_artifact_named(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.pop("artifact_id"))
    one(reg, "artifact-mismatch", RUN, "/quantization")


def test_artifact_bound_revision_needs_the_artifact_or_the_weights_quantization(reg: Reg) -> None:
    reg.edit(RUN, lambda d: (d.pop("artifact_id"), d.pop("quantization")))
    one(reg, "artifact-mismatch", RUN, "")


def test_a_revision_gaining_an_artifact_keeps_its_own_weights_packets(reg: Reg) -> None:
    """A packet of the revision's own weights (no artifact, their own precision) stays valid when the revision gains
    an artifact, and its measurements too."""
    before = {(f.code, f.file) for f in reg.findings()}
    for path in (f"{F}/pkt/packet.json", RUN):
        reg.edit(path, lambda d: (d.pop("artifact_id"), d.update(quantization="BF16")))
    after = {(f.code, f.file) for f in reg.findings() if f.code == "artifact-mismatch"}
    assert after == set() and not any(code == "artifact-mismatch" for code, _ in before)


def test_closure_artifact_must_belong_to_its_revision(reg: Reg) -> None:
    reg.edit(f"{F}/closures/closure-1.json", lambda d: d.update(artifact_id="art-a"))
    one(reg, "artifact-mismatch", f"{F}/closures/closure-1.json", "/artifact_id")


# -- evidence ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "packets/../../outside.json"])
def test_evidence_paths_that_leave_the_repository(reg: Reg, path: str) -> None:
    reg.edit(RUN, lambda d: (d.update(evidence=path), d.pop("evidence_sha256")))
    one(reg, "evidence-escape", RUN, "/evidence")


def test_evidence_symlink_leading_outside(reg: Reg, tmp_path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    os.symlink(secret, reg.root / f"{F}/pkt/evidence/link.json")
    reg.edit(RUN, lambda d: (d.update(evidence=f"{F}/pkt/evidence/link.json"), d.pop("evidence_sha256")))
    one(reg, "evidence-escape", RUN, "/evidence")


def test_evidence_symlink_inside_the_repository_is_fine(reg: Reg) -> None:
    os.symlink("run.json", reg.root / f"{F}/pkt/evidence/alias.json")
    reg.edit(RUN, lambda d: (d.update(evidence=f"{F}/pkt/evidence/alias.json"), d.pop("evidence_sha256")))
    assert reg.findings() == []


def test_missing_evidence_file(reg: Reg) -> None:
    (reg.root / EVIDENCE).unlink()
    hits = only(reg.findings(), "evidence-missing")
    assert (RUN, "/evidence") in {(f.file, f.pointer) for f in hits}
    assert (f"{F}/family.json", "/weight_revisions/0/quantized_artifacts/0/evidence") in {
        (f.file, f.pointer) for f in hits
    }


def test_evidence_folder_is_not_a_file(reg: Reg) -> None:
    reg.edit(RUN, lambda d: (d.update(evidence=f"{F}/pkt/evidence"), d.pop("evidence_sha256")))
    one(reg, "evidence-missing", RUN, "/evidence")


def test_altered_evidence_bytes(reg: Reg) -> None:
    (reg.root / EVIDENCE).write_bytes(b'{"decode_tok_s": [31.0, 30.25]}\n')
    one(reg, "evidence-hash-mismatch", RUN, f"/evidence_sha256/{EVIDENCE.replace('/', '~1')}")


def test_hash_for_a_file_the_record_does_not_cite(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["evidence_sha256"].update({"packets/fam/other.json": "0" * 64}))
    one(reg, "evidence-hash-mismatch", RUN, "/evidence_sha256/packets~1fam~1other.json")


# -- evidence locators in CSV, TSV and text logs are re-read like JSON pointers ----------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "locator", "ok"),
    [
        ("runs.csv", "run,decode_tok_s\nfirst,30.21\nsecond,30.25\n", "csv:2/decode_tok_s", True),
        ("runs.csv", "run,decode_tok_s\nfirst,NaN\nsecond,NaN\n", "csv:2/decode_tok_s", False),  # NaN backs nothing
        ("runs.csv", "run,decode_tok_s\nfirst,30.21\n", "csv:2/decode_tok_s", False),  # no such row
        ("runs.tsv", "run\tdecode_tok_s\nfirst\t30.21\nsecond\t30.25\n", "csv:2/decode_tok_s", True),
        ("run.log", "warmup done\nsteady decode 30.25 tok/s over 512 tokens\n", "line:2:1", True),
        ("run.log", "warmup done\nsteady decode 30.25 tok/s over 512 tokens\n", "line:2", False),  # two numbers
        ("run.log", "warmup done\nsteady decode 31.25 tok/s\n", "line:2", False),  # another value
    ],
)
def test_csv_and_text_locators_are_checked(reg: Reg, name: str, content: str, locator: str, ok: bool) -> None:
    import hashlib

    path = f"{F}/pkt/evidence/{name}"
    reg.raw(path, content.encode())

    def point(d: dict[str, Any]) -> None:
        d.update(evidence=path, evidence_sha256={path: hashlib.sha256(content.encode()).hexdigest()})
        d["metrics"]["decode_tok_s"] = [30.25]  # one sample, located (a record locates each sample or none)
        d["evidence_locators"] = {"decode_tok_s[0]": locator}

    reg.edit(RUN, point)
    mismatches = only(reg.findings(), "evidence-value-mismatch")
    assert (mismatches == []) is ok, [f.message for f in mismatches]


# -- schema drift ------------------------------------------------------------------------------------------------------


def test_schema_drift(reg: Reg) -> None:
    path = reg.root / "schema/packet.schema.json"
    path.write_text(path.read_text().replace('"id"', '"identifier"', 1))
    one(reg, "schema-drift", "schema/packet.schema.json", "")


# -- runtime and revision identity -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime", "family", "ok"),
    [
        ("vLLM XPU 0.20.1 + local fallback patch", "vLLM", True),
        ("vLLM XPU 0.20.1", "vLLM XPU", True),
        ("llama.cpp SYCL e3546c794", "vLLM", False),
        ("vLLM 0.28.0", "vLLM 0.28.1", False),  # a family names no build
    ],
)
def test_runtime_family_is_the_runtimes_engine(reg: Reg, runtime: str, family: str, ok: bool) -> None:
    reg.edit(RUN, lambda d: d.update(runtime=runtime, runtime_family=family))
    assert (only(reg.findings(), "runtime-family-mismatch") == []) is ok


def test_revisions_declared_as_model_variants_are_revisions(reg: Reg) -> None:
    """The lab declares sibling weights in model_variants; packets and measurements name them like revisions."""
    sibling = {"id": "sibling.1", "repository": "org/sibling", "revision": "d" * 40}
    reg.edit(RUN, lambda d: (d.update(revision="sibling.1"), d.pop("artifact_id"), d.pop("quantization")))
    assert "dangling-reference" in reg.codes()
    reg.edit(f"{F}/family.json", lambda d: d.update(model_variants=[sibling]))
    assert "dangling-reference" not in reg.codes()
    reg.edit(f"{F}/family.json", lambda d: d["model_variants"].append(dict(sibling)))
    [dup] = only(reg.findings(), "duplicate-id")
    assert dup.pointer == "/model_variants/1/id"
