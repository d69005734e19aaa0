"""Lazy uniforms: ``rng.random()`` of the exact random source, never drawn, and exact arithmetic on them.

The model. ``u = rng.random()`` is a *real* uniform on ``[0, 1)`` (not a float): ``P(u < t) = t``.
It is known only by the interval ``[lo, hi)`` its comparisons so far have left it in; a comparison
with a threshold inside that interval is a choice point of the run (see
:mod:`dpverify.finite.sampler._exact_random`) with the exact probability of either side.

A sampler may compute with it. A :class:`LazyValue` ``x = f(u)`` follows ``u`` through

* affine maps with non-zero constants: ``x + c``, ``c - x``, ``c * x``, ``x / c``, ``-x``, and sums
  and differences of values affine in the same ``u``;
* ``np.log``, ``np.log2``, ``np.log10``, ``np.log1p``, ``np.exp``, ``np.exp2``, ``np.expm1``,
  ``np.sqrt``, ``np.cbrt``, ``x ** p`` and ``np.power(x, p)`` for a constant ``p``, ``c ** x``;
* piecewise monotone maps, split at their kink by a comparison with 0 (a choice point when ``x``
  takes both signs on the current interval): ``abs``, ``np.abs``, ``np.sign`` (its result is the
  constant ``±1.0`` of the branch), ``c / x``, ``np.reciprocal``, integer powers, ``np.square``;
  and ``max``/``min``/``np.maximum``/``np.minimum``/``np.clip`` with constants (a comparison).

Each map is strictly monotone where it is applied, so ``f`` is, and

* a comparison ``x < c`` (``<=``, ``>``, ``>=``; elementwise with numpy arrays) is the comparison
  ``u < f^-1(c)`` — ``u > f^-1(c)`` where ``f`` decreases — mapped back through the inverse maps
  (:mod:`dpverify.finite.sampler._lazy_map`) to an exact point (:mod:`dpverify.finite.sampler._lazy_real`);
  ``np.isclose(x, c, rtol, atol)`` is
  ``|x - c| <= atol + rtol * |c|`` with that formula applied exactly (two comparisons);
  ``x == c`` is False and ``x != c`` True, with probability 1;
* ``math.floor``, ``math.ceil``, ``int``/``math.trunc``, ``round`` (half to even) and their numpy
  forms (``np.floor``, ``np.ceil``, ``np.trunc``, ``np.rint``, ``np.round``, which return floats;
  also ``round(x, n)``, ``x // c``, ``x % c``, ``divmod``) give the integer whose cell contains
  ``x``, by comparisons with the cells' edges: bisection over a bounded range of integers, and over
  a range unbounded on one side (``-log(u)`` near ``u = 0``) a chain ``x < a + 1``? else
  ``x < a + 2``? ... from the bounded end, each link an ordinary two-branch choice point: an
  unbounded range is an unbounded chain, which the enumeration must cut (by mass or depth).

Numbers. Constants that are ints, Fractions, Decimals or sympy rationals are exact; a float
constant is its exact binary value ``Fraction(c)``. A threshold on ``u`` is a Fraction when it is
rational (affine maps of rationals, exact roots and powers), else an exact expression with
certified enclosures, whose share of the interval is an
:class:`~dpverify.finite._numbers.Enclosure`. A comparison whose threshold came through a float
constant or is irrational is *inexact*: the distribution is then a float one.

Not modelled: float rounding inside the arithmetic. ``u * c`` is the real product, ``np.log(x)``
the real logarithm. A mechanism whose privacy depends on how floats round inside its arithmetic is
checked as if it computed in real arithmetic: the engine's float error model covers the rounding
of the result's *probabilities*, but a float-level leak of the kind Mironov (2012) shows for the
textbook Laplace mechanism (outputs that only some inputs can produce, because of how the float
noise rounds) is out of scope: check such code statistically with ``dpverify.estimate``.

Refused with a :class:`~dpverify.errors.MechanismError` naming the operation and the fix:
``float(x)`` — and so ``math.log(x)``, ``math.exp(x)``, ``math.sqrt(x)`` and the other ``math``
functions, which call ``float(x)`` and cannot be told apart from it (the error says to use numpy's
form, ``np.log(x)``, which is followed exactly); ``complex``, ``operator.index``, ``bool``; a map
whose domain is violated on part of the current interval (``np.log``, ``np.sqrt`` or a fractional
power of a value that can be negative there: compare it with 0 first); values of two different
draws combined or compared (``u + v``); two values of one draw combined other than affinely; and a
lazy value returned as the sampler's output (a real-valued output: check it statistically).

Modules: this one holds the draw, comparisons and refusals; :mod:`dpverify.finite.sampler._lazy_arithmetic`
the operators and integer-valued maps; :mod:`dpverify.finite.sampler._lazy_ufuncs` the numpy protocol.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from fractions import Fraction
from numbers import Real
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import InvalidArgument, MechanismError
from dpverify.finite._numbers import WAYS_ON, Enclosure, _describe, _number
from dpverify.finite.sampler._lazy_arithmetic import LazyArithmetic
from dpverify.finite.sampler._lazy_map import IDENTITY, Map
from dpverify.finite.sampler._lazy_real import (
    MAX_PRECISION,
    Inseparable,
    Node,
    Point,
    enclosure,
    order,
    point_text,
    share,
)
from dpverify.finite.sampler._lazy_ufuncs import array_function, array_ufunc

__all__ = ["LazyUniform", "LazyValue"]


_ZERO, _ONE = Fraction(0), Fraction(1)
_FOLLOWED = (
    "dpverify follows u exactly through comparisons with thresholds (u < p, u <= p, u > p, u >= p), monotone maps "
    "(affine maps, np.log, np.exp, np.sqrt, powers, abs) and floor/ceil/int/round of them"
)


class LazyUniform(LazyArithmetic):
    """A uniform ``u`` on [0, 1) from ``rng.random()``, never drawn (module docstring).

    ``u < t`` for a threshold strictly inside its interval ``[lo, hi)`` is a choice point: True
    with probability ``(t - lo) / (hi - lo)`` (the interval becomes ``[lo, t)``), False with the
    rest; outside the interval the answer is certain and nothing branches. ``<=`` branches as ``<``,
    ``>`` and ``>=`` as their negations (ties have probability 0). Arithmetic gives a
    :class:`LazyValue` (a subclass, so code that recognises a lazy uniform recognises values
    computed from one).
    """

    # u holds the state of its draw: the rng and its run, and the interval [_low, _high) (Fractions,
    # or exact irrational points). A value computed from u (LazyValue) refers to u as its _draw.
    __slots__ = ("_rng", "_run", "_low", "_high", "_fresh", "__weakref__")
    _map = IDENTITY  # u itself (a LazyValue has its own)
    _inexact = False
    _low: Point
    _high: Point

    def __init__(self, rng: Any) -> None:  # the ExactRandom of the run
        self._rng, self._run = rng, rng._run
        self._low, self._high, self._fresh = _ZERO, _ONE, True  # still [0, 1)

    @property
    def _draw(self) -> LazyUniform:
        """The uniform whose interval this value's comparisons narrow: u itself."""
        return self

    @property
    def interval(self) -> tuple[Fraction | Enclosure, Fraction | Enclosure]:
        """``(lo, hi)``: what the comparisons so far have told about the uniform (``lo <= u < hi``);
        an irrational end as an Enclosure."""
        return _known(self._draw._low), _known(self._draw._high)

    def __repr__(self) -> str:
        return f"LazyUniform(in [{point_text(self._draw._low)}, {point_text(self._draw._high)}))"

    def _name(self, parenthesise: bool = False) -> str:
        text = self._map.describe("u")
        return f"({text})" if parenthesise and " " in text else text

    def _derive(self, mapping: Map, inexact: bool) -> LazyValue:
        value = object.__new__(LazyValue)
        value._draw, value._map, value._inexact = self._draw, mapping, inexact
        return value

    # -- comparisons -------------------------------------------------------------------------

    def _below(self, other: Any) -> bool | Any:
        """Whether ``x < other`` on this run's branch (NotImplemented for a non-number)."""
        kind = type(other)
        if kind is Fraction:  # the fast paths: exact thresholds and floats
            value, inexact = other, False
        elif kind is int:
            value, inexact = Fraction(other), False
        elif kind is float and math.isfinite(other):
            value, inexact = Fraction(other), True
        else:
            read = self._read(other, "{x} < {c}", comparison=True)
            if read is NotImplemented or isinstance(read, bool):
                return read  # x < inf, x < -inf: the same for every map
            if isinstance(read, LazyUniform):
                return self._below_lazy(read)
            value, inexact = read
        if self._map is not IDENTITY:
            return self._below_value(value, inexact)
        if not self._fresh or self._rng._run != self._run or not self._rng._active:
            return self._u_below(value, inexact or self._inexact)
        if value.numerator <= 0:  # the fast path of a coin, u < p on [0, 1) (as _u_below does it)
            return False
        if value.numerator >= value.denominator:
            return True
        self._fresh = False
        if self._rng._choose("random", 2, (value,), inexact) == 0:
            self._high = value
            return True
        self._low = value
        return False

    def _below_value(self, value: Fraction, inexact: bool) -> bool:
        mapping = self._map
        if not mapping.steps:
            return self._u_below(value, inexact or self._inexact)
        below = self._u_below(self._guarded(mapping.inverse, value), inexact or self._inexact)
        return below if mapping.increasing else not below

    def _u_below(self, threshold: Point, inexact: bool) -> bool:
        """Whether ``u < threshold``: certain outside the interval, else a choice point."""
        draw = self._draw
        rng = draw._rng
        if rng._run != draw._run or not rng._active:
            rng._abort(MechanismError(
                f"a lazy uniform of rng.random() was compared after the run of the sampler {rng._name} that drew it; "
                "lazy uniforms are only valid during the call that drew them (do not keep them between calls).",
                dataset=rng._dataset,
            ))
        low, high = draw._low, draw._high
        part: Fraction | Enclosure
        if type(threshold) is Fraction and draw._fresh:  # [0, 1): the share below t is t itself
            if threshold.numerator <= 0:
                return False
            if threshold.numerator >= threshold.denominator:
                return True
            part = threshold
        elif type(threshold) is Fraction and type(low) is Fraction and type(high) is Fraction:
            if threshold <= low:
                return False
            if threshold >= high:
                return True
            part = (threshold - low) / (high - low)
        else:
            try:
                if order(threshold, low) <= 0:
                    return False
                if order(threshold, high) >= 0:
                    return True
                part = share(threshold, low, high)
            except Inseparable as error:
                self._inseparable(error)
            inexact = inexact or isinstance(part, Enclosure)
        draw._fresh = False
        if rng._choose("random", 2, (part,), inexact) == 0:
            draw._high = threshold
            return True
        draw._low = threshold
        return False

    def _below_lazy(self, other: LazyUniform) -> bool:
        if other._draw is not self._draw:
            self._refuse("compared two lazy uniforms of different draws of rng.random() (u < v)", "the pair is not an interval of one uniform")
        difference = self._combine(other, -1, "<")
        return difference._below_value(_ZERO, False) if isinstance(difference, LazyUniform) else difference < 0

    def _within(self, center: Any, rtol: Any, atol: Any) -> bool:
        """``np.isclose(x, center, rtol, atol)``: ``|x - center| <= atol + rtol * |center|``, exactly."""
        if isinstance(center, (float, np.floating)) and not math.isfinite(center):
            return False  # numpy: never close to inf or nan (x is finite, and never nan)
        reads = [self._read(v, f"np.isclose({{x}}, {symbol})") for v, symbol in ((center, "{c}"), (rtol, "rtol={c}"), (atol, "atol={c}"))]
        if any(read is NotImplemented or isinstance(read, LazyUniform) for read in reads):
            self._refuse(f"called np.isclose({self._name()}, {_describe(center)}, rtol={_describe(rtol)}, atol={_describe(atol)})",
                         "rtol and atol must be numbers")
        (value, first), (relative, second), (absolute, third) = reads
        tolerance, inexact = absolute + relative * abs(value), first or second or third
        return not self._below_value(value - tolerance, inexact) and self._below_value(value + tolerance, inexact)

    __lt__ = _below  # (no extra call: coins are the hot path of most samplers)
    __le__ = _below  # P(x == t) = 0

    def __gt__(self, other: Any) -> Any:
        below = self._below(other)
        return below if below is NotImplemented else not below

    __ge__ = __gt__

    def __eq__(self, other: Any) -> Any:
        if other is self:
            return True
        if isinstance(other, LazyUniform):
            if other._draw is not self._draw:
                return False  # two independent uniforms meet with probability 0
            difference = self._combine(other, -1, "==")
            return not isinstance(difference, LazyUniform) and difference == 0
        if isinstance(other, (Real, np.generic)):
            return False  # a strictly monotone f(u) equals a given number with probability 0
        return NotImplemented

    def __ne__(self, other: Any) -> Any:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((id(self._draw), self._map))

    # -- refusals --------------------------------------------------------------------------------

    def _read(self, value: Any, symbol: str, comparison: bool = False) -> Any:
        """The operand ``c`` of ``symbol`` (``"{x} + {c}"``): a number as ``(Fraction, inexact)``, a
        lazy value as itself, NotImplemented for anything else (numpy arrays work elementwise); in a
        comparison ``±inf`` as the answer of ``x < c``, in arithmetic refused, as nan is."""
        rng = self._draw._rng
        if isinstance(value, LazyUniform):
            return value
        basic: Any = getattr(sys.modules.get("sympy"), "Basic", ())
        if isinstance(value, np.ndarray) or not (
            isinstance(value, (Real, np.generic, basic)) or type(value).__name__ == "Decimal"
        ):
            return NotImplemented
        if isinstance(value, (float, np.floating)):
            if math.isnan(value):
                rng._abort(MechanismError(
                    f"the sampler {rng._name} computed {symbol.format(x=self._name(True), c='nan')}, where u is a lazy "
                    "uniform of rng.random(); use a number (nan compares False with everything: test for nan first).",
                    dataset=rng._dataset,
                ))
            if math.isinf(value):
                if not comparison:
                    self._refuse(f"computed {symbol.format(x=self._name(True), c=value)}", "an infinite constant gives no real value")
                return bool(value > 0)
        try:
            return _number("a lazy uniform of rng.random()", "the constant", value)
        except InvalidArgument as error:
            rng._abort(MechanismError(str(error), dataset=rng._dataset))

    def _guarded(self, function: Callable[[Point], Point], point: Point) -> Point:
        try:
            return function(point)
        except Inseparable as error:
            self._inseparable(error)

    def _inseparable(self, error: Inseparable) -> NoReturn:
        self._refuse(
            f"compared {self._name()} with a threshold whose place in the interval of u is undecided: the numbers {error} "
            f"agree to {MAX_PRECISION} bits",
            "they may be one number written in two ways (np.exp(u) < 2 and np.exp(2 * u) < 4 meet log(2) and log(4)/2: write "
            "the comparisons in one form), or differ by less than that precision resolves",
        )

    def _refuse(self, operation: str, why: str | None) -> NoReturn:
        rng = self._draw._rng
        rng._abort(MechanismError(
            f"the sampler {rng._name} {operation}, where u is a lazy uniform of rng.random(); "
            f"{why or 'the result would need the value of u, which dpverify never draws'}. {_FOLLOWED}; a real-valued "
            f"output is refused. For continuous noise: {WAYS_ON[len('Two ways on: '):]}",
            dataset=rng._dataset,
        ))
        raise AssertionError("rng._abort returns only by raising")

    def _returned_error(self, sampler: str, dataset: Any) -> MechanismError:
        """The error for a sampler that returned this value (raised by from_sampler's output check)."""
        what = "a lazy uniform of rng.random()" if not self._map.steps else (
            f"{self._name()}, a real number computed from a lazy uniform u of rng.random(),")
        return MechanismError(
            f"the sampler {sampler} returned {what} on dataset {dataset!r}; its value is never drawn, and a real number "
            "computed from a lazy uniform is released exactly only as an affine map a*u + b of it (its density is "
            "then exact). Draw the noise with rng.laplace or rng.exponential (traced exactly: inverse-CDF sampling "
            "such as -np.log(u) is what they stand for), return the outcome of comparisons or an integer of the value, "
            "or check the sampler statistically with dpverify.estimate.",
            dataset=dataset,
        )

    def __getattr__(self, name: str) -> Any:  # numpy calls element methods on object arrays (np.sin: .sin())
        if not name.startswith("_") and isinstance(getattr(np, name, None), np.ufunc):
            self._refuse(f"called numpy.{name} on {self._name()}", "it is not one of the maps dpverify follows")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return array_ufunc(self, LazyUniform, ufunc, method, inputs, kwargs)

    def __array_function__(self, function: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return array_function(self, LazyUniform, function, args, kwargs)


class LazyValue(LazyUniform):
    """``x = f(u)``: a real number computed from a lazy uniform ``u`` by maps dpverify follows
    exactly (module docstring). It compares, rounds and computes as the uniform does, each
    comparison mapped back to a threshold on ``u``."""

    __slots__ = ("_draw", "_map", "_inexact")
    _draw: LazyUniform

    def __init__(self) -> None:
        raise TypeError("a LazyValue comes from arithmetic on rng.random(), not from its constructor")

    def __repr__(self) -> str:
        return f"LazyValue({self._name()}, u in [{point_text(self._draw._low)}, {point_text(self._draw._high)}))"



def _known(point: Point) -> Fraction | Enclosure:
    return enclosure(point) if isinstance(point, Node) else point  # type: ignore[return-value]



def _refused(symbol: str, why: str) -> Callable[..., Any]:
    def refused(self: LazyUniform, *args: Any) -> Any:
        self._refuse("computed " + symbol.format(x=self._name()), why)

    return refused


for _method, (_symbol, _why) in {
    "__float__": (
        "float({x}) (math.log, math.exp, math.sqrt and the other math functions call it)",
        "its value is never drawn. Use numpy's functions (np.log(x), np.exp(x), np.sqrt(x), ...), which dpverify "
        "follows exactly, math.floor/math.ceil/int/round, or compare x with thresholds",
    ),
    "__complex__": ("complex({x})", "its value is never drawn"),
    "__index__": ("{x} as an index", "its value is never drawn; use int(x) for its integer part"),
    "__bool__": ("bool({x}) (an if on the value itself rather than on a comparison)", "compare it with a threshold (if x < p: ...)"),
}.items():
    setattr(LazyUniform, _method, _refused(_symbol, _why))
