"""A statistical lower bound on epsilon for mechanisms that can only be sampled: ``estimate_sampler``.

:func:`dpverify.verify` needs a mechanism's exact output distribution. A mechanism with continuous
noise, or one in native code, can often only be *run*: ``sampler(dataset, rng)`` draws one output
from a real :class:`numpy.random.Generator`. From its draws no claim can be proved, but a claim can
be refuted with a stated confidence, as the statistical testers do (StatDP: Ding, Wang, Wang,
Zhang, Kifer, CCS 2018; DP-Sniper: Bichsel, Steffen, Bogunovic, Vechev, IEEE S&P 2021).

The procedure, for each neighbouring pair ``(D, D')`` and each direction:

1. Draw outputs of ``M(D)`` and of ``M(D')``: some to choose events, others, drawn afterwards and
   independently, to test them.
2. On the selection draws, choose output events ``S`` likelier under one dataset than the other
   (:mod:`dpverify.checking.statistical._events`: thresholds and intervals at empirical quantiles, per
   coordinate for vectors, each outcome and unions of the top outcomes by ratio for discrete
   outputs, the same on features of the output -- its float bits, joint keys of vector
   coordinates, a likelihood-ratio score fitted on the selection draws:
   :mod:`dpverify.checking.statistical._features`). Events are ranked two ways: by their bound on epsilon at
   the claimed delta, and by their bound on ``P(S) - e^eps Q(S)`` at the claimed epsilon (the delta
   they refute: the events that refute an ``(eps, delta)`` claim where the ratio alone is weak).
3. On the test draws, bound each chosen ``(pair, event, direction)``: an exact Clopper–Pearson lower
   bound ``P_lo`` on ``P(S)`` and upper bound ``Q_hi`` on ``Q(S)``, so ``eps >= ln((P_lo - delta) /
   Q_hi)`` for ``(eps, delta)``-DP, and ``delta >= P_lo - e^eps Q_hi`` at the claimed ``eps``. With
   ``m`` events tested in a round of level ``a``, each of the ``2m`` one-sided bounds has error
   ``a / (2m)`` (Bonferroni), so all of them hold at once with probability at least ``1 - a``.

**Rounds and the confidence they spend.** With ``samples=N`` alone there is one round: ``N // 2``
draws per dataset choose events and the rest test them, at level ``alpha = 1 - confidence``. Under a
time budget (the default, 10 seconds) the run is a sequence planned by
:class:`~dpverify.checking.statistical._schedule.Schedule`: a first selection draw of 10,000 per dataset, then
test rounds. Round ``r`` (from 1) chooses its events on every draw made before it (pooled, up to a
million per dataset) and tests them on fresh draws, twice as many as all draws before it. A round
is the last unless, after it, a last round three times all draws so far would still fit in the time
left (and in ``samples``, then a cap); the last round is sized to fill the budget, predicted from the
earlier rounds' timings, and sized again once its events are chosen (it draws only the datasets it
tests). The last round may be *focused*: when the previous round's test counts predict a larger bound
from a few pairs drawn deeper than from all of its events spread thin, it tests only those pairs --
the previous round's value events on them and events chosen again on them, ranked at the larger size
(:func:`~dpverify.checking.statistical._selection.focused`). Round ``r`` spends level ``alpha / 2^(r+2)``, the last whatever is left of ``alpha`` (at least
``3/4`` of it). Each level is fixed before the round's test draws are made, and the levels sum to at
most ``alpha`` on every run, whatever the timings, so by the union bound every bound of every round
holds at once with probability at least ``confidence``; the largest is reported. (A round's events
and size depend on earlier draws and on timings only, never on its own test draws: its bounds are
valid given everything before it.)

**Many pairs.** Over :data:`~dpverify.checking.statistical._chunked.CHUNKED_PAIRS` pairs the run is one round
(``samples``, default :data:`SCALE_SAMPLES`), and events are chosen on the executors, a chunk of
pairs per task (:mod:`dpverify.checking.statistical._chunked`).

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
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dpverify.checking.input_pairs import InputPairs, _as_input_pairs
from dpverify.checking.statistical._chunked import CHUNK, CHUNKED_PAIRS, select_on_executor
from dpverify.checking.statistical._events import clopper_pearson, log_ratio_bound
from dpverify.checking.statistical._patched import EncodedSampler, PatchedSampler, check_labels_repeat, mixed_width
from dpverify.checking.statistical._sampling import PROBE, Summary, accepts_size, check_repeatable, draw_round
from dpverify.checking.statistical._schedule import MIN_SAMPLES, TIME_BUDGET, Schedule
from dpverify.checking.statistical._selection import (
    SHRINK,
    TESTS,
    Candidate,
    event_load,
    focused,
    merged_events,
    select,
    selection,
)
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import NeighborRelation, relation
from dpverify.finite.records import check_records
from dpverify.finite.sampler._routing import module_names
from dpverify.parallel.executors import Shared, check_picklable, open_executor
from dpverify.parallel.progress import Progress
from dpverify.types import ExecutorSpec, RealNumber, Sampler
from dpverify.validation import check_callable, check_integer, check_number, claim_number, exact_number
from dpverify.verdict.assumptions import new_seed
from dpverify.verdict.engine import Verdict
from dpverify.verdict.privacy_loss import check_delta, check_epsilon
from dpverify.verdict.results import EstimateResult, EstimateRound, SampledEvent

__all__ = ["estimate_sampler", "EstimateResult", "SampledEvent", "MIN_SAMPLES", "MAX_DATASETS", "MAX_PAIRS",
           "TIME_BUDGET", "Schedule"]

#: Draws per dataset (half choose, half test) of a run over more than ``CHUNKED_PAIRS`` pairs, by default.
SCALE_SAMPLES = 4_000
#: The most draws one executor task makes (a dataset's larger rounds are split, each part its own stream).
TASK_DRAWS = 2_000_000
#: The most datasets a ``records``/``n`` enumeration may have (each is sampled ``samples`` times).
MAX_DATASETS = 1_000_000
#: The most pairs it may have (events are chosen for each pair, a few milliseconds each).
MAX_PAIRS = 4_000_000


def estimate_sampler(
    sampler: Sampler,
    *,
    pairs: InputPairs | Iterable[tuple[Sequence[Any], Sequence[Any]]] | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    epsilon: RealNumber,
    delta: RealNumber = 0,
    samples: int | None = None,
    time_budget: float | None = None,
    confidence: float = 0.95,
    random_state: int | None = None,
    executor: ExecutorSpec = None,
    float_bits: bool = True,
    progress: bool | Callable[[str], None] = False,
    patch: Any = None,
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
        samples: alone, draws per dataset in one round (at least :data:`MIN_SAMPLES`; half choose
            events, half test them). With ``time_budget``, the most draws per dataset.
        time_budget: seconds the run may take (default :data:`TIME_BUDGET` when ``samples`` is not
            given): rounds of growing size until the budget is spent (module docstring).
        confidence: in (0, 1): every bound of the run holds at once with at least this probability.
        random_state: the seed (an integer >= 0); None draws a fresh one, reported as ``seed``.
        executor: where datasets are sampled (:mod:`dpverify.parallel.executors`: None, ``"processes"``,
            ``"dask"``, a Dask client or an Executor); the result is the same on each for a given
            schedule (with a time budget the number of rounds depends on the machine's speed). A
            process pool needs a picklable sampler (a module-level function or class instance).
        float_bits: also test events on the outputs' float representation (their lowest set bit
            and trailing zeros: a float-structure leak such as Mironov's is then found like any
            other); False judges the outputs as real numbers only (the ideal mechanism).
        progress: True for a progress bar on stderr (lines when stderr is not a terminal), a
            callable for progress lines, False for none (:class:`~dpverify.parallel.progress.Progress`).
        patch: modules (or dotted names) whose module-level randomness (``np.random.laplace``,
            ``random.random``, a ``default_rng()`` built inside) is served from each call's ``rng``
            while the sampler runs, as ``from_sampler(..., patch=)`` serves it from the exact rng
            (:mod:`dpverify.checking.statistical._patched`); restored afterwards. None: nothing is routed, and a
            sampler drawing from a global generator is refused.

    Returns:
        An :class:`EstimateResult`: VIOLATED when the lower bound exceeds ``epsilon`` (equivalently,
        the lower bound on delta at ``epsilon`` exceeds ``delta``), else UNDECIDED (no violation found);
        never HOLDS.

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
    if samples is not None:
        check_integer("samples", samples, at_least=MIN_SAMPLES,
                      fix="samples is the number of draws per dataset; or pass time_budget=SECONDS instead")
    if time_budget is not None:
        check_number("time_budget", time_budget, above=0, fix="time_budget is in seconds, e.g. time_budget=10")
    _check_confidence(confidence)
    if random_state is not None:
        check_integer("random_state", random_state, at_least=0, fix="pass a seed such as random_state=0, or None")
    inputs = _inputs(pairs, records, n, neighbors)
    seed = new_seed(random_state)
    batched = accepts_size(sampler)
    if patch is not None and module_names(patch):
        sampler, batched = PatchedSampler(sampler, patch, batched=batched), True
    claim = (float(claim_number("epsilon", epsilon)), float(claim_number("delta", delta)))
    datasets = list(inputs.datasets)
    children = np.random.SeedSequence(seed).spawn(len(datasets))
    first_streams = [child.spawn(2) for child in children]
    chunked = len(inputs) > CHUNKED_PAIRS
    if chunked and time_budget is not None:
        raise InvalidArgument(
            f"{len(inputs):,} pairs are more than {CHUNKED_PAIRS:,}: their events are chosen on the executors in one "
            f"round of a fixed size, not under a time budget; pass samples=N (draws per dataset, default "
            f"{SCALE_SAMPLES:,}) instead of time_budget={time_budget!r}."
        )
    schedule = Schedule(SCALE_SAMPLES if chunked and samples is None else samples, None if chunked else time_budget,
                        started, 1 - confidence, datasets=len(datasets))
    # two runs of PROBE samples on the first dataset, both from its selection stream (1-2% of a run)
    probe = check_repeatable(sampler, datasets[0], first_streams[0][0], min(PROBE, schedule.first_draws), batched)
    width = mixed_width(probe.items) if probe is not None and probe.items is not None else None
    if width is not None:  # rows mixing labels and reals (``(3, False)``, ``(3, 1.72)``): read as vectors
        sampler, batched = EncodedSampler(sampler, batched=batched, width=width), True
    elif probe is not None and probe.items is not None:
        check_labels_repeat(probe.items, datasets[0])
    index_pairs = list(zip(inputs.left.tolist(), inputs.right.tolist()))
    rounds: list[EstimateRound] = []
    tested: list[SampledEvent] = []
    scored = 0
    previous: list[tuple[Candidate, SampledEvent]] = []  # the last test round's events and their results
    meter = Progress(progress)
    with open_executor(executor) as opened:
        runner = check_picklable("sampler", sampler, opened)
        objects = {"sampler": sampler, "batched": batched, "bits": bool(float_bits)}
        shared = Shared(objects=objects)
        summaries: list = []
        if not chunked:
            draws = schedule.first_draws
            began = time.perf_counter()
            found = runner.map(draw_round, [(d, s[0], draws, [], draws) for d, s in zip(datasets, first_streams)],
                               shared, _meter(meter, "estimate: selection draws", len(datasets), "datasets"))
            summaries = [summary for _, summary, _ in found]
            schedule.record(draws, time.perf_counter() - began, [timing for _, _, timing in found], 0, draws)
        else:
            schedule.drawn = schedule.first_draws
        number = 1
        while (step := schedule.next_round(number)) is not None:
            size, level, keep = step
            began = time.perf_counter()
            if chunked:  # selection draws made and ranked on the executors, a chunk of pairs per task
                chosen, count = select_on_executor(
                    runner, objects, index_pairs, datasets,
                    [s[0] for s in first_streams], schedule.first_draws,
                    selection(len(index_pairs), epsilon=claim[0], delta=claim[1], level=level / (2 * TESTS), size=size),
                    _meter(meter, "estimate: choosing events", -(-len(index_pairs) // CHUNK), "chunks of pairs"))
            else:
                chosen, count = select(index_pairs, summaries, epsilon=claim[0], delta=claim[1],
                                       level=level / (2 * TESTS), size=size)
            scored += count
            if schedule.done and schedule.budget is not None and not chunked:
                chosen, count = _focus(chosen, previous, index_pairs, summaries, schedule, size, level, claim)
                scored += count
            chose = time.perf_counter()
            events: list[list] = [[] for _ in datasets]
            for candidate in chosen:
                for side in (candidate.first, candidate.second):
                    if candidate.event not in events[side]:
                        events[side].append(candidate.event)
            if schedule.done:  # the last round: sized again for the datasets and events it has
                size = schedule.resize_last(size, sum(1 for e in events if e), sum(map(len, events)))
            streams = [s[1] for s in first_streams] if number == 1 else [c.spawn(1)[0] for c in children]
            # a round that keeps draws for later selection draws every dataset; the last, only those it tests;
            # a dataset's draws go in tasks of at most TASK_DRAWS (memory; every core busy on a few datasets)
            drawn = [i for i in range(len(datasets)) if keep or events[i]]
            tasks, owners = [], []
            for i in drawn:
                parts = -(-size // TASK_DRAWS)
                seeds = [streams[i]] if parts == 1 else streams[i].spawn(parts)
                for part, part_seed in enumerate(seeds):
                    count = size // parts + (part < size % parts)
                    tasks.append((datasets[i], part_seed, count, events[i], keep if part == 0 else 0))
                    owners.append(i)
            found = runner.map(draw_round, tasks, shared,
                               _meter(meter, f"estimate: test round {number}", len(tasks), "tasks"))
            drew = time.perf_counter()
            counts: list[dict] = [{} for _ in datasets]
            kept: dict[int, Summary] = {}
            for i, (counted, summary, _) in zip(owners, found):
                total = counts[i]
                for event, value in zip(events[i], counted):
                    total[event] = total.get(event, 0) + value
                if summary is not None:
                    kept[i] = summary
            if keep:
                summaries = [old.merged(kept[i]) for i, old in enumerate(summaries)]
            certified = _certify(chosen, counts, datasets, size, claim, level / (2 * max(len(chosen), 1)))
            tested.extend(certified)
            previous = list(zip(chosen, certified))
            seconds = time.perf_counter() - began
            schedule.record(size, drew - chose, [timing for _, _, timing in found], sum(map(len, events)),
                            keep if keep else 0, (chose - began) + (time.perf_counter() - drew), len(drawn))
            best = max((t.epsilon_lower_bound for t in certified), default=-math.inf)
            rounds.append(EstimateRound(schedule.drawn - size, size, len(certified), level, max(best, 0.0), seconds))
            number += 1
    meter.close()
    return _result(tested, rounds, epsilon, delta, claim, schedule, confidence, seed, started, inputs, batched, scored)


#: The fewest events a focused last round chooses again on its pairs (two per direction on one pair:
#: the outcome that ranked best on the earlier draws and its runner-up, often the union and the single).
FOCUSED_TESTS = 4


def _focus(chosen: list[Candidate], previous: list[tuple[Candidate, SampledEvent]], index_pairs: list[tuple[int, int]],
           summaries: list, schedule: Schedule, size: int, level: float,
           claim: tuple[float, float]) -> tuple[list[Candidate], int]:
    """The last round's events: ``chosen``, or, when a few pairs drawn deeper are expected to bound more
    (:func:`~dpverify.checking.statistical._selection.focused`, judged on the previous round's test counts), the
    previous round's value events on those pairs and events chosen again on those pairs alone, ranked
    at the larger size the round will then have (a single outcome can beat a union there). Reads
    earlier draws and timings only."""
    def room(datasets: int, events: int) -> int:
        return schedule.resize_last(size, datasets, events)

    validated = [replace(c, counts=(t.p_count, t.p_samples, t.q_count, t.q_samples))
                 for c, t in previous if not t.float_structure and math.isfinite(t.epsilon_lower_bound)]
    pairs = focused(chosen, validated, room, level=level, delta=claim[1])
    if pairs is None:
        return chosen, 0
    ordered = sorted(pairs)
    kept = [c for c in validated if c.pair in pairs]
    tests = max(sum(1 for c in chosen if c.pair in pairs), FOCUSED_TESTS)
    deeper = room(*event_load(merged_events([c for c in chosen if c.pair in pairs], kept)))
    again, count = select([index_pairs[p] for p in ordered], summaries, epsilon=claim[0], delta=claim[1],
                          level=level / (2 * (tests + len(kept))), size=deeper, tests=tests, shrink=SHRINK)
    return merged_events(kept, [replace(c, pair=ordered[c.pair]) for c in again]), count


def _meter(meter: Progress, label: str, total: int, unit: str) -> Callable[[int], None] | None:
    """An executor's ``on_done`` callback advancing a progress stage (None when progress is off)."""
    advance = meter.stage(label, total, unit)
    if advance is None:
        return None
    done = 0

    def on_done(_: int) -> None:
        nonlocal done
        done += 1
        advance(done, total)

    return on_done


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


def _certify(chosen: list[Candidate], counts: list[dict], datasets: list, size: int, claim: tuple[float, float],
             level: float) -> list[SampledEvent]:
    """Every chosen event bounded on the round's test draws at ``level`` per one-sided interval."""
    if not chosen:
        return []
    epsilon, delta = claim
    p_count = np.array([counts[c.first][c.event] for c in chosen])
    q_count = np.array([counts[c.second][c.event] for c in chosen])
    p_lower, _ = clopper_pearson(p_count, size, level)
    _, q_upper = clopper_pearson(q_count, size, level)
    bounds = log_ratio_bound(p_lower, q_upper, delta)
    margins = p_lower - math.exp(epsilon) * q_upper
    return [
        SampledEvent(datasets[c.first], datasets[c.second], str(c.event), int(p_count[k]), size, int(q_count[k]),
                     size, float(p_lower[k]), float(q_upper[k]), level, delta, float(bounds[k]), c.event,
                     epsilon, float(margins[k]), bool(getattr(c.event, "reads_bits", False)))
        for k, c in enumerate(chosen)
    ]


def _result(tested: list[SampledEvent], rounds: list[EstimateRound], epsilon: Any, delta: Any,
            claim: tuple[float, float], schedule: Schedule, confidence: float, seed: int, started: float,
            inputs: InputPairs, batched: bool, scored: int) -> EstimateResult:
    best = max(tested, key=lambda t: t.epsilon_lower_bound, default=None)  # the first of equal bounds
    bound = max(0.0, best.epsilon_lower_bound) if best is not None else 0.0
    delta_bound = max((t.delta_lower_bound for t in tested), default=0.0)
    value_bound = max((t.epsilon_lower_bound for t in tested if not t.float_structure), default=0.0)
    violated = best is not None and best.epsilon_lower_bound > claim[0]
    samples = schedule.drawn
    budget = "" if schedule.budget is None else f" in {len(rounds)} round(s) within {schedule.budget:g} s"
    if violated:
        reason = (f"with confidence {confidence:g}, eps >= {bound:.6g} > the claimed {epsilon} (at delta = {delta}): "
                  "the claim is refuted on the witness below")
        if best is not None and best.float_structure:
            reason += (f". The witness is a float-structure event: the output's low bits tell the datasets apart (the "
                       "floats the mechanism can output depend on its input, Mironov 2012), so the float program "
                       f"leaks. Read as real numbers, its outputs give eps >= {max(value_bound, 0.0):.6g}"
                       + (", above the claim too" if value_bound > claim[0] else ", within the claim")
                       + ". Snapping the output to a grid (Mironov) or discrete noise fixes the float leak; "
                       "float_bits=False (--no-float-bits) judges the real-number mechanism alone")
    elif best is None or not math.isfinite(best.epsilon_lower_bound):
        reason = (f"no violation found at {samples:,} samples per dataset{budget}: no event was likelier under one "
                  "dataset than the other by enough to bound eps above 0; a sample cannot prove the claim "
                  "(dpverify.verify proves claims on exact mechanisms), more samples may refute it")
    else:
        reason = (f"no violation found at {samples:,} samples per dataset{budget}: the largest lower bound, "
                  f"{bound:.6g}, does not exceed the claimed {epsilon}; a sample cannot prove the claim "
                  "(dpverify.verify proves claims on exact mechanisms), more samples may refute it")
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
        delta_lower_bound=max(delta_bound, 0.0),
        value_epsilon_lower_bound=max(value_bound, 0.0),
        rounds=tuple(rounds),
        time_budget=schedule.budget,
    )
