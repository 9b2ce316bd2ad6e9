"""The code whose content can change what ``evreg`` concludes: every module and data file of ``evreg``
and of each installed rule pack, and the environment it runs in (``environment``). One digest of both (``digest``)
versions the validation result cache, its kept findings, the catalog's rows, the catalog's stamp and the site's
page cache, wherever the code is installed."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import site
import sys
import sysconfig
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


@functools.cache
def environment() -> bytes:
    """What besides ``evreg``'s own code decides what it concludes: the Python implementation and version (its
    ``re`` reads every text, its ``html.parser`` every page) and the name and version of every distribution installed
    in the environment's site folders (pydantic and jsonschema check records, Python-Markdown and its extensions
    render pages, the look-alike table reads figures), one per line; not the installers (``INSTALLERS``), which a run
    does not import and which differ between the environments CI makes. Read from the metadata folders' names
    (``name-version.dist-info``), so it costs a directory listing per site folder; and from the site folders alone,
    not the import path, so the same environment has the same listing however ``evreg`` is started (a script,
    ``python -m`` in a checkout, a test process, ``PYTHONPATH``)."""
    found: set[str] = set()
    for folder in site_folders():
        with contextlib.suppress(OSError):
            found.update(n for n in os.listdir(folder) if n.endswith((".dist-info", ".egg-info")))
    kept = sorted(n for n in found if re.split(r"[-.]", n, maxsplit=1)[0].lower() not in INSTALLERS)
    python = f"{sys.implementation.name}=={'.'.join(map(str, sys.version_info[:3]))}"
    return "\n".join([python, *kept]).encode("utf-8", "surrogateescape")


def site_folders() -> list[str]:
    """Where the environment installs distributions: its site-packages folders, and the user's when Python reads
    it."""
    paths = sysconfig.get_paths()
    folders = {paths["purelib"], paths["platlib"], *site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    return sorted(folders)


INSTALLERS = frozenset({"pip", "setuptools", "wheel", "distribute"})
"""Distributions that install the others: a fresh virtual environment has its own pip, a CI image an upgraded one."""


def _tops(extra: Iterable[Path]) -> list[Path]:
    """``evreg``, the installed rule packs and the ``extra`` folders, without those inside another of them,
    by name."""
    folders = {EVREG, *rule_packs(), *extra}
    return sorted((f for f in folders if not any(o in f.parents for o in folders)), key=lambda f: (f.name, f))


def sources(extra: Iterable[Path] = ()) -> list[Path]:
    """Every module and JSON data file under ``evreg``, the installed rule packs and ``extra`` folders."""
    return [path for top in _tops(extra) for path in _files(top)]


def _files(top: Path) -> list[Path]:
    return [p for p in sorted([*top.rglob("*.py"), *top.rglob("*.json")]) if "__pycache__" not in p.parts]


def digest(extra: Iterable[Path] = ()) -> str:
    """Changes whenever a file of ``sources`` changes (its path inside its package, or its bytes), or the
    ``environment`` does. Where the code is installed does not count: the same code installed elsewhere (a CI run's
    virtual environment, another checkout) has the same digest, so what one stored the other reuses."""
    return _digest(tuple(_tops(extra)))


def _digest(tops: tuple[Path, ...]) -> str:
    h = hashlib.sha256(b"%d\0%s" % (len(environment()), environment()))
    for top in tops:
        for path in _files(top):
            h.update(path.relative_to(top.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


IN_REPOSITORY = f"registry/{EVREG.name}"
"""Where ``evreg``'s own code sits in its repository (``pyproject.toml`` finds the packages under ``registry/``)."""


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def installed_differs(root: Path, rev: str) -> str | None:
    """Why the running ``evreg`` is not the code of commit ``rev`` of the repository at ``root`` (a module or data
    file added, removed or changed, compared by git blob id); None when it is the same, or when the commit holds no
    code of ``evreg`` (a registry that installs it) and so cannot say."""
    from evreg.core import gitcmd

    done = gitcmd.run(root, "ls-tree", "-r", "-z", rev, "--", f"{IN_REPOSITORY}/")
    if done is None or done.returncode != 0:
        return f"git cannot list {IN_REPOSITORY}/ at {rev[:12]}"
    theirs: dict[str, str] = {}
    for line in done.stdout.split(b"\0"):
        meta, _, name = line.partition(b"\t")
        path = name.decode("utf-8", "surrogateescape")[len(IN_REPOSITORY) + 1 :]
        if meta.split(b" ")[1:2] == [b"blob"] and path.endswith((".py", ".json")):
            theirs[path] = meta.split(b" ")[2].decode()
    if not theirs:
        return None
    ours = {p.relative_to(EVREG).as_posix(): _blob(p.read_bytes()) for p in sources() if EVREG in p.parents}
    differ = sorted(p for p in theirs.keys() | ours.keys() if theirs.get(p) != ours.get(p))
    if not differ:
        return None
    return f"the running evreg is not the code of {rev[:12]} ({IN_REPOSITORY}/{differ[0]} differs)"
