"""How hand-written Markdown and rendered HTML are read (``evreg.claims.markdown``): what is code and what is
prose, and the text a page shows, which the figure scan reads."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evreg.claims import htmlscan, markdown
from evreg.claims.markdown import html_figures as orphans_in_html
from helpers import RESULTS_PAGE

# -- code and prose ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Write code in a `<pre>` element.\n\nDecode reaches 52.3 tok/s.",
        "```\n~~~\n```\n\nDecode reaches 52.3 tok/s.",
        "```\nx\n````\ny\n```\n\nDecode reaches 52.3 tok/s.",
        "```x```\n\nDecode reaches 52.3 tok/s.\n\n```x```",
    ],
)
def test_prose_after_what_is_not_code_is_checked(text: str) -> None:
    assert any("52.3 tok/s" in line for _, line in markdown.prose(text))


def test_code_stays_code() -> None:
    for text in ("```\n52.3 tok/s\n```", "~~~~\n```\n52.3 tok/s\n~~~~", "<pre>\n52.3 tok/s\n</pre>", "`52.3 tok/s`"):
        assert not any("52.3" in line for _, line in markdown.prose(text)), text


def test_code_is_fenced_indented_or_pre_alike_in_validate_and_build() -> None:
    code = {n for n, _, is_code in markdown.lines(RESULTS_PAGE) if is_code}
    assert code == {8, 10, 11, 12}
    assert 5 not in code  # a table row is prose


@given(st.text(alphabet="ab`~ \n", max_size=60))
def test_markdown_code_split_gives_the_text_back(text: str) -> None:
    from evreg.claims import markdown

    assert "\n".join(line for _, line, _ in markdown.lines(text)) == text
    for _, line, code in markdown.lines(text):
        if not code:
            assert "".join(t for t, _ in markdown.spans(line)) == line


# -- the text a page shows ---------------------------------------------------------------------------------------------


def test_rendered_page_scan_catches_figures_outside_the_citation_path() -> None:
    assert orphans_in_html("<p>reached <b>52.3</b> tok/s</p>") == ["52.3 tok/s"]  # read as shown: one figure
    assert orphans_in_html("<p>reached 52.3 tok/s</p>") == ["52.3 tok/s"]
    assert orphans_in_html('<p><a class="evreg-cite" href="x">52.3 tok/s</a></p>') == []
    assert orphans_in_html("<pre><code>52.3 tok/s</code></pre>") == []


_PIECES = [
    "<b>",
    "</b>",
    "<sup>",
    "</sup>",
    "<a href='x'>",
    "</a>",
    "<p>",
    "</p>",
    "<!-- c -->",
    " ",
    "\n",
    "Notes",
    "52.3",
    " tok/s",
    "TTFT",
    " 274",
    "&amp;",
    "&#53;",
    "H",
    "2",
    "s",
    ".",
    "-",
    "\u00b6",
    "\u200b",
    "\u0665",
    "<br>",
    "%",
    "\x00",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_the_apart_reading_only_adds_figures(pieces: list[str]) -> None:
    """Edges left out, the marked text is the text a browser shows; the figures read with elements set apart are
    those read with them joined, and perhaps more."""
    from collections import Counter

    from evreg.claims import figures

    content = "".join(pieces)
    marked = markdown.shown(content, apart=True)
    assert figures.joined(marked) == markdown.shown(content)
    joined = Counter(f.text for f in figures.find_figures(markdown.shown(content), shown=True))
    assert not joined - Counter(orphans_in_html(content))


@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.integers(min_value=1, max_value=3))
def test_a_remembered_window_reads_as_a_fresh_one(pieces: list[str], copies: int) -> None:
    """The windows read apart are remembered by their text (a site repeats a few of them on every page): a page read
    with every window remembered, or with them repeated on the page, finds what it finds when each is read fresh."""
    from evreg.claims import figures

    content = "<p>" + "</p><p>".join(["".join(pieces)] * copies) + "</p>"
    marked = markdown.shown(content, apart=True)
    fresh = [f.text for f in figures.find_figures(figures.joined(marked), shown=True)]
    fresh += [t for a, b in figures._windows(marked) for t in figures._apart_only(marked[a:b])]
    figures._remembered_apart_only.cache_clear()
    assert figures.either_way([marked]) == fresh
    assert figures.either_way([marked]) == fresh  # now from what was remembered


def test_an_element_inside_a_word_is_read_set_apart() -> None:
    """A style may set an inline element off from the word it stands in (a heading's permalink, a bold run)."""
    assert orphans_in_html("<h2>Notes<a class='headerlink' href='#n'>52.3 tok/s</a></h2>") == ["52.3 tok/s"]
    assert orphans_in_html("<p>TTFT<b>274</b></p>") == ["274"]
    assert orphans_in_html("<p>Notes\u200b<b>52.3 tok/s</b></p>") == ["52.3 tok/s"]  # an invisible character
    assert orphans_in_html("<p>RTX <b>4090</b>s</p>") == []  # a plural, as 4090s is
    assert orphans_in_html("<p>TTFT<sup></sup><b>274</b>, Decode<sub>52.3</sub> tok/s</p>") == ["274", "52.3  tok/s"]
    assert orphans_in_html("<p>Tested on A100<b>TTFT 274</b>, busy <b>85%</b>of the time</p>") == ["274", "85%"]
    assert orphans_in_html("<p>H<sub>2</sub>O, TTFT<sup>1</sup> and TTFT<sub>50</sub></p>") == []


def test_the_apart_reading_looks_through_each_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mark inside a line already taken is passed over: 10,000 edges on one line are one look, not 10,000 looks
    back and forth along it."""
    from evreg.claims import figures

    looks: list[int] = []
    real = figures._inside
    monkeypatch.setattr(figures, "_inside", lambda text, start, end: looks.append(start) or real(text, start, end))
    marked = ("a" + figures.EDGE) * 10_000 + "a"
    assert figures._windows(marked) == [(0, len(marked))]
    assert len(looks) == 1
    looks.clear()
    lines = "\n".join(["a" + figures.EDGE + "b"] * 1_000)
    assert figures._windows(lines) == [(0, len(lines))]  # each line's window reaches the next: one span
    assert len(looks) <= 1_000 // 2


def test_only_a_sample_cell_is_exempt_from_the_page_scan() -> None:
    """The renderer writes a stored sample in its own table as ``td.evreg-sample``; a table cell with any other
    renderer class is scanned as text."""
    from evreg.claims import markdown

    cell = '<table><tr><td class="evreg-{}" id="m-x--decode-tok-s-0">52.3 tok/s</td></tr></table>'
    assert markdown.html_figures(cell.format("sample")) == []
    for name in ("cite", "orphan", "unresolved", "name", "setting", "quote", "derived", "other"):
        assert markdown.html_figures(cell.format(name)) == ["52.3 tok/s"], name


_SHOWN_ALPHABET = st.sampled_from(
    [
        "<",
        ">",
        "/",
        "!--",
        "-->",
        "a",
        "b",
        "br",
        "div",
        "td",
        "code",
        "span",
        " ",
        "  ",
        "\n",
        "\t",
        "\xa0",
        "&nbsp;",
        "&#9;",
        "&#32;",
        "&#10;",
        "&amp;",
        "&lt;",
        "x",
        "1",
        '="',
        '"',
        "class",
        "B",
        "SPAN",
        "Td",
        "\u017f",
        "\u212a",
        "evreg-cite",
        "\u2003",
    ]
)


@given(st.lists(_SHOWN_ALPHABET, max_size=40).map("".join))
def test_shown_text_is_the_plain_regular_expression_reading_of_the_page(content: str) -> None:
    """``markdown.shown`` takes fast paths (every page of a 100,000-measurement site passes through it); what it
    returns is the plain reading: white space runs collapsed, inline tags joined, block tags line breaks, entities
    decoded, every run of blanks made by an entity one space."""
    from evreg.claims import markdown as md

    inline = re.compile(
        r"<!--.*?-->|</?(?:a|abbr|b|bdi|bdo|cite|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|"
        r"var|del|ins|wbr|font|br|img|svg|label|button|input|select|output|meter|progress)\b[^>]*>",
        re.S | re.I,
    )
    text = re.sub(r"\s+", " ", inline.sub("", md._EXEMPT.sub(" ", md._SVG_CITE.sub(" ", content))))
    expected = re.sub(r"[^\S\n]+", " ", html.unescape(re.sub(r"<[^>]+>", "\n", text)))
    assert md.shown(content) == expected


def _plain_reading(content: str) -> str:
    """The reference composition of ``markdown.shown`` (as in the test above)."""
    from evreg.claims import markdown as md

    inline = re.compile(
        r"<!--.*?-->|</?(?:a|abbr|b|bdi|bdo|cite|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|"
        r"var|del|ins|wbr|font|br|img|svg|label|button|input|select|output|meter|progress)\b[^>]*>",
        re.S | re.I,
    )
    text = re.sub(r"\s+", " ", inline.sub("", md._EXEMPT.sub(" ", md._SVG_CITE.sub(" ", content))))
    return re.sub(r"[^\S\n]+", " ", html.unescape(re.sub(r"<[^>]+>", "\n", text)))


def test_shown_text_fast_paths_hold_for_every_character_they_depend_on() -> None:
    """The fast paths of ``markdown.shown`` rest on two facts about all of Unicode, which a sampled alphabet cannot
    cover: ``str.split`` splits at exactly the characters ``\\s`` matches, and every character that matches an ASCII
    letter when case is ignored (the upper case, and "İ", "ı", "ſ", "K") sends the scan to the case-blind tag pattern.
    Every such character, in a tag name and in text beside entities, reads as the plain regular expressions read it."""
    from evreg.claims import markdown as md

    space, letter = re.compile(r"\s"), re.compile("[a-z]", re.I)
    chars = [chr(i) for i in range(0x110000) if not 0xD800 <= i <= 0xDFFF]
    assert [c for c in chars if bool(space.match(c)) != c.isspace()] == []
    odd = [c for c in chars if c.isspace() or letter.match(c)]
    assert {"\u0130", "\u0131", "\u017f", "\u212a", "\xa0", "\u2028"} <= set(odd)
    for c in odd:
        for content in (
            f"<{c}>1 tok/s</{c}>",
            f"<spa{c}>12</spa{c}> tok/s",
            f"<{c}pan class=x>3</{c}pan> GiB",
            f"4{c}<b>{c}</b>{c}&nbsp;{c}tok/s",
            f"<td>5</td>{c}{c}<{c}>&#9;ms",
        ):
            assert md.shown(content) == _plain_reading(content), (hex(ord(c)), content)


# -- the bounded render ------------------------------------------------------------------------------------------------


def test_pages_render_one_after_another_in_one_bounded_process() -> None:
    pages = ["Decode reaches 52.3 tok/s.", "| a | b |\n|---|---|\n| 1 | 2 |", "<a href='x'>y</a>"]
    first = [markdown.to_html_bounded(p, ["tables"]) for p in pages]
    pid = markdown._Renderer.process.pid
    assert first == [markdown.to_html(p, ["tables"]) for p in pages]
    assert markdown.to_html_bounded(pages[0], ["tables"]) == first[0] and markdown._Renderer.process.pid == pid


def test_a_page_out_of_time_or_failing_is_refused_and_the_next_page_renders() -> None:
    markdown.to_html_bounded("x", [])
    slow = markdown._Renderer.process
    with pytest.raises(markdown.RenderTooSlow, match=r"did not render within 0\.5 s"):
        markdown.to_html_bounded("<a " * 20_000, ["tables"], seconds=0.5)  # a super-linear shape
    assert slow.poll() is not None  # stopped, not left rendering
    assert markdown.to_html_bounded("*x*", []) == "<p><em>x</em></p>"
    with pytest.raises(markdown.RenderTooSlow, match="rendering failed"):
        markdown.to_html_bounded("x", ["no_such_extension_anywhere"])
    assert markdown.to_html_bounded("*y*", []) == "<p><em>y</em></p>"


def test_a_forked_process_renders_in_a_render_process_of_its_own() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    markdown.to_html_bounded("x", [])
    parents = markdown._Renderer.process.pid
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:  # as the build's workers
        theirs = pool.submit(_render_and_say_where, "*z*").result()
    assert theirs == ("<p><em>z</em></p>", True)
    assert markdown._Renderer.process.pid == parents and markdown.to_html_bounded("*w*", []) == "<p><em>w</em></p>"


def _render_and_say_where(text: str) -> tuple[str, bool]:
    import os

    parents = markdown._Renderer.process.pid if markdown._Renderer.process else None
    out = markdown.to_html_bounded(text, [])
    return out, markdown._Renderer.owner == os.getpid() and markdown._Renderer.process.pid != parents


def test_the_render_process_holds_no_file_of_the_process_that_started_it() -> None:
    """A pipe open here when the render process starts reads to its end once this process closes its write end:
    the render process holds no copy of it (a forked one would, and a reader waiting for the end would wait as long
    as the render process lives)."""
    import os
    import select

    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        markdown._Renderer.stop()
        assert markdown.to_html_bounded("*a*", []) == "<p><em>a</em></p>"  # a render process started now
        os.close(write)
        ready, _, _ = select.select([read], [], [], 10)
        assert ready and os.read(read, 1) == b""
    finally:
        os.close(read)


def test_the_render_process_imports_nothing_from_the_working_directory_or_python_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request's checkout is the working directory: a module it plants there, or names in PYTHONPATH, is not
    what the render process imports."""
    planted = tmp_path / "imported"
    for name in ("markdown.py", "evreg/__init__.py", "evreg/claims/__init__.py", "evreg/claims/render.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"open({str(planted)!r}, 'a').write({name!r})\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "markdown.py"))
    markdown._Renderer.stop()
    try:
        assert markdown.to_html_bounded("*a*", []) == "<p><em>a</em></p>"
    finally:
        markdown._Renderer.stop()
    assert not planted.exists(), planted.read_text()


