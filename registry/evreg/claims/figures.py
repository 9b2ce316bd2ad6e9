"""The figure grammar: which numbers in prose are claims of a measured value, and so must be
citations. One definition, used by validation (``orphan-number``), the build's check of rendered
pages, the site's marking of baselined figures and the importer's binding of lab prose.

Text is read as a reader sees it, folded one character at a time before scanning: default-ignorable characters
(zero-width spaces and joiners, soft hyphens, variation selectors, fillers, format characters) dropped, blank-looking
ones read as a space, Unicode compatibility forms folded (NFKC: superscript and fullwidth digits, ``µ``, ``½``),
digits of every script read as ASCII digits, and characters Unicode lists as confusable with an ASCII character read
as that character (Cyrillic ``о``, Greek ``Β``, ``∕``); the spans found are spans of the original text. The
methodology page (``registry/evreg/site/static/methodology.md``, *What counts as an orphan number*) has a table of
examples that the tests check both ways.
"""

from __future__ import annotations

import bisect
import collections
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal

from evreg.claims.citations import brace_spans
from evreg.claims.spelled import any_number_word, spelled
from evreg.core.vocab import metrics as metric_vocab

CODE_METRICS: dict[str, tuple[str, ...]] = {}
for _metric, _spec in metric_vocab().items():
    if _spec.get("point_code"):
        CODE_METRICS[_spec["point_code"]] = (*CODE_METRICS.get(_spec["point_code"], ()), _metric)
"""The lab's letter notation, from the metric vocabulary's ``point_code``: ``D25.678`` is a decode figure. ``A`` is
the aggregate throughput in concurrency views (ornith-1-5) and the mean acceptance length in speculative decoding
views: either may be meant."""


def _metric_names() -> dict[str, tuple[str, ...]]:
    """How prose names a metric before its value, from the metric vocabulary (``names``): each metric's label
    without its statistic and parenthesised qualifier (``TTFT``, ``inter-token latency``, ``request latency``,
    ``decode``, ``accuracy``, ``perplexity``), and the spoken names it lists (``throughput``, ``ITL``, ``speedup``),
    lower-cased; the free names (``input``, ``requests``), which also name a workload quantity, left out."""
    from evreg.core.vocab import load

    names = load("metrics").get("names", {})
    out: dict[str, tuple[str, ...]] = {}
    for metric, spec in metric_vocab().items():
        label = re.sub(r"\s*\([^()]*\)", "", str(spec.get("label", "")))
        label = re.sub(r"(?i)\s+(?:mean|median|min|max|std dev|p\d+(?:\.\d+)?)$", "", label).strip().lower()
        if label:
            out[label] = (*out.get(label, ()), metric)
    for name, metrics in names.get("spoken", {}).items():
        out[name.lower()] = (*out.get(name.lower(), ()), *metrics)
    for name in names.get("free", ()):
        out.pop(name.lower(), None)
    return out


METRIC_NAMES = _metric_names()
"""Metric names that make the number after them a figure (``TTFT 274``, ``decode throughput was 52.3``)."""

_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip
"""Unicode's default-ignorable code points (DerivedCoreProperties: ``Default_Ignorable_Code_Point``): characters a
reader does not see (zero-width spaces and joiners, soft hyphens, variation selectors, fillers); with them every
format character (category Cf)."""
_BLANK = frozenset("\u2800")
"""Characters that are not spaces but show as blank (the braille blank)."""


def _invisible(ch: str) -> bool:
    code = ord(ch)
    return code > 127 and (unicodedata.category(ch) == "Cf" or any(low <= code <= high for low, high in _IGNORABLE))


@functools.cache
def _confusables() -> dict[str, str]:
    """Each letter Unicode lists as confusable with one ASCII character (confusables.txt, through the
    ``confusable_homoglyphs`` package), and each look-alike of ``/``: Cyrillic ``о`` is ``o``, ``∕`` is ``/``."""
    from confusable_homoglyphs import confusables

    out = {}
    for ch, entries in confusables.confusables_data.items():
        ascii_forms = [e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii() and e["c"].isprintable()]
        # letters, and look-alikes of the slash of a rate: the grammar reads other punctuation (dashes, signs) itself
        slash = ascii_forms[:1] == ["/"] and ch != "\u2044"  # the fraction slash is the grammar's own (``1⁄2``)
        if len(ch) == 1 and ascii_forms and (unicodedata.category(ch)[0] == "L" or slash):
            out[ch] = ascii_forms[0]
    return out


# A number: thousands groups, decimals, an exponent, a vulgar fraction (NFKC writes ½ as 1⁄2).
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\u2044\d+)?|\.\d+"
# Units, each with the canonical unit it means.
_UNITS: list[tuple[str, str]] = [
    (
        r"(?i:tok(?:en)?s?\s*/\s*(?:s|sec|second)\b|tok(?:en)?s?\s+(?:per|a)\s+(?:second|sec)\b|t/s|tps|tk\s*/\s*s\b|"
        r"tok(?:en)?s?\s*+[·*]?\s*+s\s*+[\u2212-]\s*+1\b)",
        "tok/s",
    ),
    (r"(?i:req(?:uest)?s?\s*/\s*(?:s|sec)\b|req(?:uest)?s?\s+per\s+(?:second|sec)\b|qps\b|rps\b)", "req/s"),
    (r"(?:[GMKT]i?B/s|[GMKT]Bps)", "B/s"),
    (r"(?i:ms|msecs?\b|millis\b|milliseconds?\b)", "ms"),
    (r"(?:μs|us|(?i:microseconds?)\b)", "µs"),
    (r"(?:ns|(?i:nanoseconds?)\b)", "ns"),
    (r"(?i:[kmgtp]i?b\b|(?:kilo|mega|giga|tera|peta)bytes?\b)", "bytes"),
    (r"(?:[kM]?W|(?i:(?:kilo|mega)?watts?)\b)", "W"),
    (r"(?:[kMGTP]?FLOP/s|[kMGTP]?FLOPS)", "FLOP/s"),
    (r"(?:s|secs?\b|seconds?\b)", "s"),
    (r"(?:min|mins|minutes?)\b", "min"),
    (r"(?:h|hrs?|hours?)\b", "h"),
    (r"(?:%|(?i:per[ \u00a0-]?cent\b|pct\b|percentage[ \u00a0]points?\b|pp\b))", "%"),
    (r"(?:‰|(?i:(?:per|pro)[ \u00a0-]?mille?\b|permil\b|per[ \u00a0-]thousand\b|per[ \u00a0]1,?000\b))", "‰"),
    (r"(?:‱|(?i:basis[ \u00a0-]points?\b))", "‱"),
    (r"(?i:ppm\b|parts[ \u00a0]per[ \u00a0]million\b)", "ppm"),
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
_NUMBER_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|"
    r"billion)"
)
"""Every word of an English cardinal number up to the billions (``one hundred and twelve thousand``)."""

