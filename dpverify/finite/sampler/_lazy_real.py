"""Exact real numbers for lazy uniforms: the thresholds on ``u`` that comparisons of values
computed from it map back to (see :mod:`dpverify.finite.sampler._lazy_map`), with an exact identity and
certified enclosures.

Points. A threshold ``f^-1(y)`` and the ends of the interval a uniform is known to lie in are
*points*: a Fraction when the number is rational and computed so (affine maps of rationals, exact
roots such as ``(1/4)**(1/2)``, ``2**-3``, ``log_2(8)``), ``±math.inf`` for "beyond every
value", or else a :class:`Node`, the exact expression ``scale * op(argument) + shift``. Nodes are
built in a canonical form (affine maps folded into ``scale`` and ``shift``, ``exp_c(log_c(z)) = z``,
``(z**p)**q = z**(p*q)``, rational results computed exactly), and two points with equal forms are
the same number: the same threshold met twice is recognised as equal, without numerics.

Order. Points of different forms are ordered exactly where their forms allow (:func:`order`:
a common affine part is taken off both, ``exp(a)`` against ``exp(b)`` is ``a`` against ``b``, and
``exp(a)`` against a rational ``r`` is ``a`` against ``log(r)`` when that is rational), and
otherwise by certified enclosures (mpmath's interval functions with directed rounding, each
transcendental result widened by 16 units in the last place in case mpmath's rounding is off by
one), at :data:`START_PRECISION` bits, doubled until they separate; at :data:`MAX_PRECISION` bits
without separating, :class:`Inseparable` is raised (the two may be one number written in two
forms, e.g. ``log(2)`` and ``log(4)/2``, or differ by less than the cap resolves). A share
``(t - lo) / (hi - lo)`` with an irrational end is an :class:`~dpverify.finite._numbers.Enclosure`
strictly inside ``(0, 1)`` whose width is at most ``2**-96`` of the smaller of the two branch
probabilities (both are enclosed, each bounding the other). Floats are never used for a decision.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

from mpmath.libmp import (
    finf,
    fninf,
    from_rational,
    fzero,
    mpf_abs,
    mpf_add,
    mpf_exp,
    mpf_le,
    mpf_log,
    mpf_lt,
    mpf_neg,
    mpf_shift,
    round_ceiling,
    round_floor,
    to_rational,
    to_str,
)
from mpmath.libmp.libmpi import mpi_add, mpi_div, mpi_mul, mpi_pow_int, mpi_sub

from dpverify.finite._numbers import Enclosure

__all__ = ["Node", "Point", "Inseparable", "affine", "exp", "log", "power", "order", "share", "enclosure", "show", "point_text"]

#: Bits of the first enclosures compared; doubled until they separate.
START_PRECISION = 128
#: Bits past which two points that still overlap are refused as inseparable.
MAX_PRECISION = 2048
#: The widest share enclosure accepted, relative to the smaller branch probability.
SHARE_WIDTH = Fraction(1, 2**96)
_GUARD = 16  # extra working bits inside a node's evaluation
_MAX_BITS = 4096  # exact rational powers and logarithms are tried up to this size
_ZERO, _ONE = Fraction(0), Fraction(1)
_INTERVAL_CACHE = 8192

Interval = tuple  # (lower, upper) as mpmath's raw mpf tuples


@dataclass(frozen=True)
class Node:
    """The exact real ``scale * op(argument) + shift``: ``op`` is ``"exp"`` (``base**argument``),
    ``"log"`` (``log_base(argument)``) or ``"pow"`` (``argument**exponent``, argument > 0);
    ``parameter`` is the base (None for ``e``) or the exponent."""

    op: str
    parameter: Fraction | None
    argument: Point
    scale: Fraction = _ONE
    shift: Fraction = _ZERO

    def __str__(self) -> str:
        inner = str(self.argument) if isinstance(self.argument, Node) else show(self.argument)
        if self.op == "pow":
            text = f"({inner})**{show(self.parameter)}"
        elif self.parameter is None:
            text = f"{self.op}({inner})"
        else:
            text = f"{show(self.parameter)}**({inner})" if self.op == "exp" else f"log({inner}, {show(self.parameter)})"
        return _affine_text(text, self.scale, self.shift)


Point = Fraction | Node | float  # a float only as ±inf


def show(value: Fraction | float | None) -> str:
    """A rational as its float when it is one (constants usually came from floats), else ``p/q``."""
    if value is None:
        return "e"
    if isinstance(value, float) or value.denominator == 1:
        return str(value if isinstance(value, float) else value.numerator)
    as_float = float(value)
    return repr(as_float) if Fraction(as_float) == value else str(value)


def _affine_text(inner: str, scale: Fraction, shift: Fraction) -> str:
    text = inner if scale == 1 else f"-{inner}" if scale == -1 else f"{show(scale)}*{inner}"
    if shift:
        text = f"{text} {'+' if shift > 0 else '-'} {show(abs(shift))}"
    return text


# -- canonical constructors -----------------------------------------------------------------------


def affine(point: Point, scale: Fraction, shift: Fraction) -> Point:
    """``scale * point + shift`` (``scale != 0``)."""
    if isinstance(point, float):
        return point if scale > 0 else -point
    if isinstance(point, Fraction):
        return point * scale + shift
    return Node(point.op, point.parameter, point.argument, point.scale * scale, point.shift * scale + shift)


def _rises(base: Fraction | None) -> bool:
    return base is None or base > 1


def exp(point: Point, base: Fraction | None) -> Point:
    """``base**point`` (``e**point`` for base None)."""
    if isinstance(point, float):
        return math.inf if (point > 0) == _rises(base) else _ZERO
    if isinstance(point, Fraction):
        if point == 0:
            return _ONE
        exact = None if base is None else _rational_power(base, point)
        return Node("exp", base, point) if exact is None else exact
    if point.op == "log" and point.parameter == base and point.scale == 1 and point.shift == 0:
        return point.argument
    return Node("exp", base, point)


def log(point: Point, base: Fraction | None) -> Point:
    """``log_base(point)`` of a point >= 0 (``-inf`` at 0 for a base above 1)."""
    if isinstance(point, float):
        return math.inf if _rises(base) else -math.inf
    if isinstance(point, Fraction):
        if point <= 0:
            assert point == 0, f"log of the negative point {point}"
            return -math.inf if _rises(base) else math.inf
        if point == 1:
            return _ZERO
        exact = None if base is None else _rational_log(point, base)
        return Node("log", base, point) if exact is None else exact
    if point.op == "exp" and point.parameter == base and point.scale == 1 and point.shift == 0:
        return point.argument
    return Node("log", base, point)


def power(point: Point, exponent: Fraction) -> Point:
    """``point**exponent`` of a point >= 0 (``exponent != 0``)."""
    if exponent == 1:
        return point
    if isinstance(point, float):
        return math.inf if exponent > 0 else _ZERO
    if isinstance(point, Fraction):
        if point == 0:
            return _ZERO if exponent > 0 else math.inf
        exact = _rational_power(point, exponent)
        return Node("pow", exponent, point) if exact is None else exact
    if point.op == "pow" and point.scale == 1 and point.shift == 0:
        return power(point.argument, point.parameter * exponent)  # type: ignore[operator]
    return Node("pow", exponent, point)


def _bits(value: Fraction) -> int:
    return max(value.numerator.bit_length(), value.denominator.bit_length(), 1)


def _root(number: int, degree: int) -> int | None:
    """The exact integer ``degree``-th root of ``number >= 1``, or None."""
    guess = 1 << -(-number.bit_length() // degree)  # at least the root; Newton's steps descend to it
    while True:
        step = ((degree - 1) * guess + number // guess ** (degree - 1)) // degree
        if step >= guess:
            return guess if guess**degree == number else None
        guess = step


def _rational_power(base: Fraction, exponent: Fraction) -> Fraction | None:
    """``base**exponent`` when it is rational (and small enough to compute), else None."""
    top, degree = abs(exponent.numerator), exponent.denominator
    if base <= 0 or top * _bits(base) > _MAX_BITS or degree > 64:
        return None
    numerator, denominator = _root(base.numerator**top, degree), _root(base.denominator**top, degree)
    if numerator is None or denominator is None:
        return None
    value = Fraction(numerator, denominator)
    return value if exponent > 0 else 1 / value


def _rational_log(value: Fraction, base: Fraction) -> Fraction | None:
    """The integer ``k`` with ``base**k == value``, or None."""
    ratio = (math.log(value.numerator) - math.log(value.denominator)) / (math.log(base.numerator) - math.log(base.denominator))
    k = round(ratio)
    if k == 0 or abs(k) * _bits(base) > _MAX_BITS:
        return None
    return Fraction(k) if base**k == value else None


# -- enclosures, order and shares -------------------------------------------------------------------


class Inseparable(Exception):
    """Two points whose enclosures still overlap at :data:`MAX_PRECISION` bits."""

    def __init__(self, first: Point, second: Point) -> None:
        super().__init__(first, second)
        self.first, self.second = first, second

    def __str__(self) -> str:
        return f"{describe_point(self.first)} and {describe_point(self.second)}"


def point_text(point: Point) -> str:
    """A point as text: a rational as ``p/q``, an irrational one as its expression."""
    return str(point) if isinstance(point, (Node, Fraction)) else show(point)


def describe_point(point: Point) -> str:
    """A point as text, with its value to 17 digits when it is irrational."""
    if not isinstance(point, Node):
        return show(point)
    low, _ = enclosure_interval(point, 64)
    return f"{point} (= {to_str(low, 17)}...)"


def enclosure_interval(point: Point, precision: int) -> Interval:
    """Certified bounds ``(lower, upper)`` on ``point`` as mpmath mpf values."""
    if isinstance(point, float):
        return (finf, finf) if point > 0 else (fninf, fninf)
    if isinstance(point, Fraction):
        return _rational(point, precision)
    return _node_interval(point, precision)


def enclosure(point: Point, precision: int = START_PRECISION) -> Enclosure:
    """Certified rational bounds on a finite point."""
    lower, upper = enclosure_interval(point, precision)
    return Enclosure(_fraction(lower), _fraction(upper))


def _fraction(value: tuple) -> Fraction:
    numerator, denominator = to_rational(value)
    return Fraction(numerator, denominator)


def _rational(value: Fraction, precision: int) -> Interval:
    numerator, denominator = value.numerator, value.denominator
    return from_rational(numerator, denominator, precision, round_floor), from_rational(numerator, denominator, precision, round_ceiling)


def _nudge(value: tuple, precision: int, upward: bool) -> tuple:
    """``value`` moved outward by 16 units in its last place (guarding mpmath's rounding)."""
    if value in (finf, fninf, fzero):
        return value
    margin = mpf_shift(mpf_abs(value), 4 - precision)
    return mpf_add(value, margin if upward else mpf_neg(margin), precision, round_ceiling if upward else round_floor)


def _exp(interval: Interval, precision: int) -> Interval:
    lower, upper = interval
    return (_nudge(mpf_exp(lower, precision, round_floor), precision, False),
            _nudge(mpf_exp(upper, precision, round_ceiling), precision, True))


def _log(interval: Interval, precision: int) -> Interval:
    lower, upper = interval
    assert mpf_lt(fzero, upper), "log of an enclosure below zero: a domain check was missed"
    low = fninf if mpf_le(lower, fzero) else _nudge(mpf_log(lower, precision, round_floor), precision, False)
    return low, _nudge(mpf_log(upper, precision, round_ceiling), precision, True)


@functools.lru_cache(maxsize=_INTERVAL_CACHE)
def _node_interval(node: Node, precision: int) -> Interval:
    work = precision + _GUARD
    inner = enclosure_interval(node.argument, work)
    if node.op == "exp":
        if node.parameter is not None:
            inner = mpi_mul(inner, _log(_rational(node.parameter, work), work), work)
        value = _exp(inner, work)
    elif node.op == "log":
        value = _log(inner, work)
        if node.parameter is not None:
            value = mpi_div(value, _log(_rational(node.parameter, work), work), work)
    elif node.parameter.denominator == 1:  # type: ignore[union-attr]
        lower, upper = mpi_pow_int(inner, int(node.parameter), work)  # type: ignore[arg-type]
        value = _nudge(lower, work, False), _nudge(upper, work, True)
    else:
        value = _exp(mpi_mul(_log(inner, work), _rational(node.parameter, work), work), work)  # type: ignore[arg-type]
    return mpi_add(mpi_mul(value, _rational(node.scale, work), work), _rational(node.shift, work), work)


def _frameless(point: Point, frame: Node) -> Point:
    """``point`` in the frame of ``frame``'s affine part: ``(point - shift) / scale``."""
    return affine(point, 1 / frame.scale, -frame.shift / frame.scale)


def _rises_node(node: Node) -> bool:
    return node.parameter > 0 if node.op == "pow" else _rises(node.parameter)  # type: ignore[operator]


def order(first: Point, second: Point) -> int:
    """-1, 0 or 1 as ``first`` is below, equal to or above ``second`` (raises :class:`Inseparable`).

    Exact where the forms allow: both points are moved by the inverse of one node's affine part
    (``1 - exp(a)`` against ``1 - exp(b)`` is ``exp(a)`` against ``exp(b)``, flipped), and a bare
    ``op(z)`` is compared with a rational by moving ``op`` to the other side when its inverse stays
    rational, or with ``op(w)`` by comparing ``z`` and ``w``. Only what is left is compared by
    enclosures, whose precision is then relative to the numbers' size."""
    if not isinstance(first, Node) and not isinstance(second, Node):
        return (first > second) - (first < second)
    try:
        return _order(first, second)
    except Inseparable:
        raise Inseparable(first, second) from None  # named as the caller wrote them


def _order(first: Point, second: Point) -> int:
    if not isinstance(first, Node) and not isinstance(second, Node):
        return (first > second) - (first < second)
    if first == second:
        return 0
    if not isinstance(first, Node):
        return -_order(second, first)
    if first.scale != 1 or first.shift != 0:  # (first - shift) / scale against the same of second
        sign = 1 if first.scale > 0 else -1
        return sign * _order(_frameless(first, first), _frameless(second, first))
    direction = 1 if _rises_node(first) else -1
    if isinstance(second, Node):
        if (second.op, second.parameter, second.scale, second.shift) == (first.op, first.parameter, _ONE, _ZERO):
            return direction * _order(first.argument, second.argument)
        return _separate(first, second)
    if second == -math.inf or (second <= 0 and first.op != "log"):
        return 1  # exp and pow take only positive values
    if second == math.inf:
        return -1
    if first.op == "exp":
        preimage = log(second, first.parameter)
    elif first.op == "log":
        preimage = exp(second, first.parameter)
    else:
        preimage = power(second, 1 / first.parameter)  # type: ignore[operator,arg-type]
    if isinstance(preimage, Node):  # not rational: compare numerically (no ping-pong)
        return _separate(first, second)
    return direction * _order(first.argument, preimage)


def _separate(first: Point, second: Point) -> int:
    """Order two different points by enclosures at increasing precision."""
    precision = START_PRECISION
    while precision <= MAX_PRECISION:
        first_low, first_high = enclosure_interval(first, precision)
        second_low, second_high = enclosure_interval(second, precision)
        if mpf_lt(first_high, second_low):
            return -1
        if mpf_lt(second_high, first_low):
            return 1
        precision *= 2
    raise Inseparable(first, second)


def share(threshold: Point, low: Point, high: Point) -> Fraction | Enclosure:
    """``(threshold - low) / (high - low)`` for ``low < threshold < high`` (all finite): a Fraction
    when the three are, else an Enclosure inside ``(0, 1)`` (see the module docstring).

    The share is the same in the frame of a node's affine part (``1 - exp(a)`` becomes ``exp(a)``),
    where enclosures keep their relative precision; both branches' shares are enclosed and each
    bounds the other (``1 - above``), so the smaller one is never lost to the larger's rounding."""
    if isinstance(threshold, Fraction) and isinstance(low, Fraction) and isinstance(high, Fraction):
        return (threshold - low) / (high - low)
    frame = next(p for p in (threshold, low, high) if isinstance(p, Node))
    points = [_frameless(p, frame) for p in (threshold, low, high)]
    precision = START_PRECISION
    while precision <= MAX_PRECISION:
        point, start, end = (enclosure_interval(p, precision) for p in points)
        width = mpi_sub(end, start, precision)
        below = mpi_div(mpi_sub(point, start, precision), width, precision)
        above = mpi_div(mpi_sub(end, point, precision), width, precision)
        if all(value not in (finf, fninf) for value in (*below, *above)):
            lower = max(_fraction(below[0]), 1 - _fraction(above[1]))
            upper = min(_fraction(below[1]), 1 - _fraction(above[0]))
            if 0 < lower <= upper < 1:
                narrow = upper - lower <= min(lower, 1 - upper) * SHARE_WIDTH
                if narrow or precision == MAX_PRECISION:
                    return Enclosure(lower, upper)
        precision *= 2
    raise Inseparable(threshold, high)
