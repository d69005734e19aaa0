"""Balle and Wang 2018, Theorem 8: the Gaussian mechanism ``M(D) = f(D) + N(0, sigma^2 I)``, decided exactly.

``f`` maps a dataset to a vector of ``k`` rational numbers; two datasets at l2 distance
``Delta = ||f(D) - f(D')||_2 > 0`` have the privacy profile (Balle, Wang: "Improving the Gaussian
Mechanism for Differential Privacy: Analytical Calibration and Optimal Denoising", ICML 2018, Thm. 8)

    delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta),

and the pure eps* is infinite. Everything below rests on three facts, proved here.

**One direction carries the whole pair.** With ``u = (f(D) - f(D'))/Delta``, the map
``y -> (<y - f(D'), u>, the rest of y in an orthonormal basis)`` is an isometry that sends
``N(f(D), sigma^2 I)`` to ``N(Delta, sigma^2) x N(0, sigma^2 I_{k-1})`` and ``N(f(D'), sigma^2 I)`` to
``N(0, sigma^2) x N(0, sigma^2 I_{k-1})``. An invertible map is a post-processing both ways, so the
pair's privacy profile is that of ``N(Delta, sigma^2)`` against ``N(0, sigma^2)``: it depends on
``Delta`` alone. The privacy loss is ``L(z) = (Delta z - Delta^2/2)/sigma^2`` at
``z = <y - f(D'), u>``, increasing in ``z``.

**The optimal event is a half-space.** The hockey-stick divergence ``sup_S P(S) - e^eps Q(S)`` is
attained by ``S* = {L > eps} = {z >= t*}``, ``t* = Delta/2 + eps sigma^2/Delta``; under ``P``,
``z ~ N(Delta, sigma^2)``, under ``Q``, ``z ~ N(0, sigma^2)``, so ``P(S*) = Phi(a - b)`` and
``Q(S*) = Phi(-a - b)`` with ``a = Delta/(2 sigma)``, ``b = eps sigma/Delta``: Theorem 8 is exactly
``P(S*) - e^eps Q(S*)``. The pair is therefore decided on the two-outcome post-processing
``{S*, not S*}`` (:class:`HalfSpace` outcomes), by the engine
(:func:`dpverify.verdict.engine.decide`) as :func:`dpverify.densities.continuous.verify_densities`
decides its witness sets: its hockey-stick value at eps is ``delta(eps)`` (on ``not S*``,
``L <= eps``, so that outcome adds nothing), and the reverse direction of the same two outcomes is a
post-processing too, so it cannot exceed it. HOLDS on the post-processing is HOLDS for the
mechanism; a VIOLATED comes with the engine's witness, a real half-space of outputs. The set is
taken at the claim's epsilon as the engine reads it (:func:`dpverify.validation.claim_number`).
For a pure claim (``delta = 0``) the same set is the witness: every point of ``S*`` has loss
``> eps``, so ``P(S*) > e^eps Q(S*)``; and since ``P(z >= t)/Q(z >= t) >= e^{L(t)} -> inf`` as
``t -> inf``, eps* is infinite (reported as ``math.inf``: a proof, not a measurement).

**The worst pair has the largest Delta.** ``delta`` depends on ``r = Delta/sigma`` only, and with
``phi(-a - b) = phi(a - b) e^-eps`` (the exponents differ by ``((a + b)^2 - (a - b)^2)/2 = 2ab = eps``),
``d delta / d r = phi(r/2 - eps/r) (1/2 + eps/r^2) - e^eps phi(-r/2 - eps/r) (-1/2 + eps/r^2)
= phi(r/2 - eps/r) > 0``: increasing in ``Delta``, decreasing in ``sigma``. The checker does not rely
on this: pairs are grouped by their exact ``Delta^2`` (first fact) and every group is decided; the
largest group is the worst (tests check it against the formula), and the calibrations below bisect
on ``sigma`` by it.

**Certified Phi.** ``mpmath.iv`` has no erfc, so :func:`normal_cdf` evaluates
``Phi(x) = erfc(-x/sqrt 2)/2`` in interval arithmetic with proved truncation bounds: for
``0 <= z <= 3`` the positive series ``erf z = (2/sqrt pi) e^{-z^2} sum_n z (2z^2)^n/(2n+1)!!``
(DLMF 7.6.2), whose term ratios ``2z^2/(2n+3)`` decrease, so the tail after a term ``t_N`` is at most
``t_N r/(1 - r)`` with ``r = 2z^2/(2N+3) < 1``, added as ``[0, bound]``; for ``z > 3`` Laplace's
continued fraction ``sqrt(pi) e^{z^2} erfc z = 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + ...))))``
(DLMF 7.9.2), whose partial numerators and denominators are positive, so the value lies between any
two consecutive convergents (computed as intervals); ``erfc(-z) = 2 - erfc(z)``. An interval argument
(``x/sqrt 2`` is irrational) is handled by monotonicity: ``erfc`` is decreasing, so the enclosure is
``[erfc(high end), erfc(low end)]`` at the two exact endpoints. Tails are computed directly
(``P(not S*) = Phi(b - a)``, never ``1 - Phi(a - b)``), so tiny probabilities keep their relative
precision; at the default 160 bits the enclosures are about ``1e-45`` wide relative (the tests
measure it) and contain mpmath's 60-digit values.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from dpverify.checking.input_pairs import InputPairs
from dpverify.densities.piecewise import as_fraction
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import check_enumeration_size, relation
from dpverify.validation import check_delta, check_epsilon, claim_number
from dpverify.verdict.engine import RowPairs, Verdict, decide
from dpverify.verdict.results import PairsResult

__all__ = [
    "BITS",
    "GaussianMechanism",
    "HalfSpace",
    "normal_cdf",
    "delta_for_epsilon",
    "classical_sigma",
    "analytic_sigma",
    "verify_gaussian",
]

iv = mpmath.iv

#: Working precision (bits) of the certified enclosures; a verdict the engine cannot separate at
#: this precision is recomputed at :data:`_RETRY_BITS`.
BITS = 160
_RETRY_BITS = 640
#: Below this argument erfc is summed as a series, above it as a continued fraction.
_SERIES_LIMIT = 3


@contextmanager
def _precision(bits: int):
    old = iv.prec
    iv.prec = bits
    try:
        yield
    finally:
        iv.prec = old


# -- certified Phi ---------------------------------------------------------------------------------


def _erf_series(z: Any, target: Any) -> Any:
    """``erf z`` for a point interval ``0 <= z <= 3`` (module docstring: positive series, tail bound),
    the tail bound below ``target`` relative."""
    two_z2 = 2 * z * z
    term, total, n = z, z, 0
    while True:
        ratio = two_z2 / (2 * n + 3)  # t_{n+1} / t_n, and every later ratio is smaller
        if ratio.b < iv.mpf(1) / 2:
            tail = term * ratio / (1 - ratio)  # >= sum_{m > n} t_m
            if tail.b <= (total * target).a:
                total += iv.mpf([0, tail.b])
                break
        term = term * ratio
        total += term
        n += 1
    return 2 / iv.sqrt(iv.pi) * iv.exp(-z * z) * total


def _erfc_fraction(z: Any, target: Any) -> Any:
    """``erfc z`` for a point interval ``z > 3`` (module docstring: DLMF 7.9.2, consecutive convergents),
    stopped when two consecutive convergents agree to ``target`` relative."""
    # K = a_1/(b_1 + a_2/(b_2 + ...)), a_1 = 1, a_m = (m - 1)/2, b_m = z; A_m/B_m is the m-th convergent.
    a_prev, a_now = iv.mpf(1), iv.mpf(0)  # A_{-1}, A_0
    b_prev, b_now = iv.mpf(0), iv.mpf(1)  # B_{-1}, B_0
    last = None
    m = 1
    while True:
        numerator = iv.mpf(1) if m == 1 else iv.mpf(m - 1) / 2
        a_prev, a_now = a_now, z * a_now + numerator * a_prev
        b_prev, b_now = b_now, z * b_now + numerator * b_prev
        value = a_now / b_now
        if last is not None:
            low, high = min(last.a, value.a), max(last.b, value.b)
            if high - low <= low * target:
                hull = iv.mpf([low, high])
                return iv.exp(-z * z) / iv.sqrt(iv.pi) * hull
        last = value
        m += 1
        if m > 100_000:  # unreachable: about 160 terms at z = 3 and 160 bits, fewer for larger z
            raise AssertionError(f"internal error: the continued fraction of erfc({z}) did not settle")


def _erfc_point(z: Any, target: Any) -> Any:
    """``erfc z`` for a point interval ``z`` (an exact number); truncation below ``target`` relative."""
    if z.a < 0:
        return 2 - _erfc_point(-z, target)
    if z.b <= _SERIES_LIMIT:
        return 1 - _erf_series(z, target)
    return _erfc_fraction(z, target)


def normal_cdf(x: Any, *, bits: int = BITS) -> Any:
    """A certified enclosure of ``Phi(x)``, the standard normal CDF, as an ``mpmath.iv`` interval.

    Args:
        x: an ``mpmath.iv`` interval or an exact number (int, Fraction, float read exactly).
        bits: working precision; the result is about ``2**-bits`` wide relative to ``Phi(x)``
            (plus what the width of ``x`` itself carries).

    Returns:
        An interval containing ``Phi(y)`` for every ``y`` in ``x``, in ``iv.prec = bits``.
    """
    # 32 guard bits: the convergents and partial sums each carry a few roundings per term, and the
    # truncation is stopped at 2**-(bits + 8) relative, so their sum stays well below 2**-bits
    with _precision(bits + 32):
        target = iv.mpf(2) ** (-bits - 8)
        y = -_as_interval(x) / iv.sqrt(2)
        low = _erfc_point(y.b, target)  # erfc is decreasing: its smallest value on y is at the high end
        high = _erfc_point(y.a, target) if y.a != y.b else low
        return iv.mpf([low.a, high.b]) / 2


def _as_interval(value: Any) -> Any:
    """An interval containing an exact number (an interval is returned as it is)."""
    if isinstance(value, mpmath.ctx_iv.ivmpf):
        return value
    if isinstance(value, float):
        return iv.mpf(value)  # a float is an exact binary rational
    if isinstance(value, Fraction) or isinstance(value, int):
        fraction = Fraction(value)
        return iv.mpf(fraction.numerator) / iv.mpf(fraction.denominator)
    return _sympy_interval(value)


def _sympy_interval(value: Any) -> Any:
    """A sympy number (a claim such as ``sympy.log(3)``) in an interval: its rationals exactly, others
    by sympy's adaptive evalf to ``prec + 40`` bits, widened by ``2**-(prec + 20)`` relative (the same
    policy as the engine's :func:`dpverify.verdict.engine.decide` certification)."""
    import sympy

    number = sympy.sympify(value)
    if number.is_Rational:
        return iv.mpf(int(number.p)) / iv.mpf(int(number.q))
    digits = int((iv.prec + 40) * 0.30103) + 2
    approx = iv.mpf(str(sympy.N(number, digits)))
    radius = abs(approx) * iv.mpf(2) ** (-iv.prec - 20) + iv.mpf(2) ** (-4 * iv.prec)
    return iv.mpf([(approx - radius).a, (approx + radius).b])


