"""Running the mechanism on every dataset: sharded in blocks over an executor, merged in order.

A worker evaluates one block of datasets and returns its rows: the outcomes in the order they first
appear in the block, a float64 matrix over them and which rows were exact. The driver merges the
blocks in order, so the outcome columns are in order of first appearance over all datasets — the
serial order — on every executor. A mechanism with a vectorised ``distributions(datasets)`` method
(returning ``(outcomes, matrix)``, one float64 row per dataset) is called once per block instead of
once per dataset.

Randomness the mechanism hides: Python's and numpy's global generators are read around every
evaluation -- once per block for the run's blocks, around each call elsewhere -- and a mechanism
that moves one (seen on two runs in a row; :mod:`dpverify.finite._global_random`) raises
:class:`NondeterministicMechanism` naming the dataset or block: it returns a sample, not its
distribution, and no verdict is given on it.

Exact values are not kept for every dataset (a black-box run at ``n = 7`` over 8 records has 2 M
of them): :class:`EvaluatedDistributions` re-runs the mechanism on the few datasets certification
asks for, and compares each second output with the first. A mechanism's ``exact_distribution``,
which certification reads in place of its floats, is held against the float row that chose the
pairs (:func:`check_float_row`).

An output with unexplored mass (``Distribution(..., unexplored=m)``, a sampler enumerated up to a
tolerance) has its explored masses in the matrix and its bound ``m`` in a per-row array of exact
values (None when no row has any): the engine decides such rows soundly
(:mod:`dpverify.verdict._unexplored`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import DpverifyError, InvalidArgument, MechanismError, NondeterministicMechanism
from dpverify.finite._global_random import changed_generators, drew_error, global_states, run_unchanged
from dpverify.finite.distribution import Distribution

__all__ = [
    "as_distribution",
    "call_mechanism",
    "evaluate_blocks",
    "EvaluatedDistributions",
    "measure_rate",
    "check_size",
    "same_distribution",
    "nondeterministic",
    "check_float_row",
]

_BLOCK = 4096


def as_distribution(value: Any, dataset: tuple) -> Distribution:
    """Validate a mechanism's output on ``dataset`` as a :class:`Distribution`."""
    if isinstance(value, Distribution):
        return value
    if not isinstance(value, Mapping):
        raise InvalidArgument(
            f"the mechanism must return a Mapping outcome -> probability (or a Distribution); on "
            f"dataset {dataset!r} it returned {type(value).__name__}; if it returns one sample, make it a sampler (dataset, rng) and wrap it with from_sampler (dpverify check: --sampler)."
        )
    try:
        return Distribution(value)
    except InvalidArgument as error:
        raise InvalidArgument(f"on dataset {dataset!r} the mechanism's output: {error}") from None


def _name(mechanism: Any) -> str:
    return getattr(mechanism, "__name__", None) or type(mechanism).__name__


def call_mechanism(mechanism: Any, dataset: tuple, method: str | None = None) -> Distribution:
    """``mechanism(dataset)`` (or ``mechanism.<method>(dataset)``) validated as a
    :class:`Distribution`; an exception inside the mechanism becomes a :class:`MechanismError`
    naming the dataset (the original chained), and a draw from Python's or numpy's global
    generator (seen on every one of repeated calls) a :class:`NondeterministicMechanism`: never a verdict."""
    called = _name(mechanism) if method is None else f"{_name(mechanism)}.{method}"
    function = mechanism if method is None else getattr(mechanism, method)
    value = run_unchanged(
        lambda: _called(function, called, dataset),
        lambda used: drew_error(f"the mechanism {called}", f"dataset {dataset!r}", used, dataset=dataset),
    )
    return as_distribution(value, dataset)


def _called(function: Callable[[tuple], Any], called: str, dataset: tuple) -> Any:
    """``function(dataset)``, an exception inside it a :class:`MechanismError` naming the dataset."""
    try:
        return function(dataset)
    except DpverifyError:
        raise
    except Exception as error:
        raise MechanismError(
            f"the mechanism {called} raised {type(error).__name__}: {error} -- on dataset {dataset!r}. "
            "No verdict was given; fix the mechanism (or choose records and n it accepts).",
            dataset=dataset, original=error,
        ) from error


