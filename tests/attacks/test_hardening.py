"""Hardening: fuzzed input never escapes as a traceback, paths and git edge
cases give findings, concurrent writers never leave half-written files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import git
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evreg.check import rules
from evreg.claims import citations, figures
from evreg.core import jsonio
from evreg.formats import ImportRefused, neural_download
from evreg.store import load
from helpers import EVIDENCE, EVIDENCE_BYTES, LAB_MANIFEST, REPO, F, Reg, evreg, only

FUZZ = settings(
    max_examples=int(os.environ.get("EVREG_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
RUN = f"{F}/pkt/measurements/run-1.json"

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


# -- parsers never raise ---------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=400))
def test_parse_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    value, findings = jsonio.parse(raw, "x.json")
    assert (value is None) == bool(findings)
    for f in findings:
        assert f.code in {"json-syntax", "json-duplicate-key", "json-non-finite", "file-too-large"}


@FUZZ
@given(json_values)
def test_canonical_form_round_trips_and_is_idempotent(value: Any) -> None:
    text = jsonio.canonical(value)
    parsed, findings = jsonio.parse(text.encode(), "x.json")
    if findings:  # only repeated keys can't survive: dicts have none, so this must not happen
        pytest.fail(f"{findings} for {text!r}")
    assert parsed == value and jsonio.canonical(parsed) == text


@FUZZ
@given(st.text(max_size=300), st.text(max_size=40))
def test_locator_and_citation_scanner_never_raise(text: str, pointer: str) -> None:
    jsonio.Locator(text).position("/" + pointer)
    list(citations.parse(text))
    figures.find_figures(text)


@pytest.mark.slow
@FUZZ
@given(
    st.sampled_from(
        [
            "summary",
            "caveat",
            "quality",
            "metrics",
            "config",
            "state",
            "evidence",
            "id",
            "artifact_id",
            "points",
            "evidence_locators",
            "retired",
        ]
    ),
    json_values,
)
def test_rules_never_crash_on_mutated_records(tmp_path_factory: pytest.TempPathFactory, key: str, value: Any) -> None:
    reg = _fuzz_registry(tmp_path_factory)
    data = json.loads((reg.root / RUN).read_text())
    data[key] = value
    (reg.root / RUN).write_text(json.dumps(data))
    before = _tree_hash(reg.root / "packets")
    findings = reg.findings()
    assert not only(findings, "internal-error"), only(findings, "internal-error")
    assert _tree_hash(reg.root / "packets") == before  # validation never modifies files


_REG: dict[str, Reg] = {}


def _fuzz_registry(factory: pytest.TempPathFactory) -> Reg:
    if "reg" not in _REG:
        _REG["reg"] = Reg(factory.mktemp("fuzz") / "reg")
    return _REG["reg"]


def _tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


slugs = st.from_regex(r"[a-z][a-z0-9]{0,6}([.-][a-z0-9]{1,4}){0,2}", fullmatch=True)  # ids as the lab writes them
extra_fields = st.dictionaries(
    st.from_regex(r"[a-z_]{3,8}", fullmatch=True).filter(
        lambda k: k not in {"kind", "id", "evidence", "manifest", "record", "guide"} and not k.endswith("_evidence")
    ),
    json_scalars,
    max_size=3,
)


@st.composite
def lab_manifests(draw: Any) -> dict[str, Any]:
    ids = draw(st.lists(slugs, min_size=2, max_size=6, unique=True))
    packets = [
        {
            "id": f"p-{i}",
            "revision": "rev-1",
            "label": draw(st.text(max_size=20).filter(lambda t: "{{" not in t)),
            "manifest": f"results/{i}.json",
            **draw(extra_fields),
        }
        for i in ids[:2]
    ]
    runs = [
        {
            "id": f"m-{i}",
            "state": "lab-measured",
            "revision": "rev-1",
            "evidence": f"data/{i}.json",
            "metrics": {"decode_tok_s": draw(st.lists(st.floats(1, 500, allow_nan=False), min_size=1, max_size=3))},
            **draw(extra_fields),
        }
        for i in ids
    ]
    manifest = {
        "format": neural_download.FORMAT,
        "id": draw(slugs),
        "name": "Fuzz",
        "packets": packets,
        "run_measurements": runs,
        "weight_revisions": [{"id": "rev-1", "label": "Rev 1"}],
        "family_closures": [
            {"selectors": {"revision": "rev-1"}, "state": "closed", "reason": "stopped", "evidence": "notes/x.md"}
        ],
        **draw(extra_fields),
    }
    if draw(st.booleans()):
        manifest["estimates"] = []
    return manifest


@pytest.mark.slow
@FUZZ
@given(lab_manifests())
def test_import_then_export_is_the_identity_on_generated_manifests(
    tmp_path_factory: pytest.TempPathFactory, manifest: dict[str, Any]
) -> None:
    root = tmp_path_factory.mktemp("lab")
    (root / "packets").mkdir()
    raw = json.dumps(manifest).encode()
    try:
        plan = neural_download.plan_import(raw, "m.json")
    except ImportRefused as exc:  # only for input it cannot map, and then with a finding
        assert exc.findings and exc.findings[0].code in {"import-unmappable", "duplicate-id"}
        return
    for path, content in plan.files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    exported = neural_download.export(load(root), manifest["id"])
    assert json.dumps(exported, sort_keys=True) == json.dumps(manifest, sort_keys=True)


# -- paths ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["run.json.", "run.json ", "run\u202ejson", "ruп.json", "run\x07.json", "r\u200bun.json"]
)
def test_hard_to_see_evidence_names_are_refused(reg: Reg, name: str) -> None:
    path = reg.root / f"{F}/pkt/evidence/{name}"
    path.write_bytes(EVIDENCE_BYTES)  # the run's own numbers: only the name is wrong
    reg.edit(RUN, lambda d: (d.update(evidence=f"{F}/pkt/evidence/{name}"), d.pop("evidence_sha256")))
    [f] = [f for f in reg.findings() if f.file == RUN]
    assert (f.code, f.pointer) == ("path-unsafe", "/evidence")


def test_case_only_twins_are_refused(reg: Reg) -> None:
    (reg.root / f"{F}/pkt/evidence/Run.json").write_bytes(b"{}")
    [f] = [f for f in reg.findings() if f.file == RUN]
    assert f.code == "path-unsafe" and "only in case" in f.message


def test_symlink_loops_devices_and_long_names_give_findings(reg: Reg) -> None:
    ev = reg.root / f"{F}/pkt/evidence"
    os.symlink("loop-b", ev / "loop-a")
    os.symlink("loop-a", ev / "loop-b")
    os.symlink("/dev/null", ev / "device")
    cases = {"loop-a": "evidence-missing", "device": "evidence-escape", "x" * 300: "evidence-missing"}
    for name, code in cases.items():
        reg.edit(
            RUN, lambda d, name=name: (d.update(evidence=f"{F}/pkt/evidence/{name}"), d.pop("evidence_sha256", None))
        )
        hits = [f.code for f in reg.findings() if f.file == RUN]
        assert hits == [code], (name, hits)


@pytest.mark.parametrize("bad_id", ["run\u20111", "run-1\n", "ｒun-1", "run-\u0000", "run-1\u202e"])
def test_ids_with_confusables_or_controls_are_refused(reg: Reg, bad_id: str) -> None:
    reg.edit(RUN, lambda d: d.update(id=bad_id))
    assert (RUN, "/id") in {(f.file, f.pointer) for f in only(reg.findings(), "schema")}


def test_imported_free_text_cannot_smuggle_a_citation(tmp_path: Path) -> None:
    manifest = json.loads(LAB_MANIFEST.read_text())
    manifest["summary"] = "Fast: {{ m:q36-q4-0-tp1-target-only.decode_tok_s[0] }}"
    src = tmp_path / "m.json"
    src.write_text(json.dumps(manifest))
    with pytest.raises(ImportRefused) as exc:
        neural_download.plan_import(src.read_bytes(), str(src))
    assert exc.value.findings[0].pointer == "/summary" and "{{" in exc.value.findings[0].message


@pytest.mark.slow
def test_huge_array_is_handled_within_the_size_limit(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[30.21] * 400_000))  # a number its evidence holds
    assert [f.code for f in reg.findings()] == []  # ~2.4 MB: under the limit, read, valid
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[30.123456789] * 1_500_000))
    assert [f.code for f in reg.findings() if f.file == RUN] == ["file-too-large"]


def test_millions_of_tiny_files_are_refused_with_one_finding(reg: Reg, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = reg.root / f"{F}/measurements"
    for i in range(40):
        (folder / f"tiny-{i}.json").write_text("{}")
    monkeypatch.setenv("EVREG_MAX_FILES", "30")
    findings = reg.findings()
    assert [(f.code, f.file) for f in findings] == [("too-many-files", "packets")]
    result = evreg("validate", cwd=reg.root)  # the CLI reads the same limit from the environment
    assert result.returncode == 1 and "too-many-files" in result.stdout
    monkeypatch.delenv("EVREG_MAX_FILES")
    assert "too-many-files" not in reg.codes()


# -- git --------------------------------------------------------------------------------------


def test_base_where_the_registry_did_not_exist_yet(tmp_path: Path) -> None:
    root = tmp_path / "g"
    root.mkdir()
    repo = git.Repo.init(root)
    (root / "README.md").write_text("empty")
    repo.git.add("-A")
    repo.git.commit("-m", "no registry yet", "--author", "A <a@example.org>")
    Reg(root)  # the registry arrives in the working tree, after the base
    result = evreg("validate", "--base", "HEAD", "--format", "json", cwd=root)
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["findings"] == []


def test_shallow_clone_says_what_is_missing(reg: Reg, tmp_path: Path) -> None:
    reg.edit(RUN, lambda d: d.update(quality="second commit"))
    reg.commit("second")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{reg.root}", str(clone)], check=True)
    result = evreg("validate", "--base", "HEAD~1", cwd=clone)
    assert result.returncode == 2 and "shallow clone" in result.stderr and "Traceback" not in result.stderr
    assert evreg("validate", cwd=clone).returncode == 0


def test_base_that_is_not_an_ancestor(reg: Reg) -> None:
    reg.repo.git.checkout("--orphan", "elsewhere")
    reg.repo.git.rm("-rf", "--cached", ".")
    (reg.root / "other.txt").write_text("unrelated history")
    reg.repo.git.add("other.txt")
    reg.repo.git.commit("-m", "unrelated", "--author", "A <a@example.org>")
    reg.repo.git.checkout("-f", "master" if "master" in reg.repo.heads else "main")
    result = evreg("validate", "--base", "elsewhere", "--format", "json", cwd=reg.root)
    assert result.returncode == 0, result.stdout


def test_a_moved_record_is_not_a_deletion(reg: Reg) -> None:
    shutil.move(reg.root / f"{F}/measurements/sweep-1.json", reg.root / f"{F}/pkt/measurements/sweep-1.json")
    result = evreg("validate", "--base", "HEAD", "--format", "json", cwd=reg.root)
    assert result.returncode == 0, result.stdout
    # not a deletion, but not unseen either: the packet that shows it and its page change
    [moved] = json.loads(result.stdout)["findings"]
    assert (moved["code"], moved["severity"]) == ("history-rewrite", "warning") and "was moved from" in moved["message"]


def test_change_that_edits_the_rules_with_the_records_is_reported(reg: Reg) -> None:
    (reg.root / "validators").mkdir()
    (reg.root / "validators/extra.py").write_text("# a new rule\n")
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(label="changed too"))  # a record, not a published number
    result = evreg("validate", "--base", "HEAD", "--format", "json", cwd=reg.root)
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["severity"], f["file"]) for f in findings] == [
        ("rules-changed", "warning", "validators/extra.py")
    ]
    assert result.returncode == 0
    assert evreg("validate", "--base", "HEAD", "--strict", cwd=reg.root).returncode == 1


# -- concurrency --------------------------------------------------------------------------------


def _parallel(args: list[str], cwd: Path, n: int = 3) -> list[int]:
    procs = [
        subprocess.Popen(
            [str(Path(sys.executable).parent / "evreg"), *args],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(n)
    ]
    codes = [p.wait(timeout=600) for p in procs]
    for p in procs:
        assert p.stderr is not None
        err = p.stderr.read().decode()
        if p.returncode:
            print(err)  # shown when the caller's assertion fails
        p.stderr.close()
    return codes


@pytest.mark.slow
def test_concurrent_fmt_never_leaves_a_broken_file(reg: Reg) -> None:
    for path in (reg.root / "packets").rglob("*.json"):
        if "evidence" not in path.parts:
            path.write_text(json.dumps(json.loads(path.read_text()), indent=7))
    _parallel(["fmt"], reg.root)
    assert evreg("fmt", "--check", cwd=reg.root).returncode == 0
    assert not [p for p in (reg.root / "packets").rglob("*.tmp")]
    assert reg.findings() == []


@pytest.mark.slow
def test_concurrent_builds_leave_one_complete_site(reg: Reg) -> None:
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    assert _parallel(["build"], reg.root, 2) == [0, 0]
    out = reg.root / "build/site"
    assert (out / "index.html").exists()
    json.loads((out / "search/search_index.json").read_text())
    assert sorted(p.name for p in (reg.root / "build").iterdir() if p.name.startswith(".")) == []


def test_validation_with_evidence_in_place(reg: Reg) -> None:
    assert (reg.root / EVIDENCE).exists() and rules.run(load(reg.root), rules.discover()).findings == []


@pytest.mark.parametrize("name", ["..", ".", "", f"{F}/..", "x/../x", "x\\x", "x\0"])
def test_exporting_a_family_by_a_name_that_is_no_folder_is_refused(reg: Reg, name: str) -> None:
    """A family is exported from its own folder only: a path is no family's name."""
    result = evreg("export", "neural-download", name, cwd=reg.root)
    assert result.returncode == 1 and f"no valid family {name!r}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_family_folder_that_is_a_link_is_not_followed_by_its_export(reg: Reg, tmp_path: Path) -> None:
    """A link under packets/ is a file of its own to every listing: an export does not read the folder it leads to."""
    outside = tmp_path / "outside"
    shutil.copytree(reg.root / F, outside)
    os.symlink(outside, reg.root / "packets" / "linked")
    result = evreg("export", "neural-download", "linked", cwd=reg.root)
    assert result.returncode == 1 and "no valid family 'linked'" in result.stderr, result.stderr
    assert evreg("export", "neural-download", "fam", cwd=reg.root).returncode == 0  # the folder itself exports
