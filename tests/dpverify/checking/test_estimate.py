"""Tests of dpverify.checking.statistical.estimate: a lower confidence bound on epsilon from a sampler.

The exact engine is the oracle: on mechanisms whose distributions are known exactly (randomized
response, random tables, noisy max returning its value), the statistical lower bound may never
exceed the exact eps*, and a claim at eps* may be reported VIOLATED at most at the stated rate.
"""

from __future__ import annotations

import math
from fractions import Fraction

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from scipy.stats import binom, laplace

from dpverify import InvalidArgument, MechanismError, Verdict, analyze, verify
from dpverify.checking.input_pairs import statdp_patterns
from dpverify.checking.statistical._events import clopper_pearson
from dpverify.checking.statistical.estimate import EstimateResult, estimate_sampler
from dpverify.mechanisms.audits.benchmark_suite import measure

# -- samplers (module level: a process pool pickles them by name) ---------------------------------


def randomized_response(dataset, rng, size):
    """Keep the one record with probability 3/4, flip it otherwise: eps* = ln 3."""
    keep = rng.random(size) < 0.75
    return np.where(keep, dataset[0], 1 - dataset[0])


def randomized_response_exact(dataset):
    return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}


def labelled_response(dataset, rng):
    """Randomized response as labels, one output per call (no size=)."""
    return "yes" if (rng.random() < 0.75) == (dataset[0] == 1) else "no"


def leaky_on_ones(dataset, rng, size):
    """Bernoulli(1/2), except on (1, 1): Bernoulli(0.95). eps* = ln(0.5 / 0.05) = ln 10 on output 0."""
    p = 0.95 if dataset == (1, 1) else 0.5
    return (rng.random(size) < p).astype(int)


def leaky_on_ones_exact(dataset):
    p = Fraction(95, 100) if dataset == (1, 1) else Fraction(1, 2)
    return {1: p, 0: 1 - p}


def laplace_half(dataset, rng, size):
    """x + Lap(1/2) for one record x: eps* = 2 between (0,) and (1,)."""
    return dataset[0] + rng.laplace(0.0, 0.5, size)


def two_coordinates(dataset, rng, size):
    """(q_0 + Lap(1), q_1 + Lap(1/4)): eps* = 1/(1/4) = 4 when q_1 moves by 1."""
    q = np.asarray(dataset, dtype=float)
    return q + rng.laplace(0.0, 1.0, (size, 2)) * np.array([1.0, 0.25])


def noisy_max_value(dataset, rng, size):
    """Ding et al. CCS 2018 Alg. 7 at eps = 0.7: max_i (q_i + Lap(2/0.7)); exact eps* = 1.75."""
    q = np.asarray(dataset, dtype=float)
    return (q + rng.laplace(0.0, 2 / 0.7, (size, q.size))).max(axis=1)


class Table:
    """A mechanism given as a table of integer weights per dataset: exact and as a sampler."""

    def __init__(self, rows: dict) -> None:
        self.rows = rows

    def exact(self, dataset):
        weights = self.rows[dataset]
        return {o: Fraction(w, sum(weights)) for o, w in enumerate(weights) if w}

    def __call__(self, dataset, rng, size):
        weights = np.array(self.rows[dataset], dtype=float)
        return rng.choice(weights.size, size=size, p=weights / weights.sum())


# -- the bounds ------------------------------------------------------------------------------------


def test_clopper_pearson_closed_forms():
    # All n successes: the lower bound solves p^n = level, p = level^(1/n) = 0.05^(1/10) = 0.74113.
    # No success: the upper bound solves (1 - p)^n = level, p = 1 - 0.05^(1/10) = 0.25887.
    lower, upper = clopper_pearson([10, 0], [10, 10], 0.05)
    assert lower[0] == pytest.approx(0.05 ** 0.1, rel=1e-11)
    assert upper[1] == pytest.approx(1 - 0.05 ** 0.1, rel=1e-11)
    assert lower[1] == 0.0 and upper[0] == 1.0
    # 5 of 10: P(Bin(10, lower) >= 5) = 0.05 and P(Bin(10, upper) <= 5) = 0.05 exactly.
    lower, upper = clopper_pearson([5], [10], 0.05)
    assert binom.sf(4, 10, lower[0]) == pytest.approx(0.05, rel=1e-9)
    assert binom.cdf(5, 10, upper[0]) == pytest.approx(0.05, rel=1e-9)


