"""Receipts a reader can verify: every page of a built site names the commit, work tree state, evreg and rule digests
it was built from (``receipt.json``), and ``evreg verify`` rebuilds the site from that commit in a git worktree and
compares it file by file, with a real git repository and real builds."""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

from evreg.app import verification
from evreg.catalog import file as catalogfile
from evreg.core.layout import DEFAULT_DB
from evreg.site import receipt as receipts
from helpers import F, Reg, evreg, init_site

RUN = f"{F}/pkt/measurements/run-1.json"


@pytest.fixture
def site_reg(reg: Reg) -> Reg:
    init_site(reg)  # mkdocs.yml and site/ from `evreg init`, committed
    return reg


def build(reg: Reg, out: Path, *args: str) -> dict[str, object]:
    result = evreg("build", "--out", str(out), *args, cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "receipt.json").read_text("utf-8"))  # type: ignore[no-any-return]


def worktrees(reg: Reg) -> list[str]:
    return [line for line in reg.repo.git.worktree("list", "--porcelain").splitlines() if line.startswith("worktree")]


def test_a_fresh_site_names_its_receipt_on_every_page_and_verifies(site_reg: Reg, tmp_path: Path) -> None:
    head = site_reg.repo.head.commit.hexsha
    out = tmp_path / "site"
    stamp = build(site_reg, out)
    assert stamp["commit"] == head and stamp["changes"] == 0 and stamp["as_of"] == ""
    assert stamp["evreg"] == importlib.metadata.version("evidence-registry")
    assert stamp["rules"] == receipts.rules_digest() and stamp["vocabularies"] == receipts.vocabularies_digest()
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:  # theme pages, record pages in their lean frame, the 404 page
        text = page.read_text("utf-8")
        footer = re.search(r'<footer class="evreg-receipt" data-commit="([0-9a-f]+)" data-dirty="(\w+)"[^>]*>', text)
        assert footer and footer.groups() == (head, "false"), page
        assert f"Built from registry commit <code>{head[:12]}</code> (clean work tree)" in text, page
        assert f'data-rules="{stamp["rules"]}"' in text, page
    depth = "../../"  # a record page links the receipt at the site's root
    assert f'<a href="{depth}receipt.json">receipt</a>' in (out / "packets/pkt/index.html").read_text("utf-8")

    result = evreg("verify", str(out), cwd=site_reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    files = sum(1 for p in out.rglob("*") if p.is_file())
    assert f"matches: all {files} files of {out} are those a rebuild of commit {head[:12]} makes" in result.stdout
    assert len(worktrees(site_reg)) == 1  # the temporary worktree is gone


def test_a_page_edited_by_hand_does_not_verify_and_is_named(site_reg: Reg, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(site_reg, out)
    page = out / "packets/pkt/index.html"
    text = page.read_text("utf-8")
    assert '<td class="evreg-sample" id="m-run-1--decode-tok-s-0">30.21 tok/s</td>' in text  # run-1's first sample
    page.write_text(text.replace(">30.21 tok/s<", ">31.21 tok/s<"), "utf-8")
    (out / "downloads/SHA256SUMS").unlink()
    (out / "extra.html").write_text("<p>added</p>", "utf-8")

    result = evreg("verify", str(out), cwd=site_reg.root)
    assert result.returncode == 1
    assert "does not match a rebuild of commit" in result.stdout
    assert "1 file(s) differ: packets/pkt/index.html\n" in result.stdout
    assert "1 file(s) missing from the site: downloads/SHA256SUMS\n" in result.stdout
    assert "1 file(s) in the site but not in the rebuild: extra.html\n" in result.stdout
    assert len(worktrees(site_reg)) == 1


def test_a_site_of_an_older_commit_verifies_against_that_commit(site_reg: Reg, tmp_path: Path) -> None:
    first = site_reg.repo.head.commit.hexsha
    build(site_reg, tmp_path / "first")
    site_reg.edit(RUN, lambda d: d.update(notes="Rerun after a driver update."))
    second = site_reg.commit("a note on run-1")
    build(site_reg, tmp_path / "second")
    old = build(site_reg, tmp_path / "as-of", "--as-of", first)  # the records of the first, the work tree of the second
    assert old["commit"] == second and old["as_of"] == first

    differ = verification.compare(tmp_path / "first", tmp_path / "second", receipts.read(tmp_path / "first"))
    assert "packets/pkt/index.html" in differ.differ and "receipt.json" in differ.differ  # the two sites differ

    for folder, commit in (("first", first), ("second", second), ("as-of", second)):
        result = evreg("verify", str(tmp_path / folder), cwd=site_reg.root)
        assert result.returncode == 0, (folder, result.stdout + result.stderr)
        assert f"a rebuild of commit {commit[:12]} makes" in result.stdout, folder
    assert len(worktrees(site_reg)) == 1


def test_the_receipt_taken_from_the_catalogs_listing_names_what_its_own_listing_names(site_reg: Reg) -> None:
    """A build lists the work tree once, for its receipt and the catalog's stamp alike: the changes the receipt names
    from that listing are those its own listing names, for every kind of entry git lists (changed, staged, renamed,
    deleted, untracked, ignored where the build reads and elsewhere, caches, the build's own output folder)."""
    root = site_reg.root
    site_reg.edit(RUN, lambda d: d.update(notes="Not committed."))
    (root / "site/draft.md").write_text("# Draft\n", "utf-8")
    (root / ".gitignore").write_text((root / ".gitignore").read_text("utf-8") + "*.tmp\n", "utf-8")
    for name in ("site/notes.tmp", "elsewhere.tmp", "packets/__pycache__/x.pyc", "public/index.html", "public/a/b"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x", "utf-8")
    moved = site_reg.repo.git.ls_files("site").split()[0]
    site_reg.repo.git.mv(moved, "site/moved.md")
    site_reg.repo.git.rm("--cached", "-q", "mkdocs.yml")
    stamp = catalogfile.take(root, root / DEFAULT_DB)
    assert stamp is not None and stamp.listed
    own = receipts.take(root, skip=(root / "public",))
    given = receipts.take(root, skip=(root / "public",), listed=stamp.listed)
    assert given == own
    listed = [".gitignore", RUN, "mkdocs.yml", "mkdocs.yml", "site/draft.md", "site/moved.md", "site/notes.tmp"]
    assert given.changed == sorted(listed)  # mkdocs.yml: deleted from the index, and untracked
    assert "public/index.html" in receipts.take(root).changed  # the output folder, when it is not skipped


def test_a_site_built_from_a_dirty_work_tree_is_refused_with_the_reason(site_reg: Reg, tmp_path: Path) -> None:
    site_reg.edit(RUN, lambda d: d.update(notes="Not committed."))
    (site_reg.root / "site/draft.md").write_text("# Draft\n", "utf-8")
    out = tmp_path / "site"
    stamp = build(site_reg, out)
    assert stamp["changes"] == 2 and stamp["changed"] == [RUN, "site/draft.md"]
    assert "with uncommitted changes: cannot be verified" in (out / "index.html").read_text("utf-8")
    assert 'data-dirty="true"' in (out / "packets/pkt/index.html").read_text("utf-8")

    result = evreg("verify", str(out), cwd=site_reg.root)
    assert result.returncode == 1
    assert f"the site was built from a work tree with 2 uncommitted change(s) ({RUN}, site/draft.md)" in result.stderr
    assert "cannot be verified" in result.stderr
    assert len(worktrees(site_reg)) == 1 and "does not match" not in result.stdout


def test_a_site_built_by_other_code_is_refused_naming_what_differs(site_reg: Reg, tmp_path: Path) -> None:
    out = tmp_path / "site"
    stamp = build(site_reg, out)
    stamp |= {"evreg": "0.0.9", "vocabularies": "0" * 64}
    stamp["packages"]["mkdocs"] = "1.0.0"  # type: ignore[index]
    (out / "receipt.json").write_text(json.dumps(stamp), "utf-8")

    result = evreg("verify", str(out), cwd=site_reg.root)
    assert result.returncode == 1
    assert f"evreg: the site was built with 0.0.9, this is {importlib.metadata.version('evidence-registry')}" in (
        result.stderr
    )
    assert "vocabularies: the site's are 000000000000" in result.stderr
    assert f"mkdocs: the site was built with 1.0.0, this has {importlib.metadata.version('mkdocs')}" in result.stderr
    assert "rules:" not in result.stderr  # the rules are the same: only what differs is named
    assert "The result could not be compared." in result.stderr


def test_a_folder_without_a_receipt_is_refused(site_reg: Reg, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(site_reg, out)
    (out / "receipt.json").unlink()
    result = evreg("verify", str(out), cwd=site_reg.root)
    assert result.returncode == 1
    assert "has no receipt.json: it is not a site built by `evreg build`" in result.stderr
    (out / "receipt.json").write_text('{"format": 1, "commit": 5}', "utf-8")
    result = evreg("verify", str(out), cwd=site_reg.root)
    assert result.returncode == 1
    expected = "receipt.json is not a receipt this evreg reads (its fields as_of, changed, changes, commit,"
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_the_build_date_is_the_commits_not_todays(site_reg: Reg, tmp_path: Path) -> None:
    """MkDocs writes its build date into the sitemap (and its gzip header); the build takes the commit's, so a site
    rebuilt another day from the same commit has the same bytes."""
    with (site_reg.root / "mkdocs.yml").open("a", encoding="utf-8") as fh:
        fh.write("site_url: https://registry.example.org/\n")
    site_reg.repo.git.add("-A")
    date = "2021-03-04T05:06:07+00:00"
    site_reg.repo.git.commit("-m", "site address", env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    out = tmp_path / "site"
    stamp = build(site_reg, out)
    assert stamp["source_date_epoch"] == 1614834367
    sitemap = (out / "sitemap.xml").read_text("utf-8")
    assert set(re.findall(r"<lastmod>([^<]*)</lastmod>", sitemap)) == {"2021-03-04"}
    assert evreg("verify", str(out), cwd=site_reg.root).returncode == 0
