"""Reporters: how findings are printed. Each is a named class; ``--format NAME`` chooses one.
Another package adds a reporter through the ``evreg.reporters`` entry point (a Reporter
subclass), the way rule packs are added."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar

from evreg.core.printing import visible

if TYPE_CHECKING:  # findings arrive made; this module stays light for the CLI's start
    from evreg.core.findings import Finding

ENTRY_POINT_GROUP = "evreg.reporters"


class Reporter:
    """Turns findings and a summary into lines of output."""

    name: ClassVar[str]

    def lines(self, findings: list[Finding], summary: dict[str, Any], show_baselined: bool = False) -> Iterator[str]:
        """The output lines. Accepted (baselined) findings are only counted unless ``show_baselined``."""
        raise NotImplementedError


class Human(Reporter):
    """One finding per line (file:line:column, severity, code, message, pointer), its hint below."""

    name = "human"

    def lines(self, findings: list[Finding], summary: dict[str, Any], show_baselined: bool = False) -> Iterator[str]:
        for f in findings:
            if show_baselined or not f.baselined:
                yield self.finding(f)
        extra = ""
        if summary.get("baselined"):
            listed = "" if show_baselined else " (accepted in packets/baseline.json; --show-baselined lists them)"
            extra = f", {summary['baselined']} baselined{listed}"
        if "introduced" in summary:
            extra += f"; {summary['introduced']} findings introduced by this change"
        if summary.get("cache_unused"):
            extra += f"; checked without the cache, which cannot be trusted: {visible(summary['cache_unused'])}"
        if summary.get("units"):
            extra += f"; {units_line(summary['units'])}"
        ext = summary.get("external_evidence_refs", 0)
        scope = f"{summary['records']} records in {summary.get('files', 0)} files: " if "records" in summary else ""
        yield (
            f"{scope}{summary['errors']} errors, {summary['warnings']} warnings{extra}"
            + (f"; {ext} evidence references point into external sources ({_external(summary)})" if ext else "")
        )

    @staticmethod
    def finding(f: Finding) -> str:
        """One finding on one line (its hint and reason indented below). Control characters of file names and
        messages are escaped: a line of ours never reads as a CI workflow command or splits in two."""
        where = visible(f.file) + (f":{f.line}:{f.column}" if f.line else "")
        ptr = f" at {visible(f.pointer)}" if f.pointer else ""
        tag = " (baselined)" if f.baselined else ""
        intro = " (not introduced by this change)" if f.introduced is False else ""
        text = f"{where}: {f.severity.value} [{f.code}]{tag}{intro} {visible(f.message)}{ptr}"
        if f.hint:
            text += f"\n    hint: {visible(f.hint)}"
        if f.baseline_reason:
            text += f"\n    baselined because: {visible(f.baseline_reason)}"
        return text


class Json(Reporter):
    """``{"findings": [...], "summary": {...}}``."""

    name = "json"

    def lines(self, findings: list[Finding], summary: dict[str, Any], show_baselined: bool = False) -> Iterator[str]:
        """Every finding, baselined ones marked (``"baselined": true``): a program filters for itself."""
        payload = {"findings": [f.model_dump(mode="json") for f in findings], "summary": summary}
        yield json.dumps(payload, indent=2, ensure_ascii=False)


def escape_data(text: str) -> str:
    """A GitHub workflow command's message: ``%``, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command property value: as data, and ``:`` and ``,`` too (they delimit properties)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GitHub(Reporter):
    """GitHub Actions workflow commands (``::error file=…,line=…,col=…,title=…::message``)."""

    name = "github"

    def lines(self, findings: list[Finding], summary: dict[str, Any], show_baselined: bool = False) -> Iterator[str]:
        """Annotations for the findings that need action, introduced errors first (GitHub shows only the first
        few of a step); accepted (baselined) ones never become annotations."""
        for f in action_order(findings):
            level = "warning" if f.severity == "warning" else "error"
            props = [f"file={escape_property(f.file)}"] if f.file else []
            if f.line:
                props += [f"line={f.line}", f"col={f.column}"]
            props.append(f"title={escape_property(f.code)}")
            message = f.message + (f" ({f.pointer})" if f.pointer else "") + (f" Hint: {f.hint}" if f.hint else "")
            if f.introduced is False:
                message += " (already on the base)"
            yield f"::{level} {','.join(props)}::{escape_data(message)}"


def units_line(units: dict[str, Any]) -> str:
    """How many units (family folders) were reused from the cache and how many checked, by reason."""
    why = ", ".join(f"{n} {reason}" for reason, n in units["why"].items())
    reused = units["reused"]
    return f"{reused} unit{'' if reused == 1 else 's'} reused from the cache, {units['checked']} checked" + (
        f" ({why})" if why else ""
    )


