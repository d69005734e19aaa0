"""Drawing a sampler's outputs on one dataset, and what the two halves of a run keep of them.

A *sampler* is user code ``sampler(dataset, rng)`` that draws one output of ``M(dataset)`` from a
:class:`numpy.random.Generator`; one that takes ``size=`` (``sampler(dataset, rng, size=k)``) returns
``k`` outputs at once and is called in batches of at most :data:`BATCH`. Outputs are read as one of
three kinds:

* ``"real"``: numbers (an integer or float array, or a list of ints and floats; bools are labels);
* ``"vector"``: rows of numbers of one length ``d`` (a ``(k, d)`` array, or a list of equal-length
  tuples or arrays of numbers);
* ``"discrete"``: anything else hashable (strings, tuples of labels, a mixture); lists and arrays
  inside are read as tuples.

Used by :mod:`dpverify.checking.statistical.estimate`: the functions :func:`draw_summary` (the selection half)
and :func:`count_events` (the test half) are the tasks its executors run, one per dataset;
:func:`check_repeatable` runs before them and refuses a sampler whose outputs are not a function of
its dataset and the seed of its ``rng``.
"""

from __future__ import annotations

import inspect
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify.checking.statistical._features import fitted_features_apply, fixed_features, reads_bits
from dpverify.checking.statistical._outputs import Outputs, is_number, items_of
from dpverify.errors import MechanismError, NondeterministicMechanism
from dpverify.finite._global_random import routes_of, run_unchanged
from dpverify.parallel.executors import Shared

__all__ = ["BATCH", "DISCRETE_CAP", "FIT_SAMPLE", "PROBE", "Outputs", "Summary", "accepts_size", "draw",
           "summarise", "draw_round", "check_repeatable"]

#: Past DISCRETE_CAP distinct values, numeric draws still look discrete when each is drawn this often on average.
REPEATS = 64
#: Outputs asked of a batched sampler per call (``size=``): bounds its memory, fixes the streams.
BATCH = 1 << 16
#: A numeric half with at most this many distinct outputs, each seen twice on average, also gets
#: outcome events (each value, unions of values); else only threshold and interval events (a
#: continuous output's values never repeat: outcome events chosen on them never recur in the
#: test half, and bounded nothing at 2,000 samples).
DISCRETE_CAP = 1000
#: Outputs of each dataset kept for features fitted on a pair's selection draws.
FIT_SAMPLE = 50_000
#: Outputs drawn in each of the two runs of :func:`check_repeatable` (at most half the samples).
PROBE = 1000


def _repeats(distinct: int, size: int) -> bool:
    """Whether numeric draws look discrete: each distinct value drawn twice on average, and at most
    :data:`DISCRETE_CAP` of them, or more when each is drawn :data:`REPEATS` times on average (SVT's
    1,024 answer vectors of length 10 at a million draws; a continuous output's values never repeat)."""
    return 2 * distinct <= size and (distinct <= DISCRETE_CAP or REPEATS * distinct <= size)


def accepts_size(sampler: Any) -> bool:
    """Whether ``sampler`` takes a ``size`` argument by keyword (then it is called batched)."""
    try:
        parameters = inspect.signature(sampler).parameters
    except (TypeError, ValueError):  # a builtin or extension callable without a signature
        return False
    found = parameters.get("size")
    return found is not None and found.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _hashable(value: Any, dataset: tuple) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        pass
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(_hashable(v, dataset) for v in (value.tolist() if isinstance(value, np.ndarray) else value))
    raise MechanismError(
        f"the sampler returned the unhashable output {value!r} on dataset {dataset!r}; return numbers, "
        "arrays of numbers, strings or tuples.",
        dataset=dataset,
    )


def _numeric(values: np.ndarray, dataset: tuple) -> Outputs:
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        raise MechanismError(
            f"the sampler returned nan on dataset {dataset!r}; every output must be a number (or a label), "
            "so fix the sampler where it computes nan.",
            dataset=dataset,
        )
    if values.ndim == 1:
        return Outputs("real", values=values)
    return Outputs("vector", values=values.reshape(values.shape[0], -1))


