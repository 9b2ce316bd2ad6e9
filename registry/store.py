"""The git-native store: load every record under ``packets/`` from the
working tree or from any commit (read from git's tree objects, no checkout).

``load`` is the one loader. It reads, parses and schema-checks each file and
returns a ``Registry`` of ``Document``s, each with the findings of its own
reading. Semantic rules (in ``validators``) run over that.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import git
from pydantic import ValidationError

from registry import jsonio
from registry.cache import ParseCache
from registry.findings import Finding, RecordRef, Severity, join_pointer
from registry.layout import PACKETS, Place, place_of
from registry.models import MODELS


class EvidenceState(Enum):
    FILE = "file"
    MISSING = "missing"
    NOT_FILE = "not-file"
    ESCAPE = "escape"


@dataclass(frozen=True)
class Entry:
    """One file under ``packets/`` as a source lists it."""

    path: str
    size: int
    regular: bool  # False for symlinks, devices, fifos: never read as records
    blob: str | None = None  # git blob id when the source knows it without reading


class Source(Protocol):
    label: str

    def entries(self) -> Iterator[Entry]: ...
    def read(self, path: str) -> bytes: ...
    def evidence(self, path: str) -> EvidenceState: ...


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

    def entries(self) -> Iterator[Entry]:
        base = os.path.join(self._root_str, PACKETS)
        cut = len(self._root_str) + 1
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames.sort()
            rel_dir = dirpath[cut:].replace(os.sep, "/")
            names = sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            for name in names:
                full = os.path.join(dirpath, name)
                st = os.lstat(full)
                yield Entry(f"{rel_dir}/{name}", st.st_size, stat.S_ISREG(st.st_mode))

    def read(self, path: str) -> bytes:
        with open(os.path.join(self._root_str, path), "rb") as fh:
            return fh.read()

    def evidence(self, path: str) -> EvidenceState:
        if path not in self._evidence:
            self._evidence[path] = self._evidence_state(path)
        return self._evidence[path]

    def _evidence_state(self, path: str) -> EvidenceState:
        full = os.path.realpath(self.root / path)
        if os.path.commonpath([full, self.real_root]) != str(self.real_root):
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
        self._blobs: dict[str, git.Blob] = {}

    def entries(self) -> Iterator[Entry]:
        try:
            tree = self.commit.tree / PACKETS
        except KeyError:
            return
        for item in tree.traverse():
            if isinstance(item, git.Blob):
                self._blobs[item.path] = item
                regular = item.mode != self.SYMLINK_MODE
                yield Entry(item.path, item.size, regular, item.hexsha)

    def read(self, path: str) -> bytes:
        blob = self._blobs.get(path) or self.commit.tree / path
        return blob.data_stream.read()  # type: ignore[no-any-return]

    def evidence(self, path: str) -> EvidenceState:
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
                return EvidenceState.FILE if isinstance(obj, git.Blob) else EvidenceState.NOT_FILE
        return EvidenceState.NOT_FILE


@dataclass
class Document:
    """One file under ``packets/``: its place, bytes, parsed value and model."""

    path: str
    place: Place
    blob: str | None
    raw: bytes | None = None
    data: Any = None
    valid: bool = False  # parsed and matched its kind's schema
    findings: list[Finding] = field(default_factory=list)
    source: Source | None = None  # to read the bytes lazily (for locations) when they were not needed

    @property
    def kind(self) -> str | None:
        """The record kind, once the file has passed schema validation."""
        return self.data.get("kind") if self.valid else None

    @property
    def id(self) -> str | None:
        return self.data.get("id") if isinstance(self.data, dict) else None

    @cached_property
    def locator(self) -> jsonio.Locator:
        raw = self.raw
        if raw is None and self.source is not None:
            raw = self.raw = self.source.read(self.path)
        return jsonio.Locator((raw or b"").decode("utf-8", "replace"))

    def ref(self) -> RecordRef | None:
        if isinstance(self.data, dict) and isinstance(self.data.get("kind"), str):
            return RecordRef(kind=self.data["kind"], id=str(self.data.get("id", self.place.id)))
        return None

    def kind_hint(self) -> str:
        """The kind this file claims or its folder implies, for hints."""
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return kind if kind in MODELS else (self.place.kinds[0] if self.place.kinds else "record")

    def finding(
        self, code: str, pointer: str, message: str, hint: str = "", severity: Severity = Severity.ERROR
    ) -> Finding:
        line, column = self.locator.position(pointer) if self.raw is not None or self.source else (None, None)
        return Finding(
            code=code,
            severity=severity,
            file=self.path,
            pointer=pointer,
            line=line,
            column=column,
            message=message,
            hint=hint,
            record=self.ref(),
        )


class Registry:
    """Every document the store holds at one point (working tree or commit)."""

    def __init__(self, root: Path, source: Source, documents: list[Document]) -> None:
        self.root = root
        self.source = source
        self.documents = documents
        self.by_path = {d.path: d for d in documents}
        self.base: Registry | None = None
        """The registry at the base of a change, when validating a change (``--base``)."""
        self.changed: frozenset[str] = frozenset()
        """Repository paths that differ between ``base`` and this registry."""

    def records(self, *kinds: str) -> list[Document]:
        """Valid records of the given kinds (all kinds when none is given)."""
        return [d for d in self.documents if d.valid and (not kinds or d.kind in kinds)]

    @cached_property
    def by_kind_id(self) -> dict[tuple[str, str], list[Document]]:
        index: dict[tuple[str, str], list[Document]] = defaultdict(list)
        for doc in self.records():
            index[(doc.kind, doc.id)].append(doc)  # type: ignore[index]
        return index

    def get(self, kinds: tuple[str, ...], record_id: str) -> Document | None:
        for kind in kinds:
            docs = self.by_kind_id.get((kind, record_id))
            if docs:
                return docs[0]
        return None

    def family(self, name: str | None) -> Document | None:
        return self.get(("family",), name) if name else None

    def family_records(self, family: str, *kinds: str) -> list[Document]:
        return [d for d in self.records(*kinds) if d.place.family == family]

    def parse_findings(self) -> list[Finding]:
        return [f for d in self.documents for f in d.findings]


MEASUREMENT_KINDS = ("run-measurement", "series-measurement")


def read_document(entry: Entry, source: Source, cache: ParseCache | None = None) -> Document:
    """Read, parse and schema-check one file. Never raises on bad content.

    With a cache, a file whose content (git blob id) was checked before is not
    parsed again: the cache is keyed by path and content, so an entry can only
    ever stand for exactly these bytes."""
    place = place_of(entry.path)
    doc = Document(entry.path, place, entry.blob, source=source)
    if place.evidence or place.problem:
        return doc
    if not entry.regular:
        doc.findings.append(
            Finding(
                code="layout",
                file=entry.path,
                message="a record must be a regular file, not a symlink or device",
                hint="replace the link with the file itself",
            )
        )
        return doc
    if entry.size > jsonio.MAX_RECORD_BYTES:
        doc.findings.append(
            Finding(
                code="file-too-large",
                file=entry.path,
                message=f"file is {entry.size:,} bytes; records are limited to {jsonio.MAX_RECORD_BYTES:,} bytes",
                hint="split the record, or keep large raw output as an evidence file",
            )
        )
        return doc
    if doc.blob is None:
        doc.raw = source.read(entry.path)
        doc.blob = blob_id(doc.raw)
    if cache is not None and cache.fill(doc):
        return doc
    if doc.raw is None:
        doc.raw = source.read(entry.path)
    doc.data, doc.findings = jsonio.parse(doc.raw, entry.path)
    if doc.data is not None and place.kinds != ("baseline",):
        doc.findings.extend(_check_schema(doc))
    if cache is not None:
        cache.store(doc)
    return doc


def _check_schema(doc: Document) -> list[Finding]:
    data, place = doc.data, doc.place
    if not isinstance(data, dict):
        return [
            doc.finding(
                "schema",
                "",
                f"a record is a JSON object, this file holds a JSON {_json_type(data)}",
                "wrap the record's fields in one {...} object",
            )
        ]
    kind = data.get("kind")
    if kind not in place.kinds:
        expected = " or ".join(repr(k) for k in place.kinds)
        return [
            doc.finding(
                "layout",
                "/kind" if "kind" in data else "",
                f"record kind {kind!r} does not belong at {doc.path} (expected {expected})",
                "set `kind` to what the folder holds, or move the file to the folder of its kind",
            )
        ]
    try:
        MODELS[kind].model_validate(data)
        doc.valid = True
    except ValidationError as exc:
        # A union reports one error per member; keep the first per location.
        findings: dict[str, Finding] = {}
        for err in exc.errors():
            finding = _schema_finding(doc, err)
            findings.setdefault(finding.pointer, finding)
        return list(findings.values())
    return []


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _schema_finding(doc: Document, err: Any) -> Finding:
    # Walk pydantic's loc through the instance: union member names and
    # similar tags are not part of the document and are dropped.
    node, tokens = doc.data, []
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
        return doc.finding(
            "schema",
            parent,
            f"{where}: required field is missing",
            f"add `{tokens[-1]}`; see schema/{doc.kind_hint()}.schema.json",
        )
    if isinstance(value, bool) and err["type"] in ("float_type", "int_type", "finite_number"):
        return doc.finding(
            "json-non-finite",
            pointer,
            f"{where}: {str(value).lower()} is not a number",
            "write the number itself; booleans are not numbers",
        )
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return doc.finding(
        "schema", pointer, f"{where}: {err['msg']} (found {shown})", f"see schema/{doc.kind_hint()}.schema.json"
    )


def open_source(root: Path, rev: str | None = None) -> Source:
    if rev is None:
        return WorkTree(root)
    repo = git.Repo(root, search_parent_directories=False)
    return GitTree(repo, rev)


MAX_FILES = 400_000
"""Files under packets/ a registry may hold (about six GiB of memory to validate); beyond it nothing is
loaded and one ``too-many-files`` finding says so. ``EVREG_MAX_FILES`` overrides it."""


def load(root: Path, rev: str | None = None, cache: ParseCache | None = None) -> Registry:
    """Load the registry at ``root`` from its working tree or from commit ``rev``."""
    source = open_source(root, rev)
    limit = int(os.environ.get("EVREG_MAX_FILES", MAX_FILES))
    entries = []
    for entry in source.entries():
        entries.append(entry)
        if len(entries) > limit:
            refused = Document(PACKETS, Place(PACKETS, ()), None)
            refused.findings.append(
                Finding(
                    code="too-many-files",
                    file=PACKETS,
                    message=f"packets/ holds more than {limit:,} files; nothing was loaded",
                    hint="split the registry, or raise EVREG_MAX_FILES on a machine with the memory for it",
                )
            )
            return Registry(root, source, [refused])
    documents = [read_document(e, source, cache) for e in entries]
    return Registry(root, source, documents)


class BaseNotFound(ValueError):
    """The base of a change names no commit of the repository."""


def load_change(root: Path, base_rev: str, cache: ParseCache | None = None) -> Registry:
    """The working tree, with ``base`` loaded from the merge base of ``base_rev``
    and HEAD, and ``changed`` the paths that differ from it (untracked included)."""
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
    head = load(root, cache=cache)
    head.base = load(root, base_sha, cache=cache)
    head.changed = frozenset(changed)
    return head
