"""Building the site: MkDocs Material over pages generated from the catalog.

``SitePlugin`` (a MkDocs plugin object that ``build_site`` adds to the configuration, holding
its own state) adds the generated pages, puts their HTML in place of MkDocs' rendering (record
text never passes through Markdown), renders citations in hand-written pages, refuses to
publish any file that is not a regular file inside the repository, and scans every rendered
page for figures that did not come through the citation path: such a page fails the build
with ``orphan-number``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import html
import itertools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from mkdocs.plugins import BasePlugin

from evreg.claims import citations, htmlscan, sanitize, siteconfig
from evreg.claims import markdown as md
from evreg.claims.siteconfig import unpublishable
from evreg.core import codes, gz, stops
from evreg.core.containment import SITE_DIR, outside_repository
from evreg.core.findings import Finding
from evreg.core.layout import PAGES_DIR
from evreg.core.progress import Progress
from evreg.site.cite import Pages
from evreg.site.html import Page, evidence_url, page_base, page_url
from evreg.site.pages import Job, downloads_job, make, record_jobs, site_parts
from evreg.site.receipt import RECEIPT_FILE, Receipt, build_date, rules_digest, with_footer
from evreg.site.reuse import Checks, Spill, Trace, content_digest, seal, site_version
from evreg.store import no_cycle_collection, workers

if TYPE_CHECKING:
    from evreg.core.findings import Code

NOT_IN_NAV = ("measurements/", "coverage/", "packets/", "families/", "compare/")


def _downloads(folder: Path | None) -> list[tuple[str, str, int]]:
    if folder is None or not folder.is_dir():
        return []
    return [
        (f.name, hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_size)
        for f in sorted(folder.iterdir())
        if f.is_file() and not f.name.startswith(".")  # skip another build's files in flight
    ]


def _installed(path: str) -> bool:
    """A file of an installed theme (MkDocs' or Material's own templates and assets)."""
    import material
    import mkdocs

    homes = [os.path.dirname(str(pkg.__file__)) for pkg in (material, mkdocs)]
    return any(os.path.commonpath([path, home]) == home for home in homes)


PRODUCT_PAGES = {
    "assets/evreg.css": "evreg.css",
    "assets/evreg-compare.js": "evreg-compare.js",
    "methodology/index.md": "methodology.md",
}
"""Site path -> file in ``PAGES_DIR``: they document and style the product itself, the same in every registry."""


class SitePlugin(BasePlugin):
    """The registry's part of a MkDocs build. One object per build: no module state."""

    def __init__(
        self,
        root: Path,
        db: Path,
        downloads: Path | None,
        code_docs: list[Code],
        pending: Path,
        exported: Callable[[], object],
        receipt: Receipt | None = None,
        checks: Checks | None = None,
        publish: bool = True,
    ) -> None:
        super().__init__()
        self.publish = publish  # False: every page is made and checked, and the record pages and evidence not written
        # the scans of generated pages, reused for pages whose content is unchanged (``evreg.site.reuse``)
        self.checks = checks or Checks("")
        self.receipt = receipt  # what the site was built from: in a footer on every page, and in receipt.json
        self.exported = exported  # waits for the data downloads' export, which runs beside the build
        self.pending = pending  # a folder for record pages' HTML until it is written into its frame
        self.records: list[Made] = []  # the record pages, made: where each one's HTML waits
        self.root, self.db, self.downloads, self.code_docs = root, db, downloads, code_docs
        self.pages = Pages(db)
        self.generated: dict[str, Page] = {}
        self.findings: list[Finding] = []
        self.evidence_published = 0
        self.beside: dict[tuple[str, str], bytes] = {}  # a generated page's data files ((page URL, name) -> bytes)
        self.bodies: dict[str, str] = {}  # a generated page's content, from on_page_content to on_post_page
        self.shells: dict[str, str] = {}  # shell page path -> the theme's page MkDocs rendered for it
        self.nav: Any = None  # the site's navigation (on_nav)
        self.site_name = ""

    def on_config(self, config: Any) -> Any:
        self.site_name = str(config.get("site_name") or "")
        return config

    def on_nav(self, nav: Any, config: Any, files: Any) -> Any:
        self.nav = nav  # record pages' header lists its top-level items (their titles are known once pages are read)
        return nav

    def on_files(self, files: Any, config: Any) -> Any:
        from mkdocs.exceptions import PluginError
        from mkdocs.structure.files import File, InclusionLevel

        real_root = os.path.realpath(self.root)
        for f in files:
            src = f.abs_src_path
            if src is None or _installed(os.path.realpath(src)):
                continue
            rel = os.path.relpath(os.path.abspath(src), os.path.abspath(self.root)).replace(os.sep, "/")
            real = os.path.realpath(src)
            if (
                outside_repository(rel)
                or real != os.path.abspath(src)  # a symlink somewhere on the way
                or os.path.commonpath([real, real_root]) != real_root
                or not os.path.isfile(real)
            ):
                raise PluginError(f"refusing to publish {src}: not a regular file inside the repository")
        for dest, name in PRODUCT_PAGES.items():  # the registry's own site/ may replace them
            if not files.get_file_from_path(dest):
                files.append(File.generated(config, dest, abs_src_path=str(PAGES_DIR / name)))
        downloads = self._take_pages(getattr(config.plugins.get("material/search"), "search_index", None))
        for depth in sorted({depth_of(made.path) for made in self.records}):
            self._take(shell_path(depth), shell_page())
        for path, page in self.generated.items():
            hidden = path.startswith(NOT_IN_NAV) and not path.endswith("index.md")
            inclusion = InclusionLevel.NOT_IN_NAV if hidden else InclusionLevel.UNDEFINED
            if files.get_file_from_path(path):
                files.remove(files.get_file_from_path(path))
            files.append(File.generated(config, path, content=page.stub(), inclusion=inclusion))
        for name, _sha, _size in downloads:  # none without a folder of them
            files.append(File.generated(config, f"downloads/{name}", abs_src_path=f"{self.downloads}/{name}"))
        return files

    def _take_pages(self, index: Any) -> list[tuple[str, str, int]]:
        """The generated pages, and the data downloads (name, sha256, bytes) the downloads page lists. The site's own
        pages (in parts, the largest first: ``site_parts``) and the record pages (most of a large site, in parts) are
        made in worker processes while this process waits for the downloads' export and makes the downloads page; each
        record page's HTML waits in its part's pending file until its frame is known (the build never holds them all),
        and its search entries and orphan figures come back with it, as a site page comes back whole, checked."""
        jobs = record_jobs(self.pages)
        # A part is its number and its jobs' range (the workers inherit the jobs when they fork): a family's page is a
        # part by itself (its measurements in no packet can be megabytes), other record pages come RECORD_PART a part.
        spans, start = [], 0
        while start < len(jobs):
            end = start + 1 if jobs[start][0].startswith("families/") else min(start + RECORD_PART, len(jobs))
            end = min([end, *(i for i in range(start + 1, end) if jobs[i][0].startswith("families/"))])
            spans.append((start, end))
            start = end
        own = site_parts(self.pages, self.code_docs)
        # an item is its part's number (its pack's, ``part-N.html``) and its record pages' range, None for a part of
        # the site's own pages
        items: list[tuple[int, tuple[int, int] | None]] = [(i, None) for i in range(len(own))]
        items += [(len(own) + n, span) for n, span in enumerate(spans)]
        pages, pending, checks = self.pages, self.pending, self.checks

        def made_of(item: tuple[int, tuple[int, int] | None]) -> list[Made] | list[SiteMade]:
            n, span = item
            with no_cycle_collection():  # a comparison builds a million objects that live until it is made
                if span is None:
                    return [own_page(pages, job, checks, pending, n) for job in own[n]]
                return make_records(pages, (n, jobs[span[0] : span[1]]), pending, checks)

        with workers.forked(made_of, items, workers.count_for_files(len(jobs))) as made:
            self.exported()  # the downloads page lists the files: their export has finished (or this raises its error)
            downloads = _downloads(self.downloads)
            self._take(*make(self.pages, downloads_job(downloads)))
            entries = index.entries if isinstance(getattr(index, "entries", None), list) else []
            with Progress("making pages", len(items)) as progress:
                for part in made:
                    for m in part:
                        if isinstance(m, SiteMade):
                            self._keep(m)
                            continue
                        if m.trace is not None:
                            entries.extend(m.trace.entries)
                            self.checks.record(m.path, m)
                        self.findings.extend(m.findings)
                        self.checks.keep(m.path, m.digest, m.entry)
                        self.checks.taken += m.taken
                        m.trace, m.findings, m.entry, m.numbers = None, [], None, ()
                        self.records.append(m)
                    progress.advance()
        return downloads

    def _take(self, path: str, page: Page) -> None:
        """A generated page of the site's own, made here (the downloads page, the frames' shells)."""
        self._keep(site_page(path, page, self.checks))

    def _keep(self, m: SiteMade) -> None:
        """A site page, made and checked (here or in a worker): kept for MkDocs, its data files beside it, its pieces
        for the next build."""
        self.generated[m.path] = m.page
        self.checks.keep(m.path, m.digest, m.entry)
        self.checks.made.update(m.pieces)
        self.checks.pieces_taken += m.taken
        self.findings += m.findings
        for name, data in m.beside.items():
            self.beside[(page_url(m.path), name)] = data

    def on_page_markdown(self, markdown: str, page: Any, config: Any, files: Any) -> str:
        """Citations in hand-written pages become resolved, linked figures."""
        src = page.file.src_uri
        if src in self.generated:
            return ""  # the body is the generated HTML, put in place in on_page_content
        self.pages.base = page_base(src).removeprefix("../") if src.endswith("index.md") else page_base(src)
        self.pages.here = page_url(src)
        return md.with_forms(markdown, self._render)

    def _render(self, part: str) -> str:
        """Citations in a piece of prose (outside code), resolved and linked."""
        pieces, last = [], 0
        for c in citations.parse(part):
            if isinstance(c, citations.CitationError):
                continue
            pieces += [part[last : c.start], self.pages.form(c)]
            last = c.end
        return "".join(pieces) + part[last:]

    def on_page_content(self, content: str, page: Any, config: Any, files: Any) -> str:
        from mkdocs.structure.toc import get_toc

        src = page.file.src_uri
        generated = self.generated.get(src)
        if generated is not None:
            content = generated.html
            page.toc = get_toc(generated.toc)  # type: ignore[arg-type]
            index = getattr(config.plugins.get("material/search"), "search_index", None)
            if generated.search and isinstance(getattr(index, "entries", None), list):
                page.meta["search"] = {"exclude": True}  # the theme would parse the page; its entries are known
                index.entries.extend(generated.search_entries(page.url))  # type: ignore[union-attr]
        if generated is None:  # a hand-written page, read as validation reads it (a generated page was checked as it
            # was made: the renderer writes figures in no attribute or column)
            found = [figure for figure, _ in htmlscan.page_figures(content)]
            self.findings += orphan_findings(f"{SITE_DIR}/{src}", src, found, page.markdown or "")
            # the final net: what MkDocs made of the page is held to the allowlist validation holds its Markdown to
            self.findings += [
                codes.SITE_FILE_UNSAFE.at(f"{SITE_DIR}/{src}", "", f"{p.piece} in the built page is not published")
                for p in sanitize.problems(content)
            ]
            # the theme prints a page's title and front matter into the HTML as they are (its templates do not
            # escape); MkDocs takes them unescaped from the Markdown (``# &lt;b&gt;``) and from YAML, so they are
            # escaped here, the one place they become HTML
            page.title = html.escape(page.title or "", quote=True)
            page.meta = {k: html.escape(v, quote=True) if isinstance(v, str) else v for k, v in page.meta.items()}
        if generated is not None:  # the theme and the search plugin get a mark; on_post_page puts the body there
            self.bodies[src] = content
            return CONTENT_MARK_H1 if "<h1" in content else CONTENT_MARK  # the theme adds an h1 where none is
        return content

    def on_post_page(self, output: str, page: Any, config: Any) -> str:
        """A generated page without the theme's indentation (runs of white space that hold a line break become
        one line break: the same page to a browser, as generated pages hold no ``pre``), a third of its bytes; and its
        scripts (the product's own files, such as the comparison tables'), put at the end of the body, outside the
        page content: content never holds a script element. The body is put in place of its mark only now: the
        theme's search plugin rewrites every page's content with a regular expression (for a page it does not
        index too), which took seconds on a comparison page of 100,000 measurements."""
        generated = self.generated.get(page.file.src_uri)
        base = "../" * str(page.url).count("/")
        if generated is None:
            return with_footer(output, self.receipt, base)
        body = self.bodies.pop(page.file.src_uri, "")
        mark = CONTENT_MARK_H1 if "<h1" in body else CONTENT_MARK
        output = one_break(output).replace(mark, one_break(body).strip(), 1)
        if SHELL_NAME in page.file.src_uri:
            self.shells[page.file.src_uri] = output
        if generated.scripts:
            tags = "".join(f'<script src="{html.escape(src)}" defer></script>' for src in generated.scripts)
            head, sep, tail = output.rpartition("</body>")
            output = head + tags + sep + tail if sep else output + tags
        return with_footer(output, self.receipt, base)

    def on_post_template(self, output_content: str, template_name: str, config: Any) -> str:
        """The site's 404 page gets the receipt's footer too (without the link: it is served at any address)."""
        return with_footer(output_content, self.receipt, None) if template_name == "404.html" else output_content

    def on_post_build(self, config: Any) -> None:
        site = Path(config["site_dir"])
        self._write_data(site)
        if self.findings:
            from mkdocs.exceptions import PluginError

            raise PluginError(f"{len(self.findings)} orphan numbers on rendered pages")
        evidence = evidence_files(self.root, self.pages)
        places = [(page_url(m.path), "page") for m in self.records] + [(dest, "evidence file") for dest, _ in evidence]
        if taken := occupied(site, places):  # refused, as a build refuses them: never written over
            from mkdocs.exceptions import PluginError

            self.findings += taken
            raise PluginError(f"{len(taken)} generated pages or evidence files whose place is taken")
        if self.records:
            self._write_records(site)
        if self.publish:
            self.evidence_published = publish_evidence(evidence, site)
        if self.receipt is not None:
            (site / RECEIPT_FILE).write_text(self.receipt.to_json(), "utf-8")

    def _write_data(self, site: Path) -> None:
        """The data files of generated pages (a comparison's rows past those in the page), beside their page (the HTML
        the page's script makes of them was checked for orphan figures as the page was, ``_take``)."""
        for (url, name), data in self.beside.items():
            out = site / url / name  # the home page's URL is ""
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)

    def _write_records(self, site: Path) -> None:
        """The pages of packets, families, their measurements filed in no packet and coverage (records: some 45,000
        packets and 11,000 coverage contracts at 100,000 measurements), each put into a lean frame made from the
        theme's page as MkDocs rendered it once for a shell page at the same depth: the theme's head (its
        stylesheets, so the page looks as every page does), a header with the site's navigation as links and a search
        box that opens the site's search, and the content. The theme's template costs milliseconds a page and its
        navigation, search dialog and scripts 10 KB; at this many pages, that was most of the build's time and a
        third of its bytes. (Each page was checked for orphan numbers as it was made.)"""
        from mkdocs.exceptions import PluginError

        frames = {}
        links = nav_links(self.nav.items if self.nav is not None else [])
        for shell, output in self.shells.items():
            shutil.rmtree(site / shell.split("/", 1)[0] / shell.split("/")[1].removesuffix(".md"), ignore_errors=True)
            depth = depth_of(shell)
            frame = lean_frame(output, depth, links, self.site_name, with_footer("", self.receipt, "../" * depth))
            if frame is None:
                raise PluginError("the theme's page has no head or body where the frame of record pages is taken from")
            frames[shell] = frame
        _drop_from_sitemap(site, [page_url(shell) for shell in self.shells])
        pending = self.pending

        def write(part: int, made: list[Made]) -> None:
            data = (pending / f"part-{part}.html").read_bytes()
            for m in made:
                top, tail = frames[shell_path(depth_of(m.path))]
                top = top.replace(SHELL_TITLE, html.escape(m.title)).replace(SHELL_URL, page_url(m.path))
                folder = os.path.join(site, page_url(m.path))
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, "index.html"), "wb") as out:
                    out.write(b"".join((top.encode("utf-8"), data[m.offset : m.offset + m.size], tail.encode())))

        if not self.publish:
            return
        # most of the time is the file system's (a folder and a file per page: 54,000 at 100,000 measurements), which
        # threads share; each part's pages are written by one thread
        parts = [(part, list(made)) for part, made in itertools.groupby(self.records, key=lambda m: m.part)]
        with concurrent.futures.ThreadPoolExecutor(workers.count_for_files(len(self.records))) as pool:
            for done in [pool.submit(write, part, made) for part, made in parts]:
                done.result()


