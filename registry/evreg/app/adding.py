"""``evreg add``: a tool's output files into the registry in one step.

Each file's tool is recognised (``formats.looks_like``, or named), the file is read once against no packet to learn
the identity it states (model, quantization, runtime, hardware, cards), what the contributor states fills what it does
not, and that identity finds the family, weight revision, artifact and packet it belongs to -- by the canonical model
of the vocabulary, else by repository -- or plans the records to create. A fact neither states is one question (a
finding naming the option). Then every file is imported into its packet, and the records, evidence and changed family
records are written together: all, or (refused, or bringing errors) nothing."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evreg import formats
from evreg.app import imports, scaffold
from evreg.claims import scope
from evreg.core import codes, jsonio
from evreg.core.errors import Refused
from evreg.core.findings import Finding
from evreg.core.layout import PACKETS, record_path, slug
from evreg.core.vocab import model_of_repository, models, repository_key
from evreg.formats import FileIdentity, Importer, Plan, Target
from evreg.records.models import revisions_of
from evreg.store import Registry, load

__all__ = ["Added", "Placement", "Stated", "add", "plan"]


@dataclass(frozen=True)
class Stated:
    """What the contributor states on the command line, for the facts the files do not hold."""

    hardware: str | None = None
    cards: int | None = None
    runtime: str | None = None
    model: str | None = None
    """The weights: a vocabulary model id or the base weights' repository (``ORG/NAME``)."""
    weights: str | None = None
    """The repository the quantized weights were published in (``ORG/NAME``), for a file that names only a file."""
    quantization: str | None = None
    commit: str | None = None
    """The commit of the base weights (40 hex), for a family ``add`` creates."""
    state: str = "community-measured"
    tool: str | None = None
    """The importer to read every file with (``--tool``); None: recognised from each file."""


@dataclass
class Placement:
    """One input (a file, or a tool's output folder) and the packet it goes into."""

    source: Path
    importer: Importer
    identity: FileIdentity
    family: str
    revision: str
    artifact: str | None
    packet: str
    created: list[str] = field(default_factory=list)
    """What this input creates: ``family F``, ``artifact A of F/R``, ``packet F/P`` (empty: it joins what exists)."""
    plan: Plan = field(default_factory=Plan)


@dataclass
class Added:
    placements: list[Placement]
    skipped: list[str]
    """Files of a given folder that no importer reads (listed, not read)."""
    files: Plan = field(default_factory=Plan)
    """Every file the inputs' imports write, with the family and packet records they create or change."""

    @property
    def creates(self) -> list[str]:
        return [c for p in self.placements for c in p.created]


# -- recognising the files ----------------------------------------------------------------------------------------


def _tool_importers() -> dict[str, Importer]:
    return {name: found for name in imports.importer_names() if (found := imports.importer(name)) is not None}


def inputs(paths: Iterable[Path], tool: str | None) -> tuple[list[tuple[Path, Importer]], list[str]]:
    """Each input with its importer, and the files of given folders no importer reads. A folder a tool writes whole
    (``vllm bench sweep``) is one input; any other folder is its files, each recognised."""
    importers = _tool_importers()
    if tool is not None and tool not in importers:
        raise Refused(f"no importer {tool!r}; installed: {', '.join(sorted(importers))}")
    out: list[tuple[Path, Importer]] = []
    skipped: list[str] = []
    for path in paths:
        if path.is_dir():
            folder_tools = [i for i in importers.values() if i.folder is not None and (tool in (None, i.name))]
            whole = next((i for i in folder_tools if i.folder is not None and i.folder(path)), None)
            if whole is not None:
                out.append((path, whole))
                continue
            files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            for file in files:
                found = importers.get(tool) if tool else _recognise(file, importers)
                if found is None:
                    skipped.append(str(file))
                else:
                    out.append((file, found))
            if not any(p == f for p, _ in out for f in files):
                raise Refused(f"{path}: no file in the folder is a tool's output evreg reads")
        else:
            found = importers[tool] if tool else _recognise(path, importers)
            if found is None:
                kind = formats.looks_like(formats.sniff(path.read_bytes()))
                problem = (
                    formats.wrong_format(str(path), kind, "a tool's output evreg reads").findings
                    if kind is not None
                    else [_unrecognised(path, importers)]
                )
                raise Refused("add refused: nothing was written", problem)
            out.append((path, found))
    return out, skipped


