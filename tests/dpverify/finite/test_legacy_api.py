"""The exact rng where real code expects a generator: numpy's legacy RandomState API, the
random.Random view ``rng.python``, and the closure of both classes (no inherited real draw).

Every expected distribution is worked out by hand in a comment.
"""

from __future__ import annotations

import copy
import math
import random
import secrets
import sys
from fractions import Fraction

import numpy as np
import pytest

from dpverify import Distribution, from_sampler
from dpverify.errors import DpverifyError, EnumerationTooLarge, MechanismError
from dpverify.finite.sampler._exact_random import ExactRandom
from dpverify.finite.sampler._legacy import LegacyDraws
from dpverify.finite.sampler._python_random import PythonRandom
from dpverify.finite.sampler._refusals import GENERATOR_APIS, PYTHON_APIS, inherited_names, public_names

F = Fraction


def exact(sampler, dataset=()):
    return from_sampler(sampler)(dataset)


# -- who the rng is ---------------------------------------------------------------------------


def test_the_rng_is_a_random_state_and_its_view_a_system_random():
    rng = ExactRandom((), "probe", 100)
    assert isinstance(rng, np.random.RandomState)
    assert isinstance(rng.python, random.SystemRandom) and isinstance(rng.python, random.Random)
    assert isinstance(rng.python, secrets.SystemRandom)  # diffprivlib's check_random_state(seed, secure=True) test
    assert rng.python is rng.python and rng.python._exact is rng  # one view per rng
    assert rng._bit_generator is None  # RandomState.__init__ never ran: no hidden Mersenne Twister to draw from


def test_one_class_cannot_be_both_a_random_state_and_a_random_random():
    # why the Python view is a second object: CPython refuses the class
    with pytest.raises(TypeError, match="lay-out conflict"):
        type("Both", (np.random.RandomState, random.Random), {})


def test_scikit_learn_check_random_state_returns_the_rng():
    sklearn_utils = pytest.importorskip("sklearn.utils")

    def sampler(dataset, rng):
        generator = sklearn_utils.check_random_state(rng)
        assert generator is rng
        return generator.randint(0, 3)

    assert exact(sampler) == Distribution.uniform([0, 1, 2])  # randint(0, 3): 1/3 each


def test_diffprivlib_check_random_state_returns_the_rng_and_its_view():
    from diffprivlib.utils import check_random_state

    rng = ExactRandom((), "probe", 100)
    assert check_random_state(rng, True) is rng  # through scikit-learn's check (a RandomState)
    assert check_random_state(rng.python, True) is rng.python  # isinstance(seed, secrets.SystemRandom)


def test_diffprivlib_exponential_given_the_rng_is_exact():
    # diffprivlib's Exponential mechanism compares rng.random() with its float cumulative probabilities
    # (rand <= self._probabilities): only comparisons, so it is verified unmodified. Utilities
    # [sum, n - sum] with sensitivity 1 and epsilon 1: P(0) = e^(s/2) / (e^(s/2) + e^((n-s)/2)).
    from diffprivlib.mechanisms import Exponential

    def mechanism(dataset, rng):
        total = sum(dataset)
        return Exponential(epsilon=1.0, sensitivity=1, utility=[total, len(dataset) - total], random_state=rng).randomise()

    for dataset, closed_form in [((0, 0), 1 / (1 + math.e)), ((1, 0), 0.5), ((1, 1), math.e / (1 + math.e))]:
        distribution = from_sampler(mechanism)(dataset)
        assert set(distribution.support) == {0, 1}
        assert distribution[0] == pytest.approx(closed_form, abs=1e-15)  # float cumulative sums: one rounding
        assert distribution[0] + distribution[1] == 1.0


# -- numpy's legacy RandomState draws ---------------------------------------------------------


