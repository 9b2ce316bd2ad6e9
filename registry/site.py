"""Site pages, generated from the catalog as Markdown (never committed).

``render_pages(db)`` is pure: catalog in, ``{path: markdown}`` out. Every
number that states a measurement goes through ``Pages.cite`` (the citation
path); record text goes through ``esc`` (inert: no HTML, no Markdown, no
template syntax) or ``Pages.prose`` (escaped text plus resolved citations).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from html import escape
from pathlib import Path
from typing import Any

import duckdb

from registry import charts, citations
from registry.vocab import load as load_vocab
from registry.vocab import states as state_vocab

_MD_SPECIAL = re.compile(r"[\\`*_\[\]()#!|{}~<>&\"'+:=$^]")


def esc(text: Any) -> str:
    """Record text made inert for Markdown and HTML: every syntax character becomes an entity."""
    return _MD_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", " ".join(str(text).split()))


def slug_anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def page_base(path: str) -> str:
    """Relative prefix from a page's URL to the site root (directory URLs)."""
    depth = path.count("/") + (0 if path.endswith("index.md") else 1)
    return "../" * depth


class Pages:
    def __init__(self, db: Path) -> None:
        con = duckdb.connect(str(db), read_only=True)
        try:
            fetch = lambda sql: con.execute(sql).fetchall()  # noqa: E731
            self.records: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
            self.where: dict[tuple[str, str], tuple[str | None, str | None, str]] = {}
            for kind, rid, family, packet, file, content in fetch(
                "SELECT kind, id, family, packet, file, content FROM records ORDER BY key"
            ):
                key = f"{family}/{rid}" if kind in ("view", "coverage-view", "coverage-contract", "closure") else rid
                self.records[kind][key] = json.loads(content)
                self.where[(kind, key)] = (family, packet, file)
            self.evidence = defaultdict(list)
            for row in fetch(
                "SELECT file, pointer, ref, ref_kind, source, path, sha256, bytes, present FROM evidence ORDER BY key"
            ):
                self.evidence[row[0]].append(row[1:])
            self.provenance = defaultdict(list)
            for path, seq, commit, author, date, change in fetch(
                "SELECT path, seq, commit, author, date, change FROM provenance ORDER BY path, seq"
            ):
                self.provenance[path].append((seq, commit, author, date, change))
            self.defects = fetch(
                "SELECT code, file, pointer, message, baseline_reason FROM findings "
                "WHERE baselined ORDER BY file, pointer"
            )
            self.meta = dict(fetch("SELECT key, value FROM catalog_meta"))
        finally:
            con.close()
        self.measurements = {**self.records.get("run-measurement", {}), **self.records.get("series-measurement", {})}
        self.superseded_by = {m["supersedes"]: mid for mid, m in self.measurements.items() if m.get("supersedes")}
        self.base = ""

    # -- the citation path ----------------------------------------------------------------

    def m_url(self, mid: str, anchor: str = "") -> str:
        return f"{self.base}measurements/{mid}/" + (f"#{anchor}" if anchor else "")

    def cite(
        self,
        mid: str,
        metric: str,
        index: int | None = None,
        x: float | None = None,
        decimals: int | None = None,
        unit: bool = True,
    ) -> str:
        """The one way a measured number reaches a page: resolved, formatted and linked."""
        raw = citations.citation_text(mid, metric, index, x, decimals, unit)
        [c] = list(citations.parse(raw))
        resolved = citations.resolve(c, self.measurements)  # type: ignore[arg-type]
        if isinstance(resolved, str):
            return f'<mark class="evreg-unresolved" title="{escape(resolved)}">{esc(raw)}</mark>'
        anchor = slug_anchor(f"{metric}-{c.selector}")
        return (
            f'<a class="evreg-cite" href="{self.m_url(mid, anchor)}" data-cite="{escape(raw[3:-3].strip())}" '
            f'title="{escape(mid)}">{escape(resolved.text)}</a>'
        )

    def prose(self, text: Any) -> str:
        """Record prose: escaped text, citations resolved and linked, typed figures marked as orphans."""
        if not isinstance(text, str):
            return ""
        out, last = [], 0
        for c in citations.parse(text):
            if isinstance(c, citations.CitationError):
                continue
            out.append(self._literal(text[last : c.start]))
            out.append(self.cite(c.measurement, c.metric, c.index, c.x, c.decimals, c.unit))
            last = c.end
        out.append(self._literal(text[last:]))
        return "".join(out)

    def _literal(self, text: str) -> str:
        out, last = [], 0
        for fig in citations.find_figures(text):
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
        folder = {"packet": "packets", "family": "families", "measurement": "measurements"}[kind]
        return f'<a href="{self.base}{folder}/{rid}/">{esc(text or rid)}</a>'

    def state(self, state: str) -> str:
        meaning = state_vocab().get(state, {}).get("meaning", "")
        return f'<span class="evreg-state evreg-state-{escape(state)}" title="{escape(meaning)}">{escape(state)}</span>'

    def grade_badge(self, axis: str, grade: dict[str, Any] | None) -> str:
        if not grade:
            return ""
        name = "EVID" if axis == "evidence" else "CAP"
        return (
            f'<span class="evreg-grade evreg-grade-{escape(str(grade.get("grade")))}" '
            f'title="{esc(grade.get("scope", ""))}">{name} {esc(grade.get("grade"))}</span>'
        )

    def evidence_list(self, file: str) -> str:
        rows = self.evidence.get(file, [])
        if not rows:
            return "_No evidence references._\n"
        out = ["| Where | Evidence | Kind | sha256 |", "|---|---|---|---|"]
        for pointer, ref, kind, source, path, sha, size, present in rows:
            if kind == "external":
                what = f"external: {esc(path)} in source {esc(source)} (not copied here; not checked)"
            elif kind == "url":
                what = f"link: {esc(ref)}"
            else:
                what = esc(path) + ("" if present else " (missing)")
            digest = f"<code>{escape(sha)}</code> ({size} bytes)" if sha else "—"
            out.append(f"| <code>{escape(pointer)}</code> | {what} | {kind} | {digest} |")
        return "\n".join(out) + "\n"

    def history(self, file: str) -> str:
        rows = self.provenance.get(file, [])
        if not rows:
            return "_No git history for this record (not committed yet)._\n"
        out = ["| Change | Commit | Author | Date |", "|---|---|---|---|"]
        names = {"A": "added", "M": "changed", "D": "deleted"}
        for _seq, commit, author, date, change in rows:
            out.append(
                f"| {names.get(change, change)} | <code>{commit[:12]}</code> | {esc(author)} | {esc(date[:10])} |"
            )
        return "\n".join(out) + "\n"


