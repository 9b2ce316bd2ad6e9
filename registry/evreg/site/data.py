"""The catalog as the pages read it, in plain data: the rows of its DuckDB tables (``evreg.catalog.tables``) by what
they belong to, and what the pages look up in them (a measurement's row, packet, family's records, trust line).
Nothing here is HTML."""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import duckdb

from evreg.catalog.tables import EvidenceRow, FindingRow, Meta, ProvenanceRow, RecordRow, rows_of
from evreg.claims import coverage
from evreg.core import jsonio
from evreg.core.layout import family_scoped
from evreg.site.html import measurement_home
from evreg.site.trace import Digests, Reads, Token, Tracked
from evreg.store import no_cycle_collection


class Catalog:
    """The catalog as the pages read it: typed rows of its tables (``evreg.catalog.tables``), by what they belong to.

    Each store is ``Tracked`` (``evreg.site.trace``): what a page reads of it is noted in the trace of the page being
    made (``reads``), and a later build reuses the page while everything it read is unchanged (``stores`` by name, for
    the digests of those reads)."""

    def __init__(self, db: Path) -> None:
        self.reads = Reads()
        with no_cycle_collection(lasting=True):  # read for the whole build
            self._load(db)

    def _load(self, db: Path) -> None:
        con = duckdb.connect(str(db), read_only=True)
        try:
            records: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
            where: dict[tuple[str, str], RecordRow] = {}
            for rec in rows_of(con, RecordRow, "key"):
                key = f"{rec.family}/{rec.id}" if family_scoped(rec.kind) else rec.id
                # The record as validated, for its free-form fields (prose, config, views, contracts), which no
                # table column holds; validation's parse checked its depth, so it is not walked again.
                records[rec.kind][key] = jsonio.loads(rec.content, shallow_reader=True)
                where[(rec.kind, key)] = rec._replace(content="")  # type: ignore[attr-defined]  # parsed above
            evidence: dict[str, list[EvidenceRow]] = defaultdict(list)
            for ev in rows_of(con, EvidenceRow, "key"):
                evidence[ev.file].append(ev)
            provenance: dict[str, list[ProvenanceRow]] = defaultdict(list)
            for change in rows_of(con, ProvenanceRow, "path, seq"):
                provenance[change.path].append(change)
            found = list(rows_of(con, FindingRow, "file, pointer"))
            defects = [f for f in found if f.baselined]
            unread: Counter[str] = Counter(f.file for f in found if f.code == "evidence-value-mismatch")
            defects_in: dict[str, list[FindingRow]] = defaultdict(list)  # file -> its accepted defects
            for f in defects:
                defects_in[f.file].append(f)
            meta = {m.key: m.value for m in rows_of(con, Meta, "key")}
        finally:
            con.close()
        families = records.get("family", {})
        lists = records.get("catalog", {}).values()
        listed = [f["id"] for c in lists for f in c["families"] if f["id"] in families]
        order = [*dict.fromkeys(listed), *sorted(set(families) - set(listed))]  # the family list's order, then by id
        records["family"] = {fid: families[fid] for fid in order}
        measurements = {**records.get("run-measurement", {}), **records.get("series-measurement", {})}
        superseded_by = {m["supersedes"]: mid for mid, m in measurements.items() if m.get("supersedes")}

        def row_of(mid: str) -> RecordRow:
            return where.get(("run-measurement", mid)) or where[("series-measurement", mid)]

        home = {mid: measurement_home(row_of(mid)) for mid in measurements}
        featured_by: dict[str, str] = {}  # measurement id -> the first packet that features it
        for pid, pk in records.get("packet", {}).items():
            fm = pk.get("featured_metric")
            if isinstance(fm, dict) and isinstance(fm.get("measurement_id"), str):
                featured_by.setdefault(fm["measurement_id"], pid)
        in_packet: dict[str, list[str]] = defaultdict(list)  # packet id -> its measurements
        loose: dict[str, list[str]] = defaultdict(list)  # family id -> its measurements in no packet
        of_family: dict[str, list[str]] = defaultdict(list)  # family id -> its measurements
        for mid in measurements:
            row = row_of(mid)
            of_family[str(row.family)].append(mid)
            (in_packet[row.packet] if row.packet else loose[str(row.family)]).append(mid)
        # a family's records of a kind, by id (a family's pages ask for its views, contracts and packets)
        by_family: dict[tuple[str, str | None], dict[str, dict[str, Any]]] = defaultdict(dict)
        for kind, of_kind in records.items():
            for k, v in of_kind.items():
                by_family[(kind, where[(kind, k)].family)][k.split("/", 1)[1] if "/" in k else k] = v

        def tracked(name: str, data: Mapping[Any, Any], missing: Callable[[], Any] | None = None) -> Tracked[Any, Any]:
            store = self.stores[name] = Tracked(name, data, self.reads, missing)
            return store

        self.stores: dict[str, Tracked[Any, Any]] = {}
        kinds = {kind: tracked(f"records/{kind}", of_kind) for kind, of_kind in records.items()}
        self.records: Mapping[str, Mapping[str, dict[str, Any]]] = tracked("records", kinds)
        self.where: Mapping[tuple[str, str], RecordRow] = tracked("where", where)
        self.evidence: Mapping[str, list[EvidenceRow]] = tracked("evidence", dict(evidence), list)
        self.provenance: Mapping[str, list[ProvenanceRow]] = tracked("provenance", dict(provenance), list)
        self._defects = tracked("defects", dict(enumerate(defects)))
        self.unread: Mapping[str, int] = tracked("unread", dict(unread), int)
        """Per record file, how many of its samples its evidence does not hold (accepted or not)."""
        self.defects_in: Mapping[str, list[FindingRow]] = tracked("defects_in", dict(defects_in), list)
        self.meta: Mapping[str, str] = tracked("meta", meta)
        self.measurements: Mapping[str, dict[str, Any]] = tracked("measurements", measurements)
        self.superseded_by: Mapping[str, str] = tracked("superseded_by", superseded_by)
        self.home: Mapping[str, str] = tracked("home", home)
        self.featured_by: Mapping[str, str] = tracked("featured_by", featured_by)
        self.in_packet: Mapping[str, list[str]] = tracked("in_packet", dict(in_packet), list)
        self.loose: Mapping[str, list[str]] = tracked("loose", dict(loose), list)
        self.of_family: Mapping[str, list[str]] = tracked("of_family", dict(of_family), list)
        self._by_family = tracked("family_records", dict(by_family), dict)
        self._parts: dict[str, tuple[tuple[str, str, str, str], frozenset[Token]]] = {}  # trust_parts, once per mid
        self._contract_counts: dict[int, Counter[str]] = {}  # a contract's cells by state (contract_counts)

    @functools.cached_property
    def digests(self) -> Digests:
        """The digests of what pages read of this catalog (``evreg.site.trace``), worked out as they are asked for."""
        return Digests(self.stores)

    @property
    def defects(self) -> list[FindingRow]:
        """Every accepted defect (baselined finding)."""
        return list(self._defects.values())

    def measurement_where(self, mid: str) -> RecordRow:
        """The catalog row of a measurement of either kind."""
        return self.where.get(("run-measurement", mid)) or self.where[("series-measurement", mid)]

    def packet_of(self, mid: str) -> str | None:
        """The packet a measurement belongs to: its folder's, else the packet that features it."""
        if mid in self.measurements and self.measurement_where(mid).packet:
            return self.measurement_where(mid).packet
        return self.featured_by.get(mid)

    def trust_parts(self, mid: str) -> tuple[str, str, str, str]:
        """A measurement's state, its packet's grades (and which packet), hardware and runtime, as plain text."""
        return self.reads.memo(self._parts, mid, lambda: self._trust_parts(mid))

    def _trust_parts(self, mid: str) -> tuple[str, str, str, str]:
        m = self.measurements.get(mid, {})
        pid = self.packet_of(mid)
        pk = self.records.get("packet", {}).get(pid or "", {})
        grades = [
            f"{'EVID' if axis == 'evidence' else 'CAP'} {g.get('grade')}"
            for axis, g in (pk.get("grades") or {}).items()
            if isinstance(g, dict)
        ]
        hardware = m.get("hardware") or pk.get("hardware") or "hardware not recorded"
        runtime = m.get("runtime") or pk.get("runtime") or "runtime not recorded"
        return (
            str(m.get("state", "unknown state")),
            (" ".join(grades) or "ungraded") + (f" (packet {pid})" if pid else " (no packet)"),
            " ".join(str(hardware).split()),
            " ".join(str(runtime).split()),
        )

    def evidence_checked(self, mid: str) -> str:
        """Whether a measurement's evidence was checked (its own references, else its packet's): ``checked`` when
        every reference is a local file or held copy that is present (validation reads it and its sha256), ``not
        checked`` when none is (an external file or a link is referenced, not read), ``partly checked`` between,
        ``no evidence`` when it references none."""
        refs = self.evidence.get(self.measurement_where(mid).file, []) if mid in self.measurements else []
        if not refs and (pid := self.packet_of(mid)) and ("packet", pid) in self.where:
            refs = self.evidence.get(self.where[("packet", pid)].file, [])
        if not refs:
            return "no evidence"
        read = sum((ev.ref_kind == "local" or bool(ev.held)) and bool(ev.present) for ev in refs)
        return "checked" if read == len(refs) else "not checked" if read == 0 else "partly checked"

    def defects_of(self, mid: str) -> list[FindingRow]:
        """The accepted defects (baselined findings) of a measurement's record and of its packet's."""
        files = [self.measurement_where(mid).file] if mid in self.measurements else []
        if (pid := self.packet_of(mid)) and ("packet", pid) in self.where:
            files.append(self.where[("packet", pid)].file)
        return [f for file in dict.fromkeys(files) for f in self.defects_in.get(file, [])]

    def family_records(self, kind: str, fid: str) -> Mapping[str, dict[str, Any]]:
        """The records of ``kind`` in a family, by id."""
        return self._by_family[(kind, fid)]

    def contract_counts(self, c: dict[str, Any]) -> Counter[str]:
        """A contract's cells by state, worked out once per build (the family page and two index pages show them)."""
        key = id(c)  # the record's dict, held by ``self.records`` for the whole build
        if key not in self._contract_counts:
            self._contract_counts[key] = coverage.state_counts(c)
        return self._contract_counts[key]
