"""A hostile review of the claim-integrity and lab-catalogue work: each test was a real defect found by an attack
(the smallest input that should be refused, or should build, and was not); kept as regression tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, F, Reg, evreg, only
from evreg.claims import figures
from evreg.records.models import claims_in

RUN = f"{F}/pkt/measurements/run-1.json"
PKT = f"{F}/pkt/packet.json"
LAB = REPO / "tests" / "data" / "lab" / "families"


def _init_site(reg: Reg) -> None:
    """The fixture registry plus what `evreg build` needs (mkdocs.yml and site/ from `evreg init`)."""
    assert evreg("init", str(reg.root)).returncode == 0
    reg.commit("init site")


def _validate_clean_implies_build(reg: Reg, tmp_path: Path) -> tuple[list[Any], subprocess.CompletedProcess[str]]:
    _init_site(reg)
    errors = [f for f in reg.findings() if f.severity == "error"]
    built = evreg("build", "--out", str(tmp_path / "out"), cwd=reg.root)
    return errors, built


# -- claim 4: every string readers see is prose -------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        ("config", "metric"),  # a token key (View.metric) inside config: rendered as prose, marked "baselined"
        ("config", "commit"),
        ("config", "id"),
        ("lab_field", "state"),  # an unknown object holding a token-named key: rendered verbatim as code
        (None, "date"),  # a token key (Retired.date) as an unknown top-level field of a run
        (None, "nested_list"),  # nested list of strings: [["..."]]
    ],
)
def test_figure_under_a_token_named_key_in_free_text_is_an_orphan(reg: Reg, where: tuple[str | None, str]) -> None:
    parent, key = where
    figure = "decode 250 tok/s"

    def plant(d: dict[str, Any]) -> None:
        if key == "nested_list":
            d["notes"] = [[figure]]
        elif parent is None:
            d[key] = figure
        elif parent in d and isinstance(d[parent], dict):
            d[parent][key] = figure
        else:
            d[parent] = {key: figure}

    reg.edit(RUN, plant)
    assert only(reg.findings(), "orphan-number"), f"{where}: a typed figure readers see on the run's page passed"


def test_unbaselined_figure_is_not_published_as_a_baselined_defect(reg: Reg, tmp_path: Path) -> None:
    """config.metric holds a typed figure; validate says nothing, and the site marks it
    'a baselined defect of the source data' although no baseline exists."""
    reg.edit(RUN, lambda d: d["config"].__setitem__("metric", "decode 250 tok/s"))
    errors, _ = _validate_clean_implies_build(reg, tmp_path)
    assert [f.code for f in errors] == ["orphan-number"]  # validate reports it, so no build publishes it


@pytest.mark.parametrize(
    "plant",
    [
        lambda d: d["config"].__setitem__("250 tok/s", True),  # a figure as an object key
        lambda d: d.__setitem__("speed_evidence", "https://example.org/run?d=250 tok/s"),  # *_evidence URL
    ],
    ids=["figure-as-config-key", "evidence-suffix-url"],
)
def test_validate_clean_implies_build_succeeds(reg: Reg, tmp_path: Path, plant: Any) -> None:
    reg.edit(RUN, plant)
    reg.commit("plant")
    errors, built = _validate_clean_implies_build(reg, tmp_path)
    assert errors or built.returncode == 0, built.stdout + built.stderr


def test_a_citation_under_a_token_named_key_is_checked(reg: Reg) -> None:
    """config.metric = '{{ m:nope.decode_tok_s[0] }}': validate reports no citation-unresolved, and the site
    publishes the unresolved citation (an evreg-unresolved mark) on the run's page."""
    reg.edit(RUN, lambda d: d["config"].__setitem__("metric", "{{ m:nope.decode_tok_s[0] }}"))
    assert only(reg.findings(), "citation-unresolved")


def test_a_memory_size_in_a_name_is_not_marked_as_a_defect_beside_a_citation(reg: Reg, tmp_path: Path) -> None:
    """validate treats '80GB' in hardware as part of the name; the site, once the name also holds a citation,
    renders it as prose and marks '80GB' 'a baselined defect of the source data'."""
    for path in (PKT, RUN):  # the run in the packet's folder states the packet's hardware
        reg.edit(path, lambda d: d.__setitem__("hardware", "H100 80GB at {{ m:run-1.decode_tok_s[0] }}"))
    reg.commit("name")
    errors, built = _validate_clean_implies_build(reg, tmp_path)
    assert not errors and built.returncode == 0
    pages = "".join(p.read_text("utf-8") for p in (tmp_path / "out").rglob("*.html"))
    assert ">80GB</mark>" not in pages


@pytest.mark.parametrize(
    "hardware",
    ["RTX 5090 1792 GB/sec", "RTX 5090 (1792 GB per second)", "RTX 5090 1792 GB/second"],
)
def test_a_bandwidth_is_not_a_memory_size_in_a_name(reg: Reg, hardware: str) -> None:
    """'1792 GB/s' in hardware is an orphan number; the same speed spelled GB/sec passes as a memory size."""
    assert claims_in("hardware", hardware), hardware
    reg.edit(PKT, lambda d: d.__setitem__("hardware", hardware))
    assert only(reg.findings(), "orphan-number")


# -- claim 1: one id grammar ------------------------------------------------------------------------------


