"""The maps a lazy value is made of: ``x = f(u)`` with ``f`` a :class:`Map`, a chain of
:class:`Step` s, each strictly monotone where it is applied.

The steps are affine maps ``a*x + b`` (``a != 0``), exponentials ``c**x``, logarithms
``log_c(x)`` and powers ``x**p`` of a positive ``x`` (``c`` is ``e`` or a positive rational other
than 1; ``a``, ``b``, ``p`` rationals: a float constant is its binary value). A map runs forward
on exact points (the range of ``x`` over an interval of ``u``) and backward: a comparison
``x < y`` is ``u < f^-1(y)`` (``u > f^-1(y)`` when ``f`` decreases), with ``f^-1(y)`` an exact
point of :mod:`dpverify.finite.sampler._lazy_real` (beyond the range of a step, ``±inf`` on the side that
keeps every answer). Maps are simplified as they grow: affine maps merged, ``exp_c(log_c(x))`` and
``log_c(exp_c(x))`` cancelled, powers of powers merged, so equal maps compare equal.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

from dpverify.finite.sampler._lazy_real import Point, _affine_text, _rises, affine, exp, log, order, power, show

__all__ = ["Step", "Map", "IDENTITY"]

_ZERO, _ONE = Fraction(0), Fraction(1)


@dataclass(frozen=True)
class Step:
    """One strictly monotone map: ``"affine"`` (``parameter * x + shift``), ``"exp"`` (``base**x``),
    ``"log"`` (``log_base(x)``, x > 0) or ``"pow"`` (``x**parameter``, x > 0)."""

    kind: str
    parameter: Fraction | None
    shift: Fraction = _ZERO

    @property
    def increasing(self) -> bool:
        if self.kind in ("affine", "pow"):
            return self.parameter > 0  # type: ignore[operator]
        return _rises(self.parameter)

    def forward(self, point: Point) -> Point:
        if self.kind == "affine":
            return affine(point, self.parameter, self.shift)  # type: ignore[arg-type]
        if self.kind == "exp":
            return exp(point, self.parameter)
        if self.kind == "log":
            return log(point, self.parameter)
        return power(point, self.parameter)  # type: ignore[arg-type]

    def inverse(self, point: Point) -> Point:
        """The input at which the step reaches ``point``; beyond the step's range, the end of the
        line that keeps every comparison's answer (``-inf`` below the range of an increasing step)."""
        if self.kind == "affine":
            if type(point) is Fraction:  # the common case, without the general constructor
                return (point - self.shift) / self.parameter  # type: ignore[operator]
            return affine(point, 1 / self.parameter, -self.shift / self.parameter)  # type: ignore[operator,arg-type]
        if self.kind == "log":
            return exp(point, self.parameter)
        if point != math.inf and order(point, _ZERO) <= 0:  # exp and pow take only positive values
            return -math.inf if self.increasing else math.inf
        return log(point, self.parameter) if self.kind == "exp" else power(point, 1 / self.parameter)  # type: ignore[operator,arg-type]

    def describe(self, inner: str) -> str:
        if self.kind == "affine":  # first, or after a step whose text binds tighter than * and +
            return _affine_text(inner, self.parameter, self.shift)  # type: ignore[arg-type]
        if self.kind == "pow":
            return f"({inner})**{show(self.parameter)}"
        if self.parameter is None:
            return f"{self.kind}({inner})"
        return f"{show(self.parameter)}**({inner})" if self.kind == "exp" else f"log({inner}, {show(self.parameter)})"


@dataclass(frozen=True)
class Map:
    """A chain of steps, applied first to last: ``x = steps[-1](...steps[0](u))``."""

    steps: tuple[Step, ...] = ()

    @functools.cached_property
    def increasing(self) -> bool:
        return sum(not step.increasing for step in self.steps) % 2 == 0

    @property
    def affine(self) -> tuple[Fraction, Fraction] | None:
        """``(a, b)`` when the map is ``a*u + b``, else None."""
        if not self.steps:
            return _ONE, _ZERO
        if len(self.steps) == 1 and self.steps[0].kind == "affine":
            return self.steps[0].parameter, self.steps[0].shift  # type: ignore[return-value]
        return None

    def then(self, step: Step) -> Map:
        """This map followed by ``step``, simplified (affine maps merged, inverse pairs cancelled)."""
        steps = list(self.steps)
        last = steps[-1] if steps else None
        if last is not None and last.kind == step.kind == "affine":
            scale, shift = last.parameter * step.parameter, last.shift * step.parameter + step.shift  # type: ignore[operator]
            steps.pop()
            step = Step("affine", scale, shift)
        elif last is not None and {last.kind, step.kind} == {"exp", "log"} and last.parameter == step.parameter:
            return Map(tuple(steps[:-1]))
        elif last is not None and last.kind == step.kind == "pow":
            steps.pop()
            step = Step("pow", last.parameter * step.parameter)  # type: ignore[operator]
        if step.parameter == 1 and step.shift == 0 and step.kind in ("affine", "pow"):
            return Map(tuple(steps))
        return Map((*steps, step))

    def forward(self, point: Point) -> Point:
        for step in self.steps:
            point = step.forward(point)
        return point

    def inverse(self, point: Point) -> Point:
        for step in reversed(self.steps):
            point = step.inverse(point)
        return point

    def describe(self, name: str = "u") -> str:
        text = name
        for step in self.steps:
            text = step.describe(text)
        return text


IDENTITY = Map()
