"""Numbers written in words, read as the digits they stand for (``fifty-two point three`` is ``52.3``, ``one and a
half`` is ``1.5``, ``1.2 thousand`` is ``1200``): the figure grammar reads text with them written in digits, so every
rule that makes a number a claim (a unit, a metric name, a rate, a word of change, a comparison) applies to a number
however it is spelled."""

from __future__ import annotations

import re
from decimal import Decimal

_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
          "seventeen": 17, "eighteen": 18, "nineteen": 19}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
WORDS = {**_ONES, **_TEENS, **_TENS, **_SCALES}
"""Every word of an English cardinal number up to the trillions."""

_BLANK = r"[ \t\u00a0]"
_ALTERNATIVES = sorted(WORDS, key=len, reverse=True)
_CLASS = "[^" + "".join(f"\\x{c:02x}" for c in range(128) if chr(c).lower() not in {w[0] for w in WORDS}) + "]"
_TIED = "|".join(f"(?<={w[0]}){w[1:]}" for w in _ALTERNATIVES)
_WORD = re.compile(_CLASS + r"(?<!\w.)(?i:" + _TIED + r")(?!\w)")
"""A number word, whole (``seven``, not in ``seventy`` or ``someone``): led by a class of first letters, so a search
skips every other character at the engine's speed."""
_NEXT = re.compile(
    r"(?i)(?P<gap>" + _BLANK + r"*+-" + _BLANK + r"*+|" + _BLANK + r"++(?P<and>and" + _BLANK + r"++)?)"
    r"(?P<word>" + "|".join(_ALTERNATIVES) + r")(?!\w)"
)
_POINT = re.compile(
    r"(?i)(?:"
    + _BLANK
    + r"++|"
    + _BLANK
    + r"*+-"
    + _BLANK
    + r"*+)point(?P<digits>(?:"
    + _BLANK
    + r"++|"
    + _BLANK
    + r"*+-"
    + _BLANK
    + r"*+)"
    r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)(?!\w)"
    r"(?:(?:" + _BLANK + r"++|" + _BLANK + r"*+-" + _BLANK + r"*+)(?:zero|oh|one|two|three|four|five|six|seven|eight|"
    r"nine)(?!\w))*+)"
)
_AND_A_PART = _BLANK + r"++and" + _BLANK + r"++an?" + _BLANK + r"++(?P<part>half|quarter)(?!\w)"
_PART = re.compile(r"(?i)" + _AND_A_PART)
_LEAD = re.compile(
    r"(?i)(?:(?<![\w.,])(?P<digits>\d+(?:\.\d+)?)|(?<!\w)(?P<article>an?))" + _BLANK + r"*+-?" + _BLANK + r"*+$"
)
"""What may stand before a scale word as its multiplier: digits (``1.2 thousand``) or an article (``a million``)."""
_PARTS = {"half": Decimal("0.5"), "quarter": Decimal("0.25"), "tenth": Decimal("0.1")}
_DIGIT_WORDS = {**{w: str(v) for w, v in _ONES.items()}, "oh": "0"}


def _follows(last: str, word: str) -> bool:
    """Whether ``word`` continues a number whose last word is ``last`` (``twenty one``, ``one hundred``); ``five
    six`` or ``one one`` are two numbers."""
    if last == "zero":
        return False
    if word in _SCALES:
        return last not in _SCALES or _SCALES[word] > _SCALES[last]
    if last in _TENS:
        return word in _ONES and word != "zero"
    return last in _SCALES and word != "zero"


