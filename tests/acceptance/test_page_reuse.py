"""The site build reuses the scans of generated pages whose content is unchanged (``evreg.site.reuse``): a build with
the cache publishes the same bytes as one without, a changed record rescans exactly the pages whose content changed,
and no entry that is not exactly the page's (planted, truncated, from other code or another site configuration) is
used: a page with an orphan figure refuses the build whether its scan was reused or not."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest
from selectolax.lexbor import LexborHTMLParser

from evreg.app import publish
from evreg.app.catalog import ensure_catalog
from evreg.catalog import build as catalog
from evreg.core.findings import Code
from evreg.core.layout import DOWNLOADS_DIR
from evreg.site import build as sitebuild
from evreg.site import receipt as receipts
from evreg.site.cite import Pages
from evreg.site.html import page_url
from evreg.site.reuse import CHECKED_FILE, MADE_FILE, PACKS_DIR, content_digest, packed, seal, unpacked
from helpers import REPO, F, Reg, build_compare_registry, edit_json, evreg, own_evidence, within

RULES = "methodology/rules.md"
FOOTER = re.compile(rb'<footer class="evreg-receipt".*?</footer>\n?', re.S)


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def entries(reg: Reg) -> dict[str, dict[str, object]]:
    return json.loads((reg.root / CHECKED_FILE).read_text("utf-8"))["entries"]  # type: ignore[no-any-return]


def shown(site: Path, path: str) -> bytes | None:
    """The generated page ``path`` as published in ``site``, without the receipt's footer (it names the commit); None
    for a page that is not published (the frames of record pages)."""
    page = site / page_url(path) / "index.html"
    return FOOTER.sub(b"", page.read_bytes()) if page.is_file() else None


@pytest.fixture
def compare_reg(tmp_path: Path) -> Reg:
    """The comparison registry, its build outputs ignored by git (as ``evreg init`` writes): kept entries that git
    tracks are not read."""
    reg = build_compare_registry(tmp_path / "reg")
    reg.put(".gitignore", "build/\n")
    reg.commit("ignore build outputs")
    return reg


@pytest.mark.slow
def test_a_warm_build_is_byte_identical_to_a_cold_one_and_verifies(compare_reg: Reg, tmp_path: Path) -> None:
    cold = publish.build(compare_reg.root, tmp_path / "cold")
    assert cold.reused == 0 and len(cold.scanned) > 10
    kept = entries(compare_reg)
    assert sorted(e["path"] for e in kept.values()) == sorted(cold.scanned)  # one entry per generated page
    members = sorted((compare_reg.root / DOWNLOADS_DIR).rglob("*.gz"))
    assert len(members) >= 10  # the data downloads' compressed pieces, kept for the next export
    assert cold.downloads == (0, len(members))
    warm = publish.build(compare_reg.root, tmp_path / "warm")
    assert (warm.reused, warm.scanned) == (len(cold.scanned), [])
    assert files(tmp_path / "warm") == files(tmp_path / "cold")
    assert sorted((compare_reg.root / DOWNLOADS_DIR).rglob("*.gz")) == members
    assert warm.downloads == (len(members), len(members))
    assert entries(compare_reg) == kept  # the entries used are kept, and no others
    result = evreg("verify", str(tmp_path / "warm"), cwd=compare_reg.root)  # a rebuild elsewhere, without the cache
    assert result.returncode == 0, result.stdout + result.stderr
    line = evreg("build", "--out", str(tmp_path / "cli"), cwd=compare_reg.root).stderr
    assert f"generated pages checked 0, unchanged since an earlier build's checks {warm.reused}" in line
    assert f"data downloads' pieces taken from an earlier export {len(members)} of {len(members)}" in line


@pytest.mark.slow
def test_a_changed_record_rescans_exactly_the_pages_whose_content_changed(compare_reg: Reg, tmp_path: Path) -> None:
    """The changed measurement's packet page, and the pages that show it (the family's headline, the comparisons),
    are scanned again; every other page's scans are reused; the result is the site a cold build makes, and the
    entries of the pages as they were are gone."""
    before = publish.build(compare_reg.root, tmp_path / "before")
    old = entries(compare_reg)
    samples = {"metrics": {"decode_tok_s": [30.31, 30.35]}}  # run-1's, with its own evidence file: the family's
    evidence = own_evidence(compare_reg, "run-1", samples)  # featured result, and a value the comparisons show
    compare_reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(samples, **evidence))
    compare_reg.commit("a caveat")
    warm = publish.build(compare_reg.root, tmp_path / "warm")
    changed = {path for path in before.scanned if shown(tmp_path / "before", path) != shown(tmp_path / "warm", path)}
    assert {"packets/pkt.md", "families/fam.md", "compare/decode-tok-s.md", "index.md"} <= changed  # the home page too
    assert sorted(warm.scanned) == sorted(changed)
    assert warm.reused == len(before.scanned) - len(changed)
    now = entries(compare_reg)
    assert len(now) == len(before.scanned) and len(set(now) - set(old)) == len(changed)  # stale entries dropped
    shutil.rmtree(compare_reg.root / "build/cache/pages")
    publish.build(compare_reg.root, tmp_path / "cold")
    assert files(tmp_path / "cold") == files(tmp_path / "warm")


def with_site(reg: Reg) -> None:
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")


@dataclasses.dataclass(frozen=True)
class Shown(Code):
    """A rule's documentation as the rule reference page shows it, not declared as a finding code."""

    def __post_init__(self) -> None:
        pass


