"""The figure grammar: which numbers in prose are claims of a measured value, and so must be
citations. One definition, used by validation (``orphan-number``), the build's check of rendered
pages, the site's marking of baselined figures and the importer's binding of lab prose.

Text is read as a reader sees it: Unicode compatibility forms are folded (NFKC: superscript digits,
fullwidth digits, ``µ``, ``½``) and invisible characters (zero-width spaces and joiners, soft
hyphens, byte-order marks) are dropped before scanning; the spans found are spans of the original
text. The methodology page (``registry/evreg/pages/methodology.md``, *What counts as an orphan number*) has a
table of examples that the tests check both ways.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from evreg.citations import brace_spans
from evreg.vocab import metrics as metric_vocab

CODE_METRICS: dict[str, tuple[str, ...]] = {}
for _metric, _spec in metric_vocab().items():
    if _spec.get("point_code"):
        CODE_METRICS[_spec["point_code"]] = (*CODE_METRICS.get(_spec["point_code"], ()), _metric)
"""The lab's letter notation, from the metric vocabulary's ``point_code``: ``D25.678`` is a decode figure. ``A`` is
the aggregate throughput in concurrency views (ornith-1-5) and the mean acceptance length in speculative decoding
views: either may be meant."""
WORD_METRICS = {
    "decode": ("decode_tok_s",),
    "prefill": ("prefill_tok_s",),
    "ttft": ("ttft_ms",),
    "throughput": ("aggregate_tok_s",),
}
"""Metric words that make the number after them a figure (``TTFT 274``)."""

_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064\u034f")
"""Characters a reader does not see; with them, every format character (Unicode category Cf: direction marks
and isolates such as U+200E, U+2066)."""


def _invisible(ch: str) -> bool:
    return ch in _INVISIBLE or (ord(ch) > 127 and unicodedata.category(ch) == "Cf")


# A number: thousands groups, decimals, an exponent, a vulgar fraction (NFKC writes ½ as 1⁄2).
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\u2044\d+)?|\.\d+"
# Units, each with the canonical unit it means.
_UNITS: list[tuple[str, str]] = [
    (
        r"(?i:tok(?:en)?s?\s*/\s*(?:s|sec|second)\b|tok(?:en)?s?\s+(?:per|a)\s+(?:second|sec)\b|t/s|tps|tk\s*/\s*s\b|"
        r"tok(?:en)?s?\s*[·*]?\s*s\s*[\u2212-]\s*1\b)",
        "tok/s",
    ),
    (r"(?i:req(?:uest)?s?\s*/\s*(?:s|sec)\b|req(?:uest)?s?\s+per\s+(?:second|sec)\b|qps\b|rps\b)", "req/s"),
    (r"(?:[GMKT]i?B/s|[GMKT]Bps)", "B/s"),
    (r"(?:ms|msecs?\b|milliseconds?\b)", "ms"),
    (r"(?:μs|us)", "µs"),
    (r"ns", "ns"),
    (r"(?:TiB|GiB|MiB|TB|GB|MB|KiB|KB)", "bytes"),
    (r"[kM]?W", "W"),
    (r"(?:[kMGTP]?FLOP/s|[kMGTP]?FLOPS)", "FLOP/s"),
    (r"(?:s|secs?\b|seconds?\b)", "s"),
    (r"(?:min|mins|minutes?)\b", "min"),
    (r"(?:h|hrs?|hours?)\b", "h"),
    (r"(?:%|(?i:percent))", "%"),
]
_UNIT = "|".join(f"(?P<u{i}>{pattern})" for i, (pattern, _) in enumerate(_UNITS))
_EMPHASIS = r"(?:\*{1,2}|_{1,2}|`)?"
_QUALIFIER = (
    r"(?:(?i:output|input|generated|generation|decode|decoding|prefill|prompt|completion|total|aggregate|effective|"
    r"new|gen|user|per-user)[ \u00a0])"
)
"""One word that says which tokens a rate counts, between the number and its unit: ``52.3 output tok/s``."""
_COMPARES_WORD = (
    r"(?![\w/])\s*(?:faster|slower|speed-?ups?|higher|lower|more|less|better|worse|improvement|gains?|boost|"
    r"increase|decrease|reduction)\b"
)
_COMPARES = (
    r"(?![\w/])(?:\s*(?:faster|slower|speed-?ups?|higher|lower|more|less|better|worse|improvement|gains?|boost|"
    r"increase|decrease|reduction|throughput|over|than|vs\b|the\b|as\b)|\s*[.,;:!?)]|\s*$)"
)
"""What follows an integer multiplier that compares (``8x faster``, ``2× over eager``, ``was 3x.``): ``4x RTX 5090`` and
``4x4`` count cards and tiles; four digits before an x name a part (``Ryzen 9 7950X.``), not a multiplier, unless
a comparing word follows (``1000x faster``)."""
_LIST_SEP = r"\s*(?:/|,|-|–|—|\bto\b|\band\b|\bor\b)\s*"
# Each pattern below begins with a lookahead on the characters its matches can begin with: the same matches, but
# the regular expression engine skips every other position at once (the site's scan of every rendered page for
# orphan figures spent 40 % of a 100,000-measurement build in these patterns; 1.4-2.7x faster each).
_FIGURE = re.compile(
    r"(?=[-+*_`\d.])(?:(?<![\w.@/\u2044-])(?P<sign>[+-]?)" + _EMPHASIS + r"(?P<first>" + _NUMBER + r")"
    r"(?P<more>(?:" + _LIST_SEP + r"(?:" + _NUMBER + r"))*)"
    r"(?P<scale>[kK](?=\s?[A-Za-zμ%(]))?" + _EMPHASIS + r"(?P<sp>[ \u00a0-]?)" + _QUALIFIER + r"?"
    r"(?:\*{1,2}|_{1,2}|\[)?\(?(?:" + _UNIT + r")\)?"  # emphasis or a link on the unit: 52.3 **tok/s**
    r"(?P<per>/[A-Za-z]+)?(?![\w/])"
    r"|(?<![\w.@/-])(?P<mnum>\d+\.\d+|\d{1,3}(?=[xX×]"
    + _COMPARES
    + r")|\d+(?=[xX×]"
    + _COMPARES_WORD
    + r"))(?P<mult>[xX×])(?![\w/]))"
)
_ITEM = re.compile(_NUMBER)
_CODE = re.compile(
    r"(?=[" + "".join(sorted({c[0] for c in CODE_METRICS})) + r"])"
    r"(?<![\w.])(?P<code>" + "|".join(sorted(CODE_METRICS, key=len, reverse=True)) + r")"
    r"(?:(?<!\bA)[ \u00a0=:]|(?<=\bA)[=:])?"  # D 52.3, D=52.3; not "A 2.5" (the article)
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+)(?![\w.]|,\d)"
)
_COUNT_NOUN = r"(?!\s*-?\s*(?:tokens?|prompts?|requests?|slots?|steps?|seq|sequences?|batch|users?|samples?|runs?)\b)"
_BARE = re.compile(
    r"(?<![\w.@/,\u2044-])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)(?![\w.]\d|\w|,\d)" + _COUNT_NOUN
)
"""A bare decimal or a number with thousands groups (``93.551 strict``, ``30.22–30.26``, ``29,911``): in a coverage
cell, which shows one measured arm, such a number is a value of that arm."""
_WORD = re.compile(
    # on one line, a space or two apart: "TTFT 274", "decode: 52.3", "TTFT=274", "prefill was 826.4", "decode ~52.3",
    # "decode rate of 52.3" (not a chart's axis ticks)
    r"(?i)(?=[dpt])(?<![\w.])(?P<word>decode|prefill|ttft|throughput)"
    r"(?:[ \u00a0](?:rate|speed))?(?:[ \u00a0](?:of|at|was|is))?"
    r"(?:[ \u00a0]{1,2}|[ \u00a0]?[=:~≈][ \u00a0]{0,2}|[ \u00a0]{1,2}[~≈][ \u00a0]?)"
    r"(?P<num>\d+(?:\.\d+)?)(?![\w.])(?!\s*-?\s*(?:tokens?|prompts?|requests?|slots?|steps?|seq|sequences?|batch))"
)
_NUMBER_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fifteen|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundred|thousand|million)"
)
_WORDS = re.compile(
    r"(?i)(?=[zotfsenhm])(?<![\w])(?P<words>" + _NUMBER_WORD + r"(?:[\s-]+(?:and[\s-]+)?" + _NUMBER_WORD + r")*)"
    r"\s+(?P<unit>tok(?:en)?s?\s*/\s*(?:s|sec)|tok(?:en)?s?\s+per\s+second|ms|milliseconds|percent)\b"
)
_DIGIT = re.compile(r"\d")
_WORD_START = re.compile(
    r"(?i)zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million"
)


@dataclass(frozen=True)
class Figure:
    """A number in prose that states a measured value and so must be a citation."""

    start: int  # span in the original text: the number (and its unit, when written right after it)
    end: int
    text: str
    number: str  # the number as written (ASCII for the digits a binding can compare)
    unit: str  # canonical unit (tok/s, ms, bytes, B/s, W, s, %, x), or "" for letter-coded and word-led figures
    metric_hints: tuple[str, ...] | None  # metrics the notation may name (D -> decode_tok_s), if any

    @property
    def decimals(self) -> int:
        return len(self.number.split(".")[1]) if "." in self.number else 0


def _folded(text: str) -> tuple[str, list[int] | None]:
    """``text`` as a reader sees it (NFKC, invisible characters dropped), and for each of its characters
    the index of the original character it came from (None: each character stands where it stood, as in most text).
    Each character is folded by itself (``_fold``); the text is rewritten by ``str.translate`` and the indices made
    between the characters that changed (a rendered page is some 30,000 characters: one Python step per character
    was a sixth of the time a family's page took to make)."""
    if text.isascii():
        return text, None
    changes = {ord(ch): folded for ch in set(text) if ord(ch) > 127 and (folded := _fold(ch)) != ch}
    if not changes:
        return text, None
    folded_text = text.translate(changes)
    if all(len(v) == 1 for v in changes.values()):
        return folded_text, None  # one character for one: the indices are the same
    where: list[int] = []
    last = 0
    for m in re.finditer("[" + "".join(re.escape(chr(c)) for c in changes) + "]", text):
        i = m.start()
        where.extend(range(last, i))
        where.extend([i] * len(changes[ord(text[i])]))
        last = i + 1
    where.extend(range(last, len(text)))
    return folded_text, where


@functools.lru_cache(maxsize=4096)
def _fold(ch: str) -> str:
    """One character as a reader sees it: nothing when invisible, else its NFKC form."""
    return "" if _invisible(ch) else unicodedata.normalize("NFKC", ch)


def _without_citations(text: str) -> str:
    """``text`` with each citation blanked out (same length): the renderer formats those numbers."""
    if "{{" not in text:
        return text
    pieces, last = [], 0
    for start, end in brace_spans(text):
        if end < 0:
            break  # an unclosed "{{" hides nothing: the figures after it still count
        pieces += [text[last:start], "\0" * (end - start)]
        last = end
    return "".join([*pieces, text[last:]])


def find_figures(text: str, cell: bool = False) -> list[Figure]:
    """Figures that are claims, outside citations.

    A figure is a claim when it is
    - a number with a measurement unit after it: tok/s (also tok/sec, tokens/s, tokens per second or sec, tokens a
      second, t/s, TPS, any case), req/s (requests per second, qps, RPS), ms (msec, milliseconds, µs, us, ns), s
      (sec, seconds), %, percent, TB, GB, GiB, MB, MiB, W, GB/s, TB/s, GBps; a per-unit suffix
      (``tok/s/GPU``,
      ``ms/token``), a unit in parentheses (``52.3 (tok/s)``), emphasis (``**52.3** tok/s``), thousands
      separators (``29,911 MiB``), exponents (``5.23e1 tok/s``), ``k`` (``1.5k tok/s``) and fractions (``52½``)
      included; every number of a list or range sharing one unit (``191.87 / 191.58 tok/s``, ``30-40 tok/s``);
    - a decimal number with a multiplier sign right after it (``1.5x``, ``2.25×``);
    - a decimal in the lab's letter notation (``D25.678``, ``P826.4``, ``T274.6``, ``AR.587``, ``E2E``, ``EV``, ``A``);
    - a number led by a metric word (``decode 52.3``, ``TTFT 274``), unless a count noun follows
      (``decode 512 tokens``);
    - number words with a unit (``two thousand tok/s``);
    - in a coverage cell (``cell``), which shows one measured arm: every bare decimal and every number with thousands
      groups (``93.551 strict``, ``30.22–30.26``), a version such as ``0.9.1`` aside.

    Not claims: identifiers and settings (TP4, MTP3, Q4_K_M, D511 windows, 32K contexts), dates, commit hashes,
    counts and fractions without a unit (5/25, 12 prompts), version strings (0.9.1, v1.2), and bare numbers.
    """
    if text.isascii() and not _DIGIT.search(text) and not _WORD_START.search(text):
        return []  # most prose: no number at all (a superscript or circled digit is no \d: fold such text first)
    folded, where = _folded(_without_citations(text))

    def span(start: int, end: int) -> tuple[int, int]:
        return (start, end) if where is None else (where[start], where[end - 1] + 1)

    found: dict[int, Figure] = {}
    for m in _FIGURE.finditer(folded):
        if m.group("mult"):
            a, b = span(m.start("mnum"), m.end())
            found[a] = Figure(a, b, text[a:b], m.group("mnum"), "x", None)
            continue
        unit = next(canon for i, (_, canon) in enumerate(_UNITS) if m.group(f"u{i}"))
        if unit == "s" and m.group("sp") == "" and not m.group("more") and "." not in m.group("first"):
            continue  # "1990s", "30s" as decades or plurals
        items = [m.group("first"), *_ITEM.findall(m.group("more") or "")]
        starts = [m.start("first")]
        offset = m.start("more")
        for item in items[1:]:
            offset = folded.index(item, offset)
            starts.append(offset)
            offset += len(item)
        for n, (item, at) in enumerate(zip(items, starts, strict=True)):
            last = n == len(items) - 1
            a, b = span(at, m.end() if last else at + len(item))
            found[a] = Figure(a, b, text[a:b], item, unit, None)
    for m in _CODE.finditer(folded):
        a, b = span(m.start("num"), m.end("num"))
        found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", CODE_METRICS[m.group("code")]))
    for m in _WORD.finditer(folded):
        a, b = span(m.start("num"), m.end("num"))
        found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", WORD_METRICS[m.group("word").lower()]))
    for m in _WORDS.finditer(folded):
        a, b = span(m.start("words"), m.end())
        found.setdefault(a, Figure(a, b, text[a:b], m.group("words"), "", None))
    covered = [(f.start, f.end) for f in found.values()]
    for m in _BARE.finditer(folded) if cell else ():
        a, b = span(m.start("num"), m.end("num"))
        if not any(x <= a < y for x, y in covered):
            found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", None))
    return [found[k] for k in sorted(found)]


_HEADER_UNIT = re.compile(r"(?:^|(?<=[\s(\[,/]))\(?(?:" + _UNIT + r")\)?(?P<per>/[A-Za-z]+)?(?=[\s)\],;:↑↓]|$)")
_CELL_NUMBER = re.compile(r"(?<![\w.@/\u2044-])[+-]?(?:" + _NUMBER + r")(?![\w.]\d|\w|,\d)")


def header_unit(header: str) -> str | None:
    """The unit a table column's header states (``Decode (tok/s)``, ``TTFT ms``, ``tok/s (decode)``,
    ``Decode (tok/s) ↑``), as canonical unit."""
    folded, _ = _folded(header.strip().strip("*_`").strip())
    m = _HEADER_UNIT.search(folded)
    if not m:
        return None
    return next(canon for i, (_, canon) in enumerate(_UNITS) if m.group(f"u{i}"))


def column_figures(cell: str, unit: str) -> list[Figure]:
    """The numbers of a table cell under a header stating ``unit``: each is a figure of that unit (the header's unit
    applies to the column's cells), citations aside."""
    folded, where = _folded(_without_citations(cell))
    out = []
    for m in _CELL_NUMBER.finditer(folded):
        a, b = (m.start(), m.end()) if where is None else (where[m.start()], where[m.end() - 1] + 1)
        out.append(Figure(a, b, cell[a:b], m.group().lstrip("+-"), unit, None))
    return out


_LEAD = re.compile(
    r"(?i)(?<![\w.])(?P<word>decode|prefill|ttft|throughput|latency|tpot|itl|e2e)(?:[ \u00a0](?:rate|speed|time))?"
    r"(?:[ \u00a0](?:of|at|was|is|were|reached|reaches))?(?:[ \u00a0]{1,2}|[ \u00a0]?[=:~≈][ \u00a0]{0,2})$"
)


def metric_lead(before: str) -> str | None:
    """The metric word right before a place in prose (``TTFT was ``, ``decode: ``), or None: what is written there
    states that metric's value."""
    m = _LEAD.search(before[-40:])
    return m.group("word") if m else None


def canonical_unit(unit: str) -> str:
    """The canonical unit of a unit as written (``tok/s``, ``ms``, ``GiB`` → ``bytes``), or ``""``."""
    m = re.fullmatch(_UNIT, unit.strip())
    return next((canon for i, (_, canon) in enumerate(_UNITS) if m.group(f"u{i}")), "") if m else ""
