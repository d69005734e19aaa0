"""The sweep's worker kernel: one shard of chunk-aligned pairs, its partial worst case.

Run by :func:`dpverify.verdict.engine.sweep` on every executor (serially too), so every executor computes the
same floats in the same order; the engine merges the shards and certifies.

With a claim (``claim_delta``) a shard also returns what the engine needs for exact figures
(:func:`dpverify.verdict.engine.decide`, "Exact figures"): each candidate's float hockey-stick value and
directed pure loss, the largest value over the directed pairs that pass the loss filter, and the
non-candidate directed pairs within twice the sweep's margins of the shard's largest value and loss
(the ``FIGURE_CAP + 1`` largest of each: :class:`_Near`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpverify.finite.pair_sources import ArrayPairs

__all__ = ["sweep_shard", "CHUNK", "FIGURE_CAP"]

#: Pairs per chunk (the engine's shards are whole chunks).
CHUNK = 1 << 16
_CHUNK = CHUNK
#: Near-largest non-candidate directed pairs an exact figure may need (more: the float figure).
FIGURE_CAP = 1 << 12


class _Near:
    """The largest ``FIGURE_CAP + 1`` directed pairs ``(first, second, value)`` by value, pruned to
    within ``width`` of the largest value seen. Whatever the sharding, the merged shards then hold
    every pair within ``width`` of the overall largest value, or more than ``FIGURE_CAP`` of them
    (if a shard's kept pairs are all that close, there are more than the cap; if one is not, every
    closer pair of that shard is kept): the engine's count is the same on every executor. Once
    ``FIGURE_CAP + 1`` pairs are kept, a pair no larger than the smallest of them (``floor``) is not
    taken: it could not be among the largest, and ties there do not change that count."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.floor = -math.inf
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = 0

    def add(self, first: np.ndarray, second: np.ndarray, value: np.ndarray, others: np.ndarray, top: float) -> None:
        """Take the pairs of ``others`` (a mask) that may be among the largest."""
        keep = np.flatnonzero(others & (value >= top - self.width) & (value > self.floor))
        if keep.size:
            self.parts.append((np.asarray(first)[keep], np.asarray(second)[keep], value[keep]))
            self.count += keep.size
            if self.count > 4 * (FIGURE_CAP + 1):
                self.result(top)

    def result(self, top: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            nothing = np.zeros(0, dtype=np.int64)
            return nothing, nothing, np.zeros(0)
        first, second, value = (np.concatenate(column) for column in zip(*self.parts))
        keep = value >= top - self.width
        first, second, value = first[keep], second[keep], value[keep]
        if value.size > FIGURE_CAP:
            if value.size > FIGURE_CAP + 1:
                largest = np.argpartition(-value, FIGURE_CAP)[: FIGURE_CAP + 1]
                first, second, value = first[largest], second[largest], value[largest]
            self.floor = float(value.min())
        self.parts, self.count = [(first, second, value)], value.size
        return first, second, value


def sweep_shard(task: tuple[int, int], shared: Any) -> tuple:
    """The sweep over pairs ``task[0] .. task[1] - 1`` (chunk-aligned): the shard's partial worst
    case ``(eps, eps pair, forward, delta, delta pair, forward, stability, candidate arrays,
    figures)``; ``figures`` is None without a claim, else ``(largest value over the pairs passing the
    loss filter, near-largest non-candidate values, near-largest non-candidate losses)``."""
    matrix, logs, source = shared["matrix"], shared["logs"], shared["source"]
    if source is None:
        source = ArrayPairs(shared["left"], shared["right"])
    symmetric, epsilon, factor = shared["symmetric"], shared["epsilon"], shared["factor"]
    claim_delta, with_delta, with_stability = shared["claim_delta"], shared["with_delta"], shared["with_stability"]
    delta_margin, epsilon_margin = shared["delta_margin"], shared["epsilon_margin"]
    pair_delta = shared.arrays.get("pair_delta")
    figures = claim_delta is not None and with_delta
    best_eps, eps_at, eps_forward = -math.inf, -1, True
    best_delta, delta_at, delta_forward = -math.inf, -1, True
    passing_best = -math.inf
    near_values, near_losses = _Near(2 * delta_margin), _Near(2 * epsilon_margin)
    stability = 0.0
    found: list[tuple[np.ndarray, ...]] = []
    for start in range(task[0], task[1], _CHUNK):
        li, ri = source.chunk(start, min(start + _CHUNK, task[1]))
        a, b = matrix[li], matrix[ri]
        with np.errstate(invalid="ignore"):
            difference = logs[li] - logs[ri]  # +inf where P > 0 = Q, -inf where P = 0 < Q, nan where both 0
        forward = np.fmax.reduce(difference, axis=1, initial=-np.inf)  # fmax/fmin skip the nans
        backward = -np.fmin.reduce(difference, axis=1, initial=np.inf) if symmetric else None
        rows = forward if backward is None else np.maximum(forward, backward)
        i = int(np.argmax(rows)) if rows.size else 0
        if rows.size and rows[i] > best_eps:
            best_eps, eps_at, eps_forward = float(rows[i]), start + i, bool(forward[i] >= rows[i])
        if with_stability and a.size:
            stability = max(stability, float(np.abs(a - b).max()))
        if not with_delta:
            continue
        directions = [(a, b, forward, li, ri, True)]
        if symmetric:
            directions.append((b, a, backward, ri, li, False))
        for p, q, eps_rows, first, second, is_forward in directions:
            if math.isfinite(factor):
                values = np.maximum(p - factor * q, 0.0).sum(axis=1)
            else:  # e^eps overflowed: only outcomes with Q = 0 can exceed it
                values = np.where(q > 0, 0.0, p).sum(axis=1)
            j = int(np.argmax(values)) if values.size else 0
            if values.size and values[j] > best_delta:
                best_delta, delta_at, delta_forward = float(values[j]), start + j, is_forward
            if claim_delta is not None:
                bound = claim_delta if pair_delta is None else np.asarray(pair_delta[start : start + li.size])
                passing = eps_rows > epsilon - epsilon_margin
                selected = passing & (values > bound - delta_margin)
                near = np.flatnonzero(selected)
                if near.size:
                    slack = values[near] - (bound if np.ndim(bound) == 0 else bound[near])
                    found.append((slack, np.asarray(first[near]), np.asarray(second[near]), start + near,
                                  values[near], eps_rows[near]))
                if figures:
                    passing_best = max(passing_best, float(np.max(values, where=passing, initial=-np.inf)))
                    others = ~selected
                    near_values.add(first, second, values, others & passing, passing_best)
                    near_losses.add(first, second, eps_rows, others, best_eps)
    extra = (passing_best, near_values.result(passing_best), near_losses.result(best_eps)) if figures else None
    return best_eps, eps_at, eps_forward, best_delta, delta_at, delta_forward, stability, found, extra