def _front(title: str, search: bool = True, boost: float | None = None) -> str:
    """Front matter. The title reaches templates unescaped, so it keeps only plain characters."""
    plain = " ".join(re.sub(r"[^\w\s.·→/+-]", " ", str(title)).split()) or "Untitled"
    fm = "---\ntitle: " + json.dumps(plain, ensure_ascii=False) + "\n"
    if not search:
        fm += "search:\n  exclude: true\n"
    elif boost:
        fm += f"search:\n  boost: {boost}\n"
    return fm + "---\n\n"


def render_pages(db: Path, downloads: list[tuple[str, str, int]] | None = None) -> dict[str, str]:
    """Every generated page of the site: path (under docs_dir) -> Markdown."""
    p = Pages(db)
    pages: dict[str, str] = {}

    def add(path: str, fn: Any, *args: Any) -> None:
        p.base = page_base(path)
        pages[path] = fn(p, *args)

    add("index.md", _home)
    add("families/index.md", _families_index)
    for fid in p.records.get("family", {}):
        add(f"families/{fid}.md", _family, fid)
    add("packets/index.md", _packets_index)
    for pid in p.records.get("packet", {}):
        add(f"packets/{pid}.md", _packet, pid)
    add("measurements/index.md", _measurements_index)
    for mid in p.measurements:
        add(f"measurements/{mid}.md", _measurement, mid)
    for key in p.records.get("coverage-contract", {}):
        add(f"coverage/{key}.md", _contract_page, key)
    add("quarantine.md", _quarantine)
    add("defects.md", _defects)
    add("downloads.md", _downloads, downloads or [])
    add("methodology/grades.md", _grades_page)
    add("methodology/rules.md", _rules_page)
    add("schema.md", _schema_page)
    return pages


# -- pages ------------------------------------------------------------------------------------


