"""Incremental validation: unit results cached with what they read, never hiding a finding.

Each test changes the store in a way that must (or must not) change another
unit's findings, and compares a cached validation with a fresh one.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import git
import pytest

from evreg.check import rules
from evreg.check.pipeline import check, validate
from evreg.check.results import CACHE_DIR, ResultCache, git_state, load_worktree
from evreg.store import workers
from helpers import EVIDENCE, REPO, F, Reg, evreg, family, init_site, run

OTH = "packets/oth"
RUN_O = f"{OTH}/measurements/run-o.json"
PACKET = f"{F}/pkt/packet.json"
PACK = rules.discover()


def other_family(reg: Reg) -> None:
    """A second family whose measurement the first family's packet cites, and which
    cites the first family's evidence file (with its sha256)."""
    fam = family()
    fam.update(id="oth", name="Other family")
    fam.pop("featured_results")
    fam.pop("primary_packet_id")
    reg.put(f"{OTH}/family.json", fam)
    measurement = run()
    measurement["id"] = "run-o"
    reg.put(RUN_O, measurement)
    reg.edit(PACKET, lambda d: d.update(summary="Decode {{ m:run-o.decode_tok_s[0] }}."))


def checked(root: Path) -> list[dict[str, Any]]:
    """Findings of a cached validation, which must equal those of a fresh one."""
    _registry, cached = validate(root, PACK)
    _registry, fresh = validate(root, PACK, use_cache=False)
    as_json = [f.model_dump(mode="json") for f in cached.findings]
    assert as_json == [f.model_dump(mode="json") for f in fresh.findings]
    assert (cached.records, cached.files, cached.external_refs) == (fresh.records, fresh.files, fresh.external_refs)
    return as_json


def codes_at(findings: list[dict[str, Any]], path: str) -> set[str]:
    return {f["code"] for f in findings if f["file"] == path}


def test_a_unit_sees_changes_to_what_it_cites_in_another_unit(reg: Reg) -> None:
    other_family(reg)
    reg.commit("two families")
    findings = checked(reg.root)
    assert findings == []
    assert len(list((reg.root / CACHE_DIR).glob("*.json"))) == 2  # one entry per family folder

    # The cited metric goes away in the other family: fam's files are unchanged,
    # yet its citation no longer resolves.
    reg.edit(RUN_O, lambda d: d["metrics"].update(decode_tok_s=[], ttft_ms=[30.25]))  # numbers its evidence holds
    findings = checked(reg.root)
    assert "citation-unresolved" in codes_at(findings, PACKET)

    reg.edit(RUN_O, lambda d: d["metrics"].update(decode_tok_s=[30.21]))
    findings = checked(reg.root)
    assert findings == []

    # Deleted, then committed: the citation dangles; the tree ids now vouch for fam.
    (reg.root / RUN_O).unlink()
    findings = checked(reg.root)
    assert "citation-unresolved" in codes_at(findings, PACKET)
    reg.commit("remove run-o")
    findings = checked(reg.root)
    assert "citation-unresolved" in codes_at(findings, PACKET)


def test_a_unit_sees_an_id_appear_or_vanish_elsewhere(reg: Reg) -> None:
    other_family(reg)
    reg.edit(f"{F}/views/tp-view.json", lambda d: d["series"][0]["measurement_ids"].append("run-x"))
    reg.commit("a view naming a measurement nobody has yet")
    findings = checked(reg.root)
    assert "dangling-reference" in codes_at(findings, f"{F}/views/tp-view.json")

    x = run()
    x["id"] = "run-x"
    reg.put(f"{OTH}/measurements/run-x.json", x)  # untracked, in the other family
    findings = checked(reg.root)
    assert "dangling-reference" not in codes_at(findings, f"{F}/views/tp-view.json")

    # The same id in both families: a duplicate, found from the id keys of cached units too.
    reg.put(f"{F}/measurements/run-x.json", x)
    findings = checked(reg.root)
    assert "duplicate-id" in {f["code"] for f in findings}


def test_a_unit_sees_a_changed_evidence_file_of_another_unit(reg: Reg) -> None:
    other_family(reg)
    reg.commit("two families")
    assert checked(reg.root) == []
    (reg.root / EVIDENCE).write_bytes(b'{"decode_tok_s": [99.0]}\n')  # fam's file; oth records its sha256
    findings = checked(reg.root)
    assert "evidence-hash-mismatch" in codes_at(findings, RUN_O)
    (reg.root / EVIDENCE).unlink()
    findings = checked(reg.root)
    assert "evidence-missing" in codes_at(findings, RUN_O)


