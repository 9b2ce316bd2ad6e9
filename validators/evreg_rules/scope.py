"""The rules' view of scope: ``evreg.claims.scope`` is the one definition; a packet is the claim here."""

from __future__ import annotations

from typing import Any

from evreg.claims.scope import (
    CURVE_KEYS,
    SCOPE_KEYS,
    curve_identity,
    has,
    mismatches,
    parse_runtime,
    runtime_matches,
    same_runtime,
    selector_value,
)

__all__ = [
    "CURVE_KEYS",
    "SCOPE_KEYS",
    "curve_identity",
    "has",
    "packet_scope_mismatches",
    "parse_runtime",
    "runtime_matches",
    "same_runtime",
    "selector_value",
]


def packet_scope_mismatches(packet: dict[str, Any], m: dict[str, Any]) -> list[str]:
    """How a measurement's scope differs from a packet's, every scope key (empty: in scope)."""
    return mismatches(packet, m, claim_name="the packet")
