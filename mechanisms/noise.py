"""Exact noise programs: Laplace, one-sided exponential and no noise, as piecewise-exponential functions.

Every probability the benchmark mechanisms of :mod:`dpverify.mechanisms.noisy_max` and
:mod:`dpverify.mechanisms.sparse_vector` need is an integral of products of a noise's density, CDF and tail
at shifted points. With rational scales and rational inputs each such function is a
:class:`dpverify.densities.piecewise.PiecewiseExp` and each probability an exact
:class:`dpverify.densities.piecewise.ExpSum` (``sum a_j exp(e_j)``, compared exactly, rounded to float with a
certificate). Nothing is sampled and nothing is integrated numerically.

Noises (``b``, ``s`` > 0 rational; floats are read as the binary rationals they are):

* ``Laplace(b)``: density ``exp(-|x|/b) / (2b)``; CDF ``exp(x/b)/2`` for ``x < 0`` and
  ``1 - exp(-x/b)/2`` for ``x >= 0`` (the same closed forms as :mod:`dpverify.mechanisms.laplace`).
* ``Exponential(s)`` (one-sided, numpy's ``exponential(scale=s)``): density ``exp(-x/s)/s`` on
  ``x >= 0``; CDF ``1 - exp(-x/s)`` there, 0 below.
* ``Geometric(s)``: two-sided geometric on the integers, ``P(Z = z) = (1 - a)/(1 + a) a^|z|``,
  ``a = e^(-1/s)``; its probabilities are rational functions of ``a``, in :mod:`dpverify.mechanisms.geometric`
  (ties have positive probability there: each mechanism states its tie rule).
* ``NoNoise()``: the point mass at 0 (Lyu, Su, Li's Algorithm 5 adds no noise to the queries); it
  has a CDF and a tail but no density.

For continuous noise ties have probability 0, so ``>=`` and ``>`` (``argmax`` with any tie rule)
give the same probabilities; for geometric noise they do not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from dpverify.densities.piecewise import ExpSum, PiecewiseExp, as_fraction
from dpverify.errors import InvalidArgument

from .geometric import total_is_one

__all__ = [
    "Noise",
    "Laplace",
    "Exponential",
    "NoNoise",
    "Geometric",
    "argmax_probabilities",
    "max_density",
    "max_cdf",
    "prob_at_least",
]

_ZERO = Fraction(0)


def _positive(name: str, value: Any) -> Fraction:
    number = as_fraction(name, value)
    if number <= 0:
        raise InvalidArgument(f"{name} must be positive, got {name}={value!r}; use scale = sensitivity / epsilon.")
    return number


class Noise:
    """A noise distribution on the line, as exact piecewise-exponential density, CDF and tail."""

    name = "noise"

    def density(self) -> PiecewiseExp:
        raise InvalidArgument(f"{self!r} has no density (it is a point mass); use its cdf or tail.")

    def cdf(self) -> PiecewiseExp:
        """``P(N <= x)`` (``P(N < x)`` agrees almost everywhere)."""
        raise NotImplementedError

    def tail(self) -> PiecewiseExp:
        """``P(N >= x)`` (``P(N > x)`` agrees almost everywhere)."""
        raise NotImplementedError

    @property
    def continuous(self) -> bool:
        return True


@dataclass(frozen=True)
class Laplace(Noise):
    """``Lap(b)``: density ``exp(-|x|/b) / (2b)``."""

    scale: Fraction

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _positive("scale", self.scale))

    name = "laplace"

    def density(self) -> PiecewiseExp:
        return _laplace_functions(self.scale)[0]

    def cdf(self) -> PiecewiseExp:
        return _laplace_functions(self.scale)[1]

    def tail(self) -> PiecewiseExp:
        return _laplace_functions(self.scale)[2]


@lru_cache(maxsize=64)
def _laplace_functions(b: Fraction) -> tuple[PiecewiseExp, PiecewiseExp, PiecewiseExp]:
    rate, half = 1 / b, Fraction(1, 2)
    density = PiecewiseExp([_ZERO], [{(rate, _ZERO, 0): 1 / (2 * b)}, {(-rate, _ZERO, 0): 1 / (2 * b)}])
    cdf = PiecewiseExp([_ZERO], [{(rate, _ZERO, 0): half}, {(_ZERO, _ZERO, 0): Fraction(1), (-rate, _ZERO, 0): -half}])
    tail = PiecewiseExp([_ZERO], [{(_ZERO, _ZERO, 0): Fraction(1), (rate, _ZERO, 0): -half}, {(-rate, _ZERO, 0): half}])
    return density, cdf, tail


@dataclass(frozen=True)
class Exponential(Noise):
    """One-sided ``Exp(s)``: density ``exp(-x/s) / s`` on ``x >= 0`` (numpy's ``scale=s``)."""

    scale: Fraction

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _positive("scale", self.scale))

    name = "exponential"

    def density(self) -> PiecewiseExp:
        s = self.scale
        return PiecewiseExp([_ZERO], [{}, {(-1 / s, _ZERO, 0): 1 / s}])

    def cdf(self) -> PiecewiseExp:
        s = self.scale
        return PiecewiseExp([_ZERO], [{}, {(_ZERO, _ZERO, 0): Fraction(1), (-1 / s, _ZERO, 0): Fraction(-1)}])

    def tail(self) -> PiecewiseExp:
        s = self.scale
        return PiecewiseExp([_ZERO], [{(_ZERO, _ZERO, 0): Fraction(1)}, {(-1 / s, _ZERO, 0): Fraction(1)}])


