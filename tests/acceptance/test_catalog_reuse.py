"""The catalog is rebuilt from what changed: each family folder's rows are cached under ``build/cache/catalog``,
content-addressed, and a catalog built with them is the catalog a cold build writes; a pull request's run reuses
the rows main's trusted run stored. An entry that does not hold what its address asks for is made again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evreg.app.catalog import ensure_catalog
from evreg.catalog import build as catalog
from evreg.catalog import reuse
from evreg.core import codebase
from evreg.core.layout import ROWS_DIR
from helpers import EVIDENCE, EVIDENCE_BYTES, REPO, F, Reg, evreg, family, run

OTH = "packets/oth"
THR = "packets/thr"
RUN_O = f"{OTH}/measurements/run-o.json"
RUN_T = f"{THR}/measurements/run-t.json"
PACKET = f"{F}/pkt/packet.json"
RUN_1 = f"{F}/pkt/measurements/run-1.json"


def three_families(reg: Reg) -> str:
    """``fam``'s packet cites a measurement of ``oth``; ``thr``'s measurement keeps its evidence in ``fam``'s
    folder: each reads a file of another family. Committed."""
    fam = family()
    fam.pop("featured_results")
    fam.pop("primary_packet_id")
    reg.put(f"{OTH}/family.json", {**fam, "id": "oth", "name": "Other family"})
    reg.put(f"{THR}/family.json", {**fam, "id": "thr", "name": "Third family"})
    reg.put(RUN_O, {**run(), "id": "run-o"})
    reg.put(RUN_T, {**run(), "id": "run-t"})
    reg.edit(PACKET, lambda d: d.update(summary="Decode {{ m:run-o.decode_tok_s[0] }}."))
    reg.put(".gitignore", "build/\n")
    return reg.commit("three families")


def tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every catalog table, in one order."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in catalog.table_names()}
    finally:
        con.close()


def cold(root: Path, tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The catalog a build with no cached rows writes (the cache moved aside, then put back)."""
    aside = tmp / "aside"
    shutil.rmtree(aside, ignore_errors=True)
    if (root / ROWS_DIR).exists():
        shutil.move(root / ROWS_DIR, aside)
    try:
        db = tmp / "cold.duckdb"
        state = ensure_catalog(root, db, force=True)
        assert state.rows is not None and state.rows["reused"] == 0
        return tables(db)
    finally:
        shutil.rmtree(root / ROWS_DIR, ignore_errors=True)
        if aside.exists():
            shutil.move(aside, root / ROWS_DIR)


def cached(root: Path) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, Any]]:
    state = ensure_catalog(root, force=True)
    assert state.built and state.rows is not None
    return tables(state.path), state.rows


def entry_of(root: Path, unit: str) -> Path:
    """The folder of ``unit``'s entry (the one whose entry.json names it)."""
    [folder] = [
        p.parent for p in (root / ROWS_DIR).glob(f"*/{reuse.ENTRY}") if json.loads(p.read_bytes())["unit"] == unit
    ]
    return folder


def test_a_changed_family_is_made_again_with_those_that_read_it_and_the_catalog_is_a_cold_ones(
    reg: Reg, tmp_path: Path
) -> None:
    three_families(reg)
    first, rows = cached(reg.root)
    assert rows == {"reused": 0, "made": 3, "why": {reuse.NO_ENTRY: 3}}
    assert first == cold(reg.root, tmp_path)
    assert cached(reg.root)[1] == {"reused": 3, "made": 0, "why": {}}

    # oth's cited measurement changes: oth (new content) and fam (its citation reads run-o) are made again.
    reg.edit(RUN_O, lambda d: d["metrics"].update(decode_tok_s=[41.5, 41.75]))
    after, rows = cached(reg.root)
    assert rows == {"reused": 1, "made": 2, "why": {reuse.NO_ENTRY: 1, reuse.DEPENDS: 1}}
    assert after == cold(reg.root, tmp_path)
    cited = [r for r in after["citations"] if r[0].startswith(f"{PACKET}#")]
    assert [r[-2] for r in cited] == [41.5]  # the citation row resolves to the new value

    # The evidence file in fam's folder changes: fam (its own), oth and thr (they read it from there) are made again.
    reg.raw(EVIDENCE, EVIDENCE_BYTES + b"\n")
    after, rows = cached(reg.root)
    assert rows == {"reused": 0, "made": 3, "why": {reuse.NO_ENTRY: 1, reuse.DEPENDS: 2}}
    assert after == cold(reg.root, tmp_path)
    assert {r[-2] for r in after["evidence"] if r[3] == RUN_T} == {True}  # present (then held)

    # A committed change: the clean folders' digests are git tree ids now, the entries made for them again once.
    reg.commit("edits")
    assert cached(reg.root)[0] == cold(reg.root, tmp_path)
    assert cached(reg.root)[1]["reused"] == 3
    # Only entries the last build used are kept.
    assert len([p for p in (reg.root / ROWS_DIR).iterdir() if not p.name.startswith(".")]) == 3


