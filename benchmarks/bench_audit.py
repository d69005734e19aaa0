"""Benchmark: the main job (`dpverify audit`) on this checkout against another commit.

Runs the whole audit (every claim on its default instance, 134+ rows) in a fresh process on each
tree, interleaved, best of 3, and prints wall and CPU time and their ratios (see
``benchmarks/_against.py``). The check compared between trees is every row's verdict and eps*:
a speed-up must not change a figure. Also times the benchmark-suite rows alone (the SVT rows'
exact probabilities were 34-47% of the audit).

Run: ``PYTHONPATH=. python3 benchmarks/bench_audit.py [REF] [ROUNDS]`` (REF default ``HEAD~1``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _against import compare

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

if __name__ == "__main__":
    ref = sys.argv[1] if len(sys.argv) > 1 else "HEAD~1"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    compare({"benchmark-suite rows": SUITE, "dpverify audit (all rows)": AUDIT}, ref, rounds)
