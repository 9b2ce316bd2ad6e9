"""Reading a tool's output file as it is: JSON, JSON Lines or text (``Source``, with a locator for every number),
log lines printed into JSON, and telling one tool's file from another's (``sniff``, ``looks_like``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evreg.core import codes, jsonio
from evreg.core.evidence import TEXT_NUMBER, decode
from evreg.core.findings import Finding, unescape_token
from evreg.formats.api import ImportRefused, refuse

# -- shared by the tool importers: reading, identity, ids, failed runs --------------------------------


@dataclass(frozen=True)
class Source:
    """A tool's file as read: its objects (one, or one per line of JSON Lines) and how to point back into it.
    The bytes are kept as they are (evidence, hashed as they are); only the reading decodes a UTF-8 BOM or
    UTF-16 (PowerShell's ``>``)."""

    objects: list[Any]
    lines: bool
    """JSON Lines: ``objects[i]`` is line ``i + 1``."""
    encoding: str
    text: str
    log_lines: tuple[int, ...] = ()
    """Lines (from 1) that are a tool's log, not its JSON (ik_llama.cpp prints them into ``-o json``): read past,
    kept in the evidence; the numbers are then located by line (``line:N:K``), as validation reads the file."""

    def rows(self) -> list[tuple[int, str, Any]]:
        """The file's results as (object index, JSON pointer prefix, result): the items of a JSON array, each
        line of JSON Lines, or the one object of a file that holds one."""
        if self.lines:
            return [(i, "", obj) for i, obj in enumerate(self.objects)]
        value = self.objects[0]
        if isinstance(value, list):
            return [(0, f"/{i}", obj) for i, obj in enumerate(value)]
        return [(0, "", value)]

    def locator(self, index: int, pointer: str) -> str | None:
        """The evidence locator of the number at ``pointer`` in object ``index``: a JSON pointer into the file,
        ``line:N:K`` (the Kth number of line N) for JSON Lines. Validation reads the file decoded as it was read
        (a UTF-8 BOM, UTF-16), so the locator holds for every encoding."""
        if self.log_lines:
            return self._line_of(pointer)
        if not self.lines:
            return pointer
        line = self.text.splitlines()[index]
        nth = _nth_number(line, pointer)
        return None if nth is None else f"line:{index + 1}:{nth}"

    def _line_of(self, pointer: str) -> str | None:
        """``line:N:K`` of ``/ROW/KEY[/INDEX]`` in a file read past log lines: KEY's ROW-th occurrence holds it."""
        m = re.fullmatch(r"/(\d+)/([^/]+)(/\d+)?", pointer)
        if m is None:
            return None
        key = '"' + unescape_token(m.group(2)) + '"'
        hits = [n for n, line in enumerate(self.text.splitlines()) if re.search(re.escape(key) + r"\s*:", line)]
        row = int(m.group(1))
        if row >= len(hits):
            return None
        nth = _nth_number(self.text.splitlines()[hits[row]], pointer[len(f"/{row}") :])
        return None if nth is None else f"line:{hits[row] + 1}:{nth}"


NUMBER_IN_TEXT = TEXT_NUMBER
"""A number in a line of text, as the evidence check counts them for ``line:N:K`` locators (one grammar)."""


def _nth_number(line: str, pointer: str) -> int | None:
    """Which number of ``line`` (1-based) is the value at ``pointer`` (``/key`` or ``/key/index``)."""
    tokens = [unescape_token(t) for t in pointer.strip("/").split("/")]
    m = re.search(r'"' + re.escape(tokens[0]) + r'"\s*:\s*', line)
    if m is None:
        return None
    start = m.end()
    if len(tokens) == 2:
        array = NUMBER_IN_TEXT.finditer(line, start)
        for _ in range(int(tokens[1])):
            next(array, None)
        hit = next(array, None)
        start = hit.start() if hit else -1
    before = [n for n in NUMBER_IN_TEXT.finditer(line) if n.start() < start]
    found = NUMBER_IN_TEXT.match(line, start) if start >= 0 else None
    return len(before) + 1 if found else None


JSON_LINE = re.compile(r'\s*(?:["{}\[\],:]|-?\d|true\b|false\b|null\b|$)')
"""How every line of pretty-printed JSON starts; a line that starts otherwise is a log line."""


def past_log_lines(text: str) -> tuple[Any, tuple[int, ...]] | None:
    """The JSON of a tool's output with the log lines it printed into it (``ggml_...``, ``==== Repacked ...``) read as
    blank lines, and their numbers; None when there are none or the rest is not JSON either."""
    lines = text.splitlines()
    logs = tuple(n for n, line in enumerate(lines, 1) if not JSON_LINE.match(line))
    if not logs:
        return None
    kept = "\n".join("" if n in logs else line for n, line in enumerate(lines, 1))
    value, findings = jsonio.parse(kept.encode("utf-8"), "", finite=False)
    return None if findings else (value, logs)


def read_source(raw: bytes, file: str, what: str, logs: bool = False) -> Source:
    """Parse a tool's JSON or JSON Lines output; refuse an empty file or one that is neither. ``logs``: the tool may
    print log lines into its JSON; they are read past (and listed in ``Source.log_lines``)."""
    text, encoding = decode(raw)
    if not text.strip():
        raise refuse(file, "", f"the file is empty: no {what} to import", "pass the tool's output file")
    value, findings = jsonio.parse(
        text.encode("utf-8"), file, finite=False
    )  # a tool may write NaN for a diverging metric
    if not findings:
        return Source([value], False, encoding, text)
    if logs and (recovered := past_log_lines(text)) is not None:
        return Source([recovered[0]], False, encoding, text, recovered[1])
    if (kind := looks_like(text)) is not None:
        raise wrong_format(file, kind, what)  # another tool's text, or JSON with log lines in it
    lines = text.splitlines()
    if len(lines) > 1 and all(line.strip() for line in lines):
        objects = []
        for n, line in enumerate(lines, 1):
            obj, problems = jsonio.parse(line.encode("utf-8"), f"{file}:{n}", finite=False)
            if problems:
                raise ImportRefused(log_lines_finding(file, lines) or findings)
            objects.append(obj)
        return Source(objects, True, encoding, text)
    raise ImportRefused(log_lines_finding(file, lines) or findings)


def log_lines_finding(file: str, lines: list[str]) -> list[Finding]:
    """The refusal of JSON with log lines in it (some lines JSON, some a tool's log), naming the first log line."""
    logs = [n for n, line in enumerate(lines, 1) if not JSON_LINE.match(line)]
    if not logs or len(logs) == len(lines):
        return []
    first = lines[logs[0] - 1].strip()
    return [
        codes.IMPORT_UNMAPPABLE.at(
            file,
            f"line:{logs[0]}",
            f"the file is JSON with {len(logs)} log line(s) printed into it, and not readable even without them: "
            f"line {logs[0]} is {first[:80]!r}",
            "pass the tool's JSON output alone (send its log to stderr or another file); keep the file as it is "
            "if only log lines are in it: the importer reads past them",
        )
    ]


def looks_like(value: Any) -> str | None:
    """The importer whose format ``value`` has (a parsed file, or a text file's text), judged by the keys or
    lines each tool always writes; or, for a tool's other output the importers do not read (``OTHER_OUTPUTS``: a
    CSV or Markdown table, a sibling tool's JSON), what it is."""
    if isinstance(value, str):
        return _text_kind(value)
    first = value[0] if isinstance(value, list) and value else value
    if isinstance(first, dict):
        config = first.get("input_config")
        if "samples_ts" in first or ("n_prompt" in first and "n_gen" in first):
            return "llama-bench"
        if {"speed_pp", "speed_tg", "pl"} <= first.keys():
            return "llama-batched-bench"
        if isinstance(first.get("metadata"), dict) and "benchmark_phase" in first["metadata"] and "metrics" in first:
            return "aiperf-records"
        if "results" in first and ("versions" in first or "configs" in first or "n-shot" in first):
            return "lm-eval"
        aiperf_config = isinstance(config, dict) and (AIPERF_CONFIG & config.keys() or "records" in first)
        if "aiperf_version" in first or aiperf_config:
            return "aiperf"
        if "run_name" in first and "overall_throughput" in first:
            return "sglang-one-batch"
        if "total_output_tokens_retokenized" in first:
            return "sglang-bench"
        if "output_throughput" in first and "completed" in first:
            return "vllm-bench"
        if {"model_id", "num_prompts"} <= first.keys() and any(VLLM_STATISTIC.fullmatch(k) for k in first):
            return "vllm-bench"  # the nightly benchmarks' layout: settings and latency statistics only
        if "runs" in first and "failures" in first:
            return "vllm-run-log"
        if first.keys() >= VLLM_LATENCY or first.keys() >= VLLM_THROUGHPUT:
            return "vllm-offline"
        if str(first.get("format", "")).startswith("neural-download"):
            return "neural-download"
        if "num_concurrent_requests" in first and any(str(k).startswith("results_") for k in first):
            return "llmperf"  # LLMPerf's <name>_summary.json
        if first.keys() >= LLMPERF_REQUEST:
            return "llmperf"  # LLMPerf's <name>_individual_responses.json, one object per request
        if _guidellm(first):
            return "guidellm"
    return None


LLMPERF_REQUEST = {"ttft_s", "end_to_end_latency_s", "inter_token_latency_s", "error_code"}
"""Keys of every request object of LLMPerf's ``<name>_individual_responses.json``."""


def _guidellm(doc: dict[str, Any]) -> bool:
    """A GuideLLM benchmarks report: ``benchmarks``, each a ``generative_benchmark`` with ``metrics``."""
    benchmarks = doc.get("benchmarks")
    first = benchmarks[0] if isinstance(benchmarks, list) and benchmarks else None
    return isinstance(first, dict) and first.get("type_") == "generative_benchmark" and "metrics" in first


VLLM_LATENCY = {"avg_latency", "latencies", "percentiles"}
"""What ``vllm bench latency --output-json`` (and ``benchmark_latency.py``) always writes."""
VLLM_THROUGHPUT = {"elapsed_time", "num_requests", "total_num_tokens", "requests_per_second", "tokens_per_second"}
"""What ``vllm bench throughput --output-json`` (and ``benchmark_throughput.py``) always writes."""
VLLM_STATISTIC = re.compile(r"(mean|median|std|p\d+)_(ttft|tpot|itl|e2el)_ms")
"""A latency statistic as vLLM's serving benchmark names it (SGLang's says ``e2e_latency``, not ``e2el``)."""

OTHER_OUTPUTS: dict[str, tuple[str, str]] = {
    "aiperf-csv": (
        "AIPerf's CSV export (profile_export_aiperf.csv)",
        "import the profile_export_aiperf.json AIPerf wrote beside it: `evreg add profile_export_aiperf.json`",
    ),
    "aiperf-records": (
        "AIPerf's per-request records (profile_export.jsonl), not its profile export",
        "import the profile_export_aiperf.json AIPerf wrote beside it: `evreg add profile_export_aiperf.json`",
    ),
    "llama-bench-csv": ("llama-bench's CSV output", "rerun with `-o json` or `-o jsonl`"),
    "llama-bench-md": ("llama-bench's Markdown output", "rerun with `-o json` or `-o jsonl`"),
    "llama-batched-bench": (
        "llama-batched-bench's output (batched prompt and generation speeds), not llama-bench's",
        "no importer reads llama-batched-bench; benchmark with llama-bench -o json and import that",
    ),
}
"""What a tool's other output is, and what to do instead: files the importers tell apart but none reads."""


def _text_kind(text: str) -> str | None:
    """What a text file (not JSON) is: an MLPerf loadgen log, a tool's CSV or Markdown table, or a tool's JSON with
    log lines printed into it (judged by the JSON without them)."""
    head = text[: 1 << 16]
    if "MLPerf Results Summary" in head or ":::MLLOG" in head:
        return "mlperf"
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    cells = {c.strip().strip('"') for c in first.strip("|").split("|" if first.startswith("|") else ",")}
    if first.startswith("Metric,") and {"avg", "p99", "std"} <= cells:
        return "aiperf-csv"
    if {"build_commit", "model_filename", "n_prompt", "n_gen"} <= cells:
        return "llama-bench-csv"
    if first.startswith("|") and {"model", "test", "t/s"} <= cells:
        return "llama-bench-md"
    recovered = past_log_lines(text)
    return looks_like(recovered[0]) if recovered else None


AIPERF_CONFIG = {"models", "loadgen", "phases", "service_kind", "subcommand"}
"""Keys of an AIPerf (``models``, ``loadgen``, ``phases``) or GenAI-Perf (``service_kind``, ``subcommand``)
profile export's ``input_config``."""


def sniff(raw: bytes) -> Any:
    """What ``looks_like`` judges a file by: its JSON, the JSON of its first line (JSON Lines), or its text."""
    text = decode(raw)[0]
    for candidate in (text, text.split("\n", 1)[0]):
        try:
            return jsonio.loads(candidate)
        except ValueError:
            continue
    recovered = past_log_lines(text)  # a tool's JSON with its log lines printed into it (ik_llama.cpp)
    return recovered[0] if recovered is not None else text


def wrong_format(file: str, kind: str, what: str) -> ImportRefused:
    """The refusal of a file another importer reads, naming that importer; or of a tool's output no importer reads
    (``OTHER_OUTPUTS``), naming what it is and what to import instead."""
    if kind in OTHER_OUTPUTS:
        it, instead = OTHER_OUTPUTS[kind]
        return ImportRefused([codes.IMPORT_WRONG_FORMAT.at(file, "", f"this is {it}: {instead}", instead)])
    return ImportRefused(
        [
            codes.IMPORT_WRONG_FORMAT.at(
                file,
                "",
                f"this is not {what}: it looks like {kind} output",
                f"import it with `evreg import {kind} {Path(file).name} ...`",
            )
        ]
    )


def refuse_other_format(value: Any, file: str, mine: str, what: str) -> None:
    """Refuse a file another importer reads, naming that importer."""
    kind = looks_like(value)
    if kind is not None and kind != mine:
        raise wrong_format(file, kind, what)