def _home(p: Pages) -> str:
    states = Counter(m["state"] for m in p.measurements.values())
    grades = Counter(
        g["grade"]
        for pk in p.records.get("packet", {}).values()
        for g in [(pk.get("grades") or {}).get("evidence")]
        if g
    )
    out = [
        _front("Evidence registry"),
        "# Evidence registry for LLM inference results\n",
        "Every number here is a receipt: it links to the measurement that produced it, and the measurement "
        "names its exact weights, quantized artifact, runtime, hardware, configuration, workload and evidence.\n",
        "## What the registry holds\n",
        f"{len(p.records.get('family', {}))} families, {len(p.records.get('packet', {}))} packets and "
        f"{len(p.measurements)} measurements.\n",
        "| State | Measurements |",
        "|---|---|",
    ]
    out += [f"| {p.state(s)} | {n} |" for s, n in sorted(states.items())]
    out += ["", "| Evidence grade (EVID) | Packets |", "|---|---|"]
    out += [f"| {g} | {n} |" for g, n in sorted(grades.items())]
    out += [
        "",
        "## Declared headlines\n",
        "Headlines are declared by each family (its featured results and primary packet), never computed "
        "as a maximum.\n",
    ]
    for fid, fam in p.records.get("family", {}).items():
        out.append(f"### {p.link('family', fid, fam.get('display_name') or fam['name'])}\n")
        out += _featured_rows(p, fam)
        if fam.get("primary_packet_id"):
            out.append(f"Primary packet: {p.link('packet', fam['primary_packet_id'])}\n")
    added = []
    for pid, _pk in p.records.get("packet", {}).items():
        file = p.where[("packet", pid)][2]
        hist = p.provenance.get(file)
        if hist:
            added.append((hist[0][3], pid, hist[0][2]))
    out += ["## Recently added packets\n", "| Packet | Added | By |", "|---|---|---|"]
    out += [
        f"| {p.link('packet', pid)} | {esc(date[:10])} | {esc(author)} |"
        for date, pid, author in sorted(added, reverse=True)[:10]
    ]
    return "\n".join(out) + "\n"


def _featured_rows(p: Pages, fam: dict[str, Any]) -> list[str]:
    rows = fam.get("featured_results") or []
    if not rows:
        return ["_This family declares no headline._\n"]
    out = ["| Role | Result | Value | Quality |", "|---|---|---|---|"]
    for fr in rows:
        value = p.cite(fr["measurement_id"], fr["metric"], fr.get("sample_index"), fr.get("point_x"))
        out.append(f"| {esc(fr['role'])} | {p.prose(fr['label'])} | {value} | {p.prose(fr.get('quality_label'))} |")
    return [*out, ""]


def _families_index(p: Pages) -> str:
    out = [
        _front("Families"),
        "# Model families\n",
        "| Family | Revisions | Packets | Measurements |",
        "|---|---|---|---|",
    ]
    for fid, fam in p.records.get("family", {}).items():
        packets = sum(1 for k in p.records.get("packet", {}) if p.where[("packet", k)][0] == fid)
        ms = sum(
            1
            for k in p.measurements
            if p.where.get(("run-measurement", k), p.where.get(("series-measurement", k)))[0] == fid
        )
        out.append(
            f"| {p.link('family', fid, fam['name'])} | {len(fam.get('weight_revisions', []))} | {packets} | {ms} |"
        )
    return "\n".join(out) + "\n"


def _family_records(p: Pages, kind: str, fid: str) -> dict[str, dict[str, Any]]:
    return {
        k.split("/", 1)[1] if "/" in k else k: v
        for k, v in p.records.get(kind, {}).items()
        if p.where[(kind, k)][0] == fid
    }


