"""Security controls (site/security.md), each attacked by the class of input it stops:
the query sandbox, evidence and site-file containment, linear-time text scans, and
"validate clean => build succeeds". Hostile record text in a real browser is in
acceptance/test_browser.py."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evreg.catalog import build as catalog
from evreg.check import rules
from evreg.claims import citations, figures
from evreg.cli.main import cli
from evreg.core import jsonio
from evreg.core.layout import DEFAULT_DB
from evreg.devtools.bench import ADVERSARIAL, adversarial_text
from evreg.store import load
from helpers import EVIDENCE, REPO, F, Reg, evreg, only, own_evidence, validate_then_build  # noqa: F401


def run_cli(*args: str, root: Path) -> tuple[int, str, str]:
    """The CLI in process (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# -- 3. evreg query is read-only in fact -------------------------------------------------------


@pytest.fixture(scope="module")
def catalog_reg(tmp_path_factory: pytest.TempPathFactory) -> Reg:
    reg = Reg(tmp_path_factory.mktemp("query") / "reg")
    reg.commit("initial registry")
    code, out, err = run_cli("catalog", root=reg.root)
    assert code == 0, out + err
    return reg


OUTSIDE = "/tmp/evreg-query-escape"
ATTACKS = {
    "copy to a file": f"COPY (SELECT 1) TO '{OUTSIDE}.csv'",
    "export the database": f"EXPORT DATABASE '{OUTSIDE}-dir'",
    "attach another database": f"ATTACH '{OUTSIDE}.duckdb' AS other",
    "read a csv outside": "SELECT * FROM read_csv('/etc/passwd')",
    "read text outside": "SELECT * FROM read_text('/etc/hostname')",
    "read a blob outside": "SELECT * FROM read_blob('/etc/hostname')",
    "list files": "SELECT * FROM glob('/etc/*')",
    "a file as a table": "SELECT * FROM '/etc/passwd'",
    "the network": "SELECT * FROM 'https://example.com/x.csv'",
    "install an extension": "INSTALL httpfs",
    "load an extension": "LOAD httpfs",
    "re-enable file access": "SET enable_external_access = true",
    "unlock by reset": "RESET enable_external_access",
    "more threads": "SET threads = 64",
    "a write": "CREATE TABLE x AS SELECT 1",
    "a second statement": "SELECT 1; COPY (SELECT 1) TO '/tmp/evreg-query-escape.csv'",
    "a pragma": "PRAGMA version",
    "a call": "CALL pragma_version()",
    "a checkpoint": "CHECKPOINT",
}


@pytest.mark.parametrize("name", ATTACKS)
def test_query_refuses_everything_but_reading_the_catalog(catalog_reg: Reg, name: str) -> None:
    code, out, err = run_cli("query", ATTACKS[name], root=catalog_reg.root)
    assert code == 1, (name, out, err)
    assert out == "" and err.startswith(("query refused:", "query failed:")), err
    assert "Traceback" not in err
    assert not [n for n in os.listdir("/tmp") if n.startswith("evreg-query-escape")]  # nothing written
    assert not any(Path(p).exists() for p in (f"{OUTSIDE}.csv", f"{OUTSIDE}-dir", f"{OUTSIDE}.duckdb"))


def test_query_still_answers_read_only_sql(catalog_reg: Reg) -> None:
    code, out, _ = run_cli(
        "query",
        "WITH s AS (SELECT * FROM samples) SELECT count(*) AS n FROM s",
        "--format",
        "csv",
        root=catalog_reg.root,
    )
    assert (code, out) == (0, "n\n2\n")
    assert run_cli("query", "DESCRIBE samples", root=catalog_reg.root)[0] == 0


def test_query_is_stopped_after_its_time_bound(catalog_reg: Reg) -> None:
    import duckdb

    db = catalog_reg.root / DEFAULT_DB
    started = time.monotonic()
    with pytest.raises(duckdb.InterruptException):
        catalog.query(db, "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3", timeout=0.5)
    assert time.monotonic() - started < 20


@pytest.mark.slow
def test_query_memory_is_bounded(catalog_reg: Reg) -> None:
    import duckdb

    db = catalog_reg.root / DEFAULT_DB
    with pytest.raises(duckdb.OutOfMemoryException):
        catalog.query(db, "SELECT list(range) FROM range(400000000)")


# -- 4. every scan over text is linear ---------------------------------------------------------

EXPECTED = {  # the finding each hostile pattern must produce (capped), if any
    "unclosed braces": "citation-unresolved",
    "unclosed citations": "citation-unresolved",
    "many bad citations": "citation-unresolved",
    "many figures": "orphan-number",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ADVERSARIAL)
def test_adversarial_records_validate_in_linear_time(reg: Reg, name: str) -> None:
    """A record of a quarter of the 8 MiB limit, made of one hostile pattern, validates in seconds
    (quadratic scans took 104 s for 120 KB of unclosed braces; `evreg bench` times the limit itself). The
    bound is generous: it tells linear from quadratic, not fast from slow. On a machine slow enough to pass
    it, the time is compared with that of an eighth of the record instead: linear work takes at most about
    eight times as long, quadratic sixty-four."""
    code = EXPECTED.get(name)
    size = jsonio.MAX_RECORD_BYTES // 4
    elapsed, findings = _validated(reg, adversarial_text(ADVERSARIAL[name], size))
    if elapsed >= 15:
        eighth, _ = _validated(reg, adversarial_text(ADVERSARIAL[name], size // 8))
        assert elapsed < 24 * eighth, f"{name}: {elapsed:.1f} s, an eighth of it {eighth:.1f} s"
    assert not only(findings, "internal-error") and not only(findings, "file-too-large")
    if code:
        hits = only(findings, code)
        # capped: the first few findings of the field, then one that counts the rest
        assert 1 <= len(hits) <= 21 and (len(hits) < 21 or "more" in hits[-1].message), len(hits)
    else:
        assert not only(findings, "citation-unresolved") and not only(findings, "orphan-number")


def _validated(reg: Reg, text: str) -> tuple[float, list[Any]]:
    """The seconds a validation of the fixture registry takes with ``text`` as a run's caveat, and its findings."""
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(caveat=text))
    assert (reg.root / f"{F}/pkt/measurements/run-1.json").stat().st_size <= jsonio.MAX_RECORD_BYTES
    started = time.monotonic()
    findings = rules.run(load(reg.root), rules.discover()).findings
    return time.monotonic() - started, findings


def test_brace_scan_matches_the_shortest_spans_and_reports_an_unclosed_one() -> None:
    text = "a {{ x }} b {{ y {{ z }} c {{ open"
    assert list(citations.brace_spans(text)) == [(2, 9), (12, 24), (27, -1)]
    errors = [str(c) for c in citations.parse(text)]
    assert len(errors) == 3 and "unclosed" in errors[-1]
    assert [f.text for f in figures.find_figures("{{ 52.3 tok/s")] == ["52.3 tok/s"]  # unclosed hides nothing


# -- validate clean => build succeeds ------------------------------------------------------------

metric_names = st.sampled_from(["decode_tok_s", "ttft_ms", "prefill_tok_s", "draft_acceptance_rate"]) | st.from_regex(
    citations.METRIC_NAME, fullmatch=True
)
numbers = st.floats(-2e15, 2e15, allow_nan=False) | st.sampled_from([0.0, 5e-324, 1e15, -1e15, 1e-300])
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@st.composite
def registry_edits(draw: st.DrawFn) -> dict[str, Any]:
    """Values for the fixture registry's records, drawn from (and beyond) what the models allow."""
    run_metrics = draw(st.dictionaries(metric_names, st.lists(numbers, min_size=1, max_size=3), min_size=1, max_size=3))
    run_metrics.setdefault("decode_tok_s", draw(st.lists(numbers, min_size=1, max_size=3)))
    point_keys = draw(st.lists(metric_names, min_size=1, max_size=3, unique=True))
    points = draw(
        st.lists(st.fixed_dictionaries({"x": numbers, **{k: numbers for k in point_keys}}), min_size=1, max_size=6)
    )
    return {
        "metrics": run_metrics,
        "points": points,
        "view_metrics": draw(st.lists(metric_names, min_size=1, max_size=2)),
        "texts": draw(st.lists(texts, min_size=6, max_size=6)),
        "log": draw(st.booleans()),
        "discrete": draw(st.booleans()),
    }


def _apply(reg: Reg, e: dict[str, Any]) -> None:
    label, x_label, title, axis, summary, caveat = e["texts"]
    own = own_evidence(reg, "run-1-edited", {"metrics": e["metrics"]})  # a run's evidence holds its samples
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(metrics=e["metrics"], caveat=caveat, **own))
    reg.edit(f"{F}/measurements/sweep-1.json", lambda d: d.update(points=e["points"], axis=axis or "x"))
    reg.edit(
        f"{F}/views/tp-view.json",
        lambda d: d.update(
            metrics=e["view_metrics"],
            title=title or "t",
            x_label=x_label,
            x_scale="log" if e["log"] else "linear",
            discrete=e["discrete"],
            series=[
                {"label": label or "s", "measurement_ids": ["run-1"], "x_from": "config.tp"},
                {"label": "sweep", "measurement_ids": ["sweep-1"]},
            ],
        ),
    )
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(summary=summary, label=label or "p"))


