"""from_sampler (dpverify.finite.sampler.sampling): exact distributions of sampling code by path enumeration.

Every expected distribution is worked out by hand in a comment; each path's probability is the
product of its branch probabilities and equal outputs add up.
"""

from __future__ import annotations

import itertools
import math
import pickle
import random
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy

import dpverify
from dpverify import Distribution, from_sampler
from dpverify.errors import EnumerationTooLarge, InvalidArgument, MechanismError, NondeterministicMechanism
from dpverify.finite.sampler.sampling import Enumeration, SamplerMechanism

F = Fraction
P = Fraction(3, 4)


def enumerate_(sampler, dataset=(), **options) -> Enumeration:
    return from_sampler(sampler, **options).enumerate(dataset)


# -- module-level samplers (picklable) ----------------------------------------------------------


def rr_coin(dataset, rng):
    """Randomized response: keep the bit when the lazy uniform falls below 3/4."""
    bit = dataset[0]
    return bit if rng.random() < P else 1 - bit


def rr_choice(dataset, rng):
    """Randomized response by numpy's choice with exact p."""
    bit = dataset[0]
    return rng.choice([bit, 1 - bit], p=[P, 1 - P])


rr_coin.exchangeable = True  # type: ignore[attr-defined]


# -- closed forms --------------------------------------------------------------------------------


@pytest.mark.parametrize("sampler", [rr_coin, rr_choice])
@pytest.mark.parametrize("bit", [0, 1])
def test_randomized_response_is_exact(sampler, bit):
    found = enumerate_(sampler, (bit,))
    # keep w.p. 3/4 (u in [0, 3/4)), flip w.p. 1/4 (u in [3/4, 1))
    assert found.distribution == Distribution({bit: F(3, 4), 1 - bit: F(1, 4)})
    assert found.distribution.is_exact
    assert found.paths == 2


def test_randomized_response_by_python_random_calls():
    def rr(dataset, rng):
        bit = dataset[0]
        return rng.choices([bit, 1 - bit], weights=[3, 1])[0]  # relative weights 3 : 1

    assert from_sampler(rr)((1,)) == Distribution({1: F(3, 4), 0: F(1, 4)})


def test_binomial_is_exact():
    def sampler(dataset, rng):
        return rng.binomial(3, F(1, 3))

    # P(k) = C(3, k) (1/3)^k (2/3)^(3 - k): 8/27, 3 * 4/27 = 4/9, 3 * 2/27 = 2/9, 1/27
    assert from_sampler(sampler)(()) == Distribution({0: F(8, 27), 1: F(4, 9), 2: F(2, 9), 3: F(1, 27)})


def test_binomial_equals_the_sum_of_its_coins():
    def coins(dataset, rng):
        return sum(rng.random() < F(1, 3) for _ in range(3))

    def binomial(dataset, rng):
        return rng.binomial(3, F(1, 3))

    sum_of_coins = enumerate_(coins)
    assert sum_of_coins.paths == 8  # 2^3 coin paths merge into 4 outcomes
    assert sum_of_coins.distribution == from_sampler(binomial)(())


def test_binomial_of_an_array_broadcasts():
    def sampler(dataset, rng):
        return rng.binomial([1, 2], F(1, 2))

    # independent Bin(1, 1/2) x Bin(2, 1/2): (a, b) has (1/2) * C(2, b)/4
    assert from_sampler(sampler)(()) == Distribution(
        {(a, b): F(1, 2) * F(math.comb(2, b), 4) for a in (0, 1) for b in (0, 1, 2)}
    )


def test_integers_are_uniform():
    assert from_sampler(lambda d, rng: rng.integers(2, 5))(()) == Distribution.uniform([2, 3, 4])
    assert from_sampler(lambda d, rng: rng.integers(3))(()) == Distribution.uniform([0, 1, 2])
    assert from_sampler(lambda d, rng: rng.integers(1, 3, endpoint=True))(()) == Distribution.uniform([1, 2, 3])
    # size=2: 3 * 3 = 9 ordered pairs, 1/9 each, returned as tuples of Python ints
    pairs = enumerate_(lambda d, rng: rng.integers(0, 3, size=2))
    assert pairs.paths == 9
    assert pairs.distribution == Distribution({(a, b): F(1, 9) for a in range(3) for b in range(3)})
    assert all(type(v) is int for outcome in pairs.distribution for v in outcome)