# -- the privacy profile ---------------------------------------------------------------------------


def _sensitivity_squared(sensitivity: Any, sensitivity_squared: Any) -> Fraction:
    if (sensitivity is None) == (sensitivity_squared is None):
        raise InvalidArgument(
            "give the l2 sensitivity as exactly one of sensitivity= (a rational) or sensitivity_squared= "
            f"(for an irrational one such as sqrt 2); got sensitivity={sensitivity!r}, "
            f"sensitivity_squared={sensitivity_squared!r}."
        )
    if sensitivity is not None:
        value = as_fraction("sensitivity", sensitivity)
        if value <= 0:
            raise InvalidArgument(f"sensitivity must be positive, got sensitivity={sensitivity!r}.")
        return value * value
    value = as_fraction("sensitivity_squared", sensitivity_squared)
    if value <= 0:
        raise InvalidArgument(f"sensitivity_squared must be positive, got sensitivity_squared={sensitivity_squared!r}.")
    return value


def _positive_sigma(sigma: Any) -> Fraction:
    value = as_fraction("sigma", sigma)
    if value <= 0:
        raise InvalidArgument(f"sigma must be positive, got sigma={sigma!r}; sigma is the noise's standard deviation.")
    return value


@dataclass(frozen=True)
class _Profile:
    """The two-outcome post-processing ``{S*, not S*}`` of one pair at one epsilon (intervals)."""

    p_in: Any  # P(S*) = Phi(a - b)
    q_in: Any  # Q(S*) = Phi(-a - b)
    p_out: Any  # P(not S*) = Phi(b - a)
    q_out: Any  # Q(not S*) = Phi(a + b)
    threshold: Any  # t* = Delta/2 + eps sigma^2/Delta

    def delta(self, epsilon: Any) -> Any:
        """``P(S*) - e^eps Q(S*)`` (Theorem 8) as an interval."""
        return self.p_in - iv.exp(epsilon) * self.q_in


