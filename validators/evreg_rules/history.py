"""History (with ``--base``): published measurements are append-only (only ``retired`` may be
added), what published records identify and their evidence files never change, published records
are retired rather than deleted, and a grade rises only with a new, in-scope, promotable measurement."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from evreg.check.rules import Rule
from evreg.claims import workload_text
from evreg.claims.scope import differing
from evreg.core.evidence import parse_ref
from evreg.core.findings import Code, Finding, Severity, join_pointer
from evreg.core.jsonio import canonical
from evreg.core.layout import BASELINE, PACKETS, RULE_PATHS, changes_checkout, held_path, id_key
from evreg.core.vocab import promotable
from evreg.records.models import revisions_of
from evreg.store import MEASUREMENT_KINDS, Document, GitTree, Registry, WorkTree

REWRITE = Code(
    "history-rewrite",
    "An edit of a published measurement, of what published records identify, or of their evidence",
    "Published measurements are append-only: readers, citations and permalinks rely on a record meaning the same "
    "thing forever. Only `retired` may be added to one; a packet's, revision's or artifact's identity and a "
    "published record's evidence files never change, and a retirement is not undone.",
    "Restore the published record (and its evidence file) and add a new measurement with `supersedes: <old id>`.",
    "a change that edits decode_tok_s of a measurement that exists on the base",
    baselinable=False,
)
DELETED = Code(
    "record-deleted",
    "A published record removed",
    "Deleting a record breaks its permalink and every citation of it, and hides that it ever existed.",
    "Keep the file and add `retired: {reason, date}`; corrections are new records.",
    "a change that deletes packets/f/measurements/run-1.json",
    baselinable=False,
)
RAISED = Code(
    "promotion-without-evidence",
    "A grade raised with no new in-scope evidence in the change",
    "A promotion is a claim that evidence got stronger; a raise that adds no measurement or evidence "
    "file in the packet's scope is a relabel.",
    "Add the new in-scope measurement or evidence file in the same change, or keep the grade.",
    "a change that raises EVID C to B and adds only an edited caveat",
    baselinable=False,
)

SELF_APPROVAL = Code(
    "baseline-self-approval",
    "A change that adds or widens baseline entries",
    "The baseline accepts findings; a pull request that edits it could accept its own defects, so CI would be "
    "green on a change that breaks the rules. Accepting a defect is a maintainer's step, reviewed on its own.",
    "Fix the finding instead; if it is a genuine defect of imported data, ask a maintainer to accept it "
    "(they commit the baseline entry to main on its own).",
    'a pull request adding {"code": "history-rewrite", ...} to packets/baseline.json',
    baselinable=False,
)

RULES_CHANGED = Code(
    "rules-changed",
    "A change that edits the rules it is judged by",
    "A pull request that changes validators, vocabularies or the grade rubric together with records is judged "
    "by the rules it brings; reviewers should see that before trusting a green run.",
    "Split the rule change into its own pull request, or review both parts together knowingly.",
    "a change to registry/evreg/vocab/rubric.json and packets/f/p/packet.json in one pull request",
)


MUTABLE = frozenset({"retired"})
"""The only fields of a published measurement a later change may set: a measurement is otherwise the same
forever (a correction is a new record with ``supersedes``, which never unlocks editing the old one)."""
ADDABLE = frozenset({"workload_fields"})
"""Fields a published measurement may gain when it has none: exactly the structured reading of its workload text and
config (``evreg.claims.workload_text``; the text itself never changes); once set, they are fixed like the rest."""
PACKET_IDENTITY = ("revision", "artifact_id", "quantization", "runtime", "hardware", "cards", "topologies")
REVISION_IDENTITY = ("repository", "revision", "model")
ONCE = frozenset({"model"})
"""Identity a published revision may gain when it has none (the canonical model it is); once set, it is fixed."""
ARTIFACT_IDENTITY = ("quantization", "repository", "revision", "file_sha256")
RANK = {"D": 1, "C": 2, "B": 3, "A": 4}


def check_history(registry: Registry) -> Iterator[Finding]:
    if registry.base is not None:
        yield from history_findings(Change(registry, registry.base))


def history_findings(change: Change) -> Iterator[Finding]:
    registry, base = change.head, change.base
    if not change.everything and any(changes_checkout(p) for p in registry.changed):
        # Attributes change what a checkout writes (``ident``, filters) without git listing the files it changes.
        yield from history_findings(Change(registry, base, everything=True))
        return
    yield from _rewritten_measurements(change)
    yield from _rewritten_identity(change)
    yield from _rewritten_evidence(change)
    for old in change.published:
        news = change.successors(old)
        if not change.after.get(_key(old)) and registry.document(old.path) is None:
            yield DELETED.at(old.path, "", f"published {old.kind} {old.id!r} was deleted", record=old.ref())
        moved = old.kind in MEASUREMENT_KINDS and all(d.path != old.path for d in change.after.get(_key(old), []))
        for new in news:
            if moved and new.path != old.path:
                yield REWRITE.at(
                    new,
                    "",
                    f"published {old.kind} {old.id!r} was moved from {old.path}: where it is filed is which packet "
                    "shows it, and its page and every link to it change",
                    "Keep a published run where it is; a reviewer who accepts the move accepts a new page for it.",
                    severity=Severity.WARNING,
                )
            if old.data.get("retired") and not _same(old.data["retired"], new.data.get("retired")):
                yield REWRITE.at(
                    new, "/retired", f"published {old.kind} {old.id!r} was retired; the change undoes or rewrites it"
                )
    yield from _raised_grades(change)
    if BASELINE in change.differs:
        yield from _self_approval(registry, base)
    rule_files = sorted(p for p in registry.changed if p.startswith(RULE_PATHS))
    if rule_files and any(p.startswith("packets/") for p in registry.changed):
        message = (
            f"this change edits {len(rule_files)} rule or vocabulary files "
            f"({', '.join(rule_files[:3])}) together with records"
        )
        yield RULES_CHANGED.at(rule_files[0], "", message, severity=Severity.WARNING)


def _key(doc: Document) -> str:
    """A record's id in its namespace: a run measurement that becomes a series measurement is the same record."""
    return id_key(str(doc.kind), doc.place.family, str(doc.id))