def test_an_edit_in_one_unit_leaves_the_others_unread(reg: Reg) -> None:
    other_family(reg)
    reg.edit(PACKET, lambda d: d.update(summary="No citation."))
    reg.commit("two families, no citation between them")
    checked(reg.root)
    reg.edit(RUN_O, lambda d: d.update(workload="something else"))
    cache = ResultCache.open(reg.root, PACK)
    registry = load_worktree(reg.root, cache)
    assert registry.digest("fam").startswith("tree:")
    assert set(cache.reusable(registry)) == {"fam"}
    report = check(registry, PACK, cache)
    assert report.findings == [] and report.records == 9
    read = [p for p, d in registry.by_path.items() if p.startswith(f"{F}/") and d._findings is not None]
    assert read == []  # fam was neither listed nor read: its ids and files came from the cache


def test_git_state_names_dirty_units(reg: Reg) -> None:
    other_family(reg)
    reg.commit("two families")
    state = git_state(reg.root)
    assert state is not None and set(state.clean) == {"fam", "oth"} and state.dirty == {""}
    reg.edit(RUN_O, lambda d: d.update(workload="changed"))
    (reg.root / f"{F}/measurements/new.json").write_text("{}")
    state = git_state(reg.root)
    assert state is not None and state.clean == {} and state.dirty == {"", "fam", "oth"}
    reg.repo.git.add("-A")  # staged, not committed: still a change against HEAD
    state = git_state(reg.root)
    assert state is not None and state.dirty == {"", "fam", "oth"}
    (reg.root / ".gitignore").write_text("ignored.json\n")
    reg.commit("commit")
    (reg.root / f"{F}/measurements/ignored.json").write_text("{}")  # ignored, yet read by the loader
    state = git_state(reg.root)
    assert state is not None and "fam" in state.dirty and set(state.clean) == {"oth"}


def test_untracked_files_are_what_a_units_folders_hold_and_the_index_lacks(reg: Reg) -> None:
    """What a unit's folders hold and git's index lacks is every file ``git ls-files --others`` lists (ignored ones
    too: the loader reads them), whatever kind of entry it is; a nested repository makes its unit dirty too."""
    other_family(reg)
    (reg.root / ".gitignore").write_text("*.tmp\n")
    reg.commit("two families")
    fam = reg.root / F
    (fam / "measurements/new.json").write_text("{}")
    (fam / "measurements/scratch.tmp").write_text("ignored, and read")
    (fam / "deep/er").mkdir(parents=True)
    (fam / "deep/er/x.json").write_text("{}")
    (fam / "link.json").symlink_to("pkt/measurements/run-1.json")
    (fam / "folder-link").symlink_to("pkt")
    reg.repo.git.rm("--cached", "-q", f"{F}/pkt/measurements/run-1.json")  # on disk, no longer in the index
    state = git_state(reg.root)
    assert state is not None and set(state.asked) == {"fam", "oth"}
    others = reg.repo.git.ls_files("--others", "-z", "--", "packets").split("\0")
    assert sorted(p for asked in state.asked.values() for p in asked["untracked"]) == sorted(filter(None, others))
    assert len(others) > 6 and state.asked["oth"]["untracked"] == [] and "oth" in state.clean
    shutil.rmtree(fam / "deep")
    git.Repo.init(reg.root / OTH / "nested")
    state = git_state(reg.root)
    assert state is not None and state.asked["oth"]["untracked"] == [f"{OTH}/nested/.git"] and "oth" in state.dirty


def _age(root: Path, unit: str) -> None:
    """Make a unit's folder times old enough to be trusted."""
    past = time.time_ns() - 3600 * 10**9
    for folder in [root / "packets" / unit, *(p for p in (root / "packets" / unit).rglob("*") if p.is_dir())]:
        os.utime(folder, ns=(past, past))


