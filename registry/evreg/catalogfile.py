"""The catalog file as ``evreg query`` uses it, with DuckDB only (nothing of the catalog's builder:
SQLAlchemy, SQLModel, the rules):

- its *stamp*: what the work tree and the code were when it was built, checked without reading a record
  (``stamp``), so a query on a fresh catalog neither validates nor re-reads the registry;
- the sandbox a query runs in: one read-only statement on a read-only connection, no file or network
  access, no extensions, locked settings, bounded memory, threads, rows and time (see site/security.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

MAX_STAMPED_CHANGES = 1000
"""More changed, untracked or ignored paths than this and a work tree gets no stamp (the full check runs)."""

_CHECKED_FOLDERS = ("packets/", "site/", "schema/")
"""Where validation reads files: an ignored folder inside one of them gets no stamp (its files are not listed)."""


def _git(root: Path, *args: str) -> bytes | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except OSError:
        return None
    return out.stdout if out.returncode == 0 else None


def code_digest() -> str:
    """The code a catalog's content comes from: every module and vocabulary of ``evreg`` and of each
    installed rule pack (found through its entry point without importing it), and pydantic's version."""
    h = hashlib.sha256(importlib.metadata.version("pydantic").encode())
    folders = {Path(__file__).parent}
    for ep in importlib.metadata.entry_points(group="evreg.rules"):
        spec = importlib.util.find_spec(ep.value.split(":")[0].split(".")[0])
        if spec is not None and spec.origin:
            folders.add(Path(spec.origin).parent)
    for folder in sorted(folders):
        for path in sorted([*folder.rglob("*.py"), *folder.rglob("*.json")]):
            if "__pycache__" not in path.parts:
                h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def stamp(root: Path, db: Path) -> str | None:
    """What the registry's work tree and the code are now, without reading a record: the commit, every
    path git reports as changed, untracked or ignored (but ``build/`` and the catalog ``db``) with its
    content's hash, and ``code_digest``. None outside git, with an ignored folder where validation reads, or with more
    than ``MAX_STAMPED_CHANGES`` such paths: then the catalog is checked the full way."""
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    skip = [":(exclude)build"]
    with contextlib.suppress(ValueError):
        skip.append(f":(exclude,literal){db.resolve().relative_to(root.resolve()).as_posix()}")
    status = _git(
        root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--", ".", *skip
    )
    if head is None or status is None:
        return None
    entries = [e for e in status.split(b"\0") if e]
    if len(entries) > MAX_STAMPED_CHANGES:
        return None
    h = hashlib.sha256(b"head " + head.strip() + b"\n")
    for entry in entries:
        h.update(entry + b"\n")
        path = entry[3:].decode("utf-8", "surrogateescape")
        if entry[:2] == b"!!" and path.endswith("/") and path.startswith(_CHECKED_FOLDERS):
            return None
        h.update(_content_hash(root / path).encode() + b"\n")
    return hashlib.sha256(h.hexdigest().encode() + code_digest().encode()).hexdigest()


def read_meta(db: Path) -> dict[str, str] | None:
    """The catalog's ``catalog_meta`` table as it is, or None when the file is missing or unreadable."""
    if not db.exists():
        return None
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return None
    try:
        return dict(con.execute("SELECT key, value FROM catalog_meta").fetchall())
    except duckdb.Error:
        return None
    finally:
        con.close()


def fresh(root: Path, db: Path) -> bool:
    """Whether the catalog ``db`` was built from the work tree and code as they are now (its stamp)."""
    meta = read_meta(db)
    return bool(meta and meta.get("stamp")) and meta["stamp"] == stamp(root, db)  # type: ignore[index]


