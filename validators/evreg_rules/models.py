"""Model identity: every weight revision names its canonical model (``registry/evreg/vocab/models.json``), and what
the revision and its artifacts state (repository, commit) agrees with that model's entry. Two labs' families of the
same weights meet on the model; nothing is merged silently, so a contradiction is a finding, never a guess.

The vocabulary gives each repository to one model (its test holds it to that), so two revisions that pass these
checks at one repository and commit never name different models: a family is checked alone, and an edit of one
family reads no other."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.core.findings import Code, Finding, Severity
from evreg.core.vocab import model_of_name, model_of_repository, models
from evreg.records.models import revisions_of
from evreg.store import Document, Registry

VOCABULARY = "registry/evreg/vocab/models.json"
SPECULATOR = "speculator"
"""The role of an artifact that is a draft model for speculative decoding: other weights than the revision's."""

UNKNOWN = Code(
    "model-unknown",
    "A weight revision names a model the vocabulary does not define",
    "A revision's `model` is how families of one model meet on the site; an id outside the vocabulary meets "
    "nothing and says nothing about the weights.",
    f"Use an id of {VOCABULARY} (`evreg explain model-missing` says how to add one).",
    '{"weight_revisions": [{"id": "r1", "model": "qwen9-1b"}]}',
)
MISSING = Code(
    "model-missing",
    "A weight revision names no canonical model",
    "Without `model`, a revision's results appear only under its family: readers cannot compare the same weights "
    "measured by another lab, on other hardware or runtimes.",
    f"Add `model: ID` to the revision with an id of {VOCABULARY}. If the model is not there, add an entry (name, "
    "publisher, upstream `repository` and known `commits`, `parameters`, `derivatives`, other `names`) in a pull "
    "request of its own first: a vocabulary change is reviewed like a rule change (`evreg impact`).",
    '{"weight_revisions": [{"id": "r1", "repository": "Qwen/Qwen3.8-27B"}]}',
)
CONTRADICTED = Code(
    "model-contradicted",
    "A revision or artifact whose repository or commit belongs to another model",
    "The vocabulary says which repositories and commits hold which weights; a revision of one model stating "
    "another model's repository or commit is two identities at once, and one of them is wrong.",
    "Name the model the repository belongs to, or correct the repository or commit.",
    '{"model": "qwen3.8-27b", "repository": "Qwen/Qwen3.6-27B"}',
)
UNTIED = Code(
    "model-untied",
    "A weight revision that states nothing tying it to the model it names",
    "Naming a model links a family's results to every other lab's results of those weights; a revision whose "
    "repository, artifacts, label and id are none the vocabulary knows as that model could be any weights.",
    "State the weights' repository (or an artifact's), or a label the model's entry lists among its `names`; add the "
    f"spelling to {VOCABULARY} in a pull request of its own if it is one.",
    '{"id": "phi4-alt", "label": "Phi-4 re-run", "model": "qwen3.8-27b"}',
)
UNLISTED = Code(
    "model-unlisted",
    "A revision's or artifact's repository or commit the model's entry does not list",
    "Whether a repository publishes a model's weights (or a commit holds them) is what lets two labs' records "
    "meet; one the vocabulary does not list is unverified.",
    f"Add the repository to the model's `derivatives` (or the commit to its `commits`) in {VOCABULARY}, "
    "in a pull request of its own.",
    '{"model": "qwen3.8-27b", "quantized_artifacts": [{"repository": "someone/Qwen3.8-27B-GGUF"}]}',
)


def _repository(doc: Document, pointer: str, repo: Any, model: str, what: str) -> Iterator[Finding]:
    if not isinstance(repo, str) or not repo.strip():
        return
    hit = model_of_repository(repo)
    if hit is None:
        message = f"{what} repository {repo!r} is not listed for model {model!r}"
        yield UNLISTED.at(doc, pointer, message, severity=Severity.WARNING, fields={"model": model, "repository": repo})
    elif hit[0] != model:
        message = f"{what} repository {repo!r} is the {hit[1]} of model {hit[0]!r}, not of {model!r}"
        yield CONTRADICTED.at(doc, pointer, message, fields={"model": model, "repository": repo})


