"""Lazy uniforms: ``rng.random()`` of the exact random source, never drawn.

A :class:`LazyUniform` is a uniform on ``[0, 1)`` known only by the interval its comparisons so far
have left it in. Each comparison with a threshold inside that interval is a choice point of the
run (see :mod:`dpverify.finite._exact_random`), with the exact probability of either side.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable
from fractions import Fraction
from numbers import Real
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import InvalidArgument, MechanismError
from dpverify.finite._numbers import WAYS_ON, _describe, _number

__all__ = ["LazyUniform"]


_ZERO, _ONE = Fraction(0), Fraction(1)
_COMPARISONS = {
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
    "equal": operator.eq, "not_equal": operator.ne,
}


class LazyUniform:
    """A uniform on [0, 1) from ``rng.random()``, never drawn: it only compares with thresholds.

    It lies in the interval ``[lo, hi)`` (exact Fractions, ``[0, 1)`` at first). ``u < t`` for a
    threshold strictly inside is a choice point: True with probability ``(t - lo) / (hi - lo)``
    (the interval becomes ``[lo, t)``), False with the rest (``[t, hi)``); outside the interval the
    answer is certain and nothing branches. ``<=`` branches as ``<``, ``>`` and ``>=`` as their
    negations (ties have probability 0), and ``u == t`` is False (probability 1). Thresholds are
    ints, Fractions, Decimals, sympy rationals or floats (a float is its binary value and makes the
    distribution a float one). Arithmetic, ``float(u)`` and comparing two lazy uniforms are refused.
    """

    __slots__ = ("_rng", "_run", "_low", "_high", "_fresh", "__weakref__")

    def __init__(self, rng: Any) -> None:  # the ExactRandom of the run
        self._rng, self._run = rng, rng._run
        self._low, self._high = _ZERO, _ONE
        self._fresh = True  # still [0, 1)

    @property
    def interval(self) -> tuple[Fraction, Fraction]:
        """``(lo, hi)``: what the comparisons so far have told about the uniform (``lo <= u < hi``)."""
        return self._low, self._high

    def __repr__(self) -> str:
        return f"LazyUniform(in [{self._low}, {self._high}))"

    def _below(self, threshold: Any) -> bool | Any:
        """Whether ``u < threshold`` on this run's branch (NotImplemented for a non-number)."""
        rng = self._rng
        kind = type(threshold)
        if kind is Fraction or kind is int:  # the fast paths: exact thresholds and floats
            t, inexact = threshold, False
        elif kind is float and math.isfinite(threshold):
            t, inexact = Fraction(threshold), True
        else:
            read = self._threshold(threshold)
            if read is NotImplemented or isinstance(read, bool):
                return read
            t, inexact = read
        if rng._run != self._run or not rng._active:
            rng._abort(MechanismError(
                f"a lazy uniform of rng.random() was compared after the run of the sampler {rng._name} that drew it; "
                "lazy uniforms are only valid during the call that drew them (do not keep them between calls).",
                dataset=rng._dataset,
            ))
        if self._fresh:  # [0, 1): the share below t is t itself
            if kind is int:
                return t > 0
            if t.numerator <= 0:
                return False
            if t.numerator >= t.denominator:
                return True
            share = t
            self._fresh = False
        else:
            low, high = self._low, self._high
            if t <= low:
                return False
            if t >= high:
                return True
            share = (t - low) / (high - low)
        if rng._choose("random", 2, (share,), inexact) == 0:
            self._high = t
            return True
        self._low = t
        return False

    def _threshold(self, threshold: Any) -> Any:
        """A threshold that is not an int, Fraction or finite float: ``(t, inexact)``, the answer for an
        infinite one, or NotImplemented for a non-number (numpy arrays compare elementwise)."""
        rng = self._rng
        if isinstance(threshold, LazyUniform):
            self._refuse("compared two lazy uniforms (u < v)", "the pair is not an interval of one uniform")
        basic: Any = getattr(sys.modules.get("sympy"), "Basic", ())
        if isinstance(threshold, np.ndarray) or not (
            isinstance(threshold, (Real, np.generic, basic)) or type(threshold).__name__ == "Decimal"
        ):
            return NotImplemented
        if isinstance(threshold, (float, np.floating)):
            if math.isnan(threshold):
                rng._abort(MechanismError(
                    f"the sampler {rng._name} compared a lazy uniform with nan; compare it with a number in [0, 1].",
                    dataset=rng._dataset,
                ))
            if math.isinf(threshold):
                return bool(threshold > 0)
        try:
            return _number("a comparison of rng.random()", "threshold", threshold)
        except InvalidArgument as error:
            rng._abort(MechanismError(str(error), dataset=rng._dataset))

    def __lt__(self, other: Any) -> Any:
        return self._below(other)

    __le__ = __lt__  # P(u == t) = 0

    def __gt__(self, other: Any) -> Any:
        below = self._below(other)
        return below if below is NotImplemented else not below

    __ge__ = __gt__

    def __eq__(self, other: Any) -> Any:
        if other is self:
            return True
        if isinstance(other, (LazyUniform, Real, np.generic)):
            return False  # a uniform equals a given number with probability 0
        return NotImplemented

    def __ne__(self, other: Any) -> Any:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return id(self)

    def __getattr__(self, name: str) -> Any:  # numpy.log on an object array calls each element's .log()
        if not name.startswith("_") and isinstance(getattr(np, name, None), np.ufunc):
            self._refuse(f"called numpy.{name} on u", None)
        raise AttributeError(f"'LazyUniform' object has no attribute {name!r}")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        compare = _COMPARISONS.get(ufunc.__name__)
        if compare is None or method != "__call__" or kwargs:
            self._refuse(f"called numpy.{ufunc.__name__} on u", None)
        operands = []
        for operand in inputs:
            if isinstance(operand, LazyUniform):
                boxed = np.empty((), dtype=object)
                boxed[()] = operand
                operand = boxed
            operands.append(np.asarray(operand).astype(object))
        make_ufunc: Any = np.frompyfunc  # numpy's stubs type it by the number of outputs
        elementwise = make_ufunc(lambda a, b: bool(compare(a, b)), 2, 1)
        result = elementwise(*operands)
        result = np.asarray(result, dtype=bool)
        return bool(result) if result.ndim == 0 else result

    def _refuse(self, operation: str, why: str | None) -> NoReturn:
        rng = self._rng
        rng._abort(MechanismError(
            f"the sampler {rng._name} {operation}, where u is a lazy uniform of rng.random(); "
            f"{why or 'the result would need the value of u, which dpverify never draws'}. A lazy uniform "
            "only compares with exact thresholds: u < p, u <= p, u > p, u >= p (an inverse CDF is a chain of such "
            "comparisons). For an integer draw use rng.integers(n) instead of int(u * n); for continuous noise: "
            f"{WAYS_ON[len('Two ways on: '):]}",
            dataset=rng._dataset,
        ))
        raise AssertionError("rng._abort returns only by raising")


