"""Tests of dpverify.densities.hockey_stick (with _region and _loss_convolution): delta(eps) of
continuous outputs against closed forms and an independent mpmath quadrature.

References, worked out by hand:
* Laplace count: p = Lap(0, b), q = Lap(Delta, b). For 0 <= eps <= Delta/b the set {p > e^eps q} is
  x < x* = (Delta - eps b)/2, so delta = P(x < x*) - e^eps Q(x < x*) = (1 - e^(-x*/b)/2) -
  e^eps e^((x* - Delta)/b)/2 = 1 - e^((eps - Delta/b)/2) (both exponentials equal e^((eps - Delta/b)/2)/2);
  for eps >= Delta/b the ratio never exceeds e^eps: delta = 0 exactly.
* Two such coordinates (each a = Delta/b): the loss of one has atoms a (mass 1/2), -a (mass e^(-a)/2)
  and the density e^((l - a)/2)/4 on (-a, a); summing the cases with L1 + L2 > a gives
  delta(a) = (1 - e^(-a))/4 + (1 - e^(-a/2))^2/2 + (1 - e^(-a) - a e^(-a/2))/4 = 1 - (1 + a/4) e^(-a/2).
* Independent quadrature: mpmath.quad of max(0, p - e^eps q) written from the noise formulas (not
  from dpverify's PiecewiseExp), with the densities' kinks and the roots of p - e^eps q (found by
  mpmath.findroot from sign changes on a grid) as breakpoints.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from dpverify.checking.input_pairs import statdp_patterns
from dpverify.densities._loss_convolution import convolve, coordinate_loss
from dpverify.densities._region import positive_region
from dpverify.densities.continuous import MixedOutput, ProductOutput, pair_loss
from dpverify.densities.hockey_stick import DeltaSweep, hockey_stick
from dpverify.densities.piecewise import ExpSum, PiecewiseExp
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.noise import Exponential, Laplace
from dpverify.mechanisms.noisy_max import NoisyHistogram, NoisyMaxValue

F = Fraction


def laplace_delta(b: Fraction, sensitivity: Fraction, eps: Fraction) -> mpmath.mpf:
    """max(0, 1 - e^((eps - Delta/b)/2)) at 50 digits (module docstring)."""
    with mpmath.workdps(50):
        a = mpmath.mpf(sensitivity.numerator) / sensitivity.denominator / (mpmath.mpf(b.numerator) / b.denominator)
        e = mpmath.mpf(eps.numerator) / eps.denominator
        return max(mpmath.mpf(0), 1 - mpmath.exp((e - a) / 2))


def as_mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


# -- the Laplace count: closed form ----------------------------------------------------------------

LAPLACE_CASES = [
    (F(1), F(1), F(1, 2)),
    (F(10, 7), F(1), F(0)),  # eps = 0: the total variation 1 - e^(-Delta/(2b)) = 1 - e^(-7/20)
    (F(10, 7), F(1), F(7, 20)),
    (F(3), F(2), F(1, 5)),
    (F(1, 2), F(1), F(3, 2)),
    (F(2), F(3), F(3, 2)),  # eps = Delta/b exactly: 0
    (F(1), F(1), F(2)),  # eps > Delta/b: 0
]


@pytest.mark.parametrize("b, sensitivity, eps", LAPLACE_CASES)
def test_laplace_count_closed_form(b, sensitivity, eps):
    density = Laplace(b).density()
    expected = laplace_delta(b, sensitivity, eps)
    for first, second in ((density, density.shift(-sensitivity)), (density.shift(-sensitivity), density)):
        stick = hockey_stick(MixedOutput({}, {"x": first}), MixedOutput({}, {"x": second}), eps)
        assert stick.exact and stick.slack == 0  # single exponentials: the root is the rational x*
        if eps >= sensitivity / b:
            assert (stick.low, stick.high) == (0.0, 0.0) and stick.event == "nothing" and stick.value.is_zero()
            continue
        assert abs(float(stick) - float(expected)) <= 1e-12
        assert stick.low <= expected <= stick.high and stick.high - stick.low < 1e-13  # float64 bounds
        low, high = stick.tightened()  # from the exact masses
        assert low <= expected <= high and high - low <= 4 * math.ulp(high)
        # the set is exactly a half-line ending at x* (mirrored for the other direction)
        x_star = (sensitivity - eps * b) / 2
        assert stick.event in (f"'x' in (-inf, {x_star})", f"'x' in ({sensitivity - x_star}, +inf)")
    # the same count as a one-coordinate product (a histogram of one bin)
    product = hockey_stick(ProductOutput((density,)), ProductOutput((density.shift(-sensitivity),)), eps)
    assert abs(float(product) - float(expected)) <= 1e-12 and product.low <= expected <= product.high


def test_laplace_count_exact_masses():
    # b = 10/7, Delta = 1, eps = 7/20: x* = 1/4, P = 1 - e^(-7/40)/2, Q = e^((1/4 - 1) 7/10)/2 = e^(-21/40)/2
    density = Laplace(F(10, 7)).density()
    stick = hockey_stick(MixedOutput({}, {"x": density}), MixedOutput({}, {"x": density.shift(-1)}), F(7, 20))
    assert stick.p_mass == 1 - ExpSum.exp(F(-7, 40), F(1, 2))
    assert stick.q_mass == ExpSum.exp(F(-21, 40), F(1, 2))
    assert stick.value == 1 - ExpSum.exp(F(-7, 40))  # 1/2 e^(-7/40) twice


# -- an independent quadrature ---------------------------------------------------------------------


def _roots(g, points):
    """Roots of g between consecutive ``points`` (g continuous inside each interval; the kinks, where
    it may jump, are among the points), from sign changes refined by bisection on the sign (a
    solver stopping on a small |g| can stop early where g is flat, as beside a zero of order 3)."""
    found = []
    for x0, x1 in zip(points, points[1:]):
        inset = (x1 - x0) * mpmath.mpf(10) ** -12
        a, b = x0 + inset, x1 - inset
        ga = g(a)
        if ga * g(b) < 0:
            for _ in range(70):
                middle = (a + b) / 2
                if (g(middle) > 0) == (ga > 0):
                    a = middle
                else:
                    b = middle
            found.append((a + b) / 2)
    return found


def quadrature(p, q, eps, kinks, span=(-60, 60), steps=240):
    """(int max(0, p - e^eps q), its error estimate) by mpmath.quad with the kinks and the roots of
    p - e^eps q (on a grid of ``span``, a root beyond it is in a negligible tail) as breakpoints."""
    with mpmath.workdps(20):
        c = mpmath.exp(as_mp(eps))

        def g(x):
            return p(x) - c * q(x)

        kinks = {as_mp(F(k)) for k in kinks}
        # the grid is offset by 1/pi from the rationals, so that no (rational) root sits on a grid point
        offset = 1 / mpmath.pi
        grid = sorted(kinks | {span[0] + offset + mpmath.mpf(span[1] - span[0]) * i / steps for i in range(steps)})
        pieces = sorted(kinks | set(_roots(g, grid)))
        value, error = mpmath.quad(lambda x: max(mpmath.mpf(0), g(x)), [-mpmath.inf, *pieces, mpmath.inf], error=True)
        return value, error


def laplace_pdf(b):
    b = as_mp(b)
    return lambda x: mpmath.exp(-abs(x) / b) / (2 * b)


def laplace_cdf(b):
    b = as_mp(b)
    return lambda x: mpmath.exp(x / b) / 2 if x < 0 else 1 - mpmath.exp(-x / b) / 2


def exponential_pdf(s):
    s = as_mp(s)
    return lambda x: mpmath.exp(-x / s) / s if x >= 0 else mpmath.mpf(0)


def exponential_cdf(s):
    s = as_mp(s)
    return lambda x: 1 - mpmath.exp(-x / s) if x >= 0 else mpmath.mpf(0)


def max_density(values, pdf, cdf):
    """Density of max_i (q_i + N_i): sum_i f(x - q_i) prod_{j != i} F(x - q_j)."""
    return lambda x: mpmath.fsum(
        pdf(x - qi) * mpmath.fprod(cdf(x - qj) for j, qj in enumerate(values) if j != i) for i, qi in enumerate(values)
    )


EPS = F(7, 10)
PATTERNS = list(statdp_patterns(5))


def _check(stick, reference):
    value, error = reference
    error = error + mpmath.mpf(10) ** -18  # the quadrature's own error estimate, and its working precision
    assert abs(float(stick) - float(value)) <= 1e-12
    assert stick.low <= value + error and value - error <= stick.high  # the enclosure holds the quadrature
    low, high = stick.tightened()
    assert stick.low <= low <= high <= stick.high and low <= value + error and value - error <= high


# Two of the six (eps, pattern) cases (each 0.4-0.8 s of mpmath): eps = 0 (total variation) on a pattern where
# half the answers move, eps = 7/10 on one where one answer moves. Every pattern at eps in {0, 7/20, 7/10, 7/5}
# is checked under -m slow (test_noisy_max_value_every_pattern_against_quadrature).
@pytest.mark.parametrize(("eps", "pair"), [(F(0), PATTERNS[7]), (F(7, 10), PATTERNS[0])], ids=str)
def test_noisy_max_value_laplace_against_quadrature(pair, eps):
    mechanism = NoisyMaxValue(EPS)  # Lap(2/eps) = Lap(20/7)
    b = 2 / EPS
    for first, second in (pair, pair[::-1]):
        stick = hockey_stick(mechanism.output_density(first), mechanism.output_density(second), eps)
        p = max_density(first, laplace_pdf(b), laplace_cdf(b))
        q = max_density(second, laplace_pdf(b), laplace_cdf(b))
        _check(stick, quadrature(p, q, eps, set(first) | set(second)))


@pytest.mark.parametrize("pair", [PATTERNS[1], PATTERNS[5]], ids=str)
def test_noisy_max_value_exponential_against_quadrature(pair):
    mechanism = NoisyMaxValue(EPS, "exponential")  # one-sided Exp(20/7): p > 0 = q on part of the line
    s = 2 / EPS
    for first, second in (pair, pair[::-1]):
        stick = hockey_stick(mechanism.output_density(first), mechanism.output_density(second), F(7, 20))
        p = max_density(first, exponential_pdf(s), exponential_cdf(s))
        q = max_density(second, exponential_pdf(s), exponential_cdf(s))
        _check(stick, quadrature(p, q, F(7, 20), set(first) | set(second)))


def test_zero_of_order_three_at_a_breakpoint_leaves_no_gap():
    # one-sided noise, [0, 1, 1, 1, 1] against [1]*5: both densities vanish at x = 1 (to orders 3 and 4),
    # p - e^eps q ~ D (x - 1)^3 beside it, a difference of nearly equal terms the float enclosures
    # cannot sign; the exact D = g^(3)(1) and a bound of g^(4) settle (1, 1 + w) outright (no slack)
    mechanism = NoisyMaxValue(EPS, "exponential")
    first, second = (0, 1, 1, 1, 1), (1, 1, 1, 1, 1)
    p, q = mechanism.output_density(first).densities["max"], mechanism.output_density(second).densities["max"]
    region = positive_region(p, q, F(7, 5))
    assert region.intervals[0][0] == 1 and region.intervals[0][1] > F(6, 5) and region.slack < 1e-15
    s = 2 / EPS
    stick = hockey_stick(mechanism.output_density(first), mechanism.output_density(second), F(7, 5))
    _check(stick, quadrature(max_density(first, exponential_pdf(s), exponential_cdf(s)),
                             max_density(second, exponential_pdf(s), exponential_cdf(s)), F(7, 5), {0, 1}))


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "exponential"])
@pytest.mark.parametrize("eps", [F(0), F(7, 20), F(7, 10), F(7, 5)])
def test_noisy_max_value_every_pattern_against_quadrature(noise, eps):
    mechanism = NoisyMaxValue(EPS, noise)
    scale = 2 / EPS
    pdf, cdf = (laplace_pdf, laplace_cdf) if noise == "laplace" else (exponential_pdf, exponential_cdf)
    for pair in PATTERNS:
        for first, second in (pair, pair[::-1]):
            stick = hockey_stick(mechanism.output_density(first), mechanism.output_density(second), eps)
            reference = quadrature(max_density(first, pdf(scale), cdf(scale)), max_density(second, pdf(scale), cdf(scale)),
                                   eps, set(first) | set(second))
            _check(stick, reference)


@pytest.mark.parametrize("wrong_scale", [False, True])
@pytest.mark.parametrize("eps", [F(0), F(7, 20), F(7, 10)])
def test_noisy_histogram_against_quadrature(wrong_scale, eps):
    mechanism = NoisyHistogram(EPS, wrong_scale=wrong_scale)
    b = EPS if wrong_scale else 1 / EPS
    for pair in statdp_patterns(5, differ="one"):
        for first, second in (pair, pair[::-1]):
            stick = hockey_stick(mechanism.output_density(first), mechanism.output_density(second), eps)
            (i,) = [j for j in range(5) if first[j] != second[j]]  # one bin moved: the others integrate to 1
            pdf = laplace_pdf(b)
            reference = quadrature(lambda x, a=first[i]: pdf(x - a), lambda x, a=second[i]: pdf(x - a), eps,
                                   {first[i], second[i]})
            _check(stick, reference)
            assert abs(float(stick) - float(laplace_delta(b, F(1), eps))) <= 1e-12  # and the closed form


# -- the other paths of the region: an irrational root, a search, a double zero at a breakpoint ------


def test_irrational_root_is_bracketed():
    # Lap(1) against Lap(2) shifted by 1/2: single exponentials with unequal coefficients, so the roots
    # ln(-C1/C2)/(r2 - r1) are irrational: bracketed by 200-bit rationals, the bracket's mass in the slack
    p, q = Laplace(F(1)).density(), Laplace(F(2)).density().shift(F(-1, 2))
    stick = hockey_stick(MixedOutput({}, {"x": p}), MixedOutput({}, {"x": q}), F(1, 10))
    assert not stick.exact and 0 < stick.slack < 1e-40
    _check(stick, quadrature(laplace_pdf(F(1)), lambda x: laplace_pdf(F(2))(x - mpmath.mpf(1) / 2), F(1, 10), {0, F(1, 2)}))


def test_sum_of_exponentials_is_searched():
    # a mixture of two Laplace bumps against one: sums of exponentials on a piece, settled by the search
    # (two scales: three or four (rate, degree) groups on a piece, so no closed form applies)
    p = Laplace(F(1)).density().scale(F(1, 2)) + Laplace(F(2)).density().shift(F(-1)).scale(F(1, 2))
    q = Laplace(F(1)).density().shift(F(-1, 2))
    region = positive_region(p, q, F(1, 5))
    assert region.searched > 0
    stick = hockey_stick(MixedOutput({}, {"x": p}), MixedOutput({}, {"x": q}), F(1, 5))
    one, two = laplace_pdf(F(1)), laplace_pdf(F(2))
    _check(stick, quadrature(lambda x: (one(x) + two(x - 1)) / 2, lambda x: one(x - mpmath.mpf(1) / 2), F(1, 5),
                             {0, F(1, 2), 1}))


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("rate, low, high", [(1, 0, 1), (-1, -1, 0)], ids=["zero at the left end", "zero at the right end"])
def test_double_zero_at_a_breakpoint(sign, rate, low, high):
    # on the piece: p - q = sign (e^(r x) - 1 - r x), which vanishes to second order at the breakpoint 0;
    # the box beside it is settled by the sign of g'' (Taylor), not bisected forever. p and q need
    # not be densities here: the region is about p - e^eps q only.
    p = PiecewiseExp([F(low), F(high)], [{}, {(F(rate), F(0), 0): F(sign), (F(0), F(0), 0): F(3)}, {}])
    q = PiecewiseExp([F(low), F(high)], [{}, {(F(0), F(0), 0): F(3 + sign), (F(0), F(0), 1): F(sign * rate)}, {}])
    region = positive_region(p, q, F(0))
    assert region.slack == 0.0
    assert region.intervals == ([(F(low), F(high))] if sign > 0 else [])


def test_first_order_zero_at_the_right_end_of_a_searched_piece():
    # p - q = e^x - 1 - x/2 on [-1, 0]: convex, -0.13 at -1 and 0 at 0 with slope 1/2: negative inside,
    # so the box touching 0 is settled by g' > 0 times (x - 0) < 0 (three groups: no closed form)
    p = PiecewiseExp([F(-1), F(0)], [{}, {(F(1), F(0), 0): F(1), (F(0), F(0), 0): F(1)}, {}])
    q = PiecewiseExp([F(-1), F(0)], [{}, {(F(0), F(0), 0): F(2), (F(0), F(0), 1): F(1, 2)}, {}])
    region = positive_region(p, q, F(0))
    assert region.searched == 1 and region.slack == 0.0 and region.intervals == []
    reverse = positive_region(q, p, F(0))
    assert reverse.slack == 0.0 and reverse.intervals == [(F(-1), F(0))]


@pytest.mark.parametrize("low, high", [(0, 1), (-1, 0)])
def test_simple_zero_at_a_breakpoint(low, high):
    # p - q = x on [0, 1] (positive inside) or on [-1, 0] (negative inside): a first-order zero at the
    # end 0, where (x - end) has the sign of the side it is on
    p = PiecewiseExp([F(low), F(high)], [{}, {(F(0), F(0), 1): F(1), (F(0), F(0), 0): F(2)}, {}])
    q = PiecewiseExp([F(low), F(high)], [{}, {(F(0), F(0), 0): F(2)}, {}])
    region = positive_region(p, q, F(0))
    assert region.slack == 0.0 and region.intervals == ([(F(0), F(1))] if low == 0 else [])
    reverse = positive_region(q, p, F(0))
    assert reverse.slack == 0.0 and reverse.intervals == ([] if low == 0 else [(F(-1), F(0))])


def test_exact_tie_on_a_piece_adds_nothing():
    # the histogram at eps = Delta/b: p = e^eps q exactly on a half-line (a group that cancels), 0 elsewhere
    density = Laplace(F(10, 7)).density()
    region = positive_region(density, density.shift(-1), F(7, 10))
    assert region.intervals == [] and region.slack == 0.0 and region.searched == 0


# -- products: the law of the summed loss ---------------------------------------------------------


def two_laplace_reference(b, eps, first=1, second=1):
    """delta of two Lap(b) coordinates moved by ``first`` and ``second``, by conditioning on the
    first: int p1(x) h(eps - L1(x)) dx with h the second's profile (closed form, also for eps < 0)."""
    with mpmath.workdps(30):
        B, e, d1 = as_mp(b), as_mp(eps), mpmath.mpf(first)
        a = mpmath.mpf(second) / B

        def h(t):
            if t <= -a:
                return 1 - mpmath.exp(t)  # the whole line: P = 1, Q = 1
            return max(mpmath.mpf(0), 1 - mpmath.exp((t - a) / 2))

        def loss(x):
            return (abs(x - d1) - abs(x)) / B

        kinks = {mpmath.mpf(0), d1}
        for t in (a, -a):  # where eps - L1(x) = +-a inside (0, d1): L1 = (d1 - 2x)/B
            x = (d1 - B * (e - t)) / 2
            if 0 < x < d1:
                kinks.add(x)
        pdf = laplace_pdf(b)
        return mpmath.quad(lambda x: pdf(x) * h(e - loss(x)), [-mpmath.inf, *sorted(kinks), mpmath.inf], error=True)


