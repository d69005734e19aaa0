"""A_Relabel, A_Agnostic and A_Auxiliary of Li–Wang–Ye 2025 (Algorithms 1-3).

Parameters follow the paper: ``T`` is the subsample that is relabeled, ``W`` the rest of the data
(used only through ``err_W``), ``U`` and ``V`` the two halves of ``T`` in A_Auxiliary, ``k`` the
subsample size ``ceil(epsilon * n)``.

A_Relabel(eps, T, W) (Alg. 1): ``H`` = one representative per labeling of ``T_X`` (the rule is a
parameter, default ``first``); score ``q(T∘W, h) = min_{f in C} dis_{T_X}(h, f) + err_W(f)``;
exponential mechanism at ``eps`` with ``Delta = 1/|W|``, i.e. ``P(h) ∝ exp(-eps |W| q / 2)``; output
``T^h`` (T's points, labeled by h). The labels of T are never read, and q depends on h only
through its labels on ``T_X``, so the representative rule does not change A_Relabel's output.
(That is true of the ``"agnostic"`` and ``"bns"`` scores; the ``"full_sample"`` score also reads
h on W's points, so there the rule matters: :func:`relabel_tables` always uses ``first``.)

Baselines (C8) swap the score: ``"bns"`` (Beimel-Nissim-Stemmer 2015: ``err_T(h)``,
``Delta = 1/|T|``, W discarded, the exponential mechanism at the constant privacy
:data:`BNS_PRIVACY` = 1 as Li–Wang–Ye 2025 Sec. 3 describes it, not at eps), ``"full_sample"`` (``err_S(h)``
with its own sensitivity ``Delta = 1/n``) and ``"full_sample_w"`` (``err_S(h)`` with the paper's
``Delta = 1/|W|``, the exponent of A_Relabel: Li–Wang–Ye 2025 Sec. 3 warns that its proof cannot handle this
score, and the per-index-set proof step C3b fails for it from k = 14 on thresholds).

Each mechanism comes as a literal *reference* (ordered datasets, all ``C(n, k)`` index sets) and,
for A_Agnostic, a *fast* exchangeable form over count vectors with hypergeometric weights
(:func:`agnostic_table`); tests assert they agree.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpverify.distribution import Distribution
from dpverify.domains import ConceptClass, labeled_records
from dpverify.errors import InvalidArgument
from dpverify.multisets import MultisetTable, hypergeometric_weights, table
from dpverify.validation import check_choice, exact_number

__all__ = [
    "SCORES",
    "relabel",
    "agnostic_reference",
    "auxiliary",
    "subsample_size",
    "exact_parameter",
    "RelabelTables",
    "relabel_tables",
    "agnostic_table",
]

SCORES = ("agnostic", "bns", "full_sample", "full_sample_w")

#: The constant privacy of the BNS relabeling exponential mechanism (C8a).
BNS_PRIVACY = 1.0


def subsample_size(epsilon: float, n: int) -> int:
    """``k = ceil(epsilon * n)`` (Alg. 2, line 1).

    A float epsilon is read by the one policy of :func:`dpverify.validation.exact_number` (the
    simplest fraction that rounds to it, so ``1/24`` typed as a float gives ``k = 1`` at ``n = 24``,
    not 2 through its binary excess); exact inputs are used as given.
    """
    return math.ceil(exact_parameter(epsilon) * n)


def exact_parameter(value: Any, name: str = "parameter") -> Fraction:
    """A parameter as the exact number it stands for (:func:`dpverify.validation.exact_number`: a
    float is the simplest fraction that rounds to it, ``0.1`` is 1/10); exact ones as given."""
    return exact_number(name, value)


def _check_score(score: str) -> None:
    check_choice("score", score, SCORES, what="relabeling score")


def relabel(
    concept_class: ConceptClass,
    epsilon: float,
    T: Sequence[tuple[int, int]],
    W: Sequence[tuple[int, int]],
    *,
    representative="first",
    score: str = "agnostic",
) -> Distribution:
    """Li–Wang–Ye 2025 Algorithm 1 (A_Relabel), literally: a distribution over relabeled tuples ``T^h``.

    With ``|W| = 0`` the err_W term is 0 and the exponent is 0 (uniform over labelings): the
    convention used by the no-subsampling mutant.
    """
    _check_score(score)
    epsilon = float(epsilon)
    points = [x for x, _ in T]
    H = list(concept_class.labelings(points, representative=representative).values())
    C = concept_class.matrix
    size_t, size_w = len(T), len(W)
    err_w = concept_class.mistakes(W) / size_w if size_w else np.zeros(len(concept_class))
    weights = {}
    for h in H:
        if score == "agnostic":
            dis = np.array([sum(C[h, x] != C[f, x] for x in points) for f in range(len(concept_class))]) / size_t
            exponent = -epsilon * size_w * float(np.min(dis + err_w)) / 2
        elif score == "bns":
            exponent = -BNS_PRIVACY * size_t * (concept_class.mistakes(T)[h] / size_t) / 2
        else:
            err_s = (concept_class.mistakes(T)[h] + concept_class.mistakes(W)[h]) / (size_t + size_w)
            scale = size_t + size_w if score == "full_sample" else size_w  # 1 / Delta
            exponent = -epsilon * scale * err_s / 2
        relabeled = tuple((x, int(C[h, x])) for x in points)
        weights[relabeled] = weights.get(relabeled, 0.0) + math.exp(exponent)
    return Distribution.from_weights(weights)


def agnostic_reference(
    concept_class: ConceptClass,
    epsilon: float,
    S: Sequence[tuple[int, int]],
    learner,
    *,
    k: int | None = None,
    representative="first",
    score: str = "agnostic",
) -> Distribution:
    """Li–Wang–Ye 2025 Algorithm 2 (A_Agnostic), literally: every index set ``I`` of size ``k`` (uniform),
    ``T = S_I`` in index order, ``W`` = the rest, output ``A(A_Relabel(eps, T, W))``."""
    n = len(S)
    k = subsample_size(epsilon, n) if k is None else k
    if not 1 <= k <= n:
        raise InvalidArgument(f"subsample size k must be in [1, n={n}], got k={k}; use epsilon*n >= 1.")
    components = []
    index_sets = list(itertools.combinations(range(n), k))
    for I in index_sets:
        T = tuple(S[i] for i in I)
        W = tuple(S[i] for i in range(n) if i not in I)
        relabeled = relabel(concept_class, epsilon, T, W, representative=representative, score=score)
        components.append((1 / len(index_sets), relabeled.bind(learner)))
    return Distribution.mixture(components)


def auxiliary(
    concept_class: ConceptClass,
    epsilon: float,
    U: Sequence[tuple[int, int]],
    V: Sequence[tuple[int, int]],
    W: Sequence[tuple[int, int]],
    learner,
    *,
    representative="first",
) -> Distribution:
    """Li–Wang–Ye 2025 Algorithm 3 (A_Auxiliary): ``T = U∘V``, ``T^h = A_Relabel(eps, T, W)``, ``hbar`` = the
    concept consistent with ``V^h`` chosen by ``representative`` (from V^h alone), output
    ``A(T^h) ⊕ hbar`` as the tuple of its labels on X (pointwise XOR)."""
    T = tuple(U) + tuple(V)
    C = concept_class.matrix
    size_u = len(U)

    def after_relabel(relabeled: tuple) -> Distribution:
        V_h = relabeled[size_u:]
        labeling = {x: y for x, y in V_h}
        points = sorted(labeling)
        candidates = concept_class.labelings(points, representative=representative)
        hbar = candidates[tuple(labeling[x] for x in points)]
        return learner(relabeled).map(lambda c: tuple(int(C[c, x] != C[hbar, x]) for x in range(concept_class.domain_size)))

    return relabel(concept_class, epsilon, T, W, representative=representative).bind(after_relabel)


@dataclass(frozen=True)
class RelabelTables:
    """``A(A_Relabel(eps, t, w))`` for every sub-multiset ``t`` of size k and rest ``w``.

    Attributes:
        universe: the labeled records ``(x, y)``, in :func:`labeled_records` order.
        t_table, w_table: count-vector tables of sizes k and n - k.
        outputs: ``outputs[i]`` is a ``(len(w_table), K)`` array: row ``j`` is the learner's output
            distribution after relabeling ``t_table[i]`` against ``w_table[j]``. Index sets with the
            same point counts share one array (the same object) when it does not depend on labels.
    """

    universe: tuple
    t_table: MultisetTable
    w_table: MultisetTable
    outputs: list[np.ndarray]

    @functools.cached_property
    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """``(of_t, stacked)``: ``stacked[of_t[i]]`` is ``outputs[i]``, one ``(|W|, K)`` slice per distinct
        array (index sets with the same point counts share one), in order of first appearance;
        computed once and read-only, so every phase that sends it to workers sends the same array."""
        first: dict[int, int] = {}
        of_t = np.array([first.setdefault(id(out), len(first)) for out in self.outputs], dtype=np.int64)
        stacked = np.stack(list({id(out): out for out in self.outputs}.values()))
        of_t.setflags(write=False)
        stacked.setflags(write=False)
        return of_t, stacked

    @functools.cached_property
    def distinct_logs(self) -> np.ndarray:
        """``ln`` of :attr:`distinct`'s stacked outputs (``-inf`` at zeros), read-only."""
        with np.errstate(divide="ignore"):
            logs = np.log(self.distinct[1])
        logs.setflags(write=False)
        return logs


