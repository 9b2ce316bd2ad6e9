"""A reader never sees a measured number without its trust: on a comparison page and in a headline table, each
value's state, grades, accepted defects (linked to their row on the defects page) and whether its evidence was
checked are in the value's own cell; a comparison row says what sets it apart in its workload, its setup is in the
one topology vocabulary and its value column names its unit."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from evreg.site import compare
from evreg.site.html import Page
from helpers import EXTRA_RUNS, F, Reg, only, own_evidence

PKT = f"{F}/pkt/packet.json"
RUN = f"{F}/pkt/measurements/run-1.json"
TRUST = re.compile(r'<span class="evreg-trust">(.*?)</span></span>', re.S)


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Page]:
    """The fixture registry with runs to compare (one with another MTP depth) and an accepted defect of its packet
    (a typed figure in its caveat, baselined), rendered in this process."""
    from evreg.catalog import build as catalog
    from evreg.check import rules
    from evreg.site.cite import Pages
    from evreg.site.pages import render_pages
    from evreg.store import load

    reg = Reg(tmp_path_factory.mktemp("trust") / "reg")
    base = reg.read(RUN)
    for mid in ("run-2", "run-3"):
        fields: dict[str, Any] = dict(EXTRA_RUNS[mid])
        if mid == "run-2":
            fields["config"] = {**base["config"], "mtp": 3}  # the one thing that sets it apart
        reg.put(f"{F}/pkt/measurements/{mid}.json", {**base, "id": mid, **fields, **own_evidence(reg, mid, fields)})
    reg.edit(PKT, lambda d: d.update(caveat="Peak decode 40.1 tok/s once."))
    [f] = only(reg.findings(), "orphan-number")
    entry = {k: getattr(f, k) for k in ("code", "file", "pointer", "fields", "digest")} | {"reason": "a genuine defect"}
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [entry]})
    reg.commit("runs to compare, an accepted defect")
    registry = load(reg.root)
    report = rules.run(registry, rules.discover())
    assert [f.code for f in report.findings if f.severity == "error" and not f.baselined] == []
    db = tmp_path_factory.mktemp("trust-db") / "c.duckdb"
    catalog.build(registry, report.findings, {}, db, {"schema_version": "1"})
    return render_pages(Pages(db))


def _rows(page: str) -> dict[str, list[str]]:
    """Each comparison row's cells (HTML) by measurement (the first workload a measurement is in)."""
    out: dict[str, list[str]] = {}
    for mid, cells in re.findall(r'<tr class="evreg-row[^"]*" data-measurement="([^"]+)"[^>]*>(.*?)</tr>', page, re.S):
        out.setdefault(mid, re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S))
    return out


def _defect_anchor(built: dict[str, Page]) -> str:
    [anchor] = re.findall(r'<td id="(defect-[^"]+)">', built["defects.md"].html)
    return anchor


def test_a_comparison_value_carries_its_state_grade_defect_and_evidence_in_its_own_cell(
    built: dict[str, Page],
) -> None:
    page = built[compare.page_path("decode_tok_s")].html
    rows = _rows(page)
    assert set(rows) >= {"run-1", "run-2", "run-3", "sweep-1"}
    anchor = _defect_anchor(built)
    for mid in ("run-1", "run-2", "run-3"):
        value = rows[mid][1]  # the value's own cell: its citation, then its trust
        assert 'class="evreg-cite"' in value and value.index("evreg-cite") < value.index("evreg-trust"), value
        [trust] = TRUST.findall(value)
        assert "evreg-state-lab-measured" in trust and "ungraded" in trust, trust
        assert "evidence checked" in _plain(trust), trust  # each run's evidence is a local file, read
        # the packet's accepted defect is marked beside its grade, linked to its row on the defects page
        assert f'href="../../defects/#{anchor}"' in trust and "orphan-number" in _plain(trust), trust
        assert not re.search(r"\d", _plain(trust))  # no number beside the value's own
    # the value column's heading says its unit
    assert re.search(r'<th scope="col" data-col="1">Value \(tok/s\)</th>', page), page[:2000]


def test_a_headline_value_carries_its_trust_in_its_own_cell(built: dict[str, Page]) -> None:
    anchor = _defect_anchor(built)
    for path, base in (("families/fam.md", "../../"), ("index.md", "")):
        table = next(t for t in re.findall(r"<table>.*?</table>", built[path].html, re.S) if "<th>Role</th>" in t)
        heads = re.findall(r"<th>(.*?)</th>", table)
        row = re.search(r"<tr><td>hero</td>(.*?)</tr>", table, re.S)
        assert row is not None, table
        cells = ["hero", *re.findall(r"<td>(.*?)</td>", row.group(1), re.S)]
        value = cells[heads.index("Value")]
        assert "evreg-cite" in value and "run-1" in value, value
        [trust] = TRUST.findall(value)
        assert "evreg-state-lab-measured" in trust and "ungraded" in trust and "evidence checked" in _plain(trust)
        assert f'href="{base}defects/#{anchor}"' in trust, trust
        # the setup in the one topology vocabulary, beside the hardware
        assert _plain(cells[heads.index("Hardware · setup")]).endswith("· 1 card"), cells


def test_the_defects_page_holds_the_row_the_marks_link_to(built: dict[str, Page]) -> None:
    defects = built["defects.md"].html
    anchor = _defect_anchor(built)
    row = defects.split(f'id="{anchor}"', 1)[1].split("</tr>", 1)[0]
    assert "packets/fam/pkt/packet.json" in row and "/caveat" in row


def test_a_comparison_row_says_what_sets_it_apart_in_its_workload(built: dict[str, Page]) -> None:
    rows = _rows(built[compare.page_path("decode_tok_s")].html)
    model = {mid: _plain(cells[2]) for mid, cells in rows.items()}
    assert model["run-2"].endswith("differs: mtp=3"), model
    assert model["run-1"].endswith("differs: mtp=0") and model["run-3"].endswith("differs: mtp=0"), model
    assert "differs" not in model["sweep-1"]  # alone in its workload
    # one topology vocabulary: run-1 states tp 1, its packet one card
    assert {_plain(cells[6]) for cells in rows.values()} == {"1 card"}


def test_the_data_file_keeps_each_rows_trust_and_what_sets_it_apart() -> None:
    """Rows past the first of a workload go to the data file, a value cell as a template of its numbers: a row
    rebuilt from it is the row the page would hold, trust and ``differs`` line included."""
    rows = compare.Rows("../../")
    rows.tiers.append([])
    trust = '<span class="evreg-trust">lab-measured EVID B · evidence checked</span>'
    cite = '<a class="evreg-cite" href="../../packets/pkt/#m-run-9--decode-tok-s-0">30.21 tok/s</a>'
    value = f'<td data-sort="30.21">{cite} {trust}</td>'
    model = '<td>A · fam<br><span class="evreg-differs">differs: <code>mtp=3</code></span></td>'
    rows.add("run-9", "packets/pkt/", "ranked", "30.21", "30.21", ["<td>1</td>", value], [model], "mtp=3")
    [[row]] = rows.tiers
    cells = list(rows.cells)
    rebuilt = compare.filled(cells[row[5]], row[6]).replace(compare.MID, row[0])
    rebuilt = rebuilt.replace(compare.HOME, row[1]).replace(compare.BASE, "../../")
    assert rebuilt == value and cells[row[7][1]] == model
