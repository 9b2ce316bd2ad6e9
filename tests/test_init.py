"""`evreg init` makes a new registry: import then build work in an empty git repository, nothing existing is
changed, and this repository's own configuration is the template plus its own pages."""

from __future__ import annotations

from pathlib import Path

import git
import yaml

from conftest import REPO, evreg
from evreg.core.layout import PAGES_DIR

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


def test_this_registrys_mkdocs_yml_is_the_template_with_its_own_pages() -> None:
    """One configuration: this repository's differs from what `evreg init` writes only in the nav entries of its
    own hand-written pages (under site/)."""
    ours = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    template = yaml.safe_load((PAGES_DIR / "mkdocs.yml").read_text())

    def own(entry: object) -> bool:
        page = next(iter(entry.values())) if isinstance(entry, dict) else entry
        return isinstance(page, str) and (page == "about.md" or (REPO / "site" / page).is_file())

    assert {k: v for k, v in ours.items() if k != "nav"} == {k: v for k, v in template.items() if k != "nav"}
    assert [e for e in ours["nav"] if not own(e)] == [e for e in template["nav"] if not own(e)]
    assert not (REPO / "site/methodology/index.md").exists()  # the product's page is the package's
