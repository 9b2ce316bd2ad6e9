"""Evidence: local evidence files exist inside the repository and match their recorded sha256, and each located
sample re-reads from its own run's entry; external references are checked against a local clone of their source
where one is given (``evreg validate --source NAME=DIR``), and counted otherwise."""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations, figures
from evreg.core import gitcmd, jsonio
from evreg.core.containment import outside_repository
from evreg.core.evidence import TEXT_NUMBER, decode, parse_ref, text_lines
from evreg.core.findings import Code, Finding, Severity, join_pointer, resolve_pointer, split_pointer
from evreg.core.layout import held_path
from evreg.store import EvidenceState, Held, Registry

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
    """Other files or folders beside this path's file, or beside any folder of it inside its evidence folder, whose
    names equal its own but for case: where a checkout ignores case they are one, and one replaces the other."""
    parts = path.split("/")
    out = []
    first = parts.index("evidence") + 1 if "evidence" in parts[:-1] else len(parts) - 1
    for depth in range(max(first, 1), len(parts)):
        folder, name = "/".join(parts[:depth]), parts[depth]
        out += [f"{folder}/{n}" for n in registry.names(folder) if n != name and n.lower() == name.lower()]
    return out


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


_CSV = re.compile(r"^csv:(?P<row>[1-9]\d*)/(?P<column>.+)$")
_LINE = re.compile(r"^line:(?P<line>[1-9]\d*)(?::(?P<nth>[1-9]\d*))?$")


class _Evidence:
    """One evidence file as its locators read it: JSON by pointer, CSV/TSV by row and column, text by line."""

    def __init__(self, raw: bytes, path: str) -> None:
        self.raw, self.path = raw, path
        self._json: Any = None
        self._rows: list[dict[str, str]] | None = None
        self._header: list[str] = []

    def value(self, locator: str) -> Any:
        """The value at ``locator``; raises KeyError (nothing there) or ValueError (the file is not of that form)."""
        if m := _CSV.match(locator):
            return _number(self._cell(m))
        if m := _LINE.match(locator):
            return _number(self.line_number(m)[0])
        if self._json is None:
            value, problems = jsonio.parse(
                decode(self.raw)[0].encode("utf-8"), self.path, finite=False
            )  # UTF-16, BOM: decoded
            if problems:
                raise ValueError(f"evidence {self.path!r} is not readable JSON, so a JSON pointer cannot be checked")
            self._json = (value,)
        return resolve_pointer(self._json[0], locator)

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

    def line_number(self, m: re.Match[str]) -> tuple[str, str]:
        """The number a ``line:N[:K]`` locator reads, and the unit the line writes after it or, failing that, in a
        label's brackets right before it (``Peak memory (GiB): 40.1``) (``""`` for none), as the figure grammar reads
        the line; raises KeyError for a line without its Kth number, or with several and
        no K."""
        line = self._line(m)
        numbers = list(TEXT_NUMBER.finditer(line))
        nth = int(m.group("nth") or 1)
        if m.group("nth") is None and len(numbers) > 1:
            raise KeyError(f"line {m.group('line')} holds {len(numbers)} numbers: say which, line:{m.group('line')}:K")
        if nth > len(numbers):
            raise KeyError(m.group())
        at = numbers[nth - 1]
        unit = next((f.unit for f in figures.find_figures(line) if f.start <= at.start() < f.end), "")
        label = line[: at.start()].strip().rstrip(":=").strip()  # a label's unit: "Peak memory (GiB): 40.1"
        return at.group(), unit or (figures.header_unit(label) or "" if label.endswith((")", "]")) else "")

    def _cell(self, m: re.Match[str]) -> str:
        rows = self._table()
        row, column = int(m.group("row")), m.group("column")
        if [h.strip().casefold() for h in self._header].count(column.strip().casefold()) > 1:
            raise ValueError(f"evidence {self.path!r} has the column {column!r} twice: a locator cannot say which")
        if row > len(rows) or column not in rows[row - 1]:
            raise KeyError(m.group())
        return str(rows[row - 1][column])

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
            reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
            self._rows = list(reader)
            self._header = list(reader.fieldnames or [])
        return self._rows

    def numbers(self, unit: str = "") -> list[float]:
        """Every finite number the file holds: JSON numbers (and numbers written as JSON strings), CSV cells, the
        numbers of text lines; in text, not a number the line writes in another unit than ``unit`` (the canonical
        unit of the metric looked for: ``peak memory 40.1 GiB`` holds no decode rate)."""
        try:
            self.value("")
        except (KeyError, ValueError):
            found: list[Any] = []
            for line in decode(self.raw)[0].splitlines():
                units = {f.start: f.unit for f in figures.find_figures(line)} if unit else {}
                numbers = TEXT_NUMBER.finditer(line)
                found += [_number(m.group()) for m in numbers if units.get(m.start(), "") in ("", unit)]
        else:
            found = [_number(v) if isinstance(v, str) else v for v in _leaves(self._json[0])]
        return [float(v) for v in found if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]


