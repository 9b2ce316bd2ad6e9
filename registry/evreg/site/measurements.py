"""The pages that hold measurements: a packet's page and a family's page of measurements filed in no packet, each
measurement a section of its page (anchor ``m-ID``), with a record's evidence and git history."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from evreg.catalog.tables import EvidenceRow
from evreg.claims import citations, topology, workload
from evreg.core.vocab import load as load_vocab
from evreg.site import charts, compare, headline
from evreg.site.cite import Pages
from evreg.site.html import Cell, Page, esc, evidence_url, m_anchor, source_url
from evreg.store.documents import MEASUREMENT_KINDS

PACKET_SCOPE_FIELDS = (
    "revision",
    "artifact_id",
    "quantization",
    "runtime",
    "cards",
    "topologies",
    "status",
    "evidence_level",
)


def packet_page(p: Pages, pid: str) -> Page:
    pk = p.records["packet"][pid]
    row = p.where[("packet", pid)]
    family, file = row.family, row.file
    page = Page(pk.get("label") or pid, boost=2)
    page.h(1, esc(pk.get("label") or pid))
    page.p(f"Packet <code>{esc(pid)}</code> of family {p.link('family', str(family))} · file <code>{esc(file)}</code>")
    page.h(2, "Scope")
    rows = [  # the packet's cards in the one topology vocabulary ("1 card"), as every page shows a setup
        [esc(key), esc(topology.label(None, pk[key]) if key == "cards" and topology.cards(None, pk[key]) else pk[key])]
        for key in PACKET_SCOPE_FIELDS
        if key in pk
    ]
    if pk.get("coverage"):
        rows.append(["coverage", ", ".join(esc(c) for c in pk["coverage"])])
    page.table(["Field", "Value"], rows)
    if pk.get("summary"):
        page.h(2, "Summary")
        page.p(p.prose(pk["summary"]))
    fm = pk.get("featured_metric")
    if fm:
        page.h(2, "Featured result")
        page.p(f"{esc(fm['metric'])}: {headline.headline_value(p, fm)} ({esc(fm['workload'])})")
    grades = pk.get("grades") or {}
    if grades:
        page.h(2, "Grades")
        page.table(
            ["Grade", "Scope", "Basis", "Reviewed", "Evidence"],
            [
                [
                    p.grade_badge(axis, g),
                    p.prose(g["scope"]),
                    p.prose(g["basis"]),
                    esc(g["reviewed_at"]),
                    "<br>".join(esc(e) for e in g.get("evidence", [])),
                ]
                for axis, g in grades.items()
            ],
        )
        page.p(f'What each letter requires: <a href="{p.base}methodology/grades/">the grade rubric</a>.')
    page.h(2, "Measurements")
    ms = p.in_packet.get(pid, [])
    if not ms:
        page.note("No measurements filed in this packet's folder.")
    for mid in ms:
        _measurement(p, page, mid)
    page.h(2, "Evidence")
    evidence_list(p, page, file, str(family))
    page.h(2, "Provenance")
    history(p, page, file)
    return page


def loose_page(p: Pages, fid: str) -> Page:
    page = Page(f"Measurements of {fid} in no packet", search=True)
    page.h(1, f"Measurements of {esc(fid)} filed in no packet")
    page.p(f"Family {p.link('family', fid)}. Measurements in <code>packets/{esc(fid)}/measurements/</code>.")
    for mid in p.loose.get(fid, []):
        _measurement(p, page, mid)
    return page


IDENTITY_FIELDS = (
    "state",
    "revision",
    "artifact_id",
    "quantization",
    "variant",
    "hardware",
    "runtime",
    "runtime_family",
    "runtime_profile_id",
    "profile_id",
    "measurement_class",
    "promotion_status",
    "workload",
    "axis",
)
IDENTITY_MAPS = ("identity", "runtime_identity")
SHOWN_FIELDS = frozenset(
    {*IDENTITY_FIELDS, *IDENTITY_MAPS, "kind", "id", "config", "workload_fields", "metrics", "points"}
    | {"sample_annotations"}
    | {"quality", "caveat", "evidence", "evidence_sha256", "evidence_locators", "supersedes", "retired"}
)
"""The fields a measurement page shows in their own sections; every other stored field is listed verbatim."""


def _measurement(p: Pages, page: Page, mid: str) -> None:
    """A measurement as a section of its page (anchor ``m-ID``): a heading and one line with what a reader
    needs first (found by search: state, grades, hardware, runtime), then every other stored field (left out of the
    search index; a stored state, hardware or runtime that line shows as stored is not repeated)."""
    m = p.measurements[mid]
    row = p.measurement_where(mid)
    kind = "run-measurement" if ("run-measurement", mid) in p.where else "series-measurement"
    page.h(3 if row.packet else 2, f"Measurement <code>{esc(mid)}</code> {p.state(m['state'])}", m_anchor(mid))
    page.p(f"{esc(kind)} · {p.trust_line(mid)}")  # what search shows of the section
    page.add('<div class="evreg-measurement" data-search-exclude>')
    page.p(f"File <code>{esc(row.file)}</code>")
    if m.get("retired"):
        page.add(
            '<div class="admonition warning"><p class="admonition-title">Retired</p>'
            f"<p>{p.prose(m['retired'].get('reason'))}</p></div>"
        )
    _supersession(p, page, mid)
    state, _grades, hardware, runtime = p.trust_parts(mid)
    said = {"state": state, "hardware": hardware, "runtime": runtime}  # in the line under the heading, as stored
    rows = [
        [esc(k), p.text(m[k], k)]
        for k in IDENTITY_FIELDS
        if k in m and not (isinstance(m[k], str) and " ".join(m[k].split()) == said.get(k))
    ]
    for key in IDENTITY_MAPS:
        if isinstance(m.get(key), dict):
            rows += [[f"{key}.{esc(k)}", f"<code>{esc(v)}</code>"] for k, v in m[key].items()]
        elif key in m:  # a lab may write its runtime identity as text
            rows.append([esc(key), p.text(m[key], key)])
    if isinstance(m.get("workload_fields"), dict):
        shown = (compare.part_html(*part) for part in workload.described(m["workload_fields"]))
        rows.append(["workload_fields", " · ".join(shown) or "none stated"])
    rows += [[f"config.{esc(k)}", p.text(v)] for k, v in (m.get("config") or {}).items()]
    page.table(["Identity and config", "Value"], rows)
    if m.get("metrics"):
        _samples(p, page, mid, m)
    if m.get("points"):
        _series_points(p, page, mid, m)
    for key in ("quality", "caveat"):
        if m.get(key):
            page.p(f"<strong>{key.capitalize()}:</strong> {p.prose(m[key])}")
    page.sub("Evidence")
    evidence_list(p, page, row.file, str(row.family))
    _locators(page, m)
    _other_fields(page, m)
    page.sub("Provenance")
    history(p, page, row.file)
    page.add("</div>")


def _supersession(p: Pages, page: Page, mid: str) -> None:
    """The whole chain of corrections this measurement belongs to, oldest first."""
    chain, seen = [mid], {mid}
    while (prev := p.measurements.get(chain[0], {}).get("supersedes")) and prev not in seen:
        chain.insert(0, prev)
        seen.add(prev)
    while (nxt := p.superseded_by.get(chain[-1])) and nxt not in seen:
        chain.append(nxt)
        seen.add(nxt)
    if len(chain) == 1:
        return
    links = [f"<strong>{esc(c)}</strong> (this)" if c == mid else p.link("measurement", c) for c in chain]
    page.p("Supersession chain, oldest first: " + " → ".join(links) + ".")
    if chain[-1] != mid:
        page.p(f"Superseded by {p.link('measurement', chain[chain.index(mid) + 1])}.")


def _samples(p: Pages, page: Page, mid: str, m: dict[str, Any]) -> None:
    """Every sample with its evidence locator and the annotations stored for it."""
    notes: dict[tuple[str, int], list[str]] = defaultdict(list)
    for a in m.get("sample_annotations") or []:
        if isinstance(a, dict):
            extra = [f"{esc(k)}: {p.text(v, k)}" for k, v in a.items() if k not in ("metric", "index", "label")]
            notes[(a.get("metric", ""), a.get("index", -1))].append(
                f"<strong>{p.prose(a.get('label', ''))}</strong>" + (" · " + " · ".join(extra) if extra else "")
            )
    locators = m.get("evidence_locators") or {}
    page.sub("Samples")
    rows: list[list[str | Cell]] = []
    for metric, samples in m["metrics"].items():
        for i in range(len(samples)):
            loc = locators.get(f"{metric}[{i}]")
            rows.append(
                [
                    esc(metric),
                    str(i),
                    p.sample(mid, metric, i),
                    f"<code>{esc(loc)}</code>" if loc else "—",
                    "<br>".join(notes.get((metric, i), [])),
                ]
            )
    page.table(["Metric", "Sample", "Value", "Evidence locator", "Annotation"], rows)


def _locators(page: Page, m: dict[str, Any]) -> None:
    """Where in the evidence each series point was read (run samples show theirs beside the value)."""
    locators = {k: v for k, v in (m.get("evidence_locators") or {}).items() if "@" in k}
    if locators:
        page.table(
            ["Point", "Evidence locator"],
            [[f"<code>{esc(k)}</code>", f"<code>{esc(v)}</code>"] for k, v in locators.items()],
        )


def _other_fields(page: Page, m: dict[str, Any]) -> None:
    """Every stored field no section above shows, verbatim: nothing stored is hidden from a reader."""
    rest = {k: v for k, v in m.items() if k not in SHOWN_FIELDS}
    if not rest:
        return
    page.sub("Other stored fields")
    page.table(  # on every section of 100,000 measurements: the caveat is the column's heading, not a paragraph
        ["Field", "As stored (JSON; its numbers are no citations, not checked against evidence)"],
        [[f"<code>{esc(k)}</code>", f"<code>{esc(json.dumps(v, ensure_ascii=False))}</code>"] for k, v in rest.items()],
        cls="evreg-stored",
    )


def _series_points(p: Pages, page: Page, mid: str, m: dict[str, Any]) -> None:
    """A series' charts (a metric's numbers, drawn bare) and its points' table, which holds every value drawn."""
    metric_vocab = load_vocab("metrics")["metrics"]
    stored = {k for pt in m["points"] for k in pt}
    for metric in [k for k in metric_vocab if k in stored]:
        series = charts.Series(
            mid,
            m["state"],
            [
                p.dot(mid, metric, None, pt["x"], float(pt["x"]), float(pt[metric]))
                for pt in m["points"]
                if isinstance(pt.get(metric), int | float) and not isinstance(pt.get(metric), bool)
            ],
        )
        if len({d.x for d in series.dots}) < 2:  # one point is no curve: its row below holds it
            continue
        unit = citations.unit_of(metric)
        label = metric_vocab[metric]["label"]
        page.add(
            charts.svg(
                [series],
                m.get("axis") or "x",
                f"{label} ({unit})" if unit else label,
                m.get("axis") == "concurrency",
                True,
                mid,
            )
        )
    keys = [k for k in dict.fromkeys(k for pt in m["points"] for k in pt) if k not in ("x", "samples")]
    page.sub(f"Points along {esc(m.get('axis') or 'x')}")
    rows: list[list[str | Cell]] = []
    for pt in m["points"]:
        cells: list[str | Cell] = []
        for k in keys:  # every stored field of every point: a number is a sample (its anchor), anything else verbatim
            v = pt.get(k)
            if isinstance(v, int | float) and not isinstance(v, bool):
                cells.append(p.sample(mid, k, None, pt["x"]))
            elif v is None:
                cells.append("—")
            else:  # as stored (a hash, a status), as the other stored fields are shown
                cells.append(f"<code>{esc(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</code>")
        rows.append([esc(citations.fmt_x(pt["x"])), *cells, esc(pt.get("samples", ""))])
    page.table(["x", *(esc(k) for k in keys), "samples"], rows)


