"""How a hand-written Markdown page is read: what counts as code (citations are rendered outside code, by the
build, and looked for there, by validation) and what a reader sees once Python-Markdown has rendered it (the text the
orphan-figure scan reads, the tables whose header units apply to their cells, the tags that could run script). Both
validation and the site build read pages through this module, so they agree on every page."""

from __future__ import annotations

import html
import itertools
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evreg.claims import citations, figures

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

_FENCE = re.compile(r"^(```|~~~)")  # Python-Markdown's fences start a line: an indented ``~~~`` is text
_INLINE_CODE = re.compile(r"(`[^`]*`)")


_PRE_OPEN = re.compile(r"<pre\b", re.I)
_PRE_CLOSE = re.compile(r"</pre\s*>", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_INDENTED = re.compile(r"^(?: {4}|\t)")


def _fence(line: str) -> str | None:
    """The fence a line opens or closes (its run of backticks or tildes), or None: a backtick fence's info string
    holds no backtick (```x``` is inline code, not a fence)."""
    m = _FENCE.match(line)
    if not m:
        return None
    run = re.match(r"`+|~+", line.lstrip()).group()  # type: ignore[union-attr]
    return None if run[0] == "`" and "`" in line.lstrip()[len(run) :] else run


def lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, is code) of every line. Code: a fence line and the lines between fences (a fence is
    closed by the same run, as Python-Markdown reads it: ``~~~`` and ```````` do not close a ``` fence), the lines
    of a ``<pre>`` block (opened outside inline code), and an indented code block (lines indented four spaces or
    a tab after a blank line, outside a list); and an HTML comment block (from a line starting ``<!--`` to ``-->``),
    which is shown to no one. ``"\\n".join`` of the lines gives the text back."""
    fence: str | None = None
    pre = indented = in_list = comment = False
    blank = True
    for n, line in enumerate(text.split("\n"), 1):
        opens = fence is None and not pre and line.lstrip().startswith("<!--")
        if comment or (opens and "-->" not in line[line.find("<!--") + 4 :]):
            comment = "-->" not in line if comment else True
            yield n, line, True  # an HTML comment block is shown to no one: a fence in it opens nothing
            blank = False
            continue
        run = _fence(line)
        opens_pre = fence is None and not pre and bool(_PRE_OPEN.search(_INLINE_CODE.sub("", line)))
        if fence or pre or run:
            code = True
        else:
            indented = bool(_INDENTED.match(line)) and (indented or (blank and not in_list)) and bool(line.strip())
            code = indented or opens_pre
        if opens_pre and not _PRE_CLOSE.search(line):
            pre = True
        elif pre and _PRE_CLOSE.search(line):
            pre = False
        if run and not pre:
            if fence is None:
                fence = run
            elif run == fence and not line.lstrip()[len(run) :].strip():
                fence = None
        if line.strip() and not indented:
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and line[:1] in (" ", "\t"))
        blank = not line.strip()
        yield n, line, code


_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def cells(line: str) -> list[tuple[int, str]]:
    """(column in the line, text) of each cell of a Markdown table row."""
    bars = [m.start() for m in re.finditer(r"(?<!\\)\|", line)]
    return [(a + 1, line[a + 1 : b]) for a, b in itertools.pairwise(bars)]


def tables(text: str) -> Iterator[tuple[list[str], int, str]]:
    """(header cells, line number, row line) of every body row of every Markdown table outside code."""
    header: list[str] | None = None
    previous = ""
    for n, line in prose(text):
        if _TABLE_RULE.match(line) and _TABLE_ROW.match(previous):
            header = [t.strip() for _, t in cells(previous)]
        elif header is not None and _TABLE_ROW.match(line):
            yield header, n, line
        else:
            header = None
        previous = line


def spans(line: str) -> Iterator[tuple[str, bool]]:
    """(text, is inline code) pieces of a line outside fences; joined, they give the line back."""
    for i, piece in enumerate(_INLINE_CODE.split(line)):
        if piece:
            yield piece, i % 2 == 1


_CODE_NUMBER = re.compile(r"`+\s*[-+]?[\d.,]*\d[\d.,]*\s*`+")
"""Inline code that shows a number and nothing else (```52.3```): a unit after it makes it a figure like any."""


def prose(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines outside code, with inline code blanked (columns stay true), but for inline
    code that is only a number: that reads as the number it shows (```52.3` tok/s`` is a figure)."""
    for n, line, code in lines(text):
        if not code:
            yield (
                n,
                "".join(" " * len(t) if is_code and not _CODE_NUMBER.fullmatch(t) else t for t, is_code in spans(line)),
            )


def with_forms(text: str, render: Callable[[str], str]) -> str:
    """The page with ``render`` applied to each piece of prose (outside code): the build resolves citations with it,
    validation blanks them with it."""
    return "\n".join(
        line if code else "".join(t if inline else render(t) for t, inline in spans(line))
        for _, line, code in lines(text)
    )


MKDOCS_EXTENSIONS = ("toc", "tables", "fenced_code")
"""The Markdown extensions MkDocs always loads, before those ``mkdocs.yml`` names."""


def to_html(text: str, extensions: list[Any]) -> str:
    """A page as MkDocs renders it with Python-Markdown: its built-in extensions and ``extensions`` (``mkdocs.yml``'s
    ``markdown_extensions``: names, or one-key mappings of a name to its options)."""
    import markdown as python_markdown

    names: list[str] = list(MKDOCS_EXTENSIONS)
    options: dict[str, Any] = {}
    for item in extensions:
        for name, opts in item.items() if isinstance(item, dict) else [(item, None)]:
            names.append(str(name))
            if opts and isinstance(opts, dict):  # as MkDocs: a name given again without options keeps the earlier
                options[str(name)] = opts
    md = python_markdown.Markdown(extensions=list(dict.fromkeys(names)), extension_configs=options)
    return md.convert(text)


RENDER_SECONDS = 10.0
"""How long one hand-written page may take to render for validation. Python-Markdown's inline patterns are
super-linear on some shapes (runs of ``[`` or ``<a ``: a page of them renders for hours); a normal page takes
milliseconds."""


class RenderTooSlow(Exception):
    """A page did not render within ``RENDER_SECONDS``."""


RENDER_GROWTH = 32
"""How many times its own size a page's HTML may be, plus ``RENDER_SLACK`` bytes: Markdown that multiplies (a short
reference used thousands of times with a long URL) is refused, not handed to the scans at gigabytes."""
RENDER_SLACK = 1 << 20
RENDER_MEMORY = 4 << 30
"""The address space the render process may take (bytes)."""


def to_html_bounded(text: str, extensions: list[Any], seconds: float = RENDER_SECONDS) -> str:
    """``to_html`` in a render process stopped after ``seconds`` (``RenderTooSlow``), so no page's shape can hold
    validation: nor can its HTML be larger than ``RENDER_GROWTH`` times the page, nor its rendering take more than
    ``RENDER_MEMORY``. The process is a new, isolated interpreter (``evreg.claims.render``: it holds no file, pipe or
    socket of this one, which a forked process would keep open as long as it lives, and ends with this one) and
    renders page after page (a process per page cost more than most pages take to render); one that runs out of
    time, fails or dies is stopped, as is one whose exchange anything else interrupts, and the next page gets a new
    one. One page at a time per process (a lock); on Windows the page renders here."""
    if os.name == "nt":
        return to_html(text, extensions)
    limit = RENDER_GROWTH * len(text.encode("utf-8", "surrogatepass")) + RENDER_SLACK
    with _Renderer.lock:
        conn = _Renderer.here()
        try:
            conn.send((text, extensions, limit))
            if not conn.poll(seconds):
                _Renderer.stop()
                raise RenderTooSlow(f"the page did not render within {seconds:g} s")
            reply = conn.recv_bytes()
        except (EOFError, ConnectionError):  # the process died without an answer
            reply = b""
        except BaseException:  # an answer half read, or not read: the next page must not get it
            _Renderer.stop()
            raise
        if reply.startswith(b"1"):
            return reply[1:].decode("utf-8", "surrogatepass")
        _Renderer.stop()
    if reply == b"2":
        raise RenderTooSlow(f"the page's HTML is over {RENDER_GROWTH} times its size")
    raise RenderTooSlow("the page's rendering failed")


class _Renderer:
    """The render process of this process (a forked worker starts its own: the connection is its parent's)."""

    lock = threading.Lock()
    owner: int | None = None
    process: subprocess.Popen[bytes] | None = None
    conn: Connection | None = None

    @classmethod
    def here(cls) -> Connection:
        if cls.owner != os.getpid():
            cls.owner = cls.process = cls.conn = None  # a forked copy of its parent's: not ours to stop
        if cls.process is None or cls.conn is None or cls.process.poll() is not None:
            from multiprocessing.connection import Connection

            cls.stop()
            mine, theirs = socket.socketpair()
            # isolated (-I): neither the working directory (a pull request's checkout) nor PYTHON* variables put
            # modules before the installed ones; evreg is imported from where this process imported it
            imported_from = str(Path(__file__).resolve().parents[2])
            serve = f"import sys; sys.path.insert(0, {imported_from!r}); from evreg.claims import render; render.serve"
            with theirs:
                cls.process = subprocess.Popen(
                    [sys.executable, "-I", "-c", f"{serve}({theirs.fileno()}, {os.getpid()}, {RENDER_MEMORY})"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,  # nothing of a reader of this process's output waits for it
                    stderr=subprocess.DEVNULL,
                    pass_fds=[theirs.fileno()],
                )
            cls.conn, cls.owner = Connection(mine.detach()), os.getpid()
        return cls.conn

    @classmethod
    def stop(cls) -> None:
        if cls.process is not None:
            cls.process.kill()
            cls.process.wait()
        if cls.conn is not None:
            cls.conn.close()
        cls.process = cls.conn = None


_Part = tuple[str, re.Pattern[str], re.Pattern[str]]
"""One alternative of an element pattern ``OPEN.*?CLOSE``: the open's first characters, the open, the close."""


def _part(prefix: str, open_: str, close: str, flags: int = 0) -> _Part:
    return prefix, re.compile(open_, flags), re.compile(close, flags)


def _elements(text: str, parts: list[_Part]) -> list[tuple[re.Match[str], re.Match[str]]]:
    """(open, close) of each element ``re.finditer`` finds with the alternation of ``OPEN.*?CLOSE`` (``re.S``), in
    time linear in the text: where an open has no close after it, no later open of its kind has, and its kind is no
    longer looked for. (The pattern itself reads to the end of the text from each such open: ``"<pre>" * n`` with no
    ``</pre>`` was quadratic.)"""
    found: list[tuple[re.Match[str], re.Match[str]]] = []
    live, pos = list(parts), 0
    search = _any_open(live)
    while live and (m := search.search(text, pos)):
        for part in list(live):
            opened = part[1].match(text, m.start())
            if opened is None:
                continue
            closed = part[2].search(text, opened.end())
            if closed is not None:
                found.append((opened, closed))
                pos = closed.end()
                break
            live.remove(part)
            search = _any_open(live)
        else:
            pos = m.start() + 1
    return found


def _any_open(parts: list[_Part]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?i:{o.pattern})" if o.flags & re.I else f"(?:{o.pattern})" for _, o, _ in parts))


def _closed(text: str, parts: list[_Part]) -> bool:
    """Whether every open of ``parts`` has a close after it: then the pattern finds its elements in linear time
    (the last open is found from its first characters, and its close is sought after it)."""
    for prefix, open_, close in parts:
        at = len(text)
        while (at := text.rfind(prefix, 0, at)) >= 0:
            opened = open_.match(text, at)
            if opened is not None:
                if close.search(text, opened.end()) is None:
                    return False
                break
    return True


def _sub(pattern: re.Pattern[str], parts: list[_Part], repl: str, text: str) -> str:
    """``pattern.sub(repl, text)`` for an element pattern made of ``parts``, in linear time (``_elements``)."""
    if _closed(text, parts):
        return pattern.sub(repl, text)
    out, last = [], 0
    for opened, closed in _elements(text, parts):
        out += [text[last : opened.start()], repl]
        last = closed.end()
    return "".join([*out, text[last:]])


_CITE_CLASS = r'class="evreg-(?:' + "|".join(citations.RENDERER_CLASSES) + r')"'
_EXEMPT = re.compile(
    r"<(pre|code)\b[^>]*>.*?</\1>|<(a|mark|span)\b[^>]*" + _CITE_CLASS + r"[^>]*>.*?</\2>"
    r"|<td\b[^>]*class=\"evreg-sample\"[^>]*>.*?</td>",  # a stored sample in its own table: the only renderer cell
    re.S,
)
_EXEMPT_PARTS = [
    *(_part(f"<{tag}", rf"<{tag}\b[^>]*>", f"</{tag}>") for tag in ("pre", "code")),
    *(_part(f"<{tag}", rf"<{tag}\b[^>]*{_CITE_CLASS}[^>]*>", f"</{tag}>") for tag in ("a", "mark", "span")),
    _part("<td", r'<td\b[^>]*class="evreg-sample"[^>]*>', "</td>"),
]
"""``_EXEMPT``'s alternatives, in its order."""
_SVG_CITE = re.compile(r'<a class="evreg-cite"[^>]*>.*?</a>', re.S)
_SVG_CITE_PARTS = [_part('<a class="evreg-cite"', r'<a class="evreg-cite"[^>]*>', "</a>")]
_INLINE_NAMES = (
    r"a|abbr|b|bdi|bdo|cite|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|var|del|ins|wbr|font|br|"
    r"img|svg|label|button|input|select|output|meter|progress"
)
_INLINE_TAG = re.compile(r"<(?:!--.*?--|/?(?:" + _INLINE_NAMES + r")\b[^>]*)>", re.S | re.I)
_INLINE_TAG_LOWER = re.compile(r"<(?:!--.*?--|/?(?:" + _INLINE_NAMES + r")\b[^>]*)>", re.S)
"""The same tags written in lower case, as every page the renderer makes: six times faster than ignoring case."""
_COMMENT_PARTS = [_part("<!--", "<!--", "-->")]
"""The comments of ``_INLINE_TAG``: the only part that reads past a tag's end."""
_NAME_NOT_LOWER = re.compile(r"</?[a-z]*+[^\W\d_a-z]")
"""A tag name with a letter other than a-z in it (``<B>``, ``<ſ>``): case matters to which tags are inline."""
_TAG = re.compile(r"<[^>]++>")
_BLANKS = re.compile(r"[^\S\n]+")
_ODD_BLANK = re.compile(r"[^\S\n ]")  # white space other than a space or a break (shown also looks for two spaces)


def _one_space(text: str) -> str:
    """Every run of white space in ``text`` one space (``re.sub(r"\\s+", " ", text)``: ``str.split`` splits at the
    same characters, several times faster)."""
    out = " ".join(text.split())
    if text[:1].isspace():
        out = " " + out
    return out + " " if text[-1:].isspace() and out != " " else out


def shown(content: str, apart: bool = False) -> str:
    """What a reader reads of rendered HTML: the renderer's citations, code and tags left out (an inline element or a
    comment joins the text around it, as a browser shows it; any other element ends a line), entities decoded, every
    run of white space in the text (a line break in a paragraph, a no-break space) one space. ``apart``: an inline
    element's tags marked as its edges (``figures.EDGE``), as a style may set the element off
    (``figures.either_way``). (Every page of the site passes through here: at 100,000 measurements, 1.8 GB.)"""
    text = without_citations(figures.unmarked(content))
    inline = _INLINE_TAG if _NAME_NOT_LOWER.search(text) else _INLINE_TAG_LOWER
    repl: str | Callable[[re.Match[str]], str] = _as_edge if apart else ""
    # with a comment that has no end, the tags one by one (``_inline_removed``)
    text = _to_last_tag_end(
        lambda t: inline.sub(repl, t) if _closed(t, _COMMENT_PARTS) else _inline_removed(t, inline, apart), text
    )
    text = html.unescape(_to_last_tag_end(lambda t: _TAG.sub("\n", t), _one_space(text)))
    # only an entity makes white space other than one space or a line break here (&nbsp;, "&#9;", " &#32;")
    return _BLANKS.sub(" ", text) if "  " in text or _ODD_BLANK.search(text) else text


def without_citations(content: str) -> str:
    """Rendered HTML with the renderer's citations, its stored samples' cells and code each one space: what no figure
    check reads."""
    text = _to_last_tag_end(lambda t: _sub(_SVG_CITE, _SVG_CITE_PARTS, " ", t), content)
    return _to_last_tag_end(lambda t: _sub(_EXEMPT, _EXEMPT_PARTS, " ", t), text)


def _to_last_tag_end(sub: Callable[[str], str], text: str) -> str:
    """``sub(text)`` for a substitution whose every match ends with ``>``, applied up to the last ``>`` where a ``<``
    follows it (the pattern would read from each such ``<`` to the end of the text: ``"<b " * n`` was quadratic)."""
    end = text.rfind(">") + 1
    return sub(text) if text.find("<", end) < 0 else sub(text[:end]) + text[end:]


def _as_edge(m: re.Match[str]) -> str:
    """An inline element's tag as an edge (``figures.EDGE``; a superscript's or subscript's ``figures.OPEN`` and
    ``figures.CLOSE``); a comment as nothing (it is not shown, and no style reaches it)."""
    tag = m.group()
    if tag.startswith("<!--"):
        return ""
    script = _SCRIPT_TAG.match(tag)
    return figures.EDGE if script is None else figures.CLOSE if script.group(1) else figures.OPEN


_SCRIPT_TAG = re.compile(r"<(/?)su[bp]\b", re.I)


def _inline_removed(text: str, inline: re.Pattern[str], apart: bool) -> str:
    """``inline.sub("", text)`` (``apart``: ``_as_edge``) where a comment has no end after it, in linear time: at
    each ``<`` the pattern would try, a comment ends at the first ``-->`` after it (with none, no later one ends
    either, and it is text)."""
    out, last, pos, comments = [], 0, 0, True
    while (at := text.find("<", pos)) >= 0:
        end, tag = -1, ""
        if text.startswith("<!--", at) and comments:
            close = text.find("-->", at + 4)
            end, comments = (close + 3, True) if close >= 0 else (-1, False)
        if end < 0 and not text.startswith("<!--", at):
            m = inline.match(text, at)
            end, tag = (m.end(), _as_edge(m) if apart else "") if m else (-1, "")
        if end < 0:
            pos = at + 1
            continue
        out += [text[last:at], tag]
        last = pos = end
    return "".join([*out, text[last:]])


def html_figures(content: str) -> list[str]:
    """Figures in rendered HTML that did not come through the citation path, in the text a reader sees: read with
    inline elements joined to the text around them and, where one stands inside a word, set apart
    (``figures.either_way``)."""
    return figures.either_way([shown(content, apart=True)])


def rows_figures(rows: Iterable[str]) -> list[str]:
    """``html_figures`` of the rows' HTML side by side, for rows no figure runs across (each ends with fixed words:
    a comparison's rows end with their state): what a reader is shown of a row is read once, however many rows
    show it (rows that differ only in their links and citations read the same: a workload of 20,000 results shows
    a few hundred texts)."""
    seen = dict.fromkeys(shown(row, apart=True) for row in rows)
    return figures.either_way(["".join(seen)])


SCRIPT = re.compile(
    r"<\s*+/?\s*+(?:script|iframe|object|embed|form|base|meta)\b|\son[a-z]+\s*=|\b(?:javascript|vbscript|data)\s*:(?!\s)",
    re.I,
)
"""What could run script in a reader's browser: elements that load or run code, event attributes, script URLs."""
STYLE = re.compile(r"<\s*(?:style|svg)\b|\sstyle\s*=", re.I)
"""A style or a drawing written in a page: it can show text the checks do not read (``content:``, an inline SVG's
``<text>`` beside a typed unit) or hide text they do."""
FORGED = re.compile(r"""class\s*=\s*["']?[^"'>]*\bevreg-(?:""" + "|".join(citations.RENDERER_CLASSES) + r")\b", re.I)
"""Citation markup: only the renderer writes it."""


def html_tags(content: str) -> list[str]:
    """The tags of rendered HTML, in code too: Python-Markdown escapes the code it renders (a tag shown as text is
    ``&lt;...``), so every tag left is one a browser makes, inside a hand-written ``<pre>`` or ``<code>`` as well."""
    return _TAG.findall(content)


_ATTRIBUTE = re.compile(r"""\s([^\s"'>/=]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_NOT_SHOWN = frozenset({"href", "src", "srcset", "class", "style", "colspan", "rowspan", "width", "height"})
"""Attributes a reader is not shown (addresses, layout); any other can be: ``alt`` when an image does not load,
``title`` in a tooltip, ``value`` in a control, any of them through a stylesheet's ``attr()``."""


def attribute_figures(content: str) -> list[str]:
    """Figures in the attributes of the tags of a hand-written page's rendered HTML (an image's alt text, a link's or
    abbreviation's title): what a reader can be shown beside the page's text."""
    return [
        f.text
        for tag in html_tags(content)
        if not FORGED.search(tag)
        for m in _ATTRIBUTE.finditer(tag[: -1 if tag.endswith(">") else None])
        if m.group(1).lower() not in _NOT_SHOWN
        for f in figures.find_figures(html.unescape(next(g for g in m.groups()[1:] if g is not None)))
    ]
