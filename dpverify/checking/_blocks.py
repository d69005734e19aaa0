"""Row blocks: the black-box replace-one sweep evaluated and swept block by block, never the whole matrix.

Dataset ``i = sum_p d_p z^(n-1-p)`` has digits ``d_0 .. d_(n-1)`` (position 0 the most significant);
its replace-one neighbours at position ``p`` are ``i + s w``, ``w = z^(n-1-p)``, ``1 <= s < z - d_p``
(:class:`~dpverify.finite.pair_sources.SubstitutePairs`). Split the positions into groups of
consecutive positions ``[a, b)``. A *block* of group ``[a, b)`` fixes the digits before ``a`` (``o``)
and a run of ``z^t`` values of the digits from ``b`` on (``r0 .. r0 + z^t - 1``, ``r0`` a multiple of
``z^t``): its rows are ``o z^(n-a) + m z^(n-b) + r``, ``m < z^(b-a)``, ``r0 <= r < r0 + z^t``, in that
order (``z^(b-a)`` runs of ``z^t`` consecutive datasets; the lowest group has ``t = 0`` and one run).

**Claim.** Numbered ``l = m z^t + (r - r0)``, a block's rows are the ordered datasets of size
``D = (b - a) + t`` over ``z`` records, and its pairs at local positions ``0 .. b-a-1`` — the first
``(b - a) z^(D-1) C(z, 2)`` pairs of ``SubstitutePairs(z, D)`` — are exactly the global pairs at
positions ``a .. b-1`` with both rows in the block; every global pair lies in exactly one block of
exactly one group; and the local order of a block's pairs is their global order.

*Proof.* Local digit ``j < b - a`` of ``l`` is global digit ``a + j``, and the other global digits
are fixed by the block or are the trailing local digits: two rows differ in one local digit ``j`` by
``s`` iff they differ in global digit ``a + j`` by ``s``. A pair at position ``p`` in ``[a, b)``
has equal digits elsewhere, so it lies in the block of its ``o`` and its run of trailing digits;
a block sweeps pairs at its own group's positions only, and the groups partition the positions. Both
orders are position, shift, then the left row, and the left rows of a block increase with the global
left index. ∎

So every worker evaluates its block's rows (each dataset once per group: twice at ``|X| = 4``,
``n = 8`` with blocks of ``8^6`` rows), sweeps them with the engine's own kernel
(:func:`dpverify.verdict._sweep.sweep_shard`) and returns its partial worst case with global row and
pair numbers, and the float rows of its candidates. The driver merges them as the whole-matrix sweep
would: candidates in the order (chunk of ``2**16`` global pairs, direction, pair) that sweep
concatenates them in, so the engine's stable sort picks the same witness; maxima are exact whatever
the order, and a hockey-stick sum is computed per pair over the same columns in the same order. The
outcome columns are in order of first appearance over all datasets, as
:func:`~dpverify.checking._evaluation.evaluate_blocks` orders them, found by the first pass, which is
the lowest group's sweep itself (its blocks are contiguous and cover every dataset once): each of
its blocks is swept in the columns of its own first appearances, with the margins its own rows
imply, and swept again only where those are not the run's (an outcome first seen in an earlier
block, a float row elsewhere). It also returns each row's exact flag and the exact outputs kept,
evaluated in evaluate_blocks' own pieces.
Certification then runs on the candidates' rows alone (:func:`dpverify.verdict.engine.decide` with
``swept=``). Memory in the driver is that of the candidates, one block per task in flight and a
flag per dataset; a remote Dask cluster receives the mechanism and block numbers, not a matrix.

Outputs with unexplored mass (a sampler enumerated up to a tolerance) are refused here, loudly: a
block's sweep has no place for it, and dropping it would decide on part of each output. Such
instances are checked on the whole matrix below :data:`BLOCKS_FROM_ROWS` datasets
(:func:`_complete` names the fix).

Only the sweep's ``delta_pair`` (not part of a verdict or a result) may name another pair attaining
the same largest delta than the whole-matrix sweep names: that sweep prefers a forward pair within
its chunk of ``2**16`` pairs, and a block's chunks are its own. ``epsilon_pair`` is the same (the
first pair attaining eps*: a block's first is its smallest global pair, and the merge takes the
smallest of those).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpverify.checking._evaluation import (
    KEEP_TOTAL,
    EvaluatedDistributions,
    KeptRows,
    _Interned,
    call_mechanism,
    check_float_row,
    nondeterministic,
)
from dpverify.checking._evaluation import _evaluate_block as _evaluate_any
from dpverify.errors import EnumerationTooLarge
from dpverify.finite.pair_sources import OrderedDatasets, SubstitutePairs

__all__ = ["BlockPlan", "LazyRows", "plan_blocks", "block_plan_for", "outline", "decide_in_blocks", "global_pair_index",
           "BLOCK_ROWS", "BLOCKS_FROM_ROWS"]

#: Rows of one block (a worker holds a few arrays of this many rows times the outcomes).
BLOCK_ROWS = 1 << 18
#: Instances with at least this many datasets are checked in blocks (smaller ones hold the matrix),
#: as is every instance on a Dask cluster whose workers do not share this machine's memory.
BLOCKS_FROM_ROWS = 1 << 21
#: The kernel reads strided views by runs of consecutive datasets; runs below this are slow.
_LONG_RUN = 64
#: Datasets per call of the mechanism within a block: a vectorised mechanism's temporaries then stay
#: in cache (threshold EM, 262,144 rows: 0.142 s CPU in one call, 0.093-0.098 s in pieces of 4K-64K).
_EVALUATION_ROWS = 1 << 15


@dataclass(frozen=True)
class BlockPlan:
    """The groups of positions ``(a, b, t)`` of the module docstring, for ``z`` records and size ``n``."""

    z: int
    n: int
    groups: tuple[tuple[int, int, int], ...]

    def tasks(self) -> list[tuple[int, int, int]]:
        """Every block as ``(group, o, r0)``, group by group."""
        found = []
        for g, (a, b, t) in enumerate(self.groups):
            for outer in range(self.z**a):
                for low in range(0, self.z ** (self.n - b), self.z**t):
                    found.append((g, outer, low))
        return found

    def digits(self, group: int) -> int:
        a, b, t = self.groups[group]
        return b - a + t

    def local_pairs(self, group: int) -> int:
        """How many pairs a block of ``group`` sweeps (its own positions only)."""
        a, b, _ = self.groups[group]
        return (b - a) * self.z ** (self.digits(group) - 1) * (self.z * (self.z - 1) // 2)

    def runs(self, task: tuple[int, int, int]) -> list[tuple[int, int]]:
        """The block's rows as ``[start, stop)`` runs of consecutive datasets, in local order."""
        g, outer, low = task
        a, b, t = self.groups[g]
        base = outer * self.z ** (self.n - a) + low
        step, length = self.z ** (self.n - b), self.z**t
        if step == length:  # the runs touch (the lowest group): one run
            return [(base, base + self.z ** (b - a) * length)]
        return [(base + m * step, base + m * step + length) for m in range(self.z ** (b - a))]

    def rows(self, task: tuple[int, int, int]) -> np.ndarray:
        """The global dataset index of every local row of the block."""
        return np.concatenate([np.arange(start, stop, dtype=np.int64) for start, stop in self.runs(task)])


