"""The citation path: every measured number and every piece of record text as readers see it.

``Pages`` is the catalog (``evreg.site.data.Catalog``) with the page being rendered (where it is published, the trust
line stated once for a grid). Every number that states a measurement goes through ``Pages.cite`` (a sample in its
own table through ``Pages.sample``, a chart's point through ``Pages.dot``); record prose goes through
``Pages.prose`` (escaped text plus resolved citations).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from html import escape
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson

from evreg.catalog.tables import FindingRow
from evreg.claims import citations, ranking
from evreg.core import jsonio
from evreg.core.vocab import states as state_vocab
from evreg.records.models import NAME_KEYS, claims_in
from evreg.site import charts
from evreg.site.data import Catalog
from evreg.site.html import (
    Cell,
    Page,
    Scan,
    attr,
    defect_anchor,
    esc,
    kept_scan,
    m_anchor,
    sample_anchor,
    scan_piece,
)
from evreg.site.trace import Token

T = TypeVar("T")

TRUST_LABELS = ("", "", "hardware ", "runtime ")
"""How a tooltip names a part of a trust line when it gives only some of them."""


class Pages(Catalog):
    """The catalog as the pages read it, and the page being rendered: the citation path of its numbers and text."""

    def __init__(self, db: Path) -> None:
        super().__init__(db)
        self.base = ""
        self.here = ""  # the URL path of the page being rendered (relative to the site root)
        self.said: tuple[str, str, str, str] | None = None  # the trust line stated once for the grid being rendered
        # memos of values many pages show (``Reads.memo``: a page taking one reads what computing it read)
        self._titles: dict[Any, tuple[str, frozenset[Token]]] = {}  # (measurement, stated line) -> its title
        self._trust_spans: dict[Any, tuple[str, frozenset[Token]]] = {}  # (measurement, base) -> its trust_span
        self._memos: dict[str, dict[Any, Any]] = {}  # ``memo``'s, by name
        # where a build keeps pieces of pages by what they read (``kept``; ``evreg.site.reuse.Spill``)
        self.keeper: Callable[[str, Callable[[], bytes], Callable[[bytes], Any]], Any] | None = None

    def memo(self, name: str, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, worked out once per build under ``name`` and ``key`` (a result's setup, a metric's rows): a
        page taking the value reads what computing it read (``Reads.memo``)."""
        return self.reads.memo(self._memos.setdefault(name, {}), key, compute)

    def kept(self, name: str, make: Callable[[], bytes], read: Callable[[bytes], T | None]) -> T:
        """A piece of the page being made, ``read(make())``: taken as an earlier build made it while everything it
        read is unchanged and ``read`` finds it whole (not None), when the build keeps pieces (``keeper``); ``name``
        is unique to the piece's page and inputs."""
        if self.keeper is not None:
            return cast(T, self.keeper(name, make, read))
        value = read(make())
        assert value is not None, f"a piece made for {name} is not one read can take"
        return value

    def piece(
        self, inputs: tuple[Any, ...], make: Callable[[Page], None], context: tuple[str, str]
    ) -> tuple[str, Scan, str]:
        """A piece of the page being made (``kept``), as ``Page.piece`` takes it: the HTML ``make`` writes into a
        page of its own (no heading), what its scans find in ``context`` (``scan_piece``) and its first paragraph's
        text. Kept under the page's URL and ``inputs``: what the page hands ``make`` beside what it reads of the
        catalog, led by a name for the kind of piece."""
        key = hashlib.sha256(repr((self.base, self.here, *inputs)).encode()).hexdigest()

        def made() -> bytes:
            own = Page("")
            make(own)
            html = "\n".join(own.parts)
            return orjson.dumps({"html": html, "lead": own.lead, **scan_piece(html, context)._asdict()})

        return self.kept(f"{self.here}#{key}", made, _html_piece)

    # -- the citation path ----------------------------------------------------------------

    def m_url(self, mid: str, anchor: str = "") -> str:
        """The URL of a measurement's section (or, with ``anchor``, of one of its samples' rows) on its page:
        ``packets/PACKET/#m-ID``, or ``families/FAMILY/measurements/#m-ID`` for one filed in no packet."""
        home = self.home.get(mid, "measurements/")
        frag = m_anchor(mid, anchor)
        return f"#{frag}" if home == self.here else f"{self.base}{home}#{frag}"

    def trust(self, mid: str) -> str:
        """What a reader needs beside a measured number (plain text, a citation's tooltip): the measurement's
        state, its packet's grades, hardware and runtime."""
        return " · ".join(self.trust_parts(mid))

    def trust_line(self, mid: str) -> str:
        """The same as HTML, for the line under a measurement's heading (hardware and runtime are names)."""
        state, grades, hardware, runtime = self.trust_parts(mid)
        return f"{esc(state)} · {esc(grades)} · {self.text(hardware, 'hardware')} · {self.text(runtime, 'runtime')}"

    def trust_span(self, mid: str, more: Sequence[FindingRow] = ()) -> str:
        """A shown value's trust inside the value's own cell (a line under the number, ``evreg-trust``): the
        measurement's state, its packet's grades with each accepted defect of the measurement or its packet (and
        ``more``, such as a family's defect in the headline naming it) marked beside them and linked to it on the page
        of known data defects, and whether its evidence was checked. No number is in it (a comparison's data file
        stores each value cell as a template of its numbers)."""
        if more:
            return self._trust_span(mid, more)
        return self.reads.memo(self._trust_spans, (mid, self.base), lambda: self._trust_span(mid, ()))

    def _trust_span(self, mid: str, more: Sequence[FindingRow]) -> str:
        m = self.measurements.get(mid, {})
        pk = self.records.get("packet", {}).get(self.packet_of(mid) or "", {})
        grades = [self.grade_badge(a, g, scope=False) for a, g in (pk.get("grades") or {}).items()]
        marks: dict[str, FindingRow] = {}
        for f in [*self.defects_of(mid), *more]:
            marks.setdefault(f.code, f)
        defects = "".join(" " + self.defect_mark(f) for f in marks.values())
        checked = self.evidence_checked(mid) if m else "no evidence"
        evidence = checked if checked == "no evidence" else f"evidence {checked}"
        return (
            f'<span class="evreg-trust">{self.state(m["state"], meaning=False) if m else "no measurement"} '
            f"{' '.join(g for g in grades if g) or 'ungraded'}{defects} · "
            f'<span class="evreg-checked evreg-checked-{checked.replace(" ", "-")}">{evidence}</span></span>'
        )

    def defect_mark(self, f: FindingRow) -> str:
        """An accepted defect's mark beside a grade: its code, linked to its row on the page of known data defects."""
        anchor = defect_anchor(f.code, f.file, f.pointer, f.message)
        return (
            f'<a class="evreg-defect" href="{self.base}defects/#{anchor}" title="An accepted defect of this data, kept '
            f'in the reviewed baseline: see it on the page of known data defects">&#9888; {esc(f.code)}</a>'
        )

    @contextlib.contextmanager
    def stated(self, page: Page, mids: list[str], what: str) -> Iterator[None]:
        """Render a grid or chart citing ``mids``: the trust line (state, grades, hardware, runtime) most of its
        numbers share is stated once above it, and a number's tooltip gives only the parts of its own line that
        differ (``trust_tip``; a tooltip per cell was a sixth of the 100k site's coverage pages)."""
        lines = Counter(self.trust_parts(mid) for mid in mids if mid in self.measurements)
        if lines:
            state, grades, hardware, runtime = said = lines.most_common(1)[0][0]
            shared = (
                f"{esc(state)} · {esc(grades)} · {self.text(hardware, 'hardware')} · {self.text(runtime, 'runtime')}"
            )
            page.p(f"Every {what} links to its measurement; unless its tooltip says otherwise, it is {shared}.")
            self.said = said
        try:
            yield
        finally:
            self.said = None

    def trust_tip(self, mid: str) -> str:
        """A number's trust line for its tooltip: in full, or under a line stated once (``stated``) only the parts of
        its own that differ, hardware and runtime named."""
        if self.said is None:
            return self.trust(mid)
        own = self.trust_parts(mid)
        return " · ".join(  # "hardware not recorded" names itself
            part if part.startswith(label) else label + part
            for label, part, said in zip(TRUST_LABELS, own, self.said, strict=True)
            if part != said
        )

    def cite(
        self,
        mid: str,
        metric: str,
        index: int | None = None,
        x: float | None = None,
        decimals: int | None = None,
        unit: bool = True,
        flags: frozenset[str] = frozenset(),
        tooltip: bool = True,
    ) -> str:
        """The one way a measured number reaches a page: resolved, formatted and linked. ``tooltip=False`` where
        the number's state, grade, hardware and runtime are visible beside it (a comparison table's row)."""
        c = citations.citation(mid, metric, index, x, decimals, unit, flags)
        resolved = self._resolve(c)
        if isinstance(resolved, str):
            raw = citations.citation_text(mid, metric, index, x, decimals, unit, flags)
            return f'<mark class="evreg-unresolved" title="{attr(resolved)}">{attr(raw)}</mark>'
        href = self.m_url(mid, sample_anchor(metric, citations.selector(index, x)))
        # Beside every number: its state, grade, hardware and runtime (a tooltip on hover, shown on keyboard
        # focus by the stylesheet); a number in its own measurement's section stands under that line already, and
        # in a grid the tooltip gives only what differs from the parts the grid states once (``Pages.stated``).
        title = self._title(mid) if tooltip and not href.startswith("#") else ""
        return f'<a class="evreg-cite" href="{href}"{title}>{escape(resolved.text)}</a>'

    def _title(self, mid: str) -> str:
        """The title attribute of a citation of ``mid`` (its trust line; under a stated line, what differs), made
        once per measurement and stated line: a comparison page cites 500,000 numbers at 100,000 measurements."""
        said = self.said

        def title() -> str:
            tip = self.trust_tip(mid)
            return f' title="{attr(tip if said else mid + " · " + tip)}"' if tip else ""

        return self.reads.memo(self._titles, (mid, said), title)

    def _resolve(self, c: citations.Form | citations.CitationError) -> Any:
        """One citation resolved against the measurements (``citations.resolve``), or why it is not."""
        return str(c) if isinstance(c, citations.CitationError) else citations.resolve(c, self.measurements)

    def sample(self, mid: str, metric: str, index: int | None = None, x: float | None = None) -> Cell:
        """A stored sample or point in its own measurement's table: the number, resolved and formatted as a citation
        of it is, in a cell carrying the anchor every citation of it links to (a link there would point at itself)."""
        c = citations.citation(mid, metric, index, x)
        resolved = self._resolve(c)
        if isinstance(resolved, str):
            raw = citations.citation_text(mid, metric, index, x)
            return Cell("", f'<mark class="evreg-unresolved" title="{attr(resolved)}">{attr(raw)}</mark>')
        anchor = m_anchor(mid, sample_anchor(metric, citations.selector(index, x)))
        return Cell(f' class="evreg-sample" id="{anchor}"', escape(resolved.text))

    def dot(self, mid: str, metric: str, index: int | None, x: float | None, xv: float, v: float) -> charts.Dot:
        """A chart's point of a sample or series point: linked to its row, its value and trust line in its tooltip."""
        href = self.m_url(mid, sample_anchor(metric, citations.selector(index, x)))
        if href.startswith("#"):  # in the measurement's own chart: each value and its anchor are in the table below it
            return charts.Dot(xv, v, "", "")
        text = citations.format_value(v, metric)
        tip = self.trust_tip(mid)
        return charts.Dot(xv, v, href, f"{mid}: {text}" + (f" · {tip}" if tip else ""))

    def prose(self, text: Any, key: str = "", cell: bool = False) -> str:
        """Record prose (under ``key``): escaped text, citations resolved and linked, typed figures marked as orphans
        (``evreg.records.models.claims_in``: in a name, a memory size is part of the name; in a coverage ``cell``, a
        bare decimal is a value of the arm), as validation finds them."""
        if not isinstance(text, str):
            return ""
        out, last = [], 0
        for c in citations.parse(text):
            if isinstance(c, citations.CitationError):
                continue
            out.append(self.literal(text[last : c.start], key, cell))
            out.append(self.form(c))
            last = c.end
        out.append(self.literal(text[last:], key, cell))
        return "".join(out)

    def form(self, c: citations.Form) -> str:
        """One figure form as readers see it: a linked citation, or a setting, quote or derived figure marked as
        what it is (not a measurement, quoted from evidence, computed from two stored values)."""
        if isinstance(c, citations.Citation):
            shown = self.cite(c.measurement, c.metric, c.index, c.x, c.decimals, c.unit, c.flags)
            if "compare" in c.flags:
                shown += ' <small class="evreg-compare">(a comparison: another scope\'s run)</small>'
            return shown
        if isinstance(c, citations.Setting):
            title = "A specification or setting, not a measurement"
            return f'<span class="evreg-setting" title="{title}">{esc(c.text)}</span>'
        if isinstance(c, citations.Quote):
            title = f"Quoted from this record's evidence file at {c.locator} (re-read by validation)"
            return f'<span class="evreg-quote" title="{attr(title)}">{esc(c.text)}</span>'
        resolved = citations.resolve(c, self.measurements)
        if isinstance(resolved, str):
            return f'<mark class="evreg-unresolved" title="{attr(resolved)}">{esc(c.raw)}</mark>'
        if isinstance(c, citations.Statistic):
            n = len((self.measurements[c.measurement].get("metrics") or {}).get(c.metric) or [])
            title = f"Derived: the {c.op} of its {n} samples"  # the link names the run
            title += f"; {tip}" if self.said is not None and (tip := self.trust_tip(c.measurement)) else ""
            href = self.m_url(c.measurement, sample_anchor(c.metric, citations.selector(0, None)))
            return f'<a class="evreg-derived" href="{href}" title="{attr(title)}">{esc(resolved.text)}</a>'
        verb = "change from" if c.op == "change" else "ratio to"
        title = (
            f"Derived: {c.a.measurement}.{c.a.metric}{c.a.selector} {verb} {c.b.measurement}.{c.b.metric}{c.b.selector}"
        )
        if self.said is not None:  # under a stated line (``stated``): what of its two measurements' lines differs
            for mid in dict.fromkeys((c.a.measurement, c.b.measurement)):
                title += f"; {mid}: {tip}" if (tip := self.trust_tip(mid)) else ""
        first = c.a.sample if isinstance(c.a, citations.Statistic) else c.a  # a median links to its run's samples
        href = self.m_url(first.measurement, sample_anchor(first.metric, first.selector))
        return f'<a class="evreg-derived" href="{href}" title="{attr(title)}">{esc(resolved.text)}</a>'

    def repeats(self, mid: str, metric: str, featured: int | None = None, tooltip: bool = True) -> str:
        """A value over a run's repeats: the median, the range and the count (a single sample says so; fewer than
        ``ranking.ROBUST_FROM`` say their spread is unknown), each repeat far outside the others flagged
        (``ranking.outliers``: a warm-up?); with ``featured`` (a declared sample), that sample first, the median
        beside it. ``tooltip=False`` where the trust stands in the same cell."""
        samples = (self.measurements.get(mid, {}).get("metrics") or {}).get(metric)
        values = [v for v in samples or [] if isinstance(v, int | float) and not isinstance(v, bool)]
        if len(values) != len(samples or []) or not values:
            return self.cite(mid, metric, featured or 0, tooltip=tooltip)
        if len(values) == 1:
            return f'{self.cite(mid, metric, 0, tooltip=tooltip)} <span class="evreg-spread">single sample</span>'
        median = self.form(citations.Statistic("", 0, 0, "median", mid, metric, None))
        low, high = values.index(min(values)), values.index(max(values))
        few = " (too few to know the spread)" if len(values) < ranking.ROBUST_FROM else ""
        spread = (
            f'<span class="evreg-spread">range {self.cite(mid, metric, low, tooltip=tooltip)} – '
            f"{self.cite(mid, metric, high, tooltip=tooltip)}, {len(values)} samples{few}</span>"
        )
        far = [
            f'<span class="evreg-warmup">{"first " if i == 0 else ""}repeat '
            f"{self.cite(mid, metric, i, tooltip=tooltip)} lies far outside the others (a warm-up?)</span>"
            for i in ranking.outliers(values)
        ]
        flags = "".join(" " + f for f in far)
        if featured is not None:  # the declared sample, the median beside it (the range is in the run's section)
            shown = self.cite(mid, metric, featured, tooltip=tooltip)
            return f"{shown} (declared sample; median {median} of {len(values)} samples){flags}"
        return f"median {median} {spread}{flags}"

    def text(self, value: Any, key: str = "") -> str:
        """Any stored value under ``key`` as readers see it: a string as prose (every string a record holds is
        prose unless it is a token, ``evreg.records.models.is_prose``) -- a name's memory size is part of the name --,
        anything else as its JSON."""
        if not isinstance(value, str):
            return esc(json.dumps(value, ensure_ascii=False))
        if key in NAME_KEYS:
            return f'<span class="evreg-name">{self.prose(value, key)}</span>'
        return self.prose(value)

    def literal(self, text: str | None, key: str = "", cell: bool = False) -> str:
        """Text with no citations (under ``key``, in a coverage ``cell`` or not): escaped, typed figures marked as
        orphans."""
        text = text or ""
        out, last = [], 0
        for fig in claims_in(key, text, cell):
            out.append(esc(text[last : fig.start]))
            out.append(
                f'<mark class="evreg-orphan" title="A typed figure, not a citation: a baselined defect of '
                f'the source data">{esc(text[fig.start : fig.end])}</mark>'
            )
            last = fig.end
        out.append(esc(text[last:]))
        return "".join(out)

    # -- small pieces ---------------------------------------------------------------------------

    def link(self, kind: str, rid: str, text: str | None = None) -> str:
        if kind == "measurement":
            return f'<a href="{esc(self.m_url(rid))}">{esc(text or rid)}</a>'
        folder = {"packet": "packets", "family": "families"}[kind]
        return f'<a href="{self.base}{folder}/{esc(rid)}/">{esc(text or rid)}</a>'

    def state(self, state: str, meaning: bool = True) -> str:
        """A state's badge; its meaning on hover, unless a legend beside it says it (a grid's cells)."""
        title = f' title="{escape(state_vocab().get(state, {}).get("meaning", ""))}"' if meaning else ""
        return f'<span class="evreg-state evreg-state-{escape(state)}"{title}>{escape(state)}</span>'

    def grade_badge(self, axis: str, grade: dict[str, Any] | None, scope: bool = True) -> str:
        """A grade's badge (``EVID B``), its scope on hover (not with ``scope=False``: a comparison's value cell)."""
        if not grade:
            return ""
        name = "EVID" if axis == "evidence" else "CAP"
        title = f' title="{esc(grade.get("scope", ""))}"' if scope else ""
        return (
            f'<span class="evreg-grade evreg-grade-{escape(str(grade.get("grade")))}"{title}>'
            f"{name} {esc(grade.get('grade'))}</span>"
        )


def _html_piece(data: bytes) -> tuple[str, Scan, str] | None:
    """A piece as ``Pages.piece`` keeps it, read back; None for anything else (bytes that are not such JSON, a field
    of another type)."""
    try:
        piece = jsonio.loads(data, shallow_reader=True)
    except ValueError:
        return None
    if not (isinstance(piece, dict) and set(piece) == {"html", "lead", "figures", "data", "problems"}):
        return None
    scan = kept_scan(piece)
    return None if scan is None else (piece["html"], scan, piece["lead"])
