"""Validate the registry (or a change to it) and explain a finding code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evreg.check import pipeline, rules
from evreg.check.rules import Report
from evreg.core import jsonio
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


def validate(
    root: Path,
    paths: Sequence[Path] = (),
    base: str | None = None,
    use_cache: bool = True,
    sources: dict[str, Path] | None = None,
) -> Report:
    """The findings of the registry's working tree (of the change since ``base`` when given), only those in
    ``paths`` when given: the whole registry is still loaded, since references cross files. ``sources``: local
    clones of external evidence sources, by name, to check their references against."""
    rel = [relative(root, p) for p in paths]
    report = pipeline.validate(root, base=base, use_cache=use_cache, sources=sources)[1]
    if not rel:
        return report
    shown = Report(
        [f for f in report.findings if in_paths(f.file, rel)], report.records, report.files, report.external_refs
    )
    if "introduced" in report.extra:
        shown.extra["introduced"] = sum(1 for f in shown.blocking if f.introduced)
    return shown


def sources(given: Sequence[str]) -> dict[str, Path]:
    """``NAME=DIR`` options as a map, each DIR a git work tree or repository (refused otherwise, with the reason)."""
    from evreg.core import gitcmd

    out: dict[str, Path] = {}
    for item in given:
        name, sep, folder = item.partition("=")
        path = Path(folder).expanduser()
        if not sep or not name or not folder:
            raise UsageProblem(f"--source {item!r} is not NAME=DIR")
        done = gitcmd.run(path, "rev-parse", "--git-dir") if path.is_dir() else None
        if done is None or done.returncode != 0:
            raise UsageProblem(f"--source {name}={folder}: not a git repository (clone the source there first)")
        out[name] = path.resolve()
    return out


def code_docs() -> list[Code]:
    """Every finding code the installed rules can report, sorted."""
    return sorted(rules.code_docs(rules.discover()).values(), key=lambda d: d.code)


def explain(code: str) -> Code:
    """What rule ``code`` checks, why, how to fix it, and a failing example."""
    found = rules.code_docs(rules.discover()).get(code)
    if found is None:
        raise UsageProblem(f"unknown code {code!r}; `evreg explain` lists them")
    return found


def accepted(code: str) -> list[tuple[str, str]]:
    """What stands instead of what ``code`` refuses, where the code has a grammar of accepted forms (a figure in prose:
    every citation form and the contexts that are free)."""
    from evreg.claims.citations import ACCEPTED_FORMS

    return list(ACCEPTED_FORMS) if code == "orphan-number" else []


@dataclass
class Impact:
    """What a change to the validator does to a registry's findings: those that appear and those that disappear,
    as two validators (``validate --format json``) report them on the same registry."""

    appeared: list[dict[str, Any]]
    disappeared: list[dict[str, Any]]

    def by_code(self) -> list[tuple[str, int, int]]:
        """(code, appeared, disappeared) of every code that changed, most changed first."""
        up, down = Counter(f["code"] for f in self.appeared), Counter(f["code"] for f in self.disappeared)
        return sorted(((c, up[c], down[c]) for c in up | down), key=lambda t: (-(t[1] + t[2]), t[0]))


def _identity(f: dict[str, Any]) -> tuple[str, str, str, str]:
    """A finding across two validators: code, file, pointer and what it is about (its fields, else its message)."""
    about = jsonio.canonical(f["fields"]) if f.get("fields") else str(f.get("message", ""))
    return (str(f.get("code")), str(f.get("file")), str(f.get("pointer", "")), about)


def impact(before: bytes, after: bytes) -> Impact:
    """The impact of a validator change from two ``validate --format json`` outputs of the same registry."""

    def findings(raw: bytes, which: str) -> list[dict[str, Any]]:
        try:
            data = jsonio.loads(raw)
            listed = data["findings"]
            if isinstance(listed, list) and all(isinstance(f, dict) and "code" in f for f in listed):
                return listed
        except (ValueError, KeyError, TypeError):
            pass
        raise UsageProblem(f"the {which} file is not the output of `evreg validate --format json`")

    old, new = findings(before, "first"), findings(after, "second")
    old_keys, new_keys = {_identity(f) for f in old}, {_identity(f) for f in new}
    return Impact([f for f in new if _identity(f) not in old_keys], [f for f in old if _identity(f) not in new_keys])
