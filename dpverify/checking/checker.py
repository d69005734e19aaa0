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

The route, top to bottom (:func:`verify_datasets`): the arguments (:func:`_analyze`), then every
dataset evaluated in one call (:func:`~dpverify.checking._analysis.evaluate_instance`: the rows,
the kept exact rows, a declared exchangeability tested, row blocks planned), then the engine's
decision (:func:`_decide`: on the whole matrix, or swept in row blocks by
:mod:`dpverify.checking._blocks`), a witness over multisets realigned to an ordered pair
(:func:`_ordered_witness`), then the result (a second evaluation of the rows read, the
declaration as an assumption).

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
from dataclasses import replace
from typing import Any

import numpy as np

from dpverify.checking._analysis import Analysis, certifiable, decision_error, evaluate_instance
from dpverify.checking._blocks import decide_in_blocks
from dpverify.checking._evaluation import EvaluatedDistributions, call_mechanism, nondeterministic, same_distribution
from dpverify.checking._symmetry import SymmetryCheck, check_exchangeable, evaluate, exchangeable
from dpverify.checking._time_limit import time_limited
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import NeighborRelation, relation
from dpverify.finite.records import check_records
from dpverify.parallel.executors import check_picklable, is_dask_client, open_executor
from dpverify.parallel.progress import Progress
from dpverify.types import ExecutorSpec, Number
from dpverify.validation import check_callable, check_integer
from dpverify.verdict.assumptions import Assumption, Status, settle
from dpverify.verdict.claims import Claim, claim_from_arguments
from dpverify.verdict.engine import (
    RowPairs,
    Verdict,
    Witness,
    check_float_error,
    declared_of,
    float_error_of,
    unexplored_of,
)
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
#: Datasets evaluated a second time (beyond every certified and witness dataset) to catch a
#: mechanism that returns samples instead of its distribution.
DETERMINISM_SAMPLE = 64
# Outcomes of any hashable type: Mapping is invariant in its key, so Mapping[Hashable, Any] would
# refuse a function annotated to return dict[int, Fraction].
Mechanism = Callable[[tuple], Mapping[Any, Any]]


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
    timeout: float | None = None,
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
        timeout: seconds one evaluation of the mechanism may take (:mod:`dpverify.checking._time_limit`):
            a call that runs longer raises MechanismError naming the dataset. None (default): no limit,
            because the only watchdog that can stop running Python code is a SIGALRM timer, which works
            only in a process's main thread (serial runs and process-pool workers, not Dask's threads)
            and takes over the process's SIGALRM; a limit is asked for, never imposed.

    Returns:
        A :class:`VerificationResult` with its :class:`Verdict`; ``holds`` passes on HOLDS and
        HOLDS_WITHIN_ROUNDING, ``witness`` is certified when VIOLATED.

    Raises:
        InvalidArgument: bad input (checked before any work starts).
        EnumerationTooLarge: more than ``max_pairs`` pairs.
        MechanismError: the mechanism raised on a dataset, or ran longer than ``timeout`` (named;
            the original chained).
        NondeterministicMechanism: the mechanism returned two distributions for one dataset.
    """
    claimed = claim_from_arguments(claim, epsilon, delta)
    if timeout is not None and (executor == "dask" or is_dask_client(executor)):
        raise InvalidArgument(
            f"timeout={timeout!r} cannot bound a mechanism on Dask: its workers run tasks on threads, and the "
            "limit is a SIGALRM timer, which reaches only a process's main thread. Use executor='processes' "
            "or executor=None with timeout=, or drop timeout= (Dask's own task timeouts then apply)."
        )
    mechanism = time_limited(mechanism, timeout)
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


def _analyze(
    mechanism: Mechanism, records: Sequence[Hashable], n: int, neighbors: Any, exchangeable: Any,
    max_pairs: int, meter: Progress, runner: Any, seed: int | None = None, exchangeable_samples: int | None = None,
    blocks: bool = False,
) -> Analysis:
    """The arguments checked (InvalidArgument before any work starts), then every dataset evaluated:
    :func:`~dpverify.checking._analysis.evaluate_instance`."""
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
    return evaluate_instance(mechanism, rel, universe, n, declared=declared, max_pairs=max_pairs, runner=runner,
                             evaluator=evaluator, meter=meter, seed=seed, samples=exchangeable_samples, blocks=blocks)


def _exchangeable_argument(value: Any) -> bool | None:
    """``exchangeable=``: None, True, False or ``"assume"`` (True, accepting an unproved declaration)."""
    if value is None or isinstance(value, bool) or value == "assume":
        return value if value != "assume" else True
    raise InvalidArgument(
        f"exchangeable must be None (use the mechanism's own declaration), True, False or 'assume', got "
        f"exchangeable={value!r}; 'assume' accepts the declaration where it cannot be proved on every ordering."
    )


def _validate_n(n: Any) -> None:
    check_integer("n", n, at_least=1, fix="n is the dataset size, e.g. n=4")


def _decide(claimed: Claim, analysis: Analysis, mechanism: Any, declared: float | None) -> Any:
    """The claim decided on the analysis: on its matrix, or swept in row blocks."""
    if analysis.blocks is not None:
        return decide_in_blocks(analysis, claimed, mechanism, declared)
    return claimed.decide(certifiable(analysis, mechanism, declared))


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
        declared=declared_of(outputs),
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


def _profile(analysis: Analysis, profile: Any, epsilon_star: float, claimed: Claim) -> tuple:
    """The worst-case privacy profile ``((eps, delta(eps)), ...)`` on the analysis's rows (float64
    sweeps, one per point), at ``profile``'s points or, for True, around eps* and the claim; empty for
    rows leaving mass unexplored: their delta(eps) is not known, only bounded (the verdict accounts for
    it; an audit row or ``--report`` then shows no chart rather than failing)."""
    if profile is None or profile is False or analysis.unexplored is not None:
        return ()
    if profile is True:
        points = profile_grid(epsilon_star, float(claimed.claimed_epsilon))
    else:
        points = [float(e) for e in profile]
    return tuple(zip(points, analysis.profile(points)))


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
