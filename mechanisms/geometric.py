"""Report noisy max with two-sided geometric noise, exact: sums over the integers in closed form.

``Geometric(s)`` (:mod:`dpverify.mechanisms.noise`; the discrete Laplace) has ``P(Z = z) = (1 - a)/(1 + a) a^|z|``
on the integers, ``a = e^(-1/s)``. On integer query answers every probability of report noisy max
is a sum over the integer value ``y`` of the winner of products of the pmf and CDFs

    ``P(Z <= t) = a^(-t) / (1 + a)`` for ``t < 0``,  ``1 - a^(t+1) / (1 + a)`` for ``t >= 0``,

each of which, between consecutive answers, is a finite sum ``sum_r c_r a^(r y)`` with ``c_r`` a
rational function of ``a``. Such a sum over an integer range is a geometric series in closed form
(``sum_{y=L}^{U} a^(r y) = (a^(rL) - a^(r(U+1))) / (1 - a^r)``; the infinite ends converge since the
tails have ``r > 0`` at ``+inf`` and ``r < 0`` at ``-inf``). So each probability is an exact rational
function ``N(a)/D(a)`` with rational coefficients (sympy's field ``QQ(a)``), and the outcome
probabilities of a dataset sum to 1 as rational functions (checked). At ``a = e^(-1/s)`` with
rational ``s``, ``N`` and ``D`` are :class:`~dpverify.densities.piecewise.ExpSum` (``a^n = exp(-n/s)``): the
value is exact (sympy), enclosed in mpmath intervals, and rounded to a certified float.

Ties have positive probability: :class:`GeometricNoisyMax` reports the **smallest index** among the
largest noisy answers (``numpy.argmax``, as StatDP's implementation), i.e. ``i`` wins on ``y`` when
``Y_j <= y - 1`` for ``j < i`` and ``Y_j <= y`` for ``j > i``.

Not a :class:`~dpverify.mechanisms.noise.NoiseProgram`: its probabilities are ratios of ExpSums, which
:func:`dpverify.checking.input_pairs.verify_pairs` certifies through ``certified_intervals`` and
``exact_distribution`` (both offered here).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
from sympy import QQ
from sympy.polys.fields import field as _field

from dpverify.densities.piecewise import ExpSum, as_fraction
from dpverify.errors import InvalidArgument

from .noise import Geometric

__all__ = ["GeometricNoisyMax", "RationalExp", "argmax_fractions"]

FIELD, A = _field("a", QQ)
_ONE = FIELD(1)


class RationalExp:
    """The exact number ``f(a)`` at ``a = exp(-1/s)``, ``f`` a rational function in ``QQ(a)``."""

    __slots__ = ("fraction", "scale", "_float")

    def __init__(self, fraction: Any, scale: Fraction) -> None:
        self.fraction, self.scale = fraction, scale
        self._float: float | None = None

    def _expsum(self, poly: Any) -> ExpSum:
        return ExpSum({Fraction(-n, 1) / self.scale: Fraction(int(c.numerator), int(c.denominator))
                       for (n,), c in poly.terms()})

    def is_zero(self) -> bool:
        return not self.fraction.numer

    def interval(self, bits: int = 128):
        """A rigorous mpmath interval of the value."""
        old = mpmath.iv.prec
        try:
            mpmath.iv.prec = bits
            return self._expsum(self.fraction.numer).interval(bits) / self._expsum(self.fraction.denom).interval(bits)
        finally:
            mpmath.iv.prec = old

    def to_float(self) -> float:
        """The value rounded to float64 from a 128-bit enclosure (within ``2**-52`` relative)."""
        if self._float is None:
            value = self.interval(128)
            low, high = float(mpmath.mpf(value.a)), float(mpmath.mpf(value.b))
            if abs(high - low) > 2.0**-60 * max(abs(low), abs(high)):
                raise AssertionError(f"internal error: enclosure too wide for {self.fraction}")
            self._float = float(mpmath.mpf(value.mid))
        return self._float

    def to_sympy(self):
        return self._expsum(self.fraction.numer).to_sympy() / self._expsum(self.fraction.denom).to_sympy()


# -- functions of the integer y: breaks b_1 < ... < b_n, piece m on [b_m, b_{m+1} - 1] -------------


class _Lattice:
    """``y -> sum_r c_r a^(r y)`` piece by piece on the integers; ``pieces[m]`` is ``{r: c_r}``."""

    def __init__(self, breaks: list[int], pieces: list[dict]) -> None:
        self.breaks, self.pieces = breaks, pieces

    def piece_at(self, low: int | None) -> dict:
        return self.pieces[0 if low is None else bisect.bisect_right(self.breaks, low)]

    def __mul__(self, other: _Lattice) -> _Lattice:
        breaks = sorted(set(self.breaks) | set(other.breaks))
        pieces = []
        for low in [None, *breaks]:
            out: dict = {}
            for r1, c1 in self.piece_at(low).items():
                for r2, c2 in other.piece_at(low).items():
                    out[r1 + r2] = out.get(r1 + r2, 0) + c1 * c2
            pieces.append({r: c for r, c in out.items() if c})
        return _Lattice(breaks, pieces)

    def total(self) -> Any:
        """``sum_{y in Z}`` in closed form (geometric series)."""
        ends: list[int | None] = [None, *self.breaks, None]
        result = FIELD(0)
        for m, piece in enumerate(self.pieces):
            low, high = ends[m], ends[m + 1]  # the piece is [low, high - 1]
            for r, c in piece.items():
                if low is None:
                    if high is None:
                        raise AssertionError("internal error: a sum over all of Z without breaks")
                    if r >= 0:
                        raise AssertionError("internal error: divergent sum at -inf")
                    result += c * A ** (r * (high - 1)) / (1 - A ** (-r))
                elif high is None:
                    if r <= 0:
                        raise AssertionError("internal error: divergent sum at +inf")
                    result += c * A ** (r * low) / (1 - A**r)
                elif r == 0:
                    result += c * (high - low)
                else:
                    result += c * (A ** (r * low) - A ** (r * high)) / (1 - A**r)
        return result


def _pmf(q: int) -> _Lattice:
    """``P(q + Z = y)``: ``c a^(q - y)`` below ``q``, ``c a^(y - q)`` from ``q`` on."""
    c = (1 - A) / (1 + A)
    return _Lattice([q], [{-1: c * A**q}, {1: c * A ** (-q)}])


def _cdf(q: int) -> _Lattice:
    """``P(q + Z <= y)``: ``a^(q - y)/(1 + a)`` below ``q``, ``1 - a^(y - q + 1)/(1 + a)`` from ``q`` on."""
    return _Lattice([q], [{-1: A**q / (1 + A)}, {0: _ONE, 1: -A ** (1 - q) / (1 + A)}])


def argmax_fractions(values: list[int]) -> dict[int, Any]:
    """``P(argmax_i (q_i + Z_i) = i)`` (smallest index among ties) as rational functions of ``a``."""
    out = {}
    for i, own in enumerate(values):
        term = _pmf(own)
        for j, v in enumerate(values):
            if j != i:
                term = term * _cdf(v + 1 if j < i else v)  # j < i must be strictly below y
        out[i] = term.total()
    return out


@dataclass(frozen=True, eq=False)
class GeometricNoisyMax:
    """Report noisy max (Ding et al. CCS 2018 Alg. 5 with discrete noise): the smallest index of the
    largest ``q_i + Z_i``, ``Z_i ~ Geometric(scale_factor / eps)`` (two-sided), on integer answers.

    Args:
        epsilon: eps (rational; floats are read exactly).
        scale_factor: the noise scale is ``scale_factor / eps`` (2, as the Laplace version).
    """

    epsilon: Any
    scale_factor: Any = 2
    name: str = field(default="report_noisy_max_geometric", compare=False)
    # set in __post_init__: the noise, and fractions' cache (dataset -> probabilities)
    _noise: Geometric = field(init=False, repr=False, compare=False)
    _cache: dict[tuple, dict[int, Any]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        eps = as_fraction("epsilon", self.epsilon)
        if eps <= 0:
            raise InvalidArgument(f"epsilon must be positive, got epsilon={self.epsilon!r}.")
        object.__setattr__(self, "_noise", Geometric(as_fraction("scale_factor", self.scale_factor) / eps))
        object.__setattr__(self, "_cache", {})

    def __repr__(self) -> str:
        return f"GeometricNoisyMax(epsilon={self.epsilon}, scale_factor={self.scale_factor})"

    float_relative_error = 2.0**-52

    @property
    def noise(self) -> Geometric:
        return self._noise

    def fractions(self, dataset: tuple) -> dict[int, Any]:
        """Every index's probability as a rational function of ``a`` (they sum to 1, checked)."""
        cache = self._cache
        key = tuple(dataset)
        if key not in cache:
            values = []
            for i, v in enumerate(key):
                number = as_fraction(f"q[{i}]", v)
                if number.denominator != 1:
                    raise InvalidArgument(f"geometric noise needs integer query answers, got q[{i}]={v!r}.")
                values.append(int(number))
            result = argmax_fractions(values)
            if sum(result.values(), FIELD(0)) != 1:
                raise AssertionError(f"internal error: probabilities on {key!r} do not sum to 1")
            cache[key] = result
        return cache[key]

    def exact_values(self, dataset: tuple) -> dict[int, RationalExp]:
        scale = self.noise.scale
        return {i: RationalExp(f, scale) for i, f in self.fractions(dataset).items() if f.numer}

    def __call__(self, dataset: tuple):
        from dpverify.finite.distribution import Distribution

        return Distribution({o: p.to_float() for o, p in self.exact_values(dataset).items()})

    def exact_distribution(self, dataset: tuple):
        from dpverify.finite.distribution import Distribution

        return Distribution({o: p.to_sympy() for o, p in self.exact_values(dataset).items()})

    def certified_intervals(self, dataset: tuple) -> dict:
        return {o: p.interval(256) for o, p in self.exact_values(dataset).items()}