@dataclass
class Made:
    """A record page, made (here or in a worker) or taken from an earlier build: where its HTML waits (its part's
    pending file, offset and size), its title, and until they are taken its trace (what it read, and its search
    entries), the orphan figures found on it, its content's digest and the entry its scan made (None when the scan was
    reused: ``evreg.site.reuse``)."""

    path: str
    title: str
    part: int
    offset: int
    size: int
    trace: Trace | None
    findings: list[Finding]
    digest: str = ""
    entry: dict[str, Any] | None = None
    taken: bool = False  # taken from an earlier build's pack (``Checks.page``), not made
    esize: int = 0  # the size of its search entries (JSON) after its HTML in the pending file
    seal: str = ""  # what the page publishes, bound to its path (``evreg.site.reuse.seal``)
    numbers: Sequence[int] = ()  # a taken page's reads as the kept table numbers them (``evreg.site.reuse.Kept``)


RECORD_PART = 200
"""Record pages made in one go by one worker, into one pending file (with 4,000 record pages or more,
``workers.count_for_files``, they are made by one worker per core; ``EVREG_WORKERS`` overrides)."""


def make_records(pages: Pages, part: tuple[int, list[Job]], pending: Path, checks: Checks | None = None) -> list[Made]:
    """The record pages of one part, their HTML (blank runs made one line break: the same page to a browser, as
    generated pages hold no ``pre``) written one after another into the part's pending file, each checked for
    orphan figures as it is made. A page an earlier build made from the same reads of the catalog is taken as it was
    (``Checks.page``); the scans of a page whose HTML is unchanged are reused (``Checks.check``)."""
    checks = checks or Checks("")
    n, jobs = part
    out = []
    with open(pending / f"part-{n}.html", "wb") as spill:
        for job in jobs:
            path = job[0]
            kept = checks.page(path, pages.digests)
            if kept is not None:
                was, data, entries = kept
                title, digest, sealed = was.title, was.content, was.seal
                trace = Trace((), was.inputs, was.trace.entries)  # its reads go back as numbers (``was.numbers``)
            else:
                with pages.reads.recording() as seen:
                    path, page = make(pages, job)
                data = one_break(page.html).encode("utf-8")
                sections = not path.startswith("packets/")  # a packet's: its title and measurements (42,000 at 100k)
                listed = page.search_entries(page_url(path), sections) if page.search else []
                title, trace, digest = page.plain_title(), Trace.of(seen, pages.digests, listed), content_digest(data)
                entries = orjson.dumps(listed)
                sealed = seal(path, digest, title, trace.inputs, entries)
            scan = functools.partial(scan_record, path, data)
            orphans, entry = checks.check(path, digest, scan)
            at = spill.tell()
            out.append(
                Made(
                    path,
                    title,
                    n,
                    at,
                    len(data),
                    trace,
                    orphans,
                    digest,
                    entry,
                    kept is not None,
                    len(entries),
                    sealed,
                    kept[0].numbers if kept is not None else (),
                )
            )
            if checks.saving:
                spill.write(data)
                spill.write(entries)  # after the HTML: kept with it (``Checks.record``)
    return out


