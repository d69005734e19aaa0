"""Unexplored mass: deciding a claim on sub-distributions, soundly.

A sampler with unbounded randomness is enumerated until the paths not taken carry at most a
tolerance (:mod:`dpverify.finite.distribution`, "Unexplored mass"). On a dataset its output is then
known as an explored part ``P_e`` and an upper bound ``m_P`` on the mass not explored: the true
output is ``P = P_e + T_P`` for an unknown ``T_P >= 0`` of total ``t_P <= m_P``, which may fall on
any outcome, explored or new. This module holds what the engine (:func:`dpverify.verdict.engine.decide`)
needs to decide an ``(eps, delta)`` claim on such rows; the engine runs the tests.

Notation: ``P, Q`` the true outputs on neighbours ``D, D'``; ``H_e = sum_o max(0, P_e(o) - e^eps
Q_e(o))`` over the explored outcomes; ``delta_eps(P || Q) = sup_S P(S) - e^eps Q(S)``, which is
attained and equals the hockey-stick divergence of ``P`` and ``Q``.

**Upper bound.** ``delta_eps(P || Q) <= H_e + m_P``. *Proof.* For any set S, ``P(S) = P_e(S) +
T_P(S) <= P_e(S) + m_P`` and ``Q(S) >= Q_e(S)`` (``T_Q >= 0``), so ``P(S) - e^eps Q(S) <= P_e(S) -
e^eps Q_e(S) + m_P <= H_e + m_P``, the last step because ``sum_{o in S} (P_e(o) - e^eps Q_e(o))`` is
at most the sum of its positive terms. Taking the supremum over S gives the bound. ∎ It is tight:
if every row's unexplored mass falls on an outcome of its own (one no other row has), the pair's
divergence is exactly ``H_e + m_P`` for every pair at once (the new outcome of ``P`` adds ``m_P``,
that of ``Q`` adds ``max(0, -e^eps m_Q) = 0``).

**Lower bound.** ``delta_eps(P || Q) >= H_e - e^eps m_Q``. *Proof.* Take ``S = {o explored :
P_e(o) > e^eps Q_e(o)}``. Then ``P(S) >= P_e(S)`` and ``Q(S) = Q_e(S) + T_Q(S) <= Q_e(S) + m_Q``, so
``P(S) - e^eps Q(S) >= P_e(S) - e^eps Q_e(S) - e^eps m_Q = H_e - e^eps m_Q``. ∎

**The verdict.** A claim ``(eps, delta)`` *holds* iff ``delta_eps(P_i || P_j) <= delta`` for every
directed neighbour pair ``(i, j)``. So it is proved when ``H_e(i, j) + m_i <= delta`` for every
directed pair (by the upper bound), and refuted when ``H_e(i, j) - e^eps m_j > delta`` for some pair
(by the lower bound, with the witness ``D, D', S, P_e(S), Q_e(S)`` and the statement ``Q(S) <=
Q_e(S) + m_Q``); otherwise it is undecided, and the figures say how far to explore. A pure claim
(``delta = 0``) with ``m_i > 0`` on a row that starts a pair is never proved (``H_e + m_i > 0``).

How the engine runs the two tests, each one :func:`~dpverify.verdict.engine.decide` on rows with no
unexplored mass:

* *Proved*: the rows are augmented (:func:`augmented`): every pair is directed, its first row
  ``i`` is given an outcome ``TAIL_P`` of mass ``m_i``, its second row ``j`` an outcome ``TAIL_Q``
  of mass ``m_j``. The augmented pair's divergence is ``H_e + max(0, m_i - 0) + max(0, 0 - e^eps
  m_j) = H_e + m_i`` exactly, with exact masses where the rows are exact: the engine's own
  certification decides ``H_e + m_i <= delta`` with no rounding of the claim.
* *Refuted*: every pair is directed and given its own delta (``RowPairs.pair_delta``), ``delta +
  e^eps m_j`` rounded up (:func:`violation_bounds`): a certified violation of it is a violation of
  the claim by the lower bound. The rounding only leaves undecided a violation within a few parts
  in ``2**40`` (relative) of that threshold.

**Declared outputs.** When the sampler's author declares its every possible output
(``from_sampler(..., outputs=O)``, recorded as an accepted assumption: the paths not explored cannot
be checked), ``T_P`` falls on ``O`` only, so ``P(o) in [P_e(o), P_e(o) + m_P]`` for each ``o`` in
``O``. A pure claim (``delta = 0``) holds iff ``P(o) <= e^eps Q(o)`` for every directed pair and every
``o``; it is *proved* when ``P_e(o) + m_P <= e^eps Q_e(o)`` for all of them (since ``P(o) <= P_e(o) +
m_P`` and ``Q(o) >= Q_e(o)``), clear of rounding: HOLDS only, since within the float error the excess
could be the unexplored mass itself (a claim tight to eps* stays UNDECIDED). The engine runs that test on rows augmented the same way
(:func:`declared_augmented`: the first row of each directed pair gets ``m_i`` added to every declared
output, the second stays as it is): their pure check is exactly it. The refutation test is the one
above (its lower bound holds for any ``T``). For ``delta > 0`` the declaration changes nothing: the
upper bound ``H_e + m_P`` is reached by putting all of ``T_P`` on one output.

With no unexplored mass anywhere none of this runs: the rows are decided as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from dpverify.verdict._certify import effective_claim, to_interval

__all__ = ["TailOutcome", "TAIL_P", "TAIL_Q", "NOTHING", "upper_floats", "largest", "augmented", "exact_mass",
           "violation_bounds", "undecided_reason", "unexplored_of", "row_mass", "directed", "declared_of",
           "declared_augmented", "declared_reason"]


class TailOutcome:
    """The outcome an augmented row puts its unexplored mass on (``TAIL_P`` for the first row of a
    directed pair, ``TAIL_Q`` for the second), or the empty column of rows that explored no outcome
    at all (``NOTHING``): equal to nothing but itself."""

    __slots__ = ("side",)

    def __init__(self, side: str) -> None:
        self.side = side

    def __repr__(self) -> str:
        return f"<unexplored mass of {self.side}>"

    def __reduce__(self) -> tuple:
        return (_tail_outcome, (self.side,))


def _tail_outcome(side: str) -> TailOutcome:
    return _SIDES[side]


TAIL_P = TailOutcome("P")
TAIL_Q = TailOutcome("Q")
NOTHING = TailOutcome("nothing explored")
_SIDES = {outcome.side: outcome for outcome in (TAIL_P, TAIL_Q, NOTHING)}


def upper_floats(values: Any) -> np.ndarray:
    """Every unexplored bound as a float64 at least as large (exact numbers rounded up)."""
    array = np.asarray(values)
    if array.dtype != object:
        return np.asarray(array, dtype=float)
    return np.array([_float_above(value) for value in array.tolist()], dtype=float)


def _float_above(value: Any) -> float:
    if isinstance(value, float):
        return value
    if value == 0:
        return 0.0
    try:
        exact = Fraction(value)
    except (TypeError, ValueError):  # sympy or mpmath: an enclosure's upper end
        import mpmath

        old = mpmath.iv.prec
        try:
            mpmath.iv.prec = 80
            return math.nextafter(float(mpmath.mpf(to_interval(value, 22).b)), math.inf)
        finally:
            mpmath.iv.prec = old
    rounded = float(exact)
    return rounded if Fraction(rounded) >= exact else math.nextafter(rounded, math.inf)


def largest(values: Any) -> float:
    """The largest unexplored bound, as a float rounded up (0.0 for none)."""
    floats = upper_floats(values)
    return float(floats.max(initial=0.0))


def unexplored_of(distributions: Sequence[Mapping]) -> np.ndarray | None:
    """The ``RowPairs.unexplored`` of rows made from ``distributions``: each one's unexplored mass
    (exact values; 0 for a plain mapping), or None when none has any."""
    masses = [getattr(d, "unexplored", 0) for d in distributions]
    if all(mass == 0 for mass in masses):
        return None
    tails = np.empty(len(masses), dtype=object)
    tails[:] = masses
    return tails


def declared_of(distributions: Sequence[Mapping]) -> frozenset | None:
    """The ``RowPairs.declared`` of rows made from ``distributions``: the outputs their author declared
    (``from_sampler(..., outputs=)``), when every row declares the same set, else None."""
    found = {getattr(d, "declared_outputs", None) for d in distributions}
    if len(found) != 1:
        return None
    (declared,) = found
    return declared


def declared_augmented(matrix: np.ndarray, tails: np.ndarray, outcomes: Sequence[Any],
                       declared: frozenset) -> tuple[np.ndarray, list]:
    """The rows twice over for a pure claim on declared outputs: rows ``0 .. R-1`` (the first of a
    directed pair) with their unexplored bound added to every declared output, rows ``R .. 2R-1`` as
    they are, and a column of zeros for each declared output no row explored; with the outcome names."""
    missing = sorted((o for o in declared if o not in set(outcomes)), key=repr)
    names = [*outcomes, *missing]
    rows, columns = matrix.shape
    wide = np.zeros((2 * rows, len(names)))
    wide[:rows, :columns] = matrix
    wide[rows:, :columns] = matrix
    marked = np.array([name in declared for name in names])
    wide[:rows, marked] += tails[:, None]
    return wide, names


def declared_reason(unexplored: float, epsilon: Any) -> str:
    """Why a pure claim on declared outputs is undecided, and the way on."""
    return (
        f"the outputs leave up to {unexplored:.3g} of their mass unexplored, on the declared outputs; with it the "
        f"claim (eps={epsilon}) is neither proved (on some pair a declared output's explored probability plus the "
        "unexplored mass exceeds, or comes within the float error of, e^eps times its neighbour's explored "
        "probability) nor refuted. Explore further: from_sampler(..., tail=smaller); a claim tight to the "
        "mechanism's eps* stays undecided at any tail."
    )


def row_mass(content: Mapping, tails: np.ndarray, row: int) -> Any:
    """A row's unexplored mass as certification reads it: its exact row's own (a Distribution), else
    the rows' array (rows that are plain mappings, such as projections)."""
    own = getattr(content, "unexplored", None)
    return exact_mass(tails, row) if own is None else own


