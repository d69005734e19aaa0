"""The benchmark suite's twelve mechanisms as plain numpy programs, for the exact mode to decide as written.

The twelve mechanisms StatDP (Ding, Wang, Wang, Zhang, Kifer, CCS 2018) and DP-Sniper (Bichsel et al.,
S&P 2021) are judged on (:mod:`dpverify.mechanisms.audits.benchmark_suite`), written the way their
authors publish them: numpy code that draws Laplace or exponential noise, compares, takes an argmax.
Their exact versions are :mod:`dpverify.mechanisms.noisy_max` and :mod:`dpverify.mechanisms.sparse_vector`;
the scales are restated here from the papers, in floats as users write them (``2.0 / epsilon`` with
``epsilon = 0.7``). A dataset is the vector ``q`` of query answers (sensitivity 1 per answer).

* report noisy max (Ding et al. Alg. 5 / 6): ``argmax_i (q_i + N_i)``, ``N_i ~ Lap(2/eps)`` or the
  one-sided ``Exp(2/eps)``; noisy max value (Alg. 7 / 8, incorrect): ``max_i (q_i + N_i)``;
* noisy histogram (Alg. 9, ``q + Lap(1/eps)`` per bin) and its wrong scale ``Lap(eps)`` (Alg. 10, incorrect);
* sparse vector, Lyu, Su, Li VLDB 2017 Algorithms 1-6 at cutoff ``c = 1`` (:data:`CUTOFF`), threshold
  ``T = 0.5`` for Algorithm 1 and 1 otherwise: query ``i`` is ``⊤`` when ``q_i + nu_i >= T + rho``
  (strict ``>`` for Algorithms 3 and 4, as StatDP). Scales: ``rho ~ Lap(2/eps)`` (Algorithm 4:
  ``Lap(4/eps)``), ``nu_i ~ Lap(4/eps)`` (1, 2), ``Lap(2/eps)`` (3, 6), ``Lap(4/(3 eps))`` (4), none (5).
  Algorithm 2 refreshes ``rho`` after each ``⊤``, which at ``c = 1`` comes after the run has stopped.

Two styles, each for the twelve names of :data:`SUITE_NAMES`:

1. **Function style**, ``program(dataset, rng)`` drawing from the generator it is given
   (``rng.laplace(scale=..., size=k)``; for SVT a ``for`` loop with an ``if`` and a ``break``):
   :func:`function_program`. Verified exactly by ``dpverify.from_sampler(program)``.
2. **Class style**, vectorised over samples the way public DP testers write them: a class per mechanism,
   ``__init__(self, epsilon)`` and ``m(self, dataset, n_samples)`` drawing ``(n_samples, k)`` arrays from
   numpy's **global** generator (``np.random.laplace``), with boolean masks and, for SVT, an abort loop
   over the columns (:data:`BATCH_CLASSES`). :func:`class_program` adapts one to ``(dataset, rng) ->
   output`` by ``m(dataset, 1)[0]``; it ignores ``rng``. Its draws reach the exact rng only when routed:
   ``dpverify.from_sampler(class_program(name, eps), patch=["numpy.random"])``, or ``patch=`` naming
   this module (``"dpverify.mechanisms.suite_programs"``: it imports numpy, so ``numpy.random`` is
   patched). Unrouted, the global draws make ``from_sampler`` raise ``NondeterministicMechanism``.
   The class style's SVT compares every answer at once, so its enumeration has up to ``2^k`` paths
   per dataset where the function style's loop, stopping at the first ``⊤``, has ``k + 1``.

Outputs, the same one-to-one encoding in both styles (``from_sampler`` reads numpy scalars as Python
scalars and arrays as tuples, so both styles give the same outcomes):

* report noisy max: the index, ``np.argmax``'s numpy integer (class style: an ``int``);
* noisy max value: the float ``np.max`` (class style: a ``float``);
* noisy histogram: the noisy vector, a ``(k,)`` float array (class style: a tuple of ``k`` floats);
* SVT 1, 2, 4: a tuple of length ``k``, ``False`` for each ``⊥``, ``True`` for the ``⊤`` that stops the
  run and ``None`` for every query after it (not answered): ``(False, False, True, None, None)``; all
  ``False`` when no answer is above the threshold;
* SVT 3: as SVT 1 with the released noisy answer ``q_i + nu_i`` (a float) in the place of the ``⊤``:
  ``(False, False, 3.7, None, None)``, all ``False`` when none is released;
* SVT 5, 6 (no cutoff): a tuple of ``k`` bools, every query answered.

:data:`EXPECTED_HOLDS` says which programs are ``eps``-DP (a correct program holds at every eps of
:data:`SUITE_EPSILONS`, an incorrect one is violated) on ``InputPairs.statdp(k, differ=SUITE_DIFFER[name])``
(``k`` = :data:`SUITE_K`: 5 for noisy max and the histogram, 10 for SVT).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument

__all__ = [
    "SUITE_NAMES", "EXPECTED_HOLDS", "SUITE_EPSILONS", "SUITE_K", "SUITE_DIFFER", "CUTOFF",
    "ReportNoisyMaxProgram", "NoisyMaxValueProgram", "NoisyHistogramProgram", "SparseVectorProgram",
    "ReportNoisyMaxLaplaceBatch", "ReportNoisyMaxExponentialBatch", "NoisyMaxValueLaplaceBatch",
    "NoisyMaxValueExponentialBatch", "NoisyHistogramBatch", "NoisyHistogramWrongScaleBatch",
    "SparseVector1Batch", "SparseVector2Batch", "SparseVector3Batch", "SparseVector4Batch",
    "SparseVector5Batch", "SparseVector6Batch",
    "FUNCTION_PROGRAMS", "BATCH_CLASSES", "ClassProgram", "function_program", "class_program",
]

#: The benchmark names, in :data:`dpverify.mechanisms.audits.benchmark_suite.BENCHMARK`'s order.
SUITE_NAMES: tuple[str, ...] = (
    "report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_max_value_laplace",
    "noisy_max_value_exponential", "noisy_histogram", "noisy_histogram_wrong_scale",
    "svt1", "svt2", "svt3", "svt4", "svt5", "svt6",
)
#: Name -> True when the program is eps-DP (verify holds), False when it is not (verify is VIOLATED).
EXPECTED_HOLDS: dict[str, bool] = {
    name: name in ("report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_histogram", "svt1", "svt2")
    for name in SUITE_NAMES
}
#: The claims the suite tests at (StatDP's default 0.7 and DP-Sniper's 0.1), as users write them.
SUITE_EPSILONS: tuple[float, ...] = (0.7, 0.1)
#: Name -> the number of queries the suite runs it on.
SUITE_K: dict[str, int] = {name: 10 if name.startswith("svt") else 5 for name in SUITE_NAMES}
#: Name -> StatDP's neighbour convention: "one" answer differs (histograms) or "all" may.
SUITE_DIFFER: dict[str, str] = {name: "one" if name.startswith("noisy_histogram") else "all" for name in SUITE_NAMES}
#: The SVT cutoff: the run stops at the first ``⊤`` (Algorithms 1-4).
CUTOFF = 1


def _check_epsilon(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < math.inf:
        raise InvalidArgument(f"epsilon must be a positive finite number, got epsilon={epsilon!r}; e.g. epsilon=0.7.")
    return float(epsilon)


def _check_noise(noise: str) -> None:
    if noise not in ("laplace", "exponential"):
        raise InvalidArgument(f"noise must be 'laplace' or 'exponential', got noise={noise!r}.")


# -- function style: program(dataset, rng) ----------------------------------------------------------


@dataclass(frozen=True)
class ReportNoisyMaxProgram:
    """Ding et al. CCS 2018 Alg. 5 (``noise="laplace"``) / 6 (``"exponential"``): the index of the
    largest ``q_i + N_i``, ``N_i`` of scale ``2/eps``."""

    epsilon: float
    noise: str = "laplace"

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)
        _check_noise(self.noise)

    @property
    def scale(self) -> float:
        """The noise scale ``2/eps``."""
        return 2.0 / self.epsilon

    def noisy(self, dataset: Sequence[float], rng: Any) -> Any:
        """The noisy answers ``q + N``."""
        q = np.asarray(dataset, dtype=float)
        if self.noise == "laplace":
            return q + rng.laplace(scale=self.scale, size=len(q))
        return q + rng.exponential(scale=self.scale, size=len(q))

    def __call__(self, dataset: Sequence[float], rng: Any) -> Any:
        return np.argmax(self.noisy(dataset, rng))


@dataclass(frozen=True)
class NoisyMaxValueProgram(ReportNoisyMaxProgram):
    """Ding et al. CCS 2018 Alg. 7 / 8 (incorrect): the largest ``q_i + N_i`` itself, ``N_i`` of scale ``2/eps``."""

    def __call__(self, dataset: Sequence[float], rng: Any) -> Any:
        return np.max(self.noisy(dataset, rng))


@dataclass(frozen=True)
class NoisyHistogramProgram:
    """Ding et al. CCS 2018 Alg. 9 (``q + Lap(1/eps)`` per bin) and Alg. 10 (``wrong_scale``: ``Lap(eps)``,
    incorrect): the noisy vector."""

    epsilon: float
    wrong_scale: bool = False

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)

    @property
    def scale(self) -> float:
        """The noise scale: ``1/eps``, or ``eps`` with ``wrong_scale``."""
        return self.epsilon if self.wrong_scale else 1.0 / self.epsilon

    def __call__(self, dataset: Sequence[float], rng: Any) -> Any:
        return np.asarray(dataset) + rng.laplace(scale=self.scale, size=len(dataset))


def _svt_scales(variant: int, epsilon: float) -> tuple[float, float | None]:
    """Lyu, Su, Li's ``(scale of rho, scale of nu)`` for ``variant`` at ``c = 1`` (None: no query noise)."""
    if variant == 4:
        return 4.0 / epsilon, 4.0 / (3.0 * epsilon)
    nu = {1: 4.0 / epsilon, 2: 4.0 / epsilon, 3: 2.0 / epsilon, 5: None, 6: 2.0 / epsilon}[variant]
    return 2.0 / epsilon, nu


