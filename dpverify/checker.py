"""Exhaustive verification of differential-privacy claims: ``verify`` and ``analyze``.

``verify(mechanism, records=, n=, epsilon=, delta=, neighbors=)`` enumerates every neighbouring
pair of datasets of size ``n`` over the record universe, computes each mechanism output exactly
(the mechanism returns its distribution), and decides whether
``P(S) <= e^eps Q(S) + delta`` holds for every pair, both directions and every output set S.

How the numbers are made sound: the sweep runs in float64 (vectorised over pairs). A pair whose
float hockey-stick value is within ``margin = 1e-9 * (1 + e^eps)`` of delta, or above it, is
re-decided by :func:`dpverify._certify.certify_pair` in interval arithmetic on the exact values the
mechanism returned. ``holds`` is True only when every pair is either clear of the claim by more
than the margin in float64 or certified; a violation's witness is certified. The float values of
mechanisms' probabilities are taken as exact, unless the mechanism offers
``exact_distribution(dataset)`` (exact sympy/Fraction values), which certification then uses; a
mechanism computing in float64 by sums and products of positive terms carries a relative error far
below the 1e-9 margin.

Structure: a plain callable is a black box (every ordered dataset, every neighbour). A mechanism
declared exchangeable (``@dpverify.exchangeable`` or ``verify(..., exchangeable=True)``) is
checked over multiset pairs, after its declaration has been tested on random datasets and random
permutations; a mechanism that lies about it is reported (``result.symmetry_violation``) and
checked as a black box instead.
"""

from __future__ import annotations

import itertools
import random
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify._certify import certify_pair
from dpverify.distribution import Distribution
from dpverify.domains import check_records
from dpverify.errors import InvalidArgument
from dpverify.neighbors import NeighborRelation, PairSet, check_enumeration_size, relation
from dpverify.privacy_loss import check_delta, check_epsilon, exp_epsilon

__all__ = [
    "verify",
    "analyze",
    "exchangeable",
    "Analysis",
    "VerificationResult",
    "Witness",
    "SymmetryViolation",
    "check_exchangeable",
    "evaluate",
    "DEFAULT_MAX_PAIRS",
]

DEFAULT_MAX_PAIRS = 5_000_000
_CHUNK = 65_536
Mechanism = Callable[[tuple], Mapping[Hashable, Any]]


def exchangeable(mechanism: Mechanism) -> Mechanism:
    """Declare that ``mechanism``'s output distribution ignores the order of the records.

    The declaration is tested (random datasets, random permutations) before the checker uses it.
    """
    mechanism.exchangeable = True  # type: ignore[attr-defined]
    return mechanism


@dataclass(frozen=True)
class Witness:
    """A certified violation: ``P(S) > e^eps Q(S) + delta`` with ``P = M(dataset)``,
    ``Q = M(neighbor)`` and ``S = output_set``."""

    dataset: tuple
    neighbor: tuple
    output_set: frozenset
    p: Any
    q: Any
    epsilon: Any
    delta: Any

    def __str__(self) -> str:
        outcomes = sorted(self.output_set, key=repr)
        shown = ", ".join(map(repr, outcomes[:6])) + (", ..." if len(outcomes) > 6 else "")
        q = float(self.q)
        bound = (exp_epsilon(self.epsilon) * q if q > 0 else 0.0) + float(self.delta)
        return (
            f"D  = {self.dataset}\nD' = {self.neighbor}\nS  = {{{shown}}}\n"
            f"P[M(D) in S] = {float(self.p):.12g} ({self.p})\n"
            f"P[M(D') in S] = {float(self.q):.12g} ({self.q})\n"
            f"P[M(D) in S] = {float(self.p):.12g} > e^eps * P[M(D') in S] + delta = {bound:.12g}"
        )


@dataclass(frozen=True)
class SymmetryViolation:
    """A counterexample to a declared exchangeability: same records, other order, other output."""

    dataset: tuple
    permuted: tuple
    first: Distribution
    second: Distribution