def exact_mass(values: np.ndarray, row: int) -> Any:
    """The unexplored bound of ``row`` as certification reads it: the exact number given (a float
    is its binary value)."""
    value = values[row]
    return value.item() if isinstance(value, np.generic) else value


def augmented(matrix: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """The rows twice over, two outcome columns more: rows ``0 .. R-1`` put their unexplored bound
    on ``TAIL_P`` (the column before last), rows ``R .. 2R-1`` on ``TAIL_Q`` (the last)."""
    rows, outcomes = matrix.shape
    wide = np.zeros((2 * rows, outcomes + 2))
    wide[:rows, :outcomes] = matrix
    wide[rows:, :outcomes] = matrix
    wide[:rows, outcomes] = tails
    wide[rows:, outcomes + 1] = tails
    return wide


def directed(left: np.ndarray, right: np.ndarray, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every directed pair: ``(left, right)``, then ``(right, left)`` when the pairs are symmetric."""
    if not symmetric:
        return left, right
    return np.concatenate([left, right]), np.concatenate([right, left])


def violation_bounds(bounds: Any, epsilon: Any, tails: np.ndarray) -> np.ndarray:
    """``delta + e^eps m`` per directed pair, rounded up so that certification reads each as at least
    the exact value: ``bounds`` is the claim's delta (a number) or the pairs' own deltas (floats),
    ``tails`` the upper floats of the second rows' bounds. Above 1 nothing can exceed it: capped at 2."""
    if np.ndim(bounds) == 0:
        base = np.full(tails.shape, _delta_above(bounds))
    else:
        base = np.asarray(bounds, dtype=float) * (1 + 2.0**-40)
    factor = _exp_above(epsilon)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.where(tails > 0, factor * tails, 0.0)
        total = (base + scaled) * (1 + 2.0**-40)
    return np.minimum(np.nan_to_num(total, nan=2.0, posinf=2.0), 2.0)


def _delta_above(delta: Any) -> float:
    """A float at least the claim's delta as certification reads it (a float claim is widened)."""
    return _float_above(effective_claim(delta)) * (1 + 2.0**-40)


def _exp_above(epsilon: Any) -> float:
    """A float at least ``e^eps`` for the claim's epsilon as certification reads it (inf on overflow)."""
    import mpmath

    old = mpmath.iv.prec
    try:
        mpmath.iv.prec = 80
        high = mpmath.iv.exp(to_interval(effective_claim(epsilon), 22)).b
        value = float(mpmath.mpf(high))
    except OverflowError:
        return math.inf
    finally:
        mpmath.iv.prec = old
    return math.nextafter(value, math.inf) * (1 + 2.0**-40) if math.isfinite(value) else math.inf


def undecided_reason(unexplored: float, needed: float, delta: Any, *, pure: bool) -> str:
    """Why a claim on rows with unexplored mass is undecided, and the ways on (for a ``pure`` claim, declaring
    the outputs too)."""
    claim = f"claim delta >= {_rounded_up(needed):.6g}" if needed <= 1 else "a larger epsilon"
    return (
        f"the outputs leave up to {unexplored:.3g} of their mass unexplored (on any outcome); with it the claim "
        f"(delta={delta}) is neither proved (the explored divergence plus the unexplored mass reaches "
        f"{needed:.6g} on some pair) nor refuted (no pair exceeds delta by more than e^eps times the unexplored "
        f"mass of its neighbour). Explore further: from_sampler(..., tail=smaller), or {claim}"
        + ("; or, knowing every output the sampler can return, declare them: from_sampler(..., tail=m, outputs=[...])."
           if pure else ".")
    )


def _rounded_up(value: float) -> float:
    """``value`` rounded up to 6 significant digits (a delta that then holds)."""
    if value <= 0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(value)) - 5)
    return math.ceil(value * (1 + 1e-9) / scale) * scale
