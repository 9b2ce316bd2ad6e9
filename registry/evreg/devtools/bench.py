"""The benchmark: whole ``evreg`` processes, as users run them, on registries of real shape
(``evreg.devtools.realshape``: clones of the real records), each phase against the floor of just reading
and parsing the same files.

Run: ``evreg bench --sizes 10000,100000 --repeat 5`` (prints JSON).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evreg.core import codebase, jsonio
from evreg.core.errors import Refused, UsageProblem
from evreg.core.jsonio import canonical
from evreg.core.layout import PACKETS, ROWS_DIR
from evreg.devtools.realshape import BENCH_EMAIL, GENERATED, MEASUREMENT_KINDS, generate, templates, write_copy

PHASES = (
    "startup",
    "validate_full",
    "validate_fill_cache",
    "validate_unchanged",
    "validate_one_measurement",
    "validate_one_family",
    "validate_base_head_one_measurement",
    "catalog",
    "query",
    "build",
    "export",
    "import",
    "pull_request",
)
"""Every phase, in the order they run (``--phases`` runs a subset)."""

QUERIES = {
    "headline per packet": "SELECT * FROM headlines",
    "decode samples of TP2": "SELECT m.id, s.value FROM measurements m JOIN samples s ON s.measurement = m.id "
    "WHERE m.tp = 2 AND s.metric = 'decode_tok_s'",
    "grade distribution": "SELECT * FROM grade_distribution",
}
SAMPLE_EVERY_S = 0.2
"""How often the memory of a process tree is sampled (proportional set size, summed), at most: reading a process's
proportional set walks its page tables (about 50 ms per GB of resident memory), so the sampler waits
``SAMPLE_SHARE`` times as long as its last sample took, and takes at most a twentieth of one core from the run it
measures (sampling a 4.5 GB build every 0.2 s had taken most of a core on a machine of two)."""
SAMPLE_SHARE = 20


@dataclass
class Run:
    """One process: wall and CPU seconds (its waited-for workers included), the largest resident set
    of any process of its tree (the kernel's high-water mark), and the largest sampled sum of the
    tree's proportional set sizes (shared pages counted once)."""

    wall_s: float
    cpu_s: float
    max_rss_mib: float
    tree_pss_mib: float
    returncode: int
    tail: str


def evreg_command() -> list[str]:
    script = Path(sys.executable).with_name("evreg")
    return [str(script)] if script.exists() else [sys.executable, "-m", "evreg"]


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                todo.extend(int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split())
        except OSError:
            continue
    return out


def _pss_mib(pids: list[int]) -> float:
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except (OSError, ValueError):
            continue
    return total / 1024


def run_process(argv: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None) -> Run:
    """Run ``argv`` to its end and measure it (``os.wait4``, as ``/usr/bin/time`` does)."""
    peak = [0.0]
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        done = threading.Event()

        def sample() -> None:
            wait = SAMPLE_EVERY_S
            while not done.wait(wait):
                began = time.perf_counter()
                peak[0] = max(peak[0], _pss_mib(_tree(proc.pid)))
                wait = max(SAMPLE_EVERY_S, SAMPLE_SHARE * (time.perf_counter() - began))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        sampler.join()
    lines = log.read_text("utf-8", "replace").strip().splitlines()
    return Run(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        max_rss_mib=usage.ru_maxrss / 1024,
        tree_pss_mib=peak[0],
        returncode=proc.returncode,
        tail=lines[-1][:600] if lines else "",
    )


def floor(root: Path) -> float:
    """Seconds to read and orjson-parse every JSON file under ``packets/``, in this process, one thread."""
    start = time.perf_counter()
    for dirpath, _dirs, files in os.walk(root / PACKETS):
        for name in files:
            if name.endswith(".json"):
                jsonio.loads(Path(dirpath, name).read_bytes())
    return time.perf_counter() - start


def summarise(runs: list[Run], floor_s: float, key: str = "wall_s") -> dict[str, Any]:
    """Median, spread and every run of one phase, with its ratio to the floor and its peak memory."""
    times = [getattr(r, key) for r in runs]
    median = statistics.median(times)
    return {
        "median_s": round(median, 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "ratio_to_floor": float(f"{median / floor_s:.3g}"),  # three significant figures, however small
        "cpu_median_s": round(statistics.median(r.cpu_s for r in runs), 3),
        "max_rss_mib": round(max(r.max_rss_mib for r in runs), 1),
        "tree_pss_peak_mib": round(max(r.tree_pss_mib for r in runs), 1),
        "output": runs[-1].tail,
    }


class Bench:
    """The phases on one registry at ``root``, each run ``repeat`` times as a whole process."""

    def __init__(self, root: Path, repeat: int, logs: Path) -> None:
        self.root = root
        self.repeat = repeat
        self.logs = logs
        self.cmd = evreg_command()
        self.edits = 0

    def run(self, name: str, *args: str, ok: tuple[int, ...] = (0,), cwd: Path | None = None) -> Run:
        self.edits += 1
        run = run_process([*self.cmd, *args], cwd or self.root, self.logs / f"{name}-{self.edits}.log")
        if run.returncode not in ok:
            raise RuntimeError(f"{name}: `evreg {' '.join(args)}` exited {run.returncode}: {run.tail}")
        return run

    def repeated(self, name: str, *args: str, before: Callable[[int], None] | None = None) -> list[Run]:
        runs = []
        for i in range(self.repeat):
            if before:
                before(i)
            runs.append(self.run(name, *args))
        return runs

    def edit(self, path: Path, field: str) -> Callable[[int], None]:
        """A change to one prose field of the record at ``path`` (no figure: it stays valid)."""
        data = jsonio.loads(path.read_bytes())
        original = str(data.get(field) or "")

        def change(i: int) -> None:
            data[field] = f"{original} (edited, {'abcdefghijklmnopqrstuvwxyz'[i % 26] * (1 + i // 26)})".strip()
            path.write_text(canonical(data), "utf-8")

        return change


def measurement_file(root: Path) -> Path:
    """A run measurement of the first family of the largest real family's shape."""
    for path in sorted((root / PACKETS).glob("*/*/measurements/*.json")):
        if jsonio.loads(path.read_bytes()).get("kind") in MEASUREMENT_KINDS:
            return path
    raise FileNotFoundError("no measurement")


def exportable_family(root: Path) -> str:
    """The first family imported from the lab's manifest format (it keeps ``record_order``)."""
    for path in sorted((root / PACKETS).glob("*/family.json")):
        if "record_order" in jsonio.loads(path.read_bytes()):
            return path.parent.name
    raise FileNotFoundError("no family in the neural-download format")


def measure(root: Path, repeat: int, phases: tuple[str, ...], logs: Path) -> dict[str, Any]:
    """Every phase of ``phases`` on the registry at ``root``."""
    floors = [floor(root) for _ in range(repeat + 1)][1:]  # the first run warms the page cache
    floor_s = statistics.median(floors)
    b = Bench(root, repeat, logs)
    out: dict[str, Any] = {"floor": {"median_s": round(floor_s, 3), "runs_s": [round(t, 3) for t in floors]}}
    _progress({"floor": out["floor"]})
    for name in phases:
        out[name] = PHASE_RUNNERS[name](b, floor_s)
        _progress({name: out[name]})
    nested = [q for p in out.values() if isinstance(p, dict) for q in (p, *p.values())]  # query's, "again"
    memory = [p for p in nested if isinstance(p, dict) and "max_rss_mib" in p]
    out["peak_memory"] = {
        "max_rss_mib": max((p["max_rss_mib"] for p in memory), default=0),
        "tree_pss_peak_mib": max((p["tree_pss_peak_mib"] for p in memory), default=0),
    }
    return out


def _progress(result: dict[str, Any]) -> None:
    """Each phase's result on standard error as it completes (one JSON line): a long run that is
    stopped keeps what it measured."""
    print(json.dumps(result), file=sys.stderr, flush=True)
    site = (result.get("build") or {}).get("site")
    if site:  # the site's figures once more as a line a reader takes in at a glance
        build = result["build"]
        print(
            f"site: {site['pages']} pages, {site['mb']} MB (downloads {site['downloads_mb']} MB, search index "
            f"{site['search_index_mb']} MB), MkDocs part {site['site_s']} s of the build's {build['median_s']} s "
            f"wall, {build.get('cpu_median_s')} s CPU",
            file=sys.stderr,
            flush=True,
        )


def _startup(b: Bench, floor_s: float) -> dict[str, Any]:
    runs = b.repeated("startup", "--version")
    return {**summarise(runs, floor_s, "cpu_s"), "wall_median_s": round(statistics.median(r.wall_s for r in runs), 3)}


def _validate_full(b: Bench, floor_s: float) -> dict[str, Any]:
    return summarise(b.repeated("validate-full", "validate", "--no-cache"), floor_s)


def _fill(b: Bench, floor_s: float) -> dict[str, Any]:
    shutil.rmtree(b.root / "build" / "cache", ignore_errors=True)
    return summarise([b.run("validate-fill", "validate")], floor_s)


def _unchanged(b: Bench, floor_s: float) -> dict[str, Any]:
    return summarise(b.repeated("validate-unchanged", "validate"), floor_s)


def _one_measurement(b: Bench, floor_s: float) -> dict[str, Any]:
    edit = b.edit(measurement_file(b.root), "caveat")
    return summarise(b.repeated("validate-measurement", "validate", before=edit), floor_s)


def _one_family(b: Bench, floor_s: float) -> dict[str, Any]:
    edit = b.edit(b.root / PACKETS / exportable_family(b.root) / "family.json", "summary")
    return summarise(b.repeated("validate-family", "validate", before=edit), floor_s)


def _base_head(b: Bench, floor_s: float) -> dict[str, Any]:
    """What the pre-commit hook runs (``--base HEAD``) when a contributor adds one measurement and commits:
    each timed run follows a new commit (the last run's measurement committed, one more added), so the base's
    findings are a commit's never seen before, as on every commit; ``again``: a second run on the same
    commit (a commit retried after a fix), which finds the base's findings kept."""
    victim = measurement_file(b.root)
    data = jsonio.loads(victim.read_bytes())

    def add(i: int) -> None:
        new = {**data, "id": f"{data['id']}-new-{i}"}
        (victim.parent / f"{new['id']}.json").write_text(canonical(new), "utf-8")

    def commit_and_add(i: int) -> None:
        commit_all(b.root)
        add(i)

    commit_all(b.root)
    b.run("validate-base-warm", "validate")  # the work tree's units are cached, as after any earlier run
    runs = b.repeated("validate-base", "validate", "--base", "HEAD", before=commit_and_add)
    again = [b.run("validate-base-again", "validate", "--base", "HEAD") for _ in range(b.repeat)]
    return {**summarise(runs, floor_s), "again": summarise(again, floor_s)}


def as_generated(root: Path) -> None:
    """Put a kept registry back as the generator committed it (its first commit): the phases commit and add records
    (a measurement for each ``--base HEAD`` run), which would otherwise pile up from one run to the next, so that each
    run measured another registry. Its ``build/`` (ignored) stays; any other change to it is dropped.

    Refused, untouched, unless ``root`` is the top of a git repository of its own whose every commit was authored and
    committed by the generator or the bench, the generator's being its only first commit: a registry of anyone
    else's (or a folder inside another repository) is never reset."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # the folder's repository, no other

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=False)

    top = git("rev-parse", "--show-toplevel")
    log = git("log", "-z", "--format=%H%x00%ae%x00%ce%x00%P%x00%s")
    fields = log.stdout.split(b"\0")
    if fields[-1:] == [b""]:
        fields.pop()
    commits = [fields[i : i + 5] for i in range(0, len(fields), 5)]
    roots = [c for c in commits if len(c) == 5 and c[3] == b""]
    ours = BENCH_EMAIL.encode()
    if not (
        top.returncode == 0
        and Path(os.fsdecode(top.stdout.strip())).resolve() == root.resolve()
        and log.returncode == 0
        and commits
        and all(len(c) == 5 and c[1] == c[2] == ours for c in commits)
        and [c[4] for c in roots] == [GENERATED.encode()]
    ):
        raise UsageProblem(
            f"--keep: {root} is not a registry the bench generated (a git repository of its own holding the "
            "generator's and the bench's commits only); choose another folder"
        )
    for args in (("reset", "-q", "--hard", roots[0][0].decode()), ("clean", "-q", "-f", "-d")):
        done = git(*args)
        if done.returncode != 0:
            raise Refused(f"--keep: git {args[0]} in {root} failed: {done.stderr.decode(errors='replace').strip()}")


def commit_all(root: Path) -> None:
    who = ["-c", "user.name=bench", "-c", f"user.email={BENCH_EMAIL}", "-c", "gc.auto=0"]
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", *who, "commit", "-qm", "edits", "--allow-empty"], cwd=root, check=True)


def _catalog(b: Bench, floor_s: float) -> dict[str, Any]:
    """``evreg catalog`` with no cached rows (removed before each run; validation reuses its cache after the first
    run), and ``one_measurement``: after one changed measurement, whose family's rows are made again (and those of
    the families that read it), the others' reused."""
    rows = b.root / ROWS_DIR
    cold = b.repeated("catalog", "catalog", before=lambda _i: shutil.rmtree(rows, ignore_errors=True))
    one = b.repeated("catalog-one", "catalog", before=b.edit(measurement_file(b.root), "caveat"))
    return {**summarise(cold, floor_s), "one_measurement": summarise(one, floor_s)}


def _query(b: Bench, floor_s: float) -> dict[str, Any]:
    b.run("query-warm", "query", "SELECT 1")  # the catalog is fresh from here on
    return {name: summarise(b.repeated("query", "query", sql), floor_s) for name, sql in QUERIES.items()}


def _build(b: Bench, floor_s: float) -> dict[str, Any]:
    """``evreg build`` with no kept pages or scans (removed before each run; the catalog is fresh from the phases
    before), and ``unchanged``: built again with what the last run kept, nothing changed (every page taken)."""
    from evreg.site.reuse import CHECKED_FILE

    out, kept = b.root / "build" / "site", b.root / Path(CHECKED_FILE).parent
    full = b.repeated("build", "build", "--out", str(out), before=lambda _i: shutil.rmtree(kept, ignore_errors=True))
    again = b.repeated("build-again", "build", "--out", str(out))
    result = summarise(full, floor_s)
    return {**result, "unchanged": summarise(again, floor_s), "site": site_facts(out, result["output"])}


def site_facts(out: Path, tail: str) -> dict[str, Any]:
    """The built site: the MkDocs part of the build's seconds (from its last line), its pages, bytes
    (the data downloads apart), the search index's bytes, and the bytes of each top-level folder (packets,
    families, compare, downloads, evidence, assets ...; files at the top as ``.``)."""
    import re

    files = [f for f in out.rglob("*") if f.is_file()]
    downloads = out / "downloads"
    seconds = re.search(r"\(site ([0-9.]+) s\)", tail)
    kinds: dict[str, int] = {}
    for f in files:
        parts = f.relative_to(out).parts
        kind = parts[0] if len(parts) > 1 else "."
        kinds[kind] = kinds.get(kind, 0) + f.stat().st_size
    return {
        "site_s": float(seconds.group(1)) if seconds else None,
        "pages": sum(1 for f in files if f.name == "index.html"),
        "mb": round(sum(f.stat().st_size for f in files) / 1e6, 1),
        "downloads_mb": round(sum(f.stat().st_size for f in files if downloads in f.parents) / 1e6, 1),
        "search_index_mb": round((out / "search" / "search_index.json").stat().st_size / 1e6, 2),
        "mb_by_folder": {k: round(v / 1e6, 2) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])},
    }