def plant(reg: Reg, page: str, fields: dict[str, object]) -> str:
    """Overwrite ``fields`` of the entry kept for the page ``page``; its address."""
    stored = json.loads((reg.root / CHECKED_FILE).read_text("utf-8"))
    key = next(k for k, e in stored["entries"].items() if e["path"] == page)
    stored["entries"][key].update(fields)
    (reg.root / CHECKED_FILE).write_text(json.dumps(stored), "utf-8")
    return key


def test_an_orphan_figure_refuses_the_build_whether_its_scan_is_reused_or_planted(reg: Reg, tmp_path: Path) -> None:
    """A typed figure in the text of a rule's documentation is an orphan on the generated rule reference: the build
    is refused, with the same findings when the scan is reused, and when the page's entry is replaced by one that
    claims nothing was found (for other content, or another page's entry)."""
    with_site(reg)
    reg.commit("a site")
    db = ensure_catalog(reg.root).path
    downloads = reg.root / "build/downloads"
    catalog.export_tables(db, downloads)
    docs: list[Code] = [Shown("page-reuse-example", "An example rule", "Decode reached 52.3 tok/s once.", "None.")]

    def site() -> tuple[sitebuild.Built, list[tuple[str, str, str]]]:
        built = sitebuild.build_site(reg.root, db, downloads, tmp_path / "site", docs)
        assert not (tmp_path / "site").exists()  # refused: nothing published
        return built, [(f.code, f.file, f.message) for f in built.findings]

    cold, orphans = site()
    assert [(c, f) for c, f, _ in orphans] == [("orphan-number", RULES)] and "'52.3 tok/s'" in orphans[0][2]
    warm, found = site()
    assert found == orphans and warm.scanned == [] and warm.reused == len(cold.scanned)
    plant(reg, RULES, {"findings": [], "content": "0" * 64})  # wrong content for its address, claiming nothing found
    planted, found = site()
    assert found == orphans and planted.scanned == [RULES]
    clean = next(e for e in entries(reg).values() if e["path"] != RULES)
    plant(reg, RULES, clean)  # another page's entry, at this page's address
    moved, found = site()
    assert found == orphans and moved.scanned == [RULES]
    plant(reg, "packets/pkt.md", {"content": "0" * 64})  # a record page's, made where the record pages are made
    record, found = site()
    assert found == orphans and record.scanned == ["packets/pkt.md"]