@pytest.mark.parametrize("eps", [F(0), F(1, 2), F(7, 10), F(3, 2), F(2)])
def test_two_coordinates_of_different_sensitivities(eps):
    # the loss densities have different widths (2/b and 4/b): both branches of the piece convolution
    b = F(3, 2)
    density = Laplace(b).density()
    first, second = ProductOutput((density, density)), ProductOutput((density.shift(-1), density.shift(-2)))
    stick = hockey_stick(first, second, eps)
    _check(stick, two_laplace_reference(b, eps, first=1, second=2))
    one, two = coordinate_loss(density, density.shift(-1)), coordinate_loss(density, density.shift(-2))
    assert convolve(one, two).set_masses(eps) == convolve(two, one).set_masses(eps)


@pytest.mark.parametrize("eps", [F(0), F(7, 20), F(7, 10), F(21, 20), F(7, 5), F(3)])
def test_two_laplace_coordinates_against_conditioning(eps):
    b = F(10, 7)
    density = Laplace(b).density()
    first = ProductOutput((density, density, density))  # the middle coordinate is the same: mass 1
    second = ProductOutput((density.shift(-1), density, density.shift(-1)))
    stick = hockey_stick(first, second, eps)
    assert stick.method == "loss distribution" and stick.exact
    if eps >= 2 / b:
        assert (stick.low, stick.high) == (0.0, 0.0)
        return
    _check(stick, two_laplace_reference(b, eps))
    if eps == 1 / b:  # 1 - (1 + a/4) e^(-a/2) at a = eps (module docstring)
        a = float(eps)
        assert abs(float(stick) - (1 - (1 + a / 4) * math.exp(-a / 2))) <= 1e-12


