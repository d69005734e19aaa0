"""mechanisms/suite_samplers.py: each numpy sampler is the exact mechanism it re-implements.

For each of the twelve benchmark mechanisms, ``CROSS_SAMPLES`` draws on one dataset with distinct
answers (a constant one would not tell noise scales apart) are compared with the exact mechanism of
:data:`dpverify.mechanisms.audits.benchmark_suite.BENCHMARK` (the same objects ``measure`` builds):

* discrete outputs: every outcome's frequency within five standard errors (plus ``1/n``) of its exact
  probability (``mechanism(dataset)``, an exact distribution), and no outcome the mechanism cannot give;
* real outputs: the empirical CDF at a few points against the exact CDF (``output_density``'s integral;
  for the histogram the Laplace CDF per coordinate in closed form), same tolerance.

A sampler with one parameter wrong (a scale, a threshold, the noise) fails the same comparison. The
float pair is checked against closed forms: the naive mechanism's CDF is the Laplace CDF, its float
structure differs between the inputs (Sterbenz), and the snapping mechanism puts on each multiple of
``Lambda`` the Laplace mass of the cell that rounds to it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpverify.errors import InvalidArgument
from dpverify.mechanisms.audits.benchmark_suite import BENCHMARK
from dpverify.mechanisms.suite_samplers import (
    SUITE_SAMPLERS,
    FloatLaplaceSampler,
    NoisyHistogramSampler,
    NoisyMaxValueSampler,
    ReportNoisyMaxSampler,
    SnappingLaplaceSampler,
    SparseVectorSampler,
    full_precision_uniform,
    suite_sampler,
)

EPSILON = Fraction(7, 10)  # the suite's claim
CLAIM = float(EPSILON)
SPECS = {spec.name: spec for spec in BENCHMARK}
CROSS_SAMPLES = 40_000
DATASETS = {5: (0, 1, 2, 1, 0), 10: (2, 0, 1, 2, 1, 0, 1, 2, 0, 1)}
#: Where the empirical CDFs are compared with the exact ones.
POINTS = tuple(Fraction(x) for x in (-3, -1, 0, 1, 2, 3, 4, 6))


def laplace_cdf(x: float, location: float, scale: float) -> float:
    """``P(location + Lap(scale) <= x)``: ``e^((x - loc)/b) / 2`` below the location, ``1 - e^(-(x - loc)/b) / 2`` above."""
    z = (x - location) / scale
    return 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)


def _label(name: str, output, k: int):
    """The exact mechanism's outcome for one sampler output (the encodings of the module docstring)."""
    if name.startswith("report_noisy_max"):
        return int(output)
    if name in ("svt1", "svt2", "svt4"):  # first-⊤ index i -> "⊥"*i + "⊤"; k -> "⊥"*k
        return "⊥" * k if output == k else "⊥" * int(output) + "⊤"
    assert name in ("svt5", "svt6")
    return "".join("⊤" if answer == 1 else "⊥" for answer in output)


def _exact_and_sampled(name: str, sampler) -> list[tuple[str, float, float]]:
    """``(what, exact probability, sampled frequency)`` for every outcome or CDF point."""
    k = SPECS[name].k
    dataset = DATASETS[k]
    mechanism = SPECS[name].build(EPSILON)
    outputs = sampler(dataset, np.random.default_rng(0), size=CROSS_SAMPLES)
    n = CROSS_SAMPLES
    if not getattr(mechanism, "continuous_output", False):
        exact = mechanism(dataset)
        counts: dict = {}
        for output in outputs.tolist():
            label = _label(name, output, k)
            counts[label] = counts.get(label, 0) + 1
        rows = [(repr(o), 0.0, c / n) for o, c in counts.items() if o not in exact.support]  # impossible outputs
        return rows + [(repr(o), float(exact[o]), counts.get(o, 0) / n) for o in exact.support]
    density = mechanism.output_density(dataset)
    if name.startswith("noisy_max_value"):
        assert outputs.shape == (n,)
        (only,) = density.densities.values()
        return [(f"P(max <= {x})", float(only.integral(None, x)), float(np.mean(outputs <= float(x)))) for x in POINTS]
    if name.startswith("noisy_histogram"):
        assert outputs.shape == (n, k)
        scale = CLAIM if name.endswith("wrong_scale") else 1 / CLAIM
        return [(f"P(bin {i} <= {x})", laplace_cdf(float(x), q, scale), float(np.mean(outputs[:, i] <= float(x))))
                for i, q in enumerate(dataset) for x in POINTS]
    assert name == "svt3" and outputs.shape == (n, 2)
    index, value = outputs[:, 0], outputs[:, 1]
    none = index == k
    assert np.all(value[none] == 0.0)  # the encoding of "no ⊤": [k, 0.0]
    assert set(np.unique(index).tolist()) <= set(range(k + 1))
    rows = [("P(no ⊤)", float(sum(density.atoms.values())), float(np.mean(none)))]
    for label, part in density.densities.items():
        i = len(label) - 1
        assert label == "⊥" * i + "v"
        rows += [(f"P(first ⊤ at {i}, answer <= {x})", float(part.integral(None, x)),
                  float(np.mean((index == i) & (value <= float(x))))) for x in POINTS]
    return rows