def plan_blocks(z: int, n: int, rows: int = BLOCK_ROWS) -> BlockPlan:
    """Groups whose blocks have at most ``rows`` rows (at least ``z``): the lowest ``D`` positions in
    one group of contiguous blocks, the others in groups of ``D - t`` positions with runs of
    ``z^t >= 64`` datasets (fewer groups: fewer evaluations of each dataset)."""
    if z < 2:
        return BlockPlan(z, n, ((0, n, 0),))
    digits = 1
    while digits < n and z ** (digits + 1) <= rows:
        digits += 1
    if digits >= n:
        return BlockPlan(z, n, ((0, n, 0),))
    trailing = 0
    while z**trailing < _LONG_RUN and trailing < digits - 1:
        trailing += 1
    width = digits - trailing
    groups = [(n - digits, n, 0)]
    stop = n - digits
    while stop > 0:
        start = max(0, stop - width)
        groups.append((start, stop, digits - (stop - start)))
        stop = start
    return BlockPlan(z, n, tuple(groups))


def global_pair_index(z: int, n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The index in :class:`SubstitutePairs` ``(z, n)`` of the pairs ``(left, right)`` of datasets.

    Raises AssertionError when one is not a replace-one pair with ``left < right`` (a block that
    made a pair of rows that are no neighbours: an internal error, never a verdict)."""
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    difference = right - left
    exponent = np.zeros(left.shape, dtype=np.int64)
    shift = difference.copy()
    for _ in range(n):
        divisible = (shift % z == 0) & (shift > 0)
        exponent[divisible] += 1
        shift[divisible] //= z
    weight = np.asarray(z, dtype=np.int64) ** exponent
    position = n - 1 - exponent
    digit = (left // weight) % z
    bad = (difference <= 0) | (shift >= z) | (position < 0) | (digit + shift >= z) | (right >= z**n)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise AssertionError(
            f"internal error: rows {int(left[k])} and {int(right[k])} of a row block are not a replace-one pair "
            f"over {z} records at n={n}"
        )
    per = z ** (n - 1)
    start = position * per * (z * (z - 1) // 2) + per * ((shift - 1) * z - shift * (shift - 1) // 2)
    return start + (left // (z * weight)) * (z - shift) * weight + left % (z * weight)


def block_plan_for(pairs: Any, runner: Any, *, rows: int | None = None, from_rows: int | None = None) -> BlockPlan | None:
    """The plan when ``pairs`` are black-box replace-one pairs over every ordered dataset and the
    instance is large (:data:`BLOCKS_FROM_ROWS`) or the workers cannot share this machine's memory;
    else None (the whole matrix is evaluated, as for every other relation)."""
    source, datasets = pairs.source, pairs.datasets
    if type(source) is not SubstitutePairs or type(datasets) is not OrderedDatasets:
        return None
    z, n = source.z, source.n
    if datasets.start != 0 or len(datasets) != z**n or len(datasets.records) != z or datasets.n != n or n < 1:
        return None
    threshold = BLOCKS_FROM_ROWS if from_rows is None else from_rows
    if z**n < threshold and runner.shares_memory:
        return None
    size = BLOCK_ROWS if rows is None else rows
    if runner.parallel:  # at least four blocks per worker (a small instance on a remote cluster)
        size = min(size, max(z * _LONG_RUN, z**n // (4 * runner.workers)))
    return plan_blocks(z, n, size)


def _evaluate_block(block: Sequence[tuple], shared: Any) -> tuple:
    """:func:`~dpverify.checking._evaluation._evaluate_block` for a row block: the same, or a refusal
    of an output with unexplored mass (module docstring)."""
    evaluated = _evaluate_any(block, shared)
    tails = evaluated[5]
    if tails is not None:
        row, mass = next(iter(tails.items()))
        mechanism = shared["mechanism"]
        name = getattr(mechanism, "__name__", None) or type(mechanism).__name__
        raise EnumerationTooLarge(
            f"the mechanism {name} leaves unexplored={mass} of its output unexplored on dataset {block[row]!r}, and "
            f"this instance (at least {BLOCKS_FROM_ROWS:,} datasets, or a cluster without shared memory) is checked in "
            "row blocks, which cannot carry unexplored mass; explore fully (from_sampler(..., tail=0) where the "
            f"randomness is finite) or check a smaller instance (fewer records or a smaller n: below {BLOCKS_FROM_ROWS:,} "
            "datasets, on this machine's executors)."
        )
    return evaluated


# --- first pass: the outcome columns, exact flags and kept exact outputs (no matrix) ---------------


def _outlined(evaluated: tuple) -> tuple:
    """One evaluated block (:func:`~dpverify.checking._evaluation._evaluate_block`) without its float
    rows: ``(outcomes, exact flags or False when none, kept outputs, their ids, their float rows)``."""
    outcomes, floats, flags, contents, ids, _ = evaluated
    if not contents:
        return outcomes, (flags if flags.any() else False), [], None, None
    first = {int(i): row for row, i in zip(range(len(ids)), ids.tolist()) if i >= 0}
    kept_rows = np.array([floats[first[i]] for i in range(len(contents))])
    return outcomes, flags, contents, ids, kept_rows


def _outline_block(block: Sequence[tuple], shared: Any) -> tuple:
    return _outlined(_evaluate_block(block, shared))


def evaluation_size(total: int, runner: Any) -> int:
    """The datasets per block of :func:`~dpverify.checking._evaluation.evaluate_blocks` (its own
    formula): evaluated in the same blocks, the same exact outputs are kept (``KEEP_PER_BLOCK`` per
    block), so certification re-runs the mechanism on the same rows."""
    from dpverify.checking._evaluation import _BLOCK

    return _BLOCK if not runner.parallel else max(256, min(_BLOCK * 4, -(-total // (8 * runner.workers))))


def _pieces(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` cut at the multiples of ``size``."""
    cuts = [start, *range((start // size + 1) * size, stop, size), stop]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def outline(
    mechanism: Any, datasets: Sequence[tuple], runner: Any, progress: Callable[[int, int], None] | None = None
) -> tuple[list, np.ndarray, KeptRows]:
    """:func:`~dpverify.checking._evaluation.evaluate_blocks` without the matrix: the outcomes in
    order of first appearance, the exact flag of every row and the kept exact outputs."""
    from dpverify.parallel.executors import Shared

    total = len(datasets)
    bounds = _pieces(0, total, evaluation_size(total, runner))
    done = [0]

    def finished(index: int) -> None:
        done[0] += bounds[index][1] - bounds[index][0]
        if progress is not None:
            progress(done[0], total)

    parts = runner.map(_outline_block, [datasets[a:b] for a, b in bounds], Shared({}, {"mechanism": mechanism}),
                       finished)
    return _merged_outlines(bounds, parts, total)


def _merged_outlines(bounds: list[tuple[int, int]], parts: list[tuple], total: int) -> tuple[list, np.ndarray, KeptRows]:
    """The blocks' outlines merged in order, as evaluate_blocks merges its blocks."""
    outcome_index: dict[Hashable, int] = {}
    for outcomes, *_ in parts:
        for outcome in outcomes:
            outcome_index.setdefault(outcome, len(outcome_index))
    exact = np.zeros(total, dtype=bool)
    kept = _Interned(KEEP_TOTAL)
    ids: np.ndarray | None = None
    for (start, stop), (outcomes, flags, contents, local, kept_rows) in zip(bounds, parts):
        exact[start:stop] = flags
        if contents:
            if ids is None:
                ids = np.full(total, -1, dtype=np.int32)
            columns = [outcome_index[o] for o in outcomes]
            merged = np.array([
                kept.add(tuple(sorted((k, v) for k, v in zip(columns, row.tolist()) if v != 0)), content)
                for content, row in zip(contents, kept_rows)
            ], dtype=np.int32)
            ids[start:stop] = np.where(local >= 0, merged[np.maximum(local, 0)], -1)
    if ids is None:  # nothing kept (a vectorised mechanism): no array of every row
        ids = np.broadcast_to(np.int32(-1), (total,))
    return list(outcome_index), exact, KeptRows(kept.contents, ids)


# --- second pass: each block evaluated and swept by a worker --------------------------------------


def _block_matrix(mechanism: Any, datasets: Any, runs: list[tuple[int, int]], outcomes: Sequence) -> np.ndarray:
    """The float rows of ``runs`` in the columns ``outcomes`` (the first pass's)."""
    from dpverify.parallel.executors import Shared

    columns = {o: k for k, o in enumerate(outcomes)}
    shared = Shared({}, {"mechanism": mechanism})
    total = sum(stop - start for start, stop in runs)
    matrix = np.zeros((total, len(outcomes)))
    at = 0
    pieces = [(a, min(a + _EVALUATION_ROWS, stop)) for start, stop in runs for a in range(start, stop, _EVALUATION_ROWS)]
    for start, stop in pieces:
        found, floats, *_ = _evaluate_block(datasets[start:stop], shared)
        try:
            where = [columns[o] for o in found]
        except KeyError:
            unknown = next(o for o in found if o not in columns)
            raise nondeterministic(mechanism, datasets[start], {"outcomes of the first pass": list(outcomes)},
                                   {"a new outcome": unknown}) from None
        if where == list(range(len(outcomes))):
            matrix[at : at + stop - start] = floats
        elif where:
            matrix[at : at + stop - start, where] = floats
        at += stop - start
    return matrix


def _sweep_block(task: tuple[int, int, int], shared: Any) -> tuple:
    """One block evaluated and swept: the kernel's partial worst case with global numbers, and the
    float rows its candidates and near pairs read, ``(rows, values)``."""
    plan: BlockPlan = shared["plan"]
    matrix = _block_matrix(shared["mechanism"], shared["datasets"], plan.runs(task), shared["outcomes"])
    return _swept(plan, task, matrix, shared["settings"])


def _sweep_first(task: tuple[int, int, int], shared: Any) -> tuple:
    """A block of the lowest group (contiguous datasets) in the first pass, before the outcome columns
    are known: evaluated in evaluate_blocks' own blocks (outlined as :func:`outline` does), swept in
    the columns of its own first appearances with the margins its own rows imply. Returns ``(part,
    its outcomes, its settings, its outlines)``; the driver keeps the part when its outcomes and
    settings are the run's, else sweeps the block again."""
    from dpverify.parallel.executors import Shared
    from dpverify.verdict.engine import sweep_settings

    plan: BlockPlan = shared["plan"]
    ((start, stop),) = plan.runs(task)
    evaluate = Shared({}, {"mechanism": shared["mechanism"]})
    pieces = [_evaluate_block(shared["datasets"][a:b], evaluate) for a, b in _pieces(start, stop, shared["size"])]
    index: dict[Hashable, int] = {}
    for found, *_ in pieces:
        for outcome in found:
            index.setdefault(outcome, len(index))
    matrix = np.zeros((stop - start, len(index)))
    at = 0
    for found, floats, *_ in pieces:
        matrix[at : at + len(floats), [index[o] for o in found]] = floats
        at += len(floats)
    row_error, matrix_error, exact_of = shared["errors"]
    any_float = any(not piece[2].all() for piece in pieces)
    largest = max(row_error if not exact_of and any_float else 0.0, matrix_error)
    epsilon, claim_delta = shared["claim"]
    settings = sweep_settings(len(index), epsilon, claim_delta=claim_delta, error=largest)
    return _swept(plan, task, matrix, settings), list(index), settings, [_outlined(piece) for piece in pieces]


def _swept(plan: BlockPlan, task: tuple[int, int, int], matrix: np.ndarray, settings: dict) -> tuple:
    """The block's rows ``matrix`` swept (the engine's kernel), its numbers made global."""
    from dpverify.parallel.executors import Shared
    from dpverify.verdict._sweep import sweep_shard

    rows = plan.rows(task)
    columns = np.ascontiguousarray(matrix.T)
    with np.errstate(divide="ignore"):
        logs = np.log(columns)  # elementwise: the floats RowPairs.columns() makes
    settings = dict(settings)
    source = SubstitutePairs(plan.z, plan.digits(task[0]))
    settings["source"] = source
    part = sweep_shard((0, plan.local_pairs(task[0])), Shared({"columns": columns, "log_columns": logs}, settings))
    best_eps, eps_at, eps_forward, best_delta, delta_at, delta_forward, stability, found, extra = part

    def pair_of(local: int) -> int:
        if local < 0:
            return local
        left, right = source.chunk(local, local + 1)
        return int(global_pair_index(plan.z, plan.n, rows[left], rows[right])[0])

    used = []
    if found:
        slack, first, second, _, value, loss = (np.concatenate(column) for column in zip(*found))
        first_rows, second_rows = rows[first], rows[second]
        pair = global_pair_index(plan.z, plan.n, np.minimum(first_rows, second_rows),
                                 np.maximum(first_rows, second_rows))
        found = [(slack, first_rows, second_rows, pair, value, loss)]
        used += [first, second]
    if extra is not None:
        near = []
        for first, second, value in extra[1:]:
            near.append((rows[first], rows[second], value))
            used += [first, second]
        extra = (extra[0], *near)
    local = np.unique(np.concatenate(used)) if used else np.zeros(0, dtype=np.int64)
    return (best_eps, pair_of(eps_at), eps_forward, best_delta, pair_of(delta_at), delta_forward, stability, found,
            extra, (rows[local], matrix[local]))


def _order(pair: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The whole-matrix sweep's order of directed pairs: chunk of pairs, forward before backward, pair."""
    from dpverify.verdict._sweep import CHUNK

    return np.lexsort((pair, (first > second).astype(np.int8), pair // CHUNK))


def _merged(parts: list[tuple], settings: dict, relative: float, mechanism: Any, datasets: Any, plan: BlockPlan) -> tuple:
    """The blocks' parts as one part of the whole-matrix sweep, its rows renumbered ``0 .. R-1``
    over the rows it reads: ``(part, global rows, their float rows)``."""
    plan_z, plan_n = plan.z, plan.n
    best = max(parts, key=lambda part: (part[0], -part[1]))
    largest_delta = max(part[3] for part in parts)
    tied = [part for part in parts if part[3] == largest_delta]
    delta_part = min(tied, key=lambda part: (part[4] // _chunk(), not part[5], part[4]))
    ids = np.unique(np.concatenate([part[9][0] for part in parts])) if parts else np.zeros(0, dtype=np.int64)
    values = np.zeros((ids.size, parts[0][9][1].shape[1] if parts else 0))
    seen = np.zeros(ids.size, dtype=bool)
    for part in parts:
        at = np.searchsorted(ids, part[9][0])
        again = seen[at]
        if again.any():  # a row read by two blocks: both evaluations must agree
            before, now = values[at[again]], part[9][1][again]
            if not np.all(np.abs(before - now) <= relative * np.maximum(np.abs(before), np.abs(now))):
                k = int(np.flatnonzero(again)[0])
                row = int(part[9][0][k])
                raise nondeterministic(mechanism, datasets[row], dict(enumerate(values[at[k]].tolist())),
                                       dict(enumerate(part[9][1][k].tolist())))
        values[at[~again]] = part[9][1][~again]
        seen[at] = True
    found = [piece for part in parts for piece in part[7]]
    candidates = []
    if found:
        slack, first, second, pair, value, loss = (np.concatenate(column) for column in zip(*found))
        order = _order(pair, first, second)
        candidates = [(slack[order], np.searchsorted(ids, first[order]), np.searchsorted(ids, second[order]),
                       pair[order], value[order], loss[order])]
    extra = None
    if settings["claim_delta"] is not None and settings["with_delta"]:
        near = []
        for k in (1, 2):
            first, second, value = (np.concatenate([part[8][k][c] for part in parts]) for c in range(3))
            # the order the whole-matrix sweep keeps them in (while it keeps at most FIGURE_CAP of them):
            # it decides which row of a class of equal rows certification reads first
            pair = global_pair_index(plan_z, plan_n, np.minimum(first, second), np.maximum(first, second))
            order = _order(pair, first, second)
            near.append((np.searchsorted(ids, first[order]), np.searchsorted(ids, second[order]), value[order]))
        extra = (max((part[8][0] for part in parts), default=-math.inf), *near)
    stability = max((part[6] for part in parts), default=0.0)
    part = (best[0], best[1], best[2], delta_part[3], delta_part[4], delta_part[5], stability, candidates, extra)
    return part, ids, values


def _chunk() -> int:
    from dpverify.verdict._sweep import CHUNK

    return CHUNK


class LazyRows:
    """The float row of any dataset (in the first pass's columns), as ``matrix[index]`` reads it:
    the swept row where the sweep returned it, else the dataset evaluated again alone."""

    def __init__(self, mechanism: Any, datasets: Any, outcomes: Sequence) -> None:
        self.mechanism, self.datasets, self.outcomes = mechanism, datasets, list(outcomes)
        self.known: dict[int, np.ndarray] = {}
        self.shape = (len(datasets), len(self.outcomes))

    def __getitem__(self, index: Any) -> np.ndarray:
        index = int(index)
        found = self.known.get(index)
        if found is None:
            found = _block_matrix(self.mechanism, self.datasets, [(index, index + 1)], self.outcomes)[0]
        return found


def decide_in_blocks(analysis: Any, claimed: Any, mechanism: Any, declared_error: float | None) -> Any:
    """``claimed.decide`` on the analysis's pairs, swept in row blocks on ``analysis.executor``: the
    same :class:`~dpverify.verdict.engine.Decision` as on the whole matrix, row numbers global (each
    exact row certification reads held against its float row:
    :func:`~dpverify.checking._evaluation.check_float_row`)."""
    from dpverify.parallel.executors import Shared, open_executor
    from dpverify.verdict.engine import RowPairs, decide, float_error_of, merged_sweep, sweep_settings

    plan: BlockPlan = analysis.blocks
    lazy: Any = analysis.matrix  # a LazyRows
    datasets = analysis.pairs.datasets
    exact_of = getattr(mechanism, "exact_distribution", None)
    rho = float_error_of(mechanism) if declared_error is None else declared_error
    if exact_of is not None:
        row_error, matrix_error = 0.0, rho
    else:
        row_error, matrix_error = rho, 0.0
    epsilon, delta = claimed.claimed_epsilon, claimed.claimed_delta
    tasks = plan.tasks()
    pairs_of = {task: plan.local_pairs(task[0]) for task in tasks}
    total, done = sum(pairs_of.values()), [0]

    def finished(batch: list) -> Callable[[int], None]:
        def report(index: int) -> None:
            done[0] += pairs_of[batch[index]]
            if analysis.progress is not None:
                analysis.progress(done[0], total)

        return report

    parts: list[tuple] = []
    with open_executor(analysis.executor) as runner:
        rest = tasks
        if analysis.is_exact is None:  # the first pass is the lowest group's sweep (module docstring)
            first = [task for task in tasks if task[0] == 0]
            rest = [task for task in tasks if task[0] != 0]
            size = evaluation_size(len(datasets), runner)
            error_settings = (row_error, matrix_error, exact_of is not None)
            shared = Shared({}, {"plan": plan, "mechanism": mechanism, "datasets": datasets, "size": size,
                                 "errors": error_settings, "claim": (float(epsilon), float(delta))})
            found = runner.map(_sweep_first, first, shared, finished(first))
            bounds = [piece for task in first for start, stop in plan.runs(task) for piece in _pieces(start, stop, size)]
            outcomes, exact, kept = _merged_outlines(bounds, [o for _, _, _, outlines in found for o in outlines],
                                                     len(datasets))
            analysis.outcomes, analysis.is_exact = outcomes, exact
            lazy.outcomes, lazy.shape = outcomes, (len(datasets), len(outcomes))
            analysis.distributions = EvaluatedDistributions(
                mechanism, datasets, matrix=lazy, outcomes=outcomes, relative=2 * float_error_of(mechanism),
                is_exact=exact, kept=kept)
        outcomes = analysis.outcomes
        any_float = exact_of is None and not bool(np.all(analysis.is_exact))
        settings = sweep_settings(len(outcomes), float(epsilon), claim_delta=float(delta),
                                  error=max(row_error if any_float else 0.0, matrix_error))
        if rest is not tasks:
            for task, (part, own, own_settings, _) in zip(first, found):
                if own == outcomes and own_settings == settings:
                    parts.append(part)
                else:  # its own columns or margins were not the run's: swept again in the run's
                    done[0] -= pairs_of[task]
                    rest.append(task)
        shared = Shared({}, {"plan": plan, "mechanism": mechanism, "datasets": datasets, "outcomes": outcomes,
                             "settings": settings})
        parts += runner.map(_sweep_block, rest, shared, finished(rest))
    part, ids, values = _merged(parts, settings, 2 * float_error_of(mechanism), mechanism, datasets, plan)
    swept = merged_sweep([part], settings)
    for row, value in zip(ids.tolist(), values):
        lazy.known[row] = value
    errors = np.where(analysis.is_exact[ids], 0.0, row_error) if exact_of is None else np.zeros(ids.size)
    if exact_of is None:
        exact_row = lambda index: analysis.distributions[int(ids[index])]  # noqa: E731
    else:
        columns = {o: k for k, o in enumerate(outcomes)}

        def exact_row(index: int) -> Any:
            dataset = datasets[int(ids[index])]
            exact = call_mechanism(mechanism, dataset, "exact_distribution")
            check_float_row(mechanism, dataset, values[index], columns, exact, rho)
            return exact

    nothing = np.zeros(0, dtype=np.int64)
    rows = RowPairs(values.reshape(ids.size, len(outcomes)), nothing, nothing, outcomes=outcomes,
                    exact_row=exact_row, row_error=errors, label=lambda index: datasets[int(ids[index])],
                    matrix_error=matrix_error)
    decision = decide(rows, epsilon, delta, swept=swept)
    witness_rows = None
    if decision.witness_rows is not None:
        witness_rows = (int(ids[decision.witness_rows[0]]), int(ids[decision.witness_rows[1]]))
    return replace(decision, witness_rows=witness_rows, read_rows=tuple(int(ids[i]) for i in decision.read_rows))
