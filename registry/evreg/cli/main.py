"""The ``evreg`` command line.

Exit codes: 0 success (warnings allowed unless ``--strict``), 1 findings
with errors (or a check that failed), 2 usage or internal failure.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import importlib.util
import io
import json
import os
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from evreg.core import VERSION, stops
from evreg.core.errors import EvregError, UsageProblem
from evreg.core.layout import CACHE_DIR, DEFAULT_DB, PACKETS
from evreg.core.tabular import csv_cell


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


LAZY = (
    "app.adding",
    "app.baselines",
    "app.catalog",
    "app.imports",
    "app.publish",
    "app.records",
    "app.validation",
    "check.reporters",
)
"""The modules of ``evreg`` the commands call, loaded when first used."""

if TYPE_CHECKING:
    from evreg.app import adding, baselines, catalog, imports, publish, records, validation
    from evreg.check import reporters
    from evreg.core.findings import Finding
else:
    adding, baselines, catalog, imports, publish, records, validation, reporters = (
        _lazy(f"evreg.{name}") for name in LAZY
    )

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class ObservedState(click.Choice[str]):
    """``--state``: one of the observed states of ``vocab/states.json``, read when the option is parsed, completed
    or shown (reading a vocabulary loads the JSON reader and pydantic, which ``evreg --version`` does not need)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from evreg.core.vocab import OBSERVED_STATES

        return OBSERVED_STATES

    @choices.setter
    def choices(self, value: Any) -> None:
        """Set by ``click.Choice.__init__``; the states come from the vocabulary."""


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
        self.fmt = "human"
        """The reporter of the running command (``--format``): a refusal's findings are printed with it."""


pass_ctx = click.make_pass_decorator(Context)


class _Evreg(click.Group):
    """The ``evreg`` group, where every refusal of a job (``EvregError``) is mapped, once: its findings printed
    with the command's reporter, its message on standard error, exit 2 when the command was asked wrongly, else 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvregError as exc:
            context = ctx.find_object(Context)
            if exc.findings:
                emit(exc.findings, exc.counts(), context.fmt if context is not None else "human")
            click.echo(str(exc), err=True)
            sys.exit(EXIT_USAGE if exc.usage else EXIT_FINDINGS)


@click.group(cls=_Evreg, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Registry to act on (default: the current directory when it holds packets/, else the git work tree "
    "containing it).",
)
@click.version_option(VERSION, package_name="evidence-registry")
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Evidence registry for LLM inference results."""
    ctx.obj = Context(root)


# -- reporting -------------------------------------------------------------


def emit(
    findings: list[Finding], summary: dict[str, Any], fmt: str, show_baselined: bool = False, to: Path | None = None
) -> None:
    """Print findings with the reporter named ``fmt`` (appended to the file ``to`` when given)."""
    lines = reporters.reporters()[fmt].lines(findings, summary, show_baselined)
    if to is None:
        for line in lines:
            click.echo(line)
        return
    try:
        with to.open("a", encoding="utf-8") as out:
            out.writelines(f"{line}\n" for line in lines)
    except OSError as exc:
        raise UsageProblem(f"cannot write the {fmt} output to {to}: {exc.strerror or exc}") from None


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


def _remember_format(ctx: click.Context, _param: click.Parameter, value: str) -> str:
    context = ctx.find_object(Context)
    if context is not None:
        context.fmt = value
    return value


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=_Reporters(),
    default="human",
    show_default=True,
    callback=_remember_format,
    help="Output format: github writes workflow annotations, summary Markdown for a CI job summary; installed "
    "packages may add more.",
)


class _Output(click.ParamType):
    """``FORMAT`` (to standard output) or ``FORMAT=FILE`` (appended to FILE): one output of a validation."""

    name = "format[=file]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, Path | None]:
        if isinstance(value, tuple):
            return value
        name, eq, file = str(value).partition("=")
        known = list(reporters.reporters())
        if name not in known:
            self.fail(f"{name!r} is not a format: use one of {', '.join(known)}, optionally as FORMAT=FILE", param, ctx)
        if eq and not file:
            self.fail(f"{value!r} names no file: write {name}=FILE, or {name} for standard output", param, ctx)
        return name, Path(file) if eq else None