@settings(
    max_examples=int(os.environ.get("EVREG_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(registry_edits())
@example(  # a range so tiny that its ticks round to zero (a division by zero)
    {
        "metrics": {"decode_tok_s": [0.0], "ttft_ms": [1e-300]},
        "points": [{"x": 0.0, "decode_tok_s": 0.0}],
        "view_metrics": ["ttft_ms"],
        "texts": [""] * 6,
        "log": False,
        "discrete": False,
    }
)
def test_a_registry_that_validates_clean_always_renders(tmp_path_factory: pytest.TempPathFactory, e: Any) -> None:
    """validate clean => every page renders, with no figure outside the citation path and every
    chart point inside its plot (the build's own checks, run on the renderer in process)."""
    from evreg.claims.markdown import html_figures as orphans_in_html
    from evreg.site.charts import BOTTOM, LEFT, RIGHT, TOP, H, W
    from evreg.site.cite import Pages
    from evreg.site.pages import render_pages

    reg = _property_registry(tmp_path_factory)
    _apply(reg, e)
    registry = load(reg.root)
    report = rules.run(registry, rules.discover())
    assert not only(report.findings, "internal-error")
    if report.errors():
        CLEAN["invalid"] += 1
        return  # the property is about what validate accepts
    CLEAN["valid"] += 1
    db = reg.root / "build" / "p.duckdb"
    catalog.build(registry, report.findings, {}, db, {"schema_version": "1"})
    for path, page in render_pages(Pages(db)).items():
        assert orphans_in_html(page.html) == [], path
        charted = "".join(re.findall(r'<svg class="evreg-chart".*?</svg>', page.html, re.S))  # not legend marks
        for cx, cy in re.findall(r'<circle cx="([-\d.e+]+)" cy="([-\d.e+]+)"', charted):
            assert LEFT - 0.1 <= float(cx) <= W - RIGHT + 0.1 and TOP - 0.1 <= float(cy) <= H - BOTTOM + 0.1, path


_PROPERTY: dict[str, Reg] = {}
CLEAN = {"valid": 0, "invalid": 0}


def _property_registry(factory: pytest.TempPathFactory) -> Reg:
    if "reg" not in _PROPERTY:
        _PROPERTY["reg"] = Reg(factory.mktemp("property") / "reg")
    return _PROPERTY["reg"]


@pytest.mark.slow
def test_validate_clean_implies_build_succeeds_end_to_end(reg: Reg) -> None:
    """The same property through the real CLI and MkDocs, on the extremes the models allow."""
    _site(reg)
    _apply(
        reg,
        {
            # the extremes the models and the plausibility bounds allow (a throughput is above 0, at most 1e7)
            "metrics": {"decode_tok_s": [1e7, 5e-324, 123.456], "z_9": [0.0, -1e15, 1e15]},
            "points": [{"x": -1e15, "decode_tok_s": 1e7}, {"x": 1e15, "decode_tok_s": 5e-324}],
            "view_metrics": ["decode_tok_s", "z_9"],
            "texts": ["</svg><script>", "x & y", "<title>", "a\u200bb", "", "plain"],
            "log": True,
            "discrete": False,
        },
    )
    code, out, err = run_cli("validate", root=reg.root)
    assert code == 0, out
    code, out, err = run_cli("build", root=reg.root)
    assert code == 0, out + err


# -- 2. the build publishes only the repository's own files --------------------------------------


def _site(reg: Reg) -> None:
    import shutil

    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    (reg.root / "site/assets").mkdir(exist_ok=True)  # the stylesheet itself comes from the package


SITE_ATTACKS = {
    "symlink to a system file": lambda root: os.symlink("/etc/hostname", root / "site/assets/host.txt"),
    "symlink to the environment": lambda root: os.symlink("/proc/self/environ", root / "site/env.md"),
    "symlink into .git": lambda root: os.symlink(root / ".git/config", root / "site/assets/config.txt"),
    "relative symlink out": lambda root: os.symlink("../../../../etc/hostname", root / "site/assets/h.txt"),
    "symlinked folder": lambda root: os.symlink("/etc", root / "site/etc"),
    "symlink to a repository file": lambda root: os.symlink(root / "packets/fam/family.json", root / "site/f.json"),
    "a fifo": lambda root: os.mkfifo(root / "site/assets/pipe"),
    "a .git folder under site": lambda root: (root / "site/.git").mkdir() or (root / "site/.git/x").write_text("x"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", SITE_ATTACKS)
def test_files_under_site_that_are_not_regular_files_are_refused(reg: Reg, name: str) -> None:
    _site(reg)
    SITE_ATTACKS[name](reg.root)
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "site-file-unsafe")
    assert len(findings) == 1 and findings[0].file.startswith("site/"), findings
    code, out, err = run_cli("build", root=reg.root)  # the build refuses on its own, even past validation
    assert code == 1 and "site-file-unsafe" in out, out + err
    assert not (reg.root / "build/site").exists()
    from evreg.site.build import build_site

    refused = build_site(reg.root, reg.root / "x.duckdb", reg.root / "d", reg.root / "build/site").findings
    assert [f.code for f in refused] == ["site-file-unsafe"] and not (reg.root / "build/site").exists()


def test_the_build_refuses_a_docs_dir_outside_site(reg: Reg) -> None:
    from evreg.site.build import build_site

    _site(reg)
    (reg.root / "elsewhere").mkdir()
    text = (reg.root / "mkdocs.yml").read_text().replace("docs_dir: site", "docs_dir: elsewhere")
    (reg.root / "mkdocs.yml").write_text(text)
    refused = build_site(reg.root, reg.root / "x.duckdb", reg.root / "d", reg.root / "build/site").findings
    assert [(f.code, f.file) for f in refused] == [("site-config-unsafe", "mkdocs.yml")]


@pytest.mark.slow
def test_a_clean_site_folder_builds(reg: Reg) -> None:
    _site(reg)
    assert not only(rules.run(load(reg.root), rules.discover()).findings, "site-file-unsafe")
    code, out, err = run_cli("build", root=reg.root)
    assert code == 0, out + err


# -- 2. evidence stays inside the repository's own files ----------------------------------------

EVIDENCE_ATTACKS = {
    "the git config": ".git/config",
    "git in another case": ".GIT/config",
    "git below a folder": "packets/.git/config",
    "mercurial": ".hg/hgrc",
    "absolute": "/etc/hostname",
    "climbing out": "packets/../../etc/hostname",
    "home": "~/.ssh/id_rsa",
    "windows drive": "C:/Windows/win.ini",
}


@pytest.mark.parametrize("name", EVIDENCE_ATTACKS)
def test_evidence_paths_outside_the_repositorys_own_files_are_refused(reg: Reg, name: str) -> None:
    path = EVIDENCE_ATTACKS[name]
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(evidence=path, evidence_sha256={}))
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "evidence-escape")
    assert [f.pointer for f in findings] == ["/evidence"], findings


def test_a_symlink_into_git_is_not_evidence_and_is_never_read(reg: Reg) -> None:
    link = reg.root / F / "pkt/evidence/cfg.json"
    os.symlink(reg.root / ".git/config", link)
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(evidence=f"{F}/pkt/evidence/cfg.json"))
    registry = load(reg.root)
    assert [f.pointer for f in only(rules.run(registry, rules.discover()).findings, "evidence-escape")] == ["/evidence"]
    with pytest.raises(PermissionError):
        registry.read_file(f"{F}/pkt/evidence/cfg.json")  # hashing it is refused too
    # and in a commit's tree
    reg.commit("a symlink into .git")
    committed = load(reg.root, reg.repo.head.commit.hexsha)
    assert [f.pointer for f in only(rules.run(committed, rules.discover()).findings, "evidence-escape")] == [
        "/evidence"
    ]


@pytest.mark.parametrize("path", ["../outside.json", "/etc/passwd", "a/../../b.json", ".git/config"])
def test_external_source_paths_must_be_plain_relative_paths(reg: Reg, path: str) -> None:
    reg.edit(f"{F}/family.json", lambda d: d.update(sources={"lab": {"repository": "https://example.org/lab"}}))
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(manifest=f"lab:{path}"))
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "evidence-escape")
    assert [f.pointer for f in findings] == ["/manifest"], findings
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(manifest="lab:results/run.json"))
    assert not only(rules.run(load(reg.root), rules.discover()).findings, "evidence-escape")