def test_clopper_pearson_covers_at_the_stated_level():
    # 20,000 binomial counts at p = 0.3, n = 50: each bound misses p with probability <= 0.05 (CP is
    # conservative: about 0.03 here). A rate above 0.05 + 4 standard errors (0.0062) would be a bug.
    rng = np.random.default_rng(0)
    counts = rng.binomial(50, 0.3, 20_000)
    lower, upper = clopper_pearson(counts, np.full(counts.size, 50), 0.05)
    assert np.mean(lower > 0.3) <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / counts.size)
    assert np.mean(upper < 0.3) <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / counts.size)


# -- soundness against the exact engine -------------------------------------------------------------


def test_randomized_response_bound_is_below_the_exact_epsilon():
    exact = verify(randomized_response_exact, records=(0, 1), n=1, epsilon=math.log(3))
    assert exact.holds and exact.epsilon == pytest.approx(math.log(3))
    result = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=math.log(3), samples=20_000,
                              random_state=1)
    assert isinstance(result, EstimateResult)
    assert result.verdict is Verdict.UNDECIDED and not result.holds and not result
    # ln 3 = 1.0986; with 10,000 test draws per dataset the bound is within about 0.1 of it
    assert 0.95 < result.epsilon_lower_bound <= exact.epsilon
    assert result.batched and result.samples == 20_000 and result.seed == 1 and result.pairs == 1
    assert "no violation found at 20,000 samples" in result.reason


@st.composite
def tables(draw):
    """A mechanism on records (0, 1, 2), n = 1: 2-4 outcomes, integer weights 0-12 per dataset."""
    outcomes = draw(st.integers(2, 4))
    row = st.lists(st.integers(0, 12), min_size=outcomes, max_size=outcomes).filter(lambda r: sum(r) > 0)
    return Table({(x,): tuple(draw(row)) for x in range(3)})


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), seed=st.integers(0, 2**32 - 1))
def test_random_tables_bound_never_exceeds_the_exact_epsilon(table, seed):
    eps_star = analyze(table.exact, records=(0, 1, 2), n=1).epsilon_star()
    claim = eps_star if math.isfinite(eps_star) else 1.0
    result = estimate_sampler(table, records=(0, 1, 2), n=1, epsilon=claim, samples=4_000, random_state=seed)
    assert result.epsilon_lower_bound <= eps_star
    if math.isfinite(eps_star):  # the claim is eps* itself, which holds: never reported VIOLATED
        assert result.verdict is Verdict.UNDECIDED


def test_false_violations_at_the_exact_epsilon_stay_within_the_confidence():
    # At a claim equal to eps* = ln 3 a VIOLATED verdict is false; each run may give one with
    # probability <= 1 - confidence = 0.05. Over 40 independent seeds the count is at most
    # Bin(40, 0.05); binom.isf(0.001, 40, 0.05) = 7: more than 7 would happen with probability < 0.001.
    bound = int(binom.isf(0.001, 40, 0.05))
    assert bound == 7
    results = [
        estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=math.log(3), samples=4_000,
                         random_state=seed)
        for seed in range(40)
    ]
    violations = sum(r.verdict is Verdict.VIOLATED for r in results)
    assert violations <= bound
    assert all(r.epsilon_lower_bound <= math.log(3) for r in results)  # in fact none exceeds it


def test_noisy_max_value_bound_is_below_its_exact_epsilon():
    # The exact engine (piecewise densities) gives eps* = 1.75 = 5 * 0.7 / 2 on StatDP's patterns.
    exact = measure("noisy_max_value_laplace", Fraction(7, 10))
    assert exact.verdict is Verdict.VIOLATED and exact.epsilon_star == pytest.approx(1.75)
    # the ideal mechanism's eps*: events on the outputs' values (their float bits leak more: below)
    result = estimate_sampler(noisy_max_value, pairs=statdp_patterns(5), epsilon=0.7, samples=20_000, random_state=3,
                              float_bits=False)
    assert result.verdict is Verdict.VIOLATED
    assert 0.7 < result.epsilon_lower_bound <= exact.epsilon_star
    assert result.value_epsilon_lower_bound == result.epsilon_lower_bound
    assert not any(t.float_structure for t in result.tested)


