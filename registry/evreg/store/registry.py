"""The registry: every document of the store at one point, lookups by id over all of it,
scoped views for unit-by-unit checking, and ``load``, the one loader."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evreg.core import codes
from evreg.core.containment import outside_repository
from evreg.core.errors import UsageProblem
from evreg.core.evidence import parse_ref
from evreg.core.findings import Finding
from evreg.core.layout import PACKETS, Place, held_path, id_key, place_keys, place_of, unit_of
from evreg.store.documents import Document, current_reads
from evreg.store.sources import (
    Entry,
    EvidenceState,
    GitTree,
    Source,
    TooManyFiles,
    WorkTree,
    blob_id,
    list_entries,
    open_source,
)

_T = TypeVar("_T")


@contextlib.contextmanager
def no_cycle_collection(lasting: bool = False) -> Iterator[None]:
    """Loading builds hundreds of thousands of small objects that live to the end and
    form no reference cycles; the cyclic collector would rescan them over and over.
    ``lasting``: what the block built lives as long as the process (a catalog read for
    a build): it is then left out of every later collection too (``gc.freeze``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if lasting:
            gc.freeze()
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class Held:
    """A family's held copy of an external evidence file: where it is here, what it copies, at which commits."""

    local: str  # its path in the repository
    source: str
    path: str  # its path in the source
    read: str  # the commit it was read at
    pinned: str | None  # the commit the family pins for the source


class Registry:
    """The store at one point (working tree or commit).

    ``documents`` are the files whose records rules check: all of them, or only those of
    the units a view is ``scoped`` to. Lookups (``get``, ``exists``, ``document``) always
    answer for the whole store, reading what they return on demand."""

    def __init__(self, root: Path, source: Source, documents: Iterable[Document]) -> None:
        self.root = root
        self.source = source
        listed = sorted(documents, key=lambda d: d.path)
        self.by_path = {d.path: d for d in listed}
        """Every document created so far, in or out of scope (shared by scoped views)."""
        self.files: dict[str, str | None] = {}
        """Every file of the store: path -> blob id when known without reading."""
        self.keys: dict[str, str] = {}
        """Id key (``layout.id_key``) -> the first file (in path order) at a place for that id."""
        self.unit_paths: dict[str, list[str] | None] = {}
        """Unit -> the sorted paths of its files (None until listed: see ``know``, ``paths_of``)."""
        self.special: set[str] = set()
        """Paths of files that are not regular files (symlinks, devices)."""
        self.digests: dict[str, str] = {}
        """Unit -> digest, where the source knew it without reading (a git tree id)."""
        self.shared: dict[str, list[str]] = {}
        """Id keys more than one file provides (each a ``duplicate-id``) -> all of them, in path order."""
        for doc in listed:
            self.files[doc.path] = doc.blob
            paths = self.unit_paths.setdefault(doc.unit, [])
            assert paths is not None  # listed units always have their list
            paths.append(doc.path)
            if not doc.entry.regular:
                self.special.add(doc.path)
            for key in place_keys(doc.place):
                first = self.keys.setdefault(key, doc.path)
                if first != doc.path:
                    self.shared.setdefault(key, [first]).append(doc.path)
        self.base: Registry | None = None
        """The registry at the base of a change, when validating a change (``--base``)."""
        self.changed: frozenset[str] = frozenset()
        """Repository paths that differ between ``base`` and this registry."""
        self.sources: dict[str, Path] = {}
        """External evidence sources (a family's ``sources`` name) -> a local git clone of it, to check against."""
        self.kept: Callable[[bytes, Callable[[], tuple[list[Finding], bool]]], list[Finding]] = lambda _key, compute: (
            compute()[0]
        )
        """``kept(key, compute)``: the findings ``compute()`` gives (with whether they may be kept), a pure function of
        the code and of ``key`` (the bytes of every input), taken from the validation cache when one is used
        (``ResultCache.kept``)."""
        self._documents: list[Document] | None = listed if len(listed) == len(self.files) else None
        self._kinds: dict[str | None, list[Document]] | None = None
        self._derived: dict[str, Any] = {}

    def derived(self, key: str, make: Callable[[Registry], _T]) -> _T:
        """A value derived from this registry (an index a rule pack builds once per run), made on first
        use and kept with it; a ``view`` starts without any."""
        if key not in self._derived:
            self._derived[key] = make(self)
        return self._derived[key]

    def know(self, unit: str, keys: dict[str, str], shared: dict[str, list[str]], special: Iterable[str]) -> None:
        """Add a unit whose files are as committed, by the ids they provide (the first file per
        id key, and the keys several of its files provide) and its files that are not regular;
        its files are listed only when something asks for them (``paths_of``) and read only
        when looked up."""
        self.unit_paths[unit] = None
        self.special.update(special)
        both = self.keys.keys() & keys.keys()  # an id in another unit as well
        merged = {k: sorted({*self.providers(k), *(shared.get(k) or [keys[k]])}) for k in both}
        self.keys.update(keys)
        self.shared.update(shared)
        self.shared.update(merged)
        self.keys.update((k, paths[0]) for k, paths in merged.items())
        self._documents = None

    def providers(self, key: str) -> list[str]:
        """Every file at a place for this id key, in path order."""
        shared = self.shared.get(key)
        if shared is not None:
            return shared
        first = self.keys.get(key)
        return [] if first is None else [first]

    # -- views -----------------------------------------------------------------------------

    def paths_of(self, unit: str) -> list[str]:
        """The sorted paths of a unit's files (listed now if the unit was only known by its ids)."""
        paths = self.unit_paths.get(unit, [])
        if paths is None:
            entries = list_entries(self.source, f"{PACKETS}/{unit}")
            paths = self.unit_paths[unit] = sorted(e.path for e in entries)
            for e in entries:
                self.files.setdefault(e.path, e.blob)
                if not e.regular:
                    self.special.add(e.path)
        return paths

    @property
    def documents(self) -> list[Document]:
        """The files whose records rules check (for a scoped view, those of its units)."""
        if self._documents is None:
            paths = [p for u in sorted(self.unit_paths) for p in self.paths_of(u)]
            self.source.prefetch(p for p in paths if self._unread(p))
            self._documents = [self.document(p) for p in paths]  # type: ignore[misc]
        return self._documents

    def scoped(self, units: Iterable[str]) -> Registry:
        """A view whose rules check only the records of ``units``; lookups still see everything."""
        return self.view([p for u in sorted(set(units)) for p in self.paths_of(u)])

    def view(self, paths: list[str]) -> Registry:
        """A view whose rules check only the records at ``paths``; lookups still see everything."""
        view = object.__new__(Registry)
        view.__dict__.update(self.__dict__)
        view._derived = {}
        self.source.prefetch(p for p in paths if self._unread(p))
        view._documents = [self.document(p) for p in paths]  # type: ignore[misc]
        view._kinds = None
        return view

    def digest(self, unit: str) -> str:
        """Identifies the unit's files and contents: a git tree id when known, else a hash of every
        file's path, blob id and type."""
        if unit not in self.digests:
            h = hashlib.sha256()
            for path in self.paths_of(unit):
                blob = self.files.get(path)
                if blob is None:
                    doc = self.document(path)
                    assert doc is not None
                    blob = doc.content_id()
                h.update(f"{path} {blob} {path not in self.special}\n".encode())
            self.digests[unit] = "files:" + h.hexdigest()
        return self.digests[unit]

    def records(self, *kinds: str) -> list[Document]:
        """Valid records of the given kinds among ``documents`` (all kinds when none is given)."""
        if self._kinds is None:
            by_kind: dict[str | None, list[Document]] = {None: []}
            for doc in self.documents:
                if doc.valid:
                    by_kind[None].append(doc)
                    by_kind.setdefault(doc.kind, []).append(doc)
            self._kinds = by_kind
        if not kinds:
            return self._kinds[None]
        if len(kinds) == 1:
            return self._kinds.get(kinds[0], [])
        return [d for d in self._kinds[None] if d.kind in kinds]

    def parse_findings(self) -> list[Finding]:
        return [f for d in self.documents for f in d.findings]

    # -- lookups over the whole store ---------------------------------------------------------

    def _unread(self, path: str) -> bool:
        doc = self.by_path.get(path)
        return doc is None or not doc.read

    def document(self, path: str) -> Document | None:
        doc = self.by_path.get(path)
        if doc is None and path not in self.files and self.unit_paths.get(unit_of(path), []) is None:
            self.paths_of(unit_of(path))
        if doc is None and path in self.files:
            doc = Document(Entry(path, None, path not in self.special, self.files[path]), self.source)
            self.by_path[path] = doc
        return doc

    def _lookup(self, key: str, accept: Callable[[str], bool]) -> str | None:
        """The first file providing ``key`` that ``accept``s. While a unit is checked, a file
        of the unit itself answers first: then nothing outside it can change the answer, and
        nothing is recorded; otherwise the key's providers are a dependency."""
        paths = self.providers(key)
        reads = current_reads()
        if reads is not None:
            for path in paths:
                if not reads.outside(path) and accept(path):
                    return path
            reads.note(f"key:{key}")
        return next((path for path in paths if accept(path)), None)

    def get(self, kinds: tuple[str, ...], record_id: str, family: str | None = None) -> Document | None:
        """The valid record of one of ``kinds`` with this id (``family`` for per-family kinds)."""

        def valid(path: str) -> bool:
            doc = self.document(path)
            return doc is not None and doc.valid and doc.kind in kinds

        for key in dict.fromkeys(id_key(kind, family, record_id) for kind in kinds):  # one per namespace
            found = self._lookup(key, valid)
            if found is not None:
                return self.document(found)
        return None

    def exists(self, kinds: tuple[str, ...], family: str | None, record_id: str) -> bool:
        """A file (valid or not) is at a place for this id and one of ``kinds``
        (``family`` None: in any family)."""

        def placed(path: str) -> bool:
            place = place_of(path)
            return any(k in kinds for k in place.kinds) and (family is None or place.family == family)

        keys = dict.fromkeys(id_key(kind, family, record_id) for kind in kinds)
        return any(self._lookup(key, placed) is not None for key in keys)

    def family(self, name: str | None) -> Document | None:
        return self.get(("family",), name) if name else None

    def held(self, family: str | None, value: str) -> Held | None:
        """``family``'s held copy of the external reference ``value`` (``SOURCE:path`` listed in the family's
        ``sources.SOURCE.held``): its local path and the commits it was read at and the family pins; or None."""
        ref = parse_ref(value)
        record = self.family(family) if ref.kind == "external" else None
        sources = record.data.get("sources") if record is not None and isinstance(record.data, dict) else None
        spec = sources.get(ref.source) if isinstance(sources, dict) else None
        held = spec.get("held") if isinstance(spec, dict) else None
        if family is None or not isinstance(held, dict) or ref.path not in held or outside_repository(ref.path):
            return None
        entry = held[ref.path] if isinstance(held[ref.path], dict) else {}
        pinned = spec.get("commit") if isinstance(spec, dict) else None
        return Held(
            held_path(family, str(ref.source), ref.path),
            str(ref.source),
            ref.path,
            str(entry.get("commit", "")),
            pinned if isinstance(pinned, str) else None,
        )

    def unit_records(self, unit: str, *kinds: str) -> list[Document]:
        """Valid records of ``kinds`` in one unit (family folder), in or out of scope."""
        docs = (self.document(p) for p in self.paths_of(unit))
        return [d for d in docs if d is not None and d.valid and (not kinds or d.kind in kinds)]

    # -- files outside records ------------------------------------------------------------------

    def linked(self, path: str) -> bool:
        """Whether ``path`` or a folder above it (in ``packets/``) is a symlink: what it names may be anywhere."""
        parts = path.split("/")
        return bool(self.special) and any("/".join(parts[:i]) in self.special for i in range(2, len(parts) + 1))

    def _note_file(self, path: str) -> None:
        """An evidence file read while a unit is checked is a dependency when it lies outside the unit, or
        behind a symlink (the link's target may lie anywhere, and the unit's digest covers only the link)."""
        reads = current_reads()
        if reads is not None and (reads.outside(path) or self.linked(path)):
            reads.note(f"file:{path}")

    def evidence(self, path: str) -> EvidenceState:
        self._note_file(path)
        return self.source.evidence(path)

    def read_file(self, path: str) -> bytes:
        """An evidence file's bytes. Refuses (PermissionError) anything but a regular file inside
        the repository's own files: callers check ``evidence(path)`` first."""
        self._note_file(path)
        if self.source.evidence(path) is not EvidenceState.FILE:
            raise PermissionError(f"{path!r} is not a regular file inside the repository")
        return self.source.read_all(path)

    def names(self, folder: str) -> list[str]:
        reads = current_reads()
        if reads is not None and reads.outside(folder + "/"):
            reads.note(f"dir:{folder}")
        return self.source.names(folder)

    def fingerprint(self, dep: str) -> str:
        """The current value of one dependency recorded by ``Reads``."""
        what, _, name = dep.partition(":")
        if what == "doc":
            doc = self.document(name)
            return "absent" if doc is None else doc.content_id()
        if what == "key":
            return "\n".join(self.providers(name))
        if what == "dir":
            return "\n".join(self.source.names(name))
        state = self.source.evidence(name)
        if state is not EvidenceState.FILE:
            return state.value
        if self.files.get(name) is not None and not self.linked(name):  # a link's blob is not its target's
            return f"file {self.files[name]}"
        try:
            return f"file {blob_id(self.source.read_all(name))}"
        except OSError:
            return "unreadable"


class ById(Mapping[str, Any]):
    """Valid records of some kinds by id -- or, with ``data``, their parsed data -- looked
    up in the whole store when asked (so a unit's reads are recorded). Not listable."""

    def __init__(self, registry: Registry, kinds: tuple[str, ...], data: bool = False) -> None:
        self.registry, self.kinds, self.data = registry, kinds, data

    def __getitem__(self, record_id: str) -> Any:
        doc = self.registry.get(self.kinds, record_id) if isinstance(record_id, str) else None
        if doc is None:
            raise KeyError(record_id)
        return doc.data if self.data else doc

    def get(self, record_id: str, default: Any = None) -> Any:
        doc = self.registry.get(self.kinds, record_id) if isinstance(record_id, str) else None
        return default if doc is None else doc.data if self.data else doc

    def __iter__(self) -> Iterator[str]:
        raise TypeError("records are looked up by id, not listed")

    def __len__(self) -> int:
        raise TypeError("records are looked up by id, not counted")


def from_entries(root: Path, source: Source, entries: list[Entry]) -> Registry:
    return Registry(root, source, [Document(e, source) for e in entries])


def refused(root: Path, source: Source, limit: int) -> Registry:
    registry = Registry(root, source, [])
    finding = codes.TOO_MANY_FILES.at(
        PACKETS,
        "",
        f"packets/ holds more than {limit:,} files; nothing was loaded",
        "split the registry, or raise EVREG_MAX_FILES on a machine with the memory for it",
    )
    doc = Document(Entry(PACKETS, 0, False), None, Place(PACKETS, ()), [finding])
    registry.by_path[PACKETS] = doc
    registry.files[PACKETS] = None
    registry.unit_paths = {"": [PACKETS]}
    return registry


def load(root: Path, rev: str | None = None, only: Iterable[str] | None = None, unit: str | None = None) -> Registry:
    """The registry at ``root`` from its working tree or from commit ``rev`` (read lazily). With ``only`` (paths
    inside the repository), just the working tree's files among them: those under ``packets/`` that exist, each as
    the whole tree's listing would give it, and nothing else is listed (lookups answer for those files alone). With
    ``unit`` (a family folder's name), just the files of that folder, as the whole tree's listing would give them
    (none for a name that is not one folder's)."""
    if only is not None and rev is not None:
        raise ValueError("only a working tree is loaded in part")
    source = open_source(root, rev)
    try:
        if unit is not None:
            entries = _unit_entries(source, unit)
        else:
            entries = list_entries(source) if only is None else _entries_at(root, only)
        registry = from_entries(root, source, entries)
    except TooManyFiles as exc:
        return refused(root, source, exc.limit)
    if isinstance(source, GitTree):
        registry.digests.update(source.unit_digests())
    return registry


def _unit_entries(source: Source, unit: str) -> list[Entry]:
    """The files of the family folder ``unit``, as the whole tree's listing gives them: none for a name that is not
    one folder's as the listing spells it (a path; a link to a folder, which the listing does not follow; another
    folder's name in other case, on a file system that ignores case)."""
    if unit in ("", ".", "..") or any(c in unit for c in "/\\\0"):
        return []
    if isinstance(source, WorkTree):
        try:
            with os.scandir(source.root / PACKETS) as listing:
                if not any(e.name == unit and e.is_dir(follow_symlinks=False) for e in listing):
                    return []
        except OSError:
            return []
    return list_entries(source, f"{PACKETS}/{unit}")


def _entries_at(root: Path, paths: Iterable[str]) -> list[Entry]:
    """The working tree's files at ``paths`` under ``packets/``, as ``WorkTree.entries`` lists them: a path below a
    symlinked folder is not one (the listing does not follow links; the link is a file of its own), nor is one that
    is gone."""
    entries = []
    for path in sorted(set(paths)):
        parts = path.split("/")
        if parts[0] != PACKETS or len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
            continue
        folders = [root.joinpath(*parts[:i]) for i in range(1, len(parts))]
        try:
            if any(not os.path.isdir(f) or os.path.islink(f) for f in folders):
                continue
            mode = os.lstat(root / path).st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode):
            entries.append(Entry(path, None, stat.S_ISREG(mode)))
    return entries