def test_query_results_and_memory_are_bounded_in_the_cli(catalog_reg: Reg) -> None:
    code, _, err = run_cli("query", "SELECT * FROM range(30000000)", root=catalog_reg.root)
    assert code == 1 and "more than 100,000 rows" in err
    code, _, err = run_cli("query", "SELECT length(repeat(repeat('a', 1000000), 3000))", root=catalog_reg.root)
    assert code == 1 and "Out of Memory" in err  # the process address-space bound, not the host's memory


# -- the site configuration cannot run code -------------------------------------------------------

MARKER = "/tmp/evreg-config-pwned"
CONFIG_ATTACKS = {
    "hooks": ("hooks:\n  - evil.py\n", "setting 'hooks'"),
    "python tag": (f'extra_css:\n  - !!python/object/apply:os.system ["touch {MARKER}"]\n', "not plain YAML"),
    "environment": ("site_author: !ENV [HOME, x]\n", "not plain YAML"),
    "a plugin": ("plugins:\n  - search\n  - macros\n", "plugin 'macros'"),
    "a file-including extension": ("markdown_extensions:\n  - pymdownx.snippets:\n      base_path: /\n", "snippets"),
    "theme templates": ("theme:\n  name: material\n  custom_dir: /etc\n", "custom_dir"),
    "page script": ("extra_javascript:\n  - https://evil.example/x.js\n", "extra_javascript"),
    "analytics": ("extra:\n  analytics:\n    provider: google\n", "setting 'extra'"),
    "outside stylesheet": ("extra_css:\n  - https://evil.example/x.css\n", "scheme"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", CONFIG_ATTACKS)
def test_a_site_configuration_that_could_run_code_is_refused_unread(reg: Reg, name: str) -> None:
    text, why = CONFIG_ATTACKS[name]
    _site(reg)
    (reg.root / "evil.py").write_text(f"import pathlib\npathlib.Path({MARKER!r}).touch()\n")
    config = reg.root / "mkdocs.yml"
    kept = "\n".join(
        line for line in config.read_text().splitlines() if not line.startswith(("extra_css", "  - assets"))
    )
    config.write_text(kept + "\n" + text if name in ("python tag", "outside stylesheet") else config.read_text() + text)
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "site-config-unsafe")
    assert findings and any(why in f.message for f in findings), findings
    code, out, _ = run_cli("build", root=reg.root)
    assert code == 1 and "site-config-unsafe" in out
    assert not Path(MARKER).exists() and not (reg.root / "build/site").exists()


@pytest.mark.parametrize(
    "extensions",
    [
        'markdown_extensions:\n  - toc:\n      permalink: " 52.3 tok/s"\n  - toc\n',  # named again, without options
        'markdown_extensions:\n  toc:\n    permalink: " 52.3 tok/s"\n',  # a mapping, which MkDocs takes too
    ],
)
def test_extension_options_are_read_as_mkdocs_reads_them(reg: Reg, extensions: str) -> None:
    """A page is checked as MkDocs renders it: an option the build would show (a heading's permalink text) is seen."""
    _site(reg)
    config = reg.root / "mkdocs.yml"
    config.write_text(re.sub(r"(?ms)^markdown_extensions:\n(?:  .*?\n)*", "", config.read_text()) + extensions)
    reg.put("site/notes.md", "# Notes\n\n## Part\n\nText.\n")
    found = only(rules.run(load(reg.root), rules.discover()).findings, "orphan-number")
    assert any(f.file == "site/notes.md" and "52.3 tok/s" in f.message for f in found), found


# -- hand-written pages run no script -------------------------------------------------------------


@pytest.mark.parametrize(
    "html",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "[x](javascript:alert(1))",
        '<iframe src="https://evil.example/"></iframe>',
        '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>',
        "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    ],
)
def test_hand_written_pages_may_not_hold_script(reg: Reg, html: str) -> None:
    _site(reg)
    page = reg.root / "site/contributing.md"
    page.write_text(page.read_text() + f"\nSee {html} here.\n\n```\n{html} in a code block is text\n```\n")
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "site-html-unsafe")
    assert len(findings) >= 1 and {f.file for f in findings} == {"site/contributing.md"}
    assert all(f.line == len(page.read_text().splitlines()) - 4 for f in findings)  # not the code block