def _profile(distance_squared: Fraction, sigma: Fraction, epsilon: Any, bits: int) -> _Profile:
    """``P`` and ``Q`` of ``S*`` and its complement for ``Delta^2 = distance_squared`` (exact) at the
    exact ``epsilon``, enclosed at ``bits`` bits."""
    with _precision(bits + 16):  # the arguments a little wider than the result needs
        distance = iv.sqrt(_as_interval(distance_squared))
        s = _as_interval(sigma)
        eps = _as_interval(epsilon)
        a = distance / (2 * s)
        b = eps * s / distance
        threshold = distance / 2 + eps * s * s / distance
        arguments = (a - b, -a - b, b - a, a + b)
    p_in, q_in, p_out, q_out = (normal_cdf(x, bits=bits) for x in arguments)
    return _Profile(p_in, q_in, p_out, q_out, threshold)


def delta_for_epsilon(
    epsilon: Any, *, sigma: Any, sensitivity: Any = None, sensitivity_squared: Any = None, bits: int = BITS,
) -> Any:
    """A certified enclosure of the Gaussian mechanism's ``delta(eps)`` (Balle–Wang Thm. 8).

    Args:
        epsilon: eps >= 0, exact (int, Fraction, a float read exactly, or a sympy number).
        sigma: the noise's standard deviation (rational; a float is read exactly).
        sensitivity, sensitivity_squared: the l2 sensitivity ``Delta`` (rational) or ``Delta^2``
            (for an irrational ``Delta``); exactly one.
        bits: working precision.

    Returns:
        An ``mpmath.iv`` interval containing ``delta(eps)``.
    """
    check_epsilon(epsilon)
    squared = _sensitivity_squared(sensitivity, sensitivity_squared)
    exact = epsilon if not isinstance(epsilon, float) else Fraction(epsilon)
    profile = _profile(squared, _positive_sigma(sigma), exact, bits)
    with _precision(bits):
        return profile.delta(_as_interval(exact))