def _family(p: Pages, fid: str) -> str:
    fam = p.records["family"][fid]
    out = [_front(fam["name"]), f"# {esc(fam.get('display_name') or fam['name'])}\n"]
    if fam.get("summary"):
        out.append(p.prose(fam["summary"]) + "\n")
    out += ["## Headline\n", *_featured_rows(p, fam)]
    if fam.get("primary_packet_id"):
        out.append(f"Primary packet: {p.link('packet', fam['primary_packet_id'])}\n")
    out += [
        "## Lineage\n",
        "Weight revisions and their quantized artifacts. A measurement never transfers across revisions.\n",
    ]
    for rev in fam.get("weight_revisions", []):
        pin = (
            f"<code>{escape(rev['revision'])}</code>"
            if rev.get("revision")
            else esc(rev.get("revision_status", "unpinned"))
        )
        out.append(f"### {esc(rev.get('label') or rev['id'])}\n")
        out.append(
            f"Revision id <code>{escape(rev['id'])}</code> · {esc(rev.get('role', ''))} · "
            f"{esc(rev.get('repository', ''))} at {pin}\n"
        )
        out += ["| Artifact | Quantization | Repository | Pinned identity |", "|---|---|---|---|"]
        for art in rev.get("quantized_artifacts", []):
            ident = []
            if art.get("revision"):
                ident.append(f"revision <code>{escape(art['revision'])}</code>")
            if art.get("file_sha256"):
                ident.append(f"file sha256 <code>{escape(art['file_sha256'])}</code>")
            if art.get("revision_status"):
                ident.append("unpinned: " + esc(art["revision_status"]))
            out.append(
                f"| {esc(art['label'])} <code>{escape(art['id'])}</code> | {esc(art['quantization'])} | "
                f"{esc(art['repository'])} | {'<br>'.join(ident) or 'unpinned'} |"
            )
        out.append("")
    ts = fam.get("transfer_scope")
    if isinstance(ts, dict):
        out += ["## Transfer scope\n", f"Status: {esc(ts.get('status', ''))}\n", "**Transfers between revisions:**\n"]
        out += [f"- {p.prose(t)}" for t in ts.get("transfers", [])]
        out += ["", "**Does not transfer:**\n"]
        out += [f"- {p.prose(t)}" for t in ts.get("does_not_transfer", [])]
        out.append("")
    out += ["## Packets\n", "| Packet | Grades | Status | Revision · artifact |", "|---|---|---|---|"]
    for pid, pk in _family_records(p, "packet", fid).items():
        grades = " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items())
        out.append(
            f"| {p.link('packet', pid, pk.get('label') or pid)} | {grades} | {esc(pk.get('status', ''))} | "
            f"{esc(pk['revision'])} · {esc(pk.get('artifact_id', '—'))} |"
        )
    out.append("")
    views = _family_records(p, "view", fid)
    order = fam.get("initial_view_ids") or []
    if views:
        out += [
            "## Charts\n",
            "Each point links to its measurement; hover for the value. Screened series are "
            "dashed and hollow: they are not measured curves.\n",
        ]
        for vid in [*[v for v in order if v in views], *[v for v in views if v not in order]]:
            out += _view(p, views[vid])
    cov = _family_records(p, "coverage-view", fid)
    if cov:
        out += ["## Coverage matrices\n", "Every cell is explicit; *missing* means nobody measured it, never zero.\n"]
        for view in cov.values():
            out += _coverage_view(p, view)
    contracts = _family_records(p, "coverage-contract", fid)
    if contracts:
        out += ["## Coverage contracts\n", "| Contract | Cells by state |", "|---|---|"]
        for cid, c in contracts.items():
            counts = _contract_cells(c)[1]
            out.append(
                f'| <a href="{p.base}coverage/{fid}/{cid}/">{esc(c["label"])}</a> | '
                + ", ".join(f"{n} {esc(s)}" for s, n in sorted(counts.items()))
                + " |"
            )
        out.append("")
    closures = _family_records(p, "closure", fid)
    if closures:
        out += ["## Closures\n", *_closure_rows(p, closures.values())]
    return "\n".join(out) + "\n"


def _closure_rows(p: Pages, closures: Any) -> list[str]:
    out = ["| State | Scope | Reason |", "|---|---|---|"]
    for c in closures:
        scope = ", ".join(f"{esc(k)}={esc(v)}" for k, v in c["selectors"].items())
        out.append(f"| {p.state(c['state'])} | {scope} | {p.prose(c['reason'])} |")
    return [*out, ""]


def _x_of(m: dict[str, Any], x_from: str) -> Any:
    node: Any = m
    for part in x_from.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _view(p: Pages, view: dict[str, Any]) -> list[str]:
    out = [f"### {esc(view.get('title') or view['id'])}\n"]
    if view.get("subtitle"):
        out.append(p.prose(view["subtitle"]) + "\n")
    for metric in view["metrics"]:
        series = []
        for s in view["series"]:
            members = [(mid, p.measurements[mid]) for mid in s["measurement_ids"] if mid in p.measurements]
            state = members[0][1]["state"] if members else "missing"
            cs = charts.Series(s.get("label") or "series", state)
            for mid, m in members:
                if m.get("points"):
                    for pt in m["points"]:
                        v = pt.get(metric)
                        if isinstance(v, int | float) and not isinstance(v, bool):
                            cs.dots.append(_dot(p, mid, metric, None, pt["x"], float(pt["x"]), float(v)))
                else:
                    x = _x_of(m, s.get("x_from") or "config.tp")
                    samples = (m.get("metrics") or {}).get(metric) or []
                    if isinstance(x, int | float) and not isinstance(x, bool):
                        for i, v in enumerate(samples):
                            cs.dots.append(_dot(p, mid, metric, i, None, float(x), float(v)))
            series.append(cs)
        unit = citations.unit_of(metric)
        label = load_vocab("metrics")["metrics"].get(metric, {}).get("label", metric)
        out.append(
            charts.svg(
                series,
                view.get("x_label") or "x",
                f"{label} ({unit})" if unit else label,
                view.get("x_scale") == "log",
                not view.get("discrete"),
                view.get("title", ""),
            )
        )
        out.append("")
    return out


