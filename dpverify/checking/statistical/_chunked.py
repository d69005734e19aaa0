"""Event choice on the executors, for runs over many pairs (``estimate_sampler`` beyond
:data:`CHUNKED_PAIRS` pairs).

Selection normally reads every dataset's summarised draws in the driver. Over a million pairs (some
100,000 datasets) those summaries do not fit in one process, and choosing events pair by pair (a few
milliseconds each) would take an hour on one core. Instead the pairs are cut into chunks of
:data:`CHUNK` consecutive pairs, and one executor task per chunk draws the selection draws of the
chunk's datasets itself -- from each dataset's own selection stream, so a dataset met in several
chunks is drawn identically in each -- summarises them, ranks every pair's events
(:func:`dpverify.checking.statistical._selection.candidates`) and sends back only the candidates the final choice
could take (:func:`~dpverify.checking.statistical._selection.trimmed`). The driver's choice over those is the choice
over every pair's candidates: the same events, in the same order, as selection in the driver on the
same draws.

Redrawing costs sampling: a dataset is drawn once per chunk it appears in (the pairs of one dataset
are consecutive in an enumeration, so that is about once per neighbour relation's degree). It keeps
memory flat: a task holds one chunk's draws, the driver a few candidates per chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpverify.checking.statistical._sampling import draw, summarise
from dpverify.checking.statistical._selection import Candidate, Selection, candidates, choose, trimmed
from dpverify.parallel.executors import Runner, Shared

__all__ = ["CHUNK", "CHUNKED_PAIRS", "select_chunk", "select_on_executor"]

#: More pairs than this are selected on the executors, a chunk per task.
CHUNKED_PAIRS = 2_000
#: Pairs per task.
CHUNK = 500


def select_chunk(task: tuple, shared: Shared) -> tuple[list[Candidate], int]:
    """Executor task: the candidates of one chunk of pairs (``task = (pairs, datasets, seeds)``:
    ``(number, i, j)`` per pair, and each dataset and its selection seed by index)."""
    pairs, datasets, seeds = task
    summaries = {
        index: summarise(draw(shared["sampler"], dataset, np.random.default_rng(seeds[index]), shared["count"],
                              shared["batched"]), bits=shared["bits"])
        for index, dataset in datasets.items()
    }
    pool, scored = candidates(pairs, summaries, shared["selection"])
    return trimmed(pool, shared["selection"]), scored


def select_on_executor(runner: Runner, shared: dict[str, Any], pairs: Sequence[tuple[int, int]], datasets: Sequence,
                       seeds: Sequence, count: int, chosen: Selection,
                       on_done: Callable[[int], None] | None = None) -> tuple[list[Candidate], int]:
    """The events to test over ``pairs``, chosen on ``count`` selection draws of each dataset (from
    ``seeds``) by executor tasks of :data:`CHUNK` pairs, and how many events were scored."""
    tasks = []
    for start in range(0, len(pairs), CHUNK):
        chunk = [(number, i, j) for number, (i, j) in enumerate(pairs[start:start + CHUNK], start)]
        used = sorted({index for _, i, j in chunk for index in (i, j)})
        tasks.append((chunk, {index: datasets[index] for index in used}, {index: seeds[index] for index in used}))
    found = runner.map(select_chunk, tasks, Shared(objects={**shared, "count": count, "selection": chosen}), on_done)
    pool = [candidate for part, _ in found for candidate in part]
    return choose(pool, chosen), sum(scored for _, scored in found)
