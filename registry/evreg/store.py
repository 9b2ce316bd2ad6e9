"""The git-native store: every file under ``packets/`` of the working tree or
of any commit (read from git's tree objects, no checkout).

``load`` is the one loader. It lists the files and returns a ``Registry`` of
``Document``s; a document is read, parsed and schema-checked the first time
anything asks for its content, so a registry can stand for a whole store while
only the records a validation needs are ever read. Semantic rules (in
``validators``) run over that.

Validation runs unit by unit (a unit is one family folder). While a unit's rules
run, every read outside the unit -- another record's content, whether an id
exists, an evidence file -- is recorded with a fingerprint of what was read
(``Reads``), so a cached result of that unit is reused only while all of it is
unchanged.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import posixpath
import subprocess
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from evreg import codes, jsonio
from evreg.citations import is_prose_key
from evreg.containment import outside_repository
from evreg.evidence import is_evidence_key
from evreg.findings import Finding, RecordRef, join_pointer
from evreg.layout import PACKETS, Place, id_key, place_keys, place_of, unit_of
from evreg.models import MODELS

if TYPE_CHECKING:
    import git


class EvidenceState(Enum):
    FILE = "file"
    MISSING = "missing"
    NOT_FILE = "not-file"
    ESCAPE = "escape"


@dataclass(frozen=True)
class Entry:
    """One file under ``packets/`` as a source lists it."""

    path: str
    size: int | None  # None: not known without a system call; checked when read
    regular: bool  # False for symlinks, devices, fifos: never read as records
    blob: str | None = None  # git blob id when the source knows it without reading


class Source(Protocol):
    label: str

    def entries(self, under: str = PACKETS, deep: bool = True) -> Iterator[Entry]: ...
    def read(self, path: str) -> bytes: ...
    def read_all(self, path: str) -> bytes: ...
    def prefetch(self, paths: Iterable[str]) -> None: ...
    def evidence(self, path: str) -> EvidenceState: ...
    def names(self, folder: str) -> list[str]: ...


def blob_id(data: bytes) -> str:
    """Git's content address of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class WorkTree:
    """Files as they are on disk below ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self._root_str = str(root)
        self.label = "working tree"
        self._evidence: dict[str, EvidenceState] = {}

    def entries(self, under: str = PACKETS, deep: bool = True) -> Iterator[Entry]:
        cut = len(self._root_str) + 1
        stack = [os.path.join(self._root_str, under)]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    items = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            subfolders = []
            for item in items:  # d_type answers these without a system call per file
                if item.is_dir(follow_symlinks=False):
                    if deep:
                        subfolders.append(item.path)
                else:
                    yield Entry(item.path[cut:].replace(os.sep, "/"), None, item.is_file(follow_symlinks=False))
            stack.extend(reversed(subfolders))

    def read(self, path: str) -> bytes:
        """The file's bytes; of a file over the record limit, only the first limit + 1
        (it is refused, never read whole). Plain system calls: half the cost of a
        buffered file object, which matters at one call per record."""
        limit = jsonio.MAX_RECORD_BYTES + 1
        fd = os.open(os.path.join(self._root_str, path), os.O_RDONLY)
        try:
            chunks, total = [], 0
            while total < limit and (chunk := os.read(fd, 1 << 16)):
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return data[:limit] if total > limit else data

    def read_all(self, path: str) -> bytes:
        with open(os.path.join(self._root_str, path), "rb") as fh:
            return fh.read()

    def prefetch(self, paths: Iterable[str]) -> None:
        """Files are read one by one: there is no round trip to save."""

    def names(self, folder: str) -> list[str]:
        try:
            return sorted(os.listdir(os.path.join(self._root_str, folder)))
        except OSError:
            return []

    def evidence(self, path: str) -> EvidenceState:
        if path not in self._evidence:
            self._evidence[path] = self._evidence_state(path)
        return self._evidence[path]

    def _evidence_state(self, path: str) -> EvidenceState:
        if outside_repository(path):
            return EvidenceState.ESCAPE
        full = os.path.realpath(self.root / path)
        if os.path.commonpath([full, self.real_root]) != str(self.real_root):
            return EvidenceState.ESCAPE
        if outside_repository(os.path.relpath(full, self.real_root)):  # a symlink into .git/
            return EvidenceState.ESCAPE
        if not os.path.lexists(self.root / path) or not os.path.exists(full):
            return EvidenceState.MISSING
        return EvidenceState.FILE if os.path.isfile(full) else EvidenceState.NOT_FILE


class GitTree:
    """Files as committed at one revision, read from git objects."""

    SYMLINK_MODE = 0o120000

    def __init__(self, repo: git.Repo, rev: str) -> None:
        self.repo = repo
        self.commit = repo.commit(rev)
        self.label = self.commit.hexsha
        self._blobs: dict[str, str] = {}  # path -> blob id, for what entries() listed
        self._fetched: dict[str, bytes] = {}

    def entries(self, under: str = PACKETS, deep: bool = True) -> Iterator[Entry]:
        """One ``git ls-tree`` for the whole listing (walking tree objects from Python costs
        about 0.1 ms a file)."""
        import git

        args = ["-z", "-l", *(["-r"] if deep else []), self.commit.hexsha, "--", f"{under}/"]
        try:
            out = self.repo.git.ls_tree(*args, stdout_as_string=False)
        except git.GitCommandError:
            return
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, raw_path = record.split(b"\t", 1)
            mode, kind, sha, size = meta.split()
            if kind != b"blob":
                continue  # sub-trees (without -r) and submodules hold no record
            path = os.fsdecode(raw_path)
            self._blobs[path] = sha.decode()
            yield Entry(path, int(size), int(mode, 8) != self.SYMLINK_MODE, sha.decode())

    def unit_digests(self) -> dict[str, str]:
        """Family folder -> its git tree id (the top-level files are hashed by the registry)."""
        try:
            tree = self.commit.tree / PACKETS
        except KeyError:
            return {}
        return {item.name: f"tree:{item.hexsha}" for item in tree.trees}

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read the blobs of ``paths`` with one ``git cat-file --batch`` (one object at a
        time costs a round trip each); ``read`` then hands each out once."""
        wanted = [(p, self._blobs[p]) for p in paths if p in self._blobs and p not in self._fetched]
        if len(wanted) < 2:
            return
        out = subprocess.run(
            ["git", f"--git-dir={self.repo.git_dir}", "cat-file", "--batch"],
            input="".join(f"{sha}\n" for _, sha in wanted).encode(),
            capture_output=True,
            check=False,
        ).stdout
        pos = 0
        for path, _sha in wanted:
            end = out.find(b"\n", pos)
            if end < 0:
                break
            header = out[pos:end].split()
            pos = end + 1
            if len(header) != 3:  # "<sha> missing": read() will say so
                continue
            size = int(header[2])
            self._fetched[path] = out[pos : pos + size]
            pos += size + 1

    def read(self, path: str) -> bytes:
        fetched = self._fetched.pop(path, None)
        if fetched is not None:
            return fetched
        sha = self._blobs.get(path)
        if sha is None:
            return (self.commit.tree / path).data_stream.read()
        return self.repo.odb.stream(bytes.fromhex(sha)).read()

    read_all = read

    def names(self, folder: str) -> list[str]:
        import git

        try:
            tree = self.commit.tree / folder
        except KeyError:
            return []
        return sorted(item.name for item in tree) if isinstance(tree, git.Tree) else []

    def evidence(self, path: str) -> EvidenceState:
        import git

        if outside_repository(path):
            return EvidenceState.ESCAPE
        parts = path.split("/")
        resolved: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not resolved:
                    return EvidenceState.ESCAPE
                resolved.pop()
                continue
            resolved.append(part)
            try:
                obj = self.commit.tree / "/".join(resolved)
            except KeyError:
                return EvidenceState.MISSING
            if isinstance(obj, git.Blob) and obj.mode == self.SYMLINK_MODE:
                hops += 1
                target = obj.data_stream.read().decode("utf-8", "replace")
                if hops > 40 or target.startswith("/"):
                    return EvidenceState.ESCAPE
                resolved.pop()
                parts = posixpath.normpath(target).split("/") + parts
            elif not parts:
                if outside_repository("/".join(resolved)):  # a symlink into a VCS folder
                    return EvidenceState.ESCAPE
                return EvidenceState.FILE if isinstance(obj, git.Blob) else EvidenceState.NOT_FILE
        return EvidenceState.NOT_FILE


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Loading builds hundreds of thousands of small objects that live to the end and
    form no reference cycles; the cyclic collector would rescan them over and over."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Reads:
    """What one unit's rules read outside the unit, each with a fingerprint of what
    was read: ``doc:PATH`` (a record's content), ``key:KEY`` (which files provide an
    id), ``file:PATH`` (an evidence path: its state and content) and ``dir:PATH``
    (a folder's names). The unit's findings can only change if one of these does."""

    def __init__(self, registry: Registry, unit: str) -> None:
        self.registry = registry
        self.unit = unit or None  # the files directly in packets/ share no folder: all reads count
        self.prefix = f"{PACKETS}/{unit}/" if unit else None
        self.deps: dict[str, str] = {}

    def outside(self, path: str) -> bool:
        return self.prefix is None or not path.startswith(self.prefix)

    def note(self, dep: str) -> None:
        if dep not in self.deps:
            self.deps[dep] = self.registry.fingerprint(dep)


