"""Shared fixtures: the fixture registry, empty repositories, copies of the real records, built sites. The plain
helpers they use are in helpers.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import git
import pytest

from helpers import (
    REPO,
    WIDE_MATRICES,
    WIDE_RUNS,
    WIDE_VIEWS,
    F,
    Reg,
    build_compare_registry,
    coverage,
    evreg,
    own_evidence,
    view,
)


@pytest.fixture
def reg(tmp_path: Path) -> Reg:
    """The fixture registry, committed."""
    r = Reg(tmp_path / "reg")
    r.commit("initial registry")
    return r


@pytest.fixture
def empty_repo(tmp_path: Path) -> Path:
    """A new git repository with schema/ and an empty packets/ folder."""
    root = tmp_path / "lab"
    (root / "packets").mkdir(parents=True)
    shutil.copytree(REPO / "schema", root / "schema")
    git.Repo.init(root)
    return root


@pytest.fixture(scope="session")
def repo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's site, built once per test session with ``evreg build``."""
    out = tmp_path_factory.mktemp("repo-site") / "site"
    result = evreg("build", "--out", str(out), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


# -- comparison pages --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wide_compare_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry wider than its pages hold: comparison rows, charts and coverage matrices of one family."""
    reg = build_compare_registry(tmp_path_factory.mktemp("wide") / "reg")
    base = reg.read(f"{F}/pkt/measurements/run-1.json")
    values = [10.0 + n / 10 for n in range(WIDE_RUNS)]
    shared = own_evidence(reg, "run-wide", {"metrics": {"decode_tok_s": values}})  # one file holding every run's
    for n in range(WIDE_RUNS):
        mid = f"run-w{n:02d}"
        reg.put(
            f"{F}/pkt/measurements/{mid}.json", {**base, "id": mid, "metrics": {"decode_tok_s": [values[n]]}, **shared}
        )
    for n in range(WIDE_VIEWS):
        series = [{"label": f"W{n}", "measurement_ids": [f"run-w{n:02d}"], "x_from": "config.tp"}]
        reg.put(
            f"{F}/views/view-{n:02d}.json", {**view(), "id": f"view-{n:02d}", "title": f"View {n}", "series": series}
        )
    for n in range(WIDE_MATRICES):
        reg.put(f"{F}/coverage/cov-{n:02d}.json", {**coverage(), "id": f"cov-{n:02d}", "label": f"Matrix {n}"})
    reg.commit("a wide comparison")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    return reg.root / "build/site"


@pytest.fixture(scope="session")
def compare_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reg = build_compare_registry(tmp_path_factory.mktemp("compare") / "reg")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    return reg.root / "build/site"


# -- copies of the real records ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's records, site pages and configuration, committed once per test module."""
    root = tmp_path_factory.mktemp("real") / "registry"
    for part in ("packets", "schema", "site"):
        shutil.copytree(REPO / part, root / part)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Reviewer")
        cw.set_value("user", "email", "reviewer@example.org")
    repo.git.add("-A")
    repo.index.commit("the real records")
    return root


@pytest.fixture
def real(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the real records for one test, committed as HEAD (history rules compare against it)."""
    root = tmp_path / "registry"
    shutil.copytree(pristine, root)
    return root
