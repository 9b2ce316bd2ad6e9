"""The validation pipeline: load -> reuse cached unit results -> run the rules -> store the
unit results -> report. The one way a validation is put together: the CLI (``validate``,
``catalog``, ``query``, ``build``, ``import``), the benchmark and the tests call it. The rule
engine (``evreg.rules``) knows nothing of the cache; the cache (``evreg.check.results``) knows
nothing of rules beyond their results.

Validating a change (``base``): the history rules compare with the base commit, and a finding
is *introduced* when the base does not have it -- wherever it sits, so a deleted measurement's
dangling references and an edited evidence file's hash mismatches in untouched files count.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import orjson

from evreg.check import rules as engine
from evreg.check.results import ResultCache, load_commit, load_worktree, units_summary
from evreg.check.rules import Report, Rule
from evreg.core import gitcmd, jsonio
from evreg.core.evidence import parse_ref
from evreg.core.findings import Finding
from evreg.core.jsonio import write_atomic
from evreg.core.layout import CACHE_DIR
from evreg.store import BaseNotFound, Registry, change_base, no_cycle_collection


def validate(
    root: Path,
    pack: list[Rule] | None = None,
    *,
    rev: str | None = None,
    base: str | None = None,
    use_cache: bool = True,
    sources: Mapping[str, Path] | None = None,
) -> tuple[Registry, Report]:
    """Validate the registry at ``root``: its working tree (against ``base`` when given), or the commit
    ``rev``; reusing cached unit results unless ``use_cache`` is false (a commit's results are not
    stored: the cache keeps the working tree's). ``base="HEAD"`` in a repository with no commit yet
    validates with every finding introduced."""
    pack = engine.discover() if pack is None else pack
    if base is not None and not base.strip():
        raise BaseNotFound("--base is empty: name the commit to compare with (CI: the merge base)")
    unborn = base == "HEAD" and no_commit_yet(root)
    change = change_base(root, base) if base and not unborn else None
    use_cache = use_cache and not sources  # the unit rules' findings depend on the clones given, which no entry records
    unusable = cache_problem(root) if use_cache else None
    cache = ResultCache.open(root, pack, keep=rev is None) if use_cache and unusable is None else None
    with no_cycle_collection():
        registry = load_commit(root, rev, cache) if rev else load_worktree(root, cache)
        if change is not None:
            registry.base = load_commit(root, change[0], cache)
            registry.changed = change[1]
        registry.sources = dict(sources or {})
        report = check(registry, pack, cache)
    if sources:
        report.extra["external_checked"] = _external_checked(registry)
    if unusable is not None:
        report.extra["cache_unused"] = unusable
    if change is not None or unborn:
        before = [] if change is None else base_findings(root, change[0], pack, cache)
        report.findings = mark_introduced(report.findings, before)
        report.extra["introduced"] = sum(1 for f in report.blocking if f.introduced)
    return registry, report


def _external_checked(registry: Registry) -> int:
    """How many external evidence references point into a source a local clone was given for."""
    return sum(
        1
        for doc in registry.records()
        for _, ref in doc.refs
        if (parsed := parse_ref(ref)).kind == "external" and parsed.source in registry.sources
    )


def check(registry: Registry, pack: list[Rule], cache: ResultCache | None) -> Report:
    """Run the rules over a loaded registry; with a ``cache``, a unit whose files and recorded
    dependencies are unchanged keeps its stored result, and fresh results are stored."""
    kept = cache.reusable(registry, engine.baseline_marker(registry)) if cache is not None else {}
    fresh = engine.check_units(registry, [u for u in registry.unit_paths if u not in kept], pack)
    if cache is not None:
        cache.update(registry, fresh)
        registry.kept = cache.kept
    report = engine.report(registry, pack, {**kept, **fresh})
    if cache is not None:
        cache.save_kept()
        report.extra["units"] = units_summary(cache)
    return report


Same = tuple[str, str, str, str]


def _same(f: Finding) -> Same:
    """What makes two findings the same one across a change (lines move; the place and message stay)."""
    return (f.code, f.file, f.pointer, f.message)


def mark_introduced(findings: list[Finding], before: list[Same]) -> list[Finding]:
    """``findings`` with ``introduced`` set (true unless the base has the same finding, ``_same``, as often) and
    the introduced ones first."""
    left = Counter(before)
    out = []
    for f in findings:
        key = _same(f)
        out.append(engine.marked_introduced(f, left[key] <= 0))
        left[key] -= 1
    out.sort(key=lambda f: (not f.introduced, *f.sort_key()))
    return out


def base_findings(root: Path, sha: str, pack: list[Rule], cache: ResultCache | None) -> list[Same]:
    """The findings of commit ``sha``, each as what makes it the same one across a change (``_same``); a commit
    never changes, so with a ``cache`` they are kept per commit and rule version."""
    if cache is None:
        return [_same(f) for f in validate(root, pack, rev=sha, use_cache=False)[1].findings]
    stored = cache.folder.parent / "commits" / f"{sha}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        entry = jsonio.loads(stored.read_bytes(), shallow_reader=True)  # a list of lists of text: checked so below
        same = entry["same"]
        whole = type(same) is list and all(type(f) is list and len(f) == 4 and set(map(type, f)) == {str} for f in same)
        if entry["version"] == cache.version and whole:
            return [(f[0], f[1], f[2], f[3]) for f in same]
    findings = [_same(f) for f in validate(root, pack, rev=sha)[1].findings]
    entry = {"version": cache.version, "same": findings}
    with contextlib.suppress(OSError):  # a read-only checkout still validates; it just is not cached
        write_atomic(stored, orjson.dumps(entry))
    return findings


def _git(root: Path, *args: str) -> tuple[int, bytes]:
    done = gitcmd.run(root, *args)
    return (128, b"") if done is None else (done.returncode, done.stdout)


def no_commit_yet(root: Path) -> bool:
    """A git repository with no commit yet (outside a repository, ``--base`` is an error, as for any REV)."""
    return (
        _git(root, "rev-parse", "--git-dir")[0] == 0 and _git(root, "rev-parse", "--verify", "--quiet", "HEAD")[0] != 0
    )


def cache_problem(root: Path, folder: str = CACHE_DIR) -> str | None:
    """Why the cache folder ``folder`` (the unit results', or the catalog rows') is not this machine's own, with the
    fix; None when it is. It is not when git tracks anything under its top folder (a cache that arrives in a commit, a
    pull request's, is the author's word, not ours), or when a folder on the way to it is a symlink (a link committed
    as ``build`` would lead the cache into tracked files)."""
    top = Path(folder).parts[0]
    parts = Path(folder).parts
    for i in range(1, len(parts) + 1):
        if root.joinpath(*parts[:i]).is_symlink():
            return f"{'/'.join(parts[:i])} is a symlink: make it a folder of its own"
    if _git(root, "ls-files", "--", top)[1].strip():
        return f"git tracks files under {top}/: `git rm -r --cached {top}` and add `{top}/` to .gitignore"
    return None