@dataclass(frozen=True)
class NoNoise(Noise):
    """The point mass at 0 (no noise)."""

    name = "none"

    @property
    def continuous(self) -> bool:
        return False

    def cdf(self) -> PiecewiseExp:
        return PiecewiseExp([_ZERO], [{}, {(_ZERO, _ZERO, 0): Fraction(1)}])

    def tail(self) -> PiecewiseExp:
        return PiecewiseExp([_ZERO], [{(_ZERO, _ZERO, 0): Fraction(1)}, {}])


@dataclass(frozen=True)
class Geometric(Noise):
    """Two-sided geometric (discrete Laplace) noise on the integers:
    ``P(Z = z) = (1 - a)/(1 + a) a^|z|`` with ``a = e^(-1/scale)``; ``count + Geometric(1/eps)`` is
    eps-DP for counts (its ratio on neighbouring counts is exactly ``e^eps``). Its probabilities are
    rational functions of ``a`` (sums over the integers in closed form): see
    :mod:`dpverify.mechanisms.geometric`; ``ReportNoisyMax(noise="geometric")`` and
    ``svt(variant, noise="geometric")`` use it."""

    scale: Fraction

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _positive("scale", self.scale))

    name = "geometric"

    @property
    def continuous(self) -> bool:
        return False

    def cdf(self) -> PiecewiseExp:
        raise InvalidArgument("geometric noise is discrete; use dpverify.mechanisms.geometric (sums over the integers).")

    tail = cdf


def _values(values: Sequence[Any]) -> list[Fraction]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise InvalidArgument(f"values must be a non-empty sequence of numbers, got values={values!r}.")
    return [as_fraction(f"values[{i}]", v) for i, v in enumerate(values)]


def prob_at_least(value: Any, threshold: Any, noise: Noise) -> ExpSum:
    """``P(value + N >= threshold)`` exactly."""
    return noise.tail().value(as_fraction("threshold", threshold) - as_fraction("value", value))


@lru_cache(maxsize=4096)
def _argmax_one(own: Fraction, others: tuple[Fraction, ...], noise: Noise) -> ExpSum:
    integrand = noise.density().shift(-own)
    cdf = noise.cdf()
    counts: dict[Fraction, int] = {}
    for v in others:
        counts[v] = counts.get(v, 0) + 1
    for v, n in sorted(counts.items()):
        integrand = integrand * cdf.shift(-v).power(n)
    return integrand.integral()


def argmax_probabilities(values: Sequence[Any], noise: Noise) -> dict[int, ExpSum]:
    """``P(argmax_i (q_i + N_i) = i)`` for independent noises ``N_i`` (ties have probability 0).

    ``int f(x - q_i) prod_{j != i} F(x - q_j) dx``, integrated piece by piece in closed form.
    """
    q = _values(values)
    if not noise.continuous:
        raise InvalidArgument("argmax needs a continuous noise (ties would have positive probability).")
    out = {}
    for i, own in enumerate(q):
        others = tuple(sorted(q[:i] + q[i + 1 :]))
        out[i] = _argmax_one(own, others, noise)
    return out


def max_cdf(values: Sequence[Any], noise: Noise) -> PiecewiseExp:
    """``P(max_i (q_i + N_i) <= x) = prod_i F(x - q_i)``."""
    result = PiecewiseExp.constant(1)
    cdf = noise.cdf()
    for v in _values(values):
        result = result * cdf.shift(-v)
    return result


