"""Importers and exporters for outside formats.

An importer reads one file and returns the records it maps to (``Plan``);
the CLI writes them with ``write_plan`` and then reports what ``validate``
finds. Importers write what they read: they refuse only input they cannot
parse or map (with findings), and never fix, drop or invent data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from registry import jsonio
from registry.findings import Finding


class ImportRefused(Exception):
    """The input cannot be parsed or mapped; ``findings`` say why."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


@dataclass
class Plan:
    """Files an import would write: repository-relative path -> file text."""

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, path: str, record: object) -> None:
        if path in self.files:
            raise ImportRefused(
                [
                    Finding(
                        code="duplicate-id",
                        file=path,
                        message=f"two input records map to {path}",
                        hint="ids must be unique per kind",
                    )
                ]
            )
        self.files[path] = jsonio.canonical(record)


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def write_plan(root: Path, plan: Plan, overwrite: bool = False) -> WriteResult:
    """Write a plan atomically per file. Without ``overwrite`` nothing is
    written when any target exists with other content (no silent overwrite)."""
    result = WriteResult()
    for path, text in plan.files.items():
        target = root / path
        if target.exists() and target.read_bytes() != text.encode("utf-8"):
            result.conflicts.append(path)
    if result.conflicts and not overwrite:
        return result
    for path, text in sorted(plan.files.items()):
        target = root / path
        if target.exists() and target.read_bytes() == text.encode("utf-8"):
            result.unchanged.append(path)
            continue
        jsonio.write_atomic(target, text)
        result.written.append(path)
    return result
