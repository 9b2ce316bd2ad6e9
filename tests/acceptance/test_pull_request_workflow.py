"""The shipped pull-request workflow, run step by step as GitHub Actions runs it (each `run:` script in bash, its
`env:` expressions filled in, outputs and the job summary in files), on a real pull request: one that weakens a
rule and adds data only the weakened rule accepts. The base's validator judges it, so the data is refused, and
the job summary shows the impact of the rule change."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import REPO

pytestmark = pytest.mark.slow

PACKET = "packets/qwen3-6-35b-a3b/rtx5090-nvidia-qwen3-6-35b-a3b-nvfp4/packet.json"
RULE = "validators/evreg_rules/prose.py"


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _repository_as_main(tmp: Path) -> Path:
    """A bare ``origin`` whose ``main`` is this repository's files as they are (tracked and new, not ignored)."""
    seed = tmp / "seed"
    listed = _git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, seed / rel)
    _git(seed, "init", "-q", "-b", "main")
    _git(seed, "add", "-A")
    _git(seed, "commit", "-q", "-m", "main")
    origin = tmp / "origin.git"
    _git(tmp, "clone", "-q", "--bare", str(seed), str(origin))
    return origin


def _weakening_pull_request(origin: Path, tmp: Path) -> Path:
    """A checkout of a pull request that stops the orphan-number rule reading record prose, and adds a packet
    caveat with a figure that cites nothing: only the weakened rule accepts it."""
    work = tmp / "checkout"
    _git(tmp, "clone", "-q", str(origin), str(work))
    _git(work, "checkout", "-q", "-b", "weaken")
    rule = work / RULE
    text = rule.read_text()
    assert "for fig in claims_in(field, text, cell):" in text
    rule.write_text(text.replace("for fig in claims_in(field, text, cell):", "for fig in []:"))
    packet = json.loads((work / PACKET).read_text())
    packet["caveat"] = "Peak decode reached 999.5 tok/s on this card."
    (work / PACKET).write_text(json.dumps(packet, indent=2, ensure_ascii=False) + "\n")
    _git(work, "commit", "-q", "-am", "weaken the orphan rule; add a caveat")
    return work


def _expand(value: str, outputs: dict[str, dict[str, str]]) -> str:
    """A step's `env:` value with its `${{ ... }}` expressions filled in as GitHub fills them."""

    def one(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr == "github.base_ref":
            return "main"
        step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        assert step, f"an expression this runner does not know: {expr}"
        return outputs[step.group(1)][step.group(2)]

    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def _run_workflow(work: Path, tmp: Path) -> tuple[dict[str, int], str]:
    """Each `run:` step of each job of the pull-request workflow in order (all run: every check is `!cancelled()`),
    each job on a runner of its own (its own Python and temporary folder); the exit code of each step by job and
    name, and the job summary."""
    summary = tmp / "summary.md"
    summary.write_text("")
    workflow = yaml.safe_load((REPO / ".github/workflows/pull-request.yml").read_text())
    codes: dict[str, int] = {}
    for job_name, job in workflow["jobs"].items():
        codes |= _run_job(job_name, job, work, tmp / job_name, summary)
    return codes, summary.read_text()


def _run_job(name: str, job: dict[str, Any], work: Path, tmp: Path, summary: Path) -> dict[str, int]:
    tmp.mkdir()
    runner = tmp / "runner"  # the runner's Python (setup-python)
    subprocess.run([sys.executable, "-m", "venv", str(runner)], check=True)
    temp = tmp / "runner-temp"
    temp.mkdir()
    _git(work, "worktree", "prune")  # each runner checks out afresh: no worktree of another job's runner
    outputs: dict[str, dict[str, str]] = {}
    codes: dict[str, int] = {}
    for step in job["steps"]:
        if "run" not in step:
            continue  # checkout and setup-python: done above
        out_file = tmp / f"output-{len(codes)}"
        out_file.write_text("")
        env: dict[str, Any] = {
            **os.environ,
            "PATH": f"{runner / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "RUNNER_TEMP": str(temp),
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_STEP_SUMMARY": str(summary),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        env.pop("VIRTUAL_ENV", None)
        env |= {k: _expand(str(v), outputs) for k, v in (step.get("env") or {}).items()}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        codes[f"{name}: {step['name']}"] = done.returncode
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
    return codes


def test_a_pull_request_that_weakens_a_rule_is_judged_by_its_base(tmp_path: Path) -> None:
    origin = _repository_as_main(tmp_path)
    work = _weakening_pull_request(origin, tmp_path)
    codes, summary = _run_workflow(work, tmp_path)
    steps = {name.split(" (")[0]: code for name, code in codes.items()}
    assert steps["judge: Merge base"] == 0 and steps["judge: Install the judge"] == 0, codes
    assert steps["change: Install the base's evreg and the change's"] == 0, codes
    # The base's validator refuses the figure the weakened rule lets through, and so does the base's build.
    assert steps["judge: Validate the change against its merge base"] == 1, codes
    assert steps["judge: Build and check every page of the site"] != 0, codes
    assert "orphan-number" in summary and "999.5 tok/s" in summary
    # The impact of the rule change is in the job summary: the orphan findings it would drop, by code.
    impact = summary[summary.index("## Impact of this change to the validator") :]
    row = re.search(r"\| ` orphan-number ` \| (\d+) \| (\d+) \|", impact)
    assert row and int(row.group(2)) >= 1, impact[:2000]
    # the figure is listed, or counted among the rows the table leaves out
    assert "999.5 tok/s" in impact or re.search(r"\| \.\.\. \| \d+ more \|", impact), impact[:2000]