_NOT_ARTICLE = (
    r"(?:per|point|and|half|quarter|third|tenth|hundredth|thousandth|hundred|thousand|million|billion|trillion|times|"
    r"fold|faster|slower|quicker|higher|lower|better|worse|more|less|percentage|permil\w*|promil\w*|basis)(?![a-z])"
)
_ONE_AS_WORD = re.compile(
    r"(?i)"
    + _BLANK
    + r"++(?!"
    + _NOT_ARTICLE
    + r")(?P<word>[a-z]{3,}+)(?![\w/-]|"
    + _BLANK
    + r"*+(?:/|per\b|an?"
    + _BLANK
    + r"++sec))"
)
"""A word after a lone ``one`` that makes it a pronoun or an article (``one reason``, ``one thing``), not a number:
any word of three letters or more but a unit (``spelled``'s ``unit``), a scale, a fraction or a comparing word,
unless a rate goes on after it (``one kilotoken per second``)."""
_HALF_A = re.compile(
    r"(?i)(?<!\w)(?:an?" + _BLANK + r"++)?(?P<part>half|quarter|tenth)(?:" + _BLANK + r"++(?:of" + _BLANK + r"++)?an?)?"
    r"(?=(?:" + _BLANK + r"++|-)(?:(?:milli|micro|nano)?seconds?|secs?|ms|minutes?|mins?|hours?|hrs?|percent|"
    r"per[ -]?cent|[KMGT]i?B)\b)"
)
"""``half a second``, ``a quarter of a second``, ``half-second``, ``half a percent``: a part of one unit."""
_PART_WORD = re.compile(r"(?i)half|quarter|tenth")
_DIGITS_AND_PART = re.compile(r"(?i)(?<![\w.,])(?P<digits>\d+)" + _AND_A_PART)
"""Digits and a part in words (``52 and a half``)."""


def spelled(text: str, unit: re.Pattern[str] | None = None) -> list[tuple[int, int, str]]:
    """Each number written in words in ``text``: its span and its digits (``one hundred and twelve`` -> ``112``,
    ``twelve point five`` -> ``12.5``, ``two and a half`` -> ``2.5``, ``a thousand`` -> ``1000``); a lone ``one``
    before a word that ``unit`` (matched where the word starts) does not read as a unit is an article, no number.
    Time linear in the text: each word is read once."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    while m := _WORD.search(text, pos):
        start, end, words = m.start(), m.end(), [m.group().lower()]
        while (n := _NEXT.match(text, end)) and (
            _follows(words[-1], word := n.group("word").lower()) and (not n.group("and") or words[-1] in _SCALES)
        ):
            words.append(word)
            end = n.end()
        value = Decimal(0)
        current = Decimal(0)
        if words[0] in _SCALES and (lead := _LEAD.search(text, max(0, start - 40), start)):
            current = Decimal(lead.group("digits") or 1)
            start = lead.start()
        for word in words:
            if word == "hundred":
                current = (current or Decimal(1)) * 100
            elif word in _SCALES:
                value += (current or Decimal(1)) * _SCALES[word]
                current = Decimal(0)
            else:
                current += WORDS[word]
        value += current
        if (
            words == ["one"]
            and (article := _ONE_AS_WORD.match(text, end))
            and not (unit and unit.match(text, article.start("word")))
            and not _POINT.match(text, end)
        ):
            pos = end  # ``one reason``: an article, not a number
            continue
        digits = format(value, "f")
        if "." in digits:
            digits = digits.rstrip("0").rstrip(".")
        if point := _POINT.match(text, end):
            digits += "." + "".join(_DIGIT_WORDS[w.lower()] for w in re.findall(r"[A-Za-z]+", point.group("digits")))
            end = point.end()
        elif part := _PART.match(text, end):
            digits = format(Decimal(digits) + _PARTS[part.group("part").lower()], "f")
            end = part.end()
        out.append((start, end, digits))
        pos = end
    if _PART_WORD.search(text):
        halves = [(m.start(), m.end(), format(_PARTS[m.group("part").lower()], "f")) for m in _HALF_A.finditer(text)]
        out = sorted(out + [h for h in halves if not any(s < h[1] and h[0] < e for s, e, _ in out)])
    if " and " in text:
        parts = [
            (m.start(), m.end(), format(Decimal(m.group("digits")) + _PARTS[m.group("part").lower()], "f"))
            for m in _DIGITS_AND_PART.finditer(text)
        ]
        out = sorted(out + [p for p in parts if not any(s < p[1] and p[0] < e for s, e, _ in out)])
    return out


def any_number_word(text: str) -> bool:
    """Whether ``text`` holds a number word or a part of a unit in words (a text without one, nor digits, holds no
    figure)."""
    return _WORD.search(text) is not None or (_PART_WORD.search(text) is not None and _HALF_A.search(text) is not None)