def test_python_integer_draws():
    assert from_sampler(lambda d, rng: rng.randrange(1, 10, 4))(()) == Distribution.uniform([1, 5, 9])
    assert from_sampler(lambda d, rng: rng.randrange(3))(()) == Distribution.uniform([0, 1, 2])
    assert from_sampler(lambda d, rng: rng.python.randint(1, 3))(()) == Distribution.uniform([1, 2, 3])  # Python's: 3 in
    assert from_sampler(lambda d, rng: rng.getrandbits(2))(()) == Distribution.uniform(range(4))


def test_results_have_numpy_types_where_numpy_has_them():
    seen = {}

    def sampler(dataset, rng):
        draws = {
            "integer": rng.integers(5), "array": rng.integers(0, 2, size=3), "element": rng.choice(["a", "b"]),
            "row": rng.choice(np.array([[1, 2], [3, 4]])), "permutation": rng.permutation([1, 2]),
        }
        if not seen:  # the first path: every draw takes its first branch
            seen.update(draws)
        return 0

    from_sampler(sampler)(())
    assert type(seen["integer"]) is int
    assert isinstance(seen["array"], np.ndarray) and seen["array"].dtype == np.int64 and seen["array"].shape == (3,)
    assert type(seen["element"]) is str and seen["element"] == "a"  # the element itself, as random.choice gives it
    assert seen["row"].tolist() == [1, 2]
    assert isinstance(seen["permutation"], np.ndarray)


@pytest.mark.parametrize(
    "sampler",
    [
        lambda d, rng: rng.permutation(4),
        lambda d, rng: rng.permutation(np.arange(4)),
        lambda d, rng: rng.sample(range(4), 4),
        lambda d, rng: rng.choice(4, size=4, replace=False),
    ],
    ids=["permutation(int)", "permutation(array)", "sample", "choice-without-replacement"],
)
def test_permutations_are_uniform(sampler):
    found = enumerate_(sampler)
    # 4! = 24 orders, each with probability 1/4 * 1/3 * 1/2 * 1 = 1/24 exactly
    assert found.paths == 24
    assert found.distribution == Distribution({order: F(1, 24) for order in itertools.permutations(range(4))})


def test_shuffle_is_uniform_in_place():
    def numpy_style(dataset, rng):
        x = np.array(dataset)
        assert rng.shuffle(x) is None
        return x

    def python_style(dataset, rng):
        x = list(dataset)
        rng.shuffle(x)
        return x  # a list: returned as a tuple

    expected = Distribution({order: F(1, 6) for order in itertools.permutations("abc")})  # 1/3!
    assert from_sampler(python_style)(tuple("abc")) == expected
    assert from_sampler(numpy_style)(tuple("abc")) == expected


def test_permuted_permutes_each_row_independently():
    def sampler(dataset, rng):
        return rng.permuted(np.array([[0, 1], [2, 3]]), axis=1)

    # each row has 2 orders, independently: 4 outcomes of 1/2 * 1/2
    assert from_sampler(sampler)(()) == Distribution(
        {(r0, r1): F(1, 4) for r0 in ((0, 1), (1, 0)) for r1 in ((2, 3), (3, 2))}
    )


def test_sample_without_replacement_of_size_two():
    found = from_sampler(lambda d, rng: rng.sample(d, 2))(tuple("abc"))
    # 3 * 2 = 6 ordered pairs of distinct positions, 1/6 each
    assert found == Distribution({(a, b): F(1, 6) for a in "abc" for b in "abc" if a != b})
    counted = from_sampler(lambda d, rng: sorted(rng.sample("ab", 2, counts=[2, 1])))(())
    # population a, a, b: the unordered pair is {a, a} w.p. C(2,2)/C(3,2) = 1/3, {a, b} w.p. 2/3
    assert counted == Distribution({("a", "a"): F(1, 3), ("a", "b"): F(2, 3)})


def test_choice_with_replacement_and_p():
    def sampler(dataset, rng):
        return rng.choice(3, size=2, p=[F(1, 2), F(1, 4), F(1, 4)])

    # independent draws: P(a, b) = p_a p_b
    p = {0: F(1, 2), 1: F(1, 4), 2: F(1, 4)}
    assert from_sampler(sampler)(()) == Distribution({(a, b): p[a] * p[b] for a in p for b in p})


