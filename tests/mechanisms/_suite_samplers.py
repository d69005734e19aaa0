"""The benchmark suite's twelve mechanisms (:mod:`dpverify.mechanisms.audits.benchmark_suite`) as numpy samplers.

Each sampler is ``sampler(dataset, rng, size)``: ``size`` independent outputs of the mechanism on
the query answers ``dataset``, drawn from the :class:`numpy.random.Generator` ``rng``, in the
output encoding of the exact mechanism (its noise scales restated from the papers, not read off the
exact objects, so that the cross-check in ``test_estimate_suite.py`` compares two implementations).
Report noisy max, noisy max value and the histogram are the shipped samplers of
:mod:`dpverify.mechanisms.suite_samplers` (the same encoding); the sparse vector sampler here is a
second implementation in the exact mechanism's own encoding, the answer string (the shipped one
encodes answers as numbers, for the bench):

* report noisy max (Ding et al. CCS 2018 Alg. 5 / 6): ``argmax_i (q_i + N_i)``, ``N_i`` ~
  ``Lap(2/eps)`` or the one-sided ``Exp(2/eps)``; the index, ``0 .. k-1``, as
  :class:`dpverify.mechanisms.noisy_max.ReportNoisyMax`;
* noisy max value (Alg. 7 / 8, incorrect): ``max_i (q_i + N_i)``, a float, as
  :class:`dpverify.mechanisms.noisy_max.NoisyMaxValue`'s single density ``"max"``;
* noisy histogram (Alg. 9 / 10): ``q + Lap(1/eps)^k`` (or the incorrect ``Lap(eps)``), the whole
  noisy vector (a ``(size, k)`` array), as :class:`dpverify.mechanisms.noisy_max.NoisyHistogram`;
* sparse vector, Lyu, Su, Li VLDB 2017 Algorithms 1-6 (:mod:`dpverify.mechanisms.sparse_vector`): the
  answer string of ``⊤``/``⊥`` (``str``, e.g. ``"⊥⊥⊤"``; the run stops after the ``c``-th ``⊤``
  for Algorithms 1-4, Algorithms 5 and 6 answer all ``k`` queries), with the suite's ``c = 1``
  and threshold ``T = 0.5`` for Algorithm 1 and ``T = 1`` otherwise. Algorithm 3 (``c = 1``)
  releases the noisy answer ``q_i + nu_i`` of the first query above the threshold instead of
  ``⊤``: the exact mechanism's outcome ``⊥^i v`` (label ``"⊥" * i + "v"`` with the value ``v``) is
  the row ``(i, v)`` here, and its atom ``⊥^k`` the row ``(k, -inf)`` (numbers only, so that the
  estimator reads the outputs as vectors and chooses interval events on each coordinate).

Scales (Delta = 1; ``eps_1 = eps/2`` except Algorithm 4's ``eps/4``): threshold noise ``rho`` ~
``Lap(2/eps)`` (Algorithm 2: ``Lap(2c/eps)``, refreshed after each ``⊤``; Algorithm 4:
``Lap(4/eps)``), query noise ``nu_i`` ~ ``Lap(4c/eps)`` (Alg. 1, 2), ``Lap(2c/eps)`` (Alg. 3),
``Lap(4/(3 eps))`` (Alg. 4), none (Alg. 5), ``Lap(2/eps)`` (Alg. 6); query ``i`` is ``⊤`` when
``q_i + nu_i >= T + rho``.

The classes are module-level and picklable (a process pool can run them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.mechanisms.suite_samplers import NoisyHistogramSampler, NoisyMaxValueSampler, ReportNoisyMaxSampler

__all__ = ["ReportNoisyMaxSampler", "NoisyMaxValueSampler", "NoisyHistogramSampler", "SparseVectorSampler",
           "SAMPLERS", "TOP", "BOTTOM"]

TOP, BOTTOM = "⊤", "⊥"


@dataclass(frozen=True)
class SparseVectorSampler:
    """Lyu, Su, Li (VLDB 2017) Algorithm ``variant`` (1-6), cutoff ``c``, public threshold ``T``
    (None: the suite's 0.5 for Algorithm 1, 1 otherwise); see the module docstring for the scales
    and the output encoding."""

    epsilon: float
    variant: int = 1
    c: int = 1
    T: float | None = None

    def __post_init__(self) -> None:
        if self.variant not in (1, 2, 3, 4, 5, 6):
            raise ValueError(f"variant must be 1-6, got {self.variant!r}")
        if self.variant == 3 and self.c != 1:
            raise ValueError("Algorithm 3 is sampled for c = 1 (one released value), as the exact mechanism")

    @property
    def threshold(self) -> float:
        return (0.5 if self.variant == 1 else 1.0) if self.T is None else float(self.T)

    def scales(self) -> tuple[float, float | None]:
        """``(scale of rho, scale of nu)``; None: no query noise."""
        eps, c = self.epsilon, self.c
        return {
            1: (2 / eps, 4 * c / eps),
            2: (2 * c / eps, 4 * c / eps),
            3: (2 / eps, 2 * c / eps),
            4: (4 / eps, 4 / (3 * eps)),
            5: (2 / eps, None),
            6: (2 / eps, 2 / eps),
        }[self.variant]

    def __call__(self, dataset, rng, size):
        q = np.asarray(dataset, dtype=float)
        k = q.size
        rho_scale, nu_scale = self.scales()
        cutoff = None if self.variant in (5, 6) else self.c
        rho = rng.laplace(0.0, rho_scale, size)
        noisy = q + (rng.laplace(0.0, nu_scale, (size, k)) if nu_scale is not None else np.zeros((size, k)))
        # codes[r, i]: 0 = ⊥, 1 = ⊤, 2 = not asked (the run had stopped)
        codes = np.full((size, k), 2, dtype=np.int64)
        released = np.full((size, 2), [k, -np.inf])  # Algorithm 3: (index, noisy answer) or (k, -inf)
        tops = np.zeros(size, dtype=np.int64)
        for i in range(k):
            active = tops < cutoff if cutoff is not None else np.ones(size, dtype=bool)
            top = noisy[:, i] >= self.threshold + rho
            codes[active, i] = top[active]
            hit = active & top
            if self.variant == 3:
                released[hit, 0] = i
                released[hit, 1] = noisy[hit, i]
            tops += hit
            if self.variant == 2:  # a fresh threshold noise after each ⊤
                rho = np.where(hit, rng.laplace(0.0, rho_scale, size), rho)
        if self.variant == 3:
            return released
        return _strings(codes)


def _strings(codes: np.ndarray) -> list[str]:
    """Each row of codes (0 ⊥, 1 ⊤, 2 absent) as its answer string."""
    keys = codes @ (3 ** np.arange(codes.shape[1], dtype=np.int64))
    distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    names = np.empty(distinct.size, dtype=object)
    for n, row in enumerate(first.tolist()):
        names[n] = "".join(TOP if a == 1 else BOTTOM for a in codes[row].tolist() if a != 2)
    return names[inverse.ravel()].tolist()


#: suite name -> the sampler at eps (a float).
SAMPLERS = {
    "report_noisy_max_laplace": lambda e: ReportNoisyMaxSampler(e, "laplace"),
    "report_noisy_max_exponential": lambda e: ReportNoisyMaxSampler(e, "exponential"),
    "noisy_max_value_laplace": lambda e: NoisyMaxValueSampler(e, "laplace"),
    "noisy_max_value_exponential": lambda e: NoisyMaxValueSampler(e, "exponential"),
    "noisy_histogram": lambda e: NoisyHistogramSampler(e),
    "noisy_histogram_wrong_scale": lambda e: NoisyHistogramSampler(e, wrong_scale=True),
    **{f"svt{v}": (lambda e, v=v: SparseVectorSampler(e, v)) for v in (1, 2, 3, 4, 5, 6)},
}
