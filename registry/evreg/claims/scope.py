"""Scope: the identity a claim is about, defined once and compared the same way on every promotion path.

The scope keys are the weight revision, the artifact and its quantization, the runtime identity (parsed:
``evreg.claims.runtimes``), the hardware and the topology (accelerators per run: ``cards`` or ``config.tp``; a
packet may list ``topologies``). A key stated on one side and missing on the other is a mismatch: a claim
that names its hardware is not backed by a run that does not, and a run on named hardware does not back a
claim that names none. The family is compared by where records live, and the workload where a path
selects it (coverage cells, curves).

Used by the family headline, a packet's featured metric, grade evidence, coverage cells and the packet a
cell links, joined curves, a measurement's folder, citations in a packet's own prose, and the importers'
target packet (``evreg.formats``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from evreg.claims.runtimes import Runtime, parse_runtime, runtime_matches, same_runtime
from evreg.core.vocab import model_for

__all__ = [
    "CURVE_KEYS",
    "SCOPE_KEYS",
    "Runtime",
    "curve_identity",
    "differing",
    "has",
    "mismatches",
    "parse_runtime",
    "pointer",
    "runtime_matches",
    "same_hardware",
    "same_runtime",
    "selector_value",
    "topology",
]

SCOPE_KEYS = ("revision", "artifact_id", "quantization", "runtime", "hardware", "topology")
"""The keys every promotion path compares, in the order messages name them."""

_MISSING = object()


def selector_value(record: Mapping[str, Any], key: str) -> Any:
    """A selector looked up as a top-level field, then in ``config``, then in ``identity``."""
    for source in (record, record.get("config") or {}, record.get("identity") or {}):
        if isinstance(source, dict) and key in source:
            return source[key]
    return _MISSING


def has(value: Any) -> bool:
    return value is not _MISSING


def topology(record: Mapping[str, Any]) -> int | list[int] | None:
    """Accelerators per run: a packet's ``cards`` (or its list of ``topologies``); a run's ``cards`` where it states
    them, else its ``config.tp`` times its pipeline (``pp``) and data (``dp``) parallel degrees (TP4 x PP2 is eight
    cards). A run that states both cards and a parallel layout needing more cards than that contradicts itself and
    matches no topology (``-1``)."""
    if isinstance(record.get("topologies"), list):
        return [t for t in record["topologies"] if isinstance(t, int)]
    cards, tp = _count(record, "cards"), _count(record, "tp")
    if tp is None:
        return cards
    layout = tp * (_count(record, "pp") or 1) * (_count(record, "dp") or 1)
    if cards is None:
        return layout
    return cards if layout <= cards else -1


def _count(record: Mapping[str, Any], key: str) -> int | None:
    value = selector_value(record, key)
    return value if has(value) and isinstance(value, int) and not isinstance(value, bool) else None


def _words(text: str) -> list[str]:
    """Lowercase words, a word of letters joined to the number after it (``RTX 5090`` and ``RTX5090`` are both
    ``rtx5090``)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out: list[str] = []
    for w in words:
        if out and w.isdigit() and out[-1].isalpha():
            out[-1] += w
        else:
            out.append(w)
    return out


_FORM = {"laptop", "mobile", "maxq"}
"""Form-factor words: a laptop part is never the desktop card of the same number, whichever side names it."""
_BUS = re.compile(r"^(?:sxm\d?|pcie|nvl)$")
"""Interface words: two names that state different ones are different parts (``H100 SXM``, ``H100 PCIe``)."""


def _same_one(a: str, b: str) -> bool:
    wa, wb = _words(a.lower().replace("max-q", "maxq")), _words(b.lower().replace("max-q", "maxq"))
    if (_FORM & set(wa)) != (_FORM & set(wb)):
        return False
    bus_a, bus_b = {w for w in wa if _BUS.match(w)}, {w for w in wb if _BUS.match(w)}
    if bus_a and bus_b and bus_a != bus_b:
        return False
    x = {t for t in wa if re.search(r"\d", t)} or set(wa)
    y = {t for t in wb if re.search(r"\d", t)} or set(wb)
    return x <= y or y <= x


_PARTS = re.compile(r"(?:(?<!\s)\s*+)?(?:\+|&|\band\b)\s*+", re.I)
"""Between the parts of a rig: blanks before a separator are taken from the first blank of their run (taken from every
blank, a long run of blanks was quadratic); a separator right after another's blanks stands alone (``a + + b``)."""


@functools.lru_cache(maxsize=4096)  # a registry names a few accelerators, compared for every claim and its evidence
def same_hardware(a: str, b: str) -> bool:
    """One accelerator model: the model words (those with digits) of one contain the other's (``NVIDIA GeForce RTX
    5090`` = ``RTX 5090 32 GB`` = ``RTX5090``; not ``RTX 4090``), neither is a laptop part the other is not, and
    they name no different interface (SXM, PCIe). A rig of several (``B70 + RTX 4090``) is the same only as a rig
    of the same parts."""
    pa, pb = [p for p in _PARTS.split(a) if p.strip()], [p for p in _PARTS.split(b) if p.strip()]
    if len(pa) != len(pb):
        return False
    if len(pa) == 1:
        return _same_one(a, b)
    rest = list(pb)
    for part in pa:
        match = next((q for q in rest if _same_one(part, q)), None)
        if match is None:
            return False
        rest.remove(match)
    return True


