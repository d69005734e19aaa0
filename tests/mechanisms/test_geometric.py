"""Tests of the two-sided geometric noise and report noisy max with it (dpverify.mechanisms.geometric).

* Brute force: ``P(argmax = i)`` by direct summation of the pmf over ``|y| <= N``; the dropped mass is
  at most ``(k + 1) * 2 a^(N + 1 - max|q|) / (1 - a)`` (each of the ``k`` CDFs and the outer sum loses
  a geometric tail ``sum_{|z| > N - |q|} pmf(z)``), below ``1e-15`` here.
* The geometric mechanism itself: ``P(c + Z = y) / P(c + 1 + Z = y) = a^(|y - c| - |y - c - 1|)`` is
  ``a^-1 = e^eps`` for ``y <= c`` and ``a = e^-eps`` above: eps* = eps exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy

from dpverify import Verdict
from dpverify.checking.input_pairs import statdp_patterns, verify_pairs
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.geometric import A, GeometricNoisyMax, _pmf, argmax_fractions
from dpverify.mechanisms.noise import Geometric


def _brute(values: list[int], a: float, n: int) -> list[float]:
    c = (1 - a) / (1 + a)
    pmf = {z: c * a ** abs(z) for z in range(-2 * n, 2 * n + 1)}

    def cdf(t: int) -> float:
        return math.fsum(p for z, p in pmf.items() if z <= t)

    out = []
    for i, own in enumerate(values):
        total = []
        for y in range(-n, n + 1):
            term = pmf[y - own]
            for j, v in enumerate(values):
                if j != i:
                    term *= cdf(y - 1 - v if j < i else y - v)
            total.append(term)
        out.append(math.fsum(total))
    return out


@pytest.mark.parametrize("values", [[0, 1, 1], [2, 0, 2], [1, 1, 1], [0, 2, 1, 2]])
def test_argmax_matches_the_truncated_sum(values):
    a = math.exp(-0.5)
    n = 90
    tail = (len(values) + 1) * 2 * a ** (n + 1 - max(values)) / (1 - a)
    assert tail < 1e-15
    exact = argmax_fractions(values)
    brute = _brute(values, a, n)
    for i, b in enumerate(brute):
        value = float(exact[i].numer(a) / exact[i].denom(a)) if exact[i].numer else 0.0
        assert value == pytest.approx(b, rel=1e-12, abs=tail + 1e-15)
    assert sum(exact.values()) == 1  # as rational functions of a


def test_ties_go_to_the_smallest_index():
    # two equal answers: index 0 wins every tie, so it beats index 1 by exactly P(tie) = sum pmf(y)^2... as fractions
    p = argmax_fractions([0, 0])
    tie = ((1 - A) / (1 + A)) ** 2 * (1 + 2 * A**2 / (1 - A**2))  # sum_z pmf(z)^2
    assert p[0] - p[1] == tie


def test_geometric_mechanism_has_ratio_exactly_e_eps():
    eps = Fraction(7, 10)
    scale = 1 / eps
    assert Geometric(scale).scale == Fraction(10, 7)
    here, there = _pmf(3), _pmf(4)  # count 3 against count 4
    ratios = set()
    for y in range(-5, 12):
        p, q = (f.piece_at(y) for f in (here, there))
        p_y = sum(c * A ** (r * y) for r, c in p.items())
        q_y = sum(c * A ** (r * y) for r, c in q.items())
        ratios.add(p_y / q_y)
    assert ratios == {A, 1 / A}  # a^-1 = e^(1/scale) = e^eps: eps* = eps exactly
    a_value = sympy.exp(-sympy.Rational(7, 10))
    assert sympy.simplify((1 / A).numer.as_expr().subs("a", a_value) / (1 / A).denom.as_expr().subs("a", a_value)
                          - sympy.exp(sympy.Rational(7, 10))) == 0


@pytest.mark.parametrize("eps, expected", [(Fraction(7, 10), 0.67532), (Fraction(1, 10), 0.094214)])
def test_report_noisy_max_geometric_on_statdp_patterns(eps, expected):
    mechanism = GeometricNoisyMax(eps)
    result = verify_pairs(mechanism, pairs=statdp_patterns(5), epsilon=eps)
    assert result.verdict is Verdict.HOLDS
    assert result.epsilon == pytest.approx(expected, rel=1e-4)
    assert result.worst_pair == ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))
    distribution = mechanism((1, 1, 1, 1, 1))
    assert distribution[0] > distribution[4]  # ties favour the smallest index
    assert float(mechanism.exact_distribution((0, 1, 2))[2]) == pytest.approx(mechanism((0, 1, 2))[2], rel=1e-15)


def test_integer_answers_and_positive_scale_required():
    with pytest.raises(InvalidArgument, match="integer"):
        GeometricNoisyMax(1)((Fraction(1, 2), 0))
    with pytest.raises(InvalidArgument, match="positive"):
        Geometric(0)
    with pytest.raises(InvalidArgument, match="discrete"):
        Geometric(1).cdf()
