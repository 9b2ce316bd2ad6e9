"""MLPerf Inference loadgen logs: ``mlperf_log_summary.txt`` and ``mlperf_log_detail.txt``.

The summary is text, ``Key : value`` per line, in three sections: the result (``SUT name``, ``Scenario``, ``Mode``,
the scenario's headline -- ``Samples per second`` (Offline), ``Completed samples per second`` or ``Scheduled samples
per second`` (Server, 0.5 to today), ``90th percentile latency (ns)`` (SingleStream) -- ``Tokens per second`` for
LLM benchmarks, and ``Result is : VALID|INVALID`` with the checks under it), ``Additional Stats`` (latency
statistics in nanoseconds; first-token and time-per-output-token ones for LLMs) and ``Test Parameters Used``.
The detail log holds the same results as ``:::MLLOG {json}`` lines (``result_validity``,
``result_completed_samples_per_sec`` ...) and, which the summary lacks, the loadgen version and the test's date.

One file becomes one run measurement of the target packet, every number with its ``line:N[:K]`` locator, in the
unit loadgen wrote (``ns`` latencies are not converted); an ``INVALID`` run becomes a closure naming the checks it
failed, never a measurement. Neither log names the model or the hardware: they stay missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evreg import formats
from evreg.core import jsonio
from evreg.core.evidence import text_lines
from evreg.core.vocab import metrics as vocab_metrics
from evreg.formats import serving as sv

FORMAT = "an MLPerf loadgen log (mlperf_log_summary.txt or mlperf_log_detail.txt)"

_PCT = r"(\d+(?:\.\d+)?)(?:th)?"
SUMMARY = [
    (re.compile(r"^(?:completed )?samples per second$"), "samples_per_s"),
    (re.compile(r"^scheduled samples per second$"), "scheduled_samples_per_s"),
    (re.compile(r"^(?:completed )?tokens per second$"), "aggregate_tok_s"),
    (re.compile(r"^qps w/ loadgen overhead$"), "queries_per_s"),
    (re.compile(r"^qps w/o loadgen overhead$"), "queries_per_s_no_overhead"),
    (re.compile(r"^(min|max|mean) latency \(ns\)$"), "{}_latency_ns"),
    (re.compile(rf"^{_PCT} percentile latency \(ns\)$"), "p{}_latency_ns"),
    (re.compile(r"^(min|max|mean) first token latency \(ns\)$"), "{}_ttft_ns"),
    (re.compile(rf"^{_PCT} percentile first token latency \(ns\)$"), "p{}_ttft_ns"),
    (re.compile(r"^(min|max|mean) time to output token \(ns\)$"), "{}_tpot_ns"),
    (re.compile(rf"^{_PCT} percentile time to output token \(ns\)$"), "p{}_tpot_ns"),
]
DETAIL = [
    (re.compile(r"^result_(?:completed_)?samples_per_sec(?:ond)?$"), "samples_per_s"),
    (re.compile(r"^result_scheduled_samples_per_sec$"), "scheduled_samples_per_s"),
    (re.compile(r"^result_(?:completed_)?tokens_per_second$"), "aggregate_tok_s"),
    (re.compile(r"^result_qps_with_loadgen_overhead$"), "queries_per_s"),
    (re.compile(r"^result_qps_without_loadgen_overhead$"), "queries_per_s_no_overhead"),
    (re.compile(r"^result_(min|max|mean)_latency_ns$"), "{}_latency_ns"),
    (re.compile(r"^result_(\d+\.\d+)_percentile_latency_ns$"), "p{}_latency_ns"),
    (re.compile(r"^result_first_token_(min|max|mean)_latency_ns$"), "{}_ttft_ns"),
    (re.compile(r"^result_first_token_(\d+\.\d+)_percentile_latency_ns$"), "p{}_ttft_ns"),
    (re.compile(r"^result_time_to_output_token_(min|max|mean)$"), "{}_tpot_ns"),
    (re.compile(r"^result_time_per_output_token_(\d+\.\d+)_percentile_ns$"), "p{}_tpot_ns"),
]
IDENTITY = {"sut name": "sut_name", "scenario": "scenario", "mode": "mode", "result is": "result"}
DETAIL_IDENTITY = {
    "loadgen_version": "loadgen_version",
    "test_datetime": "test_datetime",
    "sut_name": "sut_name",
    "effective_scenario": "scenario",
    "effective_test_mode": "mode",
    "result_validity": "result",
}


def _metric(table: list[tuple[re.Pattern[str], str]], key: str) -> str | None:
    """The metric a summary key or detail key maps to (in the vocabulary), or None."""
    for pattern, template in table:
        if m := pattern.match(key):
            if not m.groups():
                return template
            part = m.group(1)
            if part[0].isdigit():
                part = f"{float(part):g}".replace(".", "_")
            name = template.format(part)
            return name if name in vocab_metrics() else None
    return None


@dataclass
class Log:
    """What one loadgen log says: identity, checks, test parameters and the numbers with their locators."""

    identity: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    numbers: sv.Numbers = field(default_factory=sv.Numbers)


def _scalar(text: str) -> Any:
    """A test parameter as a number when it is one a record can hold exactly (seeds beyond 2**53 stay text)."""
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return text
        return number if abs(number) < 2**53 else text
    return value if abs(value) < 2**53 else text


def _summary_line(log: Log, n: int, line: str, section: str, file: str) -> None:
    key, sep, value = line.partition(":")
    if not sep:
        if line.strip().startswith("*") or "warning" in line or "error" in line:
            log.notes.append(line.strip())
        return
    name = " ".join(key.split()).lower()
    if section == "parameters":
        pkey = re.sub(r"[^a-z0-9]+", "_", name).strip("_")
        log.parameters[pkey] = _scalar(value.strip())
    elif name in IDENTITY and section == "result":
        log.identity.setdefault(IDENTITY[name], value.strip())
    elif line[:1].isspace() and "satisfied" in name:
        log.checks[" ".join(key.split())] = value.strip()
    elif (metric := _metric(SUMMARY, name)) is not None:
        found = sv.line_locator(n, line, len(key) + 1)
        if found is None or found[1] != float(value.strip()):
            raise formats.refuse(
                file, f"line:{n}", f"line {n} does not end in one number: {line!r}", "pass the log unmodified"
            )
        log.numbers.add(metric, found[1], found[0])


def read_summary(lines: list[str], file: str) -> Log:
    log, section = Log(), "result"
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped == "Additional Stats":
            section = "stats"
        elif stripped == "Test Parameters Used":
            section = "parameters"
        elif stripped and not stripped.startswith("==="):
            _summary_line(log, n, line, section, file)
    return log


def read_detail(lines: list[str], file: str) -> Log:
    log = Log()
    for n, line in enumerate(lines, 1):
        if not line.startswith(":::MLLOG "):
            continue
        try:
            entry = jsonio.loads(line[len(":::MLLOG ") :])
        except ValueError:
            raise formats.refuse(
                file, f"line:{n}", f"line {n} is not an MLLOG JSON entry", "pass the log unmodified"
            ) from None
        key, value = entry.get("key"), entry.get("value")
        if not isinstance(key, str):
            continue
        if key in DETAIL_IDENTITY and isinstance(value, str):
            log.identity.setdefault(DETAIL_IDENTITY[key], value)
        elif key.startswith("result_") and key.endswith("_met") and isinstance(value, bool):
            log.checks[key] = value
        elif key.startswith(("effective_", "requested_")) and isinstance(value, int | float | bool):
            log.parameters.setdefault(key.split("_", 1)[1], value if abs(value) < 2**53 else str(value))
        elif (metric := _metric(DETAIL, key)) is not None:
            found = sv.line_locator(n, line, line.index('"value":'))
            if found is not None and found[1] == value:
                log.numbers.add(metric, value, found[0])
    return log


def _read(request: formats.Request) -> tuple[Log, str]:
    lines = text_lines(request.raw)
    text = "\n".join(lines[:40])
    if "MLPerf Results Summary" in text:
        log, kind = read_summary(lines, request.file), "summary"
    elif any(line.startswith(":::MLLOG ") for line in lines[:40]):
        log, kind = read_detail(lines, request.file), "detail"
    else:
        formats.refuse_other_format(formats.sniff(request.raw), request.file, "mlperf", FORMAT)
        raise formats.refuse(
            request.file,
            "",
            f"not {FORMAT}: no 'MLPerf Results Summary' and no ':::MLLOG' line",
            "pass the log loadgen wrote, unmodified",
        )
    formats.forbid_citation_markers([log.identity, log.checks, log.parameters, log.notes], request.file)
    if not str(log.identity.get("mode", "")).lower().startswith("performance"):
        raise formats.refuse(
            request.file,
            "",
            f"a loadgen log of mode {log.identity.get('mode')!r}: only a performance run has performance numbers",
            "import the performance/run_1 log; accuracy is scored by the benchmark's own script",
        )
    if log.identity.get("result") not in ("VALID", "INVALID"):
        raise formats.refuse(
            request.file, "", "the log states no 'Result is : VALID' or 'INVALID'", "pass the whole log"
        )
    return log, kind


def plan(request: formats.Request) -> formats.Plan:
    """One run of the log. Neither log names the model or the hardware (they stay missing, reported); the
    runtime is only as stated, and compared with the packet's."""
    target, raw = request.packet(), request.raw
    log, kind = _read(request)
    out = formats.Plan()
    formats.check_scope(out, target, sv.identity(request), request.file)
    scenario = str(log.identity.get("scenario", ""))
    evidence = formats.evidence_for(target, request.name, raw)
    out.add_file(evidence, raw)
    earlier = formats.earlier_imports(target, request.name)
    tool = {"name": "mlperf-loadgen", "log": kind} | {k: v for k, v in log.identity.items() if k != "scenario"}
    tool |= ({"checks": log.checks} if log.checks else {}) | ({"messages": log.notes} if log.notes else {})
    rid = formats.content_id("mlperf", raw, target, scenario)
    if log.identity["result"] == "INVALID" or not log.numbers.metrics:
        failed = [k for k, v in log.checks.items() if v is False or str(v).lower() == "no"]
        reason = (
            f"MLPerf loadgen judged the {scenario} run INVALID"
            + (f" (not satisfied: {', '.join(failed)})" if failed else "")
            + ": its numbers are not a result"
        )
        failure = {"result": log.identity["result"], "scenario": scenario, "checks": log.checks}
        failure["reported"] = log.numbers.metrics
        sv.add(out, request, earlier, "0", formats.failed_run(target, rid, evidence, raw, reason, failure))
        out.notes.append(f"mlperf: an INVALID {scenario} run, recorded as closure {rid}")
        return out
    body = {
        "measurement_class": f"mlperf-inference-{scenario.lower() or 'unknown'}",
        "workload": f"MLPerf Inference {scenario} scenario, loadgen {kind} log, {log.identity.get('mode')}",
        "config": {"scenario": scenario, **log.parameters},
        "tool": tool,
        **log.numbers.body(),
    }
    sv.add(out, request, earlier, "0", sv.run_record(request, rid, evidence, body))
    out.notes.append(f"1 MLPerf {scenario} run into packet {target.packet} ({len(log.numbers.metrics)} metrics)")
    return out


IMPORTER = formats.Importer(
    "mlperf",
    "Import an MLPerf Inference loadgen log (mlperf_log_summary.txt or mlperf_log_detail.txt) into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
