"""Documents: one file under ``packets/`` each, read, parsed and schema-checked the first
time anything asks for its content; and the recorder of reads outside the unit being checked."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from evreg.core import codes, jsonio
from evreg.core.evidence import is_evidence_key
from evreg.core.findings import Finding, RecordRef, join_pointer
from evreg.core.layout import ID_PATTERN, PACKETS, Place, id_problem, place_of, unit_of
from evreg.records.models import MODELS, TOKEN_KEYS, is_prose
from evreg.store.sources import Entry, Source, blob_id

if TYPE_CHECKING:
    from evreg.store.registry import Registry


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


def current_reads() -> Reads | None:
    """The recorder of the unit being checked in this context, if any."""
    return _READS.get()


@contextlib.contextmanager
def recording(reads: Reads) -> Iterator[Reads]:
    """Record the reads outside ``reads.unit`` made in this context (a context variable, not
    module state: a thread or task checking another unit records into its own)."""
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


_READ_LOG: list[Document] | None = None
"""Documents read inside ``forgetting`` (module state: set only in a forked worker, which has one thread)."""


@contextlib.contextmanager
def forgetting() -> Iterator[None]:
    """Every document first read in this context is set back to unread at its end (``Document.forget``):
    a worker that checks part after part holds the parsed records of one part, not of all it checked."""
    global _READ_LOG
    log: list[Document] = []
    _READ_LOG = log
    try:
        yield
    finally:
        _READ_LOG = None
        for doc in log:
            doc.forget()


class Document:
    """One file under ``packets/``: its place, and -- read when first asked for --
    its bytes, parsed value, schema verdict and the findings of reading it."""

    def __init__(
        self, entry: Entry, source: Source | None, place: Place | None = None, findings: list[Finding] | None = None
    ) -> None:
        """A document at ``entry`` (``place`` and ``findings`` given: one that is not read, such as the
        stand-in for a store refused whole)."""
        self.path = entry.path
        self.entry = entry
        self.place: Place = place or place_of(entry.path)
        self.unit = unit_of(entry.path)
        self.blob = entry.blob
        self.source = source
        self.raw: bytes | None = None
        self._data: Any = None
        self._valid = False
        self._findings: list[Finding] | None = findings  # None: not read yet

    @property
    def read(self) -> bool:
        """Whether the file has been read (and parsed, and checked)."""
        return self._findings is not None

    def _content(self) -> None:
        if self._findings is None:
            self._findings = []
            self._read()
            if _READ_LOG is not None:
                _READ_LOG.append(self)
        reads = _READS.get()
        if reads is not None and self.unit != reads.unit:
            reads.note(f"doc:{self.path}")

    def forget(self) -> None:
        """Back to unread: bytes, value, verdict and what was derived from them are dropped, and read
        again (the same file, the same result) when next asked for. Its blob id is kept."""
        self._findings, self._data, self._valid, self.raw = None, None, False, None
        for derived in ("_texts", "locator"):  # cached properties
            self.__dict__.pop(derived, None)

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
        self._content()
        return self._data.get("kind") if self._valid else None

    @property
    def id(self) -> str | None:
        data = self.data
        return data.get("id", self.place.id) if isinstance(data, dict) else None  # the family list has no id field

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
        limit = jsonio.size_limit(self.path)
        if self.raw is None and (entry.size is None or entry.size <= limit):
            try:
                self.raw = self.source.read(self.path) if self.source else b""
            except OSError as exc:
                found.append(codes.JSON_SYNTAX.at(self.path, "", f"cannot read the file: {exc.strerror}"))
                return
        size = entry.size if self.raw is None else len(self.raw)
        if size is not None and size > limit:
            self.raw = None
            message = (
                f"file is {'more than ' if entry.size is None else ''}{size - (entry.size is None):,} "
                f"bytes; {'the baseline is' if limit != jsonio.MAX_RECORD_BYTES else 'records are'} "
                f"limited to {limit:,} bytes"
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
        if err["type"] == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == ID_PATTERN:
            return codes.SCHEMA.at(
                self,
                pointer,
                f"{where}: {value!r} is not an id: {id_problem(value)}",
                "ids are lowercase letters and digits joined by single '-' or '.' (they become file names)",
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
            what = _KEY_TEXT.get(key)
            if what is None:
                what = _key_text(key)
            if what == "ref":
                refs.append((pointer, text))
            elif what == "prose" or is_prose(key, text):
                prose.append((pointer, text))
        config = self.data.get("config") if isinstance(self.data, dict) else None
        for name in config if isinstance(config, dict) else ():  # a setting's name is shown as text too
            if is_prose("", name):
                prose.append((f"/config/{jsonio.escape_token(name)}", name))
        return refs, prose

    @property
    def refs(self) -> list[tuple[str, str]]:
        """(pointer, reference) of every evidence reference (``evreg.core.evidence.is_evidence_key``); read once."""
        self._content()  # a foreign record's text is a dependency, however often it is read
        return self._texts[0]

    @property
    def prose(self) -> list[tuple[str, str]]:
        """(pointer, text) of every prose field, as ``evreg.records.models.iter_prose``; read once."""
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
    return True  # every string is an evidence reference or may be prose (``evreg.records.models.is_prose``)


_TEXT_KEYS: dict[str, bool] = {}
_KEY_TEXT: dict[str, str] = {}


def _key_text(key: str) -> str:
    """What a string under ``key`` is: an evidence reference (``ref``), prose (``prose``), or prose unless it is
    shaped like a token (``token``: ``evreg.records.models.is_prose``); remembered for the first 10,000 keys."""
    what = "ref" if is_evidence_key(key) else "token" if key in TOKEN_KEYS else "prose"
    if len(_KEY_TEXT) < 10_000:
        _KEY_TEXT[key] = what
    return what