def _leaves(value: Any) -> Iterator[Any]:
    """The scalar values of a JSON document."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


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
    """Each sample of a run with local evidence (or a held copy of its external evidence) is in that file: at its
    locator, or, without locators, somewhere. A held copy read at another commit than the one its family pins may
    differ from the file the record was read from: what it does not hold is then a warning that says so."""
    files: dict[str, _Evidence] = {}
    for doc in registry.records():
        ev = doc.data.get("evidence")
        other = _held_elsewhere(registry, doc) if isinstance(ev, str) else None
        for finding in _evidence_values(registry, files, doc):
            if other:
                update = {"severity": Severity.WARNING, "message": f"{finding.message} ({other})"}
                finding = finding.model_copy(update=update)
            yield finding


def _held_elsewhere(registry: Registry, doc: Any) -> str | None:
    """Why a record's held evidence may differ from the file it was read from: the copy was read at another commit
    of the source than the family pins (None when it is no held copy, or one read at the pinned commit)."""
    held = registry.held(doc.place.family, str(doc.data.get("evidence")))
    if held is None or held.read == held.pinned:
        return None
    return (
        f"the held copy was read at commit {held.read[:12]}, the family pins "
        f"{held.pinned[:12] if held.pinned else 'no commit'}: the file may have changed between them"
    )


def _read_from(registry: Registry, doc: Any) -> Any:
    """A record's ``evidence`` as validation reads it: a held copy of an external file is read as the local file it
    is; anything else as written."""
    ev = doc.data.get("evidence")
    if isinstance(ev, str) and (copy := registry.held(doc.place.family, ev)) is not None:
        return copy.local
    return ev


def _evidence_values(registry: Registry, files: dict[str, _Evidence], doc: Any) -> Iterator[Finding]:
    """``check_evidence_values`` of one record."""
    locators = doc.data.get("evidence_locators")
    ev = _read_from(registry, doc)
    local = isinstance(ev, str) and parse_ref(ev).kind == "local" and registry.evidence(ev) is EvidenceState.FILE
    if not locators:
        if local and _samples(doc.data):
            yield from _unlocated_samples(doc, _read(registry, files, str(ev)))
        return
    ref = parse_ref(ev) if isinstance(ev, str) else None
    if ref is not None and ref.kind == "external" and ref.source in registry.sources:
        return  # re-read from the clone of its source (``check_external``)
    if ref is not None and ref.kind == "external":
        yield VALUE.at(
            doc,
            "/evidence_locators",
            f"locators into {ev}, external evidence, cannot be re-read here: a locator is a receipt only where "
            "validation re-reads it",
            f"validate with a clone of the source (`evreg validate --source {ref.source}=DIR`), or bring the file "
            "in as local evidence",
        )
        return
    if not local:
        yield VALUE.at(
            doc,
            "/evidence_locators",
            "locators need a local evidence file that exists (or a `SOURCE:path` reference), and `evidence` is neither",
            VALUE.hint,
        )
        return
    for selector in _unlocated(doc.data, locators):
        yield VALUE.at(
            doc,
            join_pointer("evidence_locators"),
            f"{selector} has no locator: a record that locates its samples in its evidence locates each of them "
            "(a sample beside located ones would be published unchecked)",
            VALUE.hint,
        )
    yield from _located(doc, locators, _read(registry, files, str(ev)))


def _read(registry: Registry, files: dict[str, _Evidence], ev: str) -> _Evidence:
    if ev not in files:
        files[ev] = _Evidence(registry.read_file(ev), ev)
    return files[ev]


def _samples(record: dict[str, Any]) -> list[tuple[str, float]]:
    """(``METRIC[i]``, value) of every stored sample of a run."""
    metrics = record.get("metrics")
    return [
        (f"{metric}[{i}]", float(v))
        for metric, values in (metrics.items() if isinstance(metrics, dict) else [])
        if isinstance(values, list)
        for i, v in enumerate(values)
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]


def _unlocated_samples(doc: Any, file: _Evidence) -> Iterator[Finding]:
    """A run without locators: each sample must be a number of its evidence file, as stored or rounded to the
    sample's own decimals (a file of ``NaN`` backs nothing). At most ``MAX_REPORTED`` findings a record, the rest
    counted in one more."""
    rounded: dict[tuple[str, int], set[float]] = {}
    missing = []
    for selector, value in _samples(doc.data):
        text = repr(value)
        places = len(text.split(".")[1]) if "." in text and "e" not in text else 0
        unit = figures.canonical_unit(citations.unit_of(selector.split("[")[0]))
        if (unit, places) not in rounded:
            held = file.numbers(unit)
            rounded[unit, places] = {round(v, places) for v in held} | set(held)
        if value not in rounded[unit, places]:
            missing.append((selector, value))
    hint = "add evidence_locators naming where each sample is in the file, or fix the sample"
    for selector, value in missing[:MAX_REPORTED]:
        message = f"{selector} is {value!r} in the record but no number in {file.path} is that value"
        yield VALUE.at(doc, "/metrics", message, hint)
    if len(missing) > MAX_REPORTED:
        yield VALUE.at(doc, "/metrics", f"... and {len(missing) - MAX_REPORTED} more samples not in {file.path}", hint)


MAX_REPORTED = 20


def _located(doc: Any, locators: dict[str, Any], file: _Evidence) -> Iterator[Finding]:
    """Each located sample is the value its evidence holds at the locator (a text line's number in the metric's
    unit, where the line writes one)."""
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
            found = file.value(locator)
            line = _LINE.match(str(locator))
            unit = file.line_number(line)[1] if line else ""
        except KeyError as missing:
            why = str(missing.args[0]) if missing.args and str(missing.args[0]).startswith("line ") else ""
            what = f"{file.path} {why}" if why else f"{file.path} has nothing at {locator!r}"
            yield VALUE.at(doc, where, f"locator {selector!r}: {what}", VALUE.hint)
            continue
        except ValueError as exc:
            yield VALUE.at(doc, "/evidence", str(exc), VALUE.hint)
            break
        own = figures.canonical_unit(citations.unit_of(m.group("metric"))) if m else ""
        if unit and own and unit != own:
            message = f"{selector} is read at {file.path} {locator}, a number in {unit}, not in {own}"
            yield VALUE.at(doc, where, message, VALUE.hint)
        elif isinstance(found, bool) or not isinstance(found, int | float) or float(found) != stored:
            message = f"{selector} is {stored!r} in the record but {found!r} at {file.path} {locator}"
            yield VALUE.at(doc, where, message, VALUE.hint)


def _quote_problem(registry: Registry, doc: Any, files: dict[str, _Evidence], quote: citations.Quote) -> str | None:
    """Why a quote in a record's prose is not what its evidence file says at the locator, or None."""
    ev = _read_from(registry, doc)
    if not isinstance(ev, str) or parse_ref(ev).kind != "local" or registry.evidence(ev) is not EvidenceState.FILE:
        return (
            f"quote {quote.raw}: a quote is re-read from the record's local evidence file or held copy, and "
            "`evidence` is neither"
        )
    entry = _entry(doc.data.get("evidence_locators"))
    if entry is not None and not _within(quote.locator, entry):
        return (
            f"quote {quote.raw} reads {quote.locator!r}, outside this run's own entry of {ev} ({entry!r}, where its "
            "samples are located): a quote is of the record's own evidence"
        )
    try:
        found = _read(registry, files, ev).text(quote.locator)
    except (KeyError, ValueError):
        return f"quote {quote.raw}: {ev} has nothing at {quote.locator!r}"
    if not _quoted(_folded(quote.text), _folded(found)):
        return f"quote {quote.text!r} is not in {ev} at {quote.locator!r}, which reads {found[:120]!r}"
    return None


