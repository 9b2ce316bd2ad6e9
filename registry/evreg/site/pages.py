"""Site pages, generated from the catalog as HTML (never committed): which pages the site has, and who makes each.

``render_pages(Pages(db))`` is pure: catalog in, ``{path: Page}`` out. A page is a job (its path, the function
that makes it, that function's arguments), made by ``make`` with its links relative to where it is published. The
pieces, each in its module: the catalog in plain data (``evreg.site.data``); the one escape for record text, the
page being built and the site's URLs (``evreg.site.html``); the citation path every number and every record text
goes through (``evreg.site.cite``); the pages of records (``measurements``, ``family``, ``headline``,
``contracts``), the site's own pages (``indexes``) and the comparisons (``compare``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evreg.site import compare, contracts, family, indexes, measurements, models
from evreg.site.cite import Pages
from evreg.site.html import Page, page_base, page_url
from evreg.store import no_cycle_collection

if TYPE_CHECKING:
    from collections.abc import Iterable

    from evreg.core.findings import Code  # the rule docs are handed in: rendering runs no rule code


def render_pages(
    p: Pages, downloads: list[tuple[str, str, int]] | None = None, codes: Iterable[Code] = ()
) -> dict[str, Page]:
    """Every generated page of the site, made in this process: path (under docs_dir) -> Page (the build makes the
    same pages from the same jobs, the record pages in workers: ``sitebuild.SitePlugin``)."""
    return dict(make(p, job) for job in [*site_jobs(p, codes), downloads_job(downloads or []), *record_jobs(p)])


Job = tuple[str, Callable[..., "Page"], tuple[Any, ...]]
"""A page to make: its path, the function that makes it from the catalog and that function's arguments."""


def make(p: Pages, job: Job) -> tuple[str, Page]:
    """One page, made with its links relative to where it is published."""
    path, fn, args = job
    p.base, p.here = page_base(path), page_url(path)
    return path, fn(p, *args)


def downloads_job(downloads: list[tuple[str, str, int]]) -> Job:
    """The page listing the data downloads (name, sha256, bytes): made once they are exported."""
    return ("downloads.md", indexes.downloads, (downloads,))


def record_jobs(p: Pages) -> list[Job]:
    """The pages of records -- each family's page, its measurements filed in no packet and its many matrices, each
    packet's, each coverage contract's --: most of a large site, each made from the catalog alone, so in any order
    and in any process."""
    families = p.records.get("family", {})
    return [  # the family-level pages first: the largest, so workers start on them
        *((f"families/{fid}/measurements.md", measurements.loose_page, (fid,)) for fid in p.loose),
        *((f"families/{fid}.md", family.family_page, (fid,)) for fid in families),
        *(
            (f"families/{fid}/coverage.md", family.matrices_page, (fid,))
            for fid in families
            if len(p.family_records("coverage-view", fid)) > family.FAMILY_MATRICES
        ),
        *((f"packets/{pid}.md", measurements.packet_page, (pid,)) for pid in p.records.get("packet", {})),
        *((f"coverage/{key}.md", contracts.contract_page, (key,)) for key in p.records.get("coverage-contract", {})),
    ]


def site_jobs(p: Pages, codes: Iterable[Code] = ()) -> list[Job]:
    """The site's own pages but the downloads page: home, the indexes, the comparisons, quarantine, defects, the
    reference."""
    return [job for part in site_parts(p, codes) for job in part]


def site_parts(p: Pages, codes: Iterable[Code] = ()) -> list[list[Job]]:
    """The site's own pages (``site_jobs``) in the parts one process makes in one go: the pages that share work
    worked out once per build -- the models' pages, the replications and the comparisons' index, which read every
    headline metric's results by model -- in one part, first (the largest work); each comparison a part, then
    each other page."""
    families = sorted({key.split("/", 1)[0] for key in p.records.get("coverage-contract", {})})
    metrics = compare.headline_metrics(p)
    with no_cycle_collection(lasting=True):  # kept for the whole build, like the catalog they are read from
        compare.rows_by_metric(p)  # read by the first part and every comparison: worked out once, before the parts fork
    return [
        [*models.jobs(p, metrics), ("compare/index.md", indexes.comparisons, (metrics,))],
        *([(compare.page_path(metric), indexes.comparison, (metric,))] for metric in metrics),
        *(
            [job]
            for job in [
                ("index.md", indexes.home, ()),
                ("families/index.md", indexes.families_index, ()),
                ("packets/index.md", indexes.packets_index, ()),
                ("measurements/index.md", indexes.measurements_index, ()),
                ("coverage/index.md", contracts.contracts_index, (None,)),  # every folder URL has a page
                *((f"coverage/{fid}/index.md", contracts.contracts_index, (fid,)) for fid in families),
                ("quarantine.md", indexes.quarantine, ()),
                ("defects.md", indexes.defects, ()),
                ("methodology/grades.md", indexes.grades_page, ()),
                ("methodology/rules.md", indexes.rules_page, (list(codes),)),
                ("schema.md", indexes.schema_page, ()),
            ]
        ),
    ]
