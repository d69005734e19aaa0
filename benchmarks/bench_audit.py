"""Benchmark: the main job (`dpverify audit`) on this checkout against another commit.

Runs the whole audit (every claim on its default instance, 134+ rows) in a fresh process on each
tree, interleaved, best of 3, and prints wall and CPU time and their ratios (see
``benchmarks/_against.py``). The check compared between trees is every row's verdict and eps*:
a speed-up must not change a figure. Also times the benchmark-suite rows alone (the SVT rows'
exact probabilities were 34-47% of the audit).

Run: ``.venv/bin/python benchmarks/bench_audit.py [REF] [ROUNDS]`` (REF default ``HEAD~1``).
``--rows`` times each benchmark-suite row instead (process CPU of the row in one audit process, best
of ROUNDS per row, the trees interleaved round by round; every row's eps*, delta* and verdict asserted
equal between the trees), and prints the rows and their totals.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _against import ROOT, _run, checkout, commit_of, compare

AUDIT = """
from dpverify.integrations.audit import audit_cases, run_audit
def audit():
    rows = run_audit(audit_cases())
    return [[row.case.claim, row.case.mechanism, str(row.measurement.verdict), repr(row.measurement.epsilon_star)]
            for row in rows]
report(audit)
"""

SUITE = """
from dpverify.integrations.audit import audit_cases, run_audit
def suite():
    cases = [case for case in audit_cases() if case.claim.startswith("BENCH")]
    rows = run_audit(cases)
    return [[row.case.mechanism, repr(row.measurement.epsilon_star)] for row in rows]
report(suite)
"""

ROWS = """
import time
from dpverify.integrations.audit import audit_cases
def rows():
    out = []
    for case in audit_cases():
        if not case.claim.startswith("BENCH"):
            continue
        started = time.process_time()
        measurement = case.run()
        out.append([f"{case.mechanism} {case.shown or case.parameters}", time.process_time() - started,
                    [str(measurement.verdict), repr(measurement.epsilon_star), repr(measurement.delta_star)]])
    return out
report(rows)
"""


def compare_rows(ref: str, rounds: int) -> None:
    """Per-row process CPU of the benchmark-suite rows, best of ``rounds``, on ``ref`` and here."""
    with checkout(ref) as baseline:
        print(f"baseline {ref} = {commit_of(baseline)}, current = {commit_of(ROOT)} (+ uncommitted changes); "
              f"per-row process CPU, best of {rounds}, interleaved; load average {os.getloadavg()[0]:.2f} at start")
        best: dict[str, dict[str, float]] = {"baseline": {}, "current": {}}
        figures: dict[str, dict[str, list]] = {"baseline": {}, "current": {}}
        for _ in range(rounds):
            for label, tree in (("baseline", baseline), ("current", ROOT)):
                for name, seconds, figure in _run(tree, ROWS)["check"]:
                    best[label][name] = min(best[label].get(name, float("inf")), seconds)
                    figures[label][name] = figure
        print(f"{'row':<78} {'baseline':>9} {'current':>9} {'ratio':>7}")
        for name, before in best["baseline"].items():
            after = best["current"][name]
            same = "" if figures["baseline"][name] == figures["current"][name] else "  FIGURES DIFFER"
            print(f"{name[:78]:<78} {before:>9.3f} {after:>9.3f} {before / after:>6.2f}x{same}")
        before, after = sum(best["baseline"].values()), sum(best["current"].values())
        print(f"{'total (sum of the per-row bests)':<78} {before:>9.3f} {after:>9.3f} {before / after:>6.2f}x; "
              f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--rows"]
    ref = arguments[0] if arguments else "HEAD~1"
    rounds = int(arguments[1]) if len(arguments) > 1 else 3
    if "--rows" in sys.argv:
        compare_rows(ref, rounds)
    else:
        compare({"benchmark-suite rows": SUITE, "dpverify audit (all rows)": AUDIT}, ref, rounds)
