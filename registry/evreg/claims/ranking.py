"""Uncertainty-aware ranking within one workload: the one rule the comparison pages rank by.

A result is the samples one measurement stored for one metric (its repeats), or the one value of a series point. Its
*spread* is robust, so that one outlying repeat (a warm-up) cannot move it: from three repeats on, the interquartile
range (the first to the third quartile, linearly interpolated); with fewer, the median alone (one or two repeats say
nothing about the spread, and are marked ``few``). Results whose spreads overlap, directly or through a chain of
overlapping results, are one *tie group*: nothing the registry stores separates them, so they share one rank. Groups
are ranked by how good they are (higher is better for a rate, lower for a time); a group's rank is one more than the
number of results in the groups ahead of it (competition ranking: 1, 1, 3). Repeats beyond the quartiles by more than
1.5 interquartile ranges (Tukey's fences) are *outliers*, flagged beside the value.

Results are only ever ranked against results of the same workload (``workload_tier``): one workload class when the
result's workload fields state its phase (``evreg.claims.workload``), else the workload text as the record states it,
the point along a series' axis, and the context, output length and concurrency its config states.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evreg.claims import workload

TIME_UNITS = frozenset({"ns", "µs", "us", "ms", "s"})
CONFIG_WORKLOAD_KEYS = ("active_context_tokens", "max_tokens", "concurrency")
"""Config keys that state part of a workload (context, output length, concurrency): results that state different
values are different workloads even when their workload text is the same."""


def direction(unit: str | None) -> int | None:
    """+1 when a larger value is better (a rate: ``tok/s``, ``requests/s``), -1 when a smaller one is (a time), None
    when the unit does not say (a ratio, a token count): such a metric is not ranked."""
    if not unit:
        return None
    if unit.endswith("/s"):
        return 1
    if unit in TIME_UNITS:
        return -1
    return None


ROBUST_FROM = 3
"""Repeats from which a result's spread is its interquartile range; with fewer it is its median alone."""


@dataclass(frozen=True)
class Ranked:
    """One result's place in its workload: ``rank`` (1 is best), ``tied`` (it shares its rank because its spread
    overlaps another's), ``single`` (one value), ``few`` (fewer than ``ROBUST_FROM`` repeats: no spread is known), and
    the spread it was ranked by."""

    rank: int
    tied: bool
    single: bool
    low: float
    high: float
    few: bool = False


def _finite(values: Sequence[float]) -> list[float]:
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        raise ValueError("a result needs at least one finite value")
    return finite


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, linearly interpolated between the two nearest."""
    pos = (len(ordered) - 1) * q
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def spread(values: Sequence[float]) -> tuple[float, float]:
    """The robust spread a result is ranked by: its interquartile range from ``ROBUST_FROM`` repeats, else its
    median (a point)."""
    finite = _finite(values)
    if len(finite) < ROBUST_FROM:
        m = median(finite)
        return m, m
    return quantile(finite, 0.25), quantile(finite, 0.75)


def outliers(values: Sequence[float]) -> list[int]:
    """The positions of repeats beyond the quartiles by more than 1.5 interquartile ranges (at least
    ``ROBUST_FROM`` + 1 repeats: with three, the quartiles are made of the repeats they would judge)."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) <= ROBUST_FROM:
        return []
    q1, q3 = spread(finite)
    fence = 1.5 * (q3 - q1)
    return [i for i, v in enumerate(values) if math.isfinite(v) and (v < q1 - fence or v > q3 + fence)]


def median(values: Sequence[float]) -> float:
    ordered = sorted(v for v in values if math.isfinite(v))
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def rank(results: Sequence[Sequence[float]], higher_is_better: bool = True) -> list[Ranked]:
    """The rank of each result (its samples) among ``results``, in their order: tie groups are the connected runs of
    overlapping spreads (``spread``; touching ends overlap); a group ahead of another lies wholly on its better
    side."""
    spans = [spread(r) for r in results]
    order = sorted(range(len(spans)), key=lambda i: spans[i])  # by low end, then high end
    groups: list[list[int]] = []
    reach = -math.inf
    for i in order:
        low, high = spans[i]
        if groups and low <= reach:
            groups[-1].append(i)
            reach = max(reach, high)
        else:
            groups.append([i])
            reach = high
    if higher_is_better:
        groups.reverse()
    out: dict[int, Ranked] = {}
    ahead = 0
    for group in groups:
        for i in group:
            n = sum(1 for v in results[i] if math.isfinite(v))
            out[i] = Ranked(ahead + 1, len(group) > 1, n == 1, *spans[i], few=n < ROBUST_FROM)
        ahead += len(group)
    return [out[i] for i in range(len(spans))]


REAL = (int, float)  # a tuple: ``int | float`` is a new union object at each call (a million at 100k)


def number(value: Any) -> float | None:
    """A stored value as a finite number, or None (a boolean is no number)."""
    if isinstance(value, bool) or not isinstance(value, REAL) or not math.isfinite(value):
        return None
    return float(value)


def workload_tier(m: dict[str, Any], x: float | None = None) -> tuple[tuple[Any, ...], list[tuple[str, float]]]:
    """The workload a result was measured under: a key (equal keys, same workload) and the stated numbers (name,
    value) shown beside it. A result whose workload fields state its phase is keyed by its class
    (``evreg.claims.workload.class_of``: ``(("class", WorkloadClass),)``); any other by its workload text as the record
    states it (``(("text", TEXT), *stated)``) and the stated numbers -- the series axis and the point's x, then the
    config's context, output length and concurrency."""
    if (cls := workload.class_of(m, x)) is not None:
        axis = str(m.get("axis") or "x")
        if x is None or axis in workload.AXIS_FIELDS:
            return (("class", cls),), []
        return (("class", cls), (axis, x)), [(axis, x)]  # an axis no field names: its points stay apart
    text = " ".join(str(m.get("workload") or "").split())
    stated: list[tuple[str, float]] = []
    if x is not None:
        stated.append((str(m.get("axis") or "x"), x))
    config = m.get("config")
    if not isinstance(config, dict):
        config = {}
    for key in CONFIG_WORKLOAD_KEYS:
        value = number(config.get(key))
        if value is not None and key != (m.get("axis") if x is not None else None):
            stated.append((key, value))
    return (("text", text), *stated), stated
