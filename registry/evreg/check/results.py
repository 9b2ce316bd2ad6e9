"""Validation results cached per unit (one family folder), with what they depend on.

A unit's entry holds its digest (the git tree id of its folder, or a hash of its
files' paths and blob ids), its files and the id keys they provide, the findings
of the unit rules, and every dependency those rules read outside the unit
(``store.Reads``) with its fingerprint. An entry is reused only while the unit's
digest is the same and none of its dependencies changed: a dependency naming a
file or id that changed anywhere, or anything outside ``packets/`` (or behind a
symlink), is fingerprinted again. So a stale entry can never hide a finding.

In a git working tree, which units changed is asked of git (``git status``
compares file stat data with the index), so an unchanged unit is not even
listed. Entries are JSON (never pickled), one file per unit under ``CACHE_DIR``,
and all of them are dropped when the code that validates changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import itertools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from evreg.check.rules import Rule, UnitResult
from evreg.core import codebase, gitcmd, jsonio
from evreg.core.findings import Finding
from evreg.core.jsonio import write_atomic
from evreg.core.layout import CACHE_DIR, PACKETS, place_keys, place_of, unit_of
from evreg.store import Registry, WorkTree, load
from evreg.store.registry import from_entries, refused
from evreg.store.sources import GitTree, Source, TooManyFiles, file_limit, list_entries, open_source


def code_version(rules: list[Rule]) -> str:
    """Changes whenever the code or data that validates changes: ``evreg``, the installed rule packs and the
    packages of the rules given (``codebase.digest``). Where the code is installed does not count: the same code
    installed elsewhere (a CI run's virtual environment, a checkout) reuses the entries it stored."""
    return codebase.digest(Path(inspect.getfile(r.check)).parent for r in rules)


def _volatile(dep: str, registry: Registry) -> bool:
    """A dependency that a changed file list cannot vouch for: outside packets/, or through a symlink."""
    what, _, path = dep.partition(":")
    if what == "key" or what == "doc":
        return False
    return not path.startswith(f"{PACKETS}/") or registry.linked(path)


CHANGED = "changed"
DEPENDS = "depends on a changed unit"
NO_ENTRY = "no cache entry"
OTHER_CONTENT = "entry for other content"
OTHER_VERSION = "entry from another evreg version or rule set"
REASONS = (CHANGED, DEPENDS, NO_ENTRY, OTHER_CONTENT, OTHER_VERSION)
"""Why a unit was checked rather than reused: the change touches it; an entry is for its content but
something it read elsewhere changed; there is no entry; the entry is for other content (its digest is not
the unit's: never trusted); the entry was stored by other code (``code_version``)."""


_FIELDS = {
    "digest": str,
    "special": list,
    "keys": dict,
    "shared": dict,
    "findings": list,
    "deps": dict,
    "volatile": list,
    "records": int,
    "files_count": int,
    "external": int,
    "held": int,
}


def _complete(entry: dict[str, Any]) -> bool:
    """Whether an entry has every field, each of its type (anything else is no entry)."""
    return all(isinstance(entry.get(k), t) for k, t in _FIELDS.items())


def unit_name(unit: str) -> str:
    """A unit as a user names it: its folder (the files directly in ``packets/`` are a unit of their own)."""
    return f"{PACKETS}/{unit}" if unit else f"{PACKETS}/ (its top-level files)"


def _dep_name(dep: str) -> str:
    """A recorded dependency as a user names it: the id it looked up, or the file it read."""
    what, _, name = dep.partition(":")
    return f"id {name}" if what == "key" else name


def units_summary(cache: ResultCache, listed: int = 20) -> dict[str, Any]:
    """How many units were reused, and why each other one was checked: a count per reason and the first
    ``listed`` units of each (with the dependency that changed, for those checked because of one)."""
    by_reason: dict[str, list[str]] = {r: [] for r in REASONS}
    for unit in sorted(cache.why):
        by_reason[cache.why[unit]].append(unit)
    return {
        "reused": cache.reused,
        "checked": len(cache.why),
        "why": {r: len(units) for r, units in by_reason.items() if units},
        "checked_units": [
            {"unit": unit_name(u), "why": r, **({"because": _dep_name(cache.because[u])} if u in cache.because else {})}
            for r, units in by_reason.items()
            for u in units[:listed]
        ],
    }


KEPT_FILE = "kept.json"
"""Beside the units' folder: findings kept by their inputs' digest (``ResultCache.kept``)."""


class ResultCache:
    def __init__(self, folder: Path, version: str, keep: bool = True) -> None:
        self.folder = folder
        self.version = version
        self.keep = keep
        """Whether ``update`` stores results (a commit's validation reuses the working tree's entries, whose
        digests are content ids, but never replaces them)."""
        self._entries: dict[str, dict[str, Any] | None] = {}
        self.reused = 0
        self.why: dict[str, str] = {}
        """Unit -> why it was checked (one of ``REASONS``), for every unit ``reusable`` did not reuse."""
        self.because: dict[str, str] = {}
        """Unit -> the dependency that changed, for the units checked because of one."""
        self._foreign: set[str] = set()
        self.listings: dict[str, dict[str, Any]] = {}
        """Unit -> folder times and untracked files seen while listing it (``load_worktree``)."""

        self._kept: dict[str, list[dict[str, Any]]] | None = None
        self._kept_used: dict[str, list[dict[str, Any]]] = {}

    @classmethod
    def open(cls, root: Path, rules: list[Rule], keep: bool = True) -> ResultCache:
        return cls(root / CACHE_DIR, code_version(rules), keep)

    def _file(self, unit: str) -> Path:
        return self.folder / f"{hashlib.sha1(unit.encode(), usedforsecurity=False).hexdigest()[:20]}.json"

    def entry(self, unit: str) -> dict[str, Any] | None:
        if unit not in self._entries:
            try:
                stored = jsonio.loads(self._file(unit).read_bytes())
                ours = stored.get("unit") == unit and _complete(stored)
                self._entries[unit] = stored if ours and stored.get("version") == self.version else None
                if ours and stored.get("version") != self.version:
                    self._foreign.add(unit)
            except (OSError, ValueError, AttributeError):
                self._entries[unit] = None
        return self._entries[unit]

    def kept(self, key: bytes, compute: Callable[[], tuple[list[Finding], bool]]) -> list[Finding]:
        """The findings ``compute()`` gives, a pure function of the code and of ``key`` (the bytes of every input: a
        hand-written page's path, text and the site's configuration), kept in ``KEPT_FILE`` under a digest of both
        unless ``compute`` says they may not be. Only the entries a validation used are kept for the next
        (``save_kept``)."""
        digest = hashlib.sha256(self.version.encode() + b"\0" + key).hexdigest()
        if self._kept is None:
            self._kept = {}
            with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
                stored = jsonio.loads((self.folder.parent / KEPT_FILE).read_bytes())
                if stored.get("version") == self.version and isinstance(stored.get("entries"), dict):
                    self._kept = stored["entries"]
        entry = self._kept.get(digest)
        if isinstance(entry, list):
            with contextlib.suppress(ValueError, TypeError):
                found = [Finding.model_validate(f) for f in entry]
                self._kept_used[digest] = entry
                return found
        found, lasting = compute()
        dumped = [f.model_dump(mode="json") for f in found]
        with contextlib.suppress(TypeError):  # JSON holds no lone surrogate (a file name that is not UTF-8)
            if lasting and orjson.dumps(dumped):
                self._kept_used[digest] = dumped
        return found

    def save_kept(self) -> None:
        """Store the entries this validation used (``kept``), when they differ from those read."""
        if self.keep and self._kept is not None and self._kept_used != self._kept:
            entry = {"version": self.version, "entries": self._kept_used}
            with contextlib.suppress(OSError):  # a read-only checkout still validates; it just is not cached
                write_atomic(self.folder.parent / KEPT_FILE, orjson.dumps(entry))

    def _write(self, unit: str, entry: dict[str, Any]) -> None:
        entry.update(self.listings.get(unit, {}))
        with contextlib.suppress(OSError):  # a read-only checkout still validates; it just is not cached
            write_atomic(self._file(unit), orjson.dumps(entry))
        self._entries[unit] = entry

    def reusable(
        self, registry: Registry, mark: Callable[[dict[str, Any]], dict[str, Any]] = lambda f: f
    ) -> dict[str, UnitResult]:
        """Stored results still valid for ``registry``, by unit.

        A unit's entry is a candidate when the unit's digest is the one stored. Every other
        unit -- changed, new, or gone -- is *changed*: a candidate's dependency on a file
        in a changed unit, every dependency on an id a changed unit provides now or provided
        before (ids are file names: no other id's providers can have changed; every id when a
        changed unit's earlier ids are unknown or a unit is gone), and every volatile one is
        fingerprinted again. The entry is reused only if all of those still have their stored
        fingerprints. Its findings are made through ``mark`` (the baseline's marks, see
        ``rules.baseline_marker``). Why each other unit is checked is kept in ``why``: the units of a
        change (``registry.changed``, against its base) are *changed*; an entry whose digest is not the
        unit's is for other content, whatever else it claims."""
        candidates: list[tuple[str, dict[str, Any]]] = []
        changed: set[str] = set()
        touched = {unit_of(p) for p in registry.changed}
        self.why, self.because, self.reused = {}, {}, 0
        for unit in registry.unit_paths:
            entry = self.entry(unit)
            if entry is not None and entry.get("digest") == registry.digest(unit):
                candidates.append((unit, entry))
                continue
            changed.add(unit)
            if unit in touched:
                self.why[unit] = CHANGED
            elif entry is not None:
                self.why[unit] = OTHER_CONTENT
            else:
                self.why[unit] = OTHER_VERSION if unit in self._foreign else NO_ENTRY
        if not candidates:
            return {}
        present = {self._file(u).name for u in registry.unit_paths}
        if self.folder.is_dir() and any(p.name not in present for p in self.folder.glob("*.json")):
            changed.add("\0gone")  # a unit that is gone: its files may be what a candidate read
        keys = self._changed_keys(registry, changed)
        fingerprints: dict[str, str] = {}

        def current(dep: str) -> str:
            if dep not in fingerprints:
                fingerprints[dep] = registry.fingerprint(dep)
            return fingerprints[dep]

        def suspect(dep: str) -> bool:
            if dep.startswith("key:") and (keys is None or dep[4:] in keys):
                return True
            return "\0gone" in changed or unit_of(dep.partition(":")[2]) in changed

        out: dict[str, UnitResult] = {}
        for unit, entry in candidates:
            deps: dict[str, str] = entry["deps"]
            suspects = entry["volatile"] + [d for d in deps if suspect(d)]
            moved = next((dep for dep in suspects if current(dep) != deps[dep]), None)
            if moved is not None:
                self.why[unit] = DEPENDS
                self.because[unit] = moved
            else:
                out[unit] = UnitResult(
                    [Finding.model_validate(mark(f)) for f in entry["findings"]],
                    deps,
                    entry["records"],
                    entry["files_count"],
                    entry["external"],
                    held=entry["held"],
                )
        self.reused = len(out)
        return out

    def _changed_keys(self, registry: Registry, changed: set[str]) -> set[str] | None:
        """The ids the ``changed`` units provide now or provided when last stored; None (every id)
        when a unit is gone or a changed unit's stored entry is missing (its earlier ids unknown)."""
        keys: set[str] = set()
        for unit in changed:
            entry = self.entry(unit) if unit != "\0gone" else None
            if entry is None:
                return None
            keys.update(entry["keys"], entry["shared"])
            for path in registry.paths_of(unit):
                keys.update(place_keys(place_of(path)))
        return keys

    def update(self, registry: Registry, results: dict[str, UnitResult]) -> None:
        """Store fresh results (atomically, per unit); drop entries of units that are gone."""
        if not self.keep:
            return
        for unit, result in results.items():
            paths = registry.paths_of(unit)
            keys: dict[str, str] = {}
            shared: dict[str, list[str]] = {}
            for p in paths:
                for key in place_keys(place_of(p)):
                    first = keys.setdefault(key, p)
                    if first != p:
                        shared.setdefault(key, [first]).append(p)
            entry: dict[str, Any] = {
                "version": self.version,
                "unit": unit,
                "digest": registry.digest(unit),
                "special": sorted(p for p in paths if p in registry.special),
                **{k: (self.entry(unit) or {}).get(k) for k in ("folders", "untracked", "listed")},
                "keys": keys,
                "shared": shared,
                "findings": [f.model_dump(mode="json") for f in result.findings],
                "deps": result.deps,
                "volatile": sorted(d for d in result.deps if _volatile(d, registry)),
                "records": result.records,
                "files_count": result.files,
                "external": result.external,
                "held": result.held,
            }
            self._write(unit, entry)
        for unit, listing in self.listings.items():  # reused units git was asked about: keep what it said
            kept = self._entries.get(unit)
            if unit not in results and kept is not None and any(kept.get(k) != v for k, v in listing.items()):
                self._write(unit, kept)
        if results and self.folder.is_dir():
            keep = {self._file(u).name for u in registry.unit_paths}
            for path in self.folder.glob("*.json"):
                if path.name not in keep:
                    path.unlink(missing_ok=True)


# -- which units changed, from git and folder times ---------------------------------------------


@dataclass
class WorktreeState:
    """What git (and folder times) say about the units of a working tree."""

    clean: dict[str, str]  # unit -> "tree:<id>": exactly as committed at HEAD
    dirty: set[str]  # units to list and read
    asked: dict[str, dict[str, Any]]  # unit -> folder times (taken first), untracked files, a digest of its files


def on_disk(root: Path, unit: str) -> tuple[dict[str, int] | None, list[str]] | None:
    """The modification time of every folder of a unit (their names change only with them; None when one is too
    recent to vouch for anything yet), and the path of everything in them that is not a folder (a link, a nested
    repository's ``.git``); each folder's time taken before its names are read. None when a folder cannot be read."""
    now, times, files = time.time_ns(), {}, []
    recent = False
    base = f"{root}{os.sep}"  # paths as strings: a Path per folder was most of the walk's time (148,000 at 100k)
    stack = [f"{PACKETS}/{unit}"]
    while stack:
        folder = stack.pop()
        try:
            mtime = os.stat(base + folder).st_mtime_ns
            recent = recent or now - mtime < gitcmd.TRUSTED_AGE_NS
            times[folder] = mtime
            with os.scandir(base + folder) as listing:
                for e in listing:
                    path = f"{folder}/{e.name}"
                    if e.name != ".git" and e.is_dir(follow_symlinks=False):
                        stack.append(path)
                    else:
                        files.append(path)
        except OSError:
            return None
    return (None if recent else times), files


def _same_folders(root: Path, times: dict[str, int]) -> bool:
    base = f"{root}{os.sep}"
    try:
        return all(os.stat(base + folder).st_mtime_ns == mtime for folder, mtime in times.items())
    except OSError:
        return False


def _vouched(root: Path, units: set[str], cache: ResultCache | None, index: dict[str, list[bytes]]) -> set[str]:
    """Units whose folders have the times the cache keeps for them, that had no untracked files then, and whose
    files in git's index (``index``: by unit) are still the files their folders held: no file can have appeared
    since, nor left the index (``git rm --cached``), so their folders need not be read."""
    vouched = set()
    for unit in units:
        entry = cache.entry(unit) if cache is not None else None
        folders = entry.get("folders") if entry else None
        if (
            folders
            and not entry.get("untracked")  # type: ignore[union-attr]
            and entry.get("listed") == _listed(index.get(unit, []))  # type: ignore[union-attr]
            and _same_folders(root, folders)
        ):
            vouched.add(unit)
    return vouched


def _listed(paths: list[bytes]) -> str:
    """A digest of a unit's files (as its folders hold them, or as git's index lists them)."""
    return hashlib.sha256(b"\0".join(sorted(paths))).hexdigest()


def _index(listed: bytes) -> dict[str, list[bytes]]:
    """``git ls-files -z -- packets`` output by unit (sorted: a unit's paths are together), the paths as bytes."""
    start = len(PACKETS) + 1

    def unit(raw: bytes) -> bytes:
        end = raw.find(b"/", start)
        return raw[start:end] if end > 0 else b""  # a file directly in packets/: the unit ""

    out: dict[str, list[bytes]] = {}
    for name, paths in itertools.groupby((raw for raw in listed.split(b"\0") if raw), key=unit):
        out.setdefault(os.fsdecode(name), []).extend(paths)
    return out


def _committed_trees(tree: bytes) -> dict[str, str]:
    """unit -> "tree:<id>" of each folder under packets/ at HEAD, from ``git ls-tree -z`` output."""
    committed: dict[str, str] = {}
    for record in tree.split(b"\0"):
        if record:
            meta, raw_path = record.split(b"\t", 1)
            _mode, kind, sha = meta.split()
            if kind == b"tree":
                committed[os.fsdecode(raw_path)[len(PACKETS) + 1 :]] = f"tree:{sha.decode()}"
    return committed


def _changed_units(status: bytes) -> set[str]:
    """Units of the tracked files ``git status --porcelain=v1 -z`` lists, and of renames' and copies' sources."""
    changed = set()
    fields = status.split(b"\0")
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) > 3:
            changed.add(unit_of(os.fsdecode(item[3:])))
            if item[:1] in (b"R", b"C"):
                changed.add(unit_of(os.fsdecode(fields[i])))  # the rename's source
                i += 1
    return changed


