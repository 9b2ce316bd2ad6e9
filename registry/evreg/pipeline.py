"""The validation pipeline: load -> reuse cached unit results -> run the rules -> store the
unit results -> report. The one way a validation is put together: the CLI (``validate``,
``catalog``, ``query``, ``build``, ``import``), the benchmark and the tests call it. The rule
engine (``evreg.rules``) knows nothing of the cache; the cache (``evreg.results``) knows
nothing of rules beyond their results.
"""

from __future__ import annotations

from pathlib import Path

from evreg import rules as engine
from evreg.results import ResultCache, load_worktree
from evreg.rules import Report, Rule
from evreg.store import Registry, change_base, load, no_cycle_collection


def validate(
    root: Path,
    pack: list[Rule] | None = None,
    *,
    rev: str | None = None,
    base: str | None = None,
    use_cache: bool = True,
) -> tuple[Registry, Report]:
    """Validate the registry at ``root``: its working tree (against ``base`` when given, reusing
    cached unit results unless ``use_cache`` is false), or the commit ``rev`` (always afresh)."""
    pack = engine.discover() if pack is None else pack
    change = change_base(root, base) if base else None
    cache = ResultCache.open(root, pack) if use_cache and rev is None else None
    with no_cycle_collection():
        registry = load(root, rev) if rev else load_worktree(root, cache)
        if change is not None:
            registry.base = load(root, change[0])
            registry.changed = change[1]
        return registry, check(registry, pack, cache)


def check(registry: Registry, pack: list[Rule], cache: ResultCache | None) -> Report:
    """Run the rules over a loaded registry; with a ``cache``, a unit whose files and recorded
    dependencies are unchanged keeps its stored result, and fresh results are stored."""
    kept = cache.reusable(registry) if cache is not None else {}
    fresh = engine.check_units(registry, [u for u in registry.unit_paths if u not in kept], pack)
    if cache is not None:
        cache.update(registry, fresh)
    return engine.report(registry, pack, {**kept, **fresh})