def _dot(p: Pages, mid: str, metric: str, index: int | None, x: float | None, xv: float, v: float) -> charts.Dot:
    raw = citations.citation_text(mid, metric, index, x)
    text = citations.format_value(v, metric)
    sel = citations.selector(index, x)
    return charts.Dot(xv, v, p.m_url(mid, slug_anchor(f"{metric}-{sel}")), f"{mid}: {text}", raw[3:-3].strip())


def _axis_key(axis: dict[str, Any] | None, default: str) -> str:
    return (axis or {}).get("key", default)


def _cell(p: Pages, cell: dict[str, Any]) -> str:
    parts = [p.state(cell["state"])]
    if cell.get("label"):
        parts.append(p.prose(cell["label"]))
    if cell.get("evidence_id"):
        parts.append(p.link("measurement", cell["evidence_id"], "measurement"))
    if cell.get("packet_id"):
        parts.append(p.link("packet", cell["packet_id"], "packet"))
    if cell.get("reason"):
        parts.append(f'<span class="evreg-reason">{p.prose(cell["reason"])}</span>')
    return f'<td class="evreg-cell evreg-cell-{escape(cell["state"])}">' + "<br>".join(parts) + "</td>"


def _coverage_view(p: Pages, view: dict[str, Any]) -> list[str]:
    row_axis, col_axis = (
        view.get("row_axis") or {"label": "MTP", "prefix": "MTP"},
        view.get("column_axis") or {"label": "TP", "prefix": "TP"},
    )
    out = [f"### {esc(view.get('label') or view['id'])}\n"]
    if view.get("fixed"):
        out.append(p.prose(view["fixed"]) + "\n")
    head = "".join(f"<th>{esc(col_axis.get('prefix', ''))}{esc(c)}</th>" for c in view["columns"])
    html = [
        f'<table class="evreg-matrix"><thead><tr><th>{esc(row_axis.get("label", ""))} \\ '
        f"{esc(col_axis.get('label', ''))}</th>{head}</tr></thead><tbody>"
    ]
    for r in view["rows"]:
        cells = "".join(
            _cell(p, view["cells"].get(f"{_k(r)}:{_k(c)}", {"state": "missing", "label": "not listed"}))
            for c in view["columns"]
        )
        html.append(f"<tr><th>{esc(row_axis.get('prefix', ''))}{esc(r)}</th>{cells}</tr>")
    html.append("</tbody></table>")
    out.append("".join(html) + "\n")
    if view.get("decision_note"):
        out.append(p.prose(view["decision_note"]) + "\n")
    return out


def _k(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).lower() if isinstance(v, bool) else str(v)


def _contract_cells(c: dict[str, Any]) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], Counter[str]]:
    import itertools

    keys = [a["key"] for a in c["axes"]]
    cells, counts = [], Counter()
    for values in itertools.product(*(a["values"] for a in c["axes"])):
        sel = dict(zip(keys, values, strict=True))
        merged: dict[str, Any] = {}
        for rule in c["rules"]:
            if all(rule["match"].get(k) in ("*", v) for k, v in sel.items()):
                merged.update({k: v for k, v in rule.items() if k not in ("id", "match")})
        merged.setdefault("state", "missing")
        counts[merged["state"]] += 1
        cells.append((sel, merged))
    return cells, counts


def _contract_page(p: Pages, key: str) -> str:
    c = p.records["coverage-contract"][key]
    cells, counts = _contract_cells(c)
    out = [_front(c["label"], search=False), f"# {esc(c['label'])}\n"]
    if c.get("description"):
        out.append(p.prose(c["description"]) + "\n")
    out.append("Cells by state: " + ", ".join(f"{p.state(s)} {n}" for s, n in sorted(counts.items())) + "\n")
    keys = [a["key"] for a in c["axes"]]
    html = [
        '<table class="evreg-matrix"><thead><tr>'
        + "".join(f"<th>{esc(k)}</th>" for k in keys)
        + "<th>Cell</th></tr></thead><tbody>"
    ]
    for sel, cell in cells:
        html.append("<tr>" + "".join(f"<td>{esc(sel[k])}</td>" for k in keys) + _cell(p, cell) + "</tr>")
    html.append("</tbody></table>")
    return "\n".join(out) + "".join(html) + "\n"


