"""The core: findings are made only from declared codes, and the vocabulary decides what is promotable."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evreg.core.findings import Finding
from evreg.core.vocab import promotable


def test_a_finding_needs_a_declared_code_and_a_code_is_declared_once() -> None:

    from evreg.core import codes
    from evreg.core.findings import Code

    with pytest.raises(ValidationError, match="not declared"):
        Finding(code="made-up", file="x.json", message="m")
    with pytest.raises(ValueError, match="declared twice"):
        Code("schema", "another title", "why", "hint")
    made = codes.SCHEMA.at("x.json", "/a", "m")
    assert (made.code, made.hint) == ("schema", codes.SCHEMA.hint)


def test_a_diagnostic_class_in_any_case_is_not_promotable() -> None:
    run = {"kind": "run-measurement", "state": "lab-measured"}
    for cls in ("Diagnostic strict deep gate", "strict diagnostic run", "diagnostics", "exact-8k-grade-c-diagnostic"):
        assert promotable({**run, "measurement_class": cls}), cls
    for cls in ("strict deep gate", "non-diagnostic strict gate"):
        assert promotable({**run, "measurement_class": cls}) is None, cls