def test_a_page_whose_html_multiplies_is_refused_before_the_scans_read_it() -> None:
    page = "[a][r] " * 3000 + "\n\n[r]: http://x/" + "A" * 1000  # 22 KB of Markdown, 3 MB of HTML (the limit: 1.7)
    markdown.to_html_bounded("x", [])
    with pytest.raises(markdown.RenderTooSlow, match="over 32 times its size"):
        markdown.to_html_bounded(page, [], seconds=60)  # however loaded the machine
    assert markdown.to_html_bounded("[a][r]\n\n[r]: http://x/", []) == '<p><a href="http://x/">a</a></p>'


def test_an_exchange_cut_short_never_hands_its_answer_to_the_next_page() -> None:
    """Anything that leaves an exchange (an outer time limit, an interrupt) stops the render process, and is not
    taken for the page's failure: the next page gets its own HTML."""
    import signal

    def interrupt(*_: object) -> None:
        raise TimeoutError("an outer time limit")

    markdown.to_html_bounded("x", [])
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(TimeoutError, match="outer time limit"):
            markdown.to_html_bounded("<a " * 20_000 + "\n\n*first*", ["tables"], seconds=30)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert markdown.to_html_bounded("*second*", []) == "<p><em>second</em></p>"


def test_pages_rendered_from_threads_each_get_their_own_html() -> None:
    from concurrent.futures import ThreadPoolExecutor

    pages = [f"*page {n}*" for n in range(200)]
    with ThreadPoolExecutor(8) as pool:
        rendered = list(pool.map(lambda p: markdown.to_html_bounded(p, []), pages))
    assert rendered == [f"<p><em>page {n}</em></p>" for n in range(200)]


