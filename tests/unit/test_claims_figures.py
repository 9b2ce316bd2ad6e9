"""The figure grammar (``evreg.claims.figures``): every spelling of a number with a unit, a multiplier or a
metric word is a figure, wherever invisible or compatibility characters stand in it; names of parts, models and
versions are not."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.claims import citations, figures
from evreg.claims.figures import find_figures
from evreg.records.models import claims_in

# -- spellings that are figures ----------------------------------------------------------------------------------------


FIGURE_SPELLINGS = [
    "reaches ⁵² tok/s",  # superscript digits only (no \d)
    "reaches 52.3\u200e tok/s",  # a left-to-right mark (format character) between number and unit
    "reaches 52.3\u2066 tok/s",  # a directional isolate
    "reaches 52.3\u034f tok/s",  # a combining grapheme joiner
    "TTFT=274 at TP2",
    "TTFT:274 at TP2",
    "3.2X faster than eager",
    "52.3 tokens per sec",
    "52 tokens a second",
    "2.5 seconds",
    "274 milliseconds to first token",
    "274 msec",
    "3.1 req/s served",
    "52.3 qps",
    "decode ~52.3",
    "decode rate 52.3",
    "decode speed of 52.3",
    "52.3 **tok/s**",  # emphasis on the unit (the build does not see it either)
    "52.3 [tok/s](#)",  # a link on the unit
]


@pytest.mark.parametrize("text", FIGURE_SPELLINGS)
def test_figure_spellings_are_figures(text: str) -> None:
    assert find_figures(text), text


MORE_SPELLINGS = [
    "52.3 tk/s",
    "52.3 tok s⁻¹",
    "52.3 output tok/s",  # a word between the number and the unit
    "a 52.3-tok/s run",  # a hyphen between the number and the unit
    "D 52.3 at TP4",  # the letter notation with a space
    "D=52.3",
    "8x faster",  # an integer multiplier that compares
    "2× over eager",
    "was 3x.",
    "1.2 kW at the wall",
    "50 TFLOPS",
    "warm-up took 5 min",
    "8 hours",
]


@pytest.mark.parametrize("text", MORE_SPELLINGS)
def test_more_spellings_are_figures(text: str) -> None:
    assert find_figures(text), text


@pytest.mark.parametrize(
    "text",
    [
        *[
            "TTFT\u200b[1] 274",
            "TTFT\u200bᵃ 274",
            "TTFT\u00ad¹ 274",
            "TTFT\u2060† 274",
            "TTFT［1］ 274",
        ],
        "TTFT〔1〕 274",
        *["TTFT[12345] 274", "TTFT[1, 2] 274", "TTFT[1;2] 274", "TTFT[ 1 ] 274", "TTFT[citation needed] 274"],
        *["TTFT[^note1] 274", "TTFT[1]; [2] 274", "TTFT¹, ² 274", "TTFTᵃ ᵇ 274", "TTFT[1]ᵃ 274", "TTFT[1]† 274"],
        *["TTFT ᵃ 274", "TTFT (ms)ᵃ 274", "decode (tok/s)[1] 52.3", "TTFT:ᵃ 274", "Decode reached 52.3ᵃ tok/s."],
        *["TTFT was 274ᵃ ms.", "TTFT p99ᵃ 274", "TTFT§ 274", "TTFT‖ 274", "TTFT※ 274", "TTFT⁺ 274", "TTFT^1 274"],
        *["TTFT*¹ 274", "TTFTͣ 274", "TTFT𐞀 274"],
    ],
)
def test_a_footnote_mark_of_any_spelling_hides_no_value(text: str) -> None:
    """Invisible characters before it, other brackets and contents, lists with spaces, marks after a bracket or a
    colon, superscript letters after a number (but an ordinal's), other signs of a note, combining letters."""
    assert find_figures(text), text


@pytest.mark.parametrize(
    ("text", "figure"),
    [
        *[("TTFT¹ 274 on one card", "274"), ("TTFT₅₀ 274", "274"), ("274† ms", "274† ms"), ("Decode‡ 52.3", "52.3")],
        ("TTFT¹,² 274", "274"),
        *[("TTFTᵃ 274", "274"), ("TTFTᵃ,ᵇ 274", "274"), ("TTFT[1] 274", "274"), ("TTFT[^2] 274", "274")],
        *[("TTFT[a],[b] 274", "274"), ("TTFT[1,2] 274", "274"), ("TTFT†,‡ 274", "274")],
        ("52.3[1] tok/s", "52.3[1] tok/s"),
    ],
)
def test_a_footnote_mark_after_a_word_hides_no_value(text: str, figure: str) -> None:
    """A footnote's mark between a metric and its value is read past, as ``TTFT<sup>1</sup> 274`` is on a page."""
    assert [f.text for f in find_figures(text)] == [figure]


@pytest.mark.parametrize(
    "text",
    [
        *["TTFT¹ is measured from the first byte.", "H₂O cools it.", "Qwen³ is out.", "TTFTᵃ is measured."],
        *["TTFT at the 99ᵗʰ percentile is measured.", "TTFT[1] is measured.", "Run x[0] 3 times, see [1] 274."],
    ],
)
def test_a_footnote_mark_alone_is_no_figure(text: str) -> None:
    assert find_figures(text) == [], text


def test_every_superscript_and_subscript_letter_is_a_mark_after_a_word() -> None:
    """The blocks searched for them hold every one Unicode has."""
    raised = ("<super>", "<sub>")
    scripts = (chr(c) for c in range(0x80, 0x110000) if unicodedata.decomposition(chr(c)).startswith(raised))
    every = {ch for ch in scripts if unicodedata.normalize("NFKC", ch).isalpha()}
    assert set(figures._SCRIPT_LETTERS) == every


@pytest.mark.parametrize("text", ["at 3.35 TB/s of bandwidth", "3350 GBps", "~1.8TB/s"])
def test_terabytes_per_second_is_a_figure(text: str) -> None:
    assert figures.find_figures(text), text


@pytest.mark.parametrize("text", ["8x faster", "100x faster", "was 3x.", "1000x faster than eager"])
def test_multipliers_that_compare_stay_figures(text: str) -> None:
    assert [f.unit for f in find_figures(text)] == ["x"], text


# -- names and versions that are not -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["4x RTX 5090", "4x4 grid", "A 2.5 release", "min_p 0.75", "pmin075", "TP4-8", "1990s", "Xeon CPU @ 2.60GHz"],
)
def test_neighbours_of_those_spellings_are_not(text: str) -> None:
    assert find_figures(text) == [], text


