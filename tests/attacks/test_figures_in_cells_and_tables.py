"""Figures in coverage cells and in table columns: a bare number in a cell is a value of its arm, a unit in a
table header applies to its column; cell text that states no value passes."""

from __future__ import annotations

import pytest

from helpers import RESULTS_PAGE, F, Reg, only


@pytest.mark.parametrize("label", ["93.551 strict", "30.22–30.26", "P1,020 · T8,047", "D–104.840 · stock"])
def test_a_bare_number_in_a_cell_is_a_value_of_its_arm(reg: Reg, label: str) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:2"].update(label=label))
    assert only(reg.findings(), "orphan-number")


@pytest.mark.parametrize("label", ["TP4 · MTP3", "8,192 tokens", "vLLM 0.9.1 stock", "no measured route"])
def test_cell_text_that_states_no_value_passes(reg: Reg, label: str) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:2"].update(label=label))
    assert not only(reg.findings(), "orphan-number")


def test_a_unit_in_a_table_header_applies_to_its_column(reg: Reg) -> None:
    reg.put("site/results.md", RESULTS_PAGE)
    found = [f for f in only(reg.findings(), "orphan-number") if f.file == "site/results.md"]
    assert [(f.line, f.message) for f in found] == [
        (5, "figure '52.3' under the column 'Decode (tok/s)' (in tok/s) is not a citation")
    ]