def test_choice_without_replacement_and_p_is_successive_sampling():
    def sampler(dataset, rng):
        return rng.choice(3, size=2, replace=False, p=[F(1, 2), F(1, 4), F(1, 4)])

    # P(a, b) = p_a * p_b / (1 - p_a): (0, 1) = 1/2 * (1/4)/(1/2) = 1/4; (1, 0) = 1/4 * (1/2)/(3/4) = 1/6;
    # (1, 2) = 1/4 * (1/4)/(3/4) = 1/12; and symmetrically for 2
    expected = Distribution({
        (0, 1): F(1, 4), (0, 2): F(1, 4), (1, 0): F(1, 6), (1, 2): F(1, 12), (2, 0): F(1, 6), (2, 1): F(1, 12),
    })
    assert from_sampler(sampler)(()) == expected
    # numpy's own Generator draws the same distribution (5,000 seeded draws; standard errors <= 0.0062, so
    # 0.03 is about five of them)
    generator = np.random.default_rng(0)
    counts: dict = {}
    for _ in range(5_000):
        pair = tuple(int(v) for v in generator.choice(3, size=2, replace=False, p=[0.5, 0.25, 0.25]))
        counts[pair] = counts.get(pair, 0) + 1
    for pair, probability in expected.items():
        assert abs(counts[pair] / 5_000 - float(probability)) < 0.03


def test_choices_with_weights_and_cumulative_weights():
    both = from_sampler(lambda d, rng: rng.choices("ab", weights=[1, 2], k=2))(())
    # a w.p. 1/3, b w.p. 2/3, two independent draws
    assert both == Distribution({("a", "a"): F(1, 9), ("a", "b"): F(2, 9), ("b", "a"): F(2, 9), ("b", "b"): F(4, 9)})
    cumulative = from_sampler(lambda d, rng: rng.choices("ab", cum_weights=[1, 3])[0])(())
    assert cumulative == Distribution({"a": F(1, 3), "b": F(2, 3)})  # weights 1, 3 - 1 = 2


def test_hypergeometric_and_multinomial():
    hyper = from_sampler(lambda d, rng: rng.hypergeometric(2, 3, 2))(())
    # C(2, k) C(3, 2 - k) / C(5, 2): k=0: 3/10, k=1: 6/10, k=2: 1/10
    assert hyper == Distribution({0: F(3, 10), 1: F(3, 5), 2: F(1, 10)})
    multi = from_sampler(lambda d, rng: rng.multinomial(2, [F(1, 2), F(1, 2)]))(())
    # 2!/(c0! c1!) (1/2)^2: (0, 2) 1/4, (1, 1) 2/4, (2, 0) 1/4
    assert multi == Distribution({(0, 2): F(1, 4), (1, 1): F(1, 2), (2, 0): F(1, 4)})


# -- lazy uniforms ------------------------------------------------------------------------------


def test_inverse_cdf_of_a_three_outcome_distribution():
    def sampler(dataset, rng):
        u = rng.random()
        if u < F(1, 6):
            return "a"
        if u < F(1, 2):  # the interval is now [1/6, 1): P = (1/2 - 1/6) / (5/6) = 2/5 of the 5/6 left
            return "b"
        return "c"

    found = enumerate_(sampler)
    # a: 1/6; b: 5/6 * 2/5 = 1/3; c: 5/6 * 3/5 = 1/2
    assert found.distribution == Distribution({"a": F(1, 6), "b": F(1, 3), "c": F(1, 2)})
    assert found.paths == 3


def test_every_comparison_operator_branches_on_the_interval():
    def sampler(dataset, rng):
        u = rng.random()
        return (u >= F(1, 2), u > F(1, 4), u <= F(3, 4), u == 0.5, u != 0.5)

    # three thresholds cut [0, 1) into four quarters, 1/4 each; u == 0.5 has probability 0
    assert from_sampler(sampler)(()) == Distribution({
        (False, False, True, False, True): F(1, 4),  # [0, 1/4)
        (False, True, True, False, True): F(1, 4),  # [1/4, 1/2)
        (True, True, True, False, True): F(1, 4),  # [1/2, 3/4)
        (True, True, False, False, True): F(1, 4),  # [3/4, 1)
    })