def _valid(doc: Document | None) -> Document | None:
    return doc if doc is not None and doc.valid else None


class Change:
    """What a change touches, read without reading the rest of the store.

    A file at a path the change did not touch is the same file in the base and the work tree, so only
    the records of the ids the change touches can differ: the records at *touched* paths (in ``packets/``:
    what git says differs from the base, and any file the work tree has that the base does not, ignored
    ones included), and every record, touched or not, that holds one of their ids. Those are found by
    file name (``Registry.providers``: ids are file names) and, for a file whose name is not its id, by one
    search of the base commit (``candidates``), which also finds every published record that may cite a
    changed file. ``published`` are those records in the base; each is compared with its ``successors``."""

    def __init__(self, head: Registry, base: Registry, everything: bool = False) -> None:
        self.head, self.base = head, base
        self.everything = everything
        """Every path counts as touched and every published record is a candidate (what the rules mean,
        read the slow way: tests compare it with the change's own reading)."""
        listed = (p for ps in head.unit_paths.values() if ps is not None for p in ps)
        added = (p for p in listed if base.document(p) is None)
        self.differs = {p for p in head.changed if p.startswith(f"{PACKETS}/")}.union(added)
        """Paths in ``packets/`` that differ: what git says differs, and any file the base does not have."""
        self.changed = self.differs.union(head.changed)
        """Every path that differs, in ``packets/`` or not (an evidence file may be anywhere)."""
        every = (d.path for r in (base, head) for d in r.documents) if everything else self.differs
        self.touched = sorted(set(every))
        self.written = set(self.touched)
        """Paths whose records are compared with the published ones they hold the ids of (every path, when
        reading ``everything``: a checkout may differ from the commit where git lists no change)."""
        docs = [d for p in self.touched for r in (base, head) if (d := _valid(r.document(p))) is not None]
        self.candidates = _candidates(self, {str(d.id) for d in docs})
        """Published records that may hold one of the touched ids or cite a changed file."""
        keys = {_key(d) for d in docs}
        others = [d.path for d in self.candidates]
        self.before = _filed(base, keys, [*self.touched, *others])
        self.after = _filed(head, keys, [*self.touched, *others])
        self.published = sorted({d.path: d for docs in self.before.values() for d in docs}.values(), key=_path)

    def successors(self, old: Document) -> list[Document]:
        """The records the change wrote that hold a published record's id (an edit in place, a move, a copy
        under its id, wherever each sorts); when there are none, the record the change wrote at its path
        (its id changed in place)."""
        written = [d for d in self.after.get(_key(old), []) if d.path in self.written]
        at = _valid(self.head.document(old.path)) if not written and old.path in self.written else None
        return written or ([at] if at is not None else [])

    def published_of(self, *kinds: str) -> list[Document]:
        return [d for d in self.published if d.kind in kinds]

    def added(self, *kinds: str) -> list[Document]:
        """Valid records of ``kinds`` at touched paths of the work tree."""
        docs = (_valid(self.head.document(p)) for p in self.touched)
        return [d for d in docs if d is not None and d.kind in kinds]


