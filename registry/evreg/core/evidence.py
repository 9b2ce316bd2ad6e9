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

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evreg.core.jsonio import map_keyed_strings

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


def map_refs(data: Any, fn: Callable[[str], str]) -> Any:
    """A copy of ``data`` with every evidence reference replaced by ``fn(ref)``."""
    return map_keyed_strings(data, is_evidence_key, fn)


TEXT_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
"""A number in a text evidence file, as a ``line:N[:K]`` locator counts them (the Kth match on line N)."""


def decode(raw: bytes) -> tuple[str, str]:
    """An evidence file's text for reading, and its encoding: UTF-16 with a byte-order mark (PowerShell's ``>``),
    UTF-8 with or without one. The file itself is kept and hashed as it is; only reading decodes it."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16", "replace"), "utf-16"
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8) :].decode("utf-8", "replace"), "utf-8-sig"
    return raw.decode("utf-8", "replace"), "utf-8"


def text_lines(raw: bytes) -> list[str]:
    """A text evidence file's lines, as ``line:N`` locators number them (from 1), decoded as ``decode`` reads it."""
    return decode(raw)[0].splitlines()