def _export(b: Bench, floor_s: float) -> dict[str, Any]:
    family = exportable_family(b.root)
    target = b.root / "build" / f"{family}.json"
    return {
        "family": family,
        **summarise(b.repeated("export", "export", "neural-download", family, "-o", str(target)), floor_s),
    }


def _import(b: Bench, floor_s: float) -> dict[str, Any]:
    """Import of one exported family into an empty registry (a fresh one for every run)."""
    family = exportable_family(b.root)
    manifest = b.root / "build" / f"{family}.json"
    if not manifest.is_file():
        b.run("export", "export", "neural-download", family, "-o", str(manifest))
    runs = []
    for i in range(b.repeat):
        empty = b.logs.parent / f"empty-{i}"  # outside the registry's git work tree
        shutil.rmtree(empty, ignore_errors=True)
        (empty / PACKETS).mkdir(parents=True)
        shutil.copytree(b.root / "schema", empty / "schema")
        # Exit 1 is expected: the family's accepted defects are in the source registry's baseline.
        runs.append(b.run("import", "--root", str(empty), "import", "neural-download", str(manifest), ok=(0, 1)))
        if not (empty / PACKETS / family / "family.json").is_file():
            raise RuntimeError(f"import wrote no family: {runs[-1].tail}")
    return {"family": family, **summarise(runs, floor_s)}