def _untracked(
    root: Path, unknown: list[str], index: dict[str, list[bytes]]
) -> tuple[set[str], dict[str, dict[str, Any]]] | None:
    """The units among ``unknown`` with untracked files (ignored ones too: whatever is on disk and not in git's
    ``index``), and for each unit its folder times, untracked files and a digest of its files (``_listed``); None when
    a folder cannot be read. The folders are read once, here (``git ls-files --others`` read every one again)."""
    units: set[str] = set()
    asked: dict[str, dict[str, Any]] = {}
    for unit in unknown:
        seen = on_disk(root, unit)
        if seen is None:
            return None
        times, files = seen
        tracked = set(map(os.fsdecode, index.get(unit, [])))
        untracked = [path for path in files if path not in tracked]
        asked[unit] = {"folders": times, "untracked": untracked, "listed": _listed(list(map(os.fsencode, files)))}
        if untracked:
            units.add(unit)
    return units, asked


def git_state(root: Path, cache: ResultCache | None = None) -> WorktreeState | None:
    """Which units of a working tree are exactly as committed, or None when git cannot say
    (not a repository's top level, no commit yet, packets/ a link).

    Git gives the tree id of each family folder at HEAD and the tracked files that differ
    from it, staged or not (comparing file stat data with its index). Untracked files
    (ignored ones too: the loader reads them) are looked for only in units whose cached
    folder times changed or that had untracked files (a file cannot appear in a folder
    without changing the folder's time): what their folders hold and git's index lacks."""
    packets = root / PACKETS
    if packets.is_symlink() or not packets.is_dir():
        return None
    procs = [
        gitcmd.spawn(root, "ls-files", "-z", "--", PACKETS),  # git's index: no folder is read
        gitcmd.spawn(root, "rev-parse", "--show-toplevel"),
        gitcmd.spawn(root, "ls-tree", "-z", "HEAD", "--", f"{PACKETS}/"),
        gitcmd.spawn(
            root, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=no", "--", PACKETS
        ),
    ]
    listed = gitcmd.output(procs[0])
    if listed is None:
        return None
    index = _index(listed)
    # While git compares file stat data, read the cache and check folder times.
    with os.scandir(packets) as listing:
        folders = {e.name for e in listing if e.is_dir(follow_symlinks=False)}
    vouched = _vouched(root, folders, cache, index)
    top, tree, status = (gitcmd.output(p) for p in procs[1:])
    if top is None or tree is None or status is None:
        return None
    if Path(os.fsdecode(top.strip())).resolve() != root.resolve():
        return None
    committed = _committed_trees(tree)
    dirty = {""} | (folders - committed.keys())  # the files directly in packets/; new folders
    dirty |= _changed_units(status)
    untracked = _untracked(root, sorted((committed.keys() & folders) - vouched), index)
    if untracked is None:
        return None
    with_untracked, asked = untracked
    dirty |= with_untracked
    clean = {u: d for u, d in committed.items() if u not in dirty and u in folders}
    return WorktreeState(clean, dirty | (committed.keys() - folders), asked)