def test_comparisons_outside_the_interval_do_not_branch():
    def sampler(dataset, rng):
        u = rng.random()
        below = u < F(1, 2)
        return (below, u < F(3, 4), u < 0, u < 1, u < math.inf, u > -math.inf)

    found = enumerate_(sampler)
    assert found.paths == 3  # [0, 1/2), [1/2, 3/4), [3/4, 1): the constant comparisons add no branch
    assert found.distribution == Distribution({
        (True, True, False, True, True, True): F(1, 2),
        (False, True, False, True, True, True): F(1, 4),
        (False, False, False, True, True, True): F(1, 4),
    })
    assert found.distribution.is_exact


def test_arrays_of_uniforms_compare_elementwise():
    def sampler(dataset, rng):
        u = rng.random(size=2)
        assert u.dtype == object and u.shape == (2,)
        return u < [F(1, 2), F(1, 3)]

    # independent coins 1/2 and 1/3: (T, T) 1/6, (T, F) 1/3, (F, T) 1/6, (F, F) 1/3
    assert from_sampler(sampler)(()) == Distribution(
        {(True, True): F(1, 6), (True, False): F(1, 3), (False, True): F(1, 6), (False, False): F(1, 3)}
    )


def test_numpy_and_other_exact_thresholds():
    def reflected(dataset, rng):
        return bool(np.float64(0.5) > rng.random())  # numpy scalar on the left

    assert from_sampler(reflected)(()) == Distribution({True: 0.5, False: 0.5})
    decimal = from_sampler(lambda d, rng: rng.random() < Decimal("0.1"))(())
    assert decimal == Distribution({True: F(1, 10), False: F(9, 10)}) and decimal.is_exact
    rational = from_sampler(lambda d, rng: rng.random() < sympy.Rational(1, 3))(())
    assert rational == Distribution({True: F(1, 3), False: F(2, 3)}) and rational.is_exact


# -- floats ---------------------------------------------------------------------------------------


def test_float_probabilities_give_a_float_distribution():
    found = from_sampler(lambda d, rng: rng.choice(3, p=[0.2, 0.3, 0.5]))(())
    assert found == Distribution({0: 0.2, 1: 0.3, 2: 0.5}) and not found.is_exact  # fsum is 1.0: used as given
    coin = from_sampler(lambda d, rng: rng.random() < 0.1)(())
    # the binary value of 0.1 below, 1 - it above, each rounded once
    assert coin == Distribution({True: 0.1, False: float(1 - F(0.1))}) and not coin.is_exact
    relative = from_sampler(lambda d, rng: rng.choices("ab", weights=[0.1, 0.2])[0])(())
    assert relative == Distribution({"a": 0.1 / 0.30000000000000004, "b": 0.2 / 0.30000000000000004})  # 0.1 + 0.2


def test_a_float_on_some_paths_makes_every_probability_a_float():
    def sampler(dataset, rng):
        if rng.integers(2):
            return rng.random() < 0.25
        return "exact"

    found = from_sampler(sampler)(())
    assert found == Distribution({"exact": 0.5, True: 0.125, False: 0.375})
    assert all(type(p) is float for p in found.values())


# -- outputs --------------------------------------------------------------------------------------


def test_outputs_are_made_hashable():
    def sampler(dataset, rng):
        return {
            "array": np.array([[1, 2], [3, 4]]),
            "scalar": np.int64(7),
            "list": [np.float64(0.5), [1]],
            "set": {np.int64(1)},
        }[dataset[0]]

    mechanism = from_sampler(sampler, deterministic=True)  # draws nothing: its outputs are its own
    assert mechanism(("array",)) == Distribution.point(((1, 2), (3, 4)))
    assert type(next(iter(mechanism(("scalar",))))) is int
    assert mechanism(("list",)) == Distribution.point((0.5, (1,)))
    assert mechanism(("set",)) == Distribution.point(frozenset({1}))


