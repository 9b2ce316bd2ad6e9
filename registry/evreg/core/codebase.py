"""The code whose content can change what ``evreg`` concludes: every module and data file of ``evreg``
and of each installed rule pack. One digest of it versions the result cache and stamps the catalog."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
from collections.abc import Iterable
from pathlib import Path

EVREG = Path(__file__).parents[1]


def rule_packs() -> set[Path]:
    """The folders of the rule packs registered under ``evreg.rules``, found without importing them."""
    folders = set()
    for ep in importlib.metadata.entry_points(group="evreg.rules"):
        spec = importlib.util.find_spec(ep.value.split(":")[0].split(".")[0])
        if spec is not None and spec.origin:
            folders.add(Path(spec.origin).parent)
    return folders


def sources(extra: Iterable[Path] = ()) -> list[Path]:
    """Every module and JSON data file under ``evreg``, the installed rule packs and ``extra`` folders."""
    return [
        path
        for folder in sorted({EVREG, *rule_packs(), *extra})
        for path in sorted([*folder.rglob("*.py"), *folder.rglob("*.json")])
        if "__pycache__" not in path.parts
    ]


def digest(extra: Iterable[Path] = ()) -> str:
    """Changes whenever a file of ``sources`` changes (its path or bytes), or pydantic's version."""
    h = hashlib.sha256(importlib.metadata.version("pydantic").encode())
    for path in sources(extra):
        h.update(path.as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
