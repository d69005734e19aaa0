"""A statistical lower bound on epsilon for mechanisms that can only be sampled: ``estimate_sampler``.

:func:`dpverify.verify` needs a mechanism's exact output distribution. A mechanism with continuous
noise, or one in native code, can often only be *run*: ``sampler(dataset, rng)`` draws one output
from a real :class:`numpy.random.Generator`. From its draws no claim can be proved, but a claim can
be refuted with a stated confidence, as the statistical testers do (StatDP: Ding, Wang, Wang,
Zhang, Kifer, CCS 2018; DP-Sniper: Bichsel, Steffen, Bogunovic, Vechev, IEEE S&P 2021).

The procedure, for each neighbouring pair ``(D, D')`` and each direction:

1. Draw ``samples`` outputs of ``M(D)`` and of ``M(D')``: half to choose events, half to test them.
2. On the first half, choose output events ``S`` likelier under one dataset than the other
   (thresholds and intervals at empirical quantiles for numbers, per coordinate for vectors, each
   outcome and unions of the top outcomes by ratio for discrete outputs; :mod:`dpverify.checking._events`).
3. On the second, independent half, bound each chosen ``(pair, event, direction)``: an exact
   Clopper–Pearson lower bound ``P_lo`` on ``P(S)`` and upper bound ``Q_hi`` on ``Q(S)``, so
   ``eps >= ln((P_lo - delta) / Q_hi)`` for ``(eps, delta)``-DP. With ``m`` events tested, each of the
   ``2m`` one-sided bounds has error ``(1 - confidence) / (2m)`` (Bonferroni), so *all* of them hold at
   once with probability at least ``confidence``, and so does the largest bound, which is reported.

Before the run, the sampler is run twice on ``PROBE`` (1,000) samples of the first dataset, each
time from a fresh Generator of the same seed: outputs that differ, or a move of Python's or
numpy's global generator, show that it draws from something other than its ``rng`` (its own
RandomState, SystemRandom, ``np.random.*``), and it is refused with
:class:`~dpverify.errors.NondeterministicMechanism`: its result could not be repeated from its seed.

Draws are made once per distinct dataset (a dataset in several pairs is drawn once), each dataset's
two halves from their own streams: ``numpy.random.SeedSequence(seed)`` spawns one child per
dataset, in the order the datasets are listed, and each child one stream per half. The draws are
therefore the same on every executor, and so is the result. A dataset shared by pairs makes their
bounds dependent; the union bound does not need them independent.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from dpverify.checking._events import TESTS, Candidate, clopper_pearson, log_ratio_bound, select
from dpverify.checking._sampling import PROBE, accepts_size, check_repeatable, count_events, draw_summary
from dpverify.checking.input_pairs import InputPairs, _as_input_pairs
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import NeighborRelation, relation
from dpverify.finite.records import check_records
from dpverify.parallel.executors import Shared, check_picklable, open_executor
from dpverify.types import ExecutorSpec, RealNumber, Sampler
from dpverify.validation import check_callable, check_integer, check_number, claim_number, exact_number
from dpverify.verdict.assumptions import new_seed
from dpverify.verdict.engine import Verdict
from dpverify.verdict.privacy_loss import check_delta, check_epsilon
from dpverify.verdict.results import EstimateResult, SampledEvent

__all__ = ["estimate_sampler", "EstimateResult", "SampledEvent", "MIN_SAMPLES", "MAX_DATASETS", "MAX_PAIRS"]

#: The fewest samples per dataset accepted (half of them choose events, half test them).
MIN_SAMPLES = 1000
#: The most datasets a ``records``/``n`` enumeration may have (each is sampled ``samples`` times).
MAX_DATASETS = 100_000
#: The most pairs it may have (events are chosen for each pair, a few milliseconds each).
MAX_PAIRS = 100_000


def estimate_sampler(
    sampler: Sampler,
    *,
    pairs: InputPairs | Iterable[tuple[Sequence[Any], Sequence[Any]]] | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    epsilon: RealNumber,
    delta: RealNumber = 0,
    samples: int = 100_000,
    confidence: float = 0.95,
    random_state: int | None = None,
    executor: ExecutorSpec = None,
) -> EstimateResult:
    """Bound the epsilon of a mechanism that can only be sampled, from below, at ``confidence``.

    Args:
        sampler: ``sampler(dataset, rng)`` returns one output of ``M(dataset)`` drawn with ``rng`` (a
            :class:`numpy.random.Generator`); a sampler that accepts ``size=`` is called as
            ``sampler(dataset, rng, size=k)`` and returns ``k`` outputs (an array, ``(k, d)`` for
            vectors, or a list). Outputs are numbers, vectors of numbers, or hashable labels.
        pairs: the input pairs: ``[(D, D'), ...]`` or an :class:`~dpverify.checking.input_pairs.InputPairs`
            such as :func:`~dpverify.checking.input_pairs.statdp_patterns`. Or instead:
        records, n: every neighbouring pair of datasets of size ``n`` over ``records`` (ordered
            datasets, as a black box).
        neighbors: the relation for ``records``/``n`` (default ``"substitute"``); with ``pairs``,
            when given, every pair must be a neighbour pair under it.
        epsilon, delta: the claim; ``delta`` in [0, 1).
        samples: draws per dataset (at least :data:`MIN_SAMPLES`); half choose events, half test.
        confidence: in (0, 1): every bound of the run holds at once with at least this probability.
        random_state: the seed (an integer >= 0); None draws a fresh one, reported as ``seed``.
        executor: where datasets are sampled (:mod:`dpverify.parallel.executors`: None, ``"processes"``,
            ``"dask"``, a Dask client or an Executor); the result is the same on each. A process pool
            needs a picklable sampler (a module-level function or class instance).

    Returns:
        An :class:`EstimateResult`: VIOLATED when the lower bound exceeds ``epsilon``, else
        UNDECIDED (no violation found at this sample size); never HOLDS.

    Raises:
        InvalidArgument: bad input (checked before any sampling).
        MechanismError: the sampler raised, or returned the wrong number of outputs or nan.
        NondeterministicMechanism: two runs of the sampler under one seed gave different outputs, or
            it drew from Python's or numpy's global generator: it draws from something other than
            ``rng`` (checked on the first dataset before the run).
    """
    started = time.perf_counter()
    check_callable("sampler", sampler, fix="pass a function sampler(dataset, rng) returning one output")
    check_epsilon(epsilon)
    check_delta(delta)
    if exact_number("delta", delta) >= 1:
        raise InvalidArgument(f"delta must be in [0, 1), got delta={delta!r}; delta = 1 claims nothing.")
    check_integer("samples", samples, at_least=MIN_SAMPLES,
                  fix="samples is the number of draws per dataset; the default is 100_000")
    _check_confidence(confidence)
    if random_state is not None:
        check_integer("random_state", random_state, at_least=0, fix="pass a seed such as random_state=0, or None")
    inputs = _inputs(pairs, records, n, neighbors)
    seed = new_seed(random_state)
    batched = accepts_size(sampler)
    claimed_epsilon = float(claim_number("epsilon", epsilon))
    claimed_delta = float(claim_number("delta", delta))
    datasets = list(inputs.datasets)
    streams = [child.spawn(2) for child in np.random.SeedSequence(seed).spawn(len(datasets))]
    chosen_n, test_n = samples // 2, samples - samples // 2
    # two runs of PROBE samples on the first dataset, both from its selection stream (1-2% of a run)
    check_repeatable(sampler, datasets[0], streams[0][0], min(PROBE, chosen_n), batched)
    index_pairs = list(zip(inputs.left.tolist(), inputs.right.tolist()))
    with open_executor(executor) as opened:
        runner = check_picklable("sampler", sampler, opened)
        objects = {"sampler": sampler, "batched": batched}
        summaries = runner.map(draw_summary, [(d, s[0]) for d, s in zip(datasets, streams)],
                               Shared(objects={**objects, "count": chosen_n}))
        chosen, scored = select(index_pairs, summaries, claimed_delta, confidence, TESTS)
        events: dict[int, list] = {}
        for candidate in chosen:
            for side in (candidate.first, candidate.second):
                if candidate.event not in events.setdefault(side, []):
                    events[side].append(candidate.event)
        order = sorted(events)
        counted = runner.map(count_events, [(datasets[i], streams[i][1], events[i]) for i in order],
                             Shared(objects={**objects, "count": test_n}))
    counts = {i: dict(zip(events[i], found)) for i, found in zip(order, counted)}
    tested = _certify(chosen, counts, datasets, test_n, claimed_delta, confidence)
    return _result(tested, epsilon, delta, claimed_epsilon, samples, confidence, seed, started, inputs,
                   batched, scored)


def _check_confidence(confidence: Any) -> None:
    check_number("confidence", confidence, above=0, fix="e.g. confidence=0.95")
    if not confidence < 1:
        raise InvalidArgument(
            f"confidence must be in (0, 1), got confidence={confidence!r}; a bound certain to hold "
            "cannot come from samples: pass e.g. confidence=0.95 or 0.99."
        )


def _inputs(pairs: Any, records: Any, n: Any, neighbors: Any) -> InputPairs:
    """The input pairs: given, or every neighbouring pair of ``records``/``n``."""
    if pairs is not None:
        if records is not None or n is not None:
            raise InvalidArgument(
                "pass either pairs= or records= and n=, not both; pairs are the inputs compared, records "
                "and n enumerate every neighbouring pair instead."
            )
        return _as_input_pairs(pairs, neighbors)
    if records is None or n is None:
        raise InvalidArgument(
            f"estimate_sampler needs the inputs: pairs=[(D, D'), ...] (or statdp_patterns(k)), or records= and "
            f"n= for every neighbouring pair; got records={records!r}, n={n!r}."
        )
    universe = check_records(records)
    check_integer("n", n, at_least=1, fix="n is the dataset size, e.g. n=2")
    rel = relation("substitute" if neighbors is None else neighbors)
    count = rel.count(len(universe), n, exchangeable=False)
    if count == 0:
        raise InvalidArgument(
            f"records={universe!r} with n={n} have no neighbouring pairs under {rel.name}; pass at least two records."
        )
    if count > MAX_PAIRS:
        raise InvalidArgument(
            f"records and n={n} give {count:,} {rel.name} pairs, more than {MAX_PAIRS:,} (events are chosen for each "
            "pair); lower n or the number of records, or pass the pairs to test as pairs=."
        )
    pair_set = rel.pairs(universe, n, exchangeable=False)
    if len(pair_set.datasets) > MAX_DATASETS:
        raise InvalidArgument(
            f"records and n={n} give {len(pair_set.datasets):,} datasets, more than {MAX_DATASETS:,}, each sampled "
            "samples times; lower n or the number of records, or pass the pairs to test as pairs=."
        )
    left, right = pair_set.index_arrays()
    return InputPairs(f"{rel.name} pairs of {len(universe)} records, n={n}", list(pair_set.datasets), left, right, rel)


def _certify(chosen: list[Candidate], counts: dict[int, dict], datasets: list, size: int, delta: float,
             confidence: float) -> list[SampledEvent]:
    """Every chosen event bounded on the test half at the union bound's level."""
    if not chosen:
        return []
    level = (1 - confidence) / (2 * len(chosen))
    p_count = np.array([counts[c.first][c.event] for c in chosen])
    q_count = np.array([counts[c.second][c.event] for c in chosen])
    p_lower, _ = clopper_pearson(p_count, size, level)
    _, q_upper = clopper_pearson(q_count, size, level)
    bounds = log_ratio_bound(p_lower, q_upper, delta)
    return [
        SampledEvent(datasets[c.first], datasets[c.second], str(c.event), int(p_count[k]), size, int(q_count[k]),
                     size, float(p_lower[k]), float(q_upper[k]), level, delta, float(bounds[k]), c.event)
        for k, c in enumerate(chosen)
    ]


def _result(tested: list[SampledEvent], epsilon: Any, delta: Any, claimed: float, samples: int, confidence: float,
            seed: int, started: float, inputs: InputPairs, batched: bool, scored: int) -> EstimateResult:
    best = max(tested, key=lambda t: t.epsilon_lower_bound, default=None)  # the first of equal bounds
    bound = max(0.0, best.epsilon_lower_bound) if best is not None else 0.0
    violated = best is not None and best.epsilon_lower_bound > claimed
    if violated:
        reason = (f"with confidence {confidence:g}, eps >= {bound:.6g} > the claimed {epsilon} (at delta = {delta}): "
                  "the claim is refuted on the witness below")
    elif best is None or not math.isfinite(best.epsilon_lower_bound):
        reason = (f"no violation found at {samples:,} samples per dataset: no event was likelier under one dataset "
                  "than the other by enough to bound eps above 0; a sample cannot prove the claim (dpverify.verify "
                  "proves claims on exact mechanisms), more samples may refute it")
    else:
        reason = (f"no violation found at {samples:,} samples per dataset: the largest lower bound, {bound:.6g}, does not "
                  f"exceed the claimed {epsilon}; a sample cannot prove the claim (dpverify.verify proves claims on exact "
                  "mechanisms), more samples may refute it")
    return EstimateResult(
        verdict=Verdict.VIOLATED if violated else Verdict.UNDECIDED,
        epsilon_lower_bound=bound,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        witness=best,
        tested=tuple(tested),
        samples=samples,
        confidence=confidence,
        seed=seed,
        seconds=time.perf_counter() - started,
        pairs=len(inputs),
        datasets=len(inputs.datasets),
        input_set=inputs.name,
        batched=batched,
        events_scored=scored,
        reason=reason,
    )