def _packets_index(p: Pages) -> str:
    out = [_front("Packets"), "# Result packets\n", "| Packet | Family | Grades | Status |", "|---|---|---|---|"]
    for pid, pk in p.records.get("packet", {}).items():
        grades = " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items())
        out.append(
            f"| {p.link('packet', pid, pk.get('label') or pid)} <code>{escape(pid)}</code> | "
            f"{esc(p.where[('packet', pid)][0])} | {grades} | {esc(pk.get('status', ''))} |"
        )
    return "\n".join(out) + "\n"


def _packet(p: Pages, pid: str) -> str:
    pk = p.records["packet"][pid]
    family, _, file = p.where[("packet", pid)]
    out = [
        _front(pk.get("label") or pid, boost=2),
        f"# {esc(pk.get('label') or pid)}\n",
        f"Packet <code>{escape(pid)}</code> of family {p.link('family', family)} · file <code>{escape(file)}</code>\n",
        "## Scope\n",
        "| Field | Value |",
        "|---|---|",
    ]
    for key in (
        "revision",
        "artifact_id",
        "quantization",
        "runtime",
        "cards",
        "topologies",
        "status",
        "evidence_level",
    ):
        if key in pk:
            out.append(f"| {esc(key)} | {esc(pk[key])} |")
    if pk.get("coverage"):
        out.append(f"| coverage | {', '.join(esc(c) for c in pk['coverage'])} |")
    out.append("")
    if pk.get("summary"):
        out += ["## Summary\n", p.prose(pk["summary"]) + "\n"]
    fm = pk.get("featured_metric")
    if fm:
        out += [
            "## Featured result\n",
            f"{esc(fm['metric'])}: "
            f"{p.cite(fm['measurement_id'], fm['metric'], fm.get('sample_index'), fm.get('point_x'))} "
            f"({esc(fm['workload'])})\n",
        ]
    grades = pk.get("grades") or {}
    if grades:
        out += ["## Grades\n", "| Grade | Scope | Basis | Reviewed | Evidence |", "|---|---|---|---|---|"]
        for axis, g in grades.items():
            ev = "<br>".join(esc(e) for e in g.get("evidence", []))
            out.append(
                f"| {p.grade_badge(axis, g)} | {p.prose(g['scope'])} | {p.prose(g['basis'])} | "
                f"{esc(g['reviewed_at'])} | {ev} |"
            )
        out.append("\nWhat each letter requires: [the grade rubric](../../methodology/grades/).\n")
    ms = [
        (mid, m)
        for mid, m in p.measurements.items()
        if p.where.get(("run-measurement", mid), p.where.get(("series-measurement", mid)))[1] == pid
    ]
    out += ["## Measurements\n"]
    if not ms:
        out.append("_No measurements filed in this packet's folder._\n")
    for mid, m in ms:
        out.append(f"### {p.link('measurement', mid)} {p.state(m['state'])}\n")
        out += _metric_lines(p, mid, m)
    out += ["## Evidence\n", p.evidence_list(file), "## Provenance\n", p.history(file)]
    return "\n".join(out) + "\n"


def _metric_lines(p: Pages, mid: str, m: dict[str, Any]) -> list[str]:
    out = []
    for metric, samples in (m.get("metrics") or {}).items():
        cites = ", ".join(p.cite(mid, metric, i) for i in range(len(samples)))
        out.append(f"- {esc(metric)}: {cites}")
    if m.get("points"):
        out.append(
            f"- {len(m['points'])} points along {esc(m.get('axis') or 'x')} "
            f"({p.link('measurement', mid, 'all points')})"
        )
    return [*out, ""]


def _measurements_index(p: Pages) -> str:
    out = [
        _front("Measurements", search=False),
        "# Measurements\n",
        "| Measurement | State | Runtime | Workload |",
        "|---|---|---|---|",
    ]
    for mid, m in p.measurements.items():
        out.append(
            f"| {p.link('measurement', mid)} | {p.state(m['state'])} | {esc(m.get('runtime', ''))} | "
            f"{esc(m.get('workload', ''))} |"
        )
    return "\n".join(out) + "\n"


IDENTITY_FIELDS = (
    "state",
    "revision",
    "artifact_id",
    "quantization",
    "variant",
    "runtime",
    "runtime_family",
    "runtime_profile_id",
    "profile_id",
    "measurement_class",
    "promotion_status",
    "workload",
    "axis",
)


