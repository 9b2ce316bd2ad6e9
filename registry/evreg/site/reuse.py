"""What a build keeps for the next: the record pages it made, by what they read, and what the scans found on every
generated page, by its content.

**Record pages.** A record page (a packet's, a family's, a coverage contract's: most of a large site) is a pure
function of its path, the code and what it reads of the catalog. The build records what each one read (its *trace*,
``evreg.site.trace``) and keeps the page's HTML in a pack under ``PACKS_DIR`` with an entry in ``MADE_FILE``: the
trace, one digest of the values read, and the digest of the HTML. The next build takes a page from the pack instead of
making it only when the same reads digest in its own catalog as they did (everything the page read is unchanged) and
the bytes read back have the kept digest; anything else (a changed read, a missing or edited pack, an entry of another
form) makes the page again. A page is never taken on a stored word alone: its trace is checked against this build's
catalog, its HTML against its digest, and it is scanned (or its scan reused) as a page just made is. The frame and
the receipt's footer, which changes with every commit, are added as every page is written, so a build that takes
pages publishes the same bytes as one that makes them all.

**Pieces.** A page of the site's own that reads most of the catalog (a comparison: every result of a metric) is
made of pieces (a workload's rows: ``evreg.site.compare.tier_piece``), each a pure function of its name (the page's
URL and a digest of what the page states around it) and its reads, and kept as a record page is (``Spill``: an entry
in ``MADE_FILE`` under the name, its bytes in the part's pack). A piece's bytes hold what the scans found on it,
scanned as it was made, in the context the page gives it (``evreg.site.html.scan_piece``); the page's own HTML around
its pieces is scanned as any page is. So a new result remakes and rescans the workloads it joins, not the page.

**Scans.** Every generated page is scanned: for figures that did not come through a citation (``orphan-number``)
and for markup outside the renderer's allowlist (``site-file-unsafe``). What a scan finds is a pure function of the
page's content (its HTML and its data files), its path (named in the findings) and the code that scans
(the figure grammar and the allowlist); so the findings are kept under an *address*, a digest of exactly those
(``address``), and a page whose address has an entry gets the entry's findings without a scan. A page whose entry
holds an ``orphan-number`` still refuses the build. An entry is used only when it is whole and for this page: it names
its own address, the page's path and the digest of the content it was made for, and all three are those of the page;
anything else (another page's entry at this address, a truncated or edited file, another format) is no entry, and the
page is scanned.

**Whose files.** As for the validation results, files that a commit brings (git tracks something under ``build/``)
or that a symlink leads to are not read at all. Entries stored by other code are never found: the code version
(``check.results.code_version``, the validation cache's), the site configuration (``mkdocs.yml``) and the Python
version are part of every address and of both files. They are read once per build (the workers inherit them) and
written after it with what that build used or made, and nothing else: entries of pages that changed or went away do
not outlive the next build. CI keeps them as it keeps the validation results (``build/cache``: main's publish run
saves it, a pull request's judge restores it).
"""

from __future__ import annotations

import array
import base64
import binascii
import contextlib
import dataclasses
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from evreg.core import codebase, jsonio
from evreg.core.containment import regular_bytes
from evreg.core.findings import Finding
from evreg.site.trace import Digests, Reads, Token, sorted_tokens, token_from_json

if TYPE_CHECKING:
    from evreg.site.build import Made

CHECKED_FILE = "build/cache/pages/checked.json"
"""Where the entries are kept, relative to the registry root (an ignored build output, beside the validation
results)."""

MADE_FILE = "build/cache/pages/made.json"
PACKS_DIR = "build/cache/pages/packs"
"""The record pages a build made: an entry per page (``MADE_FILE``) and their HTML, one pack per part of the build
(``part-N.html``, the pages one after another)."""

FORMAT = 5
"""The files' own format: a file of another format is not read."""


