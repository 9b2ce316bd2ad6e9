"""Import a tool's or a lab's file into records: plan, write (never overwriting silently, never a published
observation), then report what validation finds that was not there before."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evreg import formats
from evreg.check import pipeline
from evreg.core.errors import Refused
from evreg.core.findings import Finding
from evreg.formats import Importer, Plan, Target
from evreg.store import writer

__all__ = ["Imported", "Importer", "Plan", "import_file", "importer", "importer_names", "plan"]

_NEVER_REWRITTEN = (
    "nothing was written. A published (committed) measurement is never rewritten, not even with --overwrite: a "
    "corrected number is a new record, with an id of its own, that supersedes the old one (`supersedes`). A tool's "
    "output imported again with changed numbers does this by itself; a file that keeps its records' ids "
    "(a lab's run log or manifest) needs the corrected records renamed and marked `supersedes`"
)


@dataclass
class Imported:
    """What an import wrote and what it introduced: ``findings`` (the importer's warnings, then every finding
    validation reports now that it did not before), with their ``summary``; ``older``: findings there before."""

    notes: list[str]
    written: list[str]
    unchanged: list[str]
    findings: list[Finding]
    summary: dict[str, Any]
    older: int
    errors: int = field(init=False)

    def __post_init__(self) -> None:
        self.errors = sum(1 for f in self.findings if f.severity == "error")


def plan(
    root: Path,
    importer: Importer,
    file: Path,
    options: dict[str, Any],
    packet: str | Target | None = None,
    state: str = "community-measured",
    cards: int | None = None,
    hardware: str | None = None,
) -> Plan:
    """The files an import of ``file`` (a folder, for an importer that reads one) would write. ``packet``:
    the packet a tool's results join (``FAMILY/PACKET`` of an existing one, or its ``Target``); ``cards`` and
    ``hardware``: the run's, as the user ran it."""
    try:
        target = formats.find_target(root, packet, str(file)) if isinstance(packet, str) else packet
        if target is not None and hardware:
            target = dataclasses.replace(target, stated_hardware=hardware)

        def request(path: Path, name: str) -> formats.Request:
            return formats.Request(path.read_bytes(), str(path), name, target, state, options, cards)

        if file.is_dir() and importer.folder is not None:
            picked = importer.folder(file)
            if not picked:
                raise formats.refuse(str(file), "", f"no {importer.name} output in the folder", importer.summary)
            planned = formats.merge([importer.plan(request(p, formats.folder_name(file, p))) for p in picked])
        else:
            planned = importer.plan(request(file, formats.evidence_name(file.name)))
        return formats.with_stated_hardware(planned, target, str(file))
    except formats.ImportRefused as exc:
        raise Refused("import refused: nothing was written", exc.findings) from None


def _key(f: Finding) -> tuple[str, str, str, str]:
    return (f.code, f.file, f.pointer, f.message)


def import_file(root: Path, planned: Plan, overwrite: bool = False, keep_errors: bool = False) -> Imported:
    """Write ``planned`` (from ``plan``) and validate: refused, with nothing written, when it would change an
    existing file (a published observation never; another record only with ``overwrite``), and when the records
    it writes bring errors of their own (what it wrote is taken back), unless ``keep_errors``: a lab's catalogue
    is imported with its genuine defects, for review in the baseline."""
    before = {_key(f) for f in pipeline.validate(root)[1].findings} if planned.files else set()
    result = writer.write(root, planned.files, overwrite=overwrite, drafts=True)
    if result.conflicts:
        raise _conflicts(result)
    report = pipeline.validate(root)[1]
    mine = [f for f in report.findings if _key(f) not in before and not f.baselined]
    older = sum(1 for f in report.findings if _key(f) in before and not f.baselined)
    shown = planned.warnings + mine
    errors = sum(1 for f in shown if f.severity == "error")
    summary = report.summary() | {"errors": errors, "warnings": len(shown) - errors, "baselined": 0}
    if errors and not keep_errors:
        writer.undo(root, result)
        raise Refused(
            f"import refused: its records would bring {errors} errors (above); nothing was written. "
            "State what the file does not say (--cards, --hardware, --runtime) or import into the packet "
            "of the run's scope, then run the same command again",
            shown,
            summary,
        )
    drafts = [p for p in result.replaced if writer.published(p)]
    notes = planned.notes + (
        [f"replaced {len(drafts)} files no commit holds yet (an earlier import's, not published)"] if drafts else []
    )
    return Imported(notes, result.written, result.unchanged, shown, summary, older)


def _conflicts(result: writer.WriteResult) -> Refused:
    lines = [f"exists with other content: {path}" for path in result.conflicts]
    published = [p for p in result.conflicts if writer.published(p)]
    if published:
        lines.append(
            f"import refused: {len(published)} published measurements, closures or evidence files would change; "
            + _NEVER_REWRITTEN
        )
    else:
        lines.append(
            f"import refused: {len(result.conflicts)} files would be overwritten; "
            "nothing was written (use --overwrite to replace them)"
        )
    return Refused("\n".join(lines))


def importer_names() -> list[str]:
    """The installed importers' command names (read from package metadata, none loaded)."""
    return sorted(formats.discover())


def packet_importer_names() -> list[str]:
    """The installed importers of a tool's output, which join an existing packet (``--packet``)."""
    return [n for n in importer_names() if (found := importer(n)) is not None and found.into_packet]


def importer(name: str) -> Importer | None:
    """The installed importer ``name``, loaded; None when there is none of that name."""
    entry = formats.discover().get(name)
    return None if entry is None else formats.load(entry)