_READS: ContextVar[Reads | None] = ContextVar("evreg_reads", default=None)
"""Where reads outside the unit being checked are recorded: set only inside ``recording``."""


@contextlib.contextmanager
def recording(reads: Reads) -> Iterator[Reads]:
    """Record the reads outside ``reads.unit`` made in this context (a context variable, not
    module state: a thread or task checking another unit records into its own)."""
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


class Document:
    """One file under ``packets/``: its place, and -- read when first asked for --
    its bytes, parsed value, schema verdict and the findings of reading it."""

    def __init__(self, entry: Entry, source: Source | None) -> None:
        self.path = entry.path
        self.entry = entry
        self.place: Place = place_of(entry.path)
        self.unit = unit_of(entry.path)
        self.blob = entry.blob
        self.source = source
        self.raw: bytes | None = None
        self._data: Any = None
        self._valid = False
        self._findings: list[Finding] | None = None  # None: not read yet

    def _content(self) -> None:
        if self._findings is None:
            self._findings = []
            self._read()
        reads = _READS.get()
        if reads is not None and self.unit != reads.unit:
            reads.note(f"doc:{self.path}")

    @property
    def data(self) -> Any:
        self._content()
        return self._data

    @property
    def valid(self) -> bool:
        """Parsed, and matched its kind's schema."""
        self._content()
        return self._valid

    @property
    def findings(self) -> list[Finding]:
        self._content()
        return self._findings  # type: ignore[return-value]

    @property
    def kind(self) -> str | None:
        """The record kind, once the file has passed schema validation."""
        return self.data.get("kind") if self.valid else None

    @property
    def id(self) -> str | None:
        data = self.data
        return data.get("id") if isinstance(data, dict) else None

    def content_id(self) -> str:
        """The file's git blob id (read and hashed when the source did not know it)."""
        if self.blob is None:
            if not self.entry.regular or self.source is None:
                return "special"
            try:
                self.raw = self.source.read(self.path)
            except OSError:
                return "unreadable"
            self.blob = blob_id(self.raw)
        return self.blob

    # -- reading ---------------------------------------------------------------------

    def _read(self) -> None:
        """Read, parse and schema-check the file. Never raises on bad content."""
        entry, place, found = self.entry, self.place, self._findings
        assert found is not None
        if place.evidence or place.problem:
            return
        if not entry.regular:
            message = "a record must be a regular file, not a symlink or device"
            found.append(codes.LAYOUT.at(self.path, "", message, "replace the link with the file itself"))
            return
        if self.raw is None and (entry.size is None or entry.size <= jsonio.MAX_RECORD_BYTES):
            try:
                self.raw = self.source.read(self.path) if self.source else b""
            except OSError as exc:
                found.append(codes.JSON_SYNTAX.at(self.path, "", f"cannot read the file: {exc.strerror}"))
                return
        size = entry.size if self.raw is None else len(self.raw)
        if size is not None and size > jsonio.MAX_RECORD_BYTES:
            self.raw = None
            message = (
                f"file is {'more than ' if entry.size is None else ''}{size - (entry.size is None):,} "
                f"bytes; records are limited to {jsonio.MAX_RECORD_BYTES:,} bytes"
            )
            hint = "split the record, or keep large raw output as an evidence file"
            found.append(codes.FILE_TOO_LARGE.at(self.path, "", message, hint))
            return
        assert self.raw is not None
        if self.blob is None:
            self.blob = blob_id(self.raw)
        self._data, parse_findings = jsonio.parse(self.raw, self.path)
        found.extend(parse_findings)
        if self._data is not None and place.kinds != ("baseline",):
            found.extend(self._check_schema())

    def _check_schema(self) -> list[Finding]:
        data, place = self._data, self.place
        if not isinstance(data, dict):
            return [
                codes.SCHEMA.at(
                    self,
                    "",
                    f"a record is a JSON object, this file holds a JSON {_json_type(data)}",
                    "wrap the record's fields in one {...} object",
                )
            ]
        kind = data.get("kind")
        if kind not in place.kinds:
            expected = " or ".join(repr(k) for k in place.kinds)
            return [
                codes.LAYOUT.at(
                    self,
                    "/kind" if "kind" in data else "",
                    f"record kind {kind!r} does not belong at {self.path} (expected {expected})",
                    "set `kind` to what the folder holds, or move the file to the folder of its kind",
                )
            ]
        try:
            MODELS[kind].model_validate(data)
            self._valid = True
        except ValidationError as exc:
            # A union reports one error per member; keep the first per location.
            findings: dict[str, Finding] = {}
            for err in exc.errors():
                finding = self._schema_finding(err)
                findings.setdefault(finding.pointer, finding)
            return list(findings.values())
        return []

    def _schema_finding(self, err: Any) -> Finding:
        # Walk pydantic's loc through the instance: union member names and
        # similar tags are not part of the document and are dropped.
        node, tokens = self._data, []
        for part in err["loc"]:
            in_object = isinstance(node, dict) and isinstance(part, str)
            in_array = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            if (in_object and part in node) or in_array:
                node = node[part]
                tokens.append(part)
            elif in_object and err["type"] == "missing":
                tokens.append(part)
                break
        pointer = join_pointer(*tokens)
        value = err.get("input")
        where = pointer or "the record"
        if err["type"] == "missing":
            parent = pointer[: pointer.rfind("/")]
            return codes.SCHEMA.at(
                self,
                parent,
                f"{where}: required field is missing",
                f"add `{tokens[-1]}`; see schema/{self.kind_hint()}.schema.json",
            )
        if isinstance(value, bool) and err["type"] in ("float_type", "int_type", "finite_number"):
            return codes.JSON_NON_FINITE.at(
                self,
                pointer,
                f"{where}: {str(value).lower()} is not a number",
                "write the number itself; booleans are not numbers",
            )
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return codes.SCHEMA.at(
            self, pointer, f"{where}: {err['msg']} (found {shown})", f"see schema/{self.kind_hint()}.schema.json"
        )

    # -- what rules use ----------------------------------------------------------------

    @cached_property
    def _texts(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        refs: list[tuple[str, str]] = []
        prose: list[tuple[str, str]] = []
        for pointer, key, text in jsonio.iter_keyed_strings(self.data, _is_text_key, memo=_TEXT_KEYS):
            (refs if is_evidence_key(key) else prose).append((pointer, text))
        return refs, prose

    @property
    def refs(self) -> list[tuple[str, str]]:
        """(pointer, reference) of every evidence reference (``evreg.evidence.is_evidence_key``); read once."""
        self._content()  # a foreign record's text is a dependency, however often it is read
        return self._texts[0]

    @property
    def prose(self) -> list[tuple[str, str]]:
        """(pointer, text) of every prose field, as ``evreg.citations.iter_prose``; read once."""
        self._content()  # a foreign record's text is a dependency, however often it is read
        return self._texts[1]

    @cached_property
    def locator(self) -> jsonio.Locator:
        raw = self.raw
        if raw is None and self.source is not None and self.entry.regular:
            try:
                raw = self.raw = self.source.read(self.path)
            except OSError:
                raw = b""
        return jsonio.Locator((raw or b"").decode("utf-8", "replace"))

    def ref(self) -> RecordRef | None:
        data = self._data
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            return RecordRef(kind=data["kind"], id=str(data.get("id", self.place.id)))
        return None

    def kind_hint(self) -> str:
        """The kind this file claims or its folder implies, for hints."""
        kind = self._data.get("kind") if isinstance(self._data, dict) else None
        return kind if kind in MODELS else (self.place.kinds[0] if self.place.kinds else "record")

    def position(self, pointer: str) -> tuple[int | None, int | None]:
        """Line and column of ``pointer`` in this file (a finding's place)."""
        return self.locator.position(pointer) if self.entry.regular else (None, None)


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


MEASUREMENT_KINDS = ("run-measurement", "series-measurement")


def _is_text_key(key: str) -> bool:
    return is_evidence_key(key) or is_prose_key(key)


_TEXT_KEYS: dict[str, bool] = {}


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
        self._documents: list[Document] | None = listed if len(listed) == len(self.files) else None
        self._kinds: dict[str | None, list[Document]] | None = None

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
        view.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_validator_index"})
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
        return doc is None or doc._findings is None

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
        reads = _READS.get()
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

    def unit_records(self, unit: str, *kinds: str) -> list[Document]:
        """Valid records of ``kinds`` in one unit (family folder), in or out of scope."""
        docs = (self.document(p) for p in self.paths_of(unit))
        return [d for d in docs if d is not None and d.valid and (not kinds or d.kind in kinds)]

    # -- files outside records ------------------------------------------------------------------

    def evidence(self, path: str) -> EvidenceState:
        reads = _READS.get()
        if reads is not None and reads.outside(path):
            reads.note(f"file:{path}")
        return self.source.evidence(path)

    def read_file(self, path: str) -> bytes:
        """An evidence file's bytes. Refuses (PermissionError) anything but a regular file inside
        the repository's own files: callers check ``evidence(path)`` first."""
        reads = _READS.get()
        if reads is not None and reads.outside(path):
            reads.note(f"file:{path}")
        if self.source.evidence(path) is not EvidenceState.FILE:
            raise PermissionError(f"{path!r} is not a regular file inside the repository")
        return self.source.read_all(path)

    def names(self, folder: str) -> list[str]:
        reads = _READS.get()
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
        if name in self.files and self.files[name] is not None:
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

    def __iter__(self) -> Iterator[str]:
        raise TypeError("records are looked up by id, not listed")

    def __len__(self) -> int:
        raise TypeError("records are looked up by id, not counted")


def open_source(root: Path, rev: str | None = None) -> Source:
    import git

    if rev is None:
        return WorkTree(root)
    repo = git.Repo(root, search_parent_directories=False)
    return GitTree(repo, rev)


MAX_FILES = 400_000
"""Files under packets/ a registry may hold (about six GiB of memory to validate); beyond it nothing is
loaded and one ``too-many-files`` finding says so. ``EVREG_MAX_FILES`` overrides it."""


class TooManyFiles(ValueError):
    pass


def file_limit() -> int:
    return int(os.environ.get("EVREG_MAX_FILES", MAX_FILES))


def list_entries(source: Source, under: str = PACKETS, deep: bool = True) -> list[Entry]:
    """Every file under ``under`` (``deep``: in sub-folders too); refuses (``TooManyFiles``)
    beyond the file limit."""
    limit = file_limit()
    entries = []
    for entry in source.entries(under, deep):
        entries.append(entry)
        if len(entries) > limit:
            raise TooManyFiles(limit)
    return entries


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
    doc = Document(Entry(PACKETS, 0, False), None)
    doc.place = Place(PACKETS, ())
    doc._findings = [finding]
    registry.by_path[PACKETS] = doc
    registry.files[PACKETS] = None
    registry.unit_paths = {"": [PACKETS]}
    return registry


def load(root: Path, rev: str | None = None) -> Registry:
    """The registry at ``root`` from its working tree or from commit ``rev`` (read lazily)."""
    source = open_source(root, rev)
    try:
        registry = from_entries(root, source, list_entries(source))
    except TooManyFiles as exc:
        return refused(root, source, exc.args[0])
    if isinstance(source, GitTree):
        registry.digests.update(source.unit_digests())
    return registry


class BaseNotFound(ValueError):
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
        changed = set(repo.git.diff("--name-only", "--no-renames", base_sha, "--").splitlines())
        changed |= set(repo.untracked_files)
    return base_sha, frozenset(changed)
