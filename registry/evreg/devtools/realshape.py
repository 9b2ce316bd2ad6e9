"""Registries of real shape for the benchmark: clones of the real records in ``packets/``.

Every file of every real family is cloned -- every record kind, prose and citations, evidence lists,
annotations, the baseline's accepted findings -- with its ids renamed consistently (a family, its
weight revisions and artifacts get a family suffix ``-fN``; packets, measurements, views, coverage,
closures and estimates get ``-fN-cK``, one per copy of the family's records inside a cloned family), so
that references, citations, evidence paths and baseline entries still resolve. Numbers of
measurements (samples, series points, annotations) and the headlines that copy them are perturbed by
at most 2 %, at the precision written, by one map per copy from value to value, so equal numbers
stay equal (a headline still equals its sample) and a number that an evidence locator re-reads from
an evidence file is left as it is. Evidence files are copied byte for byte (their sha256 holds).

A cloned family holds about ``FAMILY_MEASUREMENTS`` measurements: copies of one real family's
records. Each real family is cloned at least once; the others are dealt in proportion to the real
families' measurements. At or below the size of the real registry, each family is cloned once.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evreg.check.rules import record_digest
from evreg.core import jsonio
from evreg.core.jsonio import canonical
from evreg.core.layout import BASELINE, FAMILY_LIST, PACKETS
from evreg.records.models import MODELS, revisions_of

FAMILY_MEASUREMENTS = 1000
MEASUREMENT_KINDS = ("run-measurement", "series-measurement")
PERTURBATION = 0.02
"""Largest relative change of a cloned number."""

_SLOT = re.compile(r'"\u27e6(\d+)\u27e7"|(\u27e8P\u27e9)|(?<![A-Za-z0-9_.-])[a-z0-9][a-z0-9.-]*')
"""A number slot (a JSON string holding a sentinel), a path slot (after ``SOURCE:``) or a slug-like
token that may be an id."""
_PATH = "\u27e8P\u27e9"

Slot = tuple[str, int]
"""("F", 0): the family suffix; ("C", 0): the copy suffix; ("P", 0): the copy's folder in an external
source; ("N", i): the i-th number."""


@dataclass
class Text:
    """A text cut at the places a clone fills in: ``parts[i]`` then ``slots[i]``, and the last part."""

    parts: list[str]
    slots: list[Slot]

    @property
    def per_copy(self) -> bool:
        return any(kind in "CP" for kind, _ in self.slots)

    def fill(self, family: str, copy: str, numbers: list[str] | None = None) -> str:
        out = []
        for part, (kind, i) in zip(self.parts, self.slots, strict=False):
            out.append(part)
            if kind == "N":
                out.append(numbers[i] if numbers else "")
            else:
                out.append(family if kind == "F" else copy if kind == "C" else copy.lstrip("-") + "/")
        out.append(self.parts[-1])
        return "".join(out)


@dataclass
class TemplateFile:
    path: Text
    content: Text | bytes
    numbers: list[float] = field(default_factory=list)


@dataclass
class Template:
    """One real family, cut for cloning."""

    name: str
    measurements: int
    kinds: set[str]
    family: Text
    files: list[TemplateFile]
    baseline: list[dict[str, Text | dict[str, Text]]]
    values: list[float]
    family_ids: set[str]
    copy_ids: set[str]


def cut(text: str, family_ids: set[str], copy_ids: set[str], sources: tuple[str, ...] = ()) -> Text:
    """``text`` cut after every id of ``family_ids`` / ``copy_ids``, after every ``SOURCE:`` of an
    external source (each copy's evidence there gets its own folder: evidence paths, which grades and
    headlines match to measurements, stay as distinct as in the real records) and at every number
    sentinel."""
    for name in sources:
        text = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(name)}:(?=[^\s'\"])", lambda m: m.group(0) + _PATH, text)
    parts: list[str] = []
    slots: list[Slot] = []
    last = 0
    for m in _SLOT.finditer(text):
        if m.group(1) is not None or m.group(2) is not None:
            parts.append(text[last : m.start()])
            slots.append(("N", int(m.group(1))) if m.group(1) is not None else ("P", 0))
            last = m.end()
            continue
        found = _id_prefix(m.group(0), family_ids, copy_ids)
        if found is None:
            continue
        end = m.start() + len(found[0])
        parts.append(text[last:end])
        slots.append((found[1], 0))
        last = end
    parts.append(text[last:])
    return Text(parts, slots)


def _id_prefix(token: str, family_ids: set[str], copy_ids: set[str]) -> tuple[str, str] | None:
    """The longest id that ``token`` is, or starts with before a dot (``ID.decode_tok_s``, ``ID.json``)."""
    while True:
        if token in family_ids:
            return token, "F"
        if token in copy_ids:
            return token, "C"
        if "." not in token:
            return None
        token = token.rsplit(".", 1)[0]


def _ids(records: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    family_ids: set[str] = set()
    copy_ids: set[str] = set()
    for rec in records:
        if rec["kind"] == "family":
            family_ids.add(rec["id"])
            for rev in rec.get("weight_revisions") or []:
                family_ids.add(rev["id"])
                family_ids.update(a["id"] for a in rev.get("quantized_artifacts") or [])
        else:
            copy_ids.add(rec["id"])
    return family_ids, copy_ids - family_ids


def _numbers(rec: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every number a clone perturbs: the fractional numbers of a measurement's
    samples, points and annotations, a packet's headline value and an estimate's value and interval."""
    if rec["kind"] in MEASUREMENT_KINDS:
        for values in (rec.get("metrics") or {}).values():
            yield from ((values, i) for i in range(len(values)))
        for point in rec.get("points") or []:
            yield from ((point, k) for k in point if k not in ("x", "samples"))
        yield from ((a, "value") for a in rec.get("sample_annotations") or [] if "value" in a)
    elif rec["kind"] == "packet" and isinstance(rec.get("featured_metric"), dict):
        yield rec["featured_metric"], "value"
    elif rec["kind"] == "estimate":
        yield rec, "value"
        yield from ((rec.get("interval") or {}, k) for k in ("low", "high"))