def test_the_float_program_of_noisy_max_value_leaks_through_its_low_bits():
    """q_i + Laplace in doubles: with q = (1, ..., 1) every output >= 0.5 in magnitude... is a sum
    rounded onto the grid of the larger operand, so the lowest set bit of the output is bounded
    below differently for q = 0 and q = 1 (Mironov 2012): a float-structure event separates them
    (probability 0 on one side), far beyond the ideal eps* = 1.75. Its value-only bound stays below 1.75."""
    result = estimate_sampler(noisy_max_value, pairs=statdp_patterns(5), epsilon=0.7, samples=20_000, random_state=3)
    assert result.verdict is Verdict.VIOLATED and result.witness.float_structure
    assert result.witness.event.startswith("lsb(o)") or result.witness.event.startswith("trailing_zeros(o)")
    assert result.epsilon_lower_bound > 3 and result.witness.q_count == 0
    assert 0.7 < result.value_epsilon_lower_bound <= 1.75
    assert "float-structure event" in result.reason


@pytest.mark.slow
def test_noisy_max_value_bound_is_tight_with_two_million_samples():
    # The benchmark's setting (benchmarks/bench_sampler.py): the bound comes within 0.08 of 1.75.
    result = estimate_sampler(noisy_max_value, pairs=statdp_patterns(5), epsilon=0.7, samples=2_000_000,
                              random_state=0, float_bits=False)
    assert result.verdict is Verdict.VIOLATED
    assert 1.67 <= result.epsilon_lower_bound <= 1.75
    assert {result.witness.dataset, result.witness.neighbor} in ({(1,) * 5, (2,) * 5}, {(0,) * 5, (1,) * 5})


# -- violations and witnesses ----------------------------------------------------------------------


def test_a_broken_mechanism_is_violated_on_the_leaking_pair():
    exact = verify(leaky_on_ones_exact, records=(0, 1), n=2, epsilon=0.5)
    assert not exact.holds and exact.epsilon == pytest.approx(math.log(10))
    result = estimate_sampler(leaky_on_ones, records=(0, 1), n=2, epsilon=0.5, samples=20_000, random_state=0)
    assert result.verdict is Verdict.VIOLATED and result.violated
    witness = result.witness
    # the only pairs that leak are those with (1, 1): (0, 1) and (1, 0) against it; output 0 is
    # likelier under them (1/2) than under (1, 1) (1/20)
    assert witness.neighbor == (1, 1) and witness.dataset in {(0, 1), (1, 0)}
    assert witness.event in ("o <= 0", "o in {0}")
    assert witness.p_frequency == pytest.approx(0.5, abs=0.03) and witness.q_frequency == pytest.approx(0.05, abs=0.01)
    assert witness.p_lower <= witness.p_frequency and witness.q_upper >= witness.q_frequency
    assert witness.epsilon_lower_bound == pytest.approx(math.log(witness.p_lower / witness.q_upper))
    assert 1.9 < result.epsilon_lower_bound <= math.log(10)
    assert "VIOLATED" in result.summary() and "witness:" in result.summary()
    assert result.pairs == 4 and result.datasets == 4


def test_real_outputs_are_refuted_by_a_threshold_event():
    # float_bits=False: events on the values (the float program also leaks through its low bits)
    result = estimate_sampler(laplace_half, pairs=[((0,), (1,))], epsilon=1, samples=20_000, random_state=0,
                              float_bits=False)
    assert result.verdict is Verdict.VIOLATED
    # eps* = 1 / (1/2) = 2, reached by every event within o <= 0 (or within o >= 1)
    assert 1.6 < result.epsilon_lower_bound <= 2
    witness = result.witness
    event = witness.event_set
    assert event.coordinate is None and str(event) == witness.event

    def mass(center: float) -> float:  # P(low < center + Lap(1/2) <= high), from the Laplace CDF
        return float(np.diff(laplace.cdf([event.low, event.high], loc=center, scale=0.5))[0])

    p, q = mass(witness.dataset[0]), mass(witness.neighbor[0])
    assert witness.p_lower <= p and witness.q_upper >= q  # the intervals cover the true masses
    assert witness.epsilon_lower_bound <= math.log(p / q) <= 2 + 1e-12


