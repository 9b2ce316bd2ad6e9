"""The catalog as a job: kept fresh for the store (or a past state of it), and queried in its sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evreg.catalog import file as catalogfile
from evreg.core.errors import Refused, UsageProblem
from evreg.core.layout import DEFAULT_DB, ROWS_DIR

if TYPE_CHECKING:
    from evreg.check.rules import Report

# The catalog's builder, the store and the rules are imported where a catalog is built: a query on a fresh
# catalog (its stamp matches) reads only DuckDB.


@dataclass
class Catalog:
    """A catalog file that holds the store's state, whether it was built now, and the validation it holds."""

    path: Path
    built: bool
    report: Report
    rows: dict[str, Any] | None = None
    """How many units' rows were reused from the row cache and why the others were made (when built with it)."""


@dataclass
class Table:
    """A query's result."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


def resolve(root: Path, as_of: str | None) -> str | None:
    """The commit ``as_of`` names (a revision, or the end of a date); None for the working tree."""
    if not as_of:
        return None
    from evreg.store import provenance

    try:
        return provenance.resolve(root, as_of)
    except ValueError as exc:
        raise UsageProblem(f"--as-of: {exc}") from None


def ensure_catalog(
    root: Path,
    db: Path | None = None,
    as_of: str | None = None,
    force: bool = False,
    now: catalogfile.Stamp | None = None,
) -> Catalog:
    """The catalog for the store (at ``as_of``), built when missing, stale or corrupt (always with ``force``).
    ``now``: the work tree's stamp if the caller has just taken it."""
    from evreg.catalog import build as catalog
    from evreg.catalog import reuse
    from evreg.check import pipeline
    from evreg.store import no_cycle_collection, provenance

    db = db or root / DEFAULT_DB
    now = None if as_of else now or catalogfile.take(root, db)  # before validating: a change meanwhile makes it stale
    rev = resolve(root, as_of)
    head = rev or provenance.head(root)
    registry, report = pipeline.validate(root, rev=rev)
    with no_cycle_collection():
        fingerprint = catalog.fingerprint(registry, head, report.findings)
        meta = catalog.read_meta(db)
        if not force and meta and meta.get("fingerprint") == fingerprint:
            times = now.record.get("stamp_folder_times") if now is not None else None
            renewed = times and times != meta.get("stamp_folder_times")
            if now is not None and (meta.get("stamp") != now.value or renewed):
                catalogfile.set_stamp(db, now)
            return Catalog(db, False, report)
        history = provenance.history(root, rev or "HEAD") if head else {}
        cache = reuse.RowCache.open(root, keep=rev is None) if pipeline.cache_problem(root, ROWS_DIR) is None else None
        catalog.build(
            registry,
            report.findings,
            history,
            db,
            {
                "schema_version": str(catalog.tables.SCHEMA_VERSION),
                "fingerprint": fingerprint,
                "source": registry.source.label,
                "commit": head or "",
                **(now.meta() if now is not None else {}),
            },
            cache,
        )
    return Catalog(db, True, report, cache.summary() if cache is not None else None)


def table_counts(db: Path) -> dict[str, int]:
    """Rows of every catalog table."""
    from evreg.catalog import build as catalog

    return catalog.counts(db)


def query(root: Path, sql: str, db: Path | None = None, as_of: str | None = None) -> Table:
    """One read-only SQL statement against the catalog (rebuilt first when missing, stale or corrupt), run in
    the sandbox: no file or network access, no extensions, locked settings, bounded memory, threads and time."""
    import duckdb

    path = db or root / DEFAULT_DB
    fresh, now = (False, None) if as_of else catalogfile.check(root, path)  # a fresh catalog needs no validation
    if not fresh:
        path = ensure_catalog(root, db, as_of, now=now).path
    try:
        return Table(*catalogfile.query(path, sql))
    except catalogfile.QueryRefused as exc:
        raise Refused(f"query refused: {exc}") from None
    except duckdb.InterruptException:
        raise Refused(f"query stopped: it ran longer than {catalogfile.QUERY_TIMEOUT_S:g} s") from None
    except duckdb.PermissionException as exc:
        raise Refused(f"query refused: it reads or writes outside the catalog ({exc})") from None
    except duckdb.Error as exc:
        raise Refused(f"query failed: {exc}") from None
