"""A record page's trace is complete: a change to any value a page read changes the digest of its trace, and a page
whose trace digests as before is, made again from the changed catalog, the same page; so is a piece of a page (a
comparison's workload, ``Pages.kept``). Tried on the real records' catalog with changes drawn at random among the
values the pages and pieces read (hypothesis), and on stores a page must not be able to read around."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evreg.app.catalog import ensure_catalog
from evreg.site import compare
from evreg.site.cite import Pages
from evreg.site.pages import Job, make, record_jobs
from evreg.site.trace import ALL, Reads, Token, Tracked, sorted_tokens, token_from_json


@dataclass
class Made:
    html: dict[str, str]  # by record page path, or by piece name (its bytes as text)
    tokens: dict[str, list[Token]]
    inputs: dict[str, str]


def comparisons(p: Pages) -> list[Job]:
    from evreg.site import indexes

    return [(compare.page_path(metric), indexes.comparison, (metric,)) for metric in compare.headline_metrics(p)]


def pieces(p: Pages) -> dict[str, tuple[str, list[Token]]]:
    """The comparisons' pieces, made, each with what it read (as a build's keeper records them)."""
    out: dict[str, tuple[str, list[Token]]] = {}

    def keeper(name: str, fn: Any, read: Any) -> Any:
        with p.reads.recording() as seen:
            data: bytes = fn()
        out[name] = (data.decode(), sorted_tokens(seen))
        return read(data)

    p.keeper = keeper
    for job in comparisons(p):
        make(p, job)
    p.keeper = None
    return out


@pytest.fixture(scope="module")
def db(pristine: Path) -> Path:
    return ensure_catalog(pristine).path


@pytest.fixture(scope="module")
def made(db: Path) -> Made:
    p = Pages(db)
    out = Made({}, {}, {})
    for job in record_jobs(p):
        with p.reads.recording() as seen:
            path, page = make(p, job)
        out.html[path], out.tokens[path] = page.html, sorted_tokens(seen)
        out.inputs[path] = p.digests.of_trace(out.tokens[path])
    for name, (data, tokens) in pieces(p).items():
        out.html[name], out.tokens[name], out.inputs[name] = data, tokens, p.digests.of_trace(tokens)
    assert any("#" in name for name in out.tokens)
    return out


def changed(value: Any, pick: int) -> Any:
    """``value`` with one of its leaves changed (the ``pick``-th, counting round), or a value of another shape."""
    leaves: list[tuple[Any, Any]] = []

    def walk(v: Any, parent: Any, key: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, v, k)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, v, i)
        elif parent is not None:
            leaves.append((parent, key))

    if isinstance(value, tuple) and hasattr(value, "_replace"):  # a catalog row
        fields = [f for f, x in zip(value._fields, value, strict=True) if isinstance(x, str)]
        return value._replace(**{fields[pick % len(fields)]: "changed"}) if fields else None
    if isinstance(value, str):
        return value + " changed"
    if isinstance(value, int | float):
        return value + 1
    value = copy.deepcopy(value)
    walk(value, None, None)
    if not leaves:
        return [*value, "added"] if isinstance(value, list) else {**value, "added": 1}
    parent, key = leaves[pick % len(leaves)]
    old = parent[key]
    if isinstance(old, tuple) and hasattr(old, "_replace"):  # a catalog row in a list
        parent[key] = changed(old, pick) or old
        return value
    parent[key] = (old + " changed") if isinstance(old, str) else (not old) if isinstance(old, bool) else "changed"
    return value


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=0), st.integers(min_value=0), st.integers(min_value=0))
def test_a_page_whose_reads_are_unchanged_is_made_the_same_and_a_changed_read_is_seen(
    made: Made, db: Path, page: int, token: int, pick: int
) -> None:
    paths = sorted(made.tokens)
    path = paths[page % len(paths)]
    name, key = made.tokens[path][token % len(made.tokens[path])]
    p = Pages(db)
    store = p.stores[name]._data
    if key is ALL:
        store[("a key no record has",) if isinstance(next(iter(store), ""), tuple) else "a key no record has"] = []
    elif key not in store:
        store[key] = []  # a value appears where the page found none
    elif isinstance(store[key], Tracked):
        return  # a store in a store: its own reads are its tokens
    else:
        new = changed(store[key], pick)
        if new is None or new == store[key]:
            return
        store[key] = new
    assert p.digests.of_trace(made.tokens[path]) != made.inputs[path]  # the page that read it sees the change
    for job in record_jobs(p):  # a page of a record the change added is new: it has no trace
        if job[0] in made.tokens and p.digests.of_trace(made.tokens[job[0]]) == made.inputs[job[0]]:
            assert make(p, job)[1].html == made.html[job[0]], f"{job[0]} changed with {name} {key!r}"
    try:
        remade = pieces(p)
    except (AttributeError, TypeError, KeyError, ValueError):
        return  # a change no validated record could make (a number become a word): the comparisons cannot be made
    for piece, (data, _tokens) in remade.items():  # a workload whose rows changed has another name
        if piece in made.tokens and p.digests.of_trace(made.tokens[piece]) == made.inputs[piece]:
            assert data == made.html[piece], f"{piece} changed with {name} {key!r}"


def test_a_pages_trace_does_not_depend_on_the_pages_made_before_it(made: Made, db: Path) -> None:
    """Made in the other order, every page reads the same: a value a page takes from a memo another page filled
    (a measurement's trust line) counts as read by both."""
    p = Pages(db)
    for job in reversed(record_jobs(p)):
        with p.reads.recording() as seen:
            path, page = make(p, job)
        assert page.html == made.html[path]
        assert sorted_tokens(seen) == made.tokens[path], path


def test_every_record_page_reads_its_own_record_and_no_whole_store(made: Made) -> None:
    """No record page reads a whole store (it would be made again for any change anywhere), and each reads the record
    it is the page of."""
    assert len(made.tokens) > 100
    for path, tokens in made.tokens.items():
        assert all(key is not ALL for _, key in tokens), path
        kind, _, rid = path.removesuffix(".md").partition("/")
        own = {"packets": ("records/packet", rid), "families": ("records/family", rid.split("/")[0])}.get(kind)
        if own is not None:
            assert own in tokens, path


def test_a_store_cannot_be_read_around() -> None:
    """What the pages hold of the catalog is read only through its methods, each noted: a copy, a JSON dump or a
    write fails rather than reading it unnoticed."""
    reads = Reads()
    store: Tracked[str, Any] = Tracked("s", {"a": {"x": 1}}, reads)
    with reads.recording() as seen:
        assert store.get("a") == {"x": 1} and "b" not in store and store.get("b") is None
        assert list(store) == ["a"]
    assert seen == {("s", "a"), ("s", "b"), ("s", ALL)}
    for attempt in (lambda: json.dumps(store), lambda: store.copy(), lambda: store.__setitem__("a", 2)):  # type: ignore[attr-defined]
        with pytest.raises((TypeError, AttributeError)):
            attempt()


def test_a_memo_gives_the_reads_of_its_value_to_every_page_that_takes_it() -> None:
    reads = Reads()
    store: Tracked[str, int] = Tracked("s", {"a": 1}, reads)
    memo: dict[Any, Any] = {}
    with reads.recording() as first:
        assert reads.memo(memo, "k", lambda: store["a"] + 1) == 2
    with reads.recording() as second:
        assert reads.memo(memo, "k", lambda: 0) == 2  # taken from the memo
    assert first == second == {("s", "a")}


@pytest.mark.parametrize(
    ("stored", "token"),
    [
        (["where", ["packet", "p"]], ("where", ("packet", "p"))),
        (["family_records", ["view", None]], ("family_records", ("view", None))),
        (["measurements", None], ("measurements", ALL)),
        (["measurements", 3], None),
        (["measurements", ["a", 3]], None),
        ([1, "a"], None),
        ("measurements", None),
    ],
)
def test_a_stored_token_is_read_back_as_the_stores_key_it(stored: Any, token: Token | None) -> None:
    assert token_from_json(stored) == token


def test_a_trace_is_sorted_the_same_in_every_process() -> None:
    """Tokens of every kind of key (strings, None, tuples, sets) sort the same under any string hashing: a stored
    trace's order is its digest's."""
    program = (
        "import json\n"
        "from evreg.site.trace import sorted_tokens\n"
        "tokens = {('s', 'b'), ('s', None), ('s', ('a', None)), ('t', 'a'), ('s', frozenset({'ab', 'zz'})),"
        " ('s', frozenset({'ac', 'b'})), ('s', 2), ('s', ('a', 1))}\n"
        "print(json.dumps([[n, sorted(k) if isinstance(k, frozenset) else k] for n, k in sorted_tokens(tokens)]))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    orders = {
        subprocess.run(
            [sys.executable, "-c", program], env={**env, "PYTHONHASHSEED": str(seed)}, capture_output=True, check=True
        ).stdout
        for seed in range(8)
    }
    assert len(orders) == 1
    order = json.loads(orders.pop())
    assert len(order) == 8 and order.index(["s", "b"]) < order.index(["s", None]) < order.index(["t", "a"])