@dataclass(frozen=True)
class VerificationResult:
    """The verdict of :func:`verify`.

    Attributes:
        holds: True iff the claim is proved on every neighbouring pair (sound, see module doc).
        epsilon: the worst-case pure privacy loss eps* over all pairs (float64; ``math.inf``
            when some outcome has P > 0 = Q).
        delta: the worst-case delta at the claimed epsilon (float64 hockey-stick maximum).
        witness: None when the claim holds; otherwise a certified :class:`Witness`.
        pairs: number of unordered neighbouring pairs checked.
        datasets: number of datasets on which the mechanism was evaluated.
        exchangeable: whether the multiset (exchangeable) enumeration was used.
        certified_pairs: how many pairs needed certified arithmetic.
        undecided: pairs certification could not decide (counted as not holding).
        symmetry_violation: a counterexample when the mechanism was declared exchangeable wrongly.
        seconds: wall time.
        exchangeability: how a declared exchangeability was established: ``"proved on every
            ordering"`` (small instances), ``"sampled ..."`` (the verdict then assumes it), or
            ``"refuted ..."`` / ``"not declared"``.
    """

    holds: bool
    epsilon: float
    delta: float
    witness: Witness | None
    claimed_epsilon: Any
    claimed_delta: Any
    neighbors: str
    pairs: int
    datasets: int
    exchangeable: bool
    certified_pairs: int
    undecided: int
    symmetry_violation: SymmetryViolation | None
    seconds: float
    exchangeability: str = "not declared"

    def __bool__(self) -> bool:
        return self.holds

    def summary(self) -> str:
        verdict = "HOLDS" if self.holds else "VIOLATED"
        lines = [
            f"{verdict}: claimed (eps={self.claimed_epsilon}, delta={self.claimed_delta}), "
            f"measured eps*={self.epsilon:.6g}, delta(eps)={self.delta:.6g}",
            f"  {self.pairs:,} {self.neighbors} pairs over {self.datasets:,} datasets "
            f"({'exchangeable' if self.exchangeable else 'black-box'}), "
            f"{self.certified_pairs} certified, {self.seconds:.2f}s",
        ]
        if self.symmetry_violation is not None:
            v = self.symmetry_violation
            lines.append(
                f"  WARNING: declared exchangeable but M{v.dataset} != M{v.permuted}; checked as a black box"
            )
        if self.exchangeable and not self.exchangeability.startswith("proved"):
            lines.append(f"  exchangeability {self.exchangeability}")
        if self.undecided:
            lines.append(f"  {self.undecided} pair(s) could not be decided exactly: not claimed to hold")
        if self.witness is not None:
            lines.append("  witness:\n    " + str(self.witness).replace("\n", "\n    "))
        return "\n".join(lines)


def _as_distribution(value: Any, dataset: tuple) -> Distribution:
    if isinstance(value, Distribution):
        return value
    if not isinstance(value, Mapping):
        raise InvalidArgument(
            f"the mechanism must return a Mapping outcome -> probability (or a Distribution); on "
            f"dataset {dataset!r} it returned {type(value).__name__}."
        )
    try:
        return Distribution(value)
    except InvalidArgument as error:
        raise InvalidArgument(f"on dataset {dataset!r} the mechanism's output: {error}") from None


def evaluate(mechanism: Mechanism, dataset: tuple) -> Distribution:
    """Run ``mechanism`` on ``dataset`` and validate its output as a :class:`Distribution`."""
    return _as_distribution(mechanism(dataset), dataset)


def _distributions_close(a: Distribution, b: Distribution) -> bool:
    if a.is_exact and b.is_exact:
        return a == b
    if a.support != b.support:
        return False
    return all(abs(float(a[o]) - float(b[o])) <= 1e-12 for o in a)


#: Up to this many ordered datasets, a declared exchangeability is checked on every ordering.
EXHAUSTIVE_SYMMETRY_LIMIT = 20_000


