"""The catalog as the pages read it, in plain data: the rows of its DuckDB tables (``evreg.catalog.tables``) by what
they belong to, and what the pages look up in them (a measurement's row, packet, family's records, trust line).
Nothing here is HTML."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import duckdb

from evreg.catalog.tables import EvidenceRow, FindingRow, Meta, ProvenanceRow, RecordRow, rows_of
from evreg.claims import coverage
from evreg.core import jsonio
from evreg.core.layout import family_scoped
from evreg.site.html import measurement_home


class Catalog:
    """The catalog as the pages read it: typed rows of its tables (``evreg.catalog.tables``), by what they belong to."""

    def __init__(self, db: Path) -> None:
        con = duckdb.connect(str(db), read_only=True)
        try:
            self.records: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
            self.where: dict[tuple[str, str], RecordRow] = {}
            for rec in rows_of(con, RecordRow, "key"):
                key = f"{rec.family}/{rec.id}" if family_scoped(rec.kind) else rec.id
                # The record as validated, for its free-form fields (prose, config, views, contracts),
                # which no table column holds.
                self.records[rec.kind][key] = jsonio.loads(rec.content)
                self.where[(rec.kind, key)] = rec._replace(content="")  # type: ignore[attr-defined]  # parsed above
            self.evidence: dict[str, list[EvidenceRow]] = defaultdict(list)
            for ev in rows_of(con, EvidenceRow, "key"):
                self.evidence[ev.file].append(ev)
            self.provenance: dict[str, list[ProvenanceRow]] = defaultdict(list)
            for change in rows_of(con, ProvenanceRow, "path, seq"):
                self.provenance[change.path].append(change)
            found = list(rows_of(con, FindingRow, "file, pointer"))
            self.defects = [f for f in found if f.baselined]
            self.unread: Counter[str] = Counter(f.file for f in found if f.code == "evidence-value-mismatch")
            """Per record file, how many of its samples its evidence does not hold (accepted or not)."""
            self.defects_in: dict[str, list[FindingRow]] = defaultdict(list)  # file -> its accepted defects
            for f in self.defects:
                self.defects_in[f.file].append(f)
            self.meta = {m.key: m.value for m in rows_of(con, Meta, "key")}
        finally:
            con.close()
        families = self.records.get("family", {})
        lists = self.records.get("catalog", {}).values()
        listed = [f["id"] for c in lists for f in c["families"] if f["id"] in families]
        order = [*dict.fromkeys(listed), *sorted(set(families) - set(listed))]  # the family list's order, then by id
        self.records["family"] = {fid: families[fid] for fid in order}
        self.measurements = {**self.records.get("run-measurement", {}), **self.records.get("series-measurement", {})}
        self.superseded_by = {m["supersedes"]: mid for mid, m in self.measurements.items() if m.get("supersedes")}
        self.home = {mid: measurement_home(self.measurement_where(mid)) for mid in self.measurements}
        self.featured_by: dict[str, str] = {}  # measurement id -> the first packet that features it
        for pid, pk in self.records.get("packet", {}).items():
            fm = pk.get("featured_metric")
            if isinstance(fm, dict) and isinstance(fm.get("measurement_id"), str):
                self.featured_by.setdefault(fm["measurement_id"], pid)
        self._parts: dict[str, tuple[str, str, str, str]] = {}  # trust_parts, worked out once per measurement
        self.in_packet: dict[str, list[str]] = defaultdict(list)  # packet id -> its measurements
        self.loose: dict[str, list[str]] = defaultdict(list)  # family id -> its measurements in no packet
        self.of_family: dict[str, list[str]] = defaultdict(list)  # family id -> its measurements
        for mid in self.measurements:
            row = self.measurement_where(mid)
            self.of_family[str(row.family)].append(mid)
            (self.in_packet[row.packet] if row.packet else self.loose[str(row.family)]).append(mid)
        self._by_family: dict[str, dict[str | None, dict[str, dict[str, Any]]]] = {}  # family_records, by kind
        self._contract_counts: dict[int, Counter[str]] = {}  # a contract's cells by state (contract_counts)

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
        if (parts := self._parts.get(mid)) is None:
            parts = self._parts[mid] = self._trust_parts(mid)
        return parts

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

    def family_records(self, kind: str, fid: str) -> dict[str, dict[str, Any]]:
        """The records of ``kind`` in a family, by id (the records of a kind are sorted by family once: a family's
        pages ask for its views, contracts and packets, and each family asking every record of a kind was
        quadratic)."""
        if (by_family := self._by_family.get(kind)) is None:
            by_family = self._by_family[kind] = defaultdict(dict)
            for k, v in self.records.get(kind, {}).items():
                by_family[self.where[(kind, k)].family][k.split("/", 1)[1] if "/" in k else k] = v
        return by_family.get(fid, {})

    def contract_counts(self, c: dict[str, Any]) -> Counter[str]:
        """A contract's cells by state, worked out once per build (the family page and two index pages show them)."""
        key = id(c)  # the record's dict, held by ``self.records`` for the whole build
        if key not in self._contract_counts:
            self._contract_counts[key] = coverage.state_counts(c)
        return self._contract_counts[key]