def _fractional(value: Any) -> bool:
    return isinstance(value, float) and not value.is_integer() and "e" not in repr(value)


def _slotted(rec: dict[str, Any], numbers: list[float], pinned: set[float]) -> dict[str, Any]:
    """``rec`` (a copy) with its perturbable numbers replaced by sentinels numbered into ``numbers``."""
    rec = jsonio.loads(json.dumps(rec))
    for box, key in list(_numbers(rec)):
        value = box.get(key) if isinstance(box, dict) else box[key]
        if _fractional(value) and value not in pinned:
            box[key] = f"\u27e6{len(numbers)}\u27e7"
            numbers.append(float(value))  # type: ignore[arg-type]  # a float: _fractional says so
    return rec


def _pinned(records: list[dict[str, Any]]) -> set[float]:
    """Numbers the validator reads elsewhere too, kept as they are: those of records that locate them in an
    evidence file, and those of points a coverage cell shows (``point_x``; the cell's label derives from them)."""
    shown = {
        (cell["evidence_id"], cell["point_x"])
        for rec in records
        for cell in [*(rec.get("cells") or {}).values(), *(rec.get("rules") or [])]
        if isinstance(cell, dict) and "point_x" in cell and "evidence_id" in cell
    }
    out: set[float] = set()
    for rec in records:
        boxes = list(_numbers(rec)) if rec.get("evidence_locators") else []
        boxes += [(p, k) for p in rec.get("points") or [] if (rec.get("id"), p.get("x")) in shown for k in p]
        for box, key in boxes:
            value = box.get(key) if isinstance(box, dict) else box[key]
            if _fractional(value):
                out.add(float(value))  # type: ignore[arg-type]  # a float: _fractional says so
    return out


