"""The history rules read a change, not the store: what they find from the touched paths (and the records filed
under the ids those hold) is what they find reading every record; and attacks on the shortcuts: ids changed in
place, copies under a published id, evidence cited through JSON escapes, paths git would quote, records filed under
other names, git settings and attributes, links, and caches a change brings. On a copy of the real records: a
perturbed or edited copy of a published run backs no raised grade, and a baselined finding stays accepted only while
its text is unchanged."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evreg.check import rules
from evreg.check.pipeline import validate
from evreg.check.results import code_version
from evreg.core.findings import Finding
from evreg.core.jsonio import canonical
from evreg.store import Registry, change_base, load
from evreg_rules.history import Change, _containing, check_history, history_findings
from helpers import (
    EVIDENCE,
    Q35,
    Q35_PACKET,
    Q35_PACKET_DIR,
    Q35_STRICT,
    F,
    Reg,
    blocking,
    copy_run,
    edit_json,
    evreg,
    has,
)

RUN = f"{F}/pkt/measurements/run-1.json"


def _with_base(root: Path) -> Registry:
    """The working tree's registry with its base (HEAD) and changed paths, as ``validate --base HEAD`` loads it."""
    head = load(root)
    sha, changed = change_base(root, "HEAD")
    head.base = load(root, sha)
    head.changed = changed
    return head


def _shown(findings: Iterator[Finding]) -> list[tuple[str, str, str, str, str]]:
    return sorted((f.code, f.file, f.pointer, f.message, f.severity.value) for f in findings)


def _history(root: Path) -> list[tuple[str, str, str, str, str]]:
    return _shown(check_history(_with_base(root)))


# -- the property: reading the change finds what reading everything finds --------------------------------------


@pytest.fixture(scope="module")
def store(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history") / "registry"
    shutil.copytree(pristine, root)
    return root


def _files(root: Path, pattern: str) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "packets").glob(pattern) if p.is_file())


def _load_json(root: Path, path: str) -> Any:
    return json.loads((root / path).read_text("utf-8"))


def _dump(root: Path, path: str, data: Any) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def _edit_number(root: Path, path: str, _: str) -> None:
    data = _load_json(root, path)
    data["caveat"] = "Reworded after the fact."
    _dump(root, path, data)


def _retire(root: Path, path: str, _: str) -> None:
    data = _load_json(root, path)
    data["retired"] = {"reason": "superseded", "date": "2026-12-01"}
    _dump(root, path, data)


def _delete(root: Path, path: str, _: str) -> None:
    (root / path).unlink()


def _move(root: Path, path: str, other: str) -> None:
    target = str(Path(other).parent / "measurements" / Path(path).name) if other.endswith("packet.json") else other
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    shutil.move(root / path, root / target)


def _copy_same_id(root: Path, path: str, name: str) -> None:
    data = _load_json(root, path)
    data["caveat"] = "A second file under a published id."
    _dump(root, str(Path(path).parent / f"{name}.json"), data)


def _under_its_id(root: Path, path: str, _: str) -> None:
    """A copy, edited, at the file name its id gives (the published file itself, or its twin where the
    published file is named otherwise)."""
    data = _load_json(root, path)
    data["caveat"] = "Filed again under its id."
    _dump(root, str(Path(path).parent / f"{data['id']}.json"), data)


def _new_run(root: Path, path: str, name: str) -> None:
    data = _load_json(root, path)
    data["id"] = f"{data['id']}-{name}"
    data.pop("retired", None)
    _dump(root, str(Path(path).parent / f"{data['id']}.json"), data)


def _id_in_place(root: Path, path: str, name: str) -> None:
    data = _load_json(root, path)
    data["id"] = f"{data['id']}-{name}"
    _dump(root, path, data)


def _evidence(root: Path, path: str, _: str) -> None:
    with (root / path).open("ab") as f:
        f.write(b"\n")


