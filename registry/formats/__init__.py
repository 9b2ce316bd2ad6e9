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
    """Files an import would write: repository-relative path -> file bytes."""

    files: dict[str, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, path: str, record: object) -> None:
        """A record, in canonical form."""
        self.add_file(path, jsonio.canonical(record).encode("utf-8"))

    def add_file(self, path: str, content: bytes) -> None:
        """A file as it is (evidence)."""
        if path in self.files and self.files[path] != content:
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
        self.files[path] = content


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def write_plan(root: Path, plan: Plan, overwrite: bool = False) -> WriteResult:
    """Write a plan atomically per file. Without ``overwrite`` nothing is
    written when any target exists with other content (no silent overwrite)."""
    result = WriteResult()
    for path, content in plan.files.items():
        target = root / path
        if target.exists() and target.read_bytes() != content:
            result.conflicts.append(path)
    if result.conflicts and not overwrite:
        return result
    for path, content in sorted(plan.files.items()):
        target = root / path
        if target.exists() and target.read_bytes() == content:
            result.unchanged.append(path)
            continue
        jsonio.write_atomic(target, content)
        result.written.append(path)
    return result