@pytest.mark.parametrize(
    "returned, fragment",
    [({1: 2}, "returned a mapping"), (bytearray(b"x"), "unhashable type bytearray")],
)
def test_unhashable_outputs_are_refused(returned, fragment):
    with pytest.raises(MechanismError, match=fragment):
        from_sampler(lambda d, rng: returned)(())


def test_a_lazy_uniform_returned_is_a_density_that_verify_integrates():
    with pytest.raises(MechanismError, match=r"releases a real number .* \(pass the mechanism to verify\)"):
        from_sampler(lambda d, rng: rng.random())(())
    traced = from_sampler(lambda d, rng: rng.random()).enumerate(()).traced
    assert traced is not None and traced.paths[0].variables[0].scale == 1  # uniform on [0, 1)


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    ["standard_cauchy()", "uniform(0, 1)", "gamma(2)", "lognormvariate(0, 1)", "logistic(0, 1)", "zipf(2)",
     "logseries(0.5)"],
)
def test_draws_without_a_finite_support_are_refused(call):
    def sampler(dataset, rng):
        return eval(f"rng.{call}")

    with pytest.raises(MechanismError) as raised:
        from_sampler(sampler)(())
    message = str(raised.value)
    assert f"rng.{call}" in message  # the call, with its arguments
    assert "dpverify.mechanisms.noise" in message and "dpverify.estimate" in message  # the two ways on


def test_a_refused_draw_cannot_be_swallowed():
    def sampler(dataset, rng):
        try:
            rng.uniform()
        except Exception:
            pass
        return 0

    with pytest.raises(MechanismError, match=r"rng.uniform\(\)"):
        from_sampler(sampler)(())


@pytest.mark.parametrize(
    "operation, fragment",
    [
        (lambda u: math.log(u), "math.log"),  # math.log calls float(u)
        (lambda u: float(u), r"float\(u\)"),
        (lambda u: np.sin(u), "numpy.sin"),
        (lambda u: np.sin(np.array([u], dtype=object)), "numpy.sin"),
        (lambda u: bool(u), r"bool\(u\)"),
    ],
)
def test_operations_that_need_the_value_of_a_lazy_uniform_are_refused(operation, fragment):
    with pytest.raises(MechanismError, match=fragment) as raised:
        from_sampler(lambda d, rng: operation(rng.random()))(())
    assert "u < p" in str(raised.value) and "dpverify.estimate" in str(raised.value)


@pytest.mark.parametrize("operation, shown", [(lambda u: np.log(u), "log(u)"),
                                               (lambda u: np.exp(np.array([u], dtype=object)), "exp(u)")])
def test_a_real_value_computed_non_affinely_from_a_lazy_uniform_cannot_be_the_output(operation, shown):
    # arithmetic on u is followed exactly (test_lazy_arithmetic.py), but only an affine a*u + b is released
    with pytest.raises(MechanismError, match="a real number computed from a lazy uniform") as raised:
        from_sampler(lambda d, rng: operation(rng.random())).enumerate(())
    assert f"returned {shown}," in str(raised.value) and "dpverify.estimate" in str(raised.value)
    assert "rng.laplace" in str(raised.value)


@pytest.mark.parametrize("operation, form", [(lambda u: u * 3, "3 X0"), (lambda u: 1 - u, "1 - X0")])
def test_an_affine_map_of_a_lazy_uniform_is_released_as_a_uniform_variable(operation, form):
    traced = from_sampler(lambda d, rng: operation(rng.random())).enumerate(()).traced
    assert traced is not None and [p.output.text() for p in traced.paths] == [form]
    assert traced.paths[0].variables[0].kind == "uniform"


def test_two_lazy_uniforms_do_not_compare():
    with pytest.raises(MechanismError, match="compared two lazy uniforms"):
        from_sampler(lambda d, rng: rng.random() < rng.random())(())
    with pytest.raises(MechanismError, match="compared two lazy uniforms"):
        from_sampler(lambda d, rng: tuple(sorted(rng.random(size=3))))(())


def test_unknown_rng_attributes_list_the_supported_calls():
    def probe(dataset, rng):
        return hasattr(rng, "bit_generator_of_mine")

    assert from_sampler(probe)(()) == Distribution.point(False)
    with pytest.raises(MechanismError, match="rng.foo is not a draw") as raised:
        from_sampler(lambda d, rng: rng.foo(3))(())
    assert "integers(low, high=None" in str(raised.value) and "choices(population" in str(raised.value)
    assert isinstance(raised.value.__cause__, AttributeError)


