"""The site's own pages, of no one record: home, the indexes of families, packets and measurements, the
comparisons, quarantine and closures, known data defects, the data downloads, and the reference (grade rubric,
rules, schemas)."""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from evreg.core import jsonio
from evreg.core.vocab import load as load_vocab
from evreg.site import compare
from evreg.site.cite import Pages
from evreg.site.family import closure_rows
from evreg.site.headline import featured_rows
from evreg.site.html import Cell, Page, defect_anchor, doc_text, esc

if TYPE_CHECKING:
    from evreg.core.findings import Code  # the rule docs are handed in: rendering runs no rule code


def receipts_checked(p: Pages) -> str:
    """How many of the records' evidence references this build checked: the local files (present, hashed and
    re-read at their locators by the validation every build runs first), against the external ones and links."""
    refs = [ev for rows in p.evidence.values() for ev in rows]
    local = sum(ev.ref_kind == "local" and bool(ev.present) for ev in refs)
    external = [ev for ev in refs if ev.ref_kind == "external"]
    held = [ev for ev in external if ev.held and ev.present]
    links = sum(ev.ref_kind == "url" for ev in refs)
    files = len({(ev.source, ev.path) for ev in external})
    return (
        f"How far that holds: of the records' {len(refs)} evidence references, {local} are files this registry holds "
        f"and {len(held)} point into other repositories' files it holds copies of "
        f"({len({(ev.source, ev.path) for ev in held})} files, each with the commit it was read at): those are checked "
        "when this site was built (present, their sha256 computed, the samples re-read; the receipt at the foot of "
        f"each page names the commit). The other {len(external) - len(held)} point into the rest of {files} files "
        f"of other repositories, and {links} are links: those are not checked here, and each number's cell says "
        "“evidence not checked” (or “partly checked”) where its measurement rests on them."
    )


def home(p: Pages) -> Page:
    states = Counter(m["state"] for m in p.measurements.values())
    grades = Counter(
        g["grade"]
        for pk in p.records.get("packet", {}).values()
        for g in [(pk.get("grades") or {}).get("evidence")]
        if g
    )
    page = Page("Evidence registry")
    page.h(1, "Evidence registry for LLM inference results")
    page.p(
        "Every number here is a receipt: it links to the measurement that produced it, and the measurement "
        "names its exact weights, quantized artifact, runtime, hardware, configuration, workload and evidence."
    )
    page.p(receipts_checked(p))
    page.h(2, "What the registry holds")
    page.p(
        f"{len(p.records.get('family', {}))} families, {len(p.records.get('packet', {}))} packets and "
        f"{len(p.measurements)} measurements."
    )
    page.table(["State", "Measurements"], [[p.state(s), str(n)] for s, n in sorted(states.items())])
    page.table(["Evidence grade (EVID)", "Packets"], [[esc(g), str(n)] for g, n in sorted(grades.items())])
    page.h(2, "Declared headlines")
    page.p(
        "Headlines are declared by each family (its featured results and primary packet), never computed as a maximum."
    )
    for fid, fam in p.records.get("family", {}).items():
        page.h(3, p.link("family", fid, fam.get("display_name") or fam["name"]))
        featured_rows(p, page, fam)
        if fam.get("primary_packet_id"):
            page.p(f"Primary packet: {p.link('packet', fam['primary_packet_id'])}")
    added = []
    for pid, _pk in p.records.get("packet", {}).items():
        hist = p.provenance.get(p.where[("packet", pid)].file)
        if hist:
            added.append((hist[0].date, pid, hist[0].author))
    page.h(2, "Recently added packets")
    page.table(
        ["Packet", "Added", "By"],
        [
            [p.link("packet", pid), esc(date[:10]), esc(author)]
            for date, pid, author in sorted(added, reverse=True)[:10]
        ],
    )
    return page


def families_index(p: Pages) -> Page:
    page = Page("Families")
    page.h(1, "Model families")
    rows = []
    for fid, fam in p.records.get("family", {}).items():
        packets, ms = len(p.family_records("packet", fid)), len(p.of_family.get(fid, ()))
        rows.append(
            [p.link("family", fid, fam["name"]), str(len(fam.get("weight_revisions", []))), str(packets), str(ms)]
        )
    page.table(["Family", "Revisions", "Packets", "Measurements"], rows)
    return page