def _measurement(p: Pages, mid: str) -> str:
    m = p.measurements[mid]
    kind = "run-measurement" if ("run-measurement", mid) in p.where else "series-measurement"
    family, packet, file = p.where[(kind, mid)]
    out = [
        _front(mid, search=False),
        f"# Measurement <code>{escape(mid)}</code>\n",
        f"{p.state(m['state'])} · {esc(kind)} · family {p.link('family', family)}"
        + (f" · packet {p.link('packet', packet)}" if packet else "")
        + f" · file <code>{escape(file)}</code>\n",
    ]
    if m.get("retired"):
        out.append(f'!!! warning "Retired"\n    {p.prose(m["retired"].get("reason"))}\n')
    if m.get("supersedes"):
        out.append(f"Supersedes {p.link('measurement', m['supersedes'])}.\n")
    if mid in p.superseded_by:
        out.append(f"Superseded by {p.link('measurement', p.superseded_by[mid])}.\n")
    out += ["## Identity\n", "| Field | Value |", "|---|---|"]
    out += [f"| {esc(k)} | {esc(m[k])} |" for k in IDENTITY_FIELDS if k in m]
    for k, v in (m.get("identity") or {}).items():
        out.append(f"| identity.{esc(k)} | <code>{esc(v)}</code> |")
    out += ["", "## Config\n", "| Key | Value |", "|---|---|"]
    out += [
        f"| {esc(k)} | {esc(json.dumps(v) if not isinstance(v, str) else v)} |"
        for k, v in (m.get("config") or {}).items()
    ]
    out.append("")
    if m.get("metrics"):
        out += ["## Samples\n", "| Metric | Sample | Value |", "|---|---|---|"]
        for metric, samples in m["metrics"].items():
            for i in range(len(samples)):
                anchor = slug_anchor(f"{metric}-[{i}]")
                out.append(f'| <span id="{anchor}"></span>{esc(metric)} | {i} | {p.cite(mid, metric, i)} |')
        out.append("")
    if m.get("points"):
        charted = [k for k in load_vocab("metrics")["metrics"] if any(k in pt for pt in m["points"])]
        for metric in charted:
            series = charts.Series(
                mid,
                m["state"],
                [
                    _dot(p, mid, metric, None, pt["x"], float(pt["x"]), float(pt[metric]))
                    for pt in m["points"]
                    if isinstance(pt.get(metric), int | float) and not isinstance(pt.get(metric), bool)
                ],
            )
            unit = citations.unit_of(metric)
            label = load_vocab("metrics")["metrics"][metric]["label"]
            out += [
                charts.svg(
                    [series],
                    m.get("axis") or "x",
                    f"{label} ({unit})" if unit else label,
                    m.get("axis") == "concurrency",
                    True,
                    mid,
                ),
                "",
            ]
        metric_keys = [
            k
            for k in dict.fromkeys(k for pt in m["points"] for k in pt)
            if k not in ("x", "samples")
            and all(
                isinstance(pt.get(k), int | float | type(None)) and not isinstance(pt.get(k), bool)
                for pt in m["points"]
            )
        ]
        out += [
            f"## Points along {esc(m.get('axis') or 'x')}\n",
            "| x | " + " | ".join(esc(k) for k in metric_keys) + " | samples |",
            "|---|" + "---|" * len(metric_keys) + "---|",
        ]
        for pt in m["points"]:
            cells = []
            for k in metric_keys:
                if isinstance(pt.get(k), int | float):
                    anchor = slug_anchor(f"{k}-{citations.selector(None, pt['x'])}")
                    cells.append(f'<span id="{anchor}"></span>{p.cite(mid, k, None, pt["x"])}')
                else:
                    cells.append("—")
            out.append(
                f"| {esc(citations.fmt_x(pt['x']))} | " + " | ".join(cells) + f" | {esc(pt.get('samples', ''))} |"
            )
        out.append("")
    for key in ("quality", "caveat"):
        if m.get(key):
            out += [f"## {key.capitalize()}\n", p.prose(m[key]) + "\n"]
    out += ["## Evidence\n", p.evidence_list(file), "## Provenance\n", p.history(file)]
    return "\n".join(out) + "\n"


