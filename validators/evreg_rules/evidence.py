"""Evidence: local evidence files exist inside the repository and match
their recorded sha256. External references are counted, not checked."""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from evreg import citations, jsonio
from evreg.containment import outside_repository
from evreg.evidence import TEXT_NUMBER, decode, parse_ref, text_lines
from evreg.findings import Code, Finding, join_pointer, split_pointer
from evreg.rules import UNIT, Rule
from evreg.store import EvidenceState, Registry

MISSING = Code(
    "evidence-missing",
    "A local evidence path that is not a file",
    "A number is only as good as the file that backs it; a path that leads nowhere is no evidence.",
    "Commit the evidence file at that path (packets/<family>/<packet>/evidence/...), or fix the path. "
    "Evidence kept elsewhere is cited as SOURCE:path with the source declared in family.json.",
    '{"evidence": "packets/qwen-27b/p/evidence/run.json"}  (no such file)',
)
ESCAPE = Code(
    "evidence-escape",
    "An evidence path outside the repository",
    "Absolute paths, `..` and symlinks leading out of the repository name files a reviewer cannot "
    "see, and could read files of the machine that builds the site.",
    "Copy the file into the packet's evidence/ folder and cite its repository-relative path.",
    '{"evidence": "../../etc/passwd"}',
)
HASH = Code(
    "evidence-hash-mismatch",
    "Evidence bytes differ from the recorded sha256",
    "Evidence is content-addressed: an edited evidence file would silently change what a published number rests on.",
    "Restore the original file; new evidence is a new file with its own hash in `evidence_sha256`.",
    '{"evidence_sha256": {"packets/f/p/evidence/run.json": "00...00"}}',
)

UNSAFE = Code(
    "path-unsafe",
    "An evidence path with hard-to-see or look-alike characters",
    "Paths are read by people in review: control and bidi characters, non-ASCII look-alikes, trailing dots or "
    "spaces and names that differ only in case can make a path show one file and name another.",
    "Rename the evidence file with plain ASCII letters, digits, '.', '_', '-' and '/' only.",
    '{"evidence": "packets/f/p/evidence/run\u202ejson.txt"}',
)

_SAFE_PATH = re.compile(r"[A-Za-z0-9._+/-]+")


def _unsafe(path: str) -> str | None:
    """Why a local evidence path is hard to read safely, or None."""
    if not _SAFE_PATH.fullmatch(path):
        bad = sorted({c for c in path if not _SAFE_PATH.fullmatch(c)})
        return "it contains " + ", ".join(f"U+{ord(c):04X}" for c in bad[:5])
    for part in path.split("/"):
        if part == "" or part.endswith((".", " ")):
            return f"its part {part!r} is empty or ends in a dot"
    return None


def _case_twins(registry: Registry, path: str) -> list[str]:
    """Other files in the same folder whose names equal this one's but for case."""
    if "/" not in path:
        return []
    folder, name = path.rsplit("/", 1)
    return [f"{folder}/{n}" for n in registry.names(folder) if n != name and n.lower() == name.lower()]


def _path_verdict(registry: Registry, value: str) -> tuple[list[tuple[Code, str]], bool]:
    """(code, message) for one local evidence path, whoever cites it, and whether it is a file."""
    outside = outside_repository(value)
    if outside:
        return [(ESCAPE, f"evidence path {value!r} leaves the repository: {outside}")], False
    why = _unsafe(value)
    if why:
        return [(UNSAFE, f"evidence path {value!r} is unsafe: {why}")], False
    out = []
    twins = _case_twins(registry, value)
    if twins:
        out.append((UNSAFE, f"evidence path {value!r} differs only in case from {twins[0]!r}"))
    state = registry.evidence(value)
    if state is EvidenceState.ESCAPE:
        out.append((ESCAPE, f"evidence path {value!r} resolves outside the repository's own files (through a symlink)"))
    elif state is EvidenceState.MISSING:
        out.append((MISSING, f"evidence file {value!r} does not exist in the {registry.source.label}"))
    elif state is EvidenceState.NOT_FILE:
        out.append((MISSING, f"evidence path {value!r} is not a regular file"))
    return out, state is EvidenceState.FILE


