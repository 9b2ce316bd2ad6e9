"""The history rules read a change, not the store: what they find from the touched paths (and the records filed
under the ids those hold) is what they find reading every record; and attacks on the shortcuts: ids changed in
place, copies under a published id, evidence cited through JSON escapes, paths git would quote."""

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

from conftest import EVIDENCE, F, Reg, blocking
from evreg.findings import Finding
from evreg.jsonio import canonical
from evreg.store import Registry, change_base, load
from evreg_rules.history import Change, check_history, history_findings

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
    return sorted(p.relative_to(root).as_posix() for p in (root / "packets").glob(pattern))


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
    ("*/**/measurements/*.json", _new_run),
    ("*/**/measurements/*.json", _id_in_place),
    ("*/**/packet.json", _delete),
    ("*/**/packet.json", _raise),
    ("*/**/packet.json", _id_in_place),
    ("*/family.json", _family),
    ("*/evidence/*", _evidence),
    ("*/evidence/*", _delete),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, len(EDITS) - 1), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=4))
def test_the_change_finds_what_reading_every_record_finds(store: Path, edits: list[tuple[int, int, int]]) -> None:
    try:
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
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=store, check=True)
        subprocess.run(["git", "clean", "-qfd"], cwd=store, check=True)


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


def test_a_change_too_large_to_search_reads_every_record(reg: Reg) -> None:
    """Over 100,000 characters of changed paths git is not asked (its arguments would be too long): the rule
    reads every published record instead, and finds the same."""
    reg.raw(OTHER, b"x\n")
    reg.edit(RUN, lambda d: d.update(evidence=OTHER, evidence_sha256={OTHER: hashlib.sha256(b"x\n").hexdigest()}))
    reg.commit()
    reg.raw(OTHER, b"y\n")
    for i in range(1100):
        reg.raw(f"packets/bulk/evidence/{'n' * 90}-{i:04}.log", b"")
    head = _with_base(reg.root)
    assert head.base is not None
    assert sum(map(len, head.changed)) > 100_000
    assert head.base.source.containing(head.changed) is None  # type: ignore[attr-defined]
    assert any(f.code == "history-rewrite" and OTHER in f.message for f in check_history(head))
