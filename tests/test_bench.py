"""The benchmark runs end to end on a small synthetic registry (nothing here asserts on time)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import evreg
from evreg.bench import ADVERSARIAL


def test_bench_measures_every_phase_on_a_packed_synthetic_registry(tmp_path: Path) -> None:
    result = evreg("bench", "--sizes", "1000", "--keep", str(tmp_path))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    [size] = out["sizes"]
    adversarial = out["adversarial_8mib_record_s"]  # the worst case of a hostile 8 MiB record
    assert set(ADVERSARIAL) < set(adversarial) and adversarial["worst"] == adversarial[adversarial["worst_pattern"]]
    assert (size["measurements"], size["families"]) == (1000, 1)
    assert len(size["full_validation_runs_s"]) == 3 and len(size["catalog_build_runs_s"]) == 3
    assert len(size["incremental_runs_s"]) == 5
    assert size["full_validation_s"] in size["full_validation_runs_s"]  # the median is one of the runs
    assert size["full_ratio"] == pytest.approx(size["full_validation_s"] / size["floor_s"], rel=0.05)  # rounded
    assert set(size["query_p50_ms"]) == {"headline per packet", "decode samples of TP2 INT4", "grade distribution"}
    assert size["peak_memory_mib"] > 0
    # Generated, committed and packed before anything was timed: no loose objects left for a background gc.
    objects = subprocess.run(
        ["git", "count-objects", "-v"], cwd=tmp_path / "registry-1000", capture_output=True, text=True, check=True
    ).stdout
    stats = dict(line.split(": ") for line in objects.splitlines())
    assert stats["count"] == "0" and int(stats["in-pack"]) > 1000
