"""The path budget of a sampler's enumeration: the pace of its passes by mass, and the refusals.

:func:`~dpverify.finite.sampler.sampling.from_sampler` enumerates at most ``max_paths`` runs per
dataset. Without a tail, the path count is estimated after :data:`ESTIMATE_AFTER` runs by Knuth's
estimator over :data:`PROBES` random paths, and a count over four times ``max_paths`` is refused
then (:func:`refuse_paths`). With a tail the paths are explored in passes by mass (cutoffs 1/16,
1/256, ...), and the estimate is the passes' *pace*: the share of the mass left that a pass kept,
and its runs against the pass before's, the kinder of the last two passes'. Carried on pass after
pass until the mass left is within the tail, it gives the runs the tail would take
(:func:`out_of_reach`); only a tree whose runs grow at least :data:`MIN_GROWTH` times a pass is
projected, and a projection over four times ``max_paths`` is refused at once, and every refusal with a tail names the tail the
finished passes reached (:func:`refuse_tail`). Since the cutoffs do not depend on the tail, that
tail stops a run after those very passes and runs.

A projection is advice, never a verdict: a refused enumeration gives no verdict at all, and raising
``max_paths`` past a quarter of the projection runs the passes on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NoReturn

from dpverify.errors import EnumerationTooLarge

__all__ = ["CUTOFF_STEP", "ESTIMATE_AFTER", "OVER", "PROBES", "Pass", "out_of_reach", "refuse_paths", "refuse_tail"]

#: Runs enumerated before the path count is first estimated (an early refusal of a huge sampler).
ESTIMATE_AFTER = 1_000
#: Random paths averaged by the Knuth estimate of the path count.
PROBES = 64
#: Each finer pass over the paths left unexplored divides the mass cutoff by this.
CUTOFF_STEP = 16
#: A projection's path count (runs) above this many times ``max_paths`` is refused early.
OVER = 4
#: The growth of runs per pass (16x finer cutoff) below which nothing is refused early: a tree whose
#: paths multiply at least this fast (rejection rounds that branch: 10x; a balanced tree: 16x) keeps
#: its pace, while chains (1x) and a wide draw opening over a few passes (3x, then 2x, then 1x) do not.
MIN_GROWTH = 4.0
_ONE = Fraction(1)
_MAX_PASSES = 10_000  # the passes a projection of the reachable tail carries the pace over, at most


@dataclass(frozen=True)
class Pass:
    """Where one pass by mass left the enumeration of a dataset: the runs so far, the mass still
    unexplored (an upper bound), the seconds since the enumeration began."""

    runs: int
    unexplored: Fraction
    seconds: float


_START = Pass(0, _ONE, 0.0)


def out_of_reach(passes: list[Pass], tail: Fraction, max_paths: int) -> float | None:
    """The runs the passes' pace projects to reach ``tail``, when that is over :data:`OVER` times
    ``max_paths``; None when it is not, or when there is no pace yet.

    The pace is the kinder of the last two passes' (the smaller share of mass kept, the smaller growth
    of runs), both must have finished some mass, and the runs must grow at least :data:`MIN_GROWTH`
    times a pass: a wide draw whose branches all fall below the first cutoffs finishes nothing for a
    pass or two, then much at once, and its runs grow 3x, then 2x, then not at all; read as a
    geometric growth it would look like a tree without end."""
    keep, growth = _pace(passes)
    if keep is None or growth < MIN_GROWTH:
        return None
    before, last = passes[-2], passes[-1]
    needed = math.ceil(math.log(float(tail / last.unexplored)) / math.log(keep))
    projected = last.runs + _runs_after(last.runs - before.runs, growth, needed)
    return projected if projected > OVER * max_paths else None


def refuse_tail(name: str, max_paths: int, tail: Fraction, dataset: Any, elapsed: float, passes: list[Pass], *,
                runs: int | None = None, projected: float | None = None, estimate: float | None = None) -> NoReturn:
    """Raise EnumerationTooLarge for a ``tail`` out of reach: after ``runs`` runs at ``max_paths``
    (mid-pass), or after the last of ``passes`` with the ``projected`` runs (in a tree of ``estimate``
    paths by Knuth's estimator). Names what a run costs,
    the mass the last passes left, the tail the last one reached (a run given it stops there) and,
    at their pace, the tail ``max_paths`` would reach."""
    runs = passes[-1].runs if runs is None else runs
    cost = f"{elapsed / runs * 1e3:.3g} ms per run"
    if projected is None:
        head = (f"the sampler {name} ran {runs:,} times (max_paths={max_paths:,}) on dataset {dataset!r} in "
                f"{seconds_text(elapsed)} ({cost}) and still leaves more than tail={float(tail):g} of its probability "
                "unexplored")
    else:
        size = "more than 1e308" if math.isinf(projected) else f"about {projected:.3g}"
        head = (f"the sampler {name} cannot reach tail={float(tail):g} within max_paths={max_paths:,} on dataset "
                f"{dataset!r}: at the pace of its passes by mass it needs {size} runs ({runs:,} so far, "
                f"{seconds_text(elapsed)}, {cost}), in a tree of {_paths_text(estimate)} paths by Knuth's estimate")
    if passes:
        steps = ", ".join(f"{float(p.unexplored):.3g} after {p.runs:,}" for p in passes[-3:])
        reached = passes[-1]
        fits = f"tail={_round_up(reached.unexplored):g} stops after the same {reached.runs:,} runs"
        keep, growth = _pace(passes)
        if keep is not None:
            within = _reach(reached, reached.runs - passes[-2].runs, keep, growth, max_paths)
            if within < reached.unexplored:
                fits += f"; at this pace max_paths={max_paths:,} reaches about tail={_round_up(within):.2g}"
        detail = f". Mass left unexplored by its passes: {steps} runs; {fits}"
    else:
        detail = f". Its first pass (every path down to mass 1/{CUTOFF_STEP}) alone runs more than max_paths"
    raise EnumerationTooLarge(
        f"{head}{detail}. Allow a larger tail (from_sampler(sampler, tail=...)), raise max_paths, make each run "
        "cheaper (build what does not depend on the draws once, outside the sampler), or check it statistically "
        "with dpverify.estimate."
    )


def refuse_paths(name: str, max_paths: int, dataset: Any, paths: int, elapsed: float, estimate: float, *,
                 early: bool) -> NoReturn:
    """Raise EnumerationTooLarge after ``paths`` paths (``elapsed`` seconds) without a tail, with
    Knuth's ``estimate`` of the path count (made ``early``: after the first :data:`ESTIMATE_AFTER`)."""
    per_path = elapsed / paths
    when = f"estimated after the first {paths:,} paths" if early else f"{paths:,} enumerated so far"
    count = max(estimate, paths + 1)
    size = "more than 1e308" if math.isinf(count) else f"about {count:.3g}"
    duration = "" if math.isinf(count) else (
        f", which would take about {seconds_text(count * per_path)} at the {per_path * 1e6:.3g} us per path measured here"
    )
    raise EnumerationTooLarge(
        f"the sampler {name} has more than max_paths={max_paths:,} execution paths on dataset "
        f"{dataset!r} ({when}): {size} by Knuth's estimate over {PROBES} random paths{duration}. "
        "Raise max_paths (from_sampler(sampler, max_paths=...)), "
        "make the sampler's draws smaller (fewer records, a smaller range, fewer draws), or check it "
        "statistically with dpverify.estimate."
    )


def _paths_text(estimate: float | None) -> str:
    return "more than 1e308" if estimate is None or math.isinf(estimate) else f"about {estimate:.3g}"


def seconds_text(seconds: float) -> str:
    """A duration as seconds, minutes or hours (three significant digits)."""
    return f"{seconds:.3g} s" if seconds < 120 else (f"{seconds / 60:.3g} min" if seconds < 7200 else f"{seconds / 3600:.3g} h")


def _pace(passes: list[Pass]) -> tuple[float | None, float]:
    """The kinder pace of the last two passes: the smaller of their shares of the mass left before
    each, and the smaller of their runs over the runs of the pass before (at least 1); None when
    there are not two such passes, or one of them finished nothing. The enumeration's start counts
    as a pass."""
    points = [_START, *passes]
    if len(points) < 4:
        return None, 1.0
    keeps, growths = [], []
    for first, before, last in (points[-4:-1], points[-3:]):
        if not last.unexplored < before.unexplored:
            return None, 1.0
        keeps.append(float(last.unexplored / before.unexplored))
        growths.append((last.runs - before.runs) / max(before.runs - first.runs, 1))
    return min(keeps), max(min(growths), 1.0)


def _runs_after(runs: int, growth: float, passes: int) -> float:
    """The runs of ``passes`` more passes, each ``growth`` times the one before (the last ran ``runs``)."""
    if growth == 1.0:
        return float(runs * passes)
    try:
        return runs * (growth ** (passes + 1) - growth) / (growth - 1)
    except OverflowError:
        return math.inf


def _reach(last: Pass, runs: int, keep: float, growth: float, max_paths: int) -> Fraction:
    """The mass left after the passes that fit in ``max_paths`` at this pace (``last``'s when none
    does), in floats: a pace near 1 over many cheap passes must not multiply Fractions for long."""
    mass = float(last.unexplored)
    passes = 1
    while passes <= _MAX_PASSES and last.runs + _runs_after(runs, growth, passes) <= max_paths and mass * keep > 1e-300:
        mass *= keep
        passes += 1
    return Fraction(mass)


def _round_up(mass: Fraction) -> float:
    """``mass`` rounded up to two significant digits, as a float at least ``mass`` (a tail to pass)."""
    exponent = math.floor(math.log10(mass)) - 1
    value = math.ceil(mass / Fraction(10) ** exponent) * 10.0**exponent
    while Fraction(value) < mass:
        value = math.nextafter(value, math.inf)
    return value
