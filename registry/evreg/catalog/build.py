"""The DuckDB catalog: every record of the store as normalized tables.

``build`` writes the database to a temporary file and renames it into place,
so a reader or a second build never sees a half-written catalog.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from collections import ChainMap
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import duckdb_engine
import orjson

from evreg.catalog import file as catalogfile
from evreg.catalog import reuse, tables

# The query sandbox lives in evreg.catalog.file (DuckDB only: `evreg query` on a fresh catalog imports neither
# SQLAlchemy nor SQLModel); its names stay reachable here.
from evreg.catalog.file import (  # noqa: F401
    QUERY_ADDRESS_SPACE,
    QUERY_MAX_ROWS,
    QUERY_TIMEOUT_S,
    SANDBOX,
    QueryRefused,
    query,
)
from evreg.claims import citations
from evreg.core import codebase, gz
from evreg.core.evidence import parse_ref
from evreg.core.findings import Finding
from evreg.core.jsonio import write_atomic
from evreg.core.layout import family_scoped
from evreg.core.vocab import promotable
from evreg.records.models import revisions_of
from evreg.store import (
    MEASUREMENT_KINDS,
    ById,
    Document,
    EvidenceState,
    Reads,
    Registry,
    no_cycle_collection,
    recording,
    workers,
)
from evreg.store.provenance import Change


def fingerprint(registry: Registry, head: str | None, findings: list[Finding]) -> str:
    """Identifies what a catalog is built from without reading the records: the schema
    version, the code that makes its rows (``codebase.digest``), the commit (for provenance),
    every unit's digest (a git tree id, or a hash of its files' blob ids) and the validator's findings."""
    h = hashlib.sha256(f"schema {tables.SCHEMA_VERSION} code {codebase.digest()} head {head}\n".encode())
    for unit in sorted(registry.unit_paths):
        h.update(f"{unit} {registry.digest(unit)}\n".encode())
    for finding in findings:
        h.update(finding.model_dump_json().encode() + b"\n")
    return h.hexdigest()


