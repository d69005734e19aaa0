"""Tests of the statistical mode's rounds and its (eps, delta) refutation (dpverify.checking.statistical.estimate).

The schedule's soundness rests on one invariant: the levels the rounds spend are fixed before each
round draws and sum to at most ``alpha = 1 - confidence`` on every run, whatever the timings. It is
checked on simulated clocks (any timings), and the coverage of the whole adaptive run on a mechanism
whose eps* is known exactly. Refutation of (eps, delta) claims is checked against the Gaussian
mechanism's delta(eps) computed in interval arithmetic (dpverify.densities.gaussian_profile).
"""

from __future__ import annotations

import math
from fractions import Fraction

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import dpverify
from dpverify import InvalidArgument, Verdict
from dpverify.checking.statistical._schedule import FIRST_DRAWS, MIN_SAMPLES, Schedule
from dpverify.checking.statistical.estimate import estimate_sampler
from dpverify.densities.gaussian_profile import analytic_sigma, delta_for_epsilon

# -- samplers (module level: a process pool pickles them by name) ---------------------------------


def randomized_response(dataset, rng, size):
    """Keep the one record with probability 3/4, flip it otherwise: eps* = ln 3."""
    keep = rng.random(size) < 0.75
    return np.where(keep, dataset[0], 1 - dataset[0])


def gaussian_sigma_2(dataset, rng, size):
    """x + N(0, 2^2): Delta = 1, sigma = 2 is far too small for (1, 1e-5): delta(1) = 0.00683."""
    return dataset[0] + rng.normal(0.0, 2.0, size)


ANALYTIC_SIGMA = float(analytic_sigma(1, Fraction(1, 100_000), sensitivity=1))  # about 3.73


def gaussian_calibrated(dataset, rng, size):
    """x + N(0, sigma^2) with Balle-Wang's analytic sigma for (1, 1e-5): delta(1) <= 1e-5 exactly."""
    return dataset[0] + rng.normal(0.0, ANALYTIC_SIGMA, size)


# -- the schedule ------------------------------------------------------------------------------------


class FakeClock:
    """A clock that advances by the seconds each round is said to take."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_schedule(budget: float, cap: int | None, per_draw: list[float], alpha: float = 0.05) -> list[tuple]:
    """The rounds a schedule plans when round k's draws cost ``per_draw[k]`` seconds each."""
    clock = FakeClock()
    schedule = Schedule(cap, budget, 0.0, alpha, clock=clock)
    clock.now += schedule.first_draws * per_draw[0]
    first = schedule.first_draws * per_draw[0]
    schedule.record(schedule.first_draws, first, [(0.8 * first, 0.0, 0.2 * first)], 0, schedule.first_draws)
    planned = []
    number = 1
    while (step := schedule.next_round(number)) is not None:
        size, level, keep = step
        seconds = size * per_draw[number % len(per_draw)]
        clock.now += seconds + 0.01
        schedule.record(size, seconds, [(0.6 * seconds, 0.2 * seconds, 0.2 * seconds if keep else 0.0)], 8, keep, 0.01)
        planned.append((size, level, keep))
        number += 1
    return planned


@settings(max_examples=200, deadline=None)
@given(budget=st.floats(0.05, 60), cap=st.one_of(st.none(), st.integers(MIN_SAMPLES, 10**8)),
       per_draw=st.lists(st.floats(1e-9, 1e-3), min_size=1, max_size=6))
