"""The one worst-case engine: row pairs in; eps*, delta, a verdict with its state and a witness out.

Every verdict dpverify gives — :func:`dpverify.verify`, the public-data and user-level checks, every
row of ``dpverify audit`` and the pytest plugin — comes from :func:`decide`. Callers hand it a
:class:`RowPairs`: a float64 matrix whose rows are output distributions (one per dataset, or per
conditioned run such as ``A_Relabel(t, w)``), the pairs of rows to compare, and optionally the exact
values behind each row, the dataset each row stands for and the neighbour relation the pairs must
satisfy. :func:`decide` sweeps every pair in float64 (vectorised), certifies the pairs near or over
the claim in interval arithmetic, and returns a :class:`Decision`.

Verdict states (:class:`Verdict`):

* ``HOLDS`` — proved on every pair. For float-valued rows the proof allows every probability to be
  off by its rounding (below): the claim holds for the exact mechanism too.
* ``HOLDS_WITHIN_ROUNDING`` — no pair violates the claim by more than the float error its
  probabilities carry, but some pair comes within that error (a float-tight mechanism, such as a
  clamped geometric computed in float64 at exactly its epsilon). Certify it by returning exact
  probabilities (int, Fraction, sympy) or by offering ``exact_distribution(dataset)``.
* ``VIOLATED`` — a certified witness whose excess ``P(S) - e^eps Q(S) - delta`` is larger than any
  rounding of its probabilities could explain.
* ``UNDECIDED`` — a pair could not be decided (exact arithmetic could not settle a tie), or the
  rows leave mass unexplored that could tip the claim either way (below; ``Decision.reason`` says).

``Decision.holds`` (and ``VerificationResult.holds``) is True for ``HOLDS`` and
``HOLDS_WITHIN_ROUNDING`` only: a CI gate passes on both, never on a violation larger than rounding
and never on an undecided pair.

The float error model. A probability returned as an exact number (int, Fraction, sympy) carries no
error. A float64 probability is assumed to be within relative error ``rho`` of the exact value,
``rho = DEFAULT_FLOAT_ERROR = gamma_k = k u / (1 - k u)`` with ``u = 2**-53`` and ``k = 2**20``:
Higham's bound for a value computed by at most ``k`` floating-point operations (sums, products,
quotients, exp and log of exact arguments) on non-negative terms, each correctly rounded to within
``u``. That is about ``1.16e-10``. A mechanism that subtracts nearly equal numbers, or needs more
operations, declares its own bound as the attribute ``float_relative_error`` (or the caller passes
``float_error=``); one that returns exact values, or offers ``exact_distribution``, gets ``0``. A
pair is then decided against every admissible exact distribution: it holds if the largest
admissible hockey-stick value ``sum_o max(0, P(o)(1 + rho) - e^eps Q(o)(1 - rho))`` is at most
delta, and is violated if the smallest ``sum_o max(0, P(o)(1 - rho) - e^eps Q(o)(1 + rho))``
exceeds it. The float64 sweep that selects pairs for certification keeps every pair within
``(2 rho + (K + 8) u)(1 + e^eps)`` of delta (``K`` outcomes), which bounds its own rounding.

Certification is grouped (:func:`dpverify.verdict._certify.walk_candidates`): rows are interned by their
exact content and error, so the candidates of a tight claim — a million directed pairs over a
handful of distinct row pairs — cost a handful of certificates, not a Python step each.
``Decision.certified_pairs`` counts those distinct row pairs, as before. Exact rows are still
fetched once per row a candidate uses (for a checker run: the mechanism evaluated again), which a
sound verdict on an exact tie cannot avoid: rows whose floats agree may differ exactly.

Exact figures. ``epsilon_star`` and ``delta_star`` start as the float64 sweep maxima, which can be
an ulp or two off: at an exact tie (``P(o) = e^eps Q(o)`` exactly, e.g. randomized response with
p = 5/6 at ``sympy.log(5)``) the float hockey-stick value can be ~1e-16 instead of 0, and the
float ``ln P - ln Q`` need not be the nearest float to ``ln 5``. They are replaced by exact figures
when the pairs that may attain them are known exactly:

* the pairs that may attain a maximum are every directed pair whose float figure lies within
  twice the sweep's margin of the float maximum (hockey-stick values: ``2 (2 rho + (K + 8) u)(1 +
  e^eps)`` plus the rounding of ``e^eps``; pure losses: ``2 (4 rho + 1e-12)``); a pair outside is
  below the maximum exactly too. For the hockey-stick value only the pairs passing the sweep's loss
  filter count (the others are exactly 0); when none passes, ``delta_star`` is exactly 0;
* every such pair must be a certification candidate or among the sweep's ``FIGURE_CAP`` (4,096)
  near-maximal others, have exact rows (no float error) and be evaluated within a budget (at most
  256 rows beyond those certification fetched, 1,024 distinct row pairs); its figure is computed
  exactly (rationals at a rational ``e^eps``: Fraction arithmetic; else mpmath intervals up to 1024
  bits with every tie ``P(o) = e^eps Q(o)`` proved by sympy) and must settle its nearest float;
* the figure is then the exact maximum over those pairs, rounded to the nearest float (a float
  claim ``delta`` equal to it holds: its ``2**-50`` allowance covers that rounding), and
  ``-0.0`` is never reported. ``delta_star`` is taken at the claim as certification reads it; a
  float claim stands for any real within its rounding, so for a float claim only an exact 0 (every
  such pair an exact tie there) replaces the float figure. ``epsilon_star`` does not depend on the
  claim (``ln`` of the largest ratio ``P(o)/Q(o)``: ``ln 5`` rounded to nearest at the tie above).

Otherwise — a float row among those pairs, an overflow of the cap or the budget, a figure that
cannot be settled, an exact figure farther from the float one than the margins allow (an
underflowed probability), per-pair deltas (``pair_delta``) for ``delta_star`` — the float figure is kept,
so a reported figure is never replaced by the maximum of fewer pairs than may attain it. In
practice: a claim at or near the worst case (the pairs near the maximum are then candidates) and
small instances get exact figures; a claim far from it on a large instance with many tied pairs
keeps the float ones (``delta_star`` is still exactly 0 there when no pair passes the loss filter).

Unexplored mass. Rows may be sub-distributions (``RowPairs.unexplored``: per row, an upper bound on
the mass an enumeration did not explore, which may fall on any outcome). :func:`decide` then proves
the claim from ``H_e + m_i <= delta`` on every directed pair and refutes it from ``H_e - e^eps m_j >
delta`` on one, each test a run of the engine on rows without unexplored mass; in between the verdict
is UNDECIDED with the reason and the fix. The maths and the two runs are in
:mod:`dpverify.verdict._unexplored`. The figures reported are those of the explored rows, and
``Decision.unexplored`` (the largest bound) says they are only that. With no unexplored mass none of
this runs.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.pair_sources import ArrayPairs
from dpverify.verdict import _unexplored
from dpverify.verdict._certify import RowClasses, is_zero, walk_candidates
from dpverify.verdict._certify import surely_within_rounding as _surely_within_rounding
from dpverify.verdict._figures import exact_figures
from dpverify.verdict._unexplored import declared_of, unexplored_of
from dpverify.verdict.privacy_loss import exp_epsilon
from dpverify.verdict.witness import Witness

__all__ = [
    "Verdict",
    "RowPairs",
    "Sweep",
    "Decision",
    "Witness",
    "sweep",
    "decide",
    "decide_pair",
    "DEFAULT_FLOAT_ERROR",
    "float_error_of",
    "sweep_settings",
    "merged_sweep",
    "unexplored_of",
    "declared_of",
]

_UNIT = 2.0**-53
_OPERATIONS = 2**20
#: Relative error assumed for a float64 probability (Higham's gamma_k, k = 2**20 operations).
DEFAULT_FLOAT_ERROR = _OPERATIONS * _UNIT / (1 - _OPERATIONS * _UNIT)
_CHUNK = 1 << 16


class Verdict(enum.Enum):
    """The state of a verdict; :attr:`passes` is what a CI gate reads."""

    HOLDS = "HOLDS"
    HOLDS_WITHIN_ROUNDING = "HOLDS_WITHIN_ROUNDING"
    VIOLATED = "VIOLATED"
    UNDECIDED = "UNDECIDED"

    @property
    def passes(self) -> bool:
        """True for HOLDS and HOLDS_WITHIN_ROUNDING: the claim holds up to float rounding."""
        return self in (Verdict.HOLDS, Verdict.HOLDS_WITHIN_ROUNDING)

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def combine(verdicts: Iterable[Verdict]) -> Verdict:
        """The verdict of a claim made of parts (every public sample, every proof step): VIOLATED
        if any part is, else UNDECIDED if any is, else HOLDS_WITHIN_ROUNDING if any is, else HOLDS."""
        found = set(verdicts)
        for state in (Verdict.VIOLATED, Verdict.UNDECIDED, Verdict.HOLDS_WITHIN_ROUNDING):
            if state in found:
                return state
        return Verdict.HOLDS


def float_error_of(mechanism: Any, default: float = DEFAULT_FLOAT_ERROR) -> float:
    """The relative error a mechanism's float probabilities carry (its declared
    ``float_relative_error``, else ``default``)."""
    value = getattr(mechanism, "float_relative_error", None)
    return default if value is None else check_float_error(value)


def check_float_error(value: Any) -> float:
    """Validate a relative float error: a number in [0, 1e-3]."""
    from dpverify.validation import check_number

    check_number(
        "float_error", value, at_least=0, at_most=1e-3,
        fix=f"it is a relative error per probability; the default is {DEFAULT_FLOAT_ERROR:.3g} (2**20 float operations)",
    )
    return float(value)


@dataclass
class RowPairs:
    """What :func:`decide` compares: pairs of probability rows.

    Attributes:
        matrix: float64 ``(rows, outcomes)``; each row a distribution over the same outcomes.
        left, right: int index arrays into the rows; pair ``i`` is ``(left[i], right[i])``.
        symmetric: both directions count (neighbours); False for a directed proof step.
        outcomes: labels of the columns (witness output sets); default ``range(K)``.
        exact_row: row -> exact Mapping outcome -> probability for certification; default the
            float row itself (a float is an exact binary rational).
        row_error: relative float error per row (array) or one number for all rows; default
            :data:`DEFAULT_FLOAT_ERROR` when ``exact_row`` is None, else 0.
        label: row -> the dataset (or run) it stands for, for witnesses; default the row index.
        is_neighbor: ``(label_a, label_b) -> bool``; when given, every witness is checked with it
            (a witness that is not a neighbour pair is an internal error, raised loudly).
        expected_pairs: when given, ``len(left)`` must equal it (an independent count).
        pair_delta: a claimed delta per pair (a data-dependent additive term such as Dagan–Feldman 2020 Appendix C
            delta(R)); the claim's delta is then ignored.
        source: the pairs as a stream (:mod:`dpverify.finite.pair_sources`) instead of ``left`` and
            ``right`` (pass None for both): chunks are computed as the sweep needs them. With
            arrays, the source is made from them.
        executor: where the sweep runs (:mod:`dpverify.parallel.executors`; None: serially here).
        progress: called as ``progress(pairs_done, pairs_total)`` while the sweep runs.
        matrix_error: the relative error of the float ``matrix`` itself when it exceeds
            ``row_error`` — rows certified from exact values (``exact_row``) whose floats were computed
            apart from them: the sweep must widen its margin by it, or a pair the floats put just
            under the claim would never be certified.
        unexplored: per row, an upper bound on the mass its enumeration did not explore (an array of
            floats or of exact numbers; a row's ``matrix`` entries and exact values are its explored
            part), or None when every row is complete (an array of zeros is made None).
            :func:`decide` decides such rows soundly (module docstring, "Unexplored mass"); a plain
            :func:`sweep` refuses them.
    """

    matrix: np.ndarray
    left: Any
    right: Any
    symmetric: bool = True
    outcomes: Sequence[Hashable] | None = None
    exact_row: Callable[[int], Mapping] | None = None
    row_error: Any = None
    label: Callable[[int], Any] | None = None
    is_neighbor: Callable[[Any, Any], bool] | None = None
    expected_pairs: int | None = None
    pair_delta: np.ndarray | None = None
    _logs: np.ndarray | None = field(default=None, repr=False)
    _columns: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    source: Any = None
    executor: Any = None
    progress: Callable[[int, int], None] | None = None
    matrix_error: float = 0.0
    unexplored: Any = None
    declared: frozenset | None = None  # the outputs unexplored mass may fall on (from_sampler(..., outputs=))
    _explored_only: bool = field(default=False, repr=False)  # a run of decide on the explored part

    def __post_init__(self) -> None:
        from dpverify.finite.pair_sources import as_source

        self.matrix = np.asarray(self.matrix, dtype=float)
        if self.matrix.ndim != 2:
            raise ValueError(f"matrix must be 2-D (rows x outcomes), got shape {self.matrix.shape}")
        if self.source is None:
            self.left = np.asarray(self.left, dtype=np.int64)
            self.right = np.asarray(self.right, dtype=np.int64)
            if self.left.shape != self.right.shape:
                raise AssertionError(f"pair arrays differ in length: {self.left.shape} vs {self.right.shape}")
            self.source = as_source(self.left, self.right)
        elif self.left is not None or self.right is not None:
            raise AssertionError("RowPairs takes its pairs as left/right arrays or as a source, not both")
        count = len(self.source)
        if self.expected_pairs is not None and count != self.expected_pairs:
            raise AssertionError(f"internal error: {count:,} pairs enumerated, {self.expected_pairs:,} expected")
        if self.pair_delta is not None:
            self.pair_delta = np.asarray(self.pair_delta, dtype=float)
            if self.pair_delta.shape != (count,):
                raise AssertionError("pair_delta must give one delta per pair")
        left: np.ndarray = self.left if self.left is not None else np.zeros(0, dtype=np.int64)
        right: np.ndarray = self.right if self.right is not None else left
        if left.size and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= self.matrix.shape[0]):
            raise AssertionError("internal error: a pair index is outside the rows")
        if self.unexplored is not None:
            tails = np.asarray(self.unexplored)
            if tails.shape != (self.matrix.shape[0],):
                raise AssertionError(f"internal error: unexplored must give one bound per row, got shape {tails.shape}")
            floats = _unexplored.upper_floats(tails)
            if not (floats >= 0).all():
                raise AssertionError("internal error: a negative unexplored mass")
            self.unexplored = tails if floats.any() else None

    @property
    def logs(self) -> np.ndarray:
        """``ln`` of the matrix, ``-inf`` at zeros (computed once)."""
        if self._logs is None:
            with np.errstate(divide="ignore"):
                self._logs = np.log(self.matrix)
        return self._logs

    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The matrix and its ``ln`` outcome-major, ``(outcomes, rows)`` C-contiguous (computed once):
        the sweep reads one outcome's column for a chunk of pairs with a 1-D gather, where a
        row-major gather copies short rows one by one (:mod:`dpverify.verdict._sweep`)."""
        if self._columns is None:
            probabilities = np.ascontiguousarray(self.matrix.T)
            if self._logs is not None:
                logs = np.ascontiguousarray(self._logs.T)
            else:
                with np.errstate(divide="ignore"):
                    logs = np.log(probabilities)  # elementwise: the same floats as ln of the matrix
            self._columns = (probabilities, logs)
        return self._columns

    def __len__(self) -> int:
        return len(self.source)

    def index_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair's ``(left, right)`` indices, materialised (memory grows with the pairs)."""
        if self.left is not None:
            return self.left, self.right
        return self.source.materialise()

    def errors(self) -> np.ndarray:
        """Relative float error of every row."""
        rows = self.matrix.shape[0]
        if self.row_error is None:
            value = DEFAULT_FLOAT_ERROR if self.exact_row is None else 0.0
            return np.full(rows, value)
        return np.broadcast_to(np.asarray(self.row_error, dtype=float), (rows,))

    def exact(self, row: int) -> Mapping:
        if self.exact_row is not None:
            found = self.exact_row(row)
            rest = getattr(found, "unexplored", 0)
            if rest != 0 and self.unexplored is None and not self._explored_only:
                raise AssertionError(
                    f"internal error: the row of {self.name(row)!r} leaves unexplored={rest} unexplored "
                    "but its rows were built without it (RowPairs.unexplored); the verdict would ignore that mass"
                )
            return found
        names = self.outcome_names()
        values = self.matrix[row]
        return {names[k]: float(values[k]) for k in np.flatnonzero(values)}

    def outcome_names(self) -> list:
        return list(range(self.matrix.shape[1])) if self.outcomes is None else list(self.outcomes)

    def name(self, row: int) -> Any:
        return row if self.label is None else self.label(row)


