"""Tests of the two-sided geometric noise machinery (dpverify.mechanisms.geometric) and report noisy max with it.

* Naive reference: ``P(argmax = i)`` by direct summation over ``|y| <= n`` of the winner's pmf times the
  others' CDFs, each CDF itself a direct sum of the pmf (mpmath, 40 digits; no geometric series). The
  dropped mass is at most ``(k + 1) P(|Z| > n - max|q| - 1)`` (the outer sum and each of the ``k`` CDFs lose
  a geometric tail; a product of numbers in [0, 1] moves by at most the sum of their moves).
* The geometric mechanism itself: ``P(c + Z = y) / P(c + 1 + Z = y) = a^(|y - c| - |y - c - 1|)`` is
  ``a^-1 = e^eps`` for ``y <= c`` and ``a = e^-eps`` above: eps* = eps exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
import sympy

from dpverify import Verdict
from dpverify.checking.input_pairs import all_query_vectors, statdp_patterns, verify_pairs
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.geometric import (
    A,
    RationalExp,
    _pmf,
    argmax_fractions,
    argmax_values,
    common_rate,
    total_is_one,
)
from dpverify.mechanisms.noise import Geometric
from dpverify.mechanisms.noisy_max import NoisyMaxValue, ReportNoisyMax

EPS = Fraction(7, 10)


def _naive_argmax(values: list[int], rate: Fraction, n: int) -> tuple[list, mpmath.mpf]:
    with mpmath.workdps(40):
        a = mpmath.exp(-mpmath.mpf(rate.numerator) / rate.denominator)
        c = (1 - a) / (1 + a)
        pmf = {z: c * a ** abs(z) for z in range(-2 * n, 2 * n + 1)}
        cdf, running = {}, mpmath.mpf(0)
        for z in range(-2 * n, 2 * n + 1):
            running += pmf[z]
            cdf[z] = running
        out = []
        for i, own in enumerate(values):
            total = []
            for y in range(-n, n + 1):
                term = pmf[y - own]
                for j, v in enumerate(values):
                    if j != i:
                        term *= cdf[y - 1 - v if j < i else y - v]  # earlier indices strictly below (ties: smallest)
                total.append(term)
            out.append(mpmath.fsum(total))
        tail = 2 * a ** (n - max(map(abs, values))) / (1 + a)  # P(|Z| > n - max|q| - 1)
        return out, (len(values) + 1) * tail + mpmath.mpf(10) ** -35


@pytest.mark.parametrize("values", [[0, 1, 1], [2, 0, 2], [1, 1, 1], [0, 2, 1, 2], [-3, 4, 0]])
@pytest.mark.parametrize("rate", [Fraction(1, 2), Fraction(7, 20)])
def test_argmax_matches_the_naive_sum(values, rate):
    reference, bound = _naive_argmax(values, rate, 200)
    assert bound < 1e-25
    exact = argmax_values(values, rate)
    for i, expected in enumerate(reference):
        low, high = (mpmath.mp.make_mpf(end) for end in exact[i].interval(300)._mpi_)
        with mpmath.workdps(40):
            assert abs(low - expected) <= bound and abs(high - expected) <= bound
    assert total_is_one(exact.values())
    assert sum(argmax_fractions(values).values()) == 1  # as rational functions of a, in sympy's QQ(a)


def test_ties_go_to_the_smallest_index():
    # two equal answers: index 0 wins every tie, so it beats index 1 by exactly
    # P(tie) = sum_z pmf(z)^2 = ((1 - a)/(1 + a))^2 (1 + 2 a^2/(1 - a^2))
    p = argmax_fractions([0, 0])
    tie = ((1 - A) / (1 + A)) ** 2 * (1 + 2 * A**2 / (1 - A**2))
    assert p[0] - p[1] == tie and p[0] + p[1] == 1


def test_geometric_mechanism_has_ratio_exactly_e_eps():
    eps = Fraction(7, 10)
    assert Geometric(1 / eps).scale == Fraction(10, 7)
    here, there = _pmf(3), _pmf(4)  # count 3 against count 4 (the scaled pmfs: the constant cancels)
    ratios = set()
    for y in range(-5, 12):
        p_y, q_y = (sum(n * A**x for x, n in f.value(y).items()) for f in (here, there))
        ratios.add(p_y / q_y)
    assert ratios == {A, 1 / A}  # a^-1 = e^(1/scale) = e^eps: eps* = eps exactly
    assert sympy.simplify(sympy.exp(sympy.Rational(7, 10)) - 1 / sympy.exp(-sympy.Rational(7, 10))) == 0


@pytest.mark.parametrize("eps, expected", [(Fraction(7, 10), 0.6753200471698327), (Fraction(1, 10), 0.0942142527182633)])
def test_report_noisy_max_geometric_on_statdp_patterns(eps, expected):
    # the values of the earlier QQ(a) implementation (GeometricNoisyMax), which summed the same series
    # with sympy's rational functions: 0.675320 and 0.0942143 (README); the naive check is below
    mechanism = ReportNoisyMax(eps, noise="geometric")
    result = verify_pairs(mechanism, pairs=statdp_patterns(5), epsilon=eps)
    assert result.verdict is Verdict.HOLDS
    assert result.epsilon == pytest.approx(expected, rel=1e-13)
    assert result.worst_pair == ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))
    distribution = mechanism((1, 1, 1, 1, 1))
    assert distribution[0] > distribution[4]  # ties favour the smallest index
    assert float(mechanism.exact_distribution((0, 1, 2))[2]) == pytest.approx(mechanism((0, 1, 2))[2], rel=1e-15)


def test_report_noisy_max_geometric_epsilon_star_against_the_naive_sum():
    # eps* on the patterns = max |ln P_D(i) - ln P_D'(i)| from the naive probabilities (error <= 2d/(p_min - d))
    rate = EPS / 2
    values = {}
    for pair in statdp_patterns(5):
        for q in pair:
            if q not in values:
                values[q], bound = _naive_argmax(list(q), rate, 250)
    with mpmath.workdps(40):
        naive = max(abs(mpmath.log(p) - mpmath.log(q)) for a, b in statdp_patterns(5) for p, q in zip(values[a], values[b]))
        smallest = min(min(v) for v in values.values())
    assert abs(naive - 0.6753200471698327) <= 2 * bound / (smallest - bound) + 1e-15


def test_report_noisy_max_geometric_holds_on_every_pair_and_a_mutant_is_caught():
    full = verify_pairs(ReportNoisyMax(EPS, noise="geometric"), pairs=all_query_vectors(4), epsilon=EPS)
    assert full.verdict is Verdict.HOLDS and full.epsilon < 0.7
    # noise of scale 1/eps instead of 2/eps (half the noise): caught with a witness among the pairs
    mutant = verify_pairs(ReportNoisyMax(EPS, noise="geometric", scale_factor=1), pairs=statdp_patterns(5), epsilon=EPS)
    assert mutant.verdict is Verdict.VIOLATED and mutant.witness.excess > 0
    assert mutant.epsilon > 1.0


def test_one_class_for_every_noise():
    mechanism = ReportNoisyMax(EPS, noise="geometric")
    assert mechanism.name == "report_noisy_max_geometric" and mechanism.rational_values
    assert not hasattr(mechanism, "exact_probabilities")  # RationalExp values: exact_values instead
    import dpverify.mechanisms.geometric as geometric

    assert not hasattr(geometric, "GeometricNoisyMax")  # the alias (never released) is gone: no cycle


def test_rational_exp_evaluation_and_exactness():
    # 1/(1 + a) at a = e^(-1/2): its float, a tight interval and its sympy value agree
    value = RationalExp({0: 1}, {(1, 1): 1}, Fraction(1, 2))
    expected = 1 / (1 + math.exp(-0.5))
    assert value.to_float() == pytest.approx(expected, rel=2**-52)
    enclosure = value.enclosure(200)
    assert enclosure.a <= expected * (1 + 1e-15) and enclosure.b >= expected * (1 - 1e-15)
    assert sympy.simplify(value.to_sympy() - 1 / (1 + sympy.exp(-sympy.Rational(1, 2)))) == 0
    assert value.to_field() == 1 / (1 + A)
    # a numerator cancelling heavily near a = 1 still gets a narrow enclosure: (1 - a^20)/(1 - a) at a = e^(-1/1000)
    series = RationalExp({x: 1 for x in range(20)}, {}, Fraction(1, 1000))
    cancelling = RationalExp({0: 1, 20: -1}, {(1, -1): 1}, Fraction(1, 1000))
    assert series.to_float() == pytest.approx(cancelling.to_float(), rel=1e-15)
    assert series.to_float() == pytest.approx(sum(math.exp(-x / 1000) for x in range(20)), rel=1e-14)
    assert RationalExp({}, {}, Fraction(1)).is_zero()


def test_total_is_one_catches_a_wrong_total():
    halves = [RationalExp({0: 1}, {(1, 1): 1}, Fraction(1)), RationalExp({1: 1}, {(1, 1): 1}, Fraction(1))]
    assert total_is_one(halves)  # 1/(1 + a) + a/(1 + a)
    assert not total_is_one(halves[:1] * 2)
    assert not total_is_one([halves[0], RationalExp({1: 1}, {(1, 1): 1, (2, -1): 1}, Fraction(1))])


def test_common_rate():
    # Algorithm 1 at eps = 7/10: scales 2/eps and 4/eps, rates 7/20 and 7/40 = 2 g and g
    assert common_rate(Fraction(20, 7), Fraction(40, 7)) == (Fraction(7, 40), (2, 1))
    # Algorithm 4: 4/eps and 4/(3 eps): rates eps/4 and 3 eps/4
    assert common_rate(Fraction(40, 7), Fraction(40, 21)) == (Fraction(7, 40), (1, 3))
    assert common_rate(Fraction(3, 2), Fraction(2, 5)) == (Fraction(1, 6), (4, 15))


def test_integer_answers_and_positive_scale_required():
    with pytest.raises(InvalidArgument, match="integer"):
        ReportNoisyMax(1, noise="geometric")((Fraction(1, 2), 0))
    with pytest.raises(InvalidArgument, match="positive"):
        Geometric(0)
    with pytest.raises(InvalidArgument, match="discrete"):
        Geometric(1).cdf()
    with pytest.raises(InvalidArgument, match="unbounded"):
        NoisyMaxValue(EPS, noise="geometric")
    with pytest.raises(InvalidArgument, match="noise must be one of"):
        ReportNoisyMax(EPS, noise="gauss")


def test_enclosures_contain_the_value_at_every_precision():
    # each enclosure at a low precision must contain a much tighter one (the directed roundings are
    # outward): mixed-sign numerators, negative exponents, both denominator factors, several bases
    import random

    rng = random.Random(20)
    for _ in range(150):
        numerator = {rng.randint(-6, 12): rng.randint(-9, 9) for _ in range(rng.randint(1, 8))}
        if not any(numerator.values()):
            continue
        denominator = {(rng.randint(1, 7), rng.choice((1, -1))): rng.randint(0, 3) for _ in range(rng.randint(0, 3))}
        value = RationalExp(numerator, denominator, Fraction(rng.randint(1, 9), rng.randint(1, 12)))
        truth = value.interval(800)
        for bits in (48, 64, 100):
            coarse = value.interval(bits)
            assert coarse.a <= truth.a and truth.b <= coarse.b, (value, bits)
