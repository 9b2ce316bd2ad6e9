"""Publish the registry: the catalog, its data downloads and the static site, never from a store with errors."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.server
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from evreg.app.catalog import ensure_catalog
from evreg.app.validation import code_docs
from evreg.catalog import build as catalog
from evreg.catalog import file as catalogfile
from evreg.check.pipeline import cache_problem
from evreg.core import gz, printing
from evreg.core.errors import Refused, UsageProblem
from evreg.core.layout import DEFAULT_DB, DOWNLOADS_DIR
from evreg.site import build as sitebuild
from evreg.site import receipt as receipts
from evreg.store import workers


@dataclass
class Built:
    """A published site: where, its pages and bytes, how long the whole build and the site took, and its receipt
    (``published`` False: its pages made and checked, nothing written, no bytes counted)."""

    out: Path
    pages: int
    size: int
    seconds: float
    site_seconds: float
    receipt: receipts.Receipt
    reused: int = 0  # generated pages whose scans were reused, their content unchanged (``evreg.site.reuse``)
    scanned: list[str] = dataclasses.field(default_factory=list)  # the generated pages scanned (their paths)
    taken: int = 0  # record pages taken as an earlier build made them, nothing they read changed
    pieces_taken: int = 0  # pieces of the site's own pages (a comparison's workloads) taken so
    downloads: tuple[int, int] | None = None  # the data downloads' pieces taken from an earlier export, and all
    published: bool = True


def default_out(root: Path) -> Path:
    return root / "build" / "site"


def build(root: Path, out: Path | None = None, as_of: str | None = None, publish: bool = True) -> Built:
    """Validate, build the catalog and the data downloads, and build the site into ``out``. Refused when
    validation has errors, and when a rendered figure did not come through a citation (orphan-number). Unless
    ``publish``, every page is made and checked and the site is not written (``out`` is left as it is): a pull
    request's check, which publishes nothing and exports no data downloads (their page lists none).

    Every page names what it was built from (its receipt, ``evreg.site.receipt``: taken before validation, so a
    change meanwhile shows as a difference when the site is verified), also written as ``receipt.json``."""
    started = time.perf_counter()
    out = out or default_out(root)
    # one listing of the work tree (git status, every folder) for the receipt and the catalog's stamp, before validating
    stamp = None if as_of else catalogfile.take(root, root / DEFAULT_DB)
    taken = receipts.take(root, skip=(out,), listed=stamp.listed if stamp is not None else None)
    state = ensure_catalog(root, None, as_of, now=stamp)
    db, report = state.path, state.report
    if report.errors():
        raise Refused("build refused: validation has errors; nothing was published", report.blocking, report.summary())
    if as_of:  # the commit the catalog read the records at, as it recorded it
        meta = catalog.read_meta(db) or {}
        taken = dataclasses.replace(taken, as_of=meta.get("commit", ""))
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    site_started = time.perf_counter()
    # the data downloads are exported in a process of their own while the build reads the catalog; a check exports
    # none: they are the catalog's tables as DuckDB writes them, and hold no claim of a page
    downloads = root / "build" / "downloads" if publish else None
    kept = root / DOWNLOADS_DIR if cache_problem(root, DOWNLOADS_DIR) is None else None
    export = workers.beside(_export, db, downloads, kept) if downloads else contextlib.nullcontext(_none)
    with printing.escaped_logs(), export as exported:
        built = sitebuild.build_site(root, db, downloads, out, code_docs(), exported, taken, publish)
        pieces = exported()
    if built.findings:
        raise Refused("build failed: nothing was published (see the findings above)", built.findings)
    now = time.perf_counter()
    seconds = (now - started, now - site_started)
    return Built(
        out,
        built.pages,
        built.size,
        *seconds,
        taken,
        built.reused,
        built.scanned,
        built.taken,
        built.pieces_taken,
        pieces,
        publish,
    )


def _none() -> None:
    return None


def _export(db: Path, downloads: Path, kept: Path | None) -> tuple[int, int] | None:
    """The data downloads exported into ``downloads``, with the compressed pieces kept in ``kept``: how many pieces
    were taken from an earlier export, and how many there are (None without ``kept``)."""
    members = gz.Kept(kept) if kept is not None else None
    catalog.export_tables(db, downloads, members)
    return None if members is None else (members.taken, members.taken + members.made)


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of the built site; a missing page gets the site's own 404 page."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def open_server(out: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server of ``out`` on 127.0.0.1:``port``, bound now (a busy port fails before anything is built)."""
    handler = functools.partial(_SiteHandler, directory=str(out))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise UsageProblem(f"cannot serve on 127.0.0.1:{port}: {exc.strerror}; choose another --port") from None