def site_version(root: Path, rules: str) -> str:
    """What, besides a page's reads, content and path, decides what the page is and what its scan finds: ``rules``
    (the code version, as the validation cache and the receipt compute it: every module and data file of ``evreg`` and
    the rule packs, and the environment), the site configuration's bytes and the environment this build runs in
    (``codebase.environment``: the Python version and the installed packages that render and scan)."""
    try:
        config = (root / "mkdocs.yml").read_bytes()
    except OSError:
        config = b""
    h = hashlib.sha256(f"format {FORMAT}\0".encode())
    h.update(rules.encode() + b"\0" + hashlib.sha256(config).hexdigest().encode() + b"\0")
    h.update(codebase.environment())
    return h.hexdigest()


def content_digest(html: bytes, data: Sequence[tuple[str, str]] = ()) -> str:
    """A page's content: its HTML (as published, before the footer) and, for each of its data files, its name and
    its content (the HTML a scan reads of it is made from it by code whose version is in every address). Each part is
    length-prefixed, so no two contents share a digest."""
    h = hashlib.sha256(b"%d\0" % len(html))
    h.update(html)
    for name, content in data:
        for part in (name.encode(), content.encode()):
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
    mine: bool = True  # whether the files are this machine's own: else they are neither read nor written
    kept: dict[str, Any] = field(default_factory=dict)  # record page path -> its entry in MADE_FILE, as stored
    table: list[Token | None] = field(default_factory=list)  # the tokens the entries name by index (None: not one)
    packs: Path | None = None  # where the kept pages' HTML is
    made: dict[str, list[Any]] = field(default_factory=dict)  # the record pages this build made or took, as stored
    taken: int = 0  # record pages taken from the packs (counted as they come back from the workers)
    pieces_taken: int = 0  # pieces of the site's own pages taken from the packs (``Spill``)
    saving: bool = True  # False: a check (``evreg build --check``) reads the kept entries and packs, writes none
    known: list[bytes | None] = field(default_factory=list)  # the digest of each read of ``table``, once worked out

    @classmethod
    def load(cls, root: Path, version: str) -> Checks:
        """The entries kept under ``root`` for ``version``; none when the file is missing, unreadable, of another
        format or from another version, or when it is not this machine's own (``own``)."""
        checks = cls(version, mine=own(root))
        if not checks.mine:
            return checks
        data = _json_of(root / CHECKED_FILE)
        made = _json_of(root / MADE_FILE, shallow_reader=True)  # ``_kept``, ``token_from_json``: level by level
        if (
            isinstance(data, dict)
            and data.get("format") == FORMAT
            and data.get("version") == version
            and isinstance(data.get("entries"), dict)
        ):
            checks.stored = data["entries"]
        if (
            isinstance(made, dict)
            and made.get("format") == FORMAT
            and made.get("version") == version
            and isinstance(made.get("pages"), dict)
            and isinstance(made.get("tokens"), list)
            and not (root / PACKS_DIR).is_symlink()
        ):
            checks.kept, checks.packs = made["pages"], root / PACKS_DIR
            checks.table = [token_from_json(t) for t in made["tokens"]]  # once: pages share their tokens
            checks.known = [None] * len(checks.table)
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

    def save(self, root: Path, pending: Path | None = None) -> None:
        """Write the entries this build used or made, and no other (a read-only checkout still builds); with
        ``pending`` (where this build's packs were written, ``pending_dir``), keep the record pages it made or took."""
        if not (self.mine and self.saving):
            return
        data = {"format": FORMAT, "version": self.version, "entries": self.used}
        with contextlib.suppress(OSError):
            jsonio.write_atomic(root / CHECKED_FILE, orjson.dumps(data))
        if pending is None or not self.made:
            return
        packs = root / PACKS_DIR
        table = self._numbered()
        old = packs.with_name(f".packs-old-{os.getpid()}-{time.monotonic_ns()}")
        try:
            if packs.is_symlink() or packs.is_file():  # not a folder of packs: nothing to keep
                packs.unlink()
            if packs.is_dir():
                os.rename(packs, old)
            if (root / MADE_FILE).is_dir() and not (root / MADE_FILE).is_symlink():
                shutil.rmtree(root / MADE_FILE)
            os.rename(pending, packs)
        except OSError:
            return  # another build put its packs in place meanwhile: its entries stay
        finally:
            shutil.rmtree(old, ignore_errors=True)
        made = {"format": FORMAT, "version": self.version, "tokens": table, "pages": self.made}
        with contextlib.suppress(OSError, TypeError):  # TypeError: orjson's, for text it cannot write
            jsonio.write_atomic(root / MADE_FILE, orjson.dumps(made, default=list))

    def _numbered(self) -> list[Token | None]:
        """The table of reads the entries of ``made`` name by number (their reads, the last field, numbered in place and
        ``packed``): a taken page or piece keeps the numbers it was read with (``Numbered``), the reads of one made in
        this build are numbered after them (renumbering 4.9 million reads at 100,000 measurements took two seconds of
        every build). Once the reads in use are fewer than half the table (pages gone, reads changed), every entry is
        numbered anew, in the order they come."""
        entries = list(self.made.values())
        used: set[int] = set()
        for entry in entries:
            if isinstance(entry[7], Numbered):
                used.update(entry[7].numbers)
        if 2 * len(used) < len(self.table):
            for entry in entries:
                if isinstance(entry[7], Numbered):
                    entry[7] = [self.table[n] for n in entry[7].numbers]
            table: list[Token | None] = []
        else:
            table = list(self.table)
        numbers: dict[Token | None, int] = {}
        for entry in entries:
            if isinstance(entry[7], Numbered):
                entry[7] = packed(entry[7].numbers)
                continue
            if not numbers and table:
                numbers = {t: n for n, t in enumerate(table) if t is not None}
            entry[7] = packed([numbers[t] if t in numbers else _append(numbers, table, t) for t in entry[7]])
        return table

    def pending_dir(self, root: Path, beside: Path) -> Path:
        """A new folder for this build's packs: under ``root``'s cache when the cache is this machine's own (``save``
        puts it in place of the kept packs), else (or when it keeps nothing) a temporary one ``beside`` the site."""
        if self.mine and self.saving:
            folder = root / PACKS_DIR
            with contextlib.suppress(OSError):
                folder.parent.mkdir(parents=True, exist_ok=True)
                return Path(tempfile.mkdtemp(prefix=".packs-new-", dir=folder.parent))
        return Path(tempfile.mkdtemp(prefix=".pages-pending-", dir=beside))

    def page(self, path: str, digests: Digests) -> tuple[Kept, bytes, bytes] | None:
        """The record page ``path`` as an earlier build made it, its HTML and its search entries as kept (JSON): only
        when everything it read digests in this build's catalog (``digests``) as it did then, and what is read back
        (the HTML and the entries from the pack, the title from its entry) has the digests it was kept with."""
        taken = self.kept_bytes(path, digests)
        if taken is None:
            return None
        kept, html, entries = taken
        try:
            html.decode("utf-8")
            listed = jsonio.loads(entries)
        except ValueError:  # a UnicodeDecodeError is one too
            return None
        if not (isinstance(listed, list) and all(isinstance(e, dict) for e in listed)):
            return None
        return dataclasses.replace(kept, trace=dataclasses.replace(kept.trace, entries=listed)), html, entries

    def kept_bytes(self, name: str, digests: Digests) -> tuple[Kept, bytes, bytes] | None:
        """What an earlier build kept under ``name`` (a record page's path, or a piece's name: ``Spill``), as read
        back from its pack: its bytes and the bytes after them (a page's search entries); only when everything it
        read digests in this build's catalog (``digests``) as it did then, and the bytes have the digest they were
        kept with and its seal is whole."""
        kept = _kept(self.kept.get(name), len(self.table), piece="#" in name)
        if kept is None or self.packs is None or self._inputs(kept.numbers, digests) != kept.inputs:
            return None
        data = regular_bytes(self.packs / f"part-{kept.part}.html", kept.offset, kept.size + kept.esize)
        if data is None:
            return None
        html, entries = data[: kept.size], data[kept.size :]
        if content_digest(html) != kept.content or not kept.seal:
            return None
        if seal(name, kept.content, kept.title, kept.inputs, entries) != kept.seal:
            return None
        return kept, html, entries

    def _inputs(self, numbers: Sequence[int], digests: Digests) -> str | None:
        """``Digests.of_trace`` of the reads ``numbers`` names in the table, each read's digest worked out once per
        build by its number (a taken page's reads are checked by number: 4.9 million at 100,000 measurements); None
        when one names no read."""
        known, table = self.known, self.table

        def work_out(n: int) -> bytes:
            token = table[n]
            known[n] = b"" if token is None else digests.of(token)
            return known[n]  # type: ignore[return-value]  # set just above

        parts = [known[n] or work_out(n) for n in numbers]
        return None if b"" in parts else hashlib.sha256(b"".join(parts)).hexdigest()

    def tokens_of(self, numbers: Sequence[int]) -> list[Token]:
        """The reads ``numbers`` names in the table (a taken piece's: its page reads them)."""
        return [t for t in map(self.table.__getitem__, numbers) if t is not None]

    def record(self, path: str, m: Made) -> None:
        """Keep a record page this build made or took: its HTML's digest, title, place in this build's packs (part,
        offset, size of the HTML, size of the search entries after it), the digest of its reads, the reads and the
        seal."""
        assert m.trace is not None
        where = [m.part, m.offset, m.size, m.esize]
        reads = Numbered(m.numbers) if m.numbers else list(m.trace.tokens)
        self.made[path] = [m.digest, m.title, *where, m.trace.inputs, reads, m.seal]


