"""Exhaustive verification of differential-privacy claims: ``verify`` and ``analyze``.

``verify(mechanism, records=, n=, epsilon=, delta=, neighbors=)`` enumerates every neighbouring
pair of datasets of size ``n`` over the record universe, computes each mechanism output exactly
(the mechanism returns its distribution), and decides whether
``P(S) <= e^eps Q(S) + delta`` holds for every pair, both directions and every output set S.

How the numbers are made sound: every verdict comes from the one engine,
:func:`dpverify.verdict.engine.decide` — a vectorised float64 sweep over all pairs, interval certification
(mpmath, then sympy for exact ties) of every pair within the rounding margin of the claim, and an
explicit state: HOLDS, HOLDS_WITHIN_ROUNDING, VIOLATED or UNDECIDED (see :mod:`dpverify.verdict.engine`
for the float error model). Exact probabilities carry no error; float probabilities carry the
mechanism's declared ``float_relative_error`` (default ``DEFAULT_FLOAT_ERROR``), unless the
mechanism offers ``exact_distribution(dataset)``, whose exact values certification then uses.
Every witness is checked to be a neighbour pair under the relation, and the enumerated pair count
against the relation's own count.

Structure: a plain callable is a black box (every ordered dataset, every neighbour). A mechanism
declared exchangeable (``@dpverify.exchangeable`` or ``verify(..., exchangeable=True)``) is
checked over multiset pairs, after its declaration has been tested on random datasets and random
permutations; a mechanism that lies about it is reported (``result.symmetry_violation``) and
checked as a black box instead.

Outputs with unexplored mass (``Distribution(..., unexplored=m)``: a sampler enumerated up to a
tolerance) carry it to the engine, which decides on it soundly (:mod:`dpverify.verdict._unexplored`):
the verdict may then be UNDECIDED with the reason and the fix, the figures are those of the explored
outputs and ``result.unexplored`` says so. :class:`Analysis`'s measurements (eps*, delta(eps),
stability), which need the whole outputs, refuse such rows.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpverify.checking._blocks import BlockPlan, LazyRows, block_plan_for, decide_in_blocks, outline
from dpverify.checking._evaluation import (
    EvaluatedDistributions,
    KeptRows,
    call_mechanism,
    check_size,
    evaluate_blocks,
    nondeterministic,
    same_distribution,
)
from dpverify.checking._symmetry import (
    MIN_SYMMETRY_BUDGET,
    SymmetryCheck,
    check_exchangeable,
    evaluate,
    exchangeability_check,
    exchangeable,
)
from dpverify.errors import InvalidArgument, MechanismError
from dpverify.finite.distribution import Distribution
from dpverify.finite.neighbors import NeighborRelation, PairSet, relation
from dpverify.finite.records import check_records
from dpverify.parallel.executors import check_picklable, open_executor
from dpverify.parallel.progress import Progress
from dpverify.types import ExecutorSpec, Number
from dpverify.validation import check_callable, check_integer
from dpverify.verdict.assumptions import Assumption, Status, new_seed, settle
from dpverify.verdict.claims import Claim, claim_from_arguments
from dpverify.verdict.engine import RowPairs, Verdict, Witness, check_float_error, float_error_of, sweep, unexplored_of
from dpverify.verdict.privacy_loss import profile_grid
from dpverify.verdict.results import SymmetryViolation, VerificationResult

__all__ = [
    "verify_datasets",
    "analyze",
    "exchangeable",
    "Analysis",
    "VerificationResult",
    "Witness",
    "Verdict",
    "SymmetryViolation",
    "check_exchangeable",
    "evaluate",
    "DEFAULT_MAX_PAIRS",
]

DEFAULT_MAX_PAIRS = 5_000_000
_CHUNK = 65_536
#: Datasets evaluated a second time (beyond every certified and witness dataset) to catch a
#: mechanism that returns samples instead of its distribution.
DETERMINISM_SAMPLE = 64
#: The sweep's cost per pair used to price a run (measured: 0.1-0.3 us per pair, benchmarks/).
_SECONDS_PER_PAIR = 2e-7
# Outcomes of any hashable type: Mapping is invariant in its key, so Mapping[Hashable, Any] would
# refuse a function annotated to return dict[int, Fraction].
Mechanism = Callable[[tuple], Mapping[Any, Any]]


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


def _validate_n(n: Any) -> None:
    check_integer("n", n, at_least=1, fix="n is the dataset size, e.g. n=4")


def analyze(
    mechanism: Mechanism,
    *,
    records: Sequence[Hashable],
    n: int,
    neighbors: str | NeighborRelation = "substitute",
    exchangeable: bool | str | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: bool | Callable[[str], None] = False,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    exchangeable_samples: int | None = None,
) -> Analysis:
    """Evaluate ``mechanism`` on every dataset of every neighbouring pair (no verdict).

    Args mirror :func:`verify`. Raises InvalidArgument on bad input before any work starts.
    """
    with open_executor(executor) as runner:
        analysis = _analyze(
            mechanism, records, n, neighbors, exchangeable, max_pairs, Progress(progress), runner, seed,
            exchangeable_samples,
        )
    analysis.executor = executor  # later sweeps (epsilon_star, profile) run there too
    return analysis


def _exchangeable_argument(value: Any) -> bool | None:
    """``exchangeable=``: None, True, False or ``"assume"`` (True, accepting an unproved declaration)."""
    if value is None or isinstance(value, bool) or value == "assume":
        return value if value != "assume" else True
    raise InvalidArgument(
        f"exchangeable must be None (use the mechanism's own declaration), True, False or 'assume', got "
        f"exchangeable={value!r}; 'assume' accepts the declaration where it cannot be proved on every ordering."
    )


def _analyze(
    mechanism: Mechanism, records: Sequence[Hashable], n: int, neighbors: Any, exchangeable: Any,
    max_pairs: int, meter: Progress, runner: Any, seed: int | None = None, exchangeable_samples: int | None = None,
    blocks: bool = False,
) -> Analysis:
    universe = check_records(records)
    _validate_n(n)
    rel = relation(neighbors)
    check_callable("mechanism", mechanism, fix="pass a function dataset -> distribution")
    declared_argument = _exchangeable_argument(exchangeable)
    if seed is not None:
        check_integer("seed", seed, at_least=0, fix="seed fixes the random tests; pass e.g. seed=0, or None")
    if exchangeable_samples is not None:
        check_integer("exchangeable_samples", exchangeable_samples, at_least=1,
                      fix="pass the number of random datasets to test an unprovable declaration on, e.g. 500, or None")
    evaluator = check_picklable("mechanism", mechanism, runner)
    declared = bool(getattr(mechanism, "exchangeable", False)) if declared_argument is None else declared_argument
    check_size(mechanism, rel, universe, n, declared, max_pairs, runner)
    name = getattr(mechanism, "__name__", type(mechanism).__name__)
    seed = new_seed(seed)
    started = time.perf_counter()
    blocks = blocks and evaluator is runner  # (a mechanism that cannot travel to the workers: whole matrix)
    pairs, outcomes, matrix, exact, kept, plan, tails = _evaluate(mechanism, rel, universe, n, declared, evaluator,
                                                                  meter, name, blocks)
    # (deferred row blocks: made by their first pass, decide_in_blocks)
    distributions: Any = None if exact is None else _distributions(mechanism, pairs, outcomes, matrix, exact, kept,
                                                                   tails)
    symmetry = None
    if declared:
        # proving the declaration may cost what the run costs (at least MIN_SYMMETRY_BUDGET seconds);
        # every ordering is compared with the run's own output on its multiset
        budget = max(MIN_SYMMETRY_BUDGET, time.perf_counter() - started + len(pairs) * _SECONDS_PER_PAIR)
        sizes = [n, n - 1] if rel.name == "add_remove" and n > 1 else [n]
        symmetry = _check_symmetry(mechanism, universe, sizes, budget, seed, _lookup(pairs, distributions),
                                   exchangeable_samples)
        if symmetry.violation is not None:
            declared = False
            check_size(mechanism, rel, universe, n, declared, max_pairs, runner)
            pairs, outcomes, matrix, exact, kept, plan, tails = _evaluate(mechanism, rel, universe, n, declared,
                                                                          evaluator, meter, name, blocks, deferred=False)
            distributions = _distributions(mechanism, pairs, outcomes, matrix, exact, kept, tails)
            _same_as_the_refutation(mechanism, symmetry.violation, pairs, distributions)
    expected = rel.count(len(universe), n, exchangeable=declared)
    if len(pairs) != expected:  # invariant: the enumeration matches the relation's own count
        raise AssertionError(
            f"internal error: {len(pairs):,} {rel.name} pairs enumerated, {expected:,} counted "
            f"({len(universe)} records, n={n}, exchangeable={declared})"
        )
    sweep_report = meter.stage(f"checking {name}", len(pairs), "pairs")
    return Analysis(
        pairs, outcomes, distributions, matrix, declared,
        None if symmetry is None else symmetry.violation, rel, expected, exact, runner, sweep_report, symmetry, seed,
        plan, tails,
    )


def _same_as_the_refutation(mechanism: Any, violation: Any, pairs: PairSet, distributions: Any) -> None:
    """The black-box run's outputs on the two orderings that refuted the declaration must be those
    the refutation saw: otherwise the mechanism answered one dataset two ways, and the "refutation"
    (and any verdict built on the black-box rows) may be nondeterminism, not an order dependence.
    Found by the differential fuzz: a mechanism answering at random was refuted by one draw, then
    evaluated as a black box with other draws, and a VIOLATED came back."""
    rho = 2 * float_error_of(mechanism)
    for dataset, seen in ((violation.dataset, violation.first), (violation.permuted, violation.second)):
        now = distributions[pairs.position(tuple(dataset))]
        if not same_distribution(seen, now, rho):
            raise nondeterministic(mechanism, tuple(dataset), seen, now)


def _distributions(
    mechanism: Any, pairs: PairSet, outcomes: list, matrix: Any, exact: np.ndarray, kept: KeptRows,
    tails: np.ndarray | None = None,
) -> EvaluatedDistributions:
    return EvaluatedDistributions(
        mechanism, pairs.datasets, matrix=matrix, outcomes=outcomes, is_exact=exact,
        relative=2 * float_error_of(mechanism), kept=kept, unexplored=tails,
    )


def _lookup(pairs: PairSet, distributions: EvaluatedDistributions) -> Callable[[tuple], Distribution]:
    """The run's output on a multiset (a dataset of the multiset enumeration): the exact output
    kept from the first evaluation, else evaluated a second time and compared with the first (see
    :class:`~dpverify.checking._evaluation.EvaluatedDistributions`)."""

    def output(multiset: tuple) -> Distribution:
        return distributions[pairs.position(multiset)]

    return output


def _evaluate(
    mechanism: Any, rel: NeighborRelation, universe: Sequence[Hashable], n: int, declared: bool, evaluator: Any,
    meter: Progress, name: str, blocks: bool = False, deferred: bool = True,
) -> tuple[PairSet, list, Any, Any, Any, BlockPlan | None, np.ndarray | None]:
    """Every dataset evaluated: the matrix, or with ``blocks`` on a large black-box replace-one
    instance a :class:`LazyRows` for the matrix and, ``deferred``, nothing else: the rows are evaluated
    block by block where they are swept (:mod:`dpverify.checking._blocks`), the outcome columns and
    exact flags by the first of those passes; not ``deferred`` (they are needed at once), the outcome
    columns and exact flags by a pass of their own (:func:`~dpverify.checking._blocks.outline`). The last
    item is every row's unexplored mass (None when none has any; row blocks refuse outputs with some)."""
    pairs = rel.pairs(universe, n, exchangeable=declared)
    report = meter.stage(f"evaluating {name}", len(pairs.datasets), "datasets")
    plan = block_plan_for(pairs, evaluator) if blocks and not declared else None
    if plan is not None and deferred:  # evaluated where it is swept, the first pass with the lowest group
        return pairs, [], LazyRows(mechanism, pairs.datasets, []), None, None, plan, None
    if plan is not None:
        outcomes, exact, kept = outline(mechanism, pairs.datasets, evaluator, report)
        return pairs, outcomes, LazyRows(mechanism, pairs.datasets, outcomes), exact, kept, plan, None
    outcomes, matrix, exact, kept, tails = evaluate_blocks(mechanism, pairs.datasets, evaluator, report)
    return pairs, outcomes, matrix, exact, kept, None, tails