def unit_rows(registry: Registry, unit: str, paths: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Rows of the records of one unit, or of its files at ``paths`` (records, families, ...,
    evidence, citations), in their staged shape (``STAGED``)."""
    view = registry.scoped([unit]) if paths is None else registry.view(paths)
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in UNIT_TABLES}
    # Citations resolve as in validation: a measurement of the unit itself first.
    own = {m.id: m.data for m in view.records(*MEASUREMENT_KINDS)}
    measurements: ChainMap[str, Any] = ChainMap(own, ById(registry, MEASUREMENT_KINDS, data=True))  # type: ignore[arg-type]  # ById is a read-only Mapping: ChainMap only reads the maps after the first
    files: dict[str, tuple[bool, int | None, str | None]] = {}
    for doc in view.records():
        data, fam, kind, rid, path = doc.data, doc.place.family, doc.kind, doc.id, doc.path
        scoped = kind is not None and family_scoped(kind)
        out["records"].append(
            {
                "key": f"{kind}/{fam}/{rid}" if scoped else f"{kind}/{rid}",
                "kind": kind,
                "id": rid,
                "family": fam,
                "packet": doc.place.packet,
                "file": path,
                "blob": doc.blob,
                "content": data,  # staged as JSON; DuckDB keeps its compact text
            }
        )
        if kind == "family":
            _family_rows(out, fam, path, data)
        elif kind == "packet":
            _packet_rows(out, fam, rid, path, data)
        elif kind in MEASUREMENT_KINDS:
            _measurement(out, rid, kind, fam, doc.place.packet, path, data)
        _evidence_rows(out, registry, files, doc)
        _citation_rows(out, measurements, doc)
    return out


Rows = dict[str, list[dict[str, Any]]]


def _family_rows(out: Rows, fam: str | None, path: str, data: dict[str, Any]) -> None:
    """A family's row, and its revisions, artifacts and revision (capability) grades."""
    out["families"].append(
        {
            **{k: data.get(k) for k in ("id", "name", "display_name", "summary", "primary_packet_id")},
            "file": path,
        }
    )
    for _, rev in revisions_of(data):
        out["revisions"].append(
            {
                "key": f"{fam}/{rev['id']}",
                "id": rev["id"],
                "family": fam,
                **{k: rev.get(k) for k in ("label", "role", "model", "repository", "revision", "revision_status")},
            }
        )
        for art in rev.get("quantized_artifacts", []):
            out["artifacts"].append(
                {
                    "key": f"{fam}/{art['id']}",
                    "id": art["id"],
                    "family": fam,
                    "revision_id": rev["id"],
                    "pinned": bool(art.get("revision") or art.get("file_sha256")),
                    **{
                        k: art.get(k)
                        for k in (
                            "label",
                            "quantization",
                            "repository",
                            "revision",
                            "file_sha256",
                            "revision_status",
                        )
                    },
                }
            )
        cap = (rev.get("grades") or {}).get("capability")
        if cap:
            out["grades"].append(_grade(fam, "revision", rev["id"], "capability", cap))


def _packet_rows(out: Rows, fam: str | None, rid: str | None, path: str, data: dict[str, Any]) -> None:
    """A packet's row and its grades."""
    fm = data.get("featured_metric") or {}
    out["packets"].append(
        {
            "id": rid,
            "family": fam,
            "file": path,
            "featured_measurement": fm.get("measurement_id"),
            "featured_metric": fm.get("metric"),
            "featured_value": fm.get("value"),
            "featured_unit": fm.get("unit"),
            "featured_statistic": fm.get("statistic"),
            **{
                k: data.get(k)
                for k in (
                    "label",
                    "revision",
                    "artifact_id",
                    "quantization",
                    "runtime",
                    "cards",
                    "status",
                    "summary",
                )
            },
        }
    )
    for axis, grade in (data.get("grades") or {}).items():
        if isinstance(grade, dict) and "grade" in grade:
            out["grades"].append(_grade(fam, "packet", rid, axis, grade))


def _evidence_rows(
    out: Rows, registry: Registry, files: dict[str, tuple[bool, int | None, str | None]], doc: Document
) -> None:
    """A row per evidence reference of a record; local files hashed once per unit."""
    kind, rid, path = doc.kind, doc.id, doc.path
    for pointer, ref in doc.refs:
        parsed = parse_ref(ref)
        present = size = digest = None
        copy = registry.held(doc.place.family, ref) if parsed.kind == "external" else None
        held = copy.local if copy is not None else None
        local = ref if parsed.kind == "local" else held
        if local is not None:
            if local not in files:
                files[local] = _evidence_file(registry, local)
            present, size, digest = files[local]
        out["evidence"].append(
            {
                "key": f"{path}#{pointer}",
                "record_kind": kind,
                "record_id": rid,
                "file": path,
                "pointer": pointer,
                "ref": ref,
                "ref_kind": parsed.kind,
                "source": parsed.source,
                "path": parsed.path,
                "sha256": digest,
                "bytes": size,
                "present": present,
                "held": held,
            }
        )


def _citation_rows(out: Rows, measurements: Mapping[str, Any], doc: Document) -> None:
    """A row per citation in a record's prose (a derived figure: one per side), with the value it resolves to
    (as validation resolves it)."""
    for pointer, text in doc.prose:
        for form in citations.parse(text):
            sides = () if isinstance(form, citations.CitationError) else citations.cited(form)
            for side, c in enumerate(sides):
                resolved = citations.resolve(c, measurements)
                ok = resolved if isinstance(resolved, citations.Resolved) else None
                out["citations"].append(
                    {
                        "key": f"{doc.path}#{pointer}@{c.start}" + (f":{side}" if side else ""),
                        "record_kind": doc.kind,
                        "record_id": doc.id,
                        "file": doc.path,
                        "field": pointer,
                        "measurement": c.measurement,
                        "metric": c.metric,
                        "selector": c.selector,
                        "value": ok.value if ok else None,
                        "text": ok.text if ok else None,
                    }
                )


def _evidence_file(registry: Registry, ref: str) -> tuple[bool, int | None, str | None]:
    if registry.evidence(ref) is not EvidenceState.FILE:
        return False, None, None
    content = registry.read_file(ref)
    return True, len(content), hashlib.sha256(content).hexdigest()


def store_rows(
    registry: Registry,
    findings: list[Finding],
    history: dict[str, list[Change]],
    idents: Mapping[str, Identity] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Rows that are not of one unit: findings and provenance. A changed file's record kind and id come
    from ``idents`` (what the unit workers read) when given: read here, every record of the registry
    would be parsed again in one process and held (2.7 GiB at 100k)."""
    out: dict[str, list[dict[str, Any]]] = {"findings": [], "provenance": []}
    for i, f in enumerate(findings):
        out["findings"].append(
            {
                "key": f"{i:07d}",
                "code": f.code,
                "severity": f.severity.value,
                "file": f.file,
                "pointer": f.pointer,
                "line": f.line,
                "col": f.column,
                "message": f.message,
                "hint": f.hint,
                "record_kind": f.record.kind if f.record else None,
                "record_id": f.record.id if f.record else None,
                "baselined": f.baselined,
                "baseline_reason": f.baseline_reason,
            }
        )
    for path, changes in history.items():
        if idents is None:
            doc = registry.document(path)
            kind, rid = (doc.kind, doc.id) if doc else (None, None)
        else:
            kind, rid = idents.get(path, (None, None))
        for seq, ch in enumerate(changes):
            out["provenance"].append(
                {
                    "key": f"{path}@{seq}",
                    "path": path,
                    "record_kind": kind,
                    "record_id": rid,
                    "seq": seq,
                    "commit": ch.commit,
                    "author": ch.author,
                    "date": ch.date,
                    "change": ch.change,
                }
            )
    return out


def _grade(family: str | None, kind: str, rid: str | None, axis: str, g: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": f"{kind}/{rid}/{axis}",
        "family": family,
        "record_kind": kind,
        "record_id": rid,
        "axis": axis,
        "grade": g.get("grade"),
        "scope": g.get("scope"),
        "basis": g.get("basis"),
        "reviewed_at": g.get("reviewed_at"),
        "evidence_count": len(g.get("evidence") or []),
    }


def _measurement_row(
    mid: str | None,
    kind: str | None,
    fam: str | None,
    packet: str | None,
    path: str,
    data: dict[str, Any],
) -> dict[str, Any]:
    """The ``measurements`` row of one measurement record."""
    config = data.get("config") or {}
    tp = config.get("tp")
    retired = data.get("retired")
    return {
        "id": mid,
        "kind": kind,
        "family": fam,
        "packet": packet,
        "state": data["state"],
        "promotable": promotable(data) is None,
        "tp": tp if isinstance(tp, int | float) and not isinstance(tp, bool) else None,
        "config": config or None,  # staged as JSON; DuckDB keeps its compact text
        "retired": retired.get("reason") if isinstance(retired, dict) else None,
        "file": path,
        **{
            k: data.get(k)
            for k in (
                "revision",
                "artifact_id",
                "quantization",
                "runtime",
                "runtime_family",
                "workload",
                "measurement_class",
                "axis",
                "quality",
                "caveat",
                "evidence",
                "supersedes",
            )
        },
    }


def _sample_rows(mid: str | None, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``samples`` rows of one measurement record."""
    return [  # one staged row per metric: see STAGED
        {"measurement": mid, "metric": metric, "unit": citations.unit_of(metric), "samples": samples}
        for metric, samples in (data.get("metrics") or {}).items()
    ]


def _point_rows(mid: str | None, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``points`` rows of one measurement record: one per numeric value of each point."""
    rows = []
    for p in data.get("points") or []:
        for metric, v in p.items():
            if metric in ("x", "samples") or isinstance(v, bool) or not isinstance(v, int | float):
                continue
            rows.append(
                {
                    "key": f"{mid}/{metric}@{p['x']}",
                    "measurement": mid,
                    "axis": data.get("axis"),
                    "x": float(p["x"]),
                    "metric": metric,
                    "value": float(v),
                    "unit": citations.unit_of(metric),
                    "samples": p.get("samples") if isinstance(p.get("samples"), int) else None,
                }
            )
    return rows


def _measurement(
    out: dict[str, list[dict[str, Any]]],
    mid: str | None,
    kind: str | None,
    fam: str | None,
    packet: str | None,
    path: str,
    data: dict[str, Any],
) -> None:
    """Add the rows of one measurement record to ``out``: measurement, samples, points."""
    out["measurements"].append(_measurement_row(mid, kind, fam, packet, path, data))
    out["samples"].extend(_sample_rows(mid, data))
    out["points"].extend(_point_rows(mid, data))


def ddl() -> list[str]:
    """CREATE TABLE statements from the SQLModel declarations. Columns keep their types and
    NOT NULL; keys are not enforced as primary keys, so a store with a duplicate id (a
    validation finding) still gets a catalog, with both rows."""
    dialect = duckdb_engine.Dialect()
    out = []
    for table in [tables.Meta, *tables.TABLES]:
        columns = ", ".join(
            f"{c.name} {c.type.compile(dialect=dialect)}{'' if c.nullable else ' NOT NULL'}"
            for c in table.__table__.columns  # type: ignore[attr-defined]
        )
        out.append(f"CREATE TABLE {table.__tablename__} ({columns})")  # type: ignore[attr-defined]
    return out


UNIT_TABLES = tuple(str(t.__tablename__) for t in tables.TABLES if t.__tablename__ not in ("findings", "provenance"))


STAGED = {
    "samples": (
        {"measurement": "VARCHAR", "metric": "VARCHAR", "unit": "VARCHAR", "samples": "DOUBLE[]"},
        "SELECT concat(measurement, '/', metric, '/', idx) AS key, measurement, metric, idx, value, unit FROM ("
        "SELECT measurement, metric, unit, unnest(samples) AS value, generate_subscripts(samples, 1) - 1 AS idx "
        "FROM {source})",
    )
}
"""Tables staged in another shape than their rows, as (staged columns, SELECT of the rows
from ``{source}``). A run's samples are staged as one list per metric and numbered by
DuckDB: a row object per sample value was the largest Python cost of the build."""


Identity = reuse.Identity
"""A file's record kind (None unless it is a valid record) and id, as a provenance row names them."""


def _write_unit_rows(
    registry: Registry, unit: str, paths: list[str], folders: Mapping[str, Path]
) -> tuple[dict[str, Identity], dict[str, str]]:
    """Stage the rows of a unit's records at ``paths`` as JSON arrays, one file per table, in the unit's folder;
    return the kind and id of each of its files (for provenance, so the parent need not read them again) and what
    the rows read outside the unit, with fingerprints (``Reads``: what a cached entry of the unit depends on)."""
    name = hashlib.sha1(f"{unit}\0{paths[0] if paths else ''}".encode(), usedforsecurity=False).hexdigest()
    with recording(Reads(registry, unit)) as reads:
        _stage(unit_rows(registry, unit, paths), folders[unit], name)
        view = registry.view(paths)
        idents = {d.path: (d.kind, d.id) for d in view.documents}
    return idents, reads.deps


def _stage(rows: dict[str, list[dict[str, Any]]], folder: Path, name: str) -> None:
    for table, items in rows.items():
        if items:
            (folder / f"{table}.{name}.json").write_bytes(orjson.dumps(items, option=orjson.OPT_SORT_KEYS))


def _load_staged(con: duckdb.DuckDBPyConnection, staged: Iterable[Path]) -> None:
    """Bulk-load the staged JSON arrays (named ``TABLE.PART.json``), largest table first and several tables at
    once: DuckDB appends to different tables concurrently, and one table's load leaves a core idle."""
    by_table: dict[str, list[str]] = {}
    for f in staged:
        by_table.setdefault(f.name.split(".", 1)[0], []).append(str(f))
    jobs = []
    for table in table_names():
        parts = sorted(by_table.get(table, []))
        if parts:
            jobs.append((sum(os.path.getsize(p) for p in parts), table, parts))

    queue = sorted(jobs)  # popped from the end: largest first

    def drain(cur: duckdb.DuckDBPyConnection) -> None:
        while queue:
            try:
                _size, table, parts = queue.pop()
            except IndexError:  # another thread took the last one
                return
            if table in STAGED:
                types, select = STAGED[table]
            else:
                types = dict(
                    cur.execute(
                        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table]
                    ).fetchall()
                )
                select = "SELECT * FROM {source}"
            columns = "{" + ", ".join(f"'{c}': '{t}'" for c, t in types.items()) + "}"
            source = f"read_json(?, format = 'array', columns = {columns})"
            cur.execute(f"INSERT INTO {table} BY NAME {select.format(source=source)}", [parts])

    cursors = [con.cursor() for _ in range(max(1, min(len(jobs), workers.cores())))]  # one per thread
    try:
        with ThreadPoolExecutor(max_workers=len(cursors)) as pool:
            list(pool.map(drain, cursors))
    finally:
        for cur in cursors:
            cur.close()


def build(
    registry: Registry,
    findings: list[Finding],
    history: dict[str, list[Change]],
    db: Path,
    meta: dict[str, str],
    cache: reuse.RowCache | None = None,
) -> dict[str, int]:
    """Write the catalog to ``db`` atomically. Returns row counts per table.

    Rows are made unit by unit (in worker processes on a large store) and staged as JSON
    arrays that DuckDB loads in bulk (see ``STAGED``; exports order rows by key). With a
    ``cache``, a unit whose cached rows hold for the store as it is (``reuse``) is not made
    again: its staged rows are loaded from the cache, and the rows made are stored there.
    Cached rows DuckDB cannot load (an entry edited by hand) are dropped and every row made again."""
    try:
        return _build(registry, findings, history, db, meta, cache)
    except duckdb.Error:
        if cache is None or not cache.reused:
            raise
        cache.clear()
        return _build(registry, findings, history, db, meta, cache)


def _build(
    registry: Registry,
    findings: list[Finding],
    history: dict[str, list[Change]],
    db: Path,
    meta: dict[str, str],
    cache: reuse.RowCache | None,
) -> dict[str, int]:
    db.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{db.name}.", suffix=".tmp", dir=db.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()  # DuckDB creates the file itself
    try:
        with no_cycle_collection(), tempfile.TemporaryDirectory(prefix=".rows-", dir=db.parent) as staging:
            folder = Path(staging)
            kept = cache.reusable(registry) if cache is not None else {}
            todo = [u for u in registry.unit_paths if u not in kept]
            folders = {
                u: cache.new_folder(folder) if cache is not None else Path(tempfile.mkdtemp(dir=folder)) for u in todo
            }
            try:
                parts = workers.map_units(
                    registry, todo, functools.partial(_write_unit_rows, folders=folders), "cataloguing"
                )
            except BaseException:
                for made in folders.values():
                    shutil.rmtree(made, ignore_errors=True)
                raise
            entries = dict(kept)
            for unit, results in parts.items():
                deps = {dep: fp for _, part_deps in results for dep, fp in part_deps.items()}
                idents = {path: ident for part_idents, _ in results for path, ident in part_idents.items()}
                entries[unit] = (
                    cache.store(registry, unit, folders[unit], deps, idents)
                    if cache is not None
                    else reuse.Entry(folders[unit], sorted(p.name for p in folders[unit].iterdir()), idents)
                )
            idents = {path: ident for e in entries.values() for path, ident in e.idents.items()}
            _stage(store_rows(registry, findings, history, idents), folder, "store")
            staged = [f for e in entries.values() for f in e.staged()]
            staged += folder.glob("*.store.json")
            con = duckdb.connect(str(tmp))
            try:
                con.execute("SET enable_progress_bar = false")
                con.execute("SET preserve_insertion_order = false")  # exports order rows by key
                con.execute("SET force_compression = 'zstd'")  # as small as the default, less work to write
                for statement in ddl():
                    con.execute(statement)
                _load_staged(con, staged)
                appender = con.appender("catalog_meta")
                appender.append_rows(sorted(meta.items()))
                appender.flush()
                for name, sql in tables.VIEWS.items():
                    con.execute(f"CREATE VIEW {name} AS {sql}")
                con.execute("CHECKPOINT")
                counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in table_names()}
            finally:
                con.close()
            if cache is not None:
                cache.prune({e.folder for e in entries.values()})
                for e in entries.values():
                    if e.folder.name.startswith(".new-"):  # not stored (another run stored the same address)
                        shutil.rmtree(e.folder, ignore_errors=True)
        os.replace(tmp, db)
        return counts
    finally:
        for leftover in (tmp, Path(str(tmp) + ".wal")):
            leftover.unlink(missing_ok=True)


def read_meta(db: Path) -> dict[str, str] | None:
    """The catalog's meta table, or None when the file is missing, corrupt or of another schema."""
    meta = catalogfile.read_meta(db)
    return meta if meta is not None and meta.get("schema_version") == str(tables.SCHEMA_VERSION) else None


def export_tables(db: Path, out_dir: Path, kept: gz.Kept | None = None) -> list[str]:
    """Parquet and gzip'd JSON Lines (``.jsonl.gz``) per table plus SHA256SUMS; deterministic bytes. JSON Lines
    are compressed: uncompressed they were 98 % of the downloads' bytes (118 of 121 MB at 10,000 measurements).
    DuckDB writes them plain and ``evreg.core.gz`` compresses them: DuckDB's own gzip took three times the CPU of
    the standard library's for the same size (the records' table at 100,000 measurements: 9.5 CPU s against
    2.5 + 3.0). ``kept``: the compressed pieces an earlier export made (the same bytes), pruned to this export's."""
    out_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), read_only=True)
    names = []
    try:
        con.execute("SET threads = 1")
        con.execute("SET enable_progress_bar = false")
        for table in tables.TABLES:
            name = table.__tablename__
            order = "key" if "key" in table.__table__.columns else "id"  # type: ignore[attr-defined]
            rows = f"SELECT * FROM {name} ORDER BY {order}"
            tmp = out_dir / f".{name}.{os.getpid()}.tmp"
            try:
                con.execute(f"COPY ({rows}) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd)")
                os.replace(tmp, out_dir / f"{name}.parquet")
                con.execute(f"COPY ({rows}) TO '{tmp}' (FORMAT json)")
                gz.compress_file(tmp, out_dir / f"{name}.jsonl.gz", kept)
            finally:
                tmp.unlink(missing_ok=True)
            names += [f"{name}.parquet", f"{name}.jsonl.gz"]
            (out_dir / f"{name}.jsonl").unlink(missing_ok=True)  # an earlier export's uncompressed file
    finally:
        con.close()
    if kept is not None:
        kept.prune()
    sums = "".join(f"{hashlib.sha256((out_dir / n).read_bytes()).hexdigest()}  {n}\n" for n in sorted(names))
    write_atomic(out_dir / "SHA256SUMS", sums)
    return sorted(names)


def counts(db: Path) -> dict[str, int]:
    """Rows of every catalog table, on one read-only connection (our own statement: no sandbox to set up per table)."""
    names = list(table_names())
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT " + ", ".join(f"(SELECT count(*) FROM {n})" for n in names)).fetchone()
    finally:
        con.close()
    assert row is not None
    return dict(zip(names, row, strict=True))


def table_names() -> Iterable[str]:
    return [str(t.__tablename__) for t in tables.TABLES]
