"""An independent review of issue 14 as a dishonest contributor: each test is the smallest input of one class of
attack, on a copy of the real records or on the one definition the rules use (the figure grammar, the Markdown
code reading, the runtime and hardware comparisons). Holes still open are ``xfail(strict=True)`` with the reason;
the ones fixed on this branch pass."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest

from conftest import REPO
from evreg import markdown, pipeline
from evreg.figures import find_figures
from evreg.findings import Finding
from evreg.runtimes import runtime_matches
from evreg.scope import differing, same_hardware
from evreg.vocab import promotable

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


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("h14") / "registry"
    for part in ("packets", "schema", "site"):
        shutil.copytree(REPO / part, root / part)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Reviewer")
        cw.set_value("user", "email", "reviewer@example.org")
    repo.git.add("-A")
    repo.index.commit("the real records")
    return root


@pytest.fixture
def real(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(pristine, root)
    return root


def _found(root: Path, base: bool = False) -> list[Finding]:
    """What validation reports beyond the reviewed baseline (with the history rules against HEAD when ``base``)."""
    return pipeline.validate(root, use_cache=False, base="HEAD" if base else None)[1].blocking


def _edit(root: Path, path: str, fn: Callable[[Any], Any]) -> None:
    data = json.loads((root / path).read_text("utf-8"))
    fn(data)
    (root / path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


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


OPEN = [
    ("52.3 tk/s", "'tk/s' is not a spelling of tok/s the grammar knows"),
    ("52.3 output tok/s", "a word between the number and the unit hides the figure"),
    ("a 52.3-tok/s run", "a hyphen between number and unit hides the figure"),
    ("D 52.3 at TP4", "the letter notation with a space is not read"),
    ("8x faster", "an integer multiplier is not a figure (4x4 grid is the honest neighbour)"),
]


@pytest.mark.parametrize(("text", "reason"), OPEN)
def test_open_spellings_are_figures(text: str, reason: str, request: pytest.FixtureRequest) -> None:
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    assert find_figures(text), text


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


@pytest.mark.xfail(strict=True, reason="a setting may hold ms, so a measured TTFT laundered as a setting passes")
def test_a_latency_after_a_metric_word_is_no_setting(real: Path) -> None:
    _edit(real, STRICT, lambda d: d.update(caveat="TTFT was {{ set:187 ms }} at p512"))
    assert _has(_found(real), "orphan-number", STRICT)


@pytest.mark.xfail(strict=True, reason="| nounit lets a decode value be shown with another unit typed after it")
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


PAGE_OPEN = [
    ("| Setup | tok/s (decode) |\n|---|---|\n| a | 52.3 |", "a unit first in a column header is not read"),
    ("| Setup | Decode (tok/s) ↑ |\n|---|---|\n| a | 52.3 |", "a header with a mark after its unit is not read"),
    ("Setup | Decode (tok/s)\n--- | ---\na | 52.3", "a table without outer pipes is not read as a table"),
    ("<table><tr><th>Decode (tok/s)</th></tr><tr><td>52.3</td></tr></table>", "HTML tables are not read"),
    ("Decode reaches 52.3\ntok/s in one paragraph.", "a line break between number and unit (validate and build)"),
    ("Decode reaches 52.3<span></span> tok/s.", "an empty element between number and unit (validate and build)"),
    ("Decode reaches 52.3<!-- x --> tok/s.", "a comment between number and unit (validate and build)"),
    ("Decode reaches 52.3&nbsp;tok/s.", "an entity space: validate passes, the build refuses"),
    ("  ~~~\n  Decode reaches 52.3 tok/s.\n  ~~~", "an indented ~~~ is no fence to Python-Markdown; validate passes"),
    ("<!--\n```\n-->\n\nDecode reaches 52.3 tok/s.", "a fence inside a comment hides the rest of the page"),
]


@pytest.mark.parametrize(("text", "reason"), PAGE_OPEN)
def test_open_page_figures(real: Path, text: str, reason: str, request: pytest.FixtureRequest) -> None:
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    assert _has(_on_page(real, text), "orphan-number", PAGE)


@pytest.mark.xfail(strict=True, reason="a raw .html page under site/ is published as is and never checked")
def test_a_raw_html_page_is_checked(real: Path) -> None:
    assert _on_page(real, "<p>Decode reaches 52.3 tok/s.</p>", "site/fast.html")


@pytest.mark.xfail(strict=True, reason="a .markdown page is built by MkDocs; validate reads only .md (build refuses)")
def test_a_markdown_extension_page_is_checked(real: Path) -> None:
    assert _on_page(real, "Decode reaches 52.3 tok/s.", "site/fast.markdown")


@pytest.mark.xfail(strict=True, reason="mkdocs.yml's site_name and nav titles are shown on every page, unchecked")
def test_the_site_name_is_prose(real: Path) -> None:
    cfg = (real / "mkdocs.yml").read_text("utf-8")
    (real / "mkdocs.yml").write_text(cfg.replace("site_name: Evidence registry", "site_name: 52.3 tok/s"), "utf-8")
    assert _found(real)


# -- 2. non-claim forms ------------------------------------------------------------------------------------------


def _quote(root: Path, quote: str) -> list[Finding]:
    _edit(root, DENSE, lambda d: d.update(caveat=quote))
    return _found(root)


def test_a_quote_is_whole_numbers_of_the_evidence(real: Path) -> None:
    # the evidence reads 25.6 at the locator: 5.6 is in it as text, not as a number
    assert _has(_quote(real, "TTFT {{ e:/runs/4/decode_samples/0 = 5.6 }} s"), "evidence-value-mismatch", DENSE)


def test_a_unit_typed_after_a_quote_is_a_figure(real: Path) -> None:
    assert _has(_quote(real, "TTFT was {{ e:/runs/4/decode_samples/0 = 25.6 }} ms"), "orphan-number", DENSE)


@pytest.mark.xfail(strict=True, reason="a quote may read another run's value in a shared evidence file")
def test_a_quote_of_another_runs_entry(real: Path) -> None:
    evidence = json.loads((real / f"{Q38}/evidence/rtx5090-vllm-runs.json").read_text("utf-8"))
    other = evidence["runs"][0]["decode_tok_s"]
    assert _quote(real, f"decode reached {{{{ e:/runs/0/decode_tok_s = {other} }}}}")


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


@pytest.mark.xfail(strict=True, reason="a packet naming a runtime without a version covers any '+ addition' of it")
def test_an_addition_is_not_the_packets_runtime(real: Path) -> None:
    fork = "vLLM XPU 2026-06 strict program + unmerged fork"
    assert not runtime_matches("vLLM XPU 2026-06 strict program", {"runtime": fork})
    assert _in_packet(real, lambda d: d.update(runtime=fork))


@pytest.mark.xfail(strict=True, reason="an unversioned runtime claim covers any runtime that starts with its words")
def test_more_words_are_another_runtime() -> None:
    assert not runtime_matches("vLLM XPU 2026-06 strict program", {"runtime": "vLLM XPU 2026-06 strict program v2"})


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
    from evreg.scope import topology

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


@pytest.mark.xfail(strict=True, reason="locators are optional: local CSV evidence holding only NaN backs 40.1")
def test_nan_evidence_without_locators(real: Path) -> None:
    assert _run_with_evidence(real, "x.csv", "run,decode\n1,NaN\n", None)


@pytest.mark.xfail(strict=True, reason="line:N takes the one number of the line, whatever it measures (no pattern)")
def test_a_log_line_of_other_text(real: Path) -> None:
    assert _run_with_evidence(real, "x.log", "out of memory at 40.1 GiB\n", {"decode_tok_s[0]": "line:1"})


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


@pytest.mark.xfail(strict=True, reason="a published run copied with one digit changed is 'new' evidence for a raise")
def test_a_perturbed_copy_does_not_back_a_raise(real: Path) -> None:
    _raise_grade(real)
    folder = f"{PACKET_DIR}/measurements"
    _copy_run(real, STRICT, folder, "x-copy", lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 93.6))
    assert _has(_found(real, base=True), "promotion-without-evidence", PACKET)


def test_an_edited_caveat_does_not_back_a_raise(real: Path) -> None:
    _raise_grade(real)
    _edit(real, f"{FAM}/measurements/qwen35-quark-tp4-legacy-approved.json", lambda d: d.update(caveat="x"))
    assert _has(_found(real, base=True), "promotion-without-evidence", PACKET)


def test_moving_a_published_run_between_folders(real: Path) -> None:
    (real / STRICT).rename(real / f"{FAM}/measurements/qwen35-quark-tp4-strict-current.json")
    assert _found(real, base=True)


@pytest.mark.xfail(strict=True, reason="a baseline entry accepts its message anywhere in its field: new text passes")
def test_a_baselined_figure_cannot_carry_a_new_sentence(real: Path) -> None:
    path, pointer = "packets/minimax-m2-7/family.json", "/transfer_scope/does_not_transfer/1"
    _edit(real, path, lambda d: d["transfer_scope"]["does_not_transfer"].__setitem__(1, "Fastest card: 89 tok/s!"))
    assert any(f.file == path and f.pointer == pointer for f in _found(real, base=True))