def add_packet(root: Path, seed: int = 11) -> list[str]:
    """One new packet, as an import of one more run writes it: in the first family cloned from a real family
    that has no accepted findings and no record order, the next copy of its real records (its packet, with its
    measurements, evidence and views, ids ``-fN-cK`` for the next K). The files written, relative to ``root``."""
    import random
    import re

    source = Path(__file__).resolve().parents[3]
    plain = {t.name: t for t in templates(source) if not t.baseline and "record_order" not in t.family.fill("", "")}
    for family in sorted((root / PACKETS).glob("*/family.json")):
        name, _, index = family.parent.name.rpartition("-f")
        t = plain.get(name)
        if t is None or not index.isdigit():
            continue
        fam = f"-f{index}"
        taken = [int(m) for p in family.parent.rglob("*") for m in re.findall(rf"{fam}-c(\d+)", p.name)]
        cop = f"{fam}-c{max(taken, default=-1) + 1}"
        return write_copy(root, t, fam, cop, random.Random(seed), shared=False)
    raise FileNotFoundError("no family cloned from a real family without accepted findings and record order")


PR_STEPS = (
    ("schema --check", ("schema", "--check")),
    ("fmt --check --base (change)", ("fmt", "--check", "--base", "{base}")),
    ("fmt --check --base (judge)", ("fmt", "--check", "--base", "{base}")),
    (
        "validate --base, annotations and summary",
        ("validate", "--base", "{base}", "--format", "github", "--format", "summary={summary}"),
    ),
    ("build --check", ("build", "--check")),
)
"""The pull-request workflow's checks, in its order (``schema --check`` and the first ``fmt`` are the ``change``
job's; the others the ``judge``'s): each a process of its own, as CI runs them."""