def _entry(locators: Any) -> str | None:
    """A run's own entry in an evidence file its locators name: the deepest element of a list that holds every
    located sample (``/runs/4`` for ``/runs/4/decode_samples/0``), or the one CSV row they all read (``csv:3/``);
    None when they name none (no locators, one run's file, text lines, several rows)."""
    if not isinstance(locators, dict) or not locators:
        return None
    values = [str(v) for v in locators.values()]
    if all(v.startswith("/") for v in values):
        common = split_pointer(values[0])[:-1]
        for other in (split_pointer(v)[:-1] for v in values[1:]):
            same = [a == b for a, b in zip(common, other, strict=False)]
            common = common[: same.index(False) if False in same else len(same)]
        entries = [i for i, token in enumerate(common) if token.isdigit()]  # the run's element of a list of runs
        return join_pointer(*common[: entries[-1] + 1]) if entries else None
    rows = {m.group("row") for v in values if (m := _CSV.match(v))}
    return f"csv:{rows.pop()}/" if len(rows) == 1 and all(_CSV.match(v) for v in values) else None


def _within(locator: str, entry: str) -> bool:
    if entry.startswith("csv:"):
        return locator.startswith(entry)
    return locator == entry or locator.startswith(entry + "/")


def _quoted(quote: str, found: str) -> bool:
    """Whether ``quote`` is in ``found`` as whole words and numbers: ``5.6`` is not quoted from ``25.6``, nor ``25``
    from ``25.6``, ``234`` from ``1,234``, ``15.27%`` from ``-15.27%`` or ``550 GB`` from ``550 GB/s``."""
    edge = r"[\w.,]*\w|/" if quote[-1:].isalnum() else ""
    lead = r"(?<![\w.,+\-\u2212/^])" if quote[:1].isalnum() or quote[:1] == "." else ""
    pattern = lead + re.escape(quote) + (f"(?!{edge})" if edge else "")
    return re.search(pattern, found) is not None


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


