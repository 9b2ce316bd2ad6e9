"""Reading, locating and writing JSON records.

``parse`` turns file bytes into a value or into findings (``json-syntax``,
``json-duplicate-key``, ``json-non-finite``, ``file-too-large``) and never
raises on bad input. ``Locator`` maps a JSON pointer back to a line and
column of the source text. ``canonical`` and ``write_atomic`` produce the
one on-disk form every record has.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from evreg.core import codes
from evreg.core.findings import Code, Finding, escape_token, join_pointer, split_pointer

MAX_RECORD_BYTES = 8 * 1024 * 1024
"""Record files larger than this are refused unread (``file-too-large``)."""

MAX_BASELINE_BYTES = 64 * 1024 * 1024
"""The limit of ``packets/baseline.json``, the one record that grows with the whole registry (one
entry per accepted finding: the lab's real defect rate reaches 8 MiB near 30,000 measurements;
64 MiB holds about 290,000). Still refused unread beyond it."""

_BASELINE_PATH = "packets/baseline.json"  # evreg.core.layout.BASELINE (core modules do not import each other here)


def size_limit(path: str) -> int:
    """The size limit of the record file at ``path`` (relative to the registry's root)."""
    return MAX_BASELINE_BYTES if path == _BASELINE_PATH else MAX_RECORD_BYTES


MAX_DEPTH = 64
"""Records nested deeper than this are refused (``json-syntax``)."""

_BOM = b"\xef\xbb\xbf"
_DEEP_LINE = re.compile(rb"\n {%d}" % (2 * (MAX_DEPTH - 1)))
"""A line of the written form indented MAX_DEPTH - 1 levels (see ``_parse_canonical``)."""


class _NonFinite(str):
    """Stands in for NaN/Infinity while parsing, so their pointers can be found."""


class _OutOfRange(str):
    """Stands in for an integer outside the 64-bit range (its text), so its pointer can be found."""


class _Duplicates(dict):
    """A JSON object in which at least one key was repeated."""

    repeated: list[str]


class _Seen:
    suspicious = False


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        _Seen.suspicious = True
        seen: set[str] = set()
        dup = _Duplicates(obj)
        dup.repeated = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        return dup
    return obj


def _constant(name: str) -> _NonFinite:
    _Seen.suspicious = True
    return _NonFinite(name)


def _integer(text: str) -> int | _OutOfRange:
    """An integer that every reader of the store holds exactly: within the 64-bit range
    (signed or unsigned). Others (and Python's limit on digits) are marked, not parsed."""
    if len(text) < 19:  # 18 digits always fit
        return int(text)
    if len(text) <= 21 and -(2**63) <= (value := int(text)) < 2**64:
        return value
    _Seen.suspicious = True
    return _OutOfRange(text)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_integer)
