"""The exact path integrals of dpverify.densities._path_integral against closed forms worked out by
hand, against the hand-written noise programs of dpverify.mechanisms (noisy max, the sparse vector
technique), against scipy's numerical integration, and by exact partitions of the probability 1."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from dpverify.densities import _path_integral
from dpverify.densities._path_integral import Unsupported, density, probability
from dpverify.densities.piecewise import ExpSum, PiecewiseExp
from dpverify.finite.sampler._linear import Linear, NoiseVariable
from dpverify.mechanisms.noise import Exponential, Laplace, argmax_probabilities, max_density
from dpverify.mechanisms.sparse_vector import BOTTOM, TOP, SparseVector

F = Fraction
ZERO = F(0)


def form(const: object, *coefs: tuple[int, object]) -> Linear:
    """``const + sum a X_i`` as a Linear (coefficients merged, zeros dropped)."""
    merged: dict[int, Fraction] = {}
    for i, a in coefs:
        merged[i] = merged.get(i, ZERO) + F(a)
    return Linear(F(const), tuple(sorted((i, a) for i, a in merged.items() if a)))


def laplace(*scales: object) -> list[NoiseVariable]:
    return [NoiseVariable(i, "laplace", F(s)) for i, s in enumerate(scales)]


def noise(kinds: list[tuple[str, Fraction]]) -> list[NoiseVariable]:
    return [NoiseVariable(i, kind, scale) for i, (kind, scale) in enumerate(kinds)]


# Closed forms written for these tests (independent of mechanisms/noise.py).


def laplace_density(b: Fraction) -> PiecewiseExp:
    # exp(-|x|/b) / (2b)
    return PiecewiseExp([ZERO], [{(1 / b, ZERO, 0): 1 / (2 * b)}, {(-1 / b, ZERO, 0): 1 / (2 * b)}])


def laplace_cdf(b: Fraction) -> PiecewiseExp:
    # exp(x/b)/2 below 0, 1 - exp(-x/b)/2 above
    return PiecewiseExp([ZERO], [{(1 / b, ZERO, 0): F(1, 2)}, {(ZERO, ZERO, 0): F(1), (-1 / b, ZERO, 0): F(-1, 2)}])


def laplace_tail(b: Fraction) -> PiecewiseExp:
    return PiecewiseExp([ZERO], [{(ZERO, ZERO, 0): F(1), (1 / b, ZERO, 0): F(-1, 2)}, {(-1 / b, ZERO, 0): F(1, 2)}])


def exponential_density(s: Fraction) -> PiecewiseExp:
    return PiecewiseExp([ZERO], [{}, {(-1 / s, ZERO, 0): 1 / s}])


def exponential_cdf(s: Fraction) -> PiecewiseExp:
    return PiecewiseExp([ZERO], [{}, {(ZERO, ZERO, 0): F(1), (-1 / s, ZERO, 0): F(-1)}])


def same_function(f: PiecewiseExp, g: PiecewiseExp) -> bool:
    """Equal as functions (almost everywhere): ``f - g`` has no term left on any piece (distinct
    ``x^d exp(r x + e)`` are linearly independent, piecewise.py's module docstring)."""
    return all(not piece for piece in (f + g.scale(F(-1))).pieces)


def argmax_constraints(q: list[Fraction], i: int) -> list[Linear]:
    """``q_i + X_i > q_j + X_j`` for every ``j != i``."""
    return [form(q[i] - q[j], (i, 1), (j, -1)) for j in range(len(q)) if j != i]


# -- closed forms by hand ---------------------------------------------------------------------------


@pytest.mark.parametrize("b", [F(1), F(3, 2), F(20, 7)])
@pytest.mark.parametrize("t", [ZERO, F(1, 3), F(2), F(-5, 4)])
def test_laplace_tail(b, t):
    # P(X > t) = exp(-t/b)/2 for t >= 0, 1 - exp(t/b)/2 for t < 0
    expected = ExpSum.exp(-t / b, F(1, 2)) if t >= 0 else 1 - ExpSum.exp(t / b, F(1, 2))
    assert probability(laplace(b), [form(-t, (0, 1))]) == expected
    # X < t is the complement: 2 (t - X) > 0
    assert probability(laplace(b), [form(2 * t, (0, -2))]) == 1 - expected


@pytest.mark.parametrize("s", [F(1), F(2, 5)])
@pytest.mark.parametrize("t", [ZERO, F(1, 3), F(7, 2), F(-1)])
def test_exponential_tail(s, t):
    # P(X > t) = exp(-t/s) for t >= 0 and 1 for t < 0 (the support x > 0 is implicit)
    variables = [NoiseVariable(0, "exponential", s)]
    expected = ExpSum.exp(-t / s) if t >= 0 else ExpSum.constant(1)
    assert probability(variables, [form(-t, (0, 1))]) == expected
    assert probability(variables, [form(t, (0, -1))]) == 1 - expected


@pytest.mark.parametrize("b", [F(1), F(20, 7)])
@pytest.mark.parametrize("a", [ZERO, F(1, 3), F(5)])
def test_difference_of_two_laplace(b, a):
    # D = X0 - X1 has density (1 + |z|/b) exp(-|z|/b) / (4b), so for a >= 0
    # P(D > a) = 1/4 int_{a/b}^inf (1 + u) e^-u du = (2 + a/b) exp(-a/b) / 4
    tail = ExpSum.exp(-a / b, (2 + a / b) / 4)
    variables = laplace(b, b)
    assert probability(variables, [form(-a, (0, 1), (1, -1))]) == tail
    assert probability(variables, [form(-a, (0, -1), (1, 1))]) == tail  # X1 - X0 > a: the same law
    assert probability(variables, [form(-3 * a, (0, 3), (1, -3))]) == tail  # scaled comparison
    assert probability(variables, [form(a, (0, 1), (1, -1))]) == 1 - tail  # D > -a


@pytest.mark.parametrize("s", [F(1), F(3, 4)])
@pytest.mark.parametrize("t", [F(1, 2), F(3)])
def test_sum_of_two_exponentials(s, t):
    # X0 + X1 ~ Gamma(2, s): P(X0 + X1 < t) = 1 - exp(-t/s) (1 + t/s); a line of slope -1, a
    # polynomial term in the message
    variables = [NoiseVariable(0, "exponential", s), NoiseVariable(1, "exponential", s)]
    assert probability(variables, [form(t, (0, -1), (1, -1))]) == 1 - ExpSum.exp(-t / s, 1 + t / s)


@pytest.mark.parametrize("b, s", [(F(1), F(1)), (F(3, 2), F(1, 3))])
def test_laplace_above_exponential(b, s):
    # P(X0 > X1) = int_0^inf e^(-y/s)/s * e^(-y/b)/2 dy = b / (2 (b + s)) for X0 ~ Lap(b), X1 ~ Exp(s)
    variables = [NoiseVariable(0, "laplace", b), NoiseVariable(1, "exponential", s)]
    assert probability(variables, [form(0, (0, 1), (1, -1))]) == b / (2 * (b + s))


def test_constants_and_free_variables():
    variables = [NoiseVariable(0, "laplace", F(2)), NoiseVariable(1, "exponential", F(1, 3))]
    assert probability(variables, []) == 1
    assert probability(variables, [form(1)]) == 1  # True
    assert probability(variables, [form(0)]).is_zero() and probability(variables, [form(-1, (0, 1)), form(-2)]).is_zero()
    # X0 free: P(X1 > 1) = exp(-3)
    assert probability(variables, [form(-1, (1, 1))]) == ExpSum.exp(-3)
    # bounds that leave no room
    assert probability(variables, [form(-1, (0, 1)), form(1, (0, -1))]).is_zero()
    assert probability(variables, [form(0, (1, -1))]).is_zero()  # an exponential below 0


def test_two_sided_bounds_and_two_lines_between_one_pair():
    # P(0 < X < 1) for X ~ Lap(1): (1 - e^-1)/2
    one = laplace(1)
    assert probability(one, [form(0, (0, 1)), form(1, (0, -1))]) == (1 - ExpSum.exp(-1)) * F(1, 2)
    # |X0 - X1| < a for iid Lap(b): 1 - 2 P(D > a) = 1 - (2 + a/b) exp(-a/b)/2
    b, a = F(2), F(3)
    inside = [form(a, (0, 1), (1, -1)), form(a, (0, -1), (1, 1))]
    assert probability(laplace(b, b), inside) == 1 - ExpSum.exp(-a / b, (2 + a / b) / 2)


# -- partitions of 1 and the hand-written noise programs --------------------------------------------


@pytest.mark.parametrize("kind", ["laplace", "exponential"])
@pytest.mark.parametrize("q", [[F(0), F(1), F(1, 2), F(3)], [F(1), F(1), F(-2)]])
def test_argmax_partition_and_noise_programs(kind, q):
    scale = F(20, 7)
    variables = noise([(kind, scale)] * len(q))
    values = [probability(variables, argmax_constraints(q, i)) for i in range(len(q))]
    assert ExpSum.total(values) == 1
    # independent reference: int f(x - q_i) prod_{j != i} F(x - q_j) dx with this file's closed forms
    f, cdf = (laplace_density(scale), laplace_cdf(scale)) if kind == "laplace" else (exponential_density(scale), exponential_cdf(scale))
    for i, value in enumerate(values):
        integrand = f.shift(-q[i])
        for j in range(len(q)):
            if j != i:
                integrand = integrand * cdf.shift(-q[j])
        assert value == integrand.integral()
    # second cross-check: mechanisms/noise.py
    reference = argmax_probabilities(q, Laplace(scale) if kind == "laplace" else Exponential(scale))
    assert values == [reference[i] for i in range(len(q))]


@pytest.mark.parametrize("q", [(F(1), F(0), F(1), F(2)), (F(0), F(1, 3), F(0))])
def test_sparse_vector_patterns(q):
    # Lyu, Su, Li's Algorithm 1 with cutoff c = k: rho ~ Lap(2/eps), nu_i ~ Lap(4k/eps); answer i is
    # above the threshold iff q_i + nu_i - T - rho > 0
    k, eps, T = len(q), F(7, 10), F(1, 2)
    rho_scale, nu_scale = 2 / eps, 4 * k / eps
    variables = laplace(rho_scale, *[nu_scale] * k)
    reference = SparseVector(eps, variant=1, c=k, T=T).probabilities(q)
    values = {}
    for pattern in itertools.product((False, True), repeat=k):
        constraints = [form(q[i] - T, (i + 1, 1), (0, -1)).times(F(1 if top else -1)) for i, top in enumerate(pattern)]
        values[pattern] = probability(variables, constraints)
        # independent reference: int f_rho(r) prod_i P(a_i | r) dr, P(top | r) = P(nu > T + r - q_i)
        integrand = laplace_density(rho_scale)
        for i, top in enumerate(pattern):
            integrand = integrand * (laplace_tail(nu_scale) if top else laplace_cdf(nu_scale)).shift(T - q[i])
        assert values[pattern] == integrand.integral()
        assert values[pattern] == reference["".join(TOP if top else BOTTOM for top in pattern)]
    assert ExpSum.total(values.values()) == 1


def test_memoised_values_equal_fresh_ones():
    # the memo (shared messages, products built from a path prefix) against a cleared memo per path
    eps, T, q = F(1, 2), F(1, 2), (F(0), F(2), F(1), F(1), F(3))
    variables = laplace(2 / eps, *[4 / eps] * len(q))
    patterns = list(itertools.product((False, True), repeat=len(q)))
    paths = [[form(q[i] - T, (i + 1, 1), (0, -1)).times(F(1 if top else -1)) for i, top in enumerate(p)] for p in patterns]
    _path_integral._MEMO.clear()
    warm = [probability(variables, path) for path in paths]
    # 2^5 patterns share prefixes: at most 2^6 integrands at the root, plus the leaves'
    assert len(_path_integral._MEMO.integrands) <= 2 ** (len(q) + 1) + 1
    fresh = []
    for path in paths:
        _path_integral._MEMO.clear()
        fresh.append(probability(variables, path))
    assert warm == fresh
    assert probability(list(reversed(variables[:1])) + variables[1:], list(reversed(paths[3]))) == warm[3]


def test_noisy_max_value_density():
    # the density of max_i (q_i + X_i) on {argmax = i} is f(y - q_i) prod_{j != i} F(y - q_j)
    b, q = F(3, 2), [F(0), F(1), F(1, 2)]
    variables = laplace(*[b] * len(q))
    parts = []
    for i in range(len(q)):
        constraints = argmax_constraints(q, i)
        part = density(variables, constraints, form(q[i], (i, 1)))
        expected = laplace_density(b).shift(-q[i])
        for j in range(len(q)):
            if j != i:
                expected = expected * laplace_cdf(b).shift(-q[j])
        assert same_function(part, expected)
        assert part.integral() == probability(variables, constraints)
        parts.append(part)
    total = parts[0] + parts[1] + parts[2]
    assert same_function(total, max_density(q, Laplace(b)))  # mechanisms/noise.py, a second check


def test_density_of_a_scaled_output():
    # Y = -2 X0 + 1, X0 ~ Lap(b) with no constraint: density exp(-|y - 1|/(2b)) / (4b)
    b = F(3)
    y_density = density(laplace(b), [], form(1, (0, -2)))
    assert same_function(y_density, laplace_density(2 * b).shift(F(-1)))
    # the same with an independent constrained variable: times P(X1 > 1) = exp(-1/b)/2
    with_other = density(laplace(b, b), [form(-1, (1, 1))], form(1, (0, -2)))
    assert same_function(with_other, y_density.times_exp_sum(ExpSum.exp(-1 / b, F(1, 2))))
    # Y = X1 on {X0 > X1} with X1 exponential: g(y) = f_exp(y) P(X0 > y) = e^(-y/s)/s * e^(-y/b)/2 on y > 0
    s = F(1, 2)
    variables = [NoiseVariable(0, "laplace", b), NoiseVariable(1, "exponential", s)]
    sub_density = density(variables, [form(0, (0, 1), (1, -1))], form(0, (1, 1)))
    assert same_function(sub_density, PiecewiseExp([ZERO], [{}, {(-1 / s - 1 / b, ZERO, 0): 1 / (2 * s)}]))


# -- PiecewiseExp.compose, restricted, times_exp_sum ------------------------------------------------


@pytest.mark.parametrize("alpha, beta", [(F(2), F(1, 3)), (F(-1, 2), F(-1)), (F(-3), F(0))])
def test_compose_is_substitution(alpha, beta):
    # f = x^2 e^(x/2) on (-inf, 1), then 3 - e^(1 - x) on (1, inf) (a polynomial term, a jump)
    f = PiecewiseExp([F(1)], [{(F(1, 2), ZERO, 2): F(1)}, {(ZERO, ZERO, 0): F(3), (F(-1), F(1), 0): F(-1)}])
    g = f.compose(alpha, beta)
    assert g.breaks == [(1 - beta) / alpha]
    for x in [F(-7), F(-1, 3), F(0), F(5, 4), F(9)]:
        if alpha * x + beta != 1:
            assert g.value(x) == f.value(alpha * x + beta)
    assert f.compose(0, F(-2)).pieces == [{(ZERO, F(-1), 0): F(4)}]  # the constant f(-2) = 4 e^-1


def test_restricted_and_times_exp_sum():
    f = laplace_density(F(1))
    piece = f.restricted(F(-1), F(2))
    assert piece.breaks == [F(-1), ZERO, F(2)] and piece.pieces[0] == {} and piece.pieces[-1] == {}
    assert piece.integral() == f.integral(F(-1), F(2))
    assert f.restricted(F(1), F(1)).integral().is_zero()
    assert f.restricted(None, ZERO).integral() == F(1, 2)
    scaled = f.times_exp_sum(ExpSum({F(1): F(2), ZERO: F(-1)}))
    assert scaled.integral() == ExpSum({F(1): F(2), ZERO: F(-1)})
    assert PiecewiseExp.from_exp_sum(ExpSum.exp(F(1, 2), F(3))).value(F(7)) == ExpSum.exp(F(1, 2), F(3))


# -- random forests ----------------------------------------------------------------------------------

COEFFICIENTS = [F(1), F(-1), F(2), F(-1, 2), F(3, 2)]
CONSTANTS = [F(0), F(1), F(-1), F(1, 2), F(-3, 2), F(2)]
SCALES = [F(1), F(1, 2), F(3, 2)]


@st.composite
def forests(draw: st.DrawFn) -> tuple[list[NoiseVariable], list[Linear]]:
    """Up to 5 noise variables, a random forest of comparisons (one or two per edge) and bounds, at most
    6 constraints in all."""
    n = draw(st.integers(1, 5))
    variables = noise([(draw(st.sampled_from(["laplace", "exponential"])), draw(st.sampled_from(SCALES))) for _ in range(n)])
    forms = []
    for child in range(1, n):
        parent = draw(st.integers(-1, child - 1))  # -1: a new tree
        if parent < 0:
            continue
        for _ in range(draw(st.integers(1, 2))):
            forms.append(form(draw(st.sampled_from(CONSTANTS)), (child, draw(st.sampled_from(COEFFICIENTS))),
                              (parent, draw(st.sampled_from(COEFFICIENTS)))))
    for _ in range(draw(st.integers(0, 2))):
        forms.append(form(draw(st.sampled_from(CONSTANTS)), (draw(st.integers(0, n - 1)), draw(st.sampled_from(COEFFICIENTS)))))
    return variables, draw(st.permutations(forms))[:6]


@settings(max_examples=60, deadline=None)
@given(forests())
def test_sign_patterns_of_a_forest_partition_one(problem):
    # the events {s_c c > 0 for every c}, over all signs s, partition the space (up to ties)
    variables, forms = problem
    values = []
    for signs in itertools.product((1, -1), repeat=len(forms)):
        values.append(probability(variables, [c.times(F(s)) for c, s in zip(forms, signs)]))
        assert values[-1].sign() >= 0
    assert ExpSum.total(values) == 1


@settings(max_examples=60, deadline=None)
@given(forests(), st.data())
def test_density_integrates_to_the_probability(problem, data):
    variables, forms = problem
    v = data.draw(st.integers(0, len(variables) - 1))
    a, c = data.draw(st.sampled_from(COEFFICIENTS)), data.draw(st.sampled_from(CONSTANTS))
    assert density(variables, forms, form(c, (v, a))).integral() == probability(variables, forms)


# -- numerical cross-checks (scipy) ---------------------------------------------------------------------


def _laplace_pdf(x: float, b: float) -> float:
    return math.exp(-abs(x) / b) / (2 * b)


def _exponential_pdf(x: float, s: float) -> float:
    return math.exp(-x / s) / s if x > 0 else 0.0


def test_numerically_two_lines_and_a_bound():
    # X0 ~ Lap(1), X1 ~ Exp(1/2); X0 > 2 X1 - 1/2, X0 < 3 - X1, X0 < 5/2: for x1 in (0, 7/6),
    # x0 runs from 2 x1 - 1/2 to min(3 - x1, 5/2)
    variables = [NoiseVariable(0, "laplace", F(1)), NoiseVariable(1, "exponential", F(1, 2))]
    constraints = [form(F(1, 2), (0, 1), (1, -2)), form(3, (0, -1), (1, -1)), form(F(5, 2), (0, -1))]
    exact = probability(variables, constraints)
    numeric, error = integrate.dblquad(lambda x0, x1: _laplace_pdf(x0, 1) * _exponential_pdf(x1, 0.5), 0, 7 / 6,
                                       lambda x1: 2 * x1 - 0.5, lambda x1: min(3 - x1, 2.5), epsabs=1e-11, epsrel=1e-11)
    assert abs(exact.to_float() - numeric) < 1e-7 and error < 1e-8


def test_numerically_a_wedge_between_two_slopes():
    # X0, X1 ~ Lap(1), Lap(2): X0 - 1 < X1 < 2 X0 + 1/2 (non-empty for x0 > -3/2), and X0 < 4
    variables = laplace(1, 2)
    constraints = [form(1, (1, 1), (0, -1)), form(F(1, 2), (1, -1), (0, 2)), form(4, (0, -1))]
    exact = probability(variables, constraints)
    numeric = error = 0.0
    for low, high in [(-1.5, 0), (0, 4)]:  # split at the density's kink in x0
        part, part_error = integrate.dblquad(lambda x1, x0: _laplace_pdf(x0, 1) * _laplace_pdf(x1, 2), low, high,
                                             lambda x0: x0 - 1, lambda x0: 2 * x0 + 0.5, epsabs=1e-10, epsrel=1e-10)
        numeric, error = numeric + part, error + part_error
    assert abs(exact.to_float() - numeric) < 1e-7 and error < 1e-8


def test_numerically_a_chain_density():
    # Y = 2 X0 + 1 on {X1 < X0, X2 > X1 + 1}, X0 ~ Lap(1), X1 ~ Exp(1), X2 ~ Lap(1/2): at y, x0 = (y - 1)/2 and
    # g(x0) = f0(x0) int_0^x0 f1(x1) P(X2 > x1 + 1) dx1; the density is g(x0) / 2
    variables = [NoiseVariable(0, "laplace", F(1)), NoiseVariable(1, "exponential", F(1)), NoiseVariable(2, "laplace", F(1, 2))]
    constraints = [form(0, (0, 1), (1, -1)), form(-1, (2, 1), (1, -1))]
    exact = density(variables, constraints, form(1, (0, 2)))
    for y in [F(-3), F(3, 2), F(4)]:
        x0 = float((y - 1) / 2)
        inner, _ = integrate.quad(lambda x1: _exponential_pdf(x1, 1) * math.exp(-2 * (x1 + 1)) / 2, 0, max(x0, 0.0), epsabs=1e-13)
        assert abs(exact.value(y).to_float() - _laplace_pdf(x0, 1) * inner / 2) < 1e-9


# -- what is refused -----------------------------------------------------------------------------------


def test_three_variables_in_one_comparison():
    with pytest.raises(Unsupported, match=r"three noise variables, X0 \+ X1 - X2 > 0"):
        probability(laplace(1, 1, 1), [form(0, (0, 1), (1, 1), (2, -1))])


def test_a_cycle_names_its_variables():
    constraints = [form(0, (0, 1), (1, -1)), form(0, (1, 1), (2, -1)), form(0, (2, 1), (0, -1))]
    with pytest.raises(Unsupported, match=r"cycle among the noise variables X0, X1, X2") as raised:
        probability(laplace(1, 1, 1, 1), [form(0, (3, 1), (0, -1)), *constraints])
    assert "X1 - X2 > 0" in str(raised.value)
    # two comparisons of one pair are no cycle
    assert probability(laplace(1, 1), [form(0, (0, 1), (1, -1)), form(1, (0, -1), (1, 1))]).sign() > 0


def test_outputs_of_several_variables_or_none():
    with pytest.raises(Unsupported, match=r"X0 - X1 involves 2 noise variables"):
        density(laplace(1, 1), [], form(0, (0, 1), (1, -1)))
    with pytest.raises(Unsupported, match=r"3 involves no noise variable"):
        density(laplace(1), [], form(3))
    assert isinstance(Unsupported("x"), ValueError)
