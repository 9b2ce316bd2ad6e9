"""The shipped CI workflows, pre-commit hooks and PR template call real commands."""

from __future__ import annotations

import re
import shlex

import yaml

from conftest import REPO, evreg
from evreg.cli import cli


def _evreg_commands(text: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        for m in re.finditer(r"\bevreg ([a-z][^\n|&;>]*)", line):
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
    runs = " ".join(s.get("run", "") for s in pr["jobs"]["validate"]["steps"])
    assert "--base" in runs and "--format github" in runs and "GITHUB_STEP_SUMMARY" in runs


def test_pre_commit_hooks_call_real_commands() -> None:
    for name in (".pre-commit-hooks.yaml", ".pre-commit-config.yaml"):
        doc = yaml.safe_load((REPO / name).read_text())
        hooks = doc if isinstance(doc, list) else [h for r in doc["repos"] for h in r["hooks"]]
        assert {h["id"] for h in hooks} == {"evreg-validate", "evreg-fmt", "evreg-schema"}
        for hook in hooks:
            words = shlex.split(hook["entry"])
            assert words[0] == "evreg" and _exists(words[1:]), hook
    result = evreg("fmt", "--check", "packets/qwen-27b/family.json", cwd=REPO)  # as the hook passes filenames
    assert result.returncode == 0, result.stdout


def test_pull_request_template_lists_the_checklist() -> None:
    text = (REPO / ".github/PULL_REQUEST_TEMPLATE.md").read_text()
    assert text.count("- [ ]") >= 5 and "evreg validate --base" in text
