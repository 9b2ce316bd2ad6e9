"""The DuckDB catalog, queries, Parquet export and provenance, on real files and real git history."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evreg.core import gitcmd
from evreg.core.layout import DEFAULT_DB
from evreg.store import MEASUREMENT_KINDS, load
from helpers import LAB_MANIFEST, REPO, F, Reg, evreg

RUN = f"{F}/pkt/measurements/run-1.json"


def q(root: Path, sql: str, *extra: str) -> list[dict]:
    result = evreg("query", sql, "--format", "json", *extra, cwd=root)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_catalog_of_the_committed_registry_matches_the_source_file(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    assert evreg("catalog", "--db", str(db), cwd=REPO).returncode == 0
    source = json.loads(LAB_MANIFEST.read_text())
    counts = q(
        REPO,
        "SELECT (SELECT count(*) FROM measurements WHERE family = 'qwen-27b') m, "
        "(SELECT count(*) FROM packets WHERE family = 'qwen-27b') p, "
        "(SELECT count(*) FROM artifacts WHERE family = 'qwen-27b') a, "
        "(SELECT count(*) FROM families WHERE id = 'qwen-27b') f",
        "--db",
        str(db),
    )[0]
    assert counts == {
        "m": len(source["run_measurements"]) + len(source["series_measurements"]),
        "p": len(source["packets"]),
        "a": sum(len(r["quantized_artifacts"]) for r in source["weight_revisions"]),
        "f": 1,
    }
    first = source["run_measurements"][0]
    rows = q(
        REPO,
        f"SELECT key, idx, value, unit FROM samples WHERE measurement = '{first['id']}' AND metric = 'decode_tok_s' "
        "ORDER BY idx",
        "--db",
        str(db),
    )
    assert len(rows) > 1
    assert [r["value"] for r in rows] == first["metrics"]["decode_tok_s"]  # exact 64-bit values
    assert [(r["key"], r["idx"], r["unit"]) for r in rows] == [
        (f"{first['id']}/decode_tok_s/{i}", i, "tok/s") for i in range(len(rows))
    ]
    # Each record's content is the file's value, losslessly (staged as JSON, stored as compact text).
    for row in q(REPO, "SELECT file, content FROM records", "--db", str(db)):
        assert json.loads(row["content"]) == json.loads((REPO / row["file"]).read_text()), row["file"]
    series = source["series_measurements"][0]
    point = q(
        REPO,
        f"SELECT value FROM points WHERE measurement = '{series['id']}' AND metric = 'decode_tok_s' "
        f"AND x = {series['points'][1]['x']}",
        "--db",
        str(db),
    )
    assert point == [{"value": series["points"][1]["decode_tok_s"]}]
    baselined = q(REPO, "SELECT count(*) n FROM findings WHERE baselined", "--db", str(db))[0]["n"]
    assert baselined == len(json.loads((REPO / "packets/baseline.json").read_text())["entries"])
    headline = q(REPO, "SELECT * FROM headlines WHERE packet = 'qwen36-27b-autoround-int4-tp2'", "--db", str(db))
    assert headline[0]["value"] == 95.384867741895 and headline[0]["unit"] == "tok/s"
    quarantined = [d for d in load(REPO).records(*MEASUREMENT_KINDS) if d.data["state"] == "quarantined"]
    assert q(REPO, "SELECT count(*) n FROM quarantine", "--db", str(db))[0]["n"] == len(quarantined) == 3
    # Promotability is the validators' rule (registry.vocab.promotable): diagnostics and screens are not.
    rows = q(
        REPO,
        "SELECT id, promotable FROM measurements WHERE id IN ('q38-a3561ef8-stock-tp1-graph-diagnostic', "
        "'q38-a3561ef8-tp4-winner-overlay-graph-strict')",
        "--db",
        str(db),
    )
    assert {r["id"]: r["promotable"] for r in rows} == {
        "q38-a3561ef8-stock-tp1-graph-diagnostic": False,
        "q38-a3561ef8-tp4-winner-overlay-graph-strict": True,
    }


def test_query_is_read_only_and_reports_bad_sql(reg: Reg) -> None:
    for sql in ("DELETE FROM samples", "CREATE TABLE x (a INT)", "SELECT * FROM no_such_table", "SELEC 1"):
        result = evreg("query", sql, cwd=reg.root)
        assert result.returncode == 1 and result.stderr.startswith(("query failed:", "query refused:"))
        assert "Traceback" not in result.stderr
    assert q(reg.root, "SELECT count(*) n FROM samples")[0]["n"] == 2


def test_query_rebuilds_a_stale_or_corrupt_catalog(reg: Reg) -> None:
    assert q(reg.root, "SELECT value FROM samples WHERE idx = 0") == [{"value": 30.21}]
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[31.5]))
    assert q(reg.root, "SELECT value FROM samples WHERE idx = 0") == [{"value": 31.5}]
    db = reg.root / DEFAULT_DB
    db.write_bytes(b"this is not a duckdb file")
    assert q(reg.root, "SELECT count(*) n FROM samples") == [{"n": 1}]


@pytest.mark.slow
def test_query_on_a_fresh_catalog_trusts_its_stamp_and_only_its_stamp(reg: Reg) -> None:
    """A catalog records the stamp of the work tree and code it was built from (``catalogfile.stamp``);
    a query whose stamp matches neither validates nor imports the catalog's builder, and any change git
    reports (an edit, a new untracked file, an ignored file, a commit) makes it check the full way."""
    from evreg.catalog import file as catalogfile

    db = reg.root / DEFAULT_DB
    assert q(reg.root, "SELECT count(*) n FROM measurements") == [{"n": 2}]
    assert (catalogfile.read_meta(db) or {}).get("stamp") == catalogfile.stamp(reg.root, db)
    probe = (
        "import sys; from evreg.cli.main import main\n"
        "sys.argv = ['evreg', 'query', 'SELECT count(*) FROM measurements']\n"
        "try: main()\n"
        "except SystemExit: pass\n"
        "heavy = ('sqlalchemy', 'sqlmodel', 'evreg_rules', 'evreg.catalog.build', 'evreg.store.registry')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=reg.root, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    new = reg.read(RUN) | {"id": "run-2"}
    reg.put(f"{F}/pkt/measurements/run-2.json", new)  # untracked
    assert q(reg.root, "SELECT count(*) n FROM measurements") == [{"n": 3}]
    reg.commit("add run-2")
    assert q(reg.root, "SELECT count(*) n FROM measurements") == [{"n": 3}]
    (reg.root / ".gitignore").write_text("*.ignored.json\n", "utf-8")
    reg.commit("ignore")
    reg.put(f"{F}/pkt/measurements/run-3.ignored.json", new | {"id": "run-3"})  # ignored, still validated
    before = catalogfile.stamp(reg.root, db)
    assert before is not None and before != (catalogfile.read_meta(db) or {}).get("stamp")
    q(reg.root, "SELECT 1")
    reg.edit(f"{F}/pkt/measurements/run-2.json", lambda d: d["metrics"].update(decode_tok_s=[33.5]))
    assert q(reg.root, "SELECT value FROM samples WHERE measurement = 'run-2'") == [{"value": 33.5}]


def _in_place(path: Path, old: bytes, new: bytes) -> None:
    """Rewrite ``old`` to ``new`` (same length) in place, keeping size and times: its folder does not change."""
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    times = path.stat()
    with path.open("r+b") as fh:
        fh.write(data.replace(old, new))
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert path.stat().st_size == times.st_size and path.stat().st_mtime_ns == times.st_mtime_ns


@pytest.mark.slow
def test_a_fresh_catalog_is_checked_from_its_folders_record_and_every_change_still_makes_it_stale(reg: Reg) -> None:
    """The stamp's record (every folder's change time, the untracked and ignored entries) lets ``fresh`` ask git
    only about tracked files; each way past it makes the catalog stale: an edit keeping size and modification
    time (tracked or untracked file), a new untracked file in an old folder, a new ignored file. A folder
    change that leaves the listing as it was (a file added and removed again) keeps it fresh."""
    from evreg.catalog import file as catalogfile

    (reg.root / ".gitignore").write_text("*.ignored.json\n", "utf-8")
    reg.commit("ignore")
    reg.put(f"{F}/pkt/measurements/run-2.json", reg.read(RUN) | {"id": "run-2"})  # untracked, validated
    db = reg.root / DEFAULT_DB
    db.parent.mkdir()  # as after a first catalog: making build/ changes the root folder, after the stamp
    time.sleep(gitcmd.TRUSTED_AGE_NS / 1e9 + 0.1)  # folders old enough to vouch for their names
    assert q(reg.root, "SELECT count(*) n FROM measurements") == [{"n": 3}]
    meta = catalogfile.read_meta(db) or {}
    assert meta.get("stamp_folder_times") and f"{F}/pkt/measurements" in meta["stamp_folders"].split("\0")
    assert catalogfile._quick(reg.root, db, meta) == meta["stamp"] and catalogfile.fresh(reg.root, db)
    for path in (reg.root / RUN, reg.root / f"{F}/pkt/measurements/run-2.json"):  # tracked, then untracked
        _in_place(path, b"30.21", b"30.22")
        assert catalogfile._quick(reg.root, db, meta) not in (None, meta["stamp"])
        assert not catalogfile.fresh(reg.root, db)
        _in_place(path, b"30.22", b"30.21")  # the same bytes again: fresh, still from the record
        assert catalogfile._quick(reg.root, db, meta) == meta["stamp"] and catalogfile.fresh(reg.root, db)
    extra = reg.put(f"{F}/pkt/measurements/run-3.json", reg.read(RUN) | {"id": "run-3"})  # untracked, old folder
    assert catalogfile._quick(reg.root, db, meta) is None and not catalogfile.fresh(reg.root, db)
    extra.unlink()  # the folder changed, its listing did not: the full check finds the stamp equal
    assert catalogfile._quick(reg.root, db, meta) is None and catalogfile.fresh(reg.root, db)
    reg.put(f"{F}/pkt/measurements/run-4.ignored.json", reg.read(RUN) | {"id": "run-4"})  # ignored, still validated
    assert not catalogfile.fresh(reg.root, db)
    rows = q(reg.root, "SELECT measurement, value FROM samples WHERE idx = 0 ORDER BY measurement")
    assert rows == [{"measurement": f"run-{n}", "value": 30.21} for n in (1, 2, 4)]


def test_provenance_and_as_of_from_git_history(reg: Reg) -> None:
    first = reg.repo.head.commit.hexsha
    reg.edit(RUN, lambda d: d.update(quality="objective battery pass"))
    with reg.repo.config_writer() as cw:
        cw.set_value("user", "name", "Second Author")
    reg.commit("add quality note")
    new = reg.read(RUN)
    new["id"] = "run-2"
    reg.put(f"{F}/pkt/measurements/run-2.json", new)
    reg.commit("add run-2")
    rows = q(reg.root, f"SELECT seq, author, change FROM provenance WHERE path = '{RUN}' ORDER BY seq")
    assert rows == [
        {"seq": 0, "author": "Test Author", "change": "A"},
        {"seq": 1, "author": "Second Author", "change": "M"},
    ]
    assert q(reg.root, "SELECT count(*) n FROM measurements")[0]["n"] == 3
    old = q(reg.root, "SELECT count(*) n FROM measurements", "--as-of", first, "--db", str(reg.root / "old.duckdb"))
    assert old == [{"n": 2}]
    old_prov = q(
        reg.root,
        "SELECT count(*) n FROM provenance WHERE path LIKE '%run-2.json'",
        "--as-of",
        first,
        "--db",
        str(reg.root / "old.duckdb"),
    )
    assert old_prov == [{"n": 0}]
    dated = q(
        reg.root, "SELECT count(*) n FROM measurements", "--as-of", "2099-12-31", "--db", str(reg.root / "dated.duckdb")
    )
    assert dated == [{"n": 3}]
    bad = evreg("catalog", "--as-of", "no-such-rev", cwd=reg.root)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert evreg("catalog", "--as-of", "1990-01-01", cwd=reg.root).returncode == 2


def test_parquet_export_is_byte_identical_on_rerun(reg: Reg, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert evreg("export", "parquet", str(a), cwd=reg.root).returncode == 0
    assert evreg("export", "parquet", str(b), cwd=reg.root).returncode == 0
    files = sorted(p.name for p in a.iterdir())
    assert "samples.parquet" in files and "samples.jsonl.gz" in files and "SHA256SUMS" in files
    for name in files:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sums = (a / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == len(files) - 1
    duckdb = pytest.importorskip("duckdb")
    assert duckdb.sql(f"SELECT sum(value) FROM '{a / 'samples.parquet'}'").fetchall()[0][0] == pytest.approx(60.46)
    rows = [json.loads(line) for line in gzip.decompress((a / "samples.jsonl.gz").read_bytes()).splitlines()]
    assert sum(r["value"] for r in rows) == pytest.approx(60.46)
    (b / "samples.jsonl").write_text("{}\n")  # an earlier export's uncompressed file is not left to be published
    assert evreg("export", "parquet", str(b), cwd=reg.root).returncode == 0
    assert sorted(p.name for p in b.iterdir()) == files


@pytest.mark.slow
def test_two_catalog_builds_at_once_leave_a_valid_file(reg: Reg) -> None:
    cmd = [str(Path(sys.executable).parent / "evreg"), "catalog"]
    procs = [subprocess.Popen(cmd, cwd=reg.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    assert q(reg.root, "SELECT count(*) n FROM measurements") == [{"n": 2}]
    leftovers = [p.name for p in (reg.root / "build").iterdir() if p.name not in ("catalog.duckdb", "cache")]
    assert leftovers == []
