"""The engine's exact figures: eps* and delta* replaced by exact values where the floats' near-largest
pairs can be settled exactly (:mod:`dpverify.verdict.engine`, "Exact figures")."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpverify.verdict._certify import RowClasses, exact_hockey_stick, exact_log_ratio
from dpverify.verdict.privacy_loss import exp_epsilon

__all__ = ["exact_figures"]

_UNIT = 2.0**-53


#: Rows an exact figure may fetch beyond those certification fetched, and row pairs it may evaluate.
_FIGURE_ROWS = 256
_FIGURE_GROUPS = 1024


def exact_figures(
    pairs: Any, result: Any, classes: RowClasses, errors: np.ndarray, epsilon: Any
) -> tuple[float, float]:
    """``(epsilon_star, delta_star)``: the sweep's float figures, replaced by exact ones where the
    module docstring of :mod:`dpverify.verdict.engine`, "Exact figures", allows (``pairs``: its
    ``RowPairs``; ``result``: its ``Sweep``)."""
    epsilon_star, delta_star = result.epsilon_star, result.delta_star
    figures, candidates = result.figures, result.candidates
    if figures is None:
        return epsilon_star, delta_star
    width = 2 * figures.epsilon_margin
    near = _near(candidates.first, candidates.second, candidates.loss, figures.near_losses, epsilon_star - width)
    bounds = _exact_max(near, errors, classes, exact_log_ratio)
    if bounds is not None and float(bounds[0]) == float(bounds[1]):
        exact = max(float(bounds[1]), 0.0) + 0.0
        if abs(exact - epsilon_star) <= width or exact == epsilon_star:  # else the sweep's premise failed
            epsilon_star = exact
    if pairs.pair_delta is not None:
        return epsilon_star, delta_star
    factor = exp_epsilon(epsilon)
    slop = 16 * _UNIT * (abs(float(epsilon)) + 1) * factor  # the float e^eps against the claim's exact one
    width = 2 * figures.delta_margin + slop
    if figures.passing_best == -math.inf:
        # No directed pair passes the loss filter: every exact value is 0 (the premise of the sweep).
        bounds = (0, 0)
    else:
        near = _near(candidates.first, candidates.second, candidates.value, figures.near_values,
                     figures.passing_best - width)
        bounds = _exact_max(near, errors, classes, lambda p, q: exact_hockey_stick(p, q, epsilon))
    if bounds is None or float(bounds[0]) != float(bounds[1]) or not abs(float(bounds[1]) - delta_star) <= width:
        return epsilon_star, delta_star
    if _is_float_claim(epsilon) and bounds[1] != 0:
        # A float claim stands for any real within its rounding: only an exact 0 (every near-maximal
        # pair an exact tie at the claim as certified) replaces the float figure.
        return epsilon_star, delta_star
    return epsilon_star, float(bounds[1]) + 0.0


def _near(first: np.ndarray, second: np.ndarray, value: np.ndarray, others: Any, threshold: float) -> Any:
    """The directed pairs (rows) whose float figure is at least ``threshold``: candidates and the
    sweep's near-largest non-candidates; None when the latter are more than the sweep kept."""
    from dpverify.verdict._sweep import FIGURE_CAP

    kept = np.flatnonzero(value >= threshold)
    o_first, o_second, o_value = others
    extra = np.flatnonzero(o_value >= threshold)
    if extra.size > FIGURE_CAP:
        return None
    return np.concatenate([first[kept], o_first[extra]]), np.concatenate([second[kept], o_second[extra]])


def _exact_max(near: Any, errors: np.ndarray, classes: RowClasses, evaluate: Callable) -> Any:
    """``(low, high)`` bounds of the largest exact figure over the row pairs ``near``, or None: a
    row is a float row, more than :data:`_FIGURE_ROWS` rows or :data:`_FIGURE_GROUPS` row pairs
    would be needed, or some pair's figure cannot be settled."""
    if near is None or not near[0].size:
        return None
    first, second = near
    if errors[first].any() or errors[second].any():
        return None
    both = np.concatenate([first, second])
    ids = classes.of(both, budget=_FIGURE_ROWS)
    if ids is None:
        return None
    classes_seen = len(classes.contents)
    if classes_seen <= 2048:  # distinct pairs of classes in one pass (no sort of a million keys)
        present = np.zeros(classes_seen * classes_seen, dtype=bool)
        present[ids[: first.size] * classes_seen + ids[first.size :]] = True
        groups = [divmod(key, classes_seen) for key in np.flatnonzero(present).tolist()]
    else:
        groups = [divmod(key, 1 << 32) for key in np.unique((ids[: first.size] << 32) | ids[first.size :]).tolist()]
    if len(groups) > _FIGURE_GROUPS:
        return None
    low, high = None, None
    for i, j in groups:
        bounds = evaluate(classes.contents[i], classes.contents[j])
        if bounds is None:
            return None
        low = bounds[0] if low is None or bounds[0] > low else low
        high = bounds[1] if high is None or bounds[1] > high else high
    return low, high


def _is_float_claim(value: Any) -> bool:
    return isinstance(value, float) or type(value).__name__ == "Float"
