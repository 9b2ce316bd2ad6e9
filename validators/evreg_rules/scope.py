"""Scope: the identity tuple a claim is about, and how evidence is compared to it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_MISSING = object()


def selector_value(record: dict[str, Any], key: str) -> Any:
    """A selector looked up as a top-level field, then in ``config``, then in ``identity``."""
    for source in (record, record.get("config") or {}, record.get("identity") or {}):
        if isinstance(source, dict) and key in source:
            return source[key]
    return _MISSING


def has(value: Any) -> bool:
    return value is not _MISSING


@dataclass(frozen=True)
class Runtime:
    """A runtime string as an identity: the engine's words, its version, build number and commit (each
    optional), and what was added to it (`` + ...`` parts). Case and spacing do not matter."""

    engine: tuple[str, ...]
    version: str | None
    build: str | None
    commit: str | None
    extras: tuple[str, ...]

    @property
    def pinned(self) -> bool:
        return bool(self.version or self.build or self.commit or self.extras)


_COMMIT = re.compile(r"^\(?(?=[0-9a-f]*[a-f])([0-9a-f]{7,40})\)?$|^\(?([0-9a-f]{40})\)?$")
_BUILD = re.compile(r"^\(?b?(\d+)\)?$")
_VERSION = re.compile(r"^v?(\d+\.[0-9a-z.+-]*)$")


def parse_runtime(text: str) -> Runtime:
    """``llama.cpp SYCL 9976 (e3546c794) + preserved local stack`` -> engine (llama.cpp, sycl), build 9976,
    commit e3546c794, extras (preserved local stack,). The first id ends the engine's words; words after it are
    part of the identity too (``nightly a3561ef8 stock``)."""
    main, *added = (part.strip() for part in text.lower().split(" + "))
    engine: list[str] = []
    rest: list[str] = []
    version = build = commit = None
    for word in main.split():
        if m := _COMMIT.match(word):
            commit = m.group(1) or m.group(2)
        elif (m := _BUILD.match(word)) and engine:
            build = m.group(1)
        elif (m := _VERSION.match(word)) and engine:
            version = m.group(1)
        else:
            (rest if (version or build or commit) else engine).append(word)
            continue
    extras = tuple([" ".join(rest)] if rest else []) + tuple(" ".join(a.split()) for a in added)
    return Runtime(tuple(engine), version, build, commit, extras)


def same_runtime(a: Runtime, b: Runtime) -> bool:
    """One build of one engine: commits agree (one a prefix of the other) when both have one, else versions
    and build numbers agree where both have them, and something comparable is on both sides; the added parts
    are equal."""
    if a.engine != b.engine or a.extras != b.extras:
        return False
    if a.commit and b.commit:
        return a.commit.startswith(b.commit) or b.commit.startswith(a.commit)
    compared = False
    for x, y in ((a.version, b.version), (a.build, b.build)):
        if x and y:
            if x != y:
                return False
            compared = True
    return compared or not (a.pinned or b.pinned)


def runtime_matches(claimed: Any, m: dict[str, Any]) -> bool:
    """A claim naming a runtime covers a measurement of the same build (``parse_runtime``, ``same_runtime``),
    or of any build when the claim names only the engine (``vLLM XPU``), or its ``runtime_family``."""
    if not isinstance(claimed, str):
        return False
    runtime, family = m.get("runtime"), m.get("runtime_family")
    if claimed == family:
        return True
    if not isinstance(runtime, str):
        return False
    want, got = parse_runtime(claimed), parse_runtime(runtime)
    if not want.pinned:
        return got.engine[: len(want.engine)] == want.engine
    return same_runtime(want, got)


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
