"""The one way the registry writes gzip: the data downloads (``TABLE.jsonl.gz``), a comparison's data file and
the sitemap. With no file name and no time stamp in the header, the same bytes in give the same bytes out, however a
file is read in chunks (zlib's deflate does not depend on them).

The standard library's zlib, on purpose: zlib-ng compressed the downloads at 100,000 measurements in less than half
the time, but its bytes depend on its version and on how the input is fed to it, and the site's files must be the
same wherever it is built again (``evreg verify``)."""

from __future__ import annotations

import gzip
import io
import os
import shutil
from pathlib import Path
from typing import BinaryIO

LEVEL = 6


def compress(data: bytes) -> bytes:
    """``data`` gzip-compressed."""
    out = io.BytesIO()
    with _writer(out) as packed:
        packed.write(data)
    return out.getvalue()


def compress_file(plain: Path, target: Path) -> None:
    """``plain`` compressed into ``target``, replaced whole (a partial file is never left at ``target``)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with plain.open("rb") as src, tmp.open("wb") as raw, _writer(raw) as out:
            shutil.copyfileobj(src, out, 1 << 20)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _writer(raw: BinaryIO) -> gzip.GzipFile:
    """A gzip stream into ``raw`` whose header is the same on every system: no name, no time, the operating system
    "unknown" (``gzip.compress`` lets zlib write its own system's code)."""
    return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=LEVEL, mtime=0)
