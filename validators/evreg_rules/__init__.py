"""The rule set CI runs over the registry.

This package depends on ``evreg`` and never the reverse: ``evreg`` finds
these rules through the ``evreg.rules`` entry point (``RULES``).
"""

from __future__ import annotations

from evreg.check.rules import Rule
from evreg_rules import (
    coverage,
    evidence,
    featured,
    grades,
    history,
    lab,
    lab_coverage,
    models,
    plausibility,
    promotion,
    prose,
    references,
    site_pages,
    structure,
    views,
    workloads,
)

RULES: list[Rule] = [
    *structure.RULES,
    *references.RULES,
    *models.RULES,
    *evidence.RULES,
    *prose.RULES,
    *site_pages.RULES,
    *featured.RULES,
    *promotion.RULES,
    *grades.RULES,
    *coverage.RULES,
    *views.RULES,
    *workloads.RULES,
    *plausibility.RULES,
    *lab.RULES,
    *lab_coverage.RULES,
    *history.RULES,
]