def relabel_tables(
    concept_class: ConceptClass,
    epsilon: float,
    n: int,
    k: int,
    learner,
    *,
    score: str = "agnostic",
) -> RelabelTables:
    """Vectorised A_Relabel followed by ``learner`` over all ``(t, w)`` count vectors."""
    _check_score(score)
    epsilon = float(epsilon)
    d = concept_class.domain_size
    universe = labeled_records(d)
    C = concept_class.matrix
    mistake = concept_class.mistake_matrix()  # (records, concepts)
    t_table, w_table = table(len(universe), k), table(len(universe), n - k)
    size_w = n - k
    # Every score sees w only through its mistake counts per concept (Nw, |C|), and far fewer
    # count rows are distinct than there are w (7,008 of 31,824 at n = 14): compute on the distinct
    # rows, expand by the inverse index (each row's value is the same computation either way).
    err_w, of_w = _distinct_rows(w_table.counts @ mistake, size_w)
    outputs = []
    # With the agnostic score the output depends on t only through its point counts (labels are
    # replaced by the relabeling): one computation per point multiset, shared by every labeling of it.
    by_points: dict[bytes, np.ndarray] = {}
    for t in t_table.counts:
        point_counts = t[0::2] + t[1::2]
        if score == "agnostic" and point_counts.tobytes() in by_points:
            outputs.append(by_points[point_counts.tobytes()])
            continue
        support = np.flatnonzero(point_counts)
        reps = np.array(list(concept_class.labelings(support.tolist()).values()))
        # mistakes[l, f]: records of T^{h_l} that f mislabels = sum_x a_x [h_l(x) != f(x)]
        mistakes = ((C[reps][:, None, :] != C[None, :, :]) * point_counts[None, None, :]).sum(axis=2)
        if score == "agnostic":
            dis_term = mistakes / k
            err_term = err_w / size_w if size_w else np.zeros_like(err_w)
            q = np.min(dis_term[None, :, :] + err_term[:, None, :], axis=2)  # (Nw, labelings)
            logits = -epsilon * size_w * q / 2
        elif score == "bns":
            mistakes_t = t @ mistake  # (|C|,)
            logits = np.broadcast_to(-BNS_PRIVACY * mistakes_t[reps] / 2, (len(err_w), len(reps)))
        else:
            mistakes_t = t @ mistake
            err_s = (mistakes_t[reps][None, :] + err_w[:, reps]) / n
            scale = n if score == "full_sample" else size_w  # 1 / Delta
            logits = -epsilon * scale * err_s / 2
        logits = logits - logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        relabel_probs = weights / weights.sum(axis=1, keepdims=True)
        outputs.append((relabel_probs @ learner.on_labelings(point_counts, reps, mistakes))[of_w])
        if score == "agnostic":
            by_points[point_counts.tobytes()] = outputs[-1]
    return RelabelTables(universe, t_table, w_table, outputs)


