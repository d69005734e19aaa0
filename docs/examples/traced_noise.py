"""traced_noise.py: Laplace noise in plain numpy, decided exactly as written.

Run with `python traced_noise.py` (docs/guide/samplers.md, "Continuous noise, traced exactly").
"""

import numpy as np

import dpverify

EPSILON = 0.7


def report_noisy_max(dataset: tuple[int, ...], rng: np.random.RandomState) -> int:  # Ding et al. 2018, Alg. 5
    q = np.asarray(dataset, dtype=float)
    noisy = q + rng.laplace(scale=2.0 / EPSILON, size=len(q))
    return int(np.argmax(noisy))


def report_noisy_max_broken(dataset: tuple[int, ...], rng: np.random.RandomState) -> int:  # the scale halved
    q = np.asarray(dataset, dtype=float)
    noisy = q + rng.laplace(scale=1.0 / EPSILON, size=len(q))
    return int(np.argmax(noisy))


pairs, claim = dpverify.InputPairs.statdp(5), dpverify.PureDp(EPSILON)
print(dpverify.verify(dpverify.from_sampler(report_noisy_max), pairs, claim).summary())
print(dpverify.verify(dpverify.from_sampler(report_noisy_max_broken), pairs, claim).summary())

bit = dpverify.Datasets([0, 1], n=1)
laplace = dpverify.from_sampler(lambda D, rng: D[0] + rng.laplace(scale=2.0))  # releases a real number
print(dpverify.verify(laplace, bit, dpverify.PureDp(0.5)).summary())
too_little = dpverify.from_sampler(lambda D, rng: D[0] + rng.laplace(scale=1.0))
result = dpverify.verify(too_little, bit, dpverify.PureDp(0.5))
print(f"scale 1.0: {result.verdict.name}, eps* = {result.epsilon:.6g}")