@pytest.mark.parametrize("eps", [0.0, 0.7, 1.4])
def test_three_laplace_coordinates_against_dp_accounting(eps):
    # an independent method: dp_accounting's discretised privacy loss distribution of the Laplace
    # mechanism composed three times (its float64 arithmetic is good to about 1e-12, its
    # discretisation at 1e-5 to about 1e-9 here)
    from dp_accounting.pld import privacy_loss_distribution as pld  # a test dependency (pyproject [test])

    b = F(10, 7)
    density = Laplace(b).density()
    first = ProductOutput((density,) * 3)
    second = ProductOutput((density.shift(-1),) * 3)
    stick = hockey_stick(first, second, F(eps))
    composed = pld.from_laplace_mechanism(float(b), sensitivity=1, value_discretization_interval=1e-5).self_compose(3)
    assert abs(float(stick) - composed.get_delta_for_epsilon(eps)) <= 1e-9


def test_one_coordinate_loss_law_agrees_with_the_region_exactly():
    b = F(3, 2)
    density = Laplace(b).density()
    law = coordinate_loss(density, density.shift(-1))
    assert law.total() == 1
    for eps in (F(0), F(1, 3), F(2, 3)):
        P, Q = law.set_masses(eps)
        stick = hockey_stick(MixedOutput({}, {"x": density}), MixedOutput({}, {"x": density.shift(-1)}), eps)
        assert P - Q.times_exp(eps) == stick.value  # two exact computations of one number