class BaseNotFound(UsageProblem, ValueError):
    """The base of a change names no commit of the repository."""


def change_base(root: Path, base_rev: str) -> tuple[str, frozenset[str]]:
    """The merge base of ``base_rev`` and HEAD, and the paths that differ from it
    in the working tree (untracked included)."""
    import git

    with git.Repo(root) as repo:
        try:
            base_commit = repo.commit(base_rev)
            repo.git.cat_file("-e", f"{base_commit.hexsha}^{{tree}}")  # present, not just named
        except (git.BadName, ValueError, git.GitCommandError) as exc:
            shallow = (Path(repo.git_dir) / "shallow").exists()
            raise BaseNotFound(
                f"--base {base_rev!r} names no commit in {root}"
                + ("; this is a shallow clone: fetch the base (fetch-depth: 0)" if shallow else "")
            ) from exc
        try:
            merge = repo.merge_base(base_commit, "HEAD")
            base_sha = merge[0].hexsha if merge else base_commit.hexsha
        except (git.GitCommandError, ValueError):
            base_sha = base_commit.hexsha
        # -z: git quotes a path with unusual characters otherwise, and the quoted name names no file
        listed = repo.git.diff("--name-only", "-z", "--no-renames", base_sha, "--", stdout_as_string=False)
        untracked = repo.git.ls_files("--others", "--exclude-standard", "-z", stdout_as_string=False)
        changed = {os.fsdecode(p) for p in (*listed.split(b"\0"), *untracked.split(b"\0")) if p}
    return base_sha, frozenset(changed)