def _delta_bounds(distance_squared: Fraction, sigma: Fraction, epsilon: Any, bits: int = BITS) -> Any:
    profile = _profile(distance_squared, sigma, epsilon, bits)
    with _precision(bits):
        return profile.delta(_as_interval(epsilon))


# -- calibration -----------------------------------------------------------------------------------


def _fraction_of(value: Any) -> Fraction:
    """A point interval (an interval's endpoint ``x.a`` or ``x.b``) as the exact Fraction it is, read
    from its binary digits (``mpmath.mpf(x)`` would round it to the ``mp`` context's 53 bits)."""
    sign, man, exp, _ = value._mpi_[0]
    if not man and exp:
        raise AssertionError(f"internal error: an interval endpoint is not finite: {value}")
    number = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -number if sign else number


def _float_at_least(value: Fraction) -> float:
    """The smallest float ``>= value``."""
    number = float(value)
    return number if Fraction(number) >= value else math.nextafter(number, math.inf)


def _float_at_most(value: Fraction) -> float:
    """The largest float ``<= value``."""
    number = float(value)
    return number if Fraction(number) <= value else math.nextafter(number, -math.inf)


def classical_sigma(epsilon: Any, delta: Any, *, sensitivity: Any = None, sensitivity_squared: Any = None) -> Fraction:
    """Dwork and Roth 2014, Theorem A.1: ``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` for ``0 < eps < 1``,
    rounded up to a float (returned as the exact Fraction of that float).

    Raises:
        InvalidArgument: ``eps`` not in (0, 1) (the theorem's condition; :func:`analytic_sigma` has none),
            ``delta`` not in (0, 1), or a bad sensitivity.
    """
    check_epsilon(epsilon, positive=True)
    check_delta(delta)
    eps, bound = as_fraction("epsilon", epsilon), as_fraction("delta", delta)
    if not eps < 1:
        raise InvalidArgument(
            f"the classical calibration is proved for epsilon < 1 (Dwork-Roth Thm. A.1), got epsilon={epsilon!r}; "
            "use analytic_sigma, which holds for every epsilon."
        )
    if not 0 < bound < 1:
        raise InvalidArgument(f"delta must be in (0, 1) for a Gaussian calibration, got delta={delta!r}.")
    squared = _sensitivity_squared(sensitivity, sensitivity_squared)
    with _precision(128):
        sigma = iv.sqrt(_as_interval(squared) * 2 * iv.log(_as_interval(Fraction(5, 4) / bound))) / _as_interval(eps)
        return Fraction(_float_at_least(_fraction_of(sigma.b)))


