"""Order-invariance (exchangeability): declaring it, testing the declaration, validating outputs.

A mechanism declared exchangeable (:func:`exchangeable`, or ``verify(..., exchangeable=True)``) is
checked over multisets instead of ordered datasets. The declaration is tested first by
:func:`check_exchangeable` — on every ordering for small instances (a proof), on random datasets
and permutations otherwise — and a mechanism that lies about it is reported with a
:class:`SymmetryViolation` and checked as a black box.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpverify.distribution import Distribution
from dpverify.evaluation import as_distribution

__all__ = ["exchangeable", "check_exchangeable", "evaluate", "SymmetryViolation", "EXHAUSTIVE_SYMMETRY_LIMIT"]

Mechanism = Callable[[tuple], Mapping[Hashable, Any]]


def exchangeable(mechanism: Mechanism) -> Mechanism:
    """Declare that ``mechanism``'s output distribution ignores the order of the records.

    The declaration is tested (random datasets, random permutations) before the checker uses it.
    """
    mechanism.exchangeable = True  # type: ignore[attr-defined]
    return mechanism


@dataclass(frozen=True)
class SymmetryViolation:
    """A counterexample to a declared exchangeability: same records, other order, other output."""

    dataset: tuple
    permuted: tuple
    first: Distribution
    second: Distribution


def evaluate(mechanism: Mechanism, dataset: tuple) -> Distribution:
    """Run ``mechanism`` on ``dataset`` and validate its output as a :class:`Distribution`."""
    return as_distribution(mechanism(dataset), dataset)


def _distributions_close(a: Distribution, b: Distribution) -> bool:
    if a.is_exact and b.is_exact:
        return a == b
    if a.support != b.support:
        return False
    return all(abs(float(a[o]) - float(b[o])) <= 1e-12 for o in a)


#: Up to this many ordered datasets, a declared exchangeability is checked on every ordering.
EXHAUSTIVE_SYMMETRY_LIMIT = 20_000


def check_exchangeable(
    mechanism: Mechanism, records: Sequence[Hashable], n: int, *, samples: int = 100, random_state: int = 0
) -> SymmetryViolation | None:
    """Test a declared exchangeability; return a counterexample or None.

    When ``len(records) ** n <= EXHAUSTIVE_SYMMETRY_LIMIT`` every ordered dataset is compared with
    its sorted form (a proof); otherwise ``samples`` random datasets, each under a random
    permutation and a swap of its first two entries (a property test, not a proof: see
    ``VerificationResult.exchangeability``); ``random_state`` fixes the sample (runs repeat).
    """
    if len(records) ** n <= EXHAUSTIVE_SYMMETRY_LIMIT:
        position = {r: i for i, r in enumerate(records)}
        reference: dict[tuple, Distribution] = {}
        for dataset in itertools.product(records, repeat=n):
            key = tuple(sorted(dataset, key=position.__getitem__))
            dist = as_distribution(mechanism(dataset), dataset)
            if key not in reference:
                reference[key] = dist
            elif not _distributions_close(reference[key], dist):
                return SymmetryViolation(key, dataset, reference[key], dist)
        return None
    rng = random.Random(random_state)
    for _ in range(samples):
        dataset = tuple(rng.choice(records) for _ in range(n))
        permutations = [tuple(rng.sample(dataset, n))]
        if n >= 2:
            permutations.append((dataset[1], dataset[0]) + dataset[2:])
        base = as_distribution(mechanism(dataset), dataset)
        for permuted in permutations:
            other = as_distribution(mechanism(permuted), permuted)
            if not _distributions_close(base, other):
                return SymmetryViolation(dataset, permuted, base, other)
    return None