def _text(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""


def _clone(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(source), str(target)], check=True)


def _pull_request(b: Bench, floor_s: float) -> dict[str, Any]:
    """A pull request that adds one packet, checked as the pull-request workflow checks it: on a fresh clone
    with nothing restored (cold), and on a fresh clone with the base's results restored (``build/cache`` of a
    clone validated and built as the trusted run on main validates and builds it, ``validate --base HEAD`` then
    ``build``: the validation results, the catalog's rows and the scans of the site's pages). Each step's wall and CPU
    seconds, cold and restored, and the restored one's ratio to the cold one; the restored run's own words on
    which units it reused and why it checked the others."""
    commit_all(b.root)  # whatever earlier phases left is the base
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=b.root, check=True, capture_output=True, text=True)
    sha = base.stdout.strip()
    work = b.logs.parent / "pull-request"
    main = work / "main"
    _clone(b.root, main)
    saved = b.run("pr-main", "validate", "--base", "HEAD", cwd=main, ok=(0, 1))
    built_main = b.run("pr-main-build", "build", cwd=main, ok=(0, 1))  # publish.yml builds before it saves build/cache
    pr = work / "pr"
    _clone(b.root, pr)
    added = add_packet(pr)
    commit_all(pr)
    runs: dict[str, dict[str, list[Run]]] = {name: {"cold": [], "restored": []} for name, _ in PR_STEPS}
    said = built = ""
    for i in range(b.repeat):
        for how in ("cold", "restored"):
            clone = work / f"{how}-{i}"
            _clone(pr, clone)  # the pull request's head, as actions/checkout leaves it
            if how == "restored":
                shutil.copytree(main / "build" / "cache", clone / "build" / "cache")
            summary = work / f"{how}-{i}-summary.md"  # the job summary file (outside the clone, as on a runner)
            for name, args in PR_STEPS:
                argv = [a.format(base=sha, summary=summary) for a in args]
                run = b.run(f"pr-{how}-{name.split()[0]}", *argv, ok=(0, 1), cwd=clone)
                runs[name][how].append(run)
                if how == "restored" and name.startswith("build"):  # its line on the pages whose scans it reused
                    built = run.tail.partition("; ")[2]
            if how == "restored":  # the job summary's line on the units
                said = next((x for x in _text(summary).splitlines() if "units reused" in x), "")
            shutil.rmtree(clone, ignore_errors=True)
    steps = {}
    for name, _ in PR_STEPS:
        cold, warm = runs[name]["cold"], runs[name]["restored"]
        cw, ww = statistics.median(r.wall_s for r in cold), statistics.median(r.wall_s for r in warm)
        cc, wc = statistics.median(r.cpu_s for r in cold), statistics.median(r.cpu_s for r in warm)
        steps[name] = {
            "cold_wall_s": round(cw, 3),
            "cold_cpu_s": round(cc, 3),
            "restored_wall_s": round(ww, 3),
            "restored_cpu_s": round(wc, 3),
            "wall_ratio": float(f"{ww / cw:.3g}") if cw else None,
            "cpu_ratio": float(f"{wc / cc:.3g}") if cc else None,
            "returncodes": sorted({r.returncode for r in cold + warm}),
        }
    total = {
        how: {
            k: round(sum(statistics.median(getattr(r, k) for r in runs[n][how]) for n, _ in PR_STEPS), 3)
            for k in ("wall_s", "cpu_s")
        }
        for how in ("cold", "restored")
    }
    shutil.rmtree(work, ignore_errors=True)
    return {
        "added_files": len(added),
        "added_packet": next((p for p in added if p.endswith("/packet.json")), added[0] if added else ""),
        "main_validate_s": round(saved.wall_s, 3),
        "main_build_s": round(built_main.wall_s, 3),
        "steps": steps,
        "total": total,
        "restored_summary": said.strip(),
        "restored_build": built,
        "max_rss_mib": round(max(r.max_rss_mib for step in runs.values() for rs in step.values() for r in rs), 1),
        "tree_pss_peak_mib": round(
            max(r.tree_pss_mib for step in runs.values() for rs in step.values() for r in rs), 1
        ),
    }


