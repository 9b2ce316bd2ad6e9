"""Record models, one per kind stored in ``packets/``.

Strict where identity lives (ids, revisions, artifacts, states, numbers);
open where labs vary: every model keeps unknown fields (``extra="allow"``),
so a lab's own fields survive a load, a ``fmt`` and an export untouched.

These models say only what JSON Schema can say. Cross-field and cross-file
rules (references, evidence, citations, scope) live in ``validators``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from evreg.claims import figures
from evreg.claims.citations import METRIC_NAME
from evreg.core.evidence import is_evidence_key
from evreg.core.jsonio import iter_keyed_strings, map_keyed_strings
from evreg.core.layout import ID_MAX_LENGTH, ID_PATTERN
from evreg.core.vocab import OBSERVED_STATES, STATES
from evreg.core.vocab import metrics as vocab_metrics

Id = Annotated[str, Strict(), StringConstraints(pattern=ID_PATTERN, max_length=ID_MAX_LENGTH)]
"""An id (``evreg.core.layout.ID_PATTERN``): of a record, a weight revision, an artifact, a family or packet folder."""
Text = Annotated[str, Strict(), StringConstraints(min_length=1)]
Hex40 = Annotated[str, Strict(), StringConstraints(pattern=r"^[0-9a-f]{40}$")]
Sha256 = Annotated[str, Strict(), StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Date = Annotated[str, Strict(), StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")]
NUMBER_BOUND = 1e15
"""Largest magnitude a stored number may have. No inference measurement comes near it; beyond
it a value is a typo or an attack (1.7e308 overflows chart scaling to infinity)."""
Number = Annotated[float, Strict(), AllowInfNan(False), Field(ge=-NUMBER_BOUND, le=NUMBER_BOUND)]
MetricName = Annotated[
    str,
    Strict(),
    StringConstraints(pattern=f"^{METRIC_NAME}$"),
    # Editors offer the vocabulary's names (vocab/metrics.json); others are allowed by the pattern.
    WithJsonSchema({"type": "string", "pattern": f"^{METRIC_NAME}$", "examples": sorted(vocab_metrics())}),
]
"""A metric name: what a citation can name (``{{ m:ID.METRIC[0] }}``) and a page can anchor."""
Count = Annotated[int, Strict(), Field(ge=0)]
Rate = Annotated[float, Strict(), AllowInfNan(False), Field(gt=0, le=NUMBER_BOUND)]
"""A positive, finite rate (requests per second)."""
Scalar = Annotated[str, Strict()] | Annotated[bool, Strict()] | Number
State = Literal[STATES]  # type: ignore[valid-type]  # the states are data (registry/evreg/vocab/states.json)
ObservedState = Literal[OBSERVED_STATES]  # type: ignore[valid-type]  # ditto


class NameText:
    """Marks a text field that names a thing (hardware, runtime, quantization): its digits are part of the name."""


Name = Annotated[str, Strict(), StringConstraints(min_length=1), NameText()]
"""Text that names hardware, a runtime or a quantization. It is prose like any text, except that a memory size is
part of a name (``H100 80GB``), not a claimed figure; any other figure in it is an orphan number."""
EvidenceRef = Annotated[str, Strict(), StringConstraints(min_length=1, max_length=1024)]
"""A repository-relative file path, ``SOURCE:path`` into a declared external
source, or an ``https://`` URL."""


class Open(BaseModel):
    """A JSON object whose unknown fields are kept as they are."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Retired(Open):
    reason: Text
    date: Date


class Record(Open):
    """Fields every record file may carry beside its kind's own fields."""

    retired: Retired | None = Field(
        default=None,
        description="A published record is never deleted; it is retired with a reason and stays citable.",
    )
    evidence_sha256: dict[EvidenceRef, Sha256] | None = Field(
        default=None,
        description="sha256 of local evidence files this record cites, by path.",
    )
    evidence_locators: (
        dict[
            Annotated[str, StringConstraints(pattern=f"^{METRIC_NAME}" + r"(\[\d+\]|@-?\d+(\.\d+)?)$")],
            Annotated[str, StringConstraints(pattern=r"^(/.*|csv:[1-9][0-9]*/.+|line:[1-9][0-9]*(:[1-9][0-9]*)?)?$")],
        ]
        | None
    ) = Field(
        default=None,
        description="Where each stored number sits in the record's evidence file: METRIC[INDEX] or METRIC@X -> an "
        "RFC 6901 pointer (JSON), csv:ROW/COLUMN (CSV or TSV: data row from 1, header name) or line:N[:K] (text: "
        "the number on line N, or its Kth). The validator re-reads the evidence and compares "
        "(evidence-value-mismatch).",
    )


