"""Citations and orphan numbers in the prose of records: a number reaches a reader only through a citation that
resolves, a setting holds no measured kind of figure, no figure is typed partly outside a setting or quote, and a
packet's own prose cites a run of another scope only as an explicit comparison. ``form_problems`` reads one string
and is shared with the check of hand-written pages."""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations, figures, scope
from evreg.claims.spelled import any_number_word
from evreg.core import codes
from evreg.core.findings import Code, Finding, split_pointer
from evreg.core.vocab import setting_kinds
from evreg.records.models import claims_in, in_cell
from evreg.store import Document, Registry
from evreg_rules.index import index
from evreg_rules.promotion import SIDEWAYS

UNRESOLVED = Code(
    "citation-unresolved",
    "A citation to an unknown measurement, metric, sample or point",
    "A citation is how a number reaches text; one that resolves to nothing shows the reader a number "
    "with no receipt, or none at all.",
    "Cite an existing measurement id, a metric it has, and a sample index or point x it has.",
    "caveat: 'peak {{ m:run-1.decode_tok_s[5] }}' when run-1 has 2 samples",
)


MAX_PER_FIELD = 20
"""Findings reported per prose field and code; the rest are counted in one more finding, so a
hostile field of a million bad citations costs one pass, not a million findings."""


Problem = tuple[Code, str, dict[str, str]]
"""A finding's code, message and fields (what it is about), before it is placed."""


def _field_problems(text: str, field: str, measurements: Any, cell: bool = False) -> Iterator[Problem]:
    """(code, message, fields) of every unresolved citation and orphan figure in one prose string."""
    yield from form_problems(text, field, measurements)
    for fig in claims_in(field, text, cell):
        yield codes.ORPHAN_NUMBER, f"figure {fig.text!r} in {field} is not a citation", _about(fig.text, field)


def _about(figure: str, field: str) -> dict[str, str]:
    return {"figure": figure, "field": field}


def form_problems(text: str, field: str, measurements: Any) -> Iterator[Problem]:
    """(code, message, fields) of the citations, settings, quotes and derived figures of one prose string (a field, or a
    line of a hand-written page) that do not stand: unresolved, a setting holding a rate, a share or a metric's value,
    a figure typed partly outside a setting or quote, a unit typed after a citation shown without its own. Quotes
    are re-read by the evidence rules."""
    last_end = 0  # where the text before a setting starts: after the form before it
    for c in citations.parse(text):
        if isinstance(c, citations.CitationError):
            yield UNRESOLVED, str(c), {"error": str(c)}
            continue
        before, last_end = text[max(last_end, c.start - 30) : c.start], c.end
        if isinstance(c, citations.Setting):
            near = _LAST_WORDS.search(before)
            own = set(re.findall(r"[a-z][a-z-]*", ((near.group() if near else "") + " " + c.text).lower()))
            kind_words = {w for spec in setting_kinds().values() for w in spec["words"]}
            after = _BRACKET_AFTER.match(text, c.end)
            if after:  # ``(timeout)``: a bracket of nothing but kind words names the kind
                named = set(re.findall(r"[a-z][a-z-]*", after.group(1).lower()))
                named = named if named <= kind_words else set()
            else:  # ``a {{ set:30 s }} timeout``, ``{{ set:64 GB/s }} PCIe link``: the kind words right after it
                following = m.group(1).lower().split() if (m := _NEXT_WORDS.match(text, c.end)) else []
                named = set(itertools.takewhile(kind_words.__contains__, following))
            words = own | named
            found = figures.find_figures(c.text)
            numbered = _DIGIT.search(c.text) is not None or any_number_word(c.text)
            if numbered and not any(f.unit or f.metric_hints for f in found) and not _named_kinds(own):
                yield (
                    codes.ORPHAN_NUMBER,
                    f"setting {c.raw} holds a number without a unit or a word saying what it sets: name what it sets "
                    "(timeout, memory, power limit ...) or cite the measurement",
                    _about(c.text, field),
                )
            for fig in found:
                if fig.unit in citations.RATE_UNITS or fig.metric_hints:
                    yield (
                        codes.ORPHAN_NUMBER,
                        (
                            f"setting {c.raw} holds {fig.text!r}, a measured kind of figure (a rate, share or metric): "
                            "cite the measurement instead"
                        ),
                        _about(fig.text, field),
                    )
            for fig in found:
                if (why := _setting_kind_problem(fig.unit, words)) is not None:
                    yield codes.ORPHAN_NUMBER, f"setting {c.raw} {why}", _about(fig.text, field)
            if numbered and (
                (result := _RESULT_BEFORE.search(before)) or (after and (result := _RESULT.search(after.group(1))))
            ):
                yield (
                    codes.ORPHAN_NUMBER,
                    f"setting {c.raw} follows {result.group(1)!r}: what a run measured is cited, not set",
                    _about(c.raw, field),
                )
            if (word := figures.metric_lead(text[: c.start])) and numbered:
                yield (
                    codes.ORPHAN_NUMBER,
                    (f"setting {c.raw} follows {word!r}: a metric's value is measured, not set; cite the measurement"),
                    _about(c.raw, field),
                )
            continue
        resolved = citations.resolve(c, measurements)
        if isinstance(resolved, str):
            yield UNRESOLVED, f"citation {c.raw} {resolved}", {"citation": c.raw}
    for figure, why in _spilled(text):
        yield codes.ORPHAN_NUMBER, f"figure {figure!r} in {field} {why}", _about(figure, field)


