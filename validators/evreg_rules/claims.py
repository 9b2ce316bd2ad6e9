"""Claim integrity: citations, orphan numbers, featured results, grades,
coverage matrices and curves. A number reaches a reader only through a
citation, and a promotion stands only on promotable evidence of its own scope."""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations, figures, markdown, scope
from evreg.claims.coverage import cell_key, expand, merge
from evreg.claims.siteconfig import site_extensions
from evreg.core import codes
from evreg.core.containment import PAGE_SUFFIXES, SITE_DIR, regular_files
from evreg.core.evidence import parse_ref
from evreg.core.findings import Code, Finding, Severity, join_pointer, split_pointer
from evreg.core.jsonio import MAX_RECORD_BYTES, canonical
from evreg.core.vocab import load as load_vocab
from evreg.records.models import claims_in, in_cell
from evreg.store import MEASUREMENT_KINDS, Document, Registry
from evreg_rules.index import Index, index
from evreg_rules.scope import curve_identity, has, packet_scope_mismatches, selector_value

MEASURED = ("lab-measured", "community-measured")
"""Cell states that claim a measurement which may back a promotion."""

# -- code documentation ---------------------------------------------------------

UNRESOLVED = Code(
    "citation-unresolved",
    "A citation to an unknown measurement, metric, sample or point",
    "A citation is how a number reaches text; one that resolves to nothing shows the reader a number "
    "with no receipt, or none at all.",
    "Cite an existing measurement id, a metric it has, and a sample index or point x it has.",
    "caveat: 'peak {{ m:run-1.decode_tok_s[5] }}' when run-1 has 2 samples",
)
UNBOUND = Code(
    "featured-unbound",
    "A featured result that does not bind exactly one measurement and one sample",
    "A headline must name one observation; without an exact binding a renderer falls back to picking "
    "a maximum, which is cherry-picking.",
    "Give exactly one of sample_index or point_x, selecting a value that exists; a family lists exactly one hero.",
    '{"measurement_id": "run-1", "metric": "decode_tok_s"}  (no sample_index or point_x)',
)
FEATURED_MISMATCH = Code(
    "featured-mismatch",
    "A featured value, unit, workload or evidence that differs from the cited sample",
    "A copied headline value must be exactly the stored sample, or the headline and its receipt disagree.",
    "Copy value, unit, workload and evidence exactly from the measurement (no rounding).",
    '{"value": 30.21, ...} when the sample is 30.2134',
)
SIDEWAYS = Code(
    "sideways-promotion",
    "A promotion backed by evidence of another scope",
    "A result of one revision, artifact, runtime, topology, workload or class says nothing about "
    "another; using it to feature, grade or fill a cell of a different scope is a sideways promotion.",
    "Cite evidence whose scope equals the claim's, or narrow the claim to the evidence's scope.",
    "a family hero for qwen3.8-27b citing a qwen3.6-27b run",
)
NON_PROMOTABLE = Code(
    "non-promotable-evidence",
    "Estimate, screened, quarantined, closed or diagnostic evidence used to promote",
    "Estimates are projections, screens are bounded boot checks, quarantined runs are known-invalid and "
    "diagnostics measure something other than the claim; none may back a headline or a measured curve.",
    "Feature and chart lab-measured or community-measured, non-diagnostic runs only; show others as what they are.",
    "a view series listing an estimate id",
)
GRADE = Code(
    "grade-unsupported",
    "A grade above what its attached evidence supports",
    "A grade is a claim about evidence maturity; the rubric (registry/evreg/vocab/rubric.json, shown on the "
    "site) says what each letter requires in checkable terms.",
    "Lower the grade, or attach the evidence the rubric asks for.",
    "EVID B on a packet whose only in-scope evidence is a lab-screened run",
)
STATE = Code(
    "state-mismatch",
    "A coverage cell or view whose state differs from its cited record's",
    "A cell cannot upgrade what it cites: a quarantined run shown as measured is a false claim.",
    "Copy the cited record's state into the cell; keep one state per view series.",
    '{"state": "lab-measured", "evidence_id": "run-q"} where run-q is quarantined',
)
INCOMPLETE = Code(
    "coverage-incomplete",
    "A matrix that does not list every cell of its axes",
    "Coverage is exhaustive and explicit: an absent cell reads as a gap to one reader and as zero to "
    "another; 'missing' is a state, not an absence.",
    "List every row x column cell (state 'missing' where nobody measured); in contracts, make the "
    "rules cover every cell with an unambiguous chain.",
    'rows [0, 1] x columns [1, 2] with cells {"0:1", "0:2", "1:1"}',
)
CURVE = Code(
    "curve-identity-mixed",
    "A chart series whose points differ in anything but the x axis",
    "A line joins like with like; mixing runtimes, workloads or configs in one curve draws a trend "
    "that no single setup shows.",
    "Split the series by identity, or mark the view `discrete` so points are not joined.",
    "a series joining a vLLM run and a llama.cpp run",
)