def _commit(doc: Document, pointer: str, rev: dict[str, Any], model: str) -> Iterator[Finding]:
    """A commit of the model's upstream repository that its entry does not list (another model's is a
    contradiction)."""
    spec, commit = models()[model], rev.get("revision")
    repo = rev.get("repository")
    if not isinstance(commit, str) or not isinstance(repo, str) or not spec.get("commits"):
        return
    if model_of_repository(repo) != (model, "repository"):
        return  # a derivative's commit: the vocabulary lists only upstream commits
    owner = next((m for m, s in models().items() if commit in s.get("commits", [])), None)
    if owner not in (None, model):
        message = f"commit {commit} is listed for model {owner!r}, not {model!r}"
        yield CONTRADICTED.at(doc, f"{pointer}/revision", message, fields={"model": model, "commit": commit})
    elif owner is None:
        message = f"commit {commit} of {repo} is not among model {model!r}'s known commits"
        yield UNLISTED.at(
            doc, f"{pointer}/revision", message, severity=Severity.WARNING, fields={"model": model, "commit": commit}
        )


def _known(repository: Any) -> str | None:
    hit = model_of_repository(repository) if isinstance(repository, str) and repository.strip() else None
    return hit[0] if hit else None


def _named(
    doc: Document, pointer: str, rev: dict[str, Any], model: str, artifacts: list[dict[str, Any]]
) -> Iterator[Finding]:
    """A revision's label or id that the vocabulary knows as another model contradicts it; a revision none of whose
    repository, artifacts' repositories, label or id the vocabulary knows as its model is not tied to it."""
    names = {
        key: found for key in ("label", "id") if isinstance(rev.get(key), str) and (found := model_of_name(rev[key]))
    }
    for key, found in names.items():
        if found != model:
            message = f"the revision's {key} {rev[key]!r} names model {found!r}, not {model!r}"
            yield CONTRADICTED.at(doc, f"{pointer}/{key}", message, fields={"model": model, key: rev[key]})
    ties = [_known(rev.get("repository")), *(_known(a.get("repository")) for a in artifacts), *names.values()]
    if model not in ties:
        message = (
            f"weight revision {rev.get('id')!r} states nothing the vocabulary knows as model {model!r} "
            "(no repository, artifact repository, label or id of it)"
        )
        yield UNTIED.at(doc, f"{pointer}/model", message, fields={"model": model, "revision": str(rev.get("id"))})


def check_family(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("family"):
        for pointer, rev in revisions_of(doc.data):
            model = rev.get("model")
            if model is None:
                message = f"weight revision {rev.get('id')!r} names no canonical model"
                yield MISSING.at(doc, pointer, message, severity=Severity.WARNING, fields={"revision": rev.get("id")})
                continue
            if model not in models():
                yield UNKNOWN.at(doc, f"{pointer}/model", f"model {model!r} is not in the vocabulary")
                continue
            yield from _repository(doc, f"{pointer}/repository", rev.get("repository"), model, "revision")
            yield from _commit(doc, pointer, rev, model)
            artifacts = [
                (i, a)
                for i, a in enumerate(rev.get("quantized_artifacts") or [])
                if isinstance(a, dict) and a.get("role") != SPECULATOR
            ]
            for i, art in artifacts:
                where = f"{pointer}/quantized_artifacts/{i}/repository"
                yield from _repository(doc, where, art.get("repository"), model, f"artifact {art.get('id')!r}")
            yield from _named(doc, pointer, rev, model, [a for _, a in artifacts])


RULES = [Rule("model-identity", (MISSING, UNKNOWN, CONTRADICTED, UNTIED, UNLISTED), check_family, UNIT)]