def _recognise(path: Path, importers: dict[str, Importer]) -> Importer | None:
    """The importer of the tool that wrote ``path``; None for a file no importer reads (another output of a tool,
    such as its CSV, or no tool's)."""
    kind = formats.looks_like(formats.sniff(path.read_bytes()))
    return importers.get(kind) if kind else None


def _unrecognised(path: Path, importers: dict[str, Importer]) -> Finding:
    return codes.IMPORT_WRONG_FORMAT.at(
        str(path),
        "",
        "evreg cannot tell which tool wrote this file: it has none of the keys or lines each known tool's output has",
        f"name its tool with --tool NAME ({', '.join(sorted(importers))}); a tool evreg does not read yet needs "
        "its records written by hand (site/contributing.md)",
    )


# -- the identity the files state ---------------------------------------------------------------------------------

PROBE = Target("(probe)", "(probe)", {})
"""A packet that declares nothing: reading a file into it refuses nothing for scope, and records the identity each
run states (``Plan.identities``)."""


def _options(importer: Importer, stated: Stated) -> dict[str, str]:
    names = {o.name for o in importer.options}
    return {"runtime": stated.runtime} if stated.runtime and "runtime" in names else {}


def _read(root: Path, source: Path, importer: Importer, stated: Stated, target: Target) -> Plan:
    return imports.plan(
        root, importer, source, _options(importer, stated), target, stated.state, stated.cards, stated.hardware
    )


def identity_of(root: Path, source: Path, importer: Importer, stated: Stated) -> FileIdentity:
    """The one identity every run of ``source`` states, the contributor's statements filling its gaps; a file of
    runs of several identities is refused (each is added by itself)."""
    runs = _read(root, source, importer, stated, PROBE).identities
    merged: dict[str, Any] = {}
    for key in ("model", "quantization", "runtime", "hardware", "cards"):
        values = list(dict.fromkeys(getattr(i, key) for i in runs if getattr(i, key) is not None))
        if len(values) > 1:
            raise Refused(
                "add refused: nothing was written",
                [
                    codes.IMPORT_UNMAPPABLE.at(
                        str(source),
                        "",
                        f"the file holds runs of {len(values)} {key}s ({', '.join(map(str, values))}): one packet "
                        "holds runs of one identity",
                        "split the runs into one file per identity and add each, or import them with "
                        "`evreg import TOOL FILE --packet FAMILY/PACKET`",
                    )
                ],
            )
        merged[key] = values[0] if values else None
    said = tuple(dict.fromkeys(k for i in runs for k in i.stated))
    where = {k: v for i in runs for k, v in i.where.items()}
    found = FileIdentity(**merged, where=where, stated=said)
    if found.hardware is None and stated.hardware:
        found = replace(found, hardware=stated.hardware, stated=(*found.stated, "hardware"))
    if found.cards is None and stated.cards is not None:
        found = replace(found, cards=stated.cards, stated=(*found.stated, "cards"))
    if found.quantization is None and stated.quantization:
        found = replace(found, quantization=stated.quantization, stated=(*found.stated, "quantization"))
    if stated.cards is not None and found.cards is not None and stated.cards != found.cards:
        raise Refused(f"add refused: {source} ran on {found.cards} cards, but --cards says {stated.cards}")
    said_quant = found.quantization if "quantization" not in found.stated else None
    if stated.quantization and said_quant and not scope.same_quantization(stated.quantization, said_quant):
        raise Refused(
            f"add refused: {source} states quantization {said_quant!r}, but --quantization says {stated.quantization!r}"
        )
    own_runtime = found.runtime if "runtime" not in found.stated else None
    if stated.runtime and own_runtime and not _runtime_agrees(own_runtime, stated.runtime):
        raise Refused(f"add refused: {source} states runtime {own_runtime!r}, but --runtime says {stated.runtime!r}")
    return found