@dataclass
class SiteMade:
    """A page of the site's own, made and checked (here or in a worker): the page (its data files taken out), the
    orphan figures and unsafe markup found on it, its content's digest, the entry its scan made (None when reused)
    and its data files' bytes as published."""

    path: str
    page: Page
    findings: list[Finding]
    digest: str
    entry: dict[str, Any] | None
    beside: dict[str, bytes]
    pieces: dict[str, list[Any]] = field(default_factory=dict)  # its pieces' entries (``evreg.site.reuse.Spill``)
    taken: int = 0  # its pieces taken from an earlier build


def own_page(pages: Pages, job: Job, checks: Checks, pending: Path, part: int) -> SiteMade:
    """A page of the site's own, made and checked, its pieces (``Pages.kept``) kept in the part's pack or taken from
    an earlier build's."""
    spill = Spill(checks, pages.digests, pages.reads, pending, part)
    pages.keeper = spill
    try:
        made = site_page(*make(pages, job), checks)
    finally:
        pages.keeper = None
    made.pieces, made.taken = spill.entries, spill.taken
    return made


def site_page(path: str, page: Page, checks: Checks) -> SiteMade:
    """A generated page of the site's own, checked for orphan figures as it is made (as the record pages are: the
    comparison pages are tens of megabytes at 100,000 measurements), with its data files and the HTML the page's
    script makes of them (``evreg.site.compare``). The scans of a page whose content is unchanged are reused
    (``evreg.site.reuse``)."""

    def scan() -> list[Finding]:
        # a page of pieces (a comparison's workloads): each piece was scanned as it was made, the rest is scanned here
        body = page.unscanned_html() if page.checked else page.html
        figures = [*md.html_figures(body), *(f for s in page.checked for f in s.figures)]
        found = orphan_findings(path, path, figures, page.html)
        found += unsafe_findings(path, body)
        found += [unsafe_finding(path, piece) for s in page.checked for piece in s.problems]
        data = [(name, f) for name, (_content, made) in page.data.items() for f in md.html_figures(made)]
        for name, figure in [*data, *(d for s in page.checked for d in s.data)]:
            message = f"data file {name} of page {path} shows figure {figure!r}, not through a citation"
            hint = "write {{ m:ID.METRIC[INDEX] }} instead of the typed figure"
            found.append(codes.ORPHAN_NUMBER.at(path, "", message, hint))
        return found

    # its content: its HTML and its data files (the HTML a data file makes is made from it by the code, whose version
    # is in the address)
    digest = content_digest(page.html.encode("utf-8"), [(name, content) for name, (content, _) in page.data.items()])
    found, entry = checks.check(path, digest, scan)
    beside = {}
    for name, (content, _made) in page.data.items():
        data = content.encode("utf-8")
        # a ".gz" file is compressed with no time stamp in it: the same site gives the same bytes
        beside[name] = gz.compress(data) if name.endswith(".gz") else data
    page.data = {}
    return SiteMade(path, page, found, digest, entry, beside)


