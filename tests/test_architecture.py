"""The architecture as the README states it: layers whose imports point one way, no cycles, a
rule pack that reaches only the rule API and the core, and import names of our own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

PACKAGES = {"evreg": REPO / "registry" / "evreg", "evreg_rules": REPO / "validators" / "evreg_rules"}

LAYERS: dict[str, int] = {
    # core: records, findings, JSON, citations, vocabularies, paths
    **dict.fromkeys(
        [
            "findings",
            "codes",
            "vocab",
            "containment",
            "coverage",
            "jsonio",
            "citations",
            "figures",
            "evidence",
            "models",
            "layout",
            "runtimes",
            "scope",
            "schemas",
            "markdown",
        ],
        0,
    ),
    **dict.fromkeys(["tables", "charts", "grid"], 0),  # declarations and drawing with no registry dependency
    "ranking": 0,  # the comparison pages' ranking rule: workload tiers, spreads, ties
    # the store: sources, documents, the registry; history; worker processes
    **dict.fromkeys(["store", "provenance", "workers"], 1),
    # consumers of the store, independent of each other
    **dict.fromkeys(["rules", "results"], 2),  # the rule engine, the unit result cache
    **dict.fromkeys(["catalog", "catalogfile"], 2),  # the catalog builder; the file as `query` reads it
    "formats": 2,
    "scaffold": 2,  # new records made from what the registry holds
    **dict.fromkeys(["site", "sitebuild", "compare"], 2),
    "pipeline": 3,  # load -> cache -> rules -> results -> report
    **dict.fromkeys(["cli", "reporters", "bench", "realshape", "__main__"], 4),
}
SIBLINGS = [
    {"rules", "results"},
    {"catalog", "catalogfile"},
    {"formats"},
    {"scaffold"},
    {"site", "sitebuild", "compare"},
]
"""Groups of layer 2 that may import within themselves but not each other (results may use rules)."""


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
        same = LAYERS[theirs] == LAYERS[mine] and (
            LAYERS[mine] != 2 or any({mine, theirs} <= group for group in SIBLINGS)
        )
        assert LAYERS[theirs] < LAYERS[mine] or same, f"{module} (layer {LAYERS[mine]}) imports {target} ({theirs})"


def test_the_rule_pack_uses_only_the_rule_api_the_store_and_the_core() -> None:
    for module, targets in GRAPH.items():
        if module.startswith("evreg_rules"):
            for target in targets:
                if target.startswith("evreg."):
                    assert LAYERS[layer_name(target)] <= 1 or layer_name(target) == "rules", (module, target)


def test_findings_are_made_only_from_their_code() -> None:
    """No module constructs a Finding directly: ``CODE.at(...)`` is the one way (findings.py holds it)."""
    for package in PACKAGES:
        for module, path in modules(package).items():
            if module == "evreg.findings":
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


def test_the_readme_architecture_table_lists_every_module_in_its_layer() -> None:
    import re

    text = (REPO / "README.md").read_text()
    table = text[text.index("## Architecture") :]
    table = table[table.index("| Layer |") : table.index("\n\n", table.index("| Layer |"))]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    documented: dict[str, int] = {}
    for level, row in zip(range(len(rows) - 1, -1, -1), rows, strict=True):
        modules_cell = row.split("|")[2]
        for name in re.findall(r"`([a-z_]+)/?", modules_cell):
            documented.setdefault(name, level)
    assert documented == {m: LAYERS[m] for m in LAYERS if m != "__main__"}