def test_folder_times_spare_asking_git_and_still_see_a_new_file(reg: Reg) -> None:
    other_family(reg)
    reg.commit("two families")
    _age(reg.root, "fam")
    _age(reg.root, "oth")
    cache = ResultCache.open(reg.root, PACK)
    state = git_state(reg.root, cache)
    assert state is not None and set(state.asked) == {"fam", "oth"}  # nothing cached yet: git is asked
    assert checked(reg.root) == []
    state = git_state(reg.root, ResultCache.open(reg.root, PACK))
    assert state is not None and state.asked == {} and set(state.clean) == {"fam", "oth"}
    # A new untracked file changes its folder's time: git is asked about that unit and lists it.
    x = run()
    x["id"] = "run-x"
    reg.put(f"{OTH}/measurements/run-x.json", x)
    state = git_state(reg.root, ResultCache.open(reg.root, PACK))
    assert (
        state is not None
        and set(state.asked) == {"oth"}
        and state.asked["oth"]["untracked"] == [f"{OTH}/measurements/run-x.json"]
    )
    assert "oth" in state.dirty and set(state.clean) == {"fam"}
    reg.put(f"{F}/pkt/measurements/run-x.json", x)  # the same id in a second, trusted-until-now unit
    assert "duplicate-id" in {f["code"] for f in checked(reg.root)}


def test_a_file_that_leaves_the_index_is_seen_though_no_folder_changed(reg: Reg) -> None:
    """``git rm --cached`` (or a reset of a staged file) leaves a file untracked without touching its folder: the
    unit is read again, and what it then holds is never kept as the committed folder's result."""
    other_family(reg)
    reg.commit("two families")
    _age(reg.root, "fam")
    _age(reg.root, "oth")
    assert checked(reg.root) == []
    evil = f"{F}/pkt/measurements/evil.json"
    reg.put(evil, run())  # named for another id
    reg.repo.git.add(evil)
    _age(reg.root, "fam")
    assert "layout" in codes_at(checked(reg.root), evil)
    reg.repo.git.rm("--cached", "-q", evil)  # untracked now; every folder's time as it was
    state = git_state(reg.root, ResultCache.open(reg.root, PACK))
    assert state is not None and "fam" in state.dirty and state.asked["fam"]["untracked"] == [evil]
    assert "layout" in codes_at(checked(reg.root), evil)
    (reg.root / evil).unlink()
    _age(reg.root, "fam")
    assert checked(reg.root) == []  # checked() compares the cached run with a fresh one


def test_not_a_git_tree_or_no_commit_still_validates(tmp_path: Path, reg: Reg) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(reg.root, plain, ignore=shutil.ignore_patterns(".git"))
    assert git_state(plain) is None
    assert checked(plain) == []
    reg.edit(PACKET, lambda d: d.update(revision="no-such-revision"))
    shutil.copy(reg.root / PACKET, plain / PACKET)
    assert "dangling-reference" in codes_at(checked(plain), PACKET)


def test_a_forged_corrupt_or_foreign_cache_is_never_trusted(reg: Reg) -> None:
    assert checked(reg.root) == []
    folder = reg.root / CACHE_DIR
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d["metrics"].update(decode_tok_s=["30.21"]))
    for path in folder.glob("*.json"):  # an entry from other code, claiming no findings
        entry = json.loads(path.read_text())
        entry.update(version="other code", findings=[])
        path.write_text(json.dumps(entry))
    assert "schema" in {f["code"] for f in checked(reg.root)}
    for path in folder.glob("*.json"):
        path.write_bytes(b"\x00garbage")
    assert "schema" in {f["code"] for f in checked(reg.root)}
    result = evreg("validate", "--format", "json", cwd=reg.root)
    assert result.returncode == 1 and "schema" in {f["code"] for f in json.loads(result.stdout)["findings"]}


def test_worker_processes_on_parts_of_units_find_what_one_process_finds(reg: Reg, monkeypatch: Any) -> None:
    other_family(reg)
    reg.edit(RUN_O, lambda d: d["metrics"].update(decode_tok_s=[]))  # fam's citation breaks
    reg.edit(f"{F}/views/tp-view.json", lambda d: d["series"][0]["measurement_ids"].append("run-x"))
    monkeypatch.setenv("EVREG_WORKERS", "1")
    _registry, alone = validate(reg.root, PACK, use_cache=False)
    monkeypatch.setenv("EVREG_WORKERS", "2")
    monkeypatch.setattr(workers, "PART_FILES", 2)  # units cut into parts of two files
    assert workers.count(_registry, ["fam", "oth"]) == 2
    _registry, forked = validate(reg.root, PACK)  # and the cache they fill is the same
    assert forked.findings == alone.findings and {"citation-unresolved", "dangling-reference"} <= {
        f.code for f in forked.findings
    }
    monkeypatch.setenv("EVREG_WORKERS", "1")
    _registry, cached = validate(reg.root, PACK)
    assert cached.findings == alone.findings


