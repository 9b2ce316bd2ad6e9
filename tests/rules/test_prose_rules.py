"""Failing and passing fixtures for the prose rules: every figure a reader sees is a citation (or a setting, a
quote, a derived figure), in every string a record holds -- declared fields, free text under any key, fields the
models do not know -- and in hand-written pages; citations resolve; misspelt fields are named."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from evreg.claims import citations
from evreg.core.findings import split_pointer
from evreg.records.models import MODELS, claims_in, is_prose, iter_prose
from helpers import RECORDS, F, Reg, only

RUN = f"{F}/pkt/measurements/run-1.json"
PKT = f"{F}/pkt/packet.json"


def test_cited_prose_passes_and_renders(reg: Reg) -> None:
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(summary="Decode {{ m:run-1.decode_tok_s[1] }} on one card."))
    assert reg.findings() == []
    [c] = citations.parse("{{ m:run-1.decode_tok_s[1] }}")
    resolved = citations.resolve(c, {"run-1": reg.read(RUN)})
    assert isinstance(resolved, citations.Resolved) and resolved.text == "30.25 tok/s"


def test_malformed_citation(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(quality="gate {{ m:run-1.decode_tok_s }} passed"))
    [f] = reg.findings()
    assert (f.code, f.file, f.pointer) == ("citation-unresolved", RUN, "/quality")


def test_hand_written_site_page_orphan_and_citation(reg: Reg) -> None:
    page = reg.root / "site/notes.md"
    page.parent.mkdir()
    page.write_text("# Notes\n\nWe reached 52.3 tok/s.\n\n```\n99.9 tok/s in a code block is an example\n```\n")
    [f] = reg.findings()
    assert (f.code, f.file, f.line) == ("orphan-number", "site/notes.md", 3)
    page.write_text("# Notes\n\nWe reached {{ m:run-1.decode_tok_s[0] }}.\n")
    assert reg.findings() == []


def test_a_misspelt_field_is_named_with_the_field_it_resembles(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(caveats="reaches 52.3 tok/s", worklaod=d.pop("workload")))
    found = {(f.pointer, f.message) for f in only(reg.findings(), "field-misspelt")}
    assert found == {
        ("/caveats", "'caveats' is not a field of a run-measurement; did you mean 'caveat'?"),
        ("/worklaod", "'worklaod' is not a field of a run-measurement; did you mean 'workload'?"),
    }
    reg.edit(RUN, lambda d: [d.pop("caveats"), d.update(workload=d.pop("worklaod"), caveat="ok", caveats="x")])
    assert only(reg.findings(), "field-misspelt") == []  # beside the field it resembles, it is a field of its own


# -- every string a reader sees is prose -------------------------------------------------------------------------------


def _prose_fields(model: type[BaseModel]) -> list[str]:
    """Top-level fields of ``model`` that hold a string readers see (not a token: id, hash, date, state)."""
    return [
        info.alias or name
        for name, info in model.model_fields.items()
        if is_prose(info.alias or name, "some text") and _leaf_types(info.annotation) in ({str}, {str, type(None)})
    ]


def _leaf_types(annotation: Any) -> set[Any]:
    args = get_args(annotation)
    return {annotation} if not args else set().union(*(_leaf_types(a) for a in args))


def test_a_figure_in_any_string_readers_see_is_an_orphan_number(reg: Reg) -> None:
    """Generated from the models: every declared text field of every record kind, every string the fixture records
    hold at any depth (config included), and a field no model declares. Tokens (ids, hashes) are not prose."""
    planted: list[tuple[str, str]] = []
    for path, make in RECORDS.items():
        record = make()
        targets = {f"/{field}" for field in _prose_fields(MODELS[record["kind"]])}
        targets |= {pointer for pointer, _ in iter_prose(record)}
        targets |= {"/caveats", "/config/scheduler"}  # a misspelt field; a setting's text
        for pointer in sorted(targets):
            trial = make()
            _plant(trial, pointer, "reached 52.3 tok/s")
            try:  # where the schema allows free text (a featured result's role is one of two words)
                MODELS[record["kind"]].model_validate(trial)
            except ValidationError:
                continue
            planted.append((path, pointer))
    assert len(planted) > 45
    for path, pointer in planted:
        reg.edit(path, lambda d, p=pointer: _plant(d, p, "reached 52.3 tok/s"))
    found = {(f.file, f.pointer) for f in only(reg.findings(), "orphan-number")}
    assert set(planted) <= found, sorted(set(planted) - found)[:10]
    assert not is_prose("measurement_id", "run-1") and is_prose("measurement_id", "decode 250 tok/s")
    assert is_prose("workload", "x") and not is_prose("evidence", "decode 250 tok/s")


def _plant(record: dict[str, Any], pointer: str, text: str) -> None:
    *parents, last = split_pointer(pointer)
    node: Any = record
    for token in parents:
        node = node.setdefault(token, {}) if isinstance(node, dict) else node[int(token)]
    key: Any = int(last) if isinstance(node, list) else last
    before = node[key] if (isinstance(node, list) or key in node) and isinstance(node[key], str) else ""
    node[key] = f"{before} {text}".strip()


@pytest.mark.parametrize(
    "where",
    [
        ("config", "metric"),  # a token key (View.metric) inside config: rendered as prose, marked "baselined"
        ("config", "commit"),
        ("config", "id"),
        ("lab_field", "state"),  # an unknown object holding a token-named key: rendered verbatim as code
        (None, "date"),  # a token key (Retired.date) as an unknown top-level field of a run
        (None, "nested_list"),  # nested list of strings: [["..."]]
    ],
)
def test_figure_under_a_token_named_key_in_free_text_is_an_orphan(reg: Reg, where: tuple[str | None, str]) -> None:
    parent, key = where
    figure = "decode 250 tok/s"

    def plant(d: dict[str, Any]) -> None:
        if key == "nested_list":
            d["notes"] = [[figure]]
        elif parent is None:
            d[key] = figure
        elif parent in d and isinstance(d[parent], dict):
            d[parent][key] = figure
        else:
            d[parent] = {key: figure}

    reg.edit(RUN, plant)
    assert only(reg.findings(), "orphan-number"), f"{where}: a typed figure readers see on the run's page passed"


def test_a_citation_under_a_token_named_key_is_checked(reg: Reg) -> None:
    """A citation under a token-named key (config.metric) is prose the run's page shows: an unresolved one is
    reported (citation-unresolved), not published as an unresolved mark."""
    reg.edit(RUN, lambda d: d["config"].__setitem__("metric", "{{ m:nope.decode_tok_s[0] }}"))
    assert only(reg.findings(), "citation-unresolved")


# -- names: a memory size is part of a name, a speed is a claim --------------------------------------------------------


def test_a_memory_size_is_part_of_a_hardware_or_runtime_name_but_a_speed_is_a_claim(reg: Reg) -> None:
    packet = f"{F}/pkt/packet.json"
    reg.edit(packet, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3", runtime="vLLM 0.9"))
    assert "orphan-number" not in reg.codes()
    reg.edit(packet, lambda d: d.update(hardware="RTX 5090 32 GB reaching 250 tok/s"))
    [f] = only(reg.findings(), "orphan-number")
    assert (f.pointer, "'250 tok/s'" in f.message) == ("/hardware", True)
    reg.edit(packet, lambda d: d.update(hardware="RTX 5090", summary="Runs on one 32 GB card."))
    [f] = only(reg.findings(), "orphan-number")  # in prose that is not a name, a memory size is a figure
    assert f.pointer == "/summary"


@pytest.mark.parametrize(
    "hardware",
    ["RTX 5090 1792 GB/sec", "RTX 5090 (1792 GB per second)", "RTX 5090 1792 GB/second"],
)
def test_a_bandwidth_is_not_a_memory_size_in_a_name(reg: Reg, hardware: str) -> None:
    """'1792 GB/s' in hardware is an orphan number, and so is the same speed spelled GB/sec, GB per second or
    GB/second: a bandwidth is a claim, not a memory size that is part of a name."""
    assert claims_in("hardware", hardware), hardware
    reg.edit(PKT, lambda d: d.__setitem__("hardware", hardware))
    assert only(reg.findings(), "orphan-number")
