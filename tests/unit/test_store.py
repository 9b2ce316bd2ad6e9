"""The git-native store: records loaded from a commit are git's objects (and their blob ids git's), validation of
a commit reads that commit's evidence; worker processes report a death or a failure beside them as an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from evreg.store import load
from evreg.store.sources import EvidenceState, GitTree
from helpers import EVIDENCE, F, Reg

RUN = f"{F}/pkt/measurements/run-1.json"


def test_load_from_a_commit_reads_git_objects_not_the_work_tree(reg: Reg) -> None:
    first = reg.repo.head.commit.hexsha
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[99.0]))
    reg.commit("edit")
    (reg.root / RUN).unlink()  # the working tree no longer has it at all
    old = load(reg.root, first).by_path[RUN]
    new = load(reg.root, "HEAD").by_path[RUN]
    assert old.data["metrics"]["decode_tok_s"] == [30.21, 30.25]
    assert new.data["metrics"]["decode_tok_s"] == [99.0]
    assert RUN not in load(reg.root).by_path
    assert old.blob != new.blob


def test_commit_validation_checks_evidence_in_that_commit(reg: Reg) -> None:
    (reg.root / EVIDENCE).unlink()
    assert "evidence-missing" in reg.codes()
    assert reg.findings("HEAD") == []  # the committed tree still has the file
    reg.commit("drop evidence")
    assert "evidence-missing" in reg.codes("HEAD")


def test_git_blob_ids_match_git(reg: Reg) -> None:
    worktree = load(reg.root).by_path[RUN]
    committed = load(reg.root, "HEAD").by_path[RUN]
    assert worktree.content_id() == committed.blob == reg.repo.git.hash_object(str(reg.root / RUN))


def test_a_commits_files_folders_and_evidence_are_found_as_gitpython_finds_them(reg: Reg) -> None:
    """Lookups read each folder once; every path, and every odd spelling of one, finds what ``Tree / path`` finds."""
    import git

    (reg.root / "packets/link").symlink_to(f"../{EVIDENCE}")
    reg.repo.git.add("-A")
    reg.repo.git.update_index("--add", "--cacheinfo", f"160000,{reg.repo.head.commit.hexsha},packets/lab")
    reg.repo.git.commit("-qm", "a link and a submodule")
    source = GitTree(reg.repo, "HEAD")
    tree = reg.repo.head.commit.tree
    paths = [p for p in reg.repo.git.ls_tree("-r", "-t", "--name-only", "HEAD").splitlines()]
    odd = [f"{p}/" for p in paths] + [f"/{p}" for p in paths] + [p.replace("/", "//", 1) for p in paths]
    odd += ["", ".", "packets/.", "packets/./link", "nope", "packets/nope", f"{EVIDENCE}/x", "packets/lab/x"]
    assert len(paths) > 10
    for path in paths + odd:
        try:
            expected: git.objects.base.Object | None = tree / path
        except KeyError:
            expected = None
        found = source._object(path)
        assert (found and (found.hexsha, found.mode)) == (expected and (expected.hexsha, expected.mode)), path
        names = sorted(o.path.rsplit("/", 1)[-1] for o in expected) if isinstance(expected, git.Tree) and path else []
        assert source.names(path) == names, path
    assert source.evidence("packets/link") is EvidenceState.FILE
    assert source.evidence("packets/lab") is EvidenceState.NOT_FILE and "lab" in source.names("packets")
    assert source.read("packets/link") == f"../{EVIDENCE}".encode()
    with pytest.raises(FileNotFoundError):
        source.read("packets/nope")


# -- worker processes --------------------------------------------------------------------------------------------------


def test_a_worker_that_dies_stops_the_work_with_an_error_not_a_hang() -> None:
    """A worker killed mid-work (the kernel's out-of-memory killer, say) is an error the build reports."""
    import os
    import signal

    from evreg.store import workers

    def work(n: int) -> int:
        if n == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return n * 2

    with pytest.raises(OSError, match="EVREG_WORKERS=1"), workers.forked(work, list(range(8)), 2) as results:
        list(results)
    with workers.forked(work, [0, 1, 2, 4], 2) as results:  # the honest neighbour
        assert list(results) == [0, 2, 4, 8]


def test_work_beside_runs_in_its_own_process_and_reports_its_result_or_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """``evreg build`` exports the data downloads beside the site build (``workers.beside``): the work runs in a
    process of its own, started at once; its result is the function's, its error is raised where it is waited for;
    with EVREG_WORKERS=1 it runs in this process, once, when first asked for."""
    import os
    import signal

    from evreg.store import workers

    def work(fail: bool) -> int:
        if fail:
            raise ValueError("the export failed")
        return os.getpid()

    monkeypatch.setenv("EVREG_WORKERS", "2")
    with workers.beside(work, False) as result:
        assert result() != os.getpid() and result() == result()
    with pytest.raises(ValueError, match="the export failed"), workers.beside(work, True) as result:
        result()
    with pytest.raises(RuntimeError, match="not sent back"), workers.beside(lambda: lambda: 1) as result:
        result()  # a result that cannot be pickled is an error, not a hang

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(OSError, match="EVREG_WORKERS=1"), workers.beside(die) as result:
        result()  # killed before it answered (by the out-of-memory killer, say)
    monkeypatch.setenv("EVREG_WORKERS", "1")
    calls: list[int] = []
    with workers.beside(lambda: calls.append(os.getpid()) or len(calls)) as result:
        assert calls == [] and result() == 1 and result() == 1 and calls == [os.getpid()]


@pytest.mark.slow
def test_a_failure_beside_the_workers_stops_the_items_not_started(tmp_path: Path) -> None:
    """When the build fails while the workers make the record pages (the data downloads' export failed, say), the
    parts no worker has started are not made: the error is reported, not held back until every part is done."""
    import time

    from evreg.store import workers

    def work(n: int) -> int:
        (tmp_path / str(n)).write_text("made")
        time.sleep(0.2)
        return n

    with pytest.raises(RuntimeError, match="export failed"), workers.forked(work, list(range(40)), 2):
        raise RuntimeError("export failed")
    assert len(list(tmp_path.iterdir())) < 40  # what had started finished; the rest never ran


def test_objects_read_to_last_stay_out_of_the_cycle_collector_across_a_fork() -> None:
    """A catalog read for a whole build is built with the cycle collector paused and then left out of its
    collections (``no_cycle_collection(lasting=True)``); forking workers keeps it out, where a plain fork gives the
    objects it froze for the workers back to the collector."""
    import gc

    from evreg.store import no_cycle_collection, workers

    def collected(obj: object) -> bool:  # whether the collector's generations hold it (frozen ones are apart)
        return any(o is obj for o in gc.get_objects())

    gc.unfreeze()  # what earlier tests in this process froze
    try:
        early: list[list[int]] = [[1]]
        with workers.forked(abs, [-1, -2], 2) as results:
            assert list(results) == [1, 2]
        assert collected(early)  # nothing was frozen before: the fork's freeze is undone
        with no_cycle_collection():
            assert not gc.isenabled()
            paused: list[list[int]] = [[2]]
        assert gc.isenabled() and collected(paused)
        with no_cycle_collection(lasting=True):
            lasting: list[list[int]] = [[3]]
        assert gc.isenabled() and not collected(lasting)
        with workers.forked(abs, [-3, -4], 2) as results:
            assert list(results) == [3, 4]
        assert not collected(lasting)  # still out of the collector's way
    finally:
        gc.unfreeze()
