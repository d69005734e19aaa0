"""The sweep's worker kernel: one shard of chunk-aligned pairs, its partial worst case.

Run by :func:`dpverify.engine.sweep` on every executor (serially too), so every executor computes the
same floats in the same order; the engine merges the shards and certifies.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpverify.pair_sources import ArrayPairs

__all__ = ["sweep_shard", "CHUNK"]

#: Pairs per chunk (the engine's shards are whole chunks).
CHUNK = 1 << 16
_CHUNK = CHUNK


def sweep_shard(task: tuple[int, int], shared: Any) -> tuple:
    """The sweep over pairs ``task[0] .. task[1] - 1`` (chunk-aligned): the shard's partial worst
    case ``(eps, eps pair, forward, delta, delta pair, forward, stability, candidate arrays)``."""
    matrix, logs, source = shared["matrix"], shared["logs"], shared["source"]
    if source is None:
        source = ArrayPairs(shared["left"], shared["right"])
    symmetric, epsilon, factor = shared["symmetric"], shared["epsilon"], shared["factor"]
    claim_delta, with_delta, with_stability = shared["claim_delta"], shared["with_delta"], shared["with_stability"]
    delta_margin, epsilon_margin = shared["delta_margin"], shared["epsilon_margin"]
    pair_delta = shared.arrays.get("pair_delta")
    best_eps, eps_at, eps_forward = -math.inf, -1, True
    best_delta, delta_at, delta_forward = -math.inf, -1, True
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
                near = np.flatnonzero((values > bound - delta_margin) & (eps_rows > epsilon - epsilon_margin))
                if near.size:
                    slack = values[near] - (bound if np.ndim(bound) == 0 else bound[near])
                    found.append((slack, np.asarray(first[near]), np.asarray(second[near]), start + near))
    return best_eps, eps_at, eps_forward, best_delta, delta_at, delta_forward, stability, found
