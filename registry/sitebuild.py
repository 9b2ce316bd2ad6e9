"""Building the site: MkDocs Material over pages generated from the catalog.

The MkDocs hooks (wired through ``registry/mkdocs_hooks.py`` in mkdocs.yml)
add the generated pages, render citations in hand-written pages, and scan
every rendered page for figures that did not come through the citation path:
such a page fails the build with ``orphan-number``.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from registry import citations
from registry.findings import Finding
from registry.site import Pages, page_base, render_pages

CATALOG_ENV = "EVREG_CATALOG"
DOWNLOADS_ENV = "EVREG_DOWNLOADS"
NOT_IN_NAV = ("measurements/", "coverage/", "packets/", "families/")


class _State:
    def __init__(self) -> None:
        self.pages: Pages | None = None
        self.sources: dict[str, str] = {}
        self.findings: list[Finding] = []


STATE = _State()


def _downloads() -> list[tuple[str, str, int]]:
    folder = os.environ.get(DOWNLOADS_ENV)
    if not folder or not Path(folder).is_dir():
        return []
    return [
        (f.name, hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_size)
        for f in sorted(Path(folder).iterdir())
        if f.is_file() and not f.name.startswith(".")  # skip another build's files in flight
    ]


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File, InclusionLevel

    db = Path(os.environ.get(CATALOG_ENV) or Path(config["config_file_path"]).parent / "build/catalog.duckdb")
    STATE.pages = Pages(db)
    STATE.findings = []
    downloads = _downloads()
    STATE.sources = render_pages(db, downloads)
    for path, markdown in STATE.sources.items():
        hidden = path.startswith(NOT_IN_NAV) and not path.endswith("index.md")
        inclusion = InclusionLevel.NOT_IN_NAV if hidden else InclusionLevel.UNDEFINED
        if files.get_file_from_path(path):
            files.remove(files.get_file_from_path(path))
        files.append(File.generated(config, path, content=markdown, inclusion=inclusion))
    folder = os.environ.get(DOWNLOADS_ENV)
    for name, _sha, _size in downloads:
        files.append(File.generated(config, f"downloads/{name}", abs_src_path=str(Path(folder) / name)))  # type: ignore[arg-type]
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Citations in hand-written pages become resolved, linked figures."""
    src = page.file.src_uri
    if src in STATE.sources or STATE.pages is None:
        return markdown
    STATE.pages.base = page_base(src).removeprefix("../") if src.endswith("index.md") else page_base(src)
    out = []
    fenced = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        out.append(line if fenced else _render_line(line))
    return "\n".join(out)


def _render_line(line: str) -> str:
    """Render citations outside inline code spans."""
    assert STATE.pages is not None
    parts = re.split(r"(`[^`]*`)", line)
    for i, part in enumerate(parts):
        if part.startswith("`"):
            continue
        pieces, last = [], 0
        for c in citations.parse(part):
            if isinstance(c, citations.CitationError):
                continue
            pieces += [
                part[last : c.start],
                STATE.pages.cite(c.measurement, c.metric, c.index, c.x, c.decimals, c.unit),
            ]
            last = c.end
        parts[i] = "".join(pieces) + part[last:]
    return "".join(parts)


_EXEMPT = re.compile(
    r"<(pre|code)\b[^>]*>.*?</\1>|<(a|mark|span)\b[^>]*class=\"evreg-(?:cite|orphan|unresolved)\"[^>]*>.*?</\2>", re.S
)
_SVG_CITE = re.compile(r'<a class="evreg-cite"[^>]*>.*?</a>', re.S)
_TAG = re.compile(r"<[^>]+>")


def orphans_in_html(content: str) -> list[str]:
    """Figures in rendered page content that did not come through the citation path."""
    text = _SVG_CITE.sub(" ", content)
    text = _EXEMPT.sub(" ", text)
    text = html.unescape(_TAG.sub(" ", text))
    return [f.text for f in citations.find_figures(text)]


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    src = page.file.src_uri
    found = orphans_in_html(content)
    if found:
        source = STATE.sources.get(src) or page.markdown or ""
        rel = src if src in STATE.sources else f"{config['docs_dir'].rstrip('/').rsplit('/', 1)[-1]}/{src}"
        for figure in found:
            line = next((n for n, text in enumerate(source.split("\n"), 1) if figure in html.unescape(text)), None)
            STATE.findings.append(
                Finding(
                    code="orphan-number",
                    file=rel,
                    line=line,
                    column=1,
                    message=f"rendered page {src} shows figure {figure!r} that did not come through a citation",
                    hint="write {{ m:ID.METRIC[INDEX] }} instead of the typed figure",
                )
            )
    return content


def on_post_build(config: Any) -> None:
    if STATE.findings:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"{len(STATE.findings)} orphan numbers on rendered pages")


def build_site(root: Path, db: Path, downloads: Path, out: Path) -> list[Finding]:
    """Run MkDocs over the generated and hand-written pages. Returns orphan-number findings (empty: built)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, BuildError, PluginError

    os.environ[CATALOG_ENV] = str(db)
    os.environ[DOWNLOADS_ENV] = str(downloads)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "true")
    hooks = str(Path(__file__).with_name("mkdocs_hooks.py"))
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    config = load_config(str(root / "mkdocs.yml"), site_dir=str(staging), hooks=[hooks])
    try:
        build(config)
    except (PluginError, BuildError, Abort):
        shutil.rmtree(staging, ignore_errors=True)
        if not STATE.findings:
            raise
        return list(STATE.findings)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _replace_dir(staging, out)
    return []


def _replace_dir(new: Path, target: Path) -> None:
    """Put a finished folder in place of ``target``: readers and a concurrent
    build see the old site or the new one, never a half-written one."""
    for _ in range(20):
        old = target.with_name(f".{target.name}-old-{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.rename(target, old)
        except FileNotFoundError:
            old = None  # type: ignore[assignment]
        try:
            os.rename(new, target)
        except OSError:  # another build put its site in place meanwhile: move it aside and retry
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            continue
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return
    shutil.rmtree(new, ignore_errors=True)
    raise OSError(f"could not put the built site in place at {target}")
