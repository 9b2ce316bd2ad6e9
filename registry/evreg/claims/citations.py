"""Citations: the one path by which a number reaches text.

Syntax (in any prose field and in hand-written site pages)::

    {{ m:MEASUREMENT_ID.METRIC[SAMPLE_INDEX] }}    one repeat sample of a run metric
    {{ m:MEASUREMENT_ID.METRIC@X }}                one point of a series, at x = X

followed by optional filters: ``| N`` renders N decimals (default: the
metric's precision from the vocabulary), ``| nounit`` renders the number
alone (for notations like ``D{{ ... }}`` that carry the metric in a letter),
``| pct`` renders a ratio as a percentage (``0.2356`` as ``23.56%``), ``| dot``
drops the leading zero (the lab's ``AR.587``), ``| sep`` groups thousands
(``P1,020``), ``| compare`` marks a citation of
another scope's run in a packet's own prose as a comparison.

Honest figures that are not measurements have their own forms, so that no typed
number needs to pass as prose:

    {{ set:32 GiB }}                               a specification or setting, shown as one
    {{ change:ID.METRIC[I] from ID.METRIC[J] }}    a derived change in percent, computed here
    {{ ratio:ID.METRIC[I] to ID.METRIC[J] }}       a derived ratio (1.08x), computed here
    {{ median:m:ID.METRIC }}                       the median of a run's samples, computed here
    {{ e:LOCATOR = TEXT }}                         a quote from the record's own evidence file at a
                                                   locator (JSON pointer, csv:ROW/COLUMN, line:N[:K]),
                                                   re-read and checked by validation

This module parses citations, resolves them against the registry's
measurements, formats values, and finds *figures*: numbers in prose that
make a measurement claim and so must be citations (``evreg.claims.figures``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from evreg.claims import ranking
from evreg.core.vocab import metrics as metric_vocab

_ID = r"[a-z0-9]+(?:[.-][a-z0-9]+)*"
"""A measurement id (``evreg.core.layout.ID_PATTERN``); its dots are id dots: the metric follows the last one."""
METRIC_NAME = r"[a-z][a-z0-9_]{0,63}"
"""The one grammar of a metric name: in records (``metrics`` keys, point keys, ``metric`` fields)
and in citations."""
_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_REF = r"m:(?P<id>" + _ID + r")\.(?P<metric>" + METRIC_NAME + r")(?:\[(?P<index>\d+)\]|@(?P<x>" + _NUM + r"))"
CITATION = re.compile(r"\{\{\s*" + _REF + r"(?P<filters>(?:\s*\|\s*[a-z0-9]+)*)\s*\}\}")
REF = re.compile(_REF)
SETTING = re.compile(r"\{\{\s*set:\s*(?P<text>[^{}|]{1,80}?)\s*\}\}")
DERIVED = re.compile(
    r"\{\{\s*(?P<op>change|ratio):\s*(?P<a>(?:median:)?m:\S+)\s+(?:from|to)\s+(?P<b>(?:median:)?m:\S+?)"
    r"(?:\s*\|\s*(?P<decimals>\d{1,2}))?\s*\}\}"
)
STATISTIC = re.compile(
    r"\{\{\s*(?P<op>median):\s*m:(?P<id>" + _ID + r")\.(?P<metric>" + METRIC_NAME + r")"
    r"(?:\s*\|\s*(?P<decimals>\d{1,2}))?\s*\}\}"
)
QUOTE = re.compile(r"\{\{\s*e:\s*(?P<locator>[^\s={}]{1,200})\s*=\s*(?P<text>[^{}]{1,200}?)\s*\}\}")
ACCEPTED_FORMS: tuple[tuple[str, str], ...] = (
    ("{{ m:ID.METRIC[I] }}", "one stored sample of a run, formatted and linked to its receipt"),
    ("{{ m:ID.METRIC@X }}", "one point of a series, at x = X"),
    ("{{ median:m:ID.METRIC }}", "the median of a run's samples, computed here"),
    ("{{ change:A from B }}, {{ ratio:A to B }}", "a change in percent or a ratio of one metric in one workload class"),
    ("{{ set:VALUE }}", "a setting of a kind in vocab/settings.json (memory, power; a named time, link or rate)"),
    ("{{ e:LOCATOR = TEXT }}", "a quote from the record's own evidence, re-read by validation"),
    ("| N, | nounit, | pct, | dot, | sep, | compare", "a citation's decimals and notation"),
    ("counts, versions, dates, ids", "free: 12 prompts, vLLM 0.9.1, 2026-08-23, TP4, Q4_K_M, 32K context"),
)
"""What stands where a typed figure would be an orphan number (``evreg explain orphan-number`` lists them)."""
MAX_DECIMALS = 17
"""The most decimals a citation may ask for: a double's seventeen significant digits, as a tool prints its float."""
RATE_UNITS = ("tok/s", "%", "‰", "‱", "ppm", "x")
"""Units a setting may not hold: rates, shares and multipliers are what runs measure (write a citation, or a
derived ratio). A bandwidth is a setting only where a word names it (``vocab/settings.json``)."""