def scan_record(path: str, data: bytes) -> list[Finding]:
    """What a record page's scans find on its HTML: orphan figures, and markup outside the renderer's allowlist."""
    body = data.decode("utf-8")
    return orphan_findings(path, path, md.html_figures(body), body) + unsafe_findings(path, body)


def unsafe_findings(path: str, html: str) -> list[Finding]:
    """The final net on a page the renderer made: markup outside the renderer's allowlist (record text is escaped
    into it, so any is a defect of the renderer) is not published."""
    return [unsafe_finding(path, p.piece) for p in sanitize.problems(html, generated=True)]


def unsafe_finding(path: str, piece: str) -> Finding:
    return codes.SITE_FILE_UNSAFE.at(path, "", f"{piece} in the generated page {path} is not published")


def orphan_findings(rel: str, name: str, figures: list[str], source: str) -> list[Finding]:
    """An ``orphan-number`` finding at ``rel`` for each of ``figures`` the rendered page ``name`` shows that did not
    come through a citation, at the first line of ``source`` that shows it."""
    found = []
    for figure in figures:
        line = next((n for n, text in enumerate(source.split("\n"), 1) if figure in html.unescape(text)), None)
        message = f"rendered page {name} shows figure {figure!r} that did not come through a citation"
        hint = "write {{ m:ID.METRIC[INDEX] }} instead of the typed figure"
        found.append(codes.ORPHAN_NUMBER.at(rel, "", message, hint, line=line, column=1))
    return found


