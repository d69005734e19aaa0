"""Refusal by construction: every public name of a generator API the exact rng stands in for is an
exact draw or a refusal, never an inherited method that draws real randomness.

The exact rng (:class:`~dpverify.finite.sampler._exact_random.ExactRandom`) is an instance of numpy's
``RandomState`` so that code checking ``isinstance(x, np.random.RandomState)`` accepts it, and its
Python view (:class:`~dpverify.finite.sampler._python_random.PythonRandom`) is an instance of
``random.SystemRandom``. Subclassing inherits every method of those classes, and an inherited method
would draw from the hidden generator silently. So each class is closed when it is created:
:func:`refuse_the_rest` walks the public names of the APIs it stands in for and installs a refusal
for every one that no dpverify class in its method resolution order defines. :func:`inherited_names`
lists what is still inherited (nothing, after the walk; the tests check it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = ["GENERATOR_APIS", "PYTHON_APIS", "public_names", "inherited_names", "refuse_the_rest"]

#: numpy's generators and Python's: the APIs whose draws the exact rng answers or refuses.
GENERATOR_APIS: tuple[type, ...] = (np.random.RandomState, np.random.Generator, random.Random, random.SystemRandom)
#: Python's generators: the APIs of the exact rng's Python view.
PYTHON_APIS: tuple[type, ...] = (random.Random, random.SystemRandom)
#: Public names that are constants, not draws (``random.Random.VERSION``, the pickle format's version).
_CONSTANTS = frozenset({"VERSION"})


def public_names(apis: Iterable[type]) -> list[str]:
    """The public attribute names of ``apis`` (sorted), constants left out."""
    return sorted({name for api in apis for name in dir(api) if not name.startswith("_")} - _CONSTANTS)


def _defined_by_dpverify(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("dpverify.")
    return False


def inherited_names(cls: type, apis: Iterable[type]) -> list[str]:
    """The public names of ``apis`` that ``cls`` does not define itself (in a dpverify class of its
    method resolution order): what it would inherit from numpy or Python. Empty once closed."""
    return [name for name in public_names(apis) if not _defined_by_dpverify(cls, name)]


def refuse_the_rest(cls: type, apis: Iterable[type], refusal: Callable[[str], Callable[..., Any]]) -> list[str]:
    """Install ``refusal(name)`` on ``cls`` for every public name of ``apis`` it does not define: the
    names refused this way (for the docs and the tests)."""
    refused = inherited_names(cls, apis)
    for name in refused:
        setattr(cls, name, refusal(name))
    return refused
