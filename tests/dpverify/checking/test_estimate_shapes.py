"""The statistical mode on the output shapes public testers return (issue 35): numpy arrays per draw,
vectors with markers (their tallies and first positions), and a last round focused on the pairs its
previous round's test draws favour -- each checked by hand, and the focus for soundness over seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify import InputPairs, PureDp, estimate
from dpverify.checking.statistical._features import FirstIndex, Tally, _markers
from dpverify.checking.statistical._outputs import Outputs
from dpverify.checking.statistical._sampling import parse
from dpverify.checking.statistical._selection import Candidate, Interval, focused
from dpverify.errors import MechanismError
from dpverify.mechanisms.suite_shapes import ShapedSparseVector

from .test_estimate_soundness import allowance


def test_numeric_arrays_per_draw_are_read_as_vectors_flattened():
    rows = parse([np.array([1, 0, -1]), np.array([0, 1, -1])], 2, (), batched=False)
    assert rows.kind == "vector" and rows.values.tolist() == [[1.0, 0.0, -1.0], [0.0, 1.0, -1.0]]
    grids = parse([np.arange(4).reshape(2, 2), np.ones((2, 2))], 2, (), batched=False)  # 2-D: one row of 4
    assert grids.values.tolist() == [[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0]]
    # booleans are labels, not numbers: answer vectors of True/False stay discrete tuples
    labels = parse([np.array([True, False]), np.array([False, False])], 2, (), batched=False)
    assert labels.kind == "discrete" and labels.items == [(True, False), (False, False)]
    # arrays of different lengths: read item by item (labels), never stacked
    ragged = parse([np.array([1.0]), np.array([1.0, 2.0])], 2, (), batched=False)
    assert ragged.kind == "discrete"


def test_tallies_and_first_positions_of_a_marker():
    answers = Outputs("vector", values=np.array([[0, 0, 1, -1], [1, -1, -1, -1], [0, 0, 0, 0]], dtype=float))
    assert Tally(-1.0, 4)(answers).values.tolist() == [1.0, 3.0, 0.0]
    assert FirstIndex(1.0, 4)(answers).values.tolist() == [2.0, 0.0, 4.0]  # none: the width
    assert Tally(1.0, 4).name == "count(o[i] == 1)" and FirstIndex(-1.0, 4).name == "first(i: o[i] == -1)"
    # an output of another width does not apply
    assert Tally(1.0, 3)(answers).values.tolist() == [16384.0] * 3


def test_markers_are_the_repeated_entries():
    head = np.array([[0.0, 1.0, -1.0, -1.0]] * 50 + [[0.5, 2.5, 3.5, 4.5]])
    found = _markers(head)  # 0, 1, -1 repeat (50, 50, 100 of 204 entries); 0.5 ... 4.5 once each (< 1%)
    assert {feature.value for feature in found} == {-1.0, 0.0, 1.0}
    assert {type(feature) for feature in found} == {Tally, FirstIndex}


def _candidate(pair: int, first: int, second: int, counts: tuple[int, int, int, int]) -> Candidate:
    return Candidate(0.0, Interval(0.0, 1.0), pair, first, second, "ratio", counts)


def test_a_last_round_focuses_on_the_pair_its_test_draws_favour():
    # two pairs on four datasets; the previous round's test counts: pair 0 at 2,000 vs 1,000 of 100,000
    # (ratio 2), pair 1 at 1,100 vs 1,000 (1.1). Drawing 2 datasets instead of 4 doubles the draws.
    chosen = [_candidate(0, 0, 1, (0, 1, 0, 1)), _candidate(1, 2, 3, (0, 1, 0, 1))]
    validated = [_candidate(0, 0, 1, (2_000, 100_000, 1_000, 100_000)),
                 _candidate(1, 2, 3, (1_100, 100_000, 1_000, 100_000))]

    def room(datasets: int, events: int) -> int:
        return 4_000_000 // datasets

    assert focused(chosen, validated, room, level=0.04, delta=0.0) == {0}
    # the order is the test counts': with pair 1 at 3,000 vs 1,000 it is the one kept, even at equal
    # depth (one event instead of two splits the level in two, not four)
    better = [validated[0], _candidate(1, 2, 3, (3_000, 100_000, 1_000, 100_000))]
    assert focused(chosen, better, lambda datasets, events: 1_000_000, level=0.04, delta=0.0) == {1}
    # one pair: nothing to focus on; no validated value events: nothing to judge by
    assert focused(chosen[:1], validated[:1], room, level=0.04, delta=0.0) is None
    assert focused(chosen, [], room, level=0.04, delta=0.0) is None


def test_broken_programs_in_testers_shapes_are_violated():
    # SVT 6's answer vector (eps* 1.42 at k = 5): above the claim 0.7 on value events alone (measured 1.10)
    answers = estimate(ShapedSparseVector(0.7, 6, "answers"), InputPairs.statdp(5), PureDp(0.7), samples=20_000,
                       random_state=0, float_bits=False)
    assert answers.verdict.name == "VIOLATED" and answers.value_epsilon_lower_bound > 0.7, answers.reason
    # SVT 3 releasing its noisy answer inside a marker vector (eps* = k eps / 2 = 1.75 at k = 5): its value
    # leak needs more draws (tests/dpverify/checking/test_estimate_mixed_rows.py: 60,000), its float one few
    values = estimate(ShapedSparseVector(0.7, 3, "values"), InputPairs.statdp(5), PureDp(0.7), samples=20_000,
                      random_state=0)
    assert values.verdict.name == "VIOLATED" and values.witness.float_structure, values.reason


def randomized_response(dataset, rng, size):
    """Pair 0 ((1,), (0,)): one bit, 1 with probability e^0.7 / (1 + e^0.7) on (1,) and its complement on
    (0,): eps* = 0.7. Pair 1 ((3,), (2,)): the same at eps 0.35. eps* over both pairs: 0.7."""
    epsilon = 0.7 if dataset[0] < 2 else 0.35
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return (rng.random(size) < (p if dataset[0] % 2 == 1 else 1 - p)).astype(np.int64)


def _focused_exceedances(seeds: range, budget: float) -> tuple[int, int, int]:
    """Runs, runs whose last round drew one pair only, and runs whose bound exceeds eps* = 0.7."""
    runs = focused_runs = above = 0
    for seed in seeds:
        result = estimate(randomized_response, [((1,), (0,)), ((3,), (2,))], PureDp(0.7), time_budget=budget,
                          confidence=0.5, random_state=seed)
        runs += 1
        last = result.tested[-result.rounds[-1].events:]
        focused_runs += len({(t.dataset, t.neighbor) for t in last} | {(t.neighbor, t.dataset) for t in last}) == 2
        above += result.epsilon_lower_bound > 0.7
    return runs, focused_runs, above


def test_a_focused_last_round_stays_within_the_confidence():
    # randomized response is at its eps* on the event {1} itself, so at confidence 0.5 bounds exceed it now
    # and then; a focused round that reused its earlier test draws would exceed far more often
    runs, focused_runs, above = _focused_exceedances(range(4), 0.6)
    assert focused_runs >= 1  # the path under test was taken
    assert above <= allowance(runs, 0.5)


@pytest.mark.slow  # about 40 s: 60 runs of 0.6 s (measured: 3 exceedances, 60 of 60 focused)
def test_a_focused_last_round_stays_within_the_confidence_over_many_seeds():
    runs, focused_runs, above = _focused_exceedances(range(100, 160), 0.6)
    assert focused_runs >= 30
    assert above <= allowance(runs, 0.5)


def test_nested_rows_of_numbers_are_vectors():
    nested = parse([((1, 2.5), (0, 1.25)), ((0, 0.5), (1, 3.0))], 2, (), batched=False)
    assert nested.kind == "vector" and nested.values.tolist() == [[1.0, 2.5, 0.0, 1.25], [0.0, 0.5, 1.0, 3.0]]


def test_labels_that_never_repeat_are_refused_by_name():
    # a noisy number inside a string: every output distinct, which would bound nothing (a silent 0)
    def labelled(dataset, rng):
        return ("count", f"{sum(dataset) + rng.laplace():.6f}")

    with pytest.raises(MechanismError, match="almost never repeat .* e.g. \\('count'"):
        estimate(labelled, [((0,), (1,))], PureDp(1), samples=2_000, random_state=0)
    # labels that repeat are fine
    coins = estimate(lambda dataset, rng: ("heads", "tails")[int(rng.random() < 0.5 + 0.1 * dataset[0])],
                     [((0,), (1,))], PureDp(1), samples=2_000, random_state=0)
    assert coins.verdict.name == "UNDECIDED"


#: eps* on InputPairs.statdp(5) at eps = 0.7 (measure("svt1" / "svt3", Fraction(7, 10), k=5)).
SHAPES_EPSILON_STAR = {(1, "answers"): 0.4296042867403802, (1, "count"): 0.4296042867403802,
                       (3, "count_last"): 1.75}


def _shape_exceedances(seeds: range, **options) -> tuple[int, list[str]]:
    runs, above = 0, []
    for (variant, shape), truth in SHAPES_EPSILON_STAR.items():
        for seed in seeds:
            result = estimate(ShapedSparseVector(0.7, variant, shape), InputPairs.statdp(5), PureDp(0.7),
                              random_state=seed, **options)
            runs += 1
            if result.value_epsilon_lower_bound > truth:  # value events: the float program's eps* is infinite
                above.append(f"svt{variant} {shape} seed {seed}: {result.value_epsilon_lower_bound!r} > {truth!r}")
    return runs, above


def test_bounds_on_testers_shapes_stay_below_epsilon_star():
    runs, above = _shape_exceedances(range(2), samples=4_000)
    assert runs == 6 and len(above) <= allowance(runs, 0.05), above


@pytest.mark.slow  # about 35 s: 30 runs of 1 s (measured: 0 exceedances)
def test_bounds_on_testers_shapes_stay_below_epsilon_star_under_a_time_budget():
    runs, above = _shape_exceedances(range(500, 510), time_budget=1)
    assert runs == 30 and len(above) <= allowance(runs, 0.05), above