class Spill:
    """The pieces of pages one part of the build makes (``Pages.kept``: a comparison's workloads), kept as record
    pages are: each written into the part's pack (``part``, under ``pending``) with an entry of what it read
    (``entries``, by name, in ``MADE_FILE``'s form), and taken from an earlier build's pack instead of being made
    while everything it read is unchanged (``Checks.kept_bytes``)."""

    def __init__(self, checks: Checks, digests: Digests, reads: Reads, pending: Path, part: int) -> None:
        self.checks, self.digests, self.reads = checks, digests, reads
        self.pack, self.part = pending / f"part-{part}.html", part
        self.entries: dict[str, list[Any]] = {}
        self.taken = 0  # pieces taken from an earlier build

    def __call__(self, name: str, make: Callable[[], bytes], read: Callable[[bytes], Any]) -> Any:
        """The piece ``name`` as ``read`` takes it from its bytes: the kept ones while its reads are unchanged and
        ``read`` finds them whole (not None), else those ``make()`` makes."""
        kept = self.checks.kept_bytes(name, self.digests)
        value = read(kept[1]) if kept is not None else None
        reads: list[Token] | Numbered
        if kept is not None and value is not None:
            was, data, _after = kept
            trace, reads = was.trace, Numbered(was.numbers)
            self.reads.noted(self.checks.tokens_of(was.numbers))  # a page taking it reads what making it read
            self.taken += 1
        else:
            with self.reads.recording() as seen:
                data = make()
            trace = Trace.of(seen, self.digests, [])
            reads = list(trace.tokens)
            value = read(data)
            assert value is not None, f"a piece made for {name} is not one read can take"
        digest = content_digest(data)
        offset = 0
        if self.checks.saving:
            with open(self.pack, "ab") as out:
                offset = out.tell()
                out.write(data)
        where = [self.part, offset, len(data), 0]
        sealed = seal(name, digest, "", trace.inputs, b"")
        self.entries[name] = [digest, "", *where, trace.inputs, reads, sealed]
        return value


