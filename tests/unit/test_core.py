"""The core: findings are made only from declared codes, and the vocabulary decides what is promotable."""

from __future__ import annotations

import gzip
import io
import shutil
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


def test_a_compressed_file_is_a_member_per_piece_and_replaces_the_target_whole(tmp_path: Path) -> None:
    plain, target = tmp_path / "rows.jsonl", tmp_path / "rows.jsonl.gz"
    rows = b"".join(b'{"id": "m-%d", "value": %d}\n' % (i, (i * 7919) % 104729) for i in range(200_000))
    plain.write_bytes(rows)  # several pieces, no two alike
    target.write_bytes(b"an earlier export")
    gz.compress_file(plain, target)
    pieces = list(gz.pieces(io.BytesIO(rows)))
    assert len(pieces) > 3 and b"".join(pieces) == rows
    assert target.read_bytes() == b"".join(map(gz.compress, pieces))
    assert gzip.decompress(target.read_bytes()) == rows  # every gzip reader reads the members as one text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl", "rows.jsonl.gz"]  # no temporary file left
    plain.unlink()
    with pytest.raises(OSError):
        gz.compress_file(plain, target)
    assert gzip.decompress(target.read_bytes()) == rows  # a failed write leaves it whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl.gz"]


class _Trickle(io.BytesIO):
    """A file that returns at most ``most`` bytes a read, as a pipe may."""

    def __init__(self, data: bytes, most: int) -> None:
        super().__init__(data)
        self.most = most

    def read(self, size: int | None = -1) -> bytes:
        return super().read(self.most if size is None or size < 0 else min(size, self.most))


@given(
    st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"") + b"\n"), max_size=200),
    st.binary(max_size=600),
    st.integers(1, 5000),
)
def test_pieces_give_back_the_text_and_are_cut_by_the_text_alone(lines: list[bytes], tail: bytes, most: int) -> None:
    text = b"".join(lines) + tail  # lines, and a last line with no line end (or a long one with none inside)
    with pytest.MonkeyPatch.context() as mp:  # small pieces, so that the examples cross many cuts
        mp.setattr(gz, "PIECE_MIN", 64)
        mp.setattr(gz, "PIECE_MAX", 512)
        mp.setattr(gz, "PIECE_MASK", 3)
        whole = list(gz.pieces(io.BytesIO(text)))
        assert b"".join(whole) == text
        assert all(0 < len(p) <= 512 for p in whole)
        assert list(gz.pieces(_Trickle(text, most))) == whole  # however the file is read


def test_pieces_do_not_depend_on_short_reads_nor_on_how_short_the_lines_are() -> None:
    rows = b"".join(b'{"key": "m-%06d", "value": %d}\n' % (i, (i * 7919) % 104729) for i in range(60_000))
    short = b"ab\n" * 400_000 + b"x" * 100  # lines too short to matter: cut at the last line end before the most
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gz, "PIECE_MIN", 4096)
        mp.setattr(gz, "PIECE_MAX", 65536)
        for text in (rows, short):
            whole = list(gz.pieces(io.BytesIO(text)))
            assert len(whole) > 10 and b"".join(whole) == text
            for most in (1, 100, 4095, 4097, 65535, 65537, 200_000):
                assert list(gz.pieces(_Trickle(text, most))) == whole, most
        assert all(len(p) == 65535 for p in list(gz.pieces(io.BytesIO(short)))[:-1])


def test_an_empty_table_is_a_gzip_file_of_no_text(tmp_path: Path) -> None:
    plain, target = tmp_path / "rows.jsonl", tmp_path / "rows.jsonl.gz"
    plain.write_bytes(b"")
    for kept in (None, gz.Kept(tmp_path / "cache")):
        gz.compress_file(plain, target, kept)
        assert target.read_bytes() == gz.compress(b"") and gzip.decompress(target.read_bytes()) == b""


def test_a_row_added_to_a_download_changes_the_pieces_around_it_only() -> None:
    rows = [b'{"key": "m-%06d", "value": %d}\n' % (i, (i * 7919) % 104729) for i in range(300_000)]
    before = list(gz.pieces(io.BytesIO(b"".join(rows))))
    added = [*rows[:150_000], b'{"key": "m-new", "value": 1}\n', *rows[150_000:]]
    after = list(gz.pieces(io.BytesIO(b"".join(added))))
    assert len(before) > 10
    assert len(set(after) - set(before)) <= 2


def test_kept_members_give_the_bytes_compressing_gives_and_a_planted_one_is_compressed_again(tmp_path: Path) -> None:
    plain = tmp_path / "rows.jsonl"
    rows = b"".join(b'{"key": "m-%06d", "value": %d}\n' % (i, (i * 7919) % 104729) for i in range(200_000))
    plain.write_bytes(rows)
    fresh = tmp_path / "fresh.gz"
    gz.compress_file(plain, fresh)
    cache = tmp_path / "cache"

    def export() -> gz.Kept:
        kept = gz.Kept(cache)
        gz.compress_file(plain, tmp_path / "out.gz", kept)
        kept.prune()
        assert (tmp_path / "out.gz").read_bytes() == fresh.read_bytes()
        return kept

    cold = export()
    assert (cold.taken, cold.made) == (0, len(cold.used)) and cold.made > 5
    warm = export()
    assert (warm.taken, warm.made) == (cold.made, 0)
    entries = sorted(cold.folder.iterdir())
    first, second, third, fourth, fifth = entries[:5]
    first.write_bytes(second.read_bytes())  # another piece's member under this piece's name
    second.write_bytes(second.read_bytes()[:-8] + b"\0" * 8)  # a wrong check value and size
    third.write_bytes(gzip.compress(gzip.decompress(third.read_bytes()), mtime=1))  # the right text, another header
    fourth.unlink()
    fourth.symlink_to(fifth)  # a link to another member
    sixth = entries[5]
    sixth.write_bytes(sixth.read_bytes() + gz.compress(b"more text"))  # the member, and another after it
    (cold.folder / "unused.gz").write_bytes(b"left by an earlier export")
    (cache / "zlib-0.0-level-1").mkdir()
    again = export()
    assert again.made == 5 and again.taken == cold.made - 5
    assert sorted(cold.folder.iterdir()) == entries and not fourth.is_symlink()  # replaced; the unused removed
    assert sorted(p.name for p in cache.iterdir()) == [cold.folder.name]
    first.write_bytes(gz.compress(b"x" * 10_000_000))  # inflated no further than one byte past its piece
    assert export().made == 1
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not the cache's")
    shutil.rmtree(cold.folder)
    cold.folder.symlink_to(elsewhere)  # the members' folder as a link: the link goes, not what it leads to
    (cache / "other").symlink_to(elsewhere)
    assert export().made == cold.made
    assert not cold.folder.is_symlink() and (elsewhere / "keep.txt").read_text() == "not the cache's"
    assert sorted(p.name for p in cache.iterdir()) == [cold.folder.name]
