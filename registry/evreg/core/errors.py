"""The one exception family: what a user job refuses on purpose. The CLI maps it once (``evreg.cli``): findings are
printed as findings, a message as a message, and the exit status says whether the input was refused (1) or the
command was asked wrongly (2). Anything else that escapes a job is an internal error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from evreg.core.findings import Finding


class EvregError(Exception):
    """A refusal: nothing was written. ``findings`` locate it (file, pointer, hint) where it has them."""

    usage: ClassVar[bool] = False
    """True when the command was asked wrongly (exit 2), False when its input was refused (exit 1)."""

    def __init__(
        self, message: str = "", findings: Sequence[Finding] = (), summary: dict[str, Any] | None = None
    ) -> None:
        self.findings = list(findings)
        self.summary = summary
        """The counts printed with the findings (a validation's summary); by default their errors and warnings."""
        super().__init__(message or "; ".join(f.message for f in self.findings))

    def counts(self) -> dict[str, Any]:
        """``summary``, or the errors and warnings among ``findings``."""
        if self.summary is not None:
            return self.summary
        errors = sum(1 for f in self.findings if f.severity == "error")
        return {"errors": errors, "warnings": len(self.findings) - errors}


class Refused(EvregError):
    """The input cannot be used as it is (a record, a file to import, a query): exit 1."""


class UsageProblem(EvregError):
    """The command names something that is not there or cannot be asked for (a base commit, a date): exit 2."""

    usage = True
