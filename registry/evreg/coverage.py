"""Coverage: the one definition of a cell key and of how a coverage contract expands into cells.
Used by the coverage rules and by the site."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, NamedTuple


def cell_key(value: Any) -> str:
    """An axis value as cell keys spell it (``"0:2"``): whole floats as integers, booleans lowercase."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).lower() if isinstance(value, bool) else str(value)


class ContractCell(NamedTuple):
    selectors: dict[str, Any]  # axis key -> value
    matching: list[tuple[int, dict[str, Any]]]  # (index, rule) of the rules that match, in order


def expand(contract: dict[str, Any]) -> Iterator[ContractCell]:
    """Every cell of the contract's axes (their Cartesian product), with the rules matching it."""
    keys = [a["key"] for a in contract["axes"]]
    rules = contract["rules"]
    for values in itertools.product(*(a["values"] for a in contract["axes"])):
        sel = dict(zip(keys, values, strict=True))
        matching = [(i, r) for i, r in enumerate(rules) if all(r["match"].get(k) in ("*", v) for k, v in sel.items())]
        yield ContractCell(sel, matching)


def merge(matching: list[tuple[int, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, int]]:
    """A cell's fields, later rules overriding earlier ones, and the index of the rule each came from."""
    merged: dict[str, Any] = {}
    source: dict[str, int] = {}
    for i, rule in matching:
        for k, v in rule.items():
            if k not in ("id", "match"):
                merged[k] = v
                source[k] = i
    return merged, source
