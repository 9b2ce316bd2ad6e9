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


def model_key(name: str) -> str:
    """A model name or repository as it is matched: case folded, runs of blanks, ``_``, ``/`` and ``-`` one ``-``."""
    return _SEPARATORS.sub("-", name.casefold()).strip("-")


@cache
def _model_index() -> dict[str, tuple[str, str]]:
    """Every repository and name of the vocabulary (``model_key``) -> (model id, what it is: ``repository``,
    ``derivative`` or ``name``). The vocabulary's own test keeps each one pointing at one model."""
    out: dict[str, tuple[str, str]] = {}
    for mid, spec in models().items():
        out.setdefault(model_key(mid), (mid, "name"))
        out.setdefault(model_key(spec["name"]), (mid, "name"))
        for name in spec.get("names", []):
            out.setdefault(model_key(name), (mid, "name"))
        for repo in spec.get("derivatives", []):
            out[model_key(repo)] = (mid, "derivative")
        if spec.get("repository"):
            out[model_key(spec["repository"])] = (mid, "repository")
    return out


def model_of_repository(repository: str) -> tuple[str, str] | None:
    """The model whose upstream repository (``repository``) or derivative (``derivative``) ``repository`` is."""
    hit = _model_index().get(model_key(repository))
    return hit if hit and hit[1] != "name" else None


def model_for(*stated: str | None) -> str | None:
    """The canonical model a file's statements name (a repository, a model id, a GGUF ``general.name``, a path),
    or None: the first statement the vocabulary knows by repository, derivative or name (a path by its last two
    parts, then its last part)."""
    for text in stated:
        parts = [p for p in (text or "").strip().split("/") if p]
        for candidate in ("/".join(parts), "/".join(parts[-2:]), "".join(parts[-1:])):
            if candidate and (hit := _model_index().get(model_key(candidate))):
                return hit[0]
    return None