def _check_symmetry(
    mechanism: Any, universe: Sequence[Hashable], sizes: list[int], budget: float, seed: int,
    reference: Callable[[tuple], Distribution] | None = None, samples: int | None = None,
) -> SymmetryCheck:
    """The declaration checked at every dataset size the relation compares (one budget shared, or
    ``samples`` random datasets at each size), each ordering against ``reference`` (the run's output
    on its multiset)."""
    relative = 2 * float_error_of(mechanism)
    checks = []
    for size in sizes:
        check = exchangeability_check(mechanism, universe, size, budget=budget / len(sizes), seed=seed,
                                      relative=relative, reference=reference, samples=samples)
        checks.append(check)
        if check.violation is not None:
            return check
    return SymmetryCheck(
        None, all(c.proved for c in checks), sum(c.datasets for c in checks), sum(c.samples for c in checks), seed
    )


def verify_datasets(
    mechanism: Mechanism,
    *,
    records: Sequence[Hashable],
    n: int,
    epsilon: Number | None = None,
    delta: Number | None = None,
    neighbors: str | NeighborRelation = "substitute",
    exchangeable: bool | str | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: bool | Callable[[str], None] = False,
    float_error: float | None = None,
    claim: Claim | None = None,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    exchangeable_samples: int | None = None,
    profile: bool | Sequence[Any] | None = None,
) -> VerificationResult:
    """Check that ``mechanism`` is (epsilon, delta)-DP — or satisfies ``claim`` — on datasets of size
    ``n`` over ``records``.

    Args:
        mechanism: any callable ``dataset (tuple of records) -> Mapping[outcome, probability]``.
        records: the finite record universe (hashable, distinct).
        n: the dataset size (>= 1).
        epsilon: the claimed epsilon (>= 0); float, int, Fraction or sympy. Numbers are read by the
            one policy of :mod:`dpverify.validation`: a float is the simplest fraction that rounds
            to it (``0.1`` is 1/10) and stands for itself up to its rounding (relative 2**-50);
            exact numbers are checked exactly.
        delta: the claimed delta in [0, 1] (default: none, pure DP).
        neighbors: ``"substitute"`` (replace-one, default) or ``"add_remove"``.
        exchangeable: override the mechanism's own declaration (None: use
            ``mechanism.exchangeable`` if set, else black box). A declaration is proved on every
            ordering when that costs no more than the run (at the rate measured on the first
            orderings; at least ``MIN_SYMMETRY_BUDGET`` seconds), else tested on random datasets and
            every transposition of each, and then the verdict is UNDECIDED — unless
            ``exchangeable="assume"`` accepts it, and the result says "holds, assuming ...". A
            refuted declaration is reported (``symmetry_violation``) and every ordering checked.
        seed: the seed of the random tests (exchangeability sample, determinism sample); None
            draws a fresh one, reported as ``result.seed``.
        exchangeable_samples: test a declared exchangeability that cannot be proved on every
            ordering (more than ``EXHAUSTIVE_SYMMETRY_LIMIT`` orderings) on exactly this many random
            datasets instead of as many as the time budget allows: with ``seed`` the run, its
            verdict and its evidence then repeat exactly on any machine (reports under version
            control stay unchanged). None (default): the time budget.
        max_pairs: refuse enumerations larger than this (the error says what to lower).
        progress: True for a progress bar on stderr (datasets, then pairs, with an ETA; shown once a
            stage runs for two seconds), or a callable receiving progress lines.
        executor: where the work runs (:mod:`dpverify.parallel.executors`): None (serial, here),
            ``"processes"`` (a pool over this machine's cores), ``"dask"`` (a Dask LocalCluster
            made for the call), a ``dask.distributed.Client`` or a ``concurrent.futures.Executor``
            (neither shut down). Every executor gives the same result. A process pool needs a
            picklable mechanism (a module-level function or class instance).
        float_error: the relative error of the mechanism's float probabilities (default: its
            ``float_relative_error`` attribute, else :data:`dpverify.verdict.engine.DEFAULT_FLOAT_ERROR`);
            exact probabilities carry none.
        profile: measure the worst-case privacy profile delta(eps) on the evaluated rows too (no
            second evaluation): True at :func:`~dpverify.verdict.privacy_loss.profile_grid` points, or the
            eps values; ``result.profile``. Refused on outputs with unexplored mass.
        claim: instead of ``epsilon=``/``delta=``, a claim value: :class:`~dpverify.verdict.claims.PureDp`,
            :class:`~dpverify.verdict.claims.ApproximateDp`, :class:`~dpverify.verdict.claims.Stability` or
            :class:`~dpverify.verdict.claims.PredictionDp` (passing both forms is an InvalidArgument).

    Returns:
        A :class:`VerificationResult` with its :class:`Verdict`; ``holds`` passes on HOLDS and
        HOLDS_WITHIN_ROUNDING, ``witness`` is certified when VIOLATED.

    Raises:
        InvalidArgument: bad input (checked before any work starts).
        EnumerationTooLarge: more than ``max_pairs`` pairs.
        MechanismError: the mechanism raised on a dataset (named; the original chained).
        NondeterministicMechanism: the mechanism returned two distributions for one dataset.
    """
    claimed = claim_from_arguments(claim, epsilon, delta)
    accept = exchangeable == "assume"
    declared_error = None if float_error is None else check_float_error(float_error)
    started = time.perf_counter()
    meter = Progress(progress)
    with open_executor(executor) as runner:
        # a DP claim about the outputs themselves, decided as the engine decides (row blocks run the
        # engine's own decide; a claim with its own decide or project gets the whole matrix)
        blocks = type(claimed).project is Claim.project and type(claimed).decide is Claim.decide
        analysis = _analyze(mechanism, records, n, neighbors, exchangeable, max_pairs, meter, runner, seed,
                            exchangeable_samples, blocks)
        try:
            decision = _decide(claimed, analysis, mechanism, declared_error)
            decision, refuted = _ordered_witness(analysis, decision, claimed, mechanism, declared_error)
            if refuted is not None:  # the witness's orderings disagree: every ordered dataset decides
                analysis = _analyze(mechanism, records, n, neighbors, False, max_pairs, meter, runner, analysis.seed,
                                    blocks=blocks)
                analysis.symmetry, analysis.symmetry_violation = refuted, refuted.violation
                decision = _decide(claimed, analysis, mechanism, declared_error)
            measured = _profile(analysis, profile, decision.epsilon_star, claimed)
        finally:
            meter.close()
        analysis.executor = None
    rechecked = _recheck(analysis, decision)
    assumptions = _assumptions(analysis, accept)
    verdict = settle(decision.verdict, assumptions)
    return VerificationResult(
        holds=verdict.passes,
        epsilon=decision.epsilon_star,
        delta=decision.delta_star,
        witness=decision.witness,
        claimed_epsilon=claimed.claimed_epsilon,
        claimed_delta=claimed.claimed_delta,
        neighbors=relation(neighbors).name,
        pairs=len(analysis.pairs),
        datasets=len(analysis.pairs.datasets),
        exchangeable=analysis.exchangeable,
        certified_pairs=decision.certified_pairs,
        undecided=decision.undecided_pairs,
        symmetry_violation=analysis.symmetry_violation,
        seconds=time.perf_counter() - started,
        exchangeability=_exchangeability_status(assumptions),
        verdict=verdict,
        within_rounding=decision.within_rounding_pairs,
        float_error=float(decision_error(analysis, mechanism, declared_error)),
        claim=claimed,
        assumptions=assumptions,
        rechecked=rechecked,
        seed=analysis.seed,
        unexplored=decision.unexplored,
        reason=decision.reason,
        profile=measured,
    )