RENDERER_CLASSES = ("cite", "sample", "orphan", "unresolved", "name", "setting", "quote", "derived")
"""The HTML classes only the renderer emits (``evreg-cite`` ...): a citation, a stored sample in its own table, a
typed figure marked as a defect, an unresolved citation, a name shown as written, a setting, a quote from evidence, a
derived figure. Hand-written pages may not use them (``citation-forged``)."""


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
    flags: frozenset[str] = frozenset()

    @property
    def selector(self) -> str:
        return selector(self.index, self.x)


class CitationError(ValueError):
    """A ``{{ ... }}`` that is not a well-formed citation."""


class Setting(NamedTuple):
    """``{{ set:TEXT }}``: a specification or setting (card memory, a power limit, a timeout), not a measurement."""

    raw: str
    start: int
    end: int
    text: str


class Derived(NamedTuple):
    """``{{ change:A from B }}`` / ``{{ ratio:A to B }}``: a figure computed from two stored values."""

    raw: str
    start: int
    end: int
    op: str
    a: Citation | Statistic
    b: Citation | Statistic
    decimals: int | None


class Statistic(NamedTuple):
    """``{{ median:m:ID.METRIC }}``: a statistic of a run's samples of one metric, computed from them."""

    raw: str
    start: int
    end: int
    op: str
    measurement: str
    metric: str
    decimals: int | None

    @property
    def selector(self) -> str:
        return f"[{self.op}]"

    @property
    def flags(self) -> frozenset[str]:
        return frozenset()

    @property
    def sample(self) -> Citation:
        """A citation of the run's first sample: what the statistic stands on, for the rules that check a cited
        run (it exists, is of the scope, may be promoted)."""
        return Citation(self.raw, self.start, self.end, self.measurement, self.metric, 0, None, self.decimals)


class Quote(NamedTuple):
    """``{{ e:LOCATOR = TEXT }}``: text quoted from the record's own evidence file, re-read at the locator."""

    raw: str
    start: int
    end: int
    locator: str
    text: str


Form = Citation | Setting | Derived | Statistic | Quote
"""Every well-formed ``{{ ... }}``: the only ways a figure reaches text."""


def selector(index: int | None, x: float | None) -> str:
    """``[INDEX]`` for a sample, ``@X`` for a series point: the one spelling, in citations and anchors."""
    return f"[{index}]" if index is not None else f"@{fmt_x(x)}"