def _candidates(change: Change, ids: set[str]) -> list[Document]:
    """The base's valid records that may hold any of ``ids`` or cite any changed path: such a record holds the
    string in its bytes as it is, or spelled with a JSON escape (a backslash), so one search finds every one; every
    record when git cannot search (or when reading ``everything``). A file of the work tree that the change did not
    touch is the base's file, so the base's files are searched there (files read as they are, where a commit's are
    inflated one by one), and in the commit only those the change touched."""
    base, needles = change.base, ids | change.changed
    if not needles:
        return []
    found = None if change.everything else _containing(change, [*needles, "\\"])
    if found is None:
        return base.records()
    docs = (base.document(p) for p in sorted(found))
    return [d for d in docs if d is not None and d.place.kinds and d.valid]  # evidence files are not read


MAX_TOUCHED_SEARCHED = 1000
"""Touched files the commit's search names one by one; past it the commit is searched whole."""


def _containing(change: Change, needles: list[str]) -> set[str] | None:
    """The paths of the base's files that hold any of ``needles``, or None when git cannot say."""
    commit = change.base.source
    if not isinstance(commit, GitTree):
        return None
    work = change.head.source
    touched = sorted(p for p in change.changed if p.startswith(f"{PACKETS}/"))
    if not isinstance(work, WorkTree) or len(touched) > MAX_TOUCHED_SEARCHED:
        return commit.containing(needles)
    untouched = work.containing(needles)
    own = commit.containing(needles, paths=touched) if touched else set()
    if untouched is None or own is None:
        return None
    return {p for p in untouched if p not in change.changed} | own


def _path(doc: Document) -> str:
    return doc.path