def test_convolution_is_exact_and_associative():
    b = F(3, 2)
    density = Laplace(b).density()
    one = coordinate_loss(density, density.shift(-1))
    two = coordinate_loss(density.shift(-1), density)
    three = coordinate_loss(Laplace(F(1)).density(), Laplace(F(1)).density().shift(F(1, 2)))
    left, right = convolve(convolve(one, two), three), convolve(one, convolve(two, three))
    assert left.total() == 1 and right.total() == 1
    assert left.atoms == right.atoms and left.infinite == right.infinite
    for eps in (F(0), F(1, 2), F(3, 2)):
        assert left.set_masses(eps) == right.set_masses(eps)


def test_exponential_coordinates_have_infinite_loss():
    # one-sided Exp(s) moved by 1: L = +inf on [0, 1) (mass 1 - e^(-1/s)), -1/s beyond; with two such
    # coordinates L is finite only when both are (-2/s < eps): delta = P(L = inf) = 1 - e^(-2/s)
    s = F(2)
    density = Exponential(s).density()
    first = ProductOutput((density, density))
    second = ProductOutput((density.shift(-1), density.shift(-1)))
    stick = hockey_stick(first, second, F(1, 2))
    assert stick.value == 1 - ExpSum.exp(F(-1))


def test_unsupported_product_is_refused_with_the_way_on():
    lap1, lap2 = Laplace(F(1)).density(), Laplace(F(2)).density()
    first, second = ProductOutput((lap1, lap1)), ProductOutput((lap2.shift(-1), lap2.shift(-1)))
    with pytest.raises(InvalidArgument, match=r"log-linear with a rational loss.*coordinate 0.*delta=0.*differ='one'"):
        hockey_stick(first, second, F(1, 2))
    # one differing coordinate: any densities, by the region
    assert hockey_stick(ProductOutput((lap1, lap1)), ProductOutput((lap2, lap1)), F(0)).low > 0


