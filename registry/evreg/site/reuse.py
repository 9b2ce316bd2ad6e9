"""The checks of generated pages, reused for pages whose content is unchanged (content-addressed).

Every generated page is scanned as it is made: for figures that did not come through a citation (``orphan-number``)
and for markup outside the renderer's allowlist (``site-file-unsafe``). On a large site those scans are about a third
of the site's time, and a pull request changes few pages. What a scan finds is a pure function of the page's content
(its HTML, and the HTML its data files make), its path (named in the findings) and the code that scans (the figure
grammar and the allowlist); so the findings are kept under an *address*, a digest of exactly those (``address``), and a
page whose address has an entry gets the entry's findings without a scan.

Nothing the cache holds is published: every page is still made from the catalog, and its bytes are written as a build
without a cache writes them (the receipt's footer, which changes with every commit, is added as the page is written).
Only the scan's verdict comes from the cache, so a build with the cache gives the same site as one without, and a page
whose entry holds an ``orphan-number`` still refuses the build. An entry is used only when it is whole and for this
page: it names its own address, the page's path and the digest of the content it was made for, and all three are
those of the page just made; anything else (another page's entry at this address, a truncated or edited file,
another format) is no entry, and the page is scanned. As for the validation results, a file that a commit brings
(git tracks something under ``build/``) or that a symlink leads to is not read at all. Entries stored by other code
are never found: the code version (``check.results.code_version``, the validation cache's), the site configuration
(``mkdocs.yml``) and the Python version are part of every address and of the file.

The entries are one JSON file, ``CHECKED_FILE``, read once per build (the workers that make the record pages inherit
it) and written after it with the entries that build used or made, and no other: entries of pages that changed or
went away do not outlive the next build. CI keeps it as it keeps the validation results (``build/cache``: main's
publish run saves it, a pull request's judge restores it).
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from evreg.core import jsonio
from evreg.core.findings import Finding

CHECKED_FILE = "build/cache/pages/checked.json"
"""Where the entries are kept, relative to the registry root (an ignored build output, beside the validation
results)."""

FORMAT = 1
"""The file's own format: a file of another format is not read."""


def site_version(root: Path, rules: str) -> str:
    """What, besides a page's content and path, decides what its scan finds: ``rules`` (the code version, as the
    validation cache and the receipt compute it: every module and data file of ``evreg`` and the rule packs), the
    site configuration's bytes and the Python version (its regular expressions and HTML parser run the scan)."""
    try:
        config = (root / "mkdocs.yml").read_bytes()
    except OSError:
        config = b""
    h = hashlib.sha256(f"format {FORMAT}\0python {sys.version_info[0]}.{sys.version_info[1]}\0".encode())
    h.update(rules.encode() + b"\0" + hashlib.sha256(config).hexdigest().encode())
    return h.hexdigest()


def content_digest(html: bytes, data: Sequence[tuple[str, str]] = ()) -> str:
    """A page's content as its scan reads it: its HTML (as published, before the footer) and, for each of its data
    files, its name and the HTML it makes. Each part is length-prefixed, so no two contents share a digest."""
    h = hashlib.sha256(b"%d\0" % len(html))
    h.update(html)
    for name, made in data:
        for part in (name.encode(), made.encode()):
            h.update(b"\0%d\0" % len(part))
            h.update(part)
    return h.hexdigest()


def address(version: str, path: str, digest: str) -> str:
    """Where a page's entry is kept: a digest of the site version, the page's path and its content's digest."""
    return hashlib.sha256(f"{version}\0{path}\0{digest}".encode()).hexdigest()


@dataclass
class Checks:
    """The entries a build reads (``stored``, by address) and those it used or made (``used``); how many pages' scans
    were reused, and the pages that were scanned."""

    version: str
    stored: dict[str, Any] = field(default_factory=dict)
    used: dict[str, dict[str, Any]] = field(default_factory=dict)
    reused: int = 0
    scanned: list[str] = field(default_factory=list)
    mine: bool = True  # whether the file is this machine's own: else it is neither read nor written

    @classmethod
    def load(cls, root: Path, version: str) -> Checks:
        """The entries kept under ``root`` for ``version``; none when the file is missing, unreadable, of another
        format or from another version, or when it is not this machine's own (``own``)."""
        checks = cls(version, mine=own(root))
        if not checks.mine:
            return checks
        try:
            data = jsonio.loads((root / CHECKED_FILE).read_bytes())
        except (OSError, ValueError):
            return checks
        if (
            isinstance(data, dict)
            and data.get("format") == FORMAT
            and data.get("version") == version
            and isinstance(data.get("entries"), dict)
        ):
            checks.stored = data["entries"]
        return checks

    def lookup(self, path: str, digest: str) -> tuple[str, list[Finding] | None]:
        """The address of the page ``path`` with content ``digest``, and its stored findings: None unless the entry
        there is whole and names this address, this path and this content."""
        key = address(self.version, path, digest)
        entry = self.stored.get(key)
        if not (
            isinstance(entry, dict)
            and entry.get("key") == key
            and entry.get("path") == path
            and entry.get("content") == digest
            and isinstance(entry.get("findings"), list)
        ):
            return key, None
        try:
            return key, [Finding.model_validate(f) for f in entry["findings"]]
        except (ValidationError, ValueError, TypeError):
            return key, None

    def check(
        self, path: str, digest: str, scan: Callable[[], list[Finding]]
    ) -> tuple[list[Finding], dict[str, Any] | None]:
        """The findings on the page ``path`` with content ``digest``: its entry's, else ``scan()``'s. Also the entry
        made for a scanned page (None for a reused one: ``keep`` keeps it by its address)."""
        key, found = self.lookup(path, digest)
        if found is not None:
            return found, None
        found = scan()
        return found, entry(key, path, digest, found)

    def keep(self, path: str, digest: str, made: dict[str, Any] | None) -> None:
        """Count a page as this build checked it (in this process or a worker), and keep its entry for the next
        build: the one ``check`` made for it, or the stored one it reused."""
        if made is None:
            key = address(self.version, path, digest)
            self.used[key] = self.stored[key]
            self.reused += 1
        else:
            self.used[made["key"]] = made
            self.scanned.append(path)

    def save(self, root: Path) -> None:
        """Write the entries this build used or made, and no other (a read-only checkout still builds)."""
        if not self.mine:
            return
        data = {"format": FORMAT, "version": self.version, "entries": self.used}
        with contextlib.suppress(OSError):
            jsonio.write_atomic(root / CHECKED_FILE, orjson.dumps(data))


def own(root: Path) -> bool:
    """Whether the kept file is this machine's own, as the validation cache's must be (``pipeline.cache_problem``: git
    tracks nothing under ``build/``, whose file would be a commit author's word, and no folder on the way to the file
    is a symlink), and neither its folder nor the file is a symlink."""
    from evreg.check.pipeline import cache_problem

    file = root / CHECKED_FILE
    return cache_problem(root) is None and not file.parent.is_symlink() and not file.is_symlink()


def entry(key: str, path: str, digest: str, findings: list[Finding]) -> dict[str, Any]:
    """An entry: its own address, the page's path, the digest of the content it was made for, and the findings."""
    return {"key": key, "path": path, "content": digest, "findings": [f.model_dump(mode="json") for f in findings]}