def analytic_sigma(epsilon: Any, delta: Any, *, sensitivity: Any = None, sensitivity_squared: Any = None) -> Fraction:
    """Balle and Wang 2018, Algorithm 1 (analytic calibration): the smallest float ``sigma`` whose
    certified ``delta(eps)`` is at most ``delta``, as the exact Fraction of that float.

    ``delta(eps)`` decreases in ``sigma`` (module docstring), so a bisection over floats on the
    formula (mpmath at 40 digits) finds the boundary; the float returned is then certified: its
    enclosure of ``delta(eps)`` lies at or below ``delta`` (so the claim holds: rounded up), and the
    float just below it has its enclosure above ``delta`` (so it is the smallest) — each checked in
    interval arithmetic, stepping a float at a time until both are proved.
    """
    check_epsilon(epsilon, positive=True)
    check_delta(delta)
    eps, bound = as_fraction("epsilon", epsilon), as_fraction("delta", delta)
    if not 0 < bound < 1:
        raise InvalidArgument(f"delta must be in (0, 1) for a Gaussian calibration, got delta={delta!r}.")
    squared = _sensitivity_squared(sensitivity, sensitivity_squared)

    def approximate(sigma: float) -> Any:
        with mpmath.workdps(40):
            distance, s = mpmath.sqrt(mpmath.mpf(squared.numerator) / squared.denominator), mpmath.mpf(sigma)
            e = mpmath.mpf(eps.numerator) / eps.denominator
            a, b = distance / (2 * s), e * s / distance
            return mpmath.ncdf(a - b) - mpmath.exp(e) * mpmath.ncdf(-a - b) - mpmath.mpf(bound.numerator) / bound.denominator

    low, high = 1.0, 1.0
    while approximate(high) > 0:
        high *= 2
    while approximate(low) <= 0:
        low /= 2
    while math.nextafter(low, math.inf) < high:  # approximate(low) > 0 >= approximate(high)
        middle = low + (high - low) / 2
        if middle in (low, high):
            break
        if approximate(middle) > 0:
            low = middle
        else:
            high = middle
    sigma = high
    for _ in range(64):
        if _fraction_of(_delta_bounds(squared, Fraction(sigma), eps).b) > bound:
            sigma = math.nextafter(sigma, math.inf)  # not proved to hold: one float up
            continue
        below = math.nextafter(sigma, 0.0)
        if _fraction_of(_delta_bounds(squared, Fraction(below), eps).b) <= bound:
            sigma = below  # the float below holds too
            continue
        return Fraction(sigma)
    raise AssertionError(f"internal error: the analytic sigma for eps={epsilon}, delta={delta} did not settle")


