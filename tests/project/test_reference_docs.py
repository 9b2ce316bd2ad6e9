"""The reference documentation is the code's: the command reference is the commands' own help, and every extension
point and every installed importer and reporter is documented where contributors look."""

from __future__ import annotations

import tomllib

from evreg.check import reporters
from evreg.cli import reference
from evreg.formats import discover
from helpers import REPO


def test_the_command_reference_is_the_commands_own_help() -> None:
    page = (REPO / reference.PAGE).read_text()
    assert page == reference.markdown(), "site/cli.md is stale: run `python -m evreg.cli.reference`"


def test_every_command_has_a_section_with_its_options() -> None:
    page = (REPO / reference.PAGE).read_text()
    names = [name for name, _, _ in reference.commands()]
    assert {"evreg validate", "evreg import llama-bench", "evreg new packet", "evreg impact"} <= set(names)
    for name, command, _ in reference.commands():
        assert f"## `{name}`" in page, name
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in page, (name, opt)


def test_every_extension_point_is_documented() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    groups = set(project["entry-points"])
    assert groups == {"evreg.rules", "evreg.formats", "evreg.reporters"} or groups >= {"evreg.rules", "evreg.formats"}
    contributing = (REPO / "site/contributing.md").read_text()
    architecture = (REPO / "site/architecture.md").read_text()
    for group in ("evreg.rules", "evreg.formats", "evreg.reporters"):
        assert group in contributing and group in architecture, group
    cli = (REPO / reference.PAGE).read_text()
    for name in discover():
        assert f"## `evreg import {name}`" in cli, name
    for name in reporters.reporters():
        assert name in cli, name
