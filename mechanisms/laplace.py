"""Exact Laplace comparisons: Li–Wang–Ye 2024 App. C (Lemma C.1, Alg. 2) and Alg. 1.

PrivateCompare (Lemma C.1) tests ``value + Lap(b) <= threshold``, PrivateMinError (Alg. 2) runs it
in a binary search, and PrivateThreshold (Alg. 1) keeps ``mid`` iff ``v_mid < min(v_l, v_r)`` for
three independently noised values. Their output distributions are finite; this module computes the
probabilities of those comparisons *exactly*, never by sampling, for any mechanism to reuse.

``Lap(b)`` has density ``exp(-|x| / b) / (2 b)``, ``b > 0`` (the paper's ``b = 1 / (n eps')``).

* Tail: ``P(Lap(b) > t) = exp(-t / b) / 2`` for ``t >= 0`` and ``1 - exp(t / b) / 2`` for ``t < 0``.
* Difference ``D = L1 - L2`` of independent ``Lap(b1)``, ``Lap(b2)``: its characteristic function
  ``1 / ((1 + b1^2 s^2)(1 + b2^2 s^2))`` splits into partial fractions, so the density of ``D`` is
  ``(b1^2 f_b1 - b2^2 f_b2) / (b1^2 - b2^2)`` and, for ``d >= 0``,
  ``P(D > d) = (b1^2 exp(-d / b1) - b2^2 exp(-d / b2)) / (2 (b1^2 - b2^2))``. At ``b1 = b2 = b`` the
  singularity is removable: ``P(D > d) = exp(-d / b) (1 + d / (2 b)) / 2``.
* First of several is the smallest:
  ``P = int f_0(x) prod_{i >= 1} P(Lap(b_i) > x + v_0 - v_i) dx``. Between consecutive breakpoints
  ``{0} u {v_i - v_0}`` every factor is a sum of exponentials in ``x``; the product is expanded
  (terms with equal rates merged) and each term integrated in closed form.

Number modes (keyword ``exact``, the convention of :mod:`dpverify.mechanisms.exponential`):

* ``exact=False`` (default): a ``float``. The same closed forms are evaluated with mpmath at 50
  significant digits or more (more when ``b1`` is close to ``b2``, where the formula cancels); on
  each integration piece the terms are anchored at a piece endpoint, so each is bounded by the
  integrand and the absolute error before the final rounding to float is below ``1e-30``.
* ``exact=True``: a sympy expression, ``sum_k r_k exp(q_k)`` with rational ``r_k, q_k`` for
  rational inputs (expanded, so equal probabilities compare equal structurally). Floats are read as
  the binary rationals they are; sympy irrationals such as ``sqrt(2)`` are kept symbolic.

Ties (``a + L1 = c + L2``) have probability 0, so ``<`` and ``<=`` (``>`` and ``>=``) agree.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.validation import check_bool, exact_number

__all__ = [
    "laplace_cdf",
    "laplace_tail",
    "prob_noisy_below",
    "prob_noisy_clears",
    "prob_noisy_at_most",
    "prob_first_is_smallest",
    "argmin_distribution",
]

_DPS = 50
_ERROR_TARGET = mpmath.mpf("1e-30")

Exact = Any  # Fraction, or a sympy number when an input is irrational

# -- input validation and exact number handling -------------------------------------------------


def _exact_number(name: str, value: Any, *, fix: str = "") -> Exact:
    """``value`` as a Fraction or a real sympy number, read by the one policy of
    :func:`dpverify.validation.exact_number` (a float is the simplest fraction that rounds to it)."""
    return exact_number(name, value, fix=fix.strip() or None)


def _exact_scale(name: str, value: Any) -> Exact:
    hint = " Use the Laplace scale b = sensitivity / epsilon > 0."
    scale = _exact_number(name, value, fix=hint)
    if _sign(scale) <= 0:
        raise InvalidArgument(f"{name} must be positive, got {name}={value!r}.{hint}")
    return scale


def _check_exact_flag(exact: Any) -> None:
    check_bool("exact", exact)


def _unify(numbers: list[Exact]) -> list[Exact]:
    """All Fractions, or all sympy numbers when any input is irrational."""
    if all(isinstance(x, Fraction) for x in numbers):
        return numbers
    return [_to_sympy(x) for x in numbers]


def _to_sympy(x: Exact) -> sympy.Expr:
    return sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x


def _sign(x: Exact) -> int:
    """The exact sign of a Fraction or a real sympy number."""
    if isinstance(x, Fraction):
        return (x > 0) - (x < 0)
    if x.is_zero:
        return 0
    if x.is_positive:
        return 1
    if x.is_negative:
        return -1
    approx = sympy.N(x, 80)
    if abs(approx) > sympy.Float("1e-60"):
        return 1 if approx > 0 else -1
    return 0 if x.equals(0) else (1 if approx > 0 else -1)


# -- the two number fields ----------------------------------------------------------------------


class _SympyField:
    """Exact arithmetic: sympy expressions."""

    def num(self, x: Exact) -> sympy.Expr:
        return _to_sympy(x)

    def exp(self, x: Exact) -> sympy.Expr:
        return sympy.exp(_to_sympy(x))

    def expm1_over(self, rate: Exact, length: Exact) -> sympy.Expr:
        """``(exp(rate * length) - 1) / rate`` (``rate != 0``)."""
        return (sympy.exp(_to_sympy(rate * length)) - 1) / _to_sympy(rate)

    def finish(self, value: sympy.Expr, magnitude: Any = None) -> sympy.Expr:
        return sympy.expand(sympy.sympify(value))


class _FloatField:
    """mpmath at the current working precision; ``finish`` rounds to float in [0, 1]."""

    def num(self, x: Exact) -> mpmath.mpf:
        if isinstance(x, Fraction):
            return mpmath.mpf(x.numerator) / x.denominator
        return mpmath.mpf(sympy.N(x, mpmath.mp.dps + 10))

    def exp(self, x: Exact) -> mpmath.mpf:
        return mpmath.exp(self.num(x))

    def expm1_over(self, rate: Exact, length: Exact) -> mpmath.mpf:
        return mpmath.expm1(self.num(rate * length)) / self.num(rate)

    def finish(self, value: Any, magnitude: Any = None) -> float:
        if magnitude is not None:
            # Every term carries a relative rounding error below 10^(5 - dps) (a handful of
            # operations); the absolute error is at most that times the sum of |terms|.
            bound = magnitude * mpmath.mpf(10) ** (5 - mpmath.mp.dps)
            if bound > _ERROR_TARGET:
                raise _NeedMorePrecision
        return min(max(float(value), 0.0), 1.0)


class _NeedMorePrecision(Exception):
    pass


def _evaluate(exact: bool, compute, *, extra_digits: int = 0):
    """Run ``compute(field)`` exactly, or in mpmath with precision raised until certified."""
    if exact:
        return compute(_SympyField())
    dps = _DPS + extra_digits
    for _ in range(6):
        with mpmath.workdps(dps):
            try:
                return compute(_FloatField())
            except _NeedMorePrecision:
                dps *= 2
    raise AssertionError("mpmath evaluation did not reach the error target")  # pragma: no cover


# -- one noisy value ----------------------------------------------------------------------------


def _tail(field, t: Exact, b: Exact):
    if _sign(t) >= 0:
        return field.exp(-t / b) / 2
    return 1 - field.exp(t / b) / 2


def laplace_tail(t: Any, scale: Any, *, exact: bool = False) -> Any:
    """``P(Lap(b) > t)``, the test of PrivateCompare (Li–Wang–Ye 2024 App. C, Lemma C.1).

    Args:
        t: the threshold (int, float, Fraction or a real sympy number).
        scale: the Laplace scale ``b > 0``.
        exact: return a sympy expression instead of a float.

    Returns:
        ``exp(-t / b) / 2`` for ``t >= 0``, ``1 - exp(t / b) / 2`` for ``t < 0``.

    Raises:
        InvalidArgument: ``t`` is not a finite real number or ``scale`` is not positive and finite.
    """
    _check_exact_flag(exact)
    t_, b = _unify([_exact_number("t", t), _exact_scale("scale", scale)])
    return _evaluate(exact, lambda field: field.finish(_tail(field, t_, b)))


def laplace_cdf(t: Any, scale: Any, *, exact: bool = False) -> Any:
    """``P(Lap(b) <= t)`` (Li–Wang–Ye 2024 App. C, Lemma C.1), ``1 - laplace_tail``.

    Args:
        t: the point (int, float, Fraction or a real sympy number).
        scale: the Laplace scale ``b > 0``.
        exact: return a sympy expression instead of a float.

    Returns:
        ``exp(t / b) / 2`` for ``t < 0``, ``1 - exp(-t / b) / 2`` for ``t >= 0``.

    Raises:
        InvalidArgument: ``t`` is not a finite real number or ``scale`` is not positive and finite.
    """
    _check_exact_flag(exact)
    t_, b = _unify([_exact_number("t", t), _exact_scale("scale", scale)])
    return _evaluate(exact, lambda field: field.finish(_tail(field, -t_, b)))


def prob_noisy_clears(value: Any, threshold: Any, *, scale: Any, exact: bool = False) -> Any:
    """``P(value + Lap(b) > threshold)`` (Li–Wang–Ye 2024 App. C, Lemma C.1's test).

    Args:
        value: the true statistic (``min_c err_z^t(c)`` in Lemma C.1).
        threshold: the value it is compared with.
        scale: the Laplace scale ``b > 0`` (``1 / (eps n)`` in Lemma C.1).
        exact: return a sympy expression instead of a float.

    Returns:
        ``laplace_tail(threshold - value, scale)``; ``>=`` has the same probability.

    Raises:
        InvalidArgument: a number is not finite and real, or ``scale`` is not positive.
    """
    _check_exact_flag(exact)
    v, c, b = _unify(
        [_exact_number("value", value), _exact_number("threshold", threshold), _exact_scale("scale", scale)]
    )
    return _evaluate(exact, lambda field: field.finish(_tail(field, c - v, b)))


def prob_noisy_at_most(value: Any, threshold: Any, *, scale: Any, exact: bool = False) -> Any:
    """``P(value + Lap(b) <= threshold)``: PrivateCompare returns 0 (Li–Wang–Ye 2024 Lemma C.1).

    Args:
        value: the true statistic.
        threshold: the value it is compared with.
        scale: the Laplace scale ``b > 0``.
        exact: return a sympy expression instead of a float.

    Returns:
        ``1 - prob_noisy_clears(value, threshold, scale=scale)``; ``<`` has the same probability.

    Raises:
        InvalidArgument: a number is not finite and real, or ``scale`` is not positive.
    """
    _check_exact_flag(exact)
    v, c, b = _unify(
        [_exact_number("value", value), _exact_number("threshold", threshold), _exact_scale("scale", scale)]
    )
    return _evaluate(exact, lambda field: field.finish(_tail(field, v - c, b)))


# -- two noisy values ---------------------------------------------------------------------------


def _difference_tail(field, d: Exact, b1: Exact, b2: Exact):
    """``P(Lap(b1) - Lap(b2) > d)`` for ``d >= 0``."""
    if _sign(b1 - b2) == 0:
        return field.exp(-d / b1) * (1 + field.num(d / (2 * b1))) / 2
    B1, B2 = field.num(b1), field.num(b2)
    return (B1**2 * field.exp(-d / b1) - B2**2 * field.exp(-d / b2)) / (2 * (B1**2 - B2**2))


def _cancelled_digits(b1: Exact, b2: Exact) -> int:
    """Decimal digits the unequal-scale formula loses to cancellation: ``log10(b / |b1 - b2|)``."""
    gap = b1 - b2
    if _sign(gap) == 0:
        return 0
    ratio = abs(gap) / max(b1, b2, key=lambda x: float(x))
    ratio_float = float(ratio)
    if ratio_float > 0:
        return max(0, math.ceil(-math.log10(ratio_float))) + 2
    return 400  # pragma: no cover  (scales closer than 1e-308 relative)


def prob_noisy_below(a: Any, c: Any, *, scale_a: Any, scale_b: Any, exact: bool = False) -> Any:
    """``P(a + Lap(b1) < c + Lap(b2))``, PrivateThreshold's comparison (Li–Wang–Ye 2024 Alg. 1).

    The two noises are independent. With ``d = c - a`` this is ``P(D < d)`` for ``D = L1 - L2``,
    whose tail is in the module docstring (the case ``b1 = b2`` separately).

    Args:
        a: the first true value.
        c: the second true value.
        scale_a: the scale ``b1 > 0`` of the noise added to ``a``.
        scale_b: the scale ``b2 > 0`` of the noise added to ``c``.
        exact: return a sympy expression instead of a float.

    Returns:
        ``1 - P(D > d)`` for ``d >= 0`` and ``P(D > -d)`` for ``d < 0``; ``<=`` has the same
        probability.

    Raises:
        InvalidArgument: a value is not finite and real, or a scale is not positive.
    """
    _check_exact_flag(exact)
    a_, c_, b1, b2 = _unify(
        [
            _exact_number("a", a),
            _exact_number("c", c),
            _exact_scale("scale_a", scale_a),
            _exact_scale("scale_b", scale_b),
        ]
    )
    d = c_ - a_

    def compute(field):
        if _sign(d) >= 0:
            return field.finish(1 - _difference_tail(field, d, b1, b2))
        return field.finish(_difference_tail(field, -d, b1, b2))

    return _evaluate(exact, compute, extra_digits=_cancelled_digits(b1, b2))


# -- several noisy values -----------------------------------------------------------------------


def _values_and_scales(values: Any, scales: Any) -> tuple[list[Exact], list[Exact]]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
        raise InvalidArgument(
            f"values must be a non-empty sequence of real numbers, got values={values!r}."
        )
    fix = " Drop +inf entries (an empty candidate set is never the smallest) and replace NaN."
    exact_values = [_exact_number(f"values[{i}]", v, fix=fix) for i, v in enumerate(values)]
    if isinstance(scales, Sequence) and not isinstance(scales, (str, bytes)):
        if len(scales) != len(values):
            raise InvalidArgument(
                f"scales must have one entry per value ({len(values)}), got {len(scales)} "
                f"(scales={scales!r}); pass a single number to use the same scale for all."
            )
        exact_scales = [_exact_scale(f"scales[{i}]", b) for i, b in enumerate(scales)]
    else:
        exact_scales = [_exact_scale("scales", scales)] * len(values)
    unified = _unify(exact_values + exact_scales)
    return unified[: len(values)], unified[len(values) :]


def _compare(x: Exact, y: Exact) -> int:
    return _sign(x - y)


def _multiply(poly: dict, factor: dict) -> dict:
    """Product of two sums of exponentials ``{rate: coefficient}``."""
    result: dict = {}
    for r1, c1 in poly.items():
        for r2, c2 in factor.items():
            rate = r1 + r2
            result[rate] = result[rate] + c1 * c2 if rate in result else c1 * c2
    return result


def _first_is_smallest(field, values: list[Exact], scales: list[Exact]):
    """``int f_0(x) prod_i P(Lap(b_i) > x - o_i) dx`` with ``o_i = v_i - v_0``, piece by piece."""
    zero = values[0] - values[0]
    offsets = [v - values[0] for v in values[1:]]
    b0, rest = scales[0], scales[1:]
    points: list[Exact] = []
    for point in sorted([zero, *offsets], key=functools.cmp_to_key(_compare)):
        if not points or _compare(point, points[-1]) != 0:
            points.append(point)
    # Pieces as (anchor z, direction s, length L or None for infinite): x = z + s * y, y in [0, L].
    pieces = [(points[0], -1, None)]
    pieces += [(p, 1, q - p) for p, q in zip(points, points[1:])]
    pieces.append((points[-1], 1, None))
    track_magnitude = isinstance(field, _FloatField)
    total, magnitude = field.num(zero), field.num(zero)
    for z, s, length in pieces:
        # On the piece's interior x lies strictly on one side of every breakpoint.
        right_of_zero = s == 1 and _sign(z) >= 0
        density_rate = -s / b0 if right_of_zero else s / b0
        density_exponent = -z / b0 if right_of_zero else z / b0
        poly = {density_rate: field.exp(density_exponent) / (2 * field.num(b0))}
        for o, b in zip(offsets, rest):
            if s == 1 and _compare(z, o) >= 0:  # x >= o: P(Lap(b) > x - o) = exp(-(x - o)/b)/2
                factor = {-s / b: field.exp(-(z - o) / b) / 2}
            else:  # x < o: 1 - exp((x - o)/b)/2
                factor = {zero: field.num(zero + 1), s / b: -field.exp((z - o) / b) / 2}
            poly = _multiply(poly, factor)
        for rate, coefficient in poly.items():
            if length is None:
                if _sign(rate) >= 0:  # pragma: no cover  (the integrand decays on infinite pieces)
                    raise AssertionError(f"non-decaying rate {rate} on an infinite piece")
                term = coefficient * field.num(-1 / rate)
            elif _sign(rate) == 0:
                term = coefficient * field.num(length)
            else:
                term = coefficient * field.expm1_over(rate, length)
            total += term
            if track_magnitude:
                magnitude += abs(term)
    return field.finish(total, magnitude if track_magnitude else None)


def prob_first_is_smallest(values: Sequence[Any], *, scales: Any, exact: bool = False) -> Any:
    """``P(v_0 + L_0 < v_i + L_i for all i >= 1)``, PrivateThreshold's test (Li–Wang–Ye 2024 Alg. 1).

    Alg. 1 keeps ``mid`` iff ``v_mid < min(v_l, v_r)``: call this with
    ``values=[err(mid), min_left, min_right]`` (drop a side whose range is empty: its ``+inf`` is
    never the smallest). The noises ``L_i ~ Lap(b_i)`` are independent.

    Args:
        values: the true values ``v_0, ..., v_k`` (``k >= 0``; one value gives probability 1).
        scales: one scale ``b_i > 0`` per value, or a single scale shared by all.
        exact: return a sympy expression instead of a float.

    Returns:
        The probability, as ``int f_0(x) prod_{i >= 1} P(Lap(b_i) > x + v_0 - v_i) dx`` integrated
        piece by piece in closed form. The work per piece grows with the number of distinct rates
        ``sum of +-1/b_i``: linear in the number of values for a shared scale, up to ``2^k``
        otherwise.

    Raises:
        InvalidArgument: values is empty, a value is not finite and real, a scale is not positive,
            or the number of scales does not match.
    """
    _check_exact_flag(exact)
    exact_values, exact_scales = _values_and_scales(values, scales)
    if len(exact_values) == 1:
        return sympy.Integer(1) if exact else 1.0
    return _evaluate(exact, lambda field: _first_is_smallest(field, exact_values, exact_scales))


def argmin_distribution(values: Sequence[Any], *, scales: Any, exact: bool = False) -> Distribution:
    """Which noisy value is the smallest (Li–Wang–Ye 2024 Alg. 1, ``v_mid < min(v_l, v_r)``).

    Args:
        values: the true values ``v_0, ..., v_k``.
        scales: one scale ``b_i > 0`` per value, or a single scale shared by all.
        exact: sympy probabilities instead of floats.

    Returns:
        A :class:`Distribution` over indices ``0..k``: index ``i`` has probability
        ``prob_first_is_smallest`` with ``v_i`` moved to the front (ties have probability 0).

    Raises:
        InvalidArgument: as :func:`prob_first_is_smallest`.
    """
    _check_exact_flag(exact)
    exact_values, exact_scales = _values_and_scales(values, scales)
    if len(exact_values) == 1:
        return Distribution({0: 1})
    probabilities = {}
    for i in range(len(exact_values)):
        order = [i] + [j for j in range(len(exact_values)) if j != i]
        reordered_values = [exact_values[j] for j in order]
        reordered_scales = [exact_scales[j] for j in order]
        probabilities[i] = _evaluate(
            exact, lambda field: _first_is_smallest(field, reordered_values, reordered_scales)
        )
    return Distribution(probabilities)