def set_stamp(db: Path, value: str) -> None:
    """Record ``value`` as the stamp of a catalog found up to date the full way (best effort: a catalog
    that cannot be written keeps its old stamp, and the next query checks it the full way again)."""
    with contextlib.suppress(duckdb.Error):
        con = duckdb.connect(str(db))
        try:
            con.execute("DELETE FROM catalog_meta WHERE key = 'stamp'")
            con.execute("INSERT INTO catalog_meta VALUES ('stamp', ?)", [value])
        finally:
            con.close()


def _content_hash(path: Path) -> str:
    """A listed path's content: a file's bytes, a link's target, or what kind of thing it is."""
    try:
        if path.is_symlink():
            return "link " + os.readlink(path)
        if path.is_file():
            with path.open("rb") as fh:
                return "file " + hashlib.file_digest(fh, "sha256").hexdigest()
        return "dir" if path.is_dir() else "missing"
    except OSError as exc:
        return f"unreadable {exc.errno}"


class QueryRefused(ValueError):
    """SQL that ``evreg query`` does not run: not exactly one read-only statement."""


QUERY_TIMEOUT_S = 30.0
"""Wall-clock bound of one ``evreg query`` statement; DuckDB is interrupted after it."""

SANDBOX: dict[str, str | bool | int | float | list[str]] = {
    # Nothing outside the catalog file: no file reads or writes (read_csv, COPY ... TO, EXPORT
    # DATABASE, ATTACH, glob), no network, no extension installs or loads ...
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    # ... bounded resources ...
    "memory_limit": "1GB",
    "threads": 2,
    # ... and a query cannot SET any of it back.
    "lock_configuration": True,
}
"""The DuckDB configuration ``evreg query`` runs under (on a read-only connection)."""

_READ_ONLY_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})
QUERY_MAX_ROWS = 100_000
"""Rows ``evreg query`` returns at most; more is refused (``evreg export parquet`` has all)."""
QUERY_ADDRESS_SPACE = 3 << 30
"""Address space a query may add to the process. DuckDB's ``memory_limit`` does not count every
allocation (``repeat()`` of a huge string, results handed to Python); the process limit does."""


@contextlib.contextmanager
def _bounded_address_space(extra: int) -> Iterator[None]:
    """Limit the process's address space to its current size plus ``extra`` for the duration
    (a soft limit, restored after; DuckDB then reports out-of-memory instead of exhausting the host)."""
    try:
        import resource

        with open("/proc/self/statm") as fh:
            current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):  # not Linux: DuckDB's own limits only
        yield
        return
    limit = current + extra if hard == resource.RLIM_INFINITY else min(current + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def query(db: Path, sql: str, timeout: float = QUERY_TIMEOUT_S) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one read-only SQL statement in the sandbox. Raises QueryRefused for anything but
    one SELECT (or EXPLAIN), and duckdb.Error with DuckDB's message (a refused file access is a
    duckdb.PermissionException, a timeout a duckdb.InterruptException)."""
    import threading

    con = duckdb.connect(str(db), read_only=True, config=SANDBOX)
    try:
        statements = con.extract_statements(sql)
        if len(statements) != 1:
            raise QueryRefused(f"evreg query runs exactly one statement; this SQL has {len(statements)}")
        kind = statements[0].type.name
        if kind not in _READ_ONLY_STATEMENTS:
            raise QueryRefused(f"evreg query runs only SELECT statements (and EXPLAIN); this one is {kind}")
        timer = threading.Timer(timeout, con.interrupt)
        timer.start()
        try:
            with _bounded_address_space(QUERY_ADDRESS_SPACE):
                cur = con.execute(statements[0])
                columns = [d[0] for d in cur.description] if cur.description else []
                rows = cur.fetchmany(QUERY_MAX_ROWS + 1)
        finally:
            timer.cancel()
        if len(rows) > QUERY_MAX_ROWS:
            raise QueryRefused(
                f"the query returns more than {QUERY_MAX_ROWS:,} rows: add a LIMIT, or use `evreg export parquet`"
            )
        return columns, rows
    finally:
        con.close()
