"""The core: findings are made only from declared codes, and the vocabulary decides what is promotable."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from evreg.core import gz
from evreg.core.findings import Finding
from evreg.core.vocab import promotable


def test_a_finding_needs_a_declared_code_and_a_code_is_declared_once() -> None:

    from evreg.core import codes
    from evreg.core.findings import Code

    with pytest.raises(ValidationError, match="not declared"):
        Finding(code="made-up", file="x.json", message="m")
    with pytest.raises(ValueError, match="declared twice"):
        Code("schema", "another title", "why", "hint")
    made = codes.SCHEMA.at("x.json", "/a", "m")
    assert (made.code, made.hint) == ("schema", codes.SCHEMA.hint)


def test_a_diagnostic_class_in_any_case_is_not_promotable() -> None:
    run = {"kind": "run-measurement", "state": "lab-measured"}
    for cls in ("Diagnostic strict deep gate", "strict diagnostic run", "diagnostics", "exact-8k-grade-c-diagnostic"):
        assert promotable({**run, "measurement_class": cls}), cls
    for cls in ("strict deep gate", "non-diagnostic strict gate"):
        assert promotable({**run, "measurement_class": cls}) is None, cls


@given(st.binary(max_size=4096))
def test_gzip_is_the_standard_format_and_the_same_bytes_give_the_same_file(data: bytes) -> None:
    packed = gz.compress(data)
    assert gzip.decompress(packed) == data
    assert packed == gz.compress(data)
    assert packed[3] == 0 and packed[4:8] == b"\0\0\0\0" and packed[9] == 255  # no name, no time, no system


def test_a_compressed_file_is_the_compressed_bytes_and_replaces_the_target_whole(tmp_path: Path) -> None:
    plain, target = tmp_path / "rows.jsonl", tmp_path / "rows.jsonl.gz"
    rows = b"".join(b'{"id": "m-%d", "value": %d}\n' % (i, (i * 7919) % 104729) for i in range(200_000))
    plain.write_bytes(rows)  # several buffers, no two alike: the bytes do not depend on how the file is read
    target.write_bytes(b"an earlier export")
    gz.compress_file(plain, target)
    assert target.read_bytes() == gz.compress(rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl", "rows.jsonl.gz"]  # no temporary file left
    plain.unlink()
    with pytest.raises(OSError):
        gz.compress_file(plain, target)
    assert gzip.decompress(target.read_bytes()) == rows  # a failed write leaves it whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl.gz"]