def _external(ev: EvidenceRow, source: Any) -> str:
    """An external evidence reference: linked to its source repository at the pinned commit, when pinned."""
    url = source_url(source, ev.path)
    if not url:
        return f"<code>{esc(ev.path)}</code> in {esc(ev.source)}, no pinned commit (not copied here)"
    return (  # the row's kind says external; the link holds the commit in full
        f'<a href="{esc(url)}"><code>{esc(ev.path)}</code></a> in {esc(ev.source)} at commit '
        f"<code>{esc(source['commit'][:12])}</code> (not copied here)"
    )


def evidence_list(p: Pages, page: Page, file: str, family: str) -> None:
    """The record's evidence: a local file links to its copy published with the site (its sha256 beside it);
    an external one to its source repository at the commit the family pins (when it pins one)."""
    rows = p.evidence.get(file, [])
    if not rows:
        page.note("No evidence references.")
        return
    sources = p.records.get("family", {}).get(family, {}).get("sources") or {}
    out = []
    for ev in rows:
        spec = sources.get(ev.source) if isinstance(sources, dict) and ev.ref_kind == "external" else None
        if ev.ref_kind == "external" and ev.held and ev.present and ev.sha256:
            copy = f'<a href="{p.base}{esc(evidence_url(ev.sha256, ev.path))}">its copy held here</a>'
            what = _external(ev, spec).replace("(not copied here)", f"({copy})")
        elif ev.ref_kind == "external":
            what = _external(ev, spec)
        elif ev.ref_kind == "url":
            what = f"link: <code>{esc(ev.ref)}</code>"  # a reference, shown as written
        elif ev.present and ev.sha256:
            what = f'<a href="{p.base}{esc(evidence_url(ev.sha256, ev.path))}"><code>{esc(ev.path)}</code></a>'
        else:
            what = f"<code>{esc(ev.path)}</code>" + ("" if ev.present else " (missing)")
        digest = f"<code>{esc(ev.sha256)}</code> ({esc(ev.bytes)} bytes)" if ev.sha256 else "—"
        out.append(
            [f"<code>{esc(ev.pointer)}</code>", what, esc(ev.ref_kind), digest, _checked(ev, spec, p.unread[file])]
        )
    page.table(["Where", "Evidence", "Kind", "sha256", "Checked"], out)


