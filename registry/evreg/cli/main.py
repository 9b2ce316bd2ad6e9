"""The ``evreg`` command line.

Exit codes: 0 success (warnings allowed unless ``--strict``), 1 findings
with errors (or a check that failed), 2 usage or internal failure.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import importlib
import importlib.util
import io
import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evreg.core.layout import CACHE_DIR, DEFAULT_DB, PACKETS, record_path
from evreg.core.vocab import OBSERVED_STATES


def _lazy(name: str) -> types.ModuleType:
    """A module of ours, imported when first used: each command loads only what it needs (pydantic,
    the record models and the rule engine are not needed for `evreg --version` or `--help`)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None, name
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from evreg import formats, store
    from evreg.app import scaffold
    from evreg.check import pipeline, reporters, results, rules
    from evreg.core import jsonio
    from evreg.core.findings import Finding
    from evreg.records import schemas
    from evreg.store import Registry, provenance
else:
    formats, jsonio, pipeline, provenance, reporters, results, rules, scaffold, schemas, store = (
        _lazy(f"evreg.{name}")
        for name in (
            "formats",
            "core.jsonio",
            "check.pipeline",
            "store.provenance",
            "check.reporters",
            "check.results",
            "check.rules",
            "app.scaffold",
            "records.schemas",
            "store",
        )
    )

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


if TYPE_CHECKING:
    from evreg.catalog import file as catalogfile


def find_root(start: Path) -> Path:
    """The registry root: ``start`` when it holds packets/, else its git work tree."""
    if (start / PACKETS).is_dir():
        return start
    import git  # only when needed: importing GitPython costs a fifth of a pre-commit run

    try:
        with git.Repo(start, search_parent_directories=True) as repo:
            if repo.working_tree_dir:
                return Path(repo.working_tree_dir)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        pass
    return start


class Context:
    def __init__(self, root: Path | None) -> None:
        self.root = (root or find_root(Path.cwd())).resolve()


