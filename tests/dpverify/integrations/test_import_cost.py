"""Importing dpverify is cheap: its pytest plugin autoloads in every pytest session of whoever
installs it, so neither the plugin nor the package may import numpy, sympy or mpmath up front.

Each check runs in a fresh interpreter (this session has imported everything already). Module
presence is asserted, not timings; measure with ``python -X importtime -c "import dpverify"``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpverify

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("numpy", "sympy", "mpmath", "scipy", "hypothesis")


def _loaded_after(statement: str) -> set[str]:
    """The top-level modules of HEAVY (and dpverify's core) present after ``statement``."""
    probe = (
        f"{statement}\n"
        "import json, sys\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
        "or m in ('dpverify.checking.checker', 'dpverify.verdict.engine', 'dpverify.finite.distribution'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_pytest_plugin_imports_no_numpy_sympy_mpmath_hypothesis_or_checker():
    assert _loaded_after("import dpverify.integrations.pytest_plugin") == set()


def test_import_dpverify_imports_neither_sympy_nor_numpy():
    assert _loaded_after("import dpverify; dpverify.__version__; dpverify.InvalidArgument") == set()


def test_verify_with_exact_fractions_needs_no_sympy():
    loaded = _loaded_after(
        "from fractions import Fraction\n"
        "from dpverify import verify\n"
        "from dpverify.finite.records import labeled_records\n"
        "def rr(d):\n"
        "    y = d[0][1]\n"
        "    return {y: Fraction(3, 4), 1 - y: Fraction(1, 4)}\n"
        "assert verify(rr, records=labeled_records(1), n=1, epsilon=1.2).holds"
    )
    assert "sympy" not in loaded and "numpy" in loaded


def test_the_public_names_load_on_first_use():
    probe = (
        "import sys, dpverify\n"
        "assert 'dpverify.checking.checker' not in sys.modules\n"
        "assert set(dpverify.__all__) <= set(dir(dpverify))\n"
        "for name in dpverify.__all__:\n"
        "    getattr(dpverify, name)\n"
        "from dpverify import *\n"
        "assert verify is dpverify.checking.front.verify and Distribution is dpverify.finite.distribution.Distribution\n"
        "assert dpverify.finite.records.labeled_records(1)  # a submodule, as when the package imported them\n"
        "try:\n"
        "    dpverify.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_hypothesis_profiles_are_registered_when_hypothesis_is_imported_later():
    loaded = _loaded_after(
        "import dpverify.integrations.pytest_plugin\n"
        "import sys\n"
        "assert 'hypothesis' not in sys.modules\n"
        "from hypothesis import settings\n"
        "assert settings.get_profile('dpverify-ci').max_examples == 1000\n"
        "assert settings.get_profile('dpverify-dev').max_examples == 50"
    )
    assert "hypothesis" in loaded


def test_a_conftest_can_load_a_dpverify_profile(tmp_path):
    """The profiles exist as soon as Hypothesis does, as when the plugin imported Hypothesis."""
    (tmp_path / "conftest.py").write_text('from hypothesis import settings\nsettings.load_profile("dpverify-ci")\n')
    (tmp_path / "test_profile.py").write_text(
        "import sys, hypothesis\n"
        "def test_profile():\n"
        "    assert hypothesis.settings.default.max_examples == 1000\n"
        "    assert 'numpy' not in sys.modules and 'sympy' not in sys.modules\n"
    )
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "dpverify.integrations.pytest_plugin", "-p", "no:cacheprovider"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("command", [["-m", "dpverify"], ["-m", "dpverify.integrations.cli"]])
def test_version(command):
    done = subprocess.run(
        [sys.executable, *command, "--version"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"dpverify {dpverify.__version__}"


def test_python_m_dpverify_passes_the_exit_code_through():
    done = subprocess.run([sys.executable, "-m", "dpverify"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2  # usage error: a command is required
    assert "usage: dpverify" in done.stderr
