"""The command line: ``fmt`` canonicalises and refuses what it cannot read, ``validate``'s formats, exit codes and
path filters, ``schema`` writes and checks, ``--root`` before or after the command, no traceback on garbage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evreg.core.jsonio import canonical
from helpers import F, Reg, evreg

RUN = f"{F}/pkt/measurements/run-1.json"


def test_fmt_canonicalizes_keeps_unknown_fields_and_is_idempotent(reg: Reg) -> None:
    data = reg.read(RUN)
    data["zz_unknown"] = {"b": 1, "a": [3, 1.0, "x"]}
    (reg.root / RUN).write_text(json.dumps(data, indent=4))  # not canonical
    checked = evreg("fmt", "--check", cwd=reg.root)
    assert checked.returncode == 1 and RUN in checked.stdout
    assert json.loads((reg.root / RUN).read_text()) == data  # --check changes nothing
    assert evreg("fmt", cwd=reg.root).returncode == 0
    text = (reg.root / RUN).read_text()
    assert text == canonical(data) and json.loads(text) == data
    assert '"a": [\n      3,\n      1.0,' in text  # 1.0 stays a float
    again = evreg("fmt", "--check", cwd=reg.root)
    assert again.returncode == 0, again.stdout


def test_fmt_refuses_unreadable_files_and_leaves_them_alone(reg: Reg) -> None:
    reg.raw(RUN, b'{"id": "run-1", "id": "x"}')
    result = evreg("fmt", cwd=reg.root)
    assert result.returncode == 1 and "json-duplicate-key" in result.stdout
    assert (reg.root / RUN).read_bytes() == b'{"id": "run-1", "id": "x"}'


def test_validate_formats_and_exit_codes(reg: Reg) -> None:
    ok = evreg("validate", "--format", "json", cwd=reg.root, process=True)  # the console script itself
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["summary"]["errors"] == 0
    reg.edit(RUN, lambda d: d.update(artifact_id="art-b"))
    bad = evreg("validate", "--format", "json", cwd=reg.root, process=True)
    assert bad.returncode == 1
    # the run's own finding (the fixture matrix's cell that cites the run now selects another artifact too)
    # and, filed in the packet's folder, it is no longer of the packet's scope
    found = {x["code"]: x for x in json.loads(bad.stdout)["findings"] if x["file"] == RUN}
    assert set(found) == {"artifact-mismatch", "sideways-promotion"}
    f = found["artifact-mismatch"]
    assert f["pointer"] == "/artifact_id" and found["sideways-promotion"]["pointer"] == "/artifact_id"
    assert f["line"] and f["column"] and f["hint"] and f["record"] == {"kind": "run-measurement", "id": "run-1"}
    gh = evreg("validate", "--format", "github", cwd=reg.root)
    assert any(
        line.startswith(f"::error file={RUN},line={f['line']},col={f['column']},title=artifact-mismatch::")
        for line in gh.stdout.splitlines()
    )
    human = evreg("validate", cwd=reg.root)
    assert f"{RUN}:{f['line']}:{f['column']}: error [artifact-mismatch]" in human.stdout
    assert evreg("validate", "--format", "xml", cwd=reg.root, process=True).returncode == 2


def test_validate_paths_filter_reports_only_those_files(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(artifact_id="art-b"))
    assert evreg("validate", f"{F}/views", cwd=reg.root).returncode == 0
    assert evreg("validate", f"{F}/pkt", cwd=reg.root).returncode == 1
    typo = evreg("validate", f"{F}/pkts", cwd=reg.root)  # a mistyped path is a usage error, not a clean report
    assert typo.returncode == 2 and "does not exist" in typo.stderr


def test_root_option_and_no_traceback_on_garbage(reg: Reg, tmp_path: Path) -> None:
    reg.raw(RUN, b"\x00\x01garbage")
    result = evreg("--root", str(reg.root), "validate", cwd=tmp_path, process=True)
    assert result.returncode == 1 and "json-syntax" in result.stdout
    assert "Traceback" not in result.stderr + result.stdout


def test_root_is_accepted_before_and_after_the_command(reg: Reg, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evreg.cli.main import cli

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runner = CliRunner()
    before = runner.invoke(cli, ["--root", str(reg.root), "validate", "--format", "json"])
    after = runner.invoke(cli, ["validate", "--root", str(reg.root), "--format", "json"])
    assert before.exit_code == after.exit_code == 0
    first, second = json.loads(before.stdout), json.loads(after.stdout)
    assert first["summary"].pop("units")["checked"] > 0 and second["summary"].pop("units")["checked"] == 0  # cached
    assert first == second
    assert json.loads(after.stdout)["summary"]["records"] == 7
    nested = runner.invoke(
        cli, ["new", "family", "fam2", "--name", "F", "--revision", "r", "--repository", "o/r", "--root", str(reg.root)]
    )
    assert nested.exit_code == 0 and (reg.root / "packets/fam2/family.json").exists()


def test_schema_command_writes_and_checks(reg: Reg) -> None:
    shutil.rmtree(reg.root / "schema")
    assert evreg("schema", "--check", cwd=reg.root).returncode == 1
    assert evreg("schema", cwd=reg.root).returncode == 0
    assert evreg("schema", "--check", cwd=reg.root).returncode == 0
    schema = json.loads((reg.root / "schema/run-measurement.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/run-measurement.schema.json")


def test_long_work_shows_progress_on_a_terminal_only(reg: Reg) -> None:
    """Validation rewrites one progress line on standard error when it is a terminal, and clears it; piped (CI logs,
    machine-readable output), it prints nothing extra."""
    import os
    import pty
    import sys

    reg.put("packets/oth/family.json", {"kind": "family", "id": "oth"})  # a second unit: progress to show
    piped = evreg("validate", "--no-cache", cwd=reg.root)
    assert "checking:" not in piped.stderr + piped.stdout
    pid, fd = pty.fork()
    if pid == 0:  # the child: evreg on a terminal
        os.chdir(reg.root)
        os.execv(sys.executable, [sys.executable, "-m", "evreg", "validate", "--no-cache"])
    shown = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.waitpid(pid, 0)
    text = shown.decode("utf-8", "replace")
    assert "checking: 2/2 (100 %)" in text and "\r" in text and " errors, " in text


def test_version_and_help_load_neither_pydantic_nor_the_rules() -> None:
    """Start-up pays for what a command uses: `--version` and `--help` import no pydantic, no record models and no
    JSON reader (an option's choices from a vocabulary are read when the option is used); `add --state` still
    checks its value against the vocabulary."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from evreg.cli.main import cli\n"
        "for args in (['--version'], ['--help']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0\n"
        "print(sorted(m for m in ('pydantic', 'evreg.core.jsonio', 'evreg.records.models') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
    refused = evreg("add", "no-such-file.json", "--state", "nope")
    assert refused.returncode == 2 and "'nope' is not one of 'lab-measured'" in refused.stderr
