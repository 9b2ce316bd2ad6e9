"""Controlled vocabularies, read from the data files in ``registry/evreg/vocab/``."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

from evreg.core import jsonio


@cache
def load(name: str) -> dict[str, Any]:
    text = resources.files("evreg").joinpath("vocab", f"{name}.json").read_text("utf-8")
    return jsonio.loads(text)


def states() -> dict[str, dict[str, Any]]:
    return load("states")["states"]


def metrics() -> dict[str, dict[str, Any]]:
    return load("metrics")["metrics"]


def setting_kinds() -> dict[str, dict[str, Any]]:
    """What a ``{{ set: }}`` may set (``vocab/settings.json``): kind -> the words naming it, its units, and whether its
    units alone make a setting of it (a memory size does; a time does not: a latency is measured)."""
    return load("settings")["kinds"]


def unit_bounds() -> dict[str, dict[str, Any]]:
    """Per unit, the values a measurement can take (``above``: exclusive minimum; ``min``, ``max``) and why."""
    return load("metrics").get("units", {})


STATES = tuple(load("states")["states"])
OBSERVED_STATES = tuple(k for k, v in load("states")["states"].items() if v["observed"])
METRICS = tuple(load("metrics")["metrics"])


_DIAGNOSTIC = re.compile(r"(?i)(?<!non)(?:^|[^a-z0-9])diagnostics?(?:[^a-z0-9]|$)")
"""The word diagnostic in a measurement class, in any case and however delimited (``strict Diagnostic run``), but
not negated (``non-diagnostic``)."""


def is_diagnostic(measurement: dict[str, Any]) -> bool:
    return bool(_DIAGNOSTIC.search(str(measurement.get("measurement_class") or "")))


def promotable(record: dict[str, Any]) -> str | None:
    """None when the record may back a promotion; else why not."""
    if record.get("kind") == "estimate":
        return "it is an estimate"
    state = record.get("state")
    if not states().get(str(state), {}).get("promotable"):
        return f"its state is {state!r}"
    if is_diagnostic(record):
        return f"its measurement_class {record.get('measurement_class')!r} is diagnostic"
    if record.get("retired"):
        return "it is retired"
    return None


# -- models ------------------------------------------------------------------------------------------------------


def models() -> dict[str, dict[str, Any]]:
    """The canonical models (``vocab/models.json``): the weights a family's revisions name by ``model``."""
    return load("models")["models"]


_SEPARATORS = re.compile(r"[\s_/-]+")
_FORGE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co)/", re.I)


_TAG = re.compile(r"(?<=[^/])[:@][^/]*$")


def model_key(name: str) -> str:
    """A model name as it is matched: case folded, runs of blanks, ``_``, ``/`` and ``-`` one ``-``."""
    return _SEPARATORS.sub("-", name.casefold()).strip("-")


def repository_key(repository: str) -> str:
    """A repository as it is matched: its host (GitHub, GitLab, Hugging Face) and scheme, case, a trailing ``.git``
    and slashes aside (``https://huggingface.co/Qwen/Qwen3.8-27B/`` is ``qwen/qwen3.8-27b``); owner and name keep
    every other character (``Unsloth-Qwen3.6/27B_GGUF`` is not ``unsloth/Qwen3.6-27B-GGUF``)."""
    key = _FORGE.sub("", repository.strip()).rstrip("/").casefold().removesuffix(".git")
    return _TAG.sub("", key)  # a tag or revision after the name (``:latest``, ``@main``) names the same repository


@cache
def _model_index() -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """Every repository of the vocabulary (``repository_key``) -> (model id, ``repository`` or ``derivative``), and
    every name (``model_key``) -> model id. The vocabulary's own test keeps each pointing at one model."""
    repos: dict[str, tuple[str, str]] = {}
    names: dict[str, str] = {}
    for mid, spec in models().items():
        for name in (mid, spec["name"], *spec.get("names", [])):
            names.setdefault(model_key(name), mid)
        for repo in spec.get("derivatives", []):
            repos[repository_key(repo)] = (mid, "derivative")
        if spec.get("repository"):
            repos[repository_key(spec["repository"])] = (mid, "repository")
    return repos, names


def model_of_repository(repository: str) -> tuple[str, str] | None:
    """The model whose upstream repository (``repository``) or derivative (``derivative``) ``repository`` is."""
    return _model_index()[0].get(repository_key(repository))


def model_of_name(name: str) -> str | None:
    """The model the vocabulary knows ``name`` (an id, a name, a lab's spelling) as."""
    return _model_index()[1].get(model_key(name))


def model_for(*stated: str | None) -> str | None:
    """The canonical model a file's statements name (a repository, a model id, a GGUF ``general.name``, a path),
    or None: the first statement the vocabulary knows as a repository (a path by its last two parts) or a name (a
    path by its last part)."""
    for text in stated:
        parts = [p for p in _FORGE.sub("", (text or "").strip()).split("/") if p]
        for candidate in ("/".join(parts), "/".join(parts[-2:])):
            if candidate and (hit := model_of_repository(candidate)):
                return hit[0]
        for candidate in ("/".join(parts), "".join(parts[-1:])):
            if candidate and (found := model_of_name(candidate)):
                return found
    return None
