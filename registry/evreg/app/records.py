"""Jobs that write records and files a contributor commits: canonical formatting, the generated schemas, a new
registry, scaffolds of a family, an artifact or a packet, a featured headline, and the exports."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evreg.app import scaffold
from evreg.app.validation import in_paths, relative
from evreg.check.pipeline import no_commit_yet
from evreg.core import codebase, jsonio
from evreg.core.errors import Refused
from evreg.core.findings import Finding
from evreg.core.layout import PACKETS, RULE_PATHS, changes_checkout, record_path
from evreg.records import schemas
from evreg.store import change_base, load, writer


@dataclass
class Formatted:
    """Record files that are not (or were not) canonical, and the findings of those that cannot be read."""

    changed: list[str] = field(default_factory=list)
    broken: list[Finding] = field(default_factory=list)
    checked: int = 0
    """How many record files were read."""
    base: str | None = None
    """The commit the change is against, when only the change's files were read (the rest are as there)."""
    everything: str | None = None
    """Why every file was read although a base was given."""


def fmt(root: Path, paths: Sequence[Path] = (), check: bool = False, base: str | None = None) -> Formatted:
    """Rewrite record files (in ``paths``) in canonical JSON, every field kept; with ``check``, change nothing.

    With ``base`` (a commit whose records are known canonical: its own CI checked them), only the files the change
    since its merge base with HEAD adds or modifies, committed or not, are read -- unless the change can alter what
    is canonical or what a checkout writes (``changed_formatter``): then every file is."""
    rel = [relative(root, p) for p in paths]
    done = Formatted()
    registry = None
    if base is not None and base == "HEAD" and no_commit_yet(root):
        done.everything = "the repository has no commit yet"
    elif base is not None:
        sha, changed = change_base(root, base)
        done.everything = changed_formatter(root, sha, changed)
        if done.everything is None:
            registry, done.base = load(root, only=changed), sha
    for doc in (load(root) if registry is None else registry).documents:
        if not doc.place.kinds or not in_paths(doc.path, rel):
            continue
        done.checked += 1
        if doc.data is None and doc.raw is not None:  # reading ``data`` reads the file's bytes (``raw``)
            done.broken.extend(doc.findings)
            continue
        if doc.raw is None:
            continue
        text = jsonio.canonical(doc.data)
        if text.encode("utf-8") != doc.raw:
            done.changed.append(doc.path)
            if not check:
                jsonio.write_atomic(root / doc.path, text)
    return done


def changed_formatter(root: Path, base_sha: str, changed: Iterable[str]) -> str | None:
    """Why a change since ``base_sha`` (its ``changed`` paths) can make a file it does not touch non-canonical, so
    every file is checked: it edits git attributes (what a checkout writes), or the rule set (``RULE_PATHS``, as
    ``rules-changed`` reads it: the code and configuration records are formatted by), or the running evreg is not
    the base's code. None when it cannot."""
    paths = sorted(changed)
    if attributes := [p for p in paths if changes_checkout(p)]:
        return f"the change edits {attributes[0]}, which changes what a checkout writes"
    if rules := [p for p in paths if p.startswith(RULE_PATHS)]:
        return f"the change edits the code or configuration records are formatted by ({rules[0]})"
    return codebase.installed_differs(root, base_sha)


def write_schemas(root: Path) -> list[str]:
    """Write schema/*.schema.json from the record models; the names written."""
    generated = schemas.generate()
    for name, text in generated.items():
        jsonio.write_atomic(root / schemas.SCHEMA_DIR / name, text)
    return sorted(generated)


def check_schemas(root: Path) -> list[Finding]:
    """A ``schema-drift`` finding for each schema file that differs from what the models generate."""
    return schemas.check(root)


def init(directory: Path) -> tuple[list[str], list[str]]:
    """Make ``directory`` a registry (created when missing); the files written and the existing ones kept."""
    root = directory.resolve()
    root.mkdir(parents=True, exist_ok=True)
    return scaffold.init_registry(root)


def new_family(
    root: Path, family: str, name: str, revision: str, repository: str, commit: str | None, model: str | None = None
) -> str:
    """Scaffold packets/FAMILY/family.json with one weight revision of canonical ``model`` (else the vocabulary's
    model of ``repository``); its path."""
    path = record_path("family", family, family)
    scaffold.write_new(root, path, scaffold.family(family, name, revision, repository, commit, model))
    return path


