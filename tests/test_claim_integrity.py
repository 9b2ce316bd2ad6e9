"""Claim integrity by class (issue 14): one scope on every promotion path, the non-claim forms (settings, derived
figures, quotes from evidence), figures in cells and table columns. Each class has the attack that must be refused and
the nearest honest variant that must pass; the scope keys come from ``evreg.claims.scope.SCOPE_KEYS``, so a new key is
attacked automatically."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import F, Reg, evreg, only
from evreg.claims import citations, figures, markdown, scope
from evreg.records.models import claims_in

RUN = f"{F}/pkt/measurements/run-1.json"
PKT = f"{F}/pkt/packet.json"

# -- one scope ---------------------------------------------------------------------------------------------------

OTHER: dict[str, Callable[[dict[str, Any]], None]] = {
    "revision": lambda d: d.update(revision="rev-b.2", artifact_id="art-b"),
    "artifact_id": lambda d: d.update(artifact_id="art-b"),
    "quantization": lambda d: d.update(quantization="FP8"),
    "runtime": lambda d: d.update(runtime="vLLM 0.10"),
    "hardware": lambda d: d.update(hardware="NVIDIA GeForce RTX 4090"),
    "topology": lambda d: d["config"].update(tp=2),
}
"""For each scope key, an edit that moves the fixture run to another scope on that key alone."""


def test_every_scope_key_is_attacked() -> None:
    assert set(OTHER) == set(scope.SCOPE_KEYS)


@pytest.mark.parametrize("key", scope.SCOPE_KEYS)
def test_a_run_of_another_scope_filed_in_a_packet_folder_is_a_sideways_promotion(reg: Reg, key: str) -> None:
    """Moving an FP8 run into an NVFP4 packet's folder shows it as that packet's: every scope key, one at a time."""
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090"))
    reg.edit(RUN, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090"))
    assert not [f for f in reg.findings() if f.file == RUN], "the honest run is in scope"
    reg.edit(RUN, OTHER[key])
    placed = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert placed and all("filed in packet 'pkt'" in f.message for f in placed), key
    assert any(key.split("_")[0] in f.message for f in placed)


@pytest.mark.parametrize("side", ["run", "packet"])
def test_a_scope_key_stated_on_one_side_only_is_a_mismatch(reg: Reg, side: str) -> None:
    """A run that states hardware the packet does not, and a run that leaves unstated the hardware its packet
    states: neither is shown as the packet's."""
    reg.edit(PKT if side == "packet" else RUN, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3"))
    [f] = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert f.pointer == "/hardware" and "hardware" in f.message and f.severity == "error"


@pytest.mark.parametrize("key", [k for k in scope.SCOPE_KEYS if k != "revision"])
def test_a_run_stripped_of_a_scope_key_is_not_the_packets(reg: Reg, key: str) -> None:
    """The laundering variant of a sideways placement: delete the key that would differ instead of changing it. Every
    optional scope key the packet states, one at a time (the revision is required of every run by its schema)."""
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090", artifact_id="art-a"))
    reg.edit(RUN, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090", artifact_id="art-a"))
    assert not [f for f in reg.findings() if f.file == RUN], "the honest run is in scope"
    packet = reg.read(PKT)
    assert (scope.topology(packet) if key == "topology" else packet.get(key)) is not None, key

    def strip(d: dict[str, Any]) -> None:
        if key == "topology":
            for where in (d, d.get("config") or {}):
                for k in ("tp", "cards", "topologies"):
                    where.pop(k, None)
        else:
            d.pop(key)

    reg.edit(RUN, strip)
    placed = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert placed and all("filed in packet 'pkt'" in f.message for f in placed), key


@pytest.mark.parametrize(
    ("packet_runtime", "run_runtime", "same"),
    [
        ("llama.cpp SYCL 9976 (e3546c794)", "llama.cpp SYCL e3546c794", True),
        ("vLLM 0.28.0", "vLLM 0.28.0 + unmerged fork", False),
        ("vLLM 0.9", "vLLM 0.9", True),
    ],
)
def test_runtime_is_compared_as_a_parsed_identity(reg: Reg, packet_runtime: str, run_runtime: str, same: bool) -> None:
    reg.edit(PKT, lambda d: d.update(runtime=packet_runtime))
    reg.edit(RUN, lambda d: d.update(runtime=run_runtime))
    placed = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert (not placed) is same


def test_a_control_run_lives_at_family_level(reg: Reg) -> None:
    """The honest way to keep a run of another scope beside a packet: the family's measurements/ folder."""
    reg.edit(RUN, OTHER["quantization"])
    run = reg.read(RUN)
    (reg.root / RUN).unlink()
    reg.put(f"{F}/measurements/run-1.json", run)
    assert not [f for f in reg.findings() if "filed in packet" in f.message]


def test_a_family_hero_speaks_for_the_primary_packet_or_its_own_packet(reg: Reg) -> None:
    # a hero at family level of another runtime than the primary packet: sideways
    run = reg.read(RUN) | {"runtime": "llama.cpp b5163 (8cf427ff)"}
    (reg.root / RUN).unlink()
    reg.put(f"{F}/measurements/run-1.json", run)
    hero = [f for f in only(reg.findings(), "sideways-promotion") if f.file == f"{F}/family.json"]
    assert hero and "runtime" in hero[0].message and hero[0].pointer == "/featured_results/0/measurement_id"
    # the same run in the folder of a packet of its own scope: the hero speaks for that packet
    reg.put(
        f"{F}/llama/packet.json",
        {k: v for k, v in reg.read(PKT).items() if k != "manifest"}
        | {"id": "llama", "runtime": "llama.cpp b5163 (8cf427ff)"},
    )
    (reg.root / f"{F}/measurements/run-1.json").unlink()
    reg.put(f"{F}/llama/measurements/run-1.json", run)
    assert not [f for f in reg.findings() if f.file == f"{F}/family.json" and f.code == "sideways-promotion"]


def test_a_cell_cites_a_run_of_the_scope_of_the_packet_it_links(reg: Reg) -> None:
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3"))
    codes = {(f.file, f.pointer) for f in only(reg.findings(), "sideways-promotion")}
    assert (f"{F}/coverage/matrix.json", "/cells/0:1/evidence_id") in codes


def test_a_packets_prose_cites_another_scope_only_as_a_comparison(reg: Reg) -> None:
    reg.put(f"{F}/measurements/other.json", reg.read(RUN) | {"id": "other", "runtime": "SGLang 0.5"})
    reg.edit(PKT, lambda d: d.update(label="Beats {{ m:other.decode_tok_s[0] }} elsewhere"))
    [f] = [f for f in only(reg.findings(), "sideways-promotion") if f.file == PKT]
    assert f.pointer == "/label" and "'other'" in f.message
    reg.edit(PKT, lambda d: d.update(label="Beats {{ m:other.decode_tok_s[0] | compare }} elsewhere"))
    assert not [f for f in reg.findings() if f.file == PKT]


def test_stated_hardware_must_be_the_packets(reg: Reg, tmp_path: Path) -> None:
    """``--hardware`` states what a tool's file does not say; it is compared with the packet like the file's own."""
    from conftest import REPO

    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3", runtime="vLLM 0.11.0"))
    reg.commit()
    file = str(REPO / "tests/data/tools/vllm-bench-serve.json")
    args = ("import", "vllm-bench", file, "--packet", "fam/pkt", "--cards", "1", "--runtime", "vLLM 0.11.0")
    wrong = evreg(*args, "--hardware", "RTX 4090", cwd=reg.root)
    assert wrong.returncode == 1 and "the stated hardware 'RTX 4090' is not the packet's" in wrong.stdout


# -- forms that are not measurements --------------------------------------------------------------------------------


def _quality(reg: Reg, text: str) -> list[Any]:
    reg.edit(RUN, lambda d: d.update(quality=text))
    return [f for f in reg.findings() if f.file == RUN]


@pytest.mark.parametrize("text", ["{{ set:32 GiB }} card", "power limit {{ set:575 W }}", "timeout {{ set:600 s }}"])
def test_a_setting_is_no_claim(reg: Reg, text: str) -> None:
    assert _quality(reg, text) == []


@pytest.mark.parametrize("text", ["{{ set:52.3 tok/s }}", "{{ set:24.8% }}", "{{ set:1792 GB/s }}", "{{ set:D25.6 }}"])
def test_a_setting_cannot_launder_a_measured_figure(reg: Reg, text: str) -> None:
    [f] = _quality(reg, text)
    assert f.code == "orphan-number" and "cite the measurement" in f.message


def test_a_derived_figure_is_computed_from_stored_samples(reg: Reg) -> None:
    text = "{{ change:m:run-1.decode_tok_s[1] from m:run-1.decode_tok_s[0] }}"
    assert _quality(reg, text) == []
    [form] = citations.parse(text)
    resolved = citations.resolve(form, {"run-1": reg.read(RUN)})
    assert isinstance(resolved, citations.Resolved) and resolved.text == "+0.1%"
    ratio = next(iter(citations.parse("{{ ratio:m:run-1.decode_tok_s[1] to m:run-1.decode_tok_s[0] | 4 }}")))
    assert citations.resolve(ratio, {"run-1": reg.read(RUN)}).text == "1.0013×"  # type: ignore[union-attr]
    [f] = _quality(reg, "{{ change:m:run-1.decode_tok_s[5] from m:run-1.decode_tok_s[0] }}")
    assert f.code == "citation-unresolved" and "out of range" in f.message


def test_a_quote_is_re_read_from_the_records_own_evidence(reg: Reg) -> None:
    assert _quality(reg, "the log says {{ e:/decode_tok_s/0 = 30.21 }}") == []
    [f] = _quality(reg, "the log says {{ e:/decode_tok_s/0 = 31.4 GiB }}")
    assert f.code == "evidence-value-mismatch" and "is not in" in f.message
    [f] = _quality(reg, "the log says {{ e:/nothing = 1 }}")
    assert f.code == "evidence-value-mismatch" and "has nothing at" in f.message
    reg.edit(RUN, lambda d: (d.update(evidence="https://example.org/run.json"), d.pop("evidence_sha256", None)))
    [f] = only(_quality(reg, "the log says {{ e:/decode_tok_s/0 = 30.21 }}"), "evidence-value-mismatch")
    assert "local evidence file" in f.message


def test_quotes_read_logs_by_line_and_csv_by_cell(reg: Reg) -> None:
    log = f"{F}/pkt/evidence/run.log"
    reg.raw(log, b"boot\nCUDA out of memory: tried to allocate 394.00 MiB\ndecode 30.21 then 30.25 tok/s\n")
    reg.edit(RUN, lambda d: (d.update(evidence=log), d.pop("evidence_sha256", None)))
    assert _quality(reg, "OOM: {{ e:line:2 = 394.00 MiB }}") == []
    assert only(_quality(reg, "OOM: {{ e:line:1 = 394.00 MiB }}"), "evidence-value-mismatch")


@pytest.mark.parametrize(
    ("filters", "value", "shown"),
    [("| pct", 0.2356, "23.6%"), ("| pct | 2 | nounit", 0.2356, "23.56"), ("| dot | 3", 0.587, ".587")],
)
def test_ratio_filters_render_the_labs_notations(filters: str, value: float, shown: str) -> None:
    [c] = citations.parse("{{ m:r.draft_acceptance_rate[0] " + filters + " }}")
    resolved = citations.resolve(c, {"r": {"metrics": {"draft_acceptance_rate": [value]}}})
    assert isinstance(resolved, citations.Resolved) and resolved.text == shown


def test_pct_refuses_a_metric_that_is_not_a_ratio() -> None:
    [c] = citations.parse("{{ m:r.decode_tok_s[0] | pct }}")
    assert isinstance(citations.resolve(c, {"r": {"metrics": {"decode_tok_s": [1.0]}}}), str)


@pytest.mark.parametrize("cls", ["setting", "quote", "derived"])
def test_hand_written_markup_of_the_new_forms_is_forged(reg: Reg, cls: str) -> None:
    reg.put("site/page.md", f'# Page\n\n<span class="evreg-{cls}">52.3 tok/s</span>\n')
    assert "citation-forged" in reg.codes()


# -- figures in cells and tables --------------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["93.551 strict", "30.22–30.26", "P1,020 · T8,047", "D–104.840 · stock"])
def test_a_bare_number_in_a_cell_is_a_value_of_its_arm(reg: Reg, label: str) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:2"].update(label=label))
    assert only(reg.findings(), "orphan-number")


@pytest.mark.parametrize("label", ["TP4 · MTP3", "8,192 tokens", "vLLM 0.9.1 stock", "no measured route"])
def test_cell_text_that_states_no_value_passes(reg: Reg, label: str) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:2"].update(label=label))
    assert not only(reg.findings(), "orphan-number")


def test_a_bare_decimal_outside_a_cell_is_not_a_figure() -> None:
    assert claims_in("summary", "Llama 3.3 70B at 1.5 times the batch") == []
    assert [f.text for f in claims_in("label", "93.551 strict", cell=True)] == ["93.551"]


def test_the_letter_notation_takes_thousands_groups() -> None:
    assert [(f.number, f.metric_hints) for f in figures.find_figures("P5,172 · D25.6")] == [
        ("5,172", ("prefill_tok_s",)),
        ("25.6", ("decode_tok_s",)),
    ]
    [c] = citations.parse("{{ m:r.prefill_tok_s[0] | 0 | nounit | sep }}")
    assert citations.resolve(c, {"r": {"metrics": {"prefill_tok_s": [5172.4]}}}).text == "5,172"  # type: ignore[union-attr]


def test_every_invisible_character_hides_nothing_from_the_page_scan() -> None:
    """Every format character Unicode has (category Cf), wherever it is, is dropped before the scan: a figure split
    by any of them is still found, at its place in the original text."""
    import sys
    import unicodedata

    cf = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) > 150
    text = "".join(f"decode · 52{chr(c)}.3 tok/s; " for c in cf)
    found = figures.find_figures(text)
    assert [f.number for f in found] == ["52.3"] * len(cf)
    assert [f.text for f in found] == [f"52{chr(c)}.3 tok/s" for c in cf]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789. tok/s,x½²µ\u200b\u00ad\u2066…ﬁ①\ufeff\u0301e"), max_size=60))
def test_folding_by_translation_is_folding_character_by_character(text: str) -> None:
    """The scan folds only the characters that change (fast): the same text and the same index of each character's
    origin as folding one character at a time."""
    import unicodedata

    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch in figures._INVISIBLE or (ord(ch) > 127 and unicodedata.category(ch) == "Cf"):
            continue
        folded = unicodedata.normalize("NFKC", ch) if ord(ch) > 127 else ch
        out.append(folded)
        where.extend([i] * len(folded))
    got, got_where = figures._folded(text)
    assert got == "".join(out)
    assert [got_where[k] if got_where is not None else k for k in range(len(got))] == where


PAGE = """# Results

| Model | Decode (tok/s) | Cards |
|---|---:|---:|
| A | 52.3 | 4 |
| B | {{ m:run-1.decode_tok_s[0] }} | 1 |

    an indented block: 52.3 tok/s is code

<pre>
52.3 tok/s in a pre block is code
</pre>
"""


def test_a_unit_in_a_table_header_applies_to_its_column(reg: Reg) -> None:
    reg.put("site/results.md", PAGE)
    found = [f for f in only(reg.findings(), "orphan-number") if f.file == "site/results.md"]
    assert [(f.line, f.message) for f in found] == [
        (5, "figure '52.3' under the column 'Decode (tok/s)' (in tok/s) is not a citation")
    ]


def test_code_is_fenced_indented_or_pre_alike_in_validate_and_build() -> None:
    code = {n for n, _, is_code in markdown.lines(PAGE) if is_code}
    assert code == {8, 10, 11, 12}
    assert 5 not in code  # a table row is prose


def test_the_lab_import_binds_cells_exactly_and_exports_back(empty_repo: Path) -> None:
    """The importer writes cell figures as citations that render back to the lab's exact text (export lossless)."""
    from conftest import REPO
    from evreg.formats import neural_download as nd
    from evreg.store import load

    source = REPO / "tests/data/lab/families/laguna-s.json"
    assert evreg("import", "neural-download", str(source), cwd=empty_repo).returncode in (0, 1)
    text = (empty_repo / "packets/laguna-s/coverage/laguna-context-by-tp.json").read_text()
    assert "| pct" in text and "| sep" in text
    original = json.loads(source.read_text())
    assert json.dumps(nd.export(load(empty_repo), "laguna-s"), sort_keys=True) == json.dumps(original, sort_keys=True)