def _distinct_rows(counts: np.ndarray, largest: int) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct rows, inverse)`` of a non-negative integer matrix with entries <= ``largest``:
    ``distinct[inverse]`` is ``counts``. Rows are keyed as base-``largest + 1`` numbers when those
    fit in int64 (a 1-d unique: 10x faster than ``np.unique(axis=0)``)."""
    columns = counts.shape[1]
    if counts.shape[0] == 0 or (largest + 1) ** columns >= 2**62:
        distinct, inverse = np.unique(counts, axis=0, return_inverse=True)
        return distinct, inverse.reshape(-1)
    keys = counts.astype(np.int64) @ (largest + 1) ** np.arange(columns, dtype=np.int64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return counts[first], inverse.reshape(-1)


def agnostic_table(tables: RelabelTables, n: int, executor: Any = None) -> tuple[MultisetTable, np.ndarray]:
    """Mix the relabel tables into A_Agnostic's output for every dataset multiset of size n:
    ``P_S = sum_{t ⊆ S} hyp(t; S) * outputs[t][S - t]``.

    Sharded by blocks of dataset multisets ``S`` over ``executor`` (:mod:`dpverify.executors`):
    each row's sum is taken over ``t`` in table order on every executor, so the floats are the same.
    """
    from dpverify.executors import open_executor

    with open_executor(executor) as runner:
        return start_agnostic_table(tables, n, runner)()


def start_agnostic_table(tables: RelabelTables, n: int, runner: Any) -> Callable[[], tuple[MultisetTable, np.ndarray]]:
    """:func:`agnostic_table` with its blocks queued on ``runner`` (a :class:`~dpverify.executors.Runner`):
    call the returned function for the table, after queueing other independent work."""
    from dpverify.executors import Shared, shard_ranges

    s_table = table(len(tables.universe), n)
    of_t, outputs = tables.distinct  # (distinct t, w, K)
    tasks = shard_ranges(len(s_table), 4 * runner.workers if runner.parallel else 1)
    shared = Shared({"outputs": outputs, "of_t": of_t, "s_counts": s_table.counts},
                    {"t_table": tables.t_table, "w_table": tables.w_table})
    pending = runner.submit(_agnostic_block, tasks, shared)

    def finish() -> tuple[MultisetTable, np.ndarray]:
        parts = pending.results()
        return s_table, np.concatenate(parts) if parts else np.zeros((0, outputs.shape[-1]))

    return finish


def _agnostic_block(task: tuple[int, int], shared: Any) -> np.ndarray:
    """``P_S`` for the dataset multisets ``S`` of rows ``task[0] .. task[1] - 1`` (t in table order)."""
    counts = np.asarray(shared["s_counts"][task[0] : task[1]])
    outputs, of_t = shared["outputs"], np.asarray(shared["of_t"])
    t_table, w_table = shared["t_table"], shared["w_table"]
    probs = np.zeros((counts.shape[0], outputs.shape[-1]))
    columns = np.ascontiguousarray(counts.T)  # one contiguous row per record: t's few records are tested alone
    for i, t in enumerate(t_table.counts):
        contains = np.ones(counts.shape[0], dtype=bool)
        for record in np.flatnonzero(t):
            contains &= columns[record] >= t[record]
        inside = np.flatnonzero(contains)
        if not inside.size:
            continue
        w_rows = w_table.index(counts[inside] - t)
        weights = hypergeometric_weights(counts[inside], t)
        probs[inside] += weights[:, None] * np.asarray(outputs[of_t[i]])[w_rows]
    return probs
