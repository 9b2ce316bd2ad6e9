"""The importer API: what an importer is (``Importer``, its ``Request`` and ``Option``s), what it returns (``Plan``),
the packet a tool's file joins (``Target``), how importers are discovered, and how one refuses a file."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from evreg.core import codes, jsonio
from evreg.core.errors import Refused
from evreg.core.findings import Finding, escape_token
from evreg.core.layout import slug

ENTRY_POINT_GROUP = "evreg.formats"


class ImportRefused(Refused):
    """The input cannot be parsed or mapped; ``findings`` say why."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(findings=findings)


@dataclass(frozen=True)
class FileIdentity:
    """What a tool's file says about its run (None where it says nothing)."""

    model: str | None = None
    """The model as the file names it: a repository id, a path or a GGUF file name."""
    quantization: str | None = None
    runtime: str | None = None
    hardware: str | None = None
    cards: int | None = None
    where: dict[str, str] = field(default_factory=dict)
    """The pointer of each field in the file, for messages."""
    stated: tuple[str, ...] = ()
    """Fields the contributor stated on the command line (the file does not hold them)."""

    def said(self, key: str) -> str:
        return "the stated" if key in self.stated else "the file's"


@dataclass
class Plan:
    """Files an import would write: repository-relative path -> file bytes."""

    files: dict[str, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    """What the importer noticed but wrote anyway (identity the file does not hold), reported with the import."""
    identities: list[FileIdentity] = field(default_factory=list)
    """The identity each run of the file states (``check_scope``), in file order."""

    def warn(self, findings: list[Finding]) -> None:
        for f in findings:
            if all(f.message != w.message for w in self.warnings):
                self.warnings.append(f)

    def add(self, path: str, record: object) -> None:
        """A record, in canonical form; a non-finite number a tool wrote (``NaN``, ``Infinity``) kept as its text where
        it is a setting or a note, and refused where it would be a measurement."""
        self.add_file(path, jsonio.canonical(_finite(record, path, "")).encode("utf-8"))

    def add_file(self, path: str, content: bytes) -> None:
        """A file as it is (evidence)."""
        if path in self.files and self.files[path] != content:
            raise ImportRefused(
                [codes.DUPLICATE_ID.at(path, "", f"two input records map to {path}", "ids must be unique per kind")]
            )
        self.files[path] = content


@dataclass(frozen=True)
class Target:
    """The existing packet an import attaches measurements to, and the identity it declares (revision,
    artifact, quantization, runtime, hardware, cards). The files' own identity is compared with it
    (``check_scope``); only what no tool file can hold (the weight revision and artifact ids) is taken from it."""

    family: str
    packet: str
    data: dict[str, Any]
    weights: dict[str, Any] = field(default_factory=dict)
    """The family's weight revision the packet names (``repository``, ``revision`` commit)."""
    artifact: dict[str, Any] = field(default_factory=dict)
    """The quantized artifact the packet names, if any (``repository``, ``quantization``)."""
    root: Path | None = None
    stated_hardware: str | None = None
    """The accelerators the runs used, as the contributor states them (``--hardware``) where the file does not."""

    @property
    def folder(self) -> str:
        return f"packets/{self.family}/{self.packet}"

    def evidence_path(self, source_name: str) -> str:
        return f"{self.folder}/evidence/{source_name}"

    def identity(self) -> dict[str, Any]:
        """What a record of this packet takes from it: the ids of the weights it ran (no tool file holds them)."""
        keys = ("revision", "artifact_id", "quantization")
        return {k: self.data[k] for k in keys if k in self.data}


def find_target(root: Path, spec: str, file: str) -> Target:
    """Resolve ``FAMILY/PACKET`` to an existing, readable packet record (and its family's weights)."""
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
    fam_path = root / "packets" / parts[0] / "family.json"
    fam, _ = jsonio.parse(fam_path.read_bytes(), str(fam_path)) if fam_path.is_file() else (None, [])
    weights: dict[str, Any] = {}
    artifact: dict[str, Any] = {}
    for rev in (fam or {}).get("weight_revisions", []) if isinstance(fam, dict) else []:
        if isinstance(rev, dict) and rev.get("id") == data.get("revision"):
            weights = rev
            for art in rev.get("quantized_artifacts") or []:
                if isinstance(art, dict) and art.get("id") == data.get("artifact_id"):
                    artifact = art
    return Target(parts[0], parts[1], data, weights, artifact, root)


def refuse(file: str, pointer: str, message: str, hint: str) -> ImportRefused:
    """The error an importer raises for input it cannot map (``import-unmappable``)."""
    return ImportRefused([codes.IMPORT_UNMAPPABLE.at(file, pointer, message, hint)])


def need(value: Any, kind: type | tuple[type, ...], file: str, pointer: str, what: str) -> Any:
    """``value`` if it has the expected type, else refuse naming the field."""
    if isinstance(value, bool) or not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(dict.fromkeys(JSON_KIND.get(k, k.__name__) for k in kinds))
        if value is None or isinstance(value, bool):
            found = "missing" if value is None else str(value).lower()
        else:
            found = f"{JSON_KIND.get(type(value), type(value).__name__)} {_short(value)}"
        raise refuse(
            file,
            pointer,
            f"{what} at {pointer or '/'} should be {expected}; it is {found}",
            "pass the tool's unmodified JSON output",
        )
    return value


JSON_KIND: dict[type, str] = {
    int: "a whole number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
    bool: "true or false",
}
"""What a Python type is called in a JSON file, for messages (a reader of the file never sees Python's names)."""


def _short(value: Any) -> str:
    """``value`` as the file writes it (JSON, not Python's repr), shortened."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True, default=str)
    except ValueError:  # a value nested too deep to write out
        text = "…"
    return text if len(text) <= 40 else text[:39] + "…"


def stated(cards: int | None) -> dict[str, int]:
    """The run's topology as its author stated it on the command line, for the run's ``config``
    (nothing when not stated: missing stays missing, never copied from the packet)."""
    return {} if cards is None else {"cards": cards}


def sha256(data: bytes) -> str:

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
            stack.extend((f"{pointer}/{escape_token(k)}", v) for k, v in node.items())
            stack.extend((f"{pointer}/{escape_token(k)}", k) for k in node)
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
    folder: Callable[[Path], list[Path]] | None = None
    """For a tool that writes a folder (``vllm bench sweep``): the files of it to import, each as if given
    alone, under a name that keeps its place in the folder (``folder_name``). None: FILE must be a file."""


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def evidence_name(name: str) -> str:
    """The evidence file name of a tool's file given by itself: its own name where that is a plain one (letters,
    digits, ``.``, ``_``, ``-``, at most 100), else its words as one safe name (``results (1).json`` is
    ``results-1.json``)."""
    if _SAFE_NAME.fullmatch(name):
        return name
    stem, dot, suffix = name.rpartition(".")
    stem, suffix = (stem, suffix) if dot and stem else (name, "")
    safe = slug(stem)[:80] or "output"
    return f"{safe}.{slug(suffix)[:10]}" if slug(suffix) else safe


def folder_name(folder: Path, path: Path) -> str:
    """The evidence name of a file of an output folder: its path in the folder as one safe file name."""
    rel = path.relative_to(folder)
    stem = slug("-".join([folder.name, *rel.parent.parts, rel.stem])) or "output"
    return f"{stem}{path.suffix.lower()}"


def merge(plans: list[Plan]) -> Plan:
    """The plans of the files of one folder as one (refused whole if any two write one path differently)."""
    out = Plan()
    for plan in plans:
        for path, content in plan.files.items():
            out.add_file(path, content)
        out.notes.extend(plan.notes)
        out.warn(plan.warnings)
        out.identities.extend(plan.identities)
    return out


def discover() -> dict[str, EntryPoint]:
    """Every installed importer by command name, not loaded yet."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load(entry: EntryPoint) -> Importer:
    importer = entry.load()
    if not isinstance(importer, Importer) or importer.name != entry.name:
        raise TypeError(f"entry point {entry.name!r} of {ENTRY_POINT_GROUP} is not an Importer named {entry.name!r}")
    return importer


def _finite(value: Any, path: str, pointer: str) -> Any:
    """``value`` with every non-finite float as the text a tool means by it; refused under ``metrics`` or ``stderr``
    (no measurement is NaN), naming where."""
    if isinstance(value, float) and not math.isfinite(value):
        if pointer.startswith(("/metrics/", "/stderr/")):
            raise ImportRefused(
                [
                    codes.IMPORT_UNMAPPABLE.at(
                        path,
                        pointer,
                        f"the tool wrote {value} where a measurement belongs: NaN or Infinity is no measurement",
                        "the importer should have set it aside; report the file, or remove that run from it",
                    )
                ]
            )
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite(v, path, f"{pointer}/{escape_token(str(k))}") for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v, path, f"{pointer}/{i}") for i, v in enumerate(value)]
    return value