def load_template(source: Path, family: str, baseline: list[dict[str, Any]]) -> Template:
    """Cut the real family ``packets/<family>/`` of the registry at ``source`` for cloning."""
    folder = source / PACKETS / family
    # Held copies of external files are not cloned (a clone's family would hold another family's receipts under
    # renamed records): a clone cites the source's files as the real family did before holding them, unchecked.
    # A record that quotes its held evidence (``{{ e:... }}``, no samples to re-read) quotes the same bytes as a local
    # file of the clone's family instead.
    family_record = jsonio.loads((folder / "family.json").read_bytes())
    held = {("evidence", name) for name in (family_record.get("sources") or {})}
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.relative_to(folder).parts[:2] not in held)
    records = {p: jsonio.loads(p.read_bytes()) for p in files if _is_record(folder, p)}
    quoted: dict[str, str] = {}
    for rec in records.values():
        ev = rec.get("evidence")
        if rec["kind"] not in MEASUREMENT_KINDS and isinstance(ev, str) and "{{ e:" in json.dumps(rec):
            name, _, within = ev.partition(":")
            copy = folder / "evidence" / name / within
            if name and ("evidence", name) in held and copy.is_file():
                local = f"{PACKETS}/{family}/evidence/quoted/{name}/{within}"
                quoted[local] = copy.as_posix()
                rec["evidence"] = local
    files += [Path(copy) for copy in sorted(set(quoted.values()))]
    family_ids, copy_ids = _ids(list(records.values()))
    sources = tuple(name for r in records.values() if r["kind"] == "family" for name in (r.get("sources") or {}))
    pinned = _pinned(list(records.values()))
    out: list[TemplateFile] = []
    family_text = None
    local_of = {copy: local for local, copy in quoted.items()}
    for p in files:
        path = cut(local_of.get(p.as_posix()) or p.relative_to(source).as_posix(), family_ids, copy_ids)
        rec = records.get(p)
        if rec is None:
            out.append(TemplateFile(path, p.read_bytes()))
        elif rec["kind"] == "family":
            unheld = {**rec, "sources": {k: _unheld(v) for k, v in (rec.get("sources") or {}).items()}}
            family_text = cut(canonical(unheld if rec.get("sources") else rec), family_ids, copy_ids, sources)
        else:
            numbers: list[float] = []
            content = cut(canonical(_slotted(rec, numbers, pinned)), family_ids, copy_ids, sources)
            out.append(TemplateFile(path, content, numbers))
    if family_text is None:
        raise ValueError(f"{folder} has no family.json")
    prefix = f"{PACKETS}/{family}/"

    def cut_value(v: Any) -> Text | dict[str, Text]:  # an entry's fields are an object of strings
        if isinstance(v, dict):
            return {k: cut(str(x), family_ids, copy_ids, sources) for k, x in v.items()}
        return cut(str(v), family_ids, copy_ids, sources)

    entries = [
        {k: cut_value(v) for k, v in e.items()}
        for e in baseline
        if str(e.get("file", "")).startswith(prefix) and "held copy" not in str(e.get("message", ""))
    ]
    return Template(
        name=family,
        measurements=sum(1 for r in records.values() if r["kind"] in MEASUREMENT_KINDS),
        kinds={r["kind"] for r in records.values()},
        family=family_text,
        files=out,
        baseline=entries,
        values=sorted({v for f in out for v in f.numbers}),
        family_ids=family_ids,
        copy_ids=copy_ids,
    )


def _unheld(spec: Any) -> Any:
    """A family's source without the files it holds (``held``)."""
    return {k: v for k, v in spec.items() if k != "held"} if isinstance(spec, dict) else spec


def _is_record(folder: Path, path: Path) -> bool:
    if path.suffix != ".json" or "evidence" in path.relative_to(folder).parts[:-1]:
        return False
    try:
        data = jsonio.loads(path.read_bytes())
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("kind") in MODELS