def _refused_operation(symbol: str) -> Callable[..., Any]:
    def refused(self: LazyUniform, *args: Any) -> Any:
        self._refuse("computed " + symbol.format(*(_describe(a) for a in args)), None)

    return refused


for _method, _symbol in {
    "__add__": "u + {0}", "__radd__": "{0} + u", "__sub__": "u - {0}", "__rsub__": "{0} - u",
    "__mul__": "u * {0}", "__rmul__": "{0} * u", "__truediv__": "u / {0}", "__rtruediv__": "{0} / u",
    "__floordiv__": "u // {0}", "__rfloordiv__": "{0} // u", "__mod__": "u % {0}", "__rmod__": "{0} % u",
    "__divmod__": "divmod(u, {0})", "__rdivmod__": "divmod({0}, u)", "__pow__": "u ** {0}", "__rpow__": "{0} ** u",
    "__neg__": "-u", "__pos__": "+u", "__abs__": "abs(u)", "__float__": "float(u) (math.log(u) and the other math "
    "functions call it)", "__int__": "int(u)", "__index__": "u as an index", "__complex__": "complex(u)",
    "__round__": "round(u)", "__trunc__": "math.trunc(u)", "__floor__": "math.floor(u)", "__ceil__": "math.ceil(u)",
    "__bool__": "bool(u) (an if on u itself rather than on a comparison)",
}.items():
    setattr(LazyUniform, _method, _refused_operation(_symbol))
