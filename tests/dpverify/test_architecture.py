"""The package's architecture, checked: no import cycles, and each layer imports only from below.

Imports are read from the source (``ast``), every one of them: module level, inside functions
(deferred) and under ``TYPE_CHECKING``. A deferred import that closes a cycle is still a cycle.
Old flat module paths (``dpverify.checker``, see :mod:`dpverify._moved`) are resolved to where the
modules live now. See docs/architecture.md for the picture.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from dpverify._moved import MOVED

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpverify"

#: The layers, lowest first: a module may import from its own layer and the layers below it.
LAYERS = [
    {"dpverify.errors", "dpverify.validation", "dpverify.types", "dpverify._moved"},
    {"dpverify.finite"},
    {"dpverify.parallel"},
    {"dpverify.verdict"},
    {"dpverify.densities"},
    {"dpverify.checking"},
    {"dpverify", "dpverify.integrations", "dpverify.__main__"},
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
    """The dpverify module an import of ``name`` loads (old flat paths mapped; ``a.b.c`` where
    ``c`` is a name in module ``a.b``: ``a.b``)."""
    if not (name == "dpverify" or name.startswith("dpverify.")):
        return None
    head, _, rest = name.partition(".")
    first, _, tail = rest.partition(".")
    if first in MOVED:
        name = f"dpverify.{MOVED[first]}" + (f".{tail}" if tail else "")
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
    # an old flat path resolves to the module's new home
    assert _resolve("dpverify.checker") == "dpverify.checking.checker"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_import_goes_down_the_layers(graph, module):
    upward = sorted(target for target in graph[module] if _layer(target) > _layer(module))
    assert upward == [], f"{module} (layer {_layer(module)}) imports from a higher layer: {upward}"


def test_old_flat_paths_are_the_same_module_objects():
    # documented paths such as dpverify.neighbors keep working, and patching either path patches both
    for old, new in MOVED.items():
        assert importlib.import_module(f"dpverify.{old}") is importlib.import_module(f"dpverify.{new}"), old
    assert set(MOVED.values()) <= set(m.removeprefix("dpverify.") for m in MODULES)


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
