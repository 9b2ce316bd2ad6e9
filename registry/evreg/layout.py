"""Where each kind of record lives under ``packets/`` (DESIGN §3).

packets/<family>/family.json                      family (revisions, artifacts)
packets/<family>/<packet>/packet.json             packet
packets/<family>/<packet>/measurements/<id>.json  run or series measurement of that packet
packets/<family>/<packet>/evidence/...            evidence files (any format)
packets/<family>/measurements/<id>.json           measurement of no single packet
packets/<family>/views/<id>.json                  view (chart)
packets/<family>/coverage/<id>.json               coverage view or coverage contract
packets/<family>/closures/<id>.json               family closure
packets/<family>/estimates/<id>.json              estimate
packets/baseline.json                             reviewed baseline of accepted findings
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
"""Ids of records, folders of families and packets: lowercase letters and digits, joined by hyphens."""
REVISION_ID_PATTERN = r"^[a-z0-9]+([.-][a-z0-9]+)*$"
"""Ids of weight revisions: dots are allowed as well (``qwen3.6-27b``)."""

PACKETS = "packets"
DEFAULT_DB = "build/catalog.duckdb"
CACHE_DIR = "build/cache/units"
"""Where cached unit results are kept, relative to the registry root (an ignored build output)."""
LAB_SOURCE = "neural-download"
"""The name under which the neural.download lab's evidence paths are cited (``SOURCE:path``)."""
LAB_SOURCE_REPOSITORY = "https://github.com/steveseguin/b70-optimization-lab"
LAB_FORMAT = "neural-download-model-family-v1"
"""The lab's family manifest format; a family record that keeps it in ``format`` came from (and exports back to)
that format, so its records follow the format's own rules too (closed metric vocabulary, required fields)."""
"""The catalog file of a registry, relative to its root (an ignored build output)."""

LISTS: tuple[tuple[str, str], ...] = (
    ("packets", "packet"),
    ("run_measurements", "run-measurement"),
    ("series_measurements", "series-measurement"),
    ("views", "view"),
    ("coverage_views", "coverage-view"),
    ("coverage_contracts", "coverage-contract"),
    ("family_closures", "closure"),
    ("estimates", "estimate"),
)
"""The lists of a family manifest (the lab's format, ``record_order``) and the kind of record each holds."""
LIST_OF_KIND = {kind: key for key, kind in LISTS}
"""The catalog file of a registry, relative to its root (an ignored build output)."""
BASELINE = f"{PACKETS}/baseline.json"

FAMILY_FOLDERS: dict[str, tuple[str, ...]] = {
    "measurements": ("run-measurement", "series-measurement"),
    "views": ("view",),
    "coverage": ("coverage-view", "coverage-contract"),
    "closures": ("closure",),
    "estimates": ("estimate",),
}
"""Family-level folders and the record kinds each may hold."""

FOLDER_OF_KIND = {kind: folder for folder, kinds in FAMILY_FOLDERS.items() for kind in kinds}
RESERVED_NAMES = frozenset(FAMILY_FOLDERS) | {"evidence", "family"}
_SLUG = re.compile(SLUG_PATTERN)


@dataclass(frozen=True)
class Place:
    """What the path of a file under ``packets/`` says it should hold."""

    path: str
    kinds: tuple[str, ...]  # empty: not a place for a record
    family: str | None = None
    packet: str | None = None
    id: str | None = None
    evidence: bool = False  # an evidence file (not a record)
    problem: str | None = None  # why this path is not a valid place