# The patterns below find what the grammar above describes, written for Python's regular expression engine, which
# spends most of a scan entering the pattern at every position where it might start (the site's check of every
# rendered page for orphan figures is a scan of some 400 MB of text at 100,000 measurements):
# - each begins by consuming one character of a class (the first letter of its words, a digit): the engine skips
#   every other character at C speed. What the grammar checks before that character, a look-behind checks after
#   consuming it, over one character more (``(?<![\w.].)``: the character before is no word character or dot, or
#   there is none); a word is tied to its first letter by a look-behind (``[dpt](?:(?<=d)ecode|(?<=p)refill|...)``);
# - digits are matched possessively (``\d++``) where nothing that may follow them begins with a digit, and an
#   alternative is entered only when the character it needs is there (a unit after a number begins with a letter,
#   ``%``, ``(``, ``[`` or ``*``; a multiplier is a number right before ``x``), so a number in running text that is
#   no figure is given up at once.
# The grammar as first written (one pattern per kind, each a look-ahead and look-behind at every position) is kept
# in ``tests/unit/test_claims_figure_patterns.py``: these must find exactly what it finds (hypothesis, and every page
# of a built site).


def _first(words: list[str], ignore_case: bool = False) -> str:
    """A character class of the characters the words may begin with; with ``ignore_case``, their letters in either
    case and every character beyond ASCII (the engine ignoring case takes ``ſ`` for ``s``): the word tied to the
    letter (``_tied``, in a case-ignoring group) then decides."""
    chars = {w[0] for w in words}
    if not ignore_case:
        return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"
    chars |= {c.upper() for c in chars} | {c.lower() for c in chars}
    return _ascii_not(chars)


def _ascii_not(chars: set[str]) -> str:
    """A character class of ``chars`` and every character beyond ASCII, written as the ASCII characters it leaves
    out (a class holding the range up to U+10FFFF took 12 ms to compile, at every start)."""
    return "[^" + "".join(f"\\x{c:02x}" for c in range(128) if chr(c) not in chars) + "]"


def _tied(words: list[str]) -> str:
    """After a consumed first letter, the rest of one of ``words`` that begins with it, tried in their order."""
    return "|".join(f"(?<={re.escape(w[0])}){re.escape(w[1:])}" for w in words)


_BEFORE_NUMBER = r"[\w.@/\u2044-]"  # no figure begins right after one of these
_PREFIXES = [s + e for s in ("+", "-", "") for e in ("**", "*", "__", "_", "`", "") if s + e]  # sign, emphasis
_REST = r"(?:\.\d++)?(?:[eE][-+]?\d++)?(?:\u2044\d++)?"  # decimals, an exponent, a fraction
_DIGITS = r"(?>(?:\d{1,3}(?:,\d{3})+(?!\d)|\d++)" + _REST + r"|\.\d++)"
"""A number of a list (``_NUMBER``), read one way: every part it can have, taken whole (an atomic group), thousands
groups only where no digit follows them (``1,2345`` is 1 and 2345). Any other reading of a list ends where a unit
cannot follow (before ``.5``, ``e5``, ``⁄2``, or a separator and a number), so the figures are the same; read every
way, a chain of thousands groups was exponential (``1,234,234,...,234x``: 22 groups took 34 s)."""
_PIECE = r"(?>\d++" + _REST + r"|\.\d++)"
"""A number read without thousands groups: a list of these, with ``,`` a separator, ends where a list of
``_DIGITS`` ends."""
_START = (
    r"(?:(?<!"
    + _BEFORE_NUMBER
    + r".)|(?<=[-_].)(?:"
    + "|".join(rf"(?<={re.escape(p)}.)(?<!{_BEFORE_NUMBER}{re.escape(p)}.)" for p in _PREFIXES)
    + r"))"
)
"""After a consumed digit or dot: nothing stands before it, or a sign and emphasis (``-**5``) with nothing before
them."""
_SEP = _LIST_SEP.replace(r"\s*", r"\s*+")
_FIGURE = re.compile(
    r"(?P<lead>[\d.])(?:"
    + _START
    + r"(?P<first>(?<=\d)(?>(?:\d{0,2}(?:,\d{3})+(?!\d)|\d*+)"
    + _REST
    + r")|(?<=\.)\d++)"
    r"(?P<more>(?:" + _SEP + _DIGITS + r")*+)"
    r"(?P<scale>[kK](?=\s?[A-Za-zμ%(]))?"
    + _EMPHASIS
    + r"(?P<sp>[ \t\u00a0]*+\n?[ \t\u00a0]*+|-)(?=[^\W\d]|[%‰‱(\[*])"
    + _QUALIFIER
    + r"?"
    # emphasis or a link on the unit (52.3 **tok/s**); a unit in parentheses takes its closing one, no other
    r"(?:\*{1,2}|_{1,2}|\[)?(?P<upar>\((?:[A-Za-z][\w \t-]{0,23}[,;:][ \t\u00a0]*+)?)?(?:" + _UNIT + r")(?(upar)\))"
    r"(?P<per>/[A-Za-z]+)?(?![\w/])"
    r"|(?<=\d)(?<![\w.@/-].)(?=\d*+(?:\.\d++)?[xX×])(?P<mnum>\d*\.\d+|\d{0,2}(?=[xX×]" + _COMPARES + r")"
    r"|\d*(?=[xX×]" + _COMPARES_WORD + r"))(?P<mult>[xX×])(?![\w/])"
    r"|" + _START + r"(?:(?<=\d)\d*+" + _REST + r"|(?<=\.)\d++)"
    r"(?P<dead>(?:" + _SEP + r"(?P<last>" + _PIECE + r")){3,}+))"
)
"""A figure with a unit (``first``: the rest of its first number after ``lead``; ``more``: the list's other numbers),
or a multiplier (``mnum``: the rest of its number); or, where neither begins, a list of four or more numbers
(``dead``): see ``_matches``."""
_ITEM = re.compile(_DIGITS)