def test_the_render_process_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A validator killed in the middle of a slow page leaves no render process holding its output open."""
    import subprocess
    import sys
    import time

    if sys.platform != "linux":
        pytest.skip("reads /proc")
    script = (
        "import sys; from evreg.claims import markdown; markdown.to_html_bounded('x', []); "
        "print(markdown._Renderer.process.pid, flush=True); markdown.to_html_bounded('<a ' * 20_000, [], seconds=60)"
    )
    started = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert started.stdout is not None
    child = int(started.stdout.readline())
    started.kill()
    started.wait()
    for _ in range(200):
        if not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the render process outlived the process that started it")


def test_a_render_process_a_thread_started_outlives_the_thread() -> None:
    import threading

    markdown._Renderer.stop()
    thread = threading.Thread(target=markdown.to_html_bounded, args=("x", []))
    thread.start()
    thread.join()
    assert [markdown.to_html_bounded(f"*{n}*", []) for n in range(3)] == [f"<p><em>{n}</em></p>" for n in range(3)]


def test_a_cell_spanning_many_columns_is_read_once_under_each_header() -> None:
    """A cell stands in each column it spans, as a reader sees it, but is read once under each header it stands
    under: 1,000 rows of a cell spanning 100 columns of one header are 1,000 findings, not 100,000."""
    page = "<table><tr><th colspan=100>Decode (tok/s)</th></tr>" + "<tr><td colspan=100>5</td></tr>" * 1000
    assert htmlscan.page_figures(page + "</table>") == [("5", "under the column 'Decode (tok/s)' (in tok/s)")] * 1000


def test_a_figure_read_both_ways_is_reported_once() -> None:
    """Joined and set apart, ``<b>10</b>min`` is one figure, reported as the joined reading spells it; a second one
    typed apart is still its own."""
    assert markdown.html_figures("<p>every <b>5</b>s for <b>10</b>min</p>") == ["10min"]
    assert markdown.html_figures("<p>every <b>5</b>s for <b>10</b>min and 10 min</p>") == ["10min", "10 min"]
