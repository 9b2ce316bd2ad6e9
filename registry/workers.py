"""Forked worker processes over the units of a registry.

A worker inherits the registry as it is when the pool starts (a listing; records are
read on demand), computes one unit at a time and sends back only the (small) result,
so the parent never reads what the workers read. Units go out largest first for an
even load. Platforms without ``fork`` run everything in-process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from typing import Any, TypeVar

from registry.store import Registry

T = TypeVar("T")

PARALLEL_FROM_FILES = 4000
"""Below this many files, starting processes costs more than it saves."""

_job: tuple[Registry, Callable[[Registry, str], Any]] | None = None  # what forked workers inherit


def _in_worker(unit: str) -> Any:
    assert _job is not None
    return _job[1](_job[0], unit)


def count(registry: Registry, units: list[str]) -> int:
    """Processes to use for ``units``: one per core for a large store (``EVREG_WORKERS`` overrides)."""
    if "EVREG_WORKERS" in os.environ:
        wanted = int(os.environ["EVREG_WORKERS"])
    else:
        files = sum(len(registry.unit_paths.get(u, ())) for u in units)
        wanted = len(os.sched_getaffinity(0)) if files >= PARALLEL_FROM_FILES else 1
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(wanted, len(units)))


def map_units(registry: Registry, units: list[str], fn: Callable[[Registry, str], T]) -> dict[str, T]:
    """``{unit: fn(registry, unit)}``, computed in worker processes when it pays."""
    workers = count(registry, units)
    if workers < 2:
        return {unit: fn(registry, unit) for unit in units}
    global _job
    order = sorted(units, key=lambda u: -len(registry.unit_paths.get(u, ())))
    _job = (registry, fn)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return dict(zip(order, pool.map(_in_worker, order, chunksize=1), strict=True))
    finally:
        _job = None
