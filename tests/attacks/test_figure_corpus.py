"""The figure grammar against generated corpora: every spelling of a claim it must catch (numbers written in words
from zero to a billion, the digits of every Unicode script, every invisible code point between a number and its
unit, every look-alike of every letter of every unit of the metric vocabulary) is a figure, and an honest corpus
(counts, settings, dates, versions, identifiers, citations and quotes) holds none."""

from __future__ import annotations

import random
import sys
import unicodedata

import pytest

from evreg.claims import figures
from evreg.claims.citations import unit_of
from evreg.core.vocab import metrics

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
]
_ONES += ["seventeen", "eighteen", "nineteen"]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def words(n: int) -> str:
    """``n`` (0 to 10**9) in English words, as people write it (``one hundred and twelve``, ``forty-two``)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " and " + words(rest))
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if n >= size:
            rest = n % size
            head = words(n // size) + " " + name
            return head + ("" if rest == 0 else (" and " if rest < 100 else " ") + words(rest))
    raise ValueError(n)


NUMBERS = sorted({*range(0, 1001), *random.Random(7).sample(range(1001, 10**9 + 1), 1500), 10**6, 10**9})
WORD_UNITS = ["tok/s", "tokens per second", "ms", "milliseconds", "seconds", "percent", "GB", "gigabytes", "watts"]


def test_numbers_in_words_from_zero_to_a_billion_are_figures() -> None:
    """Each of 2,500 numbers written in words, with each unit a number in words takes: one figure, the whole of it."""
    missed = []
    for n in NUMBERS:
        for unit in WORD_UNITS:
            text = f"it reached {words(n)} {unit} here"
            found = figures.find_figures(text)
            if [f.text for f in found] != [f"{words(n)} {unit}"]:
                missed.append((text, [f.text for f in found]))
    assert missed == [], missed[:10]
    assert len(NUMBERS) * len(WORD_UNITS) > 20_000


LEADS = ["the decode throughput was {}", "TTFT {} on the rerun", "it improved by {}", "it was {} faster than eager",
         "{} queries per second"]  # fmt: skip


def test_numbers_in_words_are_read_as_the_number_they_say_in_every_context() -> None:
    """The same 2,500 numbers in words, and with decimals (``... point five``), after a metric name, after a word of
    change, before a comparison and before a rate: one figure, whose number is the number the words say."""
    missed, tried = [], 0
    for n in NUMBERS:
        for spelled, number in ((words(n), str(n)), (f"{words(n)} point five", f"{n}.5")):
            for lead in LEADS:
                text = lead.format(spelled)
                tried += 1
                if [f.number for f in figures.find_figures(text)] != [number]:
                    missed.append((text, [(f.text, f.number) for f in figures.find_figures(text)]))
    assert missed == [] and tried > 20_000, missed[:10]


def _digit_zeros() -> list[int]:
    """The zero of every run of ten decimal digits Unicode has (category Nd): one per script or style."""
    return [
        c
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) == "Nd" and unicodedata.decimal(chr(c)) == 0
    ]


def test_the_digits_of_every_script_are_read_as_digits() -> None:
    zeros = _digit_zeros()
    assert len(zeros) > 60
    missed = []
    for zero in zeros:
        five, two, three = chr(zero + 5), chr(zero + 2), chr(zero + 3)
        for text, number in ((f"runs at {five}{two}.{three} tok/s", "52.3"), (f"TTFT {two}{five} ms", "25")):
            found = figures.find_figures(text)
            if [figures._folded(f.number)[0] for f in found] != [number]:
                missed.append((hex(zero), text, [f.text for f in found]))
    assert missed == []


def _invisible() -> list[int]:
    """Every default-ignorable code point (DerivedCoreProperties) and every format character (category Cf)."""
    ranges = [c for low, high in figures._IGNORABLE for c in range(low, high + 1)]
    return sorted({*ranges, *(c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")})


def test_no_invisible_code_point_between_number_and_unit_hides_a_figure() -> None:
    hidden = _invisible()
    assert len(hidden) > 4000
    for make in (lambda c: f"52.3{c} tok/s", lambda c: f"52.3 {c}tok/s", lambda c: f"5{c}2.3 tok/s"):
        text = "; ".join(make(chr(c)) for c in hidden)
        found = figures.find_figures(text)
        assert len(found) == len(hidden), [make(chr(c)) for c in hidden if not figures.find_figures(make(chr(c)))][:5]


def _units() -> list[str]:
    """The units of the metric vocabulary, as a figure writes them after its number."""
    out = {unit_of(m) for m in metrics()} - {""}
    return sorted(u for u in out if any(ch.isalpha() for ch in u) and figures.find_figures(f"52.3 {u}"))


def test_a_look_alike_of_any_letter_of_any_unit_is_that_letter() -> None:
    """Each unit of the vocabulary, each of its letters replaced by each character Unicode lists as confusable with
    it: still that unit after that number."""
    alike: dict[str, list[str]] = {}
    for ch, ascii_form in figures._confusables().items():
        alike.setdefault(ascii_form, []).append(ch)
    units = _units()
    assert {"tok/s", "ms"} <= set(units)
    tried, missed = 0, []
    for unit in units:
        for i, letter in enumerate(unit):
            for other in alike.get(letter, []):
                text = f"reached 52.3 {unit[:i]}{other}{unit[i + 1 :]} here"
                tried += 1
                if not figures.find_figures(text):
                    missed.append(text)
    assert missed == [] and tried > 300, missed[:10]


def test_a_number_after_any_metric_name_of_the_vocabulary_is_a_figure() -> None:
    """Every name the metric vocabulary gives (labels, spoken names), in every case, with each connective a sentence
    puts between a name and its value: the number is a figure, unless what follows it says it counts something."""
    leads = ["{} 52.3", "{}: 52.3", "{} was 52.3", "{} of 52.3", "{} p99 52.3", "{} (mean) = 52.3", "{} ~52.3"]
    tried, missed = 0, []
    for name in figures.METRIC_NAMES:
        for spelling in (name, name.upper(), name.title()):
            for form in leads:
                text = "the " + form.format(spelling) + " here"
                tried += 1
                if [f.number for f in figures.find_figures(text)] != ["52.3"]:
                    missed.append(text)
            counted = f"the {spelling} of 512 tokens over 32 concurrent users, 6/6 passed"
            if figures.find_figures(counted):
                missed.append(counted)
    assert missed == [] and tried > 1000, missed[:10]


NOUNS = ["tokens", "tok", "requests", "queries", "samples", "images", "frames", "words", "steps", "iterations", "it"]
PER = ["/s", "/sec", " / second", " per second", " per sec", " a second", " each second", " per minute", "/min", "/h"]


def test_any_noun_per_unit_of_time_after_a_number_is_a_figure() -> None:
    """A rate is a claim whatever it counts: each noun, with a qualifying word or none and any scale, per each unit of
    time, after a number in each notation."""
    tried, missed = 0, []
    for noun in NOUNS:
        for per in PER:
            for number in ["52.3", "1,234", "1.5k", "1.5M", "2.1 thousand", "3 million", ".5"]:
                for qualifier in ["", "output ", "generated "]:
                    text = f"it reached {number} {qualifier}{noun}{per} then"
                    tried += 1
                    if not figures.find_figures(text):
                        missed.append(text)
    assert missed == [] and tried > 2000, missed[:10]


COMPARING = [
    "faster",
    "slower",
    "higher",
    "lower",
    "better",
    "more throughput",
    "less latency",
    "as fast",
    "over eager",
]


def test_a_multiple_in_words_is_a_figure() -> None:
    """``N times faster``, ``N-fold``, ``Nfold`` with N in digits or words, and ``twice``/``half``... with a comparing
    word or a metric name after ``the``: each a figure."""
    tried, missed = 0, []
    for n in [*map(str, range(2, 21)), "1.5", *(words(k) for k in range(2, 21)), "two hundred"]:
        for form in [f"{n} times {{}}", f"{n}-fold {{}}", f"a {n} fold speedup"]:
            for comparing in COMPARING:
                text = "it is " + form.format(comparing) + " here"
                tried += 1
                if not figures.find_figures(text):
                    missed.append(text)
        if n.isalpha() and not figures.find_figures(f"a {n}fold gain"):
            missed.append(f"a {n}fold gain")
    for word in ["twice", "thrice", "double", "triple", "half", "Twice", "HALF"]:
        for after in [*COMPARING, "the latency", "the TTFT", "the decode throughput"]:
            text = f"it is {word} {after} here"
            tried += 1
            if not figures.find_figures(text):
                missed.append(text)
    assert missed == [] and tried > 1000, missed[:10]


CHANGES = ["improved by", "increased by", "dropped to", "rose to", "fell by", "gained", "regressed by", "faster by"]


def test_a_number_after_a_word_of_change_or_before_a_comparison_is_a_figure() -> None:
    """``improved by 12.5``, ``dropped to 30``: the size or result of a change is measured; so is ``12.5 faster``."""
    tried, missed = 0, []
    for number in ["12.5", "30", "1,234", ".5"]:
        for change in CHANGES:
            for text in (f"decoding {change} {number} after the patch", f"it {change} ~{number} overall"):
                tried += 1
                if not figures.find_figures(text):
                    missed.append(text)
        for comparing in ["faster", "slower", "higher", "lower", "better", "worse", "quicker"]:
            tried += 1
            if not figures.find_figures(f"it is {number} {comparing} than eager"):
                missed.append(f"it is {number} {comparing} than eager")
    assert missed == [] and tried > 80, missed[:10]


HONEST = [
    "12 prompts of 512 tokens, one card, 3 runs, two warm-up requests and 64 concurrent users",
    "TP4, MTP3, Q4_K_M, D511 window, 32K context, a 7B model on an RTX 5090 and 2 x H100",
    "measured on 2026-08-23 and again on 23 August 2026 at 14:05",
    "vLLM 0.9.1, llama.cpp b5163 (8cf427ff), v1.2.3, CUDA 12.4, Python 3.11",
    "commit a3561ef8c2d1, run q38-a3561ef8-tp4, issue #273",
    "memory ({{ set:32 GB }}), a timeout [{{ set:30 s }}] and power {{ set:300 W }}",
    "reaches {{ m:run-1.decode_tok_s[0] }} at TP4, {{ median:m:run-1.decode_tok_s }} over 5 repeats",
    "the log says {{ e:/runs/0/reason = 0.81 GiB }}",
    "ran 3 times, 1.5 times the batch, the second run, one of the seconds, 5/25 outputs differed",
    "twice as many runs, double the batch size, half of the prompts, 2 runs a day, the 3 cards per node",
    "decode 512 tokens, the prefill of 4 requests, TTFT at 32 concurrent, acceptance 6/6, decode at 32K context",
    "up to 512 output tokens, increased by 4 prompts, scaled up to 64 users, 2 more runs, version 2 is better",
]


@pytest.mark.parametrize("text", HONEST)
def test_the_honest_corpus_holds_no_figure(text: str) -> None:
    assert figures.find_figures(text) == []


def test_explain_lists_every_accepted_form_and_its_free_contexts_hold_no_figure() -> None:
    """`evreg explain orphan-number` shows what stands instead of a typed figure: every form it lists parses as a
    citation form, and the free contexts it names hold no figure."""
    from evreg.claims import citations
    from helpers import evreg

    shown = evreg("explain", "orphan-number").stdout
    for form, _ in citations.ACCEPTED_FORMS:
        assert form in shown
    assert figures.find_figures(citations.ACCEPTED_FORMS[-1][1].removeprefix("free: ")) == []
    example = "{{ m:run-1.decode_tok_s[0] }}, {{ median:m:run-1.decode_tok_s }} and {{ set:32 GB }}"
    assert [type(f).__name__ for f in citations.parse(example)] == ["Citation", "Statistic", "Setting"]
