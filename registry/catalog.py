"""The DuckDB catalog: every record of the store as normalized tables.

``build`` writes the database to a temporary file and renames it into place,
so a reader or a second build never sees a half-written catalog.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
from sqlalchemy import create_engine
from sqlmodel import SQLModel

from registry import citations, tables
from registry.evidence import iter_refs, parse_ref
from registry.findings import Finding
from registry.jsonio import write_atomic
from registry.provenance import Change
from registry.store import MEASUREMENT_KINDS, Registry, Source, blob_id
from registry.vocab import promotable

DEFAULT_DB = "build/catalog.duckdb"


def fingerprint(source: Source, head: str | None) -> str:
    """Identifies the store content a catalog is built from, without parsing it:
    the schema version, the commit (for provenance) and every file's blob id."""
    h = hashlib.sha256(f"schema {tables.SCHEMA_VERSION} head {head}\n".encode())
    for entry in sorted(source.entries(), key=lambda e: e.path):
        blob = entry.blob or (blob_id(source.read(entry.path)) if entry.regular else "special")
        h.update(f"{entry.path} {blob}\n".encode())
    return h.hexdigest()


def rows(
    registry: Registry, findings: list[Finding], history: dict[str, list[Change]]
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t.__tablename__: [] for t in tables.TABLES}  # type: ignore[attr-defined]
    measurements = {d.id: d.data for d in registry.records(*MEASUREMENT_KINDS)}
    for doc in registry.records():
        data, fam = doc.data, doc.place.family
        scoped = doc.kind in ("view", "coverage-view", "coverage-contract", "closure")
        out["records"].append(
            {
                "key": f"{doc.kind}/{fam}/{doc.id}" if scoped else f"{doc.kind}/{doc.id}",
                "kind": doc.kind,
                "id": doc.id,
                "family": fam,
                "packet": doc.place.packet,
                "file": doc.path,
                "blob": doc.blob,
                "content": json.dumps(data, sort_keys=True, ensure_ascii=False),
            }
        )
        if doc.kind == "family":
            out["families"].append(
                {
                    **{k: data.get(k) for k in ("id", "name", "display_name", "summary", "primary_packet_id")},
                    "file": doc.path,
                }
            )
            for rev in data.get("weight_revisions", []):
                out["revisions"].append(
                    {
                        "key": f"{fam}/{rev['id']}",
                        "id": rev["id"],
                        "family": fam,
                        **{k: rev.get(k) for k in ("label", "role", "repository", "revision", "revision_status")},
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
        elif doc.kind == "packet":
            fm = data.get("featured_metric") or {}
            out["packets"].append(
                {
                    "id": doc.id,
                    "family": fam,
                    "file": doc.path,
                    "featured_measurement": fm.get("measurement_id"),
                    "featured_metric": fm.get("metric"),
                    "featured_value": fm.get("value"),
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
                    out["grades"].append(_grade(fam, "packet", doc.id, axis, grade))
        elif doc.kind in MEASUREMENT_KINDS:
            _measurement(out, doc.id, doc.kind, fam, doc.place.packet, doc.path, data)
        for pointer, ref in iter_refs(data):
            parsed = parse_ref(ref)
            present = size = digest = None
            if parsed.kind == "local":
                state = registry.source.evidence(ref)
                present = state.value == "file"
                if present:
                    content = registry.source.read(ref)
                    size, digest = len(content), hashlib.sha256(content).hexdigest()
            out["evidence"].append(
                {
                    "key": f"{doc.path}#{pointer}",
                    "record_kind": doc.kind,
                    "record_id": doc.id,
                    "file": doc.path,
                    "pointer": pointer,
                    "ref": ref,
                    "ref_kind": parsed.kind,
                    "source": parsed.source,
                    "path": parsed.path,
                    "sha256": digest,
                    "bytes": size,
                    "present": present,
                }
            )
        for pointer, text in citations.iter_prose(data):
            for c in citations.parse(text):
                if isinstance(c, citations.CitationError):
                    continue
                resolved = citations.resolve(c, measurements)
                ok = isinstance(resolved, citations.Resolved)
                out["citations"].append(
                    {
                        "key": f"{doc.path}#{pointer}@{c.start}",
                        "record_kind": doc.kind,
                        "record_id": doc.id,
                        "file": doc.path,
                        "field": pointer,
                        "measurement": c.measurement,
                        "metric": c.metric,
                        "selector": c.selector,
                        "value": resolved.value if ok else None,  # type: ignore[union-attr]
                        "text": resolved.text if ok else None,
                    }
                )  # type: ignore[union-attr]
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
        doc = registry.by_path.get(path)
        for seq, ch in enumerate(changes):
            out["provenance"].append(
                {
                    "key": f"{path}@{seq}",
                    "path": path,
                    "record_kind": doc.kind if doc else None,
                    "record_id": doc.id if doc else None,
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


def _measurement(
    out: dict[str, list[dict[str, Any]]],
    mid: str | None,
    kind: str | None,
    fam: str | None,
    packet: str | None,
    path: str,
    data: dict[str, Any],
) -> None:
    config = data.get("config") or {}
    tp = config.get("tp")
    retired = data.get("retired")
    out["measurements"].append(
        {
            "id": mid,
            "kind": kind,
            "family": fam,
            "packet": packet,
            "state": data["state"],
            "promotable": promotable(data) is None,
            "tp": tp if isinstance(tp, int | float) and not isinstance(tp, bool) else None,
            "config": json.dumps(config, sort_keys=True, ensure_ascii=False) if config else None,
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
    )
    for metric, samples in (data.get("metrics") or {}).items():
        unit = citations.unit_of(metric)
        for i, v in enumerate(samples):
            out["samples"].append(
                {
                    "key": f"{mid}/{metric}/{i}",
                    "measurement": mid,
                    "metric": metric,
                    "idx": i,
                    "value": float(v),
                    "unit": unit,
                }
            )
    for p in data.get("points") or []:
        for metric, v in p.items():
            if metric in ("x", "samples") or isinstance(v, bool) or not isinstance(v, int | float):
                continue
            out["points"].append(
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


def _create_schema(path: Path) -> None:
    engine = create_engine(f"duckdb:///{path}")
    try:
        SQLModel.metadata.create_all(engine, tables=[t.__table__ for t in [tables.Meta, *tables.TABLES]])  # type: ignore[attr-defined]
    finally:
        engine.dispose()


def build(
    registry: Registry, findings: list[Finding], history: dict[str, list[Change]], db: Path, meta: dict[str, str]
) -> dict[str, int]:
    """Write the catalog to ``db`` atomically. Returns row counts per table."""
    db.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{db.name}.", suffix=".tmp", dir=db.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()  # DuckDB creates the file itself
    try:
        _create_schema(tmp)
        data = rows(registry, findings, history)
        con = duckdb.connect(str(tmp))
        try:
            con.execute("SET enable_progress_bar = false")
            counts = {}
            for table in tables.TABLES:
                name = table.__tablename__  # type: ignore[attr-defined]
                columns = [c.name for c in table.__table__.columns]  # type: ignore[attr-defined]
                items = sorted(data[name], key=lambda r: str(r.get("key") or r.get("id")))
                appender = con.appender(name)
                appender.append_rows([tuple(r.get(c) for c in columns) for r in items])
                appender.flush()
                counts[name] = len(items)
            appender = con.appender("catalog_meta")
            appender.append_rows(sorted(meta.items()))
            appender.flush()
            for name, sql in tables.VIEWS.items():
                con.execute(f"CREATE VIEW {name} AS {sql}")
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, db)
        return counts
    finally:
        for leftover in (tmp, Path(str(tmp) + ".wal")):
            leftover.unlink(missing_ok=True)


def read_meta(db: Path) -> dict[str, str] | None:
    """The catalog's meta table, or None when the file is missing, corrupt or of another schema."""
    if not db.exists():
        return None
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return None
    try:
        meta = dict(con.execute("SELECT key, value FROM catalog_meta").fetchall())
    except duckdb.Error:
        return None
    finally:
        con.close()
    return meta if meta.get("schema_version") == str(tables.SCHEMA_VERSION) else None


def query(db: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL. Raises duckdb.Error with DuckDB's message."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute("SET enable_progress_bar = false")
        cur = con.execute(sql)
        columns = [d[0] for d in cur.description] if cur.description else []
        return columns, cur.fetchall()
    finally:
        con.close()


def export_tables(db: Path, out_dir: Path) -> list[str]:
    """Parquet and JSON Lines per table plus SHA256SUMS; deterministic bytes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), read_only=True)
    names = []
    try:
        con.execute("SET threads = 1")
        con.execute("SET enable_progress_bar = false")
        for table in tables.TABLES:
            name = table.__tablename__  # type: ignore[attr-defined]
            order = "key" if "key" in table.__table__.columns else "id"  # type: ignore[attr-defined]
            for ext, opts in (("parquet", "FORMAT parquet, COMPRESSION zstd"), ("jsonl", "FORMAT json")):
                target = out_dir / f"{name}.{ext}"
                tmp = out_dir / f".{name}.{ext}.{os.getpid()}.tmp"
                con.execute(f"COPY (SELECT * FROM {name} ORDER BY {order}) TO '{tmp}' ({opts})")
                os.replace(tmp, target)
                names.append(target.name)
    finally:
        con.close()
    sums = "".join(f"{hashlib.sha256((out_dir / n).read_bytes()).hexdigest()}  {n}\n" for n in sorted(names))
    write_atomic(out_dir / "SHA256SUMS", sums)
    return sorted(names)


def table_names() -> Iterable[str]:
    return [t.__tablename__ for t in tables.TABLES]  # type: ignore[attr-defined]