class _Candidates:
    """Directed pairs near or over the claim, worst first: ``slack`` (value - delta), rows ``first``
    and ``second``, ``pair`` index, float hockey-stick ``value`` and directed pure loss ``loss``."""

    def __init__(
        self, slack: np.ndarray, first: np.ndarray, second: np.ndarray, pair: np.ndarray,
        value: np.ndarray | None = None, loss: np.ndarray | None = None,
    ) -> None:
        order = np.argsort(-slack, kind="stable")
        self.slack, self.first, self.second, self.pair = slack[order], first[order], second[order], pair[order]
        self.value = np.zeros(slack.size) if value is None else value[order]
        self.loss = np.zeros(slack.size) if loss is None else loss[order]

    @classmethod
    def empty(cls) -> _Candidates:
        nothing = np.zeros(0, dtype=np.int64)
        return cls(np.zeros(0), nothing, nothing, nothing)

    def __len__(self) -> int:
        return int(self.slack.size)

    def __iter__(self):
        for start in range(0, self.slack.size, 4096):
            stop = start + 4096
            yield from zip(
                self.slack[start:stop].tolist(), self.first[start:stop].tolist(),
                self.second[start:stop].tolist(), self.pair[start:stop].tolist(),
            )


@dataclass(frozen=True)
class _Figures:
    """What the sweep keeps for exact figures (``decide``): the largest float value over the directed
    pairs passing the loss filter; the non-candidate directed pairs nearest the largest value and
    loss (``(first, second, value)`` arrays, at most ``FIGURE_CAP + 1`` of each per shard: more than
    ``FIGURE_CAP`` within twice the margin of the largest means too many, see
    :class:`dpverify.verdict._sweep._Near`); the sweep's margins."""

    passing_best: float
    near_values: Any
    near_losses: Any
    delta_margin: float
    epsilon_margin: float