def same_distribution(first: Distribution, second: Distribution, relative: float) -> bool:
    """Whether two outputs of the mechanism agree: exactly when both are exact, else on the same
    support with every float within ``relative`` of the larger (rounding of the same computation
    done in another order)."""
    if first is second:  # a memoised output (one object per distinct output): nothing to compare
        return True
    if first.is_exact and second.is_exact:
        return first == second
    if first.support != second.support:
        return False
    if first.unexplored != 0 or second.unexplored != 0:
        rest = float(first.unexplored), float(second.unexplored)
        if abs(rest[0] - rest[1]) > relative * max(rest):
            return False
    return all(abs(float(first[o]) - float(second[o])) <= relative * max(abs(float(first[o])), abs(float(second[o])))
               for o in first)


_SAMPLER_HINT = (
    "For sampling code, pass dpverify.from_sampler(sampler): it takes sampler(dataset, rng) and computes the exact "
    "distribution by running it on every combination of its random choices."
)


def nondeterministic(mechanism: Any, dataset: tuple, first: Any, second: Any) -> NondeterministicMechanism:
    """The error for a mechanism that gave two different outputs on ``dataset``."""
    return NondeterministicMechanism(
        f"the mechanism {_name(mechanism)} returned two different distributions for the same dataset "
        f"{dataset!r}: {dict(first)!r} and then {dict(second)!r}. A mechanism must return its exact output "
        "distribution, a function of the dataset alone -- not a sample drawn from it (no random draws, no "
        f"global state). {_SAMPLER_HINT}",
        dataset=dataset, first=first, second=second,
    )


#: Exact objects whose float rows one certification keeps (each kept alive while it runs).
_CONVERTED_ROWS = 4096


def check_float_row(
    mechanism: Any, dataset: tuple, row: np.ndarray, columns: Mapping, exact: Distribution, rho: float,
    converted: dict[int, tuple[Any, np.ndarray | None]] | None = None, tail: Any = None,
) -> None:
    """The float row that chose the pairs to certify must be the exact distribution up to its
    rounding (relative ``rho``, the mechanism's float error): the sweep's margin assumes it.
    ``converted`` keeps each exact object's floats (by identity): a mechanism returning one memoised
    exact distribution for many datasets has its sympy values converted once (C6's Laplace row
    converted 51,408 values, two distinct ones per query)."""
    known = None if converted is None else converted.get(id(exact))
    if known is not None and known[0] is exact:
        values = known[1]
    else:
        values = _float_row(exact, columns, row)
        if converted is not None and len(converted) < _CONVERTED_ROWS:
            converted[id(exact)] = (exact, values)  # the object kept: its id is not reused
    seen = 0.0 if tail is None else float(tail)
    same_tail = abs(float(exact.unexplored) - seen) <= 2 * rho * max(float(exact.unexplored), seen)
    if values is not None and same_tail and np.all(np.abs(row - values) <= 2 * rho * np.maximum(np.abs(row),
                                                                                                   np.abs(values))):
        return
    raise MechanismError(
        f"the mechanism's float output and its exact_distribution disagree on dataset {dataset!r} (beyond the "
        f"relative float error {rho:.3g}): the float row is {row.tolist()!r} over {list(columns)!r} (unexplored "
        f"{seen!r}), the exact one {dict(exact)!r} (unexplored {exact.unexplored}). Both must describe the same "
        "distribution; fix the mechanism, or declare a larger "
        "float_relative_error if its floats are that far off.",
        dataset=dataset,
    )


def _float_row(exact: Mapping, columns: Mapping, like: np.ndarray) -> np.ndarray | None:
    """``exact`` as floats in the row's columns; None if it puts mass on an outcome outside them."""
    values = np.zeros_like(like)
    for outcome, probability in exact.items():
        column = columns.get(outcome)
        if column is None:
            if probability != 0:
                return None
            continue
        values[column] = float(probability)
    return values


