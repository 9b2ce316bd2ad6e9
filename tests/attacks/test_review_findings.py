"""Attacks on two mechanisms found in review: the figure grammar's context rules (a number made a claim by the words
around it) and held copies of external evidence (``evreg hold``). Each test asserts what the product claims."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import git
import pytest

from evreg.app import publish, records
from evreg.check import rules
from evreg.check.pipeline import validate
from evreg.claims.figures import find_figures
from evreg.core.errors import Refused
from helpers import HELD, HELD_BYTES, LAB_PINNED, REPO, F, Reg, cite_external, evreg, hold_copy, only

# -- figures by context: claims that get through ------------------------------------------------------------------


def _typed(text: str) -> list[str]:
    return [f.text for f in find_figures(text)]


@pytest.mark.parametrize(
    "text",
    [
        "decode throughput\n52.3",
        "TTFT\t274",
        "TTFT   274",
        "improved by\n12.5",
        "improved  by 12.5",
        "3.1 images\nper second",
        "12.5\nfaster than eager",
    ],
)
def test_white_space_a_reader_sees_as_one_space_hides_a_figure(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "decode throughput of fifty-two point three",
        "TTFT two hundred seventy-four",
        "improved by twelve point five",
        "twelve point five faster than eager",
        "fifty-two point three queries per second",
        "one and a half times faster",
        "1.2 thousand tok/s",
        "a million tokens per second",
    ],
)
def test_number_words_after_a_name_or_before_a_rate_are_figures(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "12.5 x faster than eager",
        "3 × faster",
        "2.4 X the throughput of eager",
    ],
)
def test_a_multiplier_sign_after_a_space_is_a_figure(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "decode rose from {{ m:run-1.decode_tok_s[0] }} to 31.5",
        "decode went from {{ m:run-1.decode_tok_s[0] }} to 31.5",
        "TTFT {{ m:run-1.decode_tok_s[0] }} and 301",
        "decode {{ m:run-1.decode_tok_s[0] }} vs 31.5",
    ],
)
def test_a_figure_after_a_cited_one_is_a_figure(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "decode throughput — 52.3",
        "decode throughput → 52.3",
        "TTFT: ~274",
        "TTFT ≅ 274",
        "12.5 more throughput than eager",
        "12.5 less latency than eager",
        "12.5 points higher than eager",
        "an improvement of 12.5 over eager",
    ],
)
def test_separators_and_comparisons_a_reader_reads_through(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "52.3 tokens/ms",
        "0.0523 tokens per millisecond",
        "3.1 images/GPU/s",
        "812 queries-per-second",
        "12 per cent",
    ],
)
def test_rates_and_shares_in_other_spellings(text: str) -> None:
    assert _typed(text)


def test_a_record_whose_figure_is_split_by_a_line_break_is_refused(reg: Reg) -> None:
    """End to end: a run's caveat that a page shows as "Decode throughput 52.3" (HTML shows a line break as a
    space) is an orphan-number."""
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(caveat="Decode throughput\n52.3 on the rerun."))
    assert only(reg.findings(), "orphan-number")


@pytest.mark.parametrize(
    "text",
    [
        "decode ≥ 52.3",
        "decode >= 52.3",
        "decode at least 52.3",
        "decode peaked at 52.3",
        "decode averaged 52.3",
        "TTFT(p99) 274",
        "TTFT at p99 274",
        "TTFT for batch 1: 274",
    ],
)
def test_a_bound_or_verb_between_a_name_and_its_value(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "decode 5.23e1",
        "decode 52.3k",
        "decode 52,3",
    ],
)
def test_number_forms_after_a_name(text: str) -> None:
    """The forms a number takes before a unit (an exponent, ``k``) and the decimal comma, after a metric name."""
    assert _typed(text)


# -- figures by context: honest text refused ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "accuracy under 5-fold cross-validation",
        "twofold cross-validation of the gate",
        "faster 8-bit kernels",
        "2 faster kernels were tried",
        "3 better runs were kept",
        "CUDA 12.8: faster startup",  # a version before a comparing word is set apart from it
        "Python 3.11, with better error messages",
        "scores 3 of 5 tasks",
        "score 3 out of 5 tasks",
        "dropped 3 of 12 prompts",
        "TTFT 2025-03-14 rerun",
    ],
)
def test_honest_counts_versions_and_methods_are_no_figures(text: str) -> None:
    assert _typed(text) == []


@pytest.mark.parametrize(
    ("typed", "declared"),
    [
        ("the client sent 8 requests per second", "the client sent {{ set:8 requests per second }}"),
        ("the monitor sampled 10 times per second", "the monitor sampled {{ set:10 times per second }}"),
        ("offered load of 1 request per second", "offered load of {{ set:1 request per second }}"),
    ],
)
def test_a_setting_per_unit_of_time_is_declared_as_one(typed: str, declared: str) -> None:
    """A number per unit of time is read as a measured rate, whoever set it; a rate that was set (offered load, a
    sampling rate) is written as a setting of the rate kind, which names what it sets."""
    from evreg_rules.prose import form_problems

    assert _typed(typed)
    assert _typed(declared) == []
    assert list(form_problems(declared, "caveat", {})) == []
    unnamed = "the run had " + declared[declared.index("{{") :]
    assert list(form_problems(unnamed, "caveat", {}))


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("the run's footprint {{ set:23.5 GiB }}", True),  # a measured quantity's name before it
        ("memory used {{ set:23.5 GiB }}", True),
        ("power draw {{ set:287 W }}", True),
        ("achieved bandwidth {{ set:1.5 TB/s }}", True),
        ("{{ set:1.5 TB/s }}", True),  # a bandwidth that names no link or rating
        ("a {{ set:300 W }} power limit", False),
        ("a PCIe link of {{ set:64 GB/s }}", False),
        ("{{ set:30 s }} (timeout)", False),  # the kind named in brackets after it
        ("an SLO of {{ set:500 ms }}", False),
        ("TTFT {{ set:274 ms }} (timeout)", True),
        # words after a setting name its kind only when they are nothing but kind words
        ("throughput went to {{ set:52.3 }} (limit) tok/s", True),
        ("a {{ set:1.8 }} (cap) speedup", True),
        ("requests finished in {{ set:274 ms }} (well under the timeout)", True),
        ("{{ set:287 W }} (average draw)", True),
        ("copies at {{ set:550 GB/s }} (below spec)", True),
        ("a {{ set:30 s }} timeout", False),
        ("a {{ set:30 s }} timeout for each request", False),
        ("a {{ set:64 GB/s }} PCIe link", False),
        # a measured quantity's word among the three before it, in any form
        *(
            (f"{words} {{{{ set:287 W }}}}", True)
            for words in ("average GPU power", "power consumption per card", "power draws", "peaks at", "power draw ->")
        ),
        ("VRAM used per card {{ set:23.5 GiB }}", True),
        ("peak memory was just about {{ set:23.5 GiB }}", True),
        ("effective bandwidth {{ set:550 GB/s }}", True),
        ("SLO attainment at {{ set:274 ms }}", True),
        ("decoding ran for {{ set:274 ms }}", True),
        ("served using {{ set:32 GiB }} cards", False),
        ("power recorded every {{ set:100 ms }}", False),
    ],
)
def test_a_setting_says_what_it_sets_and_no_measured_quantity_stands_before_it(text: str, refused: bool) -> None:
    from evreg_rules.prose import form_problems

    assert bool(list(form_problems(text, "caveat", {}))) is refused


CITED = "{{ m:run-1.decode_tok_s[0] }}"


@pytest.mark.parametrize(
    "text",
    [
        *(f"rose from {CITED} to {tail}" for tail in ("about 31.5", "~31.5", "-31.5", "31.5k", "31,5", "3.15e1")),
        *(f"{CITED}{joint}31.5" for joint in (", then ", " (was ", " => ", " against ", " compared with ", "/", " & ")),
        f"{CITED}; 31.5 on the other card",
        "TTFT 274 then 301",
        "TTFT 274 (p50) and 301 (p99)",
        "52.3 tok/s and 48.1",
        "MTP 12.5 faster than eager",
        "H100 1.8 faster",
    ],
)
def test_a_number_joined_to_a_figure_or_citation_or_compared_after_a_name_is_a_figure(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        "decode 52.3K",
        "decode: +52.3",
        "decode: (52.3)",
        "decode - 52.3",
        "TTFT: approximately 274",
        "TTFT measured 274",
        "TTFT < 274",
        "TTFT was under 274",
        "TTFTs of 274",
        "TTFT at batch 1: 274",
        "TTFT for batch 1 was 274",
        "TTFT, batch 1: 274",
        "TTFT at the p99 274",
        "TTFT at 99th percentile 274",
        "generation speed 52.3",
        "decoding 52.3",
    ],
)
def test_what_may_stand_between_a_metric_name_and_its_value(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        *(f"52.3{brk}tok/s" for brk in ("\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029", "\t")),
        "52.3\nms",
        "52.3 tok\u2044s",
        "52.3 newly generated output tokens per second",
        "52 and a half tok/s",
        "fifty-two-point-three tok/s",
        *(f"52.3 {unit}" for unit in ("pct", "per-cent", "pp", "percentage points", "millis")),
        *(f"52.3 tok{per}" for per in (" s^-1", ".s-1", " s**-1", "·s⁻¹", " s(-1)", "ens/1s", "ens per 1 s")),
        "3‰ of requests failed",
        "3 per mille",
        "52.3 (decode, tok/s)",
        "TTFT for batch 1, 274",
        "TTFT half a second",
        *(f"52.3 tok{per}" for per in (" s^{-1}", " s ^ -1", "/(s)", "ens/1.0s", "ens/10s")),
        *(f"5 {share}" for share in ("per thousand", "per 1000", "pro mille", "basis points", "ppm", "‱")),
        *(f"TTFT was {part}" for part in ("half a sec", "a half second", "half-second", "a tenth of a second")),
        "half a percent",
        *(f"Peak memory was one {unit}." for unit in ("GiB", "MiB", "TiB")),
        "Accuracy dropped by one percentage point.",
        "rose one permille",
        *(f"Got 52.3{blanks}tok/s" for blanks in ("  ", " \n", "\t ")),  # a browser shows one space
    ],
)
def test_line_breaks_slashes_and_unit_spellings_a_reader_reads_as_the_unit(text: str) -> None:
    assert _typed(text)


@pytest.mark.parametrize(
    "text",
    [
        *(f"{CITED}{tail}" for tail in (", 4 H100s", " to 2 decimals", " and 2 outliers dropped", ", 2 of which")),
        f"{CITED} or 1 in 3 requests",
        "throughput is one of the lowest",
        "decode one more token",
        "measured after TTFT  (2 results, 2 ranked)",
        "decode after TTFT · active_context_tokens = 4369",
        "acceptance 2K quarantine",
        "aggregate tracked-log acceptance was 967/1,643",
        "full quality, 24 same-topology comparisons",
        "the 109.2 is four TP1 replicas",
        "the speedup is one reason",
        "TTFT is one thing to watch",
        "decode: two passes",
        "TTFT for batches 1, 2, 4 and 8",
        "TTFT for batch 1,024",
        "See figure 3 (decode, tok/s) for the curve.",
        "Column 2 (TTFT, ms) lists the runs.",
    ],
)
def test_counts_after_a_figure_a_citation_or_a_name_are_no_figures(text: str) -> None:
    assert _typed(text) == []


# -- held copies of external evidence -----------------------------------------------------------------------------

RUN = f"{F}/pkt/measurements/run-1.json"


def _site(reg: Reg) -> None:
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")


def test_a_published_runs_held_copy_rewritten_with_its_sha256_is_a_history_rewrite(reg: Reg, tmp_path: Path) -> None:
    """A held copy is the receipt of a published run: new bytes with a matching new sha256 in the family record are a
    rewrite, as they are for a local evidence file (``history-rewrite``). Today ``--base`` reports nothing."""
    cite_external(reg)
    hold_copy(reg, tmp_path)
    reg.commit("hold the lab's file")
    # the samples stay; what they were measured on changes
    new = HELD_BYTES.replace(b"]}]}", b'], "hardware": "RTX 5090"}]}')
    (reg.root / HELD).write_bytes(new)
    digest = hashlib.sha256(new).hexdigest()
    reg.edit(f"{F}/family.json", lambda d: d["sources"]["lab"]["held"]["data/run-1.json"].update(sha256=digest))
    _, report = validate(reg.root, rules.discover(), base="HEAD", use_cache=False)
    assert [f for f in report.findings if f.code == "history-rewrite"], [f.code for f in report.findings]


def test_hold_never_replaces_a_committed_held_copy_by_other_bytes(reg: Reg, tmp_path: Path) -> None:
    """Deleting the committed copy first, ``evreg hold`` writes other bytes and a new sha256 under the same path."""
    cite_external(reg)
    hold_copy(reg, tmp_path)
    reg.commit("hold the lab's file")
    (reg.root / HELD).unlink()
    entry = reg.read(f"{F}/family.json")["sources"]["lab"]["held"]
    with pytest.raises(Refused, match="never replaced"):
        hold_copy(reg, tmp_path, HELD_BYTES.replace(b"30.25", b"30.250"), name="other.json")
    assert not (reg.root / HELD).exists() and reg.read(f"{F}/family.json")["sources"]["lab"]["held"] == entry


def _lab_clone(tmp_path: Path) -> tuple[Path, str]:
    """The lab's repository: data/run-1.json holds decode 20.1 and 20.2 at its one commit."""
    root = tmp_path / "lab"
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Lab")
        cw.set_value("user", "email", "lab@example.org")
    (root / "data").mkdir()
    (root / "data/run-1.json").write_bytes(b'{"runs": [{"decode_tok_s": [20.1, 20.2]}]}\n')
    repo.git.add("-A")
    return root, repo.index.commit("run").hexsha


