"""Scaffolds: the records a contributor starts from, made from what the registry already holds so
they validate as written. A scaffold refuses (``ScaffoldRefused``) rather than write a record that
names an unknown family, revision, artifact or measurement, or a quantization other than the
artifact's; it never overwrites a file, and it never guesses a value the contributor must give.
"""

from __future__ import annotations

import re
from hashlib import sha256 as _sha256
from pathlib import Path
from typing import Any

from evreg.claims.citations import lookup, median_of, unit_of
from evreg.core import jsonio
from evreg.core.containment import outside_repository
from evreg.core.errors import Refused
from evreg.core.evidence import parse_ref
from evreg.core.layout import PACKETS, PAGES_DIR, held_path, id_problem, record_path
from evreg.core.vocab import model_for, model_of_repository
from evreg.records.models import revisions_of
from evreg.store import MEASUREMENT_KINDS, Registry, load, writer


class ScaffoldRefused(Refused, ValueError):
    """Nothing was written; the message says why and what to do."""


def _ids(**ids: str) -> None:
    """Refuse an id that is not one: it names a file and a folder, and a link (``../x`` would write outside)."""
    for what, value in ids.items():
        if problem := id_problem(value):
            raise ScaffoldRefused(f"{what} id {value!r} is not an id: {problem}")


def write_new(root: Path, path: str, record: dict[str, Any]) -> None:
    """Write a record that does not exist yet (atomic, canonical)."""
    if writer.write(root, {path: jsonio.canonical(record)}, create=True).conflicts:
        raise ScaffoldRefused(f"{path} exists already; nothing was written")


def replace(root: Path, path: str, record: dict[str, Any]) -> None:
    """Write a changed version of an existing record (atomic, canonical); never a published observation."""
    replace_all(root, {path: record})


def replace_all(root: Path, records: dict[str, dict[str, Any]]) -> None:
    """Write changed versions of existing records, all or none (atomic, canonical); never a published observation."""
    done = writer.write(root, {p: jsonio.canonical(r) for p, r in records.items()}, overwrite=True)
    if done.conflicts:
        raise ScaffoldRefused(f"{', '.join(done.conflicts)}: a published observation; add a record that supersedes it")


def primary(root: Path, family_id: str, packet_id: str) -> dict[str, Any]:
    """The family record with ``packet_id`` (a packet of the family) as its primary packet."""
    _ids(family=family_id, packet=packet_id)
    registry = load(root)
    if registry.document(record_path("packet", family_id, packet_id)) is None:
        raise ScaffoldRefused(f"no packet {packet_id!r} in family {family_id!r}")
    return {**_family(registry, family_id), "primary_packet_id": packet_id}


def family(
    family_id: str, name: str, revision: str, repository: str, commit: str | None, model: str | None = None
) -> dict[str, Any]:
    """A new family of one weight revision; its canonical model is ``model``, else the one the vocabulary knows
    ``repository`` (or ``name``) as, else none (validation then says how to add one)."""
    _ids(family=family_id, revision=revision)
    known = model_of_repository(repository)
    model = model or (known[0] if known else model_for(name))
    rev: dict[str, Any] = {"id": revision, **({"model": model} if model else {})}
    rev |= {"repository": repository, "quantized_artifacts": []}
    rev.update({"revision": commit} if commit else {"revision_status": "Commit not recorded yet."})
    return {"kind": "family", "id": family_id, "name": name, "weight_revisions": [rev]}


_SAFE_PART = re.compile(r"[A-Za-z0-9._+@=,-]+")
"""A part of a held path: what a file name of any checkout can be, with nothing a reader could misread."""


