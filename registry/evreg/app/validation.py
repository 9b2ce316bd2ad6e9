"""Validate the registry (or a change to it) and explain a finding code."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evreg.check import pipeline, rules
from evreg.check.rules import Report
from evreg.core.errors import UsageProblem
from evreg.core.findings import Code


def relative(root: Path, path: Path) -> str:
    """``path`` (relative to the working directory) as a path inside the registry at ``root``."""
    full = (Path.cwd() / path).resolve()
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        raise UsageProblem(f"{path} is not inside the registry at {root}") from None


def in_paths(file: str, paths: Sequence[str]) -> bool:
    """Whether ``file`` is one of ``paths`` or under one of them (every file when there are none)."""
    return not paths or any(file == p or file.startswith(p.rstrip("/") + "/") for p in paths)


def validate(root: Path, paths: Sequence[Path] = (), base: str | None = None, use_cache: bool = True) -> Report:
    """The findings of the registry's working tree (of the change since ``base`` when given), only those in
    ``paths`` when given: the whole registry is still loaded, since references cross files."""
    rel = [relative(root, p) for p in paths]
    report = pipeline.validate(root, base=base, use_cache=use_cache)[1]
    if not rel:
        return report
    shown = Report(
        [f for f in report.findings if in_paths(f.file, rel)], report.records, report.files, report.external_refs
    )
    if "introduced" in report.extra:
        shown.extra["introduced"] = sum(1 for f in shown.blocking if f.introduced)
    return shown


def code_docs() -> list[Code]:
    """Every finding code the installed rules can report, sorted."""
    return sorted(rules.code_docs(rules.discover()).values(), key=lambda d: d.code)


def explain(code: str) -> Code:
    """What rule ``code`` checks, why, how to fix it, and a failing example."""
    found = rules.code_docs(rules.discover()).get(code)
    if found is None:
        raise UsageProblem(f"unknown code {code!r}; `evreg explain` lists them")
    return found
