"""The one writer of record and evidence files into a registry's work tree (importers and scaffolds).

A write is all or nothing: every target is checked first, and nothing is written when any would change
a file it must not (no silent overwrite; a published observation -- a measurement, closure or evidence
file -- is never rewritten, only superseded by a new record). Each file is written atomically."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evreg.core import gitcmd, jsonio

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


def committed(root: Path, paths: list[str]) -> set[str]:
    """Which of ``paths`` the work tree's last commit holds: a file there is published. Every one of them when git
    cannot say (no repository, no commit yet: nothing tells a draft from a published file, so none is replaced)."""
    if not paths:
        return set()
    done = gitcmd.run(root, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths)
    if done is None or done.returncode != 0:
        return set(paths)
    return {p.decode("utf-8", "surrogateescape") for p in done.stdout.split(b"\0") if p}


def write(
    root: Path,
    files: Mapping[str, bytes | str],
    *,
    overwrite: bool = False,
    create: bool = False,
    drafts: bool = False,
) -> WriteResult:
    """Write ``files`` (paths relative to ``root``) unless any is a conflict: a file that exists with other
    content (any existing file with ``create``), unless ``overwrite`` allows it and it is not ``published``.
    ``drafts``: a published file that no commit holds yet (an import not committed) is replaced like any file
    (``WriteResult.replaced`` lists it): "published" means committed, not on disk."""
    data = {path: c.encode("utf-8") if isinstance(c, str) else c for path, c in files.items()}
    result = WriteResult()
    differing = [
        path for path in data if (root / path).exists() and (create or (root / path).read_bytes() != data[path])
    ]
    held = committed(root, [p for p in differing if published(p)]) if drafts and differing else None
    for path in differing:
        draft = drafts and published(path) and held is not None and path not in held
        if create or (not draft and (published(path) or not overwrite)):
            result.conflicts.append(path)
    if result.conflicts:
        return result
    try:
        for path, content in sorted(data.items()):
            target = root / path
            if target.exists() and target.read_bytes() == content:
                result.unchanged.append(path)
                continue
            if target.exists():
                result.replaced[path] = target.read_bytes()
            result.written.append(path)  # before the write: a failed write's folder is taken back too
            jsonio.write_atomic(target, content)
    except BaseException:
        undo(root, result)  # a write that fails (a name too long, a full disk) leaves the tree as it was
        raise
    return result


def undo(root: Path, result: WriteResult) -> None:
    """Take back what ``write`` wrote: earlier content restored, new files removed, and the folders they made
    removed when left empty; the work tree is as it was."""
    for path in reversed(result.written):
        target = root / path
        if path in result.replaced:
            jsonio.write_atomic(target, result.replaced[path])
            continue
        with contextlib.suppress(OSError):
            target.unlink(missing_ok=True)
        folder = target.parent
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
