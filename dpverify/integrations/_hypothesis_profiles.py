"""The Hypothesis effort profiles ``dpverify-ci`` and ``dpverify-dev``, registered lazily.

This module imports nothing heavy: :func:`register_profiles` imports Hypothesis when called, and
:func:`register_profiles_on_import` (called by :mod:`dpverify.integrations.pytest_plugin` when it loads) has
it called the moment anything imports Hypothesis. The profiles are thus registered whenever
Hypothesis can be used, as when the plugin imported Hypothesis itself, without every pytest
session of whoever installs dpverify paying for importing it. :func:`register_profiles` also fits
Hypothesis's own entry-point group (run when Hypothesis is first imported):
``[project.entry-points.hypothesis] dpverify = "dpverify.integrations._hypothesis_profiles:register_profiles"``.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

__all__ = ["PROFILES", "register_profiles", "register_profiles_on_import"]

#: ``--dpverify-profile`` value -> registered Hypothesis profile name.
PROFILES = {"ci": "dpverify-ci", "dev": "dpverify-dev"}


def register_profiles() -> None:
    """Register ``dpverify-ci`` and ``dpverify-dev`` with Hypothesis (imports Hypothesis).

    Idempotent; a profile already registered under one of these names (say, redefined by the
    user's conftest) is left as it is.
    """
    import hypothesis
    from hypothesis.errors import InvalidArgument

    profiles: dict[str, dict[str, Any]] = {
        PROFILES["ci"]: dict(
            max_examples=1000,
            derandomize=True,  # the same examples on every CI run: a failure is reproducible
            database=None,
            deadline=None,  # exact distributions can take a while; time is not the property under test
            print_blob=True,
            suppress_health_check=[hypothesis.HealthCheck.too_slow],
        ),
        PROFILES["dev"]: dict(max_examples=50, deadline=None),
    }
    for name, options in profiles.items():
        try:
            hypothesis.settings.get_profile(name)
        except InvalidArgument:
            hypothesis.settings.register_profile(name, **options)


class _AfterHypothesisImport:  # an importlib.abc.MetaPathFinder (without importing importlib.abc)
    """A one-shot ``sys.meta_path`` hook: runs :func:`register_profiles` once ``hypothesis`` is
    executed. It finds the package with the other finders and returns their spec, with the
    loader's ``exec_module`` wrapped until ``hypothesis`` is executed: the module, its spec and its
    loader stay Hypothesis's own. The loader may be shared (pytest's assertion rewriter loads the
    packages of pytest plugins, Hypothesis among them), so the wrapper passes every other module
    straight through."""

    def __init__(self) -> None:
        self._finding = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "hypothesis" or self._finding:
            return None
        self._finding = True
        try:
            spec = importlib.util.find_spec(fullname)  # the other finders (this one is busy)
        except (ImportError, ValueError):
            return None
        finally:
            self._finding = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return None
        original = loader.exec_module
        shadowed = loader.__dict__.get("exec_module") if hasattr(loader, "__dict__") else None

        def exec_module(module: Any) -> None:
            if getattr(module, "__spec__", None) is not spec:
                return original(module)  # a submodule through a shared loader
            try:
                original(module)
            finally:  # back to the loader's own method
                if shadowed is None:
                    loader.__dict__.pop("exec_module", None)
                else:
                    loader.exec_module = shadowed
            _remove(self)
            register_profiles()
            return None

        try:
            loader.exec_module = exec_module
        except AttributeError:  # a loader that takes no attributes: leave the import alone
            return None
        return spec


def _remove(finder: _AfterHypothesisImport) -> None:
    # Not from inside find_spec: the import system is iterating over sys.meta_path then.
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def register_profiles_on_import() -> None:
    """Have :func:`register_profiles` run as soon as Hypothesis is imported (now if it is already),
    without importing Hypothesis."""
    if "hypothesis" in sys.modules:
        register_profiles()
    elif not any(isinstance(finder, _AfterHypothesisImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterHypothesisImport())