PHASE_RUNNERS: dict[str, Callable[[Bench, float], dict[str, Any]]] = {
    "startup": _startup,
    "validate_full": _validate_full,
    "validate_fill_cache": _fill,
    "validate_unchanged": _unchanged,
    "validate_one_measurement": _one_measurement,
    "validate_one_family": _one_family,
    "validate_base_head_one_measurement": _base_head,
    "catalog": _catalog,
    "query": _query,
    "build": _build,
    "export": _export,
    "import": _import,
    "pull_request": _pull_request,
}


def ratios(result: dict[str, Any]) -> dict[str, Any]:
    """The targets' quantities in one place (the performance page's targets)."""
    full = result.get("validate_full", {}).get("median_s")
    one = result.get("validate_one_measurement", {}).get("median_s")
    return {
        "validate_full_x_floor": result.get("validate_full", {}).get("ratio_to_floor"),
        "validate_one_measurement_pct_of_full": round(100 * one / full, 1) if full and one else None,
        "catalog_x_floor": result.get("catalog", {}).get("ratio_to_floor"),
        "query_headlines_s": result.get("query", {}).get("headline per packet", {}).get("median_s"),
        "startup_cpu_s": result.get("startup", {}).get("median_s"),
        "peak_memory_mib": result.get("peak_memory"),
    }


