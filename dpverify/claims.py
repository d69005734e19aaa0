"""Worst-case loss over pairs of output rows, and verdicts against explicit-constant claims.

The audit computes mechanisms' output distributions as rows of a float64 matrix (one row per
dataset, or per conditioned run such as ``A_Relabel(t, w)``) and checks claims over index pairs of
rows. Verdicts use the same error model as :func:`dpverify.verify`: the fast mechanisms compute
every probability by sums, products and quotients of positive float64 terms, so each carries a
relative error below ``1e-12``; a pair is decided in float64 when its hockey-stick value is more
than ``margin = 1e-9 * (1 + e^eps)`` away from the claimed delta. A pair inside the margin is not
decided here: the verdict is then ``None`` ("within rounding of the claim"), never True.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PairwiseWorst", "pairwise_worst", "worst_over_pairs", "log_rows", "margin_for"]

_CHUNK = 1 << 16


def margin_for(epsilon: float) -> float:
    """The float64 decision margin for hockey-stick values at ``epsilon``."""
    return 1e-9 * (1.0 + math.exp(epsilon))


@dataclass(frozen=True)
class PairwiseWorst:
    """Worst case over a set of (ordered or unordered) pairs of probability rows.

    Attributes:
        epsilon_star: max pure loss ``ln(P(o)/Q(o))`` (inf when P > 0 = Q).
        epsilon_pair: index of the pair attaining it.
        delta_star: max hockey-stick ``sum_o max(0, P - e^eps Q)`` at the queried epsilon.
        delta_pair: index of the pair attaining it; ``delta_forward`` tells its direction.
    """

    epsilon_star: float
    epsilon_pair: int
    epsilon_forward: bool
    delta_star: float
    delta_pair: int
    delta_forward: bool


def pairwise_worst(
    left: np.ndarray, right: np.ndarray, *, epsilon: float, symmetric: bool = True
) -> PairwiseWorst:
    """Worst pure loss and hockey-stick value over row pairs ``(left[i], right[i])``.

    With ``symmetric`` both directions count (unordered neighbours); otherwise only
    ``left -> right`` (a directed proof step such as C3b).
    """
    count = left.shape[0]
    index = np.arange(count)
    return worst_over_pairs(np.vstack([left, right]), index, index + count, epsilon=epsilon, symmetric=symmetric)


def log_rows(matrix: np.ndarray) -> np.ndarray:
    """``ln`` of a probability matrix, ``-inf`` at zeros (computed once, gathered per pair)."""
    with np.errstate(divide="ignore"):
        return np.log(matrix)


def worst_over_pairs(
    matrix: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    *,
    epsilon: float,
    symmetric: bool = True,
    logs: np.ndarray | None = None,
    with_delta: bool = True,
) -> PairwiseWorst:
    """:func:`pairwise_worst` over index pairs into ``matrix`` (rows = distributions).

    Logarithms are taken once per row (pass ``logs`` to reuse them across calls); with
    ``with_delta=False`` only eps* is computed (``delta_star`` is then reported as 0).
    """
    logs = log_rows(matrix) if logs is None else logs
    factor = math.exp(epsilon)
    best_eps, best_eps_at, eps_forward = -math.inf, -1, True
    best_delta, best_delta_at, forward_best = -math.inf, -1, True
    for start in range(0, left.shape[0], _CHUNK):
        li, ri = left[start : start + _CHUNK], right[start : start + _CHUNK]
        la, lb = logs[li], logs[ri]
        with np.errstate(invalid="ignore"):
            difference = la - lb  # +inf where P > 0 = Q; nan where both are 0
        difference[np.isnan(difference)] = -np.inf
        forward = difference.max(axis=1)
        eps_rows = forward
        if symmetric:
            backward = (-difference).max(axis=1)
            # -(-inf) = +inf where P = 0 < Q is exactly the backward loss; both-zero entries are
            # -inf in difference, so +inf in -difference: exclude them.
            both_zero = np.isneginf(la) & np.isneginf(lb)
            if both_zero.any():
                negated = -difference
                negated[both_zero] = -np.inf
                backward = negated.max(axis=1)
            eps_rows = np.maximum(forward, backward)
        i = int(np.argmax(eps_rows))
        if eps_rows[i] > best_eps:
            best_eps, best_eps_at = float(eps_rows[i]), start + i
            eps_forward = bool(forward[i] >= eps_rows[i])
        if not with_delta:
            continue
        a, b = matrix[li], matrix[ri]
        d_forward = np.maximum(a - factor * b, 0).sum(axis=1)
        i = int(np.argmax(d_forward))
        if d_forward[i] > best_delta:
            best_delta, best_delta_at, forward_best = float(d_forward[i]), start + i, True
        if symmetric:
            d_backward = np.maximum(b - factor * a, 0).sum(axis=1)
            i = int(np.argmax(d_backward))
            if d_backward[i] > best_delta:
                best_delta, best_delta_at, forward_best = float(d_backward[i]), start + i, False
    return PairwiseWorst(max(best_eps, 0.0), best_eps_at, eps_forward, max(best_delta, 0.0), best_delta_at, forward_best)


def verdict(worst: PairwiseWorst, *, epsilon: float, delta: float) -> bool | None:
    """True if the claim (epsilon, delta) clearly holds, False if clearly violated, None inside the
    float margin. ``worst.delta_star`` must have been computed at ``epsilon``. Pure claims
    (delta = 0) are decided on eps* with margin 1e-9, which also covers rounding in ln."""
    if delta == 0:
        if worst.epsilon_star <= epsilon - 1e-9:
            return True
        if worst.epsilon_star > epsilon + 1e-9:
            return False
        return None
    margin = margin_for(epsilon)
    if worst.delta_star <= delta - margin:
        return True
    if worst.delta_star > delta + margin:
        return False
    return None


__all__ += ["verdict"]