def test_vector_outputs_are_refuted_on_the_leaking_coordinate():
    result = estimate_sampler(two_coordinates, pairs=[((0, 0), (0, 1))], epsilon=1, samples=20_000, random_state=0,
                              float_bits=False)
    assert result.verdict is Verdict.VIOLATED
    # the leaking coordinate, or the likelihood-ratio score fitted on the selection draws (it weighs o[1])
    assert "o[1]" in result.witness.event or "score(o)" in result.witness.event
    assert 2.5 < result.epsilon_lower_bound <= 4


def test_a_sampler_without_size_is_called_once_per_sample():
    result = estimate_sampler(labelled_response, records=(0, 1), n=1, epsilon=0.5, samples=4_000, random_state=2)
    assert not result.batched
    assert result.verdict is Verdict.VIOLATED
    assert result.witness.event in ("o in {'yes'}", "o in {'no'}")
    assert result.epsilon_lower_bound <= math.log(3)


def constant(dataset, rng, size):
    return np.zeros(size)


def test_a_constant_mechanism_is_never_violated_even_at_epsilon_zero():
    # P(S) = Q(S) for every S: no event can bound eps above 0
    result = estimate_sampler(constant, records=(0, 1, 2), n=2, epsilon=0, samples=2_000, random_state=0)
    assert result.verdict is Verdict.UNDECIDED and result.epsilon_lower_bound == 0.0
    assert len(result.tested) == 1 and result.witness.epsilon_lower_bound < 0


def test_delta_lowers_the_bound():
    # ln((P_lo - delta) / Q_hi): with delta = 0.2 the randomized response bound falls from about
    # ln(0.74 / 0.26) = 1.05 to about ln(0.54 / 0.26) = 0.73
    plain = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=2, samples=20_000, random_state=4)
    shifted = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=2, delta=0.2, samples=20_000,
                               random_state=4)
    witness = shifted.witness
    assert witness.epsilon_lower_bound == pytest.approx(math.log((witness.p_lower - 0.2) / witness.q_upper))
    assert shifted.epsilon_lower_bound < plain.epsilon_lower_bound - 0.2


# -- reproducibility --------------------------------------------------------------------------------


def _fingerprint(result: EstimateResult) -> tuple:
    return (result.verdict, result.epsilon_lower_bound, result.seed, result.witness, result.tested,
            result.events_scored)


def test_results_are_identical_on_every_executor():
    runs = [
        estimate_sampler(noisy_max_value, pairs=statdp_patterns(5), epsilon=0.7, samples=4_000, random_state=11,
                         executor=executor)
        for executor in (None, "processes")
    ]
    assert _fingerprint(runs[0]) == _fingerprint(runs[1])
    enumerated = [
        estimate_sampler(leaky_on_ones, records=(0, 1), n=2, epsilon=0.5, samples=2_000, random_state=5,
                         executor=executor)
        for executor in (None, "processes")
    ]
    assert _fingerprint(enumerated[0]) == _fingerprint(enumerated[1])


def test_a_fresh_seed_is_reported_and_repeats_the_run():
    first = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=1, samples=2_000)
    again = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=1, samples=2_000,
                             random_state=first.seed)
    assert _fingerprint(first) == _fingerprint(again)


def test_estimate_is_the_front_door_to_estimate_sampler_on_the_same_inputs():
    import dpverify

    # one seed, one sampler: the door on Datasets / given pairs gives estimate_sampler's figures exactly
    door = dpverify.estimate(leaky_on_ones, dpverify.Datasets([0, 1], 2), dpverify.PureDp(0.5), samples=2_000,
                             random_state=3)
    direct = estimate_sampler(leaky_on_ones, records=[0, 1], n=2, epsilon=0.5, samples=2_000, random_state=3)
    assert (door.epsilon_lower_bound, door.verdict) == (direct.epsilon_lower_bound, direct.verdict)
    patterns = dpverify.InputPairs.statdp(2)
    door = dpverify.estimate(leaky_on_ones, patterns, epsilon=0.5, samples=2_000, random_state=3)
    direct = estimate_sampler(leaky_on_ones, pairs=statdp_patterns(2), epsilon=0.5, samples=2_000, random_state=3)
    assert door.epsilon_lower_bound == direct.epsilon_lower_bound
    assert "estimate" in dpverify.__all__ and "estimate_sampler" not in dpverify.__all__
    with pytest.raises(InvalidArgument, match="only PureDp and ApproximateDp"):
        dpverify.estimate(leaky_on_ones, dpverify.Datasets([0, 1], 2), dpverify.Stability(0.1))


