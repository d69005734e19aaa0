"""The diffprivlib interop cases: each sampler of :mod:`._samplers` with its domain, its closed form
(:mod:`._closed_forms`), the claim the test makes and the verdict it expects, and why.

A case's ``closed_form(dataset, parameter)`` is the exact output distribution of its sampler on
``dataset`` when the mechanism is constructed with ``parameter`` (epsilon, or delta for Uniform):
the honest run uses ``parameter`` = the claimed value, the mutant twice it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import _closed_forms as forms
from . import _samplers as samplers

TAIL = 1e-12  # the mass an unbounded sampler may leave unexplored
#: PermuteAndFlip's tail: its light paths are many (19,395 runs on the 27 datasets at 1e-12, 15,915 at
#: 1e-10), and 2^-32 = 16^-8 (2.3e-10) of unexplored mass still fits in TAIL_DELTA with the float
#: allowance. A tail on the passes' ladder of cutoffs 16^-k stops right after the pass at it: 12,759 runs.
PERMUTE_TAIL = 2.0**-32
TAIL_DELTA = 1e-9  # the delta claimed with a tail: 1,000 tails, and 4x the float error allowance (2 x 1.16e-10)


@dataclass(frozen=True)
class Case:
    """One mechanism on one domain.

    Attributes:
        name: the diffprivlib class.
        sampler: ``sampler(dataset, rng, **{parameter: value})``.
        records, n: the domain (datasets are n-tuples of records, neighbours replace one).
        closed_form: ``closed_form(dataset, value)``: the exact output distribution.
        parameter: the keyword the mutant doubles ("epsilon", or "delta" for Uniform).
        epsilon, delta: the claim verified (delta None: pure DP).
        tail: ``from_sampler(..., tail=)`` (None: every path; the sampler's randomness is finite).
        expected: the verdict expected for the honest claim.
        why: the reason, in one sentence.
    """

    name: str
    sampler: Callable[..., Any]
    records: tuple
    n: int
    closed_form: Callable[[tuple, float], forms.Distribution]
    parameter: str
    epsilon: float
    delta: float | None
    tail: float | None
    expected: str
    why: str

    @property
    def value(self) -> float:
        """The claimed value of the doubled parameter."""
        return self.epsilon if self.parameter == "epsilon" else float(self.delta or 0)

    def distribution(self, dataset: tuple, *, mutant: bool = False) -> forms.Distribution:
        return _evaluate(self.closed_form, tuple(dataset), 2 * self.value if mutant else self.value)

    def pairs(self) -> list[tuple[tuple, tuple]]:
        return forms.substitute_pairs(self.records, self.n)

    def epsilon_star(self, *, mutant: bool = False) -> float:
        return forms.epsilon_star(lambda d: self.distribution(d, mutant=mutant), self.pairs())

    def delta_at_claim(self, *, mutant: bool = False) -> float:
        return forms.delta_at(lambda d: self.distribution(d, mutant=mutant), self.pairs(), self.epsilon)


@functools.cache
def _evaluate(closed_form: Callable[[tuple, float], forms.Distribution], dataset: tuple, value: float) -> forms.Distribution:
    return closed_form(dataset, value)


def _counts(dataset: tuple) -> list[int]:
    return [dataset.count(candidate) for candidate in (0, 1, 2)]


_LEAVES, _HIERARCHY_UTILITY = forms.hierarchy_utility(samplers.HIERARCHY)
_CATEGORICAL = {frozenset((a, b)): u for a, b, u in samplers.CATEGORICAL_UTILITY}


def categorical_utility(a: str, b: str) -> int:
    return 0 if a == b else _CATEGORICAL[frozenset((a, b))]


EPS = samplers.EPSILON

# Each "why" gives the closed-form figures behind the expectation (eps* - eps at 50 digits). The
# engine allows float probabilities a relative error of 1.16e-10 (dpverify.verdict.engine): a claim
# met within that is HOLDS_WITHIN_ROUNDING, never HOLDS; VIOLATED needs an excess beyond it.
CASES = [
    Case("Binary", samplers.binary, (0, 1), 1,
         lambda d, e: forms.binary(e, str(d[0])), "epsilon", EPS, None, None,
         "HOLDS_WITHIN_ROUNDING",
         "P(keep) / P(flip) = fl(e^1) (np.exp(1) + 1 is exact), so eps* = 1 - 5.3e-17: exactly 1-DP, but "
         "tight, and the float allowance forbids proving it: within rounding"),
    Case("Exponential", samplers.exponential, (0, 1, 2), 3,
         lambda d, e: forms.exponential(e, _counts(d)), "epsilon", EPS, None, None,
         "HOLDS",
         "replacing a record raises one utility and lowers another, the normaliser moving against the "
         "first: eps* = 0.6887, far below 1"),
    Case("ExponentialCategorical", samplers.exponential_categorical, samplers.CATEGORIES, 1,
         lambda d, e: forms.exponential_categorical(e, categorical_utility, samplers.CATEGORIES, d[0]),
         "epsilon", EPS, None, None,
         "HOLDS",
         "the normalising constants differ (unbalanced), so the balancing factor 2 stays: eps* = 0.5750"),
    Case("ExponentialHierarchical", samplers.exponential_hierarchical, samplers.LEAVES, 1,
         lambda d, e: forms.exponential_categorical(e, _HIERARCHY_UTILITY, _LEAVES, d[0]),
         "epsilon", EPS, None, None,
         "HOLDS_WITHIN_ROUNDING",
         "balanced, so factor 1: P(D | D) / P(D | A) = e^1 up to the rounding of the normalising sums, "
         "which puts eps* 3.5e-16 ABOVE 1 (delta(1) = 1.5e-16): an excess far inside the float allowance"),
    Case("Uniform", samplers.uniform, (0, 1), 1,
         lambda d, delta: forms.uniform_floor(delta, d[0]), "delta", 0.0, samplers.UNIFORM_DELTA, None,
         "HOLDS_WITHIN_ROUNDING",
         "floor(value + U[-2.5, 2.5)): neighbours are 1/5 apart in total variation, the claimed delta "
         "exactly (eps* = inf): tight"),
    Case("PermuteAndFlip", samplers.permute_and_flip, (0, 1, 2), 3,
         lambda d, e: forms.permute_and_flip(e, _counts(d)), "epsilon", EPS, TAIL_DELTA, PERMUTE_TAIL,
         "HOLDS",
         "bernoulli_neg_exp's counter loop is unbounded (tail needed); eps* = 0.9465 < 1, so the explored "
         "delta is 0 and the unexplored mass (<= 2.3e-10) fits in delta = 1e-9"),
    Case("GeometricTruncated", samplers.geometric_truncated, (0, 1), 1,
         lambda d, e: forms.geometric_truncated(e, d[0], *samplers.TRUNCATED), "epsilon", EPS, TAIL_DELTA, TAIL,
         "HOLDS",
         "Geometric.randomise makes the noise a concrete integer before truncating (tail needed); the "
         "float a = 1 + np.exp(-1) puts eps* at 1 + 2.0e-17 (delta(1) = 9.1e-18); with the float "
         "allowance (<= 2.3e-10) and the unexplored mass (<= 1e-12) that fits in delta = 1e-9"),
    Case("GeometricFolded", samplers.geometric_folded, (0, 1), 1,
         lambda d, e: forms.geometric_folded(e, d[0], *samplers.FOLDED), "epsilon", EPS, TAIL_DELTA, TAIL,
         "HOLDS",
         "folding into [0, 2] mixes the two tails: eps* = 0.8912 (tail needed, as for GeometricTruncated)"),
    Case("Geometric", samplers.geometric_clipped, (0, 1), 1,
         lambda d, e: forms.geometric_clipped(e, d[0], *samplers.CLIP), "epsilon", EPS, TAIL_DELTA, TAIL,
         "HOLDS",
         "the two-sided geometric clipped to [-2, 3]: eps* = 1 + 2.0e-17, as GeometricTruncated (tail needed)"),
    Case("Staircase", samplers.staircase, (0, 1), 1,
         lambda d, e: forms.staircase_binned(e, d[0], *samplers.STAIRCASE_BINS), "epsilon", EPS, TAIL_DELTA, TAIL,
         "HOLDS",
         "half-unit bins of the staircase are tight: eps* = 1 + 6.3e-17, delta(1) = 1.4e-17, within "
         "delta = 1e-9 with the float allowance; rng.geometric is unbounded (tail needed)"),
]
