"""The one finding type every loader, rule and reporter shares, and the codes that make findings.

A finding is made only from its documented :class:`Code` (``CODE.at(where, pointer, message)``):
a code exists once, with its title, reason and hint, and a finding whose code was never
declared is refused when it is made, so codes and their documentation cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class RecordRef(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: str
    id: str


class Finding(BaseModel):
    """One problem found in the registry, located as precisely as we can."""

    model_config = ConfigDict(frozen=True)

    code: str
    severity: Severity = Severity.ERROR
    file: str
    pointer: str = ""
    line: int | None = None
    column: int | None = None
    message: str
    fields: dict[str, str] = Field(default_factory=dict)
    """What the finding is about, as values (the figure, the field, the evidence cited...): a baseline entry
    accepts a finding by its code, file, pointer and these fields, so rewording a message keeps it accepted."""
    hint: str = ""
    record: RecordRef | None = None
    introduced: bool | None = None
    baselined: bool = False
    baseline_reason: str | None = None
    digest: str | None = None
    """What the finding was found in, as reviewed: a digest of the value at its pointer (a record) or of its line
    (a page). A baseline entry binds it: the same finding in other text, or at another line, is not accepted."""

    @field_validator("code")
    @classmethod
    def _declared(cls, code: str) -> str:
        if code not in _DECLARED:
            raise ValueError(f"finding code {code!r} is not declared; make findings with Code(...).at(...)")
        return code

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line or 0, self.column or 0, self.code, self.pointer)


class Located(Protocol):
    """Something a finding can point into: a record file that can place a JSON pointer."""

    @property
    def path(self) -> str: ...

    def position(self, pointer: str) -> tuple[int | None, int | None]: ...

    def ref(self) -> RecordRef | None: ...


_DECLARED: dict[str, Code] = {}


@dataclass(frozen=True)
class Code:
    """One finding code: what it rejects, why, and how to fix it. Declaring it is what
    lets findings of it be made; a code is declared once, in one place."""

    code: str
    title: str
    why: str
    hint: str
    example: str = ""
    message: str = ""
    """The message made from a finding's ``fields`` (``str.format`` names) when the rule gives none."""
    baselinable: bool = True
    """False for findings no baseline entry may accept (a change's own history, the baseline's own edits)."""

    def __post_init__(self) -> None:
        if _DECLARED.setdefault(self.code, self) is not self:
            raise ValueError(f"finding code {self.code!r} is declared twice")

    def at(
        self,
        where: str | Located,
        pointer: str = "",
        message: str = "",
        hint: str | None = None,
        severity: Severity = Severity.ERROR,
        *,
        line: int | None = None,
        column: int | None = None,
        record: RecordRef | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> Finding:
        """A finding of this code in file ``where`` (a path, or a record that can place ``pointer``); its
        ``fields`` say what it is about, and make its message when none is given (``Code.message``)."""
        values = {k: str(v) for k, v in (fields or {}).items()}
        if not message and self.message:
            message = self.message.format_map(values)
        if not isinstance(where, str):
            if line is None:
                line, column = where.position(pointer)
            record = where.ref()
            where = where.path
        return Finding(
            code=self.code,
            severity=severity,
            file=where,
            pointer=pointer,
            line=line,
            column=column,
            message=message,
            fields=values,
            hint=self.hint if hint is None else hint,
            record=record,
        )


def declared() -> dict[str, Code]:
    """Every code declared by the modules imported so far."""
    return dict(_DECLARED)


def code_of(finding: Finding) -> Code:
    """The declared code a finding was made from."""
    return _DECLARED[finding.code]


def code_named(code: str) -> Code:
    """The declared code of this name."""
    return _DECLARED[code]


def escape_token(token: str | int) -> str:
    """Escape one reference token of an RFC 6901 JSON pointer."""
    text = str(token)
    return text.replace("~", "~0").replace("/", "~1") if "~" in text or "/" in text else text


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join_pointer(*tokens: str | int) -> str:
    return "".join("/" + escape_token(t) for t in tokens)


def split_pointer(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [unescape_token(t) for t in pointer.split("/")[1:]]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 JSON pointer of a document; raises KeyError when nothing is there."""
    node = document
    for token in split_pointer(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise KeyError(pointer)
    return node
