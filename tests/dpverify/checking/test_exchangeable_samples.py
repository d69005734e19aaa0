"""``verify(exchangeable_samples=N)``: an exchangeability that cannot be proved is tested on exactly N
random datasets, whatever the clock says, so a run (and a report written from it) repeats exactly.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import dpverify.checking._symmetry as symmetry
from dpverify import InvalidArgument, Verdict, exchangeable, verify
from dpverify.verdict.assumptions import Status


@exchangeable
def constant(dataset):
    return {0: Fraction(1)}


# 8 records, n = 5: 8**5 = 32,768 orderings > EXHAUSTIVE_SYMMETRY_LIMIT = 20,000, so the declaration
# is tested, never proved; the multisets number C(8 + 5 - 1, 5) = 792.
BIG = {"records": range(8), "n": 5, "epsilon": 0, "exchangeable": "assume", "seed": 5}


@pytest.fixture
def slow_clock(monkeypatch):
    """A clock on which every reading is 1,000 s after the last: any time budget is spent at once."""
    ticks = itertools.count()
    monkeypatch.setattr(symmetry.time, "perf_counter", lambda: 1000.0 * next(ticks))


def _evidence(result):
    (assumption,) = result.assumptions
    assert assumption.name == "exchangeable" and assumption.status is Status.ACCEPTED
    return assumption.evidence


def test_a_fixed_sample_is_the_same_whatever_the_clock(monkeypatch):
    assert 8**5 > symmetry.EXHAUSTIVE_SYMMETRY_LIMIT
    fast = verify(constant, **BIG, exchangeable_samples=40)
    assert fast.verdict is Verdict.HOLDS and fast.epsilon == 0.0
    assert _evidence(fast).startswith("tested on 40 random datasets and every transposition of each (")
    assert _evidence(fast).endswith(" evaluations, seed 5)")
    ticks = itertools.count()
    monkeypatch.setattr(symmetry.time, "perf_counter", lambda: 1000.0 * next(ticks))
    slow = verify(constant, **BIG, exchangeable_samples=40)
    assert _evidence(slow) == _evidence(fast)


def test_the_time_budget_depends_on_the_clock(slow_clock):
    # The default: the budget spent at once leaves the floor of 200 datasets (a fast clock gives more).
    result = verify(constant, **BIG)
    assert _evidence(result).startswith("tested on 200 random datasets")


def test_a_fixed_sample_never_hides_a_proof_within_the_limit(slow_clock):
    # 3 records, n = 3: 27 orderings <= 20,000: every ordering is compared, sample or not.
    result = verify(constant, records=range(3), n=3, epsilon=0, exchangeable="assume", seed=0, exchangeable_samples=1)
    (assumption,) = result.assumptions
    assert assumption.status is Status.PROVED
    assert assumption.evidence == "proved on every ordering (27 datasets)"


@pytest.mark.parametrize("samples", [0, -3, 2.5])
def test_a_bad_sample_count_is_refused_naming_it(samples):
    with pytest.raises(InvalidArgument, match=r"exchangeable_samples") as info:
        verify(constant, **BIG, exchangeable_samples=samples)
    assert repr(samples) in str(info.value) or str(samples) in str(info.value)