def test_the_levels_of_every_round_sum_to_at_most_alpha_whatever_the_timings(budget, cap, per_draw):
    planned = run_schedule(budget, cap, per_draw)
    levels = [level for _, level, _ in planned]
    assert all(level > 0 for level in levels)
    assert sum(levels) <= 0.05 * (1 + 1e-12)
    # the rounds before the last spend alpha / 2^(r+2): r = 1, 2, ... (1/8, 1/16, ...)
    assert levels[:-1] == [0.05 / 2 ** (r + 2) for r in range(1, len(levels))]
    if planned and planned[-1][2] == 0:  # a last round (it keeps nothing: no selection follows it)
        assert levels[-1] >= 0.05 * 3 / 4 * (1 - 1e-12)
        assert sum(levels) == pytest.approx(0.05, rel=1e-12)
    # otherwise the rounds ran slower than predicted and no last round of MIN_SAMPLES // 2 draws fit:
    # the run ends with alpha partly unspent (sound: its bounds hold at a smaller total level)
    if cap is not None:
        first = max(min(FIRST_DRAWS, cap // 4), MIN_SAMPLES // 2)
        assert first + sum(size for size, _, _ in planned) <= cap


def test_a_schedule_that_spends_alpha_in_every_round_is_caught():
    """The mutant: every round at the full alpha. Two rounds already spend 2 alpha."""

    class Greedy(Schedule):
        def next_round(self, number):
            step = super().next_round(number)
            return None if step is None else (step[0], self.alpha, step[2])

    clock = FakeClock()
    schedule = Greedy(None, 10.0, 0.0, 0.05, clock=clock)
    schedule.record(FIRST_DRAWS, 0.01, [(0.01, 0.0, 0.0)], 0, 0)
    levels = []
    while (step := schedule.next_round(len(levels) + 1)) is not None:
        levels.append(step[1])
        schedule.record(step[0], step[0] * 1e-7, [(step[0] * 1e-7, 0.0, 0.0)], 8, step[2])
    assert len(levels) >= 2 and sum(levels) > 0.05


def test_with_a_cap_and_time_to_spare_the_rounds_are_fixed():
    # samples=200_000, budget 1000 s: first draw 10,000; round 1 tests 2 x 10,000 (after it 30,000
    # drawn, and a round of 60,000 would still fit under the cap: 3 x 30,000 = 90,000 <= 200,000);
    # round 2 would make 90,000 drawn and a next round 180,000: 270,000 > 200,000, so it is the last
    # and takes the rest, 200,000 - 30,000 = 170,000, at alpha - alpha/8.
    result = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=0.5, samples=200_000,
                              time_budget=1000, random_state=0)
    assert [(r.selection_samples, r.test_samples) for r in result.rounds] == [(10_000, 20_000), (30_000, 170_000)]
    assert [r.level for r in result.rounds] == pytest.approx([0.05 / 8, 0.05 * 7 / 8])
    assert result.samples == 200_000 and result.time_budget == 1000
    again = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=0.5, samples=200_000,
                             time_budget=1000, random_state=0)
    assert again.epsilon_lower_bound == result.epsilon_lower_bound
    assert "2 test round(s) within a 1000 s budget, the last of 170,000" in result.summary()


def test_samples_alone_is_one_round_at_the_whole_level():
    result = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=0.5, samples=20_000, random_state=0)
    assert [(r.selection_samples, r.test_samples, r.level) for r in result.rounds] == [(10_000, 10_000, pytest.approx(0.05))]
    assert result.time_budget is None and "budget" not in result.summary()


def test_adaptive_runs_cover_the_exact_epsilon_at_the_stated_confidence():
    """Randomized response, eps* = ln 3, claimed at eps* with confidence 0.8: over 40 adaptive runs
    (capped, so the schedule is fixed: a first 10,000 draws, then test rounds of 20,000 and 130,000,
    at levels 0.2/8 and 0.2 x 7/8), a false VIOLATED may occur
    in each with probability at most 0.2; 40 runs at 0.2 have mean 8 and standard deviation 2.5,
    so more than 16 would refute the confidence at 3.4 standard deviations. The bound must also
    come within 0.1 of ln 3 every time."""
    false = 0
    for seed in range(40):
        result = estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=math.log(3), samples=160_000,
                                  time_budget=1000, confidence=0.8, random_state=seed)
        assert [r.test_samples for r in result.rounds] == [20_000, 130_000]
        false += result.verdict is Verdict.VIOLATED
        assert result.epsilon_lower_bound > math.log(3) - 0.1
    assert false <= 16


# -- (eps, delta) refutation -------------------------------------------------------------------------


def test_a_gaussian_with_too_small_a_sigma_is_refuted_at_its_delta():
    """sigma = 2 for (1, 1e-5): delta(1) = Phi(1/4 - 2) - e Phi(-1/4 - 2) = 0.0401 - 2.718 x 0.0122 =
    0.00683 (certified below). 400,000 draws bound delta from below by at least half of it, never
    above it."""
    exact = delta_for_epsilon(1, sigma=2, sensitivity=1)
    assert 0.00682 < float(exact.a) <= float(exact.b) < 0.00684
    result = dpverify.estimate(gaussian_sigma_2, dpverify.Datasets([0, 1], n=1), dpverify.ApproximateDp(1, 1e-5),
                               samples=400_000, random_state=0, float_bits=False)
    assert result.verdict is Verdict.VIOLATED
    assert 0.5 * float(exact.b) < result.delta_lower_bound <= float(exact.a)
    best = max(result.tested, key=lambda t: t.delta_lower_bound)
    # the margin event's bound is its own arithmetic: p_lower - e^1 q_upper
    assert best.delta_lower_bound == pytest.approx(best.p_lower - math.e * best.q_upper, rel=1e-12)
    assert best.epsilon == 1.0
    assert f"delta >= {result.delta_lower_bound:.6g}" in result.summary()


