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

import hashlib
import inspect
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pydantic

from registry.findings import Finding
from registry.jsonio import write_atomic
from registry.layout import PACKETS, place_keys, place_of, unit_of
from registry.rules import Report, Rule, UnitResult, run
from registry.store import (
    Registry,
    TooManyFiles,
    WorkTree,
    change_base,
    file_limit,
    from_entries,
    list_entries,
    load,
    no_cycle_collection,
    refused,
)

CACHE_DIR = "build/cache/units"


def code_version(rules: list[Rule]) -> str:
    """Changes whenever the code or data that validates changes: every module and
    vocabulary of ``registry`` and of each rule's package, and pydantic's version."""
    h = hashlib.sha256(pydantic.VERSION.encode())
    folders = {Path(__file__).parent}
    folders.update(Path(inspect.getfile(r.check)).parent for r in rules)
    for folder in sorted(folders):
        for path in sorted([*folder.glob("*.py"), *folder.glob("vocab/*.json")]):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _volatile(dep: str, special: set[str]) -> bool:
    """A dependency that a changed file list cannot vouch for: outside packets/, or through a symlink."""
    what, _, path = dep.partition(":")
    if what == "key" or what == "doc":
        return False
    if not path.startswith(f"{PACKETS}/"):
        return True
    parts = path.split("/")
    return any("/".join(parts[:i]) in special for i in range(2, len(parts) + 1))


