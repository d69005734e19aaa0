"""A sampler's returned value as a hashable outcome of its distribution.

numpy scalars become Python scalars, arrays and lists tuples, sets frozensets (recursively); a real
number computed from traced noise becomes its linear form (a density once integrated); an affine map
of a lazy uniform is released as a form in the path's variable for it. A mapping, an unhashable value
and other maps of noise are refused by name (:class:`~dpverify.errors.MechanismError`).
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction
from typing import Any

import numpy as np

from dpverify.errors import MechanismError
from dpverify.finite.distribution import Distribution
from dpverify.finite.sampler._exact_random import LazyUniform
from dpverify.finite.sampler._linear import GUMBEL_BASE, Linear
from dpverify.finite.sampler._noise import Noisy

__all__ = ["convert", "outcome"]

_PLAIN = (int, float, str, bool, bytes, Fraction, type(None))


def outcome(value: Any, name: str, dataset: Any) -> Hashable:
    """``value`` as a hashable outcome: numpy scalars as Python scalars, arrays and lists as tuples,
    sets as frozensets (recursively); a lazy uniform or an unhashable value is an error."""
    if type(value) in _PLAIN:
        return value
    converted = convert(value, name, dataset)
    try:
        hash(converted)
    except TypeError:
        raise MechanismError(
            f"the sampler {name} returned {converted!r} on dataset {dataset!r}, of the unhashable type "
            f"{type(converted).__name__}; return a number, a string, a tuple or a frozenset.",
            dataset=dataset,
        ) from None
    return converted


def _released_uniform(value: LazyUniform, name: str, dataset: Any) -> Linear:
    """A real number ``a*u + b`` computed from a lazy uniform ``u`` and returned: its form in the path's
    variable for ``u`` (uniform on the interval its comparisons left, :mod:`dpverify.finite.sampler._noise`),
    a density once integrated. Other maps (``np.log(u)``), and irrational ends of the interval, are
    refused: their densities are not exact piecewise exponentials here."""
    draw = value._draw
    affine = value._map.affine
    low, high = draw._low, draw._high
    if affine is None or type(low) is not Fraction or type(high) is not Fraction:
        raise value._returned_error(name, dataset)
    scale, shift = affine
    rng = draw._rng
    if draw._run != rng._run:
        raise value._returned_error(name, dataset)
    index = rng._noise.release_uniform(draw, low, high)
    if value._inexact:
        rng._noise.floats = True
    return Linear(scale * low + shift, ((index, scale),))


def convert(value: Any, name: str, dataset: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Noisy):  # a real number computed from continuous noise: its form, a density later
        if any(i >= GUMBEL_BASE for i, _ in value.form.coefs):
            raise MechanismError(
                f"the sampler {name} returned {value.form.text()}, a value of Gumbel noise, on dataset {dataset!r}; "
                "Gumbel noise is traced only for the argmax of c_i + G_i (the exponential mechanism). Release the argmax, "
                "use Laplace noise, or check the sampler statistically with dpverify.estimate.",
                dataset=dataset,
            )
        return value.form
    if isinstance(value, np.ndarray):
        return convert(value.tolist(), name, dataset)
    if isinstance(value, LazyUniform):  # the uniform itself or a value computed from it (a LazyValue)
        return _released_uniform(value, name, dataset)
    if isinstance(value, Distribution) or (hasattr(value, "items") and hasattr(value, "keys")):
        raise MechanismError(
            f"the sampler {name} returned a mapping on dataset {dataset!r}; a sampler returns one output, and "
            "from_sampler computes its distribution. A function dataset -> distribution is already a mechanism: "
            "pass it to verify directly (on the command line: drop --sampler; an argument it takes besides the "
            "dataset, such as epsilon, is bound with a default, functools.partial or --set epsilon=...).",
            dataset=dataset,
        )
    if isinstance(value, (list, tuple)):
        items = [convert(item, name, dataset) for item in value]
        if isinstance(value, tuple) and all(a is b for a, b in zip(items, value)):
            return value
        if isinstance(value, tuple) and hasattr(value, "_make"):
            return value._make(items)
        return tuple(items)
    if isinstance(value, (set, frozenset)):
        return frozenset(convert(item, name, dataset) for item in value)
    return value