# -- strings are text -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\uDBFFb"])
def test_a_lone_surrogate_escape_is_a_syntax_finding_not_a_crash(reg: Reg, escape: str) -> None:
    path = reg.root / f"{F}/pkt/measurements/run-1.json"
    path.write_text(path.read_text().replace('"workload": "', f'"workload": "{escape}'))
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "json-syntax")
    assert [(f.file, f.pointer) for f in findings] == [(f"{F}/pkt/measurements/run-1.json", "/workload")]
    code, _, err = run_cli("catalog", root=reg.root)
    assert code == 0, err  # the record is left out of the catalog, not a crash
    path.write_text(path.read_text().replace(escape, "\\ud83d\\ude00"))  # a full pair is text
    assert not only(rules.run(load(reg.root), rules.discover()).findings, "json-syntax")


# -- GitHub annotations: property values cannot break out ----------------------------------------


def test_github_annotation_properties_round_trip_commas_colons_and_newlines() -> None:
    from urllib.parse import unquote

    from evreg.check.reporters import GitHub
    from evreg.core import codes

    nasty = "packets/f,a:b/x%y\nz.json"
    finding = codes.SCHEMA.at(nasty, "/a", "bad: a,b\nnext", line=3, column=4)
    [line] = GitHub().lines([finding], {"errors": 1, "warnings": 0})
    head, message = line[len("::error ") :].split("::", 1)
    props = dict(p.split("=", 1) for p in head.split(","))  # commas delimit properties: none leaks from values
    assert set(props) == {"file", "line", "col", "title"}
    assert unquote(props["file"]) == nasty and (props["line"], props["col"]) == ("3", "4")
    assert "\n" not in line and unquote(message).startswith("bad: a,b\nnext")


