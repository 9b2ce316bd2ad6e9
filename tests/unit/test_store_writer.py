"""The one writer of record and evidence files: all or nothing, no silent overwrite, published observations never
rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from evreg.store import writer

MEASUREMENT = "packets/fam/pkt/measurements/run-1.json"
PACKET = "packets/fam/pkt/packet.json"


def test_new_files_are_written_and_a_second_write_changes_nothing(tmp_path: Path) -> None:
    files = {PACKET: '{"kind": "packet"}\n', MEASUREMENT: b'{"kind": "run-measurement"}\n'}
    first = writer.write(tmp_path, files)
    assert first.written == sorted(files) and first.conflicts == []
    again = writer.write(tmp_path, files)
    assert again.written == [] and again.unchanged == sorted(files)


def test_nothing_is_written_when_one_file_would_be_overwritten(tmp_path: Path) -> None:
    writer.write(tmp_path, {PACKET: "old\n"})
    done = writer.write(tmp_path, {PACKET: "new\n", "packets/fam/family.json": "{}\n"})
    assert done.conflicts == [PACKET] and done.written == []
    assert (tmp_path / PACKET).read_text() == "old\n" and not (tmp_path / "packets/fam/family.json").exists()


def test_overwrite_replaces_records_but_never_a_published_observation(tmp_path: Path) -> None:
    evidence = "packets/fam/pkt/evidence/run.json"
    writer.write(tmp_path, {PACKET: "old\n", MEASUREMENT: "old\n", evidence: "old\n"})
    assert writer.write(tmp_path, {PACKET: "new\n"}, overwrite=True).written == [PACKET]
    for published in (MEASUREMENT, evidence, "packets/fam/closures/c.json"):
        (tmp_path / published).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / published).write_text("old\n")
        done = writer.write(tmp_path, {published: "new\n"}, overwrite=True)
        assert done.conflicts == [published] and (tmp_path / published).read_text() == "old\n"


def test_create_refuses_any_existing_file(tmp_path: Path) -> None:
    writer.write(tmp_path, {PACKET: "same\n"})
    assert writer.write(tmp_path, {PACKET: "same\n"}, create=True).conflicts == [PACKET]


def test_a_write_that_fails_midway_takes_back_what_it_wrote(tmp_path: Path) -> None:
    """A file where a folder is needed makes the second write fail: the first is taken back, nothing is left."""
    from evreg.store import writer

    (tmp_path / "packets").mkdir()
    (tmp_path / "packets/b").write_text("a file, not a folder")
    files = {"packets/a/family.json": "{}\n", "packets/b/pkt/packet.json": "{}\n"}
    with pytest.raises(OSError):
        writer.write(tmp_path, files)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["packets", "packets/b"]
