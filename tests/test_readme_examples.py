"""The README's newcomer examples run as written: "Add your own mechanism" and "Add your own audit"
(the latter discovered through a real ``dpverify.audits`` entry point of a package on the path)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _example(heading: str) -> str:
    """The first ```python block after ``heading`` in the README."""
    text = README.read_text()
    start = text.index(f"## {heading}\n")
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, start)
    assert match is not None, heading
    return match.group(1)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_add_your_own_mechanism_runs(tmp_path):
    (tmp_path / "example.py").write_text(_example("Add your own mechanism"))
    done = _run(["example.py"], tmp_path)
    assert done.returncode == 0, done.stderr


def test_add_your_own_audit_is_found_through_its_entry_point(tmp_path):
    (tmp_path / "my_audits.py").write_text(_example("Add your own audit"))
    # What `pip install` of a package declaring the entry point leaves on the path.
    info = tmp_path / "my_audits-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-audits\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[dpverify.audits]\nmy_audits = my_audits\n")
    done = _run(["-m", "dpverify", "audit", "--claim", "RR-ln3", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("RR-ln3")]
    assert len(rows) == 2, done.stdout
    assert "holds" in rows[0] and "1.099" in rows[0]  # eps* = ln 3 = 1.0986..., exactly at the claim
    assert "VIOLATED (expected)" in rows[1] and "1.946" in rows[1]  # ln(7/8 / (1/8)) = ln 7 = 1.9459...
    listing = _run(["-m", "dpverify", "list"], tmp_path)
    assert "rr_p_7_8" in listing.stdout and "a_agnostic" in listing.stdout  # ours and dpverify's own