@pytest.mark.slow
def test_paths_in_imported_lab_data_are_held_to_the_same_containment(empty_repo: Path) -> None:
    from helpers import LAB_MANIFEST

    manifest = json.loads(LAB_MANIFEST.read_text())
    manifest["run_measurements"][0]["evidence"] = "../../etc/passwd"
    manifest["packets"][0]["manifest"] = "/etc/hostname"
    evil = empty_repo / "evil.json"
    evil.write_text(json.dumps(manifest))
    run_cli("import", "neural-download", str(evil), root=empty_repo)
    escapes = only(rules.run(load(empty_repo), rules.discover()).findings, "evidence-escape")
    assert sorted(f.pointer for f in escapes) == ["/evidence", "/manifest"], escapes
    assert all("neural-download" in f.message for f in escapes)


@pytest.mark.parametrize(
    "html",
    [
        '<span class="evreg-cite">52.3 tok/s</span>',
        "<a class='x evreg-cite' href='#'>52.3 tok/s</a>",
        '<mark class="evreg-orphan">52.3</mark>',
        "<span class=evreg-unresolved>1</span>",
    ],
)
def test_only_the_renderer_makes_citation_markup(reg: Reg, html: str) -> None:
    _site(reg)
    page = reg.root / "site/contributing.md"
    page.write_text(page.read_text() + f"\nOur best: {html}\n")
    findings = only(rules.run(load(reg.root), rules.discover()).findings, "citation-forged")
    assert [f.file for f in findings] == ["site/contributing.md"]