def _stacked(items: list) -> np.ndarray | None:
    """Single draws that are numeric numpy arrays of one shape as ``(count, d)`` rows (each flattened),
    else None (the general reading below): the common case read without a Python loop per entry."""
    if not items or type(items[0]) is not np.ndarray:
        return None
    shape = items[0].shape
    if not all(type(v) is np.ndarray and v.dtype.kind in "iuf" and v.shape == shape for v in items):
        return None
    return np.stack(items).reshape(len(items), -1)


def parse(raw: Any, count: int, dataset: tuple, *, batched: bool) -> Outputs:
    """``count`` outputs as returned (a batch, or a list of single draws) read as :class:`Outputs`."""
    call = f"sampler(dataset, rng, size={count})" if batched else "sampler(dataset, rng)"
    if isinstance(raw, np.ndarray) and raw.ndim >= 1 and raw.dtype.kind in "iuf":
        if raw.shape[0] != count:
            raise MechanismError(
                f"{call} returned {raw.shape[0]} outputs (an array of shape {raw.shape}) on dataset {dataset!r}; "
                f"it must return exactly {count}, one per row.",
                dataset=dataset,
            )
        return _numeric(raw, dataset)
    try:
        items = list(raw)
    except TypeError:
        raise MechanismError(
            f"{call} must return {count} outputs (an array or a list), got {type(raw).__name__} {raw!r} on "
            f"dataset {dataset!r}.",
            dataset=dataset,
        ) from None
    if len(items) != count:
        raise MechanismError(
            f"{call} returned {len(items)} outputs on dataset {dataset!r}; it must return exactly {count}.",
            dataset=dataset,
        )
    if items and all(is_number(v) for v in items):
        return _numeric(np.array(items, dtype=np.float64), dataset)
    stacked = _stacked(items)
    if stacked is not None:
        return _numeric(stacked, dataset)
    if items and all(isinstance(v, (tuple, list, np.ndarray)) for v in items):
        rows = [np.ravel(np.asarray(v, dtype=object)) if not isinstance(v, np.ndarray) else np.ravel(v) for v in items]
        width = len(rows[0])
        if width and all(len(r) == width and all(is_number(x) for x in r.tolist()) for r in rows):
            return _numeric(np.array([r.tolist() for r in rows], dtype=np.float64), dataset)
    return Outputs("discrete", items=[_hashable(v, dataset) for v in items])


def _merge(parts: list[Outputs]) -> Outputs:
    """Batches joined: one kind when they agree (vectors of one width), else discrete items."""
    if len(parts) == 1:
        return parts[0]
    kinds = {p.kind for p in parts}
    widths = {p.values.shape[1] for p in parts if p.kind == "vector" and p.values is not None}
    if kinds == {"real"} or (kinds == {"vector"} and len(widths) == 1):
        return Outputs(parts[0].kind, values=np.concatenate([p.values for p in parts if p.values is not None]))
    return Outputs("discrete", items=[item for p in parts for item in items_of(p)])


def draw(sampler: Any, dataset: tuple, rng: np.random.Generator, count: int, batched: bool) -> Outputs:
    """``count`` outputs of ``sampler`` on ``dataset`` (batched calls of at most :data:`BATCH`)."""
    parts = []
    done = 0
    while done < count:
        size = min(BATCH, count - done) if batched else count - done
        try:
            raw = sampler(dataset, rng, size=size) if batched else [sampler(dataset, rng) for _ in range(size)]
        except MechanismError:
            raise
        except Exception as error:
            raise MechanismError(
                f"the sampler raised on dataset {dataset!r}: {type(error).__name__}: {error}",
                dataset=dataset, original=error,
            ) from error
        parts.append(parse(raw, size, dataset, batched=batched))
        done += size
    return _merge(parts)


