"""The benchmark's registries of real shape (clones of packets/) and its whole-process phases.

Nothing here asserts on time: the benchmark runs end to end on the smallest size (the real
registry cloned once), the clones validate clean and cover every record kind of packets/, and a
cached validation equals a fresh one after random edits of a registry of real shape."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from evreg.check import rules
from evreg.check.pipeline import validate
from evreg.core.jsonio import canonical
from evreg.core.layout import CACHE_DIR
from evreg.devtools.bench import ADVERSARIAL, PHASES, QUERIES, adversarial, commit_all
from evreg.devtools.realshape import PERTURBATION, generate, plan, templates
from helpers import REPO, evreg

pytestmark = pytest.mark.slow  # the benchmark end to end and registries of real shape

PACK = rules.discover()


def _kinds(root: Path) -> set[str]:
    out = set()
    for path in (root / "packets").rglob("*.json"):
        data = orjson.loads(path.read_bytes())
        if isinstance(data, dict) and "kind" in data and "evidence" not in path.parts:
            out.add(data["kind"])
    return out


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("realshape") / "registry"
    return root, generate(root, 200)


def test_the_clone_of_the_real_records_validates_clean_and_covers_every_kind(clone: tuple[Path, Any]) -> None:
    root, info = clone
    real_families = [p for p in (REPO / "packets").iterdir() if (p / "family.json").is_file()]
    measurements = [
        p for f in real_families for p in f.rglob("measurements/*.json") if '"kind": "' in p.read_text()[:40]
    ]
    # The real registry, cloned once.
    assert (info["measurements"], info["families"]) == (len(measurements), len(real_families))
    assert _kinds(root) == _kinds(REPO) == set(info["kinds"]) | {"baseline"}
    _registry, report = validate(root, PACK, use_cache=False)
    assert report.errors() == [] and report.summary()["warnings"] == 0
    # every accepted defect of the real data, found again, but those of its held copies, which a clone does not hold
    real = orjson.loads((REPO / "packets/baseline.json").read_bytes())["entries"]
    assert report.summary()["baselined"] == len([e for e in real if "held copy" not in e.get("message", "")])
    _registry, original = validate(REPO, PACK, use_cache=False)
    held = [p for f in real_families for p in (f / "evidence" / "neural-download").rglob("*") if p.is_file()]
    quoted = [p for p in (root / "packets").rglob("evidence/quoted/*/**/*") if p.is_file()]  # see realshape
    assert quoted and (report.records, report.files) == (original.records, original.files - len(held) + len(quoted))


def test_ids_are_renamed_everywhere_and_numbers_perturbed_within_bounds(clone: tuple[Path, Any]) -> None:
    root, _ = clone
    real = REPO / "packets/qwen-27b/qwen36-27b-q8-tp2/packet.json"
    [folder] = (root / "packets").glob("qwen-27b-f*")  # the family's place among the clones follows the registry's
    fam = folder.name.removeprefix("qwen-27b")
    cloned = folder / f"qwen36-27b-q8-tp2{fam}-c0/packet.json"
    a, b = orjson.loads(real.read_bytes()), orjson.loads(cloned.read_bytes())
    assert b["id"] == f"qwen36-27b-q8-tp2{fam}-c0" and b["revision"] == a["revision"] + fam
    assert b["featured_metric"]["measurement_id"] == a["featured_metric"]["measurement_id"] + f"{fam}-c0"
    assert b["featured_metric"]["value"] != a["featured_metric"]["value"]
    assert abs(b["featured_metric"]["value"] / a["featured_metric"]["value"] - 1) <= PERTURBATION
    for cites in re.findall(r"\{\{ m:([a-z0-9.-]+?)\.[a-z_]", cloned.read_text()):
        assert cites.endswith(f"{fam}-c0")  # every citation names a cloned measurement
    text = "".join(p.read_text() for p in folder.rglob("*.json"))
    assert f"neural-download:{fam[1:]}-c0/" in text and "neural-download:results/" not in text  # each copy's evidence
    # A number the validator re-reads from an evidence file (by locator) is kept exactly.
    located = next(
        p for p in (REPO / "packets/qwen3-8-27b").rglob("measurements/*.json") if "evidence_locators" in p.read_text()
    )
    [clone_of] = (root / "packets").glob("qwen3-8-27b-f*")
    twin = next(clone_of.rglob(f"measurements/{located.stem}{clone_of.name.removeprefix('qwen3-8-27b')}-c0.json"))
    assert orjson.loads(located.read_bytes())["metrics"] == orjson.loads(twin.read_bytes())["metrics"]


def test_larger_sizes_are_families_of_about_a_thousand_measurements_in_the_real_proportions() -> None:
    temps = templates(REPO)
    dealt = plan(temps, 100_000)
    assert len(dealt) == 100 and {t.name for t, _ in dealt} == {t.name for t in temps}
    sizes = [t.measurements * copies for t, copies in dealt]
    # About 1,000 each (whole copies of a real family: as close as its size allows).
    assert all(abs(s - 1000) <= max(t.measurements / 2, 100) for (t, _), s in zip(dealt, sizes, strict=True))
    assert 90_000 <= sum(sizes) <= 110_000
    largest = max(temps, key=lambda t: t.measurements)
    share = 100 * largest.measurements / sum(t.measurements for t in temps)
    assert sum(1 for t, _ in dealt if t is largest) >= int(share) - len(temps)  # its share of the real measurements


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def test_bench_runs_every_phase_as_a_whole_process(tmp_path: Path) -> None:
    result = evreg("bench", "--sizes", "200", "--repeat", "1", "--keep", str(tmp_path), "--no-adversarial")
    assert result.returncode == 0, result.stderr
    [size] = json.loads(result.stdout)["sizes"]
    assert size["measurements"] >= 200 and size["repeat"] == 1  # at least the real registry, cloned once
    for phase in PHASES:
        if phase == "pull_request":  # timed per step, cold and restored (below)
            continue
        timed = [size[phase]] if phase != "query" else [size[phase][q] for q in QUERIES]
        for t in timed:
            assert len(t["runs_s"]) == 1 and t["median_s"] == t["runs_s"][0] and t["max_rss_mib"] > 0
            assert t["ratio_to_floor"] == pytest.approx(t["median_s"] / size["floor"]["median_s"], rel=0.05)
    assert size["startup"]["output"].startswith("evreg, version")
    streamed = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert [next(iter(r)) for r in streamed] == ["floor", *PHASES]  # each phase as it completes
    assert streamed[-1]["pull_request"] == size["pull_request"]
    for phase in (
        "validate_full",
        "validate_one_measurement",
        "validate_one_family",
        "validate_base_head_one_measurement",
    ):
        assert " 0 errors, 0 warnings" in size[phase]["output"]
    assert size["build"]["output"].startswith("built ") and size["catalog"]["output"].startswith("catalog written")
    assert "unchanged since an earlier build's checks 0;" in size["build"]["output"]  # nothing kept: every page made
    again = size["build"]["unchanged"]["output"]
    assert re.search(r"record pages taken from an earlier build \(nothing they read changed\) [1-9]", again), again
    assert (tmp_path / "registry-200/build/site/index.html").is_file()
    site = size["build"]["site"]  # the site's build time and size, beside the whole build's
    assert 0 < site["site_s"] <= size["build"]["median_s"] and site["pages"] > 10 and site["search_index_mb"] > 0
    assert site["mb"] > site["downloads_mb"] > 0
    assert {"packets", "families", "downloads", "search"} <= set(site["mb_by_folder"])
    assert sum(site["mb_by_folder"].values()) == pytest.approx(site["mb"], abs=0.2)
    every = [size[p] for p in PHASES if p != "query"] + [size["query"][q] for q in QUERIES]
    every.append(size["validate_base_head_one_measurement"]["again"])
    assert size["peak_memory"]["max_rss_mib"] == max(t["max_rss_mib"] for t in every)
    pr = size["pull_request"]  # one packet added: the restored run checks its family only, and finds it clean
    assert pr["added_packet"].endswith("/packet.json") and pr["added_files"] > 1
    assert list(pr["steps"]) == [
        "schema --check",
        "fmt --check --base (change)",
        "fmt --check --base (judge)",
        "validate --base, annotations and summary",
        "build --check",
    ]
    assert all(
        s["returncodes"] == [0] and s["cold_cpu_s"] > 0 and s["restored_cpu_s"] > 0 for s in pr["steps"].values()
    )
    assert re.fullmatch(r"(\d+) units? reused from the cache, 1 checked \(1 changed\)\.", pr["restored_summary"])
    assert int(pr["restored_summary"].split()[0]) == sum(
        1 for p in (tmp_path / "registry-200/packets").iterdir() if p.is_dir()
    )
    # main's run built the site, so the restored build scanned the pages the new packet changed, and only those, and
    # took the record pages and the comparisons' workloads whose reads the new packet did not change from main's packs
    checked = re.fullmatch(
        r"generated pages checked (\d+), unchanged since an earlier build's checks (\d+); record pages taken from an "
        r"earlier build \(nothing they read changed\) (\d+), pieces of the site's own pages (\d+)"
        r"(?:; data downloads' pieces taken from an earlier export \d+ of \d+)?",
        pr["restored_build"],
    )
    assert checked and 0 < int(checked[1]) < int(checked[2]), pr["restored_build"]
    assert 0 < int(checked[3]) < int(checked[2]) and int(checked[4]) > 0, pr["restored_build"]
    hook = size["validate_base_head_one_measurement"]  # each run after a new commit; then again on the same one
    assert len(hook["again"]["runs_s"]) == 1 and " 0 errors, 0 warnings" in hook["again"]["output"]
    # Generated, committed and packed before anything was timed: no loose objects for a background gc.
    objects = subprocess.run(
        ["git", "count-objects", "-v"], cwd=tmp_path / "registry-200", capture_output=True, text=True, check=True
    ).stdout
    stats = dict(line.split(": ") for line in objects.splitlines())
    assert int(stats["in-pack"]) > 388
    # The phases committed and added records; the next run measures the registry as it was generated, not theirs.
    kept = tmp_path / "registry-200"
    assert git(kept, "rev-list", "--count", "HEAD") != "1"
    again = evreg("bench", "--sizes", "200", "--repeat", "1", "--keep", str(tmp_path), "--phases", "startup")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sizes"][0]["reused"] is True
    assert git(kept, "rev-list", "--count", "HEAD") == "1" and git(kept, "status", "--porcelain") == ""
    assert (kept / "build/site/index.html").is_file()  # its build/ stays


BENCH = ["-c", "user.name=bench", "-c", "user.email=bench@example.org"]
SOMEONE = ["-c", "user.name=someone", "-c", "user.email=someone@example.org"]


def _foreign_author(kept: Path) -> Path:
    git(kept, "init", "-q")
    git(kept, "add", "-A")
    git(kept, *SOMEONE, "commit", "-qm", "my registry")
    return kept


def _foreign_committer(kept: Path) -> Path:  # an amended or rebased commit keeps the bench as its author
    git(kept, "init", "-q")
    git(kept, *BENCH, "commit", "-q", "--allow-empty", "-m", "registry of real shape")
    git(kept, "add", "-A")
    git(kept, *SOMEONE, "commit", "-qm", "my change", "--author", "bench <bench@example.org>")
    return kept


def _inside_a_bench_repository(kept: Path) -> Path:  # no repository of its own: git would read the one around it
    outer = kept.parent
    git(outer, "init", "-q")
    git(outer, "add", "-A")
    git(outer, *BENCH, "commit", "-qm", "registry of real shape")
    return outer


@pytest.mark.parametrize("history", [_foreign_author, _foreign_committer, _inside_a_bench_repository])
def test_a_kept_folder_holding_a_registry_the_bench_did_not_generate_is_refused_untouched(
    tmp_path: Path, history: Any
) -> None:
    kept = tmp_path / "registry-200"
    (kept / "packets").mkdir(parents=True)
    (kept / "packets/notes.json").write_text("{}\n", "utf-8")
    repo = history(kept)
    head = git(repo, "rev-parse", "HEAD")
    (kept / "packets/draft.json").write_text("{}\n", "utf-8")  # work not committed yet
    result = evreg("bench", "--sizes", "200", "--repeat", "1", "--keep", str(tmp_path), "--phases", "startup")
    assert result.returncode == 2, result.stderr
    assert "is not a registry the bench generated" in result.stderr and "Traceback" not in result.stderr
    assert git(repo, "rev-parse", "HEAD") == head and (kept / "packets/draft.json").is_file()


def test_adversarial_records_are_timed_for_every_pattern() -> None:
    out = adversarial(64 * 1024)  # the time at the size limit, and its bound, are in tests/attacks/test_security.py
    assert set(ADVERSARIAL) < set(out) and out["worst"] == out[str(out["worst_pattern"])]


EDITS = ("sample", "delete", "cite-across", "evidence-bytes", "duplicate", "revision", "prose")


def _edit(root: Path, rnd: random.Random, kind: str) -> None:
    """One random edit of a kind that changes findings in the edited unit or in another one."""
    files = sorted(p for p in (root / "packets").rglob("*.json") if "evidence" not in p.parts)
    measurements = [p for p in files if p.parent.name == "measurements"]
    victim = rnd.choice(measurements)
    data = orjson.loads(victim.read_bytes())
    if kind == "sample" and data.get("metrics"):
        metric = rnd.choice(sorted(data["metrics"]))
        data["metrics"][metric][0] = round(data["metrics"][metric][0] * 1.5, 3)
    elif kind == "delete":
        victim.unlink()
        return
    elif kind == "cite-across":  # a packet of one family cites a measurement of another
        packet = rnd.choice([p for p in files if p.name == "packet.json"])
        other = orjson.loads(packet.read_bytes())
        other["summary"] = f"Compare {{{{ m:{data['id']}.{rnd.choice(['decode_tok_s', 'nope'])}[0] }}}}."
        packet.write_text(canonical(other), "utf-8")
        return
    elif kind == "evidence-bytes":
        evidence = sorted((root / "packets").rglob("evidence/*"))
        if evidence:
            with rnd.choice(evidence).open("a") as f:
                f.write(" ")
        return
    elif kind == "duplicate":  # the same id in another family's folder
        target = rnd.choice(sorted((root / "packets").glob("*/family.json"))).parent / "measurements"
        target.mkdir(exist_ok=True)
        shutil.copy(victim, target / victim.name)
        return
    elif kind == "revision":
        family = rnd.choice(sorted((root / "packets").glob("*/family.json")))
        fam = orjson.loads(family.read_bytes())
        fam["weight_revisions"][0]["id"] += "-renamed"
        family.write_text(canonical(fam), "utf-8")
        return
    else:
        data["caveat"] = f"{data.get('caveat') or ''} Now at 31.5 tok/s."  # an orphan number
    victim.write_text(canonical(data), "utf-8")


def test_cached_validation_equals_fresh_validation_after_random_edits(clone: tuple[Path, Any], tmp_path: Path) -> None:
    root = tmp_path / "registry"
    shutil.copytree(clone[0], root, symlinks=True)
    validate(root, PACK)  # fills the cache
    rnd = random.Random(18)
    seen: set[str] = set()
    for kind in [*EDITS, *rnd.choices(EDITS, k=3)]:
        _edit(root, rnd, kind)
        _registry, cached = validate(root, PACK)
        _registry, fresh = validate(root, PACK, use_cache=False)
        as_json = [f.model_dump(mode="json") for f in cached.findings]
        assert as_json == [f.model_dump(mode="json") for f in fresh.findings], kind
        assert (cached.records, cached.files) == (fresh.records, fresh.files)
        seen.update(f.code for f in fresh.findings if not f.baselined)
    # The edits did reach other units: these findings sit in files the edits did not touch.
    assert {"dangling-reference", "duplicate-id", "evidence-hash-mismatch", "orphan-number"} <= seen
    # A commit's validation (the base of `--base`, `catalog --as-of`) reuses the working tree's cached units and
    # stores nothing: the same findings as afresh, for the edited commit and the clean one before it.
    first = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    commit_all(root)
    validate(root, PACK)
    stored = {p: p.read_bytes() for p in (root / CACHE_DIR).glob("*.json")}
    for rev in ("HEAD", first):
        cached_rev = validate(root, PACK, rev=rev)[1].findings
        assert cached_rev == validate(root, PACK, rev=rev, use_cache=False)[1].findings, rev
    assert {p: p.read_bytes() for p in (root / CACHE_DIR).glob("*.json")} == stored
    _edit(root, rnd, "sample")
    cached = validate(root, PACK, base=first)[1]
    fresh = validate(root, PACK, base=first, use_cache=False)[1]
    assert [f.model_dump(mode="json") for f in cached.findings] == [f.model_dump(mode="json") for f in fresh.findings]
    assert any(f.code == "history-rewrite" for f in fresh.findings)
