"""Plain helpers shared by the tests: the fixture registry (its records and ``Reg``), running the CLI as a user
does, registries for importers, copies of the real records, and the comparison registry. Fixtures are in
conftest.py."""

from __future__ import annotations

import copy
import gzip
import hashlib
import html
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

from evreg.check import rules
from evreg.check.pipeline import validate
from evreg.core.evidence import TEXT_NUMBER, text_lines
from evreg.core.findings import Finding
from evreg.core.jsonio import canonical
from evreg.core.vocab import model_of_repository
from evreg.site import compare
from evreg.store import load

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / "tests" / "data"  # copies of ../shared/data, so tests are self-contained
LAB_MANIFEST = SHARED / "qwen-27b.json"
F = "packets/fam"
EVIDENCE = f"{F}/pkt/evidence/run.json"
EVIDENCE_BYTES = b'{"decode_tok_s": [30.21, 30.25]}\n'
REV_A, REV_B = "rev-a.1", "rev-b.2"
QWEN38_COMMIT, QWEN36_COMMIT = "1d4bf0f2ff6012fd82039f2fa52739d0dd7c60c0", "6a9e13bd6fc8f0983b9b99948120bc37f49c13e9"
"""The fixture's revisions are of two canonical models (registry/evreg/vocab/models.json) at their known commits."""