def _checked(ev: EvidenceRow, source: Any = None, unread: int = 0) -> str:
    """Whether and when a reference was checked: a local file or a held copy of an external one at this site's build
    (the receipt below names the commit), with the commit the copy was read at; an external file or a link not.
    ``unread``: how many of the record's samples its evidence does not hold."""
    if ev.record_kind not in MEASUREMENT_KINDS:
        samples = "no samples of this record to re-read"
    elif unread:
        samples = f"{unread} of the record's samples are not in it (see the findings)"
    else:
        samples = "its samples re-read"
    if ev.ref_kind == "local" and ev.present:
        return f"yes, when this site was built: present, hashed, {samples}"
    if ev.ref_kind == "external" and ev.held and ev.present:
        held = ((source or {}).get("held") or {}).get(ev.path) or {} if isinstance(source, dict) else {}
        read, pinned = str(held.get("commit", "")), (source or {}).get("commit")
        at = f"read at commit <code>{esc(read[:12])}</code>" + ("" if read == pinned else ", not a pinned one")
        return f"yes, its copy held here ({at}), when this site was built: present, hashed, {samples}"
    if ev.ref_kind == "external":
        return "no: a file of another repository, not copied here"
    if ev.ref_kind == "url":
        return "no: a link"
    return "no: missing"


def history(p: Pages, page: Page, file: str) -> None:
    """The record's git history: one change as a sentence, more as a table."""
    rows = p.provenance.get(file, [])
    if not rows:
        page.note("No git history for this record (not committed yet).")
        return
    names = {"A": "added", "M": "changed", "D": "deleted"}
    if len(rows) == 1:  # most records: a sentence, not a table (a quarter of the bytes)
        c = rows[0]
        page.p(
            f"{esc(names.get(c.change, c.change)).capitalize()} in commit <code>{esc(c.commit[:12])}</code> "
            f"by {esc(c.author)}, {esc(c.date[:10])}."
        )
        return
    page.table(
        ["Change", "Commit", "Author", "Date"],
        [
            [
                esc(names.get(c.change, c.change)),
                f"<code>{esc(c.commit[:12])}</code>",
                esc(c.author),
                esc(c.date[:10]),
            ]
            for c in rows
        ],
    )