def check_evidence(registry: Registry) -> Iterator[Finding]:
    verdicts: dict[str, tuple[list[tuple[Code, str]], bool]] = {}
    digests: dict[str, str] = {}
    for doc in registry.records():
        hashes = doc.data.get("evidence_sha256") or {}
        cited: set[str] = set()
        for pointer, value in doc.refs:
            ref = parse_ref(value)
            if ref.kind == "external":
                outside = outside_repository(ref.path)
                if outside:
                    yield ESCAPE.at(
                        doc,
                        pointer,
                        f"path {ref.path!r} into source {ref.source!r} is not a plain relative path: {outside}",
                        "write the path relative to the root of the external source, without '..'",
                    )
                elif why := _unsafe(ref.path):
                    yield UNSAFE.at(doc, pointer, f"path {ref.path!r} into source {ref.source!r} is unsafe: {why}")
            if ref.kind != "local":
                continue
            cited.add(value)
            if value not in verdicts:
                verdicts[value] = _path_verdict(registry, value)
            problems, is_file = verdicts[value]
            for code, message in problems:
                yield code.at(doc, pointer, message)
            if value in hashes and is_file:
                if value not in digests:
                    digests[value] = hashlib.sha256(registry.read_file(value)).hexdigest()
                if digests[value] != hashes[value]:
                    yield HASH.at(
                        doc,
                        join_pointer("evidence_sha256", value),
                        f"{value} has sha256 {digests[value]}, the record says {hashes[value]}",
                        HASH.hint,
                    )
        for path in hashes:
            if path not in cited:
                yield HASH.at(
                    doc,
                    join_pointer("evidence_sha256", path),
                    f"a sha256 is recorded for {path!r}, which this record does not cite",
                    "remove the entry, or cite the file where the record uses it",
                )


VALUE = Code(
    "evidence-value-mismatch",
    "A stored number its evidence does not reproduce",
    "A measurement declares where each number sits in its evidence file (evidence_locators); re-reading the "
    "evidence must give exactly the stored value, or the number was copied wrong or the evidence changed.",
    "Fix the stored number or the locator so that the evidence reproduces it exactly.",
    '{"metrics": {"decode_tok_s": [30.2]}, "evidence_locators": {"decode_tok_s[0]": "/runs/0/decode"}} '
    "where the evidence says 30.25",
)

_SELECTOR = re.compile(r"^(?P<metric>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<index>\d+)\]|@(?P<x>-?\d+(?:\.\d+)?))$")