def action_order(findings: list[Finding]) -> list[Finding]:
    """The findings that need action (not baselined): introduced errors, introduced warnings, then those
    already on the base, each in file order."""
    return sorted(
        (f for f in findings if not f.baselined),
        key=lambda f: (f.introduced is False, f.severity != "error", *f.sort_key()),
    )


class Summary(Reporter):
    """A Markdown report for a CI job summary: every finding that needs action (no cap), the ones the
    change introduced first."""

    name = "summary"

    def lines(self, findings: list[Finding], summary: dict[str, Any], show_baselined: bool = False) -> Iterator[str]:
        counts = f"{summary['errors']} errors, {summary['warnings']} warnings"
        if "introduced" in summary:
            counts += f"; {summary['introduced']} findings introduced by this change"
        yield "## Registry validation"
        yield ""
        yield counts + f"; {summary.get('baselined', 0)} accepted in the baseline."
        if summary.get("cache_unused"):
            yield f"\nChecked without the cache, which cannot be trusted: {_cell(summary['cache_unused'])}"
        units = summary.get("units")
        if units:
            yield f"\n{units_line(units)}."
            if units["checked_units"]:
                yield from ("", "| Unit | Why it was checked |", "|---|---|")
                for u in units["checked_units"]:
                    because = f" ({u['because']})" if u.get("because") else ""
                    yield f"| {_cell(u['unit'])} | {_cell(u['why'] + because)} |"
                if len(units["checked_units"]) < units["checked"]:
                    yield f"| ... | {units['checked'] - len(units['checked_units'])} more |"
        ordered = action_order(findings)
        groups = [("Findings", ordered)]
        if "introduced" in summary:  # a change against its base
            groups = [
                ("Introduced by this change", [f for f in ordered if f.introduced]),
                ("Already on the base", [f for f in ordered if not f.introduced]),
            ]
        for title, chosen in groups:
            if chosen:
                yield from ("", f"### {title} ({len(chosen)})", "", "| Severity | Code | Where | Message | Hint |")
                yield "|---|---|---|---|---|"
                for f in chosen:
                    where = f.file + (f":{f.line}" if f.line else "") + (f" {f.pointer}" if f.pointer else "")
                    yield (
                        "| " + " | ".join(_cell(c) for c in (f.severity.value, f.code, where, f.message, f.hint)) + " |"
                    )


def _cell(text: str) -> str:
    """Text as one Markdown table cell, shown as code: record text in a maintainer's job summary is never live
    Markdown (no image or link of a pull request's choosing). One line; pipes escaped (a table splits on them even
    in code); fenced by one more backtick than the longest run in the text."""
    flat = visible(" ".join(text.split())).replace("|", "\\|")
    if not flat:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    return f"{fence} {flat} {fence}"


def impact_lines(
    by_code: list[tuple[str, int, int]], appeared: list[dict[str, Any]], gone: list[dict[str, Any]]
) -> Iterator[str]:
    """A rule change's impact as Markdown for a job summary: per code, the findings that appear and disappear across
    the registry, then the first of each listed (record text as code, as in ``Summary``)."""
    yield "## Impact of this change to the validator"
    yield ""
    if not by_code:
        yield "The changed validator reports exactly what the base's reports on this registry."
        return
    yield "| Code | Appear | Disappear |"
    yield "|---|---|---|"
    for code, up, down in by_code:
        yield f"| {_cell(code)} | {up} | {down} |"
    for title, chosen in (("Appear", appeared), ("Disappear", gone)):
        if chosen:
            yield from ("", f"### {title} ({len(chosen)})", "", "| Code | Where | Message |", "|---|---|---|")
            for f in chosen[:IMPACT_LISTED]:
                where = f"{f.get('file', '')}{' ' + str(f['pointer']) if f.get('pointer') else ''}"
                yield f"| {_cell(str(f.get('code')))} | {_cell(where)} | {_cell(str(f.get('message', '')))} |"
            if len(chosen) > IMPACT_LISTED:
                yield f"| ... | {len(chosen) - IMPACT_LISTED} more | |"


IMPACT_LISTED = 50
"""Findings listed per side of an impact (all are counted)."""


def reporters() -> dict[str, Reporter]:
    """Every reporter by name: ours, then those of installed packages (entry point ``evreg.reporters``)."""
    found: dict[str, Reporter] = {r.name: r for r in (Human(), Json(), GitHub(), Summary())}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        cls = ep.load()
        found.setdefault(cls.name, cls())
    return found


def _external(summary: dict[str, Any]) -> str:
    """How many external references were checked: held here as copies (``evreg hold``), against a local clone of their
    source (``--source``)."""
    checked, held = summary.get("external_checked", 0), summary.get("external_evidence_held", 0)
    parts = [f"{held} held here as copies and checked"] if held else []
    parts += [f"{checked} checked against a local clone of their source"] if checked else []
    rest = summary.get("external_evidence_refs", 0) - checked - held
    return ", ".join(parts) + ("; the rest not checked here" if rest > 0 else "") if parts else "not checked here"
