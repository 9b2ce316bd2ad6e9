"""Sources: the files under ``packets/`` of the working tree (``WorkTree``) or of a commit,
read from git's tree objects without a checkout (``GitTree``), and evidence states."""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from evreg.core import gitcmd, jsonio
from evreg.core.containment import outside_repository
from evreg.core.errors import Refused
from evreg.core.layout import PACKETS

if TYPE_CHECKING:
    import git


class EvidenceState(Enum):
    FILE = "file"
    MISSING = "missing"
    NOT_FILE = "not-file"
    ESCAPE = "escape"


@dataclass(frozen=True)
class Entry:
    """One file under ``packets/`` as a source lists it."""

    path: str
    size: int | None  # None: not known without a system call; checked when read
    regular: bool  # False for symlinks, devices, fifos: never read as records
    blob: str | None = None  # git blob id when the source knows it without reading


class Source(Protocol):
    label: str

    def entries(self, under: str = PACKETS, deep: bool = True) -> Iterator[Entry]: ...
    def read(self, path: str) -> bytes: ...
    def read_all(self, path: str) -> bytes: ...
    def prefetch(self, paths: Iterable[str]) -> None: ...
    def evidence(self, path: str) -> EvidenceState: ...
    def names(self, folder: str) -> list[str]: ...


def blob_id(data: bytes) -> str:
    """Git's content address of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class WorkTree:
    """Files as they are on disk below ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self._root_str = str(root)
        self.label = "working tree"
        self._evidence: dict[str, EvidenceState] = {}

    def entries(self, under: str = PACKETS, deep: bool = True) -> Iterator[Entry]:
        cut = len(self._root_str) + 1
        stack = [os.path.join(self._root_str, under)]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    items = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            subfolders = []
            for item in items:  # d_type answers these without a system call per file
                if item.is_dir(follow_symlinks=False):
                    if deep:
                        subfolders.append(item.path)
                else:
                    yield Entry(item.path[cut:].replace(os.sep, "/"), None, item.is_file(follow_symlinks=False))
            stack.extend(reversed(subfolders))

    def read(self, path: str) -> bytes:
        """The file's bytes; of a file over the record limit, only the first limit + 1
        (it is refused, never read whole). Plain system calls: half the cost of a
        buffered file object, which matters at one call per record."""
        limit = jsonio.size_limit(path) + 1
        fd = os.open(os.path.join(self._root_str, path), os.O_RDONLY)
        try:
            chunks, total = [], 0
            while total < limit and (chunk := os.read(fd, 1 << 16)):
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return data[:limit] if total > limit else data

    def read_all(self, path: str) -> bytes:
        with open(os.path.join(self._root_str, path), "rb") as fh:
            return fh.read()

    def prefetch(self, paths: Iterable[str]) -> None:
        """Files are read one by one: there is no round trip to save."""

    def containing(self, needles: Iterable[str], under: str = PACKETS) -> set[str] | None:
        """The paths of files git tracks under ``under`` whose bytes in the working tree hold any of ``needles`` (one
        ``git grep`` of the working tree: files read as they are, where a commit's are inflated one by one), or None
        when git cannot say."""
        return grep(self.root, [], needles, None, [f"{under}/"])

    def names(self, folder: str) -> list[str]:
        try:
            return sorted(os.listdir(os.path.join(self._root_str, folder)))
        except OSError:
            return []

    def evidence(self, path: str) -> EvidenceState:
        if path not in self._evidence:
            self._evidence[path] = self._evidence_state(path)
        return self._evidence[path]

    def _evidence_state(self, path: str) -> EvidenceState:
        if outside_repository(path):
            return EvidenceState.ESCAPE
        full = os.path.realpath(self.root / path)
        if os.path.commonpath([full, self.real_root]) != str(self.real_root):
            return EvidenceState.ESCAPE
        if outside_repository(os.path.relpath(full, self.real_root)):  # a symlink into .git/
            return EvidenceState.ESCAPE
        if not os.path.lexists(self.root / path) or not os.path.exists(full):
            return EvidenceState.MISSING
        return EvidenceState.FILE if os.path.isfile(full) else EvidenceState.NOT_FILE