def test_seeding_the_exact_rng_is_refused():
    with pytest.raises(MechanismError, match=r"rng.seed\(1\) works on the state"):
        from_sampler(lambda d, rng: rng.seed(1))(())


@pytest.mark.parametrize(
    "sampler, fragment",
    [
        (lambda d, rng: rng.choice(3, p=[F(1, 2), F(1, 3), F(1, 3)]), "must sum to exactly 1, got a total of 7/6"),
        (lambda d, rng: rng.choice(2, p=[0.5, 0.6]), "must sum to 1"),
        (lambda d, rng: rng.choice(2, p=[F(3, 2), F(-1, 2)]), r"p\[1\] must be >= 0"),
        (lambda d, rng: rng.integers(3, 3), "the range is empty"),
        (lambda d, rng: rng.choice(2, size=3, replace=False), "cannot take 3 distinct elements"),
        (lambda d, rng: rng.shuffle((1, 2)), "mutable sequence"),
        (lambda d, rng: rng.sample({1, 2}, 1), "sets have no order"),
        (lambda d, rng: rng.random() < sympy.exp(-1), "irrational"),
        (lambda d, rng: rng.binomial(2, F(3, 2)), r"p must be in \[0, 1\]"),
    ],
)
def test_bad_arguments_to_draws_are_named(sampler, fragment):
    with pytest.raises(MechanismError, match=fragment):
        from_sampler(sampler)(())


def test_an_error_in_the_sampler_names_the_dataset_and_the_path():
    def sampler(dataset, rng):
        return 1 // rng.integers(2)  # 1 // 0 on the first path

    with pytest.raises(MechanismError, match=r"ZeroDivisionError.*dataset \(5,\).*integers -> outcome 1 of 2") as raised:
        from_sampler(sampler)((5,))
    assert isinstance(raised.value.__cause__, ZeroDivisionError) and raised.value.dataset == (5,)


# -- determinism -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sampler, generator",
    [
        (lambda d, rng: rng.integers(2) + random.random(), "Python's global random generator"),
        (lambda d, rng: rng.integers(2) + np.random.rand(), "numpy's global generator"),
        (lambda d, rng: (random.random(), rng.integers(2))[1], "Python's global random generator"),  # output unaffected
    ],
)
def test_the_global_generators_are_detected(sampler, generator):
    with pytest.raises(NondeterministicMechanism, match=generator):
        from_sampler(sampler)(())


def test_numpy_global_generator_is_detected_without_the_ctypes_reading(monkeypatch):
    from dpverify.finite import _global_random

    assert _global_random._ctypes_layout()  # this numpy's global MT19937 is read through ctypes (the fast path)
    monkeypatch.setattr(_global_random, "_ctypes_layout", lambda: False)  # the np.random.get_state fallback
    with pytest.raises(NondeterministicMechanism, match="numpy's global generator"):
        from_sampler(lambda d, rng: rng.integers(2) + np.random.randn())(())
    assert from_sampler(rr_coin)((1,)) == Distribution({1: F(3, 4), 0: F(1, 4)})  # no false alarm


def test_the_clock_and_private_generators_are_detected_on_replay():
    with pytest.raises(NondeterministicMechanism, match="replayed"):
        from_sampler(lambda d, rng: (rng.integers(2), time.perf_counter()))(())
    with pytest.raises(NondeterministicMechanism, match="replayed"):
        from_sampler(lambda d, rng: (rng.integers(2), int(np.random.default_rng().integers(2**62))))(())


def test_draws_that_change_between_runs_are_detected():
    calls = []

    def sampler(dataset, rng):  # a different draw on every third run: state kept between calls
        calls.append(1)
        return rng.integers(2) if len(calls) % 3 else rng.integers(3)

    with pytest.raises(NondeterministicMechanism, match=r"draw #1 was rng.integers\(...\) with 3 uniform outcomes"):
        from_sampler(sampler)(())


def test_a_lazy_uniform_kept_from_an_earlier_run_is_refused():
    kept = []

    def sampler(dataset, rng):
        if kept:
            return kept[0] < F(1, 2)
        kept.append(rng.random())
        return 0

    with pytest.raises(MechanismError, match="compared after the run"):
        from_sampler(sampler)(())