_HUGE_EXPONENT = re.compile(r"[eE]\+?\d{3}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape: valid as a pair, not as text on its own."""


def _walk(value: Any) -> Iterator[tuple[Any, Any]]:
    """Yield (path, node) for every node, iteratively (no recursion limit). A path is ``(parent's path, token)``,
    ``()`` at the top: ``_pointer`` makes it a pointer (a pointer per node took memory of a key's length times the
    items under it)."""
    stack: list[tuple[Any, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        yield path, node
        if isinstance(node, dict):
            stack.extend(((path, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((path, i), v) for i, v in reversed(list(enumerate(node))))


def _pointer(path: Any) -> str:
    """The JSON pointer of a ``_walk`` path."""
    tokens: list[str | int] = []
    while path:
        path, token = path
        tokens.append(token)
    return join_pointer(*reversed(tokens))


def _is_text(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def join_pointer_suffix(pointer: str, token: str | int) -> str:
    return pointer + join_pointer(token)


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of containers, exact up to ``limit + 1`` (it stops descending there)."""

    def walk(node: Any, d: int) -> int:
        children = node.values() if isinstance(node, dict) else node
        deepest = d
        for child in children:
            if isinstance(child, dict | list):
                deepest = max(deepest, walk(child, d + 1) if d <= limit else d + 1)
                if deepest > limit:
                    return deepest
        return deepest

    return walk(value, 1) if isinstance(value, dict | list) else 0


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def _parse_canonical(raw: bytes) -> Any:
    """The value of a file already in the written form (``orjson`` indent-2), else None.

    Most records are in the form ``evreg`` writes. For them a C parser suffices: if
    re-serialising the value reproduces the bytes exactly, the text cannot repeat a
    key (the value would have fewer), hold NaN or an overflowing number (orjson
    refuses them) or a BOM; only nesting depth is left to check. Anything else takes
    the careful path below, which explains what is wrong."""
    try:
        value = orjson.loads(raw)
        if orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n" != raw:
            return None
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # the writer refuses nesting its reader takes
        return None
    # The written form indents each level by two spaces, and its strings hold no line break: no line indented as
    # deep as MAX_DEPTH - 1 levels bounds the depth without a walk (the deepest container is an empty one on the
    # deepest line). A file that has one is walked.
    if _DEEP_LINE.search(raw) and depth(value) > MAX_DEPTH:
        return None
    return value


def loads(data: str | bytes, shallow_reader: bool = False) -> Any:
    """The value of JSON ``data`` that is not a record (a tool's output, a cache entry, a line of JSON Lines), or
    ``ValueError`` for anything that is not JSON or nests deeper than ``MAX_DEPTH`` (never ``RecursionError``).
    ``NaN`` and ``Infinity``, which tools write for a diverging metric, read as floats. The project's one JSON
    reader beside ``parse`` (a test holds every other module to these two).

    ``shallow_reader``: the caller checks the value's shape level by level, to a fixed depth, and never recurses
    into it (a kept table of the build's own), or the text is a record as validation parsed it (the catalog's copy,
    whose depth ``parse`` checked), so the value is not walked node by node to measure its depth, which costs seconds
    on a large file or on every record. Nesting past the parsers' own limits is still ``ValueError``."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:  # NaN, Infinity, integers past 64 bits, lone surrogates; or too deep
        try:
            value = json.loads(data)
        except RecursionError:
            raise ValueError(f"JSON nests deeper than {MAX_DEPTH} levels") from None
    if shallow_reader:
        return value
    brackets = data.count(b"{") + data.count(b"[") if isinstance(data, bytes) else data.count("{") + data.count("[")
    if brackets > MAX_DEPTH and depth(value) > MAX_DEPTH:  # each level needs a bracket: few bound the depth
        raise ValueError(f"JSON nests deeper than {MAX_DEPTH} levels")
    return value


def _refuse(
    file: str, code: Code, message: str, hint: str, line: int | None = None, column: int | None = None
) -> tuple[None, list[Finding]]:
    """The result of ``parse`` for a file refused with one finding about the whole file."""
    return None, [code.at(file, "", message, hint, line=line, column=column)]


def _text(raw: bytes, file: str) -> tuple[str | None, list[Finding]]:
    """The file's bytes as text, or (None, findings) for a BOM, bytes that are not UTF-8 or no content."""
    if raw.startswith(_BOM):
        return _refuse(
            file,
            codes.JSON_SYNTAX,
            "file starts with a UTF-8 byte-order mark",
            "save the file as UTF-8 without a BOM (`evreg fmt` does this)",
            1,
            1,
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start].decode("utf-8", errors="replace")
        line, col = _line_col(prefix, len(prefix))
        return _refuse(
            file,
            codes.JSON_SYNTAX,
            f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not UTF-8",
            "records must be UTF-8 text",
            line,
            col,
        )
    if not text.strip():
        return _refuse(file, codes.JSON_SYNTAX, "file is empty", "a record file holds one JSON object", 1, 1)
    return text, []


def _decode(text: str, file: str) -> tuple[Any, list[Finding]]:
    """The value of the text, or (None, findings) for invalid JSON or JSON nested too deeply.

    Resets and sets ``_Seen.suspicious``: whether the value holds a stand-in that needs a closer look."""
    _Seen.suspicious = False
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        return _refuse(
            file,
            codes.JSON_SYNTAX,
            f"invalid JSON: {exc.msg}",
            "fix the syntax at the position shown (an editor with JSON support helps)",
            exc.lineno,
            exc.colno,
        )
    except RecursionError:
        return _refuse(
            file,
            codes.JSON_SYNTAX,
            "JSON is nested too deeply to read",
            f"records may nest at most {MAX_DEPTH} levels",
            1,
            1,
        )
    if depth(value) > MAX_DEPTH:
        return _refuse(
            file,
            codes.JSON_SYNTAX,
            f"JSON nests deeper than {MAX_DEPTH} levels",
            f"records may nest at most {MAX_DEPTH} levels",
            1,
            1,
        )
    return value, []


_Problem = tuple[Code, Callable[[], tuple[str, str, str]]]
"""A problem found in a parsed value: its code, and what makes its (pointer, message, hint) when it is reported
(a file may hold a million problems: only the first few of a code are reported, and made)."""


def _problems_at(path: Any, node: Any, locator: Locator, finite: bool = True) -> Iterator[_Problem]:
    """The problems of one node of a parsed value: lone surrogates, numbers JSON cannot
    carry exactly, repeated keys."""
    texts = [node] if isinstance(node, str) else list(node) if isinstance(node, dict) else []
    if not all(_is_text(t) for t in texts):
        yield (
            codes.JSON_SYNTAX,
            lambda: (  # at the string, or at the object whose key it is (a pointer is text)
                _pointer(path),
                f"{'a string' if isinstance(node, str) else 'a key of this object'} holds a lone surrogate escape "
                "(\\ud800-\\udfff without its pair), which is not text",
                "write the character itself, or its full surrogate pair",
            ),
        )
    if finite and (isinstance(node, _NonFinite) or (isinstance(node, float) and not math.isfinite(node))):
        yield (
            codes.JSON_NON_FINITE,
            lambda: (
                _pointer(path),
                f"{locator.token(_pointer(path))} is not a finite JSON number",
                "record a finite number, or leave the sample out and say why in a caveat",
            ),
        )
    elif isinstance(node, _OutOfRange):
        yield (
            codes.JSON_NON_FINITE,
            lambda: (
                _pointer(path),
                f"{node[:30]}{'...' if len(node) > 30 else ''} is an integer beyond 64 bits; "
                "JSON readers turn it into an inexact float or refuse it",
                "write a measurement as a decimal with an exponent (1e+20), an identifier as a string",
            ),
        )
    elif isinstance(node, _Duplicates):
        for key in node.repeated:

            def repeated(key: str = key) -> tuple[str, str, str]:
                return (
                    join_pointer_suffix(_pointer(path), key),
                    f"key {key!r} appears more than once in this object",
                    "keep one value per key; JSON readers disagree on which duplicate wins",
                )

            yield codes.JSON_DUPLICATE_KEY, repeated


MAX_PROBLEMS_PER_CODE = 20
"""Problems of one code reported per file; the rest are counted in one more finding (a file of a million NaN under
a long key would otherwise make a million findings, each holding the key)."""


def _problems(value: Any, text: str, file: str, finite: bool = True) -> list[Finding]:
    """Findings, at their line and column, for every node of ``value`` with a problem (with ``finite``, a NaN or
    Infinity is one)."""
    findings: list[Finding] = []
    counts: dict[Code, int] = {}
    locator = Locator(text)  # only for the rare file that needs a closer look
    for path, node in _walk(value):
        for code, made in _problems_at(path, node, locator, finite):
            counts[code] = counts.get(code, 0) + 1
            if counts[code] <= MAX_PROBLEMS_PER_CODE:
                at, message, hint = made()
                line, col = locator.position(at)
                findings.append(code.at(file, at, message, hint, line=line, column=col))
    for code, n in counts.items():
        if n > MAX_PROBLEMS_PER_CODE:
            more = f"... and {n - MAX_PROBLEMS_PER_CODE} more {code.code} findings in this file"
            findings.append(code.at(file, "", more, code.hint))
    return findings


def parse(raw: bytes, file: str, finite: bool = True) -> tuple[Any, list[Finding]]:
    """Parse one JSON file. Returns (value, []) or (None, findings). ``finite=False`` (a tool's output, which may
    write NaN or Infinity for a diverging metric) reads those as the floats they name instead of refusing them."""
    if len(raw) > (limit := size_limit(file)):
        return _refuse(
            file,
            codes.FILE_TOO_LARGE,
            f"file is {len(raw):,} bytes; {'the baseline is' if limit != MAX_RECORD_BYTES else 'records are'} "
            f"limited to {limit:,} bytes",
            "split the record, or keep large raw output as an evidence file",
        )
    fast = _parse_canonical(raw)
    if fast is not None:
        return fast, []
    text, findings = _text(raw, file)
    if text is None:
        return None, findings
    value, findings = _decode(text, file)
    if findings:
        return None, findings
    if not _Seen.suspicious and not _HUGE_EXPONENT.search(text) and not _SURROGATE_ESCAPE.search(text):
        return value, []
    if not finite:
        value = _as_floats(value)
    findings = _problems(value, text, file, finite)
    if findings:
        return None, findings
    return value, []


def _as_floats(value: Any) -> Any:
    """``value`` with each NaN or Infinity the parser marked as the float it names."""
    if isinstance(value, _NonFinite):
        return float(value)
    for path, node in list(_walk(value)):
        if path and isinstance(node, _NonFinite):
            parent, token = path
            container = value
            for key in _tokens(parent):
                container = container[key]
            container[token] = float(node)
    return value


def _tokens(path: Any) -> list[Any]:
    out: list[Any] = []
    while path:
        path, token = path
        out.append(token)
    return out[::-1]


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # unrolled: runs of plain characters in one step
_SCALAR = re.compile(r"[^\s,\]\}]+")


class _Scanner:
    """One pass of ``Locator``'s scanner over a text: the offset of every value, in a tree of the values' tokens
    (``[offset, {token: child}]``; a pointer string per value took memory of the key's length times its children).

    A state machine over three states, one method each: at a value, at an object's
    key, after a value. Each step returns the next state, or None to stop (the end
    of the text, or a syntax error)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.root: list[Any] = [None, None]
        # stack of [node, is_object, next_index]
        self.stack: list[list[Any]] = []
        self.i = self._skip_ws(0)
        self.node = self.root  # where the next value's offset goes

    @staticmethod
    def _child(node: list[Any], token: str) -> list[Any]:
        children = node[1]
        if children is None:
            children = node[1] = {}
        child = children.get(token)
        if child is None:
            child = children[token] = [None, None]
        return child  # a repeated key: the same node, its offset the last occurrence's

    def _skip_ws(self, i: int) -> int:
        """The offset of the first non-whitespace character from ``i`` on."""
        return _WS.match(self.text, i).end()  # type: ignore[union-attr]

    def offsets(self) -> list[Any]:
        """Scan the text; the tree of the offset of every value reached."""
        steps: dict[str, Callable[[], str | None]] = {"value": self._value, "key": self._key, "after": self._after}
        state: str | None = "value"
        while state is not None and self.i < self.n:
            state = steps[state]()
        return self.root

    def _value(self) -> str | None:
        """At a value: record where it starts, then open a container or pass over a scalar."""
        text, i = self.text, self.i
        self.node[0] = i
        c = text[i]
        if c in "{[":
            self.stack.append([self.node, c == "{", 0])
            self.i = i = self._skip_ws(i + 1)
            if i < self.n and text[i] in "}]":
                self.stack.pop()
                self.i += 1
                return "after"
            if c == "{":
                return "key"
            self.node = self._child(self.stack[-1][0], "0")
            return "value"
        m = (_STRING if c == '"' else _SCALAR).match(text, i)
        if not m:
            return None
        self.i = m.end()
        return "after"

    def _key(self) -> str | None:
        """At an object's key: read it and its colon; the value under it comes next."""
        text = self.text
        m = _STRING.match(text, self.i)
        if not m:
            return None
        try:
            key = json.loads(m.group())
        except ValueError:
            return None
        i = self._skip_ws(m.end())
        if i >= self.n or text[i] != ":":
            return None
        self.i = self._skip_ws(i + 1)
        self.node = self._child(self.stack[-1][0], key)
        return "value"

    def _after(self) -> str | None:
        """After a value: a comma leads to the next key or item, a bracket closes the container."""
        self.i = i = self._skip_ws(self.i)
        if not self.stack or i >= self.n:
            return None
        top = self.stack[-1]
        c = self.text[i]
        if c == ",":
            self.i = self._skip_ws(i + 1)
            if top[1]:
                return "key"
            top[2] += 1
            self.node = self._child(top[0], str(top[2]))
            return "value"
        if c in "}]":
            self.stack.pop()
            self.i += 1
            return "after"
        return None


class Locator:
    """Maps JSON pointers to 1-based (line, column) of the value in the text.

    A tolerant, iterative scanner: it accepts NaN and repeated keys (a
    repeated key maps to its last occurrence) and stops quietly at a syntax
    error, so it can locate findings in any file ``parse`` read.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._offsets: list[Any] | None = None
        self._lines = [0] + [m.end() for m in re.finditer("\n", text)]

    def _offset(self, pointer: str, nearest: bool = False) -> int | None:
        """The offset of the value at ``pointer`` (``nearest``: or of its nearest located parent)."""
        if self._offsets is None:
            self._offsets = _Scanner(self.text).offsets()
        node: list[Any] | None = self._offsets
        found = self._offsets[0]
        for token in split_pointer(pointer):
            node = (node[1] or {}).get(token)  # type: ignore[index]
            if node is None:
                return found if nearest else None
            if node[0] is not None or not nearest:
                found = node[0]
        return found

    def token(self, pointer: str) -> str:
        """The source text of the scalar at ``pointer`` (as written)."""
        offset = self._offset(pointer)
        if offset is None:
            return "?"
        m = (_STRING if self.text[offset] == '"' else _SCALAR).match(self.text, offset)
        return m.group() if m else "?"

    def position(self, pointer: str) -> tuple[int | None, int | None]:
        """Line and column of the value at ``pointer``, or of its nearest located parent."""
        offset = self._offset(pointer, nearest=True)
        if offset is None:
            return None, None
        line = bisect.bisect_right(self._lines, offset)
        return line, offset - self._lines[line - 1] + 1


_HEAD_KEYS = ("kind", "id")


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """The one on-disk form of a record: `kind` and `id` first, other keys
    sorted, 2-space indent, UTF-8 (no ASCII escaping), trailing newline."""
    if isinstance(value, dict):
        ordered = {k: _sorted(value[k]) for k in _HEAD_KEYS if k in value}
        ordered.update((k, _sorted(value[k])) for k in sorted(value) if k not in _HEAD_KEYS)
        value = ordered
    else:
        value = _sorted(value)
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file so that readers see the old or the new content, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def iter_keyed_strings(
    data: Any, is_key: Callable[[str], bool], pointer: str = "", memo: dict[str, bool] | None = None
) -> list[tuple[str, str, str]]:
    """(pointer, key, string) for every string held by a selected key, directly or
    in a list under it, at any depth. Objects under a selected key are walked
    as ordinary objects. ``memo`` keeps ``is_key``'s answers across calls."""
    out: list[tuple[str, str, str]] = []
    selected: dict[str, bool] = {} if memo is None or len(memo) > 10_000 else memo

    def held(value: Any, ptr: str, key: str, chosen: bool) -> None:
        """A value under ``key``: a string, a list (of lists) of them, or an object walked on its own."""
        if isinstance(value, str):
            if chosen:
                out.append((ptr, key, value))
        elif isinstance(value, list):
            for i, item in enumerate(value):  # a pointer only for what can hold a string (not samples)
                if isinstance(item, str | list | dict) and (chosen or not isinstance(item, str)):
                    held(item, f"{ptr}/{i}", key, chosen)
        elif isinstance(value, dict):
            walk(value, ptr)

    def walk(node: Any, ptr: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(value, str | list | dict):
                    continue  # a number, a boolean or null holds no string
                chosen = selected.get(key)
                if chosen is None:
                    chosen = selected[key] = is_key(key)
                if chosen or not isinstance(value, str):
                    held(value, f"{ptr}/{escape_token(key)}", key, chosen)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, dict | list):
                    walk(item, f"{ptr}/{i}")

    walk(data, pointer)
    return out


def map_keyed_strings(data: Any, is_key: Callable[[str], bool], fn: Callable[[str], str]) -> Any:
    """A copy of ``data`` with every string ``iter_keyed_strings`` selects replaced by ``fn(s)``."""

    def held(value: Any, chosen: bool) -> Any:
        if isinstance(value, str):
            return fn(value) if chosen else value
        if isinstance(value, list):
            return [held(v, chosen) for v in value]
        return map_keyed_strings(value, is_key, fn)

    if isinstance(data, dict):
        return {key: held(value, is_key(key)) for key, value in data.items()}
    if isinstance(data, list):
        return [map_keyed_strings(v, is_key, fn) for v in data]
    return data
