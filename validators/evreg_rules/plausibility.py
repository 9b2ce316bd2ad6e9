"""Plausibility: a stored number a measurement of its metric cannot take (a zero or negative
throughput, a latency of a week, a rate above one) is refused, whatever its evidence says. The
bounds are per unit, in the vocabulary (``vocab/metrics.json``, ``units``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims.citations import unit_of
from evreg.core.findings import Code, Finding, join_pointer
from evreg.core.vocab import unit_bounds
from evreg.store import MEASUREMENT_KINDS, Registry

IMPLAUSIBLE = Code(
    "implausible-value",
    "A number its metric cannot take",
    "A zero throughput is a failed run, a negative latency or a rate above one is a bug in a tool or a "
    "transcription; published as a measurement it would head charts and tables. The bounds per unit are in "
    "the vocabulary (vocab/metrics.json).",
    "Record a failed run as a closure with its reason, fix the transcription, or drop the sample and say why.",
    '{"metrics": {"decode_tok_s": [0.0]}}',
)


def _why_not(metric: str, value: Any) -> str | None:
    """Why ``value`` cannot be a measurement of ``metric``, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # types are the schema's business
    unit = unit_of(metric)
    bounds = unit_bounds().get(unit)
    if bounds is None:
        return None
    if "above" in bounds and not value > bounds["above"]:
        return f"{metric} must be above {bounds['above']} {unit}"
    if "min" in bounds and value < bounds["min"]:
        return f"{metric} must be at least {bounds['min']} {unit}"
    if "max" in bounds and value > bounds["max"]:
        return f"{metric} must be at most {bounds['max']:g} {unit}"
    return None


def _values(data: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """(path, metric, value) of every stored number of a measurement or estimate (the path's pointer is made
    only for a finding)."""
    for metric, samples in (data.get("metrics") or {}).items():
        for i, value in enumerate(samples if isinstance(samples, list) else []):
            yield ("metrics", metric, i), metric, value
    for i, point in enumerate(data.get("points") or []):
        for metric, value in point.items() if isinstance(point, dict) else ():
            if metric not in ("x", "samples"):
                yield ("points", i, metric), metric, value
    if data.get("kind") == "estimate" and isinstance(data.get("metric"), str):
        yield ("value",), data["metric"], data.get("value")


COMPLETED = frozenset({"completed", "completed_requests", "num_completed", "successful_requests"})
"""Keys under which a record states how many requests its run completed, wherever in the record."""


def _completed_none(value: Any, pointer: str = "") -> Iterator[str]:
    """Pointers at which ``value`` states that no request completed."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in COMPLETED and item == 0 and not isinstance(item, bool):
                yield pointer + join_pointer(key)
            elif isinstance(item, dict | list):
                yield from _completed_none(item, pointer + join_pointer(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):  # a list's items have no key: only what they hold is looked at
            if isinstance(item, dict | list):
                yield from _completed_none(item, f"{pointer}/{i}")


def check_plausible(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records(*MEASUREMENT_KINDS, "estimate"):
        for path, metric, value in _values(doc.data):
            why = _why_not(metric, value)
            if why:
                yield IMPLAUSIBLE.at(doc, join_pointer(*path), f"{value!r} is not a measurement: {why}")
        if doc.kind in MEASUREMENT_KINDS:
            for pointer in _completed_none(doc.data):
                yield IMPLAUSIBLE.at(
                    doc,
                    pointer,
                    "the run states that no request completed: it measured nothing, so it is not a "
                    "measurement (record it as a closure with its reason)",
                )


RULES = [Rule("plausibility", (IMPLAUSIBLE,), check_plausible, UNIT)]
