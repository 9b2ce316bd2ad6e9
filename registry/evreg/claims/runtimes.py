"""Runtime identity: a runtime string (``llama.cpp SYCL 9976 (e3546c794)``, ``vLLM 0.11.0``) parsed into
engine, version, build and commit, and the one comparison every path uses (scope rules, importers)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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


_COMMIT = re.compile(r"^\(?(?=[0-9a-f]*[a-f])([0-9a-f]{7,40})\)?$|^\(?([0-9a-f]{40})\)?$|^\(([0-9]{7,39})\)$")
"""A commit: hex with a letter, or 40 hex; in parentheses also all digits (``llama.cpp b1275 (3469684)``)."""
_BUILD = re.compile(r"^\(?b?(\d+)\)?$")
_VERSION = re.compile(r"^v?(\d+\.[0-9a-z.+-]*|\d{4}-\d{2}(?:-\d{2})?)$")  # 0.11.0, v1.2, a date: 2026-06


@functools.lru_cache(maxsize=4096)  # a registry names a few runtimes, compared for every claim and its evidence
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
            commit = m.group(1) or m.group(2) or m.group(3)
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


_MODIFIED = frozenset(
    {"fork", "forked", "patch", "patched", "custom", "modified", "hack", "hacked", "unmerged", "wip", "experimental"}
)
"""Words that say an engine was changed (``vLLM XPU fork``): an engine-only claim does not cover them."""


def runtime_matches(claimed: Any, m: Mapping[str, Any]) -> bool:
    """A claim naming a runtime covers a measurement of the same build (``parse_runtime``, ``same_runtime``),
    or of any version, build or commit of the engine when the claim names only the engine (``vLLM XPU`` covers
    ``vLLM XPU 0.11.0``, ``vLLM`` covers ``vLLM XPU 0.11.0``) but nothing added to it (``vLLM XPU 0.11.0 + patch``,
    ``llama.cpp SYCL 9fee29e plus lab patch``: a modified build); or its ``runtime_family``. A date is a version
    (``vLLM XPU 2026-06 strict program`` is the 2026-06 build of vLLM XPU with ``strict program``, nothing else)."""
    if not isinstance(claimed, str):
        return False
    runtime, family = m.get("runtime"), m.get("runtime_family")
    if claimed == family:
        return True
    if not isinstance(runtime, str):
        return False
    want, got = parse_runtime(claimed), parse_runtime(runtime)
    if not want.pinned:
        more = got.engine[len(want.engine) :]
        return got.engine[: len(want.engine)] == want.engine and not got.extras and not _MODIFIED.intersection(more)
    return same_runtime(want, got)
