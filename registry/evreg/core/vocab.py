"""Controlled vocabularies, read from the data files in ``registry/evreg/vocab/``."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

from evreg.core import jsonio


@cache
def load(name: str) -> dict[str, Any]:
    text = resources.files("evreg").joinpath("vocab", f"{name}.json").read_text("utf-8")
    return jsonio.loads(text)


def states() -> dict[str, dict[str, Any]]:
    return load("states")["states"]


def metrics() -> dict[str, dict[str, Any]]:
    return load("metrics")["metrics"]


def unit_bounds() -> dict[str, dict[str, Any]]:
    """Per unit, the values a measurement can take (``above``: exclusive minimum; ``min``, ``max``) and why."""
    return load("metrics").get("units", {})


STATES = tuple(load("states")["states"])
OBSERVED_STATES = tuple(k for k, v in load("states")["states"].items() if v["observed"])
METRICS = tuple(load("metrics")["metrics"])


_DIAGNOSTIC = re.compile(r"(?i)(?<!non)(?:^|[^a-z0-9])diagnostics?(?:[^a-z0-9]|$)")
"""The word diagnostic in a measurement class, in any case and however delimited (``strict Diagnostic run``), but
not negated (``non-diagnostic``)."""


def is_diagnostic(measurement: dict[str, Any]) -> bool:
    return bool(_DIAGNOSTIC.search(str(measurement.get("measurement_class") or "")))


def promotable(record: dict[str, Any]) -> str | None:
    """None when the record may back a promotion; else why not."""
    if record.get("kind") == "estimate":
        return "it is an estimate"
    state = record.get("state")
    if not states().get(str(state), {}).get("promotable"):
        return f"its state is {state!r}"
    if is_diagnostic(record):
        return f"its measurement_class {record.get('measurement_class')!r} is diagnostic"
    if record.get("retired"):
        return "it is retired"
    return None