def fmt_x(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else str(x)


def parse(text: str) -> Iterator[Form | CitationError]:
    """Every ``{{ ... }}`` in ``text``: a citation or another figure form, or a CitationError saying why not."""
    if "{{" not in text:
        return
    for start, end in brace_spans(text):
        if end < 0:
            yield CitationError(f"unclosed '{{{{' at character {start}: a citation ends with '}}}}'")
            return
        yield _one(text[start:end], start, end)


_FILTERS = {"nounit", "pct", "dot", "sep", "compare"}


def _one(raw: str, start: int, end: int) -> Form | CitationError:
    if s := SETTING.fullmatch(raw):
        return Setting(raw, start, end, s.group("text"))
    if q := QUOTE.fullmatch(raw):
        return Quote(raw, start, end, q.group("locator"), q.group("text"))
    if st := STATISTIC.fullmatch(raw):
        decimals = int(st.group("decimals")) if st.group("decimals") else None
        return Statistic(raw, start, end, st.group("op"), st.group("id"), st.group("metric"), decimals)
    if d := DERIVED.fullmatch(raw):
        a, b = (_one("{{ " + d.group(k) + " }}", start, end) for k in ("a", "b"))
        if not isinstance(a, Citation | Statistic) or not isinstance(b, Citation | Statistic):
            return CitationError(
                f"{raw!r}: both sides of a derived figure are citations m:ID.METRIC[INDEX] or medians "
                "median:m:ID.METRIC"
            )
        decimals = int(d.group("decimals")) if d.group("decimals") else None
        return Derived(raw, start, end, d.group("op"), a, b, decimals)
    c = CITATION.fullmatch(raw)
    if not c:
        return CitationError(
            f"{raw!r} is not a citation: write {{{{ m:ID.METRIC[INDEX] }}}} or {{{{ m:ID.METRIC@X }}}} (or a "
            "setting {{ set:TEXT }}, a derived {{ change:A from B }}, a {{ median:m:ID.METRIC }} or a quote "
            "{{ e:LOCATOR = TEXT }})"
        )
    measurement, metric, index, x, filters = c.groups()
    decimals, flags = None, set()
    for f in filters.split("|") if filters else ():
        f = f.strip()
        if not f:
            continue
        if f.isdigit() and int(f) <= MAX_DECIMALS:
            decimals = int(f)
        elif f in _FILTERS:
            flags.add(f)
        else:
            return CitationError(
                f"unknown citation filter {f!r} in {raw!r}: "
                "use | N (decimals), | nounit, | pct, | dot, | sep or | compare"
            )
    return Citation(
        raw,
        start,
        end,
        measurement,
        metric,
        int(index) if index is not None else None,
        float(x) if x is not None else None,
        decimals,
        "nounit" not in flags,
        frozenset(flags),
    )


def cited(form: Form) -> tuple[Citation | Statistic, ...]:
    """The measurement values a form stands on (a derived figure: both sides; a setting or quote: none)."""
    if isinstance(form, Citation | Statistic):
        return (form,)
    if isinstance(form, Derived):
        return (form.a, form.b)
    return ()


def citation_text(
    measurement: str,
    metric: str,
    index: int | None = None,
    x: float | None = None,
    decimals: int | None = None,
    unit: bool = True,
    flags: frozenset[str] = frozenset(),
) -> str:
    sel = selector(index, x)
    filters = (f" | {decimals}" if decimals is not None else "") + ("" if unit else " | nounit")
    filters += "".join(f" | {f}" for f in sorted(flags - {"nounit"}))
    return f"{{{{ m:{measurement}.{metric}{sel}{filters} }}}}"


_PLAIN_ID = re.compile(_ID)
_PLAIN_METRIC = re.compile(METRIC_NAME)
_PLAIN_X = re.compile(_NUM)


def citation(
    measurement: str,
    metric: str,
    index: int | None = None,
    x: float | None = None,
    decimals: int | None = None,
    unit: bool = True,
    flags: frozenset[str] = frozenset(),
) -> Form | CitationError:
    """The form ``citation_text`` writes, as ``parse`` reads it (or why it is no citation). Where every part is one
    the grammar reads back as written (an id, a metric name, an index or a finite x in its pattern, at most 12
    decimals, known filters), the citation is made from the parts: the site shows 1.5 million stored numbers at
    100,000 measurements, and reading back its own text took a third of the time of showing one."""
    raw = citation_text(measurement, metric, index, x, decimals, unit, flags)
    if (
        type(measurement) is str
        and type(metric) is str
        and type(unit) is bool
        and _plain(_PLAIN_ID, measurement)
        and _plain(_PLAIN_METRIC, metric)
        and (index is None) != (x is None)
        and (index is None or (type(index) is int and index >= 0))
        and (x is None or _plain(_PLAIN_X, fmt_x(x)))
        and (decimals is None or (type(decimals) is int and 0 <= decimals <= MAX_DECIMALS))
        and flags <= _FILTERS
    ):
        return Citation(
            raw,
            0,
            len(raw),
            measurement,
            metric,
            index,
            float(fmt_x(x)) if x is not None else None,
            decimals,
            unit,
            frozenset(flags - {"nounit"} if unit else flags | {"nounit"}),
        )
    parsed = list(parse(raw))
    return parsed[0] if len(parsed) == 1 else CitationError(f"{raw!r} is not one citation")


@functools.lru_cache(maxsize=65536)
def _plain(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.fullmatch(text) is not None


class Resolved(NamedTuple):
    citation: Form
    value: float  # NaN for a setting or a quote: their text is what is shown
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


UNWRITTEN_UNITS = ("ratio", "score")
"""Units of a pure number, written without a unit word: a ratio (0.577) and a task-defined score (BLEU 23.4, a
perplexity 5.2, a correlation 0.61), whose scale the metric's label says."""


COUNT_UNITS = frozenset({"", "count", "tokens", "requests", "samples", "queries"})
"""Units of a count (and no unit: a metric the vocabulary does not know, such as a sample count): a whole value of
one is shown whole (``256 tokens``, not ``256.00 tokens``) unless a citation asks for decimals."""
SIGNIFICANT = 2
"""The significant digits a value smaller than one keeps at least when a citation asks for no decimals: a small
ratio reads ``0.0042``, not ``0.00``."""


def number_text(value: float, decimals: int, sep: bool = False) -> str:
    """``value`` with ``decimals`` decimals (thousands grouped with ``sep``)."""
    return f"{value:,.{decimals}f}" if sep else f"{value:.{decimals}f}"


def shown_number(value: float, decimals: int, sep: bool = False, count: bool = False) -> str:
    """A value as shown when a citation asks for no decimals: a ``count``'s whole value whole; else ``decimals``
    decimals (the metric's precision), with more (at most twelve, the zeros past the precision dropped) where the
    precision would show fewer than ``SIGNIFICANT`` significant digits of a nonzero value."""
    if count and float(value).is_integer():
        return f"{int(value):,}" if sep else str(int(value))
    size = abs(value)
    if 0 < size < 10 ** (SIGNIFICANT - 1 - decimals) and math.isfinite(size):
        wanted = min(max(decimals, SIGNIFICANT - 1 - math.floor(math.log10(size))), 12)
        text = number_text(value, wanted, sep)
        keep = len(text) - (wanted - decimals)  # only the digits past the precision may be dropped
        while len(text) > keep and text.endswith("0"):
            text = text[:-1]
        return text.removesuffix(".")
    return number_text(value, decimals, sep)


def _format(value: float, metric: str, decimals: int | None, u: str, sep: bool = False) -> str:
    if decimals is None:
        number = shown_number(value, _precision(metric), sep, unit_of(metric) in COUNT_UNITS)
    else:
        number = number_text(value, decimals, sep)
    if not u or u in UNWRITTEN_UNITS:
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


def median_of(measurement: dict[str, Any], metric: str) -> float | str:
    """The median of a run's samples of ``metric`` (the middle one, or the mean of the middle two), or why there is
    none: a headline is a statistic of its repeats, not one chosen sample."""
    samples = (measurement.get("metrics") or {}).get(metric)
    if not isinstance(samples, list) or not samples:
        have = ", ".join(sorted(measurement.get("metrics") or {})) or "none"
        return f"has no metric {metric!r} with samples (metrics: {have})"
    if any(isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) for v in samples):
        return f"a sample of {metric!r} is not a finite number"
    return ranking.median([float(v) for v in samples])


def resolve(c: Form, measurements: Mapping[str, dict[str, Any]]) -> Resolved | str:
    """What a reader sees for a form, or why it cannot be shown. A setting and a quote show their text (validation
    checks a setting holds no rate and re-reads a quote in the record's evidence); a derived figure is computed."""
    if isinstance(c, Setting | Quote):
        return Resolved(c, math.nan, "", c.text)
    if isinstance(c, Derived):
        return _derive(c, measurements)
    if isinstance(c, Statistic):
        run = measurements.get(c.measurement)
        if run is None:
            return f"names no measurement {c.measurement!r}"
        median = median_of(run, c.metric)
        if isinstance(median, str):
            return f"measurement {c.measurement!r} {median}"
        return Resolved(c, median, unit_of(c.metric), _format(median, c.metric, c.decimals, unit_of(c.metric)))
    m = measurements.get(c.measurement)
    if m is None:
        return f"names no measurement {c.measurement!r}"
    value = lookup(m, c.metric, c.index, c.x)
    if isinstance(value, str):
        return f"measurement {c.measurement!r} {value}"
    unit = unit_of(c.metric)
    if "pct" in c.flags:
        if unit != "ratio":
            return f"| pct shows a ratio as a percentage; {c.metric!r} is in {unit or 'no unit'}"
        if c.decimals is not None:
            shown = number_text(value * 100, c.decimals)
        else:
            shown = shown_number(value * 100, max(_precision(c.metric) - 2, 0))
        return Resolved(c, value, "%", shown + ("%" if c.unit else ""))
    text = _format(value, c.metric, c.decimals, unit if c.unit else "", "sep" in c.flags)
    if "dot" in c.flags and text.startswith(("0.", "-0.")):
        text = text.replace("0.", ".", 1)
    return Resolved(c, value, unit, text)


def _precision(metric: str) -> int:
    return int(metric_vocab().get(metric, {}).get("precision", 2))


def _derive(d: Derived, measurements: Mapping[str, dict[str, Any]]) -> Resolved | str:
    a, b = resolve(d.a, measurements), resolve(d.b, measurements)
    for side, r in ((d.a, a), (d.b, b)):
        if isinstance(r, str):
            return f"citation {side.raw.strip('{} ')} {r}"
    assert isinstance(a, Resolved) and isinstance(b, Resolved)
    if a.unit != b.unit:
        return f"derives from {d.a.metric!r} ({a.unit}) and {d.b.metric!r} ({b.unit}): one unit on both sides"
    if d.a.metric != d.b.metric:
        return f"derives from {d.a.metric!r} and {d.b.metric!r}: a derived figure compares one metric"
    from evreg.claims.workload import class_of

    runs = [measurements.get(side.measurement) or {} for side in (d.a, d.b)]
    xs = [side.x if isinstance(side, Citation) else None for side in (d.a, d.b)]
    ca, cb = (class_of(run, x) for run, x in zip(runs, xs, strict=True))
    if ca is not None and cb is not None and ca != cb:
        return (
            f"compares two workload classes ({ca.label()} and {cb.label()}): a derived figure compares one metric "
            "within one class"
        )
    if b.value == 0:
        return "derives by dividing by a stored zero"
    if not math.isfinite(a.value / b.value):
        return "derives a value too large to show (a stored value is near zero)"
    if d.op == "change":
        value = (a.value - b.value) / b.value * 100
        decimals = 1 if d.decimals is None else d.decimals
        return Resolved(d, value, "%", f"{value:+.{decimals}f}%")
    value = a.value / b.value
    decimals = 2 if d.decimals is None else d.decimals
    return Resolved(d, value, "×", f"{value:.{decimals}f}×")


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