def _matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` in time linear in the text, for a pattern whose last alternative (``dead``) is a
    list of numbers that no match begins in before its ``last`` number: the search goes on there.

    ``_FIGURE``: where a list of numbers has no unit after it, no figure begins at any number of the list but the
    last: read from any of them, the list ends where it ended (a number read from inside another, such as ``234``
    in ``1,234`` or ``5`` in ``1e+5``, ends where that one ends, unless it is the last), and a multiplier's ``x``
    can follow only the last. ``_CELL_NUMBER``: in a chain of thousands groups that is no number, no group but the
    last begins one (each reads to the chain's end, or stops before ``,`` and a digit). Tried at every number, each
    try reading the rest of the list, ``"1, " * 4000`` took 10 s."""
    found: list[re.Match[str]] = []
    pos = 0
    while m := pattern.search(text, pos):
        if m.group("dead") is None:
            found.append(m)
            pos = m.end()
        else:
            pos = m.start("last")
    return found


_CODES = sorted(CODE_METRICS, key=len, reverse=True)
_CODE = re.compile(
    r"(?P<code>" + _first(_CODES) + r"(?<![\w.].)(?:" + _tied(_CODES) + r"))"
    r"(?:(?<!\bA)[ \u00a0=:]|(?<=\bA)[=:])?"  # D 52.3, D=52.3; not "A 2.5" (the article)
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+)(?![\w.]|,\d)"
)
_COUNT_NOUN = r"(?!\s*-?\s*(?:tokens?|prompts?|requests?|slots?|steps?|seq|sequences?|batch|users?|samples?|runs?)\b)"
_BARE = re.compile(
    r"(?<![\w.@/,\u2044-])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)(?![\w.]\d|\w|,\d)" + _COUNT_NOUN
)
"""A bare decimal or a number with thousands groups (``93.551 strict``, ``30.22–30.26``, ``29,911``): in a coverage
cell, which shows one measured arm, such a number is a value of that arm."""
_DIGIT = re.compile(r"\d")
# Numbers by their context. Whatever spells it, a number is a claim when a metric name stands before it, or a rate,
# a multiple or a comparison after it: the names come from the metric vocabulary, a rate is any noun per unit of
# time, and number words count as numbers.
_NAMES = sorted(METRIC_NAMES, key=len, reverse=True)
_NAME = "|".join(r"[\s-]+".join(map(re.escape, re.split(r"[\s-]+", n))) for n in _NAMES)
_B = r"(?:[ \t\u00a0]++\n?[ \t\u00a0]*+|\n[ \t\u00a0]*+)"
"""Blanks a reader reads as one space: a run of spaces and tabs with one line break at most (two end a paragraph; a
rendered page's shown text separates table cells and blocks with them)."""
_LEAD = (
    r"(?i)(?<![\w.@])(?P<word>" + _NAME + r")(?:s|'s)?(?!\w)"
    r"(?:" + _B + r"(?:(?:at|@)" + _B + r"(?:the" + _B + r")?)?(?:mean|median|average|avg|p\d+(?:\.\d+)?|"
    r"\d+(?:st|nd|rd|th)" + _B + r"percentile|rate|speed|time|score|value))?"
    r"(?:(?:" + _B + r")?\([^()\n]{0,24}\))?"
    r"(?:" + _B + r"(?:of|at|was|is|were|reached|reaches|about|around|roughly|near|approx\.?|approximately|only|just|"
    r"least|most|peaked|peaks|averaged|averages|hit|hits|measured|came|under|below|above|stayed|remained|"
    r"landed|sat|in(?=" + _B + r"at\b)))*+"
    r"(?:(?:[ \t]++|,[ \t]*+)[^:=\n.;·|()\[\]{}]{1,32}?(?:" + _B + r")?"
    r"(?:[:=]|" + _B + r"(?:was|were|reached|hit)(?=[ \t]))"
    r"(?:" + _B + r")?"
    r"|[ \t]++[^:=\n.;·|()\[\]{},]{0,30}?\d,[ \t]++(?=\d[\d.]*+(?![\d.,]|[ \t]*+(?:[,/&-]|and\b|or\b)))"
    r"|(?:(?:" + _B + r")?(?:[=:~≈≅≥≤→—–<>]|>=|<=|->|(?<=[ \t])-(?=[ \t]))){1,2}(?:" + _B + r")?"
    r"(?:(?:about|around|roughly|approximately|approx\.?|nearly|almost|only|just)" + _B + r"|[~≈])?"
    r"|" + _B + r")"
)
"""A metric name and what may stand between it and its value (``TTFT p99 (mean) was ``, ``decode: ``)."""
_NAME_FIRSTS = tuple(sorted({re.split(r"[\s-]+", n)[0] for n in _NAMES}))
_CHANGE_FIRSTS = ("improv", "increas", "decreas", "drop", "rose", "rise", "fell", "fall", "gain", "regress", "sped",
                  "slowed", "went", "faster", "slower")  # fmt: skip
"""The first letters of each metric name and word of change: where ``in_context`` tries them."""
_NAME_FIRSTS_AT = re.compile("|".join(map(re.escape, sorted(_NAME_FIRSTS, key=len, reverse=True))))
_CHANGE_FIRSTS_AT = re.compile("|".join(map(re.escape, sorted(_CHANGE_FIRSTS, key=len, reverse=True))))
_LEAD_AT_END = re.compile(_LEAD + "$")
_COUNTED = (
    r"(?i:(?:"
    + _B
    + r")?/(?:"
    + _B
    + r")?\d|"
    + _B
    + r"(?:out"
    + _B
    + r")?of\b|"
    + _B
    + r"(?:more|other|fewer)"
    + _B
    + r"(?!than\b)[a-z]|"
    r"(?:"
    + _B
    + r")?-?(?:"
    + _B
    + r")?(?:(?:input|output|prompt|generated|new|cold|warm|unique|concurrent|parallel)[ -])?"
    r"(?:tokens?|toks?|prompts?|requests?|reqs?|slots?|steps?|seq|sequences?|batch(?:es)?|users?|"
    r"samples?|runs?|repeats?|iterations?|trials?|concurrent|concurrency|streams?|clients?|gpus?|cards?|devices?|"
    r"nodes?|layers?|experts?|threads?|workers?|shots?|tasks?|questions?|examples?|items?|times|days?|weeks?|"
    r"intervals?|windows?|passes|rounds?|epochs?|chunks?|blocks?|pages?|files?|models?|families)\b)"
)
"""What a number after a metric name counts instead of measuring (``decode 512 tokens``, ``512 output tokens``,
``TTFT at 32 concurrent``, ``one of the lowest``, ``2 more runs``, ``acceptance 6/6``: a fraction counts)."""
_CONTEXT_NUMBER = (
    r"(?P<num>\d(?<![\w.@/,\u2044-]\d)(?>\d{0,2}(?:,\d{3})+(?!\d)|\d*+)(?:\.\d++)?|\.(?<![\w.@/,\u2044-]\.)\d++)"
)
"""A number a context makes a figure of: digits, thousands groups, decimals; nothing word-like before it."""
_CONTEXT_END = r"(?![\w.]\d|\w|,\d|-[A-Za-z]|-\d\d-\d\d)"
_DECIMAL_BEFORE = r"(?:(?<=\.\d)|(?<=\.\d\d)|(?<=\.\d\d\d))"
_LEAD_FIGURE = re.compile(
    _LEAD
    + r"(?:[+\u2212-]|(?P<br>[(\[]))?"  # a sign, or a bracket around it
    + r"(?:(?P<num>\d(?>\d{0,2}(?:,\d{3})+(?!\d)|\d*+)(?:\.\d++)?|\.\d++)(?:[eE][-+]?\d++)?"
    + r"(?P<k>(?-i:k)(?![\w.])|"
    + _DECIMAL_BEFORE
    + r"(?-i:[KM])(?![\w.]))?|(?P<comma>\d++,\d{1,2}))(?(br)[)\]])"
    + _CONTEXT_END
    + r"(?!"
    + _COUNTED
    + r")"
)
"""A number after a metric name (``TTFT 274``, ``decode 52.3k``, ``decode 52,3`` with a decimal comma), unless what
follows counts (``decode 512 tokens``)."""
_CITED = re.compile(r"\0++")
"""A citation, blanked (``_without_citations``)."""
_FUNCTION_WORD = (
    r"(?:on|in|at|for|with|after|before|when|while|during|under|over|across|per|and|or|but|then|than|from|to|via|by|"
    r"the|a|an|is|was|were|are|vs|versus|against|as|if|so|since|because|which|that|this|these|those|it|its|we|they)"
)
_JOINED = re.compile(
    r"(?i:(?:" + _B + r")?(?:\([^()\n]{0,12}\)(?:" + _B + r")?)?(?:,(?:" + _B + r")?(?=[a-z]))?"
    r"(?:to|and|or|then|vs\.?|versus|against|compared" + _B + r"(?:with|to)|/|,|;|&|→|->|=>|–|—|"
    r"\((?:" + _B + r")?(?:(?:was|were|is|from|vs\.?|versus|previously|before)" + _B + r")?)"
    r"(?:" + _B + r")?(?:(?:about|around|roughly|nearly|almost|approx\.?|approximately|only|just)" + _B + r"|[~≈])?"
    r"[+\u2212-]?)"
    r"(?P<num>\d(?>\d{0,2}(?:,\d{3})+(?!\d)|\d*+)(?:\.\d++)?(?:[eE][-+]?\d++)?|\.\d++)(?:(?-i:k)|,\d{1,2}(?!\d))?"
    + _CONTEXT_END
    + r"(?!"
    + _COUNTED
    + r"|"
    + _B
    + r"in"
    + _B
    + r"\d|"
    + _B
    + r"(?!"
    + _FUNCTION_WORD
    + r"\b)[A-Za-z])"
)
"""A number joined to a figure or a citation before it (``rose from {{ ... }} to 31.5``, ``TTFT 274 and 301``,
``{{ ... }} vs about 31.5``, ``274 (p50) then 301``): a figure of the same kind, unless it counts (a noun after it:
``{{ ... }}, 4 H100s``, ``to 2 decimals``)."""


def _joined(folded: str, anchors: list[int]) -> list[re.Match[str]]:
    """The numbers joined to the figures or citations ending at ``anchors``, and those joined to them."""
    out = []
    while anchors:
        if found := _JOINED.match(folded, anchors.pop()):
            out.append(found)
            anchors.append(found.end())
    return out


_PER = r"(?:s|sec|secs|second|min|minute|h|hr|hour|ms|msec|millisecond|us|µs|microsecond)"
_PER_UNIT = {"sec": "s", "secs": "s", "second": "s", "minute": "min", "hr": "h", "hour": "h", "msec": "ms",
             "millisecond": "ms", "us": "µs", "microsecond": "µs"}  # fmt: skip
_RATE = re.compile(
    _CONTEXT_NUMBER
    + r"(?P<suffix>[kKMGBT])?"
    + _CONTEXT_END
    + r"(?P<scale>[ \t\u00a0\n]?(?i:thousand|million|billion|trillion))?[ \t\u00a0\n]?(?:\*{1,2}|_{1,2}|`)?"
    r"(?:[A-Za-z][\w]*+" + _B + r"){0,3}?(?P<noun>[A-Za-z][\w]*+)(?:" + _B + r")?(?:\*{1,2}|_{1,2}|`)?"
    r"(?:/(?:" + _B + r")?(?:[A-Za-z]++(?:" + _B + r")?/(?:" + _B + r")?)?(?:\d++(?:\.\d++)?(?:" + _B + r")?)?"
    r"\(?(?P<per>" + _PER + r")\b\)?"
    r"|(?<=[ \t\u00a0\n-])(?i:per|a|an|each|every)(?:" + _B + r"|-)+(?:\d++(?:\.\d++)?(?:" + _B + r"|-)?)?"
    r"(?P<per_word>(?i:" + _PER + r"))\b"
    r"|(?:(?<=[ \t\u00a0\n])|[.·*])(?P<per_exp>" + _PER + r")[ \t]*+(?:\^|\*\*)?[ \t]*+[({]?[\u2212-]1[)}]?(?![\w.])"
    r"|-(?i:per|a|an|each|every)(?:" + _B + r"|-)+(?P<per_hyphen>(?i:" + _PER + r"))\b)"
)
"""A rate after a number: any noun per unit of time (``812 queries/s``, ``3.1 images per second``,
``1.5M tokens a second``, ``52.3 tok s^-1``, ``52.3 tokens/1s``), a word or two between (``52.3 output
tokens per second``)."""
_COMPARING = (
    r"(?:faster|slower|quicker|higher|lower|greater|more|less|fewer|better|worse|bigger|smaller|longer|shorter|"
    r"speed-?ups?|improvements?|gains?|boost|increase|decrease|reduction|drop|as[ \u00a0]+(?!many\b|often\b)\w+|"
    r"over\b|than\b|the[ \u00a0]+(?:" + _NAME + r"|speed)\b)"
)
_MULTIPLE = re.compile(
    r"(?i)(?<![\w.])(?:(?P<n>(?:\d+(?:\.\d+)?|"
    + _NUMBER_WORD
    + r")(?:[\s-]+(?:(?:and|point)[\s-]+)?"
    + _NUMBER_WORD
    + r")*)(?:[ \u00a0-]?fold\b(?![ \u00a0-]?cross)|[ \u00a0]+times(?=[ \u00a0]+"
    + _COMPARING
    + r"))"
    r"|(?P<w>twice|thrice|double|triple|quadruple|half)(?=[ \u00a0]+" + _COMPARING + r"))"
)
"""A multiple written in words (``3 times faster``, ``threefold``, ``a 2-fold speedup``, ``twice as fast``, ``half the
latency``); ``ran 3 times``, ``1.5 times the batch`` and ``twice as many runs`` count or scale."""
_COMPARED = re.compile(
    _CONTEXT_NUMBER
    + _CONTEXT_END
    + r"(?i:"
    + _DECIMAL_BEFORE
    + r"[ \t\u00a0\n]?(?:points?"
    + _B
    + r")?(?:faster|slower|quicker|higher|lower|better|worse)\b"
    r"|[ \t\u00a0\n]?(?:points?"
    + _B
    + r")?(?:faster|slower|quicker|higher|lower|better|worse)(?:"
    + _B
    + r"\w+)?"
    + _B
    + r"than\b"
    r"|" + _DECIMAL_BEFORE + r"[ \t\u00a0\n]?(?:more|less)" + _B + r"\w+" + _B + r"than\b"
    r"|[ \t\u00a0][xX×](?=" + _B + r"" + _COMPARING + r"))"
)
"""A comparison right after a number (``12.5 faster than eager``): by how much is a measured difference."""
_CHANGED = re.compile(
    r"(?i:(?<![\w.])(?:improved|improves|improving|increased|increases|decreased|decreases|dropped|drops|rose|rises|"
    r"fell|falls|gained|gains|regressed|regresses|sped" + _B + r"up|slowed" + _B + r"down|went" + _B + r"(?:up|down)|"
    r"faster|slower|(?:an"
    + _B
    + r")?(?:improvement|increase|decrease|reduction|gain|drop|speedup|speed-up)"
    + _B
    + r"of)"
    r"(?:"
    + _B
    + r"(?:by|of|to|from|about|roughly|nearly|almost|over))*+"
    + _B
    + r"[~≈]?)"
    + _CONTEXT_NUMBER
    + _CONTEXT_END
    + r"(?!"
    + _COUNTED
    + r")"
)
"""A change right before a number (``improved by 12.5``, ``dropped to 30``): its size or its result is measured."""
_MULTIPLE_HINT = re.compile(r"(?i)fold|times|twice|thrice|double|triple|quadruple|half")
_COMPARED_HINT = re.compile(r"(?i)faster|slower|quicker|higher|lower|better|worse|than|\s[x×]\s")


