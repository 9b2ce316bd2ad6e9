"""Every boundary where a pull request's text meets a reader's browser, a spreadsheet, a CI log or a parser: each is
one mechanism (parse, then allowlist), attacked with a generated corpus of spellings, not one payload per test."""

from __future__ import annotations

import ast
import itertools
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.check import reporters
from evreg.claims import htmlscan, markdown, sanitize, siteconfig
from evreg.core import jsonio
from evreg.core.findings import Finding
from evreg.core.tabular import csv_cell
from evreg_rules import site_pages
from helpers import REPO, F, Reg, evreg, init_site, within

# -- URLs in hand-written pages ---------------------------------------------------------------------------------

SCHEMES = ["javascript", "vbscript", "data", "JaVaScRiPt", "file"]


def _spellings(scheme: str) -> list[str]:
    """A scheme with its colon written every way HTML lets an attribute value say it: plain, as decimal, hex and
    named character references, with a tab or line break inside it (browsers drop them), and behind leading blanks
    and control characters (browsers strip them)."""
    first, rest = scheme[0], scheme[1:]
    colon_forms = [":", "&#58;", "&#x3a;", "&#X3A;", "&colon;", "&#0000058;"]
    heads = [
        scheme,
        f"&#{ord(first)};{rest}",
        f"&#x{ord(first):x};{rest}",
        f"{scheme[:2]}&#x09;{scheme[2:]}",
        f"{scheme[:2]}&#10;{scheme[2:]}",
        f"{scheme[:2]}\t{scheme[2:]}",
        f" {scheme}",
        f"&#x20;{scheme}",
        f"&#1;{scheme}",
    ]
    return [head + colon + "alert(1)" for head, colon in itertools.product(heads, colon_forms)]


def _contexts(url: str) -> list[str]:
    """Places a page can put a URL: raw HTML links and images, Markdown inline links, reference definitions."""
    return [
        f'<a href="{url}">x</a>',
        f"<a href='{url}'>x</a>",
        f'<img src="{url}" alt="x">',
        f"[x]({url})",
        f"[x][r]\n\n[r]: {url}",
        f"<p><a title=x href={url.replace(' ', '')}>x</a></p>",
    ]


def _browser_scheme(value: str) -> str | None:
    """An independent reading of the scheme a browser takes from an attribute's decoded value (the URL standard:
    leading and trailing C0 controls and spaces stripped, ASCII tab and newlines removed), by urllib."""
    url = re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(0x21))))
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    return scheme or None


def _links(content: str) -> list[str]:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(content)
    return [
        value
        for node in tree.css("[href], [src]")
        for name in ("href", "src")
        if (value := node.attributes.get(name)) is not None
    ]


CORPUS = [page for scheme in SCHEMES for url in _spellings(scheme) for page in _contexts(url)]


@pytest.mark.slow
def test_no_page_the_validation_accepts_links_to_a_script_scheme() -> None:
    """Over the corpus (every scheme spelling in every context), a page whose rendered HTML a browser would read
    as linking to a scheme other than http, https or mailto is refused, whichever spelling: the property is checked
    against an independent reading of the rendered tree."""
    dangerous = refused = 0
    for page in CORPUS:
        findings = list(site_pages._rendered_page("site/x.md", page, ["tables", "attr_list", "md_in_html"]))
        content = markdown.to_html(page, ["tables", "attr_list", "md_in_html"])
        bad = [v for v in _links(content) if _browser_scheme(v) not in (None, "http", "https", "mailto")]
        if bad:
            dangerous += 1
            assert any(f.code == "site-html-unsafe" for f in findings), (page, bad, content)
        refused += any(f.code == "site-html-unsafe" for f in findings)
    assert len(CORPUS) > 1500 and dangerous > 1000, (len(CORPUS), dangerous)


@pytest.mark.parametrize(
    "html",
    [
        "<span hidden>x</span>",
        "<my-widget>5</my-widget>",
        "<template>5 ms</template>",
        "<tt>5</tt>",
        '<link rel="stylesheet" href="https://evil.example/x.css">',
        '<img src="https://evil.example/p.png" alt="">',
        '<img src="//evil.example/p.png" alt="">',
        '<a href="\\\\evil.example/x">x</a>',
        '<img src="&#1;//evil.example/t.png" alt="">',
        '<img src="&#x20;&#9;//evil.example/t.png" alt="">',
        '<p onclick="x()">x</p>',
        '<p style="display:none">x</p>',
        "<svg><text>52 ms</text></svg>",
        "<math><mi>x</mi></math>",
        "<iframe src=x></iframe>",
        "<form><input></form>",
        "<base href=https://evil.example/>",
        "<meta http-equiv=refresh content=0;url=https://evil.example>",
        "<object data=x></object>",
        "<video src=x></video>",
    ],
)
def test_markup_outside_the_allowlist_is_refused(html: str) -> None:
    assert list(sanitize.problems(html)), html
    assert sanitize.changed_by_sanitizer(html) or html.startswith(("<a href", "<img src")) or "https://" in html