def packets_index(p: Pages) -> Page:
    """Every packet, by family (in the family list's order): a family's rows are a piece of the page kept by what they
    read (``Pages.piece``), so a new packet remakes and scans its family's rows, not the page's 40,000."""
    page = Page("Packets")
    page.h(1, "Result packets")
    by_family: dict[str, list[str]] = defaultdict(list)
    for pid in p.records.get("packet", {}):
        by_family[str(p.where[("packet", pid)].family)].append(pid)
    families = p.records.get("family", {})
    order = [*(f for f in families if f in by_family), *sorted(set(by_family) - set(families))]
    page.add("<table><thead><tr><th>Packet</th><th>Family</th><th>Grades</th><th>Status</th></tr></thead>")
    for fid in order:
        pids = by_family[fid]
        rows = functools.partial(_family_packets, p, fid, pids)
        page.piece(*p.piece(("packets", fid, *pids), rows, ("<table>", "</table>")))
    page.add("</table>")
    return page


def _family_packets(p: Pages, fid: str, pids: list[str], page: Page) -> None:
    """A family's packets as a ``tbody``, led by the family's name (fixed words: no figure runs into it from the rows
    before)."""
    n = f"{len(pids)} packet{'s' if len(pids) != 1 else ''}"
    rows = []
    for pid in pids:
        pk = p.records["packet"][pid]
        cells = [
            f"{p.link('packet', pid, pk.get('label') or pid)} <code>{esc(pid)}</code>",
            esc(fid),
            " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items()),
            esc(pk.get("status", "")),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    name = p.link("family", fid) if fid in p.records.get("family", {}) else esc(fid)  # a family with no page: text
    head = f'<tr><th colspan="4" scope="rowgroup">Family: {name} ({n})</th></tr>'
    page.add(f"<tbody>{head}{''.join(rows)}</tbody>")


def measurements_index(p: Pages) -> Page:
    """Where the measurements are: each one is a section of its packet's page, or of its family's page of
    measurements filed in no packet (a page per measurement does not scale to 100,000)."""
    page = Page("Measurements", search=False)
    page.h(1, "Measurements")
    page.p(
        "Each measurement is a section of its packet's page (<code>packets/PACKET/#m-ID</code>), or of its "
        "family's page of measurements filed in no packet (<code>families/FAMILY/measurements/#m-ID</code>). "
        "Search finds them by id."
    )
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for mid in p.measurements:
        row = p.measurement_where(mid)
        counts[str(row.family)]["packet" if row.packet else "loose"] += 1
    rows = []
    for fid in [*p.records.get("family", {}), *sorted(set(counts) - set(p.records.get("family", {})))]:
        c = counts.get(fid)
        if not c:
            continue
        loose = f'<a href="{p.base}families/{esc(fid)}/measurements/">{c["loose"]}</a>' if c["loose"] else "0"
        rows.append([p.link("family", fid), str(c["packet"] + c["loose"]), str(c["packet"]), loose])
    page.table(["Family", "Measurements", "In packets", "In no packet"], rows)
    return page


def comparisons(p: Pages, metrics: list[str]) -> Page:
    page = Page("Comparisons")
    compare.index_page(p, page, metrics)
    return page


def comparison(p: Pages, metric: str) -> Page:
    page = Page(f"Compare {compare.metric_title(metric)}", search=False)  # the index page is found; rows are not
    compare.metric_page(p, page, metric)
    return page


def quarantine(p: Pages) -> Page:
    page = Page("Quarantine and closures")
    page.h(1, "Quarantine and closures")
    page.p("Observed but invalid for promotion, kept with the reason; and deliberate stops of lines of work.")
    page.h(2, "Quarantined measurements")
    page.table(
        ["Measurement", "Reason"],
        [
            [p.link("measurement", mid), p.prose(m.get("caveat") or m.get("quality") or "")]
            for mid, m in p.measurements.items()
            if m["state"] == "quarantined"
        ],
    )
    page.h(2, "Closures")
    closure_rows(p, page, p.records.get("closure", {}).values())
    return page


def defects(p: Pages) -> Page:
    page = Page("Known data defects")
    page.h(1, "Known data defects")
    page.p(
        "Findings on imported lab data that are genuine defects of that data. They are accepted in the "
        "reviewed baseline (<code>packets/baseline.json</code>) so that CI can pass, and shown here rather than "
        "hidden. Typed figures in prose are marked where they appear, and a value of a record with an accepted "
        "defect is marked beside its grade with a link to its row here. The findings are grouped by the reason "
        "they were accepted for (one baseline entry can accept the same defect in many records)."
    )
    groups: dict[tuple[str, str], list[Any]] = {}
    for f in p.defects:
        groups.setdefault((f.code, f.baseline_reason or ""), []).append(f)
    for (code, reason), found in groups.items():  # each group a piece: the same findings, the same HTML
        shown = [(f.file, f.pointer, f.message) for f in found]
        group = functools.partial(_defects_group, p, code, reason, found)
        page.piece(*p.piece(("defects", code, reason, *shown), group, ("", "")))
    return page


def _defects_group(p: Pages, code: str, reason: str, found: list[Any], group: Page) -> None:
    """The findings accepted for one reason: the reason, and a row per finding (its own anchor)."""
    group.p(f"<code>{esc(code)}</code> ({len(found)}) · <strong>Why accepted:</strong> {p.literal(reason)}")
    group.table(
        ["Where", "Finding"],
        [
            [
                Cell(
                    f' id="{defect_anchor(f.code, f.file, f.pointer, f.message)}"',
                    f"<code>{esc(f.file)}</code> <code>{esc(f.pointer)}</code>",
                ),
                p.literal(f.message),
            ]
            for f in found
        ],
    )


def downloads(p: Pages, files: list[tuple[str, str, int]]) -> Page:
    page = Page("Data downloads")
    page.h(1, "Data downloads")
    page.p(
        "The whole catalog, one file per table, as Parquet and as JSON Lines compressed with gzip "
        "(<code>.jsonl.gz</code>: <code>gzip -dc FILE.jsonl.gz</code> gives one JSON object per row; "
        "<code>evreg export parquet</code> writes the same files). "
        "The same rows the site is built from; query them with DuckDB, e.g. "
        "<code>duckdb -c \"SELECT * FROM 'samples.parquet' LIMIT 5\"</code>."
    )
    page.table(
        ["File", "Bytes", "sha256"],
        [
            [f'<a href="{esc(name)}">{esc(name)}</a>', str(size), f"<code>{esc(sha)}</code>"]
            for name, sha, size in files
        ],
    )
    if files:
        page.p('Checksums: <a href="SHA256SUMS">SHA256SUMS</a>')
    return page


def grades_page(p: Pages) -> Page:
    rubric = load_vocab("rubric")
    page = Page("Grade rubric")
    page.h(1, "Grade rubric (EVID)")
    page.p(
        f"Rubric version {esc(rubric['version'])}, read from <code>registry/evreg/vocab/rubric.json</code>; "
        "the validator checks every declared grade against it (<code>grade-unsupported</code>)."
    )
    page.p(f"<strong>Attached evidence.</strong> {esc(rubric['attached_evidence'])}")
    page.table(
        ["Grade", "Meaning", "Requires"],
        [
            [esc(g), esc(spec["meaning"]), ", ".join(f"<code>{esc(c)}</code>" for c in spec["requires"])]
            for g, spec in rubric["grades"].items()
        ],
    )
    page.h(2, "Checks")
    page.table(["Check", "What it requires"], [[f"<code>{esc(c)}</code>", esc(t)] for c, t in rubric["checks"].items()])
    return page


def rules_page(p: Pages, codes: list[Code]) -> Page:
    page = Page("Rule reference")
    page.h(1, "Rule reference")
    page.p("Every finding code the validator reports (<code>evreg explain CODE</code> prints the same).")
    for doc in sorted(codes, key=lambda d: d.code):
        page.h(2, esc(doc.code))
        page.p(f"<strong>{doc_text(doc.title)}.</strong> {doc_text(doc.why)}")
        page.p(f"<em>Fix:</em> {doc_text(doc.hint)}")
        if doc.example:
            page.p(f"<em>Fails, for example:</em> <code>{esc(doc.example)}</code>")
    return page


def schema_page(p: Pages) -> Page:
    from evreg.records import schemas

    page = Page("Schema reference")
    page.h(1, "Schema reference")
    page.p(
        "One JSON Schema (draft 2020-12) per record kind, generated from the record models and committed in "
        "<code>schema/</code>. Unknown fields are kept. Editors: <code>schema/record.schema.json</code> applies "
        "the schema of a record's <code>kind</code>; <code>.vscode/settings.json</code> maps every record file to it."
    )
    for name, text in schemas.generate().items():
        if name == schemas.RECORD_SCHEMA:
            continue
        schema = jsonio.loads(text)
        page.h(2, esc(name.removesuffix(".schema.json")))
        page.p(f"<code>schema/{esc(name)}</code> · <code>$id</code> <code>{esc(schema['$id'])}</code>")
        required = set(schema.get("required", []))
        page.table(
            ["Field", "Required", "Description"],
            [
                [f"<code>{esc(f)}</code>", "yes" if f in required else "", doc_text(spec.get("description", ""))]
                for f, spec in schema.get("properties", {}).items()
            ],
        )
    return page
