"""The architecture as the README states it: layers whose imports point one way, no cycles, a
rule pack that reaches only the rule API and the core, and import names of our own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import REPO

PACKAGES = {"evreg": REPO / "registry" / "evreg", "evreg_rules": REPO / "validators" / "evreg_rules"}

LAYERS: dict[str, int] = {
    "core": 0,  # findings and their codes, JSON reading and writing, record layout, containment, vocabularies
    "claims": 1,  # the text grammar: figures, citations, scope, runtimes, coverage cells, ranking, Markdown reading
    "records": 2,  # the record models and the schemas generated from them
    "store": 3,  # the git-native store: sources, documents, the registry; provenance; worker processes
    "check": 4,  # the rule engine, the unit result cache, the validation pipeline, reporters
    "catalog": 4,  # the DuckDB catalog: tables, the builder, the file as queries read it
    "formats": 4,  # importers and exporters of outside formats
    "site": 5,  # pages made from the catalog, charts, the MkDocs plugin
    "app": 6,  # the application layer: one function per user job
    "devtools": 7,  # the benchmark and its registries of real shape (not the product)
    "cli": 8,  # parses, calls the application layer, prints
    "__main__": 9,
}
"""Each folder of ``evreg`` is a layer; a module imports only from its own folder and the layers below (folders of
one layer, such as ``check``, ``catalog`` and ``formats``, do not import each other)."""
RULE_PACK_MAY_USE = {"core", "claims", "records", "store", "check.rules"}
"""What the rule pack may import of ``evreg``: the rule API and everything it stands on."""


def modules(package: str) -> dict[str, Path]:
    root = PACKAGES[package]
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(p for p in (package, *parts) if p != "__init__")] = path
    return out


def imports(path: Path) -> set[str]:
    """Modules of ours a file imports at run time (anywhere in it, outside ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text("utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in PACKAGES:
                out |= {f"{node.module}.{a.name}" for a in node.names}
            elif node.module.split(".")[0] in PACKAGES:
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] in PACKAGES}
    return out


def layer_name(module: str) -> str:
    """``evreg.formats.lm_eval`` -> ``formats``; ``evreg.store`` -> ``store``."""
    return module.split(".")[1] if module.count(".") else module


def test_every_module_sits_in_a_layer_folder() -> None:
    """The floor plan is the folders: no module of ``evreg`` beside them but the package's own."""
    loose = [p.name for p in PACKAGES["evreg"].glob("*.py") if p.name not in {"__init__.py", "__main__.py"}]
    assert not loose, f"modules outside a layer folder: {loose}"
    folders = {p.name for p in PACKAGES["evreg"].iterdir() if (p / "__init__.py").exists()}
    assert folders == set(LAYERS) - {"__main__"}


GRAPH = {m: {i for i in imports(p) if i != m} for pkg in PACKAGES for m, p in modules(pkg).items()}


def test_every_evreg_module_has_a_layer() -> None:
    assert {layer_name(m) for m in GRAPH if m.startswith("evreg.")} <= set(LAYERS)


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("evreg.")))
def test_imports_point_down_the_layers(module: str) -> None:
    mine = layer_name(module)
    for target in GRAPH[module]:
        theirs = layer_name(target)
        assert not target.startswith("evreg_rules"), f"{module} imports the rule pack {target}"
        if theirs == mine or target == "evreg":
            continue
        assert LAYERS[theirs] < LAYERS[mine], f"{module} ({mine}, layer {LAYERS[mine]}) imports {target} ({theirs})"


def test_the_rule_pack_uses_only_the_rule_api_the_store_and_the_core() -> None:
    for module, targets in GRAPH.items():
        if module.startswith("evreg_rules"):
            for target in targets:
                if target.startswith("evreg."):
                    allowed = layer_name(target) in RULE_PACK_MAY_USE or target.startswith("evreg.check.rules")
                    assert allowed, (module, target)


def test_findings_are_made_only_from_their_code() -> None:
    """No module constructs a Finding directly: ``CODE.at(...)`` is the one way (findings.py holds it)."""
    for package in PACKAGES:
        for module, path in modules(package).items():
            if module == "evreg.core.findings":
                continue
            calls = [
                node.lineno
                for node in ast.walk(ast.parse(path.read_text("utf-8")))
                if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "Finding"
            ]
            assert not calls, f"{path}:{calls[0]} makes a Finding directly; use CODE.at(...)"


def test_no_import_cycles() -> None:
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        seen[module] = 1
        for target in sorted(GRAPH.get(module, ())):
            if seen.get(target) == 1:
                cycle = path[path.index(target) :] if target in path else [target]
                pytest.fail(" -> ".join([*cycle, target]))
            if target not in seen and target in GRAPH:
                visit(target, [*path, target])
        seen[module] = 2

    for module in sorted(GRAPH):
        if module not in seen:
            visit(module, [module])


CLI_MAY_USE = ("evreg.app", "evreg.core", "evreg.check.reporters", "evreg.devtools")
"""What the command line reaches: the application layer for every job, the core's plain values, the reporters
that print findings, and the benchmark. It parses, calls, prints and exits."""


def test_the_cli_calls_only_the_application_layer() -> None:
    """Every module the CLI imports (under type checking too) or loads lazily (``LAZY``)."""
    from evreg.cli import main

    for path in (PACKAGES["evreg"] / "cli").rglob("*.py"):
        named = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evreg"):
                named |= {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                named |= {a.name for a in node.names if a.name.startswith("evreg")}
        named |= {f"evreg.{name}" for name in main.LAZY}
        outside = sorted(m for m in named if not m.startswith((*CLI_MAY_USE, "evreg.cli")))
        assert not outside, f"{path.name} reaches past the application layer: {outside}"


def test_import_names_are_our_own() -> None:
    """`registry` and `validators` are other projects on PyPI: nothing of ours may be importable by
    those names, and the distribution ships only `evreg` and `evreg_rules`."""
    import importlib.util
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["packages"]["find"]["include"] == ["evreg*"]
    for name in ("registry", "validators"):
        spec = importlib.util.find_spec(name)
        assert spec is None or not str(spec.origin or "").startswith(str(REPO)), spec


def test_the_readme_picture_names_every_layer_folder_in_order() -> None:
    """The README's architecture picture lists every layer folder, top layer first."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Architecture") :]
    picture = section[section.index("```") + 3 : section.index("```", section.index("```") + 3)]
    named = [word.rstrip("/") for line in picture.splitlines() for word in line.split() if word.endswith("/")]
    assert set(named) == set(LAYERS) - {"__main__"}
    levels = [LAYERS[n] for n in named]
    assert levels == sorted(levels, reverse=True)