@pytest.mark.slow
def test_accepted_findings_are_counted_not_listed_and_never_annotated() -> None:

    accepted = len(json.loads((REPO / "packets/baseline.json").read_text())["entries"])
    code, out, _ = run_cli("validate", "--no-cache", root=REPO)
    assert code == 0 and out.count("\n") == 1 and f"{accepted} baselined" in out and "--show-baselined" in out
    code, out, _ = run_cli("validate", "--show-baselined", root=REPO)
    assert code == 0 and out.count("(baselined)") == accepted
    code, out, _ = run_cli("validate", "--format", "github", root=REPO)
    assert code == 0 and out == ""  # nothing to act on: no annotations


# -- validate clean => build succeeds, on hostile shapes of record text ------------------------------------------------


RUN = f"{F}/pkt/measurements/run-1.json"


@pytest.mark.parametrize(
    "plant",
    [
        lambda d: d["config"].__setitem__("250 tok/s", True),  # a figure as an object key
        lambda d: d.__setitem__("speed_evidence", "https://example.org/run?d=250 tok/s"),  # *_evidence URL
    ],
    ids=["figure-as-config-key", "evidence-suffix-url"],
)
def test_validate_clean_implies_build_succeeds(reg: Reg, tmp_path: Path, plant: Any) -> None:
    reg.edit(RUN, plant)
    reg.commit("plant")
    errors, built = validate_then_build(reg, tmp_path)
    assert errors or built.returncode == 0, built.stdout + built.stderr