class ResultCache:
    def __init__(self, folder: Path, version: str) -> None:
        self.folder = folder
        self.version = version
        self._entries: dict[str, dict[str, Any] | None] = {}
        self.reused = 0

    @classmethod
    def open(cls, root: Path, rules: list[Rule]) -> ResultCache:
        return cls(root / CACHE_DIR, code_version(rules))

    def _file(self, unit: str) -> Path:
        return self.folder / f"{hashlib.sha1(unit.encode(), usedforsecurity=False).hexdigest()[:20]}.json"

    def entry(self, unit: str) -> dict[str, Any] | None:
        if unit not in self._entries:
            try:
                stored = orjson.loads(self._file(unit).read_bytes())
                ok = stored.get("version") == self.version and stored.get("unit") == unit
                self._entries[unit] = stored if ok else None
            except (OSError, orjson.JSONDecodeError, AttributeError):
                self._entries[unit] = None
        return self._entries[unit]

    def reusable(self, registry: Registry) -> dict[str, UnitResult]:
        """Stored results still valid for ``registry``, by unit."""
        candidates: list[tuple[str, dict[str, Any]]] = []
        others: list[tuple[str, dict[str, Any] | None]] = []
        for unit in registry.unit_paths:
            entry = self.entry(unit)
            if entry is not None and entry["digest"] == registry.digest(unit):
                candidates.append((unit, entry))
            else:
                others.append((unit, entry))
        if not candidates:
            return {}
        changed: set[str] = set()
        for unit, entry in others:
            old: dict[str, Any] = entry["files"] if entry else {}
            new = {p: registry.files.get(p) or registry.document(p).content_id() for p in registry.unit_paths[unit]}  # type: ignore[union-attr]
            changed.update(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
        present = {self._file(u).name for u in registry.unit_paths}
        for path in self.folder.glob("*.json") if self.folder.is_dir() else []:
            if path.name not in present:  # a unit that is gone: all its files changed
                try:
                    changed.update(orjson.loads(path.read_bytes()).get("files", {}))
                except (OSError, orjson.JSONDecodeError, AttributeError):
                    continue
        names: set[str] = set()
        for path in changed:
            names.update((f"doc:{path}", f"file:{path}"))
            names.update(f"key:{k}" for k in place_keys(place_of(path)))
            parts = path.split("/")
            names.update(f"dir:{'/'.join(parts[:i])}" for i in range(1, len(parts)))
        out: dict[str, UnitResult] = {}
        for unit, entry in candidates:
            deps: dict[str, str] = entry["deps"]
            suspects = [*(names & deps.keys()), *entry["volatile"]]
            if all(registry.fingerprint(dep) == deps[dep] for dep in suspects):
                out[unit] = UnitResult(
                    [Finding(**f) for f in entry["findings"]],
                    deps,
                    entry["records"],
                    entry["files_count"],
                    entry["external"],
                )
        self.reused = len(out)
        return out

    def update(self, registry: Registry, results: dict[str, UnitResult]) -> None:
        """Store fresh results (atomically, per unit); drop entries of units that are gone."""
        for unit, result in results.items():
            paths = registry.unit_paths.get(unit, [])
            files = result.blobs
            keys: dict[str, list[str]] = {}
            for p in paths:
                for key in place_keys(place_of(p)):
                    keys.setdefault(key, []).append(p)
            entry = {
                "version": self.version,
                "unit": unit,
                "digest": registry.digest(unit),
                "files": files,
                "special": sorted(p for p in paths if p in registry.special),
                "keys": keys,
                "findings": [f.model_dump(mode="json") for f in result.findings],
                "deps": result.deps,
                "volatile": sorted(d for d in result.deps if _volatile(d, registry.special)),
                "records": result.records,
                "files_count": result.files,
                "external": result.external,
            }
            try:
                write_atomic(self._file(unit), orjson.dumps(entry))
            except OSError:
                return  # a read-only checkout still validates; it just is not cached
            self._entries[unit] = entry
        if results and self.folder.is_dir():
            keep = {self._file(u).name for u in registry.unit_paths}
            for path in self.folder.glob("*.json"):
                if path.name not in keep:
                    path.unlink(missing_ok=True)


# -- which units changed, from git -------------------------------------------------------------


def git_state(root: Path) -> tuple[dict[str, str], set[str]] | None:
    """(digest of every unit git vouches for, units with changes) of a working tree, or
    None when git cannot say (not a repository's top level, no commit yet, packets/ a link).

    Three git commands run at once: the tree ids of the family folders at HEAD; the
    tracked files that differ from HEAD (staged or not); every untracked file, ignored
    ones included (the loader reads those too)."""
    packets = root / PACKETS
    if packets.is_symlink() or not packets.is_dir():
        return None
    commands = [
        ["git", "rev-parse", "--show-toplevel"],
        ["git", "ls-tree", "-z", "HEAD", "--", f"{PACKETS}/"],
        ["git", "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=no", "--", PACKETS],
        ["git", "ls-files", "--others", "-z", "--", PACKETS],
    ]
    try:
        procs = [subprocess.Popen(c, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for c in commands]
        outs = [p.communicate()[0] for p in procs]
    except OSError:
        return None
    if any(p.returncode for p in procs):
        return None
    top, tree, status, others = outs
    if Path(os.fsdecode(top.strip())).resolve() != root.resolve():
        return None
    clean: dict[str, str] = {}
    for record in tree.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            _mode, kind, sha = meta.split()
            if kind == b"tree":
                clean[os.fsdecode(path)[len(PACKETS) + 1 :]] = f"tree:{sha.decode()}"
    dirty = {""}  # the few files directly in packets/ are always listed
    fields = status.split(b"\0")
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) > 3:
            dirty.add(unit_of(os.fsdecode(item[3:])))
            if item[:1] in (b"R", b"C"):
                dirty.add(unit_of(os.fsdecode(fields[i])))  # the rename's source
                i += 1
    dirty.update(unit_of(os.fsdecode(p)) for p in others.split(b"\0") if p)
    for unit in dirty:
        clean.pop(unit, None)
    return clean, dirty


def load_worktree(root: Path, cache: ResultCache | None) -> Registry:
    """The working tree's registry. With a cache, units git vouches for and the cache
    knows are not listed or read: their files and ids come from the cache entry."""
    state = git_state(root) if cache is not None else None
    if state is None or cache is None:
        return load(root)
    clean, dirty = state
    source = WorkTree(root)
    listed, known = [], []
    try:
        for unit in sorted(clean.keys() | dirty):
            entry = cache.entry(unit)
            if unit in clean and entry is not None and entry["digest"] == clean[unit]:
                known.append((unit, entry))
            else:
                listed.extend(list_entries(source, f"{PACKETS}/{unit}" if unit else PACKETS, deep=bool(unit)))
        registry = from_entries(root, source, listed)
        for unit, entry in known:
            registry.know(unit, entry["files"], entry["keys"], entry["special"])
        if len(registry.files) > file_limit():
            raise TooManyFiles(file_limit())
    except TooManyFiles as exc:
        return refused(root, source, exc.args[0])
    registry.digests.update(clean)
    return registry


def validate(root: Path, rules: list[Rule], base: str | None = None, use_cache: bool = True) -> tuple[Registry, Report]:
    """Validate the working tree (against ``base`` when given), reusing cached unit results."""
    change = change_base(root, base) if base else None
    cache = ResultCache.open(root, rules) if use_cache else None
    with no_cycle_collection():
        registry = load_worktree(root, cache)
        if change is not None:
            registry.base = load(root, change[0])
            registry.changed = change[1]
        return registry, run(registry, rules, cache)
