"""The documentation says what the code does: the methodology page's table of figure examples is the grammar,
every finding code is documented and explained, and the contributing guide's walkthroughs and examples run as
written."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import git
import pytest

from evreg.check import rules
from evreg.core import findings
from helpers import REPO, SHARED, F, Reg, evreg

# -- the methodology page ----------------------------------------------------------------------------------------------


def _grammar_examples() -> list[tuple[str, list[str]]]:
    """The rows of the methodology page's table of figure examples: (text, the claims in it)."""
    import re

    page = (REPO / "registry/evreg/site/static/methodology.md").read_text()
    table = page[page.index("| Text | Claims in it |") :].split("\n\n", 1)[0].splitlines()[2:]
    rows = []
    for row in table:
        text_cell, claims_cell = row.strip("|").split(" | ", 1)
        text = re.match(r"\s*`([^`]*)`", text_cell).group(1)  # type: ignore[union-attr]
        claims = [] if claims_cell.strip() == "none" else re.findall(r"`([^`]*)`", claims_cell)
        rows.append((text, claims))
    return rows


@pytest.mark.parametrize(("text", "figures"), _grammar_examples())
def test_the_documented_figure_grammar(text: str, figures: list[str]) -> None:
    from evreg.claims.figures import find_figures

    assert [f.text for f in find_figures(text)] == figures


def test_the_grammar_table_has_claims_and_non_claims() -> None:
    rows = _grammar_examples()
    assert len(rows) >= 20 and any(not f for _, f in rows) and sum(len(f) for _, f in rows) >= 25


# -- finding codes -----------------------------------------------------------------------------------------------------


def test_every_declared_finding_code_is_documented_and_explained() -> None:
    """Findings are made only from declared codes (see test_architecture); every code any module
    declares is in the documentation the CLI and the site show, and nothing else is."""
    import importlib
    import pkgutil

    import evreg as package_evreg
    import evreg_rules
    from evreg.core.findings import declared

    for package in (package_evreg, evreg_rules):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    documented = rules.code_docs(rules.discover())
    assert len(documented) > 30 and set(declared()) == set(documented)
    for code in documented:
        result = evreg("explain", code)
        assert result.returncode == 0 and "Why:" in result.stdout
    assert evreg("explain", "no-such-code").returncode == 2


# -- the contributing guide --------------------------------------------------------------------------------------------


TOOLS = SHARED / "tools"
RUN_LOG = SHARED / "rtx5090-vllm-runs.json"


def validate_json(root: Path) -> dict:
    result = evreg("validate", "--format", "json", cwd=root)
    return json.loads(result.stdout) | {"exit": result.returncode}


def _walkthroughs() -> dict[str, list[str]]:
    """The shell blocks of the contributing guide's walkthrough, by tool."""
    import re

    text = (REPO / "site/contributing.md").read_text()
    return {
        tool: [line for line in body.splitlines() if line.strip()]
        for tool, body in re.findall(r"```sh\n# walkthrough: ([a-z-]+)\n(.*?)```", text, re.S)
    }


WALKTHROUGH_INPUT = {  # the tool's output, under tests/data
    "llama-bench": "tools/llama-bench.json",
    "vllm-bench": "tools/vllm-bench-serve.json",
    "lm-eval": "tools/lm-eval-results.json",
    "aiperf": "real/aiperf/anud18-chatbot-c4/profile_export_aiperf.json",
    "mlperf": "real/mlperf/inference_results_v4.1-amd-8xmi300x-server/mlperf_log_summary.txt",
    "sglang-bench": "real/sglang/datacrunch-llama-3-3-70b-online/llama_3_3_70b_online_output.jsonl",
    "sglang-one-batch": "real/sglang/corpus/jiminator-glm-bisect-one-batch-server/result.jsonl",
    "neural-download": "lab/families/deepseek-v4.json",
    "vllm-run-log": "rtx5090-vllm-runs.json",
    "llmperf": "real/llmperf/corpus/hongxuanzhang-llama2-7b-c24/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json",
    "guidellm": "real/guidellm/corpus/danielkorat-qwen3-4b-fp8-c4/"
    "Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json",
    "vllm-offline": "real/vllm-offline/corpus/cmontemuino-mi300x-latency-bs8-in128-out128/"
    "Llama-3.1-8B_latency_bs8_in128_out128_float16_mem0.9_20250807_191332.json",
}