def _profile(analysis: Analysis, profile: Any, epsilon_star: float, claimed: Claim) -> tuple:
    """The worst-case privacy profile ``((eps, delta(eps)), ...)`` on the analysis's rows (float64
    sweeps, one per point), at ``profile``'s points or, for True, around eps* and the claim."""
    if profile is None or profile is False:
        return ()
    if profile is True:
        points = profile_grid(epsilon_star, float(claimed.claimed_epsilon))
    else:
        points = [float(e) for e in profile]
    return tuple(zip(points, analysis.profile(points)))


def _decide(claimed: Claim, analysis: Analysis, mechanism: Any, declared: float | None) -> Any:
    """The claim decided on the analysis: on its matrix, or swept in row blocks."""
    if analysis.blocks is not None:
        return decide_in_blocks(analysis, claimed, mechanism, declared, _check_float_row)
    return claimed.decide(_certifiable(analysis, mechanism, declared))


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
    if getattr(mechanism, "exact_distribution", None) is None and analysis.is_exact is not None:
        # the largest row error without an array of every row's (134 MB at 16.8 M datasets)
        value = float_error_of(mechanism) if declared is None else declared
        return 0.0 if bool(np.all(analysis.is_exact)) else float(value)
    errors = _row_errors(analysis, mechanism, declared)
    return float(np.max(errors)) if np.ndim(errors) else float(errors)


