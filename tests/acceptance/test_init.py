"""`evreg init` makes a new registry: import then build work in an empty git repository, nothing existing is
changed (this repository's own layout included), nothing is written outside its directory, and a refusal comes
before anything is written."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import git

from evreg.core.layout import PAGES_DIR
from helpers import REPO, evreg

PHI = REPO / "tests/data/lab/families/phi-4.json"


def test_init_then_import_then_build_in_an_empty_git_repository(tmp_path: Path) -> None:
    root = tmp_path / "newlab"
    root.mkdir()
    git.Repo.init(root).close()
    made = evreg("init", cwd=root)
    assert made.returncode == 0 and "wrote mkdocs.yml" in made.stdout and "wrote .gitignore" in made.stdout
    assert (root / ".gitignore").read_text().splitlines() == ["build/"]
    imported = evreg("import", "neural-download", str(PHI), cwd=root)
    assert imported.returncode == 0, imported.stdout[-1500:] + imported.stderr
    built = evreg("build", cwd=root)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr
    site = root / "build/site"
    for page in ("index.html", "families/phi-4/index.html", "methodology/index.html", "about/index.html"):
        assert (site / page).is_file(), page
    assert (site / "assets/evreg.css").read_bytes() == (PAGES_DIR / "evreg.css").read_bytes()
    assert "What counts as an orphan number" in (site / "methodology/index.html").read_text()


def test_init_changes_nothing_that_exists_and_makes_a_repository_when_there_is_none(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    root.mkdir()
    (root / "mkdocs.yml").write_text("site_name: Ours\ndocs_dir: site\n")
    (root / ".gitignore").write_text("*.pyc\nbuild/\n")
    result = evreg("init", str(root), cwd=tmp_path)
    assert result.returncode == 0 and "kept 1 existing files: mkdocs.yml" in result.stdout
    assert (root / "mkdocs.yml").read_text() == "site_name: Ours\ndocs_dir: site\n"
    assert (root / ".gitignore").read_text() == "*.pyc\nbuild/\n"
    assert (root / ".git").is_dir() and (root / "packets").is_dir()
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    again = evreg("init", str(root), cwd=tmp_path)
    assert "wrote" not in again.stdout
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts} == before


def _existing_registry(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "packets").mkdir()
    shutil.copytree(REPO / "schema", root / "schema")
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO / "site", root / "site")
    (root / ".gitignore").write_text("build/\n", "utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_init_on_an_existing_registry_changes_nothing(tmp_path: Path) -> None:
    """On this repository's own layout (mkdocs.yml, site/, schema/, packets/) init writes nothing, not even a
    placeholder site/about.md for the next build to publish."""
    root = _existing_registry(tmp_path / "reg")
    before = _tree(root)
    result = evreg("init", str(root))
    assert result.returncode == 0
    assert _tree(root) == before, sorted(set(_tree(root)) - set(before))


def test_init_writes_nothing_outside_its_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "reg"
    root.mkdir()
    os.symlink(outside, root / "site")
    evreg("init", str(root))
    assert list(outside.iterdir()) == []


def test_init_refuses_before_writing(tmp_path: Path) -> None:
    """With packets a file, init refuses before it writes mkdocs.yml, schema/ or site/, and not with an internal
    error."""
    root = tmp_path / "reg"
    root.mkdir()
    (root / "packets").write_text("x", "utf-8")
    result = evreg("init", str(root))
    assert "internal error" not in result.stdout + result.stderr
    assert sorted(p.name for p in root.iterdir()) == ["packets"]