def _from_units(root: Path, source: Source, units: dict[str, str | None], cache: ResultCache) -> Registry:
    """The registry of ``units``: a unit whose vouched digest (a git tree id, None when not vouched for) is the
    one a cache entry was stored for is not listed or read -- its files and ids come from the entry --; every
    other unit is listed."""
    listed, known = [], []
    try:
        for unit in sorted(units):
            entry = cache.entry(unit)
            if units[unit] is not None and entry is not None and entry["digest"] == units[unit]:
                known.append((unit, entry))
            else:
                listed.extend(list_entries(source, f"{PACKETS}/{unit}" if unit else PACKETS, deep=bool(unit)))
        registry = from_entries(root, source, listed)
        for unit, entry in known:
            registry.know(unit, entry["keys"], entry["shared"], entry["special"])
        if len(registry.files) > file_limit():
            raise TooManyFiles(file_limit())
    except TooManyFiles as exc:
        return refused(root, source, exc.limit)
    registry.digests.update({u: d for u, d in units.items() if d is not None})
    return registry


def load_worktree(root: Path, cache: ResultCache | None) -> Registry:
    """The working tree's registry. With a cache, units git vouches for (exactly as committed at HEAD) and
    the cache knows are not listed or read: their files and ids come from the cache entry."""
    state = git_state(root, cache) if cache is not None else None
    if state is None or cache is None:
        return load(root)
    units = {u: state.clean.get(u) for u in state.clean.keys() | state.dirty}
    registry = _from_units(root, WorkTree(root), units, cache)
    cache.listings.update(state.asked)  # kept with the units' entries for the next run
    return registry


def load_commit(root: Path, rev: str, cache: ResultCache | None) -> Registry:
    """Commit ``rev``'s registry. With a cache, a unit whose tree is the one a cache entry was stored for
    (its digest is the tree id: a content id) is not listed: its files and ids come from the entry, and
    its files are listed only when something asks for them."""
    if cache is None:
        return load(root, rev)
    source = open_source(root, rev)
    assert isinstance(source, GitTree)
    return _from_units(root, source, {"": None, **source.unit_digests()}, cache)
