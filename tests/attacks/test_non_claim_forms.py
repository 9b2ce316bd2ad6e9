"""Forms that are not measurements -- settings (``{{ set:... }}``), quotes of a record's own evidence
(``{{ e:... }}``) and figures derived from stored samples (``{{ change:... }}``) -- state what they are and cannot
launder a measured figure: each attack beside the honest form that passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evreg.claims import citations
from evreg.core.findings import Finding
from helpers import (
    Q35_STRICT,
    Q38,
    Q38_DENSE,
    F,
    Reg,
    blocking,
    edit_json,
    has,
    only,
)

RUN = f"{F}/pkt/measurements/run-1.json"


def _quality(reg: Reg, text: str) -> list[Any]:
    reg.edit(RUN, lambda d: d.update(quality=text))
    return [f for f in reg.findings() if f.file == RUN]


# -- settings ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["{{ set:32 GiB }} card", "power limit {{ set:575 W }}", "timeout {{ set:600 s }}"])
def test_a_setting_is_no_claim(reg: Reg, text: str) -> None:
    assert _quality(reg, text) == []


@pytest.mark.parametrize("text", ["{{ set:52.3 tok/s }}", "{{ set:24.8% }}", "{{ set:1792 GB/s }}", "{{ set:D25.6 }}"])
def test_a_setting_cannot_launder_a_measured_figure(reg: Reg, text: str) -> None:
    [f] = _quality(reg, text)
    assert f.code == "orphan-number" and "cite the measurement" in f.message


@pytest.mark.slow
def test_a_figure_in_a_record_typed_around_a_setting_is_found(real: Path) -> None:
    edit_json(real, Q35_STRICT, lambda d: d.update(caveat="decode reached {{ set:93.55 }} tok/s"))
    assert has(blocking(real), "orphan-number", Q35_STRICT)


@pytest.mark.slow
def test_a_figure_split_over_two_settings_is_found(real: Path) -> None:
    edit_json(real, Q35_STRICT, lambda d: d.update(caveat="decode {{ set:93 }}.{{ set:55 }} tok/s"))
    assert has(blocking(real), "orphan-number", Q35_STRICT)


@pytest.mark.slow
def test_a_multiplier_in_a_setting_is_found(real: Path) -> None:
    edit_json(real, Q35_STRICT, lambda d: d.update(caveat="{{ set:3.2x }} faster than eager"))
    assert has(blocking(real), "orphan-number", Q35_STRICT)


@pytest.mark.slow
def test_a_latency_after_a_metric_word_is_no_setting(real: Path) -> None:
    edit_json(real, Q35_STRICT, lambda d: d.update(caveat="TTFT was {{ set:187 ms }} at p512"))
    assert has(blocking(real), "orphan-number", Q35_STRICT)


@pytest.mark.slow
def test_a_nounit_citation_with_another_unit_after_it(real: Path) -> None:
    cite = "{{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | nounit }}"
    edit_json(real, Q35_STRICT, lambda d: d.update(caveat=f"TTFT {cite} ms"))
    assert blocking(real)


# -- derived figures ---------------------------------------------------------------------------------------------------


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


# -- quotes of the evidence --------------------------------------------------------------------------------------------


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


def _quote(root: Path, quote: str) -> list[Finding]:
    edit_json(root, Q38_DENSE, lambda d: d.update(caveat=quote))
    return blocking(root)


@pytest.mark.slow
def test_a_quote_is_whole_numbers_of_the_evidence(real: Path) -> None:
    # the evidence reads 25.6 at the locator: 5.6 is in it as text, not as a number
    assert has(_quote(real, "TTFT {{ e:/runs/4/decode_samples/0 = 5.6 }} s"), "evidence-value-mismatch", Q38_DENSE)


@pytest.mark.slow
def test_a_unit_typed_after_a_quote_is_a_figure(real: Path) -> None:
    assert has(_quote(real, "TTFT was {{ e:/runs/4/decode_samples/0 = 25.6 }} ms"), "orphan-number", Q38_DENSE)


@pytest.mark.slow
def test_a_quote_of_another_runs_entry(real: Path) -> None:
    evidence = json.loads((real / f"{Q38}/evidence/rtx5090-vllm-runs.json").read_text("utf-8"))
    other = evidence["runs"][0]["decode_tok_s"]
    assert has(
        _quote(real, f"decode reached {{{{ e:/runs/0/decode_tok_s = {other} }}}}"), "evidence-value-mismatch", Q38_DENSE
    )


@pytest.mark.slow
def test_a_quote_of_the_runs_own_entry_passes(real: Path) -> None:
    own = json.loads((real / f"{Q38}/evidence/rtx5090-vllm-runs.json").read_text("utf-8"))["runs"][4]
    key = next(k for k, v in own.items() if isinstance(v, str) and v and not any(c.isdigit() for c in v))
    assert [f for f in _quote(real, f"the run's {{{{ e:/runs/4/{key} = {own[key]} }}}}") if f.file == Q38_DENSE] == []


# -- their markup ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ["setting", "quote", "derived"])
def test_hand_written_markup_of_settings_quotes_and_derived_figures_is_forged(reg: Reg, cls: str) -> None:
    reg.put("site/page.md", f'# Page\n\n<span class="evreg-{cls}">52.3 tok/s</span>\n')
    assert "citation-forged" in reg.codes()


def test_a_number_in_inline_code_takes_the_unit_after_it() -> None:
    """Inline code that shows only a number is the number a reader sees: a unit outside it makes a figure; code that
    shows more (a command line) stays code."""
    from evreg.claims import markdown

    page = "Runs at `52.3` tok/s.\n\nStart it with `--max-model-len 32768` tokens of context.\n"
    assert [line for _, line in markdown.prose(page) if "52.3" in line] == ["Runs at `52.3` tok/s."]
    assert all("32768" not in line for _, line in markdown.prose(page))


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("a timeout [{{ set:30 s }}]", False),
        ("memory ({{ set:32 GB }}) and a {{ set:300 W }} power limit", False),
        ("probes every {{ set:5 min }}", False),
        ("answers in {{ set:274 ms }} per request", True),  # a latency passed off as a setting
        ("TTFT {{ set:274 ms }}", True),
        ("power limit {{ set:32 GB }}", True),  # a setting of one kind in another kind's unit
        ("a link of {{ set:64 GB/s }}", False),  # a link's rated bandwidth is a specification
        ("the copy moved {{ set:64 GB/s }}", True),  # a bandwidth that names no link is measured
        ("a timeout of {{ set:30 }}", False),  # a number without a unit that says what it sets
        ("reaches {{ set:100 tok/s }} against target", True),  # a rate is measured, whatever word is near
        ("a {{ set:49.019651 }} on the rerun", True),  # a number without a unit that says nothing of what it sets
        ("TTFT {{ set:274 }}", True),  # after a metric's name, in any spelling
        ("decode {{ set:fifty-two }} on one card", True),
        ("decode: {{ set:52,3 }}", True),
        ("p99 latency stayed at {{ set:274 ms }} for all prompts", True),  # a time's word must come first
        ("we measured {{ set:52.3 req/s }} under load", True),
        ("peak memory was {{ set:23.5 GiB }}", True),  # a result's verb or statistic right before: measured
        ("average power {{ set:287 W }}", True),
        ("achieved {{ set:312 TFLOPS }}", True),
        ("fits on one {{ set:32 GiB }} card", False),
    ],
)
def test_a_setting_names_its_kind_and_its_unit_is_that_kinds(text: str, refused: bool) -> None:
    from evreg_rules.prose import form_problems

    assert bool(list(form_problems(text, "caveat", {}))) is refused


@pytest.mark.parametrize(
    "after",
    [" ms", " **ms**", "<b>ms</b>", " <span>ms</span>", " _ms_", " [ms](https://example.org)", " `ms`", " m<i></i>s"],
)
def test_a_unit_behind_markup_after_a_nounit_citation_is_typed(reg: Reg, after: str) -> None:
    """A citation shown without its unit, then another unit however it is marked up: the reader sees ``30.2 ms`` for a
    decode rate, so the typed unit is refused; the metric's own unit after it stands."""
    found = _quality(reg, "{{ m:run-1.decode_tok_s[0] | nounit }}" + after)
    assert [f.code for f in found] == ["orphan-number"], found
    own = after.replace("ms", "tok/s").replace("m<i></i>s", "tok<i></i>/s")
    assert _quality(reg, "{{ m:run-1.decode_tok_s[0] | nounit }}" + own) == []