_DIGIT = re.compile(r"\d")
_RESULT_WORDS = (
    r"(?:was|were|measured|reach\w*|peak(?:s|ed|ing)|observ\w*|achiev\w*|averag\w*|avg|mean|median|p\d+|consum\w*|"
    r"draw\w*|drew|hits?|took|show\w*|stay\w*|came|used|usage|footprint|occupancy|occupi\w*|resident|rss|sustain\w*|"
    r"deliver\w*|climb\w*|rose|grew|effective|attain\w*)"
)
_RESULT = re.compile(r"(?i)\b(" + _RESULT_WORDS + r")\b")
_RESULT_BEFORE = re.compile(r"(?i)\b(" + _RESULT_WORDS + r")\b(?:[\s,:=~≈>→()-]+[\w.'()-]+){0,2}[\s,:=~≈>→()-]*$")
"""A result's verb, statistic or measured quantity among the three words before a setting (``peak memory was``,
``average GPU power``, ``VRAM used per card``, ``power draw ->``): the value after it was measured."""
_LAST_WORDS = re.compile(r"(?:[\w.'-]+[^\w.'-]+){0,3}$")
"""The three words before a setting: where a word names its kind."""
_NEXT_WORDS = re.compile(r"[ \t]+([A-Za-z][\w-]*(?:[ \t]+[A-Za-z][\w-]*)?)")
"""The two words after a setting: those of them that are kind words, from the first on, name its kind too."""
_BRACKET_AFTER = re.compile(r"[ \t]*\(([^(){}]{1,30})\)")
"""Words in brackets right after a setting: when they are only words of kinds, they name its kind too (``{{ set:30 s }}
(timeout)``); a result's word there says the value was measured."""


def _named_kinds(words: set[str]) -> list[str]:
    return [k for k, spec in setting_kinds().items() if words & set(spec["words"])]


def _setting_kind_problem(unit: str, words: set[str]) -> str | None:
    """Why a setting's figure in ``unit`` is not a setting: a unit no kind of setting takes (a rate is measured), one
    its named kind does not take, or a time that does not say what it sets (a latency is measured; a timeout is set)
    -- the kind named by a word of ``vocab/settings.json`` in the setting or right before it."""
    if unit in citations.RATE_UNITS or not unit:
        return None  # reported above as a measured kind of figure, or no unit to check
    kinds = setting_kinds()
    named = _named_kinds(words)
    if any(unit in kinds[k]["units"] for k in named):
        return None
    if named:
        return f"names a setting of {' or '.join(named)}, which is not given in {unit}"
    default = next((k for k, spec in kinds.items() if unit in spec["units"]), None)
    if default is None:
        return f"holds a figure in {unit}, which no setting is given in: cite the measurement"
    if kinds[default]["default"]:
        return None
    return (
        f"holds a {default} in {unit} without saying what it sets ({kinds[default]['unnamed']}): name it "
        f"({', '.join(kinds[default]['words'][:4])} ...) or cite the measurement"
    )


