"""The proof steps of Lemma 15 (C3a, C3b) and the privacy profile of A_Agnostic, sharded over an executor.

Every figure is a maximum, so the shards may finish in any order: the figures are the same on every
executor (:mod:`dpverify.parallel.executors`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpverify.finite.multisets import table as multiset_table
from dpverify.verdict.privacy_loss import exp_epsilon

__all__ = ["privacy_profile", "proof_step_plan", "proof_step_slack", "start_proof_step_slack"]

LN_4E2 = math.log(4 * math.e**2)

#: Values per array in one C3b block (whats x outcomes): the block's dozen arrays fit in a core's cache.
_WHAT_BLOCK = 1 << 14


def privacy_profile(probs: np.ndarray, pairs: Any, epsilon_star: float, points: int = 9, executor: Any = None) -> list[dict]:
    """The worst-case delta(eps) over all pairs at ``points`` values of eps in [0, eps*]: one pass,
    each chunk's rows gathered once for every eps, sharded over ``executor`` (maxima: the same).
    ``pairs`` is a pair source (:mod:`dpverify.finite.pair_sources`), read chunk by chunk.

    The rows are read outcome-major (``probs.T``, one contiguous row of pairs per outcome), so each
    eps is a few whole-array operations and the sum over outcomes is taken in outcome order: 4-5x
    faster than row-major ``sum(axis=1)`` (at K < 8, where numpy also sums in order, the same bits)."""
    from dpverify.parallel.executors import Shared, open_executor, shard_ranges

    top = epsilon_star if math.isfinite(epsilon_star) and epsilon_star > 0 else 1.0
    grid = [top * i / (points - 1) for i in range(points)]
    chunk = 1 << 16
    columns = np.ascontiguousarray(np.asarray(probs, dtype=float).T)
    columns.setflags(write=False)
    with open_executor(executor) as runner:
        tasks = shard_ranges(len(pairs), runner.shards(), chunk)
        shared = Shared({"columns": columns}, {"pairs": pairs, "factors": [exp_epsilon(e) for e in grid]})
        parts = runner.map(_profile_block, tasks, shared)
    worst = [max([0.0, *(part[i] for part in parts)]) for i in range(points)]
    return [{"epsilon": e, "delta": d} for e, d in zip(grid, worst)]


def _profile_block(task: tuple[int, int], shared: Any) -> list[float]:
    columns, pairs, factors = shared["columns"], shared["pairs"], shared["factors"]
    worst = [0.0] * len(factors)
    for start in range(task[0], task[1], 1 << 16):
        left, right = pairs.chunk(start, min(start + (1 << 16), task[1]))
        if not left.size:
            continue
        p, q = columns[:, left], columns[:, right]  # (K, pairs)
        scratch = np.empty_like(p)
        for i, f in enumerate(factors):
            for a, b in ((p, q), (q, p)):
                np.multiply(b, f, out=scratch)
                np.subtract(a, scratch, out=scratch)
                np.maximum(scratch, 0.0, out=scratch)
                total = scratch[0].copy()
                for row in scratch[1:]:
                    total += row
                worst[i] = max(worst[i], float(total.max()))
    return worst


def proof_step_slack(tables, epsilon: float, delta: float, executor: Any = None) -> dict[str, float]:
    """Worst slack of C3a (p1(I) <= e^eps p2(I), changed index outside I) and C3b
    (p1(I) <= 4e^2 p2(I') + 4 e delta, changed index in I, I' = I \\ {1} ∪ {i}); C3b is sharded by the multisets
    ``that`` over ``executor`` (:mod:`dpverify.parallel.executors`): maxima, the same on every executor."""
    from dpverify.parallel.executors import open_executor

    with open_executor(executor) as runner:
        return start_proof_step_slack(tables, epsilon, delta, runner)()


def proof_step_plan(tables) -> tuple[np.ndarray, np.ndarray]:
    """What C3a/C3b read besides the outputs, from the tables' layout alone (``universe``,
    ``t_table``, ``w_table``, ``of_t``: :func:`dpverify.mechanisms.relabeling.start_relabel_tables` gives it
    before the outputs exist): ``(w_rows, combos)``, see :func:`start_proof_step_slack`."""
    # C3b: t1 = that + a, w1 = what + b ; t2 = that + b, w2 = what + c (c != a).
    of_t = tables.of_t
    z = len(tables.universe)
    k = int(tables.t_table.counts[0].sum())
    size_w = int(tables.w_table.counts[0].sum())
    that_table = multiset_table(z, k - 1)
    what_counts = multiset_table(z, size_w - 1).counts
    eye = np.eye(z, dtype=np.int64)
    w_rows = np.stack([tables.w_table.index(what_counts + eye[c]) for c in range(z)])  # (c, what)
    t_rows = of_t[np.stack([tables.t_table.index(that[None, :] + eye) for that in that_table.counts])]  # (that, a)
    # A C3b term depends on (that, a, b) only through (o1, o2, a, b): o1 = output of that + e_a, o2 = of
    # that + e_b. Far fewer of those are distinct (640 of 2,304 at k = 3, 1,280 of 7,680 at k = 4).
    that, a, b = np.meshgrid(np.arange(len(t_rows)), np.arange(z), np.arange(z), indexing="ij")
    combos = np.unique(np.stack([t_rows[that, b], t_rows[that, a], a, b], axis=-1).reshape(-1, 4), axis=0)
    return w_rows, combos


def start_proof_step_slack(
    tables, epsilon: float, delta: float, runner: Any, plan: tuple[np.ndarray, np.ndarray] | None = None,
) -> Callable[[], dict[str, float]]:
    """:func:`proof_step_slack` with its blocks queued on ``runner``: call the returned function
    for the figures (the driver may queue or compute other work first). ``plan`` is
    :func:`proof_step_plan`'s, if the driver made it while the tables were being computed."""
    from dpverify.parallel.executors import Shared, shard_ranges

    # C3a (same t, neighbouring w) and C3b, sharded by the multisets that (see _c3b_block).
    outputs = tables.distinct[1]  # index sets sharing one output array (same point counts) share its logs
    logs = tables.distinct_logs
    w_rows, combos = proof_step_plan(tables) if plan is None else plan
    groups = np.flatnonzero(np.r_[True, combos[1:, 0] != combos[:-1, 0], True])  # runs of one o2
    # Groups differ in cost (the delta pass runs only near ln 4e^2): small tasks keep both workers busy.
    tasks = [(int(groups[lo]), int(groups[hi])) for lo, hi in shard_ranges(len(groups) - 1, 8 * runner.workers if runner.parallel else 1)]
    shared = Shared({"logs": logs, "outputs": outputs, "w_rows": w_rows, "combos": combos}, {})
    pending = runner.submit(_c3b_block, tasks, shared)

    def finish() -> dict[str, float]:
        parts = pending.results()
        c3a = max([0.0, *(part[0] for part in parts)])
        c3b_eps = max([0.0, *(part[1] for part in parts)])
        c3b_delta = max([0.0, *(part[2] for part in parts)])
        return {
            "C3a_worst_epsilon": c3a,
            "C3a_slack": epsilon - c3a,
            "C3b_worst_epsilon": c3b_eps,
            "C3b_worst_delta_at_ln4e2": c3b_delta,
            "C3b_slack": 4 * math.e * delta - c3b_delta,
            "C3b_epsilon_slack": LN_4E2 - c3b_eps,
        }

    return finish


