"""The scans of generated pages, kept by content (``evreg.site.reuse``): what a page's entry gives is what scanning
the page gives, whatever the kept file holds."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.core.findings import Finding
from evreg.site.build import one_break, scan_record
from evreg.site.reuse import CHECKED_FILE, Checks, address, content_digest, site_version

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