# -- the worst case over pairs ---------------------------------------------------------------------


def test_sweep_with_pruning_equals_every_pair():
    mechanism = NoisyMaxValue(EPS)
    outputs = {d: mechanism.output_density(d) for pair in PATTERNS for d in pair}
    directed = [(a, b) for pair in PATTERNS for a, b in (pair, pair[::-1])]
    bounds = {}
    for a, b in directed:
        loss = pair_loss(outputs[a], outputs[b])
        bounds[(a, b)] = math.inf if loss.infinite else loss.high
    sweep = DeltaSweep(outputs, directed, bounds)
    grid = [EPS * i / 4 for i in range(9)]
    points = sweep.profile(grid)
    assert any(point.computed < len(directed) for point in points)  # pruning happened
    for point in points:
        every = [hockey_stick(outputs[a], outputs[b], point.epsilon) for a, b in directed]
        assert point.low == max(stick.tightened()[0] for stick in every)
        assert point.high >= max(stick.low for stick in every)
        assert point.value == max(float(stick) for stick in every)
        assert point.low <= point.value <= point.high
        # every bound the sweep used is an upper bound of the pair's delta
        for (a, b), stick in zip(directed, every):
            assert sweep.upper((a, b), point.epsilon) >= stick.low
    values = [point.value for point in points]
    assert values == sorted(values, reverse=True)  # delta decreases in eps
