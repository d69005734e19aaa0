"""Routing of module-level randomness (dpverify.finite.sampler._routing, from_sampler(..., patch=...)).

The samplers of _user_randomness.py draw from module-level generators only; routed, their exact
distributions are worked out in their docstrings. Every test also checks that the modules are
restored afterwards (the originals back in place, the global generators' states untouched).
"""

from __future__ import annotations

import pickle
import random
import secrets
import sys
import threading
import types
from fractions import Fraction

import numpy as np
import pytest

from dpverify import Distribution, from_sampler
from dpverify.errors import InvalidArgument, MechanismError, NondeterministicMechanism
from dpverify.finite.sampler._exact_random import ExactRandom
from dpverify.finite.sampler._routing import route, routed_places
from dpverify.integrations.cli import main

from . import _user_randomness as user

F = Fraction
ONE_SIXTH, ONE_TWELFTH = F(1, 6), F(1, 12)


def _originals() -> dict:
    """What routing replaces, read from the modules."""
    return {
        "random.random": random.random, "random.randint": random.randint, "random.SystemRandom": random.SystemRandom,
        "np.random.rand": np.random.rand, "np.random.randint": np.random.randint, "np.random.seed": np.random.seed,
        "np.random.RandomState": np.random.RandomState, "np.random.Generator": np.random.Generator,
        "np.random.default_rng": np.random.default_rng, "mtrand.rand": np.random.mtrand.rand,
        "secrets.SystemRandom": secrets.SystemRandom, "secrets.randbelow": secrets.randbelow,
        "secrets.choice": secrets.choice, "user.imported_random": user.imported_random, "user.rand": user.rand,
        "user.default_rng": user.default_rng,
    }


@pytest.fixture
def untouched():
    """The originals and the global generators' states, checked unchanged after the test."""
    before, states = _originals(), (random.getstate(), _numpy_state())
    yield before
    after = _originals()
    assert all(after[name] is before[name] for name in before), [n for n in before if after[n] is not before[n]]
    assert routed_places() == {}
    assert random.getstate() == states[0] and _numpy_state() == states[1]


def _numpy_state() -> tuple:
    _, key, position, has_gauss, gauss = np.random.get_state(legacy=True)
    return key.tobytes(), position, has_gauss, gauss


# -- the context manager --------------------------------------------------------------------


def test_route_patches_inside_and_restores_on_exit(untouched):
    rng = ExactRandom((), "probe", 100)
    with route([user], rng) as slot:
        assert slot is not None and slot.rng is rng
        assert random.random is not untouched["random.random"] and user.rand is not untouched["user.rand"]
        assert np.random.mtrand.rand is not untouched["mtrand.rand"]
        assert type(random.random()).__name__ == "LazyUniform"  # rng is in a run (made active by its constructor)
        assert np.random.default_rng(5) is rng and np.random.RandomState(5) is rng and np.random.Generator(None) is rng
        assert random.SystemRandom() is rng.python and secrets.SystemRandom(1) is rng.python
        # isinstance keeps working on the stand-in classes
        assert isinstance(rng, np.random.RandomState) and isinstance(rng, np.random.Generator)
        assert isinstance(np.random.mtrand._rand, np.random.RandomState)
        assert isinstance(rng.python, secrets.SystemRandom) and issubclass(random.SystemRandom, random.Random)
    assert routed_places() == {}


def test_a_class_derived_while_routed_behaves_as_a_class(untouched):
    with route(["numpy.random", "random"], ExactRandom((), "probe", 100)) as slot:
        class Seeded(np.random.RandomState):  # a library imported during a run may do this
            pass

        class Quiet(random.SystemRandom):
            pass

        seeded, quiet = Seeded(3), Quiet()
        assert type(seeded) is Seeded and seeded.randint(10**6) == untouched["np.random.RandomState"](3).randint(10**6)
        assert type(quiet) is Quiet and isinstance(quiet, random.SystemRandom)
        assert not isinstance(untouched["np.random.RandomState"](3), Seeded) and not isinstance(slot.rng, Seeded)
        assert not issubclass(untouched["random.SystemRandom"], Quiet)