# -- the fixture registry: a small but complete registry in a real git repository --------------------------------------


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
                "model": "qwen3.8-27b",
                "repository": "Qwen/Qwen3.8-27B",
                "revision": QWEN38_COMMIT,
                "quantized_artifacts": [
                    {
                        "id": "art-a",
                        "label": "INT4 A",
                        "quantization": "INT4",
                        "repository": "Inferact/Qwen3.8-27B-NVFP4",
                        "revision": "b" * 40,
                        "evidence": EVIDENCE,
                    }
                ],
            },
            {
                "id": REV_B,
                "model": "qwen3.6-27b",
                "repository": "Qwen/Qwen3.6-27B",
                "revision": QWEN36_COMMIT,
                "quantized_artifacts": [
                    {
                        "id": "art-b",
                        "label": "INT4 B",
                        "quantization": "INT4",
                        "repository": "unsloth/Qwen3.6-27B-GGUF",
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


def only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def expect(findings: list[Any], code: str, file: str, pointer: str) -> None:
    hits = [(f.file, f.pointer) for f in only(findings, code)]
    assert (file, pointer) in hits, [(f.code, f.file, f.pointer, f.message) for f in findings]


# -- the command line, as users run it ---------------------------------------------------------------------------------


def evreg(*args: str, cwd: Path | None = None, process: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user does, in ``cwd``: in this process through ``evreg.cli.main.main`` (what the
    console script runs, so exit codes and error handling are the user's), or, with
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


# -- registries for importers ------------------------------------------------------------------------------------------


def one_packet_registry(
    root: Path,
    packet: str = "pkt",
    *,
    repository: str,
    quantization: str,
    runtime: str | None,
    hardware: str,
    artifact: str | None = None,
    commit: str | None = None,
    cards: int = 1,
) -> str:
    """A registry with one family (one weight revision, an artifact when ``artifact`` names its repository) and
    one packet, committed; returns FAMILY/PACKET."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "schema").exists():
        shutil.copytree(REPO / "schema", root / "schema")
    fam = root / "packets/fam"
    fam.mkdir(parents=True, exist_ok=True)
    rev: dict[str, Any] = {"id": "rev-1", "repository": repository, "revision_status": "not captured"}
    if commit:
        rev = {"id": "rev-1", "repository": repository, "revision": commit}
    if known := model_of_repository(repository):  # as `evreg new family` names it
        rev["model"] = known[0]
    if artifact:
        rev["quantized_artifacts"] = [
            {
                "id": "art",
                "label": quantization,
                "quantization": quantization,
                "repository": artifact,
                "revision_status": "not captured",
                "evidence": f"https://huggingface.co/{artifact}",
            }
        ]
    family = {"kind": "family", "id": "fam", "name": "Fixture", "weight_revisions": [rev]}
    (fam / "family.json").write_text(json.dumps(family))
    data: dict[str, Any] = {"kind": "packet", "id": packet, "revision": "rev-1", "quantization": quantization}
    data |= {"artifact_id": "art"} if artifact else {}
    data |= {"runtime": runtime} if runtime else {}
    data |= {"hardware": hardware, "cards": cards}
    (fam / packet).mkdir(exist_ok=True)
    (fam / packet / "packet.json").write_text(json.dumps(data))
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Contributor")
        cw.set_value("user", "email", "c@example.org")
    repo.git.add("-A")
    repo.index.commit("registry")
    return f"fam/{packet}"


def value_at(raw: bytes, locator: str) -> Any:
    """What a locator points at, read independently of the validator."""
    if locator.startswith("line:"):
        _, n, *k = locator.split(":")
        numbers = TEXT_NUMBER.findall(text_lines(raw)[int(n) - 1])
        assert k or len(numbers) == 1
        return float(numbers[int(k[0]) - 1 if k else 0])
    node: Any = json.loads(raw)
    for token in locator.strip("/").split("/"):
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


# -- a copy of the committed registry in a new git repository ----------------------------------------------------------

Q = "packets/qwen-27b"  # the family a Lab copy's records are looked up in


class Lab(Reg):
    """A copy of the committed registry (the real lab data) in a new git repository."""

    def __init__(self, root: Path) -> None:
        shutil.copytree(REPO / "packets", root / "packets")
        shutil.copytree(REPO / "schema", root / "schema")
        self.root = root
        self.repo = git.Repo.init(root)
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "Lab")
            cw.set_value("user", "email", "lab@example.org")

    def find(self, record_id: str) -> str:
        [path] = [p.relative_to(self.root).as_posix() for p in (self.root / Q).rglob(f"{record_id}.json")]
        return path

    def blocking(self, base: str | None = None) -> list[Any]:
        _registry, report = validate(self.root, rules.discover(), base=base, use_cache=False)
        return [f for f in report.findings if not f.baselined]


# -- records the attacks on a copy of the real records (the `real` fixture) edit ---------------------------------------

Q35 = "packets/qwen-35b"
Q35_PACKET_DIR = f"{Q35}/qwen36-35b-quark-int8-b70-result"
Q35_PACKET = f"{Q35_PACKET_DIR}/packet.json"
Q35_STRICT = f"{Q35_PACKET_DIR}/measurements/qwen35-quark-tp4-strict-current.json"
Q38 = "packets/qwen3-8-27b"
Q38_NVFP4 = f"{Q38}/rtx5090-inferact-qwen3-8-27b-nvfp4"
Q38_DENSE = f"{Q38_NVFP4}/measurements/qwen38-dense-default.json"
CONTRIBUTING = "site/contributing.md"
"""Records and a page of the real registry that attacks edit: a packet with a strict run (qwen-35b), a run whose
evidence is a run log (qwen3-8-27b), the contributing guide."""


def blocking(root: Path, base: bool = False) -> list[Finding]:
    """What validation reports beyond the reviewed baseline (with the history rules against HEAD when ``base``)."""
    return validate(root, use_cache=False, base="HEAD" if base else None)[1].blocking


def edit_json(root: Path, path: str, fn: Callable[[Any], Any]) -> None:
    data = json.loads((root / path).read_text("utf-8"))
    fn(data)
    (root / path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


def copy_run(root: Path, src: str, folder: str, new_id: str, fn: Callable[[Any], Any]) -> str:
    """A copy of the run at ``src`` filed in ``folder`` under ``new_id``, edited by ``fn``; its path."""
    data = json.loads((root / src).read_text("utf-8"))
    data["id"] = new_id
    fn(data)
    path = f"{folder}/{new_id}.json"
    (root / path).write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    return path


def has(findings: list[Finding], code: str, file: str) -> bool:
    return any(f.code == code and f.file == file for f in findings)


# -- site builds -------------------------------------------------------------------------------------------------------


def init_site(reg: Reg) -> None:
    """The fixture registry plus what `evreg build` needs (mkdocs.yml and site/ from `evreg init`)."""
    assert evreg("init", str(reg.root)).returncode == 0
    reg.commit("init site")


def validate_then_build(reg: Reg, tmp_path: Path) -> tuple[list[Finding], subprocess.CompletedProcess[str]]:
    """The errors validation reports on the fixture registry (with a site), and the build into ``tmp_path/out``."""
    init_site(reg)
    errors = [f for f in reg.findings() if f.severity == "error"]
    built = evreg("build", "--out", str(tmp_path / "out"), cwd=reg.root)
    return errors, built


# -- comparison pages (acceptance/test_compare_pages.py, acceptance/test_browser.py) -----------------------------------

RESULTS_PAGE = """# Results

| Model | Decode (tok/s) | Cards |
|---|---:|---:|
| A | 52.3 | 4 |
| B | {{ m:run-1.decode_tok_s[0] }} | 1 |

    an indented block: 52.3 tok/s is code

<pre>
52.3 tok/s in a pre block is code
</pre>
"""
"""A hand-written page with a table whose header gives its column a unit, and figures in code."""

WORKLOAD = "12 cold prompts, 512 output tokens"  # run-1's
EXTRA_RUNS: dict[str, dict[str, Any]] = {
    # id: fields over run-1 (decode [30.21, 30.25]), each in run-1's workload unless it says otherwise
    "run-2": {"metrics": {"decode_tok_s": [30.22, 30.24, 30.3]}},  # its spread reaches run-1's median: tied
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


def with_data_rows(page: str, folder: Path) -> str:
    """The page as its script makes it: the rows of its data file (if any) added to their workloads, built the way
    ``evreg-compare.js`` builds them."""
    data_file = folder / compare.ROWS_FILE
    if not data_file.exists():
        return page
    data = json.loads(gzip.decompress(data_file.read_bytes()))
    parts = page.split("</tbody>")
    assert len(parts) - 1 == len(data["tiers"])  # one list per workload, in page order
    for n, rows in enumerate(data["tiers"]):
        for mid, home, cls, low, high, template, numbers, cells in rows:
            tds = [data["cells"][i] for i in cells]
            tds.insert(1, compare.filled(data["cells"][template], numbers).replace(compare.MID, mid))
            made = "".join(tds).replace(compare.HOME, home).replace(compare.BASE, data["base"])
            parts[n] += (
                f'<tr class="evreg-row evreg-{cls}" data-measurement="{html.escape(mid)}" data-low="{low}" '
                f'data-high="{high}">{made}</tr>'
            )
    return "</tbody>".join(parts)


WIDE_RUNS = 60
"""Runs added in run-1's workload for a comparison wider than the rows a page holds (``compare.INLINE_ROWS``): single
samples of 10.0, 10.1, ... tok/s, all ranked below the others, so the slowest are in the page's data file."""
WIDE_VIEWS, WIDE_MATRICES = 42, 61
"""Views and coverage views added to the family (beside its own one of each): more than a family page draws
(``site.FAMILY_CHARTS``, ``site.FAMILY_MATRICES``). View ``view-NN`` plots run ``run-wNN``."""


# -- scans that must be linear -----------------------------------------------------------------------------------------


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


# -- external evidence held as copies (``evreg hold``) ----------------------------------------------------------------

LAB_REF = "lab:data/run-1.json"
"""run-1's evidence once it cites the lab's file (``cite_external``)."""
HELD = f"{F}/evidence/lab/data/run-1.json"
LAB_PINNED = "c" * 40
HELD_BYTES = b'{"runs": [{"decode_tok_s": [30.21, 30.25]}]}\n'


def cite_external(reg: Reg, pinned: str | None = LAB_PINNED) -> None:
    """The family declares the lab's repository as a source (at ``pinned``); run-1 cites its file there instead of a
    local one; committed."""
    reg.edit(f"{F}/family.json", lambda d: d.update(sources={"lab": {"repository": "https://github.com/x/lab"}}))
    if pinned:
        reg.edit(f"{F}/family.json", lambda d: d["sources"]["lab"].update(commit=pinned))

    def cite(d: dict[str, Any]) -> None:
        d["evidence"] = LAB_REF
        d.pop("evidence_sha256")

    reg.edit(f"{F}/pkt/measurements/run-1.json", cite)
    reg.commit("cite the lab's file")


def hold_copy(
    reg: Reg, tmp_path: Path, data: bytes = HELD_BYTES, commit: str = LAB_PINNED, name: str = "copy.json"
) -> list[str]:
    """``evreg hold`` of ``data`` as the family's copy of the lab's file, read at ``commit``; the paths written."""
    from evreg.app import records

    copy = tmp_path / name
    copy.write_bytes(data)
    return records.hold(reg.root, "fam", LAB_REF, copy, commit=commit, read="a clone of the lab's repository")
