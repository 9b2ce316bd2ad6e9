"""Coverage: the one definition of a cell key and of how a coverage contract expands into cells.
Used by the coverage rules and by the site."""

from __future__ import annotations

import itertools
from collections import Counter
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
    """Every cell of the contract's axes (their Cartesian product), with the rules matching it: a rule
    matches a cell when its ``match`` gives, for every axis, ``"*"`` or the cell's value.

    Each axis value carries the set of rules it admits (a bit per rule), so a cell's rules are the
    intersection of its values' sets: one pass over rules x axis values, not over rules x cells."""
    axes = contract["axes"]
    keys = [a["key"] for a in axes]
    rules = contract["rules"]
    everyone, admits = _admits(contract)
    for picks in itertools.product(*(range(len(a["values"])) for a in axes)):
        sel = {k: axes[n]["values"][j] for n, (k, j) in enumerate(zip(keys, picks, strict=True))}
        mask = everyone
        for n, j in enumerate(picks):
            mask &= admits[n][j]
        yield ContractCell(sel, [(i, rules[i]) for i in _bits(mask)])


def state_counts(contract: dict[str, Any]) -> Counter[Any]:
    """How many of the contract's cells have each state -- the state ``merge`` gives a cell (its last matching rule
    that states one), ``"missing"`` where none does -- without making the cells: the rule sets of the cells are
    counted axis by axis, cells with the same rules counted together (a family's page and the contracts' index show
    these counts for every contract)."""
    rules = contract["rules"]
    everyone, admits = _admits(contract)
    stating = sum(1 << i for i, r in enumerate(rules) if "state" in r)
    sets = Counter({everyone & stating: 1})
    for values in admits:
        step: Counter[int] = Counter()
        for mask, n in sets.items():
            for admitted in values:
                step[mask & admitted] += n
        sets = step
    counts: Counter[Any] = Counter()
    for mask, n in sets.items():
        counts[rules[mask.bit_length() - 1]["state"] if mask else "missing"] += n
    return counts


def _admits(contract: dict[str, Any]) -> tuple[int, list[list[int]]]:
    """Every rule (a bit per rule), and for each axis value the rules admitting it."""
    axes = contract["axes"]
    keys = [a["key"] for a in axes]
    rules = contract["rules"]
    everyone = (1 << len(rules)) - 1
    last = {k: n for n, k in enumerate(keys)}  # an axis whose key a later axis repeats selects nothing
    return everyone, [
        [_admitting(rules, a["key"], v) if last[a["key"]] == n else everyone for v in a["values"]]
        for n, a in enumerate(axes)
    ]


def _admitting(rules: list[dict[str, Any]], key: str, value: Any) -> int:
    """The rules (a bit per rule index) whose match admits ``value`` on axis ``key``."""
    mask = 0
    for i, r in enumerate(rules):
        if r["match"].get(key) in ("*", value):
            mask |= 1 << i
    return mask


def _bits(mask: int) -> Iterator[int]:
    """The indices of the set bits of ``mask``, in ascending order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


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
