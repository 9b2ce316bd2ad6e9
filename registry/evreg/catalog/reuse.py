"""The catalog's rows cached per unit (one family folder), content-addressed.

A unit's rows (records, families, ..., evidence, citations: every table but findings and provenance) follow from
the unit's files, the code that makes them and what they read outside the unit (a cited measurement in another
family, an evidence file elsewhere): ``Reads`` records those while the rows are made, with a fingerprint of each.
An entry is a folder under ``ROWS_DIR`` named by its address -- the unit, its digest (the git tree id of its
folder, or a hash of its files' blob ids) and the code version (``codebase.digest``) -- holding the staged rows
(JSON arrays DuckDB loads as they are) and ``entry.json``: the address's parts, every dependency with its
fingerprint, the kind and id of each of the unit's files (for provenance) and the staged files.

An entry is used only when everything in it agrees with the store as it is now: the same unit, digest and code
version as its address asks for, every dependency's fingerprint unchanged, every staged file present. Anything
else -- an entry for other content or from other code, planted under another's address, incomplete, unreadable --
is recomputed, never used. The folder sits beside the validation result cache under ``build/cache``, so CI's
save and restore of that folder carries both.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from evreg.core import codebase, jsonio
from evreg.core.jsonio import write_atomic
from evreg.core.layout import ROWS_DIR
from evreg.store import Registry

ENTRY = "entry.json"
STALE_TEMP_S = 3600.0
"""A half-written entry folder older than this was left by a run that stopped; the next store removes it."""

NO_ENTRY = "no cache entry"
DEPENDS = "depends on a changed record or file"
BROKEN = "entry incomplete or for other content"
REASONS = (NO_ENTRY, DEPENDS, BROKEN)
"""Why a unit's rows were made rather than reused: no entry at its address; an entry whose recorded dependency
changed; an entry that does not hold what its address asks for (never trusted)."""

Identity = tuple[str | None, str | None]


@dataclass
class Entry:
    """A unit's cached rows: the folder, its staged files (by table) and its files' kinds and ids."""

    folder: Path
    files: list[str]
    idents: dict[str, Identity]

    def staged(self) -> list[Path]:
        return [self.folder / name for name in self.files]


class RowCache:
    def __init__(self, folder: Path, version: str, keep: bool = True) -> None:
        self.folder = folder
        self.version = version
        self.keep = keep
        """Whether new entries are stored and entries no longer used are removed (the working tree's catalog);
        a past commit's catalog reuses entries but leaves the cache as it is."""
        self.why: dict[str, str] = {}
        """Unit -> why its rows were made (one of ``REASONS``), for every unit ``reusable`` did not reuse."""
        self.reused = 0

    @classmethod
    def open(cls, root: Path, keep: bool = True) -> RowCache:
        return cls(root / ROWS_DIR, codebase.digest(), keep)

    def address(self, unit: str, digest: str) -> str:
        """The name of the entry for ``unit`` with ``digest`` made by this code."""
        return hashlib.sha256(f"{self.version}\0{unit}\0{digest}".encode()).hexdigest()[:40]

    def _read(self, unit: str, digest: str) -> tuple[str, dict[str, Any] | None]:
        folder = self.folder / self.address(unit, digest)
        try:
            stored = jsonio.loads((folder / ENTRY).read_bytes())
        except FileNotFoundError:
            return NO_ENTRY, None
        except (OSError, ValueError):
            return BROKEN, None
        ok = (
            isinstance(stored, dict)
            and stored.get("version") == self.version
            and stored.get("unit") == unit
            and stored.get("digest") == digest
            and isinstance(stored.get("deps"), dict)
            and isinstance(stored.get("idents"), dict)
            and isinstance(stored.get("files"), list)
            and not folder.is_symlink()
            and all(_plain_name(n) and _regular(folder / n) for n in stored["files"])
        )
        return ("", stored) if ok else (BROKEN, None)

    def reusable(self, registry: Registry) -> dict[str, Entry]:
        """The entries that hold ``registry``'s rows, by unit (see the module's description); why each other unit
        is to be made is kept in ``why``."""
        out: dict[str, Entry] = {}
        self.why = {}
        fingerprints: dict[str, str] = {}

        def current(dep: str) -> str:
            if dep not in fingerprints:
                fingerprints[dep] = registry.fingerprint(dep)
            return fingerprints[dep]

        for unit in sorted(registry.unit_paths):
            why, stored = self._read(unit, registry.digest(unit))
            if stored is None:
                self.why[unit] = why
                continue
            if any(current(dep) != fp for dep, fp in stored["deps"].items()):
                self.why[unit] = DEPENDS
                continue
            idents = {p: (k, i) for p, (k, i) in stored["idents"].items()}
            out[unit] = Entry(self.folder / self.address(unit, registry.digest(unit)), stored["files"], idents)
        self.reused = len(out)
        return out

    def new_folder(self, fallback: Path) -> Path:
        """An empty folder for a unit's rows being made: in the cache when it can be written (the rows are then
        stored without copying), else in ``fallback``."""
        if self.keep:
            with contextlib.suppress(OSError):
                self.folder.mkdir(parents=True, exist_ok=True)
                return Path(tempfile.mkdtemp(prefix=".new-", dir=self.folder))
        return Path(tempfile.mkdtemp(prefix="unit-", dir=fallback))

    def store(
        self, registry: Registry, unit: str, folder: Path, deps: dict[str, str], idents: dict[str, Identity]
    ) -> Entry:
        """The unit's rows staged in ``folder``, stored at their address when the cache keeps entries; the entry
        (where the rows are to be loaded from)."""
        files = sorted(p.name for p in folder.iterdir() if p.is_file())
        entry = Entry(folder, files, idents)
        if not self.keep or folder.parent != self.folder:
            return entry
        digest = registry.digest(unit)
        record = {
            "version": self.version,
            "unit": unit,
            "digest": digest,
            "deps": dict(sorted(deps.items())),
            "idents": {p: list(idents[p]) for p in sorted(idents)},
            "files": files,
        }
        target = self.folder / self.address(unit, digest)
        try:
            write_atomic(folder / ENTRY, orjson.dumps(record))
            if target.exists():
                stored = self._read(unit, digest)[1]
                if stored is not None and stored["deps"] == record["deps"]:  # stored meanwhile for the same store
                    return entry  # by another build, which may be loading it: kept; these rows are loaded from here
                aside = Path(tempfile.mkdtemp(prefix=".old-", dir=self.folder))
                os.replace(target, aside / "entry")  # an entry that is not usable now: replaced
                shutil.rmtree(aside, ignore_errors=True)
            os.replace(folder, target)
        except OSError:  # a read-only cache, or another run stored the same address meanwhile: loaded from here
            return entry
        return Entry(target, files, idents)

    def prune(self, used: set[Path]) -> None:
        """Remove entries this build did not use, and half-written folders of runs that stopped."""
        if not self.keep or not self.folder.is_dir():
            return
        now = time.time()
        for path in self.folder.iterdir():
            with contextlib.suppress(OSError):
                if path.name.startswith("."):
                    if now - path.stat().st_mtime > STALE_TEMP_S:
                        shutil.rmtree(path, ignore_errors=True)
                elif path not in used:
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        path.unlink()

    def clear(self) -> None:
        """Remove every entry (the next ``reusable`` finds none)."""
        if self.folder.is_dir() and not self.folder.is_symlink():
            shutil.rmtree(self.folder, ignore_errors=True)

    def summary(self) -> dict[str, Any]:
        """How many units' rows were reused, and why the others were made."""
        counts: dict[str, int] = {}
        for why in self.why.values():
            counts[why] = counts.get(why, 0) + 1
        return {"reused": self.reused, "made": len(self.why), "why": counts}


def _plain_name(name: Any) -> bool:
    """A staged file's name: a file directly in the entry's folder (nothing that leads elsewhere)."""
    return isinstance(name, str) and name.endswith(".json") and "/" not in name and "\\" not in name and name[0] != "."


def _regular(path: Path) -> bool:
    """A regular file, not a link to one (a link could lead the load anywhere)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
