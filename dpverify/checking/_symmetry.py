"""Order-invariance (exchangeability): declaring it, testing the declaration, validating outputs.

A mechanism declared exchangeable (:func:`exchangeable`, or ``verify(..., exchangeable=True)``) is
checked over multisets instead of ordered datasets. The declaration is tested first
(:func:`check_declaration` in a run, against the run's own rows; :func:`check_exchangeable` on its
own) — on every ordering for small instances (a proof), on random datasets and permutations
otherwise — and a mechanism that lies about it is reported with a :class:`SymmetryViolation` and
checked as a black box.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpverify.checking._evaluation import call_mechanism, nondeterministic, same_distribution
from dpverify.finite.distribution import Distribution
from dpverify.verdict.engine import float_error_of
from dpverify.verdict.results import SymmetryViolation

__all__ = [
    "exchangeable",
    "check_exchangeable",
    "exchangeability_check",
    "check_declaration",
    "evaluate",
    "SymmetryViolation",
    "SymmetryCheck",
    "EXHAUSTIVE_SYMMETRY_LIMIT",
    "MIN_SYMMETRY_BUDGET",
]

Mechanism = Callable[[tuple], Mapping[Any, Any]]


def exchangeable(mechanism: Mechanism) -> Mechanism:
    """Declare that ``mechanism``'s output distribution ignores the order of the records.

    The declaration is tested (random datasets, random permutations) before the checker uses it.
    """
    mechanism.exchangeable = True  # type: ignore[attr-defined]
    return mechanism


def evaluate(mechanism: Mechanism, dataset: tuple) -> Distribution:
    """Run ``mechanism`` on ``dataset`` and validate its output as a :class:`Distribution` (an
    exception inside the mechanism is a :class:`~dpverify.errors.MechanismError`)."""
    return call_mechanism(mechanism, dataset)


#: The smallest time (seconds) a declared exchangeability may take to be proved on every ordering,
#: whatever the run costs; beyond it (and beyond the run's own cost) it is tested on a sample.
MIN_SYMMETRY_BUDGET = 1.0
#: Up to this many ordered datasets a declaration is always checked on every ordering (beyond it,
#: when the measured rate says the orderings cost no more than the run).
EXHAUSTIVE_SYMMETRY_LIMIT = 20_000
_MIN_SAMPLES = 200
_MAX_SAMPLES = 20_000


@dataclass(frozen=True)
class SymmetryCheck:
    """The outcome of :func:`exchangeability_check`.

    Attributes:
        violation: a counterexample, or None.
        proved: every ordering was compared with the output on its multiset.
        datasets: how many orderings were compared (all of them when proved), or evaluations when sampled.
        samples: how many random datasets were tested (0 when proved on every ordering).
        seed: the seed of the random sample.
    """

    violation: SymmetryViolation | None
    proved: bool
    datasets: int
    samples: int
    seed: int

    @property
    def evidence(self) -> str:
        if self.violation is not None:
            v = self.violation
            return f"refuted: M{v.dataset} != M{v.permuted}"
        if self.proved:
            return f"proved on every ordering ({self.datasets:,} datasets)"
        return (
            f"tested on {self.samples:,} random datasets and every transposition of each "
            f"({self.datasets:,} evaluations, seed {self.seed})"
        )


class _Comparer:
    """Evaluates datasets and compares outputs; a dataset whose two outputs differ raises
    :class:`~dpverify.errors.NondeterministicMechanism` (a mismatch between two orderings is only a
    symmetry violation once each side is shown to repeat itself)."""

    def __init__(self, mechanism: Mechanism, relative: float) -> None:
        self.mechanism = mechanism
        self.relative = relative
        self.evaluations = 0

    def __call__(self, dataset: tuple) -> Distribution:
        self.evaluations += 1
        return call_mechanism(self.mechanism, dataset)

    def same(self, first: Distribution, second: Distribution) -> bool:
        return same_distribution(first, second, self.relative)

    def violation(self, dataset: tuple, permuted: tuple, first: Distribution, second: Distribution) -> SymmetryViolation:
        for data, seen in ((dataset, first), (permuted, second)):
            again = self(data)
            if not self.same(seen, again):
                raise nondeterministic(self.mechanism, data, seen, again)
        return SymmetryViolation(dataset, permuted, first, second)


def exchangeability_check(
    mechanism: Mechanism, records: Sequence[Hashable], n: int, *, budget: float, seed: int, relative: float = 0.0,
    reference: Callable[[tuple], Distribution] | None = None, samples: int | None = None,
) -> SymmetryCheck:
    """Prove or test a declared exchangeability within ``budget`` seconds.

    Every ordered dataset is compared with the output on its multiset (the first ordering met) when
    there are at most ``EXHAUSTIVE_SYMMETRY_LIMIT`` orderings (whatever they cost: a verdict proved
    on one machine is proved on every machine), or when the rate measured on the first orderings
    says they fit in ``budget``: a proof. Otherwise
    random datasets (``seed``) are compared with every transposition of each and a random
    permutation, for the rest of the budget (at least 200, at most 20,000 datasets): a property
    test, not a proof. With ``samples`` there is no budget: beyond ``EXHAUSTIVE_SYMMETRY_LIMIT``
    orderings exactly ``samples`` random datasets are tested (no rate is measured), so the check
    and its evidence repeat exactly, on any machine. Float outputs agree within ``relative`` of the larger value (the rounding of
    one computation done in another order); exact ones exactly.

    ``reference(multiset)`` gives the run's own output on a multiset (its datasets sorted in
    ``records`` order); every ordering is then compared with what the verdict reads, so a mechanism
    whose outputs change between the run and the check is caught (and the sorted ordering itself,
    evaluated by the run, is not evaluated again). Without it, the first ordering met is the reference.

    Raises:
        MechanismError: the mechanism raised.
        NondeterministicMechanism: the mechanism gave two outputs for one dataset.
    """
    compare = _Comparer(mechanism, relative)
    started = time.perf_counter()
    total = len(records) ** n
    position = {r: i for i, r in enumerate(records)}
    seen: dict[tuple, Distribution] = {}
    orderings: Iterable[tuple] = itertools.product(records, repeat=n)
    if samples is not None and total > EXHAUSTIVE_SYMMETRY_LIMIT:
        orderings = ()  # a fixed sample instead of a timed attempt at every ordering
    for count, dataset in enumerate(orderings):
        if total > EXHAUSTIVE_SYMMETRY_LIMIT and (count == 64 or (count > 64 and count % 4096 == 0)):
            elapsed = time.perf_counter() - started
            if elapsed / count * total > budget:
                break
        key = tuple(sorted(dataset, key=position.__getitem__))
        first = seen.get(key)
        if first is None and reference is not None:
            first = seen[key] = reference(key)
            if key == dataset:
                continue
        dist = compare(dataset)
        if first is None:
            seen[key] = dist
        elif not compare.same(first, dist):
            return SymmetryCheck(compare.violation(key, dataset, first, dist), False, compare.evaluations, 0, seed)
    else:
        if samples is None or total <= EXHAUSTIVE_SYMMETRY_LIMIT:
            return SymmetryCheck(None, True, total, 0, seed)  # every ordering compared (the sorted ones are the run's)
    rng = random.Random(seed)

    def more(tested: int) -> bool:
        if samples is not None:
            return tested < samples
        return tested < _MAX_SAMPLES and (tested < _MIN_SAMPLES or time.perf_counter() - started < budget)

    tested = 0
    while more(tested):
        dataset = tuple(rng.choice(records) for _ in range(n))
        tested += 1
        base = compare(dataset)
        if reference is not None:
            key = tuple(sorted(dataset, key=position.__getitem__))
            if not compare.same(reference(key), base):
                return SymmetryCheck(compare.violation(key, dataset, reference(key), base), False, compare.evaluations,
                                     tested, seed)
        for permuted in _orderings(dataset, rng):
            other = compare(permuted)
            if not compare.same(base, other):
                return SymmetryCheck(compare.violation(dataset, permuted, base, other), False, compare.evaluations, tested, seed)
    return SymmetryCheck(None, False, compare.evaluations, tested, seed)


def check_declaration(
    mechanism: Mechanism, universe: Sequence[Hashable], sizes: list[int], *, budget: float, seed: int,
    relative: float, reference: Callable[[tuple], Distribution] | None = None, samples: int | None = None,
) -> SymmetryCheck:
    """The declaration checked at every dataset size the relation compares (one budget shared, or
    ``samples`` random datasets at each size), each ordering against ``reference`` (the run's output
    on its multiset; float outputs agree within ``relative``): :func:`exchangeability_check` at each
    size, the first violation returned."""
    checks = []
    for size in sizes:
        check = exchangeability_check(mechanism, universe, size, budget=budget / len(sizes), seed=seed,
                                      relative=relative, reference=reference, samples=samples)
        checks.append(check)
        if check.violation is not None:
            return check
    return SymmetryCheck(
        None, all(c.proved for c in checks), sum(c.datasets for c in checks), sum(c.samples for c in checks), seed
    )


def _orderings(dataset: tuple, rng: random.Random) -> list[tuple]:
    """Every transposition of ``dataset`` that changes it, and one random permutation."""
    n = len(dataset)
    found = []
    for i in range(n):
        for j in range(i + 1, n):
            if dataset[i] != dataset[j]:
                swapped = list(dataset)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                found.append(tuple(swapped))
    shuffled = tuple(rng.sample(dataset, n))
    if shuffled != dataset:
        found.append(shuffled)
    return found


def check_exchangeable(
    mechanism: Mechanism, records: Sequence[Hashable], n: int, *, samples: int = 100, random_state: int = 0
) -> SymmetryViolation | None:
    """Test a declared exchangeability; return a counterexample or None.

    When ``len(records) ** n <= EXHAUSTIVE_SYMMETRY_LIMIT`` every ordered dataset is compared with
    its sorted form (a proof); otherwise ``samples`` random datasets, each under every
    transposition and a random permutation (a property test, not a proof: :func:`dpverify.verify`
    then reports the declaration as unproved); ``random_state`` fixes the sample.
    """
    relative = 2 * float_error_of(mechanism)  # float outputs agree up to their rounding
    if len(records) ** n <= EXHAUSTIVE_SYMMETRY_LIMIT:
        return exchangeability_check(mechanism, records, n, budget=math.inf, seed=random_state, relative=relative).violation
    compare = _Comparer(mechanism, relative)
    rng = random.Random(random_state)
    for _ in range(samples):
        dataset = tuple(rng.choice(records) for _ in range(n))
        base = compare(dataset)
        for permuted in _orderings(dataset, rng):
            other = compare(permuted)
            if not compare.same(base, other):
                return compare.violation(dataset, permuted, base, other)
    return None