def precompile() -> None:
    """Byte-compile the code the processes run (``evreg`` and the rule packs), as ``pip install`` does:
    where ``PYTHONDONTWRITEBYTECODE`` is set, every process would otherwise compile its modules anew
    (0.75 s CPU per validation process measured here), which no installed user pays."""
    import compileall

    for folder in sorted({p.parent for p in codebase.sources()}):
        compileall.compile_dir(folder, quiet=1, maxlevels=0)


def run(
    sizes: list[int], repeat: int = 3, keep: Path | None = None, phases: tuple[str, ...] = PHASES
) -> list[dict[str, Any]]:
    """Generate a registry of real shape per size (or reuse one kept in ``keep``) and measure it."""
    precompile()
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"evreg-bench-{n}-") as tmp:
            root = (keep / f"registry-{n}") if keep else Path(tmp) / "registry"
            start = time.perf_counter()
            if (root / PACKETS).is_dir():
                as_generated(root)
                info: dict[str, Any] = {"reused": True}
            else:
                info = generate(root, n)
            info["generate_s"] = round(time.perf_counter() - start, 1)
            os.sync()  # the generator's writes are flushed before anything is timed
            logs = Path(tmp) / "logs"
            logs.mkdir()
            load_before = os.getloadavg()
            result = measure(root, repeat, phases, logs)
            load = {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]}
            results.append(
                {
                    **info,
                    "repeat": repeat,
                    "cores": os.cpu_count(),
                    "loadavg_1_5_15": load,
                    "targets": ratios(result),
                    **result,
                }
            )
    return results


