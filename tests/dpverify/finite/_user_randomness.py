"""Samplers written as users write them: randomness from module-level generators, not from ``rng``.

Verified through ``from_sampler(..., patch=[this module])`` in test_routing.py. Each sampler ignores
its ``rng`` argument; the expected exact distribution is in its docstring.
"""

from __future__ import annotations

import random
import secrets
from fractions import Fraction
from random import choice as imported_choice
from random import random as imported_random

import numpy as np
from numpy.random import default_rng, rand

QUARTER = Fraction(1, 4)


def python_coin(dataset, rng):
    """``random.random() < 1/4``: the bit flipped with probability 1/4: {bit: 3/4, 1 - bit: 1/4}."""
    (bit,) = dataset
    return 1 - bit if random.random() < QUARTER else bit


def numpy_coins(dataset, rng):
    """Two fair coins from ``np.random.rand()`` and the imported ``rand``: their sum, {0: 1/4, 1: 1/2, 2: 1/4}."""
    return int(np.random.rand() < Fraction(1, 2)) + int(rand() < Fraction(1, 2))


def imported_names(dataset, rng):
    """``from random import random, choice``: (coin at 1/4, choice of "ab"), each pair
    (True, a) 1/8, (True, b) 1/8, (False, a) 3/8, (False, b) 3/8."""
    return imported_random() < QUARTER, imported_choice("ab")


def both_randints(dataset, rng):
    """Python's ``random.randint(1, 3)`` includes 3 (1/3 each); numpy's ``np.random.randint(1, 3)``
    excludes 3 (1/2 each): each of the 6 pairs 1/6."""
    return random.randint(1, 3), int(np.random.randint(1, 3))


def inner_system_random(dataset, rng):
    """A ``SystemRandom()`` built inside (as diffprivlib's check_random_state does): randint(1, 3), 1/3 each."""
    generator = random.SystemRandom()
    assert isinstance(generator, secrets.SystemRandom)
    return generator.randint(1, 3)


def inner_numpy_generators(dataset, rng):
    """``np.random.default_rng(0)`` and ``np.random.RandomState(7)`` built inside, whatever their seed:
    two fair bits, each of the 4 pairs 1/4."""
    generator, legacy = default_rng(0), np.random.RandomState(7)
    assert isinstance(generator, np.random.Generator) and isinstance(legacy, np.random.RandomState)
    return int(generator.integers(2)), int(legacy.randint(2))


def secrets_draws(dataset, rng):
    """``secrets.randbelow(3)`` (1/3 each), ``secrets.choice("xy")`` and ``secrets.randbits(1)`` (1/2
    each): each of the 12 triples 1/12."""
    return secrets.randbelow(3), secrets.choice("xy"), secrets.randbits(1)


def gaussian(dataset, rng):
    """``random.gauss`` compared: Gaussian noise is only released, so refused."""
    return random.gauss(0, 1) > 0


def fails_after_a_draw(dataset, rng):
    """Draws, then raises: the routing must be undone all the same."""
    if random.random() < QUARTER:
        raise ValueError("a failure inside the sampler")
    return 0