# -- citations and orphan numbers ---------------------------------------------------


MAX_PER_FIELD = 20
"""Findings reported per prose field and code; the rest are counted in one more finding, so a
hostile field of a million bad citations costs one pass, not a million findings."""


def _field_problems(text: str, field: str, measurements: Any, cell: bool = False) -> Iterator[tuple[Code, str]]:
    """(code, message) of every unresolved citation and orphan figure in one prose string."""
    yield from _form_problems(text, field, measurements)
    for fig in claims_in(field, text, cell):
        yield codes.ORPHAN_NUMBER, f"figure {fig.text!r} in {field} is not a citation"


def _form_problems(text: str, field: str, measurements: Any) -> Iterator[tuple[Code, str]]:
    """(code, message) of the citations, settings, quotes and derived figures of one prose string (a field, or a
    line of a hand-written page) that do not stand: unresolved, a setting holding a rate, a share or a metric's value,
    a figure typed partly outside a setting or quote, a unit typed after a citation shown without its own. Quotes
    are re-read by the evidence rules."""
    for c in citations.parse(text):
        if isinstance(c, citations.CitationError):
            yield UNRESOLVED, str(c)
            continue
        if isinstance(c, citations.Setting):
            for fig in figures.find_figures(c.text):
                if fig.unit in citations.RATE_UNITS or fig.metric_hints:
                    yield (
                        codes.ORPHAN_NUMBER,
                        (
                            f"setting {c.raw} holds {fig.text!r}, a measured kind of figure (a rate, share or metric): "
                            "cite the measurement instead"
                        ),
                    )
            if (word := figures.metric_lead(text[: c.start])) and figures.find_figures(c.text):
                yield (
                    codes.ORPHAN_NUMBER,
                    (f"setting {c.raw} follows {word!r}: a metric's value is measured, not set; cite the measurement"),
                )
            continue
        resolved = citations.resolve(c, measurements)
        if isinstance(resolved, str):
            yield UNRESOLVED, f"citation {c.raw} {resolved}"
    for figure, why in _spilled(text):
        yield codes.ORPHAN_NUMBER, f"figure {figure!r} in {field} {why}"


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