def in_context(folded: str) -> list[tuple[int, int, str, str, tuple[str, ...] | None]]:
    """The figures a number's context makes (start, end, number, unit, metrics the name may mean), in folded text:
    a number after a metric name or a word of change (unless it counts something), a number with a rate or a
    comparison after it, a multiple in words. Names and words of change are looked for where their first word
    stands (``str.find`` of the lower-cased text: a page is some 30,000 characters, and a pattern of every name tried
    at every letter cost more than the rest of the grammar)."""
    out: list[tuple[int, int, str, str, tuple[str, ...] | None]] = []
    for m in _RATE.finditer(folded):
        noun = m.group("noun").lower()
        per = (m.group("per") or m.group("per_word") or m.group("per_hyphen") or m.group("per_exp")).lower()
        per = _PER_UNIT.get(per, per)
        what = "tok" if noun.startswith("tok") or noun == "t" else "req" if noun.startswith("req") else noun
        out.append((m.start("num"), m.end(), m.group("num"), f"{what}/{per}", None))
    for m in _COMPARED.finditer(folded) if _COMPARED_HINT.search(folded) else ():
        out.append((m.start("num"), m.end("num"), m.group("num"), "", None))
    lower = folded.lower()
    if len(lower) != len(folded):  # a letter that lower-cases to two (``İ``): each letter by itself
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in folded)
    for pattern, firsts, at_first in (
        (_LEAD_FIGURE, _NAME_FIRSTS, _NAME_FIRSTS_AT),
        (_CHANGED, _CHANGE_FIRSTS, _CHANGE_FIRSTS_AT),
    ):
        for at in _places(lower, firsts, at_first):
            if found := pattern.match(folded, at):
                named = found.group("word") if "word" in pattern.groupindex else None
                hints = METRIC_NAMES.get(re.sub(r"[\s-]+", " ", named.lower())) if named else None
                if named and found.group("comma"):
                    out.append((found.start("comma"), found.end(), found.group("comma").replace(",", "."), "", hints))
                elif named and found.group("k"):
                    scale = 10**6 if found.group("k") == "M" else 1000
                    number = format(Decimal(found.group("num").replace(",", "")) * scale, "f")
                    number = number.rstrip("0").rstrip(".") if "." in number else number
                    out.append((found.start("num"), found.end(), number, "", hints))
                else:
                    out.append((found.start("num"), found.end("num"), found.group("num"), "", hints))
    seen = set()
    for hint in _MULTIPLE_HINT.finditer(folded):  # a multiple is searched for only around its word
        for m in _MULTIPLE.finditer(folded, max(0, hint.start() - 120), hint.end() + 200):
            if m.start() not in seen and m.start() <= hint.start() < m.end():
                seen.add(m.start())
                out.append((m.start(), m.end(), m.group("n") or m.group("w"), "x", None))
    return out


