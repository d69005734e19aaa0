"""The rounds of a sampled run under a time budget, and the confidence each round spends.

Used by :func:`dpverify.checking.statistical.estimate.estimate_sampler` (its module docstring states the
procedure). The soundness of the union bound across rounds rests on one invariant, kept here: each
round's level is fixed before its test draws are made, and the levels of a run sum to at most
``alpha = 1 - confidence`` whatever the timings (tested with simulated clocks).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from dpverify.checking.statistical._selection import TESTS

__all__ = ["Schedule", "TIME_BUDGET", "FIRST_DRAWS", "POOL", "MIN_SAMPLES"]

#: The fewest samples per dataset accepted (half of them choose events, half test them).
MIN_SAMPLES = 1000
#: Seconds a run may take when neither ``samples`` nor ``time_budget`` is given.
TIME_BUDGET = 10.0
#: Draws per dataset of the first selection draw of a run under a time budget.
FIRST_DRAWS = 10_000
#: The most draws per dataset kept (summarised) for selection across rounds.
POOL = 1_000_000
#: A test round before the last draws this many times the draws made before it.
GROWTH = 2
#: A round is the last unless, after it, a last round this many times all draws so far still fits.
FINAL = 3
#: The share of the time left a last round is planned to take (the rest absorbs a slower machine).
SAFETY = 0.9
#: Seconds of the budget kept back for the last selection and the result.
RESERVE = 0.25


class Schedule:
    """How many draws each round makes and the confidence it spends (the module docstring).

    With ``samples`` alone: one selection draw of ``samples // 2`` and one test round of the rest,
    spending all of ``alpha = 1 - confidence``. With a time budget: a selection draw of
    :data:`FIRST_DRAWS`, then test rounds, each twice the draws of everything before it, until the
    next one would not fit in the budget: that one is the last, sized to fill what is left. Test
    round ``r`` (from 1) spends ``alpha / 2^(r+2)`` unless it is the last, which spends what is left of
    ``alpha`` (at least ``3/4`` of it): the levels are fixed before each round draws, and sum to at
    most ``alpha`` on every run.
    """

    def __init__(self, samples: int | None, time_budget: float | None, started: float, alpha: float,
                 clock: Callable[[], float] = time.perf_counter, datasets: int = 1) -> None:
        self.clock = clock
        self.adaptive = time_budget is not None or samples is None
        self.cap = samples
        self.budget = (TIME_BUDGET if time_budget is None else float(time_budget)) if self.adaptive else None
        self.deadline = started + self.budget if self.budget is not None else math.inf
        self.alpha = alpha
        self.spent = 0.0
        self.drawn = 0
        self.history: list[tuple[int, float]] = []  # (draws per dataset, seconds drawing) of each round
        self.counting = 0.0  # seconds per draw and event counted, per dataset (the last round's)
        self.summarising = 0.0  # seconds per draw kept for selection (all datasets)
        self.selecting = 0.0  # seconds of the last selection
        self.datasets = datasets
        self.done = False
        if self.adaptive:
            self.first_draws = FIRST_DRAWS if samples is None else max(min(FIRST_DRAWS, samples // 4), MIN_SAMPLES // 2)
        else:
            assert samples is not None
            self.first_draws = samples // 2

    def record(self, draws: int, seconds: float, timings: list[tuple[float, float, float]], events: int,
               kept: int, selecting: float = 0.0, datasets: int | None = None) -> None:
        """A round of ``draws`` per dataset on ``datasets`` datasets (all by default) took ``seconds`` on
        the executor, after ``selecting`` seconds in this process (selection, pooling); ``timings``:
        each task's seconds drawing, counting (``events`` counted, over all datasets) and summarising
        ``kept`` draws per dataset for later selection."""
        self.drawn += draws
        datasets = self.datasets if datasets is None else datasets
        spent = [sum(column) for column in zip(*timings)] if timings else [1.0, 0.0, 0.0]
        total = max(sum(spent), 1e-9)
        drawing, counting, summarising = (seconds * part / total for part in spent)
        self.history.append((draws, max(drawing / max(datasets, 1), 1e-9)))  # per dataset drawn
        if events:
            self.counting = counting / (draws * events)  # per draw and event counted
        if kept:
            self.summarising = summarising / (kept * max(datasets, 1))
        self.selecting = selecting

    def _seconds(self, draws: int, *, keep: bool, datasets: int | None = None, events: int | None = None) -> float:
        """The predicted seconds of a round of ``draws`` per dataset on ``datasets`` datasets (all by
        default) counting ``events`` (two per test by default): this process's share as long as the
        last round's; drawing on a line through the last two rounds (a fixed cost -- the executor's
        dispatch -- and a cost per draw; the last round's rate alone when that line does not rise);
        counting at the last round's rate; summarising the draws kept."""
        datasets = self.datasets if datasets is None else datasets
        events = 2 * TESTS if events is None else events
        last_draws, last_seconds = self.history[-1]
        drawing = last_seconds * draws / last_draws
        if len(self.history) >= 2:
            before_draws, before_seconds = self.history[-2]
            if last_draws > before_draws and last_seconds > before_seconds:
                per_draw = (last_seconds - before_seconds) / (last_draws - before_draws)
                drawing = max(last_seconds - per_draw * last_draws, 0.0) + per_draw * draws
        kept = min(draws, max(POOL - self.drawn, 0)) if keep else 0
        return (self.selecting + drawing * datasets + self.counting * draws * events
                + self.summarising * kept * datasets)

    def _room(self, left: float, **work: int) -> int:
        """The most draws per dataset a last round (keeping nothing) can make in ``left`` seconds."""
        low, high = 0, 1
        while self._seconds(high, keep=False, **work) <= left and high < 1 << 40:
            high *= 2
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if self._seconds(middle, keep=False, **work) <= left else (low, middle)
        return low

    def resize_last(self, size: int, datasets: int, events: int) -> int:
        """The last round's draws per dataset, planned again once its events are chosen: it draws only
        ``datasets`` datasets and counts ``events``. Its level is fixed already, and its size is
        fixed here, before any of its draws."""
        if not self.adaptive or self.budget is None:
            return size
        left = SAFETY * (self.deadline - self.clock() - RESERVE + self.selecting)  # selection is done
        room = self._room(left, datasets=max(datasets, 1), events=max(events, 1)) if left > 0 else 0
        if self.cap is not None:
            room = min(room, self.cap - self.drawn)
        return max(room, min(size, MIN_SAMPLES // 2))

    def next_round(self, number: int) -> tuple[int, float, int] | None:
        """Round ``number``'s test draws per dataset, its level (its share of alpha) and how many of its
        draws are kept for later selection; None when the run is over."""
        if self.done:
            return None
        if not self.adaptive:
            assert self.cap is not None
            self.done = True
            self.spent = self.alpha
            return self.cap - self.cap // 2, self.alpha, 0
        left = SAFETY * (self.deadline - self.clock() - RESERVE)
        room = self._room(left) if left > 0 else 0
        if self.cap is not None:
            room = min(room, self.cap - self.drawn)
        size = GROWTH * self.drawn
        after = self.drawn + size
        # the last round unless, after this one, a round twice the draws so far fits in the time and the cap
        fits_time = self._seconds(size, keep=True) + self._seconds(FINAL * after, keep=False) <= left
        fits_cap = self.cap is None or (FINAL + 1) * after <= self.cap
        last = not (fits_time and fits_cap) or size >= room
        if last:
            size = room
            if size < MIN_SAMPLES // 2:
                return None
        level = self.alpha - self.spent if last else self.alpha / 2 ** (number + 2)
        self.spent += level
        self.done = last
        return size, level, 0 if last else min(size, max(POOL - self.drawn, 0))
