"""What a page read of the catalog: the trace that lets a later build reuse the page while those reads are unchanged.

A page is a pure function of its path, the code and the catalog: the catalog's stores (``evreg.site.data.Catalog``)
are ``Tracked`` mappings, and every read of one -- a key looked up, tested or iterated -- is noted as a *token*
(the store's name and the key; ``ALL`` for the whole store) in the trace of the page being made (``Reads.recording``).
The trace is kept with the page. A later build recomputes each token's value in its own catalog (``Digests``) and
reuses the page only when every one digests as before: a page is never reused for inputs it did not read.

A memo that outlives one page (a measurement's trust line, worked out once per build) keeps the tokens its value was
computed from and adds them to the trace of every page that takes the value from it (``Reads.memo``): taking a value
from a memo reads what computing it read. A store hands out no writable view of itself: reading it any other way
(``dict(store)``, ``json.dumps(store)``) fails rather than going unnoticed.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Hashable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, TypeVar

import orjson

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")

ALL = None
"""The key of a token that read a whole store (iterated it, or took its size)."""

Token = tuple[str, Any]
"""A read: the store's name and the key read (``ALL`` for the whole store)."""


class Reads:
    """The traces being recorded: one per page being made, and one per memo value being computed inside it."""

    def __init__(self) -> None:
        self._open: list[set[Token]] = []

    def note(self, token: Token) -> None:
        if self._open:
            self._open[-1].add(token)

    @contextlib.contextmanager
    def recording(self) -> Iterator[set[Token]]:
        """Record every read until the block ends, into the set yielded; the reads count for any recording around it
        too."""
        seen: set[Token] = set()
        self._open.append(seen)
        try:
            yield seen
        finally:
            self._open.pop()
            if self._open:
                self._open[-1] |= seen

    def noted(self, tokens: Iterable[Token]) -> None:
        """Reads made before, noted again (a kept value taken: reading it reads what making it read)."""
        if self._open:
            self._open[-1].update(tokens)

    def memo(self, cache: dict[Any, tuple[T, frozenset[Token]]], key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, kept in ``cache`` under ``key`` with the tokens it read; a page taking the kept value reads
        those tokens."""
        hit = cache.get(key)
        if hit is None:
            with self.recording() as seen:
                value = compute()
            cache[key] = (value, frozenset(seen))
            return value
        if self._open:
            self._open[-1] |= hit[1]
        return hit[0]


class Tracked(Mapping[K, V]):
    """A read-only store of the catalog whose every read is noted in ``reads`` under the store's ``name``."""

    __slots__ = ("_data", "_missing", "_name", "_reads")

    def __init__(self, name: str, data: Mapping[K, V], reads: Reads, missing: Callable[[], V] | None = None) -> None:
        """``missing``: what a missing key's value is (as a ``defaultdict``'s, without adding the key)."""
        self._name, self._data, self._reads, self._missing = name, data, reads, missing

    def __getitem__(self, key: K) -> V:
        self._reads.note((self._name, key))
        if self._missing is not None and key not in self._data:
            return self._missing()
        return self._data[key]

    def get(self, key: K, default: Any = None) -> Any:
        self._reads.note((self._name, key))
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        self._reads.note((self._name, key))
        return key in self._data

    def __iter__(self) -> Iterator[K]:
        self._reads.note((self._name, ALL))
        return iter(self._data)

    def __len__(self) -> int:
        self._reads.note((self._name, ALL))
        return len(self._data)

    def keys(self) -> KeysView[K]:
        self._reads.note((self._name, ALL))
        return self._data.keys()

    def values(self) -> ValuesView[V]:
        self._reads.note((self._name, ALL))
        return self._data.values()

    def items(self) -> ItemsView[K, V]:
        self._reads.note((self._name, ALL))
        return self._data.items()

    def __repr__(self) -> str:
        return f"Tracked({self._name!r}, {len(self._data)} keys)"


STORE = b"a store"
"""What a store inside a store digests as: its own reads are its own tokens."""


def value_bytes(value: Any) -> bytes:
    """A value of a store as bytes that differ when it differs (JSON, keys sorted; a row as the list of its fields)."""
    if isinstance(value, Tracked):
        return STORE
    return orjson.dumps(value, default=_plain, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):  # a catalog row (a NamedTuple)
        return list(value)
    if isinstance(value, Tracked):
        return "a store"
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"a value of type {type(value).__name__} in a catalog store")


class Digests:
    """The digest of each token's value in one catalog's ``stores`` (by name), worked out once per token: what a
    missing key's value would be (``Tracked(missing=...)``) is the page's read of it, so a key that is absent digests
    as absent."""

    def __init__(self, stores: Mapping[str, Tracked[Any, Any]]) -> None:
        self._stores = stores
        self._done: dict[Token, bytes] = {}

    def of(self, token: Token) -> bytes:
        if (d := self._done.get(token)) is None:
            d = self._done[token] = self._work_out(token)
        return d

    def _work_out(self, token: Token) -> bytes:
        name, key = token
        tracked = self._stores.get(name)
        if tracked is None:
            return b"no store"
        store = tracked._data  # read as it is: a digest is no page's read
        if key is ALL:
            h = hashlib.sha256()
            for k in store:
                part = orjson.dumps(k, default=_plain)
                h.update(b"%d\0" % len(part) + part)
                h.update(self.of((name, k)))
            return h.digest()
        if key not in store:
            return b"absent"
        return hashlib.sha256(value_bytes(store[key])).digest()

    def of_trace(self, tokens: list[Token]) -> str:
        """One digest of a trace's values (the tokens in the order given: a stored trace is sorted): of their digests
        one after another. Every taken page's trace is checked token by token (4.9 million at 100,000 measurements),
        so the digests already worked out are looked up here, not through ``of``."""
        done, of = self._done, self.of
        return hashlib.sha256(b"".join([done.get(token) or of(token) for token in tokens])).hexdigest()


def sorted_tokens(tokens: set[Token]) -> list[Token]:
    """A trace in one order, to store and digest, the same in every process (``_order``)."""
    return sorted(tokens, key=_order)


def _order(token: Token) -> str:
    """What a token sorts by: its ``repr`` when its key is a string, None or a tuple of those (the same in every
    process, and a fifth of the time of JSON, which a remade comparison workload's hundred thousand reads spent),
    else its store's name and its key as JSON (a set's ``repr`` follows string hashes, which differ by process)."""
    key = token[1]
    if key is None or type(key) is str or (type(key) is tuple and all(k is None or type(k) is str for k in key)):
        return repr(token)
    return f"{token[0]!r} {orjson.dumps(key, default=_plain).decode()}"


def token_from_json(value: Any) -> Token | None:
    """A stored token as the stores key it (a list key is a tuple key); None for anything that is not a token."""
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
        return None
    key = value[1]
    if isinstance(key, list):
        if not all(k is None or isinstance(k, str) for k in key):
            return None
        key = tuple(key)
    elif not (key is None or isinstance(key, str)):
        return None
    return (value[0], key)