def _places(lower: str, words: tuple[str, ...], pattern: re.Pattern[str]) -> list[int]:
    """Where each of ``words`` (lower case) stands in ``lower``: in a short text one search of them all, in a long
    one (a page) each word's ``str.find``, which skips faster than a search tries every word at every place."""
    if len(lower) < 2000:
        return [m.start() for m in pattern.finditer(lower)]
    out = []
    for word in words:
        at = lower.find(word)
        while at >= 0:
            out.append(at)
            at = lower.find(word, at + 1)
    return out


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


class _Where:
    """For each character of a folded text, the index of the original character it came from, looked up between the
    pieces that folded to more or fewer characters than they had (a rendered page has a few, such as ``…``; markup
    folds to nothing; a number in words folds to its digits)."""

    def __init__(self, pieces: Iterable[tuple[int, int, int]]) -> None:
        """``pieces``: (start, end, folded width) of each piece of the original, in order."""
        self.folded_at: list[int] = []  # where each such piece's folding starts in the folded text
        self.original_at: list[int] = []
        self.width: list[int] = []
        self.length: list[int] = []
        shift = 0
        for start, end, width in pieces:
            if width != end - start:
                self.folded_at.append(start + shift)
                self.original_at.append(start)
                self.width.append(width)
                self.length.append(end - start)
                shift += width - (end - start)

    @classmethod
    def of(cls, text: str, which: re.Pattern[str], changes: dict[str, str]) -> _Where:
        """The pieces ``which`` finds in ``text``, each folded to ``changes[piece]`` (nothing when absent)."""
        return cls((m.start(), m.end(), len(changes.get(m.group(), ""))) for m in which.finditer(text))

    def __getitem__(self, k: int) -> int:
        n = bisect.bisect_right(self.folded_at, k) - 1
        if n < 0:
            return k
        start, width = self.folded_at[n], self.width[n]
        return self.original_at[n] + (0 if k < start + width else self.length[n] + k - start - width)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded span ``start:end``: from the first character's origin to the end of the
        last one's (the whole piece it was folded from)."""
        k = end - 1
        n = bisect.bisect_right(self.folded_at, k) - 1
        inside = n >= 0 and k < self.folded_at[n] + self.width[n]
        return self[start], (self.original_at[n] + self.length[n] if inside else self[k] + 1)


class _Then:
    """Two foldings one after the other: a span of the second's text, in the original."""

    def __init__(self, first: _Where | None, second: _Where) -> None:
        self.first, self.second = first, second

    def span(self, start: int, end: int) -> tuple[int, int]:
        start, end = self.second.span(start, end)
        return (start, end) if self.first is None else self.first.span(start, end)


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_BREAKS = re.compile(r"[\r\x0b\x0c]")
_AS_LINE_BREAK = str.maketrans("\r\x0b\x0c", "\n\n\n")
"""A carriage return, a vertical tab and a form feed: a browser shows each as a line break, as it shows ``\n``."""
_UNIT_AT = re.compile(r"(?:" + _UNIT + r")(?![\w/])")
"""A unit where a word starts (``one GiB`` is a number of a unit; ``one reason`` is no number)."""
_SLASH_IN_WORDS = re.compile(r"(?<=[A-Za-z])\u2044(?=[A-Za-z])")


def _folded(text: str, beyond: set[str] | None = None) -> tuple[str, _Where | _Then | None]:
    """``text`` as a reader sees it, with each number in words written in digits (``spelled``), and what maps its
    spans to the original's (None: each character stands where it stood, as in most text). ``beyond``: its
    characters beyond ASCII (or more), when they are known (``_beyond_ascii``)."""
    folded, where = _characters_folded(text, beyond)
    numbers = spelled(folded, _UNIT_AT)
    if not numbers:
        return folded, where
    pieces, last = [], 0
    for start, end, digits in numbers:
        pieces += [folded[last:start], digits]
        last = end
    return "".join([*pieces, folded[last:]]), _Then(where, _Where((s, e, len(d)) for s, e, d in numbers))


def _beyond_ascii(text: str) -> set[str]:
    """The characters of ``text`` beyond ASCII (a scan of the text: done once per text)."""
    return {ch for run in set(_NON_ASCII.findall(text)) for ch in run}


def _characters_folded(text: str, beyond: set[str] | None = None) -> tuple[str, _Where | None]:
    """``text`` with each character as a reader sees it (NFKC, invisible characters dropped), and for each of its
    characters the index of the original character it came from (None: each character stands where it stood). Each
    character is folded by itself (``_fold``); only the characters beyond ASCII are looked at, and only those that
    change are replaced (a rendered page is some 30,000 characters, a family's up to 600,000: ``set`` of every
    character, ``str.translate`` and an index per character took more time than finding the figures)."""
    if _ASCII_BREAKS.search(text):
        text = text.translate(_AS_LINE_BREAK)  # one character for one: the indices are the same
    if text.isascii():
        return text, None
    present = _beyond_ascii(text) if beyond is None else beyond
    changes = {ch: folded for ch in present if (folded := _fold(ch)) != ch}
    if "\u2044" in text:  # a fraction slash between letters is a slash (``tok⁄s``); between digits, a fraction
        text = _SLASH_IN_WORDS.sub("/", text)
    if not changes:
        return text, None
    which = re.compile("[" + "".join(map(re.escape, changes)) + "]")
    folded_text = which.sub(lambda m: changes[m.group()], text)
    if all(len(v) == 1 for v in changes.values()):
        return folded_text, None  # one character for one: the indices are the same
    return folded_text, _Where.of(text, which, changes)


