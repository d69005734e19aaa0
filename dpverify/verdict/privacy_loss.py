"""Privacy loss between two output distributions P = M(D) and Q = M(D').

Definitions (for finite outcome sets; see Dwork & Roth, *The Algorithmic Foundations of
Differential Privacy*, Def. 2.4, and Balle et al. 2018 for the hockey-stick form):

* pure privacy loss ``eps*(P || Q) = max_o ln(P(o) / Q(o))`` over outcomes with ``P(o) > 0``,
  ``+inf`` when some ``P(o) > 0 = Q(o)``. Over output *sets* the maximum is attained at a single
  outcome, so this is the smallest ``eps`` with ``P(S) <= e^eps Q(S)`` for every ``S``.
* hockey-stick divergence ``delta_P||Q(eps) = sum_o max(0, P(o) - e^eps Q(o)) = max_S P(S) - e^eps Q(S)``,
  attained at ``S = {o : P(o) > e^eps Q(o)}``: the smallest ``delta`` with (eps, delta)-DP for the pair.
* additive stability ``max_o |P(o) - Q(o)|`` (for a binary prediction, ``|P(1) - Q(1)|``).

Symmetric versions (``epsilon_star``, ``delta_for_epsilon``) take the maximum of both directions,
which is what differential privacy asks of an unordered neighbouring pair. Functions here work on
:class:`~dpverify.finite.distribution.Distribution` objects in float64; the checker certifies verdicts
separately (see :mod:`dpverify.verdict._certify`). A distribution with unexplored mass is refused:
these figures need the whole distribution (``dict(d)`` measures its explored part).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.validation import check_delta, check_epsilon  # the checks live in dpverify.validation

#: Values of epsilon at which ``verify(..., profile=True)`` measures the privacy profile (plus eps*
#: and the claimed epsilon).
PROFILE_POINTS = 25


def profile_grid(epsilon_star: float, claimed_epsilon: float, points: int = PROFILE_POINTS) -> list[float]:
    """Where ``profile=True`` measures delta(eps): ``points`` values evenly from 0 to a quarter past
    the larger of eps* and the claimed epsilon (delta is 0 beyond a finite eps*), both included.
    With eps* infinite the curve never reaches 0: the grid goes to twice the claim (at least 1)."""
    claimed = float(claimed_epsilon)
    if math.isfinite(epsilon_star):
        top = 1.25 * max(epsilon_star, claimed)
    else:
        top = max(2 * claimed, 1.0)
    top = top or 1.0  # eps* = claim = 0: a constant mechanism
    grid = {top * i / (points - 1) for i in range(points)}
    grid |= {e for e in (epsilon_star, claimed) if math.isfinite(e)}
    return sorted(grid)

__all__ = [
    "profile_grid",
    "PROFILE_POINTS",
    "epsilon_star",
    "directed_epsilon_star",
    "hockey_stick",
    "delta_for_epsilon",
    "optimal_output_set",
    "additive_stability",
    "PrivacyProfile",
    "to_dp_accounting_pmfs",
]


def _floats(p: Mapping[Any, Any], q: Mapping[Any, Any]) -> tuple[list, np.ndarray, np.ndarray]:
    for d in (p, q):
        _complete(d)
    outcomes = list(dict.fromkeys([*p.keys(), *q.keys()]))
    pv = np.array([float(p.get(o, 0)) for o in outcomes])
    qv = np.array([float(q.get(o, 0)) for o in outcomes])
    return outcomes, pv, qv


def _complete(distribution: Mapping) -> None:
    """Refuse a distribution with unexplored mass: these figures need the whole distribution."""
    rest = getattr(distribution, "unexplored", 0)
    if rest != 0:
        raise InvalidArgument(
            f"this figure needs the whole distribution, and {distribution!r} leaves unexplored={rest} unexplored (it "
            "may fall on any outcome); pass dict(distribution) to measure the explored part only, decide a claim "
            "with dpverify.verify or decide_pair (which account for the unexplored mass), or explore further."
        )


def exp_epsilon(epsilon: Any) -> float:
    """``e^epsilon`` in float64, ``math.inf`` when it overflows (epsilon > ~709.78 is valid)."""
    try:
        return math.exp(float(epsilon))
    except OverflowError:
        return math.inf


def directed_epsilon_star(p: Mapping, q: Mapping) -> float:
    """``max_o ln(P(o)/Q(o))`` over ``P(o) > 0``; ``math.inf`` when some ``P(o) > 0 = Q(o)``."""
    _, pv, qv = _floats(p, q)
    positive = pv > 0
    if np.any(positive & (qv == 0)):
        return math.inf
    if not np.any(positive):
        return 0.0
    return float(np.max(np.log(pv[positive]) - np.log(qv[positive])))


def epsilon_star(p: Mapping, q: Mapping) -> float:
    """Symmetric pure privacy loss: the larger of both directed values."""
    return max(directed_epsilon_star(p, q), directed_epsilon_star(q, p))


def hockey_stick(p: Mapping, q: Mapping, epsilon: float) -> float:
    """Directed hockey-stick divergence ``sum_o max(0, P(o) - e^eps Q(o))``."""
    check_epsilon(epsilon)
    _, pv, qv = _floats(p, q)
    scaled = np.multiply(exp_epsilon(epsilon), qv, out=np.zeros_like(qv), where=qv > 0)
    return float(np.sum(np.maximum(pv - scaled, 0.0)))


def delta_for_epsilon(p: Mapping, q: Mapping, epsilon: float) -> float:
    """Symmetric hockey-stick divergence: the smallest delta for (epsilon, delta) on this pair."""
    return max(hockey_stick(p, q, epsilon), hockey_stick(q, p, epsilon))


def optimal_output_set(p: Mapping, q: Mapping, epsilon: float) -> frozenset:
    """The output set ``{o : P(o) > e^eps Q(o)}`` that attains the directed hockey-stick value."""
    factor = exp_epsilon(epsilon)
    outcomes, pv, qv = _floats(p, q)
    return frozenset(o for o, a, b in zip(outcomes, pv, qv) if a > (factor * b if b > 0 else 0.0))


def additive_stability(p: Mapping, q: Mapping) -> float:
    """``max_o |P(o) - Q(o)|``; for a binary prediction this is ``|P(1) - Q(1)|``."""
    _, pv, qv = _floats(p, q)
    return float(np.max(np.abs(pv - qv)))


@dataclass(frozen=True)
class PrivacyProfile:
    """The curve ``eps -> delta(eps)`` of one ordered pair, exactly (piecewise in ``e^eps``).

    Attributes:
        losses: finite privacy-loss values ``ln(P(o)/Q(o))`` in increasing order.
        p_masses, q_masses: ``P(o)``, ``Q(o)`` of the outcome behind each loss value.
        infinity_mass: total ``P`` on outcomes with ``Q(o) = 0`` (loss ``+inf``); it is a field
            of its own, never an ``inf`` key.
    """

    losses: tuple[float, ...]
    p_masses: tuple[float, ...]
    q_masses: tuple[float, ...]
    infinity_mass: float

    @classmethod
    def from_distributions(cls, p: Mapping, q: Mapping) -> PrivacyProfile:
        _, pv, qv = _floats(p, q)
        finite = (pv > 0) & (qv > 0)
        infinity = float(np.sum(pv[(pv > 0) & (qv == 0)]))
        losses = np.log(pv[finite]) - np.log(qv[finite])
        order = np.argsort(losses, kind="stable")
        return cls(
            tuple(losses[order].tolist()),
            tuple(pv[finite][order].tolist()),
            tuple(qv[finite][order].tolist()),
            infinity,
        )

    def delta_for_epsilon(self, epsilon: float) -> float:
        """``delta(eps) = infinity_mass + sum_{loss > eps} (P - e^eps Q)``; non-increasing in eps."""
        check_epsilon(epsilon)
        start = bisect.bisect_right(self.losses, float(epsilon))
        factor = exp_epsilon(epsilon)
        tail = math.fsum(
            max(0.0, a - factor * b) for a, b in zip(self.p_masses[start:], self.q_masses[start:])
        )
        return self.infinity_mass + tail

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest ``eps >= 0`` with ``delta(eps) <= delta`` (``math.inf`` if none), by bisection."""
        check_delta(delta)
        if self.infinity_mass > delta:
            return math.inf
        if self.delta_for_epsilon(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, max(self.losses)  # delta(max loss) = infinity_mass <= delta
        for _ in range(200):
            mid = (lo + hi) / 2
            if self.delta_for_epsilon(mid) <= delta:
                hi = mid
            else:
                lo = mid
        return hi


def to_dp_accounting_pmfs(p: Mapping, q: Mapping) -> dict[str, dict[Hashable, float]]:
    """Export a pair for ``dp_accounting``'s ``from_two_probability_mass_functions``.

    Returns keyword arguments ``{"log_probability_mass_function_upper": {o: ln P(o)},
    "log_probability_mass_function_lower": {o: ln Q(o)}}``, so that the privacy loss dp_accounting
    computes is ``ln(P(o)/Q(o))``. Outcomes of zero probability are left out (dp_accounting reads
    a missing key as probability 0). dp_accounting itself is optional:
    ``dp_accounting.pld.privacy_loss_distribution.from_two_probability_mass_functions(**pmfs)``.
    """
    _complete(p)
    _complete(q)
    return {
        "log_probability_mass_function_upper": {o: math.log(float(v)) for o, v in p.items() if v > 0},
        "log_probability_mass_function_lower": {o: math.log(float(v)) for o, v in q.items() if v > 0},
    }