def test_the_calibrated_gaussian_is_not_refuted():
    result = dpverify.estimate(gaussian_calibrated, dpverify.Datasets([0, 1], n=1), dpverify.ApproximateDp(1, 1e-5),
                               samples=400_000, random_state=0, float_bits=False)
    assert result.verdict is Verdict.UNDECIDED and result.delta_lower_bound <= 1e-5


@pytest.mark.parametrize(("changes", "message"), [
    ({"time_budget": 0}, r"time_budget must be .*> 0.*got time_budget=0"),
    ({"time_budget": -1.5}, r"time_budget must be .*got time_budget=-1.5"),
])
def test_bad_time_budgets_are_refused(changes, message):
    with pytest.raises(InvalidArgument, match=message):
        estimate_sampler(randomized_response, records=(0, 1), n=1, epsilon=1, **changes)


# -- many pairs: events chosen on the executors ------------------------------------------------------


def biased_parity(dataset, rng, size):
    """Bernoulli(1/2), but Bernoulli(0.7) when the records sum to 0 mod 3: eps* = ln(0.7/0.5) on
    output 1, ln(0.5/0.3) = 0.51 on output 0 (on pairs moving the sum into or out of 0 mod 3)."""
    p = 0.7 if sum(dataset) % 3 == 0 else 0.5
    return (rng.random(size) < p).astype(int)


def test_selection_on_the_executors_chooses_what_the_driver_chooses(monkeypatch):
    """Chunks of 7 pairs, each drawing its own datasets' selection draws, give the events, counts and
    bounds of selection in the driver on the same draws (records 0..2, n = 3: 27 datasets and
    27 x 3 positions x 2 other records / 2 = 81 substitute pairs, each both ways: 12 chunks)."""
    from dpverify.checking.statistical import _chunked
    from dpverify.checking.statistical import estimate as estimate_module

    def run():
        result = estimate_sampler(biased_parity, records=(0, 1, 2), n=3, epsilon=0.2, samples=4_000, random_state=5)
        return [(t.dataset, t.neighbor, t.event, t.p_count, t.q_count, t.epsilon_lower_bound) for t in result.tested]

    in_driver = run()
    monkeypatch.setattr(estimate_module, "CHUNKED_PAIRS", 10)
    monkeypatch.setattr(_chunked, "CHUNK", 7)
    chunks = []
    original = _chunked.select_chunk
    monkeypatch.setattr(_chunked, "select_chunk", lambda task, shared: chunks.append(len(task[0])) or original(task, shared))
    on_executors = run()
    assert chunks == [7] * 11 + [4]  # 81 = 11 x 7 + 4
    assert on_executors == in_driver and len(in_driver) >= 4
    assert 0.2 < max(bound for *_, bound in in_driver) <= math.log(0.5 / 0.3)  # eps* = ln(5/3) = 0.511, on output 0


def test_over_the_chunked_threshold_a_time_budget_is_refused(monkeypatch):
    from dpverify.checking.statistical import estimate as estimate_module

    monkeypatch.setattr(estimate_module, "CHUNKED_PAIRS", 10)
    with pytest.raises(InvalidArgument, match=r"81 pairs are more than 10: .*pass samples=N .* instead of time_budget=5"):
        estimate_sampler(biased_parity, records=(0, 1, 2), n=3, epsilon=0.2, time_budget=5)


def test_progress_reports_each_stage():
    lines: list[str] = []
    estimate_sampler(biased_parity, records=(0, 1, 2), n=3, epsilon=0.2, samples=4_000, random_state=5,
                     progress=lines.append)
    assert lines[0].startswith("estimate: selection draws: 27/27 datasets (100%)")
    assert any(line.startswith("estimate: test round 1: ") and "tasks (100%)" in line for line in lines)
