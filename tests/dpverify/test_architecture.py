"""The package's architecture, checked: no import cycles, and each layer imports only from below.

Imports are read from the source (``ast``), every one of them: module level, inside functions
(deferred) and under ``TYPE_CHECKING``. A deferred import that closes a cycle is still a cycle.
``import dpverify`` hooks nothing into the import system: the flat module paths of the development
before the subpackages (``dpverify.checker``, ...) are gone, never aliased. See docs/architecture.md
for the picture.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpverify"

#: The layers, lowest first: a module may import from its own layer and the layers below it.
LAYERS = [
    {"dpverify.errors", "dpverify.validation", "dpverify.types"},
    {"dpverify.finite"},
    {"dpverify.parallel"},
    {"dpverify.verdict"},
    {"dpverify.densities"},
    {"dpverify.checking"},
    {"dpverify", "dpverify.integrations", "dpverify.__main__", "dpverify.testing", "dpverify.auditing"},
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The dpverify module an import of ``name`` loads (``a.b.c`` where ``c`` is a name in module
    ``a.b``: ``a.b``); None for a name outside dpverify or a module that does not exist."""
    if not (name == "dpverify" or name.startswith("dpverify.")):
        return None
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def _imported_names(path: Path, module: str) -> list[str]:
    """Every name ``module`` (the source at ``path``) imports, anywhere in its source, relative
    imports made absolute: ``from .a import b`` in ``p.m`` gives ``p.a`` and ``p.a.b``."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return names


def imports_of(module: str) -> set[str]:
    """Every dpverify module ``module`` imports, anywhere in its source."""
    targets = {_resolve(name) for name in _imported_names(MODULES[module], module)}
    return {target for target in targets if target is not None and target != module}


def _layer(module: str) -> int:
    for depth, layer in enumerate(LAYERS):
        if module in layer or any(module.startswith(prefix + ".") for prefix in layer if prefix != "dpverify"):
            return depth
    raise AssertionError(f"{module} is in no layer: add its subpackage to LAYERS and to docs/architecture.md")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """Every module's imports (parsed once per module run, not at collection on every xdist worker)."""
    return {module: imports_of(module) for module in MODULES}


def test_there_are_no_import_cycles(graph):
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_planted_cycle():
    # a -> b -> c -> a is one component; d -> a is not in it.
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(planted) == [["a", "b", "c"]]


def test_the_import_reader_sees_deferred_imports(graph):
    # dpverify.verdict.engine imports the executors inside a function (its parallel sweep).
    assert "dpverify.parallel.executors" in graph["dpverify.verdict.engine"]
    # a name inside a module resolves to the module; a name outside dpverify to nothing
    assert _resolve("dpverify.checking.checker.verify") == "dpverify.checking.checker"
    assert _resolve("dpverify.verify") == "dpverify"
    assert _resolve("numpy.linalg") is None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_import_goes_down_the_layers(graph, module):
    upward = sorted(target for target in graph[module] if _layer(target) > _layer(module))
    assert upward == [], f"{module} (layer {_layer(module)}) imports from a higher layer: {upward}"


#: The flat module paths of the development before the subpackages (never released): each module
#: now lives in its subpackage only, e.g. dpverify.checker is dpverify.checking.checker.
OLD_FLAT_PATHS = [
    "domains", "distribution", "mechanism", "multisets", "neighbors", "pair_sources", "executors", "_transport",
    "progress", "engine", "_sweep", "_certify", "witness", "claims", "privacy_loss", "assumptions", "rows",
    "continuous", "piecewise", "_ratio_sup", "_enclosures", "checker", "evaluation", "symmetry", "input_pairs",
    "pair_cover", "public_data", "cli", "report", "audit", "pytest_plugin", "strategies", "_hypothesis_profiles",
]


@pytest.mark.parametrize("old", OLD_FLAT_PATHS)
def test_an_old_flat_path_is_no_module(old):
    with pytest.raises(ModuleNotFoundError) as raised:
        importlib.import_module(f"dpverify.{old}")
    assert raised.value.name == f"dpverify.{old}"  # missing itself, not a failing import inside it
    assert f"dpverify.{old}" not in MODULES


_META_PATH = """
import json, sys
def names():  # a finder on sys.meta_path is a class or an instance
    return [getattr(finder, "__module__", None) or type(finder).__module__ for finder in sys.meta_path]
before = names()
import dpverify, dpverify.mechanisms.noise, dpverify.checking.checker
try:
    import dpverify.checker
    old = "imported"
except ModuleNotFoundError as error:
    old = error.name
print(json.dumps({"before": before, "after": names(), "old": old}))
"""


def test_import_dpverify_hooks_nothing_into_the_import_system():
    # A fresh interpreter (this one imported dpverify already, through its pytest plugin).
    done = subprocess.run([sys.executable, "-c", _META_PATH], capture_output=True, text=True, check=True, cwd=ROOT)
    found = json.loads(done.stdout)
    assert found["after"] == found["before"]
    assert not [name for name in found["after"] if name.startswith("dpverify")]
    assert found["old"] == "dpverify.checker"


def _top_level_mechanisms_imports(path: Path) -> list[int]:
    """Lines of ``path`` that import the bare top-level name ``mechanisms`` (not dpverify.mechanisms)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(name == "mechanisms" or name.startswith("mechanisms.") for name in names):
            lines.append(node.lineno)
    return lines


def test_nothing_imports_the_bare_name_mechanisms():
    # The folder mechanisms/ installs as dpverify.mechanisms; `import mechanisms` would load a second
    # copy from a checkout (its classes different objects) and fail after a wheel install.
    offenders = {}
    for folder in ("dpverify", "mechanisms", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            lines = _top_level_mechanisms_imports(path)
            if lines:
                offenders[str(path.relative_to(ROOT))] = lines
    assert offenders == {}


def test_the_bare_name_check_sees_both_import_forms(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import mechanisms.noise\nfrom mechanisms.laplace import x\nfrom dpverify.mechanisms import y\n"
                       "from .mechanisms import z\n")
    assert _top_level_mechanisms_imports(planted) == [1, 2]


def test_dpverify_mechanisms_is_the_checkout_folder():
    import dpverify.mechanisms
    import dpverify.mechanisms.noise

    assert Path(dpverify.mechanisms.__file__).parent == ROOT / "mechanisms"
    assert dpverify.mechanisms.noise.__name__ == "dpverify.mechanisms.noise"


# -- mechanisms/ (installed as dpverify.mechanisms) ------------------------------------------------

MECHANISMS = ROOT / "mechanisms"


def _mechanism_modules() -> dict[str, Path]:
    found = {}
    for path in MECHANISMS.rglob("*.py"):
        parts = list(path.relative_to(MECHANISMS).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(["dpverify.mechanisms", *parts])] = path
    return found


def _mechanism_graph() -> dict[str, set[str]]:
    """Every mechanisms/ module's imports of other mechanisms/ modules (relative, or through the
    installed name ``dpverify.mechanisms``), anywhere in its source, deferred ones included."""
    modules = _mechanism_modules()

    def resolve(name: str) -> str | None:
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in modules and name != "dpverify" else None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {resolve(name) for name in _imported_names(path, module) if name.startswith("dpverify.mechanisms")}
        graph[module] = {target for target in targets if target is not None and target != module}
    return graph


def test_mechanisms_have_no_import_cycles():
    graph = _mechanism_graph()
    assert "dpverify.mechanisms.geometric" in graph["dpverify.mechanisms.noisy_max"]  # the reader sees imports
    assert _cycles(graph) == []
