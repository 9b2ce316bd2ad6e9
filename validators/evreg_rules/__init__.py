"""The rule set CI runs over the registry.

This package depends on ``registry`` and never the reverse: the registry
finds these rules through the ``evreg.rules`` entry point (``RULES``).
"""

from __future__ import annotations

from evreg.check.rules import Rule
from evreg_rules import claims, evidence, history, lab, lab_coverage, plausibility, references, structure

RULES: list[Rule] = [
    *structure.RULES,
    *references.RULES,
    *evidence.RULES,
    *claims.RULES,
    *plausibility.RULES,
    *lab.RULES,
    *lab_coverage.RULES,
    *history.RULES,
]
