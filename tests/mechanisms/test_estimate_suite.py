"""Soundness of dpverify.estimate on the whole benchmark suite, the exact engine as oracle.

Every mechanism of :data:`dpverify.mechanisms.audits.benchmark_suite.BENCHMARK` (report noisy max with
Laplace and exponential noise, noisy max value with both, the noisy histogram and its wrong-scale
variant, SVT Algorithms 1-6 of Lyu, Su, Li) is written as a numpy sampler in
``tests/mechanisms/_suite_samplers.py``. For each, on the suite's StatDP patterns at the suite's
eps = 0.7:

* the statistical lower bound never exceeds the exact eps* that ``verify_pairs`` computes on the
  same pairs (:func:`dpverify.mechanisms.audits.benchmark_suite.measure`, the suite row's own measurement):
  a bound above it would be a soundness bug of ``estimate_sampler`` (each run's bound holds with
  probability >= confidence; the seeds are fixed, so each assertion is deterministic);
* a mechanism whose exact eps* exceeds the claim by a margin (all six incorrect ones: eps* >= 1.217
  against 0.7) is VIOLATED given enough samples, and no correct one is;
* each sampler is the mechanism it claims to be: its output frequencies on one dataset agree with
  the exact distribution (every outcome of a discrete output; interval cells of a continuous one)
  within five standard errors, and a sampler with one parameter wrong is caught by the same check.

The default run uses 20,000 samples per dataset; ``-m slow`` repeats the bound at 1,000,000 and
counts how often the bound of a mechanism near its eps* exceeds it over many seeds. A power gap (not
a soundness one) found on the way is pinned as a regression: at 2,000 samples a continuous output's
bound was 0.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from dpverify import Verdict
from dpverify.checking.input_pairs import statdp_patterns
from dpverify.checking.statistical.estimate import estimate_sampler
from dpverify.mechanisms.audits.benchmark_suite import BENCHMARK, measure
from tests.mechanisms._suite_samplers import (
    SAMPLERS,
    NoisyHistogramSampler,
    NoisyMaxValueSampler,
    ReportNoisyMaxSampler,
    SparseVectorSampler,
)

EPSILON = Fraction(7, 10)  # the suite's claim (benchmark_suite.EPSILONS[0])
CLAIM = float(EPSILON)
SPECS = {spec.name: spec for spec in BENCHMARK}
NAMES = list(SPECS)
INCORRECT = [name for name in NAMES if not SPECS[name].correct]

#: Samples per dataset at which each incorrect mechanism is VIOLATED on every seed tried (30 seeds at
#: 20,000, 10 at 50,000, 4 at 1,000,000; the smallest bound seen stays >= 0.08 above the claim).
#: SVT Algorithm 3 needs the most: its leak is a joint event (index 9 and a value in [-1, 1], of
#: probability 4.4e-6), while the estimator's events on vector outputs are intervals of one
#: coordinate; on the index alone its exact eps* is 1.019, and its bound at 1,000,000 is about 0.9.
VIOLATION_SAMPLES = {
    "noisy_max_value_laplace": 20_000,
    "noisy_max_value_exponential": 20_000,
    "noisy_histogram_wrong_scale": 20_000,
    "svt3": 1_000_000,
    "svt4": 50_000,
    "svt5": 20_000,
    "svt6": 20_000,
}


#: The exact eps* of the two suite rows that take seconds to measure (svt3 about 3.6 s, svt6 about 1.8 s of CPU;
#: every other row takes under 0.4 s), as ``measure`` computes them: the default run reads these, and
#: test_recorded_exact_epsilons_are_the_suite_rows (slow) measures them again. svt3 leaks its noisy answer:
#: eps* = 5 * 0.7 = 3.5 (up to float rounding); svt6 (no cutoff) 3.0918.
RECORDED_EPSILON_STAR = {"svt3": 3.4999999999999996, "svt6": 3.0918008598676017}


@cache
def measured_epsilon(name: str) -> float:
    """The exact eps* of the suite row (``measure``: ``verify_pairs`` on StatDP's patterns at 0.7)."""
    found = measure(name, EPSILON)
    assert found.verdict is (Verdict.HOLDS if SPECS[name].correct else Verdict.VIOLATED)
    return found.epsilon_star


def exact_epsilon(name: str) -> float:
    """:func:`measured_epsilon`, or its recorded value for the rows of :data:`RECORDED_EPSILON_STAR`."""
    return RECORDED_EPSILON_STAR[name] if name in RECORDED_EPSILON_STAR else measured_epsilon(name)


@pytest.mark.slow  # about 5.5 s: the two rows the default run reads from RECORDED_EPSILON_STAR
@pytest.mark.parametrize("name", sorted(RECORDED_EPSILON_STAR))
def test_recorded_exact_epsilons_are_the_suite_rows(name):
    assert measured_epsilon(name) == pytest.approx(RECORDED_EPSILON_STAR[name], rel=1e-13)


def estimate(name: str, samples: int, seed: int, **options):
    """The suite mechanism's sampler estimated on its patterns. eps* is the ideal mechanism's, on real
    numbers, so events read the outputs' values only (``float_bits=False``): the samplers add
    double-precision noise to integers, and their float programs leak through the outputs' low bits
    (Mironov 2012), an infinite eps* that float-bit events would find."""
    spec = SPECS[name]
    return estimate_sampler(SAMPLERS[name](CLAIM), pairs=statdp_patterns(spec.k, differ=spec.differ),
                            epsilon=CLAIM, samples=samples, random_state=seed, **{"float_bits": False, **options})


def test_every_suite_mechanism_has_a_sampler():
    assert set(SAMPLERS) == set(NAMES)
    assert set(VIOLATION_SAMPLES) == set(INCORRECT)
    assert all(exact_epsilon(name) >= CLAIM + 0.5 for name in INCORRECT)  # the margin of every violation


# -- soundness: the bound never exceeds the exact eps* -----------------------------------------------


def check_bound(name: str, samples: int, seed: int, **options):
    exact = exact_epsilon(name)
    result = estimate(name, samples, seed, **options)
    bound = result.epsilon_lower_bound
    assert bound <= exact, (
        f"{name}: estimate_sampler's lower bound {bound!r} exceeds the exact eps* {exact!r} "
        f"(samples={samples}, seed={seed}, witness {result.witness})"
    )
    if SPECS[name].correct:  # eps* <= the claim: a violation would be a bound above eps*
        assert result.verdict is Verdict.UNDECIDED
    return result


@pytest.mark.parametrize("name", NAMES)
def test_bound_is_below_the_exact_epsilon(name):
    check_bound(name, 20_000, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_bound_is_below_the_exact_epsilon_with_a_million_samples(name):
    result = check_bound(name, 1_000_000, seed=1, executor="processes")
    # past every VIOLATION_SAMPLES: each incorrect mechanism is refuted
    assert (result.verdict is Verdict.VIOLATED) is (not SPECS[name].correct)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if VIOLATION_SAMPLES[n] > 100_000 else n for n in INCORRECT]
)
def test_an_incorrect_mechanism_is_violated_with_enough_samples(name):
    result = check_bound(name, VIOLATION_SAMPLES[name], seed=2)
    assert result.verdict is Verdict.VIOLATED and result.epsilon_lower_bound > CLAIM
    witness = result.witness
    assert (witness.dataset, witness.neighbor) in {
        pair for a, b in statdp_patterns(SPECS[name].k, differ=SPECS[name].differ) for pair in ((a, b), (b, a))
    }


