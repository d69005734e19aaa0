"""The wheel as a user installs it: no top-level ``mechanisms``, audits found from any directory.

Builds the wheel from a copy of the checkout (pip, no network: ``--no-build-isolation``), about 4 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from this checkout, installed (no dependencies) into a folder of its own."""
    base = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the sources: a stale build/ folder in the checkout must not leak into it.
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "*.egg-info", "reports", ".mypy_cache", ".ruff_cache", "__pycache__", "site"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(base / "dist"), str(source)], check=True)
    (wheel,) = (base / "dist").glob("dpverify-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                    str(base / "site"), str(wheel)], check=True)
    return wheel, base / "site", base


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # The installed folder first on the path; the working directory is not the checkout.
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_wheel_holds_mechanisms_under_dpverify_only(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"dpverify"}
    assert "dpverify/mechanisms/__init__.py" in names
    assert "dpverify/mechanisms/audits/__init__.py" in names
    assert "dpverify/mechanisms/py.typed" in names


def test_wheel_ships_the_json_schema_and_its_loader_reads_it(installed):
    wheel, site, base = installed
    assert "dpverify/integrations/schemas/dpverify.schema.json" in zipfile.ZipFile(wheel).namelist()
    probe = ("import json; from dpverify.integrations import contract; s = contract.schema('audit'); "
             "print(json.dumps([contract.__file__, s['$ref'], s['$defs']['schema_version']['const']]))")
    elsewhere = base / "schema_probe"
    elsewhere.mkdir(exist_ok=True)
    result = _run(site, elsewhere, "-c", probe)
    assert result.returncode == 0, result.stderr
    where, ref, version = json.loads(result.stdout)
    assert where.startswith(str(site)) and ref == "#/$defs/audit" and version == "1.4"


def test_installed_package_has_no_top_level_mechanisms(installed):
    _, site, base = installed
    user = base / "user_project"
    user.mkdir()
    (user / "mechanisms.py").write_text("# a user's own module of the same name\n")
    probe = ("import json, dpverify, dpverify.mechanisms.noise as noise, importlib.util;"
             "print(json.dumps([dpverify.__file__, noise.__file__]))")
    result = _run(site, user, "-c", probe)
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)
    assert all(file.startswith(str(site)) for file in files), files
    empty = base / "empty"
    empty.mkdir()
    result = _run(site, empty, "-c", "import mechanisms")
    assert result.returncode == 1 and "No module named 'mechanisms'" in result.stderr


def test_installed_cli_lists_every_audit_from_another_directory(installed):
    _, site, base = installed
    user = base / "user_project"
    user.mkdir(exist_ok=True)
    (user / "mechanisms.py").write_text("# shadows nothing now\n")
    listed = _run(site, user, "-m", "dpverify", "list")
    assert listed.returncode == 0, listed.stderr
    # the same 167 audit rows (158 + the 9 (eps, delta) BENCH rows) as from the checkout (its entry point names dpverify.mechanisms.audits)
    checkout = subprocess.run([sys.executable, "-m", "dpverify", "list"], cwd=ROOT, capture_output=True, text=True)
    assert listed.stdout == checkout.stdout
    assert len(listed.stdout.split("\n\n")[0].splitlines()) == 167  # then a blank line and each claim's keys
