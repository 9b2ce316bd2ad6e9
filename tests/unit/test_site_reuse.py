"""The scans of generated pages, kept by content (``evreg.site.reuse``): what a page's entry gives is what scanning
the page gives, whatever the kept file holds."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.core.findings import Finding
from evreg.site.build import one_break, scan_record
from evreg.site.reuse import CHECKED_FILE, Checks, Numbered, address, content_digest, site_version, unpacked
from evreg.site.trace import token_from_json

PIECES = [
    "<p>Decode reached ",
    "52.3 tok/s",
    '<a class="evreg-cite" href="#m-run-1">30.21 tok/s</a>',
    '<span class="evreg-setting" title="A specification or setting, not a measurement">32 GiB</span>',
    "</p>\n",
    "<table><tr><th>Decode (tok/s)</th></tr><tr><td>52</td></tr></table>",
    "<script>alert(1)</script>",
    "  \n  plain words ",
    "&lt;b&gt;",
    "1,234",
]
PATHS = ["packets/pkt.md", "families/fam.md", "compare/decode-tok-s.md"]

pages = st.lists(st.sampled_from(PIECES), max_size=12).map("".join).map(one_break)


def _scanned(checks: Checks, path: str, body: str) -> tuple[list[dict[str, Any]], bool]:
    """The findings ``checks`` gives for a page, and whether it scanned the page to give them."""
    calls: list[str] = []

    def scan() -> list[Finding]:
        calls.append(path)
        return scan_record(path, body.encode())

    found, entry = checks.check(path, content_digest(body.encode()), scan)
    checks.keep(path, content_digest(body.encode()), entry)
    return [f.model_dump() for f in found], bool(calls)


@settings(max_examples=60, deadline=None)
@given(pages, st.sampled_from(PATHS), pages, st.integers(min_value=0), st.sampled_from(["key", "path", "content"]))
def test_reused_findings_are_a_fresh_scans_whatever_the_file_holds(
    body: str, path: str, other: str, cut: int, field: str
) -> None:
    fresh = [f.model_dump() for f in scan_record(path, body.encode())]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        version = site_version(root, "rules")
        cold = Checks.load(root, version)
        assert _scanned(cold, path, body) == (fresh, True)
        cold.save(root)
        assert _scanned(Checks.load(root, version), path, body) == (fresh, False)  # reused, the same
        assert _scanned(Checks.load(root, site_version(root, "other rules")), path, body) == (fresh, True)
        if other != body:  # the same page with other content: its own scan
            assert _scanned(Checks.load(root, version), path, other)[1]
        kept = (root / CHECKED_FILE).read_bytes()
        (root / CHECKED_FILE).write_bytes(kept[: cut % max(len(kept), 1)])  # torn
        assert _scanned(Checks.load(root, version), path, body) == (fresh, True)
        data = json.loads(kept)
        key = address(version, path, content_digest(body.encode()))
        data["entries"][key].update({field: "x", "findings": []})  # an entry for something else, claiming nothing
        (root / CHECKED_FILE).write_text(json.dumps(data), "utf-8")
        assert _scanned(Checks.load(root, version), path, body) == (fresh, True)


def test_the_site_configuration_is_part_of_the_version(tmp_path: Path) -> None:
    before = site_version(tmp_path, "rules")
    (tmp_path / "mkdocs.yml").write_text("site_name: A\n", "utf-8")
    assert site_version(tmp_path, "rules") != before
    assert site_version(tmp_path, "rules") == site_version(tmp_path, "rules") != site_version(tmp_path, "other")
    assert content_digest(b"ab", [("c", "d")]) != content_digest(b"a", [("bc", "d")]) != content_digest(b"abcd")


tokens = st.tuples(st.sampled_from(["measurements", "records/packet", "home"]), st.text("abc", max_size=3))


@settings(max_examples=300, deadline=None)
@given(
    table=st.lists(st.one_of(tokens, st.none()), min_size=1, max_size=12),
    entries=st.lists(st.one_of(st.lists(st.integers(0, 11), min_size=1), st.lists(tokens, min_size=1)), max_size=6),
)
def test_kept_reads_keep_their_numbers_and_every_entry_reads_what_it_read(
    table: list[Any], entries: list[list[Any]]
) -> None:
    """The table a build writes names every entry's reads: a taken entry's by the numbers it was read with (the
    table is kept, a made entry's new reads numbered after it), unless fewer than half the table's reads are still in
    use: then every entry is numbered anew and the table holds only reads in use. Each entry's numbers give back its
    reads, in order."""
    checks = Checks("v", table=table)
    reads_of: dict[str, list[Any]] = {}
    taken: dict[str, list[int]] = {}
    for i, listed in enumerate(entries):
        if isinstance(listed[0], int):  # a taken entry: numbers of reads the table holds (not None)
            numbers = [n % len(table) for n in listed if table[n % len(table)] is not None]
            if numbers:
                taken[f"p{i}"] = numbers
                checks.made[f"p{i}"] = ["d", "", 0, 0, 0, 0, "", Numbered(tuple(numbers)), ""]
                reads_of[f"p{i}"] = [table[n] for n in numbers]
        else:
            checks.made[f"p{i}"] = ["d", "", 0, 0, 0, 0, "", list(listed), ""]
            reads_of[f"p{i}"] = list(listed)
    in_use = {n for numbers in taken.values() for n in numbers}
    written = checks._numbered()
    read_back = [token_from_json(t) for t in orjson.loads(orjson.dumps(written))]  # as the next build reads it
    numbered = {name: list(unpacked(entry[7]) or []) for name, entry in checks.made.items()}
    assert {name: [read_back[n] for n in numbers] for name, numbers in numbered.items()} == reads_of
    if 2 * len(in_use) >= len(table):
        assert written[: len(table)] == table
        assert {name: numbered[name] for name in taken} == taken
    else:
        assert len(written) == len({t for reads in reads_of.values() for t in reads})