def _remember_outputs(
    ctx: click.Context, param: click.Parameter, value: tuple[tuple[str, Path | None], ...]
) -> tuple[tuple[str, Path | None], ...]:
    printed = [name for name, to in value if to is None]
    if len(printed) > 1:
        raise click.BadParameter(
            f"{' and '.join(printed)} would both go to standard output: give all but one a file (FORMAT=FILE)",
            ctx,
            param,
        )
    _remember_format(ctx, param, printed[0] if printed else "human")
    return value


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "outputs",
    type=_Output(),
    multiple=True,
    default=["human"],
    show_default=True,
    callback=_remember_outputs,
    help="Output format: github writes workflow annotations, summary Markdown for a CI job summary; installed "
    "packages may add more. FORMAT=FILE appends that output to FILE instead of printing it. Repeatable: one "
    "validation writes every output (at most one printed), e.g. `--format github --format "
    'summary="$GITHUB_STEP_SUMMARY"`.',
)
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
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME=DIR",
    help="A local git clone of external evidence source NAME (a family's `sources`): its references are checked "
    "against it (the file at the pinned commit, each located sample re-read). Repeatable.",
)
@pass_ctx
def validate(
    ctx: Context,
    paths: tuple[Path, ...],
    outputs: tuple[tuple[str, Path | None], ...],
    strict: bool,
    base: str | None,
    no_cache: bool,
    show_baselined: bool,
    sources: tuple[str, ...],
) -> None:
    """Check the registry; report findings with file, line and JSON pointer.

    With PATHS, only findings in those files or folders are reported (the
    whole registry is still loaded, since references cross files).

    Findings accepted in packets/baseline.json are counted in the summary line and
    listed only with --show-baselined (github never annotates them). With
    --base, a finding is introduced when REV does not have it; --base HEAD in a
    repository without a commit counts every finding as introduced.

    Results are cached per family folder and reused while nothing they read has
    changed; a cache that git tracks, or that is reached through a symlink, is never
    used. External evidence is checked where --source gives a clone of its source.
    """
    report = validation.validate(ctx.root, paths, base, not no_cache, validation.sources(sources))
    for name, to in outputs:
        emit(report.findings, report.summary(), name, show_baselined, to)
    sys.exit(EXIT_FINDINGS if report.errors(strict) else EXIT_OK)


