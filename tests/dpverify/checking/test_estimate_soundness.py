"""Soundness of the statistical mode over many seeds: the bound exceeds the truth no more often than
the confidence allows.

``estimate_sampler`` promises that with probability at least ``confidence`` every bound of a run holds,
so the reported lower bound exceeds the mechanism's true eps* on the run's pairs with probability at most
``1 - confidence``. Over ``runs`` independent seeds the number of exceedances is then stochastically
below ``Binomial(runs, 1 - confidence)``; :func:`allowance` is the count that binomial exceeds with
probability at most :data:`TAIL` (the one-sided three-sigma tail), and more exceedances than that is a
soundness bug (a lost union-bound factor, an interval too short, a selection half reused for testing),
not bad luck. The truth is the exact eps* of the benchmark suite
(:func:`dpverify.mechanisms.audits.benchmark_suite.measure`, as recorded in reports/audit.json), each
mechanism run as its numpy sampler (:mod:`dpverify.mechanisms.suite_samplers`) on the same pairs.

The slow tests run every suite mechanism with a finite eps* (ten of twelve) over 40 seeds at 20,000
samples and 10 seeds under a 2-second time budget (the engine's schedule of rounds), the three whose bound comes closest to eps* at
confidence 0.8, and randomized response, whose bound does exceed its eps* now and then; the default
run has a twin on those three (3 seeds, 5,000 samples) and a mutant, a sampler whose eps* is twice the
stated one, whose exceedances must break the allowance.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpverify.checking.input_pairs import statdp_patterns
from dpverify.checking.statistical.estimate import estimate_sampler
from dpverify.mechanisms.audits.benchmark_suite import BENCHMARK, measure
from dpverify.mechanisms.suite_samplers import ReportNoisyMaxSampler, suite_sampler

EPSILON = Fraction(7, 10)
CLAIM = float(EPSILON)
SPECS = {spec.name: spec for spec in BENCHMARK}
CONFIDENCE = 0.95
#: The one-sided tail of three standard deviations, 1 - Phi(3) = 0.00135.
TAIL = 0.00135

#: The exact eps* of every suite mechanism at eps = 0.7 on StatDP's patterns with a finite one, as
#: ``measure(name, Fraction(7, 10))`` gives it (reports/audit.json, claim BENCH; noisy max value with
#: exponential noise and SVT 5 have eps* = inf: no bound can exceed it).
EPSILON_STAR = {
    "report_noisy_max_laplace": 0.6818829515678334,
    "report_noisy_max_exponential": 0.7,
    "noisy_max_value_laplace": 1.75,  # k eps / 2 = 5 * 0.7 / 2
    "noisy_histogram": 0.7,
    "noisy_histogram_wrong_scale": 1.4285714285714286,  # 1 / eps = 1 / 0.7
    "svt1": 0.6429393957585509,
    "svt2": 0.6320721452617947,
    "svt3": 3.4999999999999996,  # 5 * 0.7, up to float rounding
    "svt4": 1.217348056717189,
    "svt6": 3.0918008598676017,
}
#: The three whose bound comes closest to eps* (bound / eps* of 0.94-0.97 at 100,000 samples).
NEAR = ("report_noisy_max_laplace", "noisy_histogram", "noisy_histogram_wrong_scale")


def allowance(runs: int, miss: float, tail: float = TAIL) -> int:
    """The smallest ``m`` with ``P(Binomial(runs, miss) > m) <= tail``: the most exceedances a sound
    engine shows except with probability ``tail``."""
    assert 0 < miss < 1 and runs >= 1, (runs, miss)
    below = 0.0
    for m in range(runs + 1):
        below += math.comb(runs, m) * miss**m * (1 - miss) ** (runs - m)
        if 1 - below <= tail:
            return m
    return runs


def test_allowance_is_the_binomial_tail():
    # Binomial(20, 0.05): P(X <= 4) = 0.35849 + 0.37735 + 0.18868 + 0.05958 + 0.01333 = 0.99743, so
    # P(X > 4) = 0.00257 > 0.00135; P(X = 5) = 15504 * 0.05^5 * 0.95^15 = 0.00224, P(X > 5) = 0.00032.
    assert allowance(20, 0.05) == 5
    # Binomial(9, 0.05): P(X > 2) = 1 - (0.63025 + 0.29853 + 0.06285) = 0.00837; P(X = 3) = 0.00772,
    # P(X > 3) = 0.00065.
    assert allowance(9, 0.05) == 3
    assert allowance(1, 0.5) == 1  # P(X > 0) = 0.5: only m = runs is safe
    # the normal approximation runs x miss + 3 sd is close for 200 runs: 10 + 3 * 3.08 = 19.2
    assert 19 <= allowance(200, 0.05) <= 22


@pytest.mark.parametrize("name", ["report_noisy_max_laplace", "noisy_histogram_wrong_scale", "svt1"])
def test_recorded_epsilon_star_is_measured(name):
    assert measure(name, EPSILON).epsilon_star == pytest.approx(EPSILON_STAR[name], rel=1e-12)


@pytest.mark.slow  # about 6 s: svt3's exact density takes 3 s
@pytest.mark.parametrize("name", sorted(set(EPSILON_STAR) - {"report_noisy_max_laplace", "noisy_histogram_wrong_scale", "svt1"}))
def test_recorded_epsilon_star_is_measured_slow(name):
    assert measure(name, EPSILON).epsilon_star == pytest.approx(EPSILON_STAR[name], rel=1e-12)


def test_every_finite_suite_mechanism_is_covered():
    assert set(EPSILON_STAR) | {"noisy_max_value_exponential", "svt5"} == set(SPECS)


def exceedances(names, seeds, confidence: float = CONFIDENCE, sampler=None, **options) -> tuple[int, list[str]]:
    """Runs and the description of every run whose bound exceeds the exact eps* (``sampler``: run this
    one instead of the named mechanism's, for the mutant; ``options``: ``samples=``, none for the default)."""
    runs, above = 0, []
    for name in names:
        spec = SPECS[name]
        pairs = statdp_patterns(spec.k, differ=spec.differ)
        for seed in seeds:
            result = estimate_sampler(suite_sampler(name, CLAIM) if sampler is None else sampler, pairs=pairs,
                                      epsilon=CLAIM, confidence=confidence, random_state=seed, **options)
            runs += 1
            # eps* is the ideal mechanism's, on real numbers: the bound from events on the outputs' values.
            # (Events on their float bits measure the float program, whose outputs q + noise leak the
            # input through their low bits, Mironov 2012: its eps* is infinite, so no such bound exceeds it.)
            if result.value_epsilon_lower_bound > EPSILON_STAR[name]:
                above.append(f"{name} seed {seed}: bound {result.value_epsilon_lower_bound!r} > eps* "
                             f"{EPSILON_STAR[name]!r} ({result.tested})")
    return runs, above


def test_bounds_exceed_epsilon_star_within_the_confidence():
    runs, above = exceedances(NEAR, range(3), samples=5_000)
    assert runs == 9 and len(above) <= allowance(runs, 1 - CONFIDENCE), above  # at most 3 of 9


def test_a_sampler_above_its_stated_epsilon_star_is_caught():
    # Mutant: report noisy max with Lap(1/eps) instead of Lap(2/eps) (eps* about twice 0.682) counted
    # against the correct mechanism's eps*: its bounds exceed it on every run (9 of 9), past the allowance of 3.
    mutant = ReportNoisyMaxSampler(CLAIM, scale_factor=1.0)
    runs, above = exceedances(["report_noisy_max_laplace"], range(9), sampler=mutant, samples=5_000)
    assert runs == 9 and len(above) > allowance(runs, 1 - CONFIDENCE), above


@pytest.mark.slow  # about 20 s on 2 cores
def test_bounds_exceed_epsilon_star_within_the_confidence_on_the_whole_suite():
    # 40 seeds each at 20,000 samples: measured no exceedance at all (largest bound / eps* 0.979,
    # noisy_histogram_wrong_scale; svt3 at most 0.23)
    per_mechanism = allowance(40, 1 - CONFIDENCE)
    runs, above = 0, []
    for name in EPSILON_STAR:
        found_runs, found = exceedances([name], range(1000, 1040), samples=20_000)
        assert len(found) <= per_mechanism, found
        runs, above = runs + found_runs, above + found
    assert runs == 400 and len(above) <= allowance(runs, 1 - CONFIDENCE), above


@pytest.mark.slow  # about 200 s on 2 cores: 100 runs of 2 s
def test_bounds_exceed_epsilon_star_within_the_confidence_under_a_time_budget():
    # the engine's default mode, rounds under a time budget (10 s by default; 2 s here, for 100 runs)
    runs, above = exceedances(list(EPSILON_STAR), range(3000, 3010), time_budget=2)
    assert runs == 100 and len(above) <= allowance(runs, 1 - CONFIDENCE), above


@pytest.mark.slow
def test_bounds_exceed_epsilon_star_within_a_low_confidence():
    # At confidence 0.8 a run may exceed with probability 0.2: over 3 x 14 = 42 runs more than
    # allowance(42, 0.2) = 17 exceedances would show the bounds too optimistic where they are easiest to push over.
    runs, above = exceedances(NEAR, range(2000, 2014), samples=20_000, confidence=0.8)
    assert runs == 42 and len(above) <= allowance(runs, 0.2), above


def randomized_response(dataset, rng, size):
    """One bit, 1 with probability p = e^0.7 / (1 + e^0.7) on (1,) and 1 - p on (0,): eps* = ln(p / (1 - p)) = 0.7."""
    p = math.exp(CLAIM) / (1 + math.exp(CLAIM))
    return (rng.random(size) < (p if dataset[0] == 1 else 1 - p)).astype(np.int64)


@pytest.mark.slow  # 0.2 s
def test_bounds_at_the_boundary_exceed_within_the_confidence():
    # Randomized response is at its eps* on the event {1} itself, so its bounds do exceed it now and then:
    # measured 3 of 200 runs at confidence 0.8 (16 of 200 at 0.5), against allowance(200, 0.2).
    runs, above = 0, 0
    for seed in range(200):
        result = estimate_sampler(randomized_response, pairs=[((1,), (0,))], epsilon=CLAIM, samples=2_000,
                                  confidence=0.8, random_state=seed)
        runs, above = runs + 1, above + (result.epsilon_lower_bound > CLAIM)
    assert above <= allowance(runs, 0.2)