def test_randint_is_numpys_high_excluded():
    assert exact(lambda d, rng: rng.randint(0, 3)) == Distribution.uniform([0, 1, 2])  # 1/3 each, 3 excluded
    assert exact(lambda d, rng: rng.randint(3)) == Distribution.uniform([0, 1, 2])  # [0, low)
    assert exact(lambda d, rng: rng.randint(-2, 0)) == Distribution.uniform([-2, -1])
    # size=2 over {0, 1}: 4 ordered pairs, 1/2 * 1/2 = 1/4 each
    assert exact(lambda d, rng: rng.randint(0, 2, size=2)) == Distribution.uniform([(0, 0), (0, 1), (1, 0), (1, 1)])
    assert exact(lambda d, rng: rng.randint(0, 2, dtype=bool)) == Distribution.uniform([False, True])
    assert exact(lambda d, rng: type(rng.randint(5)).__name__) == Distribution.point("int")


@pytest.mark.parametrize(
    "sampler, fragment",
    [
        (lambda d, rng: rng.randint(3, 3), r"rng.randint: the range is empty, got low=3, high=3"),
        (lambda d, rng: rng.randint(0, 300, dtype=np.uint8), r"does not fit dtype=uint8 \(\[0, 255\]\)"),
        (lambda d, rng: rng.random_integers(3, 2), "rng.random_integers: the range is empty"),
        (lambda d, rng: rng.randint(0.5, 3), "low must be an integer"),
    ],
)
def test_bad_legacy_ranges_are_named(sampler, fragment):
    with pytest.raises(MechanismError, match=fragment):
        exact(sampler)


def test_a_huge_range_is_too_many_outcomes_not_an_overflow():
    with pytest.raises(EnumerationTooLarge, match="9,223,372,036,854,775,807 outcomes"):  # sys.maxsize = 2**63 - 1
        exact(lambda d, rng: rng.randint(0, sys.maxsize))
    with pytest.raises(EnumerationTooLarge, match="9,223,372,036,854,775,808 outcomes"):  # [0, sys.maxsize]: 2**63
        exact(lambda d, rng: rng.python.randint(0, sys.maxsize))
    with pytest.raises(EnumerationTooLarge, match="9,223,372,036,854,775,808 outcomes"):  # C long's [0, 2**63 - 1]
        exact(lambda d, rng: rng.tomaxint())
    with pytest.raises(EnumerationTooLarge, match="outcomes"):
        exact(lambda d, rng: rng.randrange(0, 2**70, 3))


def test_random_integers_includes_high():
    assert exact(lambda d, rng: rng.random_integers(1, 3)) == Distribution.uniform([1, 2, 3])  # 1/3 each
    assert exact(lambda d, rng: rng.random_integers(2)) == Distribution.uniform([1, 2])  # [1, low]


def test_rand_and_random_sample_are_lazy_uniforms():
    assert exact(lambda d, rng: rng.rand() < F(1, 4)) == Distribution({True: F(1, 4), False: F(3, 4)})
    assert exact(lambda d, rng: rng.random_sample() < F(1, 3)) == Distribution({True: F(1, 3), False: F(2, 3)})
    # rand(2) elementwise against (1/4, 1/2): independent coins; (T, T) 1/4 * 1/2 = 1/8, (T, F) 1/8,
    # (F, T) 3/4 * 1/2 = 3/8, (F, F) 3/8
    coins = exact(lambda d, rng: rng.rand(2) < np.array([F(1, 4), F(1, 2)], dtype=object))
    assert coins == Distribution({(True, True): F(1, 8), (True, False): F(1, 8), (False, True): F(3, 8), (False, False): F(3, 8)})
    assert exact(lambda d, rng: rng.rand(2, 3).shape) == Distribution.point((2, 3))
    assert exact(lambda d, rng: rng.random_sample(size=3).shape) == Distribution.point((3,))


