"""Fast paths of the grammars against their plain forms. The figure grammar's patterns are written for speed
(``evreg.claims.figures``: charset-led, possessive digits, gates); here is the grammar in its plain form, one plain
pattern per kind, each a look-ahead and look-behind at every position, reading the same folded text (numbers in words
written in digits): the patterns in use must find exactly the figures these find, on generated text (hypothesis) and on
every string of the real records. The site makes each shown number's citation from its parts: the same form as reading
back the citation's text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.claims import citations, figures
from evreg.claims.figures import (
    _COMPARES,
    _COMPARES_WORD,
    _EMPHASIS,
    _LIST_SEP,
    _NUMBER,
    _QUALIFIER,
    _UNIT,
    _UNITS,
    CODE_METRICS,
    Figure,
)
from helpers import within

ROOT = Path(__file__).resolve().parents[2]

FIGURE = re.compile(
    r"(?=[-+*_`\d.])(?:(?<![\w.@/\u2044-])(?P<sign>[+-]?)" + _EMPHASIS + r"(?P<first>" + _NUMBER + r")"
    r"(?P<more>(?:" + _LIST_SEP + r"(?:" + _NUMBER + r"))*)"
    r"(?P<scale>[kK](?=\s?[A-Za-zμ%(]))?" + _EMPHASIS + r"(?P<sp>[ \t\u00a0]*+\n?[ \t\u00a0]*+|-)" + _QUALIFIER + r"?"
    r"(?:\*{1,2}|_{1,2}|\[)?(?P<upar>\((?:[A-Za-z][\w \t-]{0,23}[,;:][ \t\u00a0]*+)?)?(?:" + _UNIT + r")(?(upar)\))"
    r"(?P<per>/[A-Za-z]+)?(?![\w/])"
    r"|(?<![\w.@/-])(?P<mnum>\d+\.\d+|\d{1,3}(?=[xX×]" + _COMPARES + r")|\d+(?=[xX×]" + _COMPARES_WORD + r"))"
    r"(?P<mult>[xX×])(?![\w/]))"
)
CODE = re.compile(
    r"(?=[" + "".join(sorted({c[0] for c in CODE_METRICS})) + r"])"
    r"(?<![\w.])(?P<code>" + "|".join(sorted(CODE_METRICS, key=len, reverse=True)) + r")"
    r"(?:(?<!\bA)[ \u00a0=:]|(?<=\bA)[=:])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+)(?![\w.]|,\d)"
)
ITEM = re.compile(r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\u2044\d+)?|\.\d+")
"""The numbers of a list's other numbers, as the list was matched: thousands groups only where no digit follows them
(``5,1,2345 tok/s`` lists 5, 1 and 2345; split by ``_NUMBER``, it read ``1,234`` and ``5``: the list's match took
1 and 2345, the split did not)."""


def reference(text: str, cell: bool = False) -> list[Figure]:
    """``figures.find_figures`` with the plain patterns (and no shortcut for text without numbers)."""
    found = _reference_read(text, text, cell)
    if figures._MARK_AFTER_WORD.search(text):  # read again with footnote marks as spaces, as find_figures reads it
        spaced = figures._MARK_AFTER_WORD.sub(lambda m: " " * len(m.group()), text)
        for k, f in _reference_read(text, spaced, cell).items():
            found.setdefault(k, f)
    return figures.outermost(found)


def _reference_read(text: str, seen: str, cell: bool) -> dict[int, Figure]:
    folded, where = figures._folded(figures._without_citations(seen))

    def span(start: int, end: int) -> tuple[int, int]:
        return (start, end) if where is None else where.span(start, end)

    found = _reference_found(text, folded, span, cell)
    if figures._MARKUP_HINT.search(folded):
        inner = figures._Where.of(folded, figures._MARKUP, {})
        unmarked = figures._MARKUP.sub("", folded)
        for k, f in _reference_found(text, unmarked, lambda a, b: span(*inner.span(a, b)), cell).items():
            found.setdefault(k, f)
    return found


def _reference_found(text: str, folded: str, span: Any, cell: bool) -> dict[int, Figure]:
    found: dict[int, Figure] = {}
    ends = []
    for m in FIGURE.finditer(folded):
        ends.append(m.end())
        if m.group("mult"):
            a, b = span(m.start("mnum"), m.end())
            found[a] = Figure(a, b, text[a:b], m.group("mnum"), "x", None)
            continue
        unit = next(canon for i, (_, canon) in enumerate(_UNITS) if m.group(f"u{i}"))
        if unit == "s" and m.group("sp") == "" and not m.group("more") and "." not in m.group("first"):
            continue
        if len(m.group("upar") or "") > 1 and figures._LABEL_BEFORE.search(folded, 0, m.start("first")):
            continue
        items = [m.group("first"), *ITEM.findall(m.group("more") or "")]
        starts = [m.start("first")]
        offset = m.start("more")
        for item in items[1:]:
            offset = folded.index(item, offset)
            starts.append(offset)
            offset += len(item)
        for n, (item, at) in enumerate(zip(items, starts, strict=True)):
            a, b = span(at, m.end() if n == len(items) - 1 else at + len(item))
            found[a] = Figure(a, b, text[a:b], item, unit, None)
    for m in CODE.finditer(folded):
        a, b = span(m.start("num"), m.end("num"))
        found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", CODE_METRICS[m.group("code")]))
        ends.append(m.end("num"))
    for start, end, number, unit, hints in figures.in_context(folded):  # one plain form: no fast path to check
        a, b = span(start, end)
        found.setdefault(a, Figure(a, b, text[a:b], number, unit, hints))
        ends.append(end)
    ends += [m.end() for m in re.finditer("\0+", folded)]
    for m in figures._joined(folded, ends):  # one plain form: numbers joined to the figures found
        a, b = span(m.start("num"), m.end())
        found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", None))
    covered = [(f.start, f.end) for f in found.values()]
    for m in figures._BARE.finditer(folded) if cell else ():
        a, b = span(m.start("num"), m.end("num"))
        if not any(x <= a < y for x, y in covered):
            found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", None))
    return found


# Pieces of text the grammar turns on: numbers of every form, what may stand before and between them, units and
# their spellings, metric and count words, letter codes, number words, characters the engine folds or that stop a
# figure, and a citation.
PIECES = [
    *["5", "52.3", "1,234", "1,2345", "29,911", ".5", "5e3", "5.23e-1", "1\u20442", "½", "0.9.1", "2026", "12345678"],
    *["٥", "²", "５", "0", "00", "3.", "1,23"],
    *["+", "-", "*", "**", "***", "_", "__", "`", "[", "(", ")", "]", "@", ".", "/", "\u2044", ",", ";", "!", "?"],
    *[" ", "  ", "\n", "\u00a0", "\t", "\u200b", "\u00ad", " to ", " and ", " or ", "–", "—", "-", " - ", "/"],
    *["tok/s", "tokens/s", "tok/sec", "tokens per second", "tokens a second", "t/s", "TPS", "tk/s", "tok·s−1"],
    *["req/s", "requests per second", "qps", "RPS", "GB/s", "GBps", "ms", "msec", "milliseconds", "μs", "µs", "us"],
    *["ns", "GiB", "MiB", "MB", "W", "kW", "FLOPS", "TFLOP/s", "s", "sec", "seconds", "min", "h", "hrs", "%"],
    *["percent", "PERCENT", "k", "K", "x", "X", "×", "/GPU", "/token", "tok", "tokens", "sec"],
    *["decode", "Decode", "DECODE", "prefill", "TTFT", "ttft", "throughput", "rate", "speed", "of", "at", "was"],
    *["is", "=", ":", "~", "≈", "output", "total", "per-user", "faster", "over", "than", "vs", "the", "as", "speedup"],
    *["prompts", "batch", "requests", "runs", "D", "P", "T", "A", "AR", "E2E", "EV", "a", "Q4_K_M", "TP4", "v1.2"],
    *["zero", "one", "One", "two", "thirteen", "fifteen", "twenty", "hundred", "thousand", "million", "and", "none"],
    *["someone", "ſ", "K", "é", "→", "·", "ﬁ", "{{ m:x.y[0] }}", "{{", "}}", "Ryzen 9 7950X", "4x4", "4x RTX"],
]


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join), st.booleans())
def test_the_patterns_in_use_find_what_the_plain_grammar_finds(text: str, cell: bool) -> None:
    assert figures.find_figures(text, cell=cell) == reference(text, cell=cell)


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789.,-+*_`x×% \n\u00a0/:=~eEkKtoamsdpTDAPRV()[]⁄ſ"), max_size=40))
def test_the_patterns_in_use_agree_on_dense_punctuation(text: str) -> None:
    assert figures.find_figures(text) == reference(text)


NUMBERS = ["5", "52.3", "1,234", "1,2345", "29,911", ".5", "5e3", "1\u20442", "2026", "0.9.1", "12", "4"]
UNIT_SPELLINGS = [spelling for spelling in PIECES if re.fullmatch(r"(?:" + _UNIT + r")", spelling)]


@st.composite
def figure_like(draw: st.DrawFn) -> str:
    """Text shaped like the grammar's figures, each part drawn with its near misses: what stands before, a sign and
    emphasis, a list of numbers, a scale, a blank, a qualifier, emphasis or a link on the unit, a unit or multiplier,
    what follows."""
    one = lambda options: draw(st.sampled_from(options))  # noqa: E731
    parts = [one(["", " ", "(", "-", "_", "a", ".", "@", "/", "\n", "+", "*", "`", "\u2044", "1"])]
    parts += [one(["", "+", "-"]), one(["", "*", "**", "_", "__", "`"]), one(NUMBERS)]
    for _ in range(draw(st.integers(0, 3))):
        separator = one([",", ", ", " , ", "/", " / ", "-", " - ", "–", " to ", " and ", " or ", " ", "\n"])
        parts += [separator, one(NUMBERS)]
    parts += [one(["", "k", "K"]), one(["", "*", "**", "_", "`"]), one(["", " ", "\u00a0", "-", "\n", "  "])]
    parts += [one(["", "output ", "total ", "decode ", "Output\u00a0"]), one(["", "*", "**", "_", "__", "[", "("])]
    parts += [one([*UNIT_SPELLINGS, "x", "X", "×", "x faster", "× over", "x.", "xs", "tokens", "GPU", ""])]
    parts += [one(["", ")", "/GPU", "/s", "**", "s", "x", ".", " faster", "1", "_", "/", "a"])]
    return "".join(parts)


@st.composite
def words_like(draw: st.DrawFn) -> str:
    """Number words before a unit, with what may stand before them and between them."""
    one = lambda options: draw(st.sampled_from(options))  # noqa: E731
    words = ["zero", "one", "two", "thirteen", "fifteen", "twenty", "hundred", "thousand", "million", "ONE", "ſix"]
    parts = [one(["", " ", "(", ".", "a", "-", "x;", "\n", "é", "1", "/"]), one(words)]
    for _ in range(draw(st.integers(0, 3))):
        parts += [one([" ", "-", " and ", "\n", "  ", " - "]), one(words)]
    parts += [one([" ", "  ", "\n", "", "\u00a0", "-"])]
    parts += [one(["tok/s", "tokens/sec", "tokens per second", "ms", "milliseconds", "percent", "Percent", "msx"])]
    parts += [one(["", ".", "s", " ", "1", "_", "é"])]
    return "".join(parts)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(st.lists(st.one_of(figure_like(), words_like(), st.sampled_from(PIECES)), min_size=1, max_size=4).map("".join))
def test_the_patterns_in_use_agree_on_figure_shaped_text(text: str) -> None:
    assert figures.find_figures(text) == reference(text)


@pytest.mark.parametrize(
    "text",
    [
        *["5, 1,2345 ms", "52.3 **tok/s**", "(one ms", ".two tok/s", "x;thirteen ms", "-**5 ms", " -_5 ms"],
        *["3x faster", "1.5x", "was 2.25× over eager"],
    ],
)
def test_the_patterns_in_use_find_what_the_plain_grammar_finds_on_known_paths(text: str) -> None:
    assert figures.find_figures(text) == reference(text) != []


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.slow
def test_the_patterns_in_use_agree_on_every_string_of_the_real_records() -> None:
    texts = {s for path in (ROOT / "packets").rglob("*.json") for s in _strings(orjson.loads(path.read_bytes()))}
    found = 0
    for text in texts:
        new = figures.find_figures(text)
        assert new == reference(text), text
        found += len(new)
    # the corpus holds figures (prose, lab notes, the figures the baseline accepts)
    assert len(texts) > 5000 and found > 50


def test_every_number_word_before_a_unit_is_a_figure_in_text_without_digits() -> None:
    """Text without digits is searched for number words before a unit: ``thirteen`` and ``fifteen`` too."""
    assert [f.text for f in figures.find_figures("took thirteen ms")] == ["thirteen ms"]
    assert [f.text for f in figures.find_figures("fifteen tokens per second")] == ["fifteen tokens per second"]


def _form(form: object) -> object:
    return (type(form).__name__, str(form)) if isinstance(form, citations.CitationError) else form


_IDS = st.one_of(
    st.from_regex(r"[a-z0-9]{1,4}(?:[.-][a-z0-9]{1,3}){0,3}", fullmatch=True),
    st.text(alphabet="az09.-_}{ |:@[]A", max_size=10),
    st.integers(-2, 99),  # record JSON may hold anything: no id or metric is trusted to be a string
    st.none(),
)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(
    _IDS,
    st.one_of(
        st.sampled_from(["decode_tok_s", "ttft_ms", "x", "a_b2"]),
        st.text(alphabet="az_09.|A", max_size=8),
        st.integers(),
    ),
    st.one_of(st.none(), st.integers(-3, 40)),
    st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**6)),
    st.one_of(st.none(), st.integers(-2, 20)),
    st.one_of(st.booleans(), st.none(), st.integers(0, 2)),
    st.sets(st.sampled_from(["nounit", "pct", "dot", "sep", "compare", "bogus", "1"])).map(frozenset),
)
def test_a_citation_made_from_its_parts_is_the_one_its_text_reads_as(
    mid: Any, metric: Any, index: int | None, x: float | None, decimals: int | None, unit: Any, flags: frozenset[str]
) -> None:
    """The site makes the citation of each number it shows from its parts (fast) where the grammar reads the text
    back as written: the same form (or the same error) as parsing the text ``citation_text`` writes."""
    raw = citations.citation_text(mid, metric, index, x, decimals, unit, flags)
    parsed = list(citations.parse(raw))
    expected = parsed[0] if len(parsed) == 1 else citations.CitationError(f"{raw!r} is not one citation")
    assert _form(citations.citation(mid, metric, index, x, decimals, unit, flags)) == _form(expected)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["one", "seven", "seventy", "eight", "eighty", "thirteen", "three", "ONE", "millions"]),
            st.sampled_from([" ", "-", " and ", "  ", "\n", " - ", "", ", ", "-and-"]),
        ),
        min_size=1,
        max_size=40,
    ).map(lambda pairs: "".join(w + sep for w, sep in pairs)),
    st.sampled_from(["", " ms", "ms", " tok/s", " milliseconds", " percent.", " million", " x ms"]),
    st.sampled_from(["", "a", "(", "-", "1"]),
)
def test_runs_of_number_words_are_found_as_the_plain_grammar_finds_them(run: str, tail: str, before: str) -> None:
    """A run of number words is tried once, at its first word (linear time): the same figures as trying every word."""
    text = before + run + tail
    assert figures.find_figures(text) == reference(text)


NUMBERS = ["1", "12", "1234", "1,234", "234", "1,2345", ".5", "1.5", "1e+5", "2e-3", "3E+1.5", "1\u20442", "00", "5x"]
SEPARATORS = [", ", ",", " - ", "-", " -", "/", " / ", " to ", " and ", " or ", "–", "—", " ", "  ,  ", "+", "."]
TAILS = ["", " ms", "ms", " tok/s", "x", "x faster", "x.", "k tok/s", ".5 ms", "e+5 ms", "5", " x", ", ", " s", "s"]


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(NUMBERS), st.sampled_from(SEPARATORS)), min_size=1, max_size=12),
    st.sampled_from(TAILS),
    st.sampled_from(["", "v", "+", "-", " ", "(", "**", "-**", "a-", "\u2044"]),
    st.booleans(),
)
def test_lists_of_numbers_are_found_as_the_plain_grammar_finds_them(
    pairs: list[tuple[str, str]], tail: str, before: str, cell: bool
) -> None:
    """A list of numbers is read one way, and where no unit follows it the search goes on at its last number (linear
    time): the same figures as reading it every way and trying every number."""
    text = before + "".join(n + sep for n, sep in pairs)[: -len(pairs[-1][1]) or None] + tail
    assert figures.find_figures(text, cell=cell) == reference(text, cell=cell)
    assert figures.column_figures(text, "ms") == [
        figures.Figure(m.start(), m.end(), m.group(), m.group().lstrip("+-"), "ms", None)
        for m in re.finditer(r"(?<![\w.@/\u2044-])[+-]?(?:" + _NUMBER + r")(?![\w.]\d|\w|,\d)", text)
    ]


def test_a_list_is_read_as_its_numbers_are_written() -> None:
    """``1,2345`` is 1 and 2345 (no thousands group has four digits); ``1,234`` is one number."""
    assert [f.number for f in figures.find_figures("5,1,2345 tok/s")] == ["5", "1", "2345"]
    assert [f.number for f in figures.find_figures("5, 1,234 tok/s")] == ["5", "1,234"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "figures_in_it"),
    [
        ("1, " * 50_000 + "2 ms", 50_001),  # each number once: tried at every number, 10 s at 4,000 numbers
        ("5 - " * 50_000, 0),
        ("1" + ",234" * 50_000 + "x", 1),  # "234x"; read every way, 22 groups took 34 s, doubling with each
        ("1" + ",234" * 40 + "5 ms", 2),  # 1,234,...,234 and 2345
        ("1e+1, " * 50_000 + "3x", 1),
        ("1 to " * 50_000 + "9 tok/s", 50_001),
    ],
)
def test_long_lists_of_numbers_do_not_stall_the_scan(text: str, figures_in_it: int) -> None:
    """A record's text of 100-200 kB shaped as a list of numbers: found in time linear in its length (in
    milliseconds here; the guard only stops a hang)."""
    assert len(within(figures.find_figures, text)) == figures_in_it
    assert len(within(figures.find_figures, text, True)) >= figures_in_it
    within(figures.column_figures, text, "ms")
