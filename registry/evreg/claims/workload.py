"""Workloads as fields, and the workload classes results are ranked within.

A measurement states its workload as text (``workload``) and, where its file or record says so, as fields
(``workload_fields``, ``evreg.records.models.Workload``). A series sweeps one of those fields along its axis
(``AXIS_FIELDS``): a point's x is that field's value. A result falls into a *class* -- phase, context band, load and
how its output ends, as speed leaderboards use fixed tiers -- only when its phase is stated; two results are ranked
against each other only within one class (and one metric). A field nothing states is "unstated", which is a value
of its own: a result that does not state its load never ranks beside a single stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

AXIS_FIELDS = {
    "active_context_tokens": "context_depth",
    "context_depth": "context_depth",
    "context_tokens": "context_depth",
    "prompt_tokens": "input_tokens",
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "concurrency": "concurrency",
    "concurrent_sequences": "concurrency",
    "concurrent_users": "concurrency",
    "simultaneous_users": "concurrency",
    "request_rate": "request_rate",
}
"""Series axes that sweep a workload field: the axis name -> the field a point's x is."""

CONTEXT_BANDS = (1024, 4096, 16384, 65536)
"""Upper ends (tokens, inclusive) of the context bands: the prompt plus the context before it."""

PHASES = {"prefill": "prefill", "decode": "decode", "serving": "end-to-end serving"}


def fields_of(m: Mapping[str, Any], x: float | None = None) -> dict[str, Any]:
    """A result's workload fields: the record's, with a series point's x as the field its axis sweeps."""
    stated = m.get("workload_fields")
    out = dict(stated) if isinstance(stated, dict) else {}
    axis = AXIS_FIELDS.get(str(m.get("axis") or ""))
    if x is not None and axis:
        out[axis] = int(x) if float(x).is_integer() and axis != "request_rate" else x
    return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def tokens(n: float) -> str:
    return f"{int(n):,}" if float(n).is_integer() else f"{n:,}"


def context_band(f: Mapping[str, Any]) -> str:
    """The band of the context a result ran at (prompt plus depth), or "context unstated"."""
    prompt, depth = _count(f.get("input_tokens")), _count(f.get("context_depth"))
    if prompt is None and depth is None:
        return "context unstated"
    total, low = (prompt or 0) + (depth or 0), 0
    for high in CONTEXT_BANDS:
        if total <= high:
            return f"context {tokens(low + 1)}–{tokens(high)} tokens" if low else f"context up to {tokens(high)} tokens"
        low = high
    return f"context over {tokens(CONTEXT_BANDS[-1])} tokens"


def load(f: Mapping[str, Any]) -> str:
    """The load: concurrency (one is a single stream) and an offered request rate, each as stated."""
    n = _count(f.get("concurrency"))
    parts = [] if n is None else ["single stream" if n == 1 else f"{n} concurrent"]
    rate = f.get("request_rate")
    if isinstance(rate, int | float) and not isinstance(rate, bool):
        parts.append(f"{rate:g} requests/s offered" + (f" ({f['arrival']})" if f.get("arrival") else ""))
    return " at ".join(parts) or "load unstated"


def output(f: Mapping[str, Any]) -> str:
    end = f.get("output_end")
    return {"fixed": "fixed output length", "natural": "natural end of output"}.get(str(end), "output end unstated")


@dataclass(frozen=True, order=True)
class WorkloadClass:
    """The tier a result is ranked in: phase, context band, load, output end."""

    phase: str
    context: str
    load: str
    output: str

    def parts(self) -> list[tuple[str, bool]]:
        """The label's parts, each with whether it is a setting (an offered request rate, which a page marks as a
        setting, not a measured rate)."""
        phase = PHASES.get(self.phase, self.phase)
        return [(phase, False), (self.context, False), (self.load, "requests/s" in self.load), (self.output, False)]

    def label(self) -> str:
        return " · ".join(text for text, _ in self.parts())


def class_of(m: Mapping[str, Any], x: float | None = None) -> WorkloadClass | None:
    """The class of a result, or None when its phase is not stated (it is then grouped by its text)."""
    f = fields_of(m, x)
    phase = f.get("phase")
    if phase not in PHASES:
        return None
    return WorkloadClass(str(phase), context_band(f), load(f), output(f))


DESCRIBED = (
    ("phase", "phase", ""),
    ("input_tokens", "input", " tokens"),
    ("context_depth", "depth", " tokens"),
    ("output_tokens", "output", " tokens"),
    ("output_end", "output end", ""),
    ("concurrency", "concurrency", ""),
    ("request_rate", "rate", " requests/s"),
    ("requests", "requests", ""),
    ("dataset", "dataset", ""),
    ("sampling", "sampling", ""),
    ("warmup", "warm-up", ""),
    ("sample", "one sample is a", ""),
)
"""The fields a reader is told, in order: (field, how it is named, its unit)."""


def _shown(value: Any, unit: str) -> str:
    if value is None:
        return "unstated"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return tokens(value) + unit
    return str(value)


def described(f: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The stated fields in words, each with whether it is a setting a page marks as one (an offered rate)."""
    return [
        (f"{name} {_shown(f[key], unit)}", key == "request_rate")
        for key, name, unit in DESCRIBED
        if f.get(key) is not None
    ]
