"""Arithmetic on lazy uniforms: the maps a :class:`~dpverify.finite.sampler._lazy.LazyValue` ``x = f(u)``
is built from, the splits at kinks and the domain checks, and the integer-valued maps.

:class:`LazyArithmetic` is the base of :class:`~dpverify.finite.sampler._lazy.LazyUniform`: its operators
extend the value's :class:`~dpverify.finite.sampler._lazy_real.Map` by one step (affine maps merged), so a
value is always its draw, a map and whether a float constant went in. Where a map is only piecewise
monotone (``abs``, ``np.sign``, ``c / x``, integer powers, ``np.cbrt``) the value is first split at
``x = 0`` by a comparison, a choice point only when ``x`` takes both signs on the current interval;
where a map is undefined on part of the interval (``np.log`` of a value that can be negative) it is
refused. ``floor``, ``ceil``, ``trunc`` and ``round`` find the integer cell of ``x`` by comparisons
with the cells' edges (bisection of a bounded range, a chain from the bounded end of a range
unbounded on one side): see :mod:`dpverify.finite.sampler._lazy` for the model.

The comparisons, refusals and the draw itself are the subclass's (:mod:`dpverify.finite.sampler._lazy`);
the methods this class needs from it are declared below and raise if called on it alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, NoReturn

import numpy as np
from mpmath.libmp import finf, fninf, to_rational

from dpverify.finite._numbers import _describe
from dpverify.finite.sampler._lazy_map import IDENTITY, Map, Step
from dpverify.finite.sampler._lazy_real import Inseparable, Node, Point, enclosure_interval, order, point_text, show

__all__ = ["LazyArithmetic"]

_ZERO, _ONE = Fraction(0), Fraction(1)
_HALF = Fraction(1, 2)
#: Integer-valued maps by the cells ``[j + offset, j + 1 + offset)`` of ``x`` and their values.
_CELLS: dict[str, tuple[Fraction, Callable[[int], int]]] = {
    "floor": (_ZERO, lambda j: j),
    "ceil": (_ZERO, lambda j: j + 1),
    "trunc": (_ZERO, lambda j: j if j >= 0 else j + 1),
    "round": (-_HALF, lambda j: j),
}
_NOT_AFFINE = (
    "dpverify follows one value of u through monotone maps, and combines two values of the same u only when both are "
    "affine in it (u - (u - 0.5))"
)


class LazyArithmetic:
    """The arithmetic of a lazy value ``x = f(u)`` (module docstring): a draw, a map, a flag."""

    __slots__ = ()
    _draw: Any  # the draw: rng, run, low, high
    _map: Map
    _inexact: bool  # a float constant went into the map

    # -- what the subclass provides ------------------------------------------------------------

    def _derive(self, mapping: Map, inexact: bool) -> LazyArithmetic:
        raise NotImplementedError

    def _below_value(self, value: Fraction, inexact: bool) -> bool:
        raise NotImplementedError

    def _read(self, value: Any, symbol: str, comparison: bool = False) -> Any:
        raise NotImplementedError

    def _refuse(self, operation: str, why: str | None) -> NoReturn:
        raise NotImplementedError

    def _inseparable(self, error: Inseparable) -> NoReturn:
        raise NotImplementedError

    def _guarded(self, function: Callable[[Point], Point], point: Point) -> Point:
        raise NotImplementedError

    def _name(self, parenthesise: bool = False) -> str:
        raise NotImplementedError

    # -- maps ----------------------------------------------------------------------------------

    def _then(self, step: Step, inexact: bool = False) -> LazyArithmetic:
        return self._derive(self._map.then(step), self._inexact or inexact)

    def _affine(self, scale: Fraction, shift: Fraction, inexact: bool = False) -> LazyArithmetic:
        return self._then(Step("affine", scale, shift), inexact)

    def _binary(self, other: Any, symbol: str, constant: Callable[[Fraction, bool], Any],
                lazy: Callable[[LazyArithmetic], Any] | None = None) -> Any:
        """``constant(c, inexact)`` for a number ``other``, ``lazy(other)`` for a lazy value."""
        read = self._read(other, symbol)
        if read is NotImplemented:
            return NotImplemented
        if isinstance(read, LazyArithmetic):
            if lazy is None:
                self._refuse(f"computed {symbol.format(x=self._name(), c=read._name(True))}", _NOT_AFFINE)
            return lazy(read)
        return constant(*read)

    def _combine(self, other: LazyArithmetic, sign: int, symbol: str) -> Any:
        """``self + sign * other`` for two values affine in one draw: a value or a constant."""
        text = f"{self._name()} {symbol} {other._name(True)}"
        if other._draw is not self._draw:
            self._refuse(f"computed {text} of two lazy uniforms", "the result is not a monotone map of one uniform")
        mine, theirs = self._map.affine, other._map.affine
        if mine is None or theirs is None:
            self._refuse(f"computed {text}", _NOT_AFFINE)
        scale, shift = mine[0] + sign * theirs[0], mine[1] + sign * theirs[1]
        inexact = self._inexact or other._inexact
        if scale == 0:
            return _constant(shift, inexact)
        return self._derive(IDENTITY.then(Step("affine", scale, shift)), inexact)

    def __add__(self, other: Any) -> Any:
        return self._binary(other, "{x} + {c}", lambda c, inexact: self._affine(_ONE, c, inexact),
                            lambda y: self._combine(y, 1, "+"))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self._binary(other, "{x} - {c}", lambda c, inexact: self._affine(_ONE, -c, inexact),
                            lambda y: self._combine(y, -1, "-"))

    def __rsub__(self, other: Any) -> Any:
        return self._binary(other, "{c} - {x}", lambda c, inexact: self._affine(-_ONE, c, inexact))

    def __mul__(self, other: Any) -> Any:
        return self._binary(other, "{x} * {c}", self._times, self._square)

    def _square(self, other: LazyArithmetic) -> Any:  # x * x, as np.square does it
        if other._draw is not self._draw or other._map != self._map:
            self._refuse(f"computed {self._name(True)} * {other._name(True)}", _NOT_AFFINE)
        return self._power(Fraction(2), other._inexact)

    __rmul__ = __mul__

    def _times(self, factor: Fraction, inexact: bool) -> Any:
        return _constant(_ZERO, inexact) if factor == 0 else self._affine(factor, _ZERO, inexact)

    def __truediv__(self, other: Any) -> Any:
        return self._binary(other, "{x} / {c}", lambda c, inexact: self._affine(1 / self._nonzero(c, "{x} / 0"), _ZERO, inexact))

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary(other, "{c} / {x}", self._reciprocal_times)

    def _reciprocal_times(self, factor: Fraction, inexact: bool) -> Any:
        """``factor / x``: 0 for 0 (x != 0 with probability 1), else split at 0."""
        return _constant(_ZERO, inexact) if factor == 0 else self._power(-_ONE, False)._times(factor, inexact)

    def __neg__(self) -> LazyArithmetic:
        return self._affine(-_ONE, _ZERO)

    def __pos__(self) -> LazyArithmetic:
        return self

    def __abs__(self) -> LazyArithmetic:
        return self if self._sign() > 0 else -self

    def __pow__(self, other: Any, modulo: Any = None) -> Any:
        if modulo is not None:
            self._refuse(f"computed pow({self._name()}, {_describe(other)}, {_describe(modulo)})", "a modular power is not a real map")
        return self._binary(other, "{x} ** {c}", self._power)

    def __rpow__(self, other: Any) -> Any:
        def exponential(base: Fraction, inexact: bool) -> Any:
            if base <= 0:
                self._refuse(f"computed {show(base)} ** {self._name()}", "a power of a base <= 0 is not a real monotone map")
            return _constant(_ONE, inexact) if base == 1 else self._then(Step("exp", base), inexact)

        return self._binary(other, "{c} ** {x}", exponential)

    def _power(self, exponent: Fraction, inexact: bool) -> Any:
        """``x ** exponent``: integer powers split at 0, others need ``x >= 0``."""
        if exponent == 0:
            return _constant(_ONE, inexact)
        if exponent.denominator != 1:
            self._require_positive(f"{self._name()} ** {show(exponent)}")
            return self._then(Step("pow", exponent), inexact)
        if self._sign() > 0:
            return self._then(Step("pow", exponent), inexact)
        result = (-self)._then(Step("pow", exponent), inexact)  # x**k = (-x)**k * (-1)**k
        return result if exponent.numerator % 2 == 0 else -result

    def _nonzero(self, value: Fraction, text: str) -> Fraction:
        if value == 0:
            self._refuse(f"computed {text.format(x=self._name())}", "division by zero")
        return value

    # numpy's object arrays call these methods for np.log, np.exp, ... of their elements

    def log(self) -> LazyArithmetic:
        """``np.log(x)``: needs ``x >= 0`` on the current interval."""
        return self._logarithm(None, "numpy.log")

    def log2(self) -> LazyArithmetic:
        """``np.log2(x)``."""
        return self._logarithm(Fraction(2), "numpy.log2")

    def log10(self) -> LazyArithmetic:
        """``np.log10(x)``."""
        return self._logarithm(Fraction(10), "numpy.log10")

    def log1p(self) -> LazyArithmetic:
        """``np.log1p(x) = log(1 + x)``: needs ``x >= -1``."""
        return (self + 1)._logarithm(None, "numpy.log1p", self)

    def exp(self) -> LazyArithmetic:
        """``np.exp(x)``."""
        return self._then(Step("exp", None))

    def exp2(self) -> LazyArithmetic:
        """``np.exp2(x) = 2**x``."""
        return self._then(Step("exp", Fraction(2)))

    def expm1(self) -> LazyArithmetic:
        """``np.expm1(x) = exp(x) - 1``."""
        return self.exp()._affine(_ONE, -_ONE)

    def sqrt(self) -> LazyArithmetic:
        """``np.sqrt(x)``: needs ``x >= 0``."""
        self._require_positive(f"numpy.sqrt({self._name()})")
        return self._then(Step("pow", _HALF))

    def cbrt(self) -> LazyArithmetic:
        """``np.cbrt(x)``, the real cube root (split at 0)."""
        if self._sign() > 0:
            return self._then(Step("pow", Fraction(1, 3)))
        return -((-self)._then(Step("pow", Fraction(1, 3))))

    def rint(self) -> np.float64:
        """``np.rint(x)``: the nearest integer (half to even), as a float."""
        return np.float64(self._integer("round"))

    def round(self, decimals: int = 0, out: Any = None) -> np.float64:
        """``np.round(x, decimals)`` (numpy calls this method): a float."""
        if out is not None:
            self._refuse(f"called numpy.round({self._name()}, out=...)", "out= needs an array of drawn values")
        return np.float64(self._rounded(decimals))

    def _logarithm(self, base: Fraction | None, operation: str, shown: LazyArithmetic | None = None) -> LazyArithmetic:
        self._require_positive(f"{operation}({(self if shown is None else shown)._name()})")
        return self._then(Step("log", base))

    def _numpy_sign(self) -> np.float64:
        return np.float64(self._sign())

    # -- integer-valued maps ---------------------------------------------------------------------

    def __floor__(self) -> int:
        return self._integer("floor")

    def __ceil__(self) -> int:
        return self._integer("ceil")

    def __trunc__(self) -> int:
        return self._integer("trunc")

    __int__ = __trunc__

    def __round__(self, ndigits: Any = None) -> Any:
        return self._integer("round") if ndigits is None else float(self._rounded(ndigits))

    def _rounded(self, digits: Any) -> Fraction:
        if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)):
            self._refuse(f"rounded {self._name()} to {_describe(digits)} digits", "the number of digits must be an integer")
        if digits == 0:
            return Fraction(self._integer("round"))
        scale = Fraction(10) ** int(digits)
        return self._affine(scale, _ZERO)._integer("round") / scale

    def __floordiv__(self, other: Any) -> Any:
        return self._binary(other, "{x} // {c}", lambda c, inexact: float(self._quotient(c, inexact)))

    def __mod__(self, other: Any) -> Any:
        return self._binary(other, "{x} % {c}", lambda c, inexact: self._affine(_ONE, -c * self._quotient(c, inexact), inexact))

    def __divmod__(self, other: Any) -> Any:
        def both(c: Fraction, inexact: bool) -> tuple[float, LazyArithmetic]:
            quotient = self._quotient(c, inexact)
            return float(quotient), self._affine(_ONE, -c * quotient, inexact)

        return self._binary(other, "divmod({x}, {c})", both)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary(other, "{c} // {x}", lambda c, inexact: float(self._reverse_quotient(c, inexact)))

    def __rmod__(self, other: Any) -> Any:
        def remainder(c: Fraction, inexact: bool) -> Any:
            quotient = self._reverse_quotient(c, inexact)
            return _constant(c, inexact) if quotient == 0 else self._affine(-Fraction(quotient), c, inexact)

        return self._binary(other, "{c} % {x}", remainder)

    def __rdivmod__(self, other: Any) -> Any:
        def both(c: Fraction, inexact: bool) -> tuple[float, Any]:
            quotient = self._reverse_quotient(c, inexact)
            return float(quotient), _constant(c, inexact) if quotient == 0 else self._affine(-Fraction(quotient), c, inexact)

        return self._binary(other, "divmod({c}, {x})", both)

    def _quotient(self, divisor: Fraction, inexact: bool) -> int:
        return self._affine(1 / self._nonzero(divisor, "{x} // 0"), _ZERO, inexact)._integer("floor")

    def _reverse_quotient(self, dividend: Fraction, inexact: bool) -> int:
        ratio = self._reciprocal_times(dividend, inexact)
        return ratio._integer("floor") if isinstance(ratio, LazyArithmetic) else math.floor(ratio)

    def _integer(self, kind: str) -> int:
        """The integer ``floor``/``ceil``/``trunc``/``round`` of ``x``: find its cell by comparisons."""
        offset, value_of = _CELLS[kind]
        first, last = self._cells(offset)

        def below(j: int) -> bool:  # x < the lower edge of cell j
            return self._below_value(j + offset, False)

        if first is None and last is None:  # unbounded both ways: split at the edge of cell 0
            if below(0):
                last = -1
            else:
                first = 0
        if first is None:  # a chain downward from the bounded end
            j = last
            assert j is not None
            while below(j):
                j -= 1
            return value_of(j)
        if last is None:  # a chain upward from the bounded end
            j = first
            while not below(j + 1):
                j += 1
            return value_of(j)
        while first < last:  # bisection of a bounded range
            middle = (first + last + 1) // 2
            if below(middle):
                last = middle - 1
            else:
                first = middle
        return value_of(first)

    def _cells(self, offset: Fraction) -> tuple[int | None, int | None]:
        """The first and last cell ``x`` can be in (None: unbounded), from enclosures of its range."""
        bounds: list[Fraction | float] = []
        for end in (self._draw._low, self._draw._high):
            point = self._guarded(self._map.forward, end)
            if isinstance(point, Node):
                bounds.extend(_bound(value) for value in enclosure_interval(point, 64))
            else:
                bounds.append(point)
        lower, upper = min(bounds), max(bounds)
        return (None if lower == -math.inf else math.floor(lower - offset), None if upper == math.inf else math.floor(upper - offset))

    # -- signs and domains -----------------------------------------------------------------------

    def _side(self) -> int:
        """1 if ``x >= 0`` on the whole current interval, -1 if ``x <= 0``, 0 if it takes both signs."""
        mapping, draw = self._map, self._draw
        zero = self._guarded(mapping.inverse, _ZERO)
        try:
            at_low, at_high = order(zero, draw._low) <= 0, order(zero, draw._high) >= 0
        except Inseparable as error:
            self._inseparable(error)
        if not mapping.increasing:
            at_low, at_high = at_high, at_low
        return 1 if at_low else -1 if at_high else 0

    def _sign(self) -> int:
        """The sign of ``x`` on this branch, splitting the interval at ``x = 0`` if needed."""
        side = self._side()
        return side if side else (-1 if self._below_value(_ZERO, False) else 1)

    def _require_positive(self, operation: str) -> None:
        side = self._side()
        if side <= 0:
            low, high = point_text(self._draw._low), point_text(self._draw._high)
            where = "negative" if side < 0 else "negative on part of it"
            self._refuse(
                f"computed {operation}, where the argument is {where} (u in [{low}, {high}))",
                "its value is nan or complex there; compare the argument with 0 first (if x > 0: ...), so that each "
                "branch applies the function only where it is defined",
            )


def _constant(value: Fraction, inexact: bool) -> Fraction | float:
    """A constant result of arithmetic on lazy values (``u - u``): a float if a float went in."""
    return float(value) if inexact else value


def _bound(value: tuple) -> Fraction | float:
    """An mpmath bound as a Fraction, or ``±inf``."""
    if value in (finf, fninf):
        return math.inf if value == finf else -math.inf
    numerator, denominator = to_rational(value)
    return Fraction(numerator, denominator)
