"""The benchmark suite's twelve mechanisms, and the float-Laplace pair, as vectorised numpy samplers.

The statistical mode (:func:`dpverify.estimate`) runs a mechanism as a sampler
``sampler(dataset, rng, size)``: ``size`` independent outputs of ``M(dataset)``, drawn only from the
:class:`numpy.random.Generator` ``rng``. This module writes the twelve mechanisms of
:data:`dpverify.mechanisms.audits.benchmark_suite.BENCHMARK` that way (their exact versions are
:mod:`dpverify.mechanisms.noisy_max` and :mod:`dpverify.mechanisms.sparse_vector`; the scales are
restated here from the papers, not read off the exact objects, so that a cross-check compares two
implementations). ``dataset`` is the vector of query answers ``q`` (sensitivity 1 per answer).

Outputs, chosen simple for the statistical engine (numbers or vectors of numbers), each a one-to-one
encoding of the mechanism's output:

* report noisy max (Ding et al. CCS 2018 Alg. 5 / 6): ``argmax_i (q_i + N_i)``, ``N_i ~ Lap(2/eps)``
  or the one-sided ``Exp(2/eps)``: the index, an int array of shape ``(size,)``;
* noisy max value (Alg. 7 / 8, incorrect): ``max_i (q_i + N_i)``, a float array ``(size,)``;
* noisy histogram (Alg. 9, and Alg. 10 with the wrong scale ``Lap(eps)``): ``q + Lap(1/eps)`` per bin,
  a float array ``(size, k)``;
* sparse vector, Lyu, Su, Li VLDB 2017 Algorithms 1-6, cutoff ``c = 1``, threshold ``T = 0.5`` for
  Algorithm 1 and ``T = 1`` otherwise. Query ``i`` is ``⊤`` when ``q_i + nu_i >= T + rho`` (the strict
  ``>`` for Algorithms 3 and 4, as StatDP; with Laplace noise a tie has probability 0). Scales
  (``Delta = 1``): ``rho ~ Lap(2/eps)`` (Algorithm 4: ``Lap(4/eps)``), ``nu_i ~ Lap(4/eps)``
  (Algorithms 1, 2), ``Lap(2/eps)`` (3, 6), ``Lap(4/(3 eps))`` (4), none (5). Algorithm 2 refreshes
  ``rho`` after each ``⊤``, which at ``c = 1`` is after the run has stopped. Encodings:

  - Algorithms 1, 2, 4 (the run stops at the first ``⊤``): the answer string ``⊥^i ⊤`` is the int
    ``i``, the string ``⊥^k`` (no ``⊤``) the int ``k``; shape ``(size,)``;
  - Algorithms 5, 6 (no cutoff, every query answered): the ``(size, k)`` int array of answers,
    1 for ``⊤`` and 0 for ``⊥``;
  - Algorithm 3 (releases the noisy answer ``q_i + nu_i`` instead of the first ``⊤``): the
    ``(size, 2)`` float array ``[i, q_i + nu_i]``, and ``[k, 0.0]`` when no query is above the
    threshold. One-to-one: a released answer always comes with an index ``i < k``, so the row
    ``[k, 0.0]`` means exactly "no ``⊤``".

The float pair (DP-Sniper's headline finding, Bichsel et al. S&P 2021, after Mironov, "On
Significance of the Least Significant Bits for Differential Privacy", CCS 2012):

* :class:`FloatLaplaceSampler` -- the textbook Laplace mechanism in floating point,
  ``loc + rng.laplace(0, 1/eps)``, ``loc`` the dataset's one number. Claimed eps-DP (DP-Sniper's
  eps = 0.1, inputs 1.0 vs 0.0), it is not even 0.25-DP (DP-Sniper's 0.95 lower bound: 0.252): which
  floats it can output depends on ``loc`` (``1.0 + x`` for ``x`` in ``(-1, -0.5)`` is a multiple of
  ``2^-53``, as ``x`` itself need not be), so an event made of float bit patterns separates the inputs.
* :class:`SnappingLaplaceSampler` -- Mironov's snapping mechanism (CCS 2012):
  ``clamp_B(round_Lambda(clamp_B(loc) + S * lambda * ln(U)))`` with a uniform sign ``S``, ``U``
  uniform on the doubles of ``(0, 1)`` with full precision (each double drawn with probability its
  ulp, :func:`full_precision_uniform`) and ``Lambda`` the smallest power of two ``>= lambda``. By
  Mironov's Theorem 1 it is ``(1 + 2^-49 B) / lambda``-DP for a sensitivity-1 ``loc`` when
  ``lambda < B < 2^46 lambda``; as DP-Sniper's ``LaplaceFixed`` (``B = 100``), ``lambda`` is set to
  ``(1 + 2^-49 B) / eps`` so that **the fixed mechanism is claimed eps-DP** (0.1-DP at eps = 0.1).
  (Theorem 1 assumes a correctly rounded logarithm; numpy's ``log`` is accurate to about an ulp, not
  guaranteed correctly rounded.) A value snapped to zero is returned as ``+0.0``, never ``-0.0``: the
  output is the number, and the sign of a zero would tell which side of 0 the noisy value fell.

Every sampler is a frozen dataclass, module-level and picklable (a process pool can run it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument

__all__ = ["ReportNoisyMaxSampler", "NoisyMaxValueSampler", "NoisyHistogramSampler", "SparseVectorSampler",
           "FloatLaplaceSampler", "SnappingLaplaceSampler", "full_precision_uniform", "suite_sampler",
           "SUITE_SAMPLERS", "SVT_SCALES", "SVT_STRICT", "FLOAT_EPSILON", "FLOAT_PAIRS"]

#: DP-Sniper's eps for the float pair (``exp_floating_point.py``), and its inputs: 1.0 against 0.0.
FLOAT_EPSILON = 0.1
FLOAT_PAIRS = (((1.0,), (0.0,)),)

#: Algorithm -> (scale of rho, scale of nu or None), as multiples of 1/eps (c = 1, Delta = 1).
SVT_SCALES: dict[int, tuple[float, float | None]] = {
    1: (2.0, 4.0), 2: (2.0, 4.0), 3: (2.0, 2.0), 4: (4.0, 4.0 / 3.0), 5: (2.0, None), 6: (2.0, 2.0),
}
#: The algorithms that compare with the strict ``>`` (StatDP's iSVT3 and iSVT4).
SVT_STRICT = frozenset({3, 4})


def _check_epsilon(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < math.inf:
        raise InvalidArgument(f"epsilon must be a positive finite number, got epsilon={epsilon!r}; e.g. epsilon=0.7.")
    return float(epsilon)


def _answers(dataset: Any) -> np.ndarray:
    answers = np.asarray(dataset, dtype=float)
    if answers.ndim != 1 or answers.size == 0:
        raise InvalidArgument(f"dataset must be a non-empty vector of query answers, got dataset={dataset!r}.")
    return answers


def _noise(rng: np.random.Generator, noise: str, scale: float, shape: tuple[int, ...]) -> np.ndarray:
    if noise == "laplace":
        return rng.laplace(0.0, scale, shape)
    return rng.exponential(scale, shape)


def _check_noise(noise: str) -> None:
    if noise not in ("laplace", "exponential"):
        raise InvalidArgument(f"noise must be 'laplace' or 'exponential', got noise={noise!r}.")


@dataclass(frozen=True)
class ReportNoisyMaxSampler:
    """Ding et al. CCS 2018 Alg. 5 (Laplace) / 6 (exponential): the index of the largest ``q_i + N_i``,
    ``N_i`` of scale ``scale_factor / eps`` (2 in the paper; another factor makes a mutant)."""

    epsilon: float
    noise: str = "laplace"
    scale_factor: float = 2.0

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)
        _check_noise(self.noise)

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        q = _answers(dataset)
        return np.argmax(q + _noise(rng, self.noise, self.scale_factor / self.epsilon, (size, q.size)), axis=1)


@dataclass(frozen=True)
class NoisyMaxValueSampler:
    """Ding et al. CCS 2018 Alg. 7 / 8 (incorrect): ``max_i (q_i + N_i)``, ``N_i`` of scale
    ``scale_factor / eps`` (2 in the paper)."""

    epsilon: float
    noise: str = "laplace"
    scale_factor: float = 2.0

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)
        _check_noise(self.noise)

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        q = _answers(dataset)
        return (q + _noise(rng, self.noise, self.scale_factor / self.epsilon, (size, q.size))).max(axis=1)


@dataclass(frozen=True)
class NoisyHistogramSampler:
    """Ding et al. CCS 2018 Alg. 9 (``q + Lap(1/eps)`` per bin) and Alg. 10 (``wrong_scale``: ``Lap(eps)``,
    incorrect): the noisy vector, shape ``(size, k)``."""

    epsilon: float
    wrong_scale: bool = False

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        q = _answers(dataset)
        scale = self.epsilon if self.wrong_scale else 1.0 / self.epsilon
        return q + rng.laplace(0.0, scale, (size, q.size))


@dataclass(frozen=True)
class SparseVectorSampler:
    """Lyu, Su, Li VLDB 2017 Algorithm ``variant`` (1-6) at cutoff ``c = 1`` with the public threshold
    ``T`` (the paper's symbol; None: the suite's 0.5 for Algorithm 1, 1 otherwise). Scales, comparisons
    and output encodings: the module docstring (:data:`SVT_SCALES`, :data:`SVT_STRICT`)."""

    epsilon: float
    variant: int = 1
    T: float | None = None

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)
        if self.variant not in SVT_SCALES:
            raise InvalidArgument(f"variant must be one of Lyu, Su, Li's Algorithms 1-6, got variant={self.variant!r}.")

    @property
    def threshold(self) -> float:
        """The public threshold ``T``."""
        return (0.5 if self.variant == 1 else 1.0) if self.T is None else float(self.T)

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        q = _answers(dataset)
        k = q.size
        rho_factor, nu_factor = SVT_SCALES[self.variant]
        rho = rng.laplace(0.0, rho_factor / self.epsilon, size)
        noisy = q + rng.laplace(0.0, nu_factor / self.epsilon, (size, k)) if nu_factor is not None else \
            np.broadcast_to(q, (size, k))
        level = (self.threshold + rho)[:, None]
        top = noisy > level if self.variant in SVT_STRICT else noisy >= level
        if self.variant in (5, 6):  # no cutoff: every answer
            return top.astype(np.int64)
        any_top = top.any(axis=1)
        first = np.where(any_top, np.argmax(top, axis=1), k)
        if self.variant != 3:
            return first
        released = np.zeros((size, 2))
        released[:, 0] = first
        rows = np.flatnonzero(any_top)
        released[rows, 1] = noisy[rows, first[rows]]
        return released


def full_precision_uniform(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` draws of Mironov's ``U*``: every double in ``(0, 1)`` with probability its ulp.

    The binade ``[2^-e, 2^(1-e))`` has probability ``2^-e``: ``e`` is geometric (``P(e) = 2^-e``,
    ``e >= 1``), then a uniform 52-bit mantissa picks one of its ``2^52`` doubles, each of ulp
    ``2^(-e-52)`` = its probability ``2^-e * 2^-52``. (``rng.random()`` instead returns multiples of
    ``2^-53`` only, so its small values have zero low bits.)
    """
    exponent = rng.geometric(0.5, size)
    mantissa = rng.integers(0, 2**52, size, dtype=np.int64)
    return np.ldexp(1.0 + mantissa * 2.0**-52, -exponent)