class Grade(Open):
    grade: Literal["A", "B", "C", "D"]
    scope: Text
    basis: Text
    reviewed_at: Date
    evidence: Annotated[list[EvidenceRef], Field(min_length=1)]


class Grades(Open):
    capability: Grade | None = None
    evidence: Grade | None = None


class Artifact(Open):
    id: Id
    label: Text
    quantization: Name = Field(description="Exact quantization, e.g. Q4_K_M, AWQ-INT4, NVFP4.")
    repository: Text = Field(description="Where the quantized weights are published (org/name).")
    evidence: EvidenceRef = Field(description="What shows the artifact: a model card URL or a file.")
    revision: Hex40 | None = Field(default=None, description="40-hex commit of the quantized weights.")
    revision_status: Text | None = Field(default=None, description="Why there is no commit, when there is none.")
    file_sha256: Sha256 | None = Field(default=None, description="sha256 of the weights file (GGUF).")
    quantization_origin: Literal["export", "runtime"] | None = None
    role: Text | None = None


class WeightRevision(Open):
    id: Id = Field(description="The revision's id; packets and measurements name it.")
    label: Text | None = None
    role: Text | None = None
    model: Id | None = Field(
        default=None,
        description="The canonical model these weights are (an id of registry/evreg/vocab/models.json): "
        "families of one model, of any lab, meet on it.",
    )
    repository: Text | None = Field(default=None, description="Repository of the base weights (org/name).")
    revision: Hex40 | None = Field(default=None, description="40-hex commit of the weights.")
    revision_status: Text | None = Field(default=None, description="Why there is no commit, when there is none.")
    quantized_artifacts: list[Artifact] = Field(default_factory=list)
    grades: Grades | None = None


Statistic = Literal["median"]
"""What a headline states of its measurement's repeats, instead of one chosen sample."""


class FeaturedResult(Open):
    role: Literal["hero", "support"]
    label: Text
    quality_label: Text
    measurement_id: Id
    metric: MetricName
    sample_index: Count | None = None
    point_x: Number | None = None
    statistic: Statistic | None = Field(
        default=None, description="median: the median of the run's samples (instead of sample_index or point_x)."
    )


class HeldCopy(BaseModel):
    """A file of an external source held here byte for byte (at ``packets/FAMILY/evidence/SOURCE/PATH``), with where
    it was read: validation checks it is there with this sha256 and re-reads the samples of the records citing it."""

    model_config = ConfigDict(extra="forbid")

    commit: Hex40 = Field(description="The source repository's commit the file was read at.")
    sha256: Sha256 = Field(description="sha256 of the held bytes.")
    read: Text = Field(description="How the file was read (a clone, an archive, a public index), in words.")


class ExternalSource(Open):
    repository: Text = Field(description="Where the lab's own evidence files live.")
    commit: Hex40 | None = Field(default=None, description="The repository's commit the records were read at.")
    path: Text | None = Field(default=None, description="The imported file's path in that repository.")
    note: Text | None = None
    held: dict[Text, HeldCopy] | None = Field(
        default=None,
        description="Files of the source held here, by their path in it (`evreg hold`): the registry's own receipts.",
    )


class Family(Record):
    kind: Literal["family"]
    id: Id
    name: Text
    display_name: Text | None = None
    summary: str | None = None
    publisher: Text | None = None
    updated_at: Text | None = None
    primary_packet_id: Id | None = None
    featured_results: list[FeaturedResult] | None = None
    weight_revisions: list[WeightRevision] = Field(default_factory=list)
    model_variants: list[WeightRevision] = Field(
        default_factory=list,
        description="Sibling weights of the family (other tunes of the architecture); named like weight revisions.",
    )
    initial_view_ids: list[Id] | None = None
    sources: dict[Id, ExternalSource] | None = Field(
        default=None,
        description="External evidence sources; an evidence reference `NAME:path` points into one.",
    )
    record_order: dict[str, list[str]] | None = Field(
        default=None,
        description="Order of the family's records in the lab's manifest, for a lossless export.",
    )


REVISION_LISTS = ("weight_revisions", "model_variants")
"""The family's lists of weight revisions: packets, measurements and artifacts may name an entry of either."""


