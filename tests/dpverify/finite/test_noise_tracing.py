"""Continuous noise traced by the exact rng: the paths, their constraints, pruning and refusals.

The probabilities of the paths are integrals (tests/dpverify/densities/test_path_integral.py and
tests/dpverify/densities/test_traced.py); here the tracer's own output is checked: which paths a
program has and which constraints each keeps, written out by hand.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from dpverify import from_sampler
from dpverify.errors import MechanismError
from dpverify.finite.sampler._linear import Linear, NoiseVariable
from dpverify.finite.sampler._noise import feasible


def paths(sampler, dataset, **options):
    """``{output: [constraint texts]}`` of every traced path (outputs are distinct in these programs)."""
    traced = from_sampler(sampler, **options).enumerate(dataset).traced
    assert traced is not None
    found = {}
    for path in traced.paths:
        assert path.output not in found
        found[path.output] = sorted(form.text() for form in path.constraints)
    return found


def form(const, *coefs):
    return Linear(Fraction(const), tuple((i, Fraction(a)) for i, a in coefs))


# -- what a path keeps --------------------------------------------------------------------------------


def test_argmax_is_one_k_way_choice_with_a_star_of_constraints():
    def noisy_max(dataset, rng):
        return int(np.argmax(np.asarray(dataset) + rng.laplace(scale=2.0, size=3)))

    # winner i: q_i + X_i > q_j + X_j for every j; q = (1, 0, 0)
    assert paths(noisy_max, (1, 0, 0)) == {
        0: ["1 + X0 - X1", "1 + X0 - X2"],
        1: ["-1 - X0 + X1", "X1 - X2"],
        2: ["-1 - X0 + X2", "-X1 + X2"],
    }


def test_a_python_scan_for_the_maximum_branches_at_each_comparison():
    def scan(dataset, rng):
        x = np.asarray(dataset) + rng.laplace(size=3)
        best = 0
        for i in range(1, 3):
            if x[i] > x[best]:
                best = i
        return best, tuple(i for i in range(3))

    found = from_sampler(scan).enumerate((1, 0, 0)).traced
    assert found is not None and len(found.paths) == 4  # 2^(k-1) record patterns, every one possible


def test_the_sparse_vector_loop_stops_at_the_first_answer_above():
    def svt(dataset, rng):
        rho = rng.laplace(scale=2)
        answers = []
        for q in dataset:
            if q + rng.laplace(scale=4) >= Fraction(1, 2) + rho:
                answers.append(True)
                break
            answers.append(False)
        return tuple(answers)

    assert paths(svt, (1, 0)) == {
        (True,): ["1/2 - X0 + X1"],
        (False, True): ["-1/2 + X0 - X1", "-1/2 - X0 + X2"],
        (False, False): ["-1/2 + X0 - X1", "1/2 + X0 - X2"],
    }


def test_a_comparison_the_path_already_decides_is_no_choice_point():
    def twice(dataset, rng):
        x = dataset[0] + rng.laplace()
        return (x > 1, x > 0)  # x > 1 implies x > 0; x <= 1 leaves x > 0 open

    assert paths(twice, (0,)) == {
        (True, True): ["-1 + X0"],
        (False, True): ["1 - X0", "X0"],
        (False, False): ["-X0", "1 - X0"],
    }


def test_an_exponential_variable_is_positive():
    def one_sided(dataset, rng):
        return rng.exponential(2.0) > -1  # always: X > 0 > -1

    traced = from_sampler(one_sided).enumerate((0,)).traced
    assert traced is not None and [path.output for path in traced.paths] == [True]
    assert traced.paths[0].variables == (NoiseVariable(0, "exponential", Fraction(2)),)


def test_float_constants_are_their_binary_values():
    def scaled(dataset, rng):
        return dataset[0] + rng.laplace(scale=2.0 / 0.7) > 0.1

    traced = from_sampler(scaled).enumerate((0,)).traced
    assert traced is not None and traced.floats
    assert traced.paths[0].variables[0].scale == Fraction(2.0 / 0.7)  # 2.857142857142857, exactly that double
    assert traced.paths[0].constraints[0] == form(-Fraction(0.1), (0, 1))


def test_sort_chooses_one_order_per_path():
    def order(dataset, rng):
        return tuple(int(i) for i in np.argsort(np.asarray(dataset) + rng.laplace(size=3)))

    found = paths(order, (1, 0, 0))
    assert len(found) == 6  # 3! orders
    assert found[(0, 1, 2)] == ["-1 - X0 + X1", "-X1 + X2"]  # the chain X0 + 1 < X1 < X2


def test_clip_and_abs_split_at_their_kinks():
    def clipped(dataset, rng):
        return bool(np.clip(dataset[0] + rng.laplace(), 0, 2) > 1)

    found = from_sampler(clipped).enumerate((1,)).traced
    assert found is not None
    # below 0 -> 0 (False); above 2 -> 2 (True); between: x > 1 or not
    assert sorted((p.output, len(p.constraints)) for p in found.paths) == [(False, 1), (False, 3), (True, 2), (True, 3)]

    def magnitude(dataset, rng):
        return bool(abs(rng.laplace()) > 1)

    assert len(from_sampler(magnitude).enumerate((0,)).traced.paths) == 4


def test_a_noisy_output_is_its_form():
    def release(dataset, rng):
        return dataset[0] + rng.laplace(scale=2.0)

    traced = from_sampler(release).enumerate((3,)).traced
    assert traced is not None and [path.output for path in traced.paths] == [form(3, (0, 1))]


def test_a_vectorised_mask_branches_elementwise():
    def vectorised(dataset, rng):
        noisy = np.asarray(dataset)[None, :] + rng.laplace(size=(1, 2))
        return tuple(int(v) for v in (noisy >= 0.5).astype(int)[0])

    assert sorted(paths(vectorised, (1, 0))) == [(0, 0), (0, 1), (1, 0), (1, 1)]


# -- feasibility --------------------------------------------------------------------------------------


def laplace(*indices):
    return [NoiseVariable(i, "laplace", Fraction(1)) for i in indices]


@pytest.mark.parametrize(
    "constraints, expected",
    [
        ([form(0, (0, 1), (1, -1)), form(0, (0, -1), (1, 1))], False),  # X0 > X1 and X1 > X0
        ([form(-1, (0, 1), (1, -1)), form(1, (0, -1), (1, 1))], False),  # X0 - X1 > 1, X1 - X0 > -1: sum 0 > 0
        ([form(-1, (0, 1), (1, -1)), form(2, (0, -1), (1, 1))], True),  # X0 - X1 in (1, 2)
        ([form(0, (0, 1), (1, -1)), form(0, (1, 1), (2, -1)), form(1, (2, 1), (0, -1))], True),  # cycle sum -1 < 0
        ([form(0, (0, 1), (1, -1)), form(0, (1, 1), (2, -1)), form(0, (2, 1), (0, -1))], False),  # cycle sum 0
        ([form(-3, (0, 1)), form(2, (0, -1))], False),  # X0 > 3 and X0 < 2
        ([form(0, (0, 1), (1, 1))], None),  # X0 + X1 > 0: not a difference constraint, not decided here
        ([], True),
    ],
)
def test_feasibility_of_difference_constraints(constraints, expected):
    assert feasible(constraints, laplace(0, 1, 2)) is expected


def test_an_exponential_support_takes_part_in_feasibility():
    assert feasible([form(-1, (0, -1))], [NoiseVariable(0, "exponential", Fraction(1))]) is False  # -X0 > 1, X0 > 0
    assert feasible([form(-1, (0, -1))], laplace(0)) is True


def test_feasibility_against_brute_force_on_random_difference_systems():
    # A system of x_u - x_v > c on 3 variables is feasible iff a grid point satisfies it when the
    # constants are integers in [-2, 2] and the grid is fine enough (differences of 1/4 steps).
    generator = random.Random(7)
    grid = [Fraction(k, 4) for k in range(-24, 25)]
    for _ in range(60):
        constraints = []
        for _ in range(generator.randrange(1, 5)):
            u, v = generator.sample(range(3), 2)
            constraints.append(form(-generator.randrange(-2, 3), (u, 1), (v, -1)) if u < v
                               else form(-generator.randrange(-2, 3), (v, -1), (u, 1)))
        brute = any(
            all(c.const + sum(a * point[i] for i, a in c.coefs) > 0 for c in constraints)
            for point in ((Fraction(0), y, z) for y in grid for z in grid)  # x0 = 0: only differences matter
        )
        assert feasible(constraints, laplace(0, 1, 2)) is brute, [c.text() for c in constraints]


# -- refusals: the construct and the way out -------------------------------------------------------------


@pytest.mark.parametrize(
    "body, construct",
    [
        (lambda d, rng: float(d[0] + rng.laplace()), "float()"),
        (lambda d, rng: math.log(rng.exponential() + 1), "float()"),
        (lambda d, rng: int(rng.laplace()), "int()"),
        (lambda d, rng: 1 if rng.laplace() and True else 0, "the truth value"),
        (lambda d, rng: np.exp(rng.laplace()) > 1, "numpy.exp"),
        (lambda d, rng: rng.laplace() * rng.laplace() > 0, "multiplied or divided two noisy values"),
        (lambda d, rng: 1 / rng.laplace() > 0, "divided by the noisy value"),
        (lambda d, rng: rng.laplace() + rng.random() > 0, "combined a noisy value with a lazy uniform"),
        (lambda d, rng: rng.normal() > 0, "compared a value involving Gaussian noise"),
        (lambda d, rng: rng.gumbel() > 0, "compared a value involving Gumbel noise"),
        (lambda d, rng: rng.uniform() > 0, "draws from a continuous distribution that is not traced"),
    ],
)
def test_what_is_not_traced_is_refused_naming_the_construct_and_the_way_on(body, construct):
    with pytest.raises(MechanismError) as raised:
        from_sampler(body).enumerate((0,))
    message = str(raised.value)
    assert construct in message and "dpverify.estimate" in message


def test_a_refusal_cannot_be_swallowed_by_the_sampler():
    def swallowing(dataset, rng):
        try:
            return float(rng.laplace())
        except Exception:
            return 0.0

    with pytest.raises(MechanismError, match=r"float\(\)"):
        from_sampler(swallowing).enumerate((0,))


def test_a_tail_is_refused_with_continuous_noise():
    with pytest.raises(MechanismError, match=r"tail=1e-09.*Drop tail="):
        from_sampler(lambda d, rng: rng.laplace() > 0, tail=1e-9).enumerate((0,))


def test_calling_a_traced_mechanism_points_to_verify():
    with pytest.raises(MechanismError, match="pass the mechanism to verify"):
        from_sampler(lambda d, rng: rng.laplace() > 0)((0,))


def test_a_negative_scale_is_an_error():
    with pytest.raises(MechanismError, match="scale must be >= 0"):
        from_sampler(lambda d, rng: rng.laplace(scale=-1.0) > 0).enumerate((0,))


def test_expovariate_reads_a_rate():
    traced = from_sampler(lambda d, rng: rng.python.expovariate(4) > 1).enumerate((0,)).traced
    assert traced is not None and traced.paths[0].variables[0] == NoiseVariable(0, "exponential", Fraction(1, 4))
    with pytest.raises(MechanismError, match="lambd must be > 0"):
        from_sampler(lambda d, rng: rng.python.expovariate(0) > 1).enumerate((0,))


def test_a_cycle_of_comparisons_keeps_only_what_the_others_do_not_imply():
    from dpverify.finite.sampler._noise import without_redundant_cycles

    a_below_b, c_below_b, a_below_c = form(0, (0, -1), (1, 1)), form(0, (1, 1), (2, -1)), form(0, (0, -1), (2, 1))
    reduced = without_redundant_cycles([a_below_b, c_below_b, a_below_c], laplace(0, 1, 2))
    assert reduced == (c_below_b, a_below_c)  # a < c < b: a < b is implied
    chain = [a_below_b, c_below_b]
    assert without_redundant_cycles(chain, laplace(0, 1, 2)) == tuple(chain)  # no cycle: untouched
    tight = [form(-1, (0, -1), (1, 1)), form(0, (1, 1), (2, -1)), form(0, (0, -1), (2, 1))]  # b > a + 1: not implied
    assert without_redundant_cycles(tight, laplace(0, 1, 2)) == tuple(tight)