def new_artifact(
    root: Path,
    family: str,
    revision: str,
    artifact: str,
    *,
    quantization: str,
    repository: str,
    evidence: str,
    commit: str | None = None,
    label: str | None = None,
) -> str:
    """Add a quantized artifact to a weight revision of packets/FAMILY/family.json; its path."""
    path = record_path("family", family, family)
    record = scaffold.artifact(
        root,
        family,
        revision,
        artifact,
        quantization=quantization,
        label=label,
        repository=repository,
        commit=commit,
        evidence=evidence,
    )
    scaffold.replace(root, path, record)
    return path


def new_packet(
    root: Path,
    family: str,
    packet: str,
    *,
    revision: str,
    runtime: str,
    hardware: str,
    cards: int,
    artifact: str | None = None,
    quantization: str | None = None,
    label: str | None = None,
) -> str:
    """Scaffold packets/FAMILY/PACKET/packet.json from a revision and artifact the family declares; its path."""
    path = record_path("packet", family, packet)
    record = scaffold.packet(
        root,
        family,
        packet,
        revision=revision,
        artifact_id=artifact,
        quantization=quantization,
        runtime=runtime,
        cards=cards,
        hardware=hardware,
        label=label,
    )
    scaffold.write_new(root, path, record)
    return path


def feature(
    root: Path, packet: str, measurement: str, metric: str, sample: int | None = None, primary: bool = False
) -> list[str]:
    """Make the median of a run's samples (or, with ``sample``, one stored sample) the headline of ``packet``
    (FAMILY/PACKET): value, unit, workload and evidence copied exactly; with ``primary``, also make the packet its
    family's primary packet (one write: both or neither). The paths written."""
    family, _, packet_id = packet.partition("/")
    files = {
        record_path("packet", family, packet_id): scaffold.featured(
            root, family, packet_id, measurement, metric, sample
        )
    }
    if primary:
        files[record_path("family", family, family)] = scaffold.primary(root, family, packet_id)
    scaffold.replace_all(root, files)
    return sorted(files)


def hold(root: Path, family: str, reference: str, file: Path, *, commit: str, read: str) -> list[str]:
    """Hold ``file`` as ``family``'s byte-for-byte copy of the external file ``reference`` (``SOURCE:path``), read at
    ``commit`` of the source (``read``: how): the file in the family's evidence folder and its entry in the family's
    ``sources``, written together or not at all. Validation then checks the copy's sha256 and re-reads the samples of
    the records that cite the reference from it. The paths written."""
    data = file.read_bytes()
    target, record = scaffold.held(root, family, reference, data, commit, read)
    done = writer.write(
        root, {target: data, record_path("family", family, family): jsonio.canonical(record)}, overwrite=True
    )
    if done.conflicts:
        raise Refused(f"{', '.join(done.conflicts)}: not replaced; nothing was written")
    return sorted(done.written)


def export_parquet(root: Path, out_dir: Path, db: Path | None = None, as_of: str | None = None) -> list[str]:
    """Every catalog table as Parquet and JSON Lines, with SHA256SUMS, in ``out_dir``; the files written."""
    from evreg.app.catalog import ensure_catalog  # the catalog's builder and DuckDB: imported by the exports alone
    from evreg.catalog import build as catalog

    return catalog.export_tables(ensure_catalog(root, db, as_of).path, out_dir)


def export_neural_download(root: Path, family: str | None = None, catalog_list: bool = False) -> str:
    """packets/FAMILY joined back into one neural.download family manifest, or (``catalog_list``) the registry's
    family list as the lab's families/catalog.json."""
    from evreg.formats import neural_download as nd

    try:
        if catalog_list:
            manifest = nd.export_catalog(load(root))
        else:  # a family's records are its folder's; the whole registry is read only for a citation of another's
            manifest = nd.export(load(root, unit=str(family)), str(family), elsewhere=lambda: load(root))
    except KeyError:
        what = "family list (catalog.json)" if catalog_list else f"family {family!r}"
        raise Refused(f"no valid {what} in {root / PACKETS}; run `evreg validate` to see why") from None
    return nd.dumps(manifest)
