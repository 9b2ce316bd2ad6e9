"""An independent review of issue 14 as a dishonest contributor: each test is the smallest input of one class of
attack, on a copy of the real records or on the one definition the rules use (the figure grammar, the Markdown
code reading, the runtime and hardware comparisons), each beside its honest neighbour that must pass. Every hole the
review found is closed (none is left as ``xfail``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import blocking as _found
from conftest import edit_json as _edit
from evreg.claims import markdown
from evreg.claims.figures import find_figures
from evreg.claims.runtimes import runtime_matches
from evreg.claims.scope import differing, same_hardware
from evreg.core.findings import Finding
from evreg.core.vocab import promotable

FAM = "packets/qwen-35b"
PACKET_DIR = f"{FAM}/qwen36-35b-quark-int8-b70-result"
PACKET = f"{PACKET_DIR}/packet.json"
STRICT = f"{PACKET_DIR}/measurements/qwen35-quark-tp4-strict-current.json"
FAMILY = f"{FAM}/family.json"
Q38 = "packets/qwen3-8-27b"
NVFP4 = f"{Q38}/rtx5090-inferact-qwen3-8-27b-nvfp4"
DENSE = f"{NVFP4}/measurements/qwen38-dense-default.json"
PAGE = "site/contributing.md"


# -- a copy of the real records, one per test ------------------------------------------------------------------


def _copy_run(root: Path, src: str, folder: str, new_id: str, fn: Callable[[Any], Any]) -> str:
    data = json.loads((root / src).read_text("utf-8"))
    data["id"] = new_id
    fn(data)
    path = f"{folder}/{new_id}.json"
    (root / path).write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    return path


def _has(findings: list[Finding], code: str, file: str) -> bool:
    return any(f.code == code and f.file == file for f in findings)


def _on_page(root: Path, text: str, page: str = PAGE) -> list[Finding]:
    target = root / page
    target.parent.mkdir(parents=True, exist_ok=True)
    before = target.read_text("utf-8") if target.exists() else ""
    target.write_text(before + "\n\n" + text + "\n", "utf-8")
    return _found(root)


def test_the_copy_is_clean(real: Path) -> None:
    assert _found(real) == []


# -- 1. the figure grammar --------------------------------------------------------------------------------------

FIXED = [
    "reaches ⁵² tok/s",  # superscript digits only: no \d, so the scan was skipped
    "reaches 52.3\u200e tok/s",  # a left-to-right mark (format character) between number and unit
    "reaches 52.3\u2066 tok/s",  # a directional isolate
    "reaches 52.3\u034f tok/s",  # a combining grapheme joiner
    "TTFT=274 at TP2",
    "TTFT:274 at TP2",
    "3.2X faster than eager",
    "52.3 tokens per sec",
    "52 tokens a second",
    "2.5 seconds",
    "274 milliseconds to first token",
    "274 msec",
    "3.1 req/s served",
    "52.3 qps",
    "decode ~52.3",
    "decode rate 52.3",
    "decode speed of 52.3",
    "52.3 **tok/s**",  # emphasis on the unit (the build does not see it either)
    "52.3 [tok/s](#)",  # a link on the unit
]


@pytest.mark.parametrize("text", FIXED)
def test_fixed_spellings_are_figures(text: str) -> None:
    assert find_figures(text), text


SPELLINGS = [
    "52.3 tk/s",
    "52.3 tok s⁻¹",
    "52.3 output tok/s",  # a word between the number and the unit
    "a 52.3-tok/s run",  # a hyphen between the number and the unit
    "D 52.3 at TP4",  # the letter notation with a space
    "D=52.3",
    "8x faster",  # an integer multiplier that compares
    "2× over eager",
    "was 3x.",
    "1.2 kW at the wall",
    "50 TFLOPS",
    "warm-up took 5 min",
    "8 hours",
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_more_spellings_are_figures(text: str) -> None:
    assert find_figures(text), text


@pytest.mark.parametrize(
    "text",
    ["4x RTX 5090", "4x4 grid", "A 2.5 release", "min_p 0.75", "pmin075", "TP4-8", "1990s", "Xeon CPU @ 2.60GHz"],
)
def test_neighbours_of_those_spellings_are_not(text: str) -> None:
    assert find_figures(text) == [], text


def test_a_diagnostic_class_in_any_case_is_not_promotable() -> None:
    run = {"kind": "run-measurement", "state": "lab-measured"}
    for cls in ("Diagnostic strict deep gate", "strict diagnostic run", "diagnostics", "exact-8k-grade-c-diagnostic"):
        assert promotable({**run, "measurement_class": cls}), cls
    for cls in ("strict deep gate", "non-diagnostic strict gate"):
        assert promotable({**run, "measurement_class": cls}) is None, cls


def test_a_figure_in_a_record_typed_around_a_setting_is_found(real: Path) -> None:
    _edit(real, STRICT, lambda d: d.update(caveat="decode reached {{ set:93.55 }} tok/s"))
    assert _has(_found(real), "orphan-number", STRICT)


def test_a_figure_split_over_two_settings_is_found(real: Path) -> None:
    _edit(real, STRICT, lambda d: d.update(caveat="decode {{ set:93 }}.{{ set:55 }} tok/s"))
    assert _has(_found(real), "orphan-number", STRICT)


def test_a_multiplier_in_a_setting_is_found(real: Path) -> None:
    _edit(real, STRICT, lambda d: d.update(caveat="{{ set:3.2x }} faster than eager"))
    assert _has(_found(real), "orphan-number", STRICT)


def test_a_latency_after_a_metric_word_is_no_setting(real: Path) -> None:
    _edit(real, STRICT, lambda d: d.update(caveat="TTFT was {{ set:187 ms }} at p512"))
    assert _has(_found(real), "orphan-number", STRICT)


def test_a_nounit_citation_with_another_unit_after_it(real: Path) -> None:
    cite = "{{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | nounit }}"
    _edit(real, STRICT, lambda d: d.update(caveat=f"TTFT {cite} ms"))
    assert _found(real)


# -- hand-written pages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Write code in a `<pre>` element.\n\nDecode reaches 52.3 tok/s.",
        "```\n~~~\n```\n\nDecode reaches 52.3 tok/s.",
        "```\nx\n````\ny\n```\n\nDecode reaches 52.3 tok/s.",
        "```x```\n\nDecode reaches 52.3 tok/s.\n\n```x```",
    ],
)
def test_prose_after_what_is_not_code_is_checked(text: str) -> None:
    assert any("52.3 tok/s" in line for _, line in markdown.prose(text))


def test_code_stays_code() -> None:
    for text in ("```\n52.3 tok/s\n```", "~~~~\n```\n52.3 tok/s\n~~~~", "<pre>\n52.3 tok/s\n</pre>", "`52.3 tok/s`"):
        assert not any("52.3" in line for _, line in markdown.prose(text)), text


PAGE_FIGURES = [
    "| Setup | tok/s (decode) |\n|---|---|\n| a | 52.3 |",  # a unit first in a column header
    "| Setup | Decode (tok/s) ↑ |\n|---|---|\n| a | 52.3 |",  # a mark after the header's unit
    "Setup | Decode (tok/s)\n--- | ---\na | 52.3",  # a table without outer pipes
    "<table><tr><th>Decode (tok/s)</th></tr><tr><td>52.3</td></tr></table>",  # an HTML table
    "Decode reaches 52.3\ntok/s in one paragraph.",  # a line break between number and unit
    "Decode reaches 52.3<span></span> tok/s.",  # an empty element between number and unit
    "Decode reaches 52.3<!-- x --> tok/s.",  # a comment between number and unit
    "Decode reaches 52.3&nbsp;tok/s.",  # an entity space
    "  ~~~\n  Decode reaches 52.3 tok/s.\n  ~~~",  # an indented ~~~ is no fence to Python-Markdown
    "<!--\n```\n-->\n\nDecode reaches 52.3 tok/s.",  # a fence inside a comment opens nothing
    "Decode reaches <b>52.3</b> tok/s.",  # emphasis by HTML
]
"""Hand-written pages are read as Python-Markdown renders them (what the build publishes), so each of these is a
figure to validation as it is to the build."""


@pytest.mark.parametrize("text", PAGE_FIGURES)
def test_page_figures_are_read_as_rendered(real: Path, text: str) -> None:
    assert _has(_on_page(real, text), "orphan-number", PAGE)


def test_each_page_figure_is_located_where_it_was_typed(real: Path) -> None:
    """Repeated figures are each found at their own line and column, and never in code that shows the same text."""
    before = (real / PAGE).read_text("utf-8").count("\n") + 2  # _on_page adds two line breaks before the text
    text = "```\nDecode reaches 52.3 tok/s.\n```\n\nDecode reaches 52.3 tok/s.\n\nAgain 52.3 tok/s, and 52.3 tok/s."
    found = [(f.line, f.column) for f in _on_page(real, text) if f.file == PAGE and f.code == "orphan-number"]
    assert found == [(before + 5, 16), (before + 7, 7), (before + 7, 23)]


PAGE_HONEST = [
    "| Setup | Cards |\n|---|---|\n| a | 4 |",  # a count column
    "| Setup | Decode (tok/s) |\n|---|---|\n| a | {{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | nounit }} |",
    "```\nDecode reaches 52.3 tok/s.\n```",  # code
    "    Decode reaches 52.3 tok/s.",  # indented code
    "<!--\nDecode reaches 52.3 tok/s.\n-->",  # a comment is shown to no one
    "Power limit {{ set:575 W }} on every card.",
    "Decode reaches {{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | nounit }} tok/s.",  # its own unit
]


@pytest.mark.parametrize("text", PAGE_HONEST)
def test_honest_page_text_passes(real: Path, text: str) -> None:
    assert [f for f in _on_page(real, text) if f.file == PAGE] == []


@pytest.mark.parametrize("name", ["fast.html", "fast.HTM", "deep/fast.svg", "fast.js"])
def test_a_raw_page_is_refused(real: Path, name: str) -> None:
    """MkDocs publishes these as they are (never read as Markdown): refused, whatever they hold."""
    found = _on_page(real, "<p>Decode reaches the same speed.</p>", f"site/{name}")
    assert _has(found, "site-file-unsafe", f"site/{name}")


@pytest.mark.parametrize("suffix", [".markdown", ".mdown", ".mkdn", ".mkd"])
def test_every_markdown_suffix_is_a_page(real: Path, suffix: str) -> None:
    assert _has(
        _on_page(real, "Decode reaches 52.3 tok/s.", f"site/fast{suffix}"), "orphan-number", f"site/fast{suffix}"
    )


@pytest.mark.parametrize(
    ("before", "after", "pointer"),
    [
        ("site_name: Evidence registry", "site_name: 52.3 tok/s", "/site_name"),
        ("site_description: LLM", "site_description: 52.3 tok/s LLM", "/site_description"),
        ("  - Home: index.md", "  - Home at 52.3 tok/s: index.md", "/nav/0/Home at 52.3 tok~1s"),
        ("      - Grade rubric:", "      - Grade rubric (TTFT 274):", "/nav/8/Methodology/1/Grade rubric (TTFT 274)"),
    ],
)
def test_what_mkdocs_yml_shows_on_every_page_is_prose(real: Path, before: str, after: str, pointer: str) -> None:
    cfg = (real / "mkdocs.yml").read_text("utf-8")
    assert before in cfg
    (real / "mkdocs.yml").write_text(cfg.replace(before, after), "utf-8")
    assert [(f.code, f.pointer) for f in _found(real)] == [("orphan-number", pointer)]


def test_script_after_a_fence_python_markdown_does_not_see(real: Path) -> None:
    """Script after a fence Python-Markdown does not see (indented, or inside a comment) is still script."""
    for text in ("  ~~~\n<script>alert(1)</script>\n  ~~~", "<!--\n```\n-->\n\n<img src=x onerror=alert(1)>"):
        assert _has(_on_page(real, text), "site-html-unsafe", PAGE), text


# -- 2. non-claim forms ------------------------------------------------------------------------------------------


def _quote(root: Path, quote: str) -> list[Finding]:
    _edit(root, DENSE, lambda d: d.update(caveat=quote))
    return _found(root)


def test_a_quote_is_whole_numbers_of_the_evidence(real: Path) -> None:
    # the evidence reads 25.6 at the locator: 5.6 is in it as text, not as a number
    assert _has(_quote(real, "TTFT {{ e:/runs/4/decode_samples/0 = 5.6 }} s"), "evidence-value-mismatch", DENSE)


def test_a_unit_typed_after_a_quote_is_a_figure(real: Path) -> None:
    assert _has(_quote(real, "TTFT was {{ e:/runs/4/decode_samples/0 = 25.6 }} ms"), "orphan-number", DENSE)


def test_a_quote_of_another_runs_entry(real: Path) -> None:
    evidence = json.loads((real / f"{Q38}/evidence/rtx5090-vllm-runs.json").read_text("utf-8"))
    other = evidence["runs"][0]["decode_tok_s"]
    assert _has(
        _quote(real, f"decode reached {{{{ e:/runs/0/decode_tok_s = {other} }}}}"), "evidence-value-mismatch", DENSE
    )


def test_a_quote_of_the_runs_own_entry_passes(real: Path) -> None:
    own = json.loads((real / f"{Q38}/evidence/rtx5090-vllm-runs.json").read_text("utf-8"))["runs"][4]
    key = next(k for k, v in own.items() if isinstance(v, str) and v and not any(c.isdigit() for c in v))
    assert [f for f in _quote(real, f"the run's {{{{ e:/runs/4/{key} = {own[key]} }}}}") if f.file == DENSE] == []


def test_a_derived_figure_in_packet_prose_is_held_to_scope(real: Path) -> None:
    screen = "m:qwen35-quark-tp2-screen.decode_tok_s[0]"
    strict = "m:qwen35-quark-tp4-strict-current.decode_tok_s[0]"
    _edit(real, PACKET, lambda d: d.update(label=f"{{{{ change:{screen} from {strict} }}}} at TP2"))
    assert _has(_found(real), "sideways-promotion", PACKET)


# -- 3. scope ----------------------------------------------------------------------------------------------------


def _in_packet(root: Path, fn: Callable[[Any], Any], new_id: str = "x-run") -> list[Finding]:
    path = _copy_run(root, STRICT, f"{PACKET_DIR}/measurements", new_id, fn)
    return [f for f in _found(root) if f.file == path]


def test_pipeline_parallel_is_topology() -> None:
    assert differing({"cards": 4}, {"config": {"tp": 4, "pp": 2}}, ("topology",))


def test_a_run_contradicting_its_own_topology() -> None:
    assert differing({"cards": 4}, {"cards": 1, "config": {"tp": 4}}, ("topology",))


def test_an_addition_is_not_the_packets_runtime(real: Path) -> None:
    fork = "vLLM XPU 2026-06 strict program + unmerged fork"
    assert not runtime_matches("vLLM XPU 2026-06 strict program", {"runtime": fork})
    assert _in_packet(real, lambda d: d.update(runtime=fork))


def test_more_words_are_another_runtime() -> None:
    assert not runtime_matches("vLLM XPU 2026-06 strict program", {"runtime": "vLLM XPU 2026-06 strict program v2"})
    assert not runtime_matches("llama.cpp SYCL", {"runtime": "llama.cpp SYCL 9fee29e plus lab patch"})


@pytest.mark.parametrize("runtime", ["vLLM XPU 0.11.0", "vllm  xpu v0.11.1", "vLLM XPU a3561ef8", "vLLM XPU b1275"])
def test_an_engine_only_claim_covers_every_build_of_it(runtime: str) -> None:
    assert runtime_matches("vLLM XPU", {"runtime": runtime})


def test_a_mixed_rig_is_not_the_packets_hardware(real: Path) -> None:
    mixed = "Intel Arc Pro B70 + NVIDIA RTX 4090"
    assert not same_hardware("Intel Arc Pro B70", mixed)
    assert _in_packet(real, lambda d: d.update(hardware=mixed))


def test_variants_of_one_number_are_other_hardware() -> None:
    assert not same_hardware("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090 Laptop GPU")
    assert not same_hardware("H100 SXM", "H100 PCIe")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("NVIDIA GeForce RTX 5090", "RTX 5090 32 GB", True),
        ("NVIDIA GeForce RTX 5090", "RTX5090", True),
        ("Intel Arc Pro B70", "B70", True),
        ("NVIDIA H100 80GB HBM3", "H100 SXM", True),  # nvidia-smi's name of the SXM part names no interface
        ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 4090", False),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 PCIe", False),
        ("RTX 5090 Max-Q", "RTX 5090", False),
        ("Intel Arc Pro B70 + NVIDIA RTX 4090", "NVIDIA RTX 4090 + Intel Arc Pro B70", True),
        ("Intel Arc Pro B70 + NVIDIA RTX 4090", "NVIDIA RTX 4090", False),
    ],
)
def test_hardware_names_one_part_both_ways(a: str, b: str, same: bool) -> None:
    """The one hardware comparison, each way round: spellings of one part are the same, other parts are not."""
    assert same_hardware(a, b) is same and same_hardware(b, a) is same


@pytest.mark.parametrize(
    ("run", "cards"),
    [
        ({"config": {"tp": 4}}, 4),
        ({"config": {"tp": 4, "pp": 2}}, 8),
        ({"config": {"tp": 2, "dp": 2}}, 4),
        ({"config": {"tp": 1, "cards": 2}}, 2),  # a layer split: one rank per layer group, two cards
        ({"cards": 1, "config": {"tp": 4}}, -1),  # four ranks on one card: contradicts itself
        ({"config": {}}, None),
    ],
)
def test_a_runs_accelerators_are_its_cards_or_its_parallel_layout(run: dict[str, Any], cards: int | None) -> None:
    from evreg.claims.scope import topology

    assert topology(run) == cards


def test_rtx5090_is_an_rtx_5090(real: Path) -> None:
    assert same_hardware("NVIDIA GeForce RTX 5090", "RTX5090")


# -- 4. plausibility and evidence locators ----------------------------------------------------------------------


def _run_with_evidence(root: Path, name: str, text: str, locators: dict[str, str] | None) -> list[Finding]:
    ev = f"{Q38}/evidence/{name}"
    (root / ev).write_text(text, "utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()

    def fn(d: Any) -> None:
        d.update(evidence=ev, evidence_sha256={ev: digest}, metrics={"decode_tok_s": [40.1]})
        d.pop("evidence_locators")
        if locators:
            d["evidence_locators"] = locators

    path = _copy_run(root, DENSE, f"{NVFP4}/measurements", "x-run", fn)
    return [f for f in _found(root) if f.file == path]


def test_a_nan_cell_backs_nothing(real: Path) -> None:
    found = _run_with_evidence(real, "x.csv", "run,decode\n1,NaN\n", {"decode_tok_s[0]": "csv:1/decode"})
    assert any(f.code == "evidence-value-mismatch" for f in found)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("x.csv", "run,decode\n1,NaN\n"),
        ("x.json", '{"decode": "NaN", "runs": 1}'),
        ("x.log", "decode: nan tok/s after 1 run\n"),
        ("x.csv", "run,decode\n1,40.2\n"),  # another value
    ],
)
def test_evidence_without_locators_must_hold_each_sample(real: Path, name: str, text: str) -> None:
    assert any(f.code == "evidence-value-mismatch" for f in _run_with_evidence(real, name, text, None)), text


@pytest.mark.parametrize(
    ("name", "text"),
    [("x.csv", "run,decode\n1,40.1\n"), ("x.json", '{"decode": 40.0999}'), ("x.log", "decode: 40.1 tok/s\n")],
)
def test_evidence_without_locators_holding_the_sample_passes(real: Path, name: str, text: str) -> None:
    assert _run_with_evidence(real, name, text, None) == []


@pytest.mark.parametrize("line", ["out of memory at 40.1 GiB", "TTFT 40.1 ms", "40.1% of memory"])
def test_a_log_line_of_another_unit(real: Path, line: str) -> None:
    found = _run_with_evidence(real, "x.log", line + "\n", {"decode_tok_s[0]": "line:1"})
    assert any(f.code == "evidence-value-mismatch" for f in found), line


@pytest.mark.parametrize("line", ["decode 40.1 tok/s", "Output token throughput (tok/s): 40.1", "40.1"])
def test_a_log_line_in_the_metrics_unit_or_none_passes(real: Path, line: str) -> None:
    assert _run_with_evidence(real, "x.log", line + "\n", {"decode_tok_s[0]": "line:1"}) == []


def test_a_log_line_of_several_numbers_says_to_choose(real: Path) -> None:
    found = _run_with_evidence(real, "x.log", "decode 40.1 tok/s over 512 tokens\n", {"decode_tok_s[0]": "line:1"})
    assert [f.message for f in found] == [
        "locator 'decode_tok_s[0]': " + f"{Q38}/evidence/x.log line 1 holds 2 numbers: say which, line:1:K"
    ]
    assert (
        _run_with_evidence(real, "x.log", "decode 40.1 tok/s over 512 tokens\n", {"decode_tok_s[0]": "line:1:1"}) == []
    )


def test_a_duplicated_csv_column_is_not_read(real: Path) -> None:
    found = _run_with_evidence(real, "x.csv", "run,decode,decode\n1,NaN,40.1\n", {"decode_tok_s[0]": "csv:1/decode"})
    assert any(f.code == "evidence-value-mismatch" and "twice" in f.message for f in found)


def test_a_sample_added_beside_located_ones(real: Path) -> None:
    _edit(real, DENSE, lambda d: d["metrics"]["decode_tok_s"].append(40.1))
    assert _has(_found(real), "evidence-value-mismatch", DENSE)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(completed_requests=0),
        lambda d: d.setdefault("tool", {}).update(completed=0),
        lambda d: d.update(failures={"failed_requests": 8, "completed_requests": 0}),
    ],
)
def test_zero_completed_requests(real: Path, edit: Callable[[Any], Any]) -> None:
    """A run that says, anywhere in the record, that no request completed measured nothing."""
    _edit(real, STRICT, edit)
    assert _has(_found(real), "implausible-value", STRICT)


# -- 5. history --------------------------------------------------------------------------------------------------


def _raise_grade(root: Path) -> None:
    _edit(root, PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))


def test_a_perturbed_copy_does_not_back_a_raise(real: Path) -> None:
    _raise_grade(real)
    folder = f"{PACKET_DIR}/measurements"
    _copy_run(real, STRICT, folder, "x-copy", lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 93.6))
    assert _has(_found(real, base=True), "promotion-without-evidence", PACKET)


def test_a_run_of_new_evidence_backs_a_raise(real: Path) -> None:
    """The honest neighbour: a new run read from a new evidence file is new evidence."""
    _raise_grade(real)
    folder = f"{PACKET_DIR}/measurements"
    ev = f"{PACKET_DIR}/evidence/x-new-run.json"
    (real / ev).parent.mkdir(parents=True, exist_ok=True)
    (real / ev).write_text('{"decode": [93.6]}', "utf-8")

    def fn(d: Any) -> None:
        digest = hashlib.sha256((real / ev).read_bytes()).hexdigest()
        d.update(evidence=ev, evidence_sha256={ev: digest}, metrics={"decode_tok_s": [93.6]})
        d["evidence_locators"] = {"decode_tok_s[0]": "/decode/0"}

    _copy_run(real, STRICT, folder, "x-new", fn)
    assert not _has(_found(real, base=True), "promotion-without-evidence", PACKET)


def test_an_edited_caveat_does_not_back_a_raise(real: Path) -> None:
    _raise_grade(real)
    _edit(real, f"{FAM}/measurements/qwen35-quark-tp4-legacy-approved.json", lambda d: d.update(caveat="x"))
    assert _has(_found(real, base=True), "promotion-without-evidence", PACKET)


def test_moving_a_published_run_between_folders(real: Path) -> None:
    (real / STRICT).rename(real / f"{FAM}/measurements/qwen35-quark-tp4-strict-current.json")
    assert _found(real, base=True)


def test_a_baselined_figure_cannot_carry_a_new_sentence(real: Path) -> None:
    path, pointer = "packets/minimax-m2-7/family.json", "/transfer_scope/does_not_transfer/1"
    _edit(real, path, lambda d: d["transfer_scope"]["does_not_transfer"].__setitem__(1, "Fastest card: 89 tok/s!"))
    assert any(f.file == path and f.pointer == pointer for f in _found(real, base=True))


def test_a_baselined_finding_in_an_unedited_field_stays_accepted(real: Path) -> None:
    """The honest neighbour: an edit elsewhere in the record leaves the reviewed text accepted."""
    path = "packets/minimax-m2-7/family.json"
    _edit(real, path, lambda d: d.update(summary=str(d.get("summary", "")) + " Reviewed again."))
    assert not any(f.file == path for f in _found(real, base=True))


def test_a_baselined_cell_finding_reopens_when_its_text_changes(real: Path) -> None:
    """Edited text at a baselined cell reopens that finding; the record's other accepted findings stay accepted."""
    path = "packets/muse-glimmer/coverage/muse-bf16-dflash.json"
    _edit(real, path, lambda d: d["cells"]["0:1"].update(reason=d["cells"]["0:1"]["reason"] + " Not our fault."))
    reopened = {f.pointer for f in _found(real, base=True) if f.file == path}
    assert reopened == {"/cells/0:1/reason"}
