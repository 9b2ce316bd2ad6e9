"""Controlled vocabularies, read from the data files in ``registry/vocab/``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> dict[str, Any]:
    text = resources.files("registry").joinpath("vocab", f"{name}.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def states() -> dict[str, dict[str, Any]]:
    return load("states")["states"]  # type: ignore[no-any-return]


def metrics() -> dict[str, dict[str, Any]]:
    return load("metrics")["metrics"]  # type: ignore[no-any-return]


STATES = tuple(load("states")["states"])
OBSERVED_STATES = tuple(k for k, v in load("states")["states"].items() if v["observed"])
METRICS = tuple(load("metrics")["metrics"])