def test_what_markdown_writes_is_inside_the_allowlist() -> None:
    """Every hand-written page of this repository, rendered, has no problem and is unchanged by the sanitizer."""
    for page in sorted((REPO / "site").glob("*.md")):
        content = htmlscan.rendered(page.read_text(), siteconfig.site_extensions(REPO))
        assert list(sanitize.problems(content)) == [], page
        assert not sanitize.changed_by_sanitizer(content), page


@pytest.mark.parametrize(
    ("html", "shown"),
    [
        ("<p>52.3<span>x</span> tok/s</p>", ["52.3x tok/s"]),
        ("<p>52.3</p><p>tok/s</p>", ["52.3", "tok/s"]),
        ("<p>5<em>2</em> ms</p>", ["52 ms"]),
        ("<p>a <code>52 ms</code> b</p>", ["a", "b"]),
        ('<p><abbr title="52 ms">x</abbr></p>', ["52 ms", "x"]),
        ("<p>a<!-- 52 ms -->b</p>", ["ab"]),
    ],
)
def test_the_figure_check_reads_the_text_a_reader_sees(html: str, shown: list[str]) -> None:
    assert sanitize.shown_text(html) == shown


# -- mkdocs.yml ---------------------------------------------------------------------------------------------------

MARKUP = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a &lt;b", 'a" onmouseover="x', "a`b", "a\nb"]
ADDRESSES = [
    *(f"{s}alert(1)" for s in ("javascript:", " javascript:", "JAVASCRIPT:", "java\tscript:", "data:text/html,")),
    "//evil.example/x",
    'https://evil.example/a"onmouseover=x',
    "http://plain.example/",
]


def _config() -> dict[str, Any]:
    return yaml.safe_load((REPO / "mkdocs.yml").read_text())


def _refused(tmp_path: Path, config: dict[str, Any]) -> list[str]:
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return siteconfig.unsafe_config(tmp_path)


@pytest.mark.parametrize("key", ["site_name", "site_description", "site_author", "copyright", "repo_name", "nav"])
def test_every_shown_setting_is_plain_text(tmp_path: Path, key: str) -> None:
    for value in MARKUP:
        config = _config()
        if key == "nav":
            config["nav"] = [{value: "index.md"}]
        else:
            config[key] = value
        assert _refused(tmp_path, config), (key, value)


@pytest.mark.parametrize("key", ["site_url", "edit_uri", "nav", "logo"])
def test_every_address_setting_is_https_or_relative(tmp_path: Path, key: str) -> None:
    for value in ADDRESSES:
        config = _config()
        if key == "nav":
            config["nav"] = [{"Home": value}]
        elif key == "logo":
            config["theme"]["logo"] = value
        else:
            config[key] = value
        assert _refused(tmp_path, config), (key, value)
    config = _config()
    config["site_url"] = "https://registry.example.org/"
    assert _refused(tmp_path, config) == []


@pytest.mark.parametrize(
    "theme",
    [
        {"font": {"text": "Roboto"}},  # fonts load from another host
        {"font": {"text": "</style><img src=x onerror=alert(7)>"}},
        {"palette": {"primary": '"><img\tsrc=x\tonerror=alert(8)>'}},
        {"palette": [{"scheme": "evil", "primary": "indigo"}]},
        {"palette": {"primary": "indigo", "toggle": {"icon": "material/none-such", "name": "x"}}},
        {"palette": {"primary": "indigo", "onload": "x"}},
        {"icon": {"logo": "nothing/here"}},
        {"icon": {"repo": "../../etc/passwd"}},
        {"logo": "https://evil.example/logo.png"},
    ],
)
def test_theme_values_come_from_the_theme(tmp_path: Path, theme: dict[str, Any]) -> None:
    config = _config()
    config["theme"] = {key: value for key, value in config["theme"].items() if key != "font"} | theme
    assert _refused(tmp_path, config), theme


def test_an_honest_theme_passes(tmp_path: Path) -> None:
    config = _config()
    palette = [{"scheme": "default", "primary": "indigo", "toggle": {"icon": "material/brightness-7", "name": "Dark"}}]
    config["theme"] |= {"palette": palette, "icon": {"logo": "material/library"}}
    assert _refused(tmp_path, config) == []


@pytest.mark.parametrize(
    "extra",
    [{"repo_url": "https://gitlab.evil.example/a/b"}, {"strict": True}, {"plugins": [{"search": {"separator": "(["}}]}],
)
def test_settings_that_call_out_or_stop_the_build_are_refused(tmp_path: Path, extra: dict[str, Any]) -> None:
    config = _config() | extra
    assert _refused(tmp_path, config), extra


def test_theme_and_search_options_come_from_their_enumerations(tmp_path: Path) -> None:
    for theme in ({"language": "../../x"}, {"language": "xx"}, {"features": ["navigation.evil"]}):
        config = _config()
        config["theme"] |= theme
        assert _refused(tmp_path, config), theme
    for option in ({"jieba_dict": "/etc/passwd"}, {"pipeline": ["foo"]}, {"prebuild_index": True}):
        config = _config()
        config["plugins"] = [{"search": option}]
        assert _refused(tmp_path, config), option
    config = _config()
    config["theme"] |= {"language": "de", "features": ["navigation.tabs"]}
    assert _refused(tmp_path, config) == []


def test_validate_clean_config_builds(tmp_path: Path) -> None:
    """Whatever MkDocs would refuse to load is a finding at validation (it loads the configuration as the build)."""
    config = _config()
    config["plugins"] = [{"search": {"lang": ["en"], "pipeline": ["stemmer"]}}]
    assert _refused(tmp_path, config) == []


@pytest.mark.parametrize(
    "css",
    [
        '@import url("https://evil.example/x.css");',
        "@import 'x.css';",
        ".a{background:url(https://evil.example/i.png)}",
        ".a{background:url('//evil.example/i.png')}",
        '.a{background:image-set("https://evil.example/i.png" 1x)}',
        '@font-face{src:url("data:font/woff,x")}',
        ".a::after{content:attr(title)}",
        ".a::after{content:counter(x)}",
        '.a::after{content:"\\35 2 ms"}',
        '.a::after{content:"52" " ms"}',
        '.v1::before{content:"52.3"}',  # a number the page's text gives a unit: <span class="v1"></span> tok/s
    ],
)
def test_stylesheets_are_read_with_a_css_parser(css: str) -> None:
    assert list(htmlscan.stylesheet(css)), css


def test_a_stylesheet_of_the_sites_own_resources_passes() -> None:
    assert list(htmlscan.stylesheet('.a{background:url(img/x.png)} .b::after{content:"→"}')) == []


# -- spreadsheets ---------------------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("=+-@ \t\r\n\x00\u00a0\uff1d1.eE(),\"'aZ")), max_size=12))
def test_no_csv_cell_starts_a_formula(value: str) -> None:
    """A spreadsheet reads a cell that starts (after blanks and controls) with =, +, - or @ as a formula: every such
    cell is written with a leading quote, unless it is a plain number."""
    cell = csv_cell(value)
    lead = cell.lstrip(" \t\r\n\x00\u00a0")
    if lead[:1] in ("=", "+", "-", "@", "\uff1d") and not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", cell):
        pytest.fail(f"{value!r} -> {cell!r}")
    assert cell in (value, "'" + value)


def test_the_download_script_applies_the_same_rule() -> None:
    """The comparison pages' download (JavaScript) holds the same two patterns as ``csv_cell``."""
    from evreg.core import tabular

    script = (REPO / "registry/evreg/site/static/evreg-compare.js").read_text()
    formula = re.search(r"var CSV_FORMULA = /(.*)/;", script)
    number = re.search(r"var CSV_NUMBER = /(.*)/;", script)
    assert formula and number
    assert formula.group(1) == tabular.FORMULA.pattern
    assert number.group(1) == tabular.NUMBER.pattern


def test_query_csv_neutralises_formulas(tmp_path: Path) -> None:
    done = evreg("query", "SELECT '=HYPERLINK(\"x\")' AS a, -5 AS b, '@x' AS c", "--format", "csv", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == '"\'=HYPERLINK(""x"")",-5,\'@x'


# -- what CI prints ---------------------------------------------------------------------------------------------------


def test_control_characters_never_reach_a_printed_line() -> None:
    finding = Finding(code="orphan-number", file="site/a\n::error title=x::y.md", message="m\r\n::warning::z")
    for reporter in ("human", "summary"):
        lines = "\n".join(reporters.reporters()[reporter].lines([finding], {"errors": 1, "warnings": 0}))
        assert not any(line.startswith("::") for line in lines.splitlines()), (reporter, lines)


def test_the_job_summary_shows_record_text_as_code() -> None:
    hostile = "![x](https://evil.example/i.png) [click](https://evil.example) <b>x</b> a|b ``c``"
    finding = Finding(code="orphan-number", file="packets/a.json", message=hostile, hint=hostile)
    lines = list(reporters.reporters()["summary"].lines([finding], {"errors": 1, "warnings": 0}))
    row = next(line for line in lines if "evil" in line)
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
    assert all(c == "" or (c.startswith("`") and c.endswith("`")) for c in cells), cells


def test_a_page_named_with_a_line_break_is_refused(tmp_path: Path) -> None:
    from evreg.core.containment import unsafe_files
    from evreg.core.layout import place_of

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "a\n::error title=x::b.md").write_text("# a\n")
    assert any("control character" in why for _, why in unsafe_files(tmp_path, "site"))
    assert place_of("packets/fam/pkt/evidence/a\rb.json").problem


@pytest.mark.slow
def test_no_line_evreg_prints_is_a_workflow_command(reg: Reg) -> None:
    """Over a corpus of names and link targets that decode to line breaks (a page's link, an evidence file's name, a
    record's text), no line `evreg validate` or `evreg build` prints starts a CI workflow command."""
    init_site(reg)
    commands = ["::error title=x::owned", "::warning::w", "::add-mask::m", "::set-output name=x::y"]
    links = "\n\n".join(f"[x{i}](missing%0A{c.replace(' ', '%20')}.md)" for i, c in enumerate(commands))
    reg.put("site/links.md", f"# Links\n\n{links}\n")
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(label="a\n" + commands[0], summary="b\r\n" + commands[1]))
    for i, c in enumerate(commands):
        reg.raw(f"{F}/pkt/evidence/e{i}\n{c}.json", b"{}")
    printed = ""
    for args in (("validate",), ("validate", "--format", "summary"), ("build",)):
        done = evreg(*args, cwd=reg.root)
        printed += done.stdout + done.stderr
    for path in list((reg.root / f"{F}/pkt/evidence").glob("e*")):
        path.unlink()
    printed += evreg("build", cwd=reg.root).stdout + evreg("build", cwd=reg.root).stderr
    assert "owned" in printed and "missing" in printed  # the names and targets were printed, escaped
    assert [line for line in printed.splitlines() if line.lstrip().startswith("::")] == []


def test_what_mkdocs_logs_is_escaped(tmp_path: Path) -> None:
    """A link target MkDocs decodes to a line break (``%0A``) is logged as an escape, never as a line of its own."""
    script = (
        "import logging\nfrom evreg.core import printing\n"
        "with printing.escaped_logs():\n"
        "    logging.getLogger('mkdocs.structure.pages').warning(\"target 'a\\n::error title=x::owned' not found\")\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert done.stderr.startswith("WARNING - ") and done.stderr.count("\n") == 1, done.stderr
    assert "\\n::error" in done.stderr


# -- parsers ----------------------------------------------------------------------------------------------------------


def test_every_json_reader_is_the_registrys_own() -> None:
    """No module reads JSON but through ``evreg.core.jsonio`` (``parse`` for records, ``loads`` for the rest)."""
    readers = {("json", "load"), ("json", "loads"), ("orjson", "loads")}
    found = []
    for root in (REPO / "registry/evreg", REPO / "validators/evreg_rules"):
        for path in root.rglob("*.py"):
            if path.name == "jsonio.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                if named and (node.value.id, node.attr) in readers:  # type: ignore[attr-defined]
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 5000 + "1" + "}" * 5000, "[" * 70 + "]" * 70])
def test_deep_nesting_is_a_value_error_not_a_recursion_error(text: str) -> None:
    with pytest.raises(ValueError, match="nests deeper"):
        jsonio.loads(text)


def _written(levels: int, inner: str = "[]") -> bytes:
    """A record in the form ``evreg`` writes (two spaces a level) nesting ``levels`` deep, innermost ``inner``."""
    head = "".join("  " * i + "[\n" for i in range(levels - 1))
    tail = "".join("\n" + "  " * i + "]" for i in reversed(range(levels - 1)))
    return (head + "  " * (levels - 1) + inner + tail + "\n").encode()


@pytest.mark.parametrize("levels", [2, 63, 64, 65, 66, 254, 255, 256, 1023, 1024, 1025])
@pytest.mark.parametrize("inner", ["[]", "{}", "1", '"[[[["'])
def test_a_record_in_the_written_form_is_refused_past_the_depth_limit_never_with_a_traceback(
    levels: int, inner: str
) -> None:
    """The written form's fast path bounds depth by indentation; past what orjson writes (255 levels) or reads (1024)
    it falls back to the careful path, which refuses the file with a finding."""
    raw = _written(levels, inner)
    value, findings = jsonio.parse(raw, "packets/x.json")
    deep = levels + (inner in ("[]", "{}")) - 1
    if deep <= jsonio.MAX_DEPTH:
        assert findings == [] and jsonio.depth(value) == deep
    else:
        assert value is None and [f.code for f in findings] == ["json-syntax"], findings
        assert "nest" in findings[0].message and "64 levels" in findings[0].message + findings[0].hint


def test_a_shallow_reader_skips_the_depth_walk_but_not_the_parsers_limits() -> None:
    """A kept table whose reader checks its shape level by level is read without measuring its depth; nesting past
    what the parsers take is still a ``ValueError``."""
    value = jsonio.loads("[" * 70 + "]" * 70, shallow_reader=True)
    assert isinstance(value, list) and jsonio.depth(value) > jsonio.MAX_DEPTH  # measured only when walked
    with pytest.raises(ValueError, match="nests deeper"):
        jsonio.loads("[" * 100_000, shallow_reader=True)


def test_non_finite_numbers_that_tools_write_are_read() -> None:
    assert str(jsonio.loads(b'{"a": NaN, "b": Infinity, "c": -Infinity}')) == "{'a': nan, 'b': inf, 'c': -inf}"


@pytest.mark.slow
def test_a_page_of_a_super_linear_shape_is_a_finding_not_a_hang() -> None:
    # a run of unclosed "<a " tags (Python-Markdown 3.11.4 renders a run of "[" in linear time; this shape is not)
    found = within(lambda: list(site_pages._rendered_page("site/x.md", "<a " * 20_000, ["tables"])), seconds=60)
    assert [f.code for f in found] == ["site-page-too-slow"]
    assert markdown.RENDER_SECONDS <= 30


def test_a_query_result_is_bounded_in_bytes() -> None:
    done = evreg("query", "SELECT repeat('x', 1000000) AS s FROM range(100)", cwd=REPO)
    assert done.returncode == 1 and "MiB" in done.stderr + done.stdout


@pytest.mark.parametrize("name", ["evil.xht", "evil.xhtm", "evil.HTML", "evil.Svg", "evil.wasm", "x.json", "a.txt"])
def test_site_holds_pages_stylesheets_and_images_only(tmp_path: Path, name: str) -> None:
    from evreg.core.containment import regular_files, unsafe_files

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / name).write_text("<script>alert(1)</script>")
    (tmp_path / "site" / "ok.png").write_bytes(b"\x89PNG")
    (tmp_path / "site" / "Evil.CSS").write_text("@import url(https://evil.example/x.css);")
    assert [rel for rel, _ in unsafe_files(tmp_path, "site")] == [f"site/{name}"]
    assert regular_files(tmp_path, "site", ".css") == ["site/Evil.CSS"]  # read by the stylesheet check, any case


@pytest.mark.slow
def test_titles_and_front_matter_are_text_on_the_built_page(reg: Reg) -> None:
    """MkDocs takes a page's title from its first heading (unescaped) or its front matter, and the theme prints it
    and the description into the HTML as they are: the build escapes them."""
    init_site(reg)
    reg.put("site/x.md", "# &lt;/title&gt;&lt;img src=x onerror=alert(3)&gt;\n\nHello.\n")
    head = (
        '---\ntitle: "\\x3cimg src=x onerror=alert(1)\\x3e"\n'
        'description: "\\x22\\x3e\\x3cimg src=x onerror=alert(2)\\x3e"\n---'
    )
    reg.put("site/y.md", head + "\n\nHello.\n")
    done = evreg("build", cwd=reg.root)
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("x", "y"):
        html = (reg.root / "build/site" / page / "index.html").read_text()
        assert "<img src=x" not in html and "&lt;img src=x onerror" in html, page


def test_the_renderers_allowlist_is_a_net_for_generated_pages() -> None:
    """What the renderer writes passes; anything a missed escape would let in does not."""
    ours = (
        '<table data-metric="x"><tbody data-tier="t"><tr data-measurement="m"><td data-key="1">a</td></tr></tbody>'
        '</table><svg viewBox="0 0 10 10" role="img" aria-label="c"><g fill="none"><polyline points="0,0 1,1"/>'
        '<text x="1" y="2">t</text><title>t</title></g></svg><button type="button">b</button>'
    )
    assert list(sanitize.problems(ours, generated=True)) == []
    for escaped_badly in ("<script>x</script>", '<svg onload="x">', "<foreignObject>", '<a href="javascript:x">a</a>'):
        assert list(sanitize.problems(escaped_badly, generated=True)), escaped_badly