def test_legacy_positional_signatures_of_shared_draws():
    # choice(a, size, replace, p): 2 of range(3) without replacement, ordered: 6 pairs, 1/3 * 1/2 = 1/6 each
    assert exact(lambda d, rng: rng.choice(3, 2, False)) == Distribution.uniform(
        [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    )
    assert exact(lambda d, rng: rng.binomial(2, F(1, 2))) == Distribution({0: F(1, 4), 1: F(1, 2), 2: F(1, 4)})  # C(2,k)/4
    # hypergeometric(1, 1, 1): the one draw is the good item with probability 1/2
    assert exact(lambda d, rng: rng.hypergeometric(1, 1, 1)) == Distribution.uniform([0, 1])
    # multinomial(2, [1/2, 1/2]): (2, 0) 1/4, (1, 1) 2 * 1/4 = 1/2, (0, 2) 1/4
    assert exact(lambda d, rng: rng.multinomial(2, [F(1, 2), F(1, 2)])) == Distribution({(2, 0): F(1, 4), (1, 1): F(1, 2), (0, 2): F(1, 4)})
    assert exact(lambda d, rng: rng.permutation(2)) == Distribution.uniform([(0, 1), (1, 0)])


@pytest.mark.parametrize(
    "call, fragment",
    [
        ("bytes(4)", r"rng.bytes\(4\) returns raw random bytes"),
        ("seed(1)", r"rng.seed\(1\) works on the state"),
        ("get_state()", r"rng.get_state\(\) works on the state"),
        ("set_state(None)", r"rng.set_state\(None\) works on the state"),
        ("standard_cauchy()", r"rng.standard_cauchy\(\) draws from a continuous distribution that is not traced"),
        ("multivariate_hypergeometric([1, 1], 1)", r"rng.multivariate_hypergeometric\(\[1, 1\], 1\) is not a draw"),
    ],
)
def test_legacy_calls_without_an_exact_answer_are_refused(call, fragment):
    with pytest.raises(MechanismError, match=fragment):
        exact(lambda d, rng: eval(f"rng.{call}"))


def test_copying_the_rng_is_refused():
    for copier in (copy.copy, copy.deepcopy):
        with pytest.raises(MechanismError, match="replays the stream of the original"):
            exact(lambda d, rng: copier(rng).randint(2))
        with pytest.raises(MechanismError, match="replays the stream of the original"):
            exact(lambda d, rng: copier(rng.python).randint(1, 2))


# -- the random.Random view -------------------------------------------------------------------


def test_the_python_view_has_pythons_meanings():
    assert exact(lambda d, rng: rng.python.randint(1, 3)) == Distribution.uniform([1, 2, 3])  # b included
    assert exact(lambda d, rng: rng.python.randrange(0, 6, 2)) == Distribution.uniform([0, 2, 4])
    assert exact(lambda d, rng: rng.python.choice("ab")) == Distribution.uniform(["a", "b"])
    assert exact(lambda d, rng: rng.python.random() < F(1, 4)) == Distribution({True: F(1, 4), False: F(3, 4)})
    assert exact(lambda d, rng: rng.python.getrandbits(2)) == Distribution.uniform([0, 1, 2, 3])  # 2**2 values
    assert exact(lambda d, rng: rng.python._randbelow(3)) == Distribution.uniform([0, 1, 2])  # secrets.randbelow's draw
    # choices with weights 1 : 3: 1/4 and 3/4; sample of 2 from 2: both orders, 1/2 each
    assert exact(lambda d, rng: rng.python.choices("ab", weights=[1, 3])[0]) == Distribution({"a": F(1, 4), "b": F(3, 4)})
    assert exact(lambda d, rng: rng.python.sample([1, 2], 2)) == Distribution.uniform([(1, 2), (2, 1)])

    def shuffled(dataset, rng):
        items = [1, 2]
        rng.python.shuffle(items)
        return tuple(items)

    assert exact(shuffled) == Distribution.uniform([(1, 2), (2, 1)])


@pytest.mark.parametrize(
    "call, fragment",
    [
        ("uniform(0, 1)", r"rng.python.uniform\(0, 1\) draws from a continuous distribution"),
        ("betavariate(1, 1)", r"rng.python.betavariate\(1, 1\) draws from a continuous"),
        ("triangular()", r"rng.python.triangular\(\) draws from a continuous"),
        ("seed(3)", r"rng.python.seed\(3\) works on the state"),
        ("getstate()", r"rng.python.getstate\(\) works on the state"),
        ("randbytes(2)", r"rng.python.randbytes\(2\) returns raw random bytes"),
        ("choice(5)", "Python's choice takes a sequence"),
    ],
)
def test_the_python_view_refuses_what_has_no_exact_answer(call, fragment):
    with pytest.raises(MechanismError, match=fragment):
        exact(lambda d, rng: eval(f"rng.python.{call}"))


def test_a_refusal_of_the_view_cannot_be_swallowed():
    def sampler(dataset, rng):
        try:
            rng.python.uniform(0, 1)
        except Exception:
            pass
        return 0

    with pytest.raises(MechanismError, match=r"rng.python.uniform\(0, 1\)"):
        exact(sampler)


# -- closed by construction: every public name is exact or refused ------------------------------


def test_no_public_name_is_inherited_from_numpy_or_python():
    assert inherited_names(ExactRandom, GENERATOR_APIS) == []
    assert inherited_names(PythonRandom, PYTHON_APIS) == []
    assert "rand" in public_names(GENERATOR_APIS) and "integers" in public_names(GENERATOR_APIS)  # both APIs walked


def test_the_inheritance_check_catches_an_open_class():
    # the mutant: the same bases without the closing walk inherit numpy's real draws
    class Open(LegacyDraws, np.random.RandomState):
        pass

    assert {"normal", "bytes", "seed", "choice"} <= set(inherited_names(Open, GENERATOR_APIS))
    assert "randint" not in inherited_names(Open, GENERATOR_APIS)  # LegacyDraws defines it


#: Arguments for the calls the rng answers; every other public name must be refused.
EXACT_CALLS = {
    "random": (), "random_sample": (), "rand": (2,), "randint": (0, 3), "random_integers": (1, 3), "integers": (0, 3),
    "choice": ([1, 2, 3],), "permutation": (3,), "shuffle": ([1, 2, 3],), "permuted": ([1, 2],), "binomial": (2, 0.5),
    "hypergeometric": (2, 1, 1), "multinomial": (2, [0.5, 0.5]), "randrange": (3,), "choices": ([1, 2],),
    "sample": ([1, 2, 3], 2), "getrandbits": (2,), "binomialvariate": (2, 0.5),
}
#: Continuous draws traced as noise variables (dpverify.finite.sampler._noise): a comparison of one branches in two.
TRACED = {"laplace": (), "exponential": (), "standard_exponential": (), "expovariate": (1,)}
#: Gumbel draws: traced for one use, the argmax (the exponential mechanism).
GUMBEL = {"gumbel": ()}
#: Gaussian draws: traced, and only released (a comparison of one is refused).
GAUSSIAN = {"normal": (), "standard_normal": (), "randn": (), "gauss": (), "normalvariate": ()}
#: Infinite-support draws: refused now, answered through the tail by another change of issue 26.
UNBOUNDED = {"geometric": (0.5,), "poisson": (1,), "negative_binomial": (1, 0.5)}
#: Answered, with more outcomes than any enumeration takes.
TOO_LARGE = {"tomaxint": ()}


def _observed(value):
    """A hashable summary of a draw's result that a real sample would make vary: lazy uniforms
    compared with 1/2 (a real float would not be a lazy uniform and fails the type check)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, list):
        return tuple(_observed(item) for item in value)
    if type(value).__name__ == "LazyUniform":
        return value < F(1, 2)
    assert isinstance(value, (int, np.integer)) or value is None, f"a real sample? {value!r}"
    return value


def _calls(apis, view):
    for name in public_names(apis):
        yield pytest.param(name, view, id=f"{'python.' if view else ''}{name}")


@pytest.mark.parametrize("name, view", [*_calls(GENERATOR_APIS, False), *_calls(PYTHON_APIS, True)])
def test_every_public_call_is_an_exact_draw_or_refused(name, view):
    def sampler(dataset, rng):
        target = rng.python if view else rng
        arguments = EXACT_CALLS.get(name) or UNBOUNDED.get(name) or TOO_LARGE.get(name) or ()
        if name == "shuffle":
            items = [1, 2, 3]
            getattr(target, name)(items)
            return tuple(items)
        return _observed(getattr(target, name)(*arguments))

    if name in TRACED:
        def compared(dataset, rng):
            return bool(getattr(rng.python if view else rng, name)(*TRACED[name]) > 0.5)

        traced = from_sampler(compared).enumerate(()).traced
        assert traced is not None and sorted(path.output for path in traced.paths) == [False, True]
        return
    if name in GUMBEL:
        def chosen(dataset, rng):
            return int(np.argmax(getattr(rng, name)(size=2)))

        assert len(from_sampler(chosen)(()).support) == 2  # each index with probability 1/2
        return
    if name in GAUSSIAN:
        def released(dataset, rng):
            return getattr(rng.python if view else rng, name)(*GAUSSIAN[name])

        traced = from_sampler(released).enumerate(()).traced
        assert traced is not None and [v.kind for v in traced.paths[0].variables] == ["gaussian"]
        return
    answered = name in EXACT_CALLS
    if answered:
        first, second = from_sampler(sampler)(()), from_sampler(sampler)(())
        assert first == second and len(first.support) >= 2  # enumerated outcomes, the same each time
        return
    with pytest.raises(DpverifyError) as raised:
        from_sampler(sampler)(())
    if name in TOO_LARGE:
        assert isinstance(raised.value, EnumerationTooLarge)
    elif name not in UNBOUNDED:
        where = "rng.python." if view else "rng."
        assert isinstance(raised.value, MechanismError) and f"{where}{name}(" in str(raised.value)


# -- the rng standing in for Python's random module (issue 37) ----------------------------------------


def test_randint_on_the_rng_standing_in_for_pythons_random_module_is_refused_not_read_as_numpys():
    # client.random = rng, the idiom before patch=: numpy's randint(0, 2) would exclude 2 and make the
    # client report x + 1 with probability 1/2 more and 3 never (eps* = inf); its truth is eps = 1
    from dpverify import Datasets, PureDp, verify
    from tests.dpverify.finite import _krr_client

    def standing_in(dataset, rng):
        _krr_client.random = rng
        return _krr_client.krr(dataset)

    def python_view(dataset, rng):
        _krr_client.random = rng.python
        return _krr_client.krr(dataset)

    try:
        with pytest.raises(MechanismError, match=r"random\.randint\(0, 2\) in .*_krr_client\.py, line 14, is called "
                                                 r"on the exact rng standing in for Python's random module"):
            verify(from_sampler(standing_in), Datasets([0, 1, 2, 3], n=1), PureDp(1.01))
        # the fixes it names: the Python view, or routing the module; both give eps* = 1 exactly
        # (P(keep) / P(one given other) = (e / (e + 3)) / (1 / (e + 3)) = e)
        assert verify(from_sampler(python_view), Datasets([0, 1, 2, 3], n=1), PureDp(1.01)).epsilon == \
            pytest.approx(1.0, abs=1e-12)
        _krr_client.random = random
        routed = from_sampler(lambda dataset, rng: _krr_client.krr(dataset), patch=[_krr_client])
        assert verify(routed, Datasets([0, 1, 2, 3], n=1), PureDp(1.01)).epsilon == pytest.approx(1.0, abs=1e-12)
    finally:
        _krr_client.random = random
    # numpy-style code keeps numpy's meaning: randint(0, 2) is 0 or 1
    assert exact(lambda dataset, rng: rng.randint(0, 2)) == Distribution({0: F(1, 2), 1: F(1, 2)})