@pytest.mark.slow
def test_a_validation_worker_that_dies_is_an_error_not_a_hang(reg: Reg, monkeypatch: Any) -> None:
    """A pool replaces a worker killed mid-part (the out-of-memory killer, say) but the part is lost: validation
    must stop with an error, not wait for it forever; the other workers' parts and a healthy run are unaffected."""
    import signal

    from evreg.store import load

    other_family(reg)
    monkeypatch.setenv("EVREG_WORKERS", "2")
    registry = load(reg.root)

    def dies_on_oth(_r: Any, unit: str, paths: list[str]) -> int:
        if unit == "oth":
            os.kill(os.getpid(), signal.SIGKILL)
        return len(paths)

    with pytest.raises(OSError, match="EVREG_WORKERS=1"):
        workers.map_units(registry, ["fam", "oth"], dies_on_oth)
    counted = workers.map_units(registry, ["fam", "oth"], lambda _r, _u, paths: len(paths))
    assert counted == {u: [len(registry.paths_of(u))] for u in ("fam", "oth")}
    monkeypatch.setattr(workers, "PART_FILES", 1)  # parts of one file, more parts than a worker lives for
    assert sum(sum(v) for v in workers.map_units(registry, ["fam", "oth"], lambda _r, _u, p: len(p)).values()) == sum(
        len(registry.paths_of(u)) for u in ("fam", "oth")
    )


class _DiesWhenPickled:
    """A part's result whose pickling kills the worker: it returned, then died before its result was sent."""

    def __reduce__(self) -> Any:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
        return (int, ())


def _returns_then_dies_on_oth(_r: Any, unit: str, paths: list[str]) -> Any:
    return _DiesWhenPickled() if unit == "oth" else len(paths)


@pytest.mark.slow
def test_a_validation_worker_that_dies_sending_its_result_is_an_error_not_a_hang(reg: Reg, monkeypatch: Any) -> None:
    """A worker killed after ``fn`` returned but before its result was pickled and sent (where its memory peaks):
    its part is not lost as done with no process shown working on it, and the parent does not wait forever."""
    from evreg.store import load

    other_family(reg)
    monkeypatch.setenv("EVREG_WORKERS", "2")
    monkeypatch.setattr(workers, "RETURNED_GRACE", 1.0, raising=False)
    registry = load(reg.root)
    started = time.monotonic()
    with pytest.raises(OSError, match="EVREG_WORKERS=1"):
        workers.map_units(registry, ["fam", "oth"], _returns_then_dies_on_oth)
    assert time.monotonic() - started < 30


def test_a_lost_cache_entry_does_not_hide_a_deleted_file(reg: Reg) -> None:
    other_family(reg)
    reg.commit("two families")
    assert checked(reg.root) == []
    cache = ResultCache.open(reg.root, PACK)
    cache._file("oth").unlink()  # oth's entry is gone (a failed write, a hand clean-up) ...
    (reg.root / RUN_O).unlink()  # ... and so is the measurement fam cites
    assert "citation-unresolved" in codes_at(checked(reg.root), PACKET)


def test_a_commit_is_checked_in_one_process(reg: Reg, monkeypatch: Any) -> None:
    """Forked workers would share GitPython's one ``git cat-file`` process."""
    monkeypatch.setenv("EVREG_WORKERS", "2")
    other_family(reg)
    reg.commit("two families")
    from evreg.store import load

    assert workers.count(load(reg.root), ["fam", "oth"]) == 2
    committed = load(reg.root, "HEAD")
    assert workers.count(committed, ["fam", "oth"]) == 1
    assert rules.run(committed, PACK).findings == []


def test_history_rules_see_the_whole_store_when_units_come_from_the_cache(reg: Reg) -> None:
    other_family(reg)
    base = reg.commit("two families")
    validate(reg.root, PACK)  # fills the cache: both units are then known without being listed
    (reg.root / RUN_O).unlink()
    reg.commit("delete a published measurement")
    _registry, cached = validate(reg.root, PACK, base=base)
    _registry, fresh = validate(reg.root, PACK, base=base, use_cache=False)
    assert cached.findings == fresh.findings
    assert {f.file for f in cached.findings if f.code == "record-deleted"} == {RUN_O}


def test_the_cache_version_covers_every_module_that_validates() -> None:
    """A change to the store or a rule module invalidates cached results (the store is a subpackage)."""
    from evreg.core import codebase

    sources = {p.relative_to(REPO).as_posix() for p in codebase.sources()}
    assert {
        "registry/evreg/store/documents.py",
        "registry/evreg/store/registry.py",
        "registry/evreg/core/findings.py",
        "registry/evreg/vocab/metrics.json",
        "validators/evreg_rules/history.py",
    } <= sources