def _raise(root: Path, path: str, _: str) -> None:
    data = _load_json(root, path)
    data.setdefault("grades", {})["evidence"] = {"grade": "A", "reason": "raised"}
    _dump(root, path, data)


def _family(root: Path, path: str, _: str) -> None:
    data = _load_json(root, path)
    for rev in data.get("weight_revisions", []):
        rev["repository"] = "someone/else"
    _dump(root, path, data)


EDITS: list[tuple[str, Callable[[Path, str, str], None]]] = [
    ("*/**/measurements/*.json", _edit_number),
    ("*/**/measurements/*.json", _retire),
    ("*/**/measurements/*.json", _delete),
    ("*/**/measurements/*.json", _move),
    ("*/**/measurements/*.json", _copy_same_id),
    ("*/**/measurements/00-*.json", _under_its_id),
    ("*/**/measurements/*.json", _new_run),
    ("*/**/measurements/*.json", _id_in_place),
    ("*/**/packet.json", _delete),
    ("*/**/packet.json", _raise),
    ("*/**/packet.json", _id_in_place),
    ("*/family.json", _family),
    ("*/evidence/*", _evidence),
    ("*/evidence/*", _delete),
]


def test_the_base_searched_in_the_work_tree_finds_what_the_commit_holds(store: Path) -> None:
    """Untouched files are searched in the work tree, touched ones in the commit: whatever the index and the work
    tree do to a file that holds a needle in the base, the search finds what searching the whole commit finds."""
    runs = _files(store, "*/**/measurements/*.json")
    needle = _load_json(store, runs[0])["id"]
    holders = sorted(
        p.relative_to(store).as_posix() for p in (store / "packets").rglob("*.json") if needle in p.read_text()
    )
    git = ["git", "-c", "user.name=a", "-c", "user.email=b@c"]
    try:
        for path in holders:  # the needle gone from the work tree, a staged copy keeping it, a file untracked
            data = _load_json(store, path)
            _dump(store, path, {**data, "id": "other"} if data.get("id") == needle else {})
        subprocess.run([*git, "add", holders[0]], cwd=store, check=True)
        subprocess.run([*git, "rm", "-q", "--cached", runs[1]], cwd=store, check=True)
        (store / "packets/stray.json").write_text(json.dumps({"id": needle}))
        head = _with_base(store)
        assert head.base is not None
        change = Change(head, head.base)
        whole = head.base.source.containing([needle])  # type: ignore[attr-defined]
        assert whole is not None and set(holders) <= whole and "packets/stray.json" not in whole
        assert _containing(change, [needle]) == whole
    finally:
        subprocess.run(["git", "reset", "-q", "--hard"], cwd=store, check=True)
        subprocess.run(["git", "clean", "-qfd"], cwd=store, check=True)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(0, 10**6), max_size=2),
    st.lists(st.tuples(st.integers(0, len(EDITS) - 1), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=4),
)
def test_the_change_finds_what_reading_every_record_finds(
    store: Path, misnamed: list[int], edits: list[tuple[int, int, int]]
) -> None:
    """The base may hold records filed under another name than their id (a ``layout`` finding a maintainer
    accepted); the change then edits, moves, copies and deletes."""
    pristine = subprocess.run(["git", "rev-parse", "HEAD"], cwd=store, capture_output=True, text=True).stdout.strip()
    try:
        runs = _files(store, "*/**/measurements/*.json")
        for pick in misnamed:
            path = runs[pick % len(runs)]
            if (store / path).exists():
                subprocess.run(["git", "mv", path, str(Path(path).parent / f"00-{pick}.json")], cwd=store, check=True)
        if misnamed:
            subprocess.run(
                ["git", "-c", "user.name=a", "-c", "user.email=b@c", "commit", "-qam", "misnamed"], cwd=store
            )
        for which, pick, other in edits:
            pattern, edit = EDITS[which]
            files = _files(store, pattern)
            if files:
                targets = _files(store, "*/**/packet.json")
                edit(store, files[pick % len(files)], targets[other % len(targets)] if edit is _move else f"x{other}")
        head = _with_base(store)
        assert head.base is not None
        assert _shown(check_history(head)) == _shown(history_findings(Change(head, head.base, everything=True)))
    finally:
        subprocess.run(["git", "reset", "-q", "--hard", pristine], cwd=store, check=True)
        subprocess.run(["git", "clean", "-qfd"], cwd=store, check=True)