def test_a_forged_held_copy_is_refuted_by_the_clone_of_its_source(reg: Reg, tmp_path: Path) -> None:
    """The contributor holds bytes of their own, claiming they were read at the pinned commit; the file there holds
    other samples. Validated with a clone of the source (``--source lab=DIR``), the forgery passes: no error, no
    warning, the reference counted as held and checked."""
    clone, pinned = _lab_clone(tmp_path)
    cite_external(reg, pinned)
    hold_copy(reg, tmp_path, commit=pinned)  # 30.21 and 30.25, as the record claims; the lab's file says 20.1 and 20.2
    reg.commit("hold a forged copy")
    result = evreg("validate", "--source", f"lab={clone}", "--format", "json", cwd=reg.root)
    findings = json.loads(result.stdout)["findings"]
    assert result.returncode != 0 and any(f["severity"] == "error" for f in findings), findings


@pytest.mark.parametrize("reference", ["lab:data/run-1.json\n", "lab:data//run-1.json", "lab:./data/run-1.json"])
def test_hold_refuses_a_path_validation_refuses(reg: Reg, tmp_path: Path, reference: str) -> None:
    """``evreg hold`` checks only that the path stays inside the source; it writes a file whose name holds a line
    break (or an empty or ``.`` part) that validation then reports as ``path-unsafe``."""
    cite_external(reg)
    copy = tmp_path / "copy.json"
    copy.write_bytes(HELD_BYTES)
    try:
        written = records.hold(reg.root, "fam", reference, copy, commit=LAB_PINNED, read="a clone")
    except Refused:
        written = []
    assert written == [], written