@functools.lru_cache(maxsize=4096)
def _fold(ch: str) -> str:
    """One character as a reader sees it: nothing when invisible, a space when it shows as one, a digit of any script
    as its ASCII digit, a character Unicode lists as confusable with an ASCII one as that one, else its NFKC form."""
    if _invisible(ch):
        return ""
    if ch in _BLANK:
        return " "
    if ch == "\x85" or unicodedata.category(ch) in ("Zl", "Zp"):
        return "\n"  # a line or paragraph separator, a next-line: a line break
    if (alike := _confusables().get(ch)) is not None:
        return alike  # before NFKC, which writes some letters as a space and a combining mark (``ͺ``)
    folded = unicodedata.normalize("NFKC", ch)
    if len(folded) != 1 or folded.isascii():
        return folded
    if unicodedata.category(folded) == "Nd":
        return str(unicodedata.decimal(folded))
    if unicodedata.category(folded) == "Zs":
        return " "
    return _confusables().get(folded, folded)


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


def find_figures(text: str, cell: bool = False, shown: bool = False) -> list[Figure]:
    """Figures that are claims, outside citations. ``shown``: the text is what a browser shows of a rendered page,
    which holds no markup to read through (a record's text is shown as written, its markup characters and all).

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
    if text.isascii() and not _DIGIT.search(text) and not any_number_word(text) and not _MULTIPLE_HINT.search(text):
        return []  # most prose: no number in digits or words (a superscript or circled digit is no \d: fold first)
    beyond = None if text.isascii() else _beyond_ascii(text)
    found = _found_folded(text, _without_citations(text), shown, cell, beyond)
    marks = (beyond and not beyond.isdisjoint(_MARK_CHARACTERS)) or "[" in text or "*" in text or "^" in text
    if marks and _has_mark(text):
        # and read with the footnote marks after words as spaces (``TTFT¹ 274``, ``274† ms``: a mark gives no value)
        spaced = _MARK_AFTER_WORD.sub(lambda m: " " * len(m.group()), text)
        for k, f in _found_folded(text, _without_citations(spaced), shown, cell, beyond).items():
            found.setdefault(k, f)
    return outermost(found)


_SCRIPT_DIGITS = "\u00b9\u00b2\u00b3\u2070-\u2079\u2080-\u2089"
_SCRIPT_LETTERS = "".join(
    ch
    for low, high in ((0x80, 0x3200), (0xA600, 0xAB80), (0x10780, 0x107C0), (0x1E000, 0x1E100), (0x1F100, 0x1F200))
    for ch in map(chr, range(low, high))
    if unicodedata.decomposition(ch).startswith(("<super>", "<sub>")) and unicodedata.normalize("NFKC", ch).isalpha()
)
"""Superscript and subscript letters (``ᵃ``, ``ʰ``, ``ₐ``; the blocks that hold them all): NFKC folds them to letters
(``TTFTᵃ`` would read as a word, ``TTFTa``)."""
_COMBINING_LETTERS = "".join(map(chr, [*range(0x0363, 0x0370), *range(0x1DD3, 0x1DF5), *range(0x10780, 0x107BB)]))
"""Letters set above a letter that no compatibility form folds: the combining Latin letters (``TTFTͣ``) and the
modifier letters of Latin Extended-F."""
_RAISED_LETTERS = re.escape(_SCRIPT_LETTERS + _COMBINING_LETTERS)
_RAISED = _SCRIPT_DIGITS + _RAISED_LETTERS
_SIGNS = "\u2020\u2021*\u00a7\u2016\u203b\u2051\u2217\u204e\u271d\u207a"
"""Daggers, asterisks and the other signs of a note (``§ ‖ ※ ⁑ ∗ ⁎ ✝ ⁺``; not ``¶``, a heading's permalink)."""
_OPENING, _CLOSING = "[\uff3b\u3014\u3010\u3016", "]\uff3d\u3015\u3011\u3017"
_INVISIBLE = "".join(f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in _IGNORABLE)
_NOTE_MARK = (
    rf"(?:[{_SIGNS}]+|\^[^\W_]{{1,3}}|[{re.escape(_OPENING)}]\^?[^{re.escape(_OPENING + _CLOSING)}\n]{{1,24}}"
    rf"[{re.escape(_CLOSING)}])"
)
"""A sign of a note, a caret and a short name, or a reference in brackets."""
_ANY_MARK = rf"(?:{_NOTE_MARK}|[{_RAISED}]+)"
_MORE_MARKS = rf"(?:[ \t\u00a0]*+[,;]?[ \t\u00a0]*+{_ANY_MARK})*"
_MARK_AFTER_WORD = re.compile(
    rf"(?<=[^\W_]|[)\]:.])[{_INVISIBLE}]*+{_NOTE_MARK}{_MORE_MARKS}"
    rf"|(?:(?<=[^\W\d_{_RAISED}])|(?<=[)\]:.\s]))[{_INVISIBLE}]*+[{_RAISED}]+{_MORE_MARKS}"
    rf"|(?<=\d)(?!\u02e2\u1d57|\u207f\u1d48|\u02b3\u1d48|\u1d57\u02b0)[{_INVISIBLE}]*+[{_RAISED_LETTERS}]+{_MORE_MARKS}"
)
"""A footnote's mark after a word: a dagger or another sign of a note, a caret and a short name (``^1``), or a
reference in brackets (``TTFT[1]``, ``TTFT[^a]``, ``TTFT［1］``, ``TTFT[citation needed]``) after a letter, a digit,
a closing bracket, a colon or a full stop; superscript or subscript digits or letters after a letter, such a closing
mark or a space (after a digit, digits are an exponent's: ``10⁹``); superscript letters after a digit but an
ordinal's (``52.3ᵃ``, not ``99ᵗʰ``); invisible characters before it, and several marks one after another, commas,
semicolons or spaces between them (``TTFT¹,²``, ``TTFT[1], [2]``, ``TTFTᵃ ᵇ``). Each is read as as many spaces."""
_MARK_CHARACTERS = frozenset(
    ch
    for ch in _SIGNS
    + _OPENING
    + "\u00b9\u00b2\u00b3"
    + _SCRIPT_LETTERS
    + _COMBINING_LETTERS
    + "".join(map(chr, [*range(0x2070, 0x207A), *range(0x2080, 0x208A)]))
    if not ch.isascii()
)
"""The characters beyond ASCII a mark begins with (``_MARK_AFTER_WORD``): a text without any, and without ``[``, ``*``
or ``^``, is not read again (a regular expression's scan of a page took 35 ns a character: 60 s over the pages of a
registry of 100,000 measurements)."""


_MARK_START = re.compile(rf"[{_SIGNS}{re.escape(_OPENING)}^{_RAISED}]")
"""Where a mark may begin: ``_MARK_AFTER_WORD`` is tried there only (at every character, it took 0.3 µs each)."""


def _has_mark(text: str) -> bool:
    """Whether ``text`` holds a footnote's mark after a word (``_MARK_AFTER_WORD``)."""
    for m in _MARK_START.finditer(text):
        start = m.start()
        while start and _invisible(text[start - 1]):  # the invisible characters before it are part of the mark
            start -= 1
        if _MARK_AFTER_WORD.match(text, start):
            return True
    return False


def _found_folded(text: str, seen: str, shown: bool, cell: bool, beyond: set[str] | None) -> dict[int, Figure]:
    """``_found`` of ``seen`` (``text`` as read, of the same length) as a reader sees it (``_folded``), and unless
    ``shown`` again with its markup left out; keyed by start in ``text``."""
    folded, where = _folded(seen, beyond)

    def span(start: int, end: int) -> tuple[int, int]:
        return (start, end) if where is None else where.span(start, end)

    found = _found(text, folded, span, cell)
    if not shown and _MARKUP_HINT.search(folded):  # and read with its markup left out (``52.3 <b>tok/s</b>``)
        unmarked = _MARKUP.sub("", folded)
        inner = _Where.of(folded, _MARKUP, {})

        def unmarked_span(start: int, end: int) -> tuple[int, int]:
            return span(*inner.span(start, end))

        for k, f in _found(text, unmarked, unmarked_span, cell).items():
            found.setdefault(k, f)
    return found


EDGE = "\x00"
"""Where an inline element begins or ends, in a text read two ways (``either_way``): nothing joined, a space apart."""
OPEN = "\x01"
CLOSE = "\x02"
"""Where a superscript or subscript begins and ends: nothing joined; apart, its beginning a paragraph's end and its
end a space. Raised or lowered after a word, its text is its own (a footnote's mark, an exponent: ``TTFT<sup>1</sup>``
gives the metric no value, as ``TTFT¹`` does not), and a figure in it is found (``Decode<sup>52.3 tok/s</sup>``,
``Decode<sub>52.3</sub> tok/s``); an empty one is nothing."""
_MARKS = re.compile(f"[{EDGE}{OPEN}{CLOSE}]+")
_EMPTY_SCRIPT = re.compile(f"{OPEN}{EDGE}*{CLOSE}")
_PLURAL = re.compile(r"s(?![\w/])")


def unmarked(text: str) -> str:
    """``text`` without the characters that mark edges (a browser shows none of them: it drops a NUL)."""
    # scans at memchr speed, not a character class (every page's text; most holds marks of every inline element)
    return (
        text.replace(EDGE, "").replace(OPEN, "").replace(CLOSE, "")
        if EDGE in text or OPEN in text or CLOSE in text
        else text
    )


def joined(marked: str) -> str:
    """A marked text read joined: its marks left out, and the blanks they stood between one space."""
    text = unmarked(marked)
    return _BLANKS.sub(" ", text) if "  " in text else text


def apart(marked: str) -> str:
    """A marked text read apart: each run of marks a space; a paragraph's end where a superscript or subscript
    begins (``OPEN``); nothing between a number and an ``s`` that makes a plural of it (``[RTX 4090](…)s``: as
    written, ``4090s`` is no figure)."""
    return _MARKS.sub(_apart_run, marked)


def _apart_run(m: re.Match[str]) -> str:
    run = m.group()
    while _EMPTY_SCRIPT.search(run):
        run = _EMPTY_SCRIPT.sub(EDGE, run)
    if OPEN in run:
        return "\n\n"
    text, start, end = m.string, m.start(), m.end()
    return "" if text[start - 1 : start].isdigit() and _PLURAL.match(text, end) else " "


def marked_header_unit(marked: str) -> str | None:
    """The unit a header cell states, its text marked (``EDGE``) and read joined or set apart (``TTFT<br>ms``)."""
    return header_unit(joined(marked)) or header_unit(apart(marked))


def either_way(marked: Iterable[str]) -> list[str]:
    """Figures of what a browser shows of rendered HTML, given as texts with ``EDGE`` at each inline element's edge
    (``OPEN`` and ``CLOSE`` at a superscript's or subscript's), read two ways: joined, each element's text run on from
    its neighbours' as plain inline text is laid out (``Notes<a>52.3 tok/s</a>`` shows ``Notes52.3 tok/s``), and apart,
    as a style may set an element off (a heading's permalink, a bold run, a button). A figure of either reading is a
    claim. The apart reading is read only where a mark stands inside a word (``_windows``), over the lines around
    it: its figures there that the joined reading of the same lines does not hold as often are added."""
    found: list[str] = []
    for text in marked:
        found += [f.text for f in find_figures(joined(text), shown=True)]
        for start, end in _windows(text):
            window = text[start:end]
            found += _apart_only(window) if len(window) > _REMEMBERED_WINDOW else _remembered_apart_only(window)
    return found


def _apart_only(window: str) -> tuple[str, ...]:
    """The figures of a window read apart that its joined reading does not hold as often."""
    found = []
    left = collections.Counter(_spaceless(f.text) for f in find_figures(joined(window), shown=True))
    for f in find_figures(apart(window), shown=True):
        if left[_spaceless(f.text)] > 0:  # the same figure, its edges set apart (``10 min`` for ``10min``)
            left[_spaceless(f.text)] -= 1
        else:
            found.append(f.text)
    return tuple(found)


_REMEMBERED_WINDOW = 1024
_remembered_apart_only = functools.lru_cache(maxsize=2048)(_apart_only)
"""``_apart_only`` of windows up to ``_REMEMBERED_WINDOW`` characters, remembered: the site's pages repeat the same few
windows (its navigation, a badge beside its label: 26,000 windows of 1,100 coverage pages are 113 texts). At most
some 40 MB: 2,048 windows of 1,024 characters beyond the Basic Multilingual Plane, and a figure every few characters."""


def _spaceless(text: str) -> str:
    return "".join(text.split())


_BLANKS = re.compile(r"[^\S\n]+")
_KEEPS_OFF = r"\w.@/\u2044-"
"""What keeps a figure from beginning right after it (``_BEFORE_NUMBER``), or a metric name (a letter, a digit)."""
_GOES_ON = r"\w.+*`~([-"
"""What may begin a figure (a digit, a dot, a sign, emphasis, a bracket; a letter: a metric name, a number word)."""
_ENDS_OFF = r"\w/"
"""What keeps a figure from ending right before it (a unit or a number runs on into a word)."""
_KEEPS_OFF_AT = re.compile(f"[{_KEEPS_OFF}]")
_GOES_ON_AT = re.compile(f"[{_GOES_ON}]")
_ENDS_OFF_AT = re.compile(f"[{_ENDS_OFF}]")


def _reads_as(folded: str, kind: re.Pattern[str]) -> bool:
    """Whether a character, as a reader sees it (``_fold``: ``folded``), is of ``kind``; an invisible one may hide a
    character that is."""
    return not folded or kind.match(folded) is not None


def _inside(text: str, start: int, end: int) -> bool:
    """Whether the marks at ``text[start:end]`` stand where reading them as a space may begin a figure the joined
    reading does not (after a character that keeps one from beginning, before one that may begin it) or end one
    (before a character that keeps one from ending), the characters beside them read as a reader sees them."""
    if start == 0 or end == len(text):
        return False
    before, after = text[start - 1], text[end]
    last = before if before.isascii() else _fold(before)[-1:]
    first = after if after.isascii() else _fold(after)[:1]
    return (_reads_as(last, _KEEPS_OFF_AT) and _reads_as(first, _GOES_ON_AT)) or (
        (not last or not last.isspace()) and _reads_as(first, _ENDS_OFF_AT)
    )


def _windows(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` read apart: the line of each run of marks inside a word (``_inside``) with the lines
    before and after it (a figure runs over one line break at most), overlapping spans merged. The marks are found
    with ``str.find`` (a regular expression's character class took 8 ms a megabyte: the build reads 1.8 GB), and
    those inside a span already taken are passed over, so each line is looked through a few times at most."""
    spans: list[tuple[int, int]] = []
    flat = text.replace(OPEN, EDGE).replace(CLOSE, EDGE) if OPEN in text or CLOSE in text else text
    size, at = len(text), flat.find(EDGE)
    while at >= 0:
        end = at + 1
        while end < size and flat[end] == EDGE:
            end += 1
        if end < size and not flat[end].isspace() and _inside(text, at, end):
            before = text.rfind("\n", 0, at)  # the end of the line before, if any
            start = text.rfind("\n", 0, before) + 1 if before >= 0 else 0
            after = text.find("\n", end)  # the end of the marks' line, if any
            following = text.find("\n", after + 1) if after >= 0 else -1
            stop = size if following < 0 else following
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(stop, spans[-1][1]))
            else:
                spans.append((start, stop))
            end = max(end, spans[-1][1])
        at = flat.find(EDGE, end)
    return spans


_MARKUP = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]{0,200})?/?>|[*_`]")
"""Inline markup a reader reads through: an HTML tag, emphasis and code marks."""
_LABEL_BEFORE = re.compile(
    r"(?i)\b(?:fig(?:ure)?|table|tab|column|col|row|section|sec|step|eq(?:uation)?|panel|chart|plot|appendix)"
    r"\.?[ \t\u00a0]*+$"
)
"""A label right before a number (``figure 3``, ``column 2``): the number names what follows it in brackets."""
_MARKUP_HINT = re.compile(r"</?[A-Za-z]|[*_`]")


def _found(text: str, folded: str, span: Callable[[int, int], tuple[int, int]], cell: bool) -> dict[int, Figure]:
    """The figures of ``folded`` by start in ``text`` (``span`` maps a folded span to the original's)."""
    found: dict[int, Figure] = {}
    matched = _matches(_FIGURE, folded)
    for m in matched:
        lead = m.start("lead")
        if m.group("mult"):
            a, b = span(lead, m.end())
            found[a] = Figure(a, b, text[a:b], folded[lead : m.end("mnum")], "x", None)
            continue
        unit = _canonical(m)
        first = folded[lead : m.end("first")]
        if unit == "s" and m.group("sp") == "" and not m.group("more") and "." not in first:
            continue  # "1990s", "30s" as decades or plurals
        if len(m.group("upar") or "") > 1 and _LABEL_BEFORE.search(folded, max(0, lead - 24), lead):
            continue  # "figure 3 (decode, tok/s)": a figure's, table's or column's number and what it shows
        items = [first, *_ITEM.findall(m.group("more") or "")]
        starts = [lead]
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
    ends = [m.end() for m in matched]
    for start, end, number, unit, hints in in_context(folded):
        a, b = span(start, end)
        found.setdefault(a, Figure(a, b, text[a:b], number, unit, hints))
        ends.append(end)
    ends += [m.end("num") for m in _CODE.finditer(folded)] + [m.end() for m in _CITED.finditer(folded)]
    for m in _joined(folded, ends):  # a number joined to a figure or a citation, and one joined to that
        a, b = span(m.start("num"), m.end())
        found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", None))
    if cell:  # a bare number outside every figure found: the figures by start, and how far those up to each reach
        starts = sorted(found)
        reach = list(itertools.accumulate((found[k].end for k in starts), max))
        for m in _BARE.finditer(folded):
            a, b = span(m.start("num"), m.end("num"))
            before = bisect.bisect_right(starts, a) - 1
            if before < 0 or reach[before] <= a:
                found.setdefault(a, Figure(a, b, text[a:b], m.group("num"), "", None))
    return found


def outermost(found: dict[int, Figure]) -> list[Figure]:
    """The figures by start, less each that lies inside another (``thousand tok/s`` in ``1.2 thousand tok/s``)."""
    out: list[Figure] = []
    for k in sorted(found):
        f = found[k]
        if out and f.end <= out[-1].end:
            continue
        out.append(f)
    return out


_HEADER_UNIT = re.compile(r"(?:^|(?<=[\s(\[,/]))\(?(?:" + _UNIT + r")\)?(?P<per>/[A-Za-z]+)?(?=[\s)\],;:↑↓]|$)")
_CELL_NUMBER = re.compile(
    r"(?<![\w.@/\u2044-])(?:[+-]?(?:" + _NUMBER + r")(?![\w.]\d|\w|,\d)|\d{1,3}(?P<dead>(?:,(?P<last>\d{3})){3,}+))"
)
"""A number of a table cell; or, where none begins, a chain of thousands groups (``dead``): see ``_matches``."""


def header_unit(header: str) -> str | None:
    """The unit a table column's header states (``Decode (tok/s)``, ``TTFT ms``, ``tok/s (decode)``,
    ``Decode (tok/s) ↑``), as canonical unit. In a header of more than four words the unit is in brackets or the
    last word: a sentence that says ``in a second job`` states no unit for its column."""
    folded, _ = _folded(header.strip().strip("*_`").strip())
    for m in _HEADER_UNIT.finditer(folded):
        short = len(folded.split()) <= 4
        if (
            short
            or m.group().startswith("(")
            or folded[: m.start()].endswith(("(", "["))
            or _ENDS.fullmatch(folded, m.end())
        ):
            return _canonical(m)
    return None


_ENDS = re.compile(r"[\s)\],;:↑↓]*")


def _canonical(m: re.Match[str]) -> str:
    """The canonical unit of a unit ``_HEADER_UNIT`` matched."""
    return next(canon for i, (_, canon) in enumerate(_UNITS) if m.group(f"u{i}"))


def named_unit(text: str) -> str | None:
    """The first unit a title names anywhere (``Decode tok/s, measured on one card``), as canonical unit: what a
    block of numbers alone below it is read in."""
    m = _HEADER_UNIT.search(_folded(text.strip())[0])
    return None if m is None else _canonical(m)


def column_figures(cell: str, unit: str) -> list[Figure]:
    """The numbers of a table cell under a header stating ``unit``: each is a figure of that unit (the header's unit
    applies to the column's cells), citations aside."""
    folded, where = _folded(_without_citations(cell))
    out = []
    for m in _matches(_CELL_NUMBER, folded):
        a, b = (m.start(), m.end()) if where is None else where.span(m.start(), m.end())
        out.append(Figure(a, b, cell[a:b], m.group().lstrip("+-"), unit, None))
    return out


def metric_lead(before: str) -> str | None:
    """The metric name right before a place in prose (``TTFT was ``, ``decode: ``, ``inter-token latency p99 ``), or
    None: what is written there states that metric's value."""
    m = _LEAD_AT_END.search(before[-80:])
    return m.group("word") if m else None


def canonical_unit(unit: str) -> str:
    """The canonical unit of a unit as written (``tok/s``, ``ms``, ``GiB`` → ``bytes``, ``queries per second`` →
    ``queries/s``), or ``""``."""
    m = re.fullmatch(_UNIT, unit.strip())
    if m:
        return next((canon for i, (_, canon) in enumerate(_UNITS) if m.group(f"u{i}")), "")
    rate = [f for f in in_context("1 " + unit.strip()) if f[0] == 0 and f[1] == len(unit.strip()) + 2]
    return rate[0][3] if rate else ""
