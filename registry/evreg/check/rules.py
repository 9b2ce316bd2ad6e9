"""The rule interface and the validation engine.

Rule packs are discovered through the ``evreg.rules`` entry point group (the
project's own pack is ``validators``), so this package never imports a rule
by name and a lab can ship its own pack.
"""

from __future__ import annotations

import hashlib
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from evreg.core import codes, jsonio
from evreg.core.evidence import parse_ref
from evreg.core.findings import Code, Finding, Severity, code_named, resolve_pointer
from evreg.core.layout import BASELINE, PACKETS
from evreg.store import Document, EvidenceState, Reads, Registry, recording, workers

ENTRY_POINT_GROUP = "evreg.rules"


UNIT = "unit"
STORE = "store"


@dataclass(frozen=True)
class Rule:
    """A check over a loaded registry, and the codes it may report.

    A ``unit`` rule checks ``registry.records()`` -- the records of one family folder
    at a time -- and reaches everything else through lookups (``registry.get``,
    ``validators.index``), so its findings can be cached per unit with what they
    depend on. A ``store`` rule (the default, right for any rule that gathers over
    all records) runs once over the whole store on every validation."""

    name: str
    codes: tuple[Code, ...]
    check: Callable[[Registry], Iterable[Finding]]
    scope: str = STORE


def discover() -> list[Rule]:
    """Every rule of every installed rule pack, in a stable order."""
    rules: list[Rule] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        rules.extend(ep.load())
    return rules


def code_docs(rules: list[Rule]) -> dict[str, Code]:
    docs = {doc.code: doc for doc in codes.ALL}
    docs.update((doc.code, doc) for rule in rules for doc in rule.codes)
    return docs


@dataclass
class Report:
    findings: list[Finding]
    records: int
    files: int
    external_refs: int = 0
    held_refs: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if not f.baselined]

    def errors(self, strict: bool = False) -> list[Finding]:
        return [f for f in self.blocking if f.severity is Severity.ERROR or strict]

    def summary(self) -> dict[str, Any]:
        by_code = Counter(f.code for f in self.blocking)
        return {
            "files": self.files,
            "records": self.records,
            "errors": sum(1 for f in self.blocking if f.severity is Severity.ERROR),
            "warnings": sum(1 for f in self.blocking if f.severity is Severity.WARNING),
            "baselined": sum(1 for f in self.findings if f.baselined),
            "external_evidence_refs": self.external_refs,
            "external_evidence_held": self.held_refs,
            "by_code": dict(sorted(by_code.items())),
            **self.extra,
        }


def _internal(rule: Rule, exc: BaseException) -> Finding:
    last = traceback.extract_tb(exc.__traceback__)[-1]
    message = f"rule {rule.name!r} failed: {type(exc).__name__}: {exc} ({last.filename}:{last.lineno})"
    return codes.INTERNAL_ERROR.at("", "", message, "this is a bug in the rule, not in your data; please report it")


@dataclass
class UnitResult:
    """What the unit rules found in one unit, and what outside the unit they read."""

    findings: list[Finding]
    deps: dict[str, str]
    records: int
    files: int
    external: int
    blobs: dict[str, str] = field(default_factory=dict)  # path -> blob id of the unit's files, when checked
    held: int = 0  # external references the unit holds a copy of (``Registry.held``)


def _checked(rules: Iterable[Rule], registry: Registry) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        try:
            findings.extend(rule.check(registry))
        except Exception as exc:  # a broken rule must not hide other findings
            findings.append(_internal(rule, exc))
    return findings


