"""Rows mixing labels and reals in the statistical mode: ``(count, False)`` on some draws and
``(count, 4.21)`` on others are read as numeric vectors (False/True 0/1, None -1), so they are
summarised and bounded instead of being labels that never repeat (which gave a silent bound of 0)."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify import PureDp, estimate
from dpverify.checking.input_pairs import InputPairs
from dpverify.checking.statistical._patched import encoded, mixed_width
from dpverify.errors import MechanismError

EPSILON = 0.7


def broken_svt(dataset, rng):
    """Lyu, Su, Li's Algorithm 3 as a tester writes it: (how many answers were below, the released
    noisy answer or False)."""
    rho = rng.laplace(scale=2 / EPSILON)
    below = 0
    for q in dataset:
        value = q + rng.laplace(scale=2 / EPSILON)
        if value >= 1 + rho:
            return (below, float(value))
        below += 1
    return (below, False)


def test_rows_are_read_as_numbers():
    assert encoded((3, False), 2, ()) == [3.0, 0.0]
    assert encoded((None, (1, 2.5)), 3, ()) == [-1.0, 1.0, 2.5]
    assert mixed_width([(0, False), (1, 2.5)]) == 2
    # labels that repeat are summarised as they are (answer vectors: issue 29's figures unchanged)
    assert mixed_width([(True, False, None), (False, True, None)]) is None
    assert mixed_width([(0, "a"), (1, 2.5)]) is None  # a string: labels
    assert mixed_width([(0, 1), (1, 2)]) is None  # integers only: not mixed with reals


def test_a_row_of_another_shape_later_is_refused_by_name():
    def shifting(dataset, rng):
        u = rng.random()
        return (0, 0.5 + u if u < 0.5 else False) if dataset == (0,) else ("label",)

    with pytest.raises(MechanismError, match="cannot summarise an output of another shape"):
        estimate(shifting, [((0,), (1,))], PureDp(1), samples=2_000, random_state=0)


def test_the_broken_sparse_vector_returning_count_and_value_is_violated():
    # 20,000 draws give 3.8-4.4 on seeds 0-2 (60,000: 5.0-5.6), far above 0.7, in a third of the time
    result = estimate(broken_svt, InputPairs.statdp(5), PureDp(EPSILON), samples=20_000, random_state=0)
    assert result.verdict.name == "VIOLATED" and result.epsilon_lower_bound > EPSILON
    assert "o[" in result.witness.event  # an event on a coordinate of the numeric rows


def test_the_encoding_is_the_same_on_every_executor():
    serial = estimate(broken_svt, InputPairs.statdp(3), PureDp(EPSILON), samples=20_000, random_state=1)
    pooled = estimate(broken_svt, InputPairs.statdp(3), PureDp(EPSILON), samples=20_000, random_state=1,
                      executor="processes")
    assert pooled.epsilon_lower_bound == serial.epsilon_lower_bound
    assert np.isfinite(serial.epsilon_lower_bound)
