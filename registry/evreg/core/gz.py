"""The one way the registry writes gzip: the data downloads (``TABLE.jsonl.gz``), a comparison's data file and
the sitemap. With no file name and no time stamp in the header, the same bytes in give the same bytes out, however a
file is read in chunks (zlib's deflate does not depend on them).

A download is written as one gzip member per piece of its text (``pieces``: cut where the text itself says), which
every gzip reader reads as one text. A piece compressed by an earlier export is taken from its cache (``Kept``) when
its entry inflates to the piece: a new result changes the pieces around its rows, and the rest of a download at
100,000 measurements (1.4 GB of JSON Lines) is not compressed again.

The standard library's zlib, on purpose: zlib-ng compressed the downloads at 100,000 measurements in less than half
the time, but its bytes depend on its version and on how the input is fed to it, and the site's files must be the
same wherever it is built again (``evreg verify``)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from evreg.core.containment import regular_bytes

LEVEL = 6
PIECE_MIN = 1 << 19
PIECE_MAX = 1 << 23
PIECE_MASK = 63
PIECE_TRIES = 4096
"""A piece ends at the first line end at least ``PIECE_MIN`` bytes into it whose line's CRC-32 has none of the bits
of ``PIECE_MASK`` (one line in 64), among the next ``PIECE_TRIES`` line ends: pieces of about 540 KB of JSON Lines,
none longer than ``PIECE_MAX`` (a text of very short lines is cut at the last line end before it)."""


def compress(data: bytes) -> bytes:
    """``data`` gzip-compressed."""
    out = io.BytesIO()
    with _writer(out) as packed:
        packed.write(data)
    return out.getvalue()


def compress_file(plain: Path, target: Path, kept: Kept | None = None) -> None:
    """``plain`` compressed into ``target``, a gzip member per piece (``pieces``), replaced whole (a partial file is
    never left at ``target``). With ``kept``, a piece compressed before is taken from it; the bytes are the same."""
    member = kept.member if kept is not None else compress
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with plain.open("rb") as src, tmp.open("wb") as out:
            written = False
            for piece in pieces(src):
                out.write(member(piece))
                written = True
            if not written:  # an empty table: a gzip file of no text, as every reader expects, not an empty file
                out.write(compress(b""))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def pieces(src: BinaryIO) -> Iterator[bytes]:
    """The bytes of ``src`` in pieces cut where the text says (``PIECE_MASK``), else at the last line end before
    ``PIECE_MAX`` bytes, else at ``PIECE_MAX``. Where a piece ends depends only on its own bytes: rows added in one
    place of a download change the pieces around them, and the cuts after them fall where they fell before as soon
    as one does."""
    data, start, end_of_file = b"", 0, False
    while True:
        if not end_of_file and len(data) - start < PIECE_MAX:  # a piece is cut seeing PIECE_MAX bytes, or the end
            parts, have = [data[start:]], len(data) - start
            while have < PIECE_MAX:  # joined once, however short the reads
                more = src.read(PIECE_MAX)
                if not more:
                    end_of_file = True
                    break
                parts.append(more)
                have += len(more)
            data, start = b"".join(parts), 0
        if start == len(data):
            return
        cut = _cut(data, start)
        yield data[start:cut]
        start = cut


def _cut(data: bytes, start: int) -> int:
    end = min(len(data), start + PIECE_MAX)
    pos = data.find(b"\n", start + PIECE_MIN - 1, end)
    before = data.rfind(b"\n", start, pos) if pos != -1 else -1
    line = before + 1 if before != -1 else start
    view = memoryview(data)
    for _ in range(PIECE_TRIES):
        if pos == -1:
            break
        if not zlib.crc32(view[line : pos + 1]) & PIECE_MASK:
            return pos + 1
        line = pos + 1
        pos = data.find(b"\n", line, end)
    if end - start < PIECE_MAX:  # the rest of the text (``pieces`` reads PIECE_MAX bytes ahead while there are more)
        return end
    last = data.rfind(b"\n", start, end)
    return last + 1 if last != -1 else end


class Kept:
    """Gzip members compressed before, in ``folder``: one file per piece, named by the SHA-256 of its plain bytes,
    under a folder named by the zlib, the level and what they write for a fixed text. A member is taken only when it
    is no larger than deflate can make the piece, begins with the
    header ``compress`` writes and inflates to exactly the piece (a member left by another program, cut short or
    planted under another piece's name is compressed again, and replaced); the members a run did not use are
    removed (``prune``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / f"zlib-{zlib.ZLIB_RUNTIME_VERSION}-level-{LEVEL}-{_SAMPLE}"
        self.used: set[str] = set()
        self.taken = 0
        self.made = 0
        if self.folder.is_symlink():  # the link itself goes, never what it leads to: members are written here only
            self.folder.unlink()

    def member(self, piece: bytes) -> bytes:
        name = f"{hashlib.sha256(piece).hexdigest()}.gz"
        self.used.add(name)
        data = regular_bytes(self.folder / name, most=len(piece) + (len(piece) >> 9) + 64)  # deflate's bound, over
        if data is not None and _holds(data, piece):
            self.taken += 1
            return data
        data = compress(piece)
        self.made += 1
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=self.folder)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, self.folder / name)
        except OSError:  # a cache that cannot be written is not kept; the member is written all the same
            pass
        return data

    def prune(self) -> None:
        """Remove the members this run did not use (an earlier export's, and a half-written one), and those of
        another zlib or level."""
        parent = self.folder.parent
        for other in parent.iterdir() if parent.is_dir() and not parent.is_symlink() else ():
            if other != self.folder:
                _remove(other)
        for entry in self.folder.iterdir() if self.folder.is_dir() and not self.folder.is_symlink() else ():
            if entry.name not in self.used:
                _remove(entry)


def _remove(path: Path) -> None:
    """A file, a link (not what it leads to) or a folder and what it holds; what cannot be removed stays (a cache
    that cannot be written is not kept, and the export goes on)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _holds(member: bytes, piece: bytes) -> bool:
    """Whether ``member`` is one gzip member with ``compress``'s header that inflates to ``piece`` (inflating no
    further than one byte past it)."""
    if member[:10] != _HEADER:
        return False
    inflate = zlib.decompressobj(wbits=31)
    try:
        out = inflate.decompress(member, len(piece) + 1)
    except zlib.error:
        return False
    return out == piece and inflate.eof and not inflate.unused_data and not inflate.unconsumed_tail


def _writer(raw: BinaryIO) -> gzip.GzipFile:
    """A gzip stream into ``raw`` whose header is the same on every system: no name, no time, the operating system
    "unknown" (``gzip.compress`` lets zlib write its own system's code)."""
    return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=LEVEL, mtime=0)


_HEADER = compress(b"")[:10]  # what every member ``compress`` writes begins with
_SAMPLE = hashlib.sha256(compress(bytes(range(256)) * 64 + b"\n".join(b"%d" % n for n in range(4096)))).hexdigest()[:12]
"""What this zlib writes for a fixed text: a zlib built otherwise under the same version string keeps its members
apart."""
