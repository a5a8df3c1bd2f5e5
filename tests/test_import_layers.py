"""The packages import in layers: no module takes part in an import cycle, the oracles never import
the harness (truth must not depend on what is checked), and properties' strategies and generators
produce inputs without it (only its test_ files call the checks). Imports are read with ``ast``,
those inside functions too, so a deferred import cannot hide a cycle."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The folders beside textbound/ that install as its subpackages (setup.py): impl/ is textbound.impl.
BESIDE = ("corpora", "impl", "mutants", "oracles", "properties")
FOLDERS = (*BESIDE, "textbound")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = ("textbound", *parts) if parts[0] in BESIDE else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_path(name: str) -> Path:
    """The file or folder of a module name, without the ``.py``: ``textbound.impl.x`` is impl/x."""
    parts = name.split(".")
    parts = parts[1:] if len(parts) > 1 and parts[0] == "textbound" and parts[1] in BESIDE else parts
    return ROOT.joinpath(*parts)


def is_module(name: str) -> bool:
    path = source_path(name)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported(path: Path) -> set[str]:
    """The project modules ``path`` imports: ``from package import module`` names the module."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            found.update(f"{source}.{alias.name}" if is_module(f"{source}.{alias.name}") else source
                         for alias in node.names)
    return {name for name in found if name.split(".")[0] == "textbound" and is_module(name)}


GRAPH = {module_name(path): imported(path) for folder in FOLDERS for path in (ROOT / folder).rglob("*.py")}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1 or module in graph.get(module, ()):
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_reader_sees_imports_of_every_kind() -> None:
    assert {"textbound.families.family", "textbound.families.embedded"} <= GRAPH["textbound.families"]
    assert "textbound.oracles.mistral_source" in GRAPH["textbound.oracles.tiktoken_oracle"]
    assert "textbound.properties.pipelines" in GRAPH["textbound.families.fuzzed"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_nothing_imports_a_folder_by_its_top_level_name() -> None:
    """In a checkout the repository root is on ``sys.path``, so ``import impl`` would load a second
    copy beside ``textbound.impl`` (its classes different, its caches apart): only the namespace's
    names may be used."""
    offending = {}
    for folder in (*FOLDERS, "tests", "tools", "engines"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                         [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else
                         [node.args[0].value] if _names_a_package(node) else [])
                bad = [name for name in names if name.split(".")[0] in BESIDE]
                if bad:
                    offending.setdefault(str(path.relative_to(ROOT)), []).extend(bad)
    assert offending == {}


def _names_a_package(node: ast.AST) -> bool:
    """``files("corpora")`` (importlib.resources) imports the package it names, as ``import`` does:
    outside a checkout only ``files("textbound.corpora")`` is found."""
    return (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "files"
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


def package_of(module: str) -> str:
    """The package a module belongs to: itself for a package, its parent for a plain module."""
    parts = module.split(".")
    return module if (source_path(module) / "__init__.py").is_file() else ".".join(parts[:-1])


def test_no_import_cycles_between_packages() -> None:
    """``impl.chat`` and ``impl.tokenizer`` may not need each other, nor ``textbound.checks`` and
    ``textbound.families``; properties' test_ files call the checks by design and are left out."""
    packages: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        if module.rpartition(".")[2].startswith("test_"):
            continue
        source = package_of(module)
        packages.setdefault(source, set()).update(
            package_of(target) for target in targets
            if package_of(target) != source and not package_of(target).startswith(source + "."))
    assert cycles(packages) == []


def layer_of(module: str) -> str:
    """``impl``, ``oracles``, ... for the folders beside textbound/; ``harness`` for the rest of it."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in BESIDE else "harness"


@pytest.mark.parametrize(("layer", "forbidden"), [("oracles", "harness"), ("oracles", "properties"),
                                                  ("properties", "harness"), ("corpora", "harness"),
                                                  ("corpora", "properties"), ("impl", "harness"),
                                                  ("impl", "oracles")])
def test_lower_layers_do_not_import_higher_ones(layer: str, forbidden: str) -> None:
    offending = {module: sorted(target for target in targets if layer_of(target) == forbidden)
                 for module, targets in GRAPH.items()
                 if layer_of(module) == layer and not module.rpartition(".")[2].startswith("test_")}
    assert {module: targets for module, targets in offending.items() if targets} == {}


# The harness's packages follow the data: plan → checks (naming) → run → records → triage. A package
# may not import one its row names: checks name divergences but do not explain them, a report is
# written without triage, and nothing below the run reaches up into it.
HARNESS_FORBIDDEN = {
    "textbound.naming": ("checks", "records", "run", "shrinking", "triage", "bench"),
    "textbound.plan": ("checks", "records", "run", "shrinking", "triage", "bench"),
    "textbound.checks": ("records", "run", "shrinking", "triage", "bench"),
    "textbound.shrinking": ("records", "run", "triage", "bench"),
    "textbound.records": ("run", "shrinking", "triage", "bench"),
    "textbound.run": ("triage", "bench"),
    "textbound.compare": ("triage", "bench"),
}


@pytest.mark.parametrize("package", sorted(HARNESS_FORBIDDEN))
def test_harness_layers_run_one_way(package: str) -> None:
    forbidden = tuple(f"textbound.{name}" for name in HARNESS_FORBIDDEN[package])
    offending = {module: sorted(t for t in targets if t.startswith(forbidden))
                 for module, targets in GRAPH.items() if module == package or module.startswith(package + ".")}
    assert {module: targets for module, targets in offending.items() if targets} == {}


def test_the_harness_top_level_is_a_few_modules_and_packages_that_say_their_place() -> None:
    top = sorted(path.name for path in (ROOT / "textbound").glob("*.py"))
    assert len(top) <= 8, top
    for init in (ROOT / "textbound").glob("*/__init__.py"):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in docstring.lower(), f"{init.parent.name}: say what it owns and what it may import"
