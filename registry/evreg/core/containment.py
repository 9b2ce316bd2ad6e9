"""Containment: which files the registry may read as evidence or publish as pages.

Only regular files inside the repository, outside its version-control folders. One
definition, used by the sources (evidence), the rules (``evidence-escape``,
``site-file-unsafe``) and the site build (which refuses what the rules report).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from evreg.core.printing import CONTROL

VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "cvs", ".jj", ".pijul", ".fossil"})
"""Version-control folders: their files (credentials in ``.git/config``, hooks, objects) are
never evidence and never published."""
SITE_DIR = "site"
"""The hand-written pages (MkDocs ``docs_dir``): a fixed top-level folder."""
PAGE_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
"""What MkDocs builds as a Markdown page (``mkdocs.utils.markdown_extensions``): validation reads every one."""
STYLE_SUFFIXES = (".css",)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".ico")
PUBLISHED_SUFFIXES = PAGE_SUFFIXES + STYLE_SUFFIXES + IMAGE_SUFFIXES
"""What site/ may hold (by name, in any case): pages, which validation reads as Markdown; stylesheets, which it reads
with a CSS parser; and raster images, which show no text a check could miss and run nothing. MkDocs publishes any
other file as it is (a browser may render or run it: ``.html``, ``.xht``, ``.svg``, ``.js``...), unread by any check."""
_DRIVE = re.compile(r"^[A-Za-z]:")


def outside_repository(path: str) -> str | None:
    """Why a repository-relative path (an evidence path, a path into an external source, a file
    the site publishes) names something outside the repository's own files, or None.

    This checks the *spelling* of a path; sources apply it again to the path a symlink
    resolves to."""
    if "\x00" in path:
        return "it contains a NUL character"
    if path.startswith(("/", "\\", "~")) or _DRIVE.match(path):
        return "it is absolute"
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        return "it climbs out with '..'"
    vcs = next((p for p in parts if p.lower() in VCS_FOLDERS), None)
    if vcs is not None:
        return f"it points into the version-control folder {vcs!r}"
    return None


def unsafe_files(root: Path, folder: str) -> Iterator[tuple[str, str]]:
    """(repository-relative path, why) of every entry under ``root/folder`` that a build must not
    publish: symlinks (to files or folders, inside the repository or not), anything that is not a
    regular file or folder, and the folder itself when it is a symlink or lies outside ``root``.
    Symlinks are never followed."""
    real_root = os.path.realpath(root)
    top = os.path.join(root, folder)
    rel_top = os.path.relpath(os.path.abspath(top), os.path.abspath(root)).replace(os.sep, "/")
    why = outside_repository(rel_top) if rel_top != "." else None
    if why:
        yield rel_top, f"the site folder is outside the repository: {why}"
        return
    if os.path.islink(top) or os.path.commonpath([os.path.realpath(top), real_root]) != real_root:
        yield rel_top, "the site folder is a symlink or resolves outside the repository"
        return
    for current, dirs, files in os.walk(top, followlinks=False):
        for name in sorted([*dirs, *files]):
            full = os.path.join(current, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            mode = os.lstat(full).st_mode
            if CONTROL.search(rel):
                yield rel, "its name holds a control character (a line break, a tab, an escape): rename it"
            elif stat.S_ISLNK(mode):
                yield rel, f"it is a symlink (to {os.readlink(full)!r}); the site publishes only regular files"
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                yield rel, "it is not a regular file"
            elif name.lower() in VCS_FOLDERS:
                yield rel, "it is a version-control folder"
            elif stat.S_ISREG(mode) and not name.lower().endswith(PUBLISHED_SUFFIXES):
                yield (
                    rel,
                    (
                        "it would be published as it is, unchecked: site/ holds Markdown pages (.md), "
                        "stylesheets (.css) and raster images only"
                    ),
                )
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(current, d)) and d.lower() not in VCS_FOLDERS]


def regular_files(root: Path, folder: str, suffix: str | tuple[str, ...] = "") -> list[str]:
    """Repository-relative paths of the regular files under ``root/folder`` ending in ``suffix``,
    sorted; symlinks and what lies behind them are skipped (``unsafe_files`` reports them)."""
    top = os.path.join(root, folder)
    if os.path.islink(top) or not os.path.isdir(top):
        return []
    out = []
    for current, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(current, d)) and d.lower() not in VCS_FOLDERS]
        for name in files:
            full = os.path.join(current, name)
            if name.lower().endswith(suffix) and stat.S_ISREG(os.lstat(full).st_mode):
                out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return sorted(out)


def regular_bytes(path: Path, offset: int = 0, size: int | None = None, most: int | None = None) -> bytes | None:
    """``size`` bytes at ``offset`` of ``path`` (all of it without ``size``), read only from a regular file reached
    without a symlink at its end, and only when the file holds them all; None for anything else (a FIFO is not waited
    on) and for a file larger than ``most`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (most is not None and st.st_size > most):
            return None
        size = st.st_size - offset if size is None else size
        if offset < 0 or size < 0 or offset + size > st.st_size:
            return None
        data = os.pread(fd, size, offset)
        return data if len(data) == size else None
    except (OSError, ValueError, OverflowError, MemoryError):
        return None
    finally:
        os.close(fd)
