"""Workload fields from what a lab's workload text and config state, never guessed.

The lab formats describe a workload in words ("12 unique cold prompts, up to 512 output tokens, one active request").
Each pattern here reads one explicit statement into one field of ``evreg.records.models.Workload``; a field no
statement gives stays unstated. An importer of such a format writes the fields beside the text; its exporter drops
them again when they are exactly what the text gives, so an import exports back byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8}
_D = r"\d{1,3}(?:,\d{3})*(?!\d)|\d{1,12}(?!\d)"
"""A whole number of at most twelve digits (or grouped by commas): a longer one is no token count a workload states."""
_N = rf"({_D}|one|two|three|four|five|six|eight)"


def _int(text: str) -> int:
    return _WORDS.get(text.lower()) or int(text.replace(",", ""))


OUTPUT = [
    re.compile(p, re.I)
    for p in (
        rf"(?<![\w.,±+/-])(?:up to |up-to-)?({_D})(?: |-)(?:output|generated|completion|returned)"
        r"(?: token)?(?:s| IDs)?\b",
        rf"\b({_D})-token (?:output ceiling|cap|responses|output)\b",
        rf"\b({_D})-output requests?\b",
        rf"\b[pi]\d{{1,12}}/[ong]({_D})\b",
    )
]
"""Statements of the output length per request (the first that matches gives it)."""
NATURAL = re.compile(
    r"natural[- ]EOS|ordinary EOS|no ignore_eos|\bup[ -]to[ -]\d|output ceiling|-token cap|natural completion", re.I
)
FIXED = re.compile(r"ignore_eos True|ignore-EOS|fixed-output|natural_eos false", re.I)
SINGLE = re.compile(
    r"\b(?:single (?:request|user|stream)|one active (?:request|generation)|one-slot|batch-one|one measured request)\b",
    re.I,
)
SIMULTANEOUS = re.compile(rf"\b{_N} simultaneous (?:users|requests)\b|\b{_N} simultaneous\b", re.I)
INPUT = [re.compile(p, re.I) for p in (rf"\b[pi]({_D})/[ong]\d{{1,12}}\b", rf"\b({_D}) actual prompt tokens\b")]
REQUESTS = re.compile(rf"\b{_N}(?: unique)?(?: cold)? prompts\b|\b({_D})-prompt\b", re.I)
SERVING = re.compile(r"\bHTTP\b|/v1/|\bserver\b|\bservers\b|\bendpoint\b|\bcompletions?\b|fresh-server", re.I)
ENGINE = re.compile(r"llama-bench|llama-batched-bench|raw-engine|raw engine", re.I)
GREEDY = re.compile(r"\btemperature 0\b(?![.\d])|\bgreedy\b", re.I)
WARMUP = re.compile(rf"\b{_N} warm-?up (?:discarded|run)|after {_N} warm-?up\b", re.I)


def fields(text: str | None, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The workload fields ``text`` and ``config`` state (``concurrency``, ``natural_eos``, ``temperature``), in the
    order of ``Workload``; empty when they state none."""
    text = " ".join(str(text or "").split())
    config = config if isinstance(config, Mapping) else {}
    out: dict[str, Any] = {}
    if SERVING.search(text) and not ENGINE.search(text):
        out["phase"] = "serving"
    if m := next((m for p in INPUT if (m := p.search(text))), None):
        out["input_tokens"] = _int(m.group(1))
    if m := next((m for p in OUTPUT if (m := p.search(text))), None):
        out["output_tokens"] = _int(m.group(1))
    natural = config.get("natural_eos")
    if FIXED.search(text) or natural is False:
        out["output_end"] = "fixed"
    elif NATURAL.search(text) or natural is True:
        out["output_end"] = "natural"
    concurrency = config.get("concurrency")
    if isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency > 0:
        out["concurrency"] = concurrency
    elif m := SIMULTANEOUS.search(text):
        out["concurrency"] = _int(m.group(1) or m.group(2))
    elif SINGLE.search(text) or config.get("parallel_slots") == 1:
        out["concurrency"] = 1
    if m := REQUESTS.search(text):
        out["requests"] = _int(m.group(1) or m.group(2))
    temperature = config.get("temperature")
    if GREEDY.search(text) or (temperature == 0 and not isinstance(temperature, bool)):
        out["sampling"] = "greedy"
    if m := WARMUP.search(text):
        out["warmup"] = _int(m.group(1) or m.group(2))
    return out