@cli.command()
@click.argument("before", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("after", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def impact(before: Path, after: Path) -> None:
    """Say what a change to the validator does: the findings that appear and disappear between two
    `evreg validate --format json` outputs of one registry (BEFORE from the base's validator, AFTER from the
    changed one), by code, as Markdown for a CI job summary.

    The pull-request workflow judges a change with the validator of its merge base; when the change edits
    rules, vocabularies or the validator's code, it also runs the changed validator and posts this impact, so
    a maintainer accepts a rule change knowing what it does.
    """
    done = validation.impact(before.read_bytes(), after.read_bytes())
    for line in reporters.impact_lines(done.by_code(), done.appeared, done.disappeared):
        click.echo(line)


@cli.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """Say what rule CODE checks, why, how to fix it, and a failing example.

    Without CODE, list every code.
    """
    if code is None:
        for doc in validation.code_docs():
            click.echo(f"{doc.code:28} {doc.title}")
        return
    found = validation.explain(code)
    click.echo(f"{found.code}: {found.title}\n\nWhy: {found.why}\n\nFix: {found.hint}")
    if found.example:
        click.echo(f"\nFails, for example:\n  {found.example}")
    if forms := validation.accepted(code):
        click.echo("\nStands instead:")
        for form, meaning in forms:
            click.echo(f"  {form:48} {meaning}")


@cli.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def init_cmd(directory: Path | None) -> None:
    """Make DIRECTORY (default: here) a registry: mkdocs.yml, site/, schema/, packets/, build/ ignored, and a git
    repository when it is in none. Existing files are kept as they are.

    Running it again writes nothing. Then `evreg import` and `evreg build` work."""
    root = (directory or Path.cwd()).resolve()
    written, kept = records.init(root)
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
        findings = records.check_schemas(ctx.root)
        for f in findings:
            click.echo(reporters.Human.finding(f))
        click.echo("schema/ is up to date" if not findings else f"{len(findings)} schema files drifted")
        sys.exit(EXIT_FINDINGS if findings else EXIT_OK)
    written = records.write_schemas(ctx.root)
    click.echo(f"wrote {len(written)} schemas to schema/")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--check", is_flag=True, help="List files that are not canonical; change nothing.")
@click.option(
    "--base",
    "base",
    metavar="REV",
    help="Only the record files the change since REV (its merge base with HEAD) adds or modifies, committed or "
    "not; REV's own are known canonical (its CI checks them). Every file when the change edits git attributes, "
    "the code or configuration, or when this evreg is not REV's.",
)
@pass_ctx
def fmt(ctx: Context, paths: tuple[Path, ...], check: bool, base: str | None) -> None:
    """Rewrite record files in canonical JSON (every field kept).

    Canonical: kind and id first, the other keys sorted, 2-space indent, UTF-8, a trailing newline. Files are
    written atomically; with --check nothing changes and the command exits 1 when a file is not canonical."""
    done = records.fmt(ctx.root, paths, check, base)
    for f in done.broken:
        click.echo(reporters.Human.finding(f))
    verb = "would reformat" if check else "reformatted"
    for path in done.changed:
        click.echo(f"{verb} {path}")
    click.echo(
        f"{len(done.changed)} files {verb}, {len(done.broken)} unreadable"
        if done.changed or done.broken
        else "all record files are canonical"
        if done.base is None
        else "the record files of the change are canonical"
    )
    if done.base is not None:
        click.echo(
            f"{done.checked} record files checked: those the change adds or modifies; "
            f"the others are unchanged since {done.base[:12]}, whose CI checked them"
        )
    elif base is not None:
        click.echo(f"{done.checked} record files checked: all of them, since {done.everything}")
    sys.exit(EXIT_FINDINGS if done.broken or (check and done.changed) else EXIT_OK)


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


@cli.command("catalog")
@DB_OPTION
@AS_OF_OPTION
@pass_ctx
def catalog_cmd(ctx: Context, db: Path | None, as_of: str | None) -> None:
    """Build the DuckDB catalog of the store (atomically)."""
    built = catalog.ensure_catalog(ctx.root, db, as_of, force=True)
    counts = ", ".join(f"{name} {n}" for name, n in catalog.table_counts(built.path).items())
    rows = built.rows
    reused = "" if rows is None else f" (rows of {rows['reused']} of {rows['reused'] + rows['made']} units reused)"
    click.echo(f"catalog written to {built.path}: {counts}{reused}")


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

    One SELECT (or EXPLAIN) statement; any other is refused (exit 1, "query refused"), and an SQL
    error exits 1 with "query failed". The query runs in a sandbox: no file or network access, no
    extensions, locked settings, bounded memory, threads, rows and time (see site/security.md)."""
    result = catalog.query(ctx.root, sql, db, as_of)
    columns, rows = result.columns, result.rows
    if fmt == "json":
        click.echo(
            json.dumps([dict(zip(columns, r, strict=True)) for r in rows], indent=2, default=str, ensure_ascii=False)
        )
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([csv_cell(c) for c in columns])
        writer.writerows([csv_cell(v) for v in row] for row in rows)
        click.echo(buf.getvalue(), nl=False)
    else:
        click.echo(_table(columns, rows))


# -- site ------------------------------------------------------------------------


def _built(root: Path, out: Path | None, as_of: str | None, check: bool = False) -> None:
    built = publish.build(root, out, as_of, publish=not check)
    what = (
        f"built {built.pages} pages ({built.size / 1e6:.1f} MB) into {built.out}"
        if built.published
        else f"checked {built.pages} pages (nothing written)"
    )
    click.echo(
        f"{what} in {built.seconds:.1f} s (site {built.site_seconds:.1f} s); generated pages checked "
        f"{len(built.scanned)}, unchanged since an earlier build's checks {built.reused}; record pages taken from an "
        f"earlier build (nothing they read changed) {built.taken}, pieces of the site's own pages {built.pieces_taken}"
        + (
            f"; data downloads' pieces taken from an earlier export {built.downloads[0]} of {built.downloads[1]}"
            if built.downloads is not None
            else ""
        ),
        err=True,
    )


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: build/site).")
@click.option(
    "--check",
    is_flag=True,
    help="Make and check every page, and write no site and no data downloads (a pull request's check: the output "
    "folder is left as it is).",
)
@AS_OF_OPTION
@FORMAT_OPTION
@pass_ctx
def build(ctx: Context, out: Path | None, check: bool, as_of: str | None, fmt: str) -> None:
    """Validate, build the catalog and the data downloads, and build the site.

    Refuses to publish when validation has errors, and fails on any rendered
    figure that did not come through a citation (orphan-number).
    """
    _built(ctx.root, out, as_of, check)


@cli.command()
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port on 127.0.0.1.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: build/site).")
@pass_ctx
def serve(ctx: Context, port: int, out: Path | None) -> None:
    """Build the site, then serve it on http://127.0.0.1:PORT/ until interrupted.

    The port is taken before the build (a busy port fails at once), and a missing page gets the
    site's own 404 page."""
    out = out or publish.default_out(ctx.root)
    with publish.open_server(out, port) as server:
        _built(ctx.root, out, None)
        click.echo(f"serving the registry at http://127.0.0.1:{port}/ (Ctrl-C to stop)", err=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


# -- import ------------------------------------------------------------------------


class ImportGroup(click.Group):
    """``evreg import NAME``: one command per importer of the ``evreg.formats`` entry point group,
    loaded only when it runs (listing them reads package metadata, not the importers)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return imports.importer_names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        importer = imports.importer(cmd_name)
        return None if importer is None else _with_root(_import_command(importer))


@cli.group("import", cls=ImportGroup)
def import_group() -> None:
    """Bring outside data into the store.

    A tool's output joins an existing packet (--packet): the identity the file holds (model,
    quantization, runtime, hardware, topology) is compared with the packet's scope, and a run of another
    scope is refused (import-out-of-scope). What the file does not say is stated with --runtime, --cards
    or --hardware, or stays missing (import-identity-missing). The file is copied byte-exact into the
    packet's evidence/ with its sha256 and a locator for every number; a run that measured nothing
    becomes a closure with its reason.

    Importing the same file again changes nothing; a changed tool file adds records that supersede the
    earlier ones (a lab's changed manifest or run log is refused), and --overwrite never rewrites a
    measurement, closure or evidence file. Every import lists the files it wrote and the findings it
    introduced, and exits 1 when it introduced an error. Importers are plugins of the evreg.formats
    entry point group."""


def _import_command(importer: imports.Importer) -> click.Command:
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
                type=ObservedState(),
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
        # the run's identity, for a tool's file; an importer of its own identity reads --cards, --hardware itself
        stated = ("packet", "state", "cards", "hardware") if importer.into_packet else ()
        identity = {k: given.pop(k) for k in stated}
        planned = imports.plan(ctx.root, importer, file, given, **identity)
        _report_import(imports.import_file(ctx.root, planned, overwrite, keep_errors=not importer.into_packet), fmt)

    return click.Command(importer.name, callback=run, params=params, help=importer.summary)


def _report_import(done: imports.Imported, fmt: str) -> None:
    """What an import wrote and the findings it introduced; exit 1 when it introduced an error."""
    for note in done.notes:
        click.echo(note, err=True)
    click.echo(f"wrote {len(done.written)} files, {len(done.unchanged)} unchanged", err=True)
    for path in done.written:
        click.echo(f"  {path}", err=True)
    emit(done.findings, done.summary, fmt)
    if done.older:
        click.echo(
            f"{done.older} findings were there before this import (not shown; `evreg validate` lists them)",
            err=True,
        )
    if done.errors:
        click.echo("import done, with errors it introduced: fix them or remove the files it wrote", err=True)
        sys.exit(EXIT_FINDINGS)
    click.echo("import done; the findings above are what it added to what `evreg validate` reports", err=True)


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--tool", help="The importer to read every file with (default: recognised from each file).")
@click.option("--hardware", help="The accelerators, where a file does not name them (e.g. 'NVIDIA H100 80GB HBM3').")
@click.option(
    "--cards", type=click.IntRange(min=1), help="How many accelerators the runs used, where a file does not say."
)
@click.option("--runtime", help="The runtime and its version, where a file does not say (e.g. 'vLLM 0.11.0').")
@click.option("--quantization", help="The weights' quantization, where a file does not say (e.g. BF16).")
@click.option("--model", help="The weights, where a file does not name them: a vocabulary model id or ORG/NAME.")
@click.option("--weights", help="The repository a quantized file named by a file (a GGUF) is published in (ORG/NAME).")
@click.option("--commit", help="The 40-hex commit of the base weights, for a family add creates (else it is unpinned).")
@click.option(
    "--state",
    type=ObservedState(),
    default="community-measured",
    show_default=True,
    help="State of the added measurements.",
)
@click.option("--yes", is_flag=True, help="Create the family, artifact and packet records the plan lists.")
@FORMAT_OPTION
@pass_ctx
def add(ctx: Context, files: tuple[Path, ...], yes: bool, fmt: str, tool: str | None, **facts: Any) -> None:
    """Add tools' output files (or folders of them) to the registry in one step.

    Each file's tool is recognised, and the identity it states (model, quantization, runtime, hardware, cards)
    finds the family, weight revision, artifact and packet the runs belong to, by the model's canonical id or
    repository. Where none exists, the records to create are listed, and written with --yes. A fact neither the
    file nor an option states is one question (import-fact-needed). Files are imported as `evreg import` does;
    nothing is written when any file is refused or would bring an error."""
    added = adding.plan(ctx.root, files, adding.Stated(tool=tool, **facts))
    for p in added.placements:
        where = f"{p.family}/{p.packet}" if p.packet else "its own family (a lab's export)"
        click.echo(f"{p.source} ({p.importer.name}) -> {where}", err=True)
    for path in added.skipped:
        click.echo(f"not read (no tool's output evreg reads): {path}", err=True)
    if added.creates:
        click.echo("creates:", err=True)
        for line in added.creates:
            click.echo(f"  {line}", err=True)
        if not yes:
            click.echo(
                "nothing was written: run the same command with --yes to create these and add the files", err=True
            )
            return
    _report_import(adding.add(ctx.root, added), fmt)


@cli.command()
@click.option("--propose", is_flag=True, help="Add an entry, without a reason, for each finding an entry could accept.")
@click.option("--prune", is_flag=True, help="Remove the entries that match no finding.")
@click.option("--base", help="Only the findings the change since this commit introduced (e.g. HEAD, after an import).")
@pass_ctx
def baseline(ctx: Context, propose: bool, prune: bool, base: str | None) -> None:
    """Review packets/baseline.json, the reviewed findings of imported data.

    Lists the entries that match no finding (stale), the entries without a reason (they accept nothing), and the
    findings an entry could accept. --propose writes an entry for each of those, with an empty reason: it accepts
    nothing until a maintainer writes why the finding is a genuine defect of the data. A pull request that adds
    entries is still refused (baseline-self-approval): accepting a defect is a maintainer's own commit."""
    if prune:
        for entry in baselines.prune(ctx.root):
            click.echo(f"removed stale entry: {entry.get('code')} at {entry.get('file')}{entry.get('pointer', '')}")
    if propose:
        for entry in baselines.propose(ctx.root, base)[1]:
            click.echo(f"proposed: {entry['code']} at {entry['file']}{entry['pointer']} (write its reason)")
    found = baselines.review(ctx.root, base)  # after any write: the file as it is now
    click.echo(f"{len(found.entries)} entries; {len(found.stale)} stale; {len(found.unreasoned)} without a reason")
    for i in found.stale:
        entry = found.entries[i]
        click.echo(f"  stale /entries/{i}: {entry.get('code')} at {entry.get('file')}{entry.get('pointer', '')}")
    for f in found.open:
        click.echo(f"  could be accepted: {f.code} at {f.file}{f.pointer} ({f.message})")
    for f in found.refused:
        click.echo(f"  cannot be accepted ({f.code} is never baselined): fix it at {f.file}{f.pointer}")


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
@click.option(
    "--model",
    help="Canonical model id (registry/evreg/vocab/models.json); default: the model the vocabulary knows the "
    "repository as.",
)
@pass_ctx
def new_family(
    ctx: Context, family: str, name: str, revision_id: str, repository: str, commit: str | None, model: str | None
) -> None:
    """Scaffold packets/FAMILY/family.json with one weight revision."""
    path = records.new_family(ctx.root, family, name, revision_id, repository, commit, model)
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
    path = records.new_artifact(
        ctx.root,
        family,
        revision,
        artifact,
        quantization=quantization,
        repository=repository,
        evidence=evidence,
        commit=commit,
        label=label,
    )
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
    """Scaffold packets/FAMILY/PACKET/packet.json from a revision and artifact the family declares.

    Refuses to overwrite a file, and refuses a family, revision or artifact the registry does not know; the
    packet takes the artifact's exact quantization. Prints the next steps."""
    path = records.new_packet(
        ctx.root,
        family,
        packet,
        revision=revision,
        artifact=artifact,
        quantization=quantization,
        runtime=runtime,
        cards=cards,
        hardware=hardware,
        label=label,
    )
    _scaffolded(
        path,
        f"  - evreg import {'|'.join(imports.packet_importer_names())} FILE "
        f"--packet {family}/{packet}\n"
        f"  - evreg feature {family}/{packet} MEASUREMENT METRIC\n"
        "  - write numbers in prose as {{ m:ID.METRIC[INDEX] }}\n"
        "  - evreg fmt && evreg validate --base origin/main\n  - open the pull request",
    )


@cli.command()
@click.argument("packet", metavar="FAMILY/PACKET")
@click.argument("measurement")
@click.argument("metric")
@click.option(
    "--sample",
    type=click.IntRange(min=0),
    help="Feature this one sample (by index) instead of the median of the run's samples.",
)
@click.option(
    "--primary",
    is_flag=True,
    help="Also make the packet its family's primary packet: its headline becomes the family's (on the family and "
    "home pages) where the family declares no featured results.",
)
@pass_ctx
def feature(ctx: Context, packet: str, measurement: str, metric: str, sample: int | None, primary: bool) -> None:
    """Make a run's median (or one stored sample) a packet's headline: value, unit, workload and evidence copied
    exactly."""
    for path in records.feature(ctx.root, packet, measurement, metric, sample, primary):
        click.echo(f"wrote {path}")
    what = f"{measurement}.{metric}[{sample}]" if sample is not None else f"the median of {measurement}.{metric}"
    click.echo(f"featured {what}" + (f"; {packet} is its family's primary" if primary else ""))


@cli.command()
@click.argument("family")
@click.argument("reference")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--commit", required=True, help="The source repository's commit the file was read at (40 hex digits).")
@click.option(
    "--read", "how", required=True, help='How the file was read, in words ("a clone", "the GitHub archive", ...).'
)
@pass_ctx
def hold(ctx: Context, family: str, reference: str, file: Path, commit: str, how: str) -> None:
    """Hold FILE as FAMILY's copy of the external evidence REFERENCE (SOURCE:path), byte for byte.

    The file goes to packets/FAMILY/evidence/SOURCE/PATH and the family's sources list it with the commit it was
    read at and its sha256. Validation checks the copy and re-reads from it the samples of every record citing
    REFERENCE; the site links to it. Use it where the source cannot be cloned at validation time."""
    for path in records.hold(ctx.root, family, reference, file, commit=commit, read=how):
        click.echo(f"wrote {path}")


# -- verify ------------------------------------------------------------------------

VERIFY_SHOWN = 10
"""Files ``evreg verify`` names of each kind of difference (it counts them all)."""


@cli.command()
@click.argument("site_dir", type=click.Path(file_okay=False, path_type=Path))
@pass_ctx
def verify(ctx: Context, site_dir: Path) -> None:
    """Check that a built site is what the registry says: rebuild it and compare, file by file.

    Reads SITE_DIR/receipt.json (every page names it), checks the registry out at the commit it names into a
    temporary git worktree, builds the site there with this evreg and compares every file's SHA-256. Exit 0 only
    when every file matches. Refused when the site was built from uncommitted changes, or with another evreg, rules,
    vocabularies or package versions (the result could not be compared)."""
    from evreg.app import verification

    verdict = verification.verify(ctx.root, site_dir)
    commit = verdict.receipt.commit[:12]
    if verdict.matches:
        click.echo(f"matches: all {verdict.same} files of {site_dir} are those a rebuild of commit {commit} makes")
        return
    click.echo(f"{site_dir} does not match a rebuild of commit {commit}:")
    for label, names in (
        ("differ", verdict.differ),
        ("missing from the site", verdict.missing),
        ("in the site but not in the rebuild", verdict.extra),
    ):
        if names:
            more = f" (and {len(names) - VERIFY_SHOWN} more)" if len(names) > VERIFY_SHOWN else ""
            click.echo(f"  {len(names)} file(s) {label}: {', '.join(names[:VERIFY_SHOWN])}{more}")
    click.echo(f"  {verdict.same} file(s) match")
    sys.exit(EXIT_FINDINGS)


# -- export ------------------------------------------------------------------------


@cli.group("export")
def export_group() -> None:
    """Write store data out in other formats."""


@export_group.command("parquet")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@DB_OPTION
@AS_OF_OPTION
@pass_ctx
def export_parquet(ctx: Context, out_dir: Path, db: Path | None, as_of: str | None) -> None:
    """Write every catalog table as Parquet and JSON Lines, with SHA256SUMS.

    The JSON Lines are gzip-compressed (TABLE.jsonl.gz); a rerun on the same store writes the same bytes."""
    names = records.export_parquet(ctx.root, out_dir, db, as_of)
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
    registry's family list as the lab's families/catalog.json).

    The round trip is lossless: exporting an imported manifest gives JSON equal to the input."""
    if (family is None) == (not catalog):
        raise click.UsageError("name a FAMILY, or pass --catalog (not both)")
    text = records.export_neural_download(ctx.root, family, catalog)
    if output:
        from evreg.core.jsonio import write_atomic

        write_atomic(output, text)
    else:
        click.echo(text, nl=False)


@cli.command()
@click.option("--sizes", default="10000", show_default=True, help="Comma-separated measurement counts.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1), help="Runs of each phase.")
@click.option(
    "--phases",
    help="Comma-separated phases to run (default: all): startup, validate_full, validate_fill_cache, "
    "validate_unchanged, validate_one_measurement, validate_one_family, validate_base_head_one_measurement, "
    "catalog, query, build, export, import, pull_request (the CI workflow's steps on a fresh clone adding one "
    "packet, cold and with the base's results restored).",
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the registries here, and reuse them as they were generated.",
)
@click.option("--no-adversarial", is_flag=True, help="Skip the hostile 8 MiB records.")
def bench(sizes: str, repeat: int, phases: str | None, keep: Path | None, no_adversarial: bool) -> None:
    """Benchmark whole evreg processes on registries cloned from the real records; print JSON with
    medians, spread, ratios to the floor and peak memory.

    For each size, a registry of real shape is generated (or reused from --keep) and committed to git;
    each phase then runs --repeat times as a process of its own: start-up, every form of validation,
    catalog, query, build, export and import. The floor is the time to read and parse every JSON file
    under packets/; memory is the largest resident set of any process and the peak proportional set
    size of the process tree. Unless --no-adversarial, it also times the validation of a record filled
    to the size limit with each hostile text pattern. The site's Performance page explains the output."""
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
    """The CLI, as the console script runs it (``run``): anything but a refusal (which the group maps) is an internal
    error, never a traceback (``EVREG_DEBUG=1`` shows it)."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
    except click.Abort:
        sys.exit(EXIT_USAGE)
    except Exception as exc:
        if os.environ.get("EVREG_DEBUG"):
            raise
        click.echo(f"evreg: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def run() -> None:
    """The ``evreg`` console script: ``main``, then the process ends (``_end``). A stop (``SIGTERM``) ends it as an
    interrupt does, each command removing what it began (``evreg.core.stops``)."""
    stops.on_stop()
    try:
        main()
    except SystemExit as exc:
        _end(exc.code)
    _end(EXIT_OK)


def _end(code: object) -> NoReturn:
    """End the process with ``code`` (as ``sys.exit`` reads it) once its output is written, without freeing its
    objects one by one: a build at 100,000 measurements took 6 s more to free its catalog. Nothing is left to clean
    up by then: every file, connection and pool of workers is closed where it is used."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more can be written to it
            stream.flush()
    os._exit(code if isinstance(code, int) else EXIT_OK if code is None else 1)