@dataclass(frozen=True)
class Sweep:
    """The float64 sweep of :func:`sweep` over all pairs at one epsilon.

    Attributes:
        epsilon_star: max pure loss ``ln(P(o)/Q(o))`` over pairs (both directions when symmetric).
        epsilon_pair, epsilon_forward: the pair attaining it and its direction.
        delta_star: max hockey-stick value at ``epsilon`` (0 when not computed).
        delta_pair, delta_forward: the pair attaining it and its direction.
        stability: max ``|P(o) - Q(o)|`` over pairs and outcomes (``with_stability`` only).
        candidates: directed pairs ``(value - delta, i, j, pair)`` (rows, pair index) within the
            certification margin of the claim, worst first (only when a claim delta was given).
        figures: what :func:`decide` needs for exact figures (only when a claim delta was given).
    """

    epsilon_star: float
    epsilon_pair: int
    epsilon_forward: bool
    delta_star: float
    delta_pair: int
    delta_forward: bool
    stability: float
    candidates: Any = None
    figures: _Figures | None = None


def sweep(
    pairs: RowPairs,
    epsilon: float = 0.0,
    *,
    claim_delta: float | None = None,
    with_delta: bool = True,
    with_stability: bool = False,
    error: float = 0.0,
) -> Sweep:
    """Worst pure loss, hockey-stick value at ``epsilon`` and stability over every pair (float64).

    With ``claim_delta`` the directed pairs whose value may reach it (within the rounding margin of
    the module docstring, ``error`` being the largest row error) are collected as candidates.

    Pairs are streamed from ``pairs.source`` in chunks of ``2**16`` and swept in shards of whole
    chunks on ``pairs.executor`` (serial when None; :mod:`dpverify.parallel.executors`). Each shard returns
    its partial worst case — the first pair attaining its largest values (in the order chunk,
    direction, pair) and its candidates in sweep order — and the shards are merged in order with a
    strict ``>``, which is the serial sweep's own rule: every executor finds the same pairs.
    """
    from dpverify.parallel.executors import Shared, open_executor, shard_ranges
    from dpverify.verdict._sweep import sweep_shard

    if pairs.unexplored is not None:
        raise InvalidArgument(
            f"the rows leave up to {_unexplored.largest(pairs.unexplored):.3g} of their mass unexplored, so their "
            "worst-case figures are not known, only bounded; decide a claim with verify() (which accounts for the "
            "unexplored mass), or explore fully (from_sampler(..., tail=0) where the randomness is finite)."
        )
    settings = sweep_settings(pairs.matrix.shape[1], epsilon, symmetric=pairs.symmetric, claim_delta=claim_delta,
                              with_delta=with_delta, with_stability=with_stability, error=error)
    settings["source"] = pairs.source
    total = len(pairs.source)
    with open_executor(pairs.executor) as runner:
        chunks = -(-total // _CHUNK)
        tasks = shard_ranges(total, runner.shards() if runner.parallel else max(1, chunks // 16), _CHUNK)  # whole chunks
        probabilities, logs = pairs.columns()
        arrays = {"columns": probabilities, "log_columns": logs}
        if isinstance(pairs.source, ArrayPairs):  # index arrays travel once per worker, not once per shard
            arrays["left"], arrays["right"] = pairs.source.left, pairs.source.right
            settings["source"] = None
        if pairs.pair_delta is not None:
            arrays["pair_delta"] = pairs.pair_delta
        done = [0]

        def finished(index: int) -> None:
            done[0] += tasks[index][1] - tasks[index][0]
            if pairs.progress is not None:
                pairs.progress(done[0], total)

        parts = runner.map(sweep_shard, tasks, Shared(arrays, settings), finished)
    return merged_sweep(parts, settings)


def sweep_settings(
    outcomes: int, epsilon: float, *, symmetric: bool = True, claim_delta: float | None = None, with_delta: bool = True,
    with_stability: bool = False, error: float = 0.0,
) -> dict[str, Any]:
    """What every shard of :func:`sweep` reads besides the rows and the pairs (``source`` is None here:
    the caller sets it): the claim, ``e^eps`` and the certification margins over ``outcomes`` columns."""
    factor = exp_epsilon(epsilon)
    scale = 1.0 + factor if math.isfinite(factor) else math.inf
    return {
        "symmetric": symmetric, "source": None, "epsilon": float(epsilon), "factor": factor,
        "claim_delta": claim_delta, "with_delta": with_delta, "with_stability": with_stability,
        "delta_margin": (2 * error + (outcomes + 8) * _UNIT) * scale, "epsilon_margin": 4 * error + 1e-12,
    }


def merged_sweep(parts: Sequence[tuple], settings: Mapping[str, Any]) -> Sweep:
    """The shards' partial worst cases (:func:`dpverify.verdict._sweep.sweep_shard`, in pair order)
    merged into one :class:`Sweep`: strict ``>`` in shard order, candidates end to end."""
    claim_delta, with_delta = settings["claim_delta"], settings["with_delta"]
    best_eps, eps_at, eps_forward = -math.inf, -1, True
    best_delta, delta_at, delta_forward = -math.inf, -1, True
    stability = 0.0
    found = []
    for part in parts:
        if part[0] > best_eps:
            best_eps, eps_at, eps_forward = part[0], part[1], part[2]
        if part[3] > best_delta:
            best_delta, delta_at, delta_forward = part[3], part[4], part[5]
        stability = max(stability, part[6])
        found.extend(part[7])
    candidates = _Candidates(*(np.concatenate(parts) for parts in zip(*found))) if found else _Candidates.empty()
    figures = None
    if claim_delta is not None and with_delta:
        extras = [part[8] for part in parts]
        near = [_concatenated([extra[k] for extra in extras]) for k in (1, 2)]
        passing_best = max((extra[0] for extra in extras), default=-math.inf)
        figures = _Figures(passing_best, near[0], near[1], settings["delta_margin"], settings["epsilon_margin"])
    return Sweep(
        # + 0.0: a loss of -0.0 (log P - log P read backwards) is reported as 0.0
        max(best_eps, 0.0) + 0.0, eps_at, eps_forward, max(best_delta, 0.0) + 0.0, delta_at, delta_forward, stability,
        candidates, figures,
    )


def _concatenated(pieces: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The shards' ``(first, second, value)`` arrays end to end."""
    if not pieces:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    return tuple(np.concatenate(column) for column in zip(*pieces))  # type: ignore[return-value]


@dataclass(frozen=True)
class Decision:
    """The engine's answer on one claim.

    Attributes:
        verdict: the :class:`Verdict` state; ``holds`` is ``verdict.passes``.
        epsilon_star, delta_star: the worst case (pure loss; hockey-stick at the claimed epsilon):
            exact, rounded to the nearest float, where the module docstring's "Exact figures"
            allows, else the float64 maxima of ``sweep`` (which also names the pairs attaining them).
        witness: certified for VIOLATED; the closest pair for HOLDS_WITHIN_ROUNDING; else None.
        certified_pairs: distinct row pairs certified (equal exact rows and error: one certificate).
        read_rows: one row of every distinct exact row that certification or the figures read.
        within_rounding_pairs, undecided_pairs: how many candidates ended in those states.
        unexplored: the largest unexplored mass of a row (0.0 when every row is complete): then
            ``epsilon_star`` and ``delta_star`` are the explored rows' figures, not the true ones.
        reason: why an UNDECIDED verdict on rows with unexplored mass is undecided, and the fix.
    """

    verdict: Verdict
    epsilon_star: float
    delta_star: float
    witness: Witness | None
    certified_pairs: int
    within_rounding_pairs: int
    undecided_pairs: int
    sweep: Sweep
    witness_rows: tuple[int, int] | None = None
    read_rows: tuple[int, ...] = ()
    unexplored: float = 0.0
    reason: str = ""

    @property
    def holds(self) -> bool:
        return self.verdict.passes


def decide(pairs: RowPairs, epsilon: Any, delta: Any = 0.0, *, swept: Sweep | None = None) -> Decision:
    """Decide ``(epsilon, delta)`` on every pair of ``pairs``: sweep, certify, verdict.

    ``epsilon`` and ``delta`` may be exact (int, Fraction, sympy) or float (read as in
    :func:`dpverify.verdict._certify.effective_claim`). The candidates are certified by
    :func:`dpverify.verdict._certify.walk_candidates` (one certificate per distinct pair of rows); the
    figures are exact where the module docstring's "Exact figures" says so.

    ``swept``: the sweep already made elsewhere (row blocks evaluated and swept by workers,
    :mod:`dpverify.checking._blocks`), its rows being those of ``pairs``; then only certification
    and the figures run here.

    Rows with unexplored mass (``pairs.unexplored``) are decided by :func:`_decide_unexplored`.
    """
    if pairs.unexplored is not None:
        if swept is not None:
            raise AssertionError("internal error: a sweep made elsewhere cannot carry unexplored mass")
        return _decide_unexplored(pairs, epsilon, delta)
    errors = pairs.errors()
    largest = max(float(errors.max(initial=0.0)), pairs.matrix_error)
    result = swept if swept is not None else sweep(pairs, float(epsilon), claim_delta=float(delta), error=largest)
    # (with pair_delta the sweep compares each pair with its own delta)
    candidates = result.candidates
    quick = np.asarray(_surely_within_rounding(pairs, candidates, errors, epsilon, delta), dtype=bool)
    classes = RowClasses(pairs.matrix.shape[0], pairs.exact, errors)
    walk = walk_candidates(candidates, quick, classes, epsilon, delta, pairs.pair_delta)
    witness: Witness | None = None
    witness_rows = None
    if walk.stop < len(candidates):
        verdict = Verdict.VIOLATED
        i, j = int(candidates.first[walk.stop]), int(candidates.second[walk.stop])
        witness = _make_witness(pairs, i, j, walk.at[walk.stop], epsilon, _bound(pairs, candidates, walk.stop, delta))
        witness_rows = (i, j)
    elif walk.undecided:
        verdict = Verdict.UNDECIDED
    elif walk.within:
        verdict = Verdict.HOLDS_WITHIN_ROUNDING
        if walk.near is not None:
            i, j = int(candidates.first[walk.near]), int(candidates.second[walk.near])
            certificate = walk.at[walk.near]
            allowance = _allowance(certificate, errors[i], errors[j], epsilon)
            witness = _make_witness(
                pairs, i, j, certificate, epsilon, _bound(pairs, candidates, walk.near, delta), within=True,
                allowance=allowance,
            )
            witness_rows = (i, j)
    else:
        verdict = Verdict.HOLDS
    epsilon_star, delta_star = exact_figures(pairs, result, classes, errors, epsilon)
    return Decision(
        verdict, epsilon_star, delta_star, witness, len(walk.certificates), walk.within, walk.undecided, result,
        witness_rows, tuple(classes.first_rows),
    )


def _decide_unexplored(pairs: RowPairs, epsilon: Any, delta: Any) -> Decision:
    """The claim on sub-distributions (:mod:`dpverify.verdict._unexplored`): refuted when a directed
    pair has ``H_e - e^eps m_j > delta`` (every pair directed, its delta raised by ``e^eps m_j``),
    else proved when every directed pair has ``H_e + m_i <= delta`` (the augmented rows), else
    UNDECIDED; the figures are the explored rows' (the engine run on them as they are)."""
    tails = pairs.unexplored
    rows = pairs.matrix.shape[0]
    if pairs.matrix.shape[1] == 0:  # nothing explored on any row: one empty column for the sweeps
        pairs = replace(pairs, matrix=np.zeros((rows, 1)), outcomes=[_unexplored.NOTHING], left=None, right=None,
                        _logs=None, _columns=None)
    left, right = pairs.index_arrays()
    first, second = _unexplored.directed(left, right, pairs.symmetric)
    base = pairs.pair_delta
    if base is not None and pairs.symmetric:
        base = np.concatenate([base, base])
    directed: dict[str, Any] = {"left": first, "source": None, "symmetric": False, "expected_pairs": None,
                                "unexplored": None, "_explored_only": True}
    explored = decide(replace(pairs, left=None, right=None, source=pairs.source, unexplored=None, _explored_only=True),
                      epsilon, delta)
    upper = _unexplored.upper_floats(tails)
    # (exact rows computed apart from the floats, matrix_error, may leave a little more unexplored)
    bounds = _unexplored.violation_bounds(delta if base is None else base, epsilon,
                                          upper[second] * (1 + 2 * pairs.matrix_error))
    violated = decide(replace(pairs, right=second, pair_delta=bounds, **directed), epsilon, delta)
    largest = float(upper.max())
    read = {*explored.read_rows, *violated.read_rows}
    if violated.verdict is Verdict.VIOLATED:
        assert violated.witness is not None and violated.witness_rows is not None
        i, j = violated.witness_rows
        claimed = delta
        if base is not None:
            claimed = float(base[int(np.flatnonzero((first == i) & (second == j))[0])])
        witness = replace(violated.witness, delta=claimed, unexplored=_unexplored.row_mass(pairs.exact(j), tails, j))
        return Decision(Verdict.VIOLATED, explored.epsilon_star, explored.delta_star, witness,
                        violated.certified_pairs, 0, violated.undecided_pairs, explored.sweep, (i, j),
                        tuple(sorted(read)), largest)
    # a pure claim on declared outputs: the first row of each pair with its bound on every declared output
    # (Proved only clear of rounding); otherwise both rows with their bounds on outcomes of their own
    declared = pairs.declared if pairs.declared is not None and base is None and is_zero(delta) else None
    if declared is None:
        matrix = _unexplored.augmented(pairs.matrix, upper)
        outcomes = [*pairs.outcome_names(), _unexplored.TAIL_P, _unexplored.TAIL_Q]
    else:
        matrix, outcomes = _unexplored.declared_augmented(pairs.matrix, upper, list(pairs.outcome_names()), declared)
    cache: dict[int, Mapping] = {}

    def augmented_row(index: int) -> Mapping:
        row = index % rows
        content = cache.get(row)
        if content is None:
            content = cache[row] = pairs.exact(row)
        mass = _unexplored.row_mass(content, tails, row)
        if mass == 0:
            return content
        if declared is None:
            return {**content, (_unexplored.TAIL_P if index < rows else _unexplored.TAIL_Q): mass}
        if index >= rows:  # the second row of a pair: its explored part (Q(o) >= Q_e(o)), a plain mapping
            return dict(content)
        return {**content, **{o: content.get(o, 0) + mass for o in declared}}

    errors = pairs.errors()
    holds = decide(replace(
        pairs, matrix=matrix, right=second + rows, pair_delta=base, outcomes=outcomes, exact_row=augmented_row,
        row_error=np.concatenate([errors, errors]), label=lambda index: pairs.name(index % rows),
        _logs=None, _columns=None, declared=None, **{**directed, "_explored_only": False},
    ), epsilon, delta)
    read.update(row % rows for row in holds.read_rows)
    certified = violated.certified_pairs + holds.certified_pairs
    undecided = violated.undecided_pairs + holds.undecided_pairs
    if holds.verdict.passes if declared is None else holds.verdict is Verdict.HOLDS:
        return Decision(holds.verdict, explored.epsilon_star, explored.delta_star, None, certified,
                        holds.within_rounding_pairs, 0, explored.sweep, None, tuple(sorted(read)), largest)
    reason = (_unexplored.undecided_reason(largest, holds.sweep.delta_star, delta, pure=is_zero(delta))
              if declared is None
              else _unexplored.declared_reason(largest, epsilon))
    return Decision(Verdict.UNDECIDED, explored.epsilon_star, explored.delta_star, None, certified, 0, undecided,
                    explored.sweep, None, tuple(sorted(read)), largest, reason)



def _bound(pairs: RowPairs, candidates: _Candidates, position: int, delta: Any) -> Any:
    return delta if pairs.pair_delta is None else float(pairs.pair_delta[int(candidates.pair[position])])




def decide_pair(
    p: Mapping, q: Mapping, epsilon: Any, delta: Any = 0.0, *, dataset: Any = "D", neighbor: Any = "D'",
    float_error: float | None = None, is_neighbor: Callable[[Any, Any], bool] | None = None,
) -> Decision:
    """:func:`decide` on one pair of output distributions (both directions), e.g. a pair found by a
    Hypothesis search. Exact values carry no error; floats carry ``float_error`` (default
    :data:`DEFAULT_FLOAT_ERROR`)."""
    outcomes = list(dict.fromkeys([*p, *q]))
    matrix = np.array([[float(d.get(o, 0)) for o in outcomes] for d in (p, q)])
    rho = DEFAULT_FLOAT_ERROR if float_error is None else check_float_error(float_error)
    errors = [0.0 if getattr(d, "is_exact", False) else rho for d in (p, q)]
    rows = RowPairs(
        matrix, np.array([0]), np.array([1]), outcomes=outcomes, exact_row=(p, q).__getitem__, row_error=errors,
        label=(dataset, neighbor).__getitem__, is_neighbor=is_neighbor, expected_pairs=1,
        unexplored=unexplored_of((p, q)), declared=declared_of((p, q)),
    )
    return decide(rows, epsilon, delta)


def _allowance(certificate: Any, p_error: float, q_error: float, epsilon: Any) -> float:
    return float(p_error) * float(certificate.p_mass) + exp_epsilon(epsilon) * float(q_error) * float(certificate.q_mass)


def _make_witness(
    pairs: RowPairs, i: int, j: int, certificate: Any, epsilon: Any, delta: Any, *, within: bool = False, allowance: float = 0.0
) -> Witness:
    dataset, neighbor = pairs.name(i), pairs.name(j)
    if pairs.is_neighbor is not None and not pairs.is_neighbor(dataset, neighbor):
        raise AssertionError(
            f"internal error: the witness pair is not a neighbour pair under the relation: {dataset!r} vs {neighbor!r}"
        )
    return Witness(
        dataset, neighbor, certificate.output_set, certificate.p_mass, certificate.q_mass, epsilon, delta,
        within, allowance,
    )