def _filed(registry: Registry, keys: set[str], paths: list[str]) -> dict[str, list[Document]]:
    """Id key -> the valid records with that id (at one of ``paths``, or filed under it), in path order."""
    found: dict[str, dict[str, Document]] = {}
    every = [*paths, *(p for key in keys for p in registry.providers(key))]
    for doc in map(_valid, map(registry.document, every)):
        if doc is not None and (key := _key(doc)) in keys:
            found.setdefault(key, {})[doc.path] = doc
    return {k: sorted(docs.values(), key=_path) for k, docs in found.items()}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (``true`` is not ``1``, ``1`` is not ``1.0``)."""
    return canonical(a) == canonical(b)


def _rewritten_measurements(change: Change) -> Iterator[Finding]:
    """Any field but ``retired`` of a published measurement (or estimate) that changed, its kind and id included."""
    for old in change.published_of(*MEASUREMENT_KINDS, "estimate"):
        for new in change.successors(old):
            keys = sorted((set(old.data) | set(new.data)) - MUTABLE)
            gained = {  # the structured reading of the record's own text, and nothing else
                k
                for k in ADDABLE
                if k not in old.data
                and new.data.get(k) == workload_text.fields(new.data.get("workload"), new.data.get("config"))
            }
            changed = [
                k
                for k in keys
                if k not in gained and (k not in old.data or k not in new.data or not _same(old.data[k], new.data[k]))
            ]
            if changed:
                yield REWRITE.at(
                    new,
                    f"/{changed[0]}",
                    f"published measurement {old.id!r} changed its {', '.join(changed)}",
                )


def _rewritten_identity(change: Change) -> Iterator[Finding]:
    """The identity of published packets, weight revisions and artifacts: what their measurements were of
    (a field missing on the base cannot be added later either)."""
    for old in change.published_of("packet"):
        for new in change.successors(old):
            changed = [k for k in PACKET_IDENTITY if not _same(old.data.get(k), new.data.get(k))]
            if changed:
                message = f"published packet {old.id!r} changed its {', '.join(changed)}"
                yield REWRITE.at(new, f"/{changed[0]}", message)
    for old in change.published_of("family"):
        for new in change.successors(old):
            now = _identities(new.data)
            for (what, rid, key), value in _identities(old.data).items():
                after = now.get((what, rid, key))
                if key in ONCE and value is None:
                    continue  # named once: a published revision may gain its canonical model
                if not _same(after, value):
                    message = f"published {what} {rid!r} changed its {key} (was {value!r}, now {after!r})"
                    yield REWRITE.at(new, "/weight_revisions", message)
            yield from _rewritten_held(change, old, new)


def _rewritten_held(change: Change, old: Document, new: Document) -> Iterator[Finding]:
    """A held copy a published family lists is a receipt like a local evidence file: its entry (commit, sha256) and
    its bytes stay as they were; holding a new reading is a new path or a new family, not a rewrite."""
    now = new.data.get("sources") or {}
    for source, spec in (old.data.get("sources") or {}).items():
        before = spec.get("held") if isinstance(spec, dict) else None
        after = (now.get(source) or {}).get("held") if isinstance(now.get(source), dict) else None
        for path, entry in before.items() if isinstance(before, dict) else ():
            kept = after.get(path) if isinstance(after, dict) else None
            local = held_path(str(old.id), str(source), path)
            if not _same(entry, kept) or _changed(local, change.changed):
                yield REWRITE.at(
                    new,
                    join_pointer("sources", source, "held", path),
                    f"the held copy of {source}:{path} of published family {old.id!r} was changed or removed",
                )


def _identities(family: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    out: dict[tuple[str, str, str], Any] = {}
    for _, rev in revisions_of(family):
        out.update({("weight revision", rev["id"], k): rev.get(k) for k in REVISION_IDENTITY})
        for art in rev.get("quantized_artifacts", []):
            out.update({("artifact", art["id"], k): art.get(k) for k in ARTIFACT_IDENTITY})
    return out


def _rewritten_evidence(change: Change) -> Iterator[Finding]:
    """Evidence files of published records are as immutable as the records (an updated sha256 beside new
    bytes is a rewrite, not a fix)."""
    seen: set[str] = set()
    for old in change.candidates if change.changed else []:
        for _pointer, value in old.refs:
            if _changed(value, change.changed) and value not in seen and parse_ref(value).kind == "local":
                seen.add(value)
                news = change.successors(old) or [d for d in [change.head.document(old.path)] if d is not None]
                where: Document | str = news[0] if news else value
                yield REWRITE.at(
                    where, "", f"evidence file {value} of published {old.kind} {old.id!r} was changed or removed"
                )


def _changed(path: str, changed: set[str]) -> bool:
    """Whether the change touched the file at ``path`` or a folder on the way to it (a folder link retargeted
    changes every file under it, and git lists only the link)."""
    parts = path.split("/")
    return any("/".join(parts[:i]) in changed for i in range(1, len(parts) + 1))


def _grade(data: dict[str, Any], which: str) -> str | None:
    g = (data.get("grades") or {}).get(which)
    return g.get("grade") if isinstance(g, dict) else None


def _self_approval(head: Registry, base: Registry) -> Iterator[Finding]:
    """Entries of the baseline that the base does not have exactly (new, or widened by an edit)."""
    doc = head.document(BASELINE)
    if doc is None or not isinstance(doc.data, dict) or not isinstance(doc.data.get("entries"), list):
        return
    old = base.document(BASELINE)
    old_entries = old.data.get("entries") if old is not None and isinstance(old.data, dict) else None
    before = {canonical(e) for e in old_entries} if isinstance(old_entries, list) else set()
    for i, entry in enumerate(doc.data["entries"]):
        if canonical(entry) not in before:
            what = entry.get("code") if isinstance(entry, dict) else None
            yield SELF_APPROVAL.at(doc, f"/entries/{i}", f"this change adds or edits a baseline entry ({what})")


def _observations(data: dict[str, Any]) -> str:
    """What a measurement observed: two records with the same numbers and evidence are one observation."""
    return canonical([data.get("metrics"), data.get("points"), sorted((data.get("evidence_sha256") or {}).values())])


def _source(data: dict[str, Any]) -> str:
    """Where a measurement's numbers were read: its evidence (by content where hashed) and the places in it
    (locators). A run read from the same place of the same evidence as a published run is that run again, whatever
    its numbers say."""
    ev = data.get("evidence")
    digest = (data.get("evidence_sha256") or {}).get(ev) if isinstance(ev, str) else None
    locators = data.get("evidence_locators")
    return canonical([digest or ev, sorted(map(str, locators.values())) if isinstance(locators, dict) else None])


def _raised_grades(change: Change) -> Iterator[Finding]:
    """A raise (a grade where there was none counts) needs a new measurement in the packet's scope that may back
    a promotion: not an edited caveat, not an uncited file under evidence/, not a screened, diagnostic or
    retired run, not a copy of a published run under a new id, nor a run read from the same place of the same
    evidence as a published run (its numbers edited). A weight revision's grades are held the same. Only a
    record at a touched path can be raised; the published runs a new one may copy are read only for a raise."""
    published = {_key(d) for d in change.published_of(*MEASUREMENT_KINDS)}
    new = [d for d in change.added(*MEASUREMENT_KINDS) if _key(d) not in published and promotable(d.data) is None]
    fresh: list[Document] | None = None

    def backed(family: str | None, fits: Callable[[Document], bool]) -> bool:
        nonlocal fresh
        candidates = [m for m in new if m.place.family == family and fits(m)]
        if candidates and fresh is None:
            runs = change.base.records(*MEASUREMENT_KINDS)
            seen = {_observations(d.data) for d in runs} | {_source(d.data) for d in runs}
            fresh = [m for m in new if _observations(m.data) not in seen and _source(m.data) not in seen]
        return any(m in fresh for m in candidates) if fresh is not None else False

    for packet in change.added("packet"):
        old = _last(change.before.get(_key(packet), []), "packet")
        if old is not None:
            fits = partial(_in_packet_scope, packet.data)
            yield from _raises(packet, "/grades", old.data, packet.data, partial(backed, packet.place.family, fits))
    for family in change.added("family"):
        before = _last(change.before.get(_key(family), []), "family")
        old_revisions = {r.get("id"): r for _, r in revisions_of(before.data if before else {})}
        for where, rev in revisions_of(family.data):
            if rev.get("id") in old_revisions:
                fits = partial(_of_revision, rev["id"])
                in_scope = partial(backed, family.place.family, fits)
                yield from _raises(family, f"{where}/grades", old_revisions[rev["id"]], rev, in_scope)


def _in_packet_scope(packet: dict[str, Any], run: Document) -> bool:
    return not differing(packet, run.data)


def _of_revision(revision: str, run: Document) -> bool:
    return bool(run.data.get("revision") == revision)


def _last(docs: list[Document], kind: str) -> Document | None:
    return next((d for d in reversed(docs) if d.kind == kind), None)


def _raises(
    doc: Document, pointer: str, before: dict[str, Any], after: dict[str, Any], backed: Callable[[], bool]
) -> Iterator[Finding]:
    for which in ("evidence", "capability"):
        was, now = _grade(before, which), _grade(after, which)
        if now and RANK.get(now, 0) > RANK.get(was or "", 0) and not backed():
            yield RAISED.at(
                doc,
                f"{pointer}/{which}/grade",
                f"{which} grade raised from {was or 'none'} to {now}, but the change adds no new in-scope, "
                "promotable measurement",
            )


RULES = [Rule("history", (REWRITE, DELETED, RAISED, SELF_APPROVAL, RULES_CHANGED), check_history)]
