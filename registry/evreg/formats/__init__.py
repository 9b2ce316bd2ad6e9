"""Importers and exporters for outside formats.

An importer reads one file and returns the records it maps to (``Plan``);
the application writes them with ``store.writer`` and then reports what ``validate``
finds. Importers write what they read: they refuse only input they cannot
parse or map (with findings), and never fix, drop or invent data.

Importers are discovered through the ``evreg.formats`` entry point group: each names an
:class:`Importer` (``evreg import NAME FILE``), so adding a format is one module and one
registration in ``pyproject.toml``; the CLI loads an importer only when its command runs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from evreg.claims import scope
from evreg.core import codes, jsonio
from evreg.core.errors import Refused
from evreg.core.evidence import TEXT_NUMBER, decode
from evreg.core.findings import Finding, Severity, escape_token, unescape_token
from evreg.core.layout import record_path, slug
from evreg.store import MEASUREMENT_KINDS

ENTRY_POINT_GROUP = "evreg.formats"


class ImportRefused(Refused):
    """The input cannot be parsed or mapped; ``findings`` say why."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(findings=findings)


@dataclass
class Plan:
    """Files an import would write: repository-relative path -> file bytes."""

    files: dict[str, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    """What the importer noticed but wrote anyway (identity the file does not hold), reported with the import."""

    def warn(self, findings: list[Finding]) -> None:
        for f in findings:
            if all(f.message != w.message for w in self.warnings):
                self.warnings.append(f)

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
    return out


def discover() -> dict[str, EntryPoint]:
    """Every installed importer by command name, not loaded yet."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load(entry: EntryPoint) -> Importer:
    importer = entry.load()
    if not isinstance(importer, Importer) or importer.name != entry.name:
        raise TypeError(f"entry point {entry.name!r} of {ENTRY_POINT_GROUP} is not an Importer named {entry.name!r}")
    return importer


# -- shared by the tool importers: reading, identity, ids, failed runs --------------------------------


@dataclass(frozen=True)
class Source:
    """A tool's file as read: its objects (one, or one per line of JSON Lines) and how to point back into it.
    The bytes are kept as they are (evidence, hashed as they are); only the reading decodes a UTF-8 BOM or
    UTF-16 (PowerShell's ``>``)."""

    objects: list[Any]
    lines: bool
    """JSON Lines: ``objects[i]`` is line ``i + 1``."""
    encoding: str
    text: str
    log_lines: tuple[int, ...] = ()
    """Lines (from 1) that are a tool's log, not its JSON (ik_llama.cpp prints them into ``-o json``): read past,
    kept in the evidence; the numbers are then located by line (``line:N:K``), as validation reads the file."""

    def rows(self) -> list[tuple[int, str, Any]]:
        """The file's results as (object index, JSON pointer prefix, result): the items of a JSON array, each
        line of JSON Lines, or the one object of a file that holds one."""
        if self.lines:
            return [(i, "", obj) for i, obj in enumerate(self.objects)]
        value = self.objects[0]
        if isinstance(value, list):
            return [(0, f"/{i}", obj) for i, obj in enumerate(value)]
        return [(0, "", value)]

    def locator(self, index: int, pointer: str) -> str | None:
        """The evidence locator of the number at ``pointer`` in object ``index``: a JSON pointer into the file,
        ``line:N:K`` (the Kth number of line N) for JSON Lines. Validation reads the file decoded as it was read
        (a UTF-8 BOM, UTF-16), so the locator holds for every encoding."""
        if self.log_lines:
            return self._line_of(pointer)
        if not self.lines:
            return pointer
        line = self.text.splitlines()[index]
        nth = _nth_number(line, pointer)
        return None if nth is None else f"line:{index + 1}:{nth}"

    def _line_of(self, pointer: str) -> str | None:
        """``line:N:K`` of ``/ROW/KEY[/INDEX]`` in a file read past log lines: KEY's ROW-th occurrence holds it."""
        m = re.fullmatch(r"/(\d+)/([^/]+)(/\d+)?", pointer)
        if m is None:
            return None
        key = '"' + unescape_token(m.group(2)) + '"'
        hits = [n for n, line in enumerate(self.text.splitlines()) if re.search(re.escape(key) + r"\s*:", line)]
        row = int(m.group(1))
        if row >= len(hits):
            return None
        nth = _nth_number(self.text.splitlines()[hits[row]], pointer[len(f"/{row}") :])
        return None if nth is None else f"line:{hits[row] + 1}:{nth}"


NUMBER_IN_TEXT = TEXT_NUMBER
"""A number in a line of text, as the evidence check counts them for ``line:N:K`` locators (one grammar)."""


def _nth_number(line: str, pointer: str) -> int | None:
    """Which number of ``line`` (1-based) is the value at ``pointer`` (``/key`` or ``/key/index``)."""
    tokens = [unescape_token(t) for t in pointer.strip("/").split("/")]
    m = re.search(r'"' + re.escape(tokens[0]) + r'"\s*:\s*', line)
    if m is None:
        return None
    start = m.end()
    if len(tokens) == 2:
        array = NUMBER_IN_TEXT.finditer(line, start)
        for _ in range(int(tokens[1])):
            next(array, None)
        hit = next(array, None)
        start = hit.start() if hit else -1
    before = [n for n in NUMBER_IN_TEXT.finditer(line) if n.start() < start]
    found = NUMBER_IN_TEXT.match(line, start) if start >= 0 else None
    return len(before) + 1 if found else None


JSON_LINE = re.compile(r'\s*(?:["{}\[\],:]|-?\d|true\b|false\b|null\b|$)')
"""How every line of pretty-printed JSON starts; a line that starts otherwise is a log line."""


def past_log_lines(text: str) -> tuple[Any, tuple[int, ...]] | None:
    """The JSON of a tool's output with the log lines it printed into it (``ggml_...``, ``==== Repacked ...``) read as
    blank lines, and their numbers; None when there are none or the rest is not JSON either."""
    lines = text.splitlines()
    logs = tuple(n for n, line in enumerate(lines, 1) if not JSON_LINE.match(line))
    if not logs:
        return None
    kept = "\n".join("" if n in logs else line for n, line in enumerate(lines, 1))
    value, findings = jsonio.parse(kept.encode("utf-8"), "")
    return None if findings else (value, logs)


def read_source(raw: bytes, file: str, what: str, logs: bool = False) -> Source:
    """Parse a tool's JSON or JSON Lines output; refuse an empty file or one that is neither. ``logs``: the tool may
    print log lines into its JSON; they are read past (and listed in ``Source.log_lines``)."""
    text, encoding = decode(raw)
    if not text.strip():
        raise refuse(file, "", f"the file is empty: no {what} to import", "pass the tool's output file")
    value, findings = jsonio.parse(text.encode("utf-8"), file)
    if not findings:
        return Source([value], False, encoding, text)
    if logs and (recovered := past_log_lines(text)) is not None:
        return Source([recovered[0]], False, encoding, text, recovered[1])
    if (kind := looks_like(text)) is not None:
        raise wrong_format(file, kind, what)
    lines = text.splitlines()
    if len(lines) > 1 and all(line.strip() for line in lines):
        objects = []
        for n, line in enumerate(lines, 1):
            obj, problems = jsonio.parse(line.encode("utf-8"), f"{file}:{n}")
            if problems:
                raise ImportRefused(log_lines_finding(file, lines) or findings)
            objects.append(obj)
        return Source(objects, True, encoding, text)
    raise ImportRefused(log_lines_finding(file, lines) or findings)


def log_lines_finding(file: str, lines: list[str]) -> list[Finding]:
    """The refusal of JSON with log lines in it (some lines JSON, some a tool's log), naming the first log line."""
    logs = [n for n, line in enumerate(lines, 1) if not JSON_LINE.match(line)]
    if not logs or len(logs) == len(lines):
        return []
    first = lines[logs[0] - 1].strip()
    return [
        codes.IMPORT_UNMAPPABLE.at(
            file,
            f"line:{logs[0]}",
            f"the file is JSON with {len(logs)} log line(s) printed into it, and not readable even without them: "
            f"line {logs[0]} is {first[:80]!r}",
            "pass the tool's JSON output alone (send its log to stderr or another file); keep the file as it is "
            "if only log lines are in it: the importer reads past them",
        )
    ]


def looks_like(value: Any) -> str | None:
    """The importer whose format ``value`` has (a parsed file, or a text file's text), judged by the keys or
    lines each tool always writes."""
    if isinstance(value, str):
        head = value[: 1 << 16]
        return "mlperf" if "MLPerf Results Summary" in head or ":::MLLOG" in head else None
    first = value[0] if isinstance(value, list) and value else value
    if isinstance(first, dict):
        config = first.get("input_config")
        if "samples_ts" in first or ("n_prompt" in first and "n_gen" in first):
            return "llama-bench"
        if "results" in first and ("versions" in first or "configs" in first or "n-shot" in first):
            return "lm-eval"
        aiperf_config = isinstance(config, dict) and (AIPERF_CONFIG & config.keys() or "records" in first)
        if "aiperf_version" in first or aiperf_config:
            return "aiperf"
        if "run_name" in first and "overall_throughput" in first:
            return "sglang-one-batch"
        if "total_output_tokens_retokenized" in first:
            return "sglang-bench"
        if "output_throughput" in first and "completed" in first:
            return "vllm-bench"
        if "runs" in first and "failures" in first:
            return "vllm-run-log"
        if str(first.get("format", "")).startswith("neural-download"):
            return "neural-download"
    return None


AIPERF_CONFIG = {"models", "loadgen", "phases", "service_kind", "subcommand"}
"""Keys of an AIPerf (``models``, ``loadgen``, ``phases``) or GenAI-Perf (``service_kind``, ``subcommand``)
profile export's ``input_config``."""


def sniff(raw: bytes) -> Any:
    """What ``looks_like`` judges a file by: its JSON, the JSON of its first line (JSON Lines), or its text."""
    text = decode(raw)[0]
    for candidate in (text, text.split("\n", 1)[0]):
        try:
            return jsonio.loads(candidate)
        except ValueError:
            continue
    return text


def wrong_format(file: str, kind: str, what: str) -> ImportRefused:
    """The refusal of a file another importer reads, naming that importer."""
    return ImportRefused(
        [
            codes.IMPORT_WRONG_FORMAT.at(
                file,
                "",
                f"this is not {what}: it looks like {kind} output",
                f"import it with `evreg import {kind} {Path(file).name} ...`",
            )
        ]
    )


def refuse_other_format(value: Any, file: str, mine: str, what: str) -> None:
    """Refuse a file another importer reads, naming that importer."""
    kind = looks_like(value)
    if kind is not None and kind != mine:
        raise wrong_format(file, kind, what)


# identity -----------------------------------------------------------------------------------


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


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


GGUF_QUANT = re.compile(r"(?i)(?:^|[-_.:])(i?q\d(?:_[a-z0-9]+)*|bf16|f16|f32|fp16|fp8|nvfp4|mxfp4)(?=[-_.:]|$)")
"""A quantization word in a model file or served name, after ``-``, ``_``, ``.`` or a tag's ``:`` (Ollama's and
llama-server's ``llama-3.2-3b-instruct-gguf:q4_k_m``)."""
QUANT_WORDS = ("nvfp4", "mxfp4", "fp8", "awq", "gptq", "int4", "int8", "w4a16", "w8a8", "w4a4", "bf16", "fp16")


def quantization_of_name(name: str) -> str | None:
    """The quantization a model file or repository name states (``...-Q4_K_M.gguf``, ``...-FP8``), if any."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = re.sub(r"(?i)\.gguf$", "", base)
    hits = GGUF_QUANT.findall(base)
    if hits:
        return hits[-1].upper()
    words = [w for w in re.split(r"[-_.:]", base.lower()) if w in QUANT_WORDS]
    return words[-1].upper() if words else None


def _same_model(named: str, target: Target) -> bool:
    """A file's model name is the packet's weights: it names the weights' or the artifact's repository, or
    (a file name or path) its words are those of one of them, quantization and file suffix aside."""
    repos = [str(r) for r in (target.weights.get("repository"), target.artifact.get("repository")) if r]
    if not repos:
        return True  # nothing to compare with: the family does not say
    text = named.replace("\\", "/")
    if any(text.lower() == r.lower() for r in repos):
        return True
    base = re.sub(r"(?i)\.gguf$", "", text.rsplit("/", 1)[-1])
    quant = quantization_of_name(base)
    if quant:
        base = re.sub(re.escape(quant), "", base, flags=re.I)
    words = "".join(w for w in _tokens(base) if w not in {"ggml", "model", "gguf", "of"})
    if not words:
        return True  # a generic file name says nothing about the model
    names = ["".join(_tokens(r.rsplit("/", 1)[-1])) for r in repos]
    return any(words in n or n in words for n in names)


def _same_runtime(found: str, declared: str) -> bool:
    """The packet's runtime build, or (a file that names only the engine: SGLang's ``backend``) its engine."""
    from evreg.claims.runtimes import parse_runtime, runtime_matches

    if runtime_matches(declared, {"runtime": found}):
        return True
    return not parse_runtime(found).pinned and runtime_matches(found, {"runtime": declared})


def scope_conflicts(target: Target, found: FileIdentity) -> list[tuple[str, str]]:
    """How the file's identity differs from the packet's, as (field, message naming both sides)."""
    p = target.data
    out: list[tuple[str, str]] = []
    if found.model and not _same_model(found.model, target):
        repos = " or ".join(str(r) for r in (target.weights.get("repository"), target.artifact.get("repository")) if r)
        out.append(("model", f"{found.said('model')} model {found.model!r} is not the packet's weights ({repos})"))
    declared_q = p.get("quantization") or target.artifact.get("quantization")
    if found.quantization and declared_q and not scope.same_quantization(found.quantization, str(declared_q)):
        out.append(
            (
                "quantization",
                f"{found.said('quantization')} quantization {found.quantization!r} is not the packet's {declared_q!r}",
            )
        )
    runtime = p.get("runtime")
    if found.runtime and isinstance(runtime, str) and not _same_runtime(found.runtime, runtime):
        out.append(
            ("runtime", f"{found.said('runtime')} runtime {found.runtime!r} is not the packet's {p['runtime']!r}")
        )
    if found.hardware and isinstance(p.get("hardware"), str) and not scope.same_hardware(found.hardware, p["hardware"]):
        out.append(
            ("hardware", f"{found.said('hardware')} hardware {found.hardware!r} is not the packet's {p['hardware']!r}")
        )
    if found.cards is not None and isinstance(p.get("cards"), int) and found.cards != p["cards"]:
        out.append(("cards", f"{found.said('cards')} run used {found.cards} cards, the packet {p['cards']}"))
    return out


def check_scope(target: Target, found: FileIdentity, file: str, pointer: str = "") -> list[Finding]:
    """Refuse a file whose run is not the packet's (every difference named, both sides); return warnings
    for the identity the file does not hold (it stays missing in the records, unless the contributor states it)."""
    if found.hardware is None and target.stated_hardware:
        found = replace(found, hardware=target.stated_hardware, stated=(*found.stated, "hardware"))
    conflicts = scope_conflicts(target, found)
    if conflicts:
        raise ImportRefused(
            [
                codes.IMPORT_OUT_OF_SCOPE.at(
                    file,
                    found.where.get(key, pointer),
                    f"{message}; nothing was imported into packet {target.family}/{target.packet}",
                )
                for key, message in conflicts
            ]
        )
    missing = [k for k in ("model", "runtime", "hardware") if getattr(found, k) is None]
    if not missing:
        return []
    return [
        codes.IMPORT_IDENTITY_MISSING.at(
            file,
            pointer,
            f"the file does not say the run's {', '.join(missing)}; the records leave it unstated",
            severity=Severity.WARNING,
        )
    ]


def with_stated_hardware(plan: Plan, target: Target | None, file: str) -> Plan:
    """The runs an import writes, with the hardware the contributor stated (``--hardware``) where the file names
    none; stated hardware that is not the packet's is refused like a file's."""
    hardware = target.stated_hardware if target is not None else None
    if target is None or not hardware:
        return plan
    declared = target.data.get("hardware")
    if isinstance(declared, str) and not scope.same_hardware(hardware, declared):
        raise ImportRefused(
            [
                codes.IMPORT_OUT_OF_SCOPE.at(
                    file, "", f"the stated hardware {hardware!r} is not the packet's {declared!r}; nothing was imported"
                )
            ]
        )
    for path, raw in list(plan.files.items()):
        if not path.endswith(".json") or "/evidence/" in path:
            continue
        record = jsonio.loads(raw)
        if isinstance(record, dict) and record.get("kind") in MEASUREMENT_KINDS and "hardware" not in record:
            plan.files[path] = jsonio.canonical({**record, "hardware": hardware}).encode("utf-8")
    return plan


# ids, repeats and corrections ------------------------------------------------------------------


def content_id(prefix: str, raw: bytes, target: Target, *row: object) -> str:
    """A record id from what it is: the tool, the file's bytes, the packet it joins and the row in the file.
    Importing the same file again gives the same ids (a no-op); another file, packet or row, other ids."""
    digest = hashlib.sha256(raw + f"\0{target.family}/{target.packet}\0".encode()).hexdigest()[:10]
    return slug("-".join([prefix, *(str(r) for r in row), digest]))[:120].strip("-")


def evidence_for(target: Target, name: str, raw: bytes) -> str:
    """Where the file is kept: ``evidence/NAME``, or beside it with its hash when another file of that name is
    there already (evidence that records cite is never replaced)."""
    path = target.evidence_path(name)
    existing = target.root / path if target.root is not None else None
    if existing is None or not existing.exists() or existing.read_bytes() == raw:
        return path
    stem, dot, ext = name.rpartition(".")
    short = hashlib.sha256(raw).hexdigest()[:10]
    return target.evidence_path(f"{stem}-{short}.{ext}" if dot else f"{name}-{short}")


Earlier = dict[str, dict[str, tuple[str | None, str]]]
"""What earlier imports of a file of one name wrote into a packet: by row, each record's id, what it supersedes and
which run it is (``run_key``)."""


def run_key(record: dict[str, Any]) -> str:
    """Which run a record is, numbers aside: its kind, class, workload and settings. A record of a changed file
    corrects an earlier one only when they are the same run (another run in a file of the same name, such as every
    ``mlperf_log_summary.txt``, is not a correction)."""
    return jsonio.canonical({k: record.get(k) for k in ("kind", "measurement_class", "workload", "config")})


def earlier_imports(target: Target, source: str) -> Earlier:
    """Records earlier imports of a file of this name wrote into the packet, by row: ``{row: {id: (supersedes,
    run key)}}``."""
    if target.root is None:
        return {}
    out: Earlier = {}
    for kind, packet in (("run-measurement", target.packet), ("closure", None)):
        folder = (target.root / record_path(kind, target.family, "x", packet)).parent
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            data, problems = jsonio.parse(path.read_bytes(), str(path))
            imported = data.get("imported_from") if isinstance(data, dict) and not problems else None
            mine = packet is not None or (data.get("selectors") or {}).get("packet") == target.packet
            if isinstance(imported, dict) and imported.get("file") == source and mine and isinstance(data["id"], str):
                old = data.get("supersedes")
                entry = (old if isinstance(old, str) else None, run_key(data))
                out.setdefault(str(imported.get("row")), {})[data["id"]] = entry
    return out


def link_correction(record: dict[str, Any], earlier: Earlier, row: str) -> None:
    """A record of a changed file supersedes the latest record (the one no other supersedes) that earlier imports of
    that row wrote for the same run; the record an earlier import already wrote keeps what it supersedes (importing
    it again is a no-op, whatever order the ids sort in)."""
    chain = earlier.get(row) or {}
    if record["id"] in chain:
        if chain[record["id"]][0] is not None:
            record["supersedes"] = chain[record["id"]][0]
        return
    replaced = {old for old, _ in chain.values()}
    same = sorted(i for i, (_, key) in chain.items() if key == run_key(record) and i not in replaced)
    if same:
        record["supersedes"] = same[-1]


def failed_run(
    target: Target, rid: str, evidence: str, raw: bytes, reason: str, detail: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """A run that produced no measurement, as a closure of the family with its reason and the packet's scope as
    its selectors (never a measurement of zero)."""
    selectors: dict[str, Any] = {
        k: target.data[k] for k in ("revision", "quantization", "runtime", "hardware") if k in target.data
    }
    selectors["packet"] = target.packet
    record: dict[str, Any] = {
        "kind": "closure",
        "id": rid,
        "state": "unsupported",
        "selectors": selectors,
        **({"artifact_id": target.data["artifact_id"]} if "artifact_id" in target.data else {}),
        "reason": reason,
        "evidence": evidence,
        "evidence_sha256": {evidence: hashlib.sha256(raw).hexdigest()},
        "failure": detail,
    }
    return record_path("closure", target.family, rid), record
