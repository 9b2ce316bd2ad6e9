"""Verify a built site: rebuild it from the commit its receipt names, with the installed ``evreg``, and compare the two
file by file.

The registry is checked out at that commit into a temporary git worktree (``git worktree add --detach``), built
there as ``evreg build`` builds (with the receipt's ``--as-of`` commit and build date), and every file of the two sites
is compared by its SHA-256. Nothing is ignored: a build of one commit with the same code gives the same bytes. A site
built from a work tree with uncommitted changes, or by other code (another ``evreg``, rules, vocabularies or package
versions), is refused: no rebuild here could be compared with it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evreg.app import publish
from evreg.core import gitcmd
from evreg.core.errors import EvregError, Refused, UsageProblem
from evreg.site import receipt as receipts


@dataclass
class Verdict:
    """A site compared with its rebuild: files the same, differing, missing from the site, extra in it."""

    site: Path
    receipt: receipts.Receipt
    same: int = 0
    differ: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # the rebuild has them, the site does not
    extra: list[str] = field(default_factory=list)  # the site has them, the rebuild does not

    @property
    def matches(self) -> bool:
        return not (self.differ or self.missing or self.extra)


def _files(site: Path) -> dict[str, str]:
    """Every file of a site (relative path -> SHA-256); a symlink is named by its target, not followed."""
    out = {}
    for folder, _, names in os.walk(site):
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(site).as_posix()
            if path.is_symlink():
                out[rel] = "link " + os.readlink(path)
                continue
            with path.open("rb") as fh:
                out[rel] = hashlib.file_digest(fh, "sha256").hexdigest()
    return out


def compare(site: Path, rebuilt: Path, receipt: receipts.Receipt) -> Verdict:
    """``site`` against ``rebuilt``, file by file."""
    mine, theirs = _files(site), _files(rebuilt)
    verdict = Verdict(site, receipt)
    for rel in sorted(mine.keys() | theirs.keys()):
        if rel not in mine:
            verdict.missing.append(rel)
        elif rel not in theirs:
            verdict.extra.append(rel)
        elif mine[rel] != theirs[rel]:
            verdict.differ.append(rel)
        else:
            verdict.same += 1
    return verdict


def _read(site: Path) -> receipts.Receipt:
    if not site.is_dir():
        raise UsageProblem(f"{site} is not a folder: give the folder of a built site (evreg build writes build/site)")
    try:
        return receipts.read(site)
    except FileNotFoundError:
        raise Refused(
            f"{site} has no {receipts.RECEIPT_FILE}: it is not a site built by `evreg build` (or it was built before "
            "sites had receipts); there is nothing to verify it against"
        ) from None
    except (OSError, receipts.NotAReceipt) as exc:
        raise Refused(f"{site / receipts.RECEIPT_FILE} is not a receipt this evreg reads ({exc})") from None


def refusals(receipt: receipts.Receipt) -> list[str]:
    """Why a rebuild here could not be compared with the site ``receipt`` describes (none when it can)."""
    if not receipt.commit:
        return ["the site was built outside a git repository: it names no commit to rebuild"]
    if receipt.dirty:
        shown = ", ".join(receipt.changed[:5]) + (", ..." if receipt.changes > 5 else "")
        return [
            f"the site was built from a work tree with {receipt.changes} uncommitted change(s) ({shown}): no commit "
            "holds what it was built from, so it cannot be verified; commit, rebuild and publish again"
        ]
    here = receipts.code()
    out = []
    if here["evreg"] != receipt.evreg:
        out.append(f"evreg: the site was built with {receipt.evreg}, this is {here['evreg']}")
    if here["rules"] != receipt.rules:
        out.append(f"rules: the site was validated by rules {receipt.rules[:12]}, these are {str(here['rules'])[:12]}")
    if here["vocabularies"] != receipt.vocabularies:
        out.append(
            f"vocabularies: the site's are {receipt.vocabularies[:12]}, these are {str(here['vocabularies'])[:12]}"
        )
    packages = here["packages"]
    assert isinstance(packages, dict)
    for name in sorted(receipt.packages.keys() | packages.keys()):
        if receipt.packages.get(name) != packages.get(name):
            built, now = receipt.packages.get(name) or "none", packages.get(name) or "none"
            out.append(f"{name}: the site was built with {built}, this has {now}")
    return out


@contextlib.contextmanager
def checkout(root: Path, commit: str) -> Iterator[Path]:
    """The registry ``root`` at ``commit`` in a temporary git worktree, removed after."""
    top = gitcmd.output(gitcmd.spawn(root, "rev-parse", "--show-toplevel"))
    if top is None:
        raise UsageProblem(f"{root} is not a git repository: run evreg verify inside a clone of the registry")
    if gitcmd.output(gitcmd.spawn(root, "cat-file", "-e", f"{commit}^{{commit}}")) is None:
        raise Refused(
            f"commit {commit[:12]}, which the site was built from, is not in the registry at {root}: fetch it "
            "(git fetch), or run evreg verify in a clone that has it"
        )
    with tempfile.TemporaryDirectory(prefix="evreg-verify-") as tmp:
        tree = Path(tmp) / "registry"
        added = gitcmd.run(root, "worktree", "add", "--detach", str(tree), commit)
        if added is None or added.returncode != 0:
            message = added.stderr.decode("utf-8", "replace").strip() if added is not None else "git cannot be run"
            raise Refused(f"could not check out commit {commit[:12]} into a worktree: {message}")
        try:
            yield tree
        finally:
            gitcmd.run(root, "worktree", "remove", "--force", str(tree))
            shutil.rmtree(tree, ignore_errors=True)
            gitcmd.run(root, "worktree", "prune")


def verify(root: Path, site: Path) -> Verdict:
    """Rebuild the site ``site`` from the commit of the registry ``root`` its receipt names and compare the two.
    Refused (with every reason) when the rebuild could not be compared: a site built from uncommitted changes or
    outside git, or by other code than the installed."""
    receipt = _read(site)
    why = refusals(receipt)
    if why:
        raise Refused("cannot verify " + str(site) + ": " + "; ".join(why) + ". The result could not be compared.")
    with checkout(root, receipt.commit) as tree, receipts.build_date(receipt):
        try:
            rebuilt = publish.build(tree, tree / "build" / "site", receipt.as_of or None)
        except EvregError as exc:
            raise Refused(f"the rebuild of commit {receipt.commit[:12]} failed: {exc}", exc.findings) from None
        return compare(site, rebuilt.out, receipt)