def test_route_restores_after_an_exception(untouched):
    with pytest.raises(KeyError):
        with route(["random", "numpy.random", "secrets", user], ExactRandom((), "probe", 100)):
            assert len(routed_places()) > 50
            raise KeyError("inside")


def test_calls_outside_a_run_or_from_another_thread_go_to_the_originals(untouched):
    rng = ExactRandom((), "probe", 100)
    seen, state = [], random.getstate()
    with route(["random"], rng):
        thread = threading.Thread(target=lambda: seen.append((random.random(), random.SystemRandom())))
        thread.start()
        thread.join()
        rng._finish()  # between runs, as dpverify's own loop is
        outside = random.random(), random.SystemRandom()
    random.setstate(state)  # the real draws above moved Python's global generator
    for value, generator in [*seen, outside]:
        assert isinstance(value, float) and type(generator) is untouched["random.SystemRandom"]


def test_two_threads_routing_at_once_share_the_patches_and_restore_them(untouched):
    inside, release = threading.Barrier(2), threading.Event()
    results = {}

    def enumerate_in_thread(name, sampler):
        with route([user]):
            mechanism_rng = ExactRandom((), name, 100)
            inside.wait()
            results[name] = type(sampler(mechanism_rng)).__name__
            release.wait()

    first = threading.Thread(target=enumerate_in_thread, args=("a", lambda rng: random.random()))
    second = threading.Thread(target=enumerate_in_thread, args=("b", lambda rng: np.random.rand()))
    first.start(), second.start()
    while len(results) < 2:
        threading.Event().wait(0.001)
    assert random.random is not untouched["random.random"]  # still patched while the threads route
    release.set()
    first.join(), second.join()
    assert results == {"a": "LazyUniform", "b": "LazyUniform"}


def test_an_empty_patch_routes_nothing(untouched):
    with route([]) as slot, route(None):
        assert slot is None and random.random is untouched["random.random"]


# -- from_sampler(..., patch=) on user code ------------------------------------------------------


@pytest.mark.parametrize(
    "sampler, dataset, expected",
    [
        (user.python_coin, (1,), Distribution({1: F(3, 4), 0: F(1, 4)})),
        (user.numpy_coins, (), Distribution({0: F(1, 4), 1: F(1, 2), 2: F(1, 4)})),
        (user.imported_names, (), Distribution({(True, "a"): F(1, 8), (True, "b"): F(1, 8),
                                                (False, "a"): F(3, 8), (False, "b"): F(3, 8)})),
        (user.both_randints, (), Distribution({(a, b): ONE_SIXTH for a in (1, 2, 3) for b in (1, 2)})),
        (user.inner_system_random, (), Distribution.uniform([1, 2, 3])),
        (user.inner_numpy_generators, (), Distribution.uniform([(0, 0), (0, 1), (1, 0), (1, 1)])),
        (user.secrets_draws, (), Distribution({(k, c, b): ONE_TWELFTH for k in range(3) for c in "xy" for b in (0, 1)})),
    ],
)
def test_user_code_is_verified_exactly_through_patch(untouched, sampler, dataset, expected):
    assert from_sampler(sampler, patch=[user])(dataset) == expected


def test_without_patch_the_global_generator_is_refused_as_before(untouched):
    state = random.getstate()
    with pytest.raises(NondeterministicMechanism, match="Python's global random generator"):
        from_sampler(user.python_coin)((1,))
    assert random.getstate() != state  # the unrouted call drew for real (what the refusal reports)
    random.setstate(state)


def test_patch_by_name_and_by_standard_module_alone(untouched):
    assert from_sampler(user.python_coin, patch=user.__name__)((0,)) == Distribution({0: F(3, 4), 1: F(1, 4)})
    # naming only the standard module routes calls through it, but not names imported into user code
    assert from_sampler(user.python_coin, patch=["random"])((0,)) == Distribution({0: F(3, 4), 1: F(1, 4)})