def revisions_of(family: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(JSON pointer, revision) of every weight revision a family record declares, in both of its lists; entries
    that are not objects are skipped (the schema reports them)."""
    for key in REVISION_LISTS:
        items = family.get(key)
        for i, rev in enumerate(items if isinstance(items, list) else []):
            if isinstance(rev, dict):
                yield f"/{key}/{i}", rev


class FeaturedMetric(Open):
    metric: MetricName
    measurement_id: Id
    sample_index: Count | None = None
    point_x: Number | None = None
    statistic: Statistic | None = Field(
        default=None, description="median: the value is the median of the run's samples (`evreg feature`'s default)."
    )
    value: Number
    unit: str = Field(description="The metric's unit (metrics.json); empty for a unitless score.")
    workload: Text
    evidence: EvidenceRef


class Packet(Record):
    kind: Literal["packet"]
    id: Id
    revision: Id = Field(description="The family's weight revision every measurement of the packet used.")
    artifact_id: Id | None = Field(default=None, description="The quantized artifact of the packet.")
    quantization: Name | None = Field(default=None, description="The artifact's exact quantization.")
    label: Text | None = Field(default=None, description="Human label.")
    runtime: Name | None = Field(default=None, description="Runtime with version or build; its measurements match it.")
    hardware: Name | None = Field(default=None, description="The accelerators the packet's runs used (model, memory).")
    cards: Count | None = Field(
        default=None, description="Accelerators per run (the topology); its measurements match it."
    )
    topologies: list[Count] | None = Field(
        default=None, description="Topologies, when the packet spans several (instead of cards)."
    )
    status: Text | None = Field(default=None, description="Where the packet stands, e.g. candidate.")
    grades: Grades | None = Field(
        default=None, description="EVID (evidence) and CAP (capability) grades per the rubric (vocab/rubric.json)."
    )
    featured_metric: FeaturedMetric | None = Field(
        default=None,
        description="The headline: the median of a run's samples, or one stored sample, copied exactly "
        "(`evreg feature`).",
    )
    manifest: EvidenceRef | None = Field(default=None, description="The packet's manifest file, if the lab keeps one.")


class Point(Open):
    """One point of a series. Besides the named metrics, a point may carry other values (counts,
    statuses, hashes) under metric-name keys; its numbers obey the same bound."""

    model_config = ConfigDict(
        extra="allow", populate_by_name=True, json_schema_extra={"propertyNames": {"pattern": f"^{METRIC_NAME}$"}}
    )

    @model_validator(mode="after")
    def _extra_keys_and_numbers(self) -> Point:
        for key, value in (self.model_extra or {}).items():
            if not re.fullmatch(METRIC_NAME, key):
                raise ValueError(f"point key {key!r} is not a metric name (lowercase letters, digits and _)")
            if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > NUMBER_BOUND:
                raise ValueError(f"point value {key!r} = {value!r} is beyond the bound of {NUMBER_BOUND:g}")
        return self

    x: Number
    decode_tok_s: Number | None = None
    wall_output_tok_s: Number | None = None
    aggregate_tok_s: Number | None = None
    prefill_tok_s: Number | None = None
    ttft_ms: Number | None = None
    mean_acceptance_length: Number | None = None
    draft_acceptance_rate: Number | None = None
    effective_tokens_per_verification: Number | None = None
    samples: Count | None = None


class SampleAnnotation(Open):
    metric: MetricName
    index: Count
    label: Text
    value: Number | None = None


class Workload(Open):
    """What was run, as fields: each one the run's file or record states, absent when nothing states it (never
    guessed). The workload text stays beside it, as written."""

    phase: Literal["prefill", "decode", "serving"] | None = Field(
        default=None,
        description="What the numbers time: prompt processing, token generation, or whole requests end to end.",
    )
    input_tokens: Count | None = Field(default=None, description="Prompt tokens per request (or per repeat).")
    output_tokens: Count | None = Field(
        default=None, description="Generated tokens per request: the fixed length, or the cap of a natural end."
    )
    output_end: Literal["fixed", "natural"] | None = Field(
        default=None,
        description="fixed: generation runs to output_tokens (end of sequence ignored); natural: it stops at the "
        "model's end of sequence (output_tokens is then the cap).",
    )
    context_depth: Count | None = Field(default=None, description="Tokens already in context before the prompt.")
    concurrency: Count | None = Field(default=None, description="Requests in flight at once (1: a single stream).")
    request_rate: Rate | None = Field(default=None, description="Requests per second offered (an open loop).")
    arrival: Literal["closed-loop", "poisson", "constant", "burst"] | None = Field(
        default=None, description="How requests arrive: as earlier ones finish, or at a rate by a process."
    )
    requests: Count | None = Field(default=None, description="Requests (or prompts) per run.")
    dataset: Name | None = Field(default=None, description="Where the prompts come from (random, sharegpt, a suite).")
    sampling: Literal["greedy", "sampled"] | None = Field(default=None, description="Greedy or sampled decoding.")
    warmup: Count | None = Field(default=None, description="Warm-up runs or requests discarded before measuring.")
    sample: Literal["repeat", "request", "percentile", "prompt", "run"] | None = Field(
        default=None,
        description="What one stored sample is: a repeat of the whole test, one request, a percentile over "
        "requests, one prompt of a suite, or one run's aggregate.",
    )


class Measurement(Record):
    id: Id = Field(description="The file name; citations name it ({{ m:ID.METRIC[INDEX] }}).")
    state: ObservedState = Field(
        description="How it was observed (vocab/states.json); only promotable states back headlines and grades."
    )
    revision: Id = Field(description="The family's weight revision the run used.")
    artifact_id: Id | None = Field(
        default=None, description="The quantized artifact the run used (an id of the family's revision)."
    )
    quantization: Name | None = Field(
        default=None, description="The artifact's exact quantization, e.g. Q4_K_M or NVFP4."
    )
    runtime: Name | None = Field(
        default=None,
        description="Runtime with its version or build, e.g. 'vLLM 0.9.1' or 'llama.cpp b5163 (8cf427ff)'.",
    )
    runtime_family: Name | None = Field(default=None, description="The runtime's name without version, e.g. 'vLLM'.")
    config: dict[str, Any] | None = Field(
        default=None, description="Settings of the run: tp, cards, mtp, batch sizes, flags."
    )
    workload: Text | None = Field(default=None, description="What was run: prompts, lengths, concurrency.")
    workload_fields: Workload | None = Field(
        default=None,
        description="The workload as fields (phase, tokens, concurrency, ...): what comparisons group results by.",
    )
    measurement_class: Text | None = Field(
        default=None, description="The kind of run; a class containing 'diagnostic' never backs a promotion."
    )
    promotion_status: Text | None = None
    quality: str | None = Field(
        default=None, description="Prose: the quality gate the run passed (numbers only as citations)."
    )
    quality_scope: str | None = Field(
        default=None,
        description="Prose: what the run's quality check covered, as the lab records it (counts as a quality gate).",
    )
    caveat: str | None = Field(default=None, description="Prose: what a reader must know (numbers only as citations).")
    evidence: EvidenceRef = Field(
        description="The raw output: a repository path, SOURCE:path into an external source, or an https URL."
    )
    metrics: dict[MetricName, Annotated[list[Number], Field(min_length=1)]] | None = None
    axis: Text | None = Field(default=None, description="A series' x axis, e.g. active_context_tokens.")
    points: Annotated[list[Point], Field(min_length=1)] | None = Field(
        default=None, description="A series' points: x and the metrics at x."
    )
    sample_annotations: list[SampleAnnotation] | None = Field(
        default=None, description="Notes on single samples (which sample, a label)."
    )
    supersedes: Id | None = Field(default=None, description="Id of the measurement this one corrects.")


class RunMeasurement(Measurement):
    """One observed arm with repeat samples per metric."""

    kind: Literal["run-measurement"]


class SeriesMeasurement(Measurement):
    """One observed arm swept along one axis."""

    kind: Literal["series-measurement"]
    points: Annotated[list[Point], Field(min_length=1)]


class ViewSeries(Open):
    label: Text | None = None
    measurement_ids: Annotated[list[Id], Field(min_length=1)]
    x_from: Text | None = None


class View(Record):
    kind: Literal["view"]
    id: Id
    title: Text | None = None
    subtitle: str | None = None
    x_label: str | None = None
    metrics: Annotated[list[MetricName], Field(min_length=1)]
    series: list[ViewSeries]
    discrete: Annotated[bool, Strict()] | None = None
    missing_x: list[Number] | None = None
    unsupported_x: list[Number] | None = None


class Cell(Open):
    state: State
    label: str | None = None
    evidence_id: Id | None = None
    estimate_id: Id | None = None
    packet_id: Id | None = None
    point_x: Number | None = None
    selectors: dict[str, Scalar] | None = None
    reason: str | None = None
    evidence: EvidenceRef | None = None


class Axis(Open):
    key: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
    label: Text | None = None
    prefix: str | None = None


class CoverageView(Record):
    kind: Literal["coverage-view"]
    id: Id
    label: Text | None = None
    rows: Annotated[list[Scalar], Field(min_length=1)]
    columns: Annotated[list[Scalar], Field(min_length=1)]
    row_axis: Axis | None = None
    column_axis: Axis | None = None
    fixed_selectors: dict[str, Scalar] | None = None
    cells: dict[str, Cell]
    evidence: EvidenceRef | None = None


class ContractAxis(Axis):
    values: Annotated[list[Scalar], Field(min_length=1)]


class ContractRule(Open):
    id: Id
    match: dict[str, Scalar]
    state: State | None = None
    label: str | None = None
    reason: str | None = None
    evidence_id: Id | None = None
    estimate_id: Id | None = None
    packet_id: Id | None = None
    point_x: Number | None = None
    evidence: EvidenceRef | None = None


class CoverageContract(Record):
    kind: Literal["coverage-contract"]
    id: Id
    label: Text
    description: str | None = None
    fixed_selectors: dict[str, Scalar] | None = None
    axes: Annotated[list[ContractAxis], Field(min_length=1)]
    rules: Annotated[list[ContractRule], Field(min_length=1)]


class Closure(Record):
    kind: Literal["closure"]
    id: Id
    state: State
    selectors: dict[str, Scalar | Annotated[list[Scalar], Field(min_length=1)]]
    artifact_id: Id | None = None
    reason: Text
    evidence: EvidenceRef


class Interval(Open):
    low: Number
    high: Number


class Engine(Open):
    name: Text
    version: Text
    snapshot_sha256: Annotated[str, StringConstraints(pattern=r"^(sha256:)?[0-9a-f]{64}$")]


class Estimate(Record):
    kind: Literal["estimate"]
    id: Id
    state: Literal["estimated"]
    selectors: dict[str, Scalar]
    metric: MetricName
    unit: Text
    value: Number
    interval: Interval
    engine: Engine
    generated_at: Text
    record: EvidenceRef
    basis_measurement_ids: Annotated[list[Id], Field(min_length=1)]
    not_for_promotion: Literal[True]
    limitations: Text
    supersedes: Id | None = None


class ListedFamily(Open):
    id: Id = Field(description="A family of this registry (its folder under packets/).")
    manifest: Text | None = Field(default=None, description="Where the lab keeps the family's manifest.")


class FamilyCatalog(Record):
    """The registry's families in the order readers see them (``packets/catalog.json``); families it does not
    list follow, by id."""

    kind: Literal["catalog"]
    families: list[ListedFamily]
    sources: dict[Id, ExternalSource] | None = Field(
        default=None, description="External sources the `manifest` paths point into (`NAME:path`)."
    )


MODELS: dict[str, type[Record]] = {
    "family": Family,
    "packet": Packet,
    "run-measurement": RunMeasurement,
    "series-measurement": SeriesMeasurement,
    "view": View,
    "coverage-view": CoverageView,
    "coverage-contract": CoverageContract,
    "closure": Closure,
    "estimate": Estimate,
    "catalog": FamilyCatalog,
}
"""Every record kind, by the name records carry in their ``kind`` field."""


# -- prose: the one definition of which strings readers see as text ------------------------------------------


def _token_keys() -> frozenset[str]:
    """Fields of the models whose strings are tokens, not text: constrained to a pattern (ids, hashes, dates,
    metric names) or to fixed values (states, kinds) wherever a model declares them. Every other string a record
    holds -- in a declared text field, in ``config``, in a field no model declares -- is prose (``is_prose_key``)."""
    keys: set[str] = set()
    text: set[str] = set()  # a key that is text in some model (a revision's role) is text everywhere
    for model in _all_models():
        for name, info in model.model_fields.items():
            (keys if _is_token(info.annotation, info.metadata) else text).add(info.alias or name)
    return frozenset(keys - text)


def _is_token(annotation: Any, metadata: list[Any]) -> bool:
    if any(getattr(m, "pattern", None) for m in metadata):
        return True
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is Literal:
        return True
    if get_origin(annotation) is Annotated:
        return _is_token(args[0], list(get_args(annotation)[1:]))
    containers = (Union, UnionType, list, tuple)  # Id | None, list[Id]: tokens when every member is one
    return bool(args) and get_origin(annotation) in containers and all(_is_token(a, []) for a in args)


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _models_in(arg)


def _name_keys() -> frozenset[str]:
    """Fields declared ``Name`` in every model that declares them."""
    names: set[str] = set()
    other: set[str] = set()
    for model in _all_models():
        for name, info in model.model_fields.items():
            marked = any(isinstance(m, NameText) for m in [*info.metadata, *_metadata_in(info.annotation)])
            (names if marked else other).add(info.alias or name)
    return frozenset(names - other)


def _metadata_in(annotation: Any) -> Iterator[Any]:
    if get_origin(annotation) is Annotated:
        yield from get_args(annotation)[1:]
    for arg in get_args(annotation):
        yield from _metadata_in(arg)


def _all_models() -> list[type[BaseModel]]:
    found: dict[type[BaseModel], None] = {}
    todo: list[type[BaseModel]] = list(MODELS.values())
    while todo:
        model = todo.pop()
        if model not in found:
            found[model] = None
            todo += [m for info in model.model_fields.values() for m in _models_in(info.annotation)]
    return list(found)


TOKEN_KEYS = _token_keys()
"""Keys whose strings are tokens (derived from the models; see ``_token_keys``)."""
NAME_KEYS = _name_keys()
"""Keys whose strings name hardware, a runtime or a quantization (``Name``): a memory size in them is no claim."""


def in_cell(kind: str, pointer: str) -> bool:
    """Whether the string at ``pointer`` of a record of ``kind`` is the text of a coverage cell or contract rule: a
    cell shows one measured arm, so a bare decimal in it is a value of that arm (``figures.find_figures``)."""
    return kind in ("coverage-view", "coverage-contract") and pointer.startswith(("/cells/", "/rules/"))


@functools.lru_cache(maxsize=1 << 16)
def _figures_of(text: str, cell: bool) -> tuple[figures.Figure, ...]:
    return tuple(figures.find_figures(text, cell=cell))


def figures_in(text: str, cell: bool = False) -> list[figures.Figure]:
    """``figures.find_figures(text, cell=cell)``, remembered for short texts: the same prose recurs across a
    registry's records (every record's prose is asked twice, whether it is prose and what it claims,
    and cloned or imported records repeat their family's sentences: 46,000 calls, 5,000 texts, in one
    family of 1,000 measurements)."""
    if len(text) <= 4096:
        return list(_figures_of(text, cell))
    return figures.find_figures(text, cell=cell)


def claims_in(key: str, text: str, cell: bool = False) -> list[figures.Figure]:
    """The figures a prose string under ``key`` claims: every figure, but a memory size in a name; in a coverage cell
    (``in_cell``) bare decimals too."""
    found = figures_in(text, cell)
    if key not in NAME_KEYS:
        return found

    def size(f: figures.Figure) -> bool:  # 80GB, not 1792 GB/s nor 1792 GB per second (a bandwidth is a claim)
        after = text[f.end : f.end + 8].lstrip().lower()
        return f.unit == "bytes" and "/" not in f.text and not after.startswith(("/", "per ", "a second"))

    return [f for f in found if not size(f)]


_TOKEN_TEXT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}")
"""The shape of every token a model declares (ids, hashes, dates, metric names, states, grades)."""


def is_prose_key(key: str) -> bool:
    """Whether a string under ``key`` may be prose: every string but an evidence reference."""
    return not is_evidence_key(key)


def is_prose(key: str, text: str) -> bool:
    """Whether a string under ``key`` is prose: shown to readers as text, so only citations may put numbers in it.
    Every string is, whatever its field -- declared, ``config``, unknown -- but an evidence reference and a token
    under a token field: one shaped like a token (no spaces) that holds no figure. A sentence under a key some model
    declares a token (``config.metric``, an unknown ``state``) is prose."""
    if not is_prose_key(key):
        return False
    return key not in TOKEN_KEYS or not _TOKEN_TEXT.fullmatch(text) or bool(figures_in(text))


def iter_prose(data: Any) -> Iterator[tuple[str, str]]:
    """(pointer, text) of every prose string in a record, at any depth."""
    return ((pointer, text) for pointer, key, text in iter_keyed_strings(data, is_prose_key) if is_prose(key, text))


def map_prose(data: Any, fn: Callable[[str], str]) -> Any:
    return map_keyed_strings(data, is_prose_key, fn)