#: The mechanisms whose bound at 20,000 samples comes within 0.1 of their eps* (the ones a too-small
#: interval or a lost union-bound factor would push over it): eps* 0.682, 0.7, 0.7 and 1.4286.
NEAR = ["report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_histogram", "noisy_histogram_wrong_scale"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NEAR)
def test_exceedances_over_many_seeds_stay_within_the_confidence(name):
    # Each run's bound exceeds eps* with probability <= 1 - confidence = 0.05, so over 100 seeds at
    # most 12 (P(Binomial(100, 0.05) >= 13) < 0.002); the Bonferroni split makes it rarer still.
    exact = exact_epsilon(name)
    bounds = [estimate(name, 20_000, seed).epsilon_lower_bound for seed in range(100, 200)]
    exceeded = [b for b in bounds if b > exact]
    assert len(exceeded) <= 12, f"{name}: {len(exceeded)} of 100 bounds above eps* = {exact}: {exceeded}"


# -- the samplers are the exact mechanisms -------------------------------------------------------------


#: One dataset per k with distinct answers (a constant one would not tell noise scales apart).
DATASETS = {5: (0, 1, 2, 1, 0), 10: (2, 0, 1, 2, 1, 0, 1, 2, 0, 1)}
CROSS_SAMPLES = 50_000
#: Interval cells of continuous outputs.
EDGES = tuple(Fraction(e) for e in (-3, -2, -1, 0, 1, 2, 3, 4, 5, 7))


