"""Evidence: local evidence files exist inside the repository and match
their recorded sha256. External references are counted, not checked."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from registry.evidence import iter_refs, parse_ref
from registry.findings import Finding, join_pointer
from registry.rules import CodeDoc, Rule
from registry.store import EvidenceState, Registry

MISSING = CodeDoc(
    "evidence-missing",
    "A local evidence path that is not a file",
    "A number is only as good as the file that backs it; a path that leads nowhere is no evidence.",
    "Commit the evidence file at that path (packets/<family>/<packet>/evidence/...), or fix the path. "
    "Evidence kept elsewhere is cited as SOURCE:path with the source declared in family.json.",
    '{"evidence": "packets/qwen-27b/p/evidence/run.json"}  (no such file)',
)
ESCAPE = CodeDoc(
    "evidence-escape",
    "An evidence path outside the repository",
    "Absolute paths, `..` and symlinks leading out of the repository name files a reviewer cannot "
    "see, and could read files of the machine that builds the site.",
    "Copy the file into the packet's evidence/ folder and cite its repository-relative path.",
    '{"evidence": "../../etc/passwd"}',
)
HASH = CodeDoc(
    "evidence-hash-mismatch",
    "Evidence bytes differ from the recorded sha256",
    "Evidence is content-addressed: an edited evidence file would silently change what a published number rests on.",
    "Restore the original file; new evidence is a new file with its own hash in `evidence_sha256`.",
    '{"evidence_sha256": {"packets/f/p/evidence/run.json": "00...00"}}',
)

_WINDOWS_DRIVE = (":\\", ":/")


def _escapes(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return path.startswith(("/", "\\", "~")) or ".." in parts or path[1:3] in _WINDOWS_DRIVE


def check_evidence(registry: Registry) -> Iterator[Finding]:
    source = registry.source
    for doc in registry.records():
        hashes = doc.data.get("evidence_sha256") or {}
        cited: set[str] = set()
        for pointer, value in iter_refs(doc.data):
            ref = parse_ref(value)
            if ref.kind != "local":
                continue
            cited.add(value)
            if _escapes(value) or "\x00" in value:
                yield doc.finding(
                    "evidence-escape", pointer, f"evidence path {value!r} leaves the repository", ESCAPE.hint
                )
                continue
            state = source.evidence(value)
            if state is EvidenceState.ESCAPE:
                yield doc.finding(
                    "evidence-escape",
                    pointer,
                    f"evidence path {value!r} resolves outside the repository (through a symlink)",
                    ESCAPE.hint,
                )
            elif state is EvidenceState.MISSING:
                yield doc.finding(
                    "evidence-missing",
                    pointer,
                    f"evidence file {value!r} does not exist in the {source.label}",
                    MISSING.hint,
                )
            elif state is EvidenceState.NOT_FILE:
                yield doc.finding(
                    "evidence-missing", pointer, f"evidence path {value!r} is not a regular file", MISSING.hint
                )
            elif value in hashes:
                digest = hashlib.sha256(source.read(value)).hexdigest()
                if digest != hashes[value]:
                    yield doc.finding(
                        "evidence-hash-mismatch",
                        join_pointer("evidence_sha256", value),
                        f"{value} has sha256 {digest}, the record says {hashes[value]}",
                        HASH.hint,
                    )
        for path in hashes:
            if path not in cited:
                yield doc.finding(
                    "evidence-hash-mismatch",
                    join_pointer("evidence_sha256", path),
                    f"a sha256 is recorded for {path!r}, which this record does not cite",
                    "remove the entry, or cite the file where the record uses it",
                )


RULES = [Rule("evidence", (MISSING, ESCAPE, HASH), check_evidence)]
