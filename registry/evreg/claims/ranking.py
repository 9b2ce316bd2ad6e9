"""Uncertainty-aware ranking within one workload: the one rule the comparison pages rank by.

A result is the samples one measurement stored for one metric (its repeats), or the one value of a series point. Its
interval is its lowest to its highest sample (a single sample is a point). Results whose intervals overlap, directly
or through a chain of overlapping results, are one *tie group*: nothing the registry stores separates them, so they
share one rank. Groups are ranked by how good they are (higher is better for a rate, lower for a time); a group's
rank is one more than the number of results in the groups ahead of it (competition ranking: 1, 1, 3).

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


@dataclass(frozen=True)
class Ranked:
    """One result's place in its workload: ``rank`` (1 is best), ``tied`` (it shares its rank because its interval
    overlaps another's), ``single`` (one sample: no spread is known), and its interval."""

    rank: int
    tied: bool
    single: bool
    low: float
    high: float


def interval(values: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        raise ValueError("a result needs at least one finite value")
    return min(finite), max(finite)


def median(values: Sequence[float]) -> float:
    ordered = sorted(v for v in values if math.isfinite(v))
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def rank(results: Sequence[Sequence[float]], higher_is_better: bool = True) -> list[Ranked]:
    """The rank of each result (its samples) among ``results``, in their order: tie groups are the connected runs of
    overlapping intervals (touching ends overlap); a group ahead of another lies wholly on its better side."""
    spans = [interval(r) for r in results]
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
            singles = sum(1 for v in results[i] if math.isfinite(v)) == 1
            out[i] = Ranked(ahead + 1, len(group) > 1, singles, *spans[i])
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
        return (("class", cls),), []
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