def _runtime_agrees(file_runtime: str, stated_runtime: str) -> bool:
    """A stated runtime agrees with the file's when either names the other's build, or the file names only the engine
    the stated one is a build of."""
    from evreg.claims.runtimes import runtime_matches

    return runtime_matches(file_runtime, {"runtime": stated_runtime}) or runtime_matches(
        stated_runtime, {"runtime": file_runtime}
    )


# -- where the runs belong ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Weights:
    """The weights a file's runs used: their canonical model, the base repository, and (quantized weights published
    separately) the artifact's repository."""

    model: str | None
    repository: str | None
    """The base weights' repository; None for a model the vocabulary knows without one (a new family then needs it)."""
    artifact_repository: str | None


def _question(source: Path, fact: str, option: str, why: str | None = None) -> Finding:
    message = f"{why or 'the file does not state ' + fact}: add {option}"
    return codes.IMPORT_FACT_NEEDED.at(str(source), "", message, f"run the same command again with {option}")


def _is_repository(name: str) -> bool:
    """``ORG/NAME`` (a Hugging Face or forge repository id), not a local path or file name."""
    parts = name.strip().strip("/").split("/")
    return len(parts) == 2 and all(parts) and not name.lower().endswith(".gguf") and not name.startswith((".", "~"))


def weights_of(source: Path, found: FileIdentity, stated: Stated) -> Weights | Finding:
    """The weights the runs used, from the file's model and the contributor's ``--model``/``--weights``; a question
    when they cannot be told."""
    named = found.model
    if stated.model and not _known(named):
        named = stated.model  # the file names no weights the vocabulary or a repository id tells: the stated ones
    elif stated.model and _known(stated.model) and not _same_weights(stated.model, str(named)):
        return codes.IMPORT_OUT_OF_SCOPE.at(
            str(source),
            found.where.get("model", ""),
            f"the file names the model {named!r}, but --model says {stated.model!r}",
            "leave --model out: it states the weights only where the file does not name them",
        )
    if named and _is_repository(named):
        named = re.sub(r"(?<=[^/])[:@][^/]*$", "", named.strip().rstrip("/"))  # a tag or revision: the same weights
    hit = model_of_repository(named) if named and _is_repository(named) else None
    canonical = (hit[0] if hit else formats.model_of_file(named)) if named else None
    known = models().get(canonical or "")
    base = str(known["repository"]) if known and known.get("repository") else None
    if base is None and stated.model and _is_repository(stated.model):
        base = stated.model
    if base is None and named and _is_repository(named) and not formats.quantization_of_name(named):
        base = named  # a repository the vocabulary does not know: the weights themselves
    if base is None and canonical is None:
        why = (
            f"the file names the model {named!r}, which is no repository or model the vocabulary knows"
            if named
            else None
        )
        return _question(source, "the model (its base weights' repository)", "--model ORG/NAME", why)
    artifact: str | None = None
    if hit is not None and hit[1] == "derivative" and named:
        artifact = named
    elif named and _is_repository(named) and repository_key(named) != repository_key(base or ""):
        artifact = named  # a quantized repository the vocabulary does not list
    elif stated.weights and not (named and _is_repository(named)):
        artifact = stated.weights  # a file that names no repository: the contributor says where its weights are
    elif named and not _is_repository(named) and formats.quantization_of_name(named):
        # a quantized file (a GGUF name or path): published in a repository the file does not name
        artifact = _only_gguf_derivative(known)
        if artifact is None:
            return _question(
                source,
                "the repository the quantized file is published in",
                "--weights ORG/NAME",
                f"the file names the quantized file {named!r} but not where it is published",
            )
    return Weights(canonical, base, artifact)