def _topology_message(claim: Mapping[str, Any], evidence: Mapping[str, Any], claim_name: str) -> str:
    want, got = topology(claim), topology(evidence)
    tp = (
        "a self-contradicting layout (more parallel ranks than cards)"
        if got == -1
        else f"TP{'?' if got is None else got}"
    )
    if isinstance(want, list):
        return f"topology {tp} is not among {claim_name}'s {want}"
    return f"topology {tp} is not {claim_name}'s {'no stated' if want is None else want} cards"


_QUANT_ALIASES = {"f16": "fp16"}


def same_quantization(a: str, b: str) -> bool:
    """One quantization however it is spelled: case, separators and ``F16``/``FP16`` aside (``Q4_K_M`` is
    ``q4-k-m``; ``Q4_K_M`` is not ``Q4_K_S``)."""
    x, y = (re.sub(r"[^a-z0-9]", "", q.lower()) for q in (a, b))
    return _QUANT_ALIASES.get(x, x) == _QUANT_ALIASES.get(y, y)


def _differs(key: str, claim: Mapping[str, Any], evidence: Mapping[str, Any]) -> bool:
    if key == "topology":
        want, got = topology(claim), topology(evidence)
        if isinstance(want, list):
            return got not in want if isinstance(got, int) else got != want
        return want != got
    want, got = claim.get(key), evidence.get(key)
    if want is None or got is None:
        return (want is None) != (got is None)
    if key == "runtime":
        return not runtime_matches(want, evidence)
    if key == "hardware":
        return not (isinstance(want, str) and isinstance(got, str) and same_hardware(want, got))
    if key == "quantization" and isinstance(want, str) and isinstance(got, str):
        return not same_quantization(want, got)
    return bool(want != got)


def differing(claim: Mapping[str, Any], evidence: Mapping[str, Any], keys: tuple[str, ...] = SCOPE_KEYS) -> list[str]:
    """The scope keys on which the evidence differs from the claim (a key stated on one side only differs)."""
    return [key for key in keys if _differs(key, claim, evidence)]


def pointer(record: Mapping[str, Any], key: str) -> str:
    """Where a record states a scope key (JSON pointer), for findings."""
    if key != "topology":
        return f"/{key}"
    for where in ("config", "identity"):
        if isinstance(record.get(where), dict) and "tp" in record[where]:
            return f"/{where}/tp"
    return "/topologies" if "topologies" in record else "/cards"


def mismatched(
    claim: Mapping[str, Any],
    evidence: Mapping[str, Any],
    keys: tuple[str, ...] = SCOPE_KEYS,
    *,
    claim_name: str = "the claim",
) -> list[tuple[str, str]]:
    """(key, message naming both sides) for each scope key on which the evidence differs from the claim (empty:
    in scope). A key stated on one side and missing on the other differs."""
    out = []
    for key in differing(claim, evidence, keys):
        if key == "topology":
            out.append((key, _topology_message(claim, evidence, claim_name)))
        else:
            out.append((key, f"{key} {evidence.get(key)!r} is not {claim_name}'s {claim.get(key)!r}"))
    return out


def mismatches(
    claim: Mapping[str, Any],
    evidence: Mapping[str, Any],
    keys: tuple[str, ...] = SCOPE_KEYS,
    *,
    claim_name: str = "the claim",
) -> list[str]:
    """The messages of ``mismatched``."""
    return [message for _, message in mismatched(claim, evidence, keys, claim_name=claim_name)]


def stated(record: Mapping[str, Any], key: str) -> Any:
    """A scope key as a record states it (``None``: unstated); topology as cards, TP or topologies."""
    return topology(record) if key == "topology" else record.get(key)


CURVE_KEYS = (
    "revision",
    "artifact_id",
    "quantization",
    "variant",
    "runtime",
    "runtime_family",
    "runtime_identity",
    "identity",
    "model_revision",
    "profile_id",
    "hardware",
    "workload",
    "measurement_class",
)
"""What the lab keys a curve by, and hardware: every member of one joined curve has the same."""


def curve_identity(m: Mapping[str, Any], x_key: str | None) -> dict[str, Any]:
    """What must be equal along one curve: identity and config, all but the x axis."""
    ident = {k: m.get(k) for k in CURVE_KEYS}
    ident["config"] = {k: v for k, v in (m.get("config") or {}).items() if k != x_key}
    return ident


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


def model_of_file(named: str) -> str | None:
    """The canonical model a file's model statement names: a repository, id or name the vocabulary knows, or a
    model file's name without its quantization, shard number and extension (``models/Qwen2.5-7B-Instruct-Q4_K_M.gguf``
    is ``qwen2.5-7b-instruct``)."""
    found = model_for(named)
    if found is not None:
        return found
    base = re.sub(r"(?i)(-\d{5}-of-\d{5})?\.gguf$", "", named.replace("\\", "/").rsplit("/", 1)[-1])
    quant = quantization_of_name(base)
    if quant:
        base = re.sub(r"[-_.:]?" + re.escape(quant) + r"$", "", base, flags=re.I)
    return model_for(base) if base else None
