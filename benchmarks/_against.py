"""Timing the same workloads on this checkout and on another commit, interleaved, best of N.

``compare(workloads, ref)`` checks ``ref`` out into a temporary git worktree (detached, removed
afterwards), then runs every workload as a fresh subprocess on each tree in turn — round 1:
baseline, current; round 2: baseline, current; ... — so both see the same machine load, and prints
each workload's best wall and CPU time per tree and the ratio baseline / current. A workload is a
Python snippet run with ``PYTHONPATH`` set to the tree; it must print one JSON object
``{"wall": s, "cpu": s, "check": value}`` as its last line (``PRELUDE``'s ``report`` prints it): ``check``
(e.g. eps*) must be the same on both trees, else the comparison says so (a speed-up that changes
results is not one).

``dpverify.mechanisms`` is the top-level folder ``mechanisms/``, which a wheel installs as that
subpackage (``package-dir`` in pyproject.toml); nothing maps it at import time. The temporary
worktree gets the installed layout, a link ``dpverify/mechanisms -> ../mechanisms``, so its own
folder is found on disk. This checkout's comes from the editable install of the venv running the
benchmark (``make .venv/.installed-stamp``). Every run reports the files ``dpverify`` and
``dpverify.mechanisms`` were loaded from, and one outside its tree stops the comparison.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Put at the start of every workload: a timer printing the JSON line.
PRELUDE = """
import json, sys, time
def report(function):
    w0, c0 = time.perf_counter(), time.process_time()
    check = function()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    files = [getattr(sys.modules.get(name), "__file__", None) for name in ("dpverify", "dpverify.mechanisms")]
    print(json.dumps({"wall": wall, "cpu": cpu, "check": check, "files": [file for file in files if file]}))
"""


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[str]:
    """A detached worktree of ``ref`` (a commit, tag or branch) in the installed layout, removed on exit."""
    folder = tempfile.mkdtemp(prefix="dpverify-baseline-")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--quiet", "--detach", folder, ref], check=True)
    try:
        installed_layout(folder)
        yield folder
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", folder], check=False)


def installed_layout(tree: str) -> None:
    """Link ``tree/dpverify/mechanisms`` to ``tree/mechanisms``, the layout a wheel installs.

    With ``tree`` on ``PYTHONPATH``, ``import dpverify.mechanisms`` then finds the tree's own folder
    on disk, before the editable install's mapping to this checkout. An older commit whose
    ``dpverify/`` holds its mechanisms (or has no ``mechanisms/`` beside it) is left as it is.
    """
    target = os.path.join(tree, "mechanisms")
    link = os.path.join(tree, "dpverify", "mechanisms")
    if os.path.isfile(os.path.join(target, "__init__.py")) and not os.path.lexists(link):
        os.symlink(os.path.join(os.pardir, "mechanisms"), link, target_is_directory=True)


def _run(tree: str, snippet: str) -> dict:
    # the caller's other path entries (an optional package installed apart, such as numba) stay,
    # after the tree; a dpverify checkout among them would shadow nothing, but is dropped anyway
    extra = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
             if entry and not os.path.isdir(os.path.join(entry, "dpverify"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tree, *extra])}
    done = subprocess.run([sys.executable, "-c", PRELUDE + snippet], cwd=tree, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"workload failed in {tree}:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    inside = os.path.realpath(tree) + os.sep
    outside = [file for file in result.get("files", []) if not os.path.realpath(file).startswith(inside)]
    if outside:
        raise RuntimeError(f"the workload run on {tree} loaded {outside}, outside that tree: run the benchmark "
                           f"with the python of this checkout's venv (.venv/bin/python, made by `make "
                           f".venv/.installed-stamp`), whose editable install maps dpverify.mechanisms to mechanisms/")
    return result


def commit_of(tree: str) -> str:
    return subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip() or "?"


def compare(workloads: dict[str, str], ref: str = "HEAD~1", rounds: int = 3) -> None:
    """Print, per workload, the best of ``rounds`` on ``ref`` and on this checkout, interleaved."""
    with checkout(ref) as baseline:
        print(f"baseline {ref} = {commit_of(baseline)}, current = {commit_of(ROOT)} (+ uncommitted changes); "
              f"best of {rounds}, interleaved; load average {os.getloadavg()[0]:.2f} at start")
        print(f"{'workload':<34} {'baseline wall/cpu':>20} {'current wall/cpu':>20} {'ratio wall':>10} {'ratio cpu':>9}")
        for name, snippet in workloads.items():
            best = {"baseline": [float("inf")] * 2, "current": [float("inf")] * 2}
            checks = {}
            for _ in range(rounds):
                for label, tree in (("baseline", baseline), ("current", ROOT)):
                    result = _run(tree, snippet)
                    best[label] = [min(best[label][0], result["wall"]), min(best[label][1], result["cpu"])]
                    checks[label] = result["check"]
            b, c = best["baseline"], best["current"]
            same = "" if checks["baseline"] == checks["current"] else f"  RESULTS DIFFER: {checks}"
            print(f"{name:<34} {b[0]:>9.3f}/{b[1]:<9.3f} {c[0]:>10.3f}/{c[1]:<9.3f} {b[0] / c[0]:>9.2f}x "
                  f"{b[1] / c[1]:>8.2f}x{same}", flush=True)