def test_the_guide_has_a_walkthrough_for_each_importer() -> None:
    """Every registered importer (enumerated from the entry points: a new one needs its walkthrough) has one, and the
    test below has the raw file it starts from."""
    from evreg import formats

    assert set(_walkthroughs()) == set(WALKTHROUGH_INPUT) == set(formats.discover())


@pytest.mark.slow
@pytest.mark.parametrize("tool", sorted(WALKTHROUGH_INPUT))
def test_the_walkthrough_runs_literally(tool: str, tmp_path: Path) -> None:
    """A clone of the registry without its packets, the tool's real output beside it, and then the guide's
    commands exactly as written: every one succeeds, with no JSON edited by hand, and the change is green."""
    import shlex
    import subprocess

    root = tmp_path / "clone"
    (root / "packets").mkdir(parents=True)
    for folder in ("schema", "site"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copy(REPO / ".gitignore", root / ".gitignore")  # build/ (the site, which publishes evidence) is ignored
    lab = tool in ("neural-download", "vllm-run-log")  # a lab's export: its own identity, no packet to name
    if lab:  # the registry's reviewed findings of the lab data, which a clone has
        shutil.copy(REPO / "packets/baseline.json", root / "packets/baseline.json")
    source = SHARED / WALKTHROUGH_INPUT[tool]
    shutil.copy(source, tmp_path / source.name)  # beside the clone
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Contributor")
        cw.set_value("user", "email", "c@example.org")
    repo.git.add("-A")
    repo.index.commit("the registry before the contribution")
    for line in _walkthroughs()[tool]:
        if line.startswith("#"):
            continue
        words = shlex.split(line)
        if words[0] == "evreg":
            result = evreg(*words[1:], cwd=root)
        else:
            result = subprocess.run(words, cwd=root, capture_output=True, text=True, check=False)
        assert result.returncode == 0, (line, result.stdout, result.stderr)
        if words[1:3] == ["validate", "--base"]:
            assert " 0 errors" in result.stdout, result.stdout
    if not lab:  # a tool's file: three commands, the first of them `evreg add`
        assert [shlex.split(line)[:2] for line in _walkthroughs()[tool]] == [
            ["evreg", "add"],
            ["evreg", "validate"],
            ["evreg", "build"],
        ]
    assert (root / "build/site/index.html").is_file()
    repo.git.add("-A")
    repo.index.commit("the contribution")
    committed = repo.git.ls_files().splitlines()
    assert evreg("validate", "--base", "HEAD~1", cwd=root).returncode == 0
    if lab:
        assert [p for p in committed if "/measurements/" in p]  # the export's records, committed
        copies = [p for p in committed if p.rsplit("/", 1)[-1] == source.name]
        if tool == "neural-download":
            assert copies == []  # a manifest's evidence stays in the lab's repository (cited, external)
        else:  # the log, once per family it writes, as that family's evidence, byte for byte
            assert copies and all("/evidence/" in p and (root / p).read_bytes() == source.read_bytes() for p in copies)
        return
    copies = [p for p in committed if p.rsplit("/", 1)[-1] == source.name]
    assert len(copies) == 1 and "/evidence/" in copies[0]  # the raw output is committed once, as evidence
    assert (root / copies[0]).read_bytes() == source.read_bytes()
    packets = list((root / "packets").glob("*/*/packet.json"))
    assert len(packets) == 1 and copies[0].startswith(str(packets[0].parent.relative_to(root)))
    family = json.loads((packets[0].parent.parent / "family.json").read_text())
    assert family["primary_packet_id"] == packets[0].parent.name  # a new family's first packet is its primary


@pytest.mark.parametrize("tool", sorted(t for t in WALKTHROUGH_INPUT if t not in ("neural-download", "vllm-run-log")))
def test_a_file_without_its_facts_is_asked_each_once(tool: str, tmp_path: Path) -> None:
    """`evreg add FILE` alone, in an empty registry, asks exactly the facts the walkthrough states (one
    import-fact-needed finding each, naming its option), and writes nothing."""
    import shlex

    root = tmp_path / "reg"
    assert evreg("init", str(root), cwd=tmp_path).returncode == 0
    before = sorted(p for p in root.rglob("*") if ".git" not in p.parts)
    result = evreg("add", str(SHARED / WALKTHROUGH_INPUT[tool]), "--format", "json", cwd=root)
    assert result.returncode == 1 and "nothing was written" in result.stderr, result.stderr
    asked = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "import-fact-needed"]
    options = sorted(f["message"].split(": add ")[1].split()[0] for f in asked)
    add_line = shlex.split(_walkthroughs()[tool][0])
    stated = sorted(w for w in add_line if w.startswith("--") and w != "--yes")
    assert options == stated
    assert sorted(p for p in root.rglob("*") if ".git" not in p.parts) == before


