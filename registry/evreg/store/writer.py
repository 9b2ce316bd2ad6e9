"""The one writer of record and evidence files into a registry's work tree (importers and scaffolds).

A write is all or nothing: every target is checked first, and nothing is written when any would change
a file it must not (no silent overwrite; a published observation -- a measurement, closure or evidence
file -- is never rewritten, only superseded by a new record). Each file is written atomically."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evreg.core import jsonio

PUBLISHED = ("/measurements/", "/closures/", "/evidence/")
"""Folders whose files are published observations: never rewritten, even with ``overwrite``."""


def published(path: str) -> bool:
    """Whether ``path`` is a published observation (``PUBLISHED``)."""
    return any(folder in f"/{path}" for folder in PUBLISHED)


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    """Files that exist with other content and may not be replaced: when any, nothing was written."""
    replaced: dict[str, bytes] = field(default_factory=dict)
    """The earlier content of each written file that existed (``undo`` puts it back)."""


def write(
    root: Path, files: Mapping[str, bytes | str], *, overwrite: bool = False, create: bool = False
) -> WriteResult:
    """Write ``files`` (paths relative to ``root``) unless any is a conflict: a file that exists with other
    content (any existing file with ``create``), unless ``overwrite`` allows it and it is not ``published``."""
    data = {path: c.encode("utf-8") if isinstance(c, str) else c for path, c in files.items()}
    result = WriteResult()
    for path, content in data.items():
        target = root / path
        protected = create or not overwrite or published(path)
        if protected and target.exists() and (create or target.read_bytes() != content):
            result.conflicts.append(path)
    if result.conflicts:
        return result
    for path, content in sorted(data.items()):
        target = root / path
        if target.exists() and target.read_bytes() == content:
            result.unchanged.append(path)
            continue
        if target.exists():
            result.replaced[path] = target.read_bytes()
        jsonio.write_atomic(target, content)
        result.written.append(path)
    return result


def undo(root: Path, result: WriteResult) -> None:
    """Take back what ``write`` wrote: earlier content restored, new files removed, and the folders they made
    removed when left empty; the work tree is as it was."""
    for path in reversed(result.written):
        target = root / path
        if path in result.replaced:
            jsonio.write_atomic(target, result.replaced[path])
            continue
        target.unlink(missing_ok=True)
        folder = target.parent
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
