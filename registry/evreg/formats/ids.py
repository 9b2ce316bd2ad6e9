"""Ids from a file's bytes, evidence kept beside earlier files of one name, repeats of an import, corrections that
supersede, and runs that measured nothing (closures)."""

from __future__ import annotations

import hashlib
from typing import Any

from evreg.core import jsonio
from evreg.core.layout import record_path, slug
from evreg.formats.api import Target

# ids, repeats and corrections ------------------------------------------------------------------


def content_id(prefix: str, raw: bytes, target: Target, *row: object) -> str:
    """A record id from what it is: the tool, the file's bytes, the packet it joins and the row in the file.
    Importing the same file again gives the same ids (a no-op); another file, packet or row, other ids."""
    digest = hashlib.sha256(raw + f"\0{target.family}/{target.packet}\0".encode()).hexdigest()[:10]
    return slug("-".join([prefix, *(str(r) for r in row), digest]))[:120].strip("-")


def evidence_for(target: Target, name: str, raw: bytes) -> str:
    """Where the file is kept: ``evidence/NAME``, or beside it with its hash when another file of that name is
    there already (evidence that records cite is never replaced)."""
    path = target.evidence_path(name)
    existing = target.root / path if target.root is not None else None
    if existing is None or not existing.exists() or existing.read_bytes() == raw:
        return path
    stem, dot, ext = name.rpartition(".")
    short = hashlib.sha256(raw).hexdigest()[:10]
    return target.evidence_path(f"{stem}-{short}.{ext}" if dot else f"{name}-{short}")


Earlier = dict[str, dict[str, tuple[str | None, str]]]
"""What earlier imports of a file of one name wrote into a packet: by row, each record's id, what it supersedes and
which run it is (``run_key``)."""


def run_key(record: dict[str, Any]) -> str:
    """Which run a record is, numbers aside: its kind, class, workload and settings. A record of a changed file
    corrects an earlier one only when they are the same run (another run in a file of the same name, such as every
    ``mlperf_log_summary.txt``, is not a correction)."""
    return jsonio.canonical({k: record.get(k) for k in ("kind", "measurement_class", "workload", "config")})


def earlier_imports(target: Target, source: str) -> Earlier:
    """Records earlier imports of a file of this name wrote into the packet, by row: ``{row: {id: (supersedes,
    run key)}}``."""
    if target.root is None:
        return {}
    out: Earlier = {}
    for kind, packet in (("run-measurement", target.packet), ("closure", None)):
        folder = (target.root / record_path(kind, target.family, "x", packet)).parent
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            data, problems = jsonio.parse(path.read_bytes(), str(path))
            imported = data.get("imported_from") if isinstance(data, dict) and not problems else None
            mine = packet is not None or (data.get("selectors") or {}).get("packet") == target.packet
            if isinstance(imported, dict) and imported.get("file") == source and mine and isinstance(data["id"], str):
                old = data.get("supersedes")
                entry = (old if isinstance(old, str) else None, run_key(data))
                out.setdefault(str(imported.get("row")), {})[data["id"]] = entry
    return out


def link_correction(record: dict[str, Any], earlier: Earlier, row: str) -> None:
    """A record of a changed file supersedes the latest record (the one no other supersedes) that earlier imports of
    that row wrote for the same run; the record an earlier import already wrote keeps what it supersedes (importing
    it again is a no-op, whatever order the ids sort in)."""
    chain = earlier.get(row) or {}
    if record["id"] in chain:
        if chain[record["id"]][0] is not None:
            record["supersedes"] = chain[record["id"]][0]
        return
    replaced = {old for old, _ in chain.values()}
    same = sorted(i for i, (_, key) in chain.items() if key == run_key(record) and i not in replaced)
    if same:
        record["supersedes"] = same[-1]


def failed_run(
    target: Target, rid: str, evidence: str, raw: bytes, reason: str, detail: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """A run that produced no measurement, as a closure of the family with its reason and the packet's scope as
    its selectors (never a measurement of zero)."""
    selectors: dict[str, Any] = {
        k: target.data[k] for k in ("revision", "quantization", "runtime", "hardware") if k in target.data
    }
    selectors["packet"] = target.packet
    record: dict[str, Any] = {
        "kind": "closure",
        "id": rid,
        "state": "unsupported",
        "selectors": selectors,
        **({"artifact_id": target.data["artifact_id"]} if "artifact_id" in target.data else {}),
        "reason": reason,
        "evidence": evidence,
        "evidence_sha256": {evidence: hashlib.sha256(raw).hexdigest()},
        "failure": detail,
    }
    return record_path("closure", target.family, rid), record