def check_unit(registry: Registry, unit: str, rules: list[Rule], paths: list[str] | None = None) -> UnitResult:
    """Run the unit rules over one unit (or the files at ``paths`` of it), recording its
    reads outside the unit. A unit rule's findings on a record depend on that record and
    on lookups only, so the results of a unit's parts add up to the unit's."""
    view = registry.scoped([unit]) if paths is None else registry.view(paths)
    with recording(Reads(registry, unit)) as reads:
        findings = _checked((r for r in rules if r.scope == UNIT), view)
        records = view.records()
        refs = [(d, ref) for d in records for _, ref in d.refs if parse_ref(ref).kind == "external"]
        held = sum(1 for d, ref in refs if view.held(d.place.family, ref) is not None)
    blobs = {d.path: d.content_id() for d in view.documents}
    # each finding on a file of the unit carries what it was found in, stored with it: a cached run then marks the
    # baseline's findings without reading their records again
    findings = [with_occurrence(view, f) if f.file in blobs else f for f in findings]
    return UnitResult(findings, reads.deps, len(records), len(view.documents), len(refs), blobs, held)


def check_units(registry: Registry, units: list[str], rules: list[Rule]) -> dict[str, UnitResult]:
    """Check units, in worker processes on a large store."""
    parts = workers.map_units(registry, units, lambda r, unit, paths: check_unit(r, unit, rules, paths))
    return {unit: _whole(results) for unit, results in parts.items()}


def _whole(parts: list[UnitResult]) -> UnitResult:
    if len(parts) == 1:
        return parts[0]
    return UnitResult(
        [f for p in parts for f in p.findings],
        {k: v for p in parts for k, v in p.deps.items()},
        sum(p.records for p in parts),
        sum(p.files for p in parts),
        sum(p.external for p in parts),
        {k: v for p in parts for k, v in p.blobs.items()},
        sum(p.held for p in parts),
    )


def run(registry: Registry, rules: list[Rule]) -> Report:
    """Run every rule over the whole registry, accumulate every finding, apply the baseline.
    (``evreg.check.pipeline`` is the same with unit results reused from the cache.)"""
    return report(registry, rules, check_units(registry, list(registry.unit_paths), rules))


def report(registry: Registry, rules: list[Rule], results: dict[str, UnitResult]) -> Report:
    """The report of a validation: the unit rules' ``results`` (one per unit of the registry,
    checked now or reused), the store rules run now, the baseline applied, findings sorted."""
    units = list(registry.unit_paths)
    for result in results.values():
        registry.files.update(result.blobs)
    findings = [f for unit in units for f in results[unit].findings]
    findings.extend(_checked((r for r in rules if r.scope != UNIT), registry))
    findings = apply_baseline(registry, findings)
    if registry.base is not None:
        findings = [marked_introduced(f, f.file in registry.changed or not f.file) for f in findings]
        findings.sort(key=lambda f: (f.introduced is False, *f.sort_key()))
    else:
        findings.sort(key=Finding.sort_key)
    records = sum(results[u].records for u in units)
    files = sum(results[u].files for u in units)
    external = sum(results[u].external for u in units)
    return Report(findings, records, files, external, sum(results[u].held for u in units))


_Accepted = dict[tuple[str, str, str], list[tuple[int, dict[str, Any]]]]
"""(code, file, pointer) -> (index, entry) of the baseline entries accepting findings there."""


def _baseline_entries(doc: Document, entries: list[Any]) -> tuple[_Accepted, list[Finding]]:
    """The well-formed entries of the baseline, by place, and a finding for each malformed one."""
    malformed: list[Finding] = []
    accepted: _Accepted = {}
    for i, entry in enumerate(entries):
        keys = ("code", "file", "pointer", "reason")
        reason = entry.get("reason") if isinstance(entry, dict) else None
        unreasoned = isinstance(entry, dict) and not (isinstance(reason, str) and any(c.isalnum() for c in reason))
        if unreasoned and isinstance(entry.get("code"), str):
            malformed.append(
                codes.SCHEMA.at(
                    doc,
                    f"/entries/{i}/reason",
                    f"the baseline entry for {entry['code']} at {entry.get('file')}{entry.get('pointer', '')} has no "
                    "reason yet, so it accepts nothing",
                    "a maintainer reviews the finding and writes why it is a genuine defect of the data (or removes "
                    "the entry and fixes the finding)",
                )
            )
            continue
        if (
            not isinstance(entry, dict)
            or not all(isinstance(entry.get(k), str) for k in keys)
            or not entry["reason"].strip()
            or not _says_what(entry)
            or not isinstance(entry.get("digest", ""), str)
        ):
            malformed.append(
                codes.SCHEMA.at(
                    doc,
                    f"/entries/{i}",
                    "a baseline entry needs string code, file, pointer, the finding's fields (an object of strings; "
                    "or, for a finding without fields, its exact message: no wildcards), its digest (what it was "
                    "found in) and a non-empty reason",
                    "copy the finding's code, file, pointer, fields and digest (`evreg validate --format json` lists "
                    "them); say why it is a genuine defect of the data",
                )
            )
            continue
        accepted.setdefault((entry["code"], entry["file"], entry["pointer"]), []).append((i, entry))
    return accepted, malformed


