"""Workload fields agree with what the record itself says: a field its workload text or config states otherwise
(``evreg.claims.workload_text``), or a field a series sweeps along its axis stated as one value, is a contradiction,
not a reclassification (the fields decide which results are ranked together)."""

from __future__ import annotations

from collections.abc import Iterator

from evreg.check.rules import UNIT, Rule
from evreg.claims import workload, workload_text
from evreg.core.findings import Code, Finding
from evreg.store import MEASUREMENT_KINDS, Registry

CONTRADICTED = Code(
    "workload-contradicted",
    "Workload fields that the measurement's own text, config or axis state otherwise",
    "The workload fields put a result in a workload class, and only results of one class are ranked together; a "
    "field that says other than the record's text (`128 output tokens`), its config (`concurrency`) or the axis its "
    "series sweeps moves the result into another class.",
    "Make the field what the text and config state, or leave it out (unstated); a series states its swept field "
    "only along its axis.",
    '{"workload": "single request, 300 output tokens", "workload_fields": {"concurrency": 8}}',
)


def check_workloads(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records(*MEASUREMENT_KINDS):
        stated = doc.data.get("workload_fields")
        if not isinstance(stated, dict):
            continue
        read = workload_text.fields(doc.data.get("workload"), doc.data.get("config"))
        for key, value in read.items():
            if key in stated and stated[key] != value:
                message = f"workload_fields {key} is {stated[key]!r}, but the workload text or config states {value!r}"
                yield CONTRADICTED.at(doc, f"/workload_fields/{key}", message, fields={"field": key})
        swept = workload.AXIS_FIELDS.get(str(doc.data.get("axis") or ""))
        if swept and swept in stated and doc.data.get("points"):
            message = f"the series sweeps {swept} along its axis {doc.data['axis']!r}; workload_fields states one value"
            yield CONTRADICTED.at(doc, f"/workload_fields/{swept}", message, fields={"field": swept})


RULES = [Rule("workload-fields", (CONTRADICTED,), check_workloads, UNIT)]