def test_cached_findings_take_the_baseline_as_it_is_now(reg: Reg) -> None:
    """Cached findings are made already marked by the baseline (``rules.baseline_marker``): a reason
    changed, an entry removed or its message no longer matching is seen on units whose files did not
    change, exactly as a fresh validation sees it."""
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(caveat="decode reached 91.5 tok/s here"))
    reg.commit("an orphan figure")
    [orphan] = [f for f in checked(reg.root) if f["code"] == "orphan-number"]
    entry = {k: orphan[k] for k in ("code", "file", "pointer", "message", "digest")}

    def baseline(*entries: dict[str, Any]) -> list[dict[str, Any]]:
        reg.put("packets/baseline.json", {"kind": "baseline", "entries": list(entries)})
        return [f for f in checked(reg.root) if f["code"] == "orphan-number"]

    assert [(f["baselined"], f["baseline_reason"]) for f in baseline({**entry, "reason": "one"})] == [(True, "one")]
    assert ResultCache.open(reg.root, PACK).entry("fam") is not None  # fam's result is the cached one from here on
    assert [(f["baselined"], f["baseline_reason"]) for f in baseline({**entry, "reason": "two"})] == [(True, "two")]
    assert [f["baselined"] for f in baseline({**entry, "message": "another", "reason": "x"})] == [False]
    assert [f["baselined"] for f in baseline()] == [False]


def test_a_commit_loaded_through_the_cache_is_the_commit(reg: Reg) -> None:
    """``load_commit`` lists only the units whose tree no cache entry was stored for; the rest come from their
    entries: the same files, ids and findings as listing the whole commit."""
    from evreg.check.results import load_commit
    from evreg.store import load

    other_family(reg)
    reg.commit("two families")
    validate(reg.root, PACK)  # the working tree's units, cached
    reg.edit(RUN_O, lambda d: d.update(caveat="Now edited."))
    reg.commit("oth changed")  # oth's tree is one no entry was stored for
    lazy = load_commit(reg.root, "HEAD", ResultCache.open(reg.root, PACK, keep=False))
    full = load(reg.root, "HEAD")
    assert lazy.unit_paths["fam"] is None and lazy.unit_paths["oth"] is not None  # fam from its entry
    assert [d.path for d in lazy.documents] == [d.path for d in full.documents]
    assert {k: lazy.providers(k) for k in full.keys} == {k: full.providers(k) for k in full.keys}
    assert rules.run(lazy, PACK).findings == rules.run(full, PACK).findings


def test_a_hand_written_page_is_rendered_again_only_when_it_or_the_configuration_changes(
    reg: Reg, monkeypatch: Any
) -> None:
    """What a hand-written page shows once rendered is checked from the validation cache while the page, its path,
    the site's configuration and the code are as they were; a change to any renders it again."""
    from evreg.claims import htmlscan

    init_site(reg)
    reg.put("site/notes.md", "# Notes\n\nThe card reached 52.3 tok/s.\n")
    renders: list[str] = []
    real = htmlscan.rendered
    monkeypatch.setattr(htmlscan, "rendered", lambda text, ext: renders.append(text) or real(text, ext))

    def orphans() -> list[str]:
        found = checked(reg.root)
        return sorted(f["fields"].get("figure") or f["fields"]["text"] for f in found if f["file"] == "site/notes.md")

    assert orphans() == ["52.3 tok/s"]  # in what the rendered page shows
    pages = len(renders) // 2  # each of the site's pages, by the cached validation and by the fresh one
    renders.clear()
    assert orphans() == ["52.3 tok/s"]
    assert len(renders) == pages  # the fresh validation's only: the cached one took every page's findings
    renders.clear()
    reg.put("site/notes.md", "# Notes\n\nThe card reached 48.1 tok/s.\n")
    assert orphans() == ["48.1 tok/s"]
    assert len(renders) == pages + 1 and sum("48.1" in r for r in renders) == 2  # the changed page alone, again
    renders.clear()
    config = (reg.root / "mkdocs.yml").read_text("utf-8")
    (reg.root / "mkdocs.yml").write_text(config.replace("markdown_extensions:\n", "markdown_extensions:\n  - abbr\n"))
    assert orphans() == ["48.1 tok/s"]
    assert len(renders) == 2 * pages  # another configuration: every page again
    from evreg.core import codebase

    lines = codebase.environment().splitlines()
    assert lines[0] == f"{sys.implementation.name}=={'.'.join(map(str, sys.version_info[:3]))}".encode()  # its re
    assert any(line.lower().startswith(b"markdown-") for line in lines)
    monkeypatch.setattr(codebase, "environment", lambda: b"markdown-0.0.dist-info")  # another environment's packages
    renders.clear()
    assert orphans() == ["48.1 tok/s"]
    assert len(renders) == 2 * pages  # rendered by other packages: every page again
    (reg.root / "build/cache/kept.json").write_bytes(b"\x00garbage")
    renders.clear()
    assert orphans() == ["48.1 tok/s"]
    assert len(renders) == 2 * pages  # a file that is not the cache's own is not read