class GitTree:
    """Files as committed at one revision, read from git objects."""

    SYMLINK_MODE = 0o120000

    def __init__(self, repo: git.Repo, rev: str) -> None:
        self.repo = repo
        self.commit = repo.commit(rev)
        self.label = self.commit.hexsha
        self._blobs: dict[str, str] = {}  # path -> blob id, for what entries() listed
        self._fetched: dict[str, bytes] = {}
        self._listings: dict[str, dict[str, git.objects.base.Object] | None] = {}  # folder -> its entries by name

    def _listing(self, folder: str) -> dict[str, git.objects.base.Object] | None:
        """The entries of ``folder`` ("" for the top) by name, or None when it is not a folder of the commit; each
        folder is read once (GitPython finds a name in a tree by walking its entries, so a lookup per file costs as
        many steps as the folder has files)."""
        import git

        if folder in self._listings:
            return self._listings[folder]
        tree: object = self.commit.tree
        if folder:
            parent, _, name = folder.rpartition("/")
            above = self._listing(parent) if name else None
            tree = above.get(name) if above else None
        listing: dict[str, git.objects.base.Object] | None = None
        if isinstance(tree, git.Tree):
            listing = {}
            for item in tree:  # by the entry's name as the tree holds it (a submodule's ``name`` is not that)
                listing.setdefault(posixpath.basename(item.path), item)  # the first of a name, as ``Tree / path``
        self._listings[folder] = listing
        return listing

    def _object(self, path: str) -> git.objects.base.Object | None:
        """The object at ``path`` (names joined by "/", as ``Tree / path`` takes them), or None."""
        folder, _, name = path.rpartition("/")
        listing = self._listing(folder) if all(path.split("/")) else None
        return listing.get(name) if listing else None

    def entries(self, under: str = PACKETS, deep: bool = True) -> Iterator[Entry]:
        """One ``git ls-tree`` for the whole listing (walking tree objects from Python costs
        about 0.1 ms a file)."""
        import git

        args = ["-z", "-l", *(["-r"] if deep else []), self.commit.hexsha, "--", f"{under}/"]
        try:
            out = self.repo.git.ls_tree(*args, stdout_as_string=False)
        except git.GitCommandError:
            return
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, raw_path = record.split(b"\t", 1)
            mode, kind, sha, size = meta.split()
            if kind != b"blob":
                continue  # sub-trees (without -r) and submodules hold no record
            path = os.fsdecode(raw_path)
            self._blobs[path] = sha.decode()
            yield Entry(path, int(size), int(mode, 8) != self.SYMLINK_MODE, sha.decode())

    def unit_digests(self) -> dict[str, str]:
        """Family folder -> its git tree id (the top-level files are hashed by the registry)."""
        import git

        try:
            tree = self.commit.tree / PACKETS
        except KeyError:
            return {}
        if not isinstance(tree, git.Tree):  # packets/ committed as a link or a file: no unit has a tree
            return {}
        return {item.name: f"tree:{item.hexsha}" for item in tree.trees}

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read the blobs of ``paths`` with one ``git cat-file --batch`` (one object at a
        time costs a round trip each); ``read`` then hands each out once."""
        wanted = [(p, self._blobs[p]) for p in paths if p in self._blobs and p not in self._fetched]
        if len(wanted) < 2:
            return
        done = gitcmd.run(
            None,
            f"--git-dir={self.repo.git_dir}",
            "cat-file",
            "--batch",
            stdin="".join(f"{sha}\n" for _, sha in wanted).encode(),
        )
        out = done.stdout if done is not None else b""
        pos = 0
        for path, _sha in wanted:
            end = out.find(b"\n", pos)
            if end < 0:
                break
            header = out[pos:end].split()
            pos = end + 1
            if len(header) != 3:  # "<sha> missing": read() will say so
                continue
            size = int(header[2])
            self._fetched[path] = out[pos : pos + size]
            pos += size + 1

    def read(self, path: str) -> bytes:
        fetched = self._fetched.pop(path, None)
        if fetched is not None:
            return fetched
        sha = self._blobs.get(path)
        if sha is None:
            obj = self._object(path)
            if obj is None:  # not in the commit, or behind a link to a folder: not a file it holds there
                raise FileNotFoundError(path)
            return bytes(obj.data_stream.read())
        return self.repo.odb.stream(bytes.fromhex(sha)).read()

    read_all = read

    def containing(self, needles: Iterable[str], under: str = PACKETS, paths: Iterable[str] = ()) -> set[str] | None:
        """The paths of files under ``under`` (or of those of ``paths``) whose bytes in the commit hold any of
        ``needles`` (one ``git grep`` of the commit; no file read from Python), or None when git cannot say."""
        found = grep(None, [f"--git-dir={self.repo.git_dir}"], needles, self.commit.hexsha, [*paths] or [f"{under}/"])
        return None if found is None else {p.removeprefix(f"{self.commit.hexsha}:") for p in found}

    def names(self, folder: str) -> list[str]:
        listing = self._listing(folder) if folder and all(folder.split("/")) else None
        return sorted(listing) if listing else []

    def evidence(self, path: str) -> EvidenceState:
        import git

        if outside_repository(path):
            return EvidenceState.ESCAPE
        parts = path.split("/")
        resolved: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not resolved:
                    return EvidenceState.ESCAPE
                resolved.pop()
                continue
            resolved.append(part)
            obj = self._object("/".join(resolved))
            if obj is None:
                return EvidenceState.MISSING
            if isinstance(obj, git.Blob) and obj.mode == self.SYMLINK_MODE:
                hops += 1
                target = obj.data_stream.read().decode("utf-8", "replace")
                if hops > 40 or target.startswith("/"):
                    return EvidenceState.ESCAPE
                resolved.pop()
                parts = posixpath.normpath(target).split("/") + parts
            elif not parts:
                if outside_repository("/".join(resolved)):  # a symlink into a VCS folder
                    return EvidenceState.ESCAPE
                return EvidenceState.FILE if isinstance(obj, git.Blob) else EvidenceState.NOT_FILE
        return EvidenceState.NOT_FILE


def grep(
    cwd: Path | None, options: list[str], needles: Iterable[str], rev: str | None, pathspecs: list[str]
) -> set[str] | None:
    """The paths ``git grep`` finds holding any of ``needles`` (fixed strings, on its standard input) in commit
    ``rev`` (as ``REV:PATH``) or, without one, in the working tree's tracked files; None when git cannot say."""
    patterns = "\n".join(sorted({n for n in needles if n})).encode()
    if not patterns:
        return set()
    args = [
        "-c",
        "color.ui=never",
        "--literal-pathspecs",
        "grep",
        "-l",
        "-z",
        "-a",
        "-F",
        "--no-color",
        "--no-textconv",
        "-f",
        "-",
    ]
    done = gitcmd.run(cwd, *options, *args, *([rev] if rev else []), "--", *pathspecs, stdin=patterns)
    if done is None or done.returncode not in (0, 1):
        return None
    names = [os.fsdecode(p) for p in done.stdout.split(b"\0") if p]
    prefix = f"{rev}:" if rev else ""
    if not all(p.startswith(prefix) and p.removeprefix(prefix).startswith(tuple(pathspecs)) for p in names):
        return None  # not the listing asked for: say nothing rather than less
    return set(names)


def open_source(root: Path, rev: str | None = None) -> Source:
    if rev is None:
        return WorkTree(root)
    import git

    repo = git.Repo(root, search_parent_directories=False)
    return GitTree(repo, rev)


MAX_FILES = 400_000
"""Files under packets/ a registry may hold (about six GiB of memory to validate); beyond it nothing is
loaded and one ``too-many-files`` finding says so. ``EVREG_MAX_FILES`` overrides it."""


class TooManyFiles(Refused, ValueError):
    """More files under ``packets/`` than a registry may hold (``EVREG_MAX_FILES``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"more than {limit} files under {PACKETS}/")


def file_limit() -> int:
    return int(os.environ.get("EVREG_MAX_FILES", MAX_FILES))


def list_entries(source: Source, under: str = PACKETS, deep: bool = True) -> list[Entry]:
    """Every file under ``under`` (``deep``: in sub-folders too); refuses (``TooManyFiles``)
    beyond the file limit."""
    limit = file_limit()
    entries = []
    for entry in source.entries(under, deep):
        entries.append(entry)
        if len(entries) > limit:
            raise TooManyFiles(limit)
    return entries