@dataclass(frozen=True)
class Numbered:
    """A taken page's or piece's reads as the numbers of the table it was read with (``Checks.table``), which the
    next table keeps (``Checks._numbered``)."""

    numbers: Sequence[int]


_READ = next(code for code in "IL" if array.array(code).itemsize == 4)
"""The array type of a read's number as kept: four bytes, unsigned."""


def packed(numbers: Sequence[int]) -> str:
    """Reads' numbers as ``MADE_FILE`` keeps them: each four bytes, unsigned, little-endian, all in base64 (4.9 million
    reads at 100,000 measurements: as JSON numbers they were a quarter of the time of reading the file, and an object
    each in memory)."""
    kept = array.array(_READ, numbers)
    if sys.byteorder == "big":
        kept.byteswap()
    return base64.b64encode(kept.tobytes()).decode("ascii")


def unpacked(text: str) -> array.array[int] | None:
    """The numbers ``packed`` made ``text`` of; None for text it cannot have made."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) % 4:
        return None
    numbers = array.array(_READ)
    numbers.frombytes(raw)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def _append(numbers: dict[Token | None, int], table: list[Token | None], token: Token) -> int:
    """The number of a read new to ``table``: the table's next."""
    numbers[token] = n = len(table)
    table.append(token)
    return n


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


