"""The shipped CI workflows, pre-commit hooks and PR template: they call real commands, the hook
catches what a change breaks anywhere in the registry, and a pull request's report puts what it
introduced first."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evreg.cli.main import cli
from helpers import EVIDENCE, REPO, F, Reg, evreg

BIN = Path(sys.executable).parent


def _evreg_commands(text: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        for m in re.finditer(r"\bevreg\"? ([a-z][^\n|&;>]*)", line):
            words = shlex.split(m.group(1).replace('"$base"', "BASE"))
            out.append(words)
    return out


def _exists(words: list[str]) -> bool:
    group = cli
    for word in words:
        if word.startswith("-"):
            break
        if hasattr(group, "commands") and word in group.commands:
            group = group.commands[word]
        else:
            break
    params = {opt for p in group.params for opt in getattr(p, "opts", [])}
    flags = [w.split("=")[0] for w in words if w.startswith("--")]
    return group is not cli and all(f in params for f in flags)


def test_workflows_are_valid_yaml_and_call_real_commands() -> None:
    workflows = sorted((REPO / ".github/workflows").glob("*.yml"))
    assert {p.name for p in workflows} == {"pull-request.yml", "publish.yml"}
    seen = []
    for path in workflows:
        doc = yaml.safe_load(path.read_text())
        assert doc["jobs"], path
        on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as True
        assert on, path
        for job in doc["jobs"].values():
            for step in job["steps"]:
                assert "uses" in step or "run" in step, (path, step)
                for words in _evreg_commands(step.get("run", "")):
                    assert _exists(words), (path.name, words)
                    seen.append(words[0])
    assert {"validate", "schema", "fmt", "build"} <= set(seen)
    pr = yaml.safe_load((REPO / ".github/workflows/pull-request.yml").read_text())
    steps = pr["jobs"]["judge"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    # One validation writes the annotations and the job summary; the canonical-JSON check reads the change only.
    assert '--base "$BASE" --format github --format "summary=$GITHUB_STEP_SUMMARY"' in runs
    assert 'fmt --check --base "$BASE"' in runs
    # ... which holds because main checks every file: a commit with a non-canonical record is not published.
    publish = yaml.safe_load((REPO / ".github/workflows/publish.yml").read_text())["jobs"]["build"]["steps"]
    names = [s.get("name") for s in publish]
    assert any(s.get("run") == "evreg fmt --check" and "if" not in s for s in publish)
    assert names.index("Records are canonical") < names.index("Build the site")
    # The judge runs none of the pull request's code: no install of the checkout, no module of it.
    assert "pip install -q -e ." not in runs and "python -m evreg" not in runs and "setup.py" not in runs
    # Every check runs even when an earlier one failed, so a pull request sees all its problems at once.
    checks = [s for s in steps if "evreg" in s.get("run", "") and "pip install" not in s.get("run", "")]
    assert [c["name"] for c in checks][:1] == ["Records are canonical"]
    assert all(c.get("if") == "${{ !cancelled() }}" for c in checks), checks
    change = [s for s in pr["jobs"]["change"]["steps"] if "evreg" in s.get("run", "")]
    assert "Schemas match the models" in [c["name"] for c in change]
    assert any('evreg" build' in c["run"] for c in checks)
    # The pull request's data is judged by the merge base's validator, never by the code it brings.
    judged = [c for c in checks if re.search(r"evreg\"? (validate|fmt|build)", c["run"])]
    assert judged and all('"$RUNNER_TEMP/judge/bin/evreg"' in c["run"] for c in judged), judged


def test_the_benchmark_runs_the_pull_request_workflows_own_checks() -> None:
    """``evreg bench``'s pull_request phase times the commands the workflow runs, in its order: the change job's
    checks of every pull request (not the impact of a change to the validator: the benchmark's changes none), then
    every check of the judge, with the workflow's base and job summary file."""
    from evreg.devtools.bench import PR_STEPS

    pr = yaml.safe_load((REPO / ".github/workflows/pull-request.yml").read_text())["jobs"]
    own = [s for s in pr["change"]["steps"] if s.get("name", "").startswith(("Schemas", "Records"))]
    judged = [s for s in pr["judge"]["steps"] if "pip install" not in s.get("run", "")]
    commands = [words for s in own + judged for words in _evreg_commands(s.get("run", ""))]
    assert len(own) == 2
    benched = [[a.format(base="$BASE", summary="$GITHUB_STEP_SUMMARY") for a in args] for _, args in PR_STEPS]
    assert benched == commands


def test_workflows_pass_a_github_actions_linter() -> None:
    """zizmor (installed from PyPI, run offline): pinned actions, least permissions, no credential leaks,
    no template injection."""
    done = subprocess.run(
        [str(BIN / "zizmor"), "--offline", str(REPO / ".github/workflows")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_pre_commit_hooks_call_real_commands() -> None:
    for name in (".pre-commit-hooks.yaml", ".pre-commit-config.yaml"):
        doc = yaml.safe_load((REPO / name).read_text())
        hooks = doc if isinstance(doc, list) else [h for r in doc["repos"] for h in r["hooks"]]
        assert {h["id"] for h in hooks} == {"evreg-validate", "evreg-fmt", "evreg-schema"}
        for hook in hooks:
            words = shlex.split(hook["entry"])
            assert words[0] == "evreg" and _exists(words[1:]), hook
        [check] = [h for h in hooks if h["id"] == "evreg-validate"]
        # The whole registry once, against the last commit: not a list of touched files, not in chunks.
        assert check["entry"] == "evreg validate --base HEAD"
        assert check["pass_filenames"] is False and check["always_run"] and check["require_serial"]
    result = evreg("fmt", "--check", "packets/qwen-27b/family.json", cwd=REPO)  # as the hook passes filenames
    assert result.returncode == 0, result.stdout


def test_pull_request_template_lists_the_checklist() -> None:
    text = (REPO / ".github/PULL_REQUEST_TEMPLATE.md").read_text()
    assert text.count("- [ ]") >= 5 and "evreg validate --base" in text


# -- the hook, run by pre-commit itself, on changes that break files they do not touch ------------------------


def _hook_run(reg: Reg) -> subprocess.CompletedProcess[str]:
    reg.repo.git.add("-A")
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(reg.root.parent / "pc"),
    }
    return subprocess.run(
        [str(BIN / "pre-commit"), "run", "evreg-validate"],
        cwd=reg.root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )


@pytest.fixture
def hooked(reg: Reg) -> Reg:
    shutil.copy(REPO / ".pre-commit-config.yaml", reg.root / ".pre-commit-config.yaml")
    reg.commit("hooks")
    clean = _hook_run(reg)
    assert clean.returncode == 0, clean.stdout
    return reg


def _introduced(output: str) -> set[tuple[str, str]]:
    """(file, code) of the findings the hook lists before any that were already there."""
    found = re.findall(r"^(\S+?)(?::\d+:\d+)?: error \[([a-z-]+)\]( \(not introduced)?", output, re.M)
    return {(file, code) for file, code, old in found if not old}


@pytest.mark.slow
def test_the_hook_catches_an_evidence_edit_that_breaks_the_records_citing_it(hooked: Reg) -> None:
    hooked.raw(EVIDENCE, b'{"decode_tok_s": [31.21, 30.25]}\n')  # only the evidence file is touched
    done = _hook_run(hooked)
    assert done.returncode == 1, done.stdout
    assert (f"{F}/pkt/measurements/run-1.json", "evidence-hash-mismatch") in _introduced(done.stdout)


@pytest.mark.slow
def test_the_hook_catches_a_deletion_that_leaves_references_dangling(hooked: Reg) -> None:
    (hooked.root / f"{F}/pkt/measurements/run-1.json").unlink()
    done = _hook_run(hooked)
    assert done.returncode == 1, done.stdout
    found = _introduced(done.stdout)
    assert (f"{F}/views/tp-view.json", "dangling-reference") in found  # a file the change did not touch
    assert (f"{F}/pkt/measurements/run-1.json", "record-deleted") in found  # the history rule, against HEAD


@pytest.mark.slow
def test_the_hook_catches_a_rename(hooked: Reg) -> None:
    old = hooked.root / f"{F}/pkt/measurements/run-1.json"
    old.rename(old.with_name("run-9.json"))
    done = _hook_run(hooked)
    assert done.returncode == 1, done.stdout
    found = _introduced(done.stdout)
    assert (f"{F}/pkt/measurements/run-9.json", "layout") in found
    assert (f"{F}/views/tp-view.json", "dangling-reference") in found
    assert len(done.stdout.splitlines()) < 40  # it fits a screen


# -- a pull request: a base and a head -------------------------------------------------------------------------


def test_a_pull_request_report_lists_what_it_introduced_first_and_completely(reg: Reg) -> None:
    reg.edit(f"{F}/views/tp-view.json", lambda v: v.update(title="Decode 52.3 tok/s by TP"))  # on the base
    base = reg.commit("base with an orphan number")
    reg.repo.git.checkout("-b", "change")
    (reg.root / f"{F}/pkt/measurements/run-1.json").unlink()
    reg.raw(f"{F}/notes, v2: draft.json", b"{}")  # a path with a comma and a colon
    reg.commit("the change")
    result = evreg("validate", "--base", base, "--format", "github", cwd=reg.root)
    lines = result.stdout.splitlines()
    assert result.returncode == 1 and lines
    introduced = [line for line in lines if "(already on the base)" not in line]
    old = [line for line in lines if "(already on the base)" in line]
    assert old and all("orphan-number" in line for line in old)  # the base's own finding comes last
    assert lines[: len(introduced)] == introduced and len(introduced) >= 4
    assert any("dangling-reference" in line for line in introduced)
    assert any("file=packets/fam/notes%2C v2%3A draft.json" in line for line in introduced)
    summary = evreg("validate", "--base", base, "--format", "summary", cwd=reg.root).stdout
    head, rest = summary.split("### Already on the base")
    assert "### Introduced by this change" in head and head.count("\n| ` error ` |") == len(
        [line for line in introduced if line.startswith("::error")]
    )
    assert "orphan-number" in rest and "orphan-number" not in head
    as_json = json.loads(evreg("validate", "--base", base, "--format", "json", cwd=reg.root).stdout)
    assert as_json["summary"]["introduced"] == len(introduced)


# -- editors: every record file maps to a schema that checks it -------------------------------------------------


@pytest.mark.slow
def test_every_record_validates_against_its_schema_through_the_editor_mapping(tmp_path: Path) -> None:
    """The mapping in .vscode/settings.json covers every record file the store loads, and each one
    passes check-jsonschema against the schema it maps to; a planted defect does not pass."""
    from evreg.store import load

    [mapping] = json.loads((REPO / ".vscode/settings.json").read_text())["json.schemas"]
    schema = REPO / mapping["url"]
    matched = {p for pattern in mapping["fileMatch"] for p in REPO.glob(pattern.lstrip("/"))}
    records = {REPO / d.path for d in load(REPO).records() if d.kind != "baseline"}
    assert records and records == matched

    def check(files: list[Path]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "check-jsonschema"), "--schemafile", str(schema), *map(str, files)],
            capture_output=True,
            text=True,
            check=False,
        )

    done = check(sorted(records))
    assert done.returncode == 0, done.stdout + done.stderr
    bad = json.loads(next(iter(sorted(REPO.glob("packets/*/*/measurements/*.json")))).read_text())
    bad["state"] = "measured-by-vibes"
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = check([tmp_path / "bad.json"])
    assert refused.returncode == 1 and "state" in refused.stdout