def _says_what(entry: dict[str, Any]) -> bool:
    """An entry names the one finding it accepts: by its fields, or by its exact message."""
    fields = entry.get("fields")
    if fields is not None:
        return isinstance(fields, dict) and bool(fields) and all(isinstance(v, str) for v in fields.values())
    return isinstance(entry.get("message"), str)


def _match(
    accepted: _Accepted, code: str, file: str, pointer: str, message: str, fields: dict[str, str], digest: str | None
) -> tuple[int, dict[str, Any]] | None:
    """The first entry that accepts a finding of ``code`` at ``file`` and ``pointer``: an entry that gives the
    finding's ``fields`` matches them exactly (so rewording a message keeps it accepted), one that gives a message
    matches it exactly, and its ``digest`` is the finding's (``occurrence``: the text it was found in, as reviewed);
    never a finding whose code is not baselinable."""
    for i_e in accepted.get((code, file, pointer), ()):
        entry = i_e[1]
        same = entry["fields"] == fields if "fields" in entry else entry.get("message") == message
        if same and entry.get("digest") == digest and code_named(code).baselinable:
            return i_e
    return None


def occurrence(registry: Registry, file: str, pointer: str, line: int | None) -> str | None:
    """What a finding was found in, as a digest a baseline entry binds: the value at its pointer of a record (the
    pointer named with it), else the number and text of its line of a page; None for a finding of neither."""
    doc = registry.document(file) if file.startswith(PACKETS + "/") else None
    if doc is not None and isinstance(doc.data, dict):
        return record_digest(doc.data, pointer)
    if line is not None and registry.evidence(file) is EvidenceState.FILE:
        lines = registry.read_file(file).decode("utf-8", "replace").splitlines()
        return _digest(f"{line}\n{lines[line - 1] if 0 < line <= len(lines) else ''}")
    return None


def record_digest(data: dict[str, Any], pointer: str) -> str:
    """The digest of a record's value at ``pointer``, named with it (``occurrence`` of a finding there)."""
    found, value = _at(data, pointer)
    return _digest(f"{pointer}\n{jsonio.canonical(value) if found else ''}")


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def with_occurrence(registry: Registry, f: Finding) -> Finding:
    """``f`` with its ``occurrence`` digest (made once)."""
    if f.digest is not None:
        return f
    digest = occurrence(registry, f.file, f.pointer, f.line)
    return f if digest is None else f.model_copy(update={"digest": digest})


def _marked(findings: list[Finding], accepted: _Accepted) -> tuple[list[Finding], set[int]]:
    """The findings, those an entry accepts marked as baselined with its reason (a finding that
    comes marked so already, see ``baseline_marker``, is kept as it is); and the indexes of the
    entries used."""
    out: list[Finding] = []
    used: set[int] = set()
    for f in findings:
        match = _match(accepted, f.code, f.file, f.pointer, f.message, f.fields, f.digest)
        if match:
            used.add(match[0])
            reason = match[1]["reason"]
            if f.baselined and f.baseline_reason == reason:
                out.append(f)
            else:
                out.append(f.model_copy(update={"baselined": True, "baseline_reason": reason}))
        else:  # a finding marked from the cache that no entry accepts now (its text changed) is open again
            out.append(f.model_copy(update={"baselined": False, "baseline_reason": None}) if f.baselined else f)
    return out, used