def templates(source: Path, only: set[str] | None = None) -> list[Template]:
    """Every real family of the registry at ``source`` (or those named in ``only``), cut for cloning."""
    base = source / BASELINE
    entries = jsonio.loads(base.read_bytes()).get("entries", []) if base.is_file() else []
    folders = sorted(p.name for p in (source / PACKETS).iterdir() if (p / "family.json").is_file())
    folders = [f for f in folders if only is None or f in only]
    return [load_template(source, name, entries) for name in folders]


def plan(temps: list[Template], measurements: int) -> list[tuple[Template, int]]:
    """(template, copies) per cloned family: each real family at least once, then families of about
    ``FAMILY_MEASUREMENTS`` measurements dealt in proportion to the real families' measurements."""
    real = sum(t.measurements for t in temps)
    if measurements <= real * 1.5:
        return [(t, 1) for t in temps]
    count = max(len(temps), round(measurements / FAMILY_MEASUREMENTS))
    dealt = list(temps)
    while len(dealt) < count:  # the template furthest below its share gets the next family
        dealt.append(min(temps, key=lambda t: (dealt.count(t) / t.measurements, t.name)))
    per_family = measurements / count
    return [(t, max(1, round(per_family / t.measurements))) for t in dealt]


def _perturbation(values: list[float], rnd: random.Random) -> list[str]:
    out = []
    for x in values:
        text = repr(x)
        digits = len(text.split(".")[1])
        y = round(x * (1 + rnd.uniform(-PERTURBATION, PERTURBATION)), digits)
        if y == 0 or (abs(x) < 1 <= abs(y)) or (y < 0) != (x < 0):
            y = x  # a rate stays below 1, a number keeps its sign and stays non-zero
        out.append(repr(y))
    return out


def write_copy(root: Path, t: Template, fam: str, cop: str, rnd: random.Random, shared: bool) -> list[str]:
    """Write copy ``cop`` of ``t``'s records into family ``fam``, its numbers perturbed (and, with ``shared``, the
    family-level files too); the paths written."""
    values = dict(zip(t.values, _perturbation(t.values, rnd), strict=True))
    written = []
    for f in t.files:
        if not (shared or f.path.per_copy):
            continue
        rel = f.path.fill(fam, cop)
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(f.content, bytes):
            target.write_bytes(f.content)
        else:
            target.write_text(f.content.fill(fam, cop, [values[v] for v in f.numbers]), "utf-8")
        written.append(rel)
    return written


def write_family(root: Path, t: Template, index: int, copies: int, rnd: random.Random) -> int:
    """Write cloned family number ``index`` (``copies`` copies of ``t``'s records); its measurements."""
    fam = f"-f{index}"
    written: set[str] = set()
    for k in range(copies):
        # a family-level file (a shared evidence file) is written once, with the first copy
        written.update(write_copy(root, t, fam, f"{fam}-c{k}", rnd, shared=k == 0))
    family = jsonio.loads(t.family.fill(fam, f"{fam}-c0"))
    for _, rev in revisions_of(family):  # a canonical model is the vocabulary's id, never a clone's
        if isinstance(rev.get("model"), str):
            rev["model"] = rev["model"].removesuffix(fam)
    order = family.get("record_order")
    if isinstance(order, dict):  # every copy's records, in the lab's order within each copy
        family["record_order"] = {
            key: [i for k in range(copies) for i in _renamed(t, ids, fam, f"{fam}-c{k}")]
            for key, ids in jsonio.loads(t.family.fill("", "")).get("record_order", {}).items()
        }
    (root / f"{PACKETS}/{t.name}{fam}/family.json").write_text(canonical(family), "utf-8")
    return t.measurements * copies


def _renamed(t: Template, ids: list[str], fam: str, cop: str) -> list[str]:
    return [i + (fam if i in t.family_ids else cop if i in t.copy_ids else "") for i in ids]


