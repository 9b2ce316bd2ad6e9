"""Held copies of external evidence: a file of another repository that validation cannot clone is brought in byte for
byte with the commit it was read at (``evreg hold``); validation then checks the copy and re-reads the samples of the
records citing it, and the site links to it and says it was checked. Each attack beside the honest form."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evreg.app import publish, records
from evreg.core.errors import Refused
from helpers import HELD, HELD_BYTES, LAB_PINNED, LAB_REF, REPO, F, Reg, cite_external, evreg, hold_copy, only

RUN = f"{F}/pkt/measurements/run-1.json"


def test_a_held_copy_is_written_with_where_it_was_read_and_validates(reg: Reg, tmp_path: Path) -> None:
    cite_external(reg)
    assert hold_copy(reg, tmp_path) == [HELD, f"{F}/family.json"]
    assert (reg.root / HELD).read_bytes() == HELD_BYTES
    held = reg.read(f"{F}/family.json")["sources"]["lab"]["held"]
    assert held == {
        "data/run-1.json": {
            "commit": LAB_PINNED,
            "sha256": hashlib.sha256(HELD_BYTES).hexdigest(),
            "read": "a clone of the lab's repository",
        }
    }
    assert [f for f in reg.findings() if f.severity == "error"] == []
    summary = json.loads(evreg("validate", "--format", "json", cwd=reg.root).stdout)["summary"]
    assert summary["external_evidence_refs"] == 1 and summary["external_evidence_held"] == 1


def test_an_altered_or_missing_held_copy_is_a_finding(reg: Reg, tmp_path: Path) -> None:
    cite_external(reg)
    hold_copy(reg, tmp_path)
    (reg.root / HELD).write_bytes(HELD_BYTES.replace(b"30.21", b"31.21"))
    [f] = only(reg.findings(), "evidence-hash-mismatch")
    assert (f.file, f.pointer) == (f"{F}/family.json", "/sources/lab/held/data~1run-1.json/sha256")
    (reg.root / HELD).unlink()
    [f] = only(reg.findings(), "evidence-missing")
    assert f.pointer == "/sources/lab/held/data~1run-1.json"


def test_a_sample_the_held_copy_does_not_hold_is_refused(reg: Reg, tmp_path: Path) -> None:
    """Read at the commit the family pins, a copy that lacks a sample refutes it; read at another commit, the file
    may have changed since, and the finding is a warning that says so."""
    cite_external(reg)
    hold_copy(reg, tmp_path, HELD_BYTES.replace(b"30.25", b"29.9"))
    [f] = only(reg.findings(), "evidence-value-mismatch")
    assert f.severity == "error" and "decode_tok_s[1] is 30.25" in f.message
    other = tmp_path / "other"
    other.mkdir()
    (reg.root / HELD).unlink()
    reg.edit(f"{F}/family.json", lambda d: d["sources"]["lab"].pop("held"))
    hold_copy(reg, other, HELD_BYTES.replace(b"30.25", b"29.9"), commit="d" * 40)
    [f] = only(reg.findings(), "evidence-value-mismatch")
    assert f.severity == "warning" and "read at commit dddddddddddd, the family pins cccccccccccc" in f.message


@pytest.mark.parametrize(
    ("reference", "commit", "why"),
    [
        ("other:data/run-1.json", LAB_PINNED, "declares no source 'other'"),
        ("lab:../outside.json", LAB_PINNED, "is not a plain path"),
        ("data/run-1.json", LAB_PINNED, "no external reference"),
        (LAB_REF, "abc123", "not a full commit id"),
    ],
)
def test_hold_refuses_what_it_cannot_hold(reg: Reg, tmp_path: Path, reference: str, commit: str, why: str) -> None:
    cite_external(reg)
    copy = tmp_path / "copy.json"
    copy.write_bytes(HELD_BYTES)
    with pytest.raises(Refused, match=why):
        records.hold(reg.root, "fam", reference, copy, commit=commit, read="a clone")
    assert not (reg.root / HELD).exists() and "held" not in reg.read(f"{F}/family.json")["sources"]["lab"]


def test_a_held_copy_is_never_replaced_by_other_bytes(reg: Reg, tmp_path: Path) -> None:
    cite_external(reg)
    hold_copy(reg, tmp_path)
    with pytest.raises(Refused, match="never replaced"):
        hold_copy(reg, tmp_path, HELD_BYTES + b" ")
    assert (reg.root / HELD).read_bytes() == HELD_BYTES


def test_the_site_links_the_held_copy_and_says_it_was_checked(reg: Reg, tmp_path: Path) -> None:
    cite_external(reg)
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    assert evreg(
        "hold", "fam", LAB_REF, str(_bytes(tmp_path)), "--commit", LAB_PINNED, "--read", "a clone", cwd=reg.root
    )
    reg.commit("hold the lab's file")
    built = publish.build(reg.root)
    page = (built.out / "packets" / "pkt" / "index.html").read_text("utf-8")  # its measurements are there
    assert "its copy held here" in page and "read at commit <code>cccccccccccc</code>)" in page
    digest = hashlib.sha256(HELD_BYTES).hexdigest()
    assert (built.out / "evidence" / digest / "run-1.json").read_bytes() == HELD_BYTES
    home = (built.out / "index.html").read_text("utf-8")
    assert "1 point into other repositories" in home and "(1 files, each with the commit it was read at)" in home


def _bytes(tmp_path: Path) -> Path:
    copy = tmp_path / "held-input.json"
    copy.write_bytes(HELD_BYTES)
    return copy


def test_ci_fetches_the_commits_the_families_pin(reg: Reg) -> None:
    """publish.yml's external-evidence job fetches these commits of the source before validating with --source."""
    from evreg.devtools.pins import pinned

    assert pinned(reg.root, "lab") == []
    cite_external(reg)
    assert pinned(reg.root, "lab") == [LAB_PINNED] and pinned(reg.root, "other") == []
    done = subprocess.run(
        [sys.executable, "-m", "evreg.devtools.pins", "lab"], cwd=reg.root, capture_output=True, text=True, check=True
    )
    assert done.stdout == LAB_PINNED + "\n"  # as the workflow runs it
    assert pinned(REPO, "neural-download") == ["0685cccbe326e98438378abf94d67f9b3052209d"]


def test_a_quote_is_re_read_from_the_held_copy(reg: Reg, tmp_path: Path) -> None:
    """A record whose evidence is external quotes its held copy: the quote is checked against the copy's bytes."""
    cite_external(reg)
    reg.edit(RUN, lambda d: d.update(quality="the lab's file says {{ e:/runs/0/decode_tok_s/0 = 30.21 }}"))
    [f] = only(reg.findings(), "evidence-value-mismatch")
    assert "local evidence file or held copy" in f.message
    hold_copy(reg, tmp_path)
    assert [f for f in reg.findings() if f.severity == "error"] == []
    reg.edit(RUN, lambda d: d.update(quality="the lab's file says {{ e:/runs/0/decode_tok_s/0 = 31.21 }}"))
    [f] = only(reg.findings(), "evidence-value-mismatch")
    assert "is not in" in f.message and HELD in f.message