CONTENT_MARK, CONTENT_MARK_H1 = "<!--evreg-page-content-->", "<h1>EVREGPAGECONTENT</h1>"
"""Where a generated page's content goes in the theme's page (see ``SitePlugin.on_post_page``); the second for
content with its own h1 (the theme adds the page's title as an h1 to content without one)."""
SHELL_NAME = "shell--"
"""The name of the pages MkDocs renders once as the frame of the record pages at one depth ("--" is in no
id: no record has it)."""
SHELL_TITLE = "EVREGSHELLTITLE"
SHELL_URL = "EVREGSHELLURL"  # where a record page's own URL goes in its frame (its canonical link)
_FRAME_TAGS = (r"<html\b[^>]*>", r"<head>.*?</head>", r"<body\b[^>]*>")
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.S)  # record pages load no script (the theme's: its dialogs)


def depth_of(path: str) -> int:
    """How many folders deep a page's URL is (``packets/ID.md`` is ``packets/ID/``: 2)."""
    return path.count("/") + 1


def shell_path(depth: int) -> str:
    """The shell page at ``depth``: ``packets/shell--page.md``, ``packets/shell--/shell--page.md``, ..."""
    return "packets/" + f"{SHELL_NAME}/" * (depth - 2) + f"{SHELL_NAME}page.md"


