"""Importers and exporters for outside formats.

An importer reads one file and returns the records it maps to (``Plan``);
the CLI writes them with ``write_plan`` and then reports what ``validate``
finds. Importers write what they read: they refuse only input they cannot
parse or map (with findings), and never fix, drop or invent data.

Importers are discovered through the ``evreg.formats`` entry point group: each names an
:class:`Importer` (``evreg import NAME FILE``), so adding a format is one module and one
registration in ``pyproject.toml``; the CLI loads an importer only when its command runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from evreg import codes, jsonio
from evreg.findings import Finding

ENTRY_POINT_GROUP = "evreg.formats"


class ImportRefused(Exception):
    """The input cannot be parsed or mapped; ``findings`` say why."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


@dataclass
class Plan:
    """Files an import would write: repository-relative path -> file bytes."""

    files: dict[str, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, path: str, record: object) -> None:
        """A record, in canonical form."""
        self.add_file(path, jsonio.canonical(record).encode("utf-8"))

    def add_file(self, path: str, content: bytes) -> None:
        """A file as it is (evidence)."""
        if path in self.files and self.files[path] != content:
            raise ImportRefused(
                [codes.DUPLICATE_ID.at(path, "", f"two input records map to {path}", "ids must be unique per kind")]
            )
        self.files[path] = content


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def write_plan(root: Path, plan: Plan, overwrite: bool = False) -> WriteResult:
    """Write a plan atomically per file. Without ``overwrite`` nothing is
    written when any target exists with other content (no silent overwrite)."""
    result = WriteResult()
    for path, content in plan.files.items():
        target = root / path
        if target.exists() and target.read_bytes() != content:
            result.conflicts.append(path)
    if result.conflicts and not overwrite:
        return result
    for path, content in sorted(plan.files.items()):
        target = root / path
        if target.exists() and target.read_bytes() == content:
            result.unchanged.append(path)
            continue
        jsonio.write_atomic(target, content)
        result.written.append(path)
    return result


@dataclass(frozen=True)
class Target:
    """The existing packet an import attaches measurements to, and the identity
    it declares (revision, artifact, quantization, runtime): the tools' own
    output does not carry it, and an importer never invents it."""

    family: str
    packet: str
    data: dict[str, Any]

    @property
    def folder(self) -> str:
        return f"packets/{self.family}/{self.packet}"

    def evidence_path(self, source_name: str) -> str:
        return f"{self.folder}/evidence/{source_name}"

    def identity(self) -> dict[str, Any]:
        keys = ("revision", "artifact_id", "quantization", "runtime")
        return {k: self.data[k] for k in keys if k in self.data}


def find_target(root: Path, spec: str, file: str) -> Target:
    """Resolve ``FAMILY/PACKET`` to an existing, readable packet record."""
    parts = spec.split("/")
    if len(parts) != 2:
        raise refuse(
            file,
            "",
            f"--packet {spec!r} is not FAMILY/PACKET",
            "scaffold one with `evreg new packet FAMILY PACKET ...`",
        )
    path = root / "packets" / parts[0] / parts[1] / "packet.json"
    data, findings = jsonio.parse(path.read_bytes(), str(path)) if path.is_file() else (None, [])
    if not isinstance(data, dict) or findings:
        raise refuse(
            file,
            "",
            f"no readable packet at packets/{spec}/packet.json",
            "scaffold it first: `evreg new packet FAMILY PACKET --revision ...`",
        )
    return Target(parts[0], parts[1], data)


def refuse(file: str, pointer: str, message: str, hint: str) -> ImportRefused:
    """The error an importer raises for input it cannot map (``import-unmappable``)."""
    return ImportRefused([codes.IMPORT_UNMAPPABLE.at(file, pointer, message, hint)])


def need(value: Any, kind: type | tuple[type, ...], file: str, pointer: str, what: str) -> Any:
    """``value`` if it has the expected type, else refuse naming the field."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise refuse(
            file,
            pointer,
            f"{what} at {pointer or '/'} is missing or not a {getattr(kind, '__name__', kind)}",
            "pass the tool's unmodified JSON output",
        )
    return value


def stated(cards: int | None) -> dict[str, int]:
    """The run's topology as its author stated it on the command line, for the run's ``config``
    (nothing when not stated: missing stays missing, never copied from the packet)."""
    return {} if cards is None else {"cards": cards}


def sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def forbid_citation_markers(value: Any, file: str) -> None:
    """Refuse input whose text already holds ``{{``: the registry reserves it for
    citations, so imported free text must not be able to fake a binding."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, str) and "{{" in node:
            raise refuse(
                file,
                pointer,
                "text contains '{{', which the registry reserves for citations; imported text cannot cite measurements",
                "remove the braces from the source text, then import again",
            )
        if isinstance(node, dict):
            stack.extend((f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}", v) for k, v in node.items())
            stack.extend((f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}", k) for k in node)
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{i}", v) for i, v in enumerate(node))


# -- the extension point ---------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One import as the user asked for it: the file's bytes, how to name it in findings and in the
    packet's evidence, the packet it belongs to (for a tool's output) and the importer's options."""

    raw: bytes
    file: str
    name: str
    target: Target | None = None
    state: str = "community-measured"
    options: Mapping[str, str] = field(default_factory=dict)
    cards: int | None = None
    """Accelerators the run used, as the person who ran it states it (tools' files do not record it)."""

    def packet(self) -> Target:
        assert self.target is not None, "an importer with into_packet=True is always given its packet"
        return self.target


@dataclass(frozen=True)
class Option:
    """A string option of one importer's command (``--NAME``)."""

    name: str
    default: str
    help: str


@dataclass(frozen=True)
class Importer:
    """One input format. ``into_packet``: the file is a tool's output whose runs belong to an existing
    packet (``--packet FAMILY/PACKET``, ``--state``); otherwise the file carries its own identity."""

    name: str
    summary: str
    plan: Callable[[Request], Plan]
    into_packet: bool = True
    options: tuple[Option, ...] = ()


def discover() -> dict[str, EntryPoint]:
    """Every installed importer by command name, not loaded yet."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load(entry: EntryPoint) -> Importer:
    importer = entry.load()
    if not isinstance(importer, Importer) or importer.name != entry.name:
        raise TypeError(f"entry point {entry.name!r} of {ENTRY_POINT_GROUP} is not an Importer named {entry.name!r}")
    return importer