@dataclass
class Summary:
    """What selection reads of one dataset's draws (a selection half, or the pooled draws of earlier rounds).

    Attributes:
        kind: the outputs' kind (``"real"``, ``"vector"``, ``"discrete"``).
        size: how many outputs were drawn.
        sorted: real: the values sorted; vector: ``(d, size)``, each coordinate sorted; else None.
        counts: output -> how many times it was drawn, for discrete outputs and for numeric ones
            with at most :data:`DISCRETE_CAP` distinct values; else None.
        derived: feature -> the :class:`Summary` of the feature's values on the same draws (the
            fixed features of :mod:`dpverify.checking.statistical._features`).
        sample: the first :data:`FIT_SAMPLE` outputs themselves, for features fitted on a pair's
            draws (None when no fitted feature applies to this kind).
    """

    kind: str
    size: int
    sorted: np.ndarray | None
    counts: dict | None
    derived: dict = field(default_factory=dict)
    sample: Outputs | None = None

    def merged(self, other: Summary) -> Summary:
        """The summary of both draws pooled (selection of a later round reads every earlier draw).
        Draws of another kind than this one's replace it (a sampler whose outputs change kind
        keeps the newer draws only: selection may read any draws, its choice is tested afresh)."""
        if other.kind != self.kind or not _same_width(self.sorted, other.sorted):
            return other
        size = self.size + other.size
        ordered = None
        if self.sorted is not None and other.sorted is not None:
            ordered = np.sort(np.concatenate([self.sorted, other.sorted], axis=-1), axis=-1)
        counts = None
        if self.counts is not None and other.counts is not None:
            pooled = Counter(self.counts)
            pooled.update(other.counts)
            counts = dict(pooled) if self.kind == "discrete" or _repeats(len(pooled), size) else None
        derived = {key: value.merged(other.derived[key]) for key, value in self.derived.items() if key in other.derived}
        sample = self.sample
        if sample is not None and other.sample is not None and len(sample) < FIT_SAMPLE:
            sample = _merge([sample, other.sample])
            sample = _head(sample, FIT_SAMPLE)
        return Summary(self.kind, size, ordered, counts, derived, sample)


def _same_width(first: np.ndarray | None, second: np.ndarray | None) -> bool:
    if first is None or second is None:
        return first is None and second is None
    return first.ndim == second.ndim and first.shape[:-1] == second.shape[:-1]


def _head(outputs: Outputs, count: int) -> Outputs:
    """The first ``count`` of ``outputs``."""
    if len(outputs) <= count:
        return outputs
    if outputs.values is not None:
        return Outputs(outputs.kind, values=outputs.values[:count])
    return Outputs(outputs.kind, items=(outputs.items or [])[:count])


def _row_counts(values: np.ndarray) -> dict | None:
    """Distinct rows and their counts (rows equal as tuples of floats merged), or None past the cap."""
    rows = np.ascontiguousarray(values)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if not _repeats(first.size, rows.shape[0]):
        return None
    found: dict = {}
    for index, number in zip(first.tolist(), counts.tolist()):
        key = tuple(rows[index].tolist())
        found[key] = found.get(key, 0) + number
    return found


def _plain(outputs: Outputs) -> Summary:
    if outputs.kind == "discrete":
        return Summary("discrete", len(outputs), None, dict(Counter(items_of(outputs))))
    assert outputs.values is not None
    if outputs.kind == "real":
        ordered = np.sort(outputs.values)
        distinct, counts = np.unique(ordered, return_counts=True)
        found = dict(zip(distinct.tolist(), counts.tolist())) if _repeats(distinct.size, ordered.size) else None
        return Summary("real", len(outputs), ordered, found)
    return Summary("vector", len(outputs), np.sort(outputs.values.T, axis=1), _row_counts(outputs.values))


def _width(outputs: Outputs) -> int | None:
    return int(outputs.values.shape[1]) if outputs.kind == "vector" and outputs.values is not None else None


def summarise(outputs: Outputs, *, with_features: bool = True, bits: bool = True) -> Summary:
    """Draws as a :class:`Summary`: the outputs, and each fixed feature's values on them (without
    the features that read a double's bits when ``bits`` is False)."""
    summary = _plain(outputs)
    if not with_features or (summary.counts is not None and outputs.kind != "vector"):
        return summary  # few values: their outcome events cover every event on a feature of them
    for feature in fixed_features(outputs.kind, _width(outputs)):
        if bits or not reads_bits(feature):
            summary.derived[feature] = _plain(feature(outputs))
    if fitted_features_apply(outputs.kind):
        summary.sample = _head(outputs, FIT_SAMPLE)
    return summary