def _cells(edges=EDGES) -> list[tuple[Fraction | None, Fraction | None]]:
    bounds = [None, *edges, None]
    return list(zip(bounds[:-1], bounds[1:]))


def _in_cell(values: np.ndarray, low, high) -> np.ndarray:
    inside = np.ones(values.shape, dtype=bool)
    if low is not None:
        inside &= values > float(low)
    if high is not None:
        inside &= values <= float(high)
    return inside


def exact_cells(name: str, dataset: tuple) -> dict:
    """The exact probability of each outcome (discrete outputs) or cell (continuous ones)."""
    mechanism = SPECS[name].build(EPSILON)
    if not getattr(mechanism, "continuous_output", False):
        distribution = mechanism(dataset)
        return {outcome: float(distribution[outcome]) for outcome in distribution.support}
    density = mechanism.output_density(dataset)
    if name.startswith("noisy_max_value"):
        (only,) = density.densities.values()
        return {("max", cell): float(only.integral(*cell)) for cell in _cells()}
    if name.startswith("noisy_histogram"):
        return {(i, cell): float(factor.integral(*cell)) for i, factor in enumerate(density.factors)
                for cell in _cells()}
    assert name == "svt3"  # the atom ⊥^k, and each label ⊥^i v by cells of v
    cells = {(len(dataset), None): float(sum(density.atoms.values()))}
    for label, part in density.densities.items():
        i = len(label) - 1
        assert label == "⊥" * i + "v"
        cells.update({(i, cell): float(part.integral(*cell)) for cell in _cells()})
    return cells


def sampled_cells(name: str, outputs, dataset: tuple) -> dict:
    """How many of the sampler's outputs fall in each outcome or cell of :func:`exact_cells`."""
    if not getattr(SPECS[name].build(EPSILON), "continuous_output", False):
        values = outputs.tolist() if isinstance(outputs, np.ndarray) else list(outputs)
        found: dict = {}
        for value in values:
            found[value] = found.get(value, 0) + 1
        return found
    outputs = np.asarray(outputs, dtype=float)
    if name.startswith("noisy_max_value"):
        assert outputs.shape == (CROSS_SAMPLES,)
        return {("max", cell): int(_in_cell(outputs, *cell).sum()) for cell in _cells()}
    if name.startswith("noisy_histogram"):
        assert outputs.shape == (CROSS_SAMPLES, len(dataset))
        return {(i, cell): int(_in_cell(outputs[:, i], *cell).sum()) for i in range(len(dataset)) for cell in _cells()}
    assert outputs.shape == (CROSS_SAMPLES, 2)
    index, value = outputs[:, 0], outputs[:, 1]
    none = index == len(dataset)
    assert np.all(np.isneginf(value[none])) and np.all(np.isfinite(value[~none]))
    cells = {(len(dataset), None): int(none.sum())}
    for i in range(len(dataset)):
        cells.update({(i, cell): int((_in_cell(value, *cell) & (index == i)).sum()) for cell in _cells()})
    return cells


