"""Regression (issue 7, finding 3): float-tight mechanisms were reported as leaking.

The clamped two-sided geometric count is exactly eps-DP in real arithmetic: with a = e^-eps,
output k in 0..n has P(k) = (1-a)/(1+a) a^|k-c| inside and the tails a^c/(1+a), a^(n-c)/(1+a) at
the clamps, c the count of ones. Every ratio between neighbours (c vs c+1) is at most 1/a = e^eps,
with equality, so computed in float64 some ratio lands a few ulps above e^eps: the old checker said
VIOLATED (here eps* = 0.5000000000000002, delta ~3e-17 at n = 4). The verdict states keep rounding from failing CI without hiding a leak.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy

from dpverify import Verdict, verify
from dpverify.verdict import engine
from dpverify.verdict.engine import DEFAULT_FLOAT_ERROR


def clamped_geometric(epsilon, *, exact=False):
    def mechanism(dataset):
        c, n = sum(dataset), len(dataset)
        a = sympy.exp(-sympy.nsimplify(epsilon)) if exact else math.exp(-epsilon)
        inside = (1 - a) / (1 + a)
        dist = {k: inside * a ** abs(k - c) for k in range(1, n)}
        dist[0] = a**c / (1 + a)
        dist[n] = a ** (n - c) / (1 + a)
        return dist

    return mechanism


def test_float_clamped_geometric_holds_within_rounding():
    # Claim exactly 1/2 (a float claim 0.5 is read up to its own rounding, 2**-50 relative,
    # which happens to absorb these ulps too).
    result = verify(clamped_geometric(0.5), records=(0, 1), n=4, epsilon=Fraction(1, 2))
    assert result.verdict is Verdict.HOLDS_WITHIN_ROUNDING
    assert result.holds  # passes a CI gate, and says why
    assert "within the float error" in result.summary()
    # The closest pair's excess is a few ulps, far below its allowance rho (P(S) + e^eps Q(S)).
    assert result.witness.within_rounding
    assert abs(result.witness.excess) < 1e-14 < result.witness.allowance
    # The allowance is the documented model: rho = 2**20 u / (1 - 2**20 u) = 1.1641532e-10.
    assert DEFAULT_FLOAT_ERROR == pytest.approx(2**20 * 2**-53 / (1 - 2**20 * 2**-53), rel=1e-15)
    assert result.float_error == DEFAULT_FLOAT_ERROR


def test_float_clamped_geometric_is_a_literal_violation_of_a_few_ulps():
    # Taken literally (float_error=0) the floats do violate, by rounding only: delta* ~ 3e-17.
    literal = verify(clamped_geometric(0.5), records=(0, 1), n=4, epsilon=Fraction(1, 2), float_error=0)
    assert literal.verdict is Verdict.VIOLATED and not literal.holds
    assert 0 < literal.witness.excess < 1e-15
    assert 0 < literal.delta < 1e-15


def test_exact_clamped_geometric_is_certified():
    result = verify(clamped_geometric(Fraction(1, 2), exact=True), records=(0, 1), n=3, epsilon=sympy.Rational(1, 2))
    assert result.verdict is Verdict.HOLDS and result.holds
    assert result.float_error == 0.0


def test_a_leak_larger_than_rounding_never_passes():
    # Noise calibrated at eps = 0.5 + 1e-6 against a claim of 0.5: every tight ratio exceeds
    # e^0.5 by a factor e^1e-6, i.e. an excess ~1e-6 * P(S), about 10^4 times the allowance.
    result = verify(clamped_geometric(0.5 + 1e-6), records=(0, 1), n=4, epsilon=0.5)
    assert result.verdict is Verdict.VIOLATED and not result.holds
    assert not result.witness.within_rounding
    assert result.witness.excess > 1e3 * result.witness.allowance + 1e-7 * float(result.witness.p)
    # Below the claim by more than rounding: certified HOLDS.
    assert verify(clamped_geometric(0.5), records=(0, 1), n=4, epsilon=0.5 + 1e-6).verdict is Verdict.HOLDS


def test_declared_float_error_is_used_and_validated():
    mechanism = clamped_geometric(0.5 + 1e-6)
    # A mechanism declaring a huge float error (1e-5 relative) cannot be told from its claim.
    mechanism.float_relative_error = 1e-5
    assert verify(mechanism, records=(0, 1), n=4, epsilon=0.5).verdict is Verdict.HOLDS_WITHIN_ROUNDING
    from dpverify.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="float_error must be in"):
        verify(mechanism, records=(0, 1), n=4, epsilon=0.5, float_error=0.5)


def rr_vector(dataset):
    """Randomized response (3/4) on every record, the whole noisy vector released (float64)."""
    out = {}
    for bits in itertools.product((0, 1), repeat=len(dataset)):
        p = 1.0
        for b, x in zip(bits, dataset):
            p *= 0.75 if b == x else 0.25
        out[bits] = p
    return out


@pytest.mark.parametrize(
    ("mechanism", "n", "epsilon", "state"),
    [
        (rr_vector, 5, sympy.log(3), Verdict.HOLDS_WITHIN_ROUNDING),  # every pair tight at ln 3
        (rr_vector, 4, sympy.log(3) - sympy.Rational(1, 10**6), Verdict.VIOLATED),
        (rr_vector, 4, sympy.log(3) + sympy.Rational(1, 10**6), Verdict.HOLDS),
        (clamped_geometric(0.5), 6, Fraction(1, 2), Verdict.HOLDS_WITHIN_ROUNDING),
    ],
)
def test_float_fast_path_agrees_with_interval_certification(monkeypatch, mechanism, n, epsilon, state):
    # The engine decides "surely within rounding" pairs in float with rigorous error bounds; with
    # that shortcut switched off every candidate is certified in interval arithmetic. Same answer.
    fast = verify(mechanism, records=(0, 1), n=n, epsilon=epsilon)
    monkeypatch.setattr(engine, "_surely_within_rounding", lambda _p, candidates, *a: np.zeros(len(candidates), bool))
    slow = verify(mechanism, records=(0, 1), n=n, epsilon=epsilon)
    assert fast.verdict is slow.verdict is state
    assert fast.within_rounding == slow.within_rounding
    assert fast.certified_pairs <= slow.certified_pairs
    if state is Verdict.HOLDS_WITHIN_ROUNDING:
        assert fast.certified_pairs == 1 < slow.certified_pairs  # only the reported closest pair
        assert fast.witness == slow.witness


@pytest.mark.parametrize("epsilon", [5e-324, 5.396111754727906e-309, 1e-300, 0.0])
def test_identical_exact_distributions_hold_at_a_subnormal_epsilon(epsilon):
    # P = Q = (2/3, 1/3) for every dataset: every term P(o) - e^eps Q(o) = -(e^eps - 1) P(o) <= 0, but
    # at eps = 5.4e-309 that is about -3.6e-309, which 1024-bit intervals cannot tell from 0: the pair
    # was UNDECIDED. Outcomes with P(o) <= Q(o) (rationals, compared exactly) are now dropped first.
    def mechanism(dataset):
        return {0: Fraction(2, 3), 1: Fraction(1, 3)}

    for exchangeable in (False, True):
        result = verify(mechanism, records=("a", "b"), n=1, epsilon=epsilon, exchangeable=exchangeable)
        assert result.verdict is Verdict.HOLDS
        assert result.epsilon == 0.0 and math.copysign(1.0, result.epsilon) == 1.0  # not -0.0


def test_the_certifier_drops_only_outcomes_it_can_compare_exactly():
    from dpverify.verdict._certify import certify_pair

    tiny = 5.396111754727906e-309
    same = {0: Fraction(2, 3), 1: Fraction(1, 3)}
    assert certify_pair(same, same, tiny, 0).holds is True
    # P(0) = 2/3 > Q(0) = 1/2: the term 2/3 - e^eps/2 > 0 is kept and decides a violation at delta = 0
    assert certify_pair(same, {0: Fraction(1, 2), 1: Fraction(1, 2)}, tiny, 0).holds is False
    # sympy values: equal ones are dropped (sympy's == is structural), others are left to intervals
    sym = {0: sympy.exp(-1), 1: 1 - sympy.exp(-1)}
    assert certify_pair(sym, sym, tiny, 0).holds is True
    close = {0: sympy.exp(-1) + sympy.Rational(1, 10**400), 1: 1 - sympy.exp(-1) - sympy.Rational(1, 10**400)}
    assert certify_pair(sym, close, tiny, 0).holds is None  # honest: 1024 bits cannot tell 1e-400 from 0


def test_equal_intervals_do_not_prove_p_at_most_q():
    # Found by the Gaussian work: P and Q enclosed by the same interval [0.4, 0.6] on both
    # outcomes (mpmath says the intervals are ==) may be P = (0.6, 0.4), Q = (0.4, 0.6): at eps = 0,
    # delta = 0 that pair violates by 0.2. The outcome used to be dropped as "P <= Q proved", and
    # the pair certified HOLDS. Now nothing is proved: the pair is undecided.
    import mpmath

    from dpverify.verdict._certify import _surely_at_most, certify_pair

    wide = mpmath.iv.mpf(["0.4", "0.6"])
    assert certify_pair({"a": wide, "b": wide}, {"a": wide, "b": wide}, 0, 0).holds is None
    assert not _surely_at_most(wide, wide)
    # ends exactly representable (0.125, 0.25, 0.375): 0.25 <= 0.25 is proved
    assert _surely_at_most(mpmath.iv.mpf([0.125, 0.25]), mpmath.iv.mpf([0.25, 0.375]))
    assert _surely_at_most(mpmath.iv.mpf([0.125, 0.25]), 0.25) and not _surely_at_most(0.25, mpmath.iv.mpf([0.125, 0.25]))
    point = mpmath.iv.mpf("0.5")
    assert _surely_at_most(point, point)  # a point interval is one value


def test_the_precision_ladder_puts_the_callers_precision_back_however_it_ends():
    import mpmath

    from dpverify.verdict import _certify

    old = mpmath.iv.prec
    try:
        mpmath.iv.prec = 77
        seen = []
        with _certify._precision_ladder() as ladder:
            for digits in ladder:
                seen.append((mpmath.iv.prec, digits))
        # 128 bits * 0.30103 = 38.5 -> 38 - 2 = 36 digits; 256 -> 77 - 2 = 75; 512 -> 154 - 2; 1024 -> 308 - 2
        assert seen == [(128, 36), (256, 75), (512, 152), (1024, 306)]
        assert mpmath.iv.prec == 77  # the whole ladder climbed
        with pytest.raises(ZeroDivisionError), _certify._precision_ladder() as ladder:
            for _ in ladder:
                raise ZeroDivisionError
        assert mpmath.iv.prec == 77  # left by an exception
        assert _certify.exact_log_ratio({0: Fraction(3, 4)}, {0: Fraction(1, 4)}) is not None
        assert mpmath.iv.prec == 77  # left by an early return
    finally:
        mpmath.iv.prec = old