def nav_links(items: list[Any]) -> list[tuple[str, str]]:
    """The site's top-level navigation as (title, URL) pairs: a section's first page stands for it; a page without a
    title of its own (``- page.md``) gets the one MkDocs found for it."""
    links = []
    for item in items:
        first = item
        while getattr(first, "children", None):
            first = first.children[0]
        url = getattr(first, "url", None)
        title = item.title or getattr(first, "title", None)
        if isinstance(url, str) and title:
            links.append((str(title), url))
    return links


_GENERIC_META = re.compile(r'<meta name="(?:description|generator)" content="[^"]*">\n?')


def lean_frame(
    theme_page: str, depth: int, nav: list[tuple[str, str]], site_name: str, footer: str = ""
) -> tuple[str, str] | None:
    """The HTML before and after a record page's content at ``depth``, from the theme's page of a shell at that depth:
    its ``html`` and ``body`` tags (language, colour palette) and ``head`` (stylesheets) without scripts, its canonical
    URL made the record page's (``SHELL_URL``); then a header (the site's name, its navigation as links, a search box:
    a form that opens the home page's search with the words typed, as the theme reads ``?q=``) and the theme's
    content classes, so the content looks as on every page; after it, ``footer`` (the receipt's). None when the
    theme's page has no such tags."""
    tags = [
        re.search(pattern, theme_page, re.S) for pattern in (r"<html\b[^>]*>", r"<head>.*?</head>", r"<body\b[^>]*>")
    ]
    if not all(tags):
        return None
    opening, head, body = (t.group(0) for t in tags)  # type: ignore[union-attr]
    head = _SCRIPT.sub("", head)
    head = _GENERIC_META.sub("", head)  # the site-wide description and the generator: 54,000 copies at 100k
    head = re.sub(r'(<link rel="canonical" href="[^"]*?)[^"/]*/?shell--[^"]*"', rf'\1{SHELL_URL}"', head)
    body = body[:-1] + ' class="evreg-lean">' if "class=" not in body else body
    base = "../" * depth

    def href(url: str) -> str:  # a URL of the site, relative to the page; an absolute one as it is
        return url if "://" in url or url.startswith(("/", "mailto:")) else base + url

    links = "".join(f'<a href="{html.escape(href(url))}">{html.escape(title)}</a>' for title, url in nav)
    top = (
        f"<!doctype html>\n{opening}\n{head}\n{body}\n"
        '<header class="md-header md-header--shadow evreg-lean-header"><nav class="md-header__inner md-grid" '
        f'aria-label="Header"><a class="evreg-lean-home" href="{base}">{html.escape(site_name)}</a>'
        f'<form class="evreg-lean-search" action="{base}" method="get" role="search">'
        '<input type="search" name="q" placeholder="Search" aria-label="Search the site"></form></nav></header>\n'
        f'<nav class="evreg-lean-nav md-grid" aria-label="Site">{links}</nav>\n'
        '<div class="md-container"><main class="md-main"><div class="md-main__inner md-grid">'
        '<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">\n'
    )
    return top, f"\n</article></div></div></main></div>\n{footer}</body>\n</html>\n"