@pytest.mark.parametrize(
    "text",
    ["Host: Ryzen 9 7950X.", "Threadripper 7980X, 256 cores", "RX 7900X vs RX 7900 XTX", "Ryzen 5 3600X"],
)
def test_a_part_number_ending_in_x_is_no_multiplier(text: str) -> None:
    assert [f.text for f in find_figures(text) if f.unit == "x"] == [], text


@pytest.mark.parametrize(
    "text",
    [
        "Llama 3.1 8B Instruct",
        "Qwen3-30B-A3B",
        "Mixtral 8x7B",
        "PCIe 5.0 x16",
        "CUDA 12.8",
        "Q4_K_M",
        "Gemma 3 27B",
        "MI300X",
        "Core i9-10980XE",
        "Ryzen 7 7800X3D",
        "ISL 1024 OSL 128",
        "concurrency 32",
        "2:4 sparsity",
    ],
)
def test_honest_hardware_and_model_names_are_no_figures(text: str) -> None:
    assert find_figures(text) == [], text


# -- cells, thousands groups and the letter notation -------------------------------------------------------------------


def test_a_bare_decimal_outside_a_cell_is_not_a_figure() -> None:
    assert claims_in("summary", "Llama 3.3 70B at 1.5 times the batch") == []
    assert [f.text for f in claims_in("label", "93.551 strict", cell=True)] == ["93.551"]