pass_ctx = click.make_pass_decorator(Context)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Registry to act on (default: the current directory when it holds packets/, else the git work tree "
    "containing it).",
)
@click.version_option(package_name="evidence-registry")
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Evidence registry for LLM inference results."""
    ctx.obj = Context(root)


# -- reporting -------------------------------------------------------------


def emit(findings: list[Finding], summary: dict[str, Any], fmt: str, show_baselined: bool = False) -> None:
    """Print findings with the reporter named ``fmt``."""
    for line in reporters.reporters()[fmt].lines(findings, summary, show_baselined):
        click.echo(line)


class _Reporters(click.Choice):
    """The names of the installed reporters, looked up when the option is used (not when the CLI starts)."""

    def __init__(self) -> None:
        super().__init__([])

    @property  # type: ignore[override]  # a computed list where click keeps a fixed one
    def choices(self) -> list[str]:
        return list(reporters.reporters())

    @choices.setter
    def choices(self, _value: object) -> None:
        pass


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=_Reporters(),
    default="human",
    show_default=True,
    help="Output format.",
)


def _in_paths(file: str, paths: list[str]) -> bool:
    return not paths or any(file == p or file.startswith(p.rstrip("/") + "/") for p in paths)


def run_validation(root: Path, base: str | None = None, use_cache: bool = True) -> tuple[Registry, rules.Report]:
    try:
        return pipeline.validate(root, base=base, use_cache=use_cache)
    except store.BaseNotFound as exc:
        raise click.UsageError(str(exc)) from None


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@FORMAT_OPTION
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--base",
    "base",
    metavar="REV",
    help="Validate the change since REV (its merge base with HEAD): adds the history rules, and lists the "
    "findings REV does not have (introduced by the change) first.",
)
@click.option("--no-cache", is_flag=True, help=f"Check every unit afresh (the cache is {CACHE_DIR}/).")
@click.option(
    "--show-baselined", is_flag=True, help="Also list the accepted (baselined) findings; by default they are counted."
)
@pass_ctx
def validate(
    ctx: Context,
    paths: tuple[Path, ...],
    fmt: str,
    strict: bool,
    base: str | None,
    no_cache: bool,
    show_baselined: bool,
) -> None:
    """Check the registry; report findings with file, line and JSON pointer.

    With PATHS, only findings in those files or folders are reported (the
    whole registry is still loaded, since references cross files).
    """
    rel = [_relative(ctx.root, p) for p in paths]
    _registry, report = run_validation(ctx.root, base, not no_cache)
    findings = [f for f in report.findings if _in_paths(f.file, rel)]
    shown = rules.Report(findings, report.records, report.files, report.external_refs)
    if "introduced" in report.extra:
        shown.extra["introduced"] = sum(1 for f in shown.blocking if f.introduced)
    emit(findings, shown.summary(), fmt, show_baselined)
    sys.exit(EXIT_FINDINGS if shown.errors(strict) else EXIT_OK)


def _relative(root: Path, path: Path) -> str:
    full = (Path.cwd() / path).resolve()
    try:
        return full.relative_to(root).as_posix()
    except ValueError as exc:
        raise click.UsageError(f"{path} is not inside the registry at {root}") from exc


@cli.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """Say what rule CODE checks, why, how to fix it, and a failing example.

    Without CODE, list every code.
    """
    docs = rules.code_docs(rules.discover())
    if code is None:
        for doc in sorted(docs.values(), key=lambda d: d.code):
            click.echo(f"{doc.code:28} {doc.title}")
        return
    found = docs.get(code)
    if found is None:
        raise click.UsageError(f"unknown code {code!r}; `evreg explain` lists them")
    click.echo(f"{found.code}: {found.title}\n\nWhy: {found.why}\n\nFix: {found.hint}")
    if found.example:
        click.echo(f"\nFails, for example:\n  {found.example}")


@cli.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def init_cmd(directory: Path | None) -> None:
    """Make DIRECTORY (default: here) a registry: mkdocs.yml, site/, schema/, packets/, build/ ignored, and a git
    repository when it is in none. Existing files are kept as they are."""
    root = (directory or Path.cwd()).resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        written, kept = scaffold.init_registry(root)
    except scaffold.ScaffoldRefused as exc:
        raise click.ClickException(str(exc)) from None
    for rel in written:
        click.echo(f"wrote {rel}")
    if kept:
        click.echo(f"kept {len(kept)} existing files: {', '.join(kept[:5])}{' ...' if len(kept) > 5 else ''}")
    click.echo(f"next: evreg import neural-download FAMILY.json (or evreg new family ...), then evreg build, in {root}")


@cli.command("schema")
@click.option("--check", is_flag=True, help="Fail with schema-drift instead of writing.")
@pass_ctx
def schema_cmd(ctx: Context, check: bool) -> None:
    """Write schema/*.schema.json from the record models (or check them)."""
    if check:
        findings = schemas.check(ctx.root)
        for f in findings:
            click.echo(reporters.Human.finding(f))
        click.echo("schema/ is up to date" if not findings else f"{len(findings)} schema files drifted")
        sys.exit(EXIT_FINDINGS if findings else EXIT_OK)
    for name, text in schemas.generate().items():
        jsonio.write_atomic(ctx.root / schemas.SCHEMA_DIR / name, text)
    click.echo(f"wrote {len(schemas.generate())} schemas to {schemas.SCHEMA_DIR}/")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--check", is_flag=True, help="List files that are not canonical; change nothing.")
@pass_ctx
def fmt(ctx: Context, paths: tuple[Path, ...], check: bool) -> None:
    """Rewrite record files in canonical JSON (every field kept)."""
    rel = [_relative(ctx.root, p) for p in paths]
    registry = store.load(ctx.root)
    changed, broken = [], []
    for doc in registry.documents:
        if not doc.place.kinds or not _in_paths(doc.path, rel):
            continue
        if doc.data is None and doc.raw is not None:
            broken.extend(doc.findings)
            continue
        if doc.raw is None:
            continue
        text = jsonio.canonical(doc.data)
        if text.encode("utf-8") != doc.raw:
            changed.append(doc.path)
            if not check:
                jsonio.write_atomic(ctx.root / doc.path, text)
    for f in broken:
        click.echo(reporters.Human.finding(f))
    verb = "would reformat" if check else "reformatted"
    for path in changed:
        click.echo(f"{verb} {path}")
    click.echo(
        f"{len(changed)} files {verb}, {len(broken)} unreadable"
        if changed or broken
        else "all record files are canonical"
    )
    sys.exit(EXIT_FINDINGS if broken or (check and changed) else EXIT_OK)


# -- catalog -----------------------------------------------------------------

DB_OPTION = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Catalog file (default: {DEFAULT_DB} in the registry).",
)
AS_OF_OPTION = click.option(
    "--as-of",
    "as_of",
    metavar="REV|DATE",
    help="Use the store as committed at a revision, or at the end of a date (YYYY-MM-DD).",
)


def ensure_catalog(
    root: Path, db: Path | None, as_of: str | None, force: bool = False, now: catalogfile.Stamp | None = None
) -> tuple[Path, bool, rules.Report]:
    """The catalog for the store (at ``as_of``), built when missing, stale or corrupt; and the
    validation report it holds. ``now``: the work tree's stamp if the caller has just taken it."""
    import git

    from evreg.catalog import build as catalog
    from evreg.catalog import file as catalogfile

    db = db or root / DEFAULT_DB
    rev = None
    now = None if as_of else now or catalogfile.take(root, db)  # before validating: a change meanwhile makes it stale
    if as_of:
        try:
            rev = provenance.resolve(root, as_of)
        except (ValueError, git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise click.UsageError(f"--as-of: {exc}") from None
    head = rev or _head(root)
    registry, report = pipeline.validate(root, rev=rev)
    with store.no_cycle_collection():
        print_ = catalog.fingerprint(registry, head, report.findings)
        meta = catalog.read_meta(db)
        if not force and meta and meta.get("fingerprint") == print_:
            times = now.record.get("stamp_folder_times") if now is not None else None
            renewed = times and times != meta.get("stamp_folder_times")
            if now is not None and (meta.get("stamp") != now.value or renewed):
                catalogfile.set_stamp(db, now)
            return db, False, report
        history = provenance.history(root, rev or "HEAD") if head else {}
        catalog.build(
            registry,
            report.findings,
            history,
            db,
            {
                "schema_version": str(catalog.tables.SCHEMA_VERSION),
                "fingerprint": print_,
                "source": registry.source.label,
                "commit": head or "",
                **(now.meta() if now is not None else {}),
            },
        )
    return db, True, report


def _head(root: Path) -> str | None:
    import git

    try:
        with git.Repo(root) as repo:
            return repo.head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return None


@cli.command("catalog")
@DB_OPTION
@AS_OF_OPTION
@pass_ctx
def catalog_cmd(ctx: Context, db: Path | None, as_of: str | None) -> None:
    """Build the DuckDB catalog of the store (atomically)."""
    from evreg.catalog import build as catalog

    path, _, _ = ensure_catalog(ctx.root, db, as_of, force=True)
    counts = ", ".join(
        f"{n} {catalog.query(path, f'SELECT count(*) FROM {n}')[1][0][0]}" for n in catalog.table_names()
    )
    click.echo(f"catalog written to {path}: {counts}")


def _table(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [min(60, max([len(c)] + [len(r[i]) for r in cells])) for i, c in enumerate(columns)]
    line = lambda vals: "  ".join(v[:60].ljust(w) for v, w in zip(vals, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in cells)])


@cli.command()
@click.argument("sql")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@DB_OPTION
@AS_OF_OPTION
@pass_ctx
def query(ctx: Context, sql: str, fmt: str, db: Path | None, as_of: str | None) -> None:
    """Run one read-only SQL statement against the catalog (rebuilt first when missing, stale or corrupt).

    The query runs in a sandbox: no file or network access, no extensions, locked settings,
    bounded memory, threads and time (see site/security.md)."""
    import duckdb

    from evreg.catalog import file as catalogfile  # DuckDB only: a fresh catalog (its stamp) needs no validation

    path = db or ctx.root / DEFAULT_DB
    fresh, now = (False, None) if as_of else catalogfile.check(ctx.root, path)
    if not fresh:
        path, _, _ = ensure_catalog(ctx.root, db, as_of, now=now)
    try:
        columns, rows = catalogfile.query(path, sql)
    except catalogfile.QueryRefused as exc:
        click.echo(f"query refused: {exc}", err=True)
        sys.exit(EXIT_FINDINGS)
    except duckdb.InterruptException:
        click.echo(f"query stopped: it ran longer than {catalogfile.QUERY_TIMEOUT_S:g} s", err=True)
        sys.exit(EXIT_FINDINGS)
    except duckdb.PermissionException as exc:
        click.echo(f"query refused: it reads or writes outside the catalog ({exc})", err=True)
        sys.exit(EXIT_FINDINGS)
    except duckdb.Error as exc:
        click.echo(f"query failed: {exc}", err=True)
        sys.exit(EXIT_FINDINGS)
    if fmt == "json":
        click.echo(
            json.dumps([dict(zip(columns, r, strict=True)) for r in rows], indent=2, default=str, ensure_ascii=False)
        )
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        click.echo(buf.getvalue(), nl=False)
    else:
        click.echo(_table(columns, rows))


# -- site ------------------------------------------------------------------------


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: build/site).")
@AS_OF_OPTION
@FORMAT_OPTION
@pass_ctx
def build(ctx: Context, out: Path | None, as_of: str | None, fmt: str) -> None:
    """Validate, build the catalog and the data downloads, and build the site.

    Refuses to publish when validation has errors, and fails on any rendered
    figure that did not come through a citation (orphan-number).
    """
    sys.exit(_build(ctx.root, out, as_of, fmt))


def _build(root: Path, out: Path | None, as_of: str | None, fmt: str) -> int:
    import logging
    import time

    from evreg.catalog import build as catalog
    from evreg.site import build as sitebuild
    from evreg.store import workers

    started = time.perf_counter()
    db, _built, report = ensure_catalog(root, None, as_of)
    if report.errors():
        emit(report.blocking, report.summary(), fmt)
        click.echo("build refused: validation has errors; nothing was published", err=True)
        return EXIT_FINDINGS
    downloads = root / "build" / "downloads"
    out = out or root / "build" / "site"
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    codes = sorted(rules.code_docs(rules.discover()).values(), key=lambda d: d.code)
    site_started = time.perf_counter()
    # the data downloads are exported in a process of their own while the build reads the catalog
    with workers.beside(catalog.export_tables, db, downloads) as exported:
        built = sitebuild.build_site(root, db, downloads, out, codes, exported)
    site_s = time.perf_counter() - site_started
    if built.findings:
        emit(built.findings, {"errors": len(built.findings), "warnings": 0}, fmt)
        click.echo("build failed: nothing was published (see the findings above)", err=True)
        return EXIT_FINDINGS
    click.echo(
        f"built {built.pages} pages ({built.size / 1e6:.1f} MB) into {out} in {time.perf_counter() - started:.1f} s "
        f"(site {site_s:.1f} s)",
        err=True,
    )
    return EXIT_OK


@cli.command()
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port on 127.0.0.1.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: build/site).")
@pass_ctx
def serve(ctx: Context, port: int, out: Path | None) -> None:
    """Build the site, then serve it on http://127.0.0.1:PORT/ until interrupted.

    The port is taken before the build (a busy port fails at once), and a missing page gets the
    site's own 404 page."""
    import functools
    import http.server

    class SiteHandler(http.server.SimpleHTTPRequestHandler):
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

    out = out or ctx.root / "build" / "site"
    handler = functools.partial(SiteHandler, directory=str(out))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise click.UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror}; choose another --port") from None
    with server:
        code = _build(ctx.root, out, None, "human")
        if code:
            sys.exit(code)
        click.echo(f"serving the registry at http://127.0.0.1:{port}/ (Ctrl-C to stop)", err=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


class ImportGroup(click.Group):
    """``evreg import NAME``: one command per importer of the ``evreg.formats`` entry point group,
    loaded only when it runs (listing them reads package metadata, not the importers)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(formats.discover())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = formats.discover().get(cmd_name)
        return None if entry is None else _with_root(_import_command(formats.load(entry)))


@cli.group("import", cls=ImportGroup)
def import_group() -> None:
    """Bring outside data into the store."""


def _import_command(importer: formats.Importer) -> click.Command:
    """The command of one importer: FILE, its own options, and for a tool's output the packet it joins."""
    params: list[click.Parameter] = [
        click.Argument(["file"], type=click.Path(exists=True, dir_okay=importer.folder is not None, path_type=Path)),
        *(click.Option([f"--{o.name}"], default=o.default, show_default=True, help=o.help) for o in importer.options),
    ]
    if importer.into_packet:
        params += [
            click.Option(
                ["--packet"],
                required=True,
                metavar="FAMILY/PACKET",
                help="The existing packet the results belong to: its revision and artifact apply, and the file's own "
                "identity is checked against its scope.",
            ),
            click.Option(
                ["--state"],
                type=click.Choice(list(OBSERVED_STATES)),
                default="community-measured",
                show_default=True,
                help="State of the imported measurements.",
            ),
            click.Option(
                ["--cards"],
                type=click.IntRange(min=1),
                help="Accelerators the run used, as you ran it (the tool's file does not record it); without it the "
                "runs state no topology.",
            ),
            click.Option(
                ["--hardware"],
                help="The accelerators the runs used, as you ran them, where the tool's file does not name them "
                "(compared with the packet's; without it such runs state no hardware).",
            ),
        ]
    params += [
        click.Option(["--overwrite"], is_flag=True, help="Replace record files that exist with other content."),
        *FORMAT_OPTION(click.Command("_")).params,  # the --format option every reporting command shares
    ]

    @pass_ctx
    def run(ctx: Context, file: Path, overwrite: bool, fmt: str, **given: Any) -> None:
        def make() -> formats.Plan:
            packet, state = given.pop("packet", None), given.pop("state", "community-measured")
            # --cards and --hardware of a tool's file; an importer of its own identity reads its own options
            cards, hardware = (
                (given.pop("cards", None), given.pop("hardware", None)) if importer.into_packet else (None, None)
            )
            target = formats.find_target(ctx.root, packet, str(file)) if packet is not None else None
            if target is not None and hardware:
                target = dataclasses.replace(target, stated_hardware=hardware)
            return formats.with_stated_hardware(planned(target, cards, state), target, str(file))

        def planned(target: formats.Target | None, cards: int | None, state: str) -> formats.Plan:
            if file.is_dir() and importer.folder is not None:
                picked = importer.folder(file)
                if not picked:
                    raise formats.refuse(str(file), "", f"no {importer.name} output in the folder", importer.summary)
                return formats.merge(
                    [
                        importer.plan(
                            formats.Request(
                                p.read_bytes(), str(p), formats.folder_name(file, p), target, state, given, cards
                            )
                        )
                        for p in picked
                    ]
                )
            request = formats.Request(file.read_bytes(), str(file), file.name, target, state, given, cards)
            return importer.plan(request)

        _run_import(ctx, make, overwrite, fmt)

    return click.Command(importer.name, callback=run, params=params, help=importer.summary)


def _run_import(ctx: Context, make_plan: Any, overwrite: bool, fmt: str) -> None:
    """Plan, write (never overwriting silently, never a published measurement), then report what validation
    finds that was not there before: the import exits 1 when it introduced an error."""
    try:
        plan = make_plan()
    except formats.ImportRefused as exc:
        emit(exc.findings, {"errors": len(exc.findings), "warnings": 0}, fmt)
        click.echo("import refused: nothing was written", err=True)
        sys.exit(EXIT_FINDINGS)
    before = {_finding_key(f) for f in run_validation(ctx.root)[1].findings} if plan.files else set()
    result = formats.write_plan(ctx.root, plan, overwrite)
    if result.conflicts:
        _refuse_conflicts(result)
    for note in plan.notes:
        click.echo(note, err=True)
    click.echo(f"wrote {len(result.written)} files, {len(result.unchanged)} unchanged", err=True)
    for path in result.written:
        click.echo(f"  {path}", err=True)
    _registry, report = run_validation(ctx.root)
    mine = [f for f in report.findings if _finding_key(f) not in before and not f.baselined]
    older = len([f for f in report.findings if _finding_key(f) in before and not f.baselined])
    shown = plan.warnings + mine
    errors = sum(1 for f in shown if f.severity == "error")
    emit(shown, report.summary() | {"errors": errors, "warnings": len(shown) - errors, "baselined": 0}, fmt)
    if older:
        click.echo(f"{older} findings were there before this import (not shown; `evreg validate` lists them)", err=True)
    if errors:
        click.echo("import done, with errors it introduced: fix them or remove the files it wrote", err=True)
        sys.exit(EXIT_FINDINGS)
    click.echo("import done; the findings above are what it added to what `evreg validate` reports", err=True)


def _finding_key(f: Finding) -> tuple[str, str, str, str]:
    return (f.code, f.file, f.pointer, f.message)


def _refuse_conflicts(result: formats.WriteResult) -> None:
    """Refuse an import that would change existing files: published observations (measurements, closures, evidence)
    never change, with or without ``--overwrite``; other records change only with it."""
    for path in result.conflicts:
        click.echo(f"exists with other content: {path}", err=True)
    published = [p for p in result.conflicts if any(folder in f"/{p}" for folder in formats.PUBLISHED)]
    if published:
        click.echo(
            f"import refused: {len(published)} published measurements, closures or evidence files would change; "
            "nothing was written. A published measurement is never rewritten, not even with --overwrite: a corrected "
            "number is a new record, with an id of its own, that supersedes the old one (`supersedes`). A tool's "
            "output imported again with changed numbers does this by itself; a file that keeps its records' ids "
            "(a lab's run log or manifest) needs the corrected records renamed and marked `supersedes`",
            err=True,
        )
    else:
        click.echo(
            f"import refused: {len(result.conflicts)} files would be overwritten; "
            "nothing was written (use --overwrite to replace them)",
            err=True,
        )
    sys.exit(EXIT_FINDINGS)


# -- scaffolding ------------------------------------------------------------------


@cli.group()
def new() -> None:
    """Scaffold a family, an artifact or a packet (never overwrites; refuses what the registry does not know)."""


def _scaffolded(path: str, next_steps: str) -> None:
    click.echo(f"wrote {path}\n\nNext:\n{next_steps}")


@new.command("family")
@click.argument("family")
@click.option("--name", required=True, help="Display name of the model line.")
@click.option("--revision", "revision_id", required=True, help="Id of its first weight revision (e.g. model-1.0).")
@click.option("--repository", required=True, help="Repository of the base weights (org/name).")
@click.option("--commit", help="40-hex commit of the weights; without it the revision is unpinned.")
@pass_ctx
def new_family(ctx: Context, family: str, name: str, revision_id: str, repository: str, commit: str | None) -> None:
    """Scaffold packets/FAMILY/family.json with one weight revision."""
    path = record_path("family", family, family)
    with _refusals():
        scaffold.write_new(ctx.root, path, scaffold.family(family, name, revision_id, repository, commit))
    _scaffolded(
        path,
        f"  - evreg new artifact {family} {revision_id} ARTIFACT --quantization Q ...\n"
        f"  - evreg new packet {family} PACKET --revision {revision_id} ...",
    )


@new.command("artifact")
@click.argument("family")
@click.argument("revision")
@click.argument("artifact")
@click.option("--quantization", required=True, help="Its exact quantization, e.g. Q4_K_M or NVFP4.")
@click.option("--repository", required=True, help="Where the quantized weights are published (org/name).")
@click.option("--evidence", required=True, help="A URL or repository path that shows the artifact (model card, file).")
@click.option("--commit", help="40-hex commit of the quantized weights; without it the artifact is unpinned.")
@click.option("--label", help="Human label.")
@pass_ctx
def new_artifact(
    ctx: Context,
    family: str,
    revision: str,
    artifact: str,
    quantization: str,
    repository: str,
    evidence: str,
    commit: str | None,
    label: str | None,
) -> None:
    """Add a quantized artifact to a weight revision of packets/FAMILY/family.json."""
    path = record_path("family", family, family)
    with _refusals():
        record = scaffold.artifact(
            ctx.root,
            family,
            revision,
            artifact,
            quantization=quantization,
            label=label,
            repository=repository,
            commit=commit,
            evidence=evidence,
        )
        scaffold.replace(ctx.root, path, record)
    _scaffolded(path, f"  - evreg new packet {family} PACKET --revision {revision} --artifact {artifact} ...")


@new.command("packet")
@click.argument("family")
@click.argument("packet")
@click.option("--revision", required=True, help="Weight revision id of the family.")
@click.option("--artifact", help="Quantized artifact id (required when the revision has artifacts).")
@click.option("--quantization", help="Only for a packet without an artifact; an artifact's own is used.")
@click.option("--runtime", required=True, help="Runtime and version, e.g. 'vLLM 0.9.1' or 'llama.cpp b5163'.")
@click.option("--hardware", required=True, help="The accelerators, e.g. 'NVIDIA GeForce RTX 4090 24 GB'.")
@click.option("--cards", type=click.IntRange(min=1), required=True, help="Number of accelerators (topology).")
@click.option("--label", help="Human label.")
@pass_ctx
def new_packet(
    ctx: Context,
    family: str,
    packet: str,
    revision: str,
    artifact: str | None,
    quantization: str | None,
    runtime: str,
    hardware: str,
    cards: int,
    label: str | None,
) -> None:
    """Scaffold packets/FAMILY/PACKET/packet.json from a revision and artifact the family declares."""
    path = record_path("packet", family, packet)
    with _refusals():
        record = scaffold.packet(
            ctx.root,
            family,
            packet,
            revision=revision,
            artifact_id=artifact,
            quantization=quantization,
            runtime=runtime,
            cards=cards,
            hardware=hardware,
            label=label,
        )
        scaffold.write_new(ctx.root, path, record)
    _scaffolded(
        path,
        f"  - evreg import llama-bench|vllm-bench|lm-eval|aiperf|mlperf|sglang-bench FILE --packet {family}/{packet}\n"
        f"  - evreg feature {family}/{packet} MEASUREMENT METRIC --sample N\n"
        "  - write numbers in prose as {{ m:ID.METRIC[INDEX] }}\n"
        "  - evreg fmt && evreg validate --base origin/main\n  - open the pull request",
    )


@cli.command()
@click.argument("packet", metavar="FAMILY/PACKET")
@click.argument("measurement")
@click.argument("metric")
@click.option("--sample", type=click.IntRange(min=0), required=True, help="Index of the sample to feature.")
@pass_ctx
def feature(ctx: Context, packet: str, measurement: str, metric: str, sample: int) -> None:
    """Make one stored sample a packet's headline: value, unit, workload and evidence copied exactly."""
    family, _, packet_id = packet.partition("/")
    path = record_path("packet", family, packet_id)
    with _refusals():
        scaffold.replace(ctx.root, path, scaffold.featured(ctx.root, family, packet_id, measurement, metric, sample))
    click.echo(f"wrote {path}: featured {measurement}.{metric}[{sample}]")


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    try:
        yield
    except scaffold.ScaffoldRefused as exc:
        raise click.ClickException(str(exc)) from None


@cli.group("export")
def export_group() -> None:
    """Write store data out in other formats."""


@export_group.command("parquet")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@DB_OPTION
@AS_OF_OPTION
@pass_ctx
def export_parquet(ctx: Context, out_dir: Path, db: Path | None, as_of: str | None) -> None:
    """Write every catalog table as Parquet and JSON Lines, with SHA256SUMS."""
    from evreg.catalog import build as catalog

    path, _, _ = ensure_catalog(ctx.root, db, as_of)
    names = catalog.export_tables(path, out_dir)
    click.echo(f"wrote {len(names)} files and SHA256SUMS to {out_dir}")


@export_group.command("neural-download")
@click.argument("family", required=False)
@click.option("--catalog", is_flag=True, help="Export the registry's family list (packets/catalog.json) instead.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here (atomically) instead of standard output.",
)
@pass_ctx
def export_neural_download(ctx: Context, family: str | None, catalog: bool, output: Path | None) -> None:
    """Join packets/FAMILY back into one neural.download family manifest (or, with --catalog, write the
    registry's family list as the lab's families/catalog.json)."""
    from evreg.formats import neural_download as nd

    if (family is None) == (not catalog):
        raise click.UsageError("name a FAMILY, or pass --catalog (not both)")
    registry = store.load(ctx.root)
    try:
        manifest = nd.export_catalog(registry) if catalog else nd.export(registry, str(family))
    except nd.ExportRefused as exc:
        raise click.ClickException(str(exc)) from None
    except KeyError:
        what = f"family {family!r}" if family else "family list (catalog.json)"
        raise click.ClickException(
            f"no valid {what} in {ctx.root / PACKETS}; run `evreg validate` to see why"
        ) from None
    text = nd.dumps(manifest)
    if output:
        jsonio.write_atomic(output, text)
    else:
        click.echo(text, nl=False)


@cli.command()
@click.option("--sizes", default="10000", show_default=True, help="Comma-separated measurement counts.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1), help="Runs of each phase.")
@click.option("--phases", help="Comma-separated phases to run (default: all).")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), help="Keep (or reuse) the registries here.")
@click.option("--no-adversarial", is_flag=True, help="Skip the hostile 8 MiB records.")
def bench(sizes: str, repeat: int, phases: str | None, keep: Path | None, no_adversarial: bool) -> None:
    """Benchmark whole evreg processes on registries cloned from the real records; print JSON with
    medians, spread, ratios to the floor and peak memory."""
    from evreg.devtools import bench as bench_mod

    try:
        counts = [int(s) for s in sizes.split(",") if s.strip()]
    except ValueError:
        raise click.UsageError("--sizes takes whole numbers separated by commas") from None
    chosen = tuple(p.strip() for p in phases.split(",") if p.strip()) if phases else bench_mod.PHASES
    unknown = sorted(set(chosen) - set(bench_mod.PHASES))
    if unknown:
        raise click.UsageError(f"--phases: unknown {', '.join(unknown)}; choose from {', '.join(bench_mod.PHASES)}")
    results: dict[str, Any] = {"sizes": bench_mod.run(counts, repeat, keep, chosen)}
    if not no_adversarial:
        results["adversarial_8mib_record_s"] = bench_mod.adversarial()
    click.echo(json.dumps(results, indent=2))


def _set_root(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.find_object(Context).root = value.resolve()  # type: ignore[union-attr]  # made by the group first


def _accept_root_after_the_command(group: click.Group) -> None:
    """``--root DIR`` works after the subcommand too (``evreg validate --root DIR``), as users type it."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            _accept_root_after_the_command(command)
        else:
            _with_root(command)


def _with_root(command: click.Command) -> click.Command:
    if not any(p.name == "root" for p in command.params):
        command.params.append(
            click.Option(
                ["--root"],
                type=click.Path(file_okay=False, path_type=Path),
                expose_value=False,
                callback=_set_root,
                help="Registry to act on (also accepted before the command).",
            )
        )
    return command


_accept_root_after_the_command(cli)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
    except click.Abort:
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # never a traceback for the user; EVREG_DEBUG=1 shows it
        if os.environ.get("EVREG_DEBUG"):
            raise
        click.echo(f"evreg: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_USAGE)