@pytest.mark.slow
def test_one_added_measurement_reads_what_it_touches_not_the_store(real: Path) -> None:
    [path] = [p for p in _files(real, "*/**/measurements/*.json") if _load_json(real, p).get("evidence")][:1]
    _new_run(real, path, "new")
    head = _with_base(real)
    assert head.base is not None
    assert _shown(check_history(head)) == []
    read_base = [p for p, d in head.base.by_path.items() if d.read]
    read_head = [p for p, d in head.by_path.items() if d.read]
    assert len(read_base) <= 2 and len(read_head) <= 2, (read_base, read_head)
    assert len(head.base.files) > 500  # a store of real size was there to read


# -- attacks on the shortcuts ------------------------------------------------------------------------------------


def test_an_id_changed_in_place_is_a_rewrite(reg: Reg) -> None:
    """The file stays where it is, so no record has the published id any more and nothing was deleted: the
    record now at its path is its successor, and its id changed."""
    reg.edit(RUN, lambda d: d.update(id="run-1b"))
    found = _history(reg.root)
    assert ("history-rewrite", RUN, "/id") in {f[:3] for f in found}
    assert "published measurement 'run-1' changed its id" in {f[3] for f in found}


@pytest.mark.parametrize("name", ["run-0.json", "run-9.json"])
def test_a_second_file_under_a_published_id_is_refused(reg: Reg, name: str) -> None:
    """A copy with other numbers filed under the published id, sorting before or after the published file."""
    data = reg.read(RUN)
    data["metrics"]["decode_tok_s"][0] = 99.0
    reg.put(f"{Path(RUN).parent}/{name}", data)
    introduced = {f.code for f in blocking(reg.root, base=True) if f.introduced}
    assert introduced & {"history-rewrite", "duplicate-id", "layout"}, introduced


OTHER = "packets/fam/pkt/evidence/other.log"


@pytest.mark.parametrize(
    "spell",
    [
        lambda text: text.replace("/", "\\/"),
        lambda text: text.replace('"packets', '"\\u0070ackets'),
        lambda text: text.replace("other.log", "other\\u002elog"),
    ],
    ids=["solidus", "letter", "dot"],
)
def test_evidence_cited_through_json_escapes_is_published_evidence(reg: Reg, spell: Callable[[str], str]) -> None:
    """The base's record spells the path with escapes, so the file's bytes never hold it as it is."""
    reg.raw(OTHER, b"decode 30.2\n")
    data = reg.read(RUN)
    data.update(id="run-9", evidence=OTHER, evidence_sha256={OTHER: hashlib.sha256(b"decode 30.2\n").hexdigest()})
    data.pop("evidence_locators", None)
    text = spell(canonical(data))
    assert OTHER not in text
    reg.put(f"{Path(RUN).parent}/run-9.json", text)
    reg.commit("a run citing other.log, spelled with escapes")
    reg.raw(OTHER, b"decode 99.9\n")
    messages = {f[3] for f in _history(reg.root) if f[0] == "history-rewrite"}
    assert f"evidence file {OTHER} of published run-measurement 'run-9' was changed or removed" in messages


