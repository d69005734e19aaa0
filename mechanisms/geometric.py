"""Two-sided geometric noise, exact: sums over the integers in closed form (report noisy max, SVT).

``Geometric(s)`` (:mod:`dpverify.mechanisms.noise`; the discrete Laplace) has
``P(Z = z) = (1 - b)/(1 + b) b^|z|`` on the integers, ``b = e^(-1/s)``. With several noises of
rational scales ``s_1, s_2, ...`` every ``b_i`` is a power of one base ``a = e^(-g)``: ``g`` is the
largest rational with every ``1/s_i`` an integer multiple ``m_i g`` (:func:`common_rate`), and
``b_i = a^(m_i)``. On integer inputs every probability the mechanisms need is a sum over the
integer value ``y`` of one noisy quantity (the winner's noisy answer, the noisy threshold) of
products of the pmf and CDFs of the others at shifted integer points:

    ``P(q + Z = y) = (1 - b)/(1 + b) b^|y - q|``,
    ``P(q + Z <= y) = b^(q - y) / (1 + b)`` for ``y < q``,  ``1 - b^(y - q + 1) / (1 + b)`` for ``y >= q``,
    ``P(q + Z >= y) = 1 - P(q + 1 + Z <= y)``.

Scaled by their constant factors (``(1 + b)/(1 - b)`` for a pmf, ``1 + b`` for a CDF or tail), each is,
between consecutive breakpoints, a sum ``sum n a^(c + e y)`` with *integer* ``n, c, e``
(:class:`_Lattice`), and so is every product. Summed over an integer range, a term is a polynomial in
``a`` (a finite range) or a geometric series in closed form: ``sum_{y >= L} a^(c + e y) =
a^(c + e L) / (1 - a^e)`` (``e > 0``) and ``sum_{y <= H} a^(c + e y) = a^(c + e H) / (1 - a^(-e))``
(``e < 0``). The tails' ``e`` are known in advance (the pmf's ``+-m_0`` plus ``j`` times the other
noises' ``m``), so over the common denominator ``prod_d (1 - a^d)`` the sum is an integer Laurent
polynomial ``N(a)``, and every probability is ``N(a) / D(a)`` with ``D`` a product of factors
``(1 +- a^d)`` (:class:`RationalExp`). ``N`` is exact, so a probability is zero iff ``N`` is the zero
polynomial (``a`` is transcendental), and the probabilities of a dataset sum to 1 as rational functions
of ``a`` (checked, :func:`total_is_one`). Values are enclosed in mpmath intervals at growing precision
(the canonical ``N`` cancels heavily when ``a`` is near 1), rounded to certified floats, and given to
sympy exactly (``a^n = exp(-n g)``).

Ties have positive probability. Report noisy max (:func:`argmax_values`) reports the **smallest index**
among the largest noisy answers (``numpy.argmax``, as StatDP's implementation): ``i`` wins on ``y``
when ``Y_j <= y - 1`` for ``j < i`` and ``Y_j <= y`` for ``j > i``. The sparse vector technique's
comparison (``>=`` or ``>``) is :mod:`dpverify.mechanisms.sparse_vector`'s; here it is folded into
the integer threshold of :func:`threshold_segment`.

:class:`~dpverify.mechanisms.noisy_max.ReportNoisyMax` (``noise="geometric"``) and
:class:`~dpverify.mechanisms.sparse_vector.SparseVector` (``noise="geometric"``) use this module.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from math import gcd
from typing import Any

import mpmath
import sympy
from mpmath.libmp import from_man_exp, mpf_shift, to_int
from sympy import QQ
from sympy.polys.fields import field as _field

from dpverify.densities.piecewise import as_fraction
from dpverify.errors import InvalidArgument

__all__ = [
    "RationalExp",
    "argmax_values",
    "argmax_fractions",
    "threshold_segment",
    "common_rate",
    "total_is_one",
    "value_sum",
    "check_integers",
]

FIELD, A = _field("a", QQ)

#: A Laurent polynomial in ``a``: ``{exponent: integer coefficient}`` (no zero coefficients).
Poly = dict
#: A factored denominator ``{(d, sign): power}``: ``prod (1 + sign a^d)^power`` with ``d > 0``, ``sign = +-1``.
Factors = dict

_MAX_BITS = 1 << 15


# -- Laurent polynomials with integer coefficients ------------------------------------------------


def _mul(p: Poly, q: Poly) -> Poly:
    out: dict[int, int] = {}
    for x1, n1 in p.items():
        for x2, n2 in q.items():
            out[x1 + x2] = out.get(x1 + x2, 0) + n1 * n2
    return {x: n for x, n in out.items() if n}


def _add_into(total: dict[int, int], p: Poly, times: int = 1) -> None:
    for x, n in p.items():
        total[x] = total.get(x, 0) + times * n


def _factor(d: int, sign: int) -> Poly:
    """``1 + sign a^d``."""
    return {0: 1, d: sign}


@lru_cache(maxsize=4096)
def _factor_power(d: int, sign: int, power: int) -> tuple[tuple[int, int], ...]:
    result: Poly = {0: 1}
    for _ in range(power):
        result = _mul(result, _factor(d, sign))
    return tuple(sorted(result.items()))


def _expand(factors: Factors) -> Poly:
    result: Poly = {0: 1}
    for (d, sign), power in sorted(factors.items()):
        result = _mul(result, dict(_factor_power(d, sign, power)))
    return result


# -- exact values -----------------------------------------------------------------------------------


class RationalExp:
    """The exact number ``N(a) / prod (1 + sign a^d)^power`` at ``a = exp(-rate)``.

    ``numerator`` is an integer Laurent polynomial ``{exponent: coefficient}``, ``denominator`` the
    factors ``{(d, sign): power}`` (``d > 0``). Immutable; enclosures and the float are cached.
    """

    __slots__ = ("numerator", "denominator", "rate", "_enclosures", "_float")

    def __init__(self, numerator: Mapping[int, int], denominator: Mapping[tuple[int, int], int], rate: Fraction) -> None:
        self.numerator: Poly = {int(x): int(n) for x, n in numerator.items() if n}
        self.denominator: Factors = {key: p for key, p in denominator.items() if p}
        if any(d <= 0 or s not in (1, -1) or p < 0 for (d, s), p in self.denominator.items()):
            raise AssertionError(f"internal error: bad denominator factors {denominator!r}")
        self.rate = Fraction(rate)
        if self.rate <= 0:
            raise AssertionError(f"internal error: rate must be positive, got {rate!r}")
        self._enclosures: dict[int, Any] = {}
        self._float: float | None = None

    def __repr__(self) -> str:
        return f"RationalExp({self.to_sympy()})"

    def is_zero(self) -> bool:
        return not self.numerator

    def __mul__(self, other: RationalExp) -> RationalExp:
        if self.rate != other.rate:
            raise AssertionError("internal error: values at different bases a")
        denominator = dict(self.denominator)
        for key, p in other.denominator.items():
            denominator[key] = denominator.get(key, 0) + p
        return RationalExp(_mul(self.numerator, other.numerator), denominator, self.rate)

    # -- evaluation ---------------------------------------------------------------------------

    def interval(self, bits: int = 256):
        """A rigorous mpmath interval of the value, from fixed-point integer arithmetic with ``bits``
        fractional bits (directed rounding; :func:`_fixed_point_bounds`)."""
        return _as_interval(self._bounds(bits), bits)

    def _bounds(self, bits: int) -> tuple[int, int]:
        if bits not in self._enclosures:
            self._enclosures[bits] = _fixed_point_bounds(self, bits)
        return self._enclosures[bits]

    def enclosure(self, relative_bits: int = 200):
        """An interval of relative width at most ``2**-relative_bits``."""
        bounds, bits = self._narrow_bounds(relative_bits)
        return _as_interval(bounds, bits)

    def _narrow_bounds(self, relative_bits: int) -> tuple[tuple[int, int], int]:
        """Fixed-point bounds of relative width at most ``2**-relative_bits`` and their ``bits`` (the
        precision doubles until they are; every enclosure computed is kept)."""
        for bits, bounds in self._enclosures.items():
            if _narrow(bounds, relative_bits):
                return bounds, bits
        bits = relative_bits + 64
        while not _narrow(self._bounds(bits), relative_bits):
            if bits > _MAX_BITS:
                raise AssertionError(f"internal error: could not enclose {self!r} at {_MAX_BITS} bits")
            bits *= 2
        return self._bounds(bits), bits

    def to_float(self) -> float:
        """The value rounded to float64, certified within ``2**-52`` relative: the midpoint of bounds of
        relative width ``2**-60``, correctly rounded (Python's integer division)."""
        if self._float is None:
            (low, high), bits = self._narrow_bounds(60)
            self._float = (low + high) / (1 << (bits + 1))
        return self._float

    def __float__(self) -> float:
        return self.to_float()

    def to_sympy(self) -> sympy.Expr:
        """The exact value as a sympy expression in ``exp(-rate)``."""
        g = sympy.Rational(self.rate.numerator, self.rate.denominator)
        numerator = sympy.Add(*(sympy.Integer(n) * sympy.exp(-x * g) for x, n in sorted(self.numerator.items())))
        denominator = sympy.Mul(*((1 + s * sympy.exp(-d * g)) ** p for (d, s), p in sorted(self.denominator.items())))
        return numerator / denominator

    def to_field(self) -> Any:
        """The value as a rational function of ``a`` (an element of sympy's ``QQ(a)``)."""
        numerator = FIELD(0)
        for x, n in self.numerator.items():
            numerator += n * A**x
        denominator = FIELD(1)
        for (d, s), p in self.denominator.items():
            denominator *= (1 + s * A**d) ** p
        return numerator / denominator


def _narrow(bounds: tuple[int, int], relative_bits: int) -> bool:
    """Whether fixed-point bounds are the point zero or have relative width at most ``2**-relative_bits``."""
    low, high = bounds
    if low == high == 0:
        return True
    return (low > 0 or high < 0) and (high - low) << relative_bits <= min(abs(low), abs(high))


def _as_interval(bounds: tuple[int, int], bits: int):
    """The mpmath interval ``[low, high] / 2^bits`` (exact ends)."""
    return mpmath.iv.make_mpf((from_man_exp(bounds[0], -bits), from_man_exp(bounds[1], -bits)))


@lru_cache(maxsize=512)
def _base_bounds(rate: Fraction, bits: int, inverse: bool = False) -> tuple[int, int]:
    """Integers ``lo <= e^(-rate) 2^bits <= hi`` (``inverse``: ``e^rate``), from a wider mpmath interval
    rounded outward."""
    iv = mpmath.iv
    old = iv.prec
    try:
        iv.prec = bits + 32 + (rate.numerator // rate.denominator).bit_length()
        value = iv.exp((1 if inverse else -1) * iv.mpf(rate.numerator) / rate.denominator)
        ends = value._mpi_  # the exact ends (raw mpf tuples), shifted and rounded outward to integers
        low, high = to_int(mpf_shift(ends[0], bits), "f"), to_int(mpf_shift(ends[1], bits), "c")
    finally:
        iv.prec = old
    if not (1 << bits < low <= high if inverse else 0 <= low <= high < 1 << bits):
        raise AssertionError(f"internal error: bad enclosure of exp(-{rate}) at {bits} bits")
    return low, high


def _horner(coefficients: list[int], x: int, bits: int, up: bool) -> int:
    """``sum c_j (x/2^bits)^j 2^bits`` for non-negative ``c_j``, rounded down (or up): with every
    quantity non-negative, rounding each step down (up) gives a lower (upper) bound."""
    total = 0
    for c in reversed(coefficients):
        product = total * x
        total = (-((-product) >> bits) if up else product >> bits) + (c << bits)
    return total


def _times(first: tuple[int, int], second: tuple[int, int], bits: int) -> tuple[int, int]:
    """The product of two fixed-point intervals (any signs), rounded outward."""
    products = [a * b for a in first for b in second]
    return min(products) >> bits, -((-max(products)) >> bits)


def _fixed_point_bounds(value: RationalExp, bits: int) -> tuple[int, int]:
    """Integers ``lo <= value 2^bits <= hi``: the numerator by Horner on its positive and negative parts
    (each increasing in ``a > 0``) at the ends of ``a``'s enclosure, the denominator factor by factor."""
    a_low, a_high = _base_bounds(value.rate, bits)
    one = 1 << bits
    if not value.numerator:
        return 0, 0
    low_exponent, high_exponent = min(value.numerator), max(value.numerator)
    positive = [max(value.numerator.get(x, 0), 0) for x in range(low_exponent, high_exponent + 1)]
    negative = [max(-value.numerator.get(x, 0), 0) for x in range(low_exponent, high_exponent + 1)]
    numerator = (
        _horner(positive, a_low, bits, False) - _horner(negative, a_high, bits, True),
        _horner(positive, a_high, bits, True) - _horner(negative, a_low, bits, False),
    )
    denominator = (one, one)

    def power(d: int, base: tuple[int, int]) -> tuple[int, int]:
        return _horner([0] * d + [1], base[0], bits, False), _horner([0] * d + [1], base[1], bits, True)

    if low_exponent > 0:
        numerator = _times(numerator, power(low_exponent, (a_low, a_high)), bits)
    elif low_exponent < 0:  # a^low = (1/a)^|low|: never a division by a bound that may round to 0
        numerator = _times(numerator, power(-low_exponent, _base_bounds(value.rate, bits, inverse=True)), bits)
    for (d, sign), count in value.denominator.items():
        low, high = power(d, (a_low, a_high))
        factor = (one + low, one + high) if sign > 0 else (one - high, one - low)
        if factor[0] <= 0:
            raise AssertionError(f"internal error: 1 - a^{d} not separated from 0 at {bits} bits")
        for _ in range(count):
            denominator = _times(denominator, factor, bits)
    n_low, n_high = numerator
    d_low, d_high = denominator
    if d_low <= 0:
        raise AssertionError(f"internal error: a denominator not separated from 0 at {bits} bits")
    low = (n_low << bits) // (d_high if n_low >= 0 else d_low)
    high = -((-(n_high << bits)) // (d_low if n_high >= 0 else d_high))
    return low, high


def value_sum(values: Iterable[RationalExp]) -> RationalExp:
    """The exact sum of values at one base (over the common denominator: each factor at its largest
    power among the values). Repeated objects are counted once per occurrence and expanded once."""
    counts: dict[int, int] = {}
    unique: dict[int, RationalExp] = {}
    for value in values:
        counts[id(value)] = counts.get(id(value), 0) + 1
        unique[id(value)] = value
    if not unique:
        raise AssertionError("internal error: an empty sum has no base")
    if len({value.rate for value in unique.values()}) != 1:
        raise AssertionError("internal error: values at different bases a")
    common: Factors = {}
    for value in unique.values():
        for key, p in value.denominator.items():
            common[key] = max(common.get(key, 0), p)
    total: dict[int, int] = {}
    for key, value in unique.items():
        missing = {f: p - value.denominator.get(f, 0) for f, p in common.items()}
        _add_into(total, _mul(value.numerator, _expand(missing)), counts[key])
    return RationalExp(total, common, next(iter(unique.values())).rate)


def total_is_one(values: Iterable[RationalExp]) -> bool:
    """Whether the values sum to exactly 1 as rational functions of ``a`` (over the common denominator,
    the numerators add up to its expansion)."""
    total = value_sum(values)
    return total.numerator == _expand(total.denominator)


def common_rate(*scales: Fraction) -> tuple[Fraction, tuple[int, ...]]:
    """The base ``a = e^(-g)`` of noises of scales ``s_i``: the largest ``g`` with every ``1/s_i = m_i g``
    for an integer ``m_i``; returns ``(g, (m_1, ...))``."""
    rates = [1 / Fraction(s) for s in scales]
    denominator = 1
    for r in rates:
        denominator = denominator * r.denominator // gcd(denominator, r.denominator)
    numerator = 0
    for r in rates:
        numerator = gcd(numerator, r.numerator * (denominator // r.denominator))
    g = Fraction(numerator, denominator)
    multiples = tuple(int(r / g) for r in rates)
    if any(m * g != r for m, r in zip(multiples, rates)):
        raise AssertionError(f"internal error: {g} does not divide the rates {rates}")
    return g, multiples


# -- functions of the integer y: breaks b_1 < ... < b_n, piece m on [b_m, b_{m+1} - 1] -------------


class _Lattice:
    """``y -> sum n a^(c + e y)`` piece by piece on the integers; ``pieces[m]`` is ``{(e, c): n}``
    (integers), piece ``m`` covering ``[breaks[m-1], breaks[m] - 1]`` (unbounded at both ends)."""

    __slots__ = ("breaks", "pieces")

    def __init__(self, breaks: list[int], pieces: list[dict]) -> None:
        self.breaks, self.pieces = breaks, pieces

    def piece_at(self, low: int | None) -> dict:
        """The piece that contains ``low`` (None: the piece from ``-inf``)."""
        return self.pieces[0 if low is None else bisect.bisect_right(self.breaks, low)]

    def __mul__(self, other: _Lattice) -> _Lattice:
        breaks = sorted(set(self.breaks) | set(other.breaks))
        pieces = []
        for low in [None, *breaks]:
            out: dict[tuple[int, int], int] = {}
            for (e1, c1), n1 in self.piece_at(low).items():
                for (e2, c2), n2 in other.piece_at(low).items():
                    key = (e1 + e2, c1 + c2)
                    out[key] = out.get(key, 0) + n1 * n2
            pieces.append({key: n for key, n in out.items() if n})
        return _Lattice(breaks, pieces)

    def value(self, y: int) -> Poly:
        """The value at the integer ``y`` as a Laurent polynomial in ``a``."""
        out: dict[int, int] = {}
        for (e, c), n in self.piece_at(y).items():
            out[c + e * y] = out.get(c + e * y, 0) + n
        return {x: n for x, n in out.items() if n}

    def total(self) -> tuple[Poly, dict[int, Poly]]:
        """``sum_{y in Z}`` as ``(P_0, {d: P_d})``: ``P_0(a) + sum_d P_d(a) / (1 - a^d)`` (module docstring)."""
        ends: list[int | None] = [None, *self.breaks, None]
        finite: dict[int, int] = {}
        tails: dict[int, dict[int, int]] = {}
        for m, piece in enumerate(self.pieces):
            low, high = ends[m], ends[m + 1]  # the piece is [low, high - 1]
            for (e, c), n in piece.items():
                if low is None and high is None:
                    raise AssertionError("internal error: a sum over all of Z without breaks")
                if high is not None and low is None:
                    if e >= 0:
                        raise AssertionError("internal error: divergent sum at -inf")
                    _add_into(tails.setdefault(-e, {}), {c + e * (high - 1): n})
                elif low is not None and high is None:
                    if e <= 0:
                        raise AssertionError("internal error: divergent sum at +inf")
                    _add_into(tails.setdefault(e, {}), {c + e * low: n})
                elif low is not None and high is not None:
                    for y in range(low, high):
                        finite[c + e * y] = finite.get(c + e * y, 0) + n
        clean = {d: {x: n for x, n in p.items() if n} for d, p in tails.items()}
        return {x: n for x, n in finite.items() if n}, {d: p for d, p in clean.items() if p}


def _pmf(q: int, m: int = 1) -> _Lattice:
    """``P(q + Z = y) (1 + b)/(1 - b) = b^|y - q|``, ``b = a^m``."""
    return _Lattice([q], [{(-m, m * q): 1}, {(m, -m * q): 1}])


def _cdf(q: int, m: int = 1) -> _Lattice:
    """``P(q + Z <= y) (1 + b)``: ``b^(q - y)`` below ``q``, ``1 + b - b^(y - q + 1)`` from ``q`` on."""
    return _Lattice([q], [{(-m, m * q): 1}, {(0, 0): 1, (0, m): 1, (m, m * (1 - q)): -1}])


def _tail(q: int, m: int = 1) -> _Lattice:
    """``P(q + Z >= y) (1 + b) = 1 + b - P(q + 1 + Z <= y) (1 + b)``: ``1 + b - b^(q + 1 - y)`` up to ``q``,
    ``b^(y - q)`` above."""
    return _Lattice([q + 1], [{(0, 0): 1, (0, m): 1, (-m, m * (q + 1)): -1}, {(m, -m * q): 1}])


def _at_most(q: int) -> _Lattice:
    """``[y <= q]`` (no noise: ``q >= y``)."""
    return _Lattice([q + 1], [{(0, 0): 1}, {}])


def _above(q: int) -> _Lattice:
    """``[y > q]``."""
    return _Lattice([q + 1], [{}, {(0, 0): 1}])


@lru_cache(maxsize=256)
def _products(tails: tuple[int, ...]) -> tuple[tuple, tuple]:
    """``prod_d (1 - a^d)`` over ``tails`` and, for each ``d``, the product without it."""
    prefix: list[Poly] = [{0: 1}]
    for d in tails:
        prefix.append(_mul(prefix[-1], _factor(d, -1)))
    suffix: list[Poly] = [{0: 1}]
    for d in reversed(tails):
        suffix.append(_mul(suffix[-1], _factor(d, -1)))
    suffix.reverse()
    without = tuple(tuple(_mul(prefix[i], suffix[i + 1]).items()) for i in range(len(tails)))
    return tuple(prefix[-1].items()), without


def _closed_sum(function: _Lattice, tails: tuple[int, ...], own: int) -> tuple[Poly, Factors]:
    """``(1 - a^own) sum_{y in Z} function(y)`` as ``(N, factors)``: ``N / prod_{d in tails, d != own} (1 - a^d)``.

    ``tails`` lists every ``d`` the sum's geometric tails may have (``own`` among them, the pmf's
    ``1 - b`` cancels its factor); a tail outside the list is an internal error.
    """
    finite, series = function.total()
    if not set(series) <= set(tails) or own not in tails:
        raise AssertionError(f"internal error: tails {sorted(series)} outside {tails} (own {own})")
    full, without = _products(tails)
    numerator: dict[int, int] = {}
    if finite:
        _add_into(numerator, _mul(finite, dict(full)))
    for i, d in enumerate(tails):
        if d in series:
            _add_into(numerator, _mul(series[d], dict(without[i])))
    # (1 - a^own) N_full / prod_tails = N_full / prod_{tails without own}
    factors: Factors = {}
    for d in tails:
        if d != own:
            factors[(d, -1)] = factors.get((d, -1), 0) + 1
    return {x: n for x, n in numerator.items() if n}, factors


# -- report noisy max ---------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 14)
def _argmax_one(own: int, below: tuple[int, ...], at_most: tuple[int, ...]) -> tuple[tuple, tuple]:
    """``P(q_i + Z_i wins)`` scaled: ``q_i = own``; ``Y_j <= y - 1`` for ``q_j`` in ``below`` (earlier
    indices), ``Y_j <= y`` for ``at_most`` (later ones)."""
    function = _pmf(own)
    for v in below:
        function = function * _cdf(v + 1)
    for v in at_most:
        function = function * _cdf(v)
    k = 1 + len(below) + len(at_most)
    numerator, factors = _closed_sum(function, tuple(range(1, k + 1)), 1)
    factors[(1, 1)] = factors.get((1, 1), 0) + k  # the pmf's 1 + a and the k - 1 CDFs' 1 + a
    return tuple(sorted(numerator.items())), tuple(sorted(factors.items()))


def argmax_values(values: Sequence[int], rate: Fraction) -> dict[int, RationalExp]:
    """``P(argmax_i (q_i + Z_i) = i)`` (smallest index among ties), ``Z_i ~ Geometric(1/rate)``
    independent, on integer answers ``q``: exact values at ``a = e^(-rate)``."""
    low = min(values)
    shifted = [int(v) - low for v in values]  # a common shift changes no probability
    out = {}
    for i, own in enumerate(shifted):
        numerator, factors = _argmax_one(own, tuple(sorted(shifted[:i])), tuple(sorted(shifted[i + 1 :])))
        out[i] = RationalExp(dict(numerator), dict(factors), rate)
    return out


def argmax_fractions(values: Sequence[int]) -> dict[int, Any]:
    """:func:`argmax_values` as rational functions of ``a`` (elements of ``QQ(a)``, for exact algebra)."""
    return {i: v.to_field() for i, v in argmax_values(values, Fraction(1)).items()}


# -- the sparse vector technique ------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def threshold_segment(key: tuple[tuple[int, bool, int], ...], m_threshold: int, m_query: int | None,
                      queries: int) -> tuple[tuple, tuple]:
    """One threshold's answers: ``sum_r P(rho = r) prod P(answer | r)`` over the integers, scaled to the
    canonical denominator of ``queries`` noisy comparisons.

    Args:
        key: ``((p, is_top, count), ...)``: ``count`` answers whose comparison is ``p + nu >= r``
            (``is_top``) or its negation ``p + nu <= r - 1``, with ``p`` the answer minus the integer
            threshold (:mod:`dpverify.mechanisms.sparse_vector` folds ``T`` and ``>=`` / ``>`` into it).
        m_threshold, m_query: the noises' bases ``a^m`` (``m_query`` None: no query noise).
        queries: the canonical number of comparisons (at least the answers in ``key``): every
            segment of one dataset then has the same denominator.

    Returns:
        ``(numerator, factors)`` of a :class:`RationalExp` (without its rate).
    """
    function = _pmf(0, m_threshold)
    answers = 0
    for p, is_top, count in key:
        if m_query is None:
            factor = _at_most(p) if is_top else _above(p)
        else:
            factor = _tail(p, m_query) if is_top else _cdf(p + 1, m_query)
        for _ in range(count):
            function = function * factor
        answers += count
    if answers > queries:
        raise AssertionError(f"internal error: {answers} answers in a segment of {queries} queries")
    if m_query is None:
        tails: tuple[int, ...] = (m_threshold,)
    else:
        tails = tuple(m_threshold + j * m_query for j in range(queries + 1))
    numerator, factors = _closed_sum(function, tails, m_threshold)
    factors[(m_threshold, 1)] = factors.get((m_threshold, 1), 0) + 1
    if m_query is not None:  # each answer's 1 + a^m_query, padded to the canonical count
        numerator = _mul(numerator, dict(_factor_power(m_query, 1, queries - answers)))
        factors[(m_query, 1)] = factors.get((m_query, 1), 0) + queries
    return tuple(sorted(numerator.items())), tuple(sorted(factors.items()))


def check_integers(dataset: Sequence[Any]) -> tuple[int, ...]:
    """The answers as ints; geometric noise needs integer answers (InvalidArgument otherwise)."""
    out = []
    for i, v in enumerate(dataset):
        number = as_fraction(f"q[{i}]", v)
        if number.denominator != 1:
            raise InvalidArgument(
                f"geometric noise needs integer query answers, got q[{i}]={v!r}; scale the queries to "
                "integers or use noise='laplace'."
            )
        out.append(int(number))
    return tuple(out)