def test_the_site_does_not_call_a_copy_lacking_the_samples_checked(reg: Reg, tmp_path: Path) -> None:
    """A copy read at another commit that does not hold a sample is a warning in validation; the site builds and says
    so beside the copy, not 'its samples re-read'."""
    cite_external(reg)
    _site(reg)
    hold_copy(reg, tmp_path, HELD_BYTES.replace(b"30.25", b"29.9"), commit="d" * 40)
    reg.commit("hold a copy read at another commit")
    assert [f.severity for f in only(reg.findings(), "evidence-value-mismatch")] == ["warning"]
    page = (publish.build(reg.root).out / "packets" / "pkt" / "index.html").read_text("utf-8")
    [row] = [row for row in page.split("<tr>") if "its copy held here" in row]
    assert "its samples re-read" not in row and "1 of the record's samples are not in it" in row


def test_a_symlinked_held_copy_is_refused_or_published(reg: Reg, tmp_path: Path) -> None:
    """The held copy is a symlink to another evidence file of the repository with the same bytes: validation reads
    it through the link, so the build publishes the file it reads (the page's 'its copy held here' link works)."""
    cite_external(reg)
    _site(reg)
    hold_copy(reg, tmp_path)
    reg.raw(f"{F}/pkt/evidence/same.json", HELD_BYTES)
    (reg.root / HELD).unlink()
    os.symlink("../../../pkt/evidence/same.json", reg.root / HELD)
    reg.commit("hold through a symlink")
    errors = [f for f in reg.findings() if f.severity == "error"]
    if errors:
        return  # refused: as it should be
    out = publish.build(reg.root).out
    digest = hashlib.sha256(HELD_BYTES).hexdigest()
    assert (out / "evidence" / digest / "run-1.json").is_file()


