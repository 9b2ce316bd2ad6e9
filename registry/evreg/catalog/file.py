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
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from evreg.core import codebase, gitcmd
from evreg.core.errors import Refused

MAX_STAMPED_CHANGES = 1000
"""More changed, untracked or ignored paths than this and a work tree gets no stamp (the full check runs)."""

_CHECKED_FOLDERS = ("packets/", "site/", "schema/")
"""Where validation reads files: an ignored folder inside one of them gets no stamp (its files are not listed)."""

_STATUS = ("status", "--porcelain=v1", "-z")
_STAT_EXACT = ("-c", "core.trustctime=true", "-c", "core.checkStat=default")
"""Git compares every stat field (change time, inode, size, modification time) whatever the user's config says."""


@dataclass
class Stamp:
    """A stamp (``value``) and what lets the next query check it without listing every folder
    (``record``: the untracked and ignored entries git listed, the folders of the work tree and a
    digest of their change times; empty when a folder was too recent to vouch for its names)."""

    value: str
    record: dict[str, str] = field(default_factory=dict)
    listed: bytes = b""  # what git listed (``git status``, every file outside build/): kept in memory only

    def meta(self) -> dict[str, str]:
        """The ``catalog_meta`` rows that keep it."""
        return {"stamp": self.value, **self.record}


def _pathspec(root: Path, db: Path) -> list[str]:
    skip = ["--", ".", ":(exclude)build"]
    with contextlib.suppress(ValueError):
        skip.append(f":(exclude,literal){db.resolve().relative_to(root.resolve()).as_posix()}")
    return skip


