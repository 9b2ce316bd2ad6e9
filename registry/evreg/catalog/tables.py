"""Catalog tables, declared once as SQLModel models (64-bit floats, string keys).

The site, ``evreg query`` and the Parquet export all read these tables, so
a number on the site is a row a reader can query.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import Double
from sqlmodel import Field, SQLModel

if TYPE_CHECKING:
    import duckdb

_Row = TypeVar("_Row", bound=SQLModel)

SCHEMA_VERSION = 2


def real() -> float | None:
    return Field(default=None, sa_type=Double)  # plain float would be a 32-bit FLOAT in DuckDB


class Meta(SQLModel, table=True):
    __tablename__ = "catalog_meta"
    key: str = Field(primary_key=True)
    value: str


class RecordRow(SQLModel, table=True):
    """Every record as stored (compact JSON, keys sorted), for pages and ad-hoc questions."""

    __tablename__ = "records"
    key: str = Field(primary_key=True)  # kind/id (family-scoped kinds: kind/family/id)
    kind: str
    id: str
    family: str | None = None
    packet: str | None = None
    file: str
    blob: str | None = None
    content: str  # the record as compact JSON, keys sorted


class FamilyRow(SQLModel, table=True):
    __tablename__ = "families"
    id: str = Field(primary_key=True)
    name: str
    display_name: str | None = None
    summary: str | None = None
    primary_packet_id: str | None = None
    file: str


class RevisionRow(SQLModel, table=True):
    __tablename__ = "revisions"
    key: str = Field(primary_key=True)  # family/id: revision ids are scoped to their family
    id: str
    family: str
    label: str | None = None
    role: str | None = None
    model: str | None = None  # the canonical model (vocab/models.json)
    repository: str | None = None
    revision: str | None = None
    revision_status: str | None = None


class ArtifactRow(SQLModel, table=True):
    __tablename__ = "artifacts"
    key: str = Field(primary_key=True)  # family/id
    id: str
    family: str
    revision_id: str
    label: str | None = None
    quantization: str | None = None
    repository: str | None = None
    revision: str | None = None
    file_sha256: str | None = None
    revision_status: str | None = None
    pinned: bool


class PacketRow(SQLModel, table=True):
    __tablename__ = "packets"
    id: str = Field(primary_key=True)
    family: str
    label: str | None = None
    revision: str
    artifact_id: str | None = None
    quantization: str | None = None
    runtime: str | None = None
    cards: int | None = None
    status: str | None = None
    summary: str | None = None
    featured_measurement: str | None = None
    featured_metric: str | None = None
    featured_value: float | None = real()
    featured_unit: str | None = None
    featured_statistic: str | None = None  # median: the featured value is the median of the run's samples
    file: str


class GradeRow(SQLModel, table=True):
    __tablename__ = "grades"
    key: str = Field(primary_key=True)
    family: str
    record_kind: str
    record_id: str
    axis: str  # evidence (EVID) or capability (CAP)
    grade: str
    scope: str
    basis: str
    reviewed_at: str
    evidence_count: int


class MeasurementRow(SQLModel, table=True):
    __tablename__ = "measurements"
    id: str = Field(primary_key=True)
    kind: str
    family: str
    packet: str | None = None
    state: str
    promotable: bool
    revision: str
    artifact_id: str | None = None
    quantization: str | None = None
    runtime: str | None = None
    runtime_family: str | None = None
    tp: float | None = real()
    config: str | None = None  # compact JSON, keys sorted
    workload: str | None = None
    measurement_class: str | None = None
    axis: str | None = None
    quality: str | None = None
    caveat: str | None = None
    evidence: str | None = None
    supersedes: str | None = None
    retired: str | None = None
    file: str


class SampleRow(SQLModel, table=True):
    __tablename__ = "samples"
    key: str = Field(primary_key=True)
    measurement: str
    metric: str
    idx: int
    value: float | None = real()
    unit: str


class PointRow(SQLModel, table=True):
    __tablename__ = "points"
    key: str = Field(primary_key=True)
    measurement: str
    axis: str | None = None
    x: float | None = real()
    metric: str
    value: float | None = real()
    unit: str
    samples: int | None = None


class EvidenceRow(SQLModel, table=True):
    __tablename__ = "evidence"
    key: str = Field(primary_key=True)
    record_kind: str
    record_id: str
    file: str
    pointer: str
    ref: str
    ref_kind: str  # local | external | url
    source: str | None = None
    path: str
    sha256: str | None = None
    bytes: int | None = None
    present: bool | None = None
    held: str | None = None  # the local path of a held copy of an external file (its sha256, bytes, present)


class CitationRow(SQLModel, table=True):
    __tablename__ = "citations"
    key: str = Field(primary_key=True)
    record_kind: str
    record_id: str
    file: str
    field: str
    measurement: str
    metric: str
    selector: str
    value: float | None = real()
    text: str | None = None


class FindingRow(SQLModel, table=True):
    __tablename__ = "findings"
    key: str = Field(primary_key=True)
    code: str
    severity: str
    file: str
    pointer: str
    line: int | None = None
    col: int | None = None
    message: str
    hint: str
    record_kind: str | None = None
    record_id: str | None = None
    baselined: bool
    baseline_reason: str | None = None


class ProvenanceRow(SQLModel, table=True):
    __tablename__ = "provenance"
    key: str = Field(primary_key=True)
    path: str
    record_kind: str | None = None
    record_id: str | None = None
    seq: int  # 0 = first (oldest) change of this path
    commit: str
    author: str
    date: str
    change: str  # A added, M modified, D deleted


TABLES: list[type[SQLModel]] = [
    RecordRow,
    FamilyRow,
    RevisionRow,
    ArtifactRow,
    PacketRow,
    GradeRow,
    MeasurementRow,
    SampleRow,
    PointRow,
    EvidenceRow,
    CitationRow,
    FindingRow,
    ProvenanceRow,
]

VIEWS = {
    "headlines": """
        SELECT p.family, p.id AS packet, p.featured_measurement AS measurement, p.featured_metric AS metric,
               p.featured_value AS value, p.featured_unit AS unit, p.featured_statistic AS statistic, m.state
        FROM packets p JOIN measurements m ON m.id = p.featured_measurement
        WHERE p.featured_measurement IS NOT NULL""",
    "packet_scope": """
        SELECT p.id AS packet, m.*
        FROM packets p JOIN measurements m
          ON m.family = p.family AND m.revision = p.revision
         AND m.artifact_id IS NOT DISTINCT FROM p.artifact_id
         AND m.quantization IS NOT DISTINCT FROM p.quantization""",
    "quarantine": """
        SELECT family, id, packet, runtime, workload, coalesce(caveat, quality) AS reason, evidence, file
        FROM measurements WHERE state = 'quarantined'""",
    "grade_distribution": """
        SELECT family, axis, grade, count(*) AS packets FROM grades GROUP BY family, axis, grade""",
}


@cache
def _plain(table: type[SQLModel]) -> Any:
    """A named tuple with ``table``'s columns: a row the size of its values (a plain object with a ``__dict__``
    per row was about three times that: the catalog's rows are held by every site build, 290,000 records at
    100,000 measurements)."""
    return namedtuple(f"{table.__name__}Plain", list(table.__table__.columns.keys()))  # type: ignore[attr-defined]


def rows_of(con: duckdb.DuckDBPyConnection, table: type[_Row], order: str) -> Iterator[_Row]:
    """Every row of ``table`` with the fields of its typed class (read as they are typed there), in ``order``,
    fetched in batches. Plain named tuples, not instances of the class: building SQLModel instances was 40 % of the
    site's build at 10,000 measurements."""
    plain = _plain(table)
    cur = con.execute(f"SELECT {', '.join(plain._fields)} FROM {table.__tablename__} ORDER BY {order}")
    while batch := cur.fetchmany(10_000):
        yield from cast("Iterator[_Row]", map(plain._make, batch))
