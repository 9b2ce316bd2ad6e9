"""Citations: the one path by which a number reaches text.

Syntax (in any prose field and in hand-written site pages)::

    {{ m:MEASUREMENT_ID.METRIC[SAMPLE_INDEX] }}    one repeat sample of a run metric
    {{ m:MEASUREMENT_ID.METRIC@X }}                one point of a series, at x = X

followed by optional filters: ``| N`` renders N decimals (default: the
metric's precision from the vocabulary), ``| nounit`` renders the number
alone (for notations like ``D{{ ... }}`` that carry the metric in a letter).

This module parses citations, resolves them against the registry's
measurements, formats values, and finds *figures*: numbers in prose that
make a measurement claim and so must be citations (``evreg.figures``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from evreg.vocab import metrics as metric_vocab

_ID = r"[a-z0-9]+(?:[.-][a-z0-9]+)*"
"""A measurement id (``evreg.layout.ID_PATTERN``); its dots are id dots: the metric follows the last one."""
METRIC_NAME = r"[a-z][a-z0-9_]{0,63}"
"""The one grammar of a metric name: in records (``metrics`` keys, point keys, ``metric`` fields)
and in citations."""
_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
CITATION = re.compile(
    r"\{\{\s*m:(?P<id>" + _ID + r")\.(?P<metric>" + METRIC_NAME + r")"
    r"(?:\[(?P<index>\d+)\]|@(?P<x>" + _NUM + r"))"
    r"(?P<filters>(?:\s*\|\s*[a-z0-9]+)*)\s*\}\}"
)


RENDERER_CLASSES = ("cite", "orphan", "unresolved", "name")
"""The HTML classes only the renderer emits (``evreg-cite`` ...): a citation, a typed figure marked as a defect, an
unresolved citation, a name shown as written. Hand-written pages may not use them (``citation-forged``)."""


def brace_spans(text: str) -> Iterator[tuple[int, int]]:
    """Spans of everything in double braces -- a citation, or something that looks like one and
    is not -- leftmost first, each ending at the first ``}}`` after its ``{{``; and, last, an
    unclosed ``{{`` as ``(start, -1)``. One pass over the text: a regular expression such as
    ``\\{\\{.*?\\}\\}`` rescans the rest of the text from every unclosed ``{{`` (quadratic)."""
    start = text.find("{{")
    while start >= 0:
        end = text.find("}}", start + 2)
        if end < 0:
            yield start, -1  # and no later "{{" can be closed either
            return
        yield start, end + 2
        start = text.find("{{", end + 2)


class Citation(NamedTuple):  # made once per citation in every record: a tuple is cheap to build
    raw: str
    start: int
    end: int
    measurement: str
    metric: str
    index: int | None  # type: ignore[assignment]  # a field that shadows tuple.index, deliberately: c.index reads well
    x: float | None
    decimals: int | None = None
    unit: bool = True

    @property
    def selector(self) -> str:
        return selector(self.index, self.x)


class CitationError(ValueError):
    """A ``{{ ... }}`` that is not a well-formed citation."""


def selector(index: int | None, x: float | None) -> str:
    """``[INDEX]`` for a sample, ``@X`` for a series point: the one spelling, in citations and anchors."""
    return f"[{index}]" if index is not None else f"@{fmt_x(x)}"


def fmt_x(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else str(x)


def parse(text: str) -> Iterator[Citation | CitationError]:
    """Every ``{{ ... }}`` in ``text``: a Citation, or a CitationError saying why not."""
    if "{{" not in text:
        return
    for start, end in brace_spans(text):
        if end < 0:
            yield CitationError(f"unclosed '{{{{' at character {start}: a citation ends with '}}}}'")
            return
        raw = text[start:end]
        c = CITATION.fullmatch(raw)
        if not c:
            yield CitationError(
                f"{raw!r} is not a citation: write {{{{ m:ID.METRIC[INDEX] }}}} or {{{{ m:ID.METRIC@X }}}}"
            )
            continue
        measurement, metric, index, x, filters = c.groups()
        decimals, unit, unknown = None, True, None
        for f in filters.split("|") if filters else ():
            f = f.strip()
            if not f:
                continue
            if f.isdigit() and int(f) <= 12:
                decimals = int(f)
            elif f == "nounit":
                unit = False
            else:
                unknown = f
                break
        if unknown is not None:
            yield CitationError(f"unknown citation filter {unknown!r} in {raw!r}: use | N (decimals) or | nounit")
            continue
        yield Citation(
            raw,
            start,
            end,
            measurement,
            metric,
            int(index) if index is not None else None,
            float(x) if x is not None else None,
            decimals,
            unit,
        )


def citation_text(
    measurement: str,
    metric: str,
    index: int | None = None,
    x: float | None = None,
    decimals: int | None = None,
    unit: bool = True,
) -> str:
    sel = selector(index, x)
    filters = (f" | {decimals}" if decimals is not None else "") + ("" if unit else " | nounit")
    return f"{{{{ m:{measurement}.{metric}{sel}{filters} }}}}"


class Resolved(NamedTuple):
    citation: Citation
    value: float
    unit: str
    text: str  # the formatted figure


def unit_of(metric: str) -> str:
    known = metric_vocab().get(metric)
    if known:
        return str(known["unit"])
    if metric.endswith("_tok_s"):
        return "tok/s"
    if metric.endswith("_ms"):
        return "ms"
    if metric.endswith("_pct"):
        return "%"
    return ""


def format_value(value: float, metric: str, decimals: int | None = None, unit: bool = True) -> str:
    return _format(value, metric, decimals, unit_of(metric) if unit else "")


def _format(value: float, metric: str, decimals: int | None, u: str) -> str:
    if decimals is None:
        decimals = int(metric_vocab().get(metric, {}).get("precision", 2))
    number = f"{value:.{decimals}f}"
    if not u or u == "ratio":
        return number
    return f"{number}{u}" if u in ("%", "×") else f"{number} {u}"


def lookup(measurement: dict[str, Any], metric: str, index: int | None, x: float | None) -> float | str:
    """The cited value, or a string saying why there is none."""
    if index is not None:
        samples = (measurement.get("metrics") or {}).get(metric)
        if not isinstance(samples, list):
            have = ", ".join(sorted(measurement.get("metrics") or {})) or "none"
            return f"has no metric {metric!r} with samples (metrics: {have})"
        if index >= len(samples):
            return f"metric {metric!r} has {len(samples)} samples; index {index} is out of range"
        value = samples[index]
    else:
        points = [p for p in measurement.get("points") or [] if isinstance(p, dict) and p.get("x") == x]
        if not points:
            return f"has no point at x = {fmt_x(x)}"
        if len(points) > 1:
            return f"has {len(points)} points at x = {fmt_x(x)}; a citation must select one"
        value = points[0].get(metric)
        if value is None:
            return f"its point at x = {fmt_x(x)} has no metric {metric!r}"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"the value of {metric!r} there is not a finite number"
    return float(value)


def resolve(c: Citation, measurements: Mapping[str, dict[str, Any]]) -> Resolved | str:
    m = measurements.get(c.measurement)
    if m is None:
        return f"names no measurement {c.measurement!r}"
    value = lookup(m, c.metric, c.index, c.x)
    if isinstance(value, str):
        return f"measurement {c.measurement!r} {value}"
    unit = unit_of(c.metric)
    return Resolved(c, value, unit, _format(value, c.metric, c.decimals, unit if c.unit else ""))


def plain(text: str, measurements: Mapping[str, dict[str, Any]]) -> str:
    """Prose with each citation that resolves replaced by its formatted figure: the text as a reader sees it, and
    as the lab wrote it before the import bound its figures."""
    out, last = [], 0
    for c in parse(text):
        if isinstance(c, CitationError):
            continue
        resolved = resolve(c, measurements)
        if isinstance(resolved, Resolved):
            out += [text[last : c.start], resolved.text]
            last = c.end
    return "".join(out) + text[last:]