def _entries(status: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """``git status --porcelain=v1 -z`` output as (tracked changes, untracked and ignored entries); a
    rename or copy keeps its source. None with an ignored folder where validation reads."""
    fields = status.split(b"\0")
    tracked, others = [], []
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if not entry:
            continue
        if entry[:1] in (b"R", b"C") and i < len(fields):
            entry += b"\0" + fields[i]
            i += 1
        if entry[:3] in (b"?? ", b"!! "):
            path = entry[3:].decode("utf-8", "surrogateescape")
            if entry[:2] == b"!!" and path.endswith("/") and path.startswith(_CHECKED_FOLDERS):
                return None
            others.append(entry)
        else:
            tracked.append(entry)
    return tracked, others


def _value(root: Path, head: bytes, tracked: list[bytes], others: list[bytes]) -> str | None:
    """The stamp: the commit, every changed, untracked or ignored entry with its content's hash, the code."""
    if len(tracked) + len(others) > MAX_STAMPED_CHANGES:
        return None
    h = hashlib.sha256(b"head " + head.strip() + b"\n")
    for entry in [*sorted(tracked), *sorted(others)]:
        h.update(entry + b"\n")
        path = entry[3:].split(b"\0")[0].decode("utf-8", "surrogateescape")
        h.update(_content_hash(root / path).encode() + b"\n")
    return hashlib.sha256(h.hexdigest().encode() + codebase.digest().encode()).hexdigest()


def take(root: Path, db: Path) -> Stamp | None:
    """What the registry's work tree and the code are now, without reading a record: the commit, every
    path git reports as changed, untracked or ignored (but ``build/`` and the catalog ``db``) with its
    content's hash, and the code's digest (``codebase.digest``); with the record that lets ``fresh`` check
    it again cheaply.
    None outside git, with an ignored folder where validation reads, or with more than
    ``MAX_STAMPED_CHANGES`` such paths: then the catalog is checked the full way."""
    started = time.time_ns()  # before git lists: a name added meanwhile leaves a folder newer than this
    head = gitcmd.output(gitcmd.spawn(root, "rev-parse", "--verify", "--quiet", "HEAD"))
    status = gitcmd.output(
        gitcmd.spawn(root, *_STAT_EXACT, *_STATUS, "--untracked-files=all", "--ignored=matching", *_pathspec(root, db))
    )
    parts = _entries(status) if status is not None else None
    if head is None or status is None or parts is None:
        return None
    value = _value(root, head, *parts)
    if value is None:
        return None
    return Stamp(value, _record(root, parts[1], started), status)


def stamp(root: Path, db: Path) -> str | None:
    """The stamp of the work tree and code as they are now (see ``take``), its value only."""
    taken = take(root, db)
    return taken.value if taken is not None else None


def _folders(root: Path, others: list[bytes]) -> list[str]:
    """Every folder of the work tree but ``.git`` folders, ``build/`` and the ignored folders git listed
    (whose content no stamp covers), relative to ``root``, ``""`` for the root."""
    ignored = {e[3:-1].decode("utf-8", "surrogateescape") for e in others if e[:2] == b"!!" and e.endswith(b"/")}
    ignored |= {"build"}
    base = f"{root}{os.sep}"  # paths as strings: a Path per folder would be half the walk's time
    out, stack = [], [""]
    while stack:
        folder = stack.pop()
        out.append(folder)
        prefix = f"{folder}/" if folder else ""
        with os.scandir(base + folder) as listing:
            for e in listing:
                if e.is_dir(follow_symlinks=False) and e.name != ".git" and (name := prefix + e.name) not in ignored:
                    stack.append(name)
    return out


def _times(root: Path, folders: list[str]) -> tuple[str, int] | None:
    """A digest of the folders' change times (a name added, removed or renamed changes its folder's;
    unlike its modification time, no one can set it back) and the newest; None when one is missing."""
    base = f"{root}{os.sep}"
    h = hashlib.sha256()
    newest = 0
    try:
        for folder in folders:
            ctime = os.lstat(base + folder).st_ctime_ns
            newest = max(newest, ctime)
            h.update(b"%d\n" % ctime)
    except OSError:
        return None
    return h.hexdigest(), newest


def _record(root: Path, others: list[bytes], started: int) -> dict[str, str]:
    """What ``fresh`` needs to trust the untracked and ignored entries listed now without listing them
    again: every folder's change time, provided each is older than the listing by ``TRUSTED_AGE_NS``
    (empty otherwise, or with a name that is not UTF-8: then the full check runs each time)."""
    try:
        folders = _folders(root, others)
        times = _times(root, folders)
        if times is None or times[1] > started - gitcmd.TRUSTED_AGE_NS:
            return {}
        return {
            "stamp_others": "".join(f"{e.decode('utf-8')}\0" for e in others),  # each ends in a NUL, as git's
            "stamp_folders": "\0".join(folders).encode("utf-8").decode("utf-8"),
            "stamp_folder_times": times[0],
        }
    except (OSError, UnicodeError):
        return {}


def _quick(root: Path, db: Path, meta: dict[str, str]) -> str | None:
    """The stamp as it is now, from git's changed tracked files (``--untracked-files=no``: no folder
    is listed) and the recorded untracked and ignored entries, provided no folder's change time moved
    since they were listed; None when that cannot be shown."""
    if not (meta.get("stamp_folder_times") and meta.get("stamp_folders") and "stamp_others" in meta):
        return None
    head = gitcmd.spawn(root, "rev-parse", "--verify", "--quiet", "HEAD")
    status = gitcmd.spawn(root, *_STAT_EXACT, *_STATUS, "--untracked-files=no", *_pathspec(root, db))
    times = _times(root, meta["stamp_folders"].split("\0"))  # while git stats the tracked files
    same = times is not None and times[0] == meta["stamp_folder_times"]
    head_out, status_out = gitcmd.output(head), gitcmd.output(status)
    if not same or head_out is None or status_out is None:
        return None
    parts = _entries(status_out)
    if parts is None or parts[1]:
        return None
    others = [e.encode("utf-8") for e in meta["stamp_others"].split("\0")[:-1]]
    return _value(root, head_out, parts[0], others)


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
    return check(root, db)[0]


def check(root: Path, db: Path) -> tuple[bool, Stamp | None]:
    """Whether the catalog ``db`` is fresh: checked from the record when no folder changed (``_quick``),
    else the full way (a stamp found equal so gets a new record); and the stamp taken the full way, if it was
    (a caller that rebuilds the catalog uses it rather than listing the work tree again)."""
    meta = read_meta(db)
    if not meta or not meta.get("stamp"):
        return False, None
    quick = _quick(root, db, meta)
    if quick is not None:
        return quick == meta["stamp"], None
    now = take(root, db)
    if now is None or now.value != meta["stamp"]:
        return False, now
    if now.record:
        set_stamp(db, now)
    return True, now


def set_stamp(db: Path, taken: Stamp) -> None:
    """Record ``taken`` as the stamp of a catalog found up to date the full way (best effort: a catalog
    that cannot be written keeps its old stamp, and the next query checks it the full way again)."""
    keys = ["stamp", "stamp_others", "stamp_folders", "stamp_folder_times"]
    with contextlib.suppress(duckdb.Error):
        con = duckdb.connect(str(db))
        try:
            con.execute("BEGIN TRANSACTION")
            con.execute(f"DELETE FROM catalog_meta WHERE key IN ({', '.join('?' * len(keys))})", keys)
            con.executemany("INSERT INTO catalog_meta VALUES (?, ?)", sorted(taken.meta().items()))
            con.execute("COMMIT")
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


class QueryRefused(Refused, ValueError):
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
QUERY_MAX_BYTES = 64 << 20
"""Bytes of values ``evreg query`` returns at most (strings and blobs by their length): a few rows of huge strings
are refused as many rows are, before the result or its printing fills the memory."""
_FETCH = 2048
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


def _bounded_rows(cur: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """The result's rows, fetched a chunk at a time; refused past ``QUERY_MAX_ROWS`` rows or ``QUERY_MAX_BYTES``."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    while chunk := cur.fetchmany(_FETCH):
        rows.extend(chunk)
        size += sum(_size(v) for row in chunk for v in row)
        if len(rows) > QUERY_MAX_ROWS:
            raise QueryRefused(
                f"the query returns more than {QUERY_MAX_ROWS:,} rows: add a LIMIT, or use `evreg export parquet`"
            )
        if size > QUERY_MAX_BYTES:
            raise QueryRefused(
                f"the query returns more than {QUERY_MAX_BYTES >> 20} MiB of values: select fewer or shorter columns, "
                "or use `evreg export parquet`"
            )
    return rows


def _size(value: Any) -> int:
    """About how many bytes a value of a result holds (strings and blobs by length; lists and structs summed)."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, list | tuple):
        return 8 + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return 8 + sum(_size(k) + _size(v) for k, v in value.items())
    return 8


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
                rows = _bounded_rows(cur)
        except MemoryError:
            raise QueryRefused("the query's result does not fit in the memory a query may use: narrow it") from None
        finally:
            timer.cancel()
        return columns, rows
    finally:
        con.close()