def discrepancies(name: str, sampler) -> list[str]:
    """The outcomes or CDF points where the frequency is more than five standard errors (plus 1/n) off."""
    n = CROSS_SAMPLES
    return [f"{what}: sampled {frequency:.5f}, exact {p:.5f}" for what, p, frequency in _exact_and_sampled(name, sampler)
            if abs(frequency - p) > 5 * math.sqrt(p * (1 - p) / n) + 1 / n]


def test_every_suite_mechanism_has_a_sampler():
    assert list(SUITE_SAMPLERS) == [spec.name for spec in BENCHMARK]


@pytest.mark.parametrize("name", list(SPECS))
def test_the_sampler_has_the_exact_distribution(name):
    assert discrepancies(name, suite_sampler(name, CLAIM)) == []


@pytest.mark.parametrize(("name", "wrong"), [
    ("report_noisy_max_laplace", ReportNoisyMaxSampler(CLAIM, "laplace", scale_factor=1.0)),
    ("report_noisy_max_exponential", ReportNoisyMaxSampler(CLAIM, "laplace")),
    ("noisy_max_value_laplace", NoisyMaxValueSampler(CLAIM, "laplace", scale_factor=1.0)),
    ("noisy_max_value_exponential", NoisyMaxValueSampler(CLAIM, "laplace")),
    ("noisy_histogram", NoisyHistogramSampler(CLAIM, wrong_scale=True)),
    ("noisy_histogram_wrong_scale", NoisyHistogramSampler(CLAIM)),
    ("svt1", SparseVectorSampler(CLAIM, 1, T=1.0)),  # Algorithm 2's threshold
    ("svt2", SparseVectorSampler(CLAIM, 2, T=0.5)),
    ("svt3", SparseVectorSampler(CLAIM, 3, T=0.5)),
    ("svt4", SparseVectorSampler(CLAIM, 2)),  # Algorithm 2's scales, same T = 1
    ("svt5", SparseVectorSampler(CLAIM, 6)),  # query noise Lap(2/eps) added
    ("svt6", SparseVectorSampler(CLAIM, 6, T=0.5)),
])
def test_a_sampler_with_a_wrong_parameter_is_caught(name, wrong):
    assert discrepancies(name, wrong) != []


def test_suite_sampler_refuses_an_unknown_name_or_epsilon():
    with pytest.raises(InvalidArgument, match="name='svt7'"):
        suite_sampler("svt7", CLAIM)
    with pytest.raises(InvalidArgument, match="epsilon=0"):
        suite_sampler("svt1", 0)
    with pytest.raises(InvalidArgument, match="variant=7"):
        SparseVectorSampler(CLAIM, 7)


# -- the float pair --------------------------------------------------------------------------------------


def test_the_naive_float_laplace_has_the_laplace_cdf():
    # scale 1/eps = 10 at eps = 0.1, around loc = 1.0
    points = (-20.0, -5.0, 0.0, 1.0, 3.0, 15.0)
    for sampler, caught in ((FloatLaplaceSampler(0.1), False), (FloatLaplaceSampler(0.2), True)):  # mutant: scale 5
        outputs = sampler((1.0,), np.random.default_rng(0), size=CROSS_SAMPLES)
        off = [x for x in points if abs(np.mean(outputs <= x) - laplace_cdf(x, 1.0, 10.0))
               > 5 * math.sqrt(0.25 / CROSS_SAMPLES)]
        assert bool(off) is caught, (sampler, off)


def _multiples_of_2_to_minus_53(values: np.ndarray) -> float:
    scaled = np.ldexp(values, 53)  # exact: a power-of-two scaling
    return float(np.mean(scaled == np.floor(scaled)))


def test_the_naive_float_laplace_outputs_floats_that_depend_on_the_input():
    # An output in (0, 0.5) from loc = 1.0 is 1 + x with x in (-1, -0.5): by Sterbenz's lemma 1 - |x| is
    # exact, and |x| in (0.5, 1) is a multiple of its ulp 2^-53, so every such output is one too. From
    # loc = 0.0 the output is x itself, of ulp down to 2^-105 there: measured 0.43 of them are multiples.
    sampler = FloatLaplaceSampler(0.1)
    one, zero = (sampler((loc,), np.random.default_rng(0), size=CROSS_SAMPLES) for loc in (1.0, 0.0))
    inside_one, inside_zero = one[(one > 0) & (one < 0.5)], zero[(zero > 0) & (zero < 0.5)]
    # about n * P(Lap(10) in (-1, -0.5)) = 40,000 * (e^-0.05 - e^-0.1) / 2 = 928 and n * (1 - e^-0.05) / 2 = 975
    assert inside_one.size > 800 and inside_zero.size > 800
    assert _multiples_of_2_to_minus_53(inside_one) == 1.0
    assert _multiples_of_2_to_minus_53(inside_zero) < 0.6