def test_held_copies_whose_folders_differ_only_in_case_are_unsafe(reg: Reg, tmp_path: Path) -> None:
    """``data/run-1.json`` and ``Data/run-1.json`` held with other bytes: one file where a checkout ignores case (the
    second written replaces the first), so both are unsafe."""
    cite_external(reg)
    hold_copy(reg, tmp_path)
    other = tmp_path / "other.json"
    other.write_bytes(HELD_BYTES.replace(b"30.21", b"31.21"))
    records.hold(reg.root, "fam", "lab:Data/run-1.json", other, commit=LAB_PINNED, read="a clone")
    assert only(reg.findings(), "path-unsafe")


@pytest.mark.parametrize(
    ("quote", "line"),
    [
        ("234 tok/s", "1,234 tok/s"),
        ("15.27%", "a -15.27% regression"),
        (".27%", "+15.27%"),
        ("550 GB", "~550 GB/s"),
        ("2 GiB", "1/2 GiB"),
        ("5 tok/s", "10^5 tok/s"),
    ],
)
def test_a_quote_is_never_part_of_a_number_of_its_evidence(quote: str, line: str) -> None:
    from evreg_rules.evidence import _quoted

    assert not _quoted(quote, line)
    assert _quoted(quote, f"it read {quote} then")