@dataclass(frozen=True)
class Trace:
    """What a record page read (``tokens``, sorted) and their values' digest (``inputs``), and its search entries."""

    tokens: tuple[Token, ...]
    inputs: str
    entries: list[dict[str, Any]]

    @classmethod
    def of(cls, seen: set[Token], digests: Digests, entries: list[dict[str, Any]]) -> Trace:
        tokens = tuple(sorted_tokens(seen))
        return cls(tokens, digests.of_trace(list(tokens)), entries)


@dataclass(frozen=True)
class Kept:
    """A record page as an earlier build made it: where its HTML and search entries are (its pack's part, offset and
    sizes), the HTML's digest, its title, its trace (the digest of its reads, and its entries once read from the pack;
    its reads are ``numbers`` in the table, ``Checks.tokens_of``) and its seal."""

    content: str
    title: str
    part: int
    offset: int
    size: int
    esize: int  # the search entries' size, after the HTML
    trace: Trace
    seal: str
    numbers: Sequence[int] = ()  # its reads as the numbers of the table it was read with (``Checks.table``)

    @property
    def inputs(self) -> str:
        return self.trace.inputs


def _kept(raw: Any, table: int, piece: bool = False) -> Kept | None:
    """A stored entry as a ``Kept``; None unless it is whole: every field of its type, every read a number of the
    table (of ``table`` reads; ``Checks._inputs`` refuses one that names no read), and some read unless it is a
    piece's (a piece may read nothing but what its name is made of; a page reads its records)."""
    if not (isinstance(raw, list) and len(raw) == 9):
        return None
    content, title, part, offset, size, esize, inputs, reads, sealed = raw
    ints = (part, offset, size, esize)
    numbers = unpacked(reads) if isinstance(reads, str) else None
    if not (
        all(isinstance(x, str) for x in (content, title, inputs, sealed))
        and all(type(x) is int and x >= 0 for x in ints)  # not a bool, nor another subclass of int
        and numbers is not None
        and (bool(numbers) or piece)
        and (not numbers or max(numbers) < table)
    ):
        return None
    return Kept(content, title, part, offset, size, esize, Trace((), inputs, []), sealed, numbers)


def seal(path: str, content: str, title: str, inputs: str, entries: bytes) -> str:
    """One digest of what a kept page publishes, bound to its path: the HTML's digest, the title, the digest of its
    reads and its search entries as kept (an entry moved to another page, or with another title or entries, is not the
    page kept). Empty for a title that is not Unicode text it could write."""
    h = hashlib.sha256()
    try:
        parts = [path.encode(), content.encode(), title.encode(), inputs.encode(), entries]
    except UnicodeEncodeError:
        return ""
    for part in parts:
        h.update(b"%d\0" % len(part) + part)
    return h.hexdigest()


def _json_of(path: Path, shallow_reader: bool = False) -> Any:
    """A kept file's JSON; None when it is not a regular file, or not JSON (``jsonio.loads``)."""
    data = regular_bytes(path)
    try:
        return None if data is None else jsonio.loads(data, shallow_reader)
    except ValueError:
        return None