def baseline_entries(t: Template, index: int, copies: int) -> Iterator[dict[str, Any]]:
    fam = f"-f{index}"
    for k in range(copies):
        for e in t.baseline:
            file = e["file"]
            if k and isinstance(file, Text) and not file.per_copy:
                continue
            yield {key: _filled(text, fam, f"{fam}-c{k}") for key, text in e.items()}


def _filled(text: Text | dict[str, Text], family: str, copy: str) -> Any:
    if isinstance(text, dict):
        return {k: t.fill(family, copy) for k, t in text.items()}
    return text.fill(family, copy)


def generate(
    root: Path, measurements: int, source: Path | None = None, seed: int = 7, only: set[str] | None = None
) -> dict[str, Any]:
    """Write a registry of real shape with about ``measurements`` measurements under ``root`` (cloned
    from every real family, or those named in ``only``) and commit it to a new git repository (packed)."""
    source = source or Path(__file__).resolve().parents[3]
    temps = templates(source, only)
    rnd = random.Random(seed)
    (root / PACKETS).mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, str]] = []
    written = 0
    dealt = plan(temps, measurements)
    for index, (t, copies) in enumerate(dealt):
        written += write_family(root, t, index, copies, rnd)
        entries.extend(baseline_entries(t, index, copies))
    for entry in entries:  # an entry binds the text it accepted: the clone's own
        path = root / entry["file"]
        if "digest" in entry and entry["file"].endswith(".json") and path.is_file():
            entry["digest"] = record_digest(jsonio.loads(path.read_bytes()), entry["pointer"])
    base = jsonio.loads((source / BASELINE).read_bytes()) if (source / BASELINE).is_file() else {"kind": "baseline"}
    (root / BASELINE).write_text(canonical({**base, "entries": entries}), "utf-8")
    _family_list(source, root, [f"{t.name}-f{index}" for index, (t, _) in enumerate(dealt)])
    for name in ("schema", "site"):
        shutil.copytree(source / name, root / name, dirs_exist_ok=True)
    for name in ("mkdocs.yml", ".gitignore"):
        shutil.copy2(source / name, root / name)
    commit(root)
    return {
        "families": len(dealt),
        "measurements": written,
        "files": sum(1 for p in (root / PACKETS).rglob("*") if p.is_file()),
        "kinds": sorted(
            set().union(*(t.kinds for t in temps)) | ({"catalog"} if (root / FAMILY_LIST).is_file() else set())
        ),
        "templates": {t.name: sum(c for tt, c in dealt if tt is t) for t in temps},
    }


def _family_list(source: Path, root: Path, families: list[str]) -> None:
    """The clone's family list, when the source has one: the cloned families in the source list's order."""
    if not (source / FAMILY_LIST).is_file():
        return
    listed = [f["id"] for f in jsonio.loads((source / FAMILY_LIST).read_bytes())["families"]]
    rank = {fid: i for i, fid in enumerate(listed)}
    ordered = sorted(families, key=lambda f: (rank.get(f.rsplit("-f", 1)[0], len(rank)), f))
    record = {"kind": "catalog", "format": "cloned", "families": [{"id": f} for f in ordered]}
    (root / FAMILY_LIST).write_text(canonical(record), "utf-8")


BENCH_EMAIL = "bench@example.org"
"""The author of the generator's commit and of the bench's own."""
GENERATED = "registry of real shape"
"""The message of the generator's commit: a registry's first."""


def commit(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    who = ["-c", "user.name=bench", "-c", f"user.email={BENCH_EMAIL}", "-c", "gc.auto=0"]
    subprocess.run(["git", *who, "commit", "-qm", GENERATED], cwd=root, check=True)
    # Packed now: left to itself, git packs loose objects in a background process after the
    # commit, which then competes with whatever is timed.
    subprocess.run(["git", "gc", "--quiet"], cwd=root, check=True)
