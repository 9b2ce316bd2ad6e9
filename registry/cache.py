"""A content-addressed cache of what reading a record file found.

Entries are keyed by (path, git blob id): a file's findings depend only on
its path and bytes, and a blob id names exactly one content, so an entry can
never stand for other bytes. The whole cache is dropped when the code that
reads records (models, parser, layout, vocabularies) changes. It is stored as
JSON, never pickled, and a corrupt cache file is simply ignored.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pydantic

from registry.findings import Finding

if TYPE_CHECKING:
    from registry.store import Document

CACHE_FILE = "build/cache/documents.json"
_READER_MODULES = ("models.py", "jsonio.py", "layout.py", "store.py", "cache.py", "findings.py")


def code_version() -> str:
    """Changes whenever the code or data that judges a single file changes."""
    h = hashlib.sha256(pydantic.VERSION.encode())
    pkg = resources.files("registry")
    for name in _READER_MODULES:
        h.update(pkg.joinpath(name).read_bytes())
    for vocab in sorted(p.name for p in pkg.joinpath("vocab").iterdir() if p.name.endswith(".json")):
        h.update(pkg.joinpath("vocab", vocab).read_bytes())
    return h.hexdigest()


class ParseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.version = code_version()
        self.entries: dict[str, dict[str, Any]] = {}
        self.used: set[str] = set()
        self.dirty = False
        self.hits = self.misses = 0
        try:
            stored = orjson.loads(path.read_bytes())
            if isinstance(stored, dict) and stored.get("version") == self.version:
                self.entries = stored["entries"]
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            self.entries = {}

    @staticmethod
    def key(doc: Document) -> str:
        return f"{doc.blob} {doc.path}"

    def fill(self, doc: Document) -> bool:
        entry = self.entries.get(self.key(doc))
        if entry is None:
            self.misses += 1
            return False
        try:
            doc.data = entry["data"]
            doc.valid = bool(entry["valid"])
            doc.findings = [Finding(**f) for f in entry["findings"]]
        except (KeyError, TypeError, pydantic.ValidationError):
            self.misses += 1
            return False
        self.used.add(self.key(doc))
        self.hits += 1
        return True

    def store(self, doc: Document) -> None:
        key = self.key(doc)
        self.entries[key] = {
            "data": doc.data,
            "valid": doc.valid,
            "findings": [f.model_dump(mode="json") for f in doc.findings],
        }
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        """Keep the entries this run used (others belong to content that is gone); write atomically."""
        if not self.dirty and len(self.used) == len(self.entries):
            return
        from registry.jsonio import write_atomic

        kept = {k: v for k, v in self.entries.items() if k in self.used}
        try:
            write_atomic(self.path, orjson.dumps({"version": self.version, "entries": kept}))
        except OSError:
            return  # a read-only checkout still validates; it just is not cached
        self.entries, self.dirty = kept, False
