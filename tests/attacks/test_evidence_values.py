"""A run's samples against its evidence on a copy of the real records: a located sample is read in the metric's
unit (a NaN, another unit, a line of several numbers, a duplicated column back nothing), an unlocated sample must be
in the evidence as a number in its unit, a sample added beside located ones is found, and a run in which no request
completed measured nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evreg.core.findings import Finding
from helpers import (
    Q35_STRICT,
    Q38,
    Q38_DENSE,
    Q38_NVFP4,
    blocking,
    copy_run,
    edit_json,
    has,
)

pytestmark = pytest.mark.slow  # each test validates a copy of the real records


def _run_with_evidence(root: Path, name: str, text: str, locators: dict[str, str] | None) -> list[Finding]:
    ev = f"{Q38}/evidence/{name}"
    (root / ev).write_text(text, "utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()

    def fn(d: Any) -> None:
        d.update(evidence=ev, evidence_sha256={ev: digest}, metrics={"decode_tok_s": [40.1]})
        d.pop("evidence_locators")
        if locators:
            d["evidence_locators"] = locators

    path = copy_run(root, Q38_DENSE, f"{Q38_NVFP4}/measurements", "x-run", fn)
    return [f for f in blocking(root) if f.file == path]


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
    edit_json(real, Q38_DENSE, lambda d: d["metrics"]["decode_tok_s"].append(40.1))
    assert has(blocking(real), "evidence-value-mismatch", Q38_DENSE)


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
    edit_json(real, Q35_STRICT, edit)
    assert has(blocking(real), "implausible-value", Q35_STRICT)


def test_an_unlocated_sample_held_only_in_another_unit(real: Path) -> None:
    text = "decode: nan tok/s; peak memory 40.1 GiB\n"
    assert any(f.code == "evidence-value-mismatch" for f in _run_with_evidence(real, "x.log", text, None))


def test_a_line_locator_whose_label_states_another_unit(real: Path) -> None:
    """A unit in a label's brackets right before the number is the line's unit (as after it)."""
    for line in ("Peak memory (GiB): 40.1", "Mean TTFT (ms): 40.1", "Peak memory [GiB] = 40.1"):
        found = _run_with_evidence(real, "x.log", line + "\n", {"decode_tok_s[0]": "line:1"})
        assert any(f.code == "evidence-value-mismatch" for f in found), line


def test_a_csv_column_twice_up_to_spacing(real: Path) -> None:
    """A header differing only in spacing or case is the same column to a reader: no locator can say which."""
    for text in ("run,decode ,decode\n1,NaN,40.1\n", "run,Decode,decode\n1,NaN,40.1\n"):
        found = _run_with_evidence(real, "x.csv", text, {"decode_tok_s[0]": "csv:1/decode"})
        assert any(f.code == "evidence-value-mismatch" and "twice" in f.message for f in found), text


def test_a_line_locator_in_the_metrics_unit_passes(real: Path) -> None:
    line = "Output token throughput (tok/s): 40.1\n"
    assert _run_with_evidence(real, "x.log", line, {"decode_tok_s[0]": "line:1"}) == []