def max_density(values: Sequence[Any], noise: Noise) -> PiecewiseExp:
    """Density of ``max_i (q_i + N_i)``: ``sum_i f(x - q_i) prod_{j != i} F(x - q_j)``."""
    q = _values(values)  # not empty
    cdf, density = noise.cdf(), noise.density()
    terms = []
    for i, own in enumerate(q):
        term = density.shift(-own)
        for j, v in enumerate(q):
            if j != i:
                term = term * cdf.shift(-v)
        terms.append(term)
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


class NoiseProgram:
    """Base of the exact noise mechanisms: one method, :meth:`probabilities`, gives every
    outcome's exact probability; the rest derive from it.

    The exact values are :class:`~dpverify.densities.piecewise.ExpSum` (Laplace, exponential, no
    noise) or, with two-sided geometric noise (``rational_values``),
    :class:`~dpverify.mechanisms.geometric.RationalExp` (rational functions of ``a = e^(-g)``). Both
    are compared exactly, enclosed in intervals, rounded to certified floats and given to sympy.

    * calling the mechanism returns a :class:`~dpverify.Distribution` of certified floats (each the
      exact value rounded, within ``2**-52`` relative: ``float_relative_error``);
    * :meth:`exact_values` returns the exact values (zeros dropped, cached, checked to sum to 1);
    * :meth:`exact_distribution` returns the exact sympy values (what ``dpverify.verify`` certifies);
    * :meth:`certified_intervals` returns mpmath enclosures (256 bits; at least 200 bits relative for
      rational values), which :func:`dpverify.checking.input_pairs.verify_pairs` certifies with (faster
      than sympy; a tie it cannot separate falls back to the sympy values);
    * ``exact_probabilities`` is :meth:`exact_values` for ExpSum values only: ``verify_pairs`` asks
      for it to give a witness's masses as exact sums, which rational values do not offer (it is
      absent, ``hasattr`` is False, for geometric noise).
    """

    float_relative_error = 2.0**-52

    @property
    def rational_values(self) -> bool:
        """Whether the exact values are RationalExp (geometric noise) rather than ExpSum."""
        return False

    def probabilities(self, dataset: tuple) -> dict:
        """Every outcome's exact probability on ``dataset`` (subclasses implement this)."""
        raise NotImplementedError

    def exact_values(self, dataset: tuple) -> dict:
        """:meth:`probabilities`, zeros dropped, cached per dataset; the exact total is checked to be 1
        on the first 64 datasets and every 16th after (an internal consistency check)."""
        cache = self.__dict__.setdefault("_cache", {})
        key = tuple(dataset)
        if key not in cache:
            if len(cache) > 100_000:
                cache.clear()
            probabilities = self.probabilities(key)
            checked = self.__dict__.setdefault("_checked", [0])
            checked[0] += 1
            # the exact total is an internal consistency check (it costs as much as the probabilities):
            # every one of the first 64 datasets, then every 16th
            if (checked[0] <= 64 or checked[0] % 16 == 0) and not self._total_is_one(probabilities.values()):
                raise AssertionError(f"internal error: the probabilities of {self!r} on {key!r} do not sum to 1")
            cache[key] = {o: p for o, p in probabilities.items() if not p.is_zero()}
        return cache[key]

    def _total_is_one(self, values: Any) -> bool:
        if self.rational_values:
            return total_is_one(values)
        return ExpSum.total(values) == 1

    @property
    def exact_probabilities(self) -> Callable[[tuple], dict]:
        """``dataset -> {outcome: ExpSum}`` (:meth:`exact_values`); absent (AttributeError) when the
        values are rational functions (geometric noise): use :meth:`exact_values`."""
        if self.rational_values:
            raise AttributeError(
                f"{self!r} has geometric noise: its exact values are RationalExp (rational functions of "
                "a = e^-g), not ExpSums; use exact_values(dataset)."
            )
        return self.exact_values

    def __call__(self, dataset: tuple):
        from dpverify.finite.distribution import Distribution

        # each float is the certified rounding of a positive exact value (zeros are dropped in
        # exact_values), so it is positive and finite: only the total is checked again
        return Distribution._of_positive_floats({o: p.to_float() for o, p in self.exact_values(dataset).items()})

    def exact_distribution(self, dataset: tuple):
        from dpverify.finite.distribution import Distribution

        return Distribution({o: p.to_sympy() for o, p in self.exact_values(dataset).items()})

    def certified_intervals(self, dataset: tuple) -> dict:
        if self.rational_values:
            return {o: p.enclosure(200) for o, p in self.exact_values(dataset).items()}
        return {o: p.interval(256) for o, p in self.exact_values(dataset).items()}
