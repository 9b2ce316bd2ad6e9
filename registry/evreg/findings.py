"""The one finding type every loader, rule and reporter shares."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


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
    hint: str = ""
    record: RecordRef | None = None
    introduced: bool | None = None
    baselined: bool = False
    baseline_reason: str | None = None

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line or 0, self.column or 0, self.code, self.pointer)


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