def test_routed_refusals_name_the_call(untouched):
    with pytest.raises(MechanismError, match=r"compared a value involving Gaussian noise"):  # routed, then traced
        from_sampler(user.gaussian, patch=[user])(())
    with pytest.raises(MechanismError, match=r"secrets.token_hex\(4\) was routed to the exact rng"):
        from_sampler(lambda d, rng: secrets.token_hex(4), patch=["secrets"])(())
    with pytest.raises(MechanismError, match=r"rng.seed\(0\) works on the state"):
        from_sampler(lambda d, rng: np.random.seed(0), patch=["numpy"])(())
    with pytest.raises(MechanismError, match=r"rng.standard_cauchy\(\) draws from a continuous distribution"):
        from_sampler(lambda d, rng: np.random.standard_cauchy(), patch=["numpy.random"])(())


def test_an_exception_inside_the_sampler_leaves_the_modules_restored(untouched):
    with pytest.raises(MechanismError, match="a failure inside the sampler") as raised:
        from_sampler(user.fails_after_a_draw, patch=[user])(())
    assert isinstance(raised.value.__cause__, ValueError)


def test_diffprivlib_building_its_own_system_random_is_routed(untouched):
    # diffprivlib's check_random_state(None, secure=True) returns secrets.SystemRandom(): routed through
    # diffprivlib.utils (which imports secrets and numpy), the mechanism is verified unmodified.
    # Utilities [2, 0], sensitivity 1, epsilon 1: P(0) = e / (e + 1).
    from diffprivlib.mechanisms import Exponential

    def mechanism(dataset, rng):
        return Exponential(epsilon=1.0, sensitivity=1, utility=[sum(dataset), len(dataset) - sum(dataset)]).randomise()

    distribution = from_sampler(mechanism, patch=["diffprivlib.utils"])((1, 1))
    assert distribution[0] == pytest.approx(np.e / (np.e + 1), abs=1e-15) and distribution[0] + distribution[1] == 1.0


@pytest.mark.parametrize(
    "patch, fragment",
    [
        (["no_such_module_of_dpverify"], "cannot import module 'no_such_module_of_dpverify'"),
        ([3], "each entry must be a module or the dotted name"),
        ([""], "each entry must be a module or the dotted name"),
        (3.5, "patch must be a list of modules"),
        ([types.ModuleType("unregistered")], r"is not sys.modules\['unregistered'\]"),
    ],
)
def test_bad_patch_entries_are_named(patch, fragment):
    with pytest.raises(InvalidArgument, match=fragment):
        from_sampler(user.python_coin, patch=patch)


def test_a_patched_mechanism_stores_names_and_pickles(untouched):
    mechanism = from_sampler(user.python_coin, patch=[user, "random", user])
    assert mechanism.patch == (user.__name__, "random")
    copy = pickle.loads(pickle.dumps(mechanism))
    assert copy((1,)) == Distribution({1: F(3, 4), 0: F(1, 4)})
    assert from_sampler(user.python_coin).patch == ()


def test_cli_check_sampler_with_patch(untouched, capsys):
    # python_coin is randomized response with keep probability 3/4: eps* = ln 3 = 1.0986
    bits = ["--records", "[0, 1]", "--n", "1"]
    spec = f"{user.__name__}:python_coin"
    assert main(["check", spec, "--sampler", "--patch", user.__name__, *bits, "--epsilon", "log(3)"]) == 0
    assert "HOLDS" in capsys.readouterr().out
    assert main(["check", spec, "--sampler", "--patch", "random", "--patch", user.__name__, *bits, "--epsilon", "1"]) == 1
    capsys.readouterr()
    # the statistical mode routes the same module to its own streams: ln 3 > 1/2 is found
    assert main(["check", spec, "--estimate", "--patch", "random", *bits, "--epsilon", "0.5", "--samples", "20000",
                 "--seed", "0"]) == 1
    assert "VIOLATED" in capsys.readouterr().out
    assert main(["check", spec, "--patch", "random", *bits, "--epsilon", "1"]) == 2  # neither mode
    assert "add one of them" in capsys.readouterr().err
    assert sys.modules[user.__name__] is user
