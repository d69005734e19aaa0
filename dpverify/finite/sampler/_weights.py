"""Probabilities and weights as the exact rng reads them (``choice(p=)``, ``multinomial(pvals)``,
``choices(weights=)``): exact Fractions, or floats read as their binary values and normalised as
numpy does; cached by content, since every replay of a path asks for the same weights again."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite._numbers import _number

__all__ = ["_Probabilities", "_weights"]

#: numpy's tolerance on a float ``p`` summing to 1 (``sqrt`` of the float64 machine epsilon).
_FLOAT_SUM_TOLERANCE = math.sqrt(sys.float_info.epsilon)


class _Probabilities(tuple):
    """Exact probabilities (a tuple) with the indices of the positive ones and those probabilities
    precomputed, for :meth:`ExactRandom._weighted`."""

    positive: list[int]
    shares: tuple


_PLAIN_NUMBERS = frozenset({int, float, Fraction, np.float64, np.int64})
_WEIGHTS_CACHE: dict[tuple, tuple[_Probabilities, bool]] = {}
_WEIGHTS_CACHE_SIZE = 4096


def _weights(call: str, name: str, values: Any, *, relative: bool) -> tuple[_Probabilities, bool]:
    """Exact probabilities from ``values``: relative weights (normalised) or absolute probabilities
    (exact ones must sum to exactly 1, floats to 1 within numpy's tolerance). Floats (any one makes
    the lot inexact) are used as given when their sum is exactly 1.0, else divided by it.

    Replays of a path ask for the same weights again: the answer is cached by the exact content of
    ``values`` (a numpy array's dtype and bytes; a list's element types and values)."""
    if isinstance(values, np.ndarray):
        key: tuple | None = (name, relative, values.dtype.str, values.shape, values.tobytes()) if values.dtype.kind in "fiub" else None
    elif isinstance(values, (list, tuple)) and all(type(v) in _PLAIN_NUMBERS for v in values):
        key = (name, relative, tuple(values), tuple(type(v) for v in values))
    else:
        key = None
    if key is not None:
        found = _WEIGHTS_CACHE.get(key)
        if found is not None:
            return found
    probabilities, inexact = _read_weights(call, name, values if not isinstance(values, np.ndarray) else list(values), relative=relative)
    answer = (_exact_probabilities(probabilities), inexact)
    if key is not None:
        if len(_WEIGHTS_CACHE) >= _WEIGHTS_CACHE_SIZE:
            _WEIGHTS_CACHE.clear()
        _WEIGHTS_CACHE[key] = answer
    return answer


def _exact_probabilities(values: list[Fraction]) -> _Probabilities:
    probabilities = _Probabilities(values)
    probabilities.positive = [i for i, p in enumerate(values) if p > 0]
    probabilities.shares = tuple(values[i] for i in probabilities.positive)
    return probabilities


def _read_weights(call: str, name: str, values: Any, *, relative: bool) -> tuple[list[Fraction], bool]:
    read = [_number(call, f"{name}[{i}]", v) for i, v in enumerate(values)]
    for i, (number, _) in enumerate(read):
        if number < 0:
            raise InvalidArgument(f"{call}: {name}[{i}] must be >= 0, got {name}[{i}]={values[i]!r}.")
    if not read:
        raise InvalidArgument(f"{call}: {name} must not be empty.")
    if not any(inexact for _, inexact in read):
        total = sum((number for number, _ in read), Fraction(0))
        if total == 0:
            raise InvalidArgument(f"{call}: {name} must have a positive total, got all zeros.")
        if relative:
            return [number / total for number, _ in read], False
        if total != 1:
            raise InvalidArgument(
                f"{call}: the exact probabilities {name} must sum to exactly 1, got a total of {total}; divide "
                f"them by their total (or pass floats, which are normalised as numpy does)."
            )
        return [number for number, _ in read], False
    floats = [float(number) for number, _ in read]
    float_total = math.fsum(floats)
    if float_total <= 0:
        raise InvalidArgument(f"{call}: {name} must have a positive total, got all zeros.")
    if not relative and abs(float_total - 1.0) > _FLOAT_SUM_TOLERANCE:
        raise InvalidArgument(f"{call}: the probabilities {name} must sum to 1, got a total of {float_total!r}.")
    if float_total != 1.0:
        floats = [f / float_total for f in floats]
    return [Fraction(f) for f in floats], True