def _canonical(name: str) -> str | None:
    hit = model_of_repository(name) if _is_repository(name) else None
    return hit[0] if hit else formats.model_of_file(name)


def _same_weights(a: str, b: str) -> bool:
    """Two statements of the weights name one model: the vocabulary's (a repository, derivative or name of it), else
    one repository (case, host and a ``.git`` aside)."""
    ca, cb = _canonical(a), _canonical(b)
    if ca is not None or cb is not None:
        return ca == cb
    return repository_key(a) == repository_key(b)


def _known(name: str | None) -> bool:
    """Whether ``name`` tells the weights: a model the vocabulary knows, or a repository id."""
    return bool(name) and (_canonical(str(name)) is not None or _is_repository(str(name)))


def _only_gguf_derivative(known: dict[str, Any] | None) -> str | None:
    ggufs = [str(d) for d in (known or {}).get("derivatives", []) if "gguf" in str(d).lower()]
    return ggufs[0] if len(ggufs) == 1 else None


def questions(source: Path, found: FileIdentity) -> list[Finding]:
    """One question per fact a packet needs that neither the file nor the contributor states. A runtime the file
    names only as an engine (SGLang's ``backend``) is asked for with its version."""
    from evreg.claims.runtimes import parse_runtime

    facts = (
        ("quantization", "the weights' quantization", "--quantization (e.g. BF16, FP8)"),
        ("runtime", "the runtime and its version", "--runtime 'vLLM 0.11.0'"),
        ("hardware", "the accelerators", "--hardware 'NVIDIA H100 80GB HBM3'"),
        ("cards", "how many accelerators the run used", "--cards N"),
    )
    asked = [_question(source, fact, option) for key, fact, option in facts if getattr(found, key) is None]
    engine_only = found.runtime and "runtime" not in found.stated and not parse_runtime(found.runtime).pinned
    if engine_only:
        why = f"the file names the engine {found.runtime!r} but not its version"
        asked.append(_question(source, "the runtime", f"--runtime '{found.runtime} VERSION'", why))
    return asked


class Draft:
    """The registry as the inputs so far would leave it: its families (with artifacts planned) and packets."""

    def __init__(self, registry: Registry) -> None:
        self.families: dict[str, dict[str, Any]] = {}
        self.changed: set[str] = set()
        self.packets: dict[str, dict[str, dict[str, Any]]] = {}
        for doc in registry.records("family"):
            self.families[str(doc.id)] = copy.deepcopy(dict(doc.data))
        for doc in registry.records("packet"):
            if doc.place.family in self.families:
                self.packets.setdefault(doc.place.family, {})[str(doc.id)] = dict(doc.data)
        self.registry = registry
        self.folders = (
            {p.name for p in (registry.root / PACKETS).iterdir()} if (registry.root / PACKETS).is_dir() else set()
        )

    def taken_families(self) -> set[str]:
        """Ids a new family may not take: every family's, and every name under packets/ (an unreadable family too)."""
        return set(self.families) | self.folders

    def taken(self, family: str) -> set[str]:
        """Ids a new packet of ``family`` may not take: every packet's in the registry (packet ids are unique across
        it), and every name in the family's folder."""
        folder = self.registry.root / PACKETS / family
        every = {pid for packets in self.packets.values() for pid in packets}
        every |= {str(d.id) for d in self.registry.records("packet")}
        return every | ({p.name for p in folder.iterdir()} if folder.is_dir() else set())


