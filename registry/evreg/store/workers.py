"""Forked worker processes over the units of a registry.

A worker inherits the registry as it is when the pool starts (a listing; records are
read on demand), computes one unit at a time and sends back only the (small) result,
so the parent never reads what the workers read. Units go out largest first for an
even load. Platforms without ``fork`` run everything in-process.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import gc
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from evreg.core.progress import Progress
from evreg.store import Registry, WorkTree, forgetting

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_FROM_FILES = 4000
"""Below this many files, starting processes costs more than it saves."""

PART_FILES = 250
"""The smallest part of a unit given to a worker."""

PARTS_PER_WORKER = 4
"""A worker process exits after this many parts and a fresh one is forked in its place: what a worker's
memory gains from part to part (copied pages of the parent, the allocator's leftovers) then stays bounded
(at 100k, two workers that lived through the whole run reached 1.5 GiB resident, 3.1 GiB together)."""

_job: tuple[Registry, Callable[[Registry, str, list[str]], Any], Any] | None = None  # what forked workers inherit
RETURNED_GRACE = 30.0
"""Seconds a part whose worker returned its result and then ended may wait for that result to reach this process
(read from the pool's pipe by its thread) before the part counts as lost: the worker may have died while pickling it."""

_DIED = (
    "a worker process stopped before its work was done (killed? out of memory?); "
    "EVREG_WORKERS=1 does the work in this process"
)


def _in_worker(item: tuple[int, tuple[str, list[str]]]) -> tuple[int, Any]:
    """Part ``i`` in a worker; the records it read are forgotten after it, so a worker's memory is
    that of one part, not of every part it computed (two workers held 2.2 GiB each at 100k). The part's slot
    in the shared table says which process works on it, then (negated) that it returned: the result is still to be
    pickled and sent, which can kill it too (its memory peaks there); the parent clears the slot once it has it."""
    assert _job is not None
    registry, fn, working = _job
    i, part = item
    working[i] = os.getpid()
    try:
        with forgetting():
            return i, fn(registry, *part)
    finally:
        working[i] = -os.getpid()


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie not yet reaped by the pool counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] in (b"Z", b"X")
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def count(registry: Registry, units: list[str]) -> int:
    """Processes to use for ``units``: one per core for a large store (``EVREG_WORKERS`` overrides).
    A store read from git objects is checked in-process: GitPython talks to one long-lived
    ``git cat-file`` process, which forked workers would share."""
    if not isinstance(registry.source, WorkTree):
        return 1
    files = sum(len(registry.paths_of(u)) for u in units)
    return max(1, min(count_for_files(files), len(units)))


def count_for_files(files: int) -> int:
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if "EVREG_WORKERS" in os.environ:
        return max(1, int(os.environ["EVREG_WORKERS"]))
    return cores() if files >= PARALLEL_FROM_FILES else 1


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def map_units(
    registry: Registry, units: list[str], fn: Callable[[Registry, str, list[str]], T], label: str = "checking"
) -> dict[str, list[T]]:
    """``fn(registry, unit, paths)`` over every unit, in worker processes when it pays.

    With workers, a large unit is cut into parts (``fn`` then sees some of its paths,
    and must give for them what it would give for the part of the whole unit), so one
    big unit does not leave the other cores idle. Results come back per unit, parts in
    path order. A terminal is shown how many parts are done (``label``)."""
    workers = count(registry, units)
    parts = [(u, registry.paths_of(u)) for u in units]
    if workers < 2:
        with Progress(label, len(parts)) as progress:
            out_here = {}
            for unit, paths in parts:
                out_here[unit] = [fn(registry, unit, paths)]
                progress.advance()
            return out_here
    size = max(PART_FILES, sum(len(p) for _, p in parts) // (workers * 8) + 1)
    parts = [(u, paths[i : i + size]) for u, paths in parts for i in range(0, max(len(paths), 1), size)]
    global _job
    order = sorted(range(len(parts)), key=lambda i: -len(parts[i][1]))
    context = multiprocessing.get_context("fork")
    working = context.RawArray("q", len(parts))  # per part: 0, the pid working on it, -pid once returned, 0 received
    _job = (registry, fn, working)
    done: dict[int, Any] = {}
    returned: dict[int, float] = {}  # part -> when its worker was first seen ended with the result not received
    try:
        with (
            context.Pool(workers, maxtasksperchild=PARTS_PER_WORKER) as pool,
            Progress(label, len(parts)) as progress,
        ):
            results = pool.imap_unordered(_in_worker, [(i, parts[i]) for i in order], chunksize=1)
            while len(done) < len(parts):
                try:
                    i, result = results.next(timeout=1.0)
                    done[i] = result
                    working[i] = 0
                    progress.advance()
                except multiprocessing.TimeoutError:
                    # A pool replaces a worker that died (killed for its memory, say) but its part is lost: waiting
                    # for it would never end. A part whose worker is gone before the part was done is an error; so
                    # is one whose worker returned and ended, its result not here after RETURNED_GRACE (it died
                    # pickling it; a worker also ends, under maxtasksperchild, just after sending a result).
                    now = time.monotonic()
                    for part, pid in enumerate(working[:]):
                        if (
                            pid
                            and _gone(abs(pid))
                            and (pid > 0 or now - returned.setdefault(part, now) >= RETURNED_GRACE)
                        ):
                            raise OSError(_DIED) from None
    finally:
        _job = None
    out: dict[str, list[T]] = {}
    for i, (unit, _paths) in enumerate(parts):
        out.setdefault(unit, []).append(done[i])
    return out


_fn: Callable[[Any], Any] | None = None  # what ``forked``'s workers inherit


def _call(item: Any) -> Any:
    """An item in a worker of ``forked``, which collects no cycles: it ends with the call of ``forked`` that started
    it, what it makes is freed as its last reference goes, and each collection would walk every object its items
    keep for the next (a build's memos: seconds per page at 100,000 measurements)."""
    assert _fn is not None
    gc.disable()
    return _fn(item)


@contextlib.contextmanager
def forked(fn: Callable[[T], R], items: list[T], processes: int) -> Iterator[Iterator[R]]:
    """``fn`` over ``items``, its results in order as they come, in ``processes`` forked workers that inherit what
    ``fn`` needs from this process as it is now (they start at once: this process may do other work meanwhile). With
    fewer than two processes, or without ``fork``, ``fn`` runs here as the results are asked for. Objects that exist at
    the fork are left out of the workers' garbage collection (``gc.freeze``), whose visits would otherwise copy every
    page of them into each worker; here, they are given back to it unless some were left out before (by a caller
    that read them to last: ``no_cycle_collection``)."""
    if processes < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield map(fn, items)
        return
    global _fn
    _fn = fn
    thaw = gc.unfreeze if not gc.get_freeze_count() else lambda: None
    gc.freeze()
    try:
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(processes, mp_context=context) as pool:
            results = pool.map(_call, items)  # every item is submitted: the workers fork now
            thaw()
            try:
                yield results
            except BaseException:  # the caller failed (or stopped): the items not started yet are not run
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    except concurrent.futures.process.BrokenProcessPool as exc:  # a worker died (killed for its memory, say)
        raise OSError(_DIED) from exc
    finally:
        _fn = None
        thaw()


def _run_beside(send: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """In ``beside``'s process: ``fn(*args)``'s result, or its error, sent back."""
    try:
        outcome: tuple[bool, Any] = (True, fn(*args))
    except BaseException as exc:  # reported to the caller, who raises it
        outcome = (False, exc)
    try:
        send.send(outcome)
    except Exception as exc:  # an error or a result that cannot be pickled
        send.send((False, RuntimeError(f"{outcome[1]!r} (not sent back: {exc})")))
    finally:
        send.close()


@contextlib.contextmanager
def beside(fn: Callable[..., R], *args: Any) -> Iterator[Callable[[], R]]:
    """``fn(*args)`` in a forked process of its own, started now, while this process goes on; the context gives a
    function that waits for its result (or raises its error). A plain process and a pipe, no pool: no thread of this
    process is left running when it forks other workers later. With one core (or ``EVREG_WORKERS=1``), or without
    ``fork``, ``fn`` runs here when its result is first asked for."""
    if count_for_files(PARALLEL_FROM_FILES) < 2:
        yield functools.cache(lambda: fn(*args))
        return
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_run_beside, args=(send, fn, args), daemon=True)  # inherited, not pickled
    process.start()
    send.close()
    outcome: list[tuple[bool, Any]] = []

    def result() -> R:
        if not outcome:
            try:
                outcome.append(receive.recv())
            except EOFError as exc:  # it died before it answered (killed for its memory, say)
                raise OSError(_DIED) from exc
            finally:
                process.join()
        ok, value = outcome[0]
        if not ok:
            raise value
        return value

    try:
        yield result
    finally:
        process.join()  # its work is finished even when the caller failed (its files are written whole or not)
        receive.close()
