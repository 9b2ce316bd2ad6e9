"""The one rule for a cell of a CSV file the registry writes (``evreg query --format csv``; the comparison
pages' download applies the same rule in ``evreg-compare.js``, and a test holds the two to one corpus).

A spreadsheet evaluates a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return) as a
formula: ``=HYPERLINK(...)`` written as a hardware name would run in a reader's spreadsheet. Such a cell is written
with a leading ``'`` (OWASP's rule for CSV injection), unless it is a plain number, which a spreadsheet reads as
one. Leading blanks and controls are looked through: some spreadsheets drop them before reading the cell."""

from __future__ import annotations

import re
from typing import Any

FORMULA = re.compile(r"^[\s\x00-\x1f\u00a0\u2000-\u200b\ufeff]*[=+\-@\uff1d\uff0b\uff0d\uff20]")
"""A cell a spreadsheet could read as a formula (full-width signs too), after any leading blanks or controls."""
NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
"""A plain number: read as a number, never as a formula."""


def csv_cell(value: Any) -> str:
    """``value`` as the text of a CSV cell no spreadsheet evaluates (quoting is the CSV writer's)."""
    text = "" if value is None else str(value)
    return "'" + text if FORMULA.match(text) and not NUMBER.fullmatch(text) else text