def _certifiable(analysis: Analysis, mechanism: Any, declared: float | None) -> RowPairs:
    """The analysis as engine input; a mechanism's ``exact_distribution(dataset)`` (exact values)
    replaces its float outputs in certification."""
    exact_of = getattr(mechanism, "exact_distribution", None)
    if exact_of is None:
        return analysis.row_pairs(row_error=_row_errors(analysis, mechanism, declared))
    datasets = analysis.pairs.datasets
    rho = float_error_of(mechanism) if declared is None else declared
    columns = {o: k for k, o in enumerate(analysis.outcomes)}

    converted: dict[int, tuple[Any, np.ndarray | None]] = {}  # see _check_float_row

    def exact_row(index: int) -> Distribution:
        exact = call_mechanism(mechanism, datasets[index], "exact_distribution")
        tail = None if analysis.unexplored is None else analysis.unexplored[index]
        _check_float_row(mechanism, datasets[index], analysis.matrix[index], columns, exact, rho, converted, tail)
        return exact

    rows = analysis.row_pairs(exact_row=exact_row, row_error=0.0)
    rows.matrix_error = rho  # the floats that choose the pairs to certify carry their rounding
    return rows


def _ordered_witness(
    analysis: Analysis, decision: Any, claimed: Claim, mechanism: Any, declared: float | None
) -> tuple[Any, SymmetryCheck | None]:
    """A witness over multisets as an ordered neighbour pair, its outputs evaluated.

    Over multisets a witness is two sorted datasets, e.g. ``(0, 0, 1, 2)`` and ``(0, 1, 2, 2)``,
    which as ordered datasets differ in more than one place. Its neighbour is realigned to the
    ordering that differs from the dataset in one place (``(2, 0, 1, 2)``) and evaluated there: the
    same output keeps the witness (now a real ordered pair); another output is decided afresh on
    the ordered pair, so a VIOLATED witness never rests on the declaration, proved or not. Another
    output that does not violate either sends the run to every ordered dataset: the returned check
    carries the violation of the declaration (outputs beyond rounding apart), or the declaration's
    own check (outputs within rounding of each other).
    """
    witness = decision.witness
    if witness is None or not analysis.exchangeable or analysis.relation is None:
        return decision, None
    dataset, neighbor = tuple(witness.dataset), tuple(witness.neighbor)
    ordered = _realigned(dataset, neighbor)
    if ordered == neighbor:
        return decision, None
    if not analysis.relation.is_neighbor(dataset, ordered, exchangeable=False):
        raise AssertionError(
            f"internal error: the realigned witness {dataset!r} vs {ordered!r} is not an ordered neighbour pair"
        )
    exact_of = getattr(mechanism, "exact_distribution", None)
    method = None if exact_of is None else "exact_distribution"
    rho = float_error_of(mechanism) if declared is None else declared
    seen = analysis.distributions[analysis.pairs.position(neighbor)]
    found = call_mechanism(mechanism, ordered)
    found_exact = found if method is None else call_mechanism(mechanism, ordered, method)
    same = dict(found) == dict(seen) and found.unexplored == seen.unexplored and (
        method is None or found_exact == call_mechanism(mechanism, neighbor, method)
    )
    if same:
        return replace(decision, witness=replace(witness, neighbor=ordered)), None
    proof = analysis.symmetry
    if proof is not None and proof.proved and not same_distribution(seen, found, 2 * rho):
        # The proof compared this very ordering with its multiset's output and found them equal; it
        # answers otherwise now: two outputs for one dataset, whatever the verdict would have been.
        raise nondeterministic(mechanism, ordered, seen, found)
    if decision.verdict is not Verdict.VIOLATED:  # a near pair (within rounding) shown as found
        return decision, None
    first = analysis.distributions[analysis.pairs.position(dataset)]
    outputs = [first, found]
    exact = outputs if method is None else [call_mechanism(mechanism, dataset, method), found_exact]
    outcomes = list(dict.fromkeys([*first, *found]))
    matrix = np.array([[float(d.get(o, 0)) for o in outcomes] for d in outputs])
    errors = [0.0 if method is not None or d.is_exact else rho for d in outputs]
    rel = analysis.relation
    rows = RowPairs(
        matrix, np.array([0]), np.array([1]), outcomes=outcomes, exact_row=exact.__getitem__, row_error=errors,
        label=(dataset, ordered).__getitem__, expected_pairs=1,
        is_neighbor=lambda a, b: rel.is_neighbor(a, b, exchangeable=False),
        matrix_error=0.0 if method is None else rho, unexplored=unexplored_of(outputs),
    )
    again = claimed.decide(rows)
    if again.verdict is Verdict.VIOLATED:
        # the ordered pair violates on its own: the verdict needs no exchangeability
        return replace(decision, witness=again.witness), None
    again_found = call_mechanism(mechanism, ordered)
    if not same_distribution(found, again_found, 2 * rho):
        raise nondeterministic(mechanism, ordered, found, again_found)
    check = analysis.symmetry
    if same_distribution(seen, found, 2 * rho):
        # the two orderings agree up to rounding, yet only the multiset row is certified to violate:
        # not a refutation; the ordered datasets decide (the declaration's status is kept)
        return decision, check or SymmetryCheck(None, False, 0, 0, analysis.seed or 0)
    violation = SymmetryViolation(neighbor, ordered, seen, found)
    return decision, SymmetryCheck(violation, False, 0 if check is None else check.datasets,
                                   0 if check is None else check.samples, analysis.seed or 0)