def _not_distributions(matrix: np.ndarray) -> np.ndarray:
    """The rows of ``matrix`` that are not distributions: a negative or NaN entry, or a sum off 1
    by more than 1e-9. A few outcomes are summed column by column in numpy's own order
    (:func:`dpverify.verdict._sweep.row_sums`: the floats of ``sum(axis=1)``), which skips numpy's
    per-row overhead on a short axis; the rows are only looked at when the whole block fails."""
    from dpverify.verdict._sweep import row_sums

    outcomes = matrix.shape[1]
    if 0 < outcomes <= 16:
        sums = row_sums([matrix[:, k] for k in range(outcomes)])
    else:
        sums = matrix.sum(axis=1)
    if matrix.size == 0 or (float(matrix.min()) >= 0 and bool((np.abs(sums - 1) <= 1e-9).all())):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(~(matrix >= 0).all(axis=1) | ~(np.abs(sums - 1) <= 1e-9))


def _vectorised(mechanism: Any, block: Sequence[tuple]) -> tuple[list, np.ndarray, np.ndarray]:
    lazy = hasattr(block, "indices") or hasattr(block, "counts")
    datasets = block if lazy else list(block)  # ordered datasets and multisets stay lazy
    where = f"a block of {len(datasets)} datasets starting with {datasets[0]!r}"

    def call() -> Any:
        try:
            return mechanism.distributions(datasets)
        except DpverifyError:
            raise
        except Exception as error:
            raise MechanismError(
                f"the mechanism {_name(mechanism)}.distributions raised {type(error).__name__}: {error} -- on {where}. "
                "No verdict was given; fix the mechanism.",
                dataset=datasets[0], original=error,
            ) from error

    # once per block, numpy's cached Gaussian included (2 x 35 us a block): one call may be all there is
    outcomes, matrix = run_unchanged(
        call, lambda used: drew_error(f"the mechanism {_name(mechanism)}.distributions", where, used,
                                      dataset=datasets[0]),
        full=True,
    )
    matrix = np.asarray(matrix, dtype=float)
    outcomes = list(outcomes)
    if matrix.shape != (len(datasets), len(outcomes)):
        raise InvalidArgument(
            f"mechanism.distributions(datasets) must return (outcomes, matrix) with one row per dataset "
            f"and one column per outcome, got {len(outcomes)} outcomes and a matrix of shape {matrix.shape} "
            f"for {len(datasets)} datasets."
        )
    bad = _not_distributions(matrix)
    if bad.size:
        raise InvalidArgument(
            f"mechanism.distributions(datasets): the row of dataset {datasets[bad[0]]!r} is not a "
            f"distribution (row {matrix[bad[0]].tolist()!r}, sum {float(matrix[bad[0]].sum())!r}); return "
            f"non-negative rows that sum to 1."
        )
    return outcomes, matrix, np.zeros(len(datasets), dtype=bool)


#: Distinct exact outputs kept from the first evaluation, per block and in all: certification reads
#: exact rows from them instead of running the mechanism again (rows beyond the caps are re-run).
KEEP_PER_BLOCK = 256
KEEP_TOTAL = 65_536