def _c3b_block(task: tuple[int, int], shared: Any) -> tuple[float, float, float]:
    """C3a and C3b over the combinations ``task[0] .. task[1] - 1`` (whole runs of one ``o2``): (C3a
    worst eps, C3b worst eps, C3b worst delta at ln 4e^2).

    A combination ``(o2, o1, a, b)`` stands for every ``that`` with ``o1`` the output of
    ``t1 = that + e_a`` and ``o2`` that of ``t2 = that + e_b``. With ``G2[c] = ln p(o2, w = what + e_c)``
    (per ``what`` and output): C3b (w1 = what + e_b, w2 = what + e_c, c != a) is
    ``max ln p(o1, what + e_b) - min_{c != a} G2[c]``, the minimum without ``c = a`` read from prefix and
    suffix minima over c; C3a (same t, w and w' neighbours) is ``max_c G2[c] - min_c G2[c]`` over every
    ``o2`` (every t is some ``that + e_b``). Both are exact in float (``x - min y = max (x - y)``,
    subtraction being monotone); ``-inf - -inf`` (both probabilities 0) is a nan that fmax skips. The
    delta pass (``sum_K max(p1 - 4e^2 p2, 0)``, every ``c != a``) runs only for combinations whose
    eps exceeds ln 4e^2 - 1e-6: below it every term is negative, so the maximum is the same.
    """
    logs, outputs, w_rows = shared["logs"], shared["outputs"], np.asarray(shared["w_rows"])
    combos = np.asarray(shared["combos"][task[0] : task[1]])
    z, whats = w_rows.shape
    factor = 4 * math.e**2
    c3a, c3b_eps, c3b_delta = 0.0, 0.0, 0.0
    block = max(1, _WHAT_BLOCK // max(1, logs.shape[-1]))  # whats per block: a block's arrays stay in cache
    for start in np.flatnonzero(np.r_[True, combos[1:, 0] != combos[:-1, 0]]) if combos.size else ():
        stop = start + 1
        while stop < len(combos) and combos[stop, 0] == combos[start, 0]:
            stop += 1
        o2 = combos[start, 0]
        for low in range(0, whats, block):
            rows = w_rows[:, low : low + block]  # (c, block): w = what + e_c
            second = np.asarray(logs[o2])[rows]  # (c, block, K)
            prefix, suffix = [second[0]], [second[-1]]
            for c in range(1, z):
                prefix.append(np.minimum(prefix[-1], second[c]))
                suffix.append(np.minimum(suffix[-1], second[z - 1 - c]))
            suffix.reverse()
            largest = second[0]
            for c in range(1, z):
                largest = np.maximum(largest, second[c])
            excluded: dict[int, np.ndarray] = {}
            with np.errstate(invalid="ignore"):
                c3a = max(c3a, float(np.fmax.reduce(largest - prefix[-1], axis=None, initial=0.0)))
                for o1, a, b in combos[start:stop, 1:] if z > 1 else ():
                    if a not in excluded:
                        excluded[a] = (suffix[1] if a == 0 else prefix[z - 2] if a == z - 1
                                       else np.minimum(prefix[a - 1], suffix[a + 1]))
                    first = np.asarray(logs[o1])[rows[b]]  # (block, K): t1 = that + e_a, w1 = what + e_b
                    here = float(np.fmax.reduce(first - excluded[a], axis=None, initial=0.0))
                    c3b_eps = max(c3b_eps, here)
                    if here > LN_4E2 - 1e-6:  # otherwise p1 <= 4e^2 p2 in this block: no excess (a shortcut)
                        p1 = np.asarray(outputs[o1])[rows[b]]
                        others = np.array([c for c in range(z) if c != a])
                        p2 = np.asarray(outputs[o2])[rows[others]]  # (c != a, block, K)
                        excess = np.maximum(p1[None] - factor * p2, 0).sum(axis=-1)
                        c3b_delta = max(c3b_delta, float(excess.max()))
    return c3a, c3b_eps, c3b_delta
