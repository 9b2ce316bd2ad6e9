"""The identity a tool's file states (``FileIdentity``: model, quantization, engine, hardware, topology) compared
with the packet it joins (``check_scope``), and what the contributor states where the file is silent."""

from __future__ import annotations

import re
from dataclasses import replace

from evreg.claims import scope
from evreg.claims.scope import model_of_file, quantization_of_name
from evreg.core import codes, jsonio
from evreg.core.findings import Finding, Severity
from evreg.formats.api import FileIdentity, ImportRefused, Plan, Target
from evreg.store import MEASUREMENT_KINDS

# identity -----------------------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _same_model(named: str, target: Target) -> bool:
    """A file's model name is the packet's weights: the vocabulary knows it as the revision's canonical model (a
    repository, derivative or name of it); else it names the weights' or the artifact's repository, or (a file name
    or path) its words are those of one of them, quantization and file suffix aside."""
    own, stated = target.weights.get("model"), model_of_file(named)
    if isinstance(own, str) and stated is not None:
        return stated == own  # the vocabulary knows both: one canonical model, or two
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


def check_scope(plan: Plan, target: Target, found: FileIdentity, file: str, pointer: str = "") -> None:
    """Refuse a file whose run is not the packet's (every difference named, both sides); warn (on ``plan``) of
    the identity the file does not hold (it stays missing in the records, unless the contributor states it).
    The identity is kept on the plan (``Plan.identities``): ``evreg add`` finds the packet by it."""
    plan.identities.append(found)
    plan.warn(_scope_findings(target, found, file, pointer))


def _scope_findings(target: Target, found: FileIdentity, file: str, pointer: str) -> list[Finding]:
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
            f"the file does not say the run's {', '.join(missing)}; the records leave it unstated"
            + ("" if missing != ["model"] else " (their weights are the packet's revision, as you filed them)"),
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