def _one_number(dataset: Any) -> float:
    values = np.asarray(dataset, dtype=float).ravel()
    if values.size != 1:
        raise InvalidArgument(f"dataset must hold one number (the query answer), got dataset={dataset!r}; "
                              "e.g. (1.0,).")
    return float(values[0])


@dataclass(frozen=True)
class FloatLaplaceSampler:
    """The naive floating-point Laplace mechanism ``loc + rng.laplace(0, 1/eps)`` (DP-Sniper's
    ``LaplaceMechanism``; not eps-DP in floating point, module docstring); ``loc`` is the dataset's one
    number."""

    epsilon: float = FLOAT_EPSILON

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        return _one_number(dataset) + rng.laplace(0.0, 1.0 / self.epsilon, size)


@dataclass(frozen=True)
class SnappingLaplaceSampler:
    """Mironov's snapping mechanism (CCS 2012), claimed ``epsilon``-DP for a sensitivity-1
    ``loc`` in ``[-B, B]``: ``lambda = (1 + 2^-49 B) / epsilon`` (Theorem 1, as DP-Sniper's ``LaplaceFixed``).

    Attributes:
        epsilon: the claimed eps.
        B: the clamping bound (the paper's symbol), DP-Sniper's 100; Theorem 1 needs ``lambda < B < 2^46 lambda``.
    """

    epsilon: float = FLOAT_EPSILON
    B: float = 100.0

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)
        if not self.scale < self.B < 2.0**46 * self.scale:
            raise InvalidArgument(
                f"Mironov's Theorem 1 needs lambda < B < 2^46 lambda, got B={self.B!r} with lambda={self.scale!r} "
                f"(epsilon={self.epsilon!r}); pass a B above {self.scale:.4g}."
            )

    @property
    def scale(self) -> float:
        """``lambda``, the Laplace scale."""
        return (1.0 + self.B * 2.0**-49) / self.epsilon

    @property
    def Lambda(self) -> float:  # noqa: N802 -- the paper's symbol
        """The smallest power of two ``>= lambda``: the grid the output snaps to."""
        mantissa, exponent = math.frexp(self.scale)  # scale = mantissa * 2^exponent, mantissa in [0.5, 1)
        return self.scale if mantissa == 0.5 else math.ldexp(1.0, exponent)

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator, size: int) -> np.ndarray:
        loc = min(self.B, max(-self.B, _one_number(dataset)))
        sign = 1.0 - 2.0 * rng.integers(0, 2, size)
        noisy = loc + sign * self.scale * np.log(full_precision_uniform(rng, size))
        snapped = np.clip(np.round(noisy / self.Lambda) * self.Lambda, -self.B, self.B)
        return snapped + 0.0  # -0.0 (a negative value rounded to 0) as +0.0: the output is the number