@dataclass(frozen=True)
class SparseVectorProgram:
    """Lyu, Su, Li VLDB 2017 Algorithm ``variant`` (1-6) at ``c = 1``, the suite's threshold ``T`` (0.5 for
    Algorithm 1, else 1): the answers as a tuple (module docstring), drawn query by query as the paper
    writes it."""

    epsilon: float
    variant: int = 1

    def __post_init__(self) -> None:
        _check_epsilon(self.epsilon)
        if self.variant not in (1, 2, 3, 4, 5, 6):
            raise InvalidArgument(f"variant must be one of Lyu, Su, Li's Algorithms 1-6, got variant={self.variant!r}.")

    @property
    def T(self) -> float:  # noqa: N802 -- the paper's symbol
        """The public threshold."""
        return 0.5 if self.variant == 1 else 1.0

    @property
    def strict(self) -> bool:
        """Whether ``⊤`` needs ``>`` (Algorithms 3 and 4, StatDP's iSVT4 and iSVT3) rather than ``>=``."""
        return self.variant in (3, 4)

    @property
    def rho_scale(self) -> float:
        """The scale of the threshold noise ``rho``."""
        return _svt_scales(self.variant, self.epsilon)[0]

    @property
    def nu_scale(self) -> float | None:
        """The scale of each query's noise ``nu_i`` (None: Algorithm 5 adds none)."""
        return _svt_scales(self.variant, self.epsilon)[1]

    def __call__(self, dataset: Sequence[float], rng: Any) -> tuple:
        T, cutoff = self.T, self.variant not in (5, 6)
        rho = rng.laplace(scale=self.rho_scale)
        answers: list[Any] = [None] * len(dataset)
        count = 0
        for i, q in enumerate(dataset):
            noisy = q if self.nu_scale is None else q + rng.laplace(scale=self.nu_scale)
            if (noisy > T + rho) if self.strict else (noisy >= T + rho):
                answers[i] = noisy if self.variant == 3 else True
                count += 1
                if cutoff and count >= CUTOFF:
                    break
                if self.variant == 2:  # a fresh threshold after each ⊤ (never reached at c = 1)
                    rho = rng.laplace(scale=self.rho_scale)
            else:
                answers[i] = False
        return tuple(answers)