def _realigned(dataset: tuple, neighbor: tuple) -> tuple:
    """The ordering of the multiset ``neighbor`` closest to ``dataset``: same size, the one record
    that differs put where ``dataset`` has the record it lacks; other sizes are returned as given
    (a sorted multiset with one record removed or added is an ordered neighbour of the sorted one)."""
    if len(dataset) != len(neighbor):
        return neighbor
    extra = Counter(dataset) - Counter(neighbor)
    added = Counter(neighbor) - Counter(dataset)
    if sum(extra.values()) != 1 or sum(added.values()) != 1:
        return neighbor
    (removed,), (put,) = extra, added
    position = dataset.index(removed)
    return dataset[:position] + (put,) + dataset[position + 1 :]


#: Exact objects whose float rows one certification keeps (each kept alive while it runs).
_CONVERTED_ROWS = 4096


def _check_float_row(
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


def _recheck(analysis: Analysis, decision: Any) -> int:
    """Evaluate a second time: both witness datasets, one dataset of every distinct exact row
    certification read (the others have the same first output, kept from the first evaluation),
    and a random sample of the rest; a dataset whose two outputs differ raises
    :class:`~dpverify.errors.NondeterministicMechanism`."""
    distributions = analysis.distributions
    if not isinstance(distributions, EvaluatedDistributions):
        return 0
    rows = len(analysis.pairs.datasets)
    # (a projected claim's rows are the datasets' rows tiled: row v * rows + r is dataset r)
    wanted = [row % rows for row in (*(decision.witness_rows or ()), *decision.read_rows)]
    rng = np.random.default_rng(analysis.seed)
    wanted.extend(rng.choice(rows, size=min(rows, DETERMINISM_SAMPLE), replace=False).tolist())
    return distributions.recheck(wanted)


_EXCHANGEABLE = "the output ignores the order of the records (declared exchangeable)"


def _assumptions(analysis: Analysis, accept: bool) -> tuple[Assumption, ...]:
    """The exchangeability declaration as an assumption: proved, refuted, accepted or unproved."""
    check = analysis.symmetry
    if check is None:
        return ()
    if check.violation is not None:
        return (Assumption("exchangeable", _EXCHANGEABLE, Status.REFUTED,
                           f"{check.evidence}; every ordered dataset was checked as a black box"),)
    if check.proved:
        return (Assumption("exchangeable", _EXCHANGEABLE, Status.PROVED, check.evidence),)
    fix = (
        "pass exchangeable='assume' to accept the declaration (the verdict then says it assumes it), "
        "exchangeable=False to check every ordered dataset as a black box, or a smaller instance "
        "(records ** n orderings) so that every ordering is checked"
    )
    status = Status.ACCEPTED if accept else Status.UNPROVED
    return (Assumption("exchangeable", _EXCHANGEABLE, status, check.evidence, "" if accept else fix),)


def _exchangeability_status(assumptions: tuple[Assumption, ...]) -> str:
    for assumption in assumptions:
        if assumption.name != "exchangeable":
            continue
        if assumption.status is Status.PROVED:
            return "proved on every ordering"
        if assumption.status is Status.REFUTED:
            return "refuted (checked as a black box)"
        return f"{assumption.status}: {assumption.evidence}"
    return "not declared"
