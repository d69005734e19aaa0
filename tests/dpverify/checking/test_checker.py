"""verify / analyze: tight claims, hand-computed eps*, broken mechanisms caught with real witnesses,
(eps, delta) claims, add/remove, the exchangeable shortcut and a false exchangeability declaration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from math import comb

import mpmath
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpverify import Distribution, Verdict, analyze, exchangeable, verify

RR_HIGH, RR_LOW = Fraction(3, 4), Fraction(1, 4)


def randomized_response(dataset):
    """Report the single record with probability 3/4, the other bit with 1/4: eps* = ln 3."""
    (bit,) = dataset
    return {bit: RR_HIGH, 1 - bit: RR_LOW}


def exponential_mechanism(epsilon, *, halve=True):
    """P(h) proportional to exp(-eps * |h - sum(d)| / 2) over h in {0, 1, 2} (halve=False drops
    the 2, the classic mistake)."""
    scale = epsilon / 2 if halve else epsilon

    def mechanism(dataset):
        s = sum(dataset)
        weights = {h: math.exp(-scale * abs(h - s)) for h in (0, 1, 2)}
        total = math.fsum(weights.values())
        return {h: w / total for h, w in weights.items()}

    return mechanism


def em_epsilon_star(scale):
    """Hand-derived eps* of the EM above with weights exp(-scale * |h - s|), records {0, 1}, n = 2.

    With a = e^-scale: s = 0 has weights (1, a, a^2), Z0 = 1 + a + a^2; s = 1 has (a, 1, a),
    Z1 = 1 + 2a. The largest ratio is at h = 0: P0(0)/P1(0) = (1/a) * Z1/Z0, so
    eps* = scale + ln((1 + 2a) / (1 + a + a^2)); the reverse direction gives
    scale + ln(Z0/Z1) < that because a^2 < a. s = 1 vs s = 2 is the mirror image.
    """
    a = mpmath.exp(-mpmath.mpf(scale))
    return float(scale + mpmath.log((1 + 2 * a) / (1 + a + a * a)))


def to_mp(value):
    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    if isinstance(value, sympy.Basic):
        return mpmath.mpf(str(sympy.N(value, 60)))
    return mpmath.mpf(value)


def assert_witness_really_violates(mechanism, witness, epsilon, delta):
    """Recompute P(S), Q(S) from the mechanism itself and check P(S) > e^eps Q(S) + delta."""
    with mpmath.workdps(60):
        first, second = mechanism(witness.dataset), mechanism(witness.neighbor)
        p = mpmath.fsum(to_mp(first.get(o, 0)) for o in witness.output_set)
        q = mpmath.fsum(to_mp(second.get(o, 0)) for o in witness.output_set)
        assert p == pytest.approx(to_mp(witness.p), rel=1e-14, abs=0)
        assert q == pytest.approx(to_mp(witness.q), rel=1e-14, abs=0)
        assert p > mpmath.exp(to_mp(epsilon)) * q + to_mp(delta)


# -- randomized response: tight at ln 3 -------------------------------------------------------------


@pytest.mark.parametrize("claim", [sympy.log(3), math.log(3)], ids=["sympy", "float"])
def test_rr_holds_at_exactly_ln3(claim):
    result = verify(randomized_response, records=[0, 1], n=1, epsilon=claim)
    assert result.holds, result.summary()
    assert result.witness is None and result.undecided == 0
    assert result.epsilon == pytest.approx(math.log(3), abs=1e-15)
    assert result.delta <= 1e-15
    assert result.pairs == 1 and result.datasets == 2  # {(0,), (1,)}
    assert "HOLDS" in result.summary()


@pytest.mark.parametrize(
    "claim", [math.log(3) - 1e-6, sympy.log(3) - sympy.Rational(1, 10**6)], ids=["float", "sympy"]
)
def test_rr_violated_just_below_ln3(claim):
    result = verify(randomized_response, records=[0, 1], n=1, epsilon=claim)
    assert not result.holds and not result
    w = result.witness
    assert w is not None
    assert {w.dataset, w.neighbor} == {(0,), (1,)}
    assert w.output_set == frozenset(w.dataset)  # S = {the record of D}
    assert w.p == Fraction(3, 4) and w.q == Fraction(1, 4)
    assert_witness_really_violates(randomized_response, w, claim, 0)
    # delta at eps = ln 3 - 1e-6: 3/4 - e^(ln 3 - 1e-6) / 4 = 3/4 (1 - e^-1e-6) ~ 7.5e-7
    assert result.delta == pytest.approx(0.75 * (1 - math.exp(-1e-6)), rel=1e-6)
    assert "VIOLATED" in result.summary() and "witness" in result.summary()


def test_large_finite_epsilon():
    assert verify(randomized_response, records=[0, 1], n=1, epsilon=1000.0).holds
    result = verify(lambda d: {d[0]: 1}, records=[0, 1], n=1, epsilon=1000.0)
    assert not result.holds  # 1 > e^1000 * 0 + 0
    assert "1 > e^eps" in str(result.witness)


# -- the exponential mechanism, hand-computed eps* --------------------------------------------------


def test_em_epsilon_star_by_hand():
    # eps = 1, a = e^-1/2 = 0.606531: (1 + 2a)/(1 + a + a^2) = 2.213061/1.974410 = 1.120872,
    # ln = 0.114107, eps* = 0.5 + 0.114107 = 0.614107
    expected = em_epsilon_star(0.5)
    assert expected == pytest.approx(0.614107, abs=1e-6)
    for declared in (False, True):
        result = verify(exponential_mechanism(1.0), records=[0, 1], n=2, epsilon=1.0, exchangeable=declared)
        assert result.holds
        assert result.epsilon == pytest.approx(expected, abs=1e-12)
        assert result.pairs == (2 if declared else 4)  # C(2,1) C(2,2) = 2; 2^2 * 2 * 1 / 2 = 4
    assert verify(exponential_mechanism(1.0), records=[0, 1], n=2, epsilon=expected + 1e-9).holds
    below = verify(exponential_mechanism(1.0), records=[0, 1], n=2, epsilon=expected - 1e-6)
    assert not below.holds
    assert_witness_really_violates(exponential_mechanism(1.0), below.witness, expected - 1e-6, 0)


def test_em_tight_with_exact_sympy_claim():
    half = sympy.Rational(1, 2)
    a = sympy.exp(-half)

    def exact_em(dataset):
        s = sum(dataset)
        return Distribution.from_weights({h: sympy.exp(-half * abs(h - s)) for h in (0, 1, 2)})

    star = half + sympy.log((1 + 2 * a) / (1 + a + a**2))
    result = verify(exact_em, records=[0, 1], n=2, epsilon=star)
    assert result.holds and result.undecided == 0
    assert result.epsilon == pytest.approx(float(star), abs=1e-12)
    assert not verify(exact_em, records=[0, 1], n=2, epsilon=star - sympy.Rational(1, 10**9)).holds


# -- known-broken mechanisms ------------------------------------------------------------------------


def test_output_the_data_is_caught():
    def identity(dataset):
        return {dataset: 1}

    result = verify(identity, records=[0, 1], n=2, epsilon=5.0)
    assert not result.holds
    assert result.epsilon == math.inf and result.delta == 1.0
    w = result.witness
    assert w.output_set == frozenset({w.dataset}) and w.p == 1 and w.q == 0
    assert_witness_really_violates(identity, w, 5.0, 0)


def test_em_without_the_factor_two_is_caught():
    # eps* = 1 + ln((1 + 2b)/(1 + b + b^2)), b = e^-1: 1 + ln(1.735759/1.503214) = 1 + ln 1.154694 = 1.143839 > 1
    broken = exponential_mechanism(1.0, halve=False)
    result = verify(broken, records=[0, 1], n=2, epsilon=1.0)
    assert not result.holds
    assert result.epsilon == pytest.approx(em_epsilon_star(1.0), abs=1e-12)
    assert result.epsilon == pytest.approx(1.143839, abs=1e-6)
    assert_witness_really_violates(broken, result.witness, 1.0, 0)
    # The worst ratio is at output h = 0 (or its mirror h = 2) between sums 0 and 1 (or 2 and 1).
    assert result.witness.output_set in (frozenset({0}), frozenset({2}))


# -- (eps, delta) claims ----------------------------------------------------------------------------


def leak_first(delta0):
    def mechanism(dataset):
        return {("first", dataset[0]): delta0, "constant": 1 - delta0}

    return mechanism


def test_delta_claims_around_the_true_delta():
    # Pairs differing in the first record: S = {("first", D[0])} has P = 1/10, Q = 0, so
    # delta* = 1/10 at every eps (and eps* = inf).
    mechanism = leak_first(Fraction(1, 10))
    records = [0, 1]
    exact = verify(mechanism, records=records, n=2, epsilon=1.0, delta=Fraction(1, 10))
    assert exact.holds and exact.epsilon == math.inf and exact.delta == pytest.approx(0.1, abs=1e-16)
    assert verify(mechanism, records=records, n=2, epsilon=0, delta=0.2).holds
    assert verify(mechanism, records=records, n=2, epsilon=1.0, delta=0.1).holds  # float 0.1 > 1/10
    for below in (Fraction(1, 10) - Fraction(1, 10**12), 0.0999999, 0.0):
        result = verify(mechanism, records=records, n=2, epsilon=1.0, delta=below)
        assert not result.holds
        assert result.witness.p == Fraction(1, 10) and result.witness.q == 0
        assert result.witness.output_set == frozenset({("first", result.witness.dataset[0])})
        assert_witness_really_violates(mechanism, result.witness, 1.0, below)


def test_rr_tight_delta_claims():
    # eps = 0: delta* = 3/4 - 1/4 = 1/2 exactly; eps = 1: delta* = 3/4 - e/4 (sympy, exact).
    assert verify(randomized_response, records=[0, 1], n=1, epsilon=0, delta=Fraction(1, 2)).holds
    assert not verify(
        randomized_response, records=[0, 1], n=1, epsilon=0, delta=Fraction(1, 2) - Fraction(1, 10**40)
    ).holds
    tight = sympy.Rational(3, 4) - sympy.E / 4
    result = verify(randomized_response, records=[0, 1], n=1, epsilon=1, delta=tight)
    assert result.holds and result.undecided == 0
    assert result.delta == pytest.approx(float(tight), abs=1e-15)
    below = verify(
        randomized_response, records=[0, 1], n=1, epsilon=1, delta=tight - sympy.Rational(1, 10**30)
    )
    assert not below.holds
    assert_witness_really_violates(randomized_response, below.witness, 1, tight - sympy.Rational(1, 10**30))


def test_float_probabilities_are_taken_as_their_exact_binary_value():
    # float 0.1 = 0.1000000000000000055...: strictly more than the exact claim 1/10, by 5.6e-18,
    # far inside the float error model (1.16e-10 relative): HOLDS_WITHIN_ROUNDING, which passes.
    mechanism = leak_first(0.1)
    result = verify(mechanism, records=[0, 1], n=1, epsilon=0, delta=Fraction(1, 10))
    assert result.verdict is Verdict.HOLDS_WITHIN_ROUNDING and result.holds
    assert result.witness.within_rounding
    assert result.witness.excess == pytest.approx(float(Fraction(0.1) - Fraction(1, 10)), abs=1e-30)
    # Declared exact (no float error): the binary value 0.1000000000000000055 violates 1/10.
    strict = verify(mechanism, records=[0, 1], n=1, epsilon=0, delta=Fraction(1, 10), float_error=0)
    assert strict.verdict is Verdict.VIOLATED and not strict.holds
    assert strict.witness.p == 0.1 and not strict.witness.within_rounding
    assert verify(mechanism, records=[0, 1], n=1, epsilon=0, delta=0.1).holds


# -- add / remove ------------------------------------------------------------------------------------


def test_add_remove_relation():
    def size_revealing(dataset):
        big = len(dataset) == 2
        return {"big": RR_HIGH if big else RR_LOW, "small": RR_LOW if big else RR_HIGH}

    sub = verify(size_revealing, records=[0, 1], n=2, epsilon=0)
    assert sub.holds and sub.epsilon == 0.0  # same size: same output
    ar = verify(size_revealing, records=[0, 1], n=2, epsilon=sympy.log(3), neighbors="add_remove")
    assert ar.holds and ar.neighbors == "add_remove"
    assert ar.epsilon == pytest.approx(math.log(3), abs=1e-15)
    assert ar.pairs == 8 and ar.datasets == 6  # 2^2 * 2 pairs; 4 + 2 datasets
    bad = verify(size_revealing, records=[0, 1], n=2, epsilon=1.0, neighbors="add_remove")
    assert not bad.holds
    assert len(bad.witness.dataset) + len(bad.witness.neighbor) == 3
    assert {bad.witness.p, bad.witness.q} == {RR_HIGH, RR_LOW}


def test_em_under_add_remove_has_the_same_epsilon_star():
    # Removing a record changes the sum by 0 or 1, exactly like substituting one.
    for declared in (False, True):
        result = verify(
            exponential_mechanism(1.0), records=[0, 1], n=2, epsilon=1.0,
            neighbors="add_remove", exchangeable=declared,
        )
        assert result.holds
        assert result.epsilon == pytest.approx(em_epsilon_star(0.5), abs=1e-12)
        assert result.pairs == (4 if declared else 8)  # C(2,1) * 2; 2^2 * 2


# -- exchangeability --------------------------------------------------------------------------------


@st.composite
def exchangeable_tables(draw):
    records = ["a", "b", "c"][: draw(st.integers(2, 3))]
    n = draw(st.integers(1, 3))
    table = {}
    for multiset in itertools.combinations_with_replacement(records, n):
        weights = draw(st.lists(st.integers(0, 6), min_size=3, max_size=3).filter(any))
        table[multiset] = dict(enumerate(weights))
    return records, n, table


def reference_epsilon_star(records, n, table):
    """eps* straight from the definition over every ordered pair of neighbouring datasets."""
    def dist(dataset):
        w = table[tuple(sorted(dataset))]
        total = sum(w.values())
        return {o: Fraction(v, total) for o, v in w.items()}

    worst = 0.0
    for d in itertools.product(records, repeat=n):
        for position, z in itertools.product(range(n), records):
            other = d[:position] + (z,) + d[position + 1 :]
            p, q = dist(d), dist(other)
            for o in p:
                if p[o] > 0:
                    worst = max(worst, math.inf if q[o] == 0 else math.log(p[o] / q[o]))
    return worst


@settings(max_examples=40, deadline=None)
@given(exchangeable_tables(), st.floats(0, 3), st.sampled_from([0, 0.05, 0.3]))
# Found by CI: identical distributions at a subnormal epsilon were UNDECIDED (intervals cannot
# separate P(o) - e^eps P(o) from 0 below eps ~ 2^-1024); the certifier now drops P(o) <= Q(o).
@example((["a", "b"], 1, {("a",): {0: 2, 1: 1, 2: 0}, ("b",): {0: 2, 1: 1, 2: 0}}), 5.396111754727906e-309, 0)
def test_exchangeable_shortcut_equals_full_enumeration(instance, epsilon, delta):
    records, n, table = instance

    def mechanism(dataset):
        return Distribution.from_weights(table[tuple(sorted(dataset))])

    full = verify(mechanism, records=records, n=n, epsilon=epsilon, delta=delta, exchangeable=False)
    short = verify(mechanism, records=records, n=n, epsilon=epsilon, delta=delta, exchangeable=True)
    z = len(records)
    assert short.exchangeable and short.symmetry_violation is None
    assert short.pairs == comb(z + n - 2, n - 1) * comb(z, 2)
    assert full.pairs == z**n * n * (z - 1) // 2
    assert short.epsilon == full.epsilon
    assert short.delta == full.delta
    assert short.holds == full.holds
    assert Verdict.UNDECIDED not in (short.verdict, full.verdict)  # exact rationals are always decided
    assert short.epsilon == pytest.approx(reference_epsilon_star(records, n, table), abs=1e-12)
    if not short.holds:
        assert_witness_really_violates(mechanism, short.witness, epsilon, delta)
        assert_witness_really_violates(mechanism, full.witness, epsilon, delta)


@pytest.mark.parametrize("epsilon", [0, 1.0, 10.0, 700.0, 1000.0])
def test_false_exchangeability_declaration_is_reported_and_checked_as_black_box(epsilon):
    @exchangeable
    def output_first(dataset):
        return {dataset[0]: 1}

    assert output_first.exchangeable is True
    result = verify(output_first, records=[0, 1], n=2, epsilon=epsilon)
    violation = result.symmetry_violation
    assert violation is not None
    assert sorted(violation.dataset) == sorted(violation.permuted)
    assert violation.first != violation.second
    assert not result.exchangeable and result.pairs == 4  # 2^2 * 2 * 1 / 2
    assert not result.holds
    assert result.epsilon == math.inf
    assert result.witness.p == 1 and result.witness.q == 0
    assert "declared exchangeable" in result.summary()


def test_false_declaration_by_argument_is_caught_where_the_shortcut_would_lie():
    # Output = whether the records come in sorted order: on sorted (multiset) datasets it is
    # constant, so only the black-box fallback can see it.
    def order_sensitive(dataset):
        return {dataset[0] <= dataset[1]: 1}

    result = verify(order_sensitive, records=[0, 1, 2], n=2, epsilon=3.0, exchangeable=True)
    assert result.symmetry_violation is not None
    assert not result.holds and result.epsilon == math.inf
    # On sorted (multiset) datasets this mechanism is constant, so the shortcut alone says eps* = 0.
    short = analyze(lambda d: order_sensitive(tuple(sorted(d))), records=[0, 1, 2], n=2, exchangeable=True)
    assert short.epsilon_star() == 0.0


# -- analyze ------------------------------------------------------------------------------------------


def test_analyze_stability_and_profile():
    # P(1) = (1 + sum(D)) / 4: neighbours change the sum by 1, so P(1) moves by 1/4.
    def bernoulli(dataset):
        p1 = Fraction(1 + sum(dataset), 4)
        return {1: p1, 0: 1 - p1}

    analysis = analyze(bernoulli, records=[0, 1], n=2)
    assert analysis.stability() == 0.25
    # sum 0 -> (3/4, 1/4), sum 1 -> (1/2, 1/2), sum 2 -> (1/4, 3/4): worst ratio (1/2)/(1/4) = 2
    assert analysis.epsilon_star() == pytest.approx(math.log(2), abs=1e-15)
    assert analysis.delta_for_epsilon(0) == 0.25  # total variation 3/4 - 1/2
    # delta(ln 1.5) = 1/2 - 1.5 * 1/4 = 1/8 (sum 0 vs 1 at output 1, reversed)
    assert analysis.profile([0, math.log(1.5)]) == pytest.approx([0.25, 0.125], abs=1e-15)
    assert analysis.profile([math.log(2)])[0] <= 1e-15
    assert len(analysis.pairs) == 4 and analysis.matrix.shape == (4, 2)


def test_analyze_pair_epsilons_by_hand():
    def bernoulli(dataset):
        p1 = Fraction(1 + sum(dataset), 4)
        return {1: p1, 0: 1 - p1}

    analysis = analyze(bernoulli, records=[0, 1], n=2)
    # Black-box pairs over {00, 01, 10, 11}: every substitute pair changes the sum by 1, and
    # each is between sums {0, 1} or {1, 2}: eps* = ln 2 for all four.
    assert analysis.pair_epsilons().tolist() == pytest.approx([math.log(2)] * 4, abs=1e-15)


def test_progress_callback_receives_lines():
    lines: list[str] = []
    result = verify(randomized_response, records=[0, 1], n=1, epsilon=sympy.log(3), progress=lines.append)
    assert result.holds
    assert lines and all(isinstance(line, str) for line in lines)
    evaluated = [line for line in lines if "datasets" in line]
    assert "randomized_response" in evaluated[-1] and "2/2" in evaluated[-1] and "100%" in evaluated[-1]


def test_returning_a_distribution_is_accepted():
    result = verify(
        lambda d: Distribution({d[0]: RR_HIGH, 1 - d[0]: RR_LOW}), records=[0, 1], n=1, epsilon=sympy.log(3)
    )
    assert result.holds