#: Suite name -> the function-style program at eps.
FUNCTION_PROGRAMS: dict[str, Callable[[float], Any]] = {
    "report_noisy_max_laplace": lambda e: ReportNoisyMaxProgram(e, "laplace"),
    "report_noisy_max_exponential": lambda e: ReportNoisyMaxProgram(e, "exponential"),
    "noisy_max_value_laplace": lambda e: NoisyMaxValueProgram(e, "laplace"),
    "noisy_max_value_exponential": lambda e: NoisyMaxValueProgram(e, "exponential"),
    "noisy_histogram": lambda e: NoisyHistogramProgram(e),
    "noisy_histogram_wrong_scale": lambda e: NoisyHistogramProgram(e, wrong_scale=True),
    **{f"svt{v}": partial(SparseVectorProgram, variant=v) for v in range(1, 7)},
}


# -- class style: m(dataset, n_samples) on numpy's global generator ---------------------------------


class _NoisyMaxBatch:
    """Ding et al. CCS 2018 Alg. 5-8: ``q_i + N_i``, ``N_i`` of scale ``2/eps`` (``noise``), then per
    sample the index of the largest (``release = "argmax"``) or the largest itself (``"max"``)."""

    noise = "laplace"
    release = "argmax"  # the ndarray method applied per sample: "argmax" or "max"

    def __init__(self, epsilon: float) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.scale = 2.0 / self.epsilon

    def m(self, dataset: Sequence[float], n_samples: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        shape = (n_samples, len(q))
        if self.noise == "laplace":
            noise = np.random.laplace(0.0, self.scale, size=shape)
        else:
            noise = np.random.exponential(self.scale, size=shape)
        return getattr(q + noise, self.release)(axis=1)


class ReportNoisyMaxLaplaceBatch(_NoisyMaxBatch):
    """Ding et al. CCS 2018 Alg. 5: ``argmax_i (q_i + Lap(2/eps))``, ``n_samples`` indices."""


class ReportNoisyMaxExponentialBatch(_NoisyMaxBatch):
    """Ding et al. CCS 2018 Alg. 6: ``argmax_i (q_i + Exp(2/eps))``, ``n_samples`` indices."""

    noise = "exponential"


class NoisyMaxValueLaplaceBatch(_NoisyMaxBatch):
    """Ding et al. CCS 2018 Alg. 7 (incorrect): ``max_i (q_i + Lap(2/eps))``, ``n_samples`` values."""

    release = "max"


class NoisyMaxValueExponentialBatch(_NoisyMaxBatch):
    """Ding et al. CCS 2018 Alg. 8 (incorrect): ``max_i (q_i + Exp(2/eps))``, ``n_samples`` values."""

    noise = "exponential"
    release = "max"


class NoisyHistogramBatch:
    """Ding et al. CCS 2018 Alg. 9: ``q + Lap(1/eps)`` per bin, an ``(n_samples, k)`` array."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.scale = 1.0 / self.epsilon

    def m(self, dataset: Sequence[float], n_samples: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        return q + np.random.laplace(0.0, self.scale, size=(n_samples, len(q)))


class NoisyHistogramWrongScaleBatch(NoisyHistogramBatch):
    """Ding et al. CCS 2018 Alg. 10 (incorrect): ``q + Lap(eps)`` per bin."""

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon)
        self.scale = self.epsilon


class _SparseVectorBatch:
    """Lyu, Su, Li VLDB 2017 at ``c = 1``, vectorised: every comparison at once as a boolean mask, then
    an abort loop over the columns writes ``True`` / ``False`` (or Algorithm 3's noisy answer) until a
    sample's run stops, and leaves ``None`` after it. Subclasses set the paper's scales and ``T``."""

    variant: int
    T: float = 1.0  # noqa: N815 -- the paper's symbol
    strict: bool = False
    cutoff: bool = True

    def __init__(self, epsilon: float, rho_scale: float, nu_scale: float | None) -> None:
        self.epsilon = epsilon
        self.rho_scale = rho_scale
        self.nu_scale = nu_scale

    def m(self, dataset: Sequence[float], n_samples: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        k = len(q)
        rho = np.random.laplace(0.0, self.rho_scale, size=n_samples)
        if self.nu_scale is None:
            noisy = np.broadcast_to(q, (n_samples, k))
        else:
            noisy = q + np.random.laplace(0.0, self.nu_scale, size=(n_samples, k))
        level = (self.T + rho)[:, None]
        above = (noisy > level) if self.strict else (noisy >= level)
        if not self.cutoff:
            return above
        out = np.full((n_samples, k), None, dtype=object)
        aborted = np.zeros(n_samples, dtype=bool)
        count = np.zeros(n_samples, dtype=int)
        for col in range(k):
            hit = above[:, col] & ~aborted
            out[~above[:, col] & ~aborted, col] = False
            out[hit, col] = noisy[hit, col] if self.variant == 3 else True
            count += hit.astype(int)
            aborted = aborted | (count >= CUTOFF)
        return out


class SparseVector1Batch(_SparseVectorBatch):
    """Lyu, Su, Li Algorithm 1 (StatDP's SVT): ``rho ~ Lap(2/eps)``, ``nu ~ Lap(4/eps)``, ``T = 0.5``."""

    variant, T = 1, 0.5

    def __init__(self, epsilon: float) -> None:
        epsilon = _check_epsilon(epsilon)
        super().__init__(epsilon, 2.0 / epsilon, 4.0 / epsilon)


class SparseVector2Batch(_SparseVectorBatch):
    """Lyu, Su, Li Algorithm 2 (Dwork-Roth): ``rho ~ Lap(2/eps)`` (refreshed after a ⊤: never at c = 1),
    ``nu ~ Lap(4/eps)``."""

    variant = 2

    def __init__(self, epsilon: float) -> None:
        epsilon = _check_epsilon(epsilon)
        super().__init__(epsilon, 2.0 / epsilon, 4.0 / epsilon)


class SparseVector3Batch(_SparseVectorBatch):
    """Lyu, Su, Li Algorithm 3 (StatDP's iSVT4, incorrect): releases ``q_i + nu_i``, ``nu ~ Lap(2/eps)``, ``>``."""

    variant, strict = 3, True

    def __init__(self, epsilon: float) -> None:
        epsilon = _check_epsilon(epsilon)
        super().__init__(epsilon, 2.0 / epsilon, 2.0 / epsilon)


class SparseVector4Batch(_SparseVectorBatch):
    """Lyu, Su, Li Algorithm 4 (StatDP's iSVT3, incorrect): ``rho ~ Lap(4/eps)``, ``nu ~ Lap(4/(3 eps))``, ``>``."""

    variant, strict = 4, True

    def __init__(self, epsilon: float) -> None:
        epsilon = _check_epsilon(epsilon)
        super().__init__(epsilon, 4.0 / epsilon, 4.0 / (3.0 * epsilon))


class SparseVector5Batch(_SparseVectorBatch):
    """Lyu, Su, Li Algorithm 5 (StatDP's iSVT1, incorrect): no query noise, no cutoff."""

    variant, cutoff = 5, False

    def __init__(self, epsilon: float) -> None:
        epsilon = _check_epsilon(epsilon)
        super().__init__(epsilon, 2.0 / epsilon, None)


class SparseVector6Batch(_SparseVectorBatch):
    """Lyu, Su, Li Algorithm 6 (StatDP's iSVT2, incorrect): ``nu ~ Lap(2/eps)``, no cutoff."""

    variant, cutoff = 6, False

    def __init__(self, epsilon: float) -> None:
        epsilon = _check_epsilon(epsilon)
        super().__init__(epsilon, 2.0 / epsilon, 2.0 / epsilon)


#: Suite name -> the class-style mechanism (``cls(epsilon).m(dataset, n_samples)``).
BATCH_CLASSES: dict[str, type] = {
    "report_noisy_max_laplace": ReportNoisyMaxLaplaceBatch,
    "report_noisy_max_exponential": ReportNoisyMaxExponentialBatch,
    "noisy_max_value_laplace": NoisyMaxValueLaplaceBatch,
    "noisy_max_value_exponential": NoisyMaxValueExponentialBatch,
    "noisy_histogram": NoisyHistogramBatch,
    "noisy_histogram_wrong_scale": NoisyHistogramWrongScaleBatch,
    "svt1": SparseVector1Batch, "svt2": SparseVector2Batch, "svt3": SparseVector3Batch,
    "svt4": SparseVector4Batch, "svt5": SparseVector5Batch, "svt6": SparseVector6Batch,
}


@dataclass(frozen=True)
class ClassProgram:
    """A class-style mechanism as a program ``(dataset, rng) -> output``: one sample, ``m(dataset, 1)[0]``,
    as a Python scalar or a tuple. ``rng`` is not used (the class draws from ``np.random``: route it with
    ``from_sampler(..., patch=["numpy.random"])``)."""

    mechanism: Any

    def __call__(self, dataset: Sequence[float], rng: Any) -> Any:
        row = self.mechanism.m(dataset, 1).tolist()[0]  # tolist: Python scalars (object entries as they are)
        return tuple(row) if isinstance(row, list) else row


def _check_name(name: str) -> None:
    if name not in SUITE_NAMES:
        raise InvalidArgument(f"name must be a benchmark mechanism, one of {list(SUITE_NAMES)}, got name={name!r}.")


def function_program(name: str, epsilon: float) -> Callable[[Sequence[float], Any], Any]:
    """The benchmark mechanism ``name`` (:data:`SUITE_NAMES`) at ``epsilon`` as ``program(dataset, rng)``.

    Raises:
        InvalidArgument: an unknown name or a bad epsilon.
    """
    _check_name(name)
    return FUNCTION_PROGRAMS[name](_check_epsilon(epsilon))


def class_program(name: str, epsilon: float) -> ClassProgram:
    """The class-style mechanism ``name`` at ``epsilon`` as ``program(dataset, rng)`` (:class:`ClassProgram`;
    verify it with ``from_sampler(program, patch=["numpy.random"])``).

    Raises:
        InvalidArgument: an unknown name or a bad epsilon.
    """
    _check_name(name)
    return ClassProgram(BATCH_CLASSES[name](_check_epsilon(epsilon)))