def _revision_of(draft: Draft, weights: Weights) -> tuple[str, dict[str, Any]] | None:
    """The family and weight revision of these weights: the revision naming the canonical model, else the base
    repository."""
    for fid, fam in sorted(draft.families.items()):
        for _, rev in revisions_of(fam):
            same_model = weights.model is not None and rev.get("model") == weights.model
            same_repo = weights.repository is not None and repository_key(
                str(rev.get("repository", ""))
            ) == repository_key(weights.repository)
            if same_model or same_repo:
                return fid, rev
    return None


def _artifact_of(rev: dict[str, Any], weights: Weights, quantization: str) -> dict[str, Any] | None:
    for art in rev.get("quantized_artifacts") or []:
        same_repo = repository_key(str(art.get("repository", ""))) == repository_key(weights.artifact_repository or "")
        if same_repo and scope.same_quantization(str(art.get("quantization")), quantization):
            return dict(art)
    return None


def _new_id(base: str, taken: set[str]) -> str:
    base = slug(base)[:60].strip("-") or "run"
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


VENDOR_WORDS = {"nvidia", "geforce", "amd", "radeon", "intel", "arc", "apple", "processor", "core", "graphics"}


def packet_id(found: FileIdentity, taken: set[str]) -> str:
    """A packet id that says the setup: hardware model words, quantization, engine, and the cards beyond one."""
    hardware = "-".join(w for w in slug(str(found.hardware)).split("-") if w not in VENDOR_WORDS)[:24]
    from evreg.claims.runtimes import parse_runtime

    engine = "-".join(parse_runtime(str(found.runtime)).engine) if found.runtime else ""
    cards = f"{found.cards}x" if found.cards and found.cards > 1 else ""
    return _new_id("-".join(p for p in (cards + hardware, str(found.quantization), engine) if p), taken)


def place(
    draft: Draft, source: Path, importer: Importer, found: FileIdentity, weights: Weights, commit: str | None = None
) -> Placement:
    """The family, revision, artifact and packet the runs go into: existing ones where their identity is the runs',
    else new ones (listed in ``created``), made in ``draft``."""
    created: list[str] = []
    quantization = str(found.quantization)
    at = _revision_of(draft, weights)
    if at is None:
        assert weights.repository is not None, "plan() asks for the repository a new family needs"
        known = models().get(weights.model or "") or {}
        name = str(known.get("name") or weights.repository.rsplit("/", 1)[-1])
        fid = _new_id(weights.model or name, draft.taken_families())
        fam = scaffold.family(fid, name, weights.model or slug(name), weights.repository, commit, weights.model)
        draft.families[fid] = fam
        draft.changed.add(fid)
        pinned = f"commit {commit[:12]}" if commit else "commit not recorded: --commit pins it"
        created.append(f"family {fid} ({name}, weights {weights.repository}, {pinned})")
        rev = fam["weight_revisions"][0]
    else:
        fid, rev = at
    fam = draft.families[fid]
    artifact: dict[str, Any] | None = None
    if weights.artifact_repository is not None:
        artifact = _artifact_of(rev, weights, quantization)
        if artifact is None:
            if not rev.get("quantized_artifacts") and fid not in draft.changed:
                scaffold.refuse_unstated_weights(draft.registry, fid, str(rev["id"]))
            taken = {str(a.get("id")) for _, r in revisions_of(fam) for a in r.get("quantized_artifacts") or []}
            aid = _new_id(quantization, taken)
            scaffold.with_artifact(
                fam,
                str(rev["id"]),
                aid,
                quantization=quantization,
                label=f"{quantization} ({weights.artifact_repository})",
                repository=weights.artifact_repository,
                commit=None,
                evidence=f"https://huggingface.co/{weights.artifact_repository}",
            )
            draft.changed.add(fid)
            created.append(f"artifact {aid} of {fid}/{rev['id']} ({quantization}, {weights.artifact_repository})")
            artifact = next(a for a in rev["quantized_artifacts"] if a.get("id") == aid)
    art_id = str(artifact["id"]) if artifact else None
    for pid, data in sorted(draft.packets.get(fid, {}).items()):
        if data.get("revision") != rev.get("id") or data.get("artifact_id") != art_id:
            continue
        target = Target(fid, pid, data, rev, artifact or {})
        if data.get("cards") == found.cards and not formats.scope_conflicts(target, found):
            return Placement(source, importer, found, fid, str(rev["id"]), art_id, pid, created)
    pid = packet_id(found, draft.taken(fid))
    record = scaffold.packet_record(
        fid,
        pid,
        rev,
        artifact_id=art_id,
        quantization=None if art_id else quantization,
        runtime=str(found.runtime),
        cards=int(found.cards or 1),
        hardware=str(found.hardware),
        label=None,
    )
    draft.packets.setdefault(fid, {})[pid] = record
    if created and created[0].startswith("family "):
        fam["primary_packet_id"] = pid  # a new family's first packet is its primary one (its headline, once featured)
    created.append(f"packet {fid}/{pid} ({found.hardware} x{found.cards}, {quantization}, {found.runtime})")
    return Placement(source, importer, found, fid, str(rev["id"]), art_id, pid, created)


