"""``fmt --check --base REV`` reads the record files a change adds or modifies (committed or not, renamed or
copied ones too) and no other, since REV's own were checked by its CI; it reads every file when the change could
make an untouched file non-canonical: git attributes, the rule set's code and configuration, or an evreg that is
not REV's. And one validation writes the annotations and the job summary (``--format FORMAT=FILE``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evreg.core.codebase import EVREG, IN_REPOSITORY, sources
from evreg.core.jsonio import canonical
from helpers import EVIDENCE, F, Reg, evreg

RUN = f"{F}/pkt/measurements/run-1.json"
SWEEP = f"{F}/measurements/sweep-1.json"
VIEW = f"{F}/views/tp-view.json"
MALFORMED = f"{F}/views/broken.json"


def misformat(reg: Reg, path: str) -> bytes:
    """Rewrite the record at ``path`` with its keys unsorted and 4-space indent (the same data, not canonical)."""
    data = reg.read(path)
    text = json.dumps(dict(reversed(list(data.items()))), indent=4).encode()
    reg.raw(path, text)
    assert text != canonical(data).encode()
    return text


def base_with_defects(reg: Reg) -> str:
    """A base holding a non-canonical record and a malformed one: were either read, ``fmt --check`` would say so
    (a base that its CI checked has neither; these prove what is not read). Committed; the base's sha."""
    misformat(reg, VIEW)
    reg.raw(MALFORMED, b'{"kind": "view", "id": ')
    base = reg.commit("base with files fmt would refuse")
    whole = evreg("fmt", "--check", cwd=reg.root)
    assert whole.returncode == 1 and VIEW in whole.stdout and "json-syntax" in whole.stdout
    return base


def test_a_misformatted_file_of_the_change_is_found_and_nothing_outside_it_is_read(reg: Reg) -> None:
    base = base_with_defects(reg)
    reg.repo.git.checkout("-q", "-b", "change")
    misformat(reg, RUN)
    reg.commit("the change edits a run")
    added = f"{F}/pkt/measurements/run-2.json"
    run2 = reg.read(RUN) | {"id": "run-2"}
    reg.raw(added, json.dumps(run2).encode())  # not committed: the work tree counts too
    done = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert done.returncode == 1, done.stdout
    assert f"would reformat {RUN}" in done.stdout and f"would reformat {added}" in done.stdout
    assert VIEW not in done.stdout and "broken" not in done.stdout and "json-syntax" not in done.stdout
    assert f"2 record files checked: those the change adds or modifies; the others are unchanged since {base[:12]}" in (
        done.stdout
    )
    # ``fmt --base`` rewrites the change's files and leaves the others as they are.
    assert evreg("fmt", "--base", base, cwd=reg.root).returncode == 0
    assert (reg.root / RUN).read_text() == canonical(reg.read(RUN)) and (reg.root / VIEW).read_text() != canonical(
        reg.read(VIEW)
    )
    clean = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert clean.returncode == 0 and "the record files of the change are canonical" in clean.stdout


def test_a_change_without_record_files_reads_none(reg: Reg) -> None:
    base = base_with_defects(reg)
    reg.raw("site/about.md", b"# About\n")
    (reg.root / EVIDENCE).write_bytes(b'{"decode_tok_s": [30.2]}')  # an evidence file is not a record
    done = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert done.returncode == 0 and "0 record files checked: those the change adds" in done.stdout, done.stdout