def _install_examples(page: Path, site: Path) -> None:
    """The contributing guide's examples as an installed distribution would hold them: each Python block
    (named by its first line, ``# NAME.py``) as a module, its TOML entry points as the distribution's."""
    import re

    text = page.read_text()
    info = site / "mylab-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mylab\nVersion: 1.0\n")
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        name = re.match(r"# (\w+\.py)\n", block)
        assert name, block[:60]
        (site / name.group(1)).write_text(block)
    groups = re.findall(r'```toml\n\[project\.entry-points\."([\w.]+)"\]\n(.*?)```', text, re.S)
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n{body.replace(chr(34), '')}\n" for group, body in groups)
    )
    assert {g for g, _ in groups} == {"evreg.rules", "evreg.formats", "evreg.reporters"}


def test_the_contributing_guide_examples_work(
    reg: Reg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    site = tmp_path / "site-packages"
    _install_examples(REPO / "site/contributing.md", site)
    monkeypatch.syspath_prepend(str(site))

    def forget_the_examples_codes() -> None:
        """The example declares a finding code in this process; later tests see only the project's own codes (all
        of them: a rule pack first imported by this test keeps the codes it declared)."""
        for module in list(sys.modules.values()):
            if str(getattr(module, "__file__", None) or "").startswith(str(site)):
                for value in list(vars(module).values()):
                    if isinstance(value, findings.Code):
                        findings._DECLARED.pop(value.code, None)

    request.addfinalizer(forget_the_examples_codes)
    data = tmp_path / "runs.csv"
    data.write_text("run,decode_tok_s,runtime,tp\nfirst,52.3,vLLM 0.9,1\nsecond,51.9,vLLM 0.9,1\n")
    from evreg.app import imports

    importer = imports.importer("mylab-csv")
    assert importer is not None
    planned = imports.plan(reg.root, importer, data, {}, packet="fam/pkt")
    runs = {Path(p).stem: json.loads(c) for p, c in planned.files.items() if "/measurements/" in p}
    assert runs["runs-csv-second"]["metrics"] == {"decode_tok_s": [51.9]}
    result = evreg("import", "mylab-csv", str(data), "--packet", "fam/pkt", "--format", "json", cwd=reg.root)
    # the rule runs on what the import would write, and only it objects: the import is refused, nothing written
    assert result.returncode == 1 and "nothing was written" in result.stderr, result.stdout + result.stderr
    found = json.loads(result.stdout)["findings"]
    assert {f["code"] for f in found} == {"mylab-no-hardware"}
    assert {f["file"] for f in found} >= {f"{F}/pkt/measurements/runs-csv-first.json"}
    assert not list((reg.root / f"{F}/pkt/measurements").glob("runs-csv-*.json"))
    report = validate_json(reg.root)
    assert "Why:" in evreg("explain", "mylab-no-hardware").stdout
    tally = evreg("validate", "--format", "tally", cwd=reg.root)
    assert tally.stdout.strip() == f"{report['summary']['errors']} errors"