def test_measurement_id_index_keeps_its_page(reg: Reg, tmp_path: Path) -> None:
    """'index' is a valid id, but its page measurements/index.md is the measurement list: the page is lost and
    every citation of the measurement (the family's hero) links to a 404."""
    data = reg.read(RUN)
    data["id"] = "index"
    (reg.root / RUN).unlink()
    reg.put(f"{F}/pkt/measurements/index.json", data)
    reg.edit(f"{F}/family.json", lambda d: d["featured_results"][0].__setitem__("measurement_id", "index"))
    reg.edit(f"{F}/views/tp-view.json", lambda d: d["series"][0].__setitem__("measurement_ids", ["index"]))
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:1"].__setitem__("evidence_id", "index"))
    reg.commit("id index")
    errors, _ = _validate_clean_implies_build(reg, tmp_path)
    out = tmp_path / "out" / "packets" / "pkt" / "index.html"
    assert errors or (out.exists() and 'id="m-index"' in out.read_text("utf-8"))


def test_import_names_every_bad_id_in_one_run(empty_repo: Path) -> None:
    manifest = json.loads((LAB / "qwen-14b.json").read_text("utf-8"))
    manifest["run_measurements"][0]["id"] = "a."
    manifest["weight_revisions"][0]["id"] = "Qwen3-14B"
    manifest["model_variants"] = [{"id": "ｖ１", "label": "v", "repository": "o/r", "revision": "f" * 40}]
    source = empty_repo.parent / "bad.json"
    source.write_text(json.dumps(manifest), "utf-8")
    result = evreg("import", "neural-download", str(source), cwd=empty_repo)
    out = result.stdout + result.stderr
    for bad in ("'a.'", "'Qwen3-14B'", "'ｖ１'"):
        assert bad in out, f"{bad} not named:\n{out}"


# -- claim 2: quality_scope counts as a quality gate --------------------------------------------------------


@pytest.mark.parametrize("scope", ["quality suite skipped", "JSON and color failed on the first request", "n/a"])
def test_a_skipped_or_failed_quality_scope_is_no_quality_gate(reg: Reg, scope: str) -> None:
    """EVID B requires quality-gate; any non-empty quality_scope satisfies it, including the lab's own
    'JSON and color failed on the first request; quality suite skipped' (packets/qwen-35b)."""
    from conftest import EVIDENCE

    grade = {"grade": "B", "scope": "x", "basis": "y", "reviewed_at": "2026-01-01", "evidence": [EVIDENCE]}
    reg.edit(PKT, lambda d: d.__setitem__("grades", {"evidence": grade}))
    assert only(reg.findings(), "grade-unsupported")  # without any quality statement: refused
    reg.edit(RUN, lambda d: d.__setitem__("quality_scope", scope))
    assert only(reg.findings(), "grade-unsupported"), f"{scope!r} counted as a passed quality gate"


# -- claim 6: the importer never binds a figure after a bound ----------------------------------------------


@pytest.mark.parametrize(
    "prose",
    [
        "At least 38.249 tok/s",  # 'at least' at the start of a sentence
        "AT LEAST 38.249 tok/s",
        ">= **38.249** tok/s",  # emphasis between the bound and the number
        ">=\u200b38.249 tok/s",  # a zero-width space, which the figure grammar drops
        "＞＝38.249 tok/s",  # fullwidth >=, which NFKC folds
        "target 38.249 tok/s",  # the README's own example of a target
        "> 30 / 38.249 tok/s",  # the second item of a list after a bound
        "up to 38.249 tok/s",
        "more than 38.249 tok/s",
    ],
)
def test_a_figure_after_a_bound_is_never_bound(empty_repo: Path, prose: str) -> None:
    manifest = json.loads((LAB / "qwen-14b.json").read_text("utf-8"))
    manifest["summary"] = prose
    source = empty_repo.parent / "bound.json"
    source.write_text(json.dumps(manifest), "utf-8")
    evreg("import", "neural-download", str(source), cwd=empty_repo)
    summary = json.loads((empty_repo / "packets" / "qwen-14b" / "family.json").read_text("utf-8"))["summary"]
    assert "{{" not in summary, summary


# -- evreg init ---------------------------------------------------------------------------------------------


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
    """This repository's own layout (mkdocs.yml, site/, schema/, packets/): init adds site/about.md, a placeholder
    page that the next build publishes."""
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
    """packets is a file: init writes mkdocs.yml, schema/ and site/, then fails with 'internal error'."""
    root = tmp_path / "reg"
    root.mkdir()
    (root / "packets").write_text("x", "utf-8")
    result = evreg("init", str(root))
    assert "internal error" not in result.stdout + result.stderr
    assert sorted(p.name for p in root.iterdir()) == ["packets"]


# -- beyond the claims: a citation's anchor ----------------------------------------------------------------


@pytest.mark.parametrize("text", ["at 3.35 TB/s of bandwidth", "3350 GBps", "~1.8TB/s"])
def test_terabytes_per_second_is_a_figure(text: str) -> None:
    assert figures.find_figures(text), text


def test_series_point_anchors_are_unique(reg: Reg, tmp_path: Path) -> None:
    """Points at x=-1 and x=1 got one id (the slug dropped the sign): a citation @1 landed on the x=-1 row."""
    import re

    reg.edit(
        f"{F}/measurements/sweep-1.json",
        lambda d: d.__setitem__("points", [{"x": -1, "decode_tok_s": 30.1}, {"x": 1, "decode_tok_s": 27.5}]),
    )
    reg.commit("negative x")
    errors, built = _validate_clean_implies_build(reg, tmp_path)
    assert not errors and built.returncode == 0
    html = (tmp_path / "out" / "families" / "fam" / "measurements" / "index.html").read_text("utf-8")
    ids = re.findall(r'id="(m-sweep-1--decode-tok-s[^"]*)"', html)
    assert len(ids) == len(set(ids)) == 2, ids