# -- size -----------------------------------------------------------------------------------------


def test_max_paths_is_exact_at_the_bound():
    sampler = lambda d, rng: tuple(rng.integers(0, 2, size=4))  # noqa: E731  (2^4 = 16 paths)
    assert enumerate_(sampler, max_paths=16).paths == 16
    with pytest.raises(EnumerationTooLarge, match=r"more than max_paths=15 .* about 16 by Knuth's estimate"):
        from_sampler(sampler, max_paths=15)(())


def test_max_paths_refusal_gives_an_estimate_and_the_fix():
    sampler = lambda d, rng: tuple(rng.integers(0, 10, size=4))  # noqa: E731  (10^4 paths)
    with pytest.raises(EnumerationTooLarge) as raised:
        from_sampler(sampler, max_paths=500)(())
    message = str(raised.value)
    assert "about 1e+04 by Knuth's estimate" in message  # every path has 10 * 10 * 10 * 10 branches: exact
    assert "raise max_paths" in message.lower() and "dpverify.estimate" in message


def test_a_huge_enumeration_is_refused_early():
    sampler = lambda d, rng: tuple(rng.integers(0, 10, size=6))  # noqa: E731  (10^6 paths)
    with pytest.raises(EnumerationTooLarge, match=r"estimated after the first 1,000 paths\): about 1e\+06"):
        from_sampler(sampler, max_paths=2_000)(())


def test_an_astronomical_estimate_is_reported_as_infinite():
    sampler = lambda d, rng: tuple(rng.integers(0, 10, size=400))  # noqa: E731  (10^400 paths: no float holds it)
    with pytest.raises(EnumerationTooLarge, match="more than 1e308 by Knuth's estimate"):
        from_sampler(sampler, max_paths=10)(())


def test_a_single_huge_draw_is_refused_at_once():
    with pytest.raises(EnumerationTooLarge, match="rng.integers alone has 1,000,000,000 outcomes"):
        from_sampler(lambda d, rng: rng.integers(10**9))(())


def test_enumeration_too_large_is_an_invalid_argument():
    assert issubclass(EnumerationTooLarge, InvalidArgument)


# -- the mechanism ----------------------------------------------------------------------------------


def test_from_sampler_checks_its_arguments():
    with pytest.raises(InvalidArgument, match="sampler must be callable"):
        from_sampler(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="max_paths must be an integer >= 1, got max_paths=0"):
        from_sampler(rr_coin, max_paths=0)


def test_the_mechanism_is_named_picklable_and_carries_exchangeable():
    mechanism = from_sampler(rr_coin)
    assert isinstance(mechanism, SamplerMechanism)
    assert mechanism.__name__ == "rr_coin" and repr(mechanism) == "from_sampler(rr_coin, max_paths=100000)"
    assert mechanism.exchangeable is True
    assert not hasattr(from_sampler(rr_choice), "exchangeable")
    copy = pickle.loads(pickle.dumps(mechanism))
    assert copy((1,)) == mechanism((1,)) and copy.exchangeable is True
    assert dpverify.from_sampler is from_sampler


def test_verify_runs_a_sampler_on_worker_processes():
    serial = dpverify.verify(from_sampler(rr_coin), records=(0, 1), n=1, epsilon=math.log(3))
    pooled = dpverify.verify(from_sampler(rr_coin), records=(0, 1), n=1, epsilon=math.log(3), executor="processes")
    assert (pooled.verdict, pooled.epsilon, pooled.delta) == (serial.verdict, serial.epsilon, serial.delta)


def test_verify_on_randomized_response_gives_ln_3():
    result = dpverify.verify(from_sampler(rr_coin), records=(0, 1), n=1, epsilon=math.log(3))
    assert result.holds
    assert result.epsilon == float(sympy.log(3).evalf(30))  # ln 3 = 1.0986122886681098, correctly rounded
    below = dpverify.verify(from_sampler(rr_coin), records=(0, 1), n=1, epsilon=math.log(3) - 1e-9)
    assert below.verdict is dpverify.Verdict.VIOLATED
    assert {below.witness.p, below.witness.q} == {F(3, 4), F(1, 4)}