@pytest.mark.parametrize("name", ["run é.log", 'run "quoted".log', "run\ttab.log"])
def test_a_changed_evidence_file_whose_name_git_would_quote(reg: Reg, name: str) -> None:
    """``git diff --name-only`` quotes such names unless asked for raw (-z) output: the quoted name named no
    file, so the change was not seen as touching the evidence."""
    path = f"packets/fam/pkt/evidence/{name}"
    reg.raw(path, b"decode 30.2\n")
    digest = hashlib.sha256(b"decode 30.2\n").hexdigest()
    reg.edit(RUN, lambda d: d.update(evidence=path, evidence_sha256={path: digest}))
    reg.commit("evidence with an unusual name")
    reg.raw(path, b"decode 99.9\n")
    head = _with_base(reg.root)
    assert path in head.changed
    messages = {f.message for f in check_history(head) if f.code == "history-rewrite"}
    assert any(m.startswith(f"evidence file {path} of published") for m in messages), messages


def test_evidence_of_another_familys_record_is_published_evidence(reg: Reg) -> None:
    """A record may cite a file anywhere in the repository; the search is over every family."""
    reg.raw("packets/other/evidence/shared.log", b"decode 30.2\n")
    digest = hashlib.sha256(b"decode 30.2\n").hexdigest()
    reg.edit(
        RUN,
        lambda d: d.update(
            evidence="packets/other/evidence/shared.log", evidence_sha256={"packets/other/evidence/shared.log": digest}
        ),
    )
    reg.commit("cross-family evidence")
    (reg.root / "packets/other/evidence/shared.log").unlink()
    messages = {f[3] for f in _history(reg.root) if f[0] == "history-rewrite"}
    assert (
        "evidence file packets/other/evidence/shared.log of published run-measurement 'run-1' was changed or "
        "removed" in messages
    )


def test_the_search_of_a_commit_finds_what_python_finds(reg: Reg) -> None:
    """``GitTree.containing`` against reading every file: any needle, the backslash included."""
    reg.put(f"{F}/notes/a.json", '{"x": "back\\\\slash"}')
    reg.commit("a backslash")
    base = load(reg.root, "HEAD")
    needles = [EVIDENCE, "\\", "run-1", "no such text"]
    found = base.source.containing(needles)  # type: ignore[attr-defined]
    expected = {p for p in base.files if any(n.encode() in base.source.read(p) for n in needles)}
    assert found == expected and found


def test_a_change_of_many_long_paths_is_searched_in_one_go(reg: Reg) -> None:
    """Over 100,000 characters of changed paths (more than a command line may hold): the needles go to git on
    its standard input, and the published record citing one of them is found."""
    reg.raw(OTHER, b"x\n")
    reg.edit(RUN, lambda d: d.update(evidence=OTHER, evidence_sha256={OTHER: hashlib.sha256(b"x\n").hexdigest()}))
    reg.commit()
    reg.raw(OTHER, b"y\n")
    for i in range(1100):
        reg.raw(f"packets/bulk/evidence/{'n' * 90}-{i:04}.log", b"")
    head = _with_base(reg.root)
    assert head.base is not None
    assert sum(map(len, head.changed)) > 100_000
    assert head.base.source.containing(head.changed) == {RUN}  # type: ignore[attr-defined]
    assert any(f.code == "history-rewrite" and OTHER in f.message for f in check_history(head))


# -- records under other names, git settings and caches a change brings -------------------------------------------


def test_a_published_record_whose_name_is_not_its_id_is_still_found(reg: Reg) -> None:
    """A base file named otherwise than its id (its ``layout`` finding accepted) is found by its id, so a
    rewritten copy filed under the id is a rewrite, not a new record."""
    moved = f"{Path(RUN).parent}/aaa-run.json"
    reg.repo.git.mv(RUN, moved)
    reg.commit("a published run filed under another name")
    data = reg.read(moved)
    data["metrics"]["decode_tok_s"][0] = 99.0
    reg.put(RUN, data)
    found = _history(reg.root)
    assert ("history-rewrite", RUN, "/metrics") in {f[:3] for f in found}, found