# -- verification ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HalfSpace:
    """An output set of the Gaussian mechanism on a pair: ``{y : <y - f(D'), u> >= t}`` (or its
    complement), ``u = (f(D) - f(D'))/Delta``, ``t = Delta/2 + eps sigma^2/Delta`` at the claim's eps.

    Attributes:
        toward, away: ``f(D)`` and ``f(D')`` (exact).
        sigma: the noise's standard deviation (exact).
        epsilon: the exact epsilon ``t`` is taken at (the claim as the engine reads it).
        threshold: ``t`` rounded to a float (shown only; the set is defined by the exact ``t``).
        complement: the set ``{<y - f(D'), u> < t}``.
    """

    toward: tuple
    away: tuple
    sigma: Fraction
    epsilon: Any
    threshold: float
    complement: bool = False

    def __repr__(self) -> str:
        def shown(vector: tuple) -> str:
            return "(" + ", ".join(str(v) for v in vector) + ")"

        relation_ = "<" if self.complement else ">="
        return (
            f"{{y : <y - f(D'), u> {relation_} t}} with f(D) = {shown(self.toward)}, f(D') = {shown(self.away)}, "
            f"u = (f(D) - f(D'))/Delta, t = Delta/2 + eps sigma^2/Delta = {self.threshold:.10g}"
        )

    def probabilities(self) -> tuple[Any, Any]:
        """``(P(S), Q(S))`` as exact sympy expressions: ``Phi(+-(a - b))`` and ``Phi(-+(a + b))`` with
        ``a = Delta/(2 sigma)``, ``b = eps sigma/Delta``, ``Phi(x) = erfc(-x/sqrt 2)/2``."""
        import sympy

        def phi(x: Any) -> Any:
            return sympy.erfc(-x / sympy.sqrt(2)) / 2

        squared = _distance_squared(self.toward, self.away)
        distance = sympy.sqrt(sympy.Rational(squared.numerator, squared.denominator))
        sigma = sympy.Rational(self.sigma.numerator, self.sigma.denominator)
        eps = self.epsilon if not isinstance(self.epsilon, Fraction) else sympy.Rational(
            self.epsilon.numerator, self.epsilon.denominator)
        a, b = distance / (2 * sigma), eps * sigma / distance
        if self.complement:
            return phi(b - a), phi(a + b)
        return phi(a - b), phi(-a - b)


