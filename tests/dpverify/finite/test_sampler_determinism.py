"""No verdict from randomness dpverify cannot see: a sampler that keeps or makes its own generator.

A sampler that ignores ``rng`` and draws from a generator of its own makes no draws dpverify sees,
so it has one execution path per dataset. Its replays are then the only evidence: a zero-draw path
is replayed ``ZERO_DRAW_REPLAYS`` (64) times, and a hidden draw whose most likely outcome has
probability q escapes all of them with probability q^64 (randomized response at eps = 1, q =
e / (1 + e) = 0.731: 2e-9). A sampler that draws nothing on any dataset so far yet gives two
datasets different outputs is refused unless it is declared deterministic: a hidden coin that lands
the same way 64 times in a row on each dataset would otherwise give a confident eps* = inf.
"""

from __future__ import annotations

import math
import random
import secrets

import numpy as np
import pytest

import dpverify
from dpverify import Distribution, from_sampler
from dpverify.errors import NondeterministicMechanism
from dpverify.finite.sampler.sampling import ZERO_DRAW_REPLAYS

KEEP = math.e / (1 + math.e)  # randomized response at eps = 1


def hidden_rr(generator):
    """Randomized response drawing its coin from ``generator`` instead of ``rng``."""

    def sampler(dataset, rng):
        (bit,) = dataset
        return bit if generator.random() < KEEP else 1 - bit

    return sampler


@pytest.mark.parametrize("make", [lambda seed: np.random.RandomState(seed), lambda seed: random.Random(seed),
                                  lambda seed: secrets.SystemRandom()])
def test_a_generator_kept_outside_is_refused_not_verified(make):
    mechanism = from_sampler(hidden_rr(make(1)))
    with pytest.raises(NondeterministicMechanism, match="not a function of its dataset and rng"):
        dpverify.verify(mechanism, records=[0, 1], n=1, epsilon=1.0)


def test_a_deterministic_sampler_must_say_so():
    def parity(dataset, rng):  # draws nothing: a deterministic (and not private) function of the data
        return sum(dataset) % 2

    with pytest.raises(NondeterministicMechanism, match=r"deterministic=True") as raised:
        dpverify.verify(from_sampler(parity), records=[0, 1], n=1, epsilon=1.0)
    assert "(0,)" in str(raised.value) and "(1,)" in str(raised.value)  # the two datasets
    result = dpverify.verify(from_sampler(parity, deterministic=True), records=[0, 1], n=1, epsilon=1.0)
    assert not result.holds and result.epsilon == math.inf  # a point mass on 0 against one on 1


def test_a_constant_sampler_needs_no_declaration():
    result = dpverify.verify(from_sampler(lambda d, rng: "same"), records=[0, 1], n=2, epsilon=0)
    assert result.holds and result.epsilon == 0.0


def test_drawing_on_some_datasets_is_enough():
    def sampler(dataset, rng):  # deterministic on (0,), a fair coin on (1,)
        return 0 if dataset == (0,) else int(rng.integers(2))

    mechanism = from_sampler(sampler)
    assert mechanism((1,)) == Distribution({0: 0.5, 1: 0.5})
    assert mechanism((0,)) == Distribution.point(0)  # no refusal: it was seen drawing from rng


def _hidden_runs(seeds: range) -> int:
    """How many of the runs (one per seed, each a fresh hidden generator) raise."""
    refused = 0
    for seed in seeds:
        for make in (np.random.RandomState, random.Random):
            try:
                dpverify.verify(from_sampler(hidden_rr(make(seed))), records=[0, 1], n=1, epsilon=1.0)
            except NondeterministicMechanism:
                refused += 1
    return refused


def test_hidden_randomness_is_refused_in_every_seeded_run_small():
    assert _hidden_runs(range(20)) == 40


@pytest.mark.slow
def test_hidden_randomness_is_refused_in_every_seeded_run():
    assert _hidden_runs(range(1000)) == 2000  # 1,000 seeds x {RandomState, random.Random}


def test_zero_draw_replays_bound():
    # the documented bound: the chance that 64 replays of randomized response's hidden coin all agree
    assert KEEP**ZERO_DRAW_REPLAYS < 2e-9
