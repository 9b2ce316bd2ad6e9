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