def test_a_retirement_undone_by_moving_the_record(reg: Reg) -> None:
    """The move is a warning of its own; the retirement it drops is still an error."""
    reg.edit(RUN, lambda d: d.update(retired={"reason": "wrong build", "date": "2026-11-01"}))
    reg.commit("retired")
    data = reg.read(RUN)
    data.pop("retired")
    (reg.root / RUN).unlink()
    reg.put("packets/fam/measurements/run-1.json", data)
    found = _history(reg.root)
    assert ("history-rewrite", "packets/fam/measurements/run-1.json", "/retired") in {f[:3] for f in found}, found


def test_git_colour_settings_do_not_blind_the_search(reg: Reg) -> None:
    reg.raw(OTHER, b"x\n")
    reg.edit(RUN, lambda d: d.update(evidence=OTHER))
    reg.commit()
    with reg.repo.config_writer() as cw:
        cw.set_value("color", "ui", "always")
        cw.set_value("color", "grep", "always")
    reg.raw(OTHER, b"y\n")
    base = load(reg.root, "HEAD")
    assert base.source.containing([OTHER]) == {RUN}  # type: ignore[attr-defined]
    assert any(f[0] == "history-rewrite" and OTHER in f[3] for f in _history(reg.root))


def test_a_change_to_git_attributes_compares_every_record(reg: Reg) -> None:
    """``ident`` (or a filter) rewrites what a checkout writes while git lists no changed file: a change to
    ``.gitattributes`` is read the slow way, every record compared."""
    reg.edit(RUN, lambda d: d.update(caveat="Run $Id$"))
    reg.commit("a caveat with an ident keyword")
    (reg.root / ".gitattributes").write_text(f"{RUN} ident\n")
    reg.commit("attributes")
    (reg.root / RUN).unlink()
    reg.repo.git.checkout("--", RUN)  # as a fresh clone of the pull request writes it
    assert "$Id: " in (reg.root / RUN).read_text()
    head = load(reg.root)
    sha, head.changed = change_base(reg.root, "HEAD~1")
    head.base = load(reg.root, sha)
    assert head.changed == {".gitattributes"}
    found = _shown(check_history(head))
    assert ("history-rewrite", RUN, "/caveat") in {f[:3] for f in found}, found


def test_an_evidence_file_behind_a_symlink_is_checked_again_when_its_target_changes(reg: Reg) -> None:
    """The link is in the unit, its target outside: the unit's digest covers the link only, so the read is
    a dependency; a cached run sees the target's new bytes (and the hash that no longer matches)."""
    reg.raw("raw/runs.json", b"decode 30.2\n")
    link = reg.root / OTHER
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(Path("../../../../raw/runs.json"))
    digest = hashlib.sha256(b"decode 30.2\n").hexdigest()
    reg.edit(RUN, lambda d: d.update(evidence=OTHER, evidence_sha256={OTHER: digest}))
    reg.commit("evidence through a link")
    assert "evidence-hash-mismatch" not in {f.code for f in blocking(reg.root)}
    validate(reg.root)  # the cache holds the unit now
    (reg.root / "raw/runs.json").write_bytes(b"decode 99.9\n")
    cached = {(f.code, f.file) for f in validate(reg.root)[1].blocking}
    fresh = {(f.code, f.file) for f in validate(reg.root, use_cache=False)[1].blocking}
    assert ("evidence-hash-mismatch", RUN) in fresh and cached == fresh


def test_a_committed_cache_of_commit_findings_is_not_trusted(reg: Reg) -> None:
    """Which findings a change introduced is read from the base's findings; a pull request could bring its
    own under build/cache/commits/ to mark its errors as already on the base."""
    base = reg.commit("base")
    forged = reg.root / "build/cache/commits" / f"{base}.json"
    forged.parent.mkdir(parents=True)
    reg.edit(RUN, lambda d: d.update(caveat="Edited."))
    findings = validate(reg.root, base="HEAD", use_cache=False)[1].findings
    version = code_version(rules.discover())
    same = [[f.code, f.file, f.pointer, f.message] for f in findings]
    forged.write_text(json.dumps({"version": version, "same": same}))
    reg.repo.git.add("-f", str(forged))
    introduced = [f for f in validate(reg.root, base="HEAD")[1].findings if f.introduced]
    assert any(f.code == "history-rewrite" for f in introduced)


