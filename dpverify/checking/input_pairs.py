"""Verification on given input pairs, the query-vector neighbour relation and StatDP's patterns.

The statistical testers (StatDP: Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of
Differential Privacy", CCS 2018; DP-Sniper: Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper:
Black-Box Discovery of Differential Privacy Violations using Classifiers", IEEE S&P 2021) and the
verifiers that follow them run mechanisms on *query-answer vectors*: the input is the vector
``q = (q_1, ..., q_k)`` of answers of ``k`` sensitivity-1 queries, and two inputs are neighbours
when every answer moves by at most 1 ("all differ", StatDP's ``ALL_DIFFER``) or when exactly one
answer moves by at most 1 ("one differ", ``ONE_DIFFER``, the histogram convention: one record
changes one bin).

* :func:`query_vectors` is that relation as a :class:`~dpverify.finite.neighbors.NeighborRelation`:
  ``verify(mechanism, records=range(m + 1), n=k, neighbors=query_vectors())`` enumerates every
  vector in ``{0..m}^k`` and every neighbour of it.
* :func:`statdp_patterns` is StatDP's default input set (its ``generate_databases``), which
  DP-Sniper's ``PatternGenerator`` reuses.
* :func:`verify_pairs` decides a claim on given pairs (or on any :class:`InputPairs`) through the
  one engine, :func:`dpverify.verdict.engine.decide`: same verdict states and result type as
  :func:`dpverify.verify`, and every witness is one of the given pairs. Mechanisms with continuous
  outputs (they offer ``output_density``) are decided by :mod:`dpverify.densities.continuous`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from numbers import Real
from typing import Any, Literal

import numpy as np

from dpverify.checking.checker import evaluate
from dpverify.errors import InvalidArgument
from dpverify.finite._global_random import call_unchanged
from dpverify.finite.neighbors import NeighborRelation, PairSet, relation
from dpverify.finite.records import check_records
from dpverify.types import ExecutorSpec, RealNumber
from dpverify.validation import check_integer, check_positive, exact_number
from dpverify.verdict.assumptions import Assumption, Status, new_seed, settle
from dpverify.verdict.engine import (
    RowPairs,
    Verdict,
    check_float_error,
    decide,
    declared_of,
    float_error_of,
    sweep,
    unexplored_of,
)
from dpverify.verdict.privacy_loss import check_delta, check_epsilon, profile_grid
from dpverify.verdict.results import PairsResult

__all__ = [
    "InputPairs",
    "QueryVectors",
    "PairsResult",
    "query_vectors",
    "statdp_patterns",
    "all_query_vectors",
    "verify_pairs",
]

_DIFFER = ("all", "one")


# -- the relation ---------------------------------------------------------------------------------


class QueryVectors(NeighborRelation):
    """Neighbouring query-answer vectors (StatDP's sensitivity conventions).

    A dataset is a tuple of ``k`` numbers (the answers of ``k`` queries of sensitivity
    ``sensitivity``). With ``differ="all"`` (StatDP's ALL_DIFFER, used for noisy max and SVT) two
    distinct vectors are neighbours when ``|q_i - q'_i| <= sensitivity`` for every ``i`` (l-infinity
    distance at most the sensitivity); with ``differ="one"`` (ONE_DIFFER, used for histograms) when
    they differ in exactly one coordinate, by at most the sensitivity.

    Pass the answer values as ``records`` and ``k`` as ``n``:
    ``verify(M, records=range(3), n=5, neighbors=query_vectors())`` checks every vector of
    ``{0, 1, 2}^5``. The enumeration is black-box only (a query vector is ordered).
    """

    def __init__(self, sensitivity: Any = 1, differ: str = "all") -> None:
        check_positive("sensitivity", sensitivity, fix="StatDP's queries have sensitivity 1")
        self._bound = exact_number("sensitivity", sensitivity)  # the one number policy (validation)
        if differ not in _DIFFER:
            raise InvalidArgument(
                f"differ must be 'all' (every answer may move, StatDP's ALL_DIFFER) or 'one' (one answer "
                f"moves, ONE_DIFFER for histograms), got differ={differ!r}."
            )
        self.sensitivity = sensitivity
        self.differ = differ
        self.name = f"query_vectors(sensitivity={sensitivity}, differ={differ!r})"
        self.description = (
            "query-answer vectors: "
            + ("every answer moves by at most the sensitivity" if differ == "all" else "one answer moves by at most the sensitivity")
        )

    def __repr__(self) -> str:
        return self.name

    def _close(self, a: Any, b: Any) -> bool:
        return abs(Fraction(a) - Fraction(b)) <= self._bound

    def _transitions(self, records: Sequence[Any]) -> list[tuple[int, int]]:
        for r in records:
            if isinstance(r, bool) or not isinstance(r, Real):
                raise InvalidArgument(
                    f"query_vectors needs numeric answer values as records, got {r!r}; pass e.g. records=range(3)."
                )
        return [(a, b) for a in range(len(records)) for b in range(len(records)) if self._close(records[a], records[b])]

    def count(self, universe_size: int, n: int, *, exchangeable: bool, records: Sequence[Any] | None = None) -> int:
        """Unordered pairs over ``universe_size`` consecutive integer answers (or ``records``)."""
        self._refuse_exchangeable(exchangeable)
        values = list(records) if records is not None else list(range(universe_size))
        moves = self._transitions(values)
        z = len(values)
        if self.differ == "all":
            return (len(moves) ** n - z**n) // 2
        return n * z ** (n - 1) * (len(moves) - z) // 2

    def is_neighbor(self, first: tuple, second: tuple, *, exchangeable: bool = False) -> bool:
        if len(first) != len(second) or tuple(first) == tuple(second):
            return False
        differing = [(a, b) for a, b in zip(first, second) if a != b]
        if self.differ == "one" and len(differing) != 1:
            return False
        return all(self._close(a, b) for a, b in differing)

    def pairs(self, records: Sequence[Hashable], n: int, *, exchangeable: bool) -> PairSet:
        self._refuse_exchangeable(exchangeable)
        values = check_records(records)
        z = len(values)
        moves = self._transitions(values)
        if self.differ == "all":
            left = np.zeros(1, dtype=np.int64)
            right = np.zeros(1, dtype=np.int64)
            move_from = np.array([m[0] for m in moves], dtype=np.int64)
            move_to = np.array([m[1] for m in moves], dtype=np.int64)
            for _ in range(n):
                left = (left[:, None] * z + move_from[None, :]).ravel()
                right = (right[:, None] * z + move_to[None, :]).ravel()
            keep = left < right
            left, right = left[keep], right[keep]
        else:
            ids = np.arange(z**n, dtype=np.int64)
            lefts, rights = [], []
            for position in range(n):
                weight = z ** (n - 1 - position)
                digit = (ids // weight) % z
                for a, b in moves:
                    if b > a:
                        keep = digit == a
                        lefts.append(ids[keep])
                        rights.append(ids[keep] + (b - a) * weight)
            left = np.concatenate(lefts) if lefts else np.zeros(0, np.int64)
            right = np.concatenate(rights) if rights else np.zeros(0, np.int64)
        datasets = list(itertools.product(values, repeat=n))
        return PairSet(datasets, left, right)

    @staticmethod
    def _refuse_exchangeable(exchangeable: bool) -> None:
        if exchangeable:
            raise InvalidArgument(
                "query_vectors enumerates ordered answer vectors only; verify with exchangeable=False "
                "(a query vector's order matters to noisy max and SVT)."
            )


def query_vectors(sensitivity: Any = 1, *, differ: str = "all") -> QueryVectors:
    """The neighbour relation on query-answer vectors (see :class:`QueryVectors`).

    Args:
        sensitivity: how far one answer may move between neighbours (StatDP's queries: 1).
        differ: ``"all"`` (every answer may move: noisy max, SVT) or ``"one"`` (exactly one answer
            moves: histograms, where one record changes one bin).
    """
    return QueryVectors(sensitivity, differ)


# -- input sets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputPairs:
    """A named set of input pairs: datasets listed once, pairs as index arrays.

    Attributes:
        name: how results and reports name the set (``"statdp_patterns"``, ``"all_vectors_m2"``).
        datasets: the distinct datasets (tuples).
        left: pair ``i`` is ``(datasets[left[i]], datasets[right[i]])``.
        right: see ``left``.
        relation: the neighbour relation every pair satisfies, when known.
    """

    name: str
    datasets: list
    left: np.ndarray
    right: np.ndarray
    relation: NeighborRelation | None = None
    #: the full set this one covers (:func:`dpverify.checking.pair_cover.covering_pairs`), else None
    covers: InputPairs | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[Any, Any]], *, name: str = "given pairs",
                   relation: NeighborRelation | None = None) -> InputPairs:
        """Pairs as given (lists become tuples); refuses identical pairs and, with ``relation``,
        pairs that are not neighbours under it. Duplicate pairs (either order) are kept once."""
        index: dict[tuple, int] = {}
        left, right, seen = [], [], set()
        for number, pair in enumerate(pairs):
            try:
                first, second = pair
            except (TypeError, ValueError):
                raise InvalidArgument(f"pairs[{number}] must be a pair (D, D'), got {pair!r}.") from None
            first, second = _dataset(first, number), _dataset(second, number)
            if first == second:
                raise InvalidArgument(
                    f"pairs[{number}] compares {first!r} with itself; a pair must hold two different inputs."
                )
            if relation is not None and not relation.is_neighbor(first, second, exchangeable=False):
                raise InvalidArgument(
                    f"pairs[{number}] = ({first!r}, {second!r}) is not a neighbour pair under {relation.name}; "
                    "drop it or verify without neighbors=."
                )
            ids = [index.setdefault(d, len(index)) for d in (first, second)]
            key = (min(ids), max(ids))
            if key in seen:
                continue
            seen.add(key)
            left.append(ids[0])
            right.append(ids[1])
        if not left:
            raise InvalidArgument("pairs must hold at least one pair (D, D').")
        return cls(name, list(index), np.array(left, np.int64), np.array(right, np.int64), relation)

    @classmethod
    def statdp(cls, k: int, *, differ: str = "all") -> InputPairs:
        """StatDP's default input pairs for ``k`` queries (:func:`statdp_patterns`)."""
        return statdp_patterns(k, differ=differ)

    @classmethod
    def query_vectors(cls, k: int, *, m: int = 2, sensitivity: Any = 1, differ: str = "all") -> InputPairs:
        """Every pair of neighbouring query-answer vectors in ``{0, ..., m}^k`` (:func:`all_query_vectors`)."""
        return all_query_vectors(k, m=m, sensitivity=sensitivity, differ=differ)

    def __len__(self) -> int:
        return int(self.left.size)

    def __iter__(self):
        for i, j in zip(self.left.tolist(), self.right.tolist()):
            yield self.datasets[i], self.datasets[j]


def _dataset(value: Any, number: int) -> tuple:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        value = tuple(value)
    try:
        hash(value)
    except TypeError:
        raise InvalidArgument(f"pairs[{number}] holds an unhashable input {value!r}; use tuples.") from None
    return value


def statdp_patterns(k: int, *, differ: str = "all") -> InputPairs:
    """StatDP's default input pairs for ``k`` queries (``statdp.generators.generate_databases``).

    ``[1]*k`` against ``[0, 1, ...]`` (one below) and ``[2, 1, ...]`` (one above); with
    ``differ="all"`` also against ``[2, 0, ...]``, ``[0, 2, ...]``, half/half
    ``[2]*(k//2) + [0]*(k - k//2)``, ``[2]*k`` (all above) and ``[0]*k`` (all below), and the X shape
    ``[1]*(k//2) + [0]*(k - k//2)`` against ``[0]*(k//2) + [1]*(k - k//2)``. DP-Sniper's
    ``PatternGenerator`` uses the same list (and each pair swapped, which changes nothing here: both
    directions are always checked). Pairs that coincide for small ``k`` are kept once.
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidArgument(f"k must be an integer >= 1 (the number of queries), got k={k!r}.")
    relation_ = query_vectors(1, differ=differ)
    ones = (1,) * k
    candidates = [(ones, (0,) + (1,) * (k - 1)), (ones, (2,) + (1,) * (k - 1))]
    if differ == "all":
        half = k // 2
        candidates += [
            (ones, (2,) + (0,) * (k - 1)),
            (ones, (0,) + (2,) * (k - 1)),
            (ones, (2,) * half + (0,) * (k - half)),
            (ones, (2,) * k),
            (ones, (0,) * k),
            ((1,) * half + (0,) * (k - half), (0,) * half + (1,) * (k - half)),
        ]
    candidates = [(a, b) for a, b in candidates if a != b]
    return InputPairs.from_pairs(candidates, name="statdp_patterns", relation=relation_)


def all_query_vectors(k: int, *, m: int = 2, sensitivity: Any = 1, differ: str = "all") -> InputPairs:
    """Every pair of neighbouring vectors in ``{0, ..., m}^k`` (named ``"all_vectors_m{m}"``)."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidArgument(f"k must be an integer >= 1 (the number of queries), got k={k!r}.")
    if not isinstance(m, int) or isinstance(m, bool) or m < 1:
        raise InvalidArgument(f"m must be an integer >= 1 (answers range over 0..m), got m={m!r}.")
    relation_ = query_vectors(sensitivity, differ=differ)
    pairs = relation_.pairs(range(m + 1), k, exchangeable=False)
    expected = relation_.count(m + 1, k, exchangeable=False)
    if len(pairs) != expected:
        raise AssertionError(f"internal error: {len(pairs):,} pairs enumerated, {expected:,} counted")
    return InputPairs(f"all_vectors_m{m}", list(pairs.datasets), pairs.left, pairs.right, relation_)


# -- verification ---------------------------------------------------------------------------------


def _as_input_pairs(pairs: Any, neighbors: Any) -> InputPairs:
    rel = None if neighbors is None else relation(neighbors)
    if isinstance(pairs, InputPairs):
        if rel is not None:
            for number, (a, b) in enumerate(pairs):
                if not rel.is_neighbor(a, b, exchangeable=False):
                    raise InvalidArgument(
                        f"pair {number} of {pairs.name} = ({a!r}, {b!r}) is not a neighbour pair under {rel.name}."
                    )
            return replace(pairs, relation=rel)
        return pairs
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise InvalidArgument(f"pairs must be a list of (D, D') pairs or an InputPairs, got pairs={pairs!r}.")
    return InputPairs.from_pairs(pairs, relation=rel)


def verify_pairs(
    mechanism: Callable[[tuple], Any],
    *,
    pairs: InputPairs | Iterable[tuple[Any, Any]],
    epsilon: RealNumber,
    delta: RealNumber = 0.0,
    neighbors: str | NeighborRelation | None = None,
    float_error: float | None = None,
    executor: ExecutorSpec = None,
    cover: str | None = None,
    seed: int | None = None,
    profile: Sequence[Any] | Literal[True] | None = None,
) -> PairsResult:
    """Decide ``(epsilon, delta)``-DP of ``mechanism`` on the given input pairs (both directions).

    Args:
        mechanism: ``dataset -> Mapping[outcome, probability]`` as for :func:`dpverify.verify`
            (its ``exact_distribution(dataset)`` is used for certification when offered), or a
            mechanism with continuous outputs (``continuous_output = True`` and ``output_density(dataset)``, see
            :mod:`dpverify.densities.continuous`).
        pairs: ``[(D, D'), ...]`` (lists are read as tuples), or an :class:`InputPairs` such as
            :func:`statdp_patterns` or :func:`all_query_vectors`.
        epsilon, delta: the claim, as for :func:`dpverify.verify`.
        neighbors: optionally a relation every pair must satisfy (e.g. :func:`query_vectors`); a
            pair outside it is refused before any work.
        float_error: relative error of float probabilities (default: the mechanism's
            ``float_relative_error``, else the engine's default).
        executor: where the engine's sweep over the pairs runs (:mod:`dpverify.parallel.executors`: None,
            ``"processes"``, ``"dask"``, a Dask client or an Executor); the result is the same.
        cover: for ``pairs`` made by :func:`dpverify.checking.pair_cover.covering_pairs`: the cover stands
            for the whole set only if the mechanism's ``loss_components`` are right (a lemma in its
            docstring, not proved here). The pairs outside the cover are tested (their loss may not
            exceed the cover's) for as long as the cover took (at least one second); if every one
            is tested the assumption is proved, else a passing verdict is UNDECIDED unless
            ``cover="assume"`` accepts it (the result then says "holds, assuming ..."). A pair
            outside the cover with a larger loss refutes it.
        seed: the seed of the sample of pairs outside a cover (None: a fresh one, reported).
        profile: eps values at which to measure the worst-case ``delta(eps)`` over the pairs too (the
            privacy profile), returned as ``result.details["privacy_profile"]``, a list of
            ``{"epsilon", "delta"}`` (continuous outputs add the certified ``"delta_low"`` and
            ``"delta_high"``; discrete ones give the engine's float64 sweep, a measurement).

    Returns:
        A :class:`PairsResult` (a :class:`~dpverify.checking.checker.VerificationResult`): the engine's
        verdict state, eps* over the pairs, the worst pair, and a certified witness (one of the
        given pairs) when VIOLATED.

    Raises:
        InvalidArgument: a pair repeats an input, is not a neighbour pair under ``neighbors``, or a
            claim is malformed.
    """
    check_epsilon(epsilon)
    check_delta(delta)
    declared = None if float_error is None else check_float_error(float_error)
    inputs = _as_input_pairs(pairs, neighbors)
    if cover not in (None, "assume"):
        raise InvalidArgument(
            f"cover must be None or 'assume', got cover={cover!r}; 'assume' accepts a pair cover's "
            "loss_components lemma where the pairs outside the cover could not all be tested."
        )
    if seed is not None:
        check_integer("seed", seed, at_least=0, fix="seed fixes the sample of pairs outside a cover; e.g. seed=0")
    if profile is not None and profile is not True:
        profile = [exact_number("profile epsilon", e) for e in profile]
        for e in profile:
            check_epsilon(e)
    result = _decide_inputs(mechanism, inputs, epsilon, delta, declared, executor, profile)
    if inputs.covers is None:
        return result
    return _check_cover(result, mechanism, inputs, epsilon, delta, declared, accept=cover == "assume", seed=new_seed(seed))


def _decide_inputs(mechanism: Any, inputs: InputPairs, epsilon: Any, delta: Any, declared: float | None,
                   executor: Any, profile: Sequence[Any] | Literal[True] | None = None, *, delta_figure: bool = True) -> PairsResult:
    """The verdict on ``inputs`` (``delta_figure=False``: a continuous output's delta* is not needed,
    as when a pure claim's cover is tested outside it). A mechanism declaring ``gaussian_output`` is
    decided by :func:`dpverify.densities.gaussian.decide_gaussian`, one declaring ``continuous_output``
    by :func:`dpverify.densities.continuous.verify_densities`."""
    if getattr(mechanism, "gaussian_output", False) or getattr(mechanism, "continuous_output", False):
        if profile is True:
            raise AssertionError("internal error: a continuous output's default profile grid is made by its caller")
        return _decide_densities(mechanism, inputs, epsilon, delta, profile, delta_figure=delta_figure)
    started = time.perf_counter()
    rows = _rows(mechanism, inputs, declared)
    rows.executor = executor
    decision = decide(rows, epsilon, delta)
    details: dict[str, Any] = {}
    if profile is True:  # the default grid around eps* and the claim, from this decision's eps* (one pass)
        profile = profile_grid(decision.epsilon_star, float(epsilon))
    if profile is not None:  # the engine's float64 sweep at each eps: a measurement
        details["privacy_profile"] = [{"epsilon": float(e), "delta": sweep(rows, float(e)).delta_star} for e in profile]
    if decision.verdict is Verdict.UNDECIDED and getattr(mechanism, "exact_distribution", None) is not None:
        decision = decide(_rows(mechanism, inputs, declared, sympy_rows=True), epsilon, delta)
    witness = decision.witness
    if witness is not None and hasattr(mechanism, "exact_probabilities"):
        witness = _exact_witness(mechanism, witness)
    sweep_ = decision.sweep
    worst = None
    if len(inputs) and sweep_.epsilon_pair >= 0:
        a, b = inputs.datasets[inputs.left[sweep_.epsilon_pair]], inputs.datasets[inputs.right[sweep_.epsilon_pair]]
        worst = (a, b) if sweep_.epsilon_forward else (b, a)
    return PairsResult.on_inputs(
        inputs, started,
        holds=decision.holds,
        epsilon=decision.epsilon_star,
        delta=decision.delta_star,
        witness=witness,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        pairs=len(inputs),
        certified_pairs=decision.certified_pairs,
        undecided=decision.undecided_pairs,
        verdict=decision.verdict,
        within_rounding=decision.within_rounding_pairs,
        float_error=float(rows.errors().max(initial=0.0)),
        worst_pair=worst,
        details=details,
        unexplored=decision.unexplored,
        reason=decision.reason,
    )


def _decide_densities(mechanism: Any, inputs: InputPairs, epsilon: Any, delta: Any, profile: Sequence[Any] | None,
                      *, delta_figure: bool) -> PairsResult:
    """A continuous output's verdict: the Gaussian mechanism's closed form, or the densities'."""
    if getattr(mechanism, "gaussian_output", False):
        from dpverify.densities.gaussian import decide_gaussian

        return decide_gaussian(mechanism, inputs, epsilon=epsilon, delta=delta, profile=profile)
    from dpverify.densities.continuous import verify_densities

    return verify_densities(mechanism, inputs, epsilon=epsilon, delta=delta, profile=profile, delta_figure=delta_figure)


def _rows(mechanism: Any, inputs: InputPairs, declared: float | None, *, sympy_rows: bool = False) -> RowPairs:
    """The mechanism on every dataset as the engine's RowPairs; witnesses must be given pairs."""
    datasets = inputs.datasets
    distributions = [evaluate(mechanism, d) for d in datasets]
    outcome_index: dict[Hashable, int] = {}
    for dist in distributions:
        for o in dist:
            outcome_index.setdefault(o, len(outcome_index))
    matrix = np.zeros((len(datasets), len(outcome_index)))
    for i, dist in enumerate(distributions):
        for o, p in dist.items():
            matrix[i, outcome_index[o]] = float(p)
    given: set[frozenset] = set()

    def is_given(a: Any, b: Any) -> bool:
        """Whether ``{a, b}`` is one of the given pairs (the set is built at the first witness check:
        a set of every pair cost 17% of an SVT row at k = 7 for the one or two look-ups it serves)."""
        if not given:
            given.update(frozenset((datasets[i], datasets[j]))
                         for i, j in zip(inputs.left.tolist(), inputs.right.tolist()))
        return frozenset((a, b)) in given

    exact_row: Callable[[int], Any] | None
    row_error: float | np.ndarray  # one relative error for every row, or one per row
    intervals = getattr(mechanism, "certified_intervals", None)
    exact_of = getattr(mechanism, "exact_distribution", None)
    name = getattr(mechanism, "__name__", None) or type(mechanism).__name__
    if intervals is not None and not sympy_rows:
        what = f"the mechanism {name}.certified_intervals"
        exact_row, row_error = (lambda i: call_unchanged(intervals, datasets[i], what=what)), 0.0
    elif exact_of is not None:
        what = f"the mechanism {name}.exact_distribution"
        exact_row, row_error = (lambda i: call_unchanged(exact_of, datasets[i], what=what)), 0.0
    else:
        exact_row = distributions.__getitem__
        value = float_error_of(mechanism) if declared is None else declared
        row_error = np.array([0.0 if d.is_exact else value for d in distributions])
    return RowPairs(  # (sub-distributions: their unexplored masses, for the engine to account for)
        matrix, inputs.left, inputs.right, outcomes=list(outcome_index), exact_row=exact_row, row_error=row_error,
        label=datasets.__getitem__, is_neighbor=is_given, expected_pairs=len(inputs),
        unexplored=unexplored_of(distributions), declared=declared_of(distributions),
    )


def _exact_witness(mechanism: Any, witness: Any) -> Any:
    """The witness with ``P(S)``, ``Q(S)`` as exact sympy expressions (the certificate may have
    summed interval enclosures)."""
    from dpverify.densities.piecewise import ExpSum

    what = f"the mechanism {getattr(mechanism, '__name__', None) or type(mechanism).__name__}.exact_probabilities"
    p = call_unchanged(mechanism.exact_probabilities, witness.dataset, what=what)
    q = call_unchanged(mechanism.exact_probabilities, witness.neighbor, what=what)
    zero = ExpSum()
    p_mass = ExpSum.total(p.get(o, zero) for o in witness.output_set)
    q_mass = ExpSum.total(q.get(o, zero) for o in witness.output_set)
    return replace(witness, p=p_mass.to_sympy(), q=q_mass.to_sympy())


#: The least time (seconds) spent testing the pairs outside a cover, whatever the cover took.
MIN_COVER_BUDGET = 1.0
_COVER = "the pair cover's loss components (the mechanism's loss_components lemma)"
_COVER_FIX = (
    "pass cover='assume' to accept the lemma (the verdict then says it assumes it), or verify the whole "
    "input set instead of its cover"
)


def _cover_budget(seconds: float) -> float:
    """Seconds the lemma of a cover may be tested for: as long as the cover's own run, at least
    :data:`MIN_COVER_BUDGET`."""
    return max(MIN_COVER_BUDGET, seconds)


def _check_cover(
    result: PairsResult, mechanism: Any, cover: InputPairs, epsilon: Any, delta: Any, declared: float | None,
    *, accept: bool, seed: int,
) -> PairsResult:
    """Test the cover's lemma on the pairs outside it (random order, batches, for as long as the
    cover took, at least one second): a pair with a larger loss refutes it; every pair tested
    proves it. The result carries the assumption and its verdict is settled on it."""
    full = cover.covers
    assert full is not None
    if result.verdict is Verdict.VIOLATED:  # a certified witness among the given pairs: no lemma needed
        return replace(result, seed=seed)
    chosen = {frozenset(pair) for pair in cover}
    rest = [pair for pair in full if frozenset(pair) not in chosen]
    order = np.random.default_rng(seed).permutation(len(rest)).tolist()
    # as long as the cover's verdict took (its privacy profile, a measurement, does not count)
    budget = _cover_budget(result.seconds - result.details.get("profile_seconds", 0.0))
    started = time.perf_counter()
    tested, size, worst = 0, 16, None
    while tested < len(rest) and (tested == 0 or time.perf_counter() - started < budget):
        batch = [rest[i] for i in order[tested : tested + size]]
        tested += len(batch)
        size *= 2
        part = _decide_inputs(mechanism, InputPairs.from_pairs(batch, name=f"{full.name} (outside the cover)"),
                              epsilon, delta, declared, None, delta_figure=bool(exact_number("delta", delta)))
        larger_delta = (part.delta_bounds is not None and result.delta_bounds is not None
                        and part.delta_bounds[0] > result.delta_bounds[1])
        if part.verdict is Verdict.VIOLATED or part.epsilon > result.epsilon * (1 + 1e-9) + 1e-12 or larger_delta:
            worst = part
            break
    outside = len(rest)
    if worst is not None:
        if worst.epsilon > result.epsilon * (1 + 1e-9) + 1e-12 or worst.delta_bounds is None or result.delta_bounds is None:
            found = f"loss {worst.epsilon:.6g} > the cover's {result.epsilon:.6g} ({worst.worst_pair!r}"
        else:
            found = f"delta {worst.delta:.6g} > the cover's {result.delta:.6g} ({worst.delta_pair!r}"
        evidence = (
            f"refuted: a pair outside the cover has {found}; {tested:,} of {outside:,} pairs outside the cover "
            f"tested, seed {seed})"
        )
        assumption = Assumption("pair cover", _COVER, Status.REFUTED, evidence)
        verdict = Verdict.VIOLATED if worst.verdict is Verdict.VIOLATED else Verdict.UNDECIDED
        return replace(
            result, verdict=verdict, holds=False, epsilon=max(result.epsilon, worst.epsilon),
            witness=worst.witness if verdict is Verdict.VIOLATED else None, worst_pair=worst.worst_pair,
            epsilon_bounds=None, assumptions=(assumption,), seed=seed,
            delta=max(result.delta, worst.delta), delta_bounds=None, delta_pair=None,
        )
    if tested == outside:
        assumption = Assumption("pair cover", _COVER, Status.PROVED,
                                f"every one of the {outside:,} pairs outside the cover tested")
    else:
        status = Status.ACCEPTED if accept else Status.UNPROVED
        evidence = f"tested on {tested:,} of the {outside:,} pairs outside the cover (seed {seed})"
        assumption = Assumption("pair cover", _COVER, status, evidence, "" if accept else _COVER_FIX)
    verdict = settle(result.verdict, (assumption,))
    return replace(result, verdict=verdict, holds=verdict.passes, assumptions=(assumption,), seed=seed)