def baseline_marker(registry: Registry) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A stored finding (its JSON) marked as ``apply_baseline`` will mark it: a cached finding is then
    made marked at once rather than made and copied (``apply_baseline`` still matches every finding)."""
    accepted = _accepted(registry)
    if not accepted:
        return lambda f: f

    def mark(f: dict[str, Any]) -> dict[str, Any]:
        if f.get("digest") is None and (f["code"], f["file"], f["pointer"]) in accepted:
            f = {**f, "digest": occurrence(registry, f["file"], f["pointer"], f.get("line"))}
        match = _match(
            accepted, f["code"], f["file"], f["pointer"], f["message"], f.get("fields") or {}, f.get("digest")
        )
        return f if match is None else {**f, "baselined": True, "baseline_reason": match[1]["reason"]}

    return mark


_LAST_ACCEPTED: list[tuple[Document, tuple[_Accepted, list[Finding]]]] = []


def _entries_of(doc: Document, entries: list[Any]) -> tuple[_Accepted, list[Finding]]:
    """``_baseline_entries`` of the baseline document, remembered for the last document asked."""
    if not _LAST_ACCEPTED or _LAST_ACCEPTED[0][0] is not doc:
        _LAST_ACCEPTED[:] = [(doc, _baseline_entries(doc, entries))]
    return _LAST_ACCEPTED[0][1]


def _accepted(registry: Registry) -> _Accepted:
    doc = registry.document(BASELINE)
    entries = doc.data.get("entries") if doc is not None and isinstance(doc.data, dict) else None
    return _entries_of(doc, entries)[0] if doc is not None and isinstance(entries, list) else {}


def _stale(doc: Document, accepted: _Accepted, used: set[int]) -> list[Finding]:
    """A warning for each baseline entry that matched no finding."""
    return [
        codes.BASELINE_STALE.at(
            doc,
            f"/entries/{i}",
            f"baseline entry {entry['code']} at {entry['file']}{entry['pointer']} matches no finding",
            "remove the entry: the defect it excused is gone or has changed",
            Severity.WARNING,
        )
        for group in accepted.values()
        for i, entry in group
        if i not in used
    ]


def _at(data: Any, pointer: str) -> tuple[bool, Any]:
    """(whether anything is there, the value) at a JSON pointer of a record."""
    try:
        return True, resolve_pointer(data, pointer)
    except KeyError:
        return False, None


def marked_introduced(f: Finding, introduced: bool) -> Finding:
    """``f`` marked as introduced by the change or not (copied only when that changes it)."""
    return f if f.introduced is introduced else f.model_copy(update={"introduced": introduced})


def apply_baseline(registry: Registry, findings: list[Finding]) -> list[Finding]:
    """Mark findings the reviewed baseline accepts. An entry matches on code, file, pointer and the finding's
    fields (what it is about: the figure, the evidence, the grade) and the text it was found in (its digest), so a
    claim that gets worse at the same place (say, a grade raised further) or is written again elsewhere is not
    hidden, and a reworded message is still accepted. Every finding gets its digest, for the entry that accepts it."""
    findings = [with_occurrence(registry, f) for f in findings]
    doc = registry.document(BASELINE)
    if doc is None or not isinstance(doc.data, dict):
        return findings
    entries = doc.data.get("entries")
    if not isinstance(entries, list):
        return [
            *findings,
            codes.SCHEMA.at(
                doc,
                "/entries" if "entries" in doc.data else "",
                "baseline has no `entries` list",
                'baseline.json is {"kind": "baseline", "entries": [...]}',
            ),
        ]
    accepted, malformed = _entries_of(doc, entries)
    marked, used = _marked(findings, accepted)
    return [*malformed, *marked, *_stale(doc, accepted, used)]