def _foreign(doc: Document, pointer: str, c: citations.Citation, measurements: Any) -> Iterator[Finding]:
    """A citation in a packet's prose of a run of another scope, written as the packet's own."""
    m = measurements.get(c.measurement)
    differs = scope.mismatches(doc.data, m, claim_name="the packet") if isinstance(m, dict) else []
    if differs:
        yield SIDEWAYS.at(
            doc,
            pointer,
            f"the packet's prose cites {c.measurement!r} of another scope ({'; '.join(differs)}) as its own",
            "Write the citation as a comparison ({{ m:ID.METRIC[I] | compare }}; in a derived figure, each side "
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
            for code, message in _field_problems(text, _field_of(pointer), measurements, in_cell(kind, pointer)):
                counts = counts if counts is not None else Counter()
                counts[code] += 1
                if counts[code] <= MAX_PER_FIELD:
                    yield code.at(doc, pointer, message)
            for code, n in (counts or {}).items():
                if n > MAX_PER_FIELD:
                    yield code.at(doc, pointer, f"... and {n - MAX_PER_FIELD} more {code.code} findings in this field")


PAGE_HTML = Code(
    "site-html-unsafe",
    "Script in a hand-written page",
    "Hand-written pages are Markdown and may hold HTML, but nothing that runs in a reader's browser: no script, "
    "frame, object, embed or form elements, no event-handler attributes, no javascript: or data: URLs.",
    "Describe the behaviour in text, or link to a page; the site ships no page-specific script.",
    '<a href="javascript:alert(1)">x</a>',
)
PAGE_STYLE = Code(
    "site-style-unsafe",
    "Style in a hand-written page",
    "A style element or attribute in a hand-written page can show text no check reads (CSS content and attr()) or "
    "hide text the checks do read (a figure's unit set in a zero-size font), so a reader could see a figure that "
    "validation never saw.",
    "Drop the style; the site's own stylesheet styles every page.",
    '52.3<span style="font-size:0">x</span> tok/s',
)
FORGED = Code(
    "citation-forged",
    "Citation markup written by hand",
    "Only the renderer emits citation markup: it resolves the measurement, formats the value and links it. A "
    "hand-written element with the citation classes (evreg-cite, evreg-orphan, evreg-unresolved) would show "
    "a typed number styled as a receipt, and the build's orphan check trusts that markup.",
    "Write the citation {{ m:ID.METRIC[INDEX] }}; the renderer makes the markup.",
    '<span class="evreg-cite">52.3 tok/s</span>',
)


def check_site_pages(registry: Registry) -> Iterator[Finding]:
    """Citations, orphan figures and script of the hand-written pages under site/: citations line by line in the
    Markdown, everything a reader is shown in the page as Python-Markdown renders it (what the build publishes), its
    front matter as MkDocs reads it, and the text the stylesheets under site/ show."""
    measurements = index(registry).measurement_data
    if registry.source.label != "working tree":
        return
    root = Path(registry.root)
    extensions = site_extensions(root)
    for rel in regular_files(root, SITE_DIR, PAGE_SUFFIXES):
        page = root / rel
        if page.stat().st_size > MAX_RECORD_BYTES:
            size = page.stat().st_size
            message = f"hand-written page of {size} bytes is over the {MAX_RECORD_BYTES} byte limit"
            yield codes.FILE_TOO_LARGE.at(rel, "", message, "split the page")
            continue
        text = page.read_text("utf-8", errors="replace")
        yield from _front_matter(rel, text)
        for n, line in markdown.prose(text):
            for code, message in _form_problems(line, "the page", measurements):
                yield _on_page(code, rel, n, 1, message)
        yield from _rendered_page(rel, text, extensions)
    yield from _site_styles(root)


def _front_matter(rel: str, text: str) -> Iterator[Finding]:
    """Figures in a page's YAML front matter as MkDocs reads it (its title is the page's heading and navigation
    entry): the values MkDocs shows, after YAML has decoded them (``"\\x35\\x32.3"`` is 52.3)."""
    from mkdocs.utils.meta import get_data

    meta = get_data(text)[1]
    for key, value in meta.items() if isinstance(meta, dict) else ():
        for figure in figures.find_figures(str(value)) if isinstance(value, str | int | float) else ():
            message = f"figure {figure.text!r} in the front matter's {key!r} of a hand-written page is not a citation"
            yield _on_page(codes.ORPHAN_NUMBER, rel, *_Where(text)(str(key)), message)


def _site_styles(root: Path) -> Iterator[Finding]:
    """Stylesheets under site/ (``extra_css``): what their ``content`` shows is read like a page's text (a string's
    figures are orphans), and text taken from elsewhere (``attr()``, ``counter()``) is refused."""
    for rel in regular_files(root, SITE_DIR, ".css"):
        lines = (root / rel).read_text("utf-8", errors="replace").split("\n")
        for n, line in enumerate(lines, 1):
            for m in _CSS_PULL.finditer(line):
                message = f"{m.group()!r} in a stylesheet shows text no check reads"
                yield _on_page(PAGE_STYLE, rel, n, m.start() + 1, message)
            for m in _CSS_STRING.finditer(line):
                for figure in figures.find_figures(_css_unescaped(m.group(2))):
                    message = f"figure {figure.text!r} in a stylesheet's string is shown on pages and is not a citation"
                    yield _on_page(codes.ORPHAN_NUMBER, rel, n, m.start() + 1, message)


_CSS_PULL = re.compile(r"\b(?:attr|counters?)\s*\(", re.I)
_CSS_STRING = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\])*+)\1""")
"""A CSS string: a backslash escapes the character after it, as CSS reads it (read also as a character of its own,
``'a"' + '\\' * 34`` took seconds: each backslash could be read two ways)."""


def _css_unescaped(text: str) -> str:
    """A CSS string as shown: ``\\35 2`` is 52."""
    return re.sub(
        r"\\([0-9a-fA-F]{1,6})\s?|\\(.)", lambda m: chr(int(m.group(1), 16)) if m.group(1) else m.group(2), text
    )


def _rendered_page(rel: str, text: str, extensions: list[Any]) -> Iterator[Finding]:
    """What the page shows once rendered (its citations left out, as the build's are): figures, table columns in a
    unit, citation markup and script (in the tags Python-Markdown writes, not in code it shows as text). At most
    ``MAX_PER_FIELD`` findings of a code are located in the page, the rest counted in one more (locating each is a
    search of the page's lines: a page of 100,000 figures not typed as shown took minutes)."""
    content = markdown.to_html(markdown.with_forms(text, _without_forms), extensions)
    counts: Counter[Code] = Counter()

    def at(code: Code, where: _Where, piece: str, message: str) -> Iterator[Finding]:
        counts[code] += 1
        if counts[code] <= MAX_PER_FIELD:
            yield _on_page(code, rel, *where(piece), message)

    where = _Where(text)
    for tag in markdown.html_tags(content):
        if forged := markdown.FORGED.search(tag):
            message = "hand-written citation markup: only the renderer makes it"
            yield from at(FORGED, where, forged.group().rsplit("=", 1)[-1].strip("\"' "), message)
        if m := markdown.SCRIPT.search(tag):
            message = f"{m.group().strip()!r} on a hand-written page could run script in a reader's browser"
            yield from at(PAGE_HTML, where, m.group().strip(), message)
        if m := markdown.STYLE.search(tag):
            message = f"{m.group().strip()!r} on a hand-written page can show or hide text no check reads"
            yield from at(PAGE_STYLE, where, m.group().strip(), message)
    where = _Where(text)
    for figure in [*markdown.html_figures(content), *markdown.attribute_figures(content)]:
        message = f"figure {figure!r} on a hand-written page is not a citation"
        yield from at(codes.ORPHAN_NUMBER, where, figure, message)
    where = _Where(text)
    for figure, column, unit in markdown.column_figures(content):
        message = f"figure {figure!r} under the column {column!r} (in {unit}) is not a citation"
        yield from at(codes.ORPHAN_NUMBER, where, figure, message)
    for code, n in counts.items():
        if n > MAX_PER_FIELD:
            yield _on_page(code, rel, 1, 1, f"... and {n - MAX_PER_FIELD} more {code.code} findings on this page")


def _without_forms(part: str) -> str:
    """A piece of prose with its citations, settings, quotes and derived figures left out (checked line by line)."""
    pieces, last = [], 0
    for form in citations.parse(part):
        if not isinstance(form, citations.CitationError):
            pieces.append(part[last : form.start])
            last = form.end
    return "".join(pieces) + part[last:]


class _Where:
    """Where in a page's Markdown each of a sequence of rendered pieces (in the order the page shows them) was typed:
    the next prose line at or after the previous piece that holds it, else the next that holds its first word (a
    figure split over lines or by markup), else the first such line anywhere, else line 1. Code lines are skipped:
    a rendered piece is never in code."""

    def __init__(self, text: str) -> None:
        self.lines = [(n, "" if code else line.lower()) for n, line, code in markdown.lines(text)]
        self.at = (0, 0)  # (index into lines, column) where the next search starts

    def __call__(self, shown: str) -> tuple[int, int]:
        words = shown.split()
        for needle in dict.fromkeys([shown.lower(), words[0].lower() if words else ""]):
            for start in (self.at, (0, 0)):
                found = self._find(needle, *start) if needle else None
                if found is not None:
                    i, column = found
                    self.at = (i, column + len(needle))
                    return self.lines[i][0], column + 1
        return 1, 1

    def _find(self, needle: str, first: int, column: int) -> tuple[int, int] | None:
        for i in range(first, len(self.lines)):
            at = self.lines[i][1].find(needle, column if i == first else 0)
            if at >= 0:
                return i, at
        return None


def _on_page(code: Code, file: str, line: int, column: int, message: str) -> Finding:
    """A finding of ``code`` at a line and column of a hand-written page, with the code's own hint."""
    return code.at(file, "", message, line=line, column=column)


# -- featured results ---------------------------------------------------------------


def _selected(doc: Document, base: str, binding: dict[str, Any], m: dict[str, Any]) -> tuple[Any, Finding | None]:
    has_index, has_x = binding.get("sample_index") is not None, binding.get("point_x") is not None
    if has_index == has_x:
        return None, UNBOUND.at(
            doc, base, "a featured result needs exactly one of sample_index and point_x", UNBOUND.hint
        )
    value = citations.lookup(m, binding.get("metric", ""), binding.get("sample_index"), binding.get("point_x"))
    if isinstance(value, str):
        ptr = f"{base}/sample_index" if has_index else f"{base}/point_x"
        return None, UNBOUND.at(doc, ptr, f"measurement {binding['measurement_id']!r} {value}", UNBOUND.hint)
    return value, None


def _copied_exactly(doc: Document, fm: dict[str, Any], value: Any, m: dict[str, Any]) -> Iterator[Finding]:
    """Mismatches between a packet's featured_metric and the sample and measurement it cites:
    value, unit, workload and evidence are copies and must be exact."""
    if fm["value"] != value:
        yield FEATURED_MISMATCH.at(
            doc,
            "/featured_metric/value",
            f"featured value {fm['value']!r} differs from the cited sample {value!r}",
            FEATURED_MISMATCH.hint,
        )
    unit = citations.unit_of(fm["metric"])
    if fm["unit"] != unit:
        yield FEATURED_MISMATCH.at(
            doc,
            "/featured_metric/unit",
            f"unit {fm['unit']!r} is not {fm['metric']}'s unit {unit!r}",
            FEATURED_MISMATCH.hint,
        )
    for key in ("workload", "evidence"):
        if fm[key] != m.get(key):
            yield FEATURED_MISMATCH.at(
                doc,
                f"/featured_metric/{key}",
                f"featured {key} differs from measurement {m['id']!r}'s {key}",
                FEATURED_MISMATCH.hint,
            )


def _packet_featured(doc: Document, ix: Index) -> Iterator[Finding]:
    """A packet's featured_metric: bound to one sample, copied exactly, of the packet's scope and promotable."""
    fm = doc.data.get("featured_metric")
    m_doc = ix.measurements.get(fm["measurement_id"]) if fm else None
    if not fm or m_doc is None:
        return
    m = m_doc.data
    value, problem = _selected(doc, "/featured_metric", fm, m)
    if problem:
        yield problem
        return
    yield from _copied_exactly(doc, fm, value, m)
    for why in packet_scope_mismatches(doc.data, m):
        yield SIDEWAYS.at(
            doc,
            "/featured_metric/measurement_id",
            f"featured measurement {m['id']!r}: {why}",
            SIDEWAYS.hint,
        )
    reason = ix.why_not_promotable(m, doc.place.family)
    if reason:
        yield NON_PROMOTABLE.at(
            doc,
            "/featured_metric/measurement_id",
            f"featured measurement {m['id']!r} cannot be a headline: {reason}",
            NON_PROMOTABLE.hint,
        )


def _family_result(
    doc: Document, base: str, fr: dict[str, Any], m_doc: Document, primary: Document | None, ix: Index
) -> Iterator[Finding]:
    """One of a family's featured_results: bound to one sample of a measurement of this family, of
    the revision the headline speaks for (its own, else the primary packet's), and promotable. The hero
    speaks for a packet: the one whose folder holds its measurement (``check_placement`` holds it to that
    packet's whole scope), else the primary packet, whose whole scope it must then have."""
    _, problem = _selected(doc, base, fr, m_doc.data)
    if problem:
        yield problem
    claimed = fr.get("revision") or (primary.data["revision"] if primary else None)
    if claimed and m_doc.data["revision"] != claimed:
        source = "its `revision`" if fr.get("revision") else f"primary packet {primary.id!r}"  # type: ignore[union-attr]
        yield SIDEWAYS.at(
            doc,
            f"{base}/measurement_id",
            f"featured result cites {m_doc.id!r} of revision {m_doc.data['revision']!r}, "
            f"but the family's headline speaks for revision {claimed!r} ({source})",
            SIDEWAYS.hint,
        )
    if fr.get("role") == "hero" and not m_doc.place.packet and primary is not None:
        for why in scope.mismatches(primary.data, m_doc.data, claim_name=f"primary packet {primary.id!r}"):
            yield SIDEWAYS.at(
                doc,
                f"{base}/measurement_id",
                f"the family's hero {m_doc.id!r} is not of the scope the headline speaks for: {why}",
                "A hero speaks for the primary packet, or for the packet whose folder holds its measurement; "
                "feature a run of that scope.",
            )
    if m_doc.place.family != doc.id:
        yield SIDEWAYS.at(
            doc,
            f"{base}/measurement_id",
            f"featured result cites {m_doc.id!r} of family {m_doc.place.family!r}",
            SIDEWAYS.hint,
        )
    reason = ix.why_not_promotable(m_doc.data, m_doc.place.family)
    if reason:
        yield NON_PROMOTABLE.at(
            doc,
            f"{base}/measurement_id",
            f"featured measurement {m_doc.id!r} cannot be featured: {reason}",
            NON_PROMOTABLE.hint,
        )


def _family_featured(doc: Document, ix: Index) -> Iterator[Finding]:
    """A family's featured_results: exactly one hero, and each result as ``_family_result`` checks it."""
    results = doc.data.get("featured_results") or []
    heroes = [i for i, r in enumerate(results) if r["role"] == "hero"]
    if results and len(heroes) != 1:
        yield UNBOUND.at(
            doc,
            "/featured_results",
            f"featured_results has {len(heroes)} heroes; exactly one is required",
            UNBOUND.hint,
        )
    primary = ix.packets.get(doc.data.get("primary_packet_id") or "")
    for i, fr in enumerate(results):
        m_doc = ix.measurements.get(fr["measurement_id"])
        if m_doc is None:
            continue
        yield from _family_result(doc, f"/featured_results/{i}", fr, m_doc, primary, ix)


def _value(record: dict[str, Any], key: str) -> Any:
    """A scope key as a record states it (``None``: unstated); topology as cards, TP or topologies."""
    return scope.topology(record) if key == "topology" else record.get(key)


def check_placement(registry: Registry) -> Iterator[Finding]:
    """A measurement in a packet's folder is shown as the packet's: it must be of the packet's scope (every
    scope key, ``evreg.claims.scope``). A control or comparison run of another scope lives at family level."""
    ix = index(registry)
    for doc in registry.records(*MEASUREMENT_KINDS):
        if not doc.place.packet or not doc.valid:
            continue
        packet = ix.packets.get(doc.place.packet)
        if packet is None or packet.place.family != doc.place.family or not packet.valid:
            continue
        # a key stated on one side only differs: a run stripped of its quantization or hardware is not the packet's
        for key in scope.differing(packet.data, doc.data):
            if _value(doc.data, key) is None:
                theirs = _value(packet.data, key)
                shown = f"{theirs} cards" if key == "topology" and isinstance(theirs, int) else repr(theirs)
                why = f"it states no {key} (the packet's: {shown})"
            else:
                why = scope.mismatches(packet.data, doc.data, (key,), claim_name="the packet")[0]
            yield SIDEWAYS.at(
                doc,
                scope.pointer(doc.data, key),
                f"measurement {doc.id!r} is filed in packet {packet.id!r}'s folder but {why}",
                "State the run's own identity (importers: `--hardware`, `--runtime`, `--cards`), and move it to the "
                "family's measurements/ folder if it is a comparison or control run, or into the folder of the packet "
                "whose scope it has.",
            )


def check_featured(registry: Registry) -> Iterator[Finding]:
    ix = index(registry)
    for doc in registry.records("packet"):
        yield from _packet_featured(doc, ix)
    for doc in registry.records("family"):
        yield from _family_featured(doc, ix)


# -- grades ---------------------------------------------------------------------------

RANK = {"D": 1, "C": 2, "B": 3, "A": 4}


def attached_evidence(registry: Registry, packet: Document, grade: dict[str, Any]) -> list[Document]:
    """Measurements a packet's grade rests on (see the rubric's `attached_evidence`)."""
    ix = index(registry)
    listed = set(grade.get("evidence") or [])
    fm = packet.data.get("featured_metric") or {}
    family = ix.measurements_of_family(packet.place.family)
    found = ix.attachable(packet.place.family)  # the family's measurements by evidence, packet and id
    hits = {n for ev in listed for n in found.by_evidence.get(ev, ())}
    hits.update(found.of(found.by_packet, packet.id), found.of(found.by_id, fm.get("measurement_id")))
    hits.update(n for n in found.unhashable_evidence if family[n].data.get("evidence") in listed)
    return [family[n] for n in sorted(hits)]


def _pinned(registry: Registry, packet: Document) -> bool:
    fam = index(registry).family_of(packet)
    art = fam.artifacts.get(packet.data.get("artifact_id") or "")
    if art:
        return bool(art[0].get("revision") or art[0].get("file_sha256"))
    rev = fam.revisions.get(packet.data["revision"], {})
    return bool(rev.get("revision"))


def _evidence_identity(m: dict[str, Any]) -> str:
    ev = m.get("evidence")
    digest = (m.get("evidence_sha256") or {}).get(ev) if isinstance(ev, str) else None
    return f"sha256:{digest}" if digest else f"ref:{ev}"


_NO_GATE = re.compile(r"\b(?:skipped|not (?:run|tested|checked)|untested|n/?a|none|unknown)\b|\bfail", re.I)
_PASSED = re.compile(r"\bpass(?:ed|es)?\b", re.I)


def states_a_gate(text: Any) -> bool:
    """Whether a quality statement says a gate was passed: not empty, and not saying it was skipped or failed
    (a failure beside a pass -- 'retrieval passed but q1 equality failed' -- is no passed gate either)."""
    if not isinstance(text, str) or not text.strip():
        return False
    return not _NO_GATE.search(text) or (bool(_PASSED.search(text)) and not re.search(r"\bfail", text, re.I))


def rubric_checks(registry: Registry, packet: Document, attached: list[Document]) -> dict[str, bool]:
    ix = index(registry)
    ok = [m.data for m in attached if ix.why_not_promotable(m.data, packet.place.family) is None]
    # Independent repeats differ in what they are, not in where they are filed: the evidence's content (its
    # sha256 where the record gives one) and the numbers observed.
    evidence_files = {_evidence_identity(m) for m in ok}
    observations = {canonical([m.get("metrics"), m.get("points")]) for m in ok}

    def hashed(m: dict[str, Any]) -> bool:
        ev = m.get("evidence")
        return isinstance(ev, str) and parse_ref(ev).kind == "local" and ev in (m.get("evidence_sha256") or {})

    return {
        "promotable-observation": bool(ok),
        "runtime-identity": all(m.get("runtime") for m in ok),
        "pinned-artifact": _pinned(registry, packet),
        "repeat-samples": len(ok) >= 2 or any(len(v) >= 2 for m in ok for v in (m.get("metrics") or {}).values()),
        "quality-gate": any(states_a_gate(m.get(k)) for m in ok for k in ("quality", "quality_scope")),
        "hashed-local-evidence": bool(attached) and all(hashed(m.data) for m in attached),
        "reproduction-record": any("reproduction" in str(m.get("measurement_class") or "") for m in ok),
        "independent-repeats": len(evidence_files) >= 2 and len(observations) >= 2,
    }


def check_grades(registry: Registry) -> Iterator[Finding]:
    rubric = load_vocab("rubric")
    for doc in registry.records("packet"):
        grade = (doc.data.get("grades") or {}).get("evidence")
        if not grade:
            continue
        in_scope: list[Document] = []
        outside: list[Document] = []
        for m in attached_evidence(registry, doc, grade):
            (
                outside
                if packet_scope_mismatches(doc.data, m.data) and m.data.get("evidence") in grade["evidence"]
                else in_scope
            ).append(m)
        for m in outside:
            why = "; ".join(packet_scope_mismatches(doc.data, m.data))
            yield SIDEWAYS.at(
                doc,
                "/grades/evidence/evidence",
                f"grade evidence {m.data['evidence']!r} is measurement {m.id!r} of another scope: {why}",
                SIDEWAYS.hint,
                Severity.WARNING,
            )
        in_scope = [m for m in in_scope if not packet_scope_mismatches(doc.data, m.data)]
        checks = rubric_checks(registry, doc, in_scope)
        letter = grade["grade"]
        failed = [c for c in rubric["grades"][letter]["requires"] if not checks[c]]
        if failed:
            supported = max(
                (g for g, spec in rubric["grades"].items() if all(checks[c] for c in spec["requires"])),
                key=lambda g: RANK[g],
                default=None,
            )
            yield GRADE.at(
                doc,
                "/grades/evidence/grade",
                f"EVID {letter} requires {', '.join(failed)}, which the {len(in_scope)} attached "
                f"in-scope measurements do not show; they support "
                f"{'EVID ' + supported if supported else 'no grade'}",
                GRADE.hint,
            )


# -- coverage ---------------------------------------------------------------------------

DEFAULT_AXES = ({"key": "mtp"}, {"key": "tp"})


def _cell_against(
    doc: Document, pointer: str, cell: dict[str, Any], selectors: dict[str, Any], registry: Registry
) -> Iterator[Finding]:
    ix = index(registry)
    state = cell.get("state")
    if cell.get("estimate_id") is not None:
        if state != "estimated":
            yield STATE.at(
                doc,
                f"{pointer}/state",
                f"cell cites estimate {cell['estimate_id']!r} but says {state!r}",
                STATE.hint,
            )
        return
    if state == "estimated":
        yield STATE.at(doc, f"{pointer}/state", "an estimated cell must cite an estimate_id", STATE.hint)
    evidence_id = cell.get("evidence_id")
    m_doc = ix.measurements.get(evidence_id or "")
    if m_doc is None:
        if state in ("lab-measured", "community-measured"):
            yield STATE.at(
                doc,
                f"{pointer}/state",
                f"a {state} cell must cite the measurement (evidence_id)",
                STATE.hint,
            )
        return
    m = m_doc.data
    if m["state"] != state:
        yield STATE.at(
            doc,
            f"{pointer}/state",
            f"cell says {state!r} but cites {evidence_id!r}, which is {m['state']!r}",
            STATE.hint,
        )
    why = index(registry).why_not_promotable(m, m_doc.place.family) if state in MEASURED else None
    if why:
        yield NON_PROMOTABLE.at(doc, f"{pointer}/evidence_id", f"a {state} cell cites {evidence_id!r}: {why}")
    point_x = cell.get("point_x")
    if point_x is not None and not any(p.get("x") == point_x for p in m.get("points") or []):
        yield UNRESOLVED.at(
            doc,
            f"{pointer}/point_x",
            f"measurement {evidence_id!r} has no point at x = {cell_key(point_x)}",
            UNRESOLVED.hint,
        )
    for key, want in selectors.items():
        got = point_x if point_x is not None and key == m.get("axis") else selector_value(m, key)
        if not has(got) or got != want or isinstance(got, bool) != isinstance(want, bool):
            shown = repr(got) if has(got) else "nothing"
            yield SIDEWAYS.at(
                doc,
                f"{pointer}/evidence_id",
                f"cell selects {key} = {want!r}, but {evidence_id!r} has {shown}",
                SIDEWAYS.hint,
            )


def check_coverage(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("coverage-view"):
        data = doc.data
        axes = (data.get("row_axis") or DEFAULT_AXES[0], data.get("column_axis") or DEFAULT_AXES[1])
        expected = {f"{cell_key(r)}:{cell_key(c)}": (r, c) for r in data["rows"] for c in data["columns"]}
        for key in sorted(set(expected) - set(data["cells"])):
            yield INCOMPLETE.at(doc, "/cells", f"cell {key!r} of rows x columns is not listed", INCOMPLETE.hint)
        for key in sorted(set(data["cells"]) - set(expected)):
            yield INCOMPLETE.at(
                doc,
                join_pointer("cells", key),
                f"cell {key!r} is not a row x column of this matrix",
                INCOMPLETE.hint,
            )
        for key, (r, c) in expected.items():
            cell = data["cells"].get(key)
            if cell is None:
                continue
            selectors = {
                **(data.get("fixed_selectors") or {}),
                axes[0]["key"]: r,
                axes[1]["key"]: c,
                **(cell.get("selectors") or {}),
            }
            yield from _cell_against(doc, join_pointer("cells", key), cell, selectors, registry)
    for doc in registry.records("coverage-contract"):
        yield from _contract(doc, registry)


MAX_CONTRACT_CELLS = 50_000


def _contract(doc: Document, registry: Registry) -> Iterator[Finding]:
    data = doc.data
    axes = data["axes"]
    keys = [a["key"] for a in axes]
    size = 1
    for a in axes:
        size *= len(a["values"])
    if size > MAX_CONTRACT_CELLS:
        yield INCOMPLETE.at(
            doc,
            "/axes",
            f"contract expands to {size:,} cells; the limit is {MAX_CONTRACT_CELLS:,}",
            "split the contract",
        )
        return
    rules = data["rules"]
    for i, rule in enumerate(rules):
        if sorted(rule["match"]) != sorted(keys):
            yield INCOMPLETE.at(
                doc,
                f"/rules/{i}/match",
                f"rule {rule['id']!r} must name every axis exactly once ({', '.join(keys)})",
                INCOMPLETE.hint,
            )
            return
    seen: set[tuple[str, str]] = set()
    for cell_sel, matching in expand(data):
        label = ", ".join(f"{k}={cell_key(v)}" for k, v in cell_sel.items())
        if not matching:
            if ("none", "") not in seen:
                seen.add(("none", ""))
                yield INCOMPLETE.at(doc, "/rules", f"no rule covers cell {label}", INCOMPLETE.hint)
            continue
        exact = [frozenset(k for k, v in r["match"].items() if v != "*") for _, r in matching]
        if any(not (a < b) for a, b in itertools.pairwise(exact)):
            ptr = f"/rules/{matching[-1][0]}"
            if ("chain", ptr) not in seen:
                seen.add(("chain", ptr))
                yield INCOMPLETE.at(
                    doc,
                    ptr,
                    f"rules {[r['id'] for _, r in matching]} match cell {label} ambiguously or out of order",
                    INCOMPLETE.hint,
                )
            continue
        merged, source = merge(matching)
        if "state" not in merged:
            yield INCOMPLETE.at(doc, f"/rules/{matching[-1][0]}", f"cell {label} resolves no state", INCOMPLETE.hint)
            continue
        ptr = f"/rules/{source.get('evidence_id', source['state'])}"
        for f in _cell_against(doc, ptr, merged, {**(data.get("fixed_selectors") or {}), **cell_sel}, registry):
            if (f.code + f.message, f.pointer) not in seen:
                seen.add((f.code + f.message, f.pointer))
                yield f


# -- views ---------------------------------------------------------------------------------


def check_views(registry: Registry) -> Iterator[Finding]:
    ix = index(registry)
    for doc in registry.records("view"):
        for si, series in enumerate(doc.data["series"]):
            x_key = (series.get("x_from") or "config.tp").split(".")[-1]
            members = []
            for mi, mid in enumerate(series["measurement_ids"]):
                ptr = f"/series/{si}/measurement_ids/{mi}"
                if mid in ix.estimates:
                    yield NON_PROMOTABLE.at(
                        doc,
                        ptr,
                        f"{mid!r} is an estimate; estimates are never charted",
                        NON_PROMOTABLE.hint,
                    )
                    continue
                m_doc = ix.measurements.get(mid)
                if m_doc is None:
                    continue
                if m_doc.data["state"] in ("quarantined",):
                    yield NON_PROMOTABLE.at(
                        doc,
                        ptr,
                        f"{mid!r} is quarantined and cannot be charted",
                        NON_PROMOTABLE.hint,
                    )
                members.append((ptr, m_doc))
            states = {m.data["state"] for _, m in members}
            if len(states) > 1:
                yield STATE.at(
                    doc,
                    f"/series/{si}",
                    f"series mixes states {sorted(states)}; one series shows one state",
                    STATE.hint,
                )
            if doc.data.get("discrete") or len(members) < 2:
                continue
            ix = index(registry)
            for ptr, m_doc in members:
                why = ix.why_not_promotable(m_doc.data, m_doc.place.family)
                if why:
                    yield NON_PROMOTABLE.at(doc, ptr, f"a joined curve shows {m_doc.id!r}: {why}")
            first = curve_identity(members[0][1].data, x_key)
            for ptr, m_doc in members[1:]:
                ident = curve_identity(m_doc.data, x_key)
                if ident != first:
                    diff = sorted(k for k in set(first) | set(ident) if first.get(k) != ident.get(k))
                    yield CURVE.at(
                        doc,
                        ptr,
                        f"{m_doc.id!r} differs from {members[0][1].id!r} in {', '.join(diff)}; "
                        "a joined curve may vary only along its x axis",
                        CURVE.hint,
                    )


RULES = [
    Rule("citations", (UNRESOLVED, codes.ORPHAN_NUMBER, SIDEWAYS), check_citations, UNIT),
    Rule("site-citations", (PAGE_HTML, PAGE_STYLE, FORGED), check_site_pages),
    Rule("featured", (UNBOUND, FEATURED_MISMATCH, SIDEWAYS, NON_PROMOTABLE), check_featured, UNIT),
    Rule("placement", (SIDEWAYS,), check_placement, UNIT),
    Rule("grades", (GRADE,), check_grades, UNIT),
    Rule("coverage", (STATE, INCOMPLETE, NON_PROMOTABLE), check_coverage, UNIT),
    Rule("views", (CURVE, NON_PROMOTABLE), check_views, UNIT),
]
