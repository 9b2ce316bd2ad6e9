"""Importers and exporters for outside formats.

An importer reads one file and returns the records it maps to (``Plan``); the application writes them with
``store.writer`` and then reports what ``validate`` finds. Importers write what they read: they refuse only input
they cannot parse or map (with findings), and never fix, drop or invent data.

Importers are discovered through the ``evreg.formats`` entry point group: each names an :class:`Importer`
(``evreg import NAME FILE``), so adding a format is one module and one registration in ``pyproject.toml``; the CLI
loads an importer only when its command runs. This package's modules: ``api`` (the extension point), ``reading``
(a tool's file as it is), ``identity`` (the run's identity against the packet's), ``ids`` (ids, repeats,
corrections, closures), and one module per format.
"""

from __future__ import annotations

from evreg.claims.scope import GGUF_QUANT, QUANT_WORDS
from evreg.formats.api import (
    ENTRY_POINT_GROUP,
    FileIdentity,
    Importer,
    ImportRefused,
    Option,
    Plan,
    Request,
    Target,
    discover,
    evidence_name,
    find_target,
    folder_name,
    forbid_citation_markers,
    load,
    merge,
    need,
    refuse,
    sha256,
    stated,
)
from evreg.formats.identity import (
    check_scope,
    model_of_file,
    quantization_of_name,
    scope_conflicts,
    with_stated_hardware,
)
from evreg.formats.ids import (
    Earlier,
    content_id,
    earlier_imports,
    evidence_for,
    failed_run,
    link_correction,
    run_key,
)
from evreg.formats.reading import (
    AIPERF_CONFIG,
    JSON_LINE,
    NUMBER_IN_TEXT,
    Source,
    log_lines_finding,
    looks_like,
    past_log_lines,
    read_source,
    refuse_other_format,
    sniff,
    wrong_format,
)

__all__ = [
    "AIPERF_CONFIG",
    "ENTRY_POINT_GROUP",
    "GGUF_QUANT",
    "JSON_LINE",
    "NUMBER_IN_TEXT",
    "QUANT_WORDS",
    "Earlier",
    "FileIdentity",
    "ImportRefused",
    "Importer",
    "Option",
    "Plan",
    "Request",
    "Source",
    "Target",
    "check_scope",
    "content_id",
    "discover",
    "earlier_imports",
    "evidence_for",
    "evidence_name",
    "failed_run",
    "find_target",
    "folder_name",
    "forbid_citation_markers",
    "link_correction",
    "load",
    "log_lines_finding",
    "looks_like",
    "merge",
    "model_of_file",
    "need",
    "past_log_lines",
    "quantization_of_name",
    "read_source",
    "refuse",
    "refuse_other_format",
    "run_key",
    "scope_conflicts",
    "sha256",
    "sniff",
    "stated",
    "with_stated_hardware",
    "wrong_format",
]