def discrepancies(name: str, sampler, seed: int = 0) -> list[str]:
    """The outcomes or cells where the sampler's frequency is more than five standard errors (plus
    2/n) from the exact probability, or that the exact mechanism cannot output."""
    dataset = DATASETS[SPECS[name].k]
    exact = exact_cells(name, dataset)
    coordinates = len(dataset) if name.startswith("noisy_histogram") else 1  # a histogram's cells: per bin
    assert math.isclose(sum(exact.values()), coordinates, abs_tol=1e-9)
    counts = sampled_cells(name, sampler(dataset, np.random.default_rng(seed), size=CROSS_SAMPLES), dataset)
    assert sum(counts.values()) == coordinates * CROSS_SAMPLES
    found = [f"{outcome!r}: sampled {count} times, not an output of the exact mechanism"
             for outcome, count in counts.items() if count and outcome not in exact]
    n = CROSS_SAMPLES
    for outcome, p in exact.items():
        frequency = counts.get(outcome, 0) / n
        if abs(frequency - p) > 5 * math.sqrt(p * (1 - p) / n) + 2 / n:
            found.append(f"{outcome!r}: frequency {frequency:.5f}, exact {p:.5f}")
    return found


@pytest.mark.parametrize("name", NAMES)
def test_the_sampler_has_the_exact_distribution(name):
    assert discrepancies(name, SAMPLERS[name](CLAIM)) == []


@pytest.mark.parametrize(("name", "wrong"), [
    ("report_noisy_max_laplace", ReportNoisyMaxSampler(CLAIM, "laplace", scale_factor=1.0)),
    ("report_noisy_max_exponential", ReportNoisyMaxSampler(CLAIM, "laplace")),
    ("noisy_max_value_laplace", NoisyMaxValueSampler(CLAIM, "laplace", scale_factor=1.0)),
    ("noisy_max_value_exponential", NoisyMaxValueSampler(CLAIM, "laplace")),
    ("noisy_histogram", NoisyHistogramSampler(CLAIM, wrong_scale=True)),
    ("svt1", SparseVectorSampler(CLAIM, 1, T=1.0)),  # Algorithm 2's threshold (the same at c = 1 otherwise)
    ("svt2", SparseVectorSampler(CLAIM, 2, T=0.5)),
    ("svt3", SparseVectorSampler(CLAIM, 3, T=0.5)),
    ("svt4", SparseVectorSampler(CLAIM, 2)),  # Algorithm 2's noise scales
    ("svt5", SparseVectorSampler(CLAIM, 6)),  # query noise added
    ("svt6", SparseVectorSampler(CLAIM, 6, T=0.5)),
    ("svt6", SparseVectorSampler(CLAIM, 1)),  # a cutoff: shorter answer strings
])
def test_a_sampler_with_a_wrong_parameter_is_caught(name, wrong):
    assert discrepancies(name, wrong) != []


# -- power (not soundness): a known gap -------------------------------------------------------------


# Regression: with samples <= 2 * DISCRETE_CAP (a selection half of <= 1000 draws) a continuous output's
# 1000 distinct values got outcome events, whose unions won the selection and never recurred on the test
# half: the bound was 0 (sound, but vacuous) at 2,000 samples, 1.04 and 1.19 at 2,002. Outcome events now
# need values that repeat (each drawn twice on average).
@pytest.mark.parametrize("name", ["noisy_max_value_laplace", "noisy_histogram_wrong_scale"])
def test_a_continuous_output_is_refuted_at_two_thousand_samples(name):
    assert estimate(name, 2_002, seed=0).verdict is Verdict.VIOLATED  # one more draw per half
    assert estimate(name, 2_000, seed=0).verdict is Verdict.VIOLATED