def test_the_letter_notation_takes_thousands_groups() -> None:
    assert [(f.number, f.metric_hints) for f in figures.find_figures("P5,172 · D25.6")] == [
        ("5,172", ("prefill_tok_s",)),
        ("25.6", ("decode_tok_s",)),
    ]
    [c] = citations.parse("{{ m:r.prefill_tok_s[0] | 0 | nounit | sep }}")
    assert citations.resolve(c, {"r": {"metrics": {"prefill_tok_s": [5172.4]}}}).text == "5,172"  # type: ignore[union-attr]


# -- invisible and compatibility characters ----------------------------------------------------------------------------


def test_every_invisible_character_hides_nothing_from_the_page_scan() -> None:
    """Every format character Unicode has (category Cf), wherever it is, is dropped before the scan: a figure split
    by any of them is still found, at its place in the original text."""
    import sys
    import unicodedata

    cf = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) > 150
    text = "".join(f"decode · 52{chr(c)}.3 tok/s; " for c in cf)
    found = figures.find_figures(text)
    assert [f.number for f in found] == ["52.3"] * len(cf)
    assert [f.text for f in found] == [f"52{chr(c)}.3 tok/s" for c in cf]


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            "0123456789. tok/s,x½²µ\u200b\u00ad\u2066…ﬁ①\ufeff\u0301e\u043e\u2800\u0665\ufe00\u2215"
        ),
        max_size=60,
    )
)
def test_folding_by_translation_is_folding_character_by_character(text: str) -> None:
    """The scan folds only the characters that change (fast): the same text and the same index of each character's
    origin as folding one character at a time."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        folded = figures._fold(ch) if ord(ch) > 127 else ch
        out.append(folded)
        where.extend([i] * len(folded))
    got, got_where = figures._folded(text)
    assert got == "".join(out)
    assert [got_where[k] if got_where is not None else k for k in range(len(got))] == where


@pytest.mark.parametrize(
    "text",
    [
        "It runs at 52.3\u2800tok/s",  # a braille blank between number and unit
        "It runs at 61.7\ufe00 tok/s",  # a variation selector
        "It runs at 61.7\u180b tok/s",  # a Mongolian free variation selector
        "It runs at 61.7\u17b4 tok/s",  # a Khmer inherent vowel (invisible)
        "It runs at 70.1 t\u043ek/s",  # Cyrillic o
        "with 24 G\u0392 of memory",  # Greek capital beta
        "at 45.6 tok\u2215s",  # a division slash
        "after 12\u3164ms",  # a Hangul filler
        "runs at \u0665\u0662 tok/s",  # Arabic-Indic digits
        "runs at \u096b\u0968 tok/s",  # Devanagari digits
        "runs at \U0001d7d3\U0001d7d0 tok/s",  # mathematical bold digits
    ],
)
def test_text_is_folded_as_a_reader_sees_it_before_the_grammar_reads_it(text: str) -> None:
    """Default-ignorable characters dropped, blank-looking ones read as a space, digits of every script read as
    digits, Unicode's confusables read as the ASCII character they look like: the figure is found, spanning the
    original text."""
    [fig] = figures.find_figures(text)
    assert text.endswith(fig.text) or fig.text in text


@pytest.mark.parametrize(
    ("text", "shown"),
    [("(32 GB)", "32 GB"), ("memory (52.3 tok/s) here", "52.3 tok/s"), ("52.3 (tok/s)", "52.3 (tok/s)")],
)
def test_a_figure_takes_a_closing_parenthesis_only_with_its_opening_one(text: str, shown: str) -> None:
    assert [f.text for f in figures.find_figures(text)] == [shown]


@pytest.mark.parametrize("text", ["Card memory ({{ set:32 GB }}) is fixed.", "a timeout [{{ set:30 s }}]"])
def test_a_setting_in_punctuation_is_still_a_setting(text: str) -> None:
    from evreg_rules.prose import form_problems

    assert list(form_problems(text, "caveat", {})) == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="Ta1 .,;:)[]^*†ᵃ¹\u200b\u00adº", max_size=30))
def test_a_mark_is_found_where_the_pattern_finds_one(text: str) -> None:
    """The scan for marks tries the pattern only where a mark may begin: it finds what a search of every place finds."""
    assert figures._has_mark(text) == (figures._MARK_AFTER_WORD.search(text) is not None)