def _spilled(text: str) -> Iterator[tuple[str, str]]:
    """Figures a setting, a quote or a citation shown without its unit makes together with the text around it: read
    with each setting and quote replaced by its text and each ``| nounit`` citation by a number, a figure that is not
    inside one setting or quote (``{{ set:93.55 }} tok/s``, ``{{ set:93 }}.{{ set:55 }} tok/s``) was typed, not set
    or quoted; a unit after a number shown without its unit is a unit typed for it, which must be its metric's."""
    if "{{" not in text:
        return
    probe, inside, bare, last = [], [], [], 0
    for form in citations.parse(text):
        if isinstance(form, citations.Setting | citations.Quote):
            shown = form.text
        elif isinstance(form, citations.Citation) and not form.unit:
            shown = "1"
        else:
            continue
        probe.append(text[last : form.start])
        start = sum(map(len, probe))
        probe.append(shown)
        if isinstance(form, citations.Citation):
            bare.append((start, start + len(shown), form))
        else:
            inside.append((start, start + len(shown)))
        last = form.end
    read = "".join([*probe, text[last:]])
    for fig in figures.find_figures(read) if inside or bare else ():
        touches = any(a < fig.end and fig.start < b for a, b in inside)
        if touches and not any(a <= fig.start and fig.end <= b for a, b in inside):
            yield fig.text, "is typed partly outside a setting or quote"
        for a, _, c in bare:
            own = "%" if "pct" in c.flags else citations.unit_of(c.metric)
            if fig.start == a and fig.unit and fig.unit != figures.canonical_unit(own):
                unit = read[a + 1 : fig.end].strip()
                yield unit, f"is typed after {c.raw}, a value in {own or 'no unit'}"


def _packet_prose(doc: Document, pointer: str, text: str, measurements: Any) -> Iterator[Finding]:
    """A packet's own prose speaks for the packet: a citation of a run of another scope there is written as an
    explicit comparison (``| compare``), which the site marks as one."""
    for form in citations.parse(text):
        if isinstance(form, citations.CitationError):
            continue
        for c in citations.cited(form):  # a derived figure stands on both its sides
            if "compare" not in c.flags:
                yield from _foreign(doc, pointer, c, measurements)


def _foreign(
    doc: Document, pointer: str, c: citations.Citation | citations.Statistic, measurements: Any
) -> Iterator[Finding]:
    """A citation in a packet's prose of a run of another scope, written as the packet's own."""
    m = measurements.get(c.measurement)
    differs = scope.mismatches(doc.data, m, claim_name="the packet") if isinstance(m, dict) else []
    if differs:
        yield SIDEWAYS.at(
            doc,
            pointer,
            f"the packet's prose cites {c.measurement!r} of another scope ({'; '.join(differs)}) as its own",
            fields={"citation": c.raw, "evidence": c.measurement},
            hint="Write the citation as a comparison ({{ m:ID.METRIC[I] | compare }}; in a derived figure, each side "
            "m:ID.METRIC[I]|compare), or cite a run of the packet's scope.",
        )


@functools.lru_cache(maxsize=1 << 14)
def _field_of(pointer: str) -> str:
    """The field a prose pointer names: its last token that is no list index (``/a/1``: ``a``)."""
    return next((t for t in reversed(split_pointer(pointer)) if not t.isdigit()), pointer)


def check_citations(registry: Registry) -> Iterator[Finding]:
    measurements = index(registry).measurement_data
    for doc in registry.records():
        kind = str(doc.kind)
        for pointer, text in doc.prose:
            if kind == "packet" and "{{" in text:
                yield from _packet_prose(doc, pointer, text, measurements)
            counts: Counter[Code] | None = None
            for code, message, fields in _field_problems(
                text, _field_of(pointer), measurements, in_cell(kind, pointer)
            ):
                counts = counts if counts is not None else Counter()
                counts[code] += 1
                if counts[code] <= MAX_PER_FIELD:
                    yield code.at(doc, pointer, message, fields=fields)
            for code, n in (counts or {}).items():
                if n > MAX_PER_FIELD:
                    yield code.at(doc, pointer, f"... and {n - MAX_PER_FIELD} more {code.code} findings in this field")


RULES = [
    Rule("citations", (UNRESOLVED, codes.ORPHAN_NUMBER, SIDEWAYS), check_citations, UNIT),
]
