"""mechanisms/suite_shapes.py: the sparse vector programs in public testers' output shapes.

Each shape is a one-to-one encoding of the suite's output, so the exact mode, tracing this code as it
is written, must give the hand-written closed form's eps* (``measure``) on the same pairs; and each
encoding is checked by hand on scripted noise.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpverify import InputPairs, PureDp, from_sampler, verify
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.audits.benchmark_suite import measure
from dpverify.mechanisms.suite_shapes import ABORTED_MARKER, FALSE_MARKER, SHAPED_PROGRAMS, SHAPES, ShapedSparseVector


class Scripted:
    """A stand-in rng whose ``laplace`` draws are given in order (the threshold's first)."""

    def __init__(self, draws):
        self.draws = list(draws)

    def laplace(self, loc, scale):
        return self.draws.pop(0)


@pytest.mark.parametrize(("variant", "shape"), [(v, s) for s, variants in SHAPES.items() for v in variants
                                                if v != 3])
def test_the_traced_code_has_the_closed_forms_epsilon_star(variant, shape):
    found = verify(from_sampler(ShapedSparseVector(0.7, variant, shape)), InputPairs.statdp(5), PureDp(0.7))
    assert found.epsilon == pytest.approx(measure(f"svt{variant}", Fraction(7, 10), k=5).epsilon_star, rel=1e-9)


@pytest.mark.parametrize("shape", ["count_last", "values"])
def test_algorithm_3s_released_answer_has_the_closed_forms_epsilon_star(shape):
    # k = 3 keeps the traced integration short: eps* = k eps / 2 = 3 * 0.7 / 2 = 1.05 (3.5 at k = 10)
    found = verify(from_sampler(ShapedSparseVector(0.7, 3, shape)), InputPairs.statdp(3), PureDp(0.7))
    assert found.epsilon == pytest.approx(measure("svt3", Fraction(7, 10), k=3).epsilon_star, rel=1e-9)
    assert found.epsilon == pytest.approx(1.05) and found.verdict.name == "VIOLATED"


def test_the_answer_vector_marks_the_stop():
    # Algorithm 1, T = 0.5: threshold 0.5 + 0 = 0.5; answers 0 + (-1) < 0.5, 0 + 0 < 0.5, 0 + 2 >= 0.5: stop
    answers = ShapedSparseVector(0.7, 1, "answers")((0, 0, 0, 0), Scripted([0.0, -1.0, 0.0, 2.0]))
    assert answers.tolist() == [0, 0, 1, -1] and answers.dtype == np.int64
    assert ShapedSparseVector(0.7, 1, "count")((0, 0, 0, 0), Scripted([0.0, -1.0, 0.0, 2.0])) == 2
    # no query above: every answer False, the count k
    assert ShapedSparseVector(0.7, 2, "count")((0, 0), Scripted([5.0, 0.0, 0.0])) == 2


def test_algorithm_3_releases_the_noisy_answer():
    # T = 1: threshold 1 + 0.25 = 1.25; 1 + 0 > 1.25? no; 2 + 0.5 = 2.5 > 1.25: released
    count, last = ShapedSparseVector(0.7, 3, "count_last")((1, 2, 0), Scripted([0.25, 0.0, 0.5]))
    assert (count, last) == (1, 2.5)
    values = ShapedSparseVector(0.7, 3, "values")((1, 2, 0), Scripted([0.25, 0.0, 0.5]))
    assert values.tolist() == [FALSE_MARKER, 2.5, ABORTED_MARKER]
    assert ShapedSparseVector(0.7, 3, "count_last")((0,), Scripted([0.0, 0.0])) == (1, False)


def test_algorithms_without_cutoff_answer_every_query():
    # Algorithm 6, T = 1: threshold 1; 2 + 0 >= 1, 0 + 0 < 1, 1 + 0 >= 1
    assert ShapedSparseVector(0.7, 6, "answers")((2, 0, 1), Scripted([0.0, 0.0, 0.0, 0.0])).tolist() == [1, 0, 1]
    # Algorithm 5 draws no query noise: only the threshold's
    assert ShapedSparseVector(0.7, 5, "answers")((2, 0, 1), Scripted([0.5])).tolist() == [1, 0, 0]


def test_every_program_of_the_benchmark_is_a_known_shape():
    assert all(variant in SHAPES[shape] for variant, shape in SHAPED_PROGRAMS)


@pytest.mark.parametrize(("arguments", "message"), [
    ((0.7, 1, "vector"), "shape must be one of"),
    ((0.7, 3, "answers"), "given for Algorithms"),
    ((0.0, 1, "count"), "epsilon must be a positive finite number"),
])
def test_bad_arguments_are_refused(arguments, message):
    with pytest.raises(InvalidArgument, match=message):
        ShapedSparseVector(*arguments)