@dataclass(frozen=True, eq=False)
class GaussianMechanism:
    """Balle and Wang 2018 (and Dwork–Roth 2014 App. A): ``M(D) = f(D) + N(0, sigma^2 I_k)``.

    Args:
        sigma: the noise's standard deviation (rational; a float is read exactly).
        query: ``f``: dataset -> sequence of ``k`` rational numbers; None (default): the dataset is
            itself the vector of query answers (the benchmark suites' convention).
        name: how reports name it.
    """

    sigma: Any
    query: Callable[[Any], Sequence[Any]] | None = None
    name: str = field(default="gaussian", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sigma", _positive_sigma(self.sigma))

    def __repr__(self) -> str:
        return f"GaussianMechanism(sigma={self.sigma!r}{'' if self.query is None else ', query=' + repr(self.query)})"

    @property
    def exact_sigma(self) -> Fraction:
        return self._sigma  # type: ignore[attr-defined]

    def answer(self, dataset: Any) -> tuple[Fraction, ...]:
        """``f(D)`` as exact Fractions."""
        values = dataset if self.query is None else self.query(dataset)
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidArgument(f"the query must return a sequence of numbers, got {values!r} on {dataset!r}.")
        return tuple(as_fraction(f"f(D)[{i}]", v) for i, v in enumerate(values))

    def delta_for_epsilon(self, epsilon: Any, *, sensitivity: Any = None, sensitivity_squared: Any = None) -> Any:
        """A certified enclosure of ``delta(eps)`` at l2 distance ``Delta`` (:func:`delta_for_epsilon`)."""
        return delta_for_epsilon(epsilon, sigma=self.exact_sigma, sensitivity=sensitivity,
                                 sensitivity_squared=sensitivity_squared)

    def verify(self, **options: Any) -> PairsResult:
        """:func:`verify_gaussian` of this mechanism."""
        return verify_gaussian(self, **options)


def _distance_squared(first: tuple, second: tuple) -> Fraction:
    if len(first) != len(second):
        raise InvalidArgument(f"the query returned vectors of different lengths: {first!r} and {second!r}.")
    return sum(((a - b) ** 2 for a, b in zip(first, second)), Fraction(0))


def _input_pairs(pairs: Any, records: Any, n: Any, neighbors: Any, max_pairs: int) -> InputPairs:
    if pairs is not None:
        if records is not None or n is not None:
            raise InvalidArgument("give either pairs= or records= and n= (every neighbouring pair), not both.")
        rel = None if neighbors is None else relation(neighbors)
        if isinstance(pairs, InputPairs):
            if rel is not None:
                for number, (a, b) in enumerate(pairs):
                    if not rel.is_neighbor(a, b, exchangeable=False):
                        raise InvalidArgument(f"pair {number} of {pairs.name} = ({a!r}, {b!r}) is not a neighbour pair "
                                              f"under {rel.name}.")
                return InputPairs(pairs.name, pairs.datasets, pairs.left, pairs.right, rel)
            return pairs
        return InputPairs.from_pairs(pairs, relation=rel)
    if records is None or n is None:
        raise InvalidArgument("give the inputs as pairs=[(D, D'), ...] (or an InputPairs), or as records= and n= "
                              "with neighbors= (default 'substitute') to check every neighbouring pair.")
    rel = relation("substitute" if neighbors is None else neighbors)
    check_enumeration_size(rel, len(list(records)), n, exchangeable=False, max_pairs=max_pairs)
    enumerated = rel.pairs(list(records), n, exchangeable=False)
    datasets = list(enumerated.datasets)
    return InputPairs(f"{rel.name}, {len(list(records))} records, n={n}", datasets, enumerated.left,
                      enumerated.right, rel)


def verify_gaussian(
    mechanism: GaussianMechanism,
    *,
    epsilon: Any,
    delta: Any = 0,
    pairs: Any = None,
    records: Any = None,
    n: int | None = None,
    neighbors: Any = None,
    max_pairs: int = 1_000_000,
) -> PairsResult:
    """Decide ``(epsilon, delta)``-DP of a :class:`GaussianMechanism` (module docstring).

    Args:
        mechanism: the Gaussian mechanism.
        epsilon, delta: the claim (exact numbers, or floats read as the engine reads them).
        pairs: the input pairs ``[(D, D'), ...]`` or an :class:`~dpverify.checking.input_pairs.InputPairs`
            (e.g. :func:`~dpverify.checking.input_pairs.all_query_vectors`); or else
        records, n, neighbors: every neighbouring pair of datasets of ``n`` records (``neighbors``:
            a relation name or :class:`~dpverify.finite.neighbors.NeighborRelation`, default
            ``"substitute"``), as :func:`dpverify.verify` enumerates them.
        max_pairs: refuse an enumeration of more pairs (each pair's distance is computed exactly).

    Returns:
        A :class:`~dpverify.verdict.results.PairsResult`: the engine's verdict on the post-processings
        ``{S*, not S*}`` of one representative pair per distinct ``Delta`` (which decides every pair);
        ``epsilon`` is ``math.inf`` (the pure eps*) when some pair has ``Delta > 0``, ``delta`` the
        engine's ``delta(eps)`` of the worst pair; ``details`` holds the certified enclosure of
        ``delta(eps)`` (``delta_interval``), its width, the distinct distances and the worst one.
    """
    if not isinstance(mechanism, GaussianMechanism):
        raise InvalidArgument(f"verify_gaussian needs a GaussianMechanism, got {mechanism!r}.")
    check_epsilon(epsilon)
    check_delta(delta)
    started = time.perf_counter()
    inputs = _input_pairs(pairs, records, n, neighbors, max_pairs)
    answers = [mechanism.answer(d) for d in inputs.datasets]
    groups: dict[Fraction, list[int]] = {}  # Delta^2 -> [representative pair index, pair count]
    for index, (i, j) in enumerate(zip(inputs.left.tolist(), inputs.right.tolist())):
        squared = _distance_squared(answers[i], answers[j])
        group = groups.setdefault(squared, [index, 0])
        group[1] += 1
    decided = sorted((s for s in groups if s > 0), reverse=True)  # the largest distance first
    given = {frozenset(pair) for pair in inputs}

    def is_given(a: Any, b: Any) -> bool:
        return frozenset((a, b)) in given

    eps = claim_number("epsilon", epsilon)  # the exact epsilon the engine checks (S* is taken there)
    decision, rows = None, None
    intervals: list[tuple[Fraction, Fraction]] = []
    for bits in (BITS, _RETRY_BITS):
        rows, intervals = _rows(mechanism, inputs, answers, decided, groups, eps, bits, is_given)
        decision = decide(rows, epsilon, delta)
        if decision.verdict is not Verdict.UNDECIDED:
            break
    assert decision is not None and rows is not None
    worst_pair = None
    details: dict[str, Any] = {
        "sigma": float(mechanism.exact_sigma),
        "distances": [math.sqrt(s) for s in sorted(groups, reverse=True)],
        "pairs_per_distance": [groups[s][1] for s in sorted(groups, reverse=True)],
    }
    if decided:
        first = groups[decided[0]][0]
        worst_pair = (inputs.datasets[int(inputs.left[first])], inputs.datasets[int(inputs.right[first])])
        low, high = intervals[0]
        details.update(
            sensitivity=math.sqrt(decided[0]),
            delta_interval=[_float_at_most(low), _float_at_least(high)],  # rounded outwards
            delta_interval_width=float(high - low),
        )
    witness = decision.witness
    if witness is not None and all(isinstance(o, HalfSpace) for o in witness.output_set):
        # The engine certified the witness on intervals; report P(S) and Q(S) as the exact values
        # those intervals enclose (sympy erfc expressions), as verify_pairs does for noise programs.
        exact = [o.probabilities() for o in witness.output_set]  # (under M(D), under M(D')) of each row pair
        p_mass, q_mass = sum(p for p, _ in exact), sum(q for _, q in exact)
        assert decision.witness_rows is not None
        if decision.witness_rows[0] % 2:  # the reverse direction: the witness's dataset is D' (odd rows)
            p_mass, q_mass = q_mass, p_mass
        witness = replace(witness, p=p_mass, q=q_mass)
    infinite = bool(decided)
    return PairsResult.on_inputs(
        inputs, started,
        holds=decision.holds,
        epsilon=math.inf if infinite else 0.0,
        delta=decision.delta_star,
        witness=witness,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        pairs=len(inputs),
        certified_pairs=decision.certified_pairs,
        undecided=decision.undecided_pairs,
        verdict=decision.verdict,
        worst_pair=worst_pair,
        epsilon_bounds=(math.inf, math.inf) if infinite else (0.0, 0.0),
        details=details,
    )


def _rows(
    mechanism: GaussianMechanism, inputs: InputPairs, answers: list, decided: list[Fraction],
    groups: dict[Fraction, list[int]], eps: Any, bits: int, is_given: Callable[[Any, Any], bool],
) -> tuple[RowPairs, list[tuple[Fraction, Fraction]]]:
    """The engine's rows: for each distinct ``Delta > 0`` (largest first) its representative pair's
    ``M(D)`` and ``M(D')`` on ``{S*, not S*}``; certified intervals as the exact rows. With no such
    pair (every pair has ``f(D) = f(D')``: identical outputs) one row pair of the whole output space."""
    labels: list[Any] = []
    exact: list[dict[Hashable, Any]] = []
    outcomes: list[Hashable] = []
    intervals: list[tuple[Fraction, Fraction]] = []
    sigma = mechanism.exact_sigma
    for squared in decided:
        index = groups[squared][0]
        i, j = int(inputs.left[index]), int(inputs.right[index])
        profile = _profile(squared, sigma, eps, bits)
        with _precision(bits):
            enclosure = profile.delta(_as_interval(eps))
        intervals.append((_fraction_of(enclosure.a), _fraction_of(enclosure.b)))
        threshold = float(mpmath.mpf(profile.threshold.mid))
        inside = HalfSpace(answers[i], answers[j], sigma, eps, threshold)
        outside = HalfSpace(answers[i], answers[j], sigma, eps, threshold, complement=True)
        outcomes += [inside, outside]
        exact += [{inside: profile.p_in, outside: profile.p_out}, {inside: profile.q_in, outside: profile.q_out}]
        labels += [inputs.datasets[i], inputs.datasets[j]]
    if not decided:
        index = 0
        whole = "every output (f(D) = f(D') on every pair: identical distributions)"
        outcomes = [whole]
        exact = [{whole: 1}, {whole: 1}]
        labels = [inputs.datasets[int(inputs.left[index])], inputs.datasets[int(inputs.right[index])]]
    column = {o: k for k, o in enumerate(outcomes)}
    matrix = np.zeros((len(exact), len(outcomes)))
    for row, values in enumerate(exact):
        for o, value in values.items():
            matrix[row, column[o]] = float(mpmath.mpf(value.mid)) if hasattr(value, "mid") else float(value)
    count = len(exact) // 2
    return RowPairs(
        matrix, np.arange(0, 2 * count, 2), np.arange(1, 2 * count, 2), outcomes=outcomes,
        exact_row=exact.__getitem__, row_error=0.0, label=labels.__getitem__, is_neighbor=is_given,
        expected_pairs=count,
        # The floats only guide the engine's sweep; tail probabilities may underflow in them. A
        # relative error this large makes every row pair a certification candidate, so each is
        # decided on its intervals (there is one pair per distinct Delta: a handful).
        matrix_error=1e300,
    ), intervals