@pytest.mark.parametrize(
    "same",
    [[["history-rewrite", RUN, "", 3]], [["history-rewrite", RUN, ""]], [None], {"a": 1}, "text", [[[[]]]] * 100],
    ids=["a number for a message", "three fields", "null", "an object", "text", "nested lists"],
)
def test_a_malformed_entry_of_commit_findings_is_worked_out_again(reg: Reg, same: object) -> None:
    """The base's findings kept per commit are read only whole (each four texts), else worked out again: never a
    traceback, never an entry taken in part."""
    base = reg.commit("base")
    reg.edit(RUN, lambda d: d.update(caveat="Edited."))
    expected = [(f.code, f.file, f.introduced) for f in validate(reg.root, base="HEAD")[1].findings]
    kept = reg.root / "build/cache/commits" / f"{base}.json"
    whole = kept.read_bytes()  # the base's findings, kept
    kept.write_text(json.dumps({"version": code_version(rules.discover()), "same": same}))
    assert [(f.code, f.file, f.introduced) for f in validate(reg.root, base="HEAD")[1].findings] == expected
    assert kept.read_bytes() == whole  # and kept anew


# -- links ------------------------------------------------------------------------------------------------------------


def test_a_cache_committed_behind_a_link_is_not_used(reg: Reg) -> None:
    """A pull request commits a forged cache (entries without findings) and ``build`` as a link to it: git
    tracks nothing under ``build/cache`` by that name, but the cache is the author's word all the same."""
    reg.put(f"{F}/pkt/measurements/run-bad.json", {"kind": "run-measurement", "id": "run-bad"})
    reg.commit("an invalid record")
    assert validate(reg.root)[1].errors()
    for entry in (reg.root / "build/cache/units").glob("*.json"):
        data = json.loads(entry.read_text())
        entry.write_text(json.dumps({**data, "findings": []}))  # forged: nothing found
    shutil.move(reg.root / "build", reg.root / "cachedir")
    (reg.root / "build").symlink_to("cachedir")
    reg.repo.git.add("-f", "build", "cachedir")
    reg.commit("a cache of our own")
    report = validate(reg.root)[1]
    assert report.errors() and "build is a symlink" in report.summary()["cache_unused"]
    assert validate(reg.root, base="HEAD~1")[1].errors()


def test_a_cache_that_cannot_be_used_is_said_once_with_the_fix(reg: Reg) -> None:
    """A registry whose build/ git tracks is checked without the cache, and the summary line says why and how to
    fix it (never ignored silently)."""
    reg.raw("build/notes.txt", b"tracked by mistake\n")
    reg.repo.git.add("-f", "build/notes.txt")
    reg.commit("build/ tracked")
    done = evreg("validate", cwd=reg.root)
    [line] = [x for x in done.stdout.splitlines() if "without the cache" in x]
    assert "git rm -r --cached build" in line and ".gitignore" in line
    assert "cache_unused" not in validate(reg.root, use_cache=False)[1].summary()


def test_evidence_through_a_linked_folder_validates_against_a_base(reg: Reg) -> None:
    """A record cites evidence through a symlinked folder; checking the base commit through the cache reads
    the link's target by the commit's own tree."""
    reg.raw("packets/fam/evidence/real/runs.log", b"decode 30.2\n")
    (reg.root / "packets/fam/pkt/evidence/ln").symlink_to("../../evidence/real")
    cited = "packets/fam/pkt/evidence/ln/runs.log"
    digest = hashlib.sha256(b"decode 30.2\n").hexdigest()
    reg.edit(RUN, lambda d: d.update(evidence=cited, evidence_sha256={cited: digest}))
    reg.commit("evidence through a linked folder")
    validate(reg.root)
    cached = validate(reg.root, base="HEAD")[1].findings
    assert "internal-error" not in {f.code for f in cached}
    fresh = validate(reg.root, base="HEAD", use_cache=False)[1].findings
    assert [(f.code, f.file, f.message) for f in cached] == [(f.code, f.file, f.message) for f in fresh]