OTHER_RUN = Code(
    "evidence-other-run",
    "Samples located in another run's part of a shared evidence file",
    "A file that holds many runs (a lab's run log, a tool's rows) is one receipt for each of them. A record whose "
    "locators point into the entry of another run (its id, model, runtime version or precision there are not the "
    "record's) borrows that run's numbers: the value re-reads, the receipt is not its own.",
    "Locate the samples in the record's own entry, or make the record the run of that entry.",
    '{"id": "run-b", "evidence_locators": {"decode_tok_s[0]": "/runs/0/decode_tok_s"}} where /runs/0 is "run-a"',
)
_ENTRY_MODEL = ("model", "model_id", "model_filename", "model_path", "checkpoint", "pretrained")
_ENTRY_VERSION = ("vllm_version", "sglang_version", "build_commit")
_ENTRY_PRECISION = ("precision", "quantization")


def check_own_entries(registry: Registry) -> Iterator[Finding]:
    """A record's located samples are in its own run's entry of the evidence file (``_entry``): an entry that names
    a run id of another record of the file, a model the record's weights are not, a runtime version or commit the
    record's runtime does not hold, or a precision other than the record's, is another run's."""
    files: dict[str, _Evidence] = {}
    records = [d for d in registry.records() if isinstance(d.data.get("evidence_locators"), dict)]
    ids_by_file: dict[str, set[str]] = {}
    for doc in records:
        ids_by_file.setdefault(str(doc.data.get("evidence")), set()).add(str(doc.data.get("id")))
    for doc in records:
        ev, entry = doc.data.get("evidence"), _entry(doc.data.get("evidence_locators"))
        local = isinstance(ev, str) and parse_ref(ev).kind == "local" and registry.evidence(ev) is EvidenceState.FILE
        if not local or entry is None or entry.startswith("csv:"):
            continue
        try:
            part = _read(registry, files, str(ev)).value(entry)
        except (KeyError, ValueError):
            continue  # the value check names the locator that reads nothing
        if not isinstance(part, dict):
            continue
        why = _not_own(part, doc.data, ids_by_file[str(ev)], _weights_model(registry, doc))
        for reason in why:
            yield OTHER_RUN.at(
                doc,
                "/evidence_locators",
                f"the samples are located in {ev} at {entry!r}, another run's entry: {reason}",
                fields={"entry": entry, "why": reason},
            )


