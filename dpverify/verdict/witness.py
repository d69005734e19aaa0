"""A witness of a privacy claim's violation: two neighbouring datasets, an output set, both masses.

``P(S) > e^eps Q(S) + delta`` with ``P = M(dataset)``, ``Q = M(neighbor)``, ``S = output_set`` —
certified by the engine (:mod:`dpverify.verdict.engine`) before it is reported, and checked there to be a
neighbour pair under the relation used.

When the outputs leave mass unexplored (:mod:`dpverify.verdict._unexplored`), ``p`` and ``q`` are the
explored masses of S and ``unexplored`` is the neighbour's unexplored bound ``m``: the true masses
satisfy ``P(S) >= p`` and ``Q(S) <= q + m``, and the certified statement is ``p > e^eps (q + m) +
delta``, so the claim is violated whatever the unexplored mass does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpverify.verdict.privacy_loss import exp_epsilon

__all__ = ["Witness"]


@dataclass(frozen=True)
class Witness:
    """A pair and output set: ``P(S) > e^eps Q(S) + delta`` (certified) with ``P = M(dataset)``,
    ``Q = M(neighbor)``, ``S = output_set``.

    For a verdict ``HOLDS_WITHIN_ROUNDING`` the closest pair is reported the same way with
    ``within_rounding=True``: its nominal excess ``P(S) - e^eps Q(S) - delta`` is no larger than the
    rounding its float probabilities may carry (``allowance``).

    ``unexplored``: the neighbour's unexplored mass ``m`` when the outputs are sub-distributions
    (module docstring): ``p`` and ``q`` are then explored masses, ``Q(S) <= q + m``, and the witness
    certifies ``p > e^eps (q + m) + delta``.
    """

    dataset: Any
    neighbor: Any
    output_set: frozenset
    p: Any
    q: Any
    epsilon: Any
    delta: Any
    within_rounding: bool = False
    allowance: float = 0.0
    unexplored: Any = 0

    @property
    def excess(self) -> float:
        """``P(S) - e^eps Q(S) - delta`` for the values as given (``Q(S)`` raised by the unexplored
        mass when there is one), evaluated in 200-bit interval arithmetic (so a 1e-18 excess of a
        float over an exact claim is not lost), as a float."""
        import mpmath

        from dpverify.verdict._certify import to_interval

        old = mpmath.iv.prec
        try:
            mpmath.iv.prec = 200
            value = (
                to_interval(self.p, 58)
                - mpmath.iv.exp(to_interval(self.epsilon, 58)) * (to_interval(self.q, 58) + to_interval(self.unexplored, 58))
                - to_interval(self.delta, 58)
            )
            return float(value.mid)
        finally:
            mpmath.iv.prec = old

    def __str__(self) -> str:
        outcomes = sorted(self.output_set, key=repr)
        shown = ", ".join(map(repr, outcomes[:6])) + (", ..." if len(outcomes) > 6 else "")
        p, q = _shown(self.p), _shown(self.q)
        rest = float(self.unexplored)  # the neighbour's unexplored mass, which Q(S) may add
        bound = (exp_epsilon(self.epsilon) * (q + rest) if q + rest > 0 else 0.0) + float(self.delta)
        relation = ">" if p > bound else "<="
        lines = [f"D  = {self.dataset}", f"D' = {self.neighbor}", f"S  = {{{shown}}}"]
        if rest:
            lines += [f"P[M(D) in S] >= {p:.12g} (explored)",
                      f"P[M(D') in S] <= {q:.12g} (explored) + {rest:.12g} (unexplored) = {q + rest:.12g}"]
        else:
            lines += [f"P[M(D) in S] = {p:.12g}", f"P[M(D') in S] = {q:.12g}"]
        if _is_interval(self.p) or _is_interval(self.q):
            lines.append(f"certified enclosures: P[M(D) in S] in {self.p}, P[M(D') in S] in {self.q}")
        elif any(_exact_text(value) is not None for value in (self.p, self.q, self.unexplored) if value) and not any(
                _too_long(value) for value in (self.p, self.q, self.unexplored) if value):
            lines.append(f"exact: P[M(D) in S] is {_exact_or_float(self.p)}, P[M(D') in S] is {_exact_or_float(self.q)}"
                         + (f", unexplored {_exact_or_float(self.unexplored)}" if rest else ""))
        lines.append(f"check: {p:.12g} {relation} e^eps * {q + rest:.12g} + delta = {bound:.12g}")
        if self.within_rounding:
            lines.append(
                f"within rounding: excess {self.excess:.3g} vs the float error allowance {self.allowance:.3g}"
            )
        return "\n".join(lines)


#: An exact mass is shown as a fraction when its numerator and denominator are below this.
SHORT_FRACTION = 10**6
#: Exact sums of exponentials whose exponents hold a number of this many digits are not shown (a float
#: scale's binary value, ``exp(-4503599627370496/6433713753386423)``, in every term: hundreds of
#: characters): the floats are, and the JSON keeps the expressions.
UNREADABLE_DIGITS = 13


def _exact_text(value: Any) -> str | None:
    """An exact mass as the witness shows it: a short fraction (numerator and denominator below
    :data:`SHORT_FRACTION`) or a value that is not made of floats (``exp(6)/(exp(6) + exp(7))``,
    ``1/3^20``); None for a float, a long fraction over a power of two: floats' binary values,
    summed exactly (``65363572799968715/144115188075855872``; its decimal says as much). The JSON
    keeps every exact value (:mod:`dpverify.integrations.contract`)."""
    if isinstance(value, float) or (hasattr(value, "is_Float") and value.is_Float):
        return None
    if isinstance(value, bool):
        return str(value)
    rational = _as_fraction(value)
    if rational is None:
        return str(value)  # an expression, or a type of its own
    if abs(rational.numerator) < SHORT_FRACTION and rational.denominator < SHORT_FRACTION:
        return str(rational)
    if rational.denominator & (rational.denominator - 1) == 0:  # a power of two: floats, summed exactly
        return None
    return str(value)


def _too_long(value: Any) -> bool:
    """Whether an exact expression is too long to read on the witness's ``exact:`` line (an exponent
    holding a number of :data:`UNREADABLE_DIGITS` digits or more: a float's binary value); the line is
    then left out."""
    text = _exact_text(value)
    return text is not None and re.search(rf"exp\(-?\d{{{UNREADABLE_DIGITS},}}", text) is not None


def _exact_or_float(value: Any) -> str:
    """The exact text of a mass, else its float's shortest repr (which names that float exactly)."""
    text = _exact_text(value)
    return repr(float(value)) if text is None else text


def _as_fraction(value: Any) -> Fraction | None:
    """``value`` as a Fraction when it is an int, a Fraction or a sympy rational, else None."""
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if getattr(value, "is_Rational", False):
        return Fraction(int(value.p), int(value.q))
    return None


def _is_interval(value: Any) -> bool:
    """An mpmath interval (a certified enclosure, as mechanisms offering ``certified_intervals`` give)."""
    return hasattr(value, "mid") and hasattr(value, "a") and hasattr(value, "b")


def _shown(value: Any) -> float:
    """A mass as a float: an interval by its midpoint, anything else by ``float``."""
    return float(value.mid) if _is_interval(value) else float(value)