def test_full_precision_uniform_has_every_double_of_0_1():
    u = full_precision_uniform(np.random.default_rng(1), CROSS_SAMPLES)
    assert np.all((u > 0) & (u < 1))
    for j in (1, 2, 3, 4):  # P(U < 2^-j) = 2^-j
        p = 2.0**-j
        assert abs(np.mean(u < p) - p) <= 5 * math.sqrt(p * (1 - p) / CROSS_SAMPLES)
    # Below 2^-8 a double of [2^-e, 2^(1-e)) (e >= 9) has ulp 2^(-e-52): a multiple of 2^-53 with
    # probability 2^-(e-1) <= 2^-8. numpy's random() (the mutant) gives multiples of 2^-53 only.
    small = u[u < 2.0**-8]
    assert small.size > 100 and _multiples_of_2_to_minus_53(small) < 0.1
    coarse = np.random.default_rng(1).random(CROSS_SAMPLES)
    assert _multiples_of_2_to_minus_53(coarse[coarse < 2.0**-8]) == 1.0


def snapping_distribution(loc: float, mechanism: SnappingLaplaceSampler) -> dict[float, float]:
    """Exact output law: ``j Lambda`` gets ``P(loc + Lap(lambda) in [(j - 1/2) Lambda, (j + 1/2) Lambda))``;
    the mass rounding beyond ``[-B, B]`` is clamped onto ``-B`` and ``B``."""
    grid, scale, bound = mechanism.Lambda, mechanism.scale, mechanism.B
    top = math.floor(bound / grid)
    law = {j * grid: laplace_cdf((j + 0.5) * grid, loc, scale) - laplace_cdf((j - 0.5) * grid, loc, scale)
           for j in range(-top, top + 1)}
    law[bound] = law.get(bound, 0.0) + 1 - laplace_cdf((top + 0.5) * grid, loc, scale)
    law[-bound] = law.get(-bound, 0.0) + laplace_cdf((-top - 0.5) * grid, loc, scale)
    return law


def test_the_snapping_mechanism_parameters():
    mechanism = SnappingLaplaceSampler(0.1)
    # lambda = (1 + 100 * 2^-49) / 0.1 = 10.0000000000018; the smallest power of two above it is 16
    assert mechanism.scale == pytest.approx(10 * (1 + 100 * 2.0**-49), rel=1e-15) and mechanism.Lambda == 16.0
    assert SnappingLaplaceSampler(0.125, B=100).Lambda == 16.0  # lambda = 8.0000000000014 -> 16
    assert SnappingLaplaceSampler(1.0, B=100).Lambda == 2.0  # lambda = 1.00000000000018 -> 2
    with pytest.raises(InvalidArgument, match="B=5"):
        SnappingLaplaceSampler(0.1, B=5)  # B below lambda = 10


def test_the_snapping_mechanism_has_its_exact_distribution():
    mechanism = SnappingLaplaceSampler(0.1)
    exact = snapping_distribution(1.0, mechanism)  # 15 outputs: -100, -96, -80, ..., 96, 100
    assert len(exact) == 15 and math.isclose(sum(exact.values()), 1.0)
    n = CROSS_SAMPLES
    for sampler, caught in ((mechanism, False), (SnappingLaplaceSampler(0.1, B=60), True)):  # mutant: clamps at 60
        outputs = sampler((1.0,), np.random.default_rng(0), size=n)
        values, counts = np.unique(outputs, return_counts=True)
        sampled = dict(zip(values.tolist(), (counts / n).tolist()))
        off = [v for v in set(exact) | set(sampled) if abs(sampled.get(v, 0.0) - exact.get(v, 0.0))
               > 5 * math.sqrt(exact.get(v, 0.0) * (1 - exact.get(v, 0.0)) / n) + 1 / n]
        assert bool(off) is caught, off
    outputs = mechanism((0.0,), np.random.default_rng(2), size=n)
    zeros = outputs[outputs == 0.0]  # about n * P(Lap(10) in [-8, 8)) = n * (1 - e^-0.8) = 22,027
    assert zeros.size > 20_000 and np.all(np.copysign(1.0, zeros) == 1.0)  # a value in (-8, 0) snaps to +0.0