def _resolve_pointer(document: Any, pointer: str) -> Any:
    node = document
    for token in split_pointer(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise KeyError(pointer)
    return node


_CSV = re.compile(r"^csv:(?P<row>[1-9]\d*)/(?P<column>.+)$")
_LINE = re.compile(r"^line:(?P<line>[1-9]\d*)(?::(?P<nth>[1-9]\d*))?$")


class _Evidence:
    """One evidence file as its locators read it: JSON by pointer, CSV/TSV by row and column, text by line."""

    def __init__(self, raw: bytes, path: str) -> None:
        self.raw, self.path = raw, path
        self._json: Any = None
        self._rows: list[dict[str, str]] | None = None

    def value(self, locator: str) -> Any:
        """The value at ``locator``; raises KeyError (nothing there) or ValueError (the file is not of that form)."""
        if m := _CSV.match(locator):
            return _number(self._cell(m))
        if m := _LINE.match(locator):
            numbers = TEXT_NUMBER.findall(self._line(m))
            nth = int(m.group("nth") or 1)
            if nth > len(numbers) or (m.group("nth") is None and len(numbers) != 1):
                raise KeyError(locator)  # a line without its nth number, or with several and no choice made
            return _number(numbers[nth - 1])
        if self._json is None:
            value, problems = jsonio.parse(decode(self.raw)[0].encode("utf-8"), self.path)  # UTF-16, BOM: decoded
            if problems:
                raise ValueError(f"evidence {self.path!r} is not readable JSON, so a JSON pointer cannot be checked")
            self._json = (value,)
        return _resolve_pointer(self._json[0], locator)

    def text(self, locator: str) -> str:
        """The text at ``locator`` as a quote reads it: a whole line, a CSV cell, a JSON value (strings as written,
        other values as JSON); raises KeyError or ValueError like ``value``."""
        if m := _CSV.match(locator):
            return self._cell(m)
        if m := _LINE.match(locator):
            if m.group("nth"):
                raise KeyError(locator)
            return self._line(m)
        found = self.value(locator)
        return found if isinstance(found, str) else json.dumps(found)

    def _cell(self, m: re.Match[str]) -> str:
        rows = self._table()
        row = int(m.group("row"))
        if row > len(rows) or m.group("column") not in rows[row - 1]:
            raise KeyError(m.group())
        return str(rows[row - 1][m.group("column")])

    def _line(self, m: re.Match[str]) -> str:
        lines = text_lines(self.raw)
        line = int(m.group("line"))
        if line > len(lines):
            raise KeyError(m.group())
        return lines[line - 1]

    def _table(self) -> list[dict[str, str]]:
        import csv
        import io

        if self._rows is None:
            text = decode(self.raw)[0]
            delimiter = "\t" if self.path.lower().endswith(".tsv") else ","
            self._rows = list(csv.DictReader(io.StringIO(text), delimiter=delimiter))
        return self._rows


def _number(text: str) -> float | str:
    """A CSV cell or a number found in text as a float, or the text when it is none (``NaN`` is none)."""
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _unlocated(record: dict[str, Any], locators: dict[str, Any]) -> list[str]:
    """The samples of a run's metrics (``METRIC[i]``) that no locator points at."""
    metrics = record.get("metrics")
    if not isinstance(metrics, dict):
        return []
    return [
        f"{metric}[{i}]"
        for metric, samples in metrics.items()
        if isinstance(samples, list)
        for i in range(len(samples))
        if f"{metric}[{i}]" not in locators
    ]


def check_evidence_values(registry: Registry) -> Iterator[Finding]:
    files: dict[str, _Evidence] = {}
    for doc in registry.records():
        locators = doc.data.get("evidence_locators")
        if not locators:
            continue
        ev = doc.data.get("evidence")
        if not isinstance(ev, str) or parse_ref(ev).kind != "local" or registry.evidence(ev) is not EvidenceState.FILE:
            yield VALUE.at(
                doc,
                "/evidence_locators",
                "locators need a local evidence file that exists, and `evidence` is not one",
                VALUE.hint,
            )
            continue
        if ev not in files:
            files[ev] = _Evidence(registry.read_file(ev), ev)
        for selector in _unlocated(doc.data, locators):
            yield VALUE.at(
                doc,
                join_pointer("evidence_locators"),
                f"{selector} has no locator: a record that locates its samples in its evidence locates each of them "
                "(a sample beside located ones would be published unchecked)",
                VALUE.hint,
            )
        for selector, locator in locators.items():
            where = join_pointer("evidence_locators", selector)
            m = _SELECTOR.match(selector)
            index = int(m.group("index")) if m and m.group("index") else None
            x = float(m.group("x")) if m and m.group("x") else None
            stored = citations.lookup(doc.data, m.group("metric"), index, x) if m else "is not METRIC[i] or METRIC@X"
            if isinstance(stored, str):
                yield VALUE.at(doc, where, f"locator {selector!r}: the record {stored}", VALUE.hint)
                continue
            try:
                found = files[ev].value(locator)
            except KeyError:
                yield VALUE.at(doc, where, f"locator {selector!r}: {ev} has nothing at {locator!r}", VALUE.hint)
                continue
            except ValueError as exc:
                yield VALUE.at(doc, "/evidence", str(exc), VALUE.hint)
                break
            if isinstance(found, bool) or not isinstance(found, int | float) or float(found) != stored:
                yield VALUE.at(
                    doc,
                    where,
                    f"{selector} is {stored!r} in the record but {found!r} at {ev} {locator}",
                    VALUE.hint,
                )


def _quote_problem(registry: Registry, doc: Any, files: dict[str, _Evidence], quote: citations.Quote) -> str | None:
    """Why a quote in a record's prose is not what its evidence file says at the locator, or None."""
    ev = doc.data.get("evidence")
    if not isinstance(ev, str) or parse_ref(ev).kind != "local" or registry.evidence(ev) is not EvidenceState.FILE:
        return f"quote {quote.raw}: a quote is re-read from the record's local evidence file, and `evidence` is not one"
    if ev not in files:
        files[ev] = _Evidence(registry.read_file(ev), ev)
    try:
        found = files[ev].text(quote.locator)
    except (KeyError, ValueError):
        return f"quote {quote.raw}: {ev} has nothing at {quote.locator!r}"
    if not _quoted(_folded(quote.text), _folded(found)):
        return f"quote {quote.text!r} is not in {ev} at {quote.locator!r}, which reads {found[:120]!r}"
    return None


def _quoted(quote: str, found: str) -> bool:
    """Whether ``quote`` is in ``found`` as whole words and numbers: ``5.6`` is not quoted from ``25.6``, nor ``25``
    from ``25.6``."""
    edge = r"[\w.,]*\w" if quote[-1:].isalnum() else ""
    pattern = (r"(?<![\w.])" if quote[:1].isalnum() else "") + re.escape(quote) + (f"(?!{edge})" if edge else "")
    return re.search(pattern, found) is not None


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def check_quotes(registry: Registry) -> Iterator[Finding]:
    """Quotes from evidence (``{{ e:LOCATOR = TEXT }}``) are re-read: the text is at the locator of the record's own
    local evidence file (whitespace and Unicode compatibility forms aside)."""
    files: dict[str, _Evidence] = {}
    for doc in registry.records():
        for pointer, text in doc.prose:
            if "{{" not in text or "e:" not in text:
                continue
            for form in citations.parse(text):
                if isinstance(form, citations.Quote):
                    problem = _quote_problem(registry, doc, files, form)
                    if problem:
                        yield VALUE.at(doc, pointer, problem, VALUE.hint)


RULES = [
    Rule("evidence", (MISSING, ESCAPE, HASH, UNSAFE), check_evidence, UNIT),
    Rule("evidence-values", (VALUE,), check_evidence_values, UNIT),
    Rule("evidence-quotes", (VALUE,), check_quotes, UNIT),
]