def place_of(path: str) -> Place:
    """Classify a repository-relative POSIX path inside ``packets/``."""
    parts = path.split("/")
    if parts[0] != PACKETS or len(parts) < 2:
        return Place(path, (), problem="not inside packets/")
    if path == BASELINE:
        return Place(path, ("baseline",))
    rest = parts[1:]
    family = rest[0]
    if len(rest) == 1:
        return Place(path, (), problem="only family folders and baseline.json belong directly in packets/")
    if not _SLUG.fullmatch(family):
        return Place(path, (), family=family, problem=f"family folder {family!r} is not a lowercase slug")
    if len(rest) == 2:
        if rest[1] == "family.json":
            return Place(path, ("family",), family=family, id=family)
        return Place(path, (), family=family, problem="a family folder holds family.json and sub-folders only")
    sub = rest[1]
    if sub == "evidence" and len(rest) > 2:
        return Place(path, (), family=family, evidence=True)
    if sub in FAMILY_FOLDERS:
        return _record_file(path, rest[2:], FAMILY_FOLDERS[sub], family, None)
    packet = sub
    if not _SLUG.fullmatch(packet) or packet in RESERVED_NAMES:
        return Place(path, (), family=family, problem=f"{packet!r} is not a valid packet folder name")
    if rest[2] == "evidence" and len(rest) > 3:
        return Place(path, (), family=family, packet=packet, evidence=True)
    if len(rest) == 3:
        if rest[2] == "packet.json":
            return Place(path, ("packet",), family=family, packet=packet, id=packet)
        return Place(
            path,
            (),
            family=family,
            packet=packet,
            problem="a packet folder holds packet.json, measurements/ and evidence/ only",
        )
    if rest[2] == "measurements":
        return _record_file(path, rest[3:], FAMILY_FOLDERS["measurements"], family, packet)
    return Place(
        path,
        (),
        family=family,
        packet=packet,
        problem="a packet folder holds packet.json, measurements/ and evidence/ only",
    )


def _record_file(path: str, tail: list[str], kinds: tuple[str, ...], family: str, packet: str | None) -> Place:
    if len(tail) != 1 or not tail[0].endswith(".json"):
        return Place(
            path,
            (),
            family=family,
            packet=packet,
            problem="record folders hold <id>.json files only, with no sub-folders",
        )
    return Place(path, kinds, family=family, packet=packet, id=tail[0][: -len(".json")])


def record_path(kind: str, family: str, record_id: str, packet: str | None = None) -> str:
    """The one path a record of this kind and id lives at."""
    if kind == "family":
        return f"{PACKETS}/{family}/family.json"
    if kind == "packet":
        return f"{PACKETS}/{family}/{record_id}/packet.json"
    folder = FOLDER_OF_KIND[kind]
    if packet is not None:
        return f"{PACKETS}/{family}/{packet}/{folder}/{record_id}.json"
    return f"{PACKETS}/{family}/{folder}/{record_id}.json"


NAMESPACES = {
    "family": "family",
    "packet": "packet",
    "run-measurement": "measurement",
    "series-measurement": "measurement",
    "estimate": "measurement",
    "view": "view",
    "coverage-view": "coverage",
    "coverage-contract": "coverage",
    "closure": "closure",
}
"""Id namespaces: measurement and estimate ids are registry-wide (citations name them
without a family), as are family and packet ids; the rest are per family."""

FAMILY_NAMESPACES = frozenset({"view", "coverage", "closure"})


def family_scoped(kind: str) -> bool:
    """Whether ids of ``kind`` are unique only within their family."""
    return NAMESPACES.get(kind, kind) in FAMILY_NAMESPACES


def id_key(kind: str, family: str | None, record_id: str) -> str:
    """The key under which a record of ``kind`` is found: unique per namespace."""
    namespace = NAMESPACES.get(kind, kind)
    return f"{namespace}/{family if namespace in FAMILY_NAMESPACES else ''}/{record_id}"


def place_keys(place: Place) -> list[str]:
    """The id keys a file at this place provides (ids are file names)."""
    if place.id is None:
        return []
    return list(dict.fromkeys(id_key(kind, place.family, place.id) for kind in place.kinds))


def unit_of(path: str) -> str:
    """The unit of validation a path belongs to: its family folder, or "" for files directly in packets/."""
    parts = path.split("/", 2)
    return parts[1] if len(parts) > 2 and parts[0] == PACKETS else ""


def slug(text: str) -> str:
    """``text`` as an id or an anchor: lower case, runs of anything but letters and digits as one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