# -- bad input ---------------------------------------------------------------------------------------


def never_called(dataset, rng, size):
    raise AssertionError("the sampler must not run when the arguments are bad")


GOOD = {"records": (0, 1), "n": 1, "epsilon": 1.0}


@pytest.mark.parametrize(("changes", "message"), [
    ({"samples": 10}, r"samples must be an integer >= 1000, got samples=10"),
    ({"samples": 2.5e5}, r"samples must be an integer >= 1000, got samples=250000.0"),
    ({"confidence": 1}, r"confidence must be in \(0, 1\), got confidence=1"),
    ({"confidence": 0}, r"confidence must be > 0, got confidence=0"),
    ({"epsilon": -0.5}, r"epsilon must be >= 0, got epsilon=-0.5"),
    ({"epsilon": math.inf}, r"epsilon must be finite"),
    ({"delta": 1}, r"delta must be in \[0, 1\), got delta=1"),
    ({"delta": -0.1}, r"delta must be in \[0, 1\], got delta=-0.1"),
    ({"random_state": -1}, r"random_state must be an integer >= 0, got random_state=-1"),
    ({"pairs": [((0,), (1,))]}, r"either pairs= or records= and n=, not both"),
    ({"records": None}, r"needs the inputs: pairs=\[\(D, D'\), \.\.\.\]"),
    ({"n": 0}, r"n must be an integer >= 1, got n=0"),
    ({"neighbors": "nearby"}, r"unknown neighbour relation neighbors='nearby'"),
    # 10 records, n = 6: 10^6 * 6 * 9 / 2 = 27,000,000 substitute pairs
    ({"records": tuple(range(10)), "n": 6}, r"give 27,000,000 substitute pairs, more than 4,000,000"),
])
def test_bad_arguments_are_refused_before_sampling(changes, message):
    with pytest.raises(InvalidArgument, match=message):
        estimate_sampler(never_called, **{**GOOD, **changes})


def test_bad_pairs_are_refused():
    with pytest.raises(InvalidArgument, match=r"compares \(0,\) with itself"):
        estimate_sampler(never_called, pairs=[((0,), (0,))], epsilon=1)
    with pytest.raises(InvalidArgument, match=r"not a neighbour pair under substitute"):
        estimate_sampler(never_called, pairs=[((0, 0), (1, 1))], neighbors="substitute", epsilon=1)
    with pytest.raises(InvalidArgument, match=r"sampler must be callable"):
        estimate_sampler("not a function", **GOOD)


def test_an_unpicklable_sampler_is_refused_for_a_process_pool():
    with pytest.raises(InvalidArgument, match=r"cannot be sent to worker processes"):
        estimate_sampler(lambda d, rng, size: rng.random(size), **GOOD, executor="processes")


def _raising(dataset, rng, size):
    raise ZeroDivisionError("boom")


def _short(dataset, rng, size):
    return rng.random(size - 1)


def _nan(dataset, rng, size):
    return np.full(size, np.nan)


@pytest.mark.parametrize(("sampler", "message"), [
    (_raising, r"the sampler raised on dataset \(0,\): ZeroDivisionError: boom"),
    (_short, r"sampler\(dataset, rng, size=1000\) returned 999 outputs .* it must return exactly 1000"),
    (_nan, r"the sampler returned nan on dataset \(0,\)"),
])
def test_a_failing_sampler_is_a_mechanism_error(sampler, message):
    with pytest.raises(MechanismError, match=message) as caught:
        estimate_sampler(sampler, **GOOD, samples=2_000, random_state=0)
    assert caught.value.dataset == (0,)
