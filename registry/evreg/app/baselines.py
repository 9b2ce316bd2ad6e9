"""The baseline as a command: what it accepts, which of its entries are stale, and proposed entries for the findings a
change brought (each accepting nothing until a maintainer writes its reason). Accepting a defect stays a reviewed
step: a pull request that adds entries is still refused by the rule against self-approval."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evreg.check import pipeline
from evreg.check.rules import code_named
from evreg.core import jsonio
from evreg.core.findings import Finding
from evreg.core.layout import BASELINE
from evreg.store import writer

DESCRIPTION = (
    "Reviewed findings on imported data that are genuine defects of that data, not of the registry. Each stays "
    "visible to readers on the site. CI fails on any finding not listed here."
)
OWN_CODES = {"baseline-stale", "schema"}
"""Findings about the baseline file itself: never proposed as entries of it."""


@dataclass
class Review:
    entries: list[Any]
    """Every entry as written, malformed ones too: ``stale`` and ``unreasoned`` index this list."""
    stale: list[int] = field(default_factory=list)
    """Indexes of entries that match no finding (``baseline-stale``)."""
    unreasoned: list[int] = field(default_factory=list)
    """Indexes of entries without a reason yet: they accept nothing."""
    open: list[Finding] = field(default_factory=list)
    """Findings not accepted that an entry could accept (in the change, with ``base``)."""
    refused: list[Finding] = field(default_factory=list)
    """Findings not accepted that no entry may accept (their code is not baselinable)."""


def _entries(root: Path) -> list[Any]:
    """The baseline's entries as they are, malformed ones too (indexes are validation's ``/entries/N``)."""
    path = root / BASELINE
    if not path.is_file():
        return []
    data = jsonio.loads(path.read_bytes())
    entries = data.get("entries") if isinstance(data, dict) else None
    return list(entries) if isinstance(entries, list) else []


def review(root: Path, base: str | None = None) -> Review:
    """The baseline against the findings of the working tree (those the change since ``base`` introduced)."""
    report = pipeline.validate(root, base=base)[1]
    entries = _entries(root)
    out = Review(entries)
    for f in report.findings:
        if f.file == BASELINE and f.code == "baseline-stale":
            out.stale.append(int(f.pointer.rsplit("/", 1)[-1]))
        if f.file == BASELINE or f.baselined or f.code in OWN_CODES or (base is not None and not f.introduced):
            continue
        (out.open if code_named(f.code).baselinable else out.refused).append(f)
    out.unreasoned = [i for i, e in enumerate(entries) if isinstance(e, dict) and not has_reason(e)]
    return out


def has_reason(entry: dict[str, Any]) -> bool:
    """Whether an entry says why: a reason with a letter or digit in it (invisible or blank characters say nothing)."""
    reason = entry.get("reason")
    return isinstance(reason, str) and any(ch.isalnum() for ch in reason)


def entry_for(f: Finding) -> dict[str, Any]:
    """A proposed entry accepting exactly ``f``: its code, place, fields (else message) and digest; no reason yet."""
    about: dict[str, Any] = {"fields": dict(f.fields)} if f.fields else {"message": f.message}
    digest = {"digest": f.digest} if f.digest else {}
    return {"code": f.code, "file": f.file, "pointer": f.pointer, **about, **digest, "reason": ""}


def propose(root: Path, base: str | None = None) -> tuple[Review, list[dict[str, Any]]]:
    """Write a proposed entry for each open finding (``review``) into the baseline: each accepts nothing until its
    ``reason`` says why the finding is a genuine defect of the data."""
    found = review(root, base)
    proposed = [entry_for(f) for f in found.open]
    known = {
        jsonio.canonical({k: v for k, v in e.items() if k != "reason"}) for e in found.entries if isinstance(e, dict)
    }
    proposed = [e for e in proposed if jsonio.canonical({k: v for k, v in e.items() if k != "reason"}) not in known]
    if proposed:
        _write(root, [*found.entries, *proposed])
    return found, proposed


def prune(root: Path) -> list[Any]:
    """Remove the stale entries (their defect is gone or changed); return them."""
    found = review(root)
    stale = set(found.stale)
    removed = [found.entries[i] for i in sorted(stale)]
    if removed:
        _write(root, [e for i, e in enumerate(found.entries) if i not in stale])
    return removed


def _write(root: Path, entries: list[Any]) -> None:
    path = root / BASELINE
    data = jsonio.loads(path.read_bytes()) if path.is_file() else {"kind": "baseline", "description": DESCRIPTION}
    writer.write(root, {BASELINE: jsonio.canonical({**data, "entries": entries})}, overwrite=True)