def test_a_planted_or_mismatched_entry_is_made_again_never_used(reg: Reg, tmp_path: Path) -> None:
    three_families(reg)
    cached(reg.root)
    truth = cold(reg.root, tmp_path)
    fam, thr = entry_of(reg.root, "fam"), entry_of(reg.root, "thr")

    def plant(folder: Path, change: Any) -> None:
        entry = json.loads((folder / reuse.ENTRY).read_bytes())
        change(entry)
        (folder / reuse.ENTRY).write_text(json.dumps(entry))

    def bogus_rows(folder: Path) -> None:  # a row no record has, were the entry used
        [families] = folder.glob("families.*.json")
        families.write_text(json.dumps([{"id": "planted", "name": "Planted", "file": "packets/planted/family.json"}]))

    # thr's rows under fam's address: an entry for other content.
    shutil.rmtree(fam)
    shutil.copytree(thr, fam)
    bogus_rows(fam)
    after, rows = cached(reg.root)
    assert rows["why"] == {reuse.BROKEN: 1} and after == truth

    # fam's own entry from other code; then one whose staged file is a link (to thr's rows).
    fam = entry_of(reg.root, "fam")
    plant(fam, lambda e: e.update(version="another evreg"))
    bogus_rows(fam)
    after, rows = cached(reg.root)
    assert rows["why"] == {reuse.BROKEN: 1} and after == truth
    fam = entry_of(reg.root, "fam")
    [families] = fam.glob("families.*.json")
    families.unlink()
    families.symlink_to(next(thr.glob("families.*.json")))
    after, rows = cached(reg.root)
    assert rows["why"] == {reuse.BROKEN: 1} and after == truth

    # A recorded dependency whose fingerprint is not the store's: made again.
    fam = entry_of(reg.root, "fam")
    plant(fam, lambda e: e["deps"].update({dep: "planted" for dep in e["deps"]}))
    bogus_rows(fam)
    after, rows = cached(reg.root)
    assert rows["why"] == {reuse.DEPENDS: 1} and after == truth

    # Rows DuckDB cannot load, under a header that holds: every row is made again.
    next(entry_of(reg.root, "thr").glob("records.*.json")).write_text("[{not json")
    after, rows = cached(reg.root)
    assert rows["reused"] == 0 and after == truth

    # Unreadable, and missing its staged file: made again.
    fam = entry_of(reg.root, "fam")
    (fam / reuse.ENTRY).write_text("{not json")
    after, rows = cached(reg.root)
    assert rows["why"] == {reuse.BROKEN: 1} and after == truth
    fam = entry_of(reg.root, "fam")
    next(fam.glob("records.*.json")).unlink()
    after, rows = cached(reg.root)
    assert rows["why"] == {reuse.BROKEN: 1} and after == truth


def test_a_pull_request_reuses_the_rows_mains_run_stored(reg: Reg, tmp_path: Path) -> None:
    """Main's run catalogues its commit (publish.yml's build) and keeps build/cache; a fresh clone of a pull request
    that edits one family, with that folder restored, makes that family's rows and those that read it only."""
    three_families(reg)
    main = tmp_path / "main"
    subprocess.run(["git", "clone", "-q", str(reg.root), str(main)], check=True)
    assert evreg("catalog", cwd=main).returncode == 0
    reg.edit(f"{THR}/family.json", lambda d: d.update(summary="A third family, summarised."))
    reg.commit("pull request")
    pr = tmp_path / "pr"
    subprocess.run(["git", "clone", "-q", str(reg.root), str(pr)], check=True)
    shutil.copytree(main / "build" / "cache", pr / "build" / "cache")
    done = evreg("catalog", cwd=pr)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("(rows of 2 of 3 units reused)")
    assert tables(pr / "build" / "catalog.duckdb") == cold(pr, tmp_path)