def _drop_from_sitemap(site: Path, urls: list[str]) -> None:
    """The shell pages' entries out of MkDocs' sitemap (their files are gone; record pages are not listed: 54,000 at
    100k would pass the 50,000 a sitemap may hold)."""
    sitemap = site / "sitemap.xml"
    if not sitemap.is_file() or not urls:
        return
    text = sitemap.read_text("utf-8")
    for url in urls:
        text = re.sub(rf"\s*<url>\s*<loc>[^<]*/{re.escape(url)}</loc>.*?</url>", "", text, flags=re.S)
    sitemap.write_text(text, "utf-8")
    packed = site / "sitemap.xml.gz"
    if packed.is_file():
        packed.write_bytes(gz.compress(text.encode("utf-8")))


def shell_page() -> Page:
    """The page MkDocs renders once per depth: only its head is used (the theme's stylesheets, at that depth)."""
    shell = Page(SHELL_TITLE, search=False)
    shell.add("<p>frame</p>")
    return shell


def evidence_files(root: Path, pages: Pages) -> list[tuple[str, list[str]]]:
    """Every local evidence file (and held copy of an external one) the catalog lists as present, by its place in the
    site (``evidence/SHA256/NAME``: copies of one file are published once), with the files that may fill it: regular
    files of the repository's own files (a symlink is followed only to one of those, as validation follows it)."""
    real_root = os.path.realpath(root)
    files: dict[str, list[str]] = {}
    for rows in pages.evidence.values():
        for ev in rows:
            local = ev.path if ev.ref_kind == "local" else ev.held  # a held copy of an external file, or none
            if local is None or not ev.present or not ev.sha256 or outside_repository(local):
                continue
            real = os.path.realpath(root / local)  # a link to a file of the repository is that file, as validated
            inside = os.path.commonpath([real, real_root]) == real_root
            if inside and not outside_repository(os.path.relpath(real, real_root)) and os.path.isfile(real):
                files.setdefault(evidence_url(ev.sha256, ev.path), []).append(real)
    return list(files.items())


def publish_evidence(files: list[tuple[str, list[str]]], site: Path) -> int:
    """Copy the evidence files (``evidence_files``) into the site: at each place, the first of its files whose bytes
    still have the sha256 the place names. Returns the number of files published."""
    done = 0
    for dest, reals in files:
        for real in reals:
            data = Path(real).read_bytes()
            if hashlib.sha256(data).hexdigest() == dest.split("/")[1]:
                target = site / dest
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                done += 1
                break
    return done


def occupied(site: Path, places: list[tuple[str, str]]) -> list[Finding]:
    """A finding for each place in the built site (a folder or file, by its path in the site) that MkDocs' output
    already holds, or below a file or link: a page or file under ``site/`` took the address of a generated page or
    an evidence file (``site/packets/ID.md``, ``site/evidence/SHA/NAME.md``), which would be written over, or
    could not be written."""
    kinds: dict[str, str | None] = {"": "dir"}

    def kind(rel: str) -> str | None:
        if rel not in kinds:
            path = os.path.join(site, rel)
            kinds[rel] = (
                "dir" if os.path.isdir(path) and not os.path.islink(path) else "file" if os.path.lexists(path) else None
            )
        return kinds[rel]

    found = []
    for place, what in places:
        parts = place.strip("/").split("/")
        ancestors = ("/".join(parts[:i]) for i in range(1, len(parts)))
        taken = next((a for a in ancestors if kind(a) == "file"), None) or (
            "/".join(parts) if kind("/".join(parts)) is not None else None
        )
        if taken is not None:
            found.append(
                codes.SITE_FILE_UNSAFE.at(
                    f"{SITE_DIR}/{taken}",
                    "",
                    f"the site's {taken} takes the place of the generated {what} {place}",
                    f"rename or remove what under {SITE_DIR}/ is published at {taken}",
                )
            )
    return found


def one_break(html: str) -> str:
    """Every run of white space holding a line break as one line break (``re.sub(r"[ \\t\\r]*\\n\\s*", "\\n")``: the
    blanks before a break, then the break and every blank after it), line by line: the first line without the blanks
    at its end, each other without the white space at its start, those left empty dropped (as the break before them
    takes every blank after it), the last kept even when empty. Seven times faster than two patterns on a site's
    pages: a pattern that starts with a blank is entered at every space of the page."""
    if "\n" not in html:
        return html
    lines = html.split("\n")
    last = lines.pop().lstrip()
    kept = [line for part in lines[1:] if (line := part.lstrip().rstrip(" \t\r"))]
    return "\n".join([lines[0].rstrip(" \t\r"), *kept, last])