def test_entries_from_other_code_or_another_site_configuration_or_a_torn_file_are_not_used(
    reg: Reg, tmp_path: Path
) -> None:
    with_site(reg)
    reg.commit("a site")
    db = ensure_catalog(reg.root).path
    downloads = reg.root / "build/downloads"
    catalog.export_tables(db, downloads)
    taken = receipts.take(reg.root)

    def site(receipt: receipts.Receipt = taken) -> sitebuild.Built:
        built = sitebuild.build_site(reg.root, db, downloads, tmp_path / "site", receipt=receipt)
        assert built.findings == []
        return built

    pages = len(site().scanned)
    assert site().reused == pages
    other = site(dataclasses.replace(taken, rules="0" * 64))  # the validation cache's code version, another code's
    assert (other.reused, len(other.scanned)) == (0, pages)
    assert site().reused == 0  # that build kept only its own entries
    assert site().reused == pages
    config = reg.root / "mkdocs.yml"
    config.write_text(config.read_text("utf-8") + "\nsite_description: the same pages\n", "utf-8")
    assert (site().reused, site().reused) == (0, pages)
    held = (reg.root / CHECKED_FILE).read_bytes()
    (reg.root / CHECKED_FILE).write_bytes(held[: len(held) // 2])
    torn = site()
    assert (torn.reused, len(torn.scanned)) == (0, pages)
    assert site().reused == pages
    reg.repo.git.add("-f", CHECKED_FILE)  # entries a commit brings are its author's word: not read
    reg.commit("entries of my own")
    assert (site().reused, site().reused) == (0, 0)


def made_entries(root: Path, pieces: bool = False) -> dict[str, list[Any]]:
    """The kept record pages' entries by path (with ``pieces``, the kept pieces' by name: ``PAGE_URL#KEY``)."""
    kept = json.loads((root / MADE_FILE).read_text("utf-8"))["pages"]
    return {name: entry for name, entry in kept.items() if ("#" in name) == pieces}


PACKET = "packets/deepseek-coder-v2/rapid-deepseek-coder-v2-lite-q4km"
RUN = f"{PACKET}/measurements/deepseek-coder-v2-lite-q4km-tp1-rapid.json"


@pytest.mark.slow
def test_record_pages_are_taken_as_made_while_nothing_they_read_changed(
    real: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the real records: a warm build takes every record page and every piece of the site's own pages (a
    comparison's workloads) from the last build's packs; after one measurement's hardware changes, exactly the record
    pages and pieces that read it are made again (its packet's page, its family's, any other that shows its trust
    line, the workloads that rank it, its model's tables and replications) and the site is the one a build without
    any kept page makes, in this process or in two workers."""
    (real / ".gitignore").write_text("build/\n", "utf-8")
    repo = git.Repo(real)
    repo.git.add("-A")
    repo.index.commit("ignore build outputs")
    cold = publish.build(real, tmp_path / "cold")
    records, pieces = len(made_entries(real)), len(made_entries(real, pieces=True))
    assert cold.taken == cold.pieces_taken == 0 and records > 100 and pieces > 100
    warm = publish.build(real, tmp_path / "warm")
    assert (warm.taken, warm.pieces_taken) == (records, pieces) and files(tmp_path / "warm") == files(tmp_path / "cold")
    tokens = json.loads((real / MADE_FILE).read_text("utf-8"))["tokens"]
    mid = json.loads((real / RUN).read_text("utf-8"))["id"]
    readers = {
        path
        for path, entry in {**made_entries(real), **made_entries(real, pieces=True)}.items()
        if any(tokens[n] in (["records/run-measurement", mid], ["measurements", mid]) for n in unpacked(entry[7]) or [])  # type: ignore[arg-type]
    }
    assert "packets/rapid-deepseek-coder-v2-lite-q4km.md" in readers and len(readers) < records
    ranked = {name for name in readers if "#" in name}
    assert {name.split("/")[0] for name in ranked} == {"compare", "models", "replications"} and len(ranked) < pieces
    models = {name.split("#")[0] for name in made_entries(real, pieces=True) if name.startswith("models/")}
    assert {name.split("#")[0] for name in ranked if name.startswith("models/")} == {
        "models/deepseek-coder-v2-lite-instruct/"  # its model's page alone, of the models measured
    } and len(models) > 1
    edit_json(real, RUN, lambda d: d.update(hardware="Intel Arc Pro B70 (second card)"))
    repo.git.add("-A")
    repo.index.commit("the run's hardware")
    changed = publish.build(real, tmp_path / "changed")
    assert (changed.taken, changed.pieces_taken) == (records - len(readers - ranked), pieces - len(ranked))
    shutil.rmtree(real / "build/cache/pages")
    fresh = publish.build(real, tmp_path / "fresh")
    assert fresh.taken == fresh.pieces_taken == 0 and files(tmp_path / "fresh") == files(tmp_path / "changed")
    monkeypatch.setenv("EVREG_WORKERS", "2")  # the site's own pages and the record pages made in two workers
    for how in ("workers", "workers, taken"):
        publish.build(real, tmp_path / how)
        assert files(tmp_path / how) == files(tmp_path / "fresh")


@pytest.mark.slow
def test_the_packets_index_lists_each_familys_packets_as_a_piece_remade_only_when_its_packets_change(
    real: Path, tmp_path: Path
) -> None:
    """On the real records: the index of packets lists every packet once, under its family's heading, in the family
    list's order. Each family's rows are a piece kept by what they read: after one packet's label changes, that
    family's piece is made again and every other one is taken; a figure typed into the label is found on the index
    by the piece's own scan."""
    (real / ".gitignore").write_text("build/\n", "utf-8")
    repo = git.Repo(real)
    repo.git.add("-A")
    repo.index.commit("ignore build outputs")
    publish.build(real, tmp_path / "cold")

    def index_pieces() -> dict[str, str]:
        """The index's pieces: name -> the digest of the bytes kept."""
        return {name: e[0] for name, e in made_entries(real, pieces=True).items() if name.startswith("packets/#")}

    def listed(site: Path) -> list[tuple[str, list[str]]]:
        tree = LexborHTMLParser((site / "packets/index.html").read_text("utf-8"))
        return [
            (
                body.css_first("th").text().split("(")[0].removeprefix("Family:").strip(),
                [c.text() for c in body.css("td code")],
            )
            for body in tree.css("article table tbody")
        ]

    pages = Pages(real / "build/catalog.duckdb")
    packets = pages.records["packet"]
    shown = listed(tmp_path / "cold")
    assert sorted(pid for _, pids in shown for pid in pids) == sorted(packets)
    assert all(str(pages.where[("packet", pid)].family) == fid for fid, pids in shown for pid in pids)
    families = [fid for fid, _ in shown]
    assert families == [fid for fid in pages.records["family"] if fid in families] and len(families) > 1
    kept = index_pieces()
    assert len(kept) == len(families)
    tokens = json.loads((real / MADE_FILE).read_text("utf-8"))["tokens"]
    pid = json.loads((real / PACKET / "packet.json").read_text("utf-8"))["id"]
    readers = {
        name
        for name, entry in made_entries(real, pieces=True).items()
        if ["records/packet", pid] in (tokens[n] for n in unpacked(entry[7]) or [])  # type: ignore[arg-type]
    }
    assert len(readers & kept.keys()) == 1  # its family's rows, and the workloads that show its packet's grades
    assert any(name.startswith("defects/#") for name in made_entries(real, pieces=True))  # kept as pieces too
    edit_json(real, f"{PACKET}/packet.json", lambda d: d.update(label="Rapid sweep, relabelled"))
    repo.git.add("-A")
    repo.index.commit("a packet's label")
    relabelled = publish.build(real, tmp_path / "relabelled")
    now = index_pieces()
    assert now.keys() == kept.keys() and len([n for n in kept if now[n] != kept[n]]) == 1
    assert relabelled.pieces_taken == len(made_entries(real, pieces=True)) - len(readers)
    assert "Rapid sweep, relabelled" in (tmp_path / "relabelled/packets/index.html").read_text("utf-8")
    assert listed(tmp_path / "relabelled") == shown
    edit_json(real, f"{PACKET}/packet.json", lambda d: d.update(label="Rapid sweep at 52.3 tok/s"))
    db = ensure_catalog(real).path
    refused = sitebuild.build_site(real, db, real / "build/downloads", tmp_path / "refused")
    index = [f for f in refused.findings if f.file == "packets/index.md"]
    assert [f.code for f in index] == ["orphan-number"] and "52.3 tok/s" in index[0].message


def builder(reg: Reg, tmp_path: Path, ignored: bool = True) -> Callable[[], sitebuild.Built]:
    """The fixture registry with the site's pages (its build outputs ignored by git, as ``evreg init`` writes), its
    catalog and data downloads: a function that builds its site into ``tmp_path / "site"`` and requires no finding."""
    with_site(reg)
    if ignored:
        reg.put(".gitignore", "build/\n")
    reg.commit("a site")
    db = ensure_catalog(reg.root).path
    downloads = reg.root / "build/downloads"
    catalog.export_tables(db, downloads)

    def site() -> sitebuild.Built:
        built = sitebuild.build_site(reg.root, db, downloads, tmp_path / "site")
        assert built.findings == []
        return built

    return site


def test_a_kept_page_whose_html_or_entry_is_not_what_was_made_is_made_again(reg: Reg, tmp_path: Path) -> None:
    """The packs and their entries are this machine's build outputs, still never taken on their word: a page whose
    bytes in the pack were altered (an orphan figure written in, of the same length), whose entry claims other reads
    or none (a piece may read nothing but what its name is made of; a page reads records), or whose entry is cut short
    is made again; the packs of a commit (git tracks them) are not read."""
    site = builder(reg, tmp_path, ignored=False)

    site()
    records = len(made_entries(reg.root))
    first = files(tmp_path / "site")
    assert site().taken == records
    kept = made_entries(reg.root)
    _content, _title, part, offset, size = kept["packets/pkt.md"][:5]
    pack = reg.root / PACKS_DIR / f"part-{part}.html"
    data = bytearray(pack.read_bytes())
    page = data[offset : offset + size]
    at = page.index(b"</h1>")
    data[offset + at - 9 : offset + at] = b"52.3 tok/"  # what the pack holds for the page is not what was made
    pack.write_bytes(bytes(data))
    assert site().taken == records - 1 and files(tmp_path / "site") == first
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    stored["pages"]["packets/pkt.md"][6] = "0" * 64  # its reads digest otherwise
    stored["pages"]["families/fam.md"] = stored["pages"]["families/fam.md"][:7]  # cut short
    (reg.root / MADE_FILE).write_text(json.dumps(stored), "utf-8")
    assert site().taken == records - 2 and files(tmp_path / "site") == first
    assert site().taken == records
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    entry = stored["pages"]["packets/pkt.md"]
    entry[6], entry[7] = hashlib.sha256().hexdigest(), packed([])  # a page that claims it read nothing, sealed so
    entry[8] = seal("packets/pkt.md", entry[0], entry[1], entry[6], _entries_of(reg, entry))
    (reg.root / MADE_FILE).write_text(json.dumps(stored), "utf-8")
    assert site().taken == records - 1 and files(tmp_path / "site") == first
    reg.repo.git.add("-f", MADE_FILE)  # kept pages a commit brings are its author's word: not read
    reg.commit("pages of my own")
    assert (site().taken, site().taken) == (0, 0)
    assert files(tmp_path / "site") == first


def _fifo(reg: Reg, kept: list[Any]) -> None:
    pack = reg.root / PACKS_DIR / f"part-{kept[2]}.html"
    pack.unlink()
    os.mkfifo(pack)  # a read would wait for a writer forever


def _linked(reg: Reg, kept: list[Any]) -> None:
    pack = reg.root / PACKS_DIR / f"part-{kept[2]}.html"
    copy = reg.root / "elsewhere.html"
    shutil.move(pack, copy)
    pack.symlink_to(copy)


def _entries_of(reg: Reg, kept: list[Any]) -> bytes:
    """The search entries a pack holds after the page's HTML."""
    start = kept[3] + kept[4]
    return (reg.root / PACKS_DIR / f"part-{kept[2]}.html").read_bytes()[start : start + kept[5]]


def _resealed(reg: Reg, kept: list[Any]) -> None:
    """The packet page's seal made again for what its entry now says (as someone who knows the format would)."""
    from evreg.site.reuse import seal

    kept[8] = seal("packets/pkt.md", kept[0], kept[1], kept[6], _entries_of(reg, kept))


def _other_entries(reg: Reg, kept: list[Any]) -> None:
    """The page's search entries in the pack say another title, of the same length (the pack's other pages stay)."""
    pack = reg.root / PACKS_DIR / f"part-{kept[2]}.html"
    data = bytearray(pack.read_bytes())
    at = data.index(b'"title":"', kept[3] + kept[4]) + len(b'"title":"')
    data[at] = ord("X") if data[at] != ord("X") else ord("Y")
    pack.write_bytes(bytes(data))


def _not_utf8(reg: Reg, kept: list[Any]) -> None:
    """A pack whose page holds a byte that is no UTF-8, with every digest made again to match."""
    from evreg.site.reuse import content_digest

    pack = reg.root / PACKS_DIR / f"part-{kept[2]}.html"
    data = bytearray(pack.read_bytes())
    data[kept[3] + 3] = 0xFF
    pack.write_bytes(bytes(data))
    kept[0] = content_digest(bytes(data[kept[3] : kept[3] + kept[4]]))
    _resealed(reg, kept)


TAMPERED: dict[str, Callable[[Reg, list[Any]], object]] = {
    "an offset past any file": lambda _reg, kept: kept.__setitem__(3, 2**63),
    "a size past any file": lambda _reg, kept: kept.__setitem__(4, 2**63),
    "a size of 4 EiB": lambda _reg, kept: kept.__setitem__(4, 2**62),
    "a pack that is a FIFO": _fifo,
    "a pack reached through a symlink": _linked,
    "another title": lambda _reg, kept: kept.__setitem__(1, "<img src=x onerror=alert(1)>"),
    "a title that is no Unicode text": lambda _reg, kept: kept.__setitem__(1, "pkt \ud800"),
    "another title, resealed but a lone surrogate": lambda reg, kept: (
        kept.__setitem__(1, "pkt \ud800"),
        _resealed(reg, kept),
    ),
    "other search entries": _other_entries,
    "a pack whose page is no UTF-8": _not_utf8,
    "no seal": lambda _reg, kept: kept.__setitem__(8, ""),
    "a read past the table": lambda _reg, kept: kept.__setitem__(7, packed([*(unpacked(kept[7]) or []), 2**32 - 1])),
    "reads cut in the middle of a number": lambda _reg, kept: kept.__setitem__(7, packed([1, 2])[:-4] + "Ag=="),
    "reads that are not base64": lambda _reg, kept: kept.__setitem__(7, kept[7][:-2] + "*!"),
    "reads as a list of numbers": lambda _reg, kept: kept.__setitem__(7, list(unpacked(kept[7]) or [])),
}


@pytest.mark.parametrize("how", list(TAMPERED))
def test_a_tampered_kept_page_is_made_again_never_a_crash_or_a_wait(reg: Reg, tmp_path: Path, how: str) -> None:
    """The kept files are read as untrusted bytes: whatever they hold (numbers past any file, a FIFO or a link in
    place of a pack, a title or search entries the page was not kept with, bytes that are no UTF-8), the build
    neither fails nor waits, the page is made again and the site is the one a build that makes every page publishes."""
    site = builder(reg, tmp_path)

    site()
    first, records = files(tmp_path / "site"), len(made_entries(reg.root))
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    TAMPERED[how](reg, stored["pages"]["packets/pkt.md"])
    (reg.root / MADE_FILE).write_text(json.dumps(stored), "utf-8")
    assert within(site, seconds=120).taken == records - 1
    assert files(tmp_path / "site") == first
    assert site().taken == records  # the build kept the page it made


def test_an_entry_moved_to_another_page_is_not_that_page(reg: Reg, tmp_path: Path) -> None:
    """The family page's entry copied under the packet page's path (its reads unchanged, its HTML whole) is not the
    packet page: the seal binds the path."""
    site = builder(reg, tmp_path)
    site()
    first, records = files(tmp_path / "site"), len(made_entries(reg.root))
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    stored["pages"]["packets/pkt.md"] = stored["pages"]["families/fam.md"]
    (reg.root / MADE_FILE).write_text(json.dumps(stored), "utf-8")
    assert site().taken == records - 1 and files(tmp_path / "site") == first


def test_kept_files_in_the_way_heal_and_a_torn_scan_file_keeps_the_pages(reg: Reg, tmp_path: Path) -> None:
    """A file where the packs' folder goes and a folder where ``made.json`` goes are replaced by the next build's;
    a torn ``checked.json`` costs the scans, not the kept pages."""
    site = builder(reg, tmp_path)

    site()
    records = len(made_entries(reg.root))
    shutil.rmtree(reg.root / PACKS_DIR)
    (reg.root / PACKS_DIR).write_text("not a folder", "utf-8")
    (reg.root / MADE_FILE).unlink()
    (reg.root / MADE_FILE).mkdir()
    assert site().taken == 0
    assert site().taken == records
    held = (reg.root / CHECKED_FILE).read_bytes()
    (reg.root / CHECKED_FILE).write_bytes(held[: len(held) // 2])
    torn = site()
    assert torn.taken == records and torn.reused == 0


def test_a_kept_piece_is_taken_only_whole_for_its_own_rows_and_never_past_an_orphan_figure(
    reg: Reg, tmp_path: Path
) -> None:
    """A comparison's workloads are pieces kept by their reads. A piece whose bytes in the pack were altered (an
    orphan figure written in, of the same length) or whose entry was moved to another workload's name is made again,
    and the site is the one a build that makes every piece publishes. A piece kept with an orphan figure (its own
    scan found it) still refuses the build."""
    site = builder(reg, tmp_path)
    site()
    first, pieces = files(tmp_path / "site"), made_entries(reg.root, pieces=True)
    assert len(pieces) >= 2 and site().pieces_taken == len(pieces)
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    (one, kept), (other, _) = sorted(pieces.items())[:2]
    pack = reg.root / PACKS_DIR / f"part-{kept[2]}.html"
    data = bytearray(pack.read_bytes())
    piece = bytes(data[kept[3] : kept[3] + kept[4]])
    at = kept[3] + piece.index(b"</th>")
    data[at - 9 : at] = b"52.3 tok/"
    pack.write_bytes(bytes(data))
    assert site().pieces_taken == len(pieces) - 1 and files(tmp_path / "site") == first
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    stored["pages"][other] = stored["pages"][one]  # its reads unchanged, its bytes whole: the seal binds the name
    (reg.root / MADE_FILE).write_text(json.dumps(stored), "utf-8")
    assert site().pieces_taken == len(pieces) - 1 and files(tmp_path / "site") == first
    # a piece sealed whole but not of a piece's form is made again, never a crash
    name, kept = sorted(made_entries(reg.root, pieces=True).items())[0]
    held = json.loads(_piece_bytes(reg, kept))
    deep = "[" * 900 + "]" * 900  # read without a depth walk: its shape is checked level by level
    forms = [b"{}", b'{"html": 1}', json.dumps({**held, "rows": [["a"] * 5 + [99, [], []]]}).encode()]
    one_cell = {**held, "cells": ["<td>a</td>"]}  # a row may name it: 0 is its index, false and 0.0 are not
    forms += [json.dumps({**one_cell, "rows": [["a"] * 5 + [n, [], [n]]]}).encode() for n in (False, 0.0)]
    compact = json.dumps(held, separators=(",", ":"))
    assert '"rows":[' in compact
    forms += [compact.replace('"rows":[', f'"rows":[{deep},', 1).encode(), deep.encode()]
    for other_form in forms:
        _reseal(reg, name, other_form)
        assert site().pieces_taken == len(pieces) - 1 and files(tmp_path / "site") == first
    # a piece kept with an orphan figure its scan found (written whole, as a build writes it), on a page whose scans
    # are not kept: the build is refused
    (reg.root / CHECKED_FILE).unlink()
    name, kept = sorted(made_entries(reg.root, pieces=True).items())[0]
    held = json.loads(_piece_bytes(reg, kept))
    assert held["figures"] == []
    _reseal(reg, name, json.dumps({**held, "figures": ["52.3 tok/s"]}).encode())
    refused = sitebuild.build_site(
        reg.root, reg.root / "build/catalog.duckdb", reg.root / "build/downloads", tmp_path / "x"
    )
    assert [f.code for f in refused.findings] == ["orphan-number"] and "52.3 tok/s" in refused.findings[0].message


def _piece_bytes(reg: Reg, kept: list[Any]) -> bytes:
    return (reg.root / PACKS_DIR / f"part-{kept[2]}.html").read_bytes()[kept[3] : kept[3] + kept[4]]


def _reseal(reg: Reg, name: str, data: bytes) -> None:
    """The piece ``name`` kept as ``data``, written whole as a build writes a piece: at the end of its pack, with the
    entry's digest, place and seal made for those bytes."""
    stored = json.loads((reg.root / MADE_FILE).read_text("utf-8"))
    entry = stored["pages"][name]
    digest = content_digest(data)
    with open(reg.root / PACKS_DIR / f"part-{entry[2]}.html", "ab") as out:
        entry[:6] = [digest, "", entry[2], out.tell(), len(data), 0]
        out.write(data)
    entry[8] = seal(name, digest, "", entry[6], b"")
    (reg.root / MADE_FILE).write_text(json.dumps(stored), "utf-8")