@pytest.mark.parametrize("name", ["00-old.json", "zz-old.json"])
def test_a_twin_of_a_published_record_named_otherwise_is_compared_wherever_it_sorts(reg: Reg, name: str) -> None:
    """The published run is filed as ``name`` (its ``layout`` finding accepted) and retired; the change adds
    its id's file without the retirement. Each record the change writes under a published id is compared
    with it, not only the last in path order."""
    moved = f"{Path(RUN).parent}/{name}"
    reg.edit(RUN, lambda d: d.update(retired={"reason": "wrong build", "date": "2026-11-01"}))
    reg.repo.git.mv(RUN, moved)
    reg.commit("a retired run filed under another name")
    data = reg.read(moved)
    data.pop("retired")
    reg.put(RUN, data)
    found = {f[:3] for f in _history(reg.root)}
    assert ("history-rewrite", RUN, "/retired") in found, found


def test_a_base_whose_packets_folder_is_a_link_is_a_finding_not_a_crash(reg: Reg) -> None:
    shutil.move(reg.root / "packets", reg.root / "data")
    (reg.root / "packets").symlink_to("data")
    reg.commit("packets as a link")
    for use_cache in (True, False):
        codes = {f.code for f in validate(reg.root, base="HEAD", use_cache=use_cache)[1].findings}
        assert "internal-error" not in codes


def test_evidence_under_a_retargeted_folder_link_is_changed_evidence(reg: Reg) -> None:
    """git lists only the link when a linked evidence folder is pointed elsewhere; every file cited under it
    changed, also where the reference states no sha256."""
    for name, text in (("real1", b"decode 30.2\n"), ("real2", b"decode 99.9\n")):
        reg.raw(f"packets/fam/evidence/{name}/runs.log", text)
    (reg.root / "packets/fam/pkt/evidence/d").symlink_to("../../evidence/real1")
    cited = "packets/fam/pkt/evidence/d/runs.log"
    reg.edit(RUN, lambda d: (d.update(evidence=cited), d.pop("evidence_sha256", None)))
    reg.commit("evidence through a linked folder, no hash")
    (reg.root / "packets/fam/pkt/evidence/d").unlink()
    (reg.root / "packets/fam/pkt/evidence/d").symlink_to("../../evidence/real2")
    messages = {f[3] for f in _history(reg.root) if f[0] == "history-rewrite"}
    assert f"evidence file {cited} of published run-measurement 'run-1' was changed or removed" in messages, messages


# -- raised grades and baselined findings on a copy of the real records ------------------------------------------------


def _raise_grade(root: Path) -> None:
    edit_json(root, Q35_PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))


@pytest.mark.slow
def test_a_perturbed_copy_does_not_back_a_raise(real: Path) -> None:
    _raise_grade(real)
    folder = f"{Q35_PACKET_DIR}/measurements"
    copy_run(real, Q35_STRICT, folder, "x-copy", lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 93.6))
    assert has(blocking(real, base=True), "promotion-without-evidence", Q35_PACKET)


@pytest.mark.slow
def test_a_run_of_new_evidence_backs_a_raise(real: Path) -> None:
    """The honest neighbour: a new run read from a new evidence file is new evidence."""
    _raise_grade(real)
    folder = f"{Q35_PACKET_DIR}/measurements"
    ev = f"{Q35_PACKET_DIR}/evidence/x-new-run.json"
    (real / ev).parent.mkdir(parents=True, exist_ok=True)
    (real / ev).write_text('{"decode": [93.6]}', "utf-8")

    def fn(d: Any) -> None:
        digest = hashlib.sha256((real / ev).read_bytes()).hexdigest()
        d.update(evidence=ev, evidence_sha256={ev: digest}, metrics={"decode_tok_s": [93.6]})
        d["evidence_locators"] = {"decode_tok_s[0]": "/decode/0"}

    copy_run(real, Q35_STRICT, folder, "x-new", fn)
    assert not has(blocking(real, base=True), "promotion-without-evidence", Q35_PACKET)


