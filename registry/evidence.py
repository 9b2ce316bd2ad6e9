"""Evidence references: where in a record they are, and what they name.

A field holds evidence references when its key is ``evidence``,
``manifest``, ``model_manifest``, ``record`` or ``guide``, or ends in
``_evidence``, and its value is a string or a list of strings (an object
under such a key, like a grade under ``grades.evidence``, is walked as an
ordinary object). Each reference is one of:

- a repository-relative path to a local file (``packets/f/p/evidence/x.json``);
- ``SOURCE:path``, a path into an external source the family declares in
  ``sources`` (the lab's own repository, not present here);
- an ``https://`` or ``http://`` URL.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from registry.jsonio import join_pointer_suffix

EVIDENCE_KEYS = frozenset({"evidence", "manifest", "model_manifest", "record", "guide"})
_EXTERNAL = re.compile(r"^([a-z0-9]+(?:-[a-z0-9]+)*):(?!//)(.+)$", re.S)


def is_evidence_key(key: str) -> bool:
    return key in EVIDENCE_KEYS or key.endswith("_evidence")


@dataclass(frozen=True)
class Ref:
    raw: str
    kind: str  # "local" | "external" | "url"
    path: str  # local path, path inside the source, or the URL
    source: str | None = None


def parse_ref(value: str) -> Ref:
    if value.startswith(("https://", "http://")):
        return Ref(value, "url", value)
    m = _EXTERNAL.match(value)
    if m:
        return Ref(value, "external", m.group(2), m.group(1))
    return Ref(value, "local", value)


def iter_refs(data: Any, pointer: str = "") -> Iterator[tuple[str, str]]:
    """Yield (pointer, reference) for every evidence reference in ``data``."""
    stack: list[tuple[str, Any]] = [(pointer, data)]
    while stack:
        ptr, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                child = join_pointer_suffix(ptr, key)
                if is_evidence_key(key) and isinstance(value, str):
                    yield child, value
                elif is_evidence_key(key) and isinstance(value, list):
                    for i, item in enumerate(value):
                        if isinstance(item, str):
                            yield join_pointer_suffix(child, i), item
                        else:
                            stack.append((join_pointer_suffix(child, i), item))
                else:
                    stack.append((child, value))
        elif isinstance(node, list):
            stack.extend((join_pointer_suffix(ptr, i), v) for i, v in enumerate(node))


def map_refs(data: Any, fn: Callable[[str], str]) -> Any:
    """A copy of ``data`` with every evidence reference replaced by ``fn(ref)``."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if is_evidence_key(key) and isinstance(value, str):
                    out[key] = fn(value)
                elif is_evidence_key(key) and isinstance(value, list):
                    out[key] = [fn(v) if isinstance(v, str) else walk(v) for v in value]
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(data)
