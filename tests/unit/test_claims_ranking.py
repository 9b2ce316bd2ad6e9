"""The ranking rule of comparison pages (``evreg.claims.ranking``): spreads that overlap tie, the direction comes
from the unit, and results rank only within one workload tier."""

from __future__ import annotations

import math

import pytest

from evreg.claims import ranking


def test_overlapping_spreads_tie_and_the_next_rank_skips_the_tied_places() -> None:
    places = ranking.rank([[30.2, 30.3, 30.4], [30.3, 30.35, 30.45], [29.0], [31.0, 31.5, 32.0]])
    expected = [(2, True, False), (2, True, False), (4, False, True), (1, False, False)]
    assert [(r.rank, r.tied, r.single) for r in places] == expected
    assert (places[0].low, places[0].high) == pytest.approx((30.25, 30.35))  # the interquartile range


def test_lower_is_better_for_a_time_and_ranks_reverse() -> None:
    places = ranking.rank([[100.0], [90.0, 94.0, 95.0], [94.0]], higher_is_better=False)
    assert [(r.rank, r.tied) for r in places] == [(3, False), (1, True), (1, True)]


def test_ties_chain_through_an_overlapping_middle_result() -> None:
    # a and c do not overlap, but each overlaps b: nothing stored separates a from b or b from c, so all three tie
    places = ranking.rank([[10.0, 10.5, 11.0], [10.0, 11.5, 13.0], [12.0, 12.5, 13.0], [20.0]])
    assert [r.rank for r in places] == [2, 2, 2, 1]
    assert [r.tied for r in places] == [True, True, True, False]


def test_one_outlying_repeat_neither_ties_the_leader_nor_moves_a_spread() -> None:
    """A warm-up repeat at half the others' rate: with min-max spreads it tied the leader; the interquartile range
    of the others' repeats stays where they are, and the repeat is flagged."""
    leader = [100.0, 101.0, 102.0, 101.5, 100.5]
    warm = [50.0, 90.0, 90.5, 91.0, 90.2]
    places = ranking.rank([leader, warm])
    assert [(r.rank, r.tied) for r in places] == [(1, False), (2, False)]
    assert ranking.outliers(warm) == [0] and ranking.outliers(leader) == []


def test_fewer_than_three_repeats_are_marked_and_never_tied_by_their_range() -> None:
    """Two repeats say nothing about the spread: a result is its median, marked ``few``."""
    places = ranking.rank([[10.0, 20.0], [14.0, 14.5, 15.0]])
    assert [r.few for r in places] == [True, False]
    assert [(r.rank, r.tied) for r in places] == [(1, False), (2, False)]  # its median 15.0 is above 14.25-14.75


def test_equal_single_samples_tie_and_distinct_ones_do_not() -> None:
    assert [(r.rank, r.tied) for r in ranking.rank([[5.0], [5.0], [4.0]])] == [(1, True), (1, True), (3, False)]
    assert [(r.rank, r.tied) for r in ranking.rank([[5.0], [5.1]])] == [(2, False), (1, False)]


def test_non_finite_samples_are_ignored_and_a_result_needs_one_value() -> None:
    places = ranking.rank([[1.0, math.nan], [2.0]])
    assert places[0].single and (places[0].low, places[0].high) == (1.0, 1.0) and places[1].rank == 1
    with pytest.raises(ValueError):
        ranking.rank([[math.nan]])


def test_direction_comes_from_the_unit() -> None:
    assert ranking.direction("tok/s") == 1 and ranking.direction("requests/s") == 1
    assert ranking.direction("ms") == -1 and ranking.direction("ns") == -1
    assert (
        ranking.direction("ratio") is None and ranking.direction("tokens") is None and ranking.direction(None) is None
    )


def test_workload_tier_separates_points_and_stated_context() -> None:
    sweep = {"workload": "context  sweep", "axis": "active_context_tokens", "config": {"tp": 1}}
    short, long = ranking.workload_tier(sweep, 1024.0), ranking.workload_tier(sweep, 100000.0)
    assert short[0] != long[0] and short[0][0] == ("text", "context sweep")
    run = {"workload": "context sweep", "config": {"active_context_tokens": 1024, "concurrency": 4, "tp": 2}}
    assert ranking.workload_tier(run)[1] == [("active_context_tokens", 1024.0), ("concurrency", 4.0)]
    assert ranking.workload_tier(run)[0] != ranking.workload_tier({**run, "config": {"tp": 2}})[0]
    # a series along concurrency states its concurrency once: the point's x, not the config's
    along = {"workload": "w", "axis": "concurrency", "config": {"concurrency": 8}}
    assert ranking.workload_tier(along, 2.0)[1] == [("concurrency", 2.0)]


def test_a_stated_phase_ranks_by_class_not_by_text() -> None:
    """Two labs' texts differ; their fields put them in one class, and a different load or context is another."""
    a = {
        "workload": "one-slot HTTP, 128 returned IDs",
        "workload_fields": {"phase": "serving", "concurrency": 1, "input_tokens": 700, "output_end": "natural"},
    }
    b = {
        "workload": "single request, 300 output tokens",
        "workload_fields": {"phase": "serving", "concurrency": 1, "input_tokens": 900, "output_end": "natural"},
    }
    assert ranking.workload_tier(a)[0] == ranking.workload_tier(b)[0]
    four = {**b, "workload_fields": {**b["workload_fields"], "concurrency": 4}}
    long = {**b, "workload_fields": {**b["workload_fields"], "input_tokens": 9000}}
    unstated = {**b, "workload_fields": {k: v for k, v in b["workload_fields"].items() if k != "concurrency"}}
    tiers = {ranking.workload_tier(m)[0] for m in (b, four, long, unstated)}
    assert len(tiers) == 4
    # a series along an axis that sweeps a field: each point's x is that field
    sweep = {"axis": "concurrency", "workload_fields": {"phase": "serving"}}
    assert ranking.workload_tier(sweep, 1.0)[0] != ranking.workload_tier(sweep, 8.0)[0]
    # no phase: the text decides, as before
    assert ranking.workload_tier({"workload": "x", "workload_fields": {"concurrency": 1}})[0][0] == ("text", "x")