def draw_round(task: tuple, shared: Shared) -> tuple[list[int], Summary | None, tuple[float, float, float]]:
    """Executor task: one round's draws on one dataset (``task = (dataset, seed, count, events,
    keep)``): ``count`` outputs from a Generator of ``seed``, how many fall in each of ``events``, the
    summary of the first ``keep`` of them (for the next round's selection; None when ``keep`` is 0),
    and the seconds spent drawing, counting and summarising (the schedule plans rounds with them)."""
    dataset, seed, count, events, keep = task
    began = time.perf_counter()
    outputs = draw(shared["sampler"], dataset, np.random.default_rng(seed), count, shared["batched"])
    drawn = time.perf_counter()
    cache: dict = {}
    found = [event.count(outputs, cache) for event in events]
    counted = time.perf_counter()
    summary = summarise(_head(outputs, keep), bits=shared["bits"]) if keep else None
    return found, summary, (drawn - began, counted - drawn, time.perf_counter() - counted)


def check_repeatable(sampler: Any, dataset: tuple, seed: Any, count: int, batched: bool) -> Outputs:
    """Refuse ``sampler`` unless two runs of ``count`` draws on ``dataset``, each from a fresh
    Generator seeded with ``seed``, give the same outputs and leave the global generators unmoved;
    return those outputs (the estimate reads their shape).

    A sampler that also draws from ``np.random.*`` or ``random.*``, from a RandomState or
    SystemRandom of its own, or that keeps state between calls, gives other outputs on the second
    run (or moves a global generator: seen, and named, first). Its samples are then not those of
    ``seed``: the result could not be repeated from its reported seed, and state kept between calls
    also makes the draws dependent, which the confidence bounds assume they are not.

    Raises:
        NondeterministicMechanism: naming what differed and the fix (draw from ``rng``).
        MechanismError: the sampler raised or returned outputs :func:`draw` refuses.
    """
    name = getattr(sampler, "__name__", None) or type(sampler).__name__

    def twice() -> tuple[Outputs, Outputs]:
        return (draw(sampler, dataset, np.random.default_rng(seed), count, batched),
                draw(sampler, dataset, np.random.default_rng(seed), count, batched))

    def drew(used: list[str]) -> NondeterministicMechanism:
        routes = routes_of(used)
        return NondeterministicMechanism(
            f"the sampler {name} drew from {' and '.join(used)} on dataset {dataset!r} (in two runs of {count:,} "
            f"samples); those draws do not come from the seed, so the estimate could not be repeated from it. "
            f"Route it: estimate(..., patch={list(routes)!r}) serves that module-level randomness from the run's own "
            "streams. Or draw every random choice from the rng argument (a numpy Generator: rng.random(), "
            "rng.laplace(...), ...), or pass rng on (e.g. random_state=rng).",
            dataset=dataset, routes=routes,
        )

    first, second = run_unchanged(twice, drew)
    difference = _first_difference(first, second)
    if difference is not None:
        raise NondeterministicMechanism(
            f"the sampler {name}'s outputs differ between two runs under one seed on dataset {dataset!r}: "
            f"{difference}. It draws from a generator other than its rng argument -- np.random.* or random.*, a "
            "np.random.RandomState or random.Random of its own, random.SystemRandom or secrets -- or keeps state "
            "between calls; its samples are then not those of the seed (the estimate could not be repeated from "
            "it) and may not be independent. Draw every random choice from rng (or pass rng on to the library "
            "that draws, e.g. random_state=rng).",
            dataset=dataset, first=first, second=second,
        )
    return first


def _first_difference(first: Outputs, second: Outputs) -> str | None:
    """Where two runs' outputs first differ (NaN equal to NaN), or None when they are the same."""
    if first.kind != second.kind:
        return f"read as {first.kind} outputs in the first run and as {second.kind} in the second"
    if first.values is not None and second.values is not None:
        if first.values.shape != second.values.shape:
            return f"outputs of shape {first.values.shape[1:]} and then {second.values.shape[1:]}"
        same = (first.values == second.values) | (np.isnan(first.values) & np.isnan(second.values))
        rows = np.flatnonzero(~same.reshape(same.shape[0], -1).all(axis=1))
        if rows.size == 0:
            return None
        k = int(rows[0])
        return f"output #{k + 1} was {first.values[k].tolist()!r} and then {second.values[k].tolist()!r}"
    for k, (a, b) in enumerate(zip(items_of(first), items_of(second))):
        if not (a == b or repr(a) == repr(b)):
            return f"output #{k + 1} was {a!r} and then {b!r}"
    return None
