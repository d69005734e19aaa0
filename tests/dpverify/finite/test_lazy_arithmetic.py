"""Arithmetic on rng.random(): exact distributions of samplers that compute with the lazy uniform
(affine maps, logarithms, powers, kinks, floor/round/int, np.isclose), the idioms of diffprivlib
0.6.6 written out line by line, the thresholds and enclosures underneath, and the refusals.

Every expected value is worked out by hand in a comment; irrational ones are computed in mpmath at
50 digits. A float constant is its binary value: Fraction(0.1) etc.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

from dpverify import Distribution, from_sampler
from dpverify.errors import MechanismError
from dpverify.finite.sampler import _lazy_real
from dpverify.finite.sampler._lazy_map import IDENTITY, Map, Step
from dpverify.finite.sampler._lazy_real import Inseparable, Node, enclosure, exp, log, order, power, share

mpmath.mp.dps = 50


def mp(value: F) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def distribution(sampler, dataset=()):
    return from_sampler(sampler)(dataset)


# -- affine maps ------------------------------------------------------------------------------------


def test_int_of_a_scaled_uniform():
    found = distribution(lambda d, rng: int(rng.random() * 3))
    # int(3u) = k for u in [k/3, (k+1)/3): 1/3 each, exact
    assert found == Distribution({0: F(1, 3), 1: F(1, 3), 2: F(1, 3)}) and found.is_exact


def test_an_affine_comparison():
    # 4u - 1 < 1  <=>  u < 1/2
    assert distribution(lambda d, rng: rng.random() * 4 - 1 < 1) == Distribution({True: F(1, 2), False: F(1, 2)})


def test_a_decreasing_map_flips_the_comparison():
    # 1 - u < 1/4  <=>  u > 3/4: probability 1/4 (not 3/4)
    assert distribution(lambda d, rng: 1 - rng.random() < F(1, 4)) == Distribution({True: F(1, 4), False: F(3, 4)})
    # -2u + 1 >= 0  <=>  u <= 1/2
    assert distribution(lambda d, rng: -2 * rng.random() + 1 >= 0) == Distribution({True: F(1, 2), False: F(1, 2)})


def test_the_mutant_that_does_not_flip_a_decreasing_map_is_caught(monkeypatch):
    monkeypatch.setattr(Map, "increasing", property(lambda self: True))
    # the mutant answers 1 - u < 1/4 as u < 3/4
    assert distribution(lambda d, rng: 1 - rng.random() < F(1, 4)) == Distribution({True: F(3, 4), False: F(1, 4)})


def test_float_constants_are_their_binary_values():
    e = float(np.exp(1.0))

    def binary(dataset, rng):  # diffprivlib's Binary: u * (e^eps + 1) > e^eps + delta (delta = 0)
        return rng.random() * (np.exp(1.0) + 1) > np.exp(1.0) + 0.0

    found = distribution(binary)
    # u > e / (e + 1), with e the float exp(1) and e + 1 the float sum (the code rounds it)
    threshold = F(e) / F(e + 1)
    assert found == Distribution({True: float(1 - threshold), False: float(threshold)}) and not found.is_exact


def test_sums_of_values_affine_in_one_uniform():
    def sampler(dataset, rng):
        u = rng.random()
        assert u - (u - F(1, 2)) == F(1, 2)  # the constant 1/2, no choice point
        return u < 2 * u - F(1, 2)  # u - 2u + 1/2 < 0  <=>  u > 1/2

    assert distribution(sampler) == Distribution({True: F(1, 2), False: F(1, 2)})
    assert distribution(lambda d, rng: (lambda u: u + u < 1)(rng.random())) == Distribution({True: F(1, 2), False: F(1, 2)})


# -- monotone maps ---------------------------------------------------------------------------------


def test_log2_floor_chain_cut_to_a_bounded_range():
    def sampler(dataset, rng):
        u = rng.random()
        if u < F(1, 16):
            return 3
        return min(int(np.floor(-np.log2(u))), 3)

    # floor(-log2 u) = k for u in (2^-(k+1), 2^-k]: 1/2, 1/4, 1/8 for k = 0, 1, 2; k = 3 is (1/16, 1/8]
    # plus the cut [0, 1/16): 1/16 + 1/16 = 1/8. Thresholds 2^-k are rational: exact
    found = distribution(sampler)
    assert found == Distribution({0: F(1, 2), 1: F(1, 4), 2: F(1, 8), 3: F(1, 8)}) and found.is_exact


def test_natural_log_floor_chain_with_irrational_thresholds():
    def sampler(dataset, rng):  # the same with log(2) a float: thresholds exp(-k * L), irrational
        u = rng.random()
        if u < F(1, 16):
            return "cut"
        return int(np.floor(-np.log(u) / np.log(2)))

    found = distribution(sampler)
    log2 = mpmath.mpf(F(float(np.log(2))).numerator) / F(float(np.log(2))).denominator  # the float's binary value
    for k in range(4):
        # P(k) = P(exp(-(k+1)L) < u <= exp(-kL)), clipped at the cut 1/16 (k = 3: (1/16, exp(-3L)])
        low = max(mpmath.exp(-(k + 1) * log2), mpmath.mpf(1) / 16)
        expected = mpmath.exp(-k * log2) - low
        assert found[k] == float(expected), k
    assert found["cut"] == 1 / 16 and not found.is_exact


def test_exp_sqrt_and_powers():
    # exp(u) < 2  <=>  u < log 2 (irrational; the float nearest to it)
    assert distribution(lambda d, rng: np.exp(rng.random()) < 2)[True] == float(mpmath.log(2))
    # sqrt(u) < 1/2  <=>  u < 1/4 (the threshold (1/2)^2 is rational: exact)
    assert distribution(lambda d, rng: np.sqrt(rng.random()) < F(1, 2)) == Distribution({True: F(1, 4), False: F(3, 4)})
    # u ** 3 < 1/8  <=>  u < 1/2;  2 ** u < 2 ** (1/2)... as 4 ** u < 2  <=>  u < 1/2 (log_4 2 = 1/2 exactly)
    assert distribution(lambda d, rng: rng.random() ** 3 < F(1, 8))[True] == F(1, 2)
    assert distribution(lambda d, rng: 4 ** rng.random() < 2)[True] == F(1, 2)
    # 1/u > 4  <=>  u < 1/4 (decreasing on u > 0)
    assert distribution(lambda d, rng: 1 / rng.random() > 4)[True] == F(1, 4)
    # log1p(u) < log1p(1/3) is not written exactly (a float); expm1(u) < 1  <=>  u < log 2
    assert distribution(lambda d, rng: np.expm1(rng.random()) < 1)[True] == float(mpmath.log(2))


def test_log1p_and_log_of_a_reflected_uniform():
    threshold = F(float(np.log1p(0.5)))
    # log1p(u) < L  <=>  u < exp(L) - 1, L the float log1p(0.5)
    expected = mpmath.exp(mp(threshold)) - 1
    assert distribution(lambda d, rng: np.log1p(rng.random()) < np.log1p(0.5))[True] == float(expected)
    # log(1 - u) < -700  <=>  u > 1 - e^-700: the small branch, e^-700, is enclosed to its own precision
    assert distribution(lambda d, rng: np.log(1 - rng.random()) < -700)[True] == float(mpmath.exp(-700))


def test_numpy_object_arrays_call_the_element_methods():
    def sampler(dataset, rng):
        u = rng.random(size=2)
        return np.log2(u) < [-1, -2]  # elementwise, via u[i].log2(): u0 < 1/2, u1 < 1/4

    # independent: (T, T) 1/2 * 1/4, (T, F) 1/2 * 3/4, (F, T) 1/2 * 1/4, (F, F) 1/2 * 3/4
    assert distribution(sampler) == Distribution(
        {(True, True): F(1, 8), (True, False): F(3, 8), (False, True): F(1, 8), (False, False): F(3, 8)})


def test_a_float_constant_marks_the_distribution_inexact():
    found = distribution(lambda d, rng: rng.random() * 3.0 < 1)
    # the threshold 1/3 is exact, but a float went in: the distribution is a float one
    assert found == Distribution({True: 1 / 3, False: 2 / 3}) and not found.is_exact


# -- kinks ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sampler, expected",
    [
        # |u - 1/2| < 1/4  <=>  u in (1/4, 3/4)
        (lambda u: abs(u - F(1, 2)) < F(1, 4), F(1, 2)),
        (lambda u: np.abs(u - F(1, 2)) < F(1, 4), F(1, 2)),
        # (u - 1/2)^2 < 1/16  <=>  |u - 1/2| < 1/4
        (lambda u: (u - F(1, 2)) ** 2 < F(1, 16), F(1, 2)),
        (lambda u: np.square(u - F(1, 2)) < F(1, 16), F(1, 2)),
        # 1 / (u - 1/2) > 4  <=>  0 < u - 1/2 < 1/4
        (lambda u: 1 / (u - F(1, 2)) > 4, F(1, 4)),
        # cbrt(u - 1/2) < -1/2  <=>  u - 1/2 < -1/8  <=>  u < 3/8
        (lambda u: np.cbrt(u - F(1, 2)) < -F(1, 2), F(3, 8)),
        # max(u, 1/2) < 3/4  <=>  u < 3/4
        (lambda u: np.maximum(u, F(1, 2)) < F(3, 4), F(3, 4)),
    ],
)
def test_piecewise_monotone_maps_split_at_their_kinks(sampler, expected):
    found = distribution(lambda d, rng: bool(sampler(rng.random())))
    assert found == Distribution({True: expected, False: 1 - expected})


def test_np_sign_is_a_constant_per_branch():
    # sign(u - 1/3): -1.0 on [0, 1/3), 1.0 on [1/3, 1)
    assert distribution(lambda d, rng: np.sign(rng.random() - F(1, 3))) == Distribution({-1.0: F(1, 3), 1.0: F(2, 3)})

    def sampler(dataset, rng):  # sgn * v as diffprivlib writes |v|: numpy's sign is the float 1.0 or -1.0
        v = rng.random() - F(1, 3)
        return bool(np.sign(v) * v < F(1, 6))

    # |u - 1/3| < 1/6  <=>  u in (1/6, 1/2): 1/3, a float distribution (the float sign went in)
    assert distribution(sampler) == Distribution({True: float(F(1, 3)), False: float(F(2, 3))})


# -- integer-valued maps ----------------------------------------------------------------------------


def test_round_ceil_trunc():
    # round(4u): 0 on [0, 1/8), 1, 2, 3 on cells of width 1/4, 4 on [7/8, 1)
    assert distribution(lambda d, rng: round(rng.random() * 4)) == Distribution(
        {0: F(1, 8), 1: F(1, 4), 2: F(1, 4), 3: F(1, 4), 4: F(1, 8)})
    assert distribution(lambda d, rng: int(np.round(rng.random() * 4))) == distribution(lambda d, rng: round(rng.random() * 4))
    # ceil(3u) = 1, 2, 3 with 1/3 each (0 only at u = 0)
    assert distribution(lambda d, rng: math.ceil(rng.random() * 3)) == Distribution({1: F(1, 3), 2: F(1, 3), 3: F(1, 3)})
    # trunc(4u - 2): -1 on x in (-2, -1] (1/4), 0 on (-1, 1) (1/2), 1 on [1, 2) (1/4)
    assert distribution(lambda d, rng: int(rng.random() * 4 - 2)) == Distribution({-1: F(1, 4), 0: F(1, 2), 1: F(1, 4)})
    # np.floor returns a float
    assert distribution(lambda d, rng: type(np.floor(rng.random() * 2)).__name__) == Distribution.point("float64")


def test_round_to_digits():
    # round(u, 1): the nearest tenth, 0.0 on [0, 0.05), 1.0 on [0.95, 1), each other tenth 1/10
    found = distribution(lambda d, rng: round(rng.random(), 1))
    assert found[0.0] == F(1, 20) and found[1.0] == F(1, 20) and found[0.5] == F(1, 10) and len(found) == 11


def test_floor_division_and_remainder():
    # (10u) % 3 < 1  <=>  10u in [0, 1) u [3, 4) u [6, 7) u [9, 10): 4/10
    assert distribution(lambda d, rng: rng.random() * 10 % 3 < 1)[True] == F(2, 5)
    # 10u // 4 = 0, 1, 2 on [0, 4), [4, 8), [8, 10): 2/5, 2/5, 1/5
    assert distribution(lambda d, rng: rng.random() * 10 // 4) == Distribution({0.0: F(2, 5), 1.0: F(2, 5), 2.0: F(1, 5)})
    # 1 // u = k for u in (1/(k+1), 1/k]: unbounded, cut at u < 1/4: k = 1 (1/2), 2 (1/6), 3 (1/12), cut 1/4
    found = distribution(lambda d, rng: (lambda u: "cut" if u < F(1, 4) else int(1 // u))(rng.random()))
    assert found == Distribution({1: F(1, 2), 2: F(1, 6), 3: F(1, 12), "cut": F(1, 4)})


def test_bisection_keeps_a_bounded_floor_shallow():
    # int(1000u): 1000 paths of probability 1/1000, each found by bisection in at most 10 comparisons
    found = from_sampler(lambda d, rng: int(rng.random() * 1000)).enumerate(())
    assert found.paths == 1000 and set(found.distribution.values()) == {F(1, 1000)}
    assert found.depth <= 10


def test_an_unbounded_floor_chain_without_a_tail_stops_at_the_depth_limit():
    from dpverify.errors import EnumerationTooLarge

    # -log(u) has no upper bound: floor walks up from 0 (a chain of comparisons, never a list)
    with pytest.raises(EnumerationTooLarge, match="max_depth=50"):
        from_sampler(lambda d, rng: int(np.floor(-np.log(rng.random()))), max_depth=50)(())


class _ShallowRandom:
    """A stand-in for the exact rng that enumerates the paths of a sampler depth first and drops
    those deeper than ``depth`` choice points, multiplying the (enclosed) branch probabilities."""

    _name, _dataset = "sampler", ()

    def __init__(self, depth: int) -> None:
        self._depth, self._run, self._active = depth, 0, True

    def _abort(self, error):
        raise error

    def _choose(self, kind, count, probabilities, inexact=False):
        (share_,) = probabilities
        low, high = (share_.lo, share_.hi) if hasattr(share_, "lo") else (share_, share_)
        index = self._prefix[len(self._taken)] if len(self._taken) < len(self._prefix) else 0
        if len(self._taken) >= self._depth:
            raise _TooDeep()
        self._taken.append(index)
        self._mass = self._mass * (mp(low) if index == 0 else 1 - mp(high))
        return index

    def masses(self, sampler):
        found, prefix = {}, []
        while True:
            self._run += 1
            self._prefix, self._taken, self._mass = prefix, [], mpmath.mpf(1)
            try:
                output = sampler(self)
                found[output] = found.get(output, 0) + self._mass
            except _TooDeep:
                pass
            position = len(self._taken) - 1
            while position >= 0 and self._taken[position] == 1:
                position -= 1
            if position < 0:
                return found
            prefix = self._taken[:position] + [1]


class _TooDeep(Exception):
    pass


def test_a_range_unbounded_both_ways_splits_at_zero_and_chains_outward():
    from dpverify.finite.sampler._lazy import LazyUniform

    # log(-log u) runs over (-inf, inf): floor is split at x < 0, then chains down and up; with paths
    # deeper than 8 choice points dropped, k = -2 .. 1 are found whole:
    # P(k) = P(e^k <= -log u < e^(k+1)) = exp(-e^k) - exp(-e^(k+1))
    masses = _ShallowRandom(8).masses(lambda rng: math.floor(np.log(-np.log(LazyUniform(rng)))))
    for k in range(-2, 2):
        expected = mpmath.exp(-mpmath.exp(k)) - mpmath.exp(-mpmath.exp(k + 1))
        assert abs(masses[k] - expected) < mpmath.mpf(10) ** -25, k  # 8 shares enclosed to 2^-96 at worst


# -- np.isclose --------------------------------------------------------------------------------------


def test_isclose_applies_its_formula_exactly():
    # |u - 1/2| <= 0 + 1/2 * 1/2: u in [1/4, 3/4]
    assert distribution(lambda d, rng: np.isclose(rng.random(), 0.5, rtol=0.5, atol=0))[True] == 0.5
    # |u - 1/2| <= 0.1 (the float): u in [1/2 - 0.1, 1/2 + 0.1]
    assert distribution(lambda d, rng: np.isclose(rng.random(), 0.5, rtol=0, atol=0.1))[True] == float(2 * F(0.1))
    # with the lazy value second, the tolerance scales with it: |1/2 - u| <= u/2  <=>  u >= 1/3
    assert distribution(lambda d, rng: np.isclose(0.5, rng.random(), rtol=0.5, atol=0))[True] == float(F(2, 3))
    # elementwise against an array
    found = distribution(lambda d, rng: tuple(np.isclose(rng.random(), [0.25, 0.75], rtol=0, atol=F(1, 8))))
    assert found == Distribution({(True, False): 0.25, (False, True): 0.25, (False, False): 0.5})


def test_the_exponential_mechanism_idiom_with_a_cumulative_sum_below_one():
    # diffprivlib's Exponential, utilities [3, 0, 0], eps = 1: its cumulative probabilities end below 1
    utility = np.array([3, 0, 0]) - 3
    weights = np.exp(0.5 * utility)
    weights /= weights.sum()
    cumulative = np.cumsum(weights)
    assert cumulative[-1] == 0.9999999999999998

    def sampler(dataset, rng):  # randomise(), line by line
        rand = rng.random()
        if np.any(rand <= cumulative):
            return int(np.argmax(rand <= cumulative))
        if np.isclose(rand, cumulative[-1]):
            return len(cumulative) - 1
        raise RuntimeError("Can't find a candidate to return.")

    found = distribution(sampler)
    # candidate 2 gets [c1, c2] from the cumulative sum and (c2, 1) from np.isclose: u - c2 < 2^-52 <= 1e-8
    c0, c1 = F(cumulative[0]), F(cumulative[1])
    assert found == Distribution({0: float(c0), 1: float(c1 - c0), 2: float(1 - c1)})


def test_the_exponential_categorical_idiom_scales_the_uniform():
    weights = {"a": 0.2, "b": 0.3, "c": 0.5 * math.e}  # unnormalised, as floats

    def sampler(dataset, rng):  # diffprivlib's ExponentialCategorical.randomise, line by line
        unif_rv = rng.random() * sum(weights.values())
        cum_prob = 0
        for target in weights:
            cum_prob += weights[target]
            if unif_rv <= cum_prob:
                return target
        return target

    # u * total <= cum  <=>  u <= cum / total, with total and each cum the floats the code sums
    total, first, second = F(sum(weights.values())), F(0.2), F(0 + 0.2 + 0.3)
    expected = {"a": first / total, "b": (second - first) / total, "c": 1 - second / total}
    assert distribution(sampler) == Distribution({key: float(value) for key, value in expected.items()})


# -- the Geometric mechanism's formula -----------------------------------------------------------


def test_the_geometric_formula_against_its_closed_form():
    epsilon, cut = 1.0, F(1, 1000)
    scale = -epsilon  # sensitivity 1

    def sampler(dataset, rng):  # diffprivlib's Geometric.randomise, with |u - 1/2| < 1/1000 cut off
        u = rng.random()
        if F(1, 2) - cut <= u < F(1, 2) + cut:
            return "cut"
        unif_rv = u - 0.5
        unif_rv *= 1 + np.exp(scale)
        sgn = -1 if unif_rv < 0 else 1
        return int(np.round(dataset[0] + sgn * np.floor(np.log(sgn * unif_rv) / scale)))

    found = distribution(sampler, (0,))
    # with r = e^s (s the float scale) and C = the float 1 + e^s: on each side, floor(log(w)/s) = k for
    # w in (r^(k+1), r^k], of probability (r^k - r^(k+1)) / C for k >= 1 and (C/2 - r) / C for k = 0.
    # The cut removes w < C/1000, inside the cells of |k| >= 6; |k| <= 5 are whole.
    s, c = F(scale), F(1 + float(np.exp(scale)))
    r = mpmath.exp(mpmath.mpf(s.numerator) / s.denominator)
    size = mpmath.mpf(c.numerator) / c.denominator
    closed = mpmath.exp(-epsilon)  # the textbook (1 - r) / (1 + r) r^|k| with the real r = e^-1
    for k in range(-5, 6):
        model = 2 * (size / 2 - r) / size if k == 0 else (r ** abs(k) - r ** (abs(k) + 1)) / size
        assert found[k] == float(model), k
        assert math.isclose(found[k], float((1 - closed) / (1 + closed) * closed ** abs(k)), rel_tol=1e-14), k
    assert found["cut"] == 1 / 500


# -- thresholds, enclosures, identity ----------------------------------------------------------------


def test_the_same_irrational_threshold_twice_is_recognised():
    def sampler(dataset, rng):
        x = np.exp(rng.random())
        return (x < 2, 2 * x < 4, np.log(x / 2) < 0)  # log 2 three times: one choice point

    found = from_sampler(sampler).enumerate(())
    assert found.paths == 2 and set(found.distribution) == {(True, True, True), (False, False, False)}


def test_one_number_in_two_forms_is_refused_by_name():
    def sampler(dataset, rng):
        u = rng.random()
        return (np.exp(u) < 2, np.exp(2 * u) < 4)  # log 2 and log(4) / 2: equal, never separated

    with pytest.raises(MechanismError, match=r"the numbers 0\.5\*log\(4\) \(= 0\.69314718055994531\.\.\.\) and log\(2\) \(= 0\.6931.*agree to 2048 bits"):
        distribution(sampler)


def test_canonical_forms():
    assert exp(log(F(3, 7), None), None) == F(3, 7)  # exp(log z) = z
    assert power(power(F(1, 4), F(1, 2)), F(2)) == F(1, 4)  # (1/4)^(1/2) = 1/2 exactly, then squared
    assert log(F(1, 8), F(2)) == -3 and exp(F(-3), F(2)) == F(1, 8)  # log_2(1/8), 2^-3
    assert exp(F(1, 2), F(4)) == 2 and power(F(2), F(1, 2)) == Node("pow", F(1, 2), F(2))  # sqrt 2 stays a node
    assert _lazy_real.affine(Node("log", None, F(2)), F(2), F(1)) == Node("log", None, F(2), F(2), F(1))


def test_order_and_share_of_irrational_points():
    e_inverse = exp(F(-1), None)
    assert order(e_inverse, F(3678, 10000)) == 1 and order(e_inverse, F(3679, 10000)) == -1  # e^-1 = 0.36787944...
    assert order(e_inverse, exp(F(-1), None)) == 0
    with pytest.raises(Inseparable):
        order(log(F(4), None), _lazy_real.affine(log(F(2), None), F(2), F(0)))
    part = share(e_inverse, F(1, 4), F(1, 2))  # (e^-1 - 1/4) / (1/4)
    exact = (mpmath.exp(-1) - mpmath.mpf(1) / 4) * 4
    assert mp(part.lo) <= exact <= mp(part.hi) and 0 < part.lo <= part.hi < 1
    assert part.hi - part.lo <= part.lo * F(1, 2**96)
    bounds = enclosure(e_inverse)
    assert mp(bounds.lo) <= mpmath.exp(-1) <= mp(bounds.hi)


def test_points_near_each_other_are_ordered_by_their_forms():
    # 1 - e^-1437 is below 1 by e^-1437 ~ 2^-2073: beyond the enclosures' cap, decided by the form
    near_one = _lazy_real.affine(exp(F(-1437), None), F(-1), F(1))
    nearer_one = _lazy_real.affine(exp(F(-1438), None), F(-1), F(1))
    assert order(near_one, F(1)) == -1 and order(F(1), near_one) == 1
    assert order(near_one, nearer_one) == -1  # e^-1437 > e^-1438, flipped by the minus
    part = share(near_one, F(0), F(1))  # below: 1 - e^-1437; above: e^-1437, enclosed to 96 bits
    above = mpmath.exp(-1437)
    assert mp(1 - part.hi) <= above <= mp(1 - part.lo) and (part.hi - part.lo) <= (1 - part.hi) * F(1, 2**96)


def test_a_deep_floor_chain_reaches_the_depth_limit():
    from dpverify.errors import EnumerationTooLarge

    # floor(log(1 - u) / 14): the chain's thresholds 1 - e^(14k) pass 2^-2048 of 1 after ~100 steps, so a
    # limit of 120 draws is met past them (1.1 s; 200 took 2.9 s)
    with pytest.raises(EnumerationTooLarge, match="max_depth=120"):
        from_sampler(lambda d, rng: math.floor(np.log(1 - rng.random()) / 14), max_depth=120)(())


def test_steps_invert_beyond_their_range():
    # exp(x) < -1 never holds: the threshold is below every x; with base 1/2 (decreasing) above every x
    assert Step("exp", None).inverse(F(-1)) == -math.inf
    assert Step("exp", F(1, 2)).inverse(F(-1)) == math.inf
    assert IDENTITY.then(Step("log", None)).then(Step("exp", None)) == IDENTITY  # cancelled
    assert IDENTITY.then(Step("affine", F(2), F(1))).then(Step("affine", F(1, 2), F(-1, 2))) == IDENTITY


def test_a_nondeterministic_irrational_split_is_named():
    calls = []

    def sampler(dataset, rng):  # a threshold that changes between runs: log 2, then log 3
        calls.append(1)
        return np.exp(rng.random()) < (2 if len(calls) % 2 else 3)

    # the replay meets another split (log 3 = 1.0986... is outside [0, 1): no choice point at all)
    from dpverify.errors import NondeterministicMechanism

    with pytest.raises(NondeterministicMechanism, match=r"splitting its interval 0\.693147 : 0\.306853"):
        distribution(sampler)


# -- refusals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sampler, fragments",
    [
        (lambda d, rng: np.log(rng.random() - 0.5) < 0, ["numpy.log(u - 0.5)", "negative on part of it", "compare the argument with 0"]),
        (lambda d, rng: np.sqrt(-rng.random()) < 1, ["numpy.sqrt(-u)", "negative"]),
        (lambda d, rng: math.log(rng.random() * 2) < 0, ["float(2*u)", "np.log(x)"]),
        (lambda d, rng: float(np.log(rng.random())), ["float(log(u))"]),
        (lambda d, rng: rng.random() + rng.random() < 1, ["u + u of two lazy uniforms"]),
        (lambda d, rng: (lambda u: u * np.log(u))(rng.random()) < 0, ["u * log(u)", "affine"]),
        (lambda d, rng: rng.random() * math.inf, ["u * inf"]),
        (lambda d, rng: rng.random() / 0, ["u / 0", "division by zero"]),
        (lambda d, rng: np.sin(rng.random() * 2), ["numpy.sin on 2*u"]),
    ],
)
def test_refusals_name_the_operation_and_the_fix(sampler, fragments):
    with pytest.raises(MechanismError) as raised:
        distribution(sampler)
    message = str(raised.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_a_log_after_a_branch_on_the_sign_is_followed():
    def sampler(dataset, rng):
        v = rng.random() - 0.5
        if v > 0:
            return bool(np.log(v) < np.log(0.25))  # v < 0.25  <=>  u in (1/2, 3/4)
        return "negative"

    found = distribution(sampler)
    assert found["negative"] == 0.5 and math.isclose(found[True], 0.25, rel_tol=1e-15)


def test_the_uniform_mechanism_idiom_is_a_released_density():
    from dpverify import ApproximateDp, Datasets, verify

    def uniform(dataset, rng):  # diffprivlib's Uniform.randomise: value + a uniform on [-c, c]
        unif_rv = 2 * rng.random() - 1
        unif_rv *= 1 / 0.1 / 2
        return dataset[0] + unif_rv  # 10u - 5 + value: a uniform of width 10

    # neighbours 0 and 1: the supports [-5, 5) and [-4, 6) overlap but for 1/10 each: (0, 1/10)-DP, eps* = inf
    result = verify(from_sampler(uniform), Datasets([0, 1], n=1), ApproximateDp(0, F(1, 10)))
    assert result.holds and result.epsilon == math.inf and result.delta == pytest.approx(0.1)
    assert not verify(from_sampler(uniform), Datasets([0, 1], n=1), ApproximateDp(0, F(9, 100))).holds


def test_a_real_valued_output_names_the_statistical_route():
    def laplace(dataset, rng):  # inverse-CDF Laplace noise: a real number
        v = rng.random() - 0.5
        return dataset[0] - np.sign(v) * np.log(1 - 2 * np.abs(v))

    with pytest.raises(MechanismError, match="a real number computed from a lazy uniform") as raised:
        distribution(laplace, (0,))
    assert "dpverify.estimate" in str(raised.value)