class _Interned:
    """Distinct exact outputs, found by their float row first (cheap to hash) and then compared
    exactly (rows whose floats agree may differ exactly); at most ``cap`` of them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.contents: list[Distribution] = []
        self._by_floats: dict[tuple, list[int]] = {}

    def add(self, floats: tuple, dist: Distribution) -> int:
        """The id of ``dist`` (added if new), or -1 when the cap is reached."""
        same = self._by_floats.get(floats)
        if same is not None:
            for found in same:
                if self.contents[found] == dist:
                    return found
        if len(self.contents) >= self.cap:
            return -1
        self.contents.append(dist)
        self._by_floats.setdefault(floats, []).append(len(self.contents) - 1)
        return len(self.contents) - 1


def _evaluate_block(
    block: Sequence[tuple], shared: Any
) -> tuple[list, np.ndarray, np.ndarray, list[Distribution], np.ndarray, dict[int, Any] | None]:
    """One block: ``(outcomes in order of first appearance, float64 rows, exact flags, kept exact
    outputs, the kept output of each row or -1, the unexplored mass of each row that has some or
    None)``."""
    mechanism = shared["mechanism"]
    if getattr(mechanism, "distributions", None) is not None:
        outcomes, floats, flags = _vectorised(mechanism, block)
        return outcomes, floats, flags, [], np.full(len(flags), -1, dtype=np.int32), None
    # The global generators are read once per block (a draw anywhere in it moves them), in full (2 x 35 us a
    # block: numpy's cached Gaussian too); after a draw (or another thread's) the block runs again with each
    # dataset checked, which names it.
    before = global_states(full=True)
    try:
        found = _block_rows(block, lambda dataset: as_distribution(_called(mechanism, _name(mechanism), dataset),
                                                                   dataset))
    except DpverifyError:
        if not changed_generators(before):
            raise
    else:
        if not changed_generators(before):
            return found
    return _block_rows(block, lambda dataset: call_mechanism(mechanism, dataset))


def _block_rows(
    block: Sequence[tuple], evaluate: Callable[[tuple], Distribution]
) -> tuple[list, np.ndarray, np.ndarray, list[Distribution], np.ndarray, dict[int, Any] | None]:
    """The rows of :func:`_evaluate_block` for a plain mechanism, each dataset's output ``evaluate(dataset)``."""
    index: dict[Hashable, int] = {}
    rows: list[list[tuple[int, float]]] = []
    exact = []
    kept = _Interned(KEEP_PER_BLOCK)
    ids = np.full(len(block), -1, dtype=np.int32)
    tails: dict[int, Any] = {}
    for i, dataset in enumerate(block):
        dist = evaluate(dataset)
        if dist.unexplored != 0:
            tails[i] = dist.unexplored
        row = []
        for outcome, probability in dist.items():
            column = index.setdefault(outcome, len(index))
            row.append((column, float(probability)))
        rows.append(row)
        exact.append(dist.is_exact)
        if dist.is_exact:
            ids[i] = kept.add(tuple(row), dist)
    matrix = np.zeros((len(rows), len(index)))
    for i, row in enumerate(rows):
        for column, probability in row:
            matrix[i, column] = probability
    return list(index), matrix, np.array(exact, dtype=bool), kept.contents, ids, tails or None


def merged_tails(total: int, parts: Sequence[tuple[int, dict[int, Any] | None]]) -> np.ndarray | None:
    """The blocks' unexplored masses (each block's ``{row: mass}`` with its first global row) as one
    array of every row's mass (exact values, 0 where none), or None when no row has any."""
    if all(tails is None for _, tails in parts):
        return None
    merged = np.zeros(total, dtype=object)
    for start, tails in parts:
        for row, mass in (tails or {}).items():
            merged[start + row] = mass
    return merged


@dataclass(frozen=True)
class KeptRows:
    """Exact outputs kept from the first evaluation: row ``i``'s is ``contents[ids[i]]`` (-1: not kept)."""

    contents: list[Distribution]
    ids: np.ndarray

    def get(self, row: int) -> Distribution | None:
        found = int(self.ids[row])
        return None if found < 0 else self.contents[found]