def check_exchangeable(
    mechanism: Mechanism, records: Sequence[Hashable], n: int, *, samples: int = 100, seed: int = 0
) -> SymmetryViolation | None:
    """Test a declared exchangeability; return a counterexample or None.

    When ``len(records) ** n <= EXHAUSTIVE_SYMMETRY_LIMIT`` every ordered dataset is compared with
    its sorted form (a proof); otherwise ``samples`` random datasets, each under a random
    permutation and a swap of its first two entries (a property test, not a proof: see
    ``VerificationResult.exchangeability``).
    """
    if len(records) ** n <= EXHAUSTIVE_SYMMETRY_LIMIT:
        position = {r: i for i, r in enumerate(records)}
        reference: dict[tuple, Distribution] = {}
        for dataset in itertools.product(records, repeat=n):
            key = tuple(sorted(dataset, key=position.__getitem__))
            dist = _as_distribution(mechanism(dataset), dataset)
            if key not in reference:
                reference[key] = dist
            elif not _distributions_close(reference[key], dist):
                return SymmetryViolation(key, dataset, reference[key], dist)
        return None
    rng = random.Random(seed)
    for _ in range(samples):
        dataset = tuple(rng.choice(records) for _ in range(n))
        permutations = [tuple(rng.sample(dataset, n))]
        if n >= 2:
            permutations.append((dataset[1], dataset[0]) + dataset[2:])
        base = _as_distribution(mechanism(dataset), dataset)
        for permuted in permutations:
            other = _as_distribution(mechanism(permuted), permuted)
            if not _distributions_close(base, other):
                return SymmetryViolation(dataset, permuted, base, other)
    return None


class _Progress:
    def __init__(self, enabled: bool | Callable[[str], None], label: str) -> None:
        if enabled is True:
            self._write: Callable[[str], None] | None = lambda s: print(s, file=sys.stderr, flush=True)
        elif callable(enabled):
            self._write = enabled
        else:
            self._write = None
        self._label = label
        self._last = time.monotonic()

    def update(self, done: int, total: int) -> None:
        if self._write is None:
            return
        now = time.monotonic()
        if now - self._last >= 2.0 or done == total:
            self._last = now
            self._write(f"{self._label}: {done:,}/{total:,} ({100 * done / max(total, 1):.0f}%)")


