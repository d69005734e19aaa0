"""Audit rows of every kind, for the tests of the terminal table and the reports (no mechanism runs).

``ROWS`` has one row of each kind the reports tell apart, with figures chosen by hand:

====  ===========================  ====================  ======  =======  ===========
 #    mechanism                    verdict               eps*    claimed  kind
====  ===========================  ====================  ======  =======  ===========
 1    randomized_response          HOLDS                 ln 3    ln 3     holds
 2    mutant_without_half          VIOLATED, a mutant    1.962   1        caught
 3    baseline                     none (measured)       0.1214  2.773    measured
 4    exchangeable_learner         UNDECIDED             0.5     1        undecided
 5    leaky_learner                VIOLATED, asserted    1.5     1        unexpected
 6    mutant_that_holds            HOLDS, a mutant       0.9     1        unexpected
====  ===========================  ====================  ======  =======  ===========

Row 1 has a long instance (more than 72 characters: the old table cut it there), row 3 a privacy
profile and rows 1-2 a sweep series of their own. Rows 1 and 2 cite a source with a link (a file
path, as the shipped audit's are), row 5 a user's own source without one. Row 2's witness is text
only; row 5 has the engine's witness: D = (0, 1), D' = (1, 1), S = {'leak'}, P = 3/5, Q = 1/10, so
3/5 = 0.6 > e^1 * 0.1 + 0.1 = 0.371828182846. Row 1 has a proved assumption, row 4 an unproved one
(why it is UNDECIDED).
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpverify import Verdict
from dpverify.integrations.audit import AuditCase, AuditRow, Expect, Measurement, SweepSeries
from dpverify.verdict.assumptions import Assumption, Status
from dpverify.verdict.witness import Witness

LONG_INSTANCE = ("class=thresholds, X=3, n=12, n_prime=3, eta=1/3, eps=1/4, alpha=1/10000, "
                 "phi=mutant_consistent, representative=last")
SWEEP = SweepSeries("toy sweep", variable="epsilon")
#: delta(eps) of the measured row at eps = 0, 0.06, 0.12: 0.04, 0.02, 0 (a straight line, by hand)
PROFILE = [{"epsilon": 0.0, "delta": 0.04}, {"epsilon": 0.06, "delta": 0.02}, {"epsilon": 0.12, "delta": 0.0}]
#: Row 5's witness (module docstring).
WITNESS = Witness(dataset=(0, 1), neighbor=(1, 1), output_set=frozenset({"leak"}), p=Fraction(3, 5), q=Fraction(1, 10),
                  epsilon=1.0, delta=0.1)
#: Row 5's claim and source, in a user's own words (no link).
USER_STATEMENT, USER_SOURCE = "My learner is (1, 0.1)-DP: one record moves each output by at most e.", "my notes, sec. 2"
PROVED = Assumption("exchangeable", "the output ignores the order of the records", Status.PROVED,
                    "proved on every ordering (2 datasets)")
UNPROVED = Assumption("exchangeable", "the output ignores the order of the records", Status.UNPROVED,
                      "tested on 20 random datasets", "pass exchangeable=\"assume\" to accept it")


def _row(claim, mechanism, parameters, measurement, seconds, *, shown=None, **case):
    return AuditRow(AuditCase(claim, mechanism, parameters, lambda: measurement, shown=shown, **case),
                    measurement, seconds)


def rows() -> list[AuditRow]:
    ln3 = math.log(3)
    return [
        _row("RR", "randomized_response", {"epsilon": 0.5, "p": "3/4"},
             Measurement(ln3, 0.0, ln3, 0.0, Verdict.HOLDS, assumptions=(PROVED,)), 0.01, shown=LONG_INSTANCE,
             sweep=SWEEP, source="[W65] randomized response", source_link="/project/docs/bibliography.md"),
        _row("C1", "mutant_without_half", {"epsilon": 0.25},
             Measurement(1.962, 0.179, 1.0, 0.0, Verdict.VIOLATED, witness="D  = (0,)\nD' = (1,)"), 0.02,
             expect=Expect.VIOLATED, parent="exponential_mechanism", sweep=SWEEP, description="The factor 2 dropped.",
             source="[LWY25] Lemma 11; claims ledger C1", source_link="/project/docs/claims.md#C1"),
        _row("C8b", "baseline", {"n": 6},
             Measurement(0.1214, 0.0, 2.773, 0.0, Verdict.HOLDS, details={"privacy_profile": PROFILE}), 0.03,
             expect=Expect.MEASURED),
        _row("C13", "exchangeable_learner", {"n": 8},
             Measurement(0.5, 0.0, 1.0, 0.0, Verdict.UNDECIDED, assumptions=(UNPROVED,)), 1.5),
        _row("C5", "leaky_learner", {"n": 6}, Measurement(1.5, 0.2, 1.0, 0.1, Verdict.VIOLATED, witness_data=WITNESS), 0.5,
             description=USER_STATEMENT, source=USER_SOURCE),
        _row("C14", "mutant_that_holds", {"n": 4}, Measurement(0.9, 0.0, 1.0, 0.0, Verdict.HOLDS), 0.04,
             expect=Expect.VIOLATED, parent="item_level_learner"),
    ]


#: The counts of ``rows()``: 1 holds + 1 caught as expected, 1 measured, 2 unexpected, 1 undecided.
SUMMARY = "6 rows: 2 as expected (1 holds, 1 mutant caught), 1 measured, 2 unexpected, 1 undecided"
