"""External evidence (``SOURCE:path``) checked against a local clone of its source: a real git repository of the
source, a registry citing it at a pinned commit, and ``evreg validate --source NAME=DIR``."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from helpers import evreg, one_packet_registry


def _commit(repo: git.Repo, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        target = Path(repo.working_tree_dir or "") / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    repo.git.add("-A")
    return repo.index.commit(message).hexsha


@pytest.fixture
def lab(tmp_path: Path) -> tuple[Path, str, str]:
    """The lab's own repository: data/run.json at a first commit (decode 52.3), changed at a second (53.1)."""
    root = tmp_path / "lab"
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Lab")
        cw.set_value("user", "email", "lab@example.org")
    first = _commit(repo, {"data/run.json": json.dumps({"runs": [{"decode_tok_s": 52.3}]})}, "first run")
    second = _commit(repo, {"data/run.json": json.dumps({"runs": [{"decode_tok_s": 53.1}]})}, "rerun")
    return root, first, second


def _registry(tmp_path: Path, commit: str | None, evidence: str = "lab:data/run.json") -> Path:
    root = tmp_path / "reg"
    one_packet_registry(root, repository="org/model", quantization="BF16", runtime="vLLM 0.9.1", hardware="H100")
    family = json.loads((root / "packets/fam/family.json").read_text())
    family["sources"] = {"lab": {"repository": "https://example.org/lab", **({"commit": commit} if commit else {})}}
    (root / "packets/fam/family.json").write_text(json.dumps(family))
    run = {
        "kind": "run-measurement",
        "id": "run-1",
        "revision": "rev-1",
        "quantization": "BF16",
        "runtime": "vLLM 0.9.1",
        "hardware": "H100",
        "cards": 1,
        "state": "lab-measured",
        "workload": "one stream",
        "metrics": {"decode_tok_s": [52.3]},
        "evidence": evidence,
        "evidence_locators": {"decode_tok_s[0]": "/runs/0/decode_tok_s"},
    }
    (root / "packets/fam/pkt/measurements").mkdir(parents=True)
    (root / "packets/fam/pkt/measurements/run-1.json").write_text(json.dumps(run))
    return root


def _findings(result: object) -> list[dict[str, str]]:
    return json.loads(result.stdout)["findings"]  # type: ignore[attr-defined]


def test_a_reference_is_checked_against_the_source_at_its_pinned_commit(tmp_path: Path, lab: tuple) -> None:
    clone, first, _ = lab
    root = _registry(tmp_path, first)
    unchecked = evreg("validate", cwd=root)  # a locator nobody re-reads is no receipt
    assert unchecked.returncode == 1 and "cannot be re-read here" in unchecked.stdout
    assert "--source lab=DIR" in unchecked.stdout
    checked = evreg("validate", "--source", f"lab={clone}", cwd=root)
    assert checked.returncode == 0, checked.stdout
    assert "(1 checked against a local clone of their source)" in checked.stdout
    assert evreg("validate", cwd=root).returncode == 1  # and without the clone, unchecked again (no cache carries it)


def test_a_value_the_pinned_file_does_not_hold_is_a_finding(tmp_path: Path, lab: tuple) -> None:
    clone, _, second = lab  # pinned at the rerun, which says 53.1: the record's 52.3 is not there
    root = _registry(tmp_path, second)
    result = evreg("validate", "--source", f"lab={clone}", "--format", "json", cwd=root)
    assert result.returncode == 1
    [f] = [f for f in _findings(result) if f["code"] == "evidence-value-mismatch"]
    assert "52.3" in f["message"] and "53.1" in f["message"]


def test_a_path_the_source_does_not_hold_and_an_unpinned_source_are_findings(tmp_path: Path, lab: tuple) -> None:
    clone, first, _ = lab
    root = _registry(tmp_path / "a", first, evidence="lab:data/missing.json")
    result = evreg("validate", "--source", f"lab={clone}", "--format", "json", cwd=root)
    [f] = [f for f in _findings(result) if f["code"] == "external-evidence-missing"]
    assert result.returncode == 1 and f["pointer"] == "/evidence" and first[:12] in f["message"]
    root = _registry(tmp_path / "b", None)
    result = evreg("validate", "--source", f"lab={clone}", "--format", "json", cwd=root)
    [f] = [f for f in _findings(result) if f["code"] == "external-evidence-missing"]
    assert "pins no commit" in f["message"]


def test_a_source_that_is_no_git_repository_is_refused(tmp_path: Path, lab: tuple) -> None:
    root = _registry(tmp_path, lab[1])
    result = evreg("validate", "--source", f"lab={tmp_path}", cwd=root)
    assert result.returncode == 2 and "not a git repository" in result.stderr
    assert evreg("validate", "--source", "lab", cwd=root).returncode == 2