#: Suite name (:data:`dpverify.mechanisms.audits.benchmark_suite.BENCHMARK`) -> the sampler at eps.
SUITE_SAMPLERS: dict[str, Callable[[float], Any]] = {
    "report_noisy_max_laplace": lambda e: ReportNoisyMaxSampler(e, "laplace"),
    "report_noisy_max_exponential": lambda e: ReportNoisyMaxSampler(e, "exponential"),
    "noisy_max_value_laplace": lambda e: NoisyMaxValueSampler(e, "laplace"),
    "noisy_max_value_exponential": lambda e: NoisyMaxValueSampler(e, "exponential"),
    "noisy_histogram": lambda e: NoisyHistogramSampler(e),
    "noisy_histogram_wrong_scale": lambda e: NoisyHistogramSampler(e, wrong_scale=True),
    **{f"svt{variant}": partial(SparseVectorSampler, variant=variant) for variant in SVT_SCALES},
}


def suite_sampler(name: str, epsilon: float) -> Any:
    """The benchmark mechanism ``name`` (a key of :data:`SUITE_SAMPLERS`) as a sampler at ``epsilon``.

    Raises:
        InvalidArgument: an unknown name or a bad epsilon.
    """
    if name not in SUITE_SAMPLERS:
        raise InvalidArgument(f"name must be a benchmark mechanism, one of {sorted(SUITE_SAMPLERS)}, got name={name!r}.")
    return SUITE_SAMPLERS[name](_check_epsilon(epsilon))
