"""Samplers that run IBM diffprivlib 0.6.6 mechanisms, unmodified, on tiny domains.

Each ``sampler(dataset, rng)`` builds the diffprivlib mechanism with ``random_state=rng`` (so every
draw comes from the generator it is given: dpverify's exact rng, or a seeded ``RandomState`` for the
Monte-Carlo check) and returns ``mechanism.randomise(query(dataset))``. A real-valued output is
post-processed to a finite set, as stated per sampler (a post-processing of a DP output is DP with
the same parameters). Each takes its privacy parameter as a keyword, so the test builds the mutant
(the same mechanism constructed with twice the parameter it claims) with :func:`constructed_with`.

Domains (``records``, ``n``; neighbours replace one record):

* n = 1, records {0, 1}, query = the record: Binary (as the label "0"/"1"), Geometric (clipped),
  GeometricTruncated, GeometricFolded, Uniform, Staircase, GaussianDiscrete.
* n = 3, records {0, 1, 2}, query = the utility vector [count of 0, count of 1, count of 2]
  (sensitivity 1 under replace-one): Exponential, PermuteAndFlip. (0, 0, 0) gives [3, 0, 0].
* n = 1, records {"A", "B", "C"} / {"A", "B", "C", "D"}: ExponentialCategorical, ExponentialHierarchical.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from diffprivlib.mechanisms import (
    Binary,
    Exponential,
    ExponentialCategorical,
    ExponentialHierarchical,
    GaussianDiscrete,
    Geometric,
    GeometricFolded,
    GeometricTruncated,
    PermuteAndFlip,
    Staircase,
    Uniform,
)

EPSILON = 1.0  # every mechanism's claimed epsilon (Exponential at 1.0 sums its probabilities to 1 - 2^-52)
UNIFORM_DELTA = 0.2
GAUSSIAN_DELTA = 0.2
CLIP = (-2, 3)  # Geometric (untruncated), clipped
TRUNCATED = (0, 3)  # GeometricTruncated's lower, upper
FOLDED = (0, 2)  # GeometricFolded's lower, upper
STAIRCASE_BINS = (-4, 5)  # floor(2 * output), clipped
GAUSSIAN_CLIP = (-3, 4)
CATEGORIES = ("A", "B", "C")
CATEGORICAL_UTILITY = [("A", "B", 1), ("A", "C", 2), ("B", "C", 2)]
HIERARCHY = [["A", "B"], ["C", "D"]]
LEAVES = ("A", "B", "C", "D")


def _clip(value: Any, bounds: tuple[int, int]) -> int:
    low, high = bounds
    return int(min(max(value, low), high))


def _counts(dataset: tuple) -> list[int]:
    return [dataset.count(candidate) for candidate in (0, 1, 2)]


def binary(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> str:
    return Binary(epsilon=epsilon, value0="0", value1="1", random_state=rng).randomise(str(dataset[0]))


def binary_hidden(dataset: tuple, rng: Any) -> str:
    """Binary WITHOUT random_state: diffprivlib then draws from its own ``secrets.SystemRandom()``."""
    return Binary(epsilon=EPSILON, value0="0", value1="1").randomise(str(dataset[0]))


def geometric_clipped(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    """The untruncated Geometric, its integer output clipped to [-2, 3]."""
    return _clip(Geometric(epsilon=epsilon, sensitivity=1, random_state=rng).randomise(dataset[0]), CLIP)


def geometric_truncated(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    low, high = TRUNCATED
    return GeometricTruncated(epsilon=epsilon, sensitivity=1, lower=low, upper=high, random_state=rng).randomise(dataset[0])


def geometric_folded(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    low, high = FOLDED
    return GeometricFolded(epsilon=epsilon, sensitivity=1, lower=low, upper=high, random_state=rng).randomise(dataset[0])


def exponential(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    return Exponential(epsilon=epsilon, sensitivity=1, utility=_counts(dataset), random_state=rng).randomise()


def permute_and_flip(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    return PermuteAndFlip(epsilon=epsilon, sensitivity=1, utility=_counts(dataset), random_state=rng).randomise()


def exponential_categorical(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> str:
    mechanism = ExponentialCategorical(epsilon=epsilon, utility_list=CATEGORICAL_UTILITY, random_state=rng)
    return mechanism.randomise(dataset[0])


def exponential_hierarchical(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> str:
    return ExponentialHierarchical(epsilon=epsilon, hierarchy=HIERARCHY, random_state=rng).randomise(dataset[0])


def uniform(dataset: tuple, rng: Any, *, delta: float = UNIFORM_DELTA) -> int:
    """Uniform noise (epsilon 0, this delta), its real output post-processed by floor."""
    return int(np.floor(Uniform(delta=delta, sensitivity=1, random_state=rng).randomise(dataset[0])))


def staircase(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    """Staircase noise (default gamma), its real output post-processed to floor(2 * output) clipped to [-4, 5]."""
    output = Staircase(epsilon=epsilon, sensitivity=1, random_state=rng).randomise(dataset[0])
    return _clip(int(np.floor(2 * output)), STAIRCASE_BINS)


def gaussian_discrete(dataset: tuple, rng: Any, *, epsilon: float = EPSILON) -> int:
    """The discrete Gaussian at (epsilon, 0.2), its integer output clipped to [-3, 4]."""
    mechanism = GaussianDiscrete(epsilon=epsilon, delta=GAUSSIAN_DELTA, sensitivity=1, random_state=rng)
    return _clip(mechanism.randomise(dataset[0]), GAUSSIAN_CLIP)


def constructed_with(sampler: Any, **parameters: float) -> Any:
    """``sampler`` building its mechanism with ``parameters`` instead (a picklable partial, named)."""
    mutant = functools.partial(sampler, **parameters)
    mutant.__name__ = f"{sampler.__name__}({', '.join(f'{k}={v!r}' for k, v in parameters.items())})"
    return mutant