def held(root: Path, family_id: str, reference: str, data: bytes, commit: str, read: str) -> tuple[str, dict[str, Any]]:
    """Where ``data`` goes as the family's held copy of ``reference`` (``SOURCE:path``, a source the family
    declares), and the family record listing it: read at ``commit``, with its sha256, and how it was read."""
    _ids(family=family_id)
    ref = parse_ref(reference)
    if ref.kind != "external" or ref.source is None:
        raise ScaffoldRefused(f"{reference!r} is no external reference: write it as SOURCE:path, as records cite it")
    if problem := outside_repository(ref.path):
        raise ScaffoldRefused(f"{ref.path!r} is not a plain path inside the source: {problem}")
    if any(part in ("", ".") or not _SAFE_PART.fullmatch(part) for part in ref.path.split("/")):
        raise ScaffoldRefused(
            f"{ref.path!r} is not a plain path: each part is letters, digits and . _ - + @ = , (no empty or '.' part)"
        )
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ScaffoldRefused(f"commit {commit!r} is not a full commit id (40 hexadecimal digits)")
    fam = _family(load(root), family_id)
    sources = dict(fam.get("sources") or {})
    if not isinstance(sources.get(ref.source), dict):
        known = ", ".join(sorted(sources)) or "none"
        raise ScaffoldRefused(f"family {family_id!r} declares no source {ref.source!r} (it declares: {known})")
    target = held_path(family_id, ref.source, ref.path)
    spec = dict(sources[ref.source])
    earlier = (spec.get("held") or {}).get(ref.path)
    same = isinstance(earlier, dict) and earlier.get("sha256") == sha256(data) and earlier.get("commit") == commit
    if earlier is not None and not same:
        raise ScaffoldRefused(
            f"family {family_id!r} holds a copy of {reference} already (read at commit "
            f"{str(earlier.get('commit'))[:12]}); a held copy is the file as it was read, never replaced"
        )
    if (root / target).exists() and (root / target).read_bytes() != data:
        raise ScaffoldRefused(f"{target} holds other bytes already; a held copy is the file as it was read")
    spec["held"] = {**(spec.get("held") or {}), ref.path: {"commit": commit, "sha256": sha256(data), "read": read}}
    return target, {**fam, "sources": {**sources, ref.source: spec}}


def sha256(data: bytes) -> str:
    return _sha256(data).hexdigest()


def _family(registry: Registry, family_id: str) -> dict[str, Any]:
    doc = registry.family(family_id)
    if doc is None or not doc.valid:
        raise ScaffoldRefused(
            f"no valid family {family_id!r} in {PACKETS}/; scaffold it with `evreg new family {family_id} ...` "
            "(or run `evreg validate` to see why it is not valid)"
        )
    return dict(doc.data)


def _revision(fam: dict[str, Any], revision: str) -> dict[str, Any]:
    revisions = [rev for _, rev in revisions_of(fam)]
    for rev in revisions:
        if rev.get("id") == revision:
            return rev
    known = ", ".join(str(r.get("id")) for r in revisions) or "none"
    raise ScaffoldRefused(f"family {fam['id']!r} has no weight revision {revision!r} (it has: {known})")


def artifact(
    root: Path,
    family_id: str,
    revision: str,
    artifact_id: str,
    *,
    quantization: str,
    label: str | None,
    repository: str,
    commit: str | None,
    evidence: str,
) -> dict[str, Any]:
    """The family record with one more quantized artifact under ``revision``."""
    _ids(family=family_id, artifact=artifact_id)
    registry = load(root)
    fam = _family(registry, family_id)
    refuse_unstated_weights(registry, family_id, revision)
    return with_artifact(
        fam,
        revision,
        artifact_id,
        quantization=quantization,
        label=label,
        repository=repository,
        commit=commit,
        evidence=evidence,
    )


def refuse_unstated_weights(registry: Registry, family_id: str, revision: str) -> None:
    """Refuse a revision's first artifact while records of it name neither an artifact nor their quantization: with an
    artifact beside them they would no longer say which weights they ran (``artifact-mismatch``)."""
    fam = registry.family(family_id)
    if fam is None or not fam.valid or _revision(dict(fam.data), revision).get("quantized_artifacts"):
        return
    unstated = sorted(
        doc.path
        for doc in registry.records("packet", *MEASUREMENT_KINDS)
        if doc.place.family == family_id
        and doc.data.get("revision") == revision
        and "artifact_id" not in doc.data
        and "quantization" not in doc.data
    )
    if unstated:
        shown = ", ".join(unstated[:5]) + (f" and {len(unstated) - 5} more" if len(unstated) > 5 else "")
        raise ScaffoldRefused(
            f"{len(unstated)} records of revision {revision!r} name no artifact and no quantization ({shown}); with an "
            "artifact beside them they would not say which weights they ran. Nothing was written: state the "
            "quantization of the revision's own weights in them first (`quantization`), then add the artifact"
        )