# -- the command --------------------------------------------------------------------------------------------------


def plan(root: Path, paths: Iterable[Path], stated: Stated) -> Added:
    """Where every input goes and the files its import writes; refused (nothing written) with one question per
    missing fact, or a finding naming what a file is when no importer reads it."""
    found_inputs, skipped = inputs(paths, stated.tool)
    draft = Draft(load(root))
    placements: list[Placement] = []
    asked: list[Finding] = []
    for source, importer in found_inputs:
        if not importer.into_packet:  # a lab's export: its own records, with the lab's options (where it lives)
            raise Refused(
                f"add refused: {source} is a lab's export ({importer.name}), which brings its own families and "
                f"packets: import it with `evreg import {importer.name} {source.name} ...` (see its --help)"
            )
        found = identity_of(root, source, importer, stated)
        weights = weights_of(source, found, stated)
        missing = questions(source, found) + ([weights] if isinstance(weights, Finding) else [])
        if isinstance(weights, Weights) and weights.repository is None and _revision_of(draft, weights) is None:
            why = (
                f"the registry has no family of {weights.model!r} yet, and the vocabulary records no repository for "
                "its base weights"
            )
            missing.append(_question(source, "the base weights' repository", "--model ORG/NAME", why))
        if missing:
            asked.extend(missing)
            continue
        assert isinstance(weights, Weights)
        placements.append(place(draft, source, importer, found, weights, stated.commit))
    if asked:
        facts = "1 fact" if len(asked) == 1 else f"{len(asked)} facts"
        raise Refused(f"add needs {facts} the files do not state (above); nothing was written", asked)
    for p in placements:
        fam = draft.families[p.family]
        rev = next(r for _, r in revisions_of(fam) if r.get("id") == p.revision)
        art: dict[str, Any] = next((a for a in rev.get("quantized_artifacts") or [] if a.get("id") == p.artifact), {})
        target = Target(p.family, p.packet, draft.packets[p.family][p.packet], rev, art, root)
        p.plan = _read(root, p.source, p.importer, stated, target)
    merged = formats.merge([p.plan for p in placements])
    for fid in sorted(draft.changed):
        merged.files[record_path("family", fid, fid)] = jsonio.canonical(draft.families[fid]).encode("utf-8")
    for p in placements:
        if any(c.startswith("packet ") for c in p.created):
            path = record_path("packet", p.family, p.packet)
            merged.files[path] = jsonio.canonical(draft.packets[p.family][p.packet]).encode("utf-8")
    return Added(placements, skipped, merged)


def add(root: Path, added: Added) -> imports.Imported:
    """Write what ``plan`` planned, all or nothing: refused (and taken back) when it brings errors."""
    changes_family = any(c.startswith(("family", "artifact")) for c in added.creates)
    return imports.import_file(root, added.files, overwrite=changes_family)
