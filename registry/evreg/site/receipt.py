"""The receipt of a built site: what it was built from, so that a reader can rebuild it and compare (``evreg verify``).

One receipt per build, taken once (``take``): the registry's commit and whether its work tree had uncommitted changes,
the commit the records were read at (``--as-of``), the installed ``evreg``, a digest of the code that validates and
renders (``evreg`` and the installed rule packs, the code the validation cache is versioned by, ``check.results``)
and one of the vocabularies, the versions of the packages whose output is part of the site, and the build date MkDocs
writes (``SOURCE_DATE_EPOCH``). It is written as ``receipt.json`` at the site's root and shown, from the same object,
in a footer on every page. The digests name files by their path inside their package, not where it is installed: two
installations of the same code give the same digests.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import importlib.metadata
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evreg.core import codebase, gitcmd, jsonio

RECEIPT_FILE = "receipt.json"
"""The receipt's file at the root of a built site."""

FORMAT = 1
"""The receipt's own format (a reader's ``evreg verify`` refuses one it does not know)."""

PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "jinja2", "duckdb", "pydantic")
"""Packages whose version changes bytes of the site (the theme's pages, Markdown's HTML, the Parquet downloads) or
what validation concludes."""

READ_FOLDERS = ("packets/", "site/", "schema/")
"""Where a build reads the work tree (beside ``mkdocs.yml``): an ignored file there is read, so it makes the tree
dirty as an untracked one does."""

VOCAB = codebase.EVREG / "vocab"

SHOWN_CHANGES = 20
"""Uncommitted paths the receipt names (it counts them all)."""


@dataclass(frozen=True)
class Receipt:
    """What a site was built from (see the module's text)."""

    commit: str  # the registry's HEAD, "" outside git
    changes: int  # paths of the work tree that differ from the commit (changed, untracked, ignored where read)
    changed: list[str]  # the first SHOWN_CHANGES of them
    as_of: str  # the commit the records were read at (``evreg build --as-of``), "" for the work tree
    evreg: str
    rules: str  # digest of the code that validates and renders: evreg and the installed rule packs
    vocabularies: str  # digest of evreg's vocabularies (vocab/*.json)
    packages: dict[str, str] = field(default_factory=dict)
    source_date_epoch: int | None = None  # the build date MkDocs wrote (sitemap), seconds since 1970
    format: int = FORMAT

    @property
    def dirty(self) -> bool:
        return self.changes > 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    def short(self) -> str:
        """One line: the commit, the work tree, the version and the digests."""
        where = f"commit {self.commit[:12]}" if self.commit else "no commit (not a git repository)"
        tree = f"{self.changes} uncommitted change(s)" if self.dirty else "clean work tree"
        as_of = f", records as of {self.as_of[:12]}" if self.as_of and self.as_of != self.commit else ""
        return (
            f"{where} ({tree}{as_of}), evreg {self.evreg}, rules {self.rules[:12]}, "
            f"vocabularies {self.vocabularies[:12]}"
        )


def _digest(files: list[tuple[str, Path]]) -> str:
    h = hashlib.sha256()
    for name, path in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    return h.hexdigest()


def rules_digest() -> str:
    """The code the validation cache is versioned by (``check.results.code_version``: every module and data file of
    ``evreg`` and the installed rule packs, named by its path inside its package, and pydantic's version): one digest
    for "the code that validated", wherever it is installed."""
    from evreg.check import rules as engine
    from evreg.check.results import code_version

    return code_version(engine.discover())


def vocabularies_digest() -> str:
    """evreg's vocabularies: every file under ``evreg/vocab/``."""
    return _digest([(p.relative_to(VOCAB).as_posix(), p) for p in VOCAB.rglob("*") if p.is_file()])


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


def code() -> dict[str, object]:
    """The installed code's part of a receipt."""
    return {
        "evreg": _version("evidence-registry"),
        "rules": rules_digest(),
        "vocabularies": vocabularies_digest(),
        "packages": {name: _version(name) for name in PACKAGES},
    }