def test_findings_that_may_not_be_kept_are_worked_out_again(tmp_path: Path) -> None:
    from evreg.core import codes

    finding = codes.ORPHAN_NUMBER.at("site/a.md", "", "figure '1 s' is not a citation", line=3, column=2)
    calls: list[bool] = []

    def compute(lasting: bool) -> tuple[list[Any], bool]:
        calls.append(lasting)
        return [finding], lasting

    for lasting in (False, True):
        first = ResultCache(tmp_path / "units", "v1")
        assert first.kept(b"page", functools.partial(compute, lasting)) == [finding]
        first.save_kept()
        again = ResultCache(tmp_path / "units", "v1")
        assert again.kept(b"page", functools.partial(compute, lasting)) == [finding]
    assert calls == [False, False, True]  # kept once it may be; read back equal to what was found
    assert ResultCache(tmp_path / "units", "v2").kept(b"page", lambda: compute(True)) == [finding]
    assert calls[-1] is True and len(calls) == 4  # another code version's entries are not its own


def test_configurations_that_json_spells_alike_keep_apart(reg: Reg) -> None:
    """A value YAML reads as NaN and one it reads as null render a table differently (``use_align_attribute``: NaN is
    true, an ``align`` attribute; null is false, a style the page may not hold): the kept findings of one are not the
    other's."""
    init_site(reg)
    reg.put("site/t.md", "# Table\n\n| Model | Cards |\n|:---|---:|\n| A | 4 |\n")
    config = (reg.root / "mkdocs.yml").read_text("utf-8")

    def styled(value: str) -> int:
        (reg.root / "mkdocs.yml").write_text(
            config.replace("  - tables\n", f"  - tables:\n      use_align_attribute: {value}\n"), "utf-8"
        )
        return sum(f["code"] == "site-style-unsafe" for f in checked(reg.root) if f["file"] == "site/t.md")

    assert styled(".nan") == 0
    assert styled("null") > 0  # the cached run equals the fresh one (``checked``)
    assert styled(".nan") == 0


def test_a_page_whose_name_is_not_utf8_is_checked_as_any(reg: Reg) -> None:
    init_site(reg)
    reg.put("site/t.md", "# T\n\nIt reached 52.3 tok/s.\n")
    (reg.root / "site").joinpath(os.fsdecode(b"caf\xe9.md")).write_text("# C\n\nIt reached 48.1 tok/s.\n", "utf-8")
    found = checked(reg.root)
    assert "internal-error" not in {f["code"] for f in found}
    assert {f["fields"].get("text") for f in found if f["code"] == "orphan-number"} >= {"52.3 tok/s", "48.1 tok/s"}


def test_a_cache_entry_nested_too_deep_to_write_back_is_refused_not_a_crash(tmp_path: Path) -> None:
    """A unit's entry holding a value nested deeper than records may (orjson reads it, but cannot write it back when
    the entry's listing is kept anew) is no entry: the unit is checked again, and validation neither fails nor
    stops."""
    import hashlib

    reg = Reg(tmp_path / "reg")
    reg.commit("init")
    expected = [(f.code, f.file) for f in validate(reg.root)[1].findings]
    unit = F.split("/", 1)[1]
    stored = reg.root / CACHE_DIR / f"{hashlib.sha1(unit.encode(), usedforsecurity=False).hexdigest()[:20]}.json"
    entry = json.loads(stored.read_text())
    entry["x"], entry["listed"] = json.loads("[" * 300 + "]" * 300), "stale"
    stored.write_text(json.dumps(entry))
    for _ in range(2):
        report = validate(reg.root)[1]
        assert [(f.code, f.file) for f in report.findings] == expected
    assert "x" not in json.loads(stored.read_text())