@pytest.mark.slow
def test_an_edited_caveat_does_not_back_a_raise(real: Path) -> None:
    _raise_grade(real)
    edit_json(real, f"{Q35}/measurements/qwen35-quark-tp4-legacy-approved.json", lambda d: d.update(caveat="x"))
    assert has(blocking(real, base=True), "promotion-without-evidence", Q35_PACKET)


@pytest.mark.slow
def test_moving_a_published_run_between_folders(real: Path) -> None:
    (real / Q35_STRICT).rename(real / f"{Q35}/measurements/qwen35-quark-tp4-strict-current.json")
    assert blocking(real, base=True)


@pytest.mark.slow
def test_a_baselined_figure_cannot_carry_a_new_sentence(real: Path) -> None:
    path, pointer = "packets/qwen-27b/closures/closure-3.json", "/reason"
    edit_json(real, path, lambda d: d.update(reason=d["reason"] + " Fastest card: 29,911 MiB!"))
    assert any(f.file == path and f.pointer == pointer for f in blocking(real, base=True))


@pytest.mark.slow
def test_a_baselined_finding_in_an_unedited_field_stays_accepted(real: Path) -> None:
    """The honest neighbour: an edit elsewhere in the record leaves the reviewed text accepted."""
    path = "packets/qwen-27b/closures/closure-3.json"
    edit_json(real, path, lambda d: d["selectors"].update(variant=d["selectors"]["variant"] + " (reviewed again)"))
    assert not any(f.file == path for f in blocking(real, base=True))


@pytest.mark.slow
def test_a_baselined_cell_finding_reopens_when_its_text_changes(real: Path) -> None:
    """Edited text at a baselined cell reopens that finding; the record's other accepted findings stay accepted."""
    path, cell = "packets/qwen-27b/coverage/q36-q8-serving-slots.json", "embedded MTP3:2"
    edit_json(real, path, lambda d: d["cells"][cell].update(label=d["cells"][cell]["label"] + " Not our fault."))
    reopened = {f.pointer for f in blocking(real, base=True) if f.file == path}
    assert reopened == {f"/cells/{cell}/label"}


def _raise_with(root: Path, fn: Callable[[Any], Any]) -> set[tuple[str, str]]:
    """(code, file) of what --base reports when a raised grade is backed by a perturbed copy of a published run."""
    edit_json(root, Q35_PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))

    def perturbed(d: Any) -> None:
        d["metrics"]["decode_tok_s"][0] = 93.6
        fn(d)

    copy_run(root, Q35_STRICT, f"{Q35_PACKET_DIR}/measurements", "x-copy", perturbed)
    return {(f.code, f.file) for f in blocking(root, base=True)}


COPY = f"{Q35_PACKET_DIR}/measurements/x-copy.json"


@pytest.mark.slow
def test_a_copy_with_a_locator_added_is_refused(real: Path) -> None:
    """history._source takes the added locator as a new source, but the locator reads nothing in the external
    summary: refused by the evidence values instead."""
    found = _raise_with(real, lambda d: d.update(evidence_locators={"decode_tok_s[0]": "/decode"}))
    assert ("evidence-value-mismatch", COPY) in found


@pytest.mark.slow
def test_a_copy_with_the_path_respelt_is_refused(real: Path) -> None:
    """history._source takes 'data/./' as a new source, but the path itself is refused."""
    found = _raise_with(real, lambda d: d.update(evidence=d["evidence"].replace("data/", "data/./")))
    assert ("path-unsafe", COPY) in found
