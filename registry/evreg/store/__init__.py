"""The git-native store (sources -> documents -> registry): every file under ``packets/`` of the working tree or
of any commit (read from git's tree objects, no checkout).

``load`` is the one loader. It lists the files and returns a ``Registry`` of
``Document``s; a document is read, parsed and schema-checked the first time
anything asks for its content, so a registry can stand for a whole store while
only the records a validation needs are ever read. Semantic rules (in
``validators``) run over that.

Validation runs unit by unit (a unit is one family folder). While a unit's rules
run, every read outside the unit -- another record's content, whether an id
exists, an evidence file -- is recorded with a fingerprint of what was read
(``Reads``), so a cached result of that unit is reused only while all of it is
unchanged.
"""

from evreg.store.documents import MEASUREMENT_KINDS, Document, Reads, forgetting, recording
from evreg.store.registry import BaseNotFound, ById, Held, Registry, change_base, load, no_cycle_collection
from evreg.store.sources import EvidenceState, GitTree, WorkTree

__all__ = [
    "MEASUREMENT_KINDS",
    "BaseNotFound",
    "ById",
    "Document",
    "EvidenceState",
    "GitTree",
    "Held",
    "Reads",
    "Registry",
    "WorkTree",
    "change_base",
    "forgetting",
    "load",
    "no_cycle_collection",
    "recording",
]