def with_artifact(
    fam: dict[str, Any],
    revision: str,
    artifact_id: str,
    *,
    quantization: str,
    label: str | None,
    repository: str,
    commit: str | None,
    evidence: str,
) -> dict[str, Any]:
    """``fam`` (changed in place, and returned) with one more quantized artifact under ``revision``."""
    rev = _revision(fam, revision)
    artifacts = rev.setdefault("quantized_artifacts", [])
    if any(a.get("id") == artifact_id for _, r in revisions_of(fam) for a in r.get("quantized_artifacts", [])):
        raise ScaffoldRefused(f"family {fam['id']!r} has an artifact {artifact_id!r} already; nothing was written")
    new: dict[str, Any] = {
        "id": artifact_id,
        "label": label or artifact_id,
        "quantization": quantization,
        "repository": repository,
        "evidence": evidence,
    }
    new.update({"revision": commit} if commit else {"revision_status": "Commit not recorded yet."})
    artifacts.append(new)
    return fam


def packet(
    root: Path,
    family_id: str,
    packet_id: str,
    *,
    revision: str,
    artifact_id: str | None,
    quantization: str | None,
    runtime: str,
    cards: int,
    hardware: str,
    label: str | None,
) -> dict[str, Any]:
    """A packet whose identity the family vouches for: a known revision, one of its artifacts (when it has
    any), and that artifact's exact quantization."""
    _ids(family=family_id, packet=packet_id)
    rev = _revision(_family(load(root), family_id), revision)
    return packet_record(
        family_id,
        packet_id,
        rev,
        artifact_id=artifact_id,
        quantization=quantization,
        runtime=runtime,
        cards=cards,
        hardware=hardware,
        label=label,
    )


def packet_record(
    family_id: str,
    packet_id: str,
    rev: dict[str, Any],
    *,
    artifact_id: str | None,
    quantization: str | None,
    runtime: str,
    cards: int,
    hardware: str,
    label: str | None,
) -> dict[str, Any]:
    """The packet of weight revision ``rev``: one of its artifacts with that artifact's exact quantization, or
    (none named) the revision's own weights in ``quantization``."""
    _ids(family=family_id, packet=packet_id)
    revision = str(rev.get("id"))
    artifacts = {a.get("id"): a for a in rev.get("quantized_artifacts", []) if isinstance(a, dict)}
    record: dict[str, Any] = {
        "kind": "packet",
        "id": packet_id,
        "revision": revision,
        "runtime": runtime,
        "cards": cards,
        "hardware": hardware,
        "status": "candidate",
        "label": label or packet_id,
    }
    if artifact_id is not None:
        found = artifacts.get(artifact_id)
        if found is None:
            raise ScaffoldRefused(
                f"revision {revision!r} has no artifact {artifact_id!r}; add it with "
                f"`evreg new artifact {family_id} {revision} {artifact_id} ...`"
            )
        if quantization is not None and quantization != found["quantization"]:
            raise ScaffoldRefused(
                f"artifact {artifact_id!r} is {found['quantization']!r}, not {quantization!r}; "
                "leave --quantization out and the artifact's is used"
            )
        record.update(artifact_id=artifact_id, quantization=found["quantization"])
    elif artifacts and quantization is None:
        raise ScaffoldRefused(
            f"revision {revision!r} has quantized artifacts ({', '.join(map(str, artifacts))}): name one with "
            "--artifact, or state the quantization of the revision's own weights with --quantization"
        )
    elif quantization is not None:
        record["quantization"] = quantization
    return record


