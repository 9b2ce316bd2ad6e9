"""Where each kind of record lives under ``packets/``.

packets/<family>/family.json                      family (revisions, artifacts)
packets/<family>/<packet>/packet.json             packet
packets/<family>/<packet>/measurements/<id>.json  run or series measurement of that packet
packets/<family>/<packet>/evidence/...            evidence files (any format)
packets/<family>/evidence/<source>/<path>         a held copy of an external source's file (family ``sources``)
packets/<family>/measurements/<id>.json           measurement of no single packet
packets/<family>/views/<id>.json                  view (chart)
packets/<family>/coverage/<id>.json               coverage view or coverage contract
packets/<family>/closures/<id>.json               family closure
packets/<family>/estimates/<id>.json              estimate
packets/baseline.json                             reviewed baseline of accepted findings
packets/catalog.json                              the family list, in reading order (optional)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evreg.core.printing import CONTROL

ID_PATTERN = r"^[a-z0-9]+([.-][a-z0-9]+)*$"
"""The one grammar of ids -- of records, weight revisions, artifacts, and the folders of families and packets:
lowercase letters and digits, in runs joined by single hyphens or dots, as the lab writes them
(``glm-4.7-flash-udq4-tp1-rapid``). Ids become file and folder names and are cited as ``m:ID.metric``; the grammar
keeps them portable (no upper case, which case-insensitive file systems fold; no ``..``, ``/`` or leading dot)."""
ID_MAX_LENGTH = 128

PACKETS = "packets"
PAGES_DIR = Path(__file__).resolve().parents[1] / "site" / "static"
"""What every registry's site has from the package: the methodology page, the stylesheet, a mkdocs.yml template."""
DEFAULT_DB = "build/catalog.duckdb"
CACHE_DIR = "build/cache/units"
"""Where cached unit results are kept, relative to the registry root (an ignored build output)."""
ROWS_DIR = "build/cache/catalog"
"""Where the catalog's rows are cached per unit (``evreg.catalog.reuse``), beside the unit results."""
DOWNLOADS_DIR = "build/cache/downloads"
"""Where the data downloads' compressed pieces are kept for the next export (``evreg.core.gz.Kept``)."""
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
RULE_PATHS = ("validators/", "registry/", "pyproject.toml", ".github/", ".pre-commit")
"""The code, configuration and workflows a validation runs with (a pull request runs its own): a change to any of
them changes the rule set (``rules-changed``) and may change how records are formatted (``fmt --base``)."""
ATTRIBUTES = ".gitattributes"
"""Git attributes change what a checkout writes (``ident``, ``eol``, filters) without git listing the files they
change: a change to one is a change to every file."""


def changes_checkout(path: str) -> bool:
    """Whether the repository path ``path`` is a git attributes file (in any folder)."""
    return path.rsplit("/", 1)[-1] == ATTRIBUTES


BASELINE = f"{PACKETS}/baseline.json"
FAMILY_LIST = f"{PACKETS}/catalog.json"
"""The registry's list of families in the order readers see them (the lab's ``families/catalog.json``)."""


def held_path(family: str, source: str, path: str) -> str:
    """Where a family holds its copy of ``SOURCE:path``, a file of an external source: in its evidence folder."""
    return f"{PACKETS}/{family}/evidence/{source}/{path}"


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
_ID = re.compile(ID_PATTERN)


RESERVED_IDS = frozenset({"index"})
"""Ids no record may take: the site's list pages use them (``measurements/index``)."""


def id_problem(text: object) -> str | None:
    """What makes ``text`` not an id (see ``ID_PATTERN``), in words; None for a valid id."""
    if not isinstance(text, str):
        return f"an id is a string, not {type(text).__name__}"
    if not text:
        return "the id is empty"
    if len(text) > ID_MAX_LENGTH:
        return f"the id is {len(text)} characters long; at most {ID_MAX_LENGTH} are allowed"
    if text in RESERVED_IDS:
        return f"{text!r} is reserved: it names a folder's list page on the site"
    if _ID.fullmatch(text):
        return None
    bad = sorted({c for c in text if not ((c.isascii() and (c.islower() or c.isdigit())) or c in ".-")})
    if bad:
        upper = [c for c in bad if c.isascii() and c.isupper()]
        what = "upper-case letters" if upper and len(upper) == len(bad) else "characters"
        return f"the id has {what} other than a-z, 0-9, '-' and '.': {' '.join(repr(c) for c in bad)}"
    if text[0] in ".-" or text[-1] in ".-":
        return "the id starts or ends with a separator ('-' or '.')"
    return "the id has two separators in a row ('-' and '.' join runs of letters and digits singly)"


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
    if CONTROL.search(path):
        return Place(path, (), problem="its name holds a control character (a line break, a tab, an escape): rename it")
    if path == BASELINE:
        return Place(path, ("baseline",))
    if path == FAMILY_LIST:
        return Place(path, ("catalog",), id="catalog")
    rest = parts[1:]
    family = rest[0]
    if len(rest) == 1:
        return Place(
            path, (), problem="only family folders, baseline.json and catalog.json belong directly in packets/"
        )
    if problem := id_problem(family):
        return Place(path, (), family=family, problem=f"family folder {family!r}: {problem}")
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
    reserved = "the name is reserved for a family folder" if packet in RESERVED_NAMES else None
    if problem := id_problem(packet) or reserved:
        return Place(path, (), family=family, problem=f"packet folder {packet!r}: {problem}")
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
    rid = tail[0][: -len(".json")]
    if rid in RESERVED_IDS:
        return Place(path, (), family=family, packet=packet, problem=f"id {rid!r}: {id_problem(rid)}")
    return Place(path, kinds, family=family, packet=packet, id=rid)


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


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """``text`` as an id or an anchor: lower case, runs of anything but letters and digits as one hyphen."""
    return _NOT_SLUG.sub("-", text.lower()).strip("-")
