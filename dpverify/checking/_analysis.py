"""The evaluation stage: an instance's every dataset run through the mechanism, ready for the engine.

An instance is a record universe, a dataset size ``n`` and a neighbour relation; :func:`evaluate_instance`
turns it and a mechanism into an :class:`Analysis`, in one pass from top to bottom:

1. the enumeration's size, refused beyond ``max_pairs`` with the time the run would take
   (:func:`~dpverify.checking._evaluation.check_size`);
2. every dataset evaluated (:mod:`dpverify.checking._evaluation`): the float64 matrix, which rows
   were exact, the exact outputs kept for certification and every row's unexplored mass -- or, for a
   large black-box replace-one instance, row blocks (:mod:`dpverify.checking._blocks`) evaluated
   where they are swept;
3. a declared exchangeability tested against the run's own rows, every ordering compared with the
   output on its multiset (:mod:`dpverify.checking._symmetry`); a refuted declaration sends the run
   to every ordered dataset, whose rows must repeat the outputs the refutation saw (a mechanism
   answering one dataset two ways is nondeterministic, not order-dependent);
4. the pairs enumerated held against the relation's own count.

The checker (:mod:`dpverify.checking.checker`) then hands the analysis to the engine as
:func:`certifiable` rows: every row with its float error, and a mechanism's ``exact_distribution``
in place of its floats where it has one (each exact row held against its float row); the result
reports the largest row error (:func:`decision_error`). The analysis's own measurements (eps*,
delta(eps), stability) are the engine's sweep on its rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify.checking._blocks import BlockPlan, LazyRows, block_plan_for, outline
from dpverify.checking._evaluation import (
    EvaluatedDistributions,
    call_mechanism,
    check_float_row,
    check_size,
    evaluate_blocks,
    nondeterministic,
    same_distribution,
)
from dpverify.checking._symmetry import MIN_SYMMETRY_BUDGET, SymmetryCheck, check_declaration
from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.neighbors import NeighborRelation, PairSet
from dpverify.parallel.progress import Progress
from dpverify.verdict.assumptions import new_seed
from dpverify.verdict.engine import RowPairs, float_error_of, sweep
from dpverify.verdict.results import SymmetryViolation

__all__ = ["Analysis", "evaluate_instance", "certifiable", "decision_error"]

_CHUNK = 65_536
#: The sweep's cost per pair used to price a run (measured: 0.1-0.3 us per pair, benchmarks/).
_SECONDS_PER_PAIR = 2e-7


@dataclass
class Analysis:
    """Every neighbouring pair of an instance with the mechanism's output on each dataset.

    ``matrix[i, k]`` is the float64 probability of outcome ``outcomes[k]`` on ``pairs.datasets[i]``;
    ``distributions[i]`` gives the exact values for certification (computed when asked);
    ``is_exact[i]`` whether row ``i`` was exact. Every figure comes from the engine's one sweep
    (:func:`dpverify.verdict.engine.sweep`), run on ``executor`` (a :class:`~dpverify.parallel.executors.Runner`, None
    for serial) with ``progress(pairs_done, pairs_total)``.
    """

    pairs: PairSet
    outcomes: list
    distributions: Sequence[Distribution]
    matrix: np.ndarray
    exchangeable: bool
    symmetry_violation: SymmetryViolation | None = None
    relation: NeighborRelation | None = None
    expected_pairs: int | None = None
    is_exact: np.ndarray | None = None
    executor: Any = None
    progress: Callable[[int, int], None] | None = None
    symmetry: SymmetryCheck | None = None
    seed: int | None = None
    blocks: Any = None  # a BlockPlan: swept in row blocks, ``matrix`` a LazyRows (dpverify.checking._blocks)
    unexplored: np.ndarray | None = None  # every row's unexplored mass (exact values), None when none has any
    declared: frozenset | None = None  # the outputs that mass may fall on (from_sampler(..., outputs=))
    _rows: RowPairs | None = field(default=None, repr=False)
    _epsilons: np.ndarray | None = field(default=None, repr=False)

    def row_pairs(self, *, exact_row: Callable[[int], Any] | None = None, row_error: Any = None) -> RowPairs:
        """The instance as the engine's :class:`~dpverify.verdict.engine.RowPairs` (datasets as labels,
        witnesses checked against the relation, the pair count against the relation's count)."""
        rel = self.relation
        is_neighbor = None
        if rel is not None and type(rel).is_neighbor is not NeighborRelation.is_neighbor:
            exchangeable = self.exchangeable

            def is_neighbor(a: tuple, b: tuple) -> bool:
                return rel.is_neighbor(a, b, exchangeable=exchangeable)

        datasets = self.pairs.datasets
        rows = RowPairs(
            self.matrix, None, None, source=self.pairs.source, outcomes=self.outcomes,
            exact_row=exact_row or self.distributions.__getitem__, row_error=row_error,
            label=datasets.__getitem__, is_neighbor=is_neighbor, expected_pairs=self.expected_pairs,
            executor=self.executor, progress=self.progress, unexplored=self.unexplored,
            declared=self.declared if self.unexplored is not None else None,
        )
        if exact_row is None and row_error is None and self._rows is not None:
            return self._rows
        if exact_row is None and row_error is None:
            self._rows = rows
        return rows

    def _complete(self, what: str) -> None:
        """Refuse a measurement on outputs with unexplored mass (its figure is not known, only bounded)."""
        if self.unexplored is not None:
            from dpverify.verdict._unexplored import largest

            raise InvalidArgument(
                f"{what} needs the mechanism's whole outputs, and they leave up to {largest(self.unexplored):.3g} of "
                "their mass unexplored (on any outcome); decide a claim with verify(), which accounts for it, or "
                "explore further (from_sampler(..., tail=smaller), or tail=0 where the randomness is finite)."
            )

    def pair_epsilons(self) -> np.ndarray:
        """Symmetric pure eps* of every pair (float64, ``inf`` for P > 0 = Q)."""
        self._complete("pair_epsilons()")
        if self._epsilons is None:
            out = np.empty(len(self.pairs))
            logs = self.row_pairs().logs
            with np.errstate(invalid="ignore"):
                for start in range(0, len(self.pairs), _CHUNK):
                    a, b = self.pairs.source.chunk(start, start + _CHUNK)
                    la, lb = logs[a], logs[b]
                    forward = np.where(self.matrix[a] > 0, la - lb, -np.inf)
                    backward = np.where(self.matrix[b] > 0, lb - la, -np.inf)
                    out[start : start + a.size] = np.maximum(forward.max(axis=1), backward.max(axis=1))
            out[np.isnan(out)] = np.inf
            self._epsilons = np.maximum(out, 0.0)
        return self._epsilons

    def epsilon_star(self) -> float:
        """Worst-case pure privacy loss over all pairs."""
        self._complete("epsilon_star()")
        return sweep(self.row_pairs(), with_delta=False).epsilon_star

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Worst-case delta(eps) over all pairs (float64)."""
        self._complete("delta_for_epsilon()")
        return sweep(self.row_pairs(), float(epsilon)).delta_star

    def profile(self, epsilons: Sequence[float]) -> list[float]:
        """The worst-case privacy profile eps -> delta(eps) at the given points."""
        return [self.delta_for_epsilon(e) for e in epsilons]

    def stability(self) -> float:
        """Worst-case additive stability ``max |P(o) - Q(o)|`` over pairs and outcomes."""
        self._complete("stability()")
        return sweep(self.row_pairs(), with_delta=False, with_stability=True).stability


def evaluate_instance(
    mechanism: Any, rel: NeighborRelation, universe: Sequence[Hashable], n: int, *, declared: bool, max_pairs: int,
    runner: Any, evaluator: Any, meter: Progress, seed: int | None, samples: int | None, blocks: bool,
) -> Analysis:
    """Every dataset of every neighbouring pair evaluated (the module docstring's four steps).

    Args:
        mechanism: the checked callable (its arguments checked by the caller).
        rel: the neighbour relation; ``universe`` the records, ``n`` the dataset size.
        declared: whether the mechanism is declared exchangeable (checked over multisets once the
            declaration is tested).
        max_pairs: the largest enumeration accepted.
        runner: the open executor; ``evaluator`` the runner the mechanism can travel to
            (:func:`~dpverify.parallel.executors.check_picklable`: ``runner`` itself, or a serial one).
        meter: the run's progress (a stage for the datasets, then one for the pairs).
        seed: the seed of the random tests (None: a fresh one, kept in the analysis).
        samples: test an unprovable declaration on exactly this many random datasets (None: a budget).
        blocks: a DP claim the engine decides itself, so that a large instance may run in row blocks.

    Returns:
        The :class:`Analysis`, on ``runner`` with the pairs' progress stage.

    Raises:
        EnumerationTooLarge: more than ``max_pairs`` pairs.
        MechanismError: the mechanism raised on a dataset.
        NondeterministicMechanism: the mechanism returned two distributions for one dataset.
    """
    name = getattr(mechanism, "__name__", type(mechanism).__name__)
    seed = new_seed(seed)
    blocks = blocks and evaluator is runner  # (a mechanism that cannot travel to the workers: whole matrix)
    rows = _rows(mechanism, rel, universe, n, declared, max_pairs, runner, evaluator, meter, name, blocks)
    symmetry = None
    if declared:
        # proving the declaration may cost what the run costs (at least MIN_SYMMETRY_BUDGET seconds);
        # every ordering is compared with the run's own output on its multiset
        budget = max(MIN_SYMMETRY_BUDGET, rows.seconds + len(rows.pairs) * _SECONDS_PER_PAIR)
        sizes = [n, n - 1] if rel.name == "add_remove" and n > 1 else [n]
        symmetry = check_declaration(mechanism, universe, sizes, budget=budget, seed=seed, relative=rows.relative,
                                     reference=rows.output, samples=samples)
        if symmetry.violation is not None:
            declared = False
            rows = _rows(mechanism, rel, universe, n, declared, max_pairs, runner, evaluator, meter, name, blocks,
                         deferred=False)
            _same_as_the_refutation(mechanism, symmetry.violation, rows.output, rows.relative)
    pairs = rows.pairs
    expected = rel.count(len(universe), n, exchangeable=declared)
    if len(pairs) != expected:  # invariant: the enumeration matches the relation's own count
        raise AssertionError(
            f"internal error: {len(pairs):,} {rel.name} pairs enumerated, {expected:,} counted "
            f"({len(universe)} records, n={n}, exchangeable={declared})"
        )
    sweep_report = meter.stage(f"checking {name}", len(pairs), "pairs")
    return Analysis(
        pairs, rows.outcomes, rows.distributions, rows.matrix, declared,
        None if symmetry is None else symmetry.violation, rel, expected, rows.is_exact, runner, sweep_report, symmetry,
        seed, rows.plan, rows.unexplored, declared_outputs(mechanism),
    )


def declared_outputs(mechanism: Any) -> frozenset | None:
    """The outputs a :func:`~dpverify.from_sampler` mechanism's author declared (``outputs=``), else None."""
    found = getattr(mechanism, "declared_outputs", None)
    return found if isinstance(found, frozenset) else None


@dataclass(frozen=True)
class _Rows:
    """One evaluation of every dataset of the enumeration (:func:`_rows`)."""

    pairs: PairSet
    outcomes: list
    matrix: Any  # the float64 matrix, or in row blocks a LazyRows
    is_exact: np.ndarray | None  # None until the first pass of deferred row blocks
    distributions: Any  # an EvaluatedDistributions; None as is_exact
    plan: BlockPlan | None
    unexplored: np.ndarray | None  # every row's unexplored mass (exact values), None when none has any
    relative: float  # how far two evaluations of one float output may differ: twice its float error (0 deferred)
    seconds: float  # what the evaluation took

    def output(self, dataset: tuple) -> Distribution:
        """The run's output on ``dataset`` (one of the enumeration): the exact output kept from the first
        evaluation, else evaluated a second time and compared with the first (see
        :class:`~dpverify.checking._evaluation.EvaluatedDistributions`)."""
        assert self.distributions is not None, "internal error: deferred row blocks have no outputs yet"
        return self.distributions[self.pairs.position(dataset)]


def _rows(
    mechanism: Any, rel: NeighborRelation, universe: Sequence[Hashable], n: int, declared: bool, max_pairs: int,
    runner: Any, evaluator: Any, meter: Progress, name: str, blocks: bool, deferred: bool = True,
) -> _Rows:
    """The enumeration's size checked, then every dataset evaluated: the matrix, or with ``blocks`` on a
    large black-box replace-one instance a :class:`~dpverify.checking._blocks.LazyRows` for the matrix and,
    ``deferred``, nothing else: the rows are evaluated block by block where they are swept
    (:mod:`dpverify.checking._blocks`), the outcome columns and exact flags by the first of those passes;
    not ``deferred`` (they are needed at once), the outcome columns and exact flags by a pass of their own
    (:func:`~dpverify.checking._blocks.outline`). Row blocks refuse outputs with unexplored mass."""
    check_size(mechanism, rel, universe, n, declared, max_pairs, runner)
    started = time.perf_counter()
    pairs = rel.pairs(universe, n, exchangeable=declared)
    report = meter.stage(f"evaluating {name}", len(pairs.datasets), "datasets")
    plan = block_plan_for(pairs, evaluator) if blocks and not declared else None
    matrix: Any
    if plan is None:
        outcomes, matrix, exact, kept, tails = evaluate_blocks(mechanism, pairs.datasets, evaluator, report)
    elif deferred:  # evaluated where it is swept, the first pass with the lowest group
        lazy = LazyRows(mechanism, pairs.datasets, [])
        return _Rows(pairs, [], lazy, is_exact=None, distributions=None, plan=plan, unexplored=None, relative=0.0,
                     seconds=time.perf_counter() - started)
    else:
        outcomes, exact, kept = outline(mechanism, pairs.datasets, evaluator, report)
        matrix, tails = LazyRows(mechanism, pairs.datasets, outcomes), None
    relative = 2 * float_error_of(mechanism)
    distributions = EvaluatedDistributions(
        mechanism, pairs.datasets, matrix=matrix, outcomes=outcomes, is_exact=exact, relative=relative, kept=kept,
        unexplored=tails,
    )
    return _Rows(pairs, outcomes, matrix, is_exact=exact, distributions=distributions, plan=plan, unexplored=tails,
                 relative=relative, seconds=time.perf_counter() - started)


def _same_as_the_refutation(
    mechanism: Any, violation: SymmetryViolation, output: Callable[[tuple], Distribution], relative: float
) -> None:
    """The black-box run's outputs on the two orderings that refuted the declaration must be those
    the refutation saw: otherwise the mechanism answered one dataset two ways, and the "refutation"
    (and any verdict built on the black-box rows) may be nondeterminism, not an order dependence.
    Found by the differential fuzz: a mechanism answering at random was refuted by one draw, then
    evaluated as a black box with other draws, and a VIOLATED came back."""
    for dataset, seen in ((violation.dataset, violation.first), (violation.permuted, violation.second)):
        now = output(tuple(dataset))
        if not same_distribution(seen, now, relative):
            raise nondeterministic(mechanism, tuple(dataset), seen, now)


def certifiable(analysis: Analysis, mechanism: Any, declared: float | None) -> RowPairs:
    """The analysis as engine input; a mechanism's ``exact_distribution(dataset)`` (exact values)
    replaces its float outputs in certification."""
    exact_of = getattr(mechanism, "exact_distribution", None)
    if exact_of is None:
        return analysis.row_pairs(row_error=_row_errors(analysis, mechanism, declared))
    datasets = analysis.pairs.datasets
    rho = float_error_of(mechanism) if declared is None else declared
    columns = {o: k for k, o in enumerate(analysis.outcomes)}

    converted: dict[int, tuple[Any, np.ndarray | None]] = {}  # see check_float_row

    def exact_row(index: int) -> Distribution:
        exact = call_mechanism(mechanism, datasets[index], "exact_distribution")
        tail = None if analysis.unexplored is None else analysis.unexplored[index]
        check_float_row(mechanism, datasets[index], analysis.matrix[index], columns, exact, rho, converted, tail)
        return exact

    rows = analysis.row_pairs(exact_row=exact_row, row_error=0.0)
    rows.matrix_error = rho  # the floats that choose the pairs to certify carry their rounding
    return rows


def _row_errors(analysis: Analysis, mechanism: Any, declared: float | None) -> np.ndarray | float:
    """Relative error per row: 0 for exact rows (or with ``exact_distribution``), else the
    declared / mechanism's / default float error (see :mod:`dpverify.verdict.engine`)."""
    if getattr(mechanism, "exact_distribution", None) is not None:
        return 0.0
    value = float_error_of(mechanism) if declared is None else declared
    if analysis.is_exact is None:
        return np.array([0.0 if d.is_exact else value for d in analysis.distributions])
    return np.where(analysis.is_exact, 0.0, value)


def decision_error(analysis: Analysis, mechanism: Any, declared: float | None) -> float:
    """The largest relative error of a row the engine decided on (the result's ``float_error``)."""
    if getattr(mechanism, "exact_distribution", None) is None and analysis.is_exact is not None:
        # the largest row error without an array of every row's (134 MB at 16.8 M datasets)
        value = float_error_of(mechanism) if declared is None else declared
        return 0.0 if bool(np.all(analysis.is_exact)) else float(value)
    errors = _row_errors(analysis, mechanism, declared)
    return float(np.max(errors)) if np.ndim(errors) else float(errors)
