"""The flat module paths of dpverify before its subpackages, kept working.

Until version 0.1 every module sat directly in ``dpverify/`` (``dpverify.checker``,
``dpverify.neighbors``, ...). They now live in subpackages by concern (see the architecture page,
``docs/architecture.md``). An import of an old path gives the *same module object* as the new one
(not a copy), so attributes, ``isinstance`` checks and ``monkeypatch.setattr`` on either path act
on one module. :func:`install` puts the finder on ``sys.meta_path``; ``dpverify/__init__.py``
calls it. Nothing here imports a dpverify module until an old path is imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import pathlib
import sys
import types
from collections.abc import Sequence

#: old flat module name (under dpverify) -> its module path now (under dpverify).
MOVED = {
    "domains": "finite.records",
    "distribution": "finite.distribution",
    "mechanism": "finite.mechanism",
    "multisets": "finite.multisets",
    "neighbors": "finite.neighbors",
    "pair_sources": "finite.pair_sources",
    "executors": "parallel.executors",
    "_transport": "parallel._transport",
    "progress": "parallel.progress",
    "engine": "verdict.engine",
    "_sweep": "verdict._sweep",
    "_certify": "verdict._certify",
    "witness": "verdict.witness",
    "claims": "verdict.claims",
    "privacy_loss": "verdict.privacy_loss",
    "assumptions": "verdict.assumptions",
    "rows": "verdict.rows",
    "continuous": "densities.continuous",
    "piecewise": "densities.piecewise",
    "_ratio_sup": "densities._ratio_sup",
    "_enclosures": "densities._enclosures",
    "checker": "checking.checker",
    "evaluation": "checking._evaluation",
    "symmetry": "checking._symmetry",
    "input_pairs": "checking.input_pairs",
    "pair_cover": "checking.pair_cover",
    "public_data": "checking.public_data",
    "cli": "integrations.cli",
    "report": "integrations.report",
    "audit": "integrations.audit",
    "pytest_plugin": "integrations.pytest_plugin",
    "strategies": "integrations.strategies",
    "_hypothesis_profiles": "integrations._hypothesis_profiles",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``dpverify.<old>`` and loads it as the module ``dpverify.<new>``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package != "dpverify" or name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module(f"dpverify.{MOVED[spec.name.partition('.')[2]]}")

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # the module was executed under its new name

    def get_code(self, fullname: str) -> types.CodeType | None:
        """The new module's code, for ``python -m dpverify.<old>`` (runpy asks for it)."""
        spec = importlib.util.find_spec(f"dpverify.{MOVED[fullname.partition('.')[2]]}")
        loader = None if spec is None else spec.loader
        return None if loader is None else loader.get_code(spec.name)  # type: ignore[attr-defined, union-attr]

    def is_package(self, fullname: str) -> bool:
        return False


#: this package's folder; in a source checkout the folder ``mechanisms/`` sits beside it.
_PACKAGE = pathlib.Path(__file__).resolve().parent


class _SourceTreeMechanisms(importlib.abc.MetaPathFinder):
    """``dpverify.mechanisms`` in a source checkout: the top-level folder ``mechanisms/``.

    The project's layout keeps the mechanisms in a top-level folder; a wheel installs that folder as
    the subpackage ``dpverify.mechanisms`` (``package-dir`` in pyproject.toml), so no generic
    top-level name is installed. Run from a checkout (tests, ``PYTHONPATH=.``), there is no
    ``dpverify/mechanisms/`` on disk, and this finder gives the folder that name. Only that one name
    is found here; its submodules are found through its ``__path__`` as usual.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "dpverify.mechanisms" or (_PACKAGE / "mechanisms").is_dir():
            return None
        init = _PACKAGE.parent / "mechanisms" / "__init__.py"
        if not init.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])


def install() -> None:
    """Put the finders for the old paths and the source tree's mechanisms on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())  # before path finders: a stale flat file must not win
    if not any(isinstance(finder, _SourceTreeMechanisms) for finder in sys.meta_path):
        # Right after the path finder: an installed subpackage wins, and this checkout's folder wins
        # over an editable install's mapping to another checkout (git worktrees, PYTHONPATH=.).
        path_finders = [i for i, finder in enumerate(sys.meta_path) if finder is importlib.machinery.PathFinder]
        sys.meta_path.insert(path_finders[0] + 1 if path_finders else len(sys.meta_path), _SourceTreeMechanisms())
