"""Shared fixtures: a small but complete registry in a real git repository."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest

from evreg.check import rules
from evreg.core.findings import Finding
from evreg.core.jsonio import canonical
from evreg.store import load

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / "tests" / "data"  # copies of ../shared/data, so tests are self-contained
LAB_MANIFEST = SHARED / "qwen-27b.json"
F = "packets/fam"
EVIDENCE = f"{F}/pkt/evidence/run.json"
EVIDENCE_BYTES = b'{"decode_tok_s": [30.21, 30.25]}\n'

REV_A, REV_B = "rev-a.1", "rev-b.2"


def family() -> dict[str, Any]:
    return {
        "kind": "family",
        "id": "fam",
        "name": "Fixture family",
        "summary": "A tiny family for tests.",
        "primary_packet_id": "pkt",
        "weight_revisions": [
            {
                "id": REV_A,
                "repository": "org/model-a",
                "revision": "a" * 40,
                "quantized_artifacts": [
                    {
                        "id": "art-a",
                        "label": "INT4 A",
                        "quantization": "INT4",
                        "repository": "org/a-int4",
                        "revision": "b" * 40,
                        "evidence": EVIDENCE,
                    }
                ],
            },
            {
                "id": REV_B,
                "repository": "org/model-b",
                "revision": "c" * 40,
                "quantized_artifacts": [
                    {
                        "id": "art-b",
                        "label": "INT4 B",
                        "quantization": "INT4",
                        "repository": "org/b-int4",
                        "revision_status": "not captured",
                        "evidence": EVIDENCE,
                    }
                ],
            },
        ],
        "featured_results": [
            {
                "role": "hero",
                "label": "A INT4 TP1",
                "quality_label": "full gate",
                "measurement_id": "run-1",
                "metric": "decode_tok_s",
                "sample_index": 0,
            }
        ],
    }


def packet() -> dict[str, Any]:
    return {
        "kind": "packet",
        "id": "pkt",
        "revision": REV_A,
        "artifact_id": "art-a",
        "quantization": "INT4",
        "runtime": "vLLM 0.9",
        "cards": 1,
        "status": "candidate",
        "manifest": EVIDENCE,
    }


def run() -> dict[str, Any]:
    return {
        "kind": "run-measurement",
        "id": "run-1",
        "state": "lab-measured",
        "revision": REV_A,
        "artifact_id": "art-a",
        "quantization": "INT4",
        "runtime": "vLLM 0.9",
        "config": {"tp": 1, "mtp": 0, "natural_eos": True},
        "workload": "12 cold prompts, 512 output tokens",
        "metrics": {"decode_tok_s": [30.21, 30.25]},
        "evidence": EVIDENCE,
        "evidence_sha256": {EVIDENCE: hashlib.sha256(EVIDENCE_BYTES).hexdigest()},
        "lab_field": {"kept": True},
    }


def series() -> dict[str, Any]:
    return {
        "kind": "series-measurement",
        "id": "sweep-1",
        "state": "lab-measured",
        "revision": REV_A,
        "artifact_id": "art-a",
        "quantization": "INT4",
        "runtime": "vLLM 0.9",
        "config": {"tp": 1},
        "workload": "context sweep",
        "axis": "active_context_tokens",
        "points": [{"x": 0, "decode_tok_s": 30.1}, {"x": 8192, "decode_tok_s": 27.5}],
        "evidence": EVIDENCE,
    }


def view() -> dict[str, Any]:
    return {
        "kind": "view",
        "id": "tp-view",
        "title": "Decode by TP",
        "metrics": ["decode_tok_s"],
        "series": [{"label": "A", "measurement_ids": ["run-1"], "x_from": "config.tp"}],
    }


def coverage() -> dict[str, Any]:
    return {
        "kind": "coverage-view",
        "id": "matrix",
        "label": "MTP x TP",
        "rows": [0],
        "columns": [1, 2],
        "fixed_selectors": {"revision": REV_A, "artifact_id": "art-a", "natural_eos": True},
        "cells": {
            "0:1": {"state": "lab-measured", "evidence_id": "run-1", "packet_id": "pkt"},
            "0:2": {"state": "missing", "label": "no measured route"},
        },
    }


def closure() -> dict[str, Any]:
    return {
        "kind": "closure",
        "id": "closure-1",
        "state": "closed",
        "selectors": {"revision": REV_B, "tp": [2, 4]},
        "artifact_id": "art-b",
        "reason": "Stopped: no kernel support.",
        "evidence": EVIDENCE,
    }


RECORDS: dict[str, Callable[[], dict[str, Any]]] = {
    f"{F}/family.json": family,
    f"{F}/pkt/packet.json": packet,
    f"{F}/pkt/measurements/run-1.json": run,
    f"{F}/measurements/sweep-1.json": series,
    f"{F}/views/tp-view.json": view,
    f"{F}/coverage/matrix.json": coverage,
    f"{F}/closures/closure-1.json": closure,
}


class Reg:
    """A registry in a temporary git repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = git.Repo.init(root)
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "Test Author")
            cw.set_value("user", "email", "author@example.org")
        shutil.copytree(REPO / "schema", root / "schema")
        (root / EVIDENCE).parent.mkdir(parents=True, exist_ok=True)
        (root / EVIDENCE).write_bytes(EVIDENCE_BYTES)
        for path, make in RECORDS.items():
            self.put(path, make())

    def put(self, path: str, data: Any) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(canonical(data) if isinstance(data, dict | list) else data, "utf-8")
        return target

    def raw(self, path: str, data: bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target

    def read(self, path: str) -> dict[str, Any]:
        return json.loads((self.root / path).read_text("utf-8"))  # type: ignore[no-any-return]

    def edit(self, path: str, fn: Callable[[dict[str, Any]], Any]) -> None:
        data = copy.deepcopy(self.read(path))
        fn(data)
        self.put(path, data)

    def commit(self, message: str = "change") -> str:
        self.repo.git.add("-A")
        self.repo.index.commit(message)
        return self.repo.head.commit.hexsha

    def findings(self, rev: str | None = None) -> list[Finding]:
        return rules.run(load(self.root, rev), rules.discover()).findings

    def codes(self, rev: str | None = None) -> set[str]:
        return {f.code for f in self.findings(rev)}


@pytest.fixture
def reg(tmp_path: Path) -> Reg:
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


def evreg(*args: str, cwd: Path | None = None, process: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user does, in ``cwd``: in this process through ``evreg.cli.main.main`` (the
    console script's entry point, so exit codes and error handling are the user's), or, with
    ``process=True``, as the console script in a subprocess (where the process is the point)."""
    if process:
        # The console script, as users run it: ``python -m`` would put the working
        # directory first on sys.path, where a registry may keep folders of its own.
        return subprocess.run(
            [str(Path(sys.executable).parent / "evreg"), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    from click.testing import CliRunner

    from evreg.cli import main as cli

    before, argv = os.getcwd(), sys.argv
    os.chdir(cwd or before)
    sys.argv = ["evreg", *args]
    code = 0
    try:
        with CliRunner().isolation() as (out, err, _):
            try:
                cli.main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    finally:
        os.chdir(before)
        sys.argv = argv
    return subprocess.CompletedProcess(["evreg", *args], code, stdout, stderr)


def stating(packet: dict[str, Any], given: tuple[str, ...], runtime: bool = False) -> tuple[str, ...]:
    """What a contributor states on an import's command line that a tool's file does not record: the cards and the
    hardware of the packet the run belongs in (a run filed in a packet's folder has the packet's whole scope,
    ``evreg.claims.scope``), and its runtime where the importer takes one (``runtime``), unless ``given`` states
    them."""
    out = list(given)
    if runtime and "--runtime" not in out and isinstance(packet.get("runtime"), str):
        out += ["--runtime", packet["runtime"]]
    if "--cards" not in out and isinstance(packet.get("cards"), int):
        out += ["--cards", str(packet["cards"])]
    if "--hardware" not in out and isinstance(packet.get("hardware"), str):
        out += ["--hardware", packet["hardware"]]
    return tuple(out)


def imports(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``evreg import TOOL FILE --packet FAMILY/PACKET ...`` as a contributor runs it: stating the packet's cards and
    hardware where the command does not (``stating``); other commands as given."""
    if "--packet" not in args:
        return evreg(*args, cwd=cwd)
    from evreg import formats

    spec = args[args.index("--packet") + 1]
    packet = json.loads((cwd / "packets" / spec / "packet.json").read_text("utf-8"))
    importer = formats.load(formats.discover()[args[1]])
    return evreg(*stating(packet, args, any(o.name == "runtime" for o in importer.options)), cwd=cwd)


def only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


@pytest.fixture(scope="session")
def repo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's site, built once per test session with ``evreg build``."""
    out = tmp_path_factory.mktemp("repo-site") / "site"
    result = evreg("build", "--out", str(out), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


# -- comparison pages (tests/test_compare.py, tests/test_browser.py) ----------------------

WORKLOAD = "12 cold prompts, 512 output tokens"  # run-1's, from conftest
EXTRA_RUNS: dict[str, dict[str, Any]] = {
    # id: fields over conftest's run-1 (decode [30.21, 30.25]), each in run-1's workload unless it says otherwise
    "run-2": {"metrics": {"decode_tok_s": [30.24, 30.3]}},  # overlaps run-1: tied
    "run-3": {"metrics": {"decode_tok_s": [29.0]}},  # below both, one sample: rank 3
    "run-q": {"metrics": {"decode_tok_s": [99.0]}, "state": "quarantined", "caveat": "Cache was not zero."},
    "run-s": {"metrics": {"decode_tok_s": [98.0]}, "state": "lab-screened"},
    "run-long": {"metrics": {"decode_tok_s": [5.0]}, "config": {"tp": 1, "active_context_tokens": 100000}},
}


def own_evidence(reg: Reg, mid: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A run's own evidence file, holding its samples (a run's evidence holds what it claims): the fields that cite
    it."""
    path = f"{F}/pkt/evidence/{mid}.json"
    data = (json.dumps(fields["metrics"]) + "\n").encode()
    reg.raw(path, data)
    return {"evidence": path, "evidence_sha256": {path: hashlib.sha256(data).hexdigest()}}


def build_compare_registry(root: Path) -> Reg:
    """The fixture registry with runs to compare: ties, a single sample, unpromotable runs, a longer context."""
    reg = Reg(root)
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    base = reg.read(f"{F}/pkt/measurements/run-1.json")
    for mid, fields in EXTRA_RUNS.items():
        reg.put(f"{F}/pkt/measurements/{mid}.json", {**base, "id": mid, **fields, **own_evidence(reg, mid, fields)})
    reg.commit("runs to compare")
    return reg


WIDE_RUNS = 60
"""Runs added in run-1's workload for a comparison wider than the rows a page holds (``compare.INLINE_ROWS``): single
samples of 10.0, 10.1, ... tok/s, all ranked below the others, so the slowest are in the page's data file."""
WIDE_VIEWS, WIDE_MATRICES = 42, 61
"""Views and coverage views added to the family (beside its own one of each): more than a family page draws
(``site.FAMILY_CHARTS``, ``site.FAMILY_MATRICES``). View ``view-NN`` plots run ``run-wNN``."""


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


# -- copies of the real records (tests/test_h14_attacks.py, tests/test_h14_review2.py) ---------------------------


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


def blocking(root: Path, base: bool = False) -> list[Finding]:
    """What validation reports beyond the reviewed baseline (with the history rules against HEAD when ``base``)."""
    from evreg.check import pipeline

    return pipeline.validate(root, use_cache=False, base="HEAD" if base else None)[1].blocking


def edit_json(root: Path, path: str, fn: Callable[[Any], Any]) -> None:
    data = json.loads((root / path).read_text("utf-8"))
    fn(data)
    (root / path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


def within(fn: Callable[..., Any], *args: Any, seconds: int = 30) -> Any:
    """``fn(*args)``, or a failure when it has not returned after ``seconds`` (a hang guard for scans that must be
    linear, not a timing: each such call takes milliseconds)."""

    def stop(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        return fn(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