def evaluate_blocks(
    mechanism: Any, datasets: Sequence[tuple], runner: Any, progress: Callable[[int, int], None] | None = None
) -> tuple[list, np.ndarray, np.ndarray, KeptRows, np.ndarray | None]:
    """Every dataset's output row, evaluated in blocks on ``runner`` and merged in block order.

    Returns:
        ``(outcomes, matrix, is_exact, kept, unexplored)``: outcome labels in order of first
        appearance, the float64 matrix (one row per dataset, the explored masses), whether each
        row's values were exact, the distinct exact outputs kept (up to :data:`KEEP_PER_BLOCK` per
        block, :data:`KEEP_TOTAL` in all) for certification, and every row's unexplored mass
        (:func:`merged_tails`; None when no output has any).
    """
    from dpverify.parallel.executors import Shared

    total = len(datasets)
    size = _BLOCK if not runner.parallel else max(256, min(_BLOCK * 4, -(-total // (8 * runner.workers))))
    bounds = [(start, min(start + size, total)) for start in range(0, total, size)]
    done = [0]

    def finished(index: int) -> None:
        done[0] += bounds[index][1] - bounds[index][0]
        if progress is not None:
            progress(done[0], total)

    blocks = [datasets[start:stop] for start, stop in bounds]
    parts = runner.map(_evaluate_block, blocks, Shared({}, {"mechanism": mechanism}), finished)
    outcome_index: dict[Hashable, int] = {}
    for outcomes, *_ in parts:
        for outcome in outcomes:
            outcome_index.setdefault(outcome, len(outcome_index))
    matrix = np.zeros((total, len(outcome_index)))
    exact = np.zeros(total, dtype=bool)
    kept = _Interned(KEEP_TOTAL)
    ids = np.full(total, -1, dtype=np.int32)
    for (start, stop), (outcomes, rows, flags, contents, local, _) in zip(bounds, parts):
        columns = np.array([outcome_index[o] for o in outcomes], dtype=np.int64)
        if columns.size and columns[-1] == columns.size - 1 and (columns == np.arange(columns.size)).all():
            matrix[start:stop, : columns.size] = rows  # the first columns in order: a copy, no fancy index
        elif columns.size:
            matrix[start:stop, columns] = rows
        exact[start:stop] = flags
        if contents:
            first = {int(i): row for row, i in zip(range(stop - start), local.tolist()) if i >= 0}  # one row per id
            merged = np.array([
                kept.add(tuple(sorted((k, v) for k, v in zip(columns.tolist(), rows[first[i]].tolist()) if v != 0)),
                         content)
                for i, content in enumerate(contents)
            ], dtype=np.int32)
            ids[start:stop] = np.where(local >= 0, merged[np.maximum(local, 0)], -1)
    tails = merged_tails(total, [(start, part[5]) for (start, _), part in zip(bounds, parts)])
    return list(outcome_index), matrix, exact, KeptRows(kept.contents, ids), tails


class EvaluatedDistributions(Sequence):
    """``distributions[i]``: the mechanism's validated output on ``datasets[i]``: the exact output
    kept from the first evaluation (``kept``), else computed when asked (and kept): certification
    reads only the rows of its candidate pairs.

    Given the float ``matrix`` of the first evaluation (columns ``outcomes``), every row computed
    here is a *second* call on its dataset and is compared with the first: a mechanism whose two
    outputs differ (beyond the rounding ``relative`` of float rows; exact rows exactly) raises
    :class:`NondeterministicMechanism`. :meth:`recheck` runs that comparison on the rows it is
    given (kept ones included).
    """

    def __init__(
        self, mechanism: Any, datasets: Sequence[tuple], *, matrix: np.ndarray | None = None,
        outcomes: Sequence[Hashable] | None = None, relative: float = 0.0, is_exact: np.ndarray | None = None,
        kept: KeptRows | None = None, unexplored: np.ndarray | None = None,
    ) -> None:
        self._kept = kept
        self._mechanism = mechanism
        self._datasets = datasets
        self._cache: dict[int, Distribution] = {}
        self._matrix = matrix
        self._columns = None if outcomes is None else {o: k for k, o in enumerate(outcomes)}
        self._relative = relative
        self._is_exact = is_exact
        self._unexplored = unexplored
        self.rechecked = 0

    def __len__(self) -> int:
        return len(self._datasets)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        found = self._cache.get(index)
        if found is None:
            found = self._kept.get(index) if self._kept is not None else None
            if found is None:
                found = self._again(index)
        return found

    def _again(self, index: int) -> Distribution:
        found = self._cache[index] = call_mechanism(self._mechanism, self._datasets[index])
        self._compare(index, found)
        return found

    def _compare(self, index: int, second: Distribution) -> None:
        if self._matrix is None or self._columns is None:
            return
        self.rechecked += 1
        row = self._matrix[index]
        first = {o: float(row[k]) for o, k in self._columns.items() if row[k] != 0}
        same = set(first) == {o for o, p in second.items() if float(p) != 0}
        exact = second.is_exact and self._is_exact is not None and bool(self._is_exact[index])
        relative = 0.0 if exact else self._relative  # one exact value has one float
        if same:
            for o, p in second.items():
                value, before = float(p), first.get(o, 0.0)
                if abs(value - before) > relative * max(abs(value), abs(before)):
                    same = False
                    break
        seen = 0 if self._unexplored is None else self._unexplored[index]
        if same and (seen != 0 or second.unexplored != 0):  # the unexplored mass the verdict counted
            value, before = float(second.unexplored), float(seen)
            same = bool(second.unexplored == seen) if exact else abs(value - before) <= relative * max(value, before)
        if not same:
            if seen != 0:
                first["(unexplored)"] = float(seen)
            raise nondeterministic(self._mechanism, self._datasets[index], first, second)

    def recheck(self, indices: Any) -> int:
        """Evaluate the rows ``indices`` a second time (those not yet re-evaluated) and compare
        them with the first evaluation; returns how many rows have been re-evaluated in all."""
        for index in indices:
            if int(index) not in self._cache:
                self._again(int(index))
        return self.rechecked


def measure_rate(mechanism: Any, datasets: Sequence[tuple], outcomes_hint: int = 4, budget: float = 0.3) -> tuple[float, float]:
    """Seconds per dataset (running the mechanism on the first datasets for at most ``budget``
    seconds: at most 1,000 calls, or four blocks of :data:`_RATE_BLOCK` when it is vectorised, as a
    real run calls it) and
    seconds per pair (the numpy sweep of every replace-one pair of ``8**5`` random rows within a
    factor 1.5 of each other, as a private mechanism's rows are: few pairs near the claim; the best
    of two), on one core. Both are what a large run pays per item, not per call: measured on a few
    hundred items, a vectorised mechanism's or the sweep's per-call overhead made an n = 8 run look
    ten times longer than it took."""
    from dpverify.finite.pair_sources import SubstitutePairs
    from dpverify.verdict.engine import RowPairs, sweep

    started, count, width = time.perf_counter(), 0, outcomes_hint
    vector = getattr(mechanism, "distributions", None)
    most = min(len(datasets), 4 * _RATE_BLOCK if vector is not None else 1000)
    while count < most and time.perf_counter() - started < budget:
        if vector is not None:  # a slice of ordered datasets stays lazy, as in a real run
            block = datasets[count : count + _RATE_BLOCK]
            width = max(width, len(_vectorised(mechanism, block)[0]))
            count += len(block)
        else:
            dataset = datasets[count]
            width = max(width, len(call_mechanism(mechanism, dataset)))
            count += 1
    per_dataset = (time.perf_counter() - started) / max(count, 1)
    source = SubstitutePairs(8, 5)
    rows = np.random.default_rng(0).uniform(1.0, 1.5, size=(8**5, width))
    rows /= rows.sum(axis=1, keepdims=True)
    seconds = math.inf
    for _ in range(2):
        started = time.perf_counter()
        sweep(RowPairs(rows, None, None, source=source), 1.0, claim_delta=0.0)
        seconds = min(seconds, time.perf_counter() - started)
    return per_dataset, seconds / len(source)


#: Datasets per call of a vectorised mechanism when :func:`measure_rate` times it.
_RATE_BLOCK = 4096


def check_size(
    mechanism: Any, rel: Any, universe: Sequence[Hashable], n: int, declared: bool, max_pairs: int,
    runner: Any,
) -> None:
    """:func:`check_enumeration_size`, its refusal saying how long the run would take at the rate
    measured on this machine (the mechanism on a few datasets, the sweep on random pairs)."""
    from dpverify.errors import EnumerationTooLarge
    from dpverify.finite.neighbors import check_enumeration_size

    try:
        check_enumeration_size(rel, len(universe), n, exchangeable=declared, max_pairs=max_pairs)
    except EnumerationTooLarge as error:
        from dpverify.finite.pair_sources import OrderedDatasets
        from dpverify.parallel.progress import format_seconds

        pairs = rel.count(len(universe), n, exchangeable=declared)
        if declared or rel.name == "add_remove":
            datasets = 2 * pairs  # at most two new datasets per pair; only an estimate
            sample: Sequence[tuple] = [tuple(sorted(d)) for d in OrderedDatasets(universe, n)[:64]]
        else:
            datasets = len(universe) ** n
            sample = OrderedDatasets(universe, n)
        per_dataset, per_pair = measure_rate(mechanism, sample)
        seconds = datasets * per_dataset + pairs * per_pair
        workers = "" if runner.workers == 1 else f", about {format_seconds(seconds / runner.workers)} on {runner.workers} workers"
        raise EnumerationTooLarge(
            f"{error} At the rate measured here ({per_dataset * 1e6:.3g} us per dataset, {per_pair * 1e9:.3g} ns "
            f"per pair on one core) the run would take about {format_seconds(seconds)}{workers}."
        ) from None
