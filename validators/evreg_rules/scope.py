"""Scope: the identity tuple a claim is about, and how evidence is compared to it."""

from __future__ import annotations

from typing import Any

from evreg.runtimes import Runtime, parse_runtime, runtime_matches, same_runtime

__all__ = ["Runtime", "parse_runtime", "runtime_matches", "same_runtime"]

_MISSING = object()


def selector_value(record: dict[str, Any], key: str) -> Any:
    """A selector looked up as a top-level field, then in ``config``, then in ``identity``."""
    for source in (record, record.get("config") or {}, record.get("identity") or {}):
        if isinstance(source, dict) and key in source:
            return source[key]
    return _MISSING


def has(value: Any) -> bool:
    return value is not _MISSING


def packet_scope_mismatches(packet: dict[str, Any], m: dict[str, Any]) -> list[str]:
    """How a measurement's scope differs from a packet's (empty: in scope)."""
    out = []
    for key in ("revision", "artifact_id", "quantization"):
        if key in packet and m.get(key) != packet[key]:
            out.append(f"{key} {m.get(key)!r} is not the packet's {packet[key]!r}")
    if "runtime" in packet and not runtime_matches(packet["runtime"], m):
        out.append(f"runtime {m.get('runtime')!r} is not the packet's {packet['runtime']!r}")
    tp = selector_value(m, "tp")
    cards = selector_value(m, "cards")
    topology = tp if has(tp) else cards
    if isinstance(packet.get("topologies"), list):
        if topology not in packet["topologies"]:
            out.append(
                f"topology TP{topology if has(topology) else '?'} is not among the packet's {packet['topologies']}"
            )
    elif "cards" in packet and topology != packet["cards"]:
        out.append(f"topology TP{topology if has(topology) else '?'} is not the packet's {packet['cards']} cards")
    return out


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
    "workload",
    "measurement_class",
)


def curve_identity(m: dict[str, Any], x_key: str | None) -> dict[str, Any]:
    """What must be equal along one curve: identity and config, all but the x axis."""
    ident = {k: m.get(k) for k in CURVE_KEYS}
    ident["config"] = {k: v for k, v in (m.get("config") or {}).items() if k != x_key}
    return ident