def featured(
    root: Path, family_id: str, packet_id: str, measurement_id: str, metric: str, sample: int | None = None
) -> dict[str, Any]:
    """The packet record with ``featured_metric`` the median of a run's samples (or, with ``sample``, one stored
    sample), its value, unit, workload and evidence copied exactly (a hand copy is how headline and receipt drift
    apart)."""
    _ids(family=family_id, packet=packet_id)
    registry = load(root)
    doc = registry.document(record_path("packet", family_id, packet_id))
    if doc is None or not doc.valid:
        raise ScaffoldRefused(f"no valid packet {family_id}/{packet_id}; run `evreg validate` to see why")
    m = registry.get(MEASUREMENT_KINDS, measurement_id)
    if m is None or not m.valid:
        raise ScaffoldRefused(f"no valid measurement {measurement_id!r}")
    value = lookup(m.data, metric, sample, None) if sample is not None else median_of(m.data, metric)
    if isinstance(value, str):
        raise ScaffoldRefused(f"measurement {measurement_id!r} {value}")
    if "workload" not in m.data:
        raise ScaffoldRefused(f"measurement {measurement_id!r} states no workload; a headline needs one")
    record = dict(doc.data)
    record["featured_metric"] = {
        "metric": metric,
        "measurement_id": measurement_id,
        **({"sample_index": sample} if sample is not None else {"statistic": "median"}),
        "value": value,
        "unit": unit_of(metric),
        "workload": m.data["workload"],
        "evidence": m.data["evidence"],
    }
    return record


ABOUT_PAGE = """# About this registry

Who runs this registry, on what hardware, and how to reach them. Numbers on this site come only from the records
under `packets/`, each through a citation of a stored measurement; see *How numbers are checked*.
"""


def init_registry(root: Path) -> tuple[list[str], list[str]]:
    """What a new registry needs to validate, import and build, written into ``root`` where missing: the MkDocs
    configuration (the package's template), a ``site/`` folder with an about page, ``schema/``, an empty
    ``packets/``, and ``build/`` ignored by git (a git repository is made when ``root`` is in none). Existing files
    are never changed. Returns (written, kept), repository-relative."""
    from evreg.records import schemas

    _refuse_unsafe_places(root)
    wanted: dict[str, str] = {
        "mkdocs.yml": (PAGES_DIR / "mkdocs.yml").read_text("utf-8"),
        **({} if (root / "site").exists() else {"site/about.md": ABOUT_PAGE}),  # a site of its own: left alone
        **{f"{schemas.SCHEMA_DIR}/{name}": text for name, text in schemas.generate().items()},
    }
    written, kept = [], []
    for rel, text in wanted.items():
        if (root / rel).exists():
            kept.append(rel)
        else:
            jsonio.write_atomic(root / rel, text)
            written.append(rel)
    (root / PACKETS).mkdir(exist_ok=True)
    ignore = root / ".gitignore"
    lines = ignore.read_text("utf-8").splitlines() if ignore.exists() else []
    if not {"build/", "/build/", "build"} & {line.strip() for line in lines}:
        jsonio.write_atomic(ignore, "\n".join([*lines, "build/"]) + "\n")
        written.append(".gitignore")
    if _git_root(root) is None:
        import git

        git.Repo.init(root).close()
        written.append(".git/")
    return written, kept


def _refuse_unsafe_places(root: Path) -> None:
    """Refuse, before writing anything, a registry whose places are links (a write would land outside it) or of
    the wrong type (``packets`` a file)."""
    for name, folder in (("mkdocs.yml", False), (".gitignore", False), ("site", True), ("schema", True)):
        path = root / name
        if path.is_symlink():
            raise ScaffoldRefused(f"{name} is a symbolic link; nothing was written (init writes only inside {root})")
        if path.exists() and path.is_dir() != folder:
            raise ScaffoldRefused(f"{name} is a {'file' if folder else 'folder'}; nothing was written")
    packets = root / PACKETS
    if packets.is_symlink() or (packets.exists() and not packets.is_dir()):
        raise ScaffoldRefused(f"{PACKETS} is not a folder; nothing was written")


def _git_root(path: Path) -> Path | None:
    import git

    try:
        with git.Repo(path, search_parent_directories=True) as repo:
            return Path(repo.working_tree_dir) if repo.working_tree_dir else None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