def test_the_code_version_does_not_depend_on_where_the_code_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same code in another place (a CI run's environment, another checkout) has the same version; a changed
    byte of it another."""
    here = codebase.digest()
    elsewhere = tmp_path / "site-packages" / "evreg"
    shutil.copytree(codebase.EVREG, elsewhere, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(codebase, "EVREG", elsewhere)
    assert codebase.digest() == here
    metrics = elsewhere / "vocab" / "metrics.json"
    metrics.write_bytes(metrics.read_bytes() + b" ")
    assert codebase.digest() != here
    from evreg.check.results import code_version

    assert code_version([]) == codebase.digest()  # one definition: the result cache's version is the same digest
    changed = codebase.digest()
    environment = codebase.environment()
    assert environment.startswith(f"{sys.implementation.name}=={sys.version_info[0]}.".encode())
    monkeypatch.setattr(codebase, "environment", lambda: environment.replace(b"jsonschema-", b"jsonschema-0"))
    assert codebase.digest() != changed  # another version of a package the rules use


def test_the_environment_is_the_same_however_evreg_is_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the site folders are listed, not the import path (``python -m`` puts the working directory there, a test
    process its own folders), and not the installers (a fresh virtual environment's pip is not a CI image's); another
    package's version is."""
    (tmp_path / "launch_folder_metadata-1.0.dist-info").mkdir()  # in the folder evreg is started from
    site = tmp_path / "site"
    for name in ("pip-99.0.dist-info", "setuptools-99.0.dist-info", "markdown-0.0.dist-info"):
        (site / name).mkdir(parents=True)
    try:
        codebase.environment.cache_clear()
        before = codebase.environment()
        monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
        codebase.environment.cache_clear()
        assert codebase.environment() == before
        assert b"launch_folder_metadata" not in before
        real = codebase.site_folders()
        monkeypatch.setattr(codebase, "site_folders", lambda: [*real, str(site)])
        codebase.environment.cache_clear()
        lines = codebase.environment().splitlines()
        assert b"markdown-0.0.dist-info" in lines and not any(b"99.0" in line for line in lines)
    finally:
        codebase.environment.cache_clear()


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.sampled_from(["value-o", "value-1", "uncite", "cite-1", "evidence", "drop-t", "commit", "rename-fam"]),
        min_size=1,
        max_size=4,
    )
)
def test_cached_rows_equal_fresh_ones_after_any_sequence_of_changes(
    tmp_path_factory: pytest.TempPathFactory, edits: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    reg = Reg(tmp / "reg")
    reg.commit("initial registry")
    three_families(reg)
    cached(reg.root)
    for i, edit in enumerate(edits):
        if edit == "value-o" and (reg.root / RUN_O).exists():
            reg.edit(RUN_O, lambda d, i=i: d["metrics"].update(decode_tok_s=[30.0 + i, 31.0 + i]))
        elif edit == "value-1":
            reg.edit(RUN_1, lambda d, i=i: d["metrics"].update(decode_tok_s=[20.0 + i]))
        elif edit == "uncite":
            reg.edit(PACKET, lambda d: d.update(summary="No figures here."))
        elif edit == "cite-1":
            reg.edit(f"{THR}/family.json", lambda d: d.update(summary="Cites {{ m:run-1.decode_tok_s[0] }}."))
        elif edit == "evidence":
            reg.raw(EVIDENCE, EVIDENCE_BYTES + b" " * (i + 1))
        elif edit == "drop-t" and (reg.root / RUN_O).exists():
            (reg.root / RUN_O).unlink()
        elif edit == "commit":
            reg.commit(f"edit {i}")
        elif edit == "rename-fam":
            reg.edit(f"{F}/family.json", lambda d, i=i: d.update(name=f"Family {i}"))
        assert cached(reg.root)[0] == cold(reg.root, tmp / f"cold-{i}"), edits[: i + 1]


def test_main_catalogues_before_it_saves_the_cache_a_pull_request_restores() -> None:
    """publish.yml builds the site (which writes the catalog, and its rows to build/cache) before it saves
    build/cache; the judge of a pull request restores it before it builds."""
    steps = yaml.safe_load((REPO / ".github/workflows/publish.yml").read_text())["jobs"]["build"]["steps"]
    built = next(i for i, s in enumerate(steps) if "evreg build" in s.get("run", ""))
    saved = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache/save@"))
    assert built < saved and steps[saved]["with"]["path"] == "build/cache"
    assert ROWS_DIR.startswith("build/cache/")
    judge = yaml.safe_load((REPO / ".github/workflows/pull-request.yml").read_text())["jobs"]["judge"]["steps"]
    restored = next(i for i, s in enumerate(judge) if s.get("uses", "").startswith("actions/cache/restore@"))
    builds = next(i for i, s in enumerate(judge) if s.get("run", "").endswith('evreg" build --check'))
    assert restored < builds