def _not_own(part: dict[str, Any], record: dict[str, Any], ids: set[str], weights: str | None) -> list[str]:
    """Why an entry of a shared evidence file is another run's than ``record``'s (``check_own_entries``)."""
    from evreg.claims.scope import model_of_file, quantization_of_name, same_quantization

    why = []
    entry_id = part.get("id")
    if isinstance(entry_id, str) and entry_id not in (record.get("id"), record.get("supersedes")) and entry_id in ids:
        why.append(f"it is the entry of run {entry_id!r}")
    for key in _ENTRY_MODEL:
        named = part.get(key)
        model = model_of_file(named) if isinstance(named, str) else None
        if model and weights and model != weights:
            why.append(f"its {key} {named!r} is model {model!r}, the record's weights are {weights!r}")
            break
    runtime = str(record.get("runtime") or "").lower()
    for key in _ENTRY_VERSION:
        version = part.get(key)
        held = isinstance(version, str) and re.search(rf"(?<![\w.]){re.escape(str(version).lower())}", runtime)
        if isinstance(version, str) and runtime and not held:
            why.append(f"its {key} {version!r} is not in the record's runtime {record.get('runtime')!r}")
    quantization = record.get("quantization")
    for key in _ENTRY_PRECISION:
        stated = part.get(key)
        found = quantization_of_name(stated.split()[0]) if isinstance(stated, str) and stated.split() else None
        differs = found and isinstance(quantization, str) and not same_quantization(found, quantization)
        if differs and str(found).lower() not in str(quantization).lower():
            why.append(f"its {key} {stated!r} is not the record's quantization {quantization!r}")
    return why


def _weights_model(registry: Registry, doc: Any) -> str | None:
    """The canonical model of the weight revision a record names (None when its family does not say)."""
    from evreg.records.models import revisions_of

    family = registry.family(doc.place.family)
    if family is None or not isinstance(family.data, dict):
        return None
    for _, rev in revisions_of(family.data):
        if rev.get("id") == doc.data.get("revision"):
            return rev.get("model") if isinstance(rev.get("model"), str) else None
    return None


def check_held(registry: Registry) -> Iterator[Finding]:
    """Each held copy a family lists (``sources.SOURCE.held.PATH``) is a file in its evidence folder with the sha256
    the family records for it."""
    for doc in registry.records():
        sources = doc.data.get("sources") if doc.kind == "family" else None
        for source, spec in sources.items() if isinstance(sources, dict) else ():
            held = spec.get("held") if isinstance(spec, dict) else None
            for path, copy in held.items() if isinstance(held, dict) else ():
                pointer = join_pointer("sources", source, "held", path)
                if outside := outside_repository(path):
                    yield ESCAPE.at(doc, pointer, f"held path {path!r} is not a plain relative path: {outside}")
                    continue
                local = held_path(str(doc.id), source, path)
                problems, is_file = _path_verdict(registry, local)
                for code, message in problems:
                    yield code.at(doc, pointer, message, "put the held copy there, byte for byte (`evreg hold`)")
                stated = copy.get("sha256") if isinstance(copy, dict) else None
                if is_file and isinstance(stated, str):
                    digest = hashlib.sha256(registry.read_file(local)).hexdigest()
                    if digest != stated:
                        yield HASH.at(
                            doc,
                            join_pointer("sources", source, "held", path, "sha256"),
                            f"{local} has sha256 {digest}, the family records {stated} for its held copy",
                            "a held copy is the file as it was read: restore it, or hold the new reading anew",
                        )