ADVERSARIAL = {
    "unclosed braces": "{{ ",
    "unclosed citations": "{{ m:run-1.decode_tok_s[",
    "many bad citations": "{{x}}",
    "many figures": "1.5 tok/s ",
    "long digit run": "7",
    "decimals without units": "1.5 ",
    "nested brackets": "[[((",
    "long whitespace after a metric word": " ",
    "escaped quotes": '\\"',
    "closing braces": "}}",
    "a list of numbers without a unit": "1, ",
    "a range of numbers without a unit": "5 - ",
    "a chain of thousands groups": ",234",
}
"""Hostile prose patterns: each fills one field of a record up to the size limit."""


def adversarial_text(pattern: str, size: int) -> str:
    """``pattern`` repeated to ``size`` bytes as written in a JSON string."""
    return ("decode" if pattern == " " else "") + pattern * (size // (len(json.dumps(pattern)) - 2))


def adversarial(size: int | None = None) -> dict[str, float]:
    """Seconds to validate a clone of the smallest real family in which one measurement's caveat is a
    pattern of ``ADVERSARIAL`` of ``size`` bytes (by default, filling the record to just under the size limit);
    and the worst case."""
    from evreg.check import rules
    from evreg.core.jsonio import MAX_RECORD_BYTES
    from evreg.store import load

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="evreg-bench-adversarial-") as tmp:
        root = Path(tmp)
        smallest = min(templates(Path(__file__).resolve().parents[3]), key=lambda t: len(t.files))
        generate(root, 0, only={smallest.name})
        target = measurement_file(root)
        record = jsonio.loads(target.read_bytes())
        for name, pattern in ADVERSARIAL.items():
            record["caveat"] = adversarial_text(pattern, size or MAX_RECORD_BYTES - 4096)
            target.write_text(canonical(record), "utf-8")
            seconds = time.perf_counter()
            rules.run(load(root), rules.discover())
            out[name] = round(time.perf_counter() - seconds, 2)
    worst = max(out, key=out.__getitem__)
    return {**out, "worst": out[worst], "worst_pattern": worst}  # type: ignore[dict-item]