@dataclass
class Built:
    """What a build did: the findings that stopped it (unpublishable files, orphan numbers), or the
    pages and bytes it published (counted before the site was put in place: a concurrent build may
    replace it at once)."""

    findings: list[Finding] = field(default_factory=list)
    pages: int = 0
    size: int = 0
    reused: int = 0  # generated pages whose scans were reused (``evreg.site.reuse``)
    taken: int = 0  # record pages taken as an earlier build made them (``evreg.site.reuse``)
    pieces_taken: int = 0  # pieces of the site's own pages taken so (``evreg.site.reuse.Spill``)
    scanned: list[str] = field(default_factory=list)  # the generated pages scanned


def build_site(
    root: Path,
    db: Path,
    downloads: Path | None,
    out: Path,
    code_docs: list[Code] | None = None,
    exported: Callable[[], object] = lambda: None,
    receipt: Receipt | None = None,
    publish: bool = True,
) -> Built:
    """Run MkDocs over the generated and hand-written pages into ``out`` (atomically). ``exported`` waits until
    the data downloads are in ``downloads`` (their export may run beside the build: ``evreg build`` exports them in
    a process of its own while this one reads the catalog; None: there are none to publish). ``receipt``: what the
    site is built from, shown on every page and written as ``receipt.json``; MkDocs' build date is its date
    (``receipt.build_date``). Unless ``publish``, every page is made and checked as for publishing and ``out`` is
    left as it is: the record pages (nearly all of a large site's bytes) and the evidence files are not written, and
    the rest is removed."""
    from mkdocs.commands.build import build
    from mkdocs.exceptions import Abort, BuildError, PluginError

    refused = unpublishable(root)
    if refused:
        return Built(refused)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "true")
    out.parent.mkdir(parents=True, exist_ok=True)
    plugin: SitePlugin | None = None
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    pending: Path | None = None
    try:  # whatever ends the build from here (an error, an interrupt, a stop) removes the folders it began
        config = siteconfig.load(root, site_dir=str(staging))
        if os.path.realpath(config["docs_dir"]) != os.path.realpath(root / SITE_DIR):
            shutil.rmtree(staging, ignore_errors=True)
            return Built(
                [
                    codes.SITE_FILE_UNSAFE.at(
                        "mkdocs.yml",
                        "",
                        f"docs_dir is {config['docs_dir']}; the registry publishes only its own {SITE_DIR}/ folder",
                        f"set docs_dir: {SITE_DIR}",
                    )
                ]
            )
        with no_cycle_collection(lasting=True):  # the kept pages' table, read for the whole build
            checks = Checks.load(root, site_version(root, receipt.rules if receipt is not None else rules_digest()))
        checks.saving = publish  # a check keeps nothing: the next build reuses what the last one kept
        pending = checks.pending_dir(root, out.parent)
        plugin = SitePlugin(root, db, downloads, code_docs or [], pending, exported, receipt, checks, publish)
        config.plugins["evreg"] = plugin
        with build_date(receipt):
            build(config)
        checks.save(root, pending)
        built = Built(
            reused=checks.reused, scanned=checks.scanned, taken=checks.taken, pieces_taken=checks.pieces_taken
        )
        for folder, _, names in os.walk(staging):  # one walk of the 100k site's 108,000 files, not two
            built.pages += names.count("index.html")
            built.size += sum(os.stat(os.path.join(folder, name)).st_size for name in names) if publish else 0
        if publish:
            _replace_dir(staging, out)
        else:
            built.pages += len(plugin.records)  # made and checked, not written (no other page holds their places)
            shutil.rmtree(staging, ignore_errors=True)
        return built
    except (PluginError, BuildError, Abort):
        shutil.rmtree(staging, ignore_errors=True)
        if plugin is None or not plugin.findings:
            raise
        checks.save(root, pending)  # every page was made and checked: what was found is kept for the next build
        return Built(
            list(plugin.findings),
            reused=checks.reused,
            scanned=checks.scanned,
            taken=checks.taken,
            pieces_taken=checks.pieces_taken,
        )
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if pending is not None:
            shutil.rmtree(pending, ignore_errors=True)


def _replace_dir(new: Path, target: Path) -> None:
    """Put a finished folder in place of ``target``: readers and a concurrent
    build see the old site or the new one, never a half-written one (a stop waits until it is done)."""
    with stops.held():
        _swap_dir(new, target)


def _swap_dir(new: Path, target: Path) -> None:
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
