"""Citation filters (``evreg.claims.citations``): ratios render in the lab's notations, and only ratios take them."""

from __future__ import annotations

import pytest

from evreg.claims import citations


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


def _shown(metric: str, value: float, filters: str = "") -> str:
    [c] = citations.parse("{{ m:r." + metric + "[0]" + filters + " }}")
    resolved = citations.resolve(c, {"r": {"metrics": {metric: [value]}}})
    assert isinstance(resolved, citations.Resolved), resolved
    return resolved.text


@pytest.mark.parametrize(
    ("metric", "value", "shown"),
    [
        ("mean_output_tokens", 256.0, "256 tokens"),  # a count in tokens: whole, not 256.0
        ("mean_output_tokens", 256.5, "256.5 tokens"),  # a mean that is not whole keeps its precision
        ("sample_count", 256.0, "256"),  # a metric of no unit (not in the vocabulary), whole-valued: a count
        ("decode_tok_s", 30.0, "30.00 tok/s"),  # a rate keeps its precision
        ("draft_acceptance_rate", 0.0042, "0.0042"),  # a small ratio: its significant digits, not 0.000
        ("decode_tok_s", 0.0042, "0.0042 tok/s"),
        ("draft_acceptance_rate", 0.577, "0.577"),
        ("ttft_ms", 0.5, "0.5 ms"),  # at the precision already: no digit added
    ],
)
def test_a_value_is_shown_as_its_metric_reads(metric: str, value: float, shown: str) -> None:
    assert _shown(metric, value) == shown
    assert citations.format_value(value, metric) == shown


def test_a_citations_own_decimals_are_kept() -> None:
    """A citation that states its decimals shows exactly them (the lab's figures are bound at their precision)."""
    assert _shown("mean_output_tokens", 256.0, " | 2") == "256.00 tokens"
    assert _shown("draft_acceptance_rate", 0.0042, " | 2") == "0.00"
    assert _shown("mean_input_tokens", 12345.0, " | sep") == "12,345 tokens"
    assert _shown("draft_acceptance_rate", 0.00042, " | pct") == "0.042%"


def test_a_derived_figure_compares_one_metric_within_one_workload_class() -> None:
    """``ratio:``/``change:`` of two metrics, or of one metric in two workload classes, is no comparison (shown as a
    clean "1.08x" it would say one setup is faster than another at something neither measured)."""
    decode = {"phase": "decode", "concurrency": 1, "context_tokens": 512}
    a = {"id": "a", "metrics": {"decode_tok_s": [52.0], "prefill_tok_s": [800.0]}, "workload_fields": decode}
    b = {"id": "b", "metrics": {"decode_tok_s": [48.0]}, "workload_fields": decode}
    c = {"id": "c", "metrics": {"decode_tok_s": [30.0]}, "workload_fields": decode | {"concurrency": 16}}
    runs = {"a": a, "b": b, "c": c}

    def shown(text: str) -> str:
        [form] = citations.parse(text)
        resolved = citations.resolve(form, runs)
        return resolved if isinstance(resolved, str) else resolved.text

    assert shown("{{ ratio:m:a.decode_tok_s[0] to m:b.decode_tok_s[0] }}") == "1.08×"
    assert "one metric" in shown("{{ ratio:m:a.prefill_tok_s[0] to m:b.decode_tok_s[0] }}")
    assert "two workload classes" in shown("{{ change:m:a.decode_tok_s[0] from m:c.decode_tok_s[0] }}")
