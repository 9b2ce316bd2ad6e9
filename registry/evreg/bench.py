"""Synthetic registries that look like the real data, and the benchmark that
measures validation, incremental validation, the catalog and queries against
the floor of just reading and parsing the same files (DESIGN §9).

Run: ``evreg bench --sizes 1000,10000,100000`` (prints JSON).
"""

from __future__ import annotations

import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from evreg.jsonio import canonical

MEASUREMENTS_PER_FAMILY = 1000
PACKETS_PER_FAMILY = 20


def _write(root: Path, rel: str, data: Any) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(canonical(data), "utf-8")


def generate(root: Path, measurements: int, seed: int = 7) -> dict[str, int]:
    """Write a registry of about ``measurements`` measurements under ``root`` and commit it."""
    rnd = random.Random(seed)
    families = max(1, measurements // MEASUREMENTS_PER_FAMILY)
    per_family = measurements // families
    (root / "packets").mkdir(parents=True, exist_ok=True)
    written = 0
    for f in range(families):
        fam = f"fam-{f:04d}"
        revs = [f"model-{f}.{r}" for r in range(2)]
        arts = {f"{fam}-art-{r}-{a}": (revs[r], q) for r in range(2) for a, q in enumerate(("INT4", "FP8"))}
        ev = f"packets/{fam}/{fam}-p-0/evidence/run.json"
        _write(root, f"packets/{fam}/family.json", _family(f, fam, revs, arts, ev))
        (root / ev).parent.mkdir(parents=True, exist_ok=True)
        (root / ev).write_text('{"samples": [1, 2, 3]}\n')
        family_art = list(arts.items())
        for p in range(PACKETS_PER_FAMILY):
            _write(root, f"packets/{fam}/{fam}-p-{p}/packet.json", _packet(fam, p, family_art, ev))
        for m in range(per_family):
            p = m % PACKETS_PER_FAMILY
            rec = _measurement(rnd, fam, m, family_art[p % len(family_art)], ev)
            _write(root, f"packets/{fam}/{fam}-p-{p}/measurements/{rec['id']}.json", rec)
            written += 1
        charted = [m for m in range(1, per_family) if m % 5 and m % 17][:10]
        for v in range(5):
            _write(root, f"packets/{fam}/views/view-{v}.json", _view(fam, v, charted))
    shutil.copytree(Path(__file__).resolve().parents[2] / "schema", root / "schema", dirs_exist_ok=True)
    _commit(root)
    return {"families": families, "measurements": written}


def _family(f: int, fam: str, revs: list[str], arts: dict[str, tuple[str, str]], ev: str) -> dict[str, Any]:
    def artifacts(r: str, i: int) -> list[dict[str, Any]]:
        return [
            {
                "id": aid,
                "label": q,
                "quantization": q,
                "repository": f"org/{aid}",
                "revision": f"{i + 7:040x}",
                "evidence": ev,
            }
            for aid, (rr, q) in arts.items()
            if rr == r
        ]

    return {
        "kind": "family",
        "id": fam,
        "name": f"Synthetic family {f}",
        "summary": "A generated family.",
        "primary_packet_id": f"{fam}-p-0",
        "weight_revisions": [
            {"id": r, "repository": f"org/{r}", "revision": f"{i:040x}", "quantized_artifacts": artifacts(r, i)}
            for i, r in enumerate(revs)
        ],
    }


def _packet(fam: str, p: int, family_art: list[tuple[str, tuple[str, str]]], ev: str) -> dict[str, Any]:
    aid, (rev, quant) = family_art[p % len(family_art)]
    return {
        "kind": "packet",
        "id": f"{fam}-p-{p}",
        "revision": rev,
        "artifact_id": aid,
        "quantization": quant,
        "runtime": "vLLM 0.9",
        "cards": 1 + p % 4,
        "status": "candidate",
        "label": f"Packet {p}",
        "summary": f"Decode {{{{ m:{fam}-m-{p * 5 + 1}.decode_tok_s[0] }}}} at TP{1 + p % 4}.",
        "manifest": ev,
    }


def _measurement(
    rnd: random.Random, fam: str, m: int, artifact: tuple[str, tuple[str, str]], ev: str
) -> dict[str, Any]:
    """Four in five are runs with repeat samples, the fifth a context sweep; one in 17 is screened."""
    p = m % PACKETS_PER_FAMILY
    aid, (rev, quant) = artifact
    base = {
        "id": f"{fam}-m-{m}",
        "state": "lab-measured" if m % 17 else "lab-screened",
        "revision": rev,
        "artifact_id": aid,
        "quantization": quant,
        "runtime": "vLLM 0.9",
        "runtime_family": "vLLM",
        "config": {"tp": 1 + p % 4, "mtp": m % 3, "kv": "f16"},
        "workload": "12 cold prompts, 512 output tokens",
        "evidence": ev,
        "quality": "objective battery pass",
        "caveat": f"See {{{{ m:{fam}-m-{m}.decode_tok_s[0] }}}}.",
    }
    if m % 5:
        return {
            "kind": "run-measurement",
            **base,
            "metrics": {
                "decode_tok_s": [round(rnd.uniform(20, 90), 4) for _ in range(3)],
                "ttft_ms": [round(rnd.uniform(100, 400), 2) for _ in range(3)],
            },
        }
    return {
        "kind": "series-measurement",
        **base,
        "axis": "active_context_tokens",
        "caveat": f"At 0: {{{{ m:{fam}-m-{m}.decode_tok_s@0 }}}}.",
        "points": [
            {"x": x, "decode_tok_s": round(rnd.uniform(20, 90), 4), "samples": 5}
            for x in (0, 2048, 4096, 8192, 16384, 32768)
        ],
    }


def _view(fam: str, v: int, charted: list[int]) -> dict[str, Any]:
    return {
        "kind": "view",
        "id": f"view-{v}",
        "title": f"View {v}",
        "metrics": ["decode_tok_s"],
        "discrete": True,
        "series": [{"label": "s", "measurement_ids": [f"{fam}-m-{charted[2 * v]}", f"{fam}-m-{charted[2 * v + 1]}"]}],
    }


def _commit(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    who = ["-c", "user.name=bench", "-c", "user.email=bench@example.org", "-c", "gc.auto=0"]
    subprocess.run(["git", *who, "commit", "-qm", "synthetic registry"], cwd=root, check=True)
    # Packed now, while generating: left to itself, git packs 100,000 loose objects in a
    # background process after the commit, which then competes with whatever is timed.
    subprocess.run(["git", "gc", "--quiet"], cwd=root, check=True)


def _floor(root: Path) -> float:
    start = time.perf_counter()
    for dirpath, _dirs, files in os.walk(root / "packets"):
        for name in files:
            if name.endswith(".json"):
                orjson.loads(Path(dirpath, name).read_bytes())
    return time.perf_counter() - start


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def measure(root: Path) -> dict[str, Any]:
    """Time every phase on the registry at ``root`` (run in a fresh process for a clean peak memory)."""
    from evreg import workers

    floor = min(_floor(root) for _ in range(2))
    os.sync()  # reading updates access times; their write-back is not validation's cost
    validation, findings = _validation_phase(root)
    db = root / "build" / "bench.duckdb"
    catalog_phase = _catalog_phase(root, findings, db)
    queries = _query_phase(db)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest worker process
    loaded_s = _catalog_from_loaded(root, findings, db)
    return {
        "floor_s": round(floor, 3),
        "full_validation_s": validation["full_validation_s"],
        "full_ratio": round(validation["full_validation_s"] / floor, 2),
        **{k: v for k, v in validation.items() if k != "full_validation_s"},
        "incremental_pct_of_full": round(
            100 * validation["incremental_validation_s"] / validation["full_validation_s"], 1
        ),
        "catalog_build_s": catalog_phase["catalog_build_s"],
        "catalog_ratio": round(catalog_phase["catalog_build_s"] / floor, 2),
        "catalog_build_runs_s": catalog_phase["catalog_build_runs_s"],
        "catalog_build_from_loaded_s": round(loaded_s, 3),
        "catalog_from_loaded_ratio": round(loaded_s / floor, 2),
        "query_p50_ms": queries,
        "peak_memory_mib": round(peak, 1),
        "worker_peak_memory_mib": round(worker_peak, 1),
        "peak_memory_bound_mib": round(peak + workers.count_for_files(10**9) * worker_peak, 1),
    }


def _validation_phase(root: Path) -> tuple[dict[str, Any], list[Any]]:
    """Full validation (median of three, no cache), then with the cache after a change to one measurement
    (median of five); and the findings of the last run, for the catalog."""
    from evreg import rules
    from evreg.pipeline import validate

    pack = rules.discover()

    def validated(use_cache: bool = True) -> tuple[float, Any]:
        """Seconds and report of one validation; its registry is dropped before the next run,
        so no run forks its workers from a process that still holds the previous run's records."""
        seconds, (_registry, report) = _timed(lambda: validate(root, pack, use_cache=use_cache))
        del _registry
        gc.collect()
        assert not report.errors(), report.summary()
        return seconds, report

    # Medians of several runs: the VM's neighbours make single runs vary by a third.
    fulls = [validated(use_cache=False)[0] for _ in range(3)]
    filling, report = validated()  # a cold cache: validates everything, stores it
    victim = next((root / "packets").rglob("*-m-3.json"))
    data = json.loads(victim.read_text())
    runs = []
    for i in range(5):  # each run after a new change to one measurement
        data["quality"] = f"objective battery pass; rerun {i}"
        victim.write_text(canonical(data))
        seconds, changed = validated()
        assert changed.records == report.records
        runs.append(seconds)
    return {
        "full_validation_s": round(statistics.median(fulls), 3),
        "full_validation_runs_s": [round(t, 3) for t in fulls],
        "validation_filling_cache_s": round(filling, 3),
        "incremental_validation_s": round(statistics.median(runs), 3),
        "incremental_runs_s": [round(t, 3) for t in runs],
    }, changed.findings


def _catalog_phase(root: Path, findings: list[Any], db: Path) -> dict[str, Any]:
    """The catalog built from a registry whose records are unread (the build reads them, in its workers)."""
    from evreg import catalog
    from evreg.store import load

    def built() -> float:
        registry = load(root)
        start = time.perf_counter()
        catalog.build(registry, findings, {}, db, {"schema_version": "1"})
        seconds = time.perf_counter() - start
        del registry
        gc.collect()
        return seconds

    builds = [built() for _ in range(3)]
    return {
        "catalog_build_s": round(statistics.median(builds), 3),
        "catalog_build_runs_s": [round(t, 3) for t in builds],
    }


QUERIES = {
    "headline per packet": "SELECT * FROM headlines",
    "decode samples of TP2 INT4": "SELECT m.id, s.value FROM measurements m JOIN samples s ON s.measurement = m.id "
    "WHERE m.tp = 2 AND m.quantization = 'INT4' AND s.metric = 'decode_tok_s'",
    "grade distribution": "SELECT * FROM grade_distribution",
}


def _query_phase(db: Path) -> dict[str, float]:
    """Milliseconds per query, the median of 20 runs each."""
    from evreg import catalog

    out = {}
    for name, sql in QUERIES.items():
        times = [_timed(lambda sql=sql: catalog.query(db, sql))[0] for _ in range(20)]
        out[name] = round(statistics.median(times) * 1000, 2)
    return out


def _catalog_from_loaded(root: Path, findings: list[Any], db: Path) -> float:
    """Last, as it holds every record in this process: the build from records read beforehand (what the
    build costs beyond reading; the previous definition of this benchmark's catalog phase)."""
    from evreg import catalog
    from evreg.store import load

    loaded = load(root)
    for doc in loaded.documents:
        _ = doc.refs
    return _timed(lambda: catalog.build(loaded, findings, {}, db, {"schema_version": "1"}))[0]


ADVERSARIAL = {
    "unclosed braces": "{{ ",
    "unclosed citations": "{{ m:run-1.decode_tok_s[",
    "many bad citations": "{{x}}",
    "many figures": "1.5 tok/s ",
    "long digit run": "7",
    "decimals without units": "1.5 ",
    "nested brackets": "[[((",
    "long whitespace after a metric word": " ",
    "escaped quotes": '\\"',
    "closing braces": "}}",
}
"""Hostile prose patterns: each fills one field of a record up to the size limit."""


def adversarial_text(pattern: str, size: int) -> str:
    """``pattern`` repeated to ``size`` bytes as written in a JSON string."""
    return ("decode" if pattern == " " else "") + pattern * (size // (len(json.dumps(pattern)) - 2))


def adversarial() -> dict[str, float]:
    """Seconds to validate a small registry in which one record's caveat is a pattern of
    ``ADVERSARIAL`` filling the record to just under the size limit; and the worst case."""
    from evreg import rules
    from evreg.jsonio import MAX_RECORD_BYTES
    from evreg.store import load

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="evreg-bench-adversarial-") as tmp:
        root = Path(tmp)
        generate(root, 100)
        target = next((root / "packets").rglob("measurements/*.json"))
        record = orjson.loads(target.read_bytes())
        for name, pattern in ADVERSARIAL.items():
            record["caveat"] = adversarial_text(pattern, MAX_RECORD_BYTES - 4096)
            target.write_text(canonical(record), "utf-8")
            seconds, _ = _timed(lambda: rules.run(load(root), rules.discover()))
            out[name] = round(seconds, 2)
    worst = max(out, key=out.__getitem__)
    return {**out, "worst": out[worst], "worst_pattern": worst}  # type: ignore[dict-item]


def run(sizes: list[int], keep: Path | None = None) -> list[dict[str, Any]]:
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"evreg-bench-{n}-") as tmp:
            root = (keep / f"registry-{n}") if keep else Path(tmp)
            gen_s, info = _timed(lambda root=root, n=n: generate(root, n))
            os.sync()  # the generator's writes are flushed before anything is timed
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import json, sys; from pathlib import Path; "
                    "from evreg.bench import measure; print(json.dumps(measure(Path(sys.argv[1]))))",
                    str(root),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode:
                raise RuntimeError(out.stderr[-2000:])
            results.append(
                {
                    "measurements": info["measurements"],
                    "families": info["families"],
                    "generate_s": round(gen_s, 1),
                    **json.loads(out.stdout),
                }
            )
    return results