def _changes(root: Path, skip: list[Path], listed: bytes | None = None) -> list[str]:
    """Paths of the work tree that differ from its commit: changed tracked files, untracked files, and ignored ones
    where the build reads (``READ_FOLDERS``, ``mkdocs.yml``); ``build/`` and the ``skip`` folders inside the work
    tree left out. ``listed``: git's listing of the work tree outside ``build/`` (``git status --porcelain=v1 -z
    --untracked-files=all --ignored=matching``) when the caller has just taken it."""
    spec = ["--", ".", ":(exclude)build"]
    skipped = []
    for folder in skip:
        with contextlib.suppress(ValueError):
            rel = folder.resolve().relative_to(root.resolve()).as_posix()
            if rel != ".":
                spec.append(f":(exclude,literal){rel}")
                skipped.append(rel)
    status = listed
    if status is None:
        status = gitcmd.output(
            gitcmd.spawn(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", *spec)
        )
    if status is None:
        return ["(git could not list the work tree)"]
    fields = status.split(b"\0")
    out, i = [], 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if not entry:
            continue
        if entry[:1] in (b"R", b"C"):
            i += 1  # the rename's source
        path = entry[3:].decode("utf-8", "surrogateescape")
        if entry[:2] == b"!!" and not (path.startswith(READ_FOLDERS) or path == "mkdocs.yml"):
            continue
        if "__pycache__" in path.split("/") or any(path == s or path.startswith(f"{s}/") for s in skipped):
            continue
        out.append(path)
    return sorted(out)


def _commit_time(root: Path, commit: str) -> int | None:
    out = gitcmd.output(gitcmd.spawn(root, "show", "-s", "--format=%ct", commit)) if commit else None
    try:
        return int(out.strip()) if out else None
    except ValueError:
        return None


def take(root: Path, as_of: str = "", skip: tuple[Path, ...] = (), listed: bytes | None = None) -> Receipt:
    """The receipt of a build of ``root`` now (records at ``as_of`` when given), ``skip``: folders inside the work tree
    the build writes (its output); ``listed``: git's listing of the work tree, if just taken (``_changes``). The build
    date is ``SOURCE_DATE_EPOCH`` when set, else the commit's time: the same commit gives the same site whatever the
    day."""
    head = gitcmd.output(gitcmd.spawn(root, "rev-parse", "--verify", "--quiet", "HEAD"))
    commit = head.decode().strip() if head else ""
    changes = _changes(root, list(skip), listed) if commit else []
    given = os.environ.get("SOURCE_DATE_EPOCH", "")
    epoch = int(given) if given.isdigit() else _commit_time(root, commit)
    return Receipt(
        commit=commit,
        changes=len(changes),
        changed=changes[:SHOWN_CHANGES],
        as_of=as_of,
        source_date_epoch=epoch,
        **code(),  # type: ignore[arg-type]
    )


@contextlib.contextmanager
def build_date(receipt: Receipt | None) -> Iterator[None]:
    """MkDocs' build date (the sitemap's ``lastmod``, its gzip time) set to the receipt's for the duration."""
    if receipt is None or receipt.source_date_epoch is None:
        yield
        return
    before = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(receipt.source_date_epoch)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = before


class NotAReceipt(ValueError):
    """A ``receipt.json`` that is not one this ``evreg`` reads."""


def read(site: Path) -> Receipt:
    """The receipt of the built site ``site``; FileNotFoundError without one, NotAReceipt when it cannot be read."""
    text = (site / RECEIPT_FILE).read_bytes()
    try:
        data = jsonio.loads(text)
    except ValueError as exc:
        raise NotAReceipt(str(exc)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise NotAReceipt(f"its format is {data.get('format') if isinstance(data, dict) else None!r}, not {FORMAT}")
    types = {name: kind for name, kind in _FIELDS.items() if not isinstance(data.get(name), kind)}
    if types or set(data) != set(_FIELDS):
        wrong = sorted(types.keys() | (set(data) ^ set(_FIELDS)))
        raise NotAReceipt(f"its fields {', '.join(wrong)} are missing, unknown or not of their kind")
    if not all(isinstance(v, str) for v in [*data["changed"], *data["packages"], *data["packages"].values()]):
        raise NotAReceipt("its changed paths and package versions are not all text")
    return Receipt(**data)


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "commit": str,
    "changes": int,
    "changed": list,
    "as_of": str,
    "evreg": str,
    "rules": str,
    "vocabularies": str,
    "packages": dict,
    "source_date_epoch": (int, type(None)),
    "format": int,
}


def footer(receipt: Receipt, base: str | None) -> str:
    """The footer every page shows: the receipt in words, its values as ``data-`` attributes, and (``base``: the
    page's way to the site's root) a link to ``receipt.json``."""
    r = receipt
    attrs = {
        "data-commit": r.commit,
        "data-dirty": "true" if r.dirty else "false",
        "data-as-of": r.as_of,
        "data-evreg": r.evreg,
        "data-rules": r.rules,
        "data-vocabularies": r.vocabularies,
    }
    shown = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    where = f"registry commit <code>{html.escape(r.commit[:12])}</code>" if r.commit else "no registry commit"
    tree = (
        '<strong class="evreg-receipt-dirty">with uncommitted changes: cannot be verified</strong>'
        if r.dirty
        else "clean work tree"
    )
    as_of = f", records as of <code>{html.escape(r.as_of[:12])}</code>" if r.as_of and r.as_of != r.commit else ""
    link = f' (<a href="{html.escape(base)}{RECEIPT_FILE}">receipt</a>)' if base is not None else ""
    return (
        f'<footer class="evreg-receipt" {shown}>Built from {where} ({tree}{as_of}) with evreg '
        f"<code>{html.escape(r.evreg)}</code>, rules <code>{r.rules[:12]}</code>, vocabularies "
        f"<code>{r.vocabularies[:12]}</code>{link}. Check it: <code>evreg verify</code>.</footer>\n"
    )


def with_footer(page: str, receipt: Receipt | None, base: str | None) -> str:
    """``page`` with the receipt's footer just before its ``</body>`` (at its end without one)."""
    if receipt is None:
        return page
    head, sep, tail = page.rpartition("</body>")
    return head + footer(receipt, base) + sep + tail if sep else page + footer(receipt, base)