def _quarantine(p: Pages) -> str:
    out = [
        _front("Quarantine and closures"),
        "# Quarantine and closures\n",
        "Observed but invalid for promotion, kept with the reason; and deliberate stops of lines of work.\n",
        "## Quarantined measurements\n",
        "| Measurement | Reason |",
        "|---|---|",
    ]
    for mid, m in p.measurements.items():
        if m["state"] == "quarantined":
            out.append(f"| {p.link('measurement', mid)} | {p.prose(m.get('caveat') or m.get('quality') or '')} |")
    out += ["", "## Closures\n", *_closure_rows(p, p.records.get("closure", {}).values())]
    return "\n".join(out) + "\n"


def _defects(p: Pages) -> str:
    out = [
        _front("Known data defects"),
        "# Known data defects\n",
        "Findings on imported lab data that are genuine defects of that data. They are accepted in the "
        "reviewed baseline (`packets/baseline.json`) so that CI can pass, and shown here rather than hidden. "
        "Typed figures in prose are marked where they appear.\n",
        "| Code | Where | Finding | Why accepted |",
        "|---|---|---|---|",
    ]
    for code, file, pointer, message, reason in p.defects:
        out.append(
            f"| <code>{escape(code)}</code> | <code>{escape(file)}</code> <code>{escape(pointer)}</code> | "
            f"{p._literal(message)} | {p._literal(reason)} |"
        )
    return "\n".join(out) + "\n"


def _downloads(p: Pages, files: list[tuple[str, str, int]]) -> str:
    out = [
        _front("Data downloads"),
        "# Data downloads\n",
        "The whole catalog, one file per table, as Parquet and JSON Lines (`evreg export parquet`). "
        "The same rows the site is built from; query them with DuckDB, e.g. "
        "`duckdb -c \"SELECT * FROM 'samples.parquet' LIMIT 5\"`.\n",
        "| File | Bytes | sha256 |",
        "|---|---|---|",
    ]
    for name, sha, size in files:
        out.append(f'| <a href="{name}">{escape(name)}</a> | {size} | <code>{sha}</code> |')
    if files:
        out.append('\nChecksums: <a href="SHA256SUMS">SHA256SUMS</a>\n')
    return "\n".join(out) + "\n"


def _grades_page(p: Pages) -> str:
    rubric = load_vocab("rubric")
    out = [
        _front("Grade rubric"),
        "# Grade rubric (EVID)\n",
        f"Rubric version {rubric['version']}, read from `registry/vocab/rubric.json`; the validator checks "
        "every declared grade against it (`grade-unsupported`).\n",
        f"**Attached evidence.** {esc(rubric['attached_evidence'])}\n",
        "| Grade | Meaning | Requires |",
        "|---|---|---|",
    ]
    for g, spec in rubric["grades"].items():
        out.append(f"| {g} | {esc(spec['meaning'])} | {', '.join(f'<code>{c}</code>' for c in spec['requires'])} |")
    out += ["", "## Checks\n", "| Check | What it requires |", "|---|---|"]
    out += [f"| <code>{c}</code> | {esc(text)} |" for c, text in rubric["checks"].items()]
    return "\n".join(out) + "\n"


def _rules_page(p: Pages) -> str:
    from registry import rules

    out = [
        _front("Rule reference"),
        "# Rule reference\n",
        "Every finding code the validator reports (`evreg explain CODE` prints the same).\n",
    ]
    for doc in sorted(rules.code_docs(rules.discover()).values(), key=lambda d: d.code):
        out += [f"## {doc.code}\n", f"**{esc(doc.title)}.** {esc(doc.why)}\n", f"*Fix:* {esc(doc.hint)}\n"]
        if doc.example:
            out.append(f"*Fails, for example:* <code>{escape(doc.example)}</code>\n")
    return "\n".join(out) + "\n"


def _schema_page(p: Pages) -> str:
    from registry import schemas

    out = [
        _front("Schema reference"),
        "# Schema reference\n",
        "One JSON Schema (draft 2020-12) per record kind, generated from the record models and committed in "
        "`schema/`. Unknown fields are kept.\n",
    ]
    for name, text in schemas.generate().items():
        schema = json.loads(text)
        out += [
            f"## {esc(name.removesuffix('.schema.json'))}\n",
            f"`schema/{name}` · `$id` <code>{escape(schema['$id'])}</code>\n",
            "| Field | Required | Description |",
            "|---|---|---|",
        ]
        required = set(schema.get("required", []))
        for field, spec in schema.get("properties", {}).items():
            out.append(
                f"| <code>{escape(field)}</code> | {'yes' if field in required else ''} | "
                f"{esc(spec.get('description', ''))} |"
            )
        out.append("")
    return "\n".join(out) + "\n"
