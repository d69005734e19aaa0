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

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.multisets import MultisetTable, hypergeometric_weights, table
from dpverify.finite.records import ConceptClass, labeled_records
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
    "start_relabel_tables",
    "agnostic_table",
]

SCORES = ("agnostic", "bns", "full_sample", "full_sample_w")

#: The constant privacy of the BNS relabeling exponential mechanism (C8a).
BNS_PRIVACY = 1.0


def subsample_size(epsilon: float | Fraction, n: int) -> int:
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
    epsilon: float | Fraction,
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
    weights: dict[tuple[tuple[int, int], ...], float] = {}
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
    epsilon: float | Fraction,
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
    epsilon: float | Fraction,
    U: Sequence[tuple[int, int]],
    V: Sequence[tuple[int, int]],
    W: Sequence[tuple[int, int]],
    learner,
    *,
    representative="first",
    memo: dict | None = None,
) -> Distribution:
    """Li–Wang–Ye 2025 Algorithm 3 (A_Auxiliary): ``T = U∘V``, ``T^h = A_Relabel(eps, T, W)``, ``hbar`` = the
    concept consistent with ``V^h`` chosen by ``representative`` (from V^h alone), output
    ``A(T^h) ⊕ hbar`` as the tuple of its labels on X (pointwise XOR).

    ``memo``: a dict kept across calls with the same ``concept_class``, ``learner`` and
    ``representative``, holding ``A(T^h) ⊕ hbar`` per ``(|U|, T^h)`` (C4's audit relabels 4,536
    ``(U, V, W)`` into a few dozen distinct ``T^h``)."""
    T = tuple(U) + tuple(V)
    C = concept_class.matrix
    size_u = len(U)

    def after_relabel(relabeled: tuple) -> Distribution:
        if memo is None:
            return xor_output(relabeled)
        key = (size_u, relabeled)
        found = memo.get(key)
        if found is None:
            found = memo[key] = xor_output(relabeled)
        return found

    def xor_output(relabeled: tuple) -> Distribution:
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
        precomputed: ``(of_t, stacked, logs)`` when the outputs were computed straight into one
            ``(distinct, |W|, K)`` array (:func:`start_relabel_tables`): :attr:`distinct` and, unless
            ``logs`` is None, :attr:`distinct_logs`, read-only.
    """

    universe: tuple
    t_table: MultisetTable
    w_table: MultisetTable
    outputs: list[np.ndarray]
    precomputed: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None

    @functools.cached_property
    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """``(of_t, stacked)``: ``stacked[of_t[i]]`` is ``outputs[i]``, one ``(|W|, K)`` slice per distinct
        array (index sets with the same point counts share one), in order of first appearance;
        computed once and read-only, so every phase that sends it to workers sends the same array."""
        if self.precomputed is not None:
            return self.precomputed[0], self.precomputed[1]
        first: dict[int, int] = {}
        of_t = np.array([first.setdefault(id(out), len(first)) for out in self.outputs], dtype=np.int64)
        stacked = np.stack(list({id(out): out for out in self.outputs}.values()))
        of_t.setflags(write=False)
        stacked.setflags(write=False)
        return of_t, stacked

    @property
    def of_t(self) -> np.ndarray:
        """``of_t[i]``: which distinct output ``t_table[i]`` has (:attr:`distinct`)."""
        return self.distinct[0]

    @functools.cached_property
    def distinct_logs(self) -> np.ndarray:
        """``ln`` of :attr:`distinct`'s stacked outputs (``-inf`` at zeros), read-only; taken slice by
        slice, as the workers of :func:`start_relabel_tables` take it (the same floats)."""
        if self.precomputed is not None and self.precomputed[2] is not None:
            return self.precomputed[2]
        stacked = self.distinct[1]
        logs = np.empty_like(stacked)
        for d in range(len(stacked)):
            _log_into(stacked[d], logs[d])
        logs.setflags(write=False)
        return logs


def relabel_tables(
    concept_class: ConceptClass,
    epsilon: float | Fraction,
    n: int,
    k: int,
    learner,
    *,
    score: str = "agnostic",
) -> RelabelTables:
    """Vectorised A_Relabel followed by ``learner`` over all ``(t, w)`` count vectors (serially)."""
    layout = _Layout.make(concept_class, epsilon, n, k, learner, score)
    outputs = [layout.output(d) for d in range(len(layout.firsts))]
    return RelabelTables(layout.universe, layout.t_table, layout.w_table, [outputs[d] for d in layout.of_t])


def start_relabel_tables(
    concept_class: ConceptClass, epsilon: float | Fraction, n: int, k: int, learner, runner: Any, *, score: str = "agnostic",
    logs: bool = False,
) -> tuple[Any, Callable[[], RelabelTables]]:
    """:func:`relabel_tables` with the distinct outputs computed on ``runner`` (a
    :class:`~dpverify.parallel.executors.Runner`) straight into one shared ``(distinct, |W|, K)`` array (and
    their ``ln`` with ``logs``), the same floats as serially: ``(layout, finish)``. ``layout`` has
    ``universe``, ``t_table``, ``w_table`` and ``of_t`` at once, for set-up that needs no outputs;
    ``finish()`` waits for the tables. Every output must have the first one's shape (a learner whose
    number of outcomes varies with t is refused here: use :func:`relabel_tables`)."""
    from dpverify.parallel.executors import Runner, Shared, shard_ranges

    layout = _Layout.make(concept_class, epsilon, n, k, learner, score)
    first = layout.output(0)  # its shape sizes the shared arrays
    shape = (len(layout.firsts), *first.shape)
    if not runner.shares_memory:  # workers on other machines cannot write into this process's arrays
        runner = Runner("serial", 1)
    stacked = runner.output_array(shape, first.dtype)
    stacked[0] = first
    log_array = runner.output_array(shape, first.dtype) if logs else None
    if log_array is not None:
        _log_into(first, log_array[0])
    arrays = {"stacked": stacked} if log_array is None else {"stacked": stacked, "logs": log_array}
    tasks = shard_ranges(len(layout.firsts) - 1, 4 * runner.workers if runner.parallel else 1)
    tasks = [(lo + 1, hi + 1) for lo, hi in tasks if hi > lo]
    pending = runner.submit(_relabel_block, tasks, Shared(arrays, {"layout": layout}))

    def finish() -> RelabelTables:
        pending.results()
        for array in arrays.values():
            array.setflags(write=False)
        of_t = layout.of_t
        outputs = [stacked[d] for d in range(len(stacked))]
        return RelabelTables(layout.universe, layout.t_table, layout.w_table, [outputs[d] for d in of_t],
                             precomputed=(of_t, stacked, log_array))

    return layout, finish


def _relabel_block(task: tuple[int, int], shared: Any) -> None:
    """Distinct outputs ``task[0] .. task[1] - 1`` written into the shared arrays."""
    layout, stacked, logs = shared["layout"], shared["stacked"], shared.arrays.get("logs")
    for d in range(task[0], task[1]):
        out = layout.output(d)
        if out.shape != stacked.shape[1:]:
            raise InvalidArgument(
                f"the learner's outputs differ in shape ({out.shape} for the {d}-th distinct t, "
                f"{stacked.shape[1:]} for the first), so they cannot share one array; compute the "
                "tables with relabel_tables (serially)."
            )
        stacked[d] = out
        if logs is not None:
            _log_into(out, logs[d])


def _log_into(values: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(divide="ignore"):
        np.log(values, out=out)


@dataclass(frozen=True)
class _Layout:
    """What every output of :func:`relabel_tables` needs, and which ``t`` share one (``of_t``)."""

    universe: tuple
    t_table: MultisetTable
    w_table: MultisetTable
    of_t: np.ndarray  # t row -> distinct output
    firsts: np.ndarray  # distinct output -> its first t's count vector
    concept_class: ConceptClass
    learner: Any
    epsilon: float
    score: str
    n: int
    k: int
    mistake: np.ndarray  # (records, concepts): whether each concept mislabels each record
    err_w: np.ndarray  # distinct rows of w's mistake counts per concept
    of_w: np.ndarray  # w row -> its distinct row

    @staticmethod
    def make(concept_class: ConceptClass, epsilon: float | Fraction, n: int, k: int, learner, score: str) -> _Layout:
        _check_score(score)
        universe = labeled_records(concept_class.domain_size)
        t_table, w_table = table(len(universe), k), table(len(universe), n - k)
        mistake = concept_class.mistake_matrix()
        # Every score sees w only through its mistake counts per concept (Nw, |C|), and far fewer
        # count rows are distinct than there are w (7,008 of 31,824 at n = 14): compute on the distinct
        # rows, expand by the inverse index (each row's value is the same computation either way).
        err_w, of_w = _distinct_rows(w_table.counts @ mistake, n - k)
        # With the agnostic score the output depends on t only through its point counts (labels are
        # replaced by the relabeling): one computation per point multiset, shared by every labeling of it.
        counts = t_table.counts
        if score == "agnostic":
            keys: dict[bytes, int] = {}
            of_t = np.array([keys.setdefault((t[0::2] + t[1::2]).tobytes(), len(keys)) for t in counts], dtype=np.int64)
        else:
            of_t = np.arange(len(counts), dtype=np.int64)
        firsts = counts[np.unique(of_t, return_index=True)[1]]
        of_t.setflags(write=False)
        return _Layout(universe, t_table, w_table, of_t, firsts, concept_class, learner, float(epsilon), score, n, k,
                       mistake, err_w, of_w)

    def output(self, d: int) -> np.ndarray:
        """The ``(|W|, K)`` output array of the ``d``-th distinct ``t``."""
        concept_class, score, epsilon, n, k = self.concept_class, self.score, self.epsilon, self.n, self.k
        C, mistake, err_w, size_w = concept_class.matrix, self.mistake, self.err_w, self.n - self.k
        t = self.firsts[d]
        point_counts = t[0::2] + t[1::2]
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
        return (relabel_probs @ self.learner.on_labelings(point_counts, reps, mistakes))[self.of_w]


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

    Sharded by blocks of dataset multisets ``S`` over ``executor`` (:mod:`dpverify.parallel.executors`):
    each row's sum is taken over ``t`` in table order on every executor, so the floats are the same.
    """
    from dpverify.parallel.executors import open_executor

    with open_executor(executor) as runner:
        return start_agnostic_table(tables, n, runner)()


def start_agnostic_table(
    tables: RelabelTables, n: int, runner: Any, s_table: MultisetTable | None = None,
) -> Callable[[], tuple[MultisetTable, np.ndarray]]:
    """:func:`agnostic_table` with its blocks queued on ``runner`` (a :class:`~dpverify.parallel.executors.Runner`):
    call the returned function for the table, after queueing other independent work. ``s_table`` is
    the table of datasets (size n), if the driver made it already."""
    from dpverify.parallel.executors import Shared, shard_ranges

    s_table = table(len(tables.universe), n) if s_table is None else s_table
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