EXTERNAL = Code(
    "external-evidence-missing",
    "An external evidence reference its source does not hold, or cannot vouch for",
    "`SOURCE:path` points into another repository (a family's `sources`). With a local clone of it "
    "(`evreg validate --source NAME=DIR`) the reference is checked like a local file: the file exists at the commit "
    "the family pins, and each located sample re-reads. A path that is no file there, or a source without a pinned "
    "commit, is a receipt nobody can re-read.",
    "Fix the path, pin the source's `commit` in the family's `sources`, or bring the file in as local evidence.",
    '{"evidence": "lab:data/run.json"} where the lab repository at the pinned commit has no data/run.json',
)


def check_external(registry: Registry) -> Iterator[Finding]:
    """External evidence, where a local clone of its source is given (``Registry.sources``): each referenced file
    exists at the commit the family's ``sources`` pins, and a record's located samples re-read from it (a store rule:
    what it finds depends on the clones given; a validation given clones reuses no cached unit)."""
    clones = registry.sources
    if not clones:
        return
    read: dict[tuple[str, str, str], bytes | None] = {}
    for doc in registry.records():
        family = registry.family(doc.place.family)
        declared = family.data.get("sources") if family is not None and isinstance(family.data, dict) else None
        for pointer, value in doc.refs:
            ref = parse_ref(value)
            if ref.kind != "external" or ref.source not in clones or outside_repository(ref.path):
                continue
            spec = declared.get(ref.source) if isinstance(declared, dict) else None
            commit = spec.get("commit") if isinstance(spec, dict) else None
            if not isinstance(commit, str):
                message = f"source {ref.source!r} pins no commit, so {ref.path!r} cannot be re-read as cited"
                yield EXTERNAL.at(doc, pointer, message, fields={"source": str(ref.source), "why": "unpinned"})
                continue
            key = (str(ref.source), commit, ref.path)
            if key not in read:
                done = gitcmd.run(clones[str(ref.source)], "show", f"{commit}:{ref.path}")
                read[key] = done.stdout if done is not None and done.returncode == 0 else None
            raw = read[key]
            if raw is None:
                message = f"{ref.path!r} is not a file of source {ref.source!r} at commit {commit[:12]}"
                yield EXTERNAL.at(doc, pointer, message, fields={"source": str(ref.source), "path": ref.path})
            elif (copy := registry.held(doc.place.family, value)) is not None and pointer == "/evidence":
                yield from _held_against_clone(registry, doc, copy, clones[str(ref.source)], read)
            elif pointer == "/evidence" and isinstance(doc.data.get("evidence_locators"), dict):
                yield from _located(doc, doc.data["evidence_locators"], _Evidence(raw, value))


def _held_against_clone(
    registry: Registry, doc: Any, held: Held, clone: Any, read: dict[tuple[str, str, str], bytes | None]
) -> Iterator[Finding]:
    """A held copy, given a clone of its source: its bytes are the file's at the commit it says it was read at."""
    key = (held.source, held.read, held.path)
    if key not in read:
        done = gitcmd.run(clone, "show", f"{held.read}:{held.path}")
        read[key] = done.stdout if done is not None and done.returncode == 0 else None
    if registry.evidence(held.local) is EvidenceState.FILE and read[key] != registry.read_file(held.local):
        where = "is not a file there" if read[key] is None else "has other bytes there"
        message = (
            f"the held copy {held.local} says it was read at commit {held.read[:12]} of {held.source!r}, whose "
            f"{held.path!r} {where}"
        )
        yield EXTERNAL.at(doc, "/evidence", message, fields={"source": held.source, "path": held.path})


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
    Rule("evidence-own-entry", (OTHER_RUN,), check_own_entries, UNIT),
    Rule("held-evidence", (MISSING, ESCAPE, UNSAFE, HASH), check_held, UNIT),
    Rule("external-evidence", (EXTERNAL, VALUE), check_external),
]