def test_fmt_loads_neither_duckdb_nor_the_catalogs_builder(reg: Reg) -> None:
    """``fmt --check`` runs twice in every pull request's CI: it reads and writes record files, and starts without
    the catalog's builder (SQLAlchemy, SQLModel) or DuckDB, half of its start-up."""
    base = reg.commit("base")
    misformat(reg, RUN)
    probe = (
        "import sys; from evreg.cli.main import main\n"
        f"sys.argv = ['evreg', 'fmt', '--check', '--base', {base!r}]\n"
        "try: main()\n"
        "except SystemExit as stop: print(stop.code)\n"
        "heavy = ('duckdb', 'sqlalchemy', 'sqlmodel', 'evreg.catalog.build')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=reg.root, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-2:] == ["1", "[]"], done.stdout + done.stderr
    assert RUN in done.stdout


def test_a_malformed_file_of_the_change_is_refused(reg: Reg) -> None:
    base = reg.commit("base")
    reg.raw(f"{F}/views/new.json", b'{"kind": "view", "id": "new", "id": "x"}')
    done = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert done.returncode == 1 and "json-duplicate-key" in done.stdout and "1 record files checked" in done.stdout


@pytest.mark.parametrize("how", ["rename", "copy"])
def test_a_file_renamed_or_copied_without_change_counts_as_changed(reg: Reg, how: str) -> None:
    base = base_with_defects(reg)
    target = f"{F}/views/tp-view-2.json"
    if how == "rename":
        reg.repo.git.mv(VIEW, target)
    else:
        shutil.copyfile(reg.root / VIEW, reg.root / target)
    reg.commit(f"{how} a view")
    done = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert done.returncode == 1 and f"would reformat {target}" in done.stdout, done.stdout
    assert f"would reformat {VIEW}\n" not in done.stdout and "json-syntax" not in done.stdout


@pytest.mark.parametrize(
    "path",
    [
        ".gitattributes",
        f"{F}/.gitattributes",
        "pyproject.toml",
        f"{IN_REPOSITORY}/core/jsonio.py",
        "validators/evreg_rules/history.py",
        ".github/workflows/pull-request.yml",
    ],
)
def test_a_change_to_what_formats_or_what_a_checkout_writes_checks_every_file(reg: Reg, path: str) -> None:
    base = base_with_defects(reg)
    reg.raw(path, b"# changed\n")
    reg.commit("a change to the code or configuration")
    done = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert done.returncode == 1 and f"would reformat {VIEW}" in done.stdout and "json-syntax" in done.stdout
    said = done.stdout.splitlines()[-1]
    assert "record files checked: all of them, since the change edits " in said and path in said


def test_attributes_that_rewrite_the_checkout_are_caught(reg: Reg) -> None:
    """A change that only adds ``eol=crlf`` for JSON: git lists no record as changed, yet a checkout writes every
    record with CRLF line ends, which is not canonical."""
    base = reg.commit("base")
    reg.raw(".gitattributes", b"*.json text eol=crlf\n")
    reg.commit("line ends")
    (reg.root / RUN).unlink()
    reg.repo.git.checkout("--", RUN)  # as a fresh checkout writes it
    assert b"\r\n" in (reg.root / RUN).read_bytes()
    assert RUN not in reg.repo.git.diff("--name-only", base)
    done = evreg("fmt", "--check", "--base", base, cwd=reg.root)
    assert done.returncode == 1 and f"would reformat {RUN}" in done.stdout, done.stdout


def _repository_with_this_evreg(reg: Reg) -> None:
    """Put the running evreg's modules and data files where evreg's own repository keeps them."""
    for file in sources():
        if EVREG in file.parents:
            target = reg.root / IN_REPOSITORY / file.relative_to(EVREG)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)


def test_the_code_that_runs_decides_whether_every_file_is_read(reg: Reg) -> None:
    """In a repository that holds evreg's code, a base whose code is the running evreg's is trusted as checked by
    it; a base with other code (a formatter that may differ) is not, even when the change touches no code."""
    _repository_with_this_evreg(reg)
    same = base_with_defects(reg)
    reg.put(f"{F}/views/v2.json", reg.read(VIEW) | {"id": "v2"})  # canonical
    scoped = evreg("fmt", "--check", "--base", same, cwd=reg.root)
    assert scoped.returncode == 0 and "1 record files checked: those the change adds" in scoped.stdout, scoped.stdout
    jsonio = reg.root / IN_REPOSITORY / "core" / "jsonio.py"
    jsonio.write_text(jsonio.read_text() + "\n# another formatter\n")
    older = reg.commit("a base whose code is not the running evreg")
    reg.put(f"{F}/views/v3.json", reg.read(VIEW) | {"id": "v3"})
    reg.commit("a change of data only")
    done = evreg("fmt", "--check", "--base", older, cwd=reg.root)
    assert done.returncode == 1 and f"would reformat {VIEW}" in done.stdout, done.stdout
    assert f"all of them, since the running evreg is not the code of {older[:12]}" in done.stdout
    assert f"({IN_REPOSITORY}/core/jsonio.py differs)" in done.stdout


def test_an_unknown_base_is_a_usage_error(reg: Reg) -> None:
    done = evreg("fmt", "--check", "--base", "no-such-rev", cwd=reg.root)
    assert done.returncode == 2 and "names no commit" in done.stderr and "Traceback" not in done.stderr + done.stdout


def test_one_validation_writes_the_annotations_and_the_job_summary(reg: Reg, tmp_path: Path) -> None:
    base = reg.commit("base")
    reg.edit(VIEW, lambda v: v.update(title="Decode 52.3 tok/s by TP"))  # an orphan number: a finding
    reg.commit("the change")
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    args = ("validate", "--no-cache", "--base", base, "--format")
    both = evreg(*args, "github", "--format", f"summary={summary}", cwd=reg.root)
    github = evreg(*args, "github", cwd=reg.root)
    alone = evreg(*args, "summary", cwd=reg.root)
    assert both.returncode == github.returncode == 1
    assert both.stdout == github.stdout and "::error" in both.stdout
    assert summary.read_text() == "earlier step\n" + alone.stdout  # appended, as a job summary file is
    assert "orphan-number" in alone.stdout
    twice = evreg("validate", "--format", "github", "--format", "summary", cwd=reg.root)
    assert twice.returncode == 2 and "would both go to standard output" in twice.stderr
    unwritable = evreg("validate", "--format", f"summary={tmp_path / 'no-such-dir' / 's.md'}", cwd=reg.root)
    assert unwritable.returncode == 2 and "cannot write the summary output to" in unwritable.stderr