@dataclass
class Analysis:
    """Every neighbouring pair of an instance with the mechanism's output on each dataset.

    ``matrix[i, k]`` is the float64 probability of outcome ``outcomes[k]`` on ``pairs.datasets[i]``;
    ``distributions[i]`` keeps the exact values for certification.
    """

    pairs: PairSet
    outcomes: list
    distributions: list[Distribution]
    matrix: np.ndarray
    exchangeable: bool
    symmetry_violation: SymmetryViolation | None = None
    _epsilons: np.ndarray | None = field(default=None, repr=False)

    def pair_epsilons(self) -> np.ndarray:
        """Symmetric pure eps* of every pair (float64, ``inf`` for P > 0 = Q)."""
        if self._epsilons is None:
            out = np.empty(len(self.pairs))
            with np.errstate(divide="ignore", invalid="ignore"):
                logs = np.log(self.matrix)
                for start in range(0, len(self.pairs), _CHUNK):
                    a = self.pairs.left[start : start + _CHUNK]
                    b = self.pairs.right[start : start + _CHUNK]
                    la, lb = logs[a], logs[b]
                    forward = np.where(self.matrix[a] > 0, la - lb, -np.inf)
                    backward = np.where(self.matrix[b] > 0, lb - la, -np.inf)
                    out[start : start + a.size] = np.maximum(forward.max(axis=1), backward.max(axis=1))
            out[np.isnan(out)] = np.inf
            self._epsilons = np.maximum(out, 0.0)
        return self._epsilons

    def epsilon_star(self) -> float:
        """Worst-case pure privacy loss over all pairs."""
        values = self.pair_epsilons()
        return float(values.max()) if values.size else 0.0

    def pair_deltas(self, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
        """Hockey-stick values at ``epsilon`` of every pair: (left->right, right->left)."""
        factor = exp_epsilon(epsilon)
        forward = np.empty(len(self.pairs))
        backward = np.empty(len(self.pairs))
        for start in range(0, len(self.pairs), _CHUNK):
            a = self.matrix[self.pairs.left[start : start + _CHUNK]]
            b = self.matrix[self.pairs.right[start : start + _CHUNK]]
            scaled_b = np.multiply(factor, b, out=np.zeros_like(b), where=b > 0)
            scaled_a = np.multiply(factor, a, out=np.zeros_like(a), where=a > 0)
            forward[start : start + len(a)] = np.maximum(a - scaled_b, 0.0).sum(axis=1)
            backward[start : start + len(a)] = np.maximum(b - scaled_a, 0.0).sum(axis=1)
        return forward, backward

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Worst-case delta(eps) over all pairs (float64)."""
        forward, backward = self.pair_deltas(epsilon)
        return float(max(forward.max(initial=0.0), backward.max(initial=0.0)))

    def profile(self, epsilons: Sequence[float]) -> list[float]:
        """The worst-case privacy profile eps -> delta(eps) at the given points."""
        return [self.delta_for_epsilon(e) for e in epsilons]

    def stability(self) -> float:
        """Worst-case additive stability ``max |P(o) - Q(o)|`` over pairs and outcomes."""
        worst = 0.0
        for start in range(0, len(self.pairs), _CHUNK):
            a = self.matrix[self.pairs.left[start : start + _CHUNK]]
            b = self.matrix[self.pairs.right[start : start + _CHUNK]]
            worst = max(worst, float(np.abs(a - b).max(initial=0.0)))
        return worst


def _validate_n(n: Any) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidArgument(f"n must be an integer >= 1 (the dataset size), got n={n!r}.")


def analyze(
    mechanism: Mechanism,
    *,
    records: Sequence[Hashable],
    n: int,
    neighbors: str | NeighborRelation = "substitute",
    exchangeable: bool | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: bool | Callable[[str], None] = False,
) -> Analysis:
    """Evaluate ``mechanism`` on every dataset of every neighbouring pair (no verdict).

    Args mirror :func:`verify`. Raises InvalidArgument on bad input before any work starts.
    """
    universe = check_records(records)
    _validate_n(n)
    rel = relation(neighbors)
    if not callable(mechanism):
        raise InvalidArgument(f"mechanism must be callable (dataset -> distribution), got {mechanism!r}.")
    declared = bool(getattr(mechanism, "exchangeable", False)) if exchangeable is None else exchangeable
    check_enumeration_size(rel, len(universe), n, exchangeable=declared, max_pairs=max_pairs)
    violation = None
    if declared:
        violation = check_exchangeable(mechanism, universe, n)
        if violation is None and rel.name == "add_remove" and n > 1:
            violation = check_exchangeable(mechanism, universe, n - 1)
        if violation is not None:
            declared = False
            check_enumeration_size(rel, len(universe), n, exchangeable=False, max_pairs=max_pairs)
    pairs = rel.pairs(universe, n, exchangeable=declared)
    meter = _Progress(progress, f"evaluating {getattr(mechanism, '__name__', 'mechanism')}")
    distributions = []
    outcome_index: dict[Hashable, int] = {}
    for i, dataset in enumerate(pairs.datasets):
        dist = _as_distribution(mechanism(dataset), dataset)
        for o in dist:
            if o not in outcome_index:
                outcome_index[o] = len(outcome_index)
        distributions.append(dist)
        if i % 4096 == 0:
            meter.update(i, len(pairs.datasets))
    meter.update(len(pairs.datasets), len(pairs.datasets))
    matrix = np.zeros((len(distributions), len(outcome_index)))
    for i, dist in enumerate(distributions):
        for o, p in dist.items():
            matrix[i, outcome_index[o]] = float(p)
    return Analysis(pairs, list(outcome_index), distributions, matrix, declared, violation)


def verify(
    mechanism: Mechanism,
    *,
    records: Sequence[Hashable],
    n: int,
    epsilon: Any,
    delta: Any = 0.0,
    neighbors: str | NeighborRelation = "substitute",
    exchangeable: bool | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: bool | Callable[[str], None] = False,
) -> VerificationResult:
    """Check that ``mechanism`` is (epsilon, delta)-DP on datasets of size ``n`` over ``records``.

    Args:
        mechanism: any callable ``dataset (tuple of records) -> Mapping[outcome, probability]``.
        records: the finite record universe (hashable, distinct).
        n: the dataset size (>= 1).
        epsilon: the claimed epsilon (>= 0); float, int, Fraction or sympy. A float stands for
            itself up to its rounding (relative 2**-50); exact numbers are checked exactly.
        delta: the claimed delta in [0, 1] (default 0: pure DP).
        neighbors: ``"substitute"`` (replace-one, default) or ``"add_remove"``.
        exchangeable: override the mechanism's own declaration (None: use
            ``mechanism.exchangeable`` if set, else black box).
        max_pairs: refuse enumerations larger than this (the error says what to lower).
        progress: True to print progress to stderr, or a callable receiving progress lines.

    Returns:
        A :class:`VerificationResult`; ``holds`` is sound, ``witness`` set when violated.

    Raises:
        InvalidArgument: bad input (checked before any work starts).
        EnumerationTooLarge: more than ``max_pairs`` pairs.
    """
    check_epsilon(epsilon)
    check_delta(delta)
    started = time.perf_counter()
    analysis = analyze(
        mechanism, records=records, n=n, neighbors=neighbors, exchangeable=exchangeable,
        max_pairs=max_pairs, progress=progress,
    )
    eps_float = float(epsilon)
    delta_float = float(delta)
    forward, backward = analysis.pair_deltas(eps_float)
    margin = 1e-9 * (1.0 + exp_epsilon(eps_float))
    pairs = analysis.pairs
    # Candidate directed pairs: everything not clearly below delta, worst first.
    candidates: list[tuple[float, int, int]] = []
    # A pair whose eps* is below the claimed epsilon has delta(eps) = 0 exactly: never a candidate
    # (this keeps pure claims from certifying every pair).
    below = analysis.pair_epsilons() <= eps_float - 1e-9
    for values, first, second in ((forward, pairs.left, pairs.right), (backward, pairs.right, pairs.left)):
        near = np.flatnonzero((values > delta_float - margin) & ~below)
        candidates.extend(zip(values[near].tolist(), first[near].tolist(), second[near].tolist()))
    candidates.sort(key=lambda c: -c[0])
    # Mechanisms that compute in float64 may offer ``exact_distribution(dataset)`` (exact or
    # interval values) for certification; otherwise the returned values are taken as exact.
    exact_of = getattr(mechanism, "exact_distribution", None)
    exact_cache: dict[int, Any] = {}

    def exact(index: int) -> Any:
        if exact_of is None:
            return analysis.distributions[index]
        if index not in exact_cache:
            exact_cache[index] = _as_distribution(exact_of(pairs.datasets[index]), pairs.datasets[index])
        return exact_cache[index]

    cache: dict[tuple[Distribution, Distribution], Any] = {}
    witness = None
    undecided = 0
    certified = 0
    for _, i, j in candidates:
        p, q = exact(i), exact(j)
        key = (p, q)  # identical pairs of distributions need one certificate
        certificate = cache.get(key)
        if certificate is None:
            certificate = certify_pair(p, q, epsilon, delta)
            cache[key] = certificate
            certified += 1
        if certificate.holds is False:
            witness = Witness(
                pairs.datasets[i], pairs.datasets[j], certificate.output_set,
                certificate.p_mass, certificate.q_mass, epsilon, delta,
            )
            break
        if certificate.holds is None:
            undecided += 1
    holds = witness is None and undecided == 0
    return VerificationResult(
        holds=holds,
        epsilon=analysis.epsilon_star(),
        delta=float(max(forward.max(initial=0.0), backward.max(initial=0.0))),
        witness=witness,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        neighbors=relation(neighbors).name,
        pairs=len(pairs),
        datasets=len(pairs.datasets),
        exchangeable=analysis.exchangeable,
        certified_pairs=certified,
        undecided=undecided,
        symmetry_violation=analysis.symmetry_violation,
        seconds=time.perf_counter() - started,
        exchangeability=_exchangeability_status(analysis, len(check_records(records)), n),
    )


def _exchangeability_status(analysis: Analysis, universe_size: int, n: int) -> str:
    if analysis.symmetry_violation is not None:
        return "refuted (checked as a black box)"
    if not analysis.exchangeable:
        return "not declared"
    if universe_size**n <= EXHAUSTIVE_SYMMETRY_LIMIT:
        return "proved on every ordering"
    return "sampled (100 random datasets): the verdict assumes the declaration"
