"""Inner learners A for the realizable-to-agnostic transformation (Li–Wang–Ye 2025).

Lemma 15 and Claim 23 assume a (1, delta)-DP learner A run on the relabeled sample T^h. Each
learner here is given in two forms:

* ``__call__(dataset)``: the learner on a labeled dataset (a tuple of records ``(x, y)``), returning
  its exact :class:`~dpverify.finite.distribution.Distribution` (the naive reference);
* ``on_labelings(concept_class, point_counts, representatives, mistakes)``: the same distribution
  for every labeling of one point multiset at once (the fast path used by A_Agnostic), where
  ``mistakes[l, f]`` is the number of records of ``T^{h_l}`` concept ``f`` mislabels.

Learners (outcome = index of the learned concept in class order):

* :class:`ExponentialLearner` — EM over C, score = mistakes, ``P(c) ∝ exp(-learner_epsilon *
  mistakes / 2)``: ``learner_epsilon``-DP (sensitivity 1), pure.
* :class:`LeakyLearner` — with probability delta the first concept consistent with the first
  example (smallest record) of its input, otherwise :class:`ExponentialLearner`: (1, delta)-DP for
  ``learner_epsilon = 1``, since the leaking branch moves any event by at most delta.
* :class:`ConsistentLearner` — the first consistent concept: not private (a mutant).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.mechanism import mutant
from dpverify.finite.records import ConceptClass
from dpverify.validation import check_choice, check_delta

from .exponential import exponential_rows

__all__ = ["ExponentialLearner", "LeakyLearner", "ConsistentLearner", "learner", "LEARNERS"]


def _first_consistent_with(concept_class: ConceptClass, x: int, y: int) -> int:
    matches = np.flatnonzero(concept_class.matrix[:, x] == bool(y))
    if matches.size == 0:
        raise InvalidArgument(
            f"no concept of {concept_class.name} labels x={x} with y={y}; the leaky learner needs a "
            "concept consistent with its first example (use realizable records)."
        )
    return int(matches[0])


@dataclass(frozen=True)
class ExponentialLearner:
    """EM over the class with score = mistakes on the input (Li–Wang–Ye 2025, Lemma 11 applied to A)."""

    concept_class: ConceptClass
    learner_epsilon: float = 1.0
    name = "exponential"

    @property
    def delta(self) -> float:
        return 0.0

    def __call__(self, dataset: tuple) -> Distribution:
        mistakes = self.concept_class.mistakes(dataset)
        return Distribution(dict(enumerate(exponential_rows(-self.learner_epsilon * mistakes / 2.0).tolist())))

    def on_labelings(self, point_counts: np.ndarray, representatives: np.ndarray, mistakes: np.ndarray) -> np.ndarray:
        return exponential_rows(-self.learner_epsilon * mistakes / 2.0)


@dataclass(frozen=True)
class LeakyLearner:
    """With probability ``delta`` leak the first example (first concept consistent with it),
    else EM: a (learner_epsilon, delta)-DP learner for the delta claims."""

    concept_class: ConceptClass
    delta: float
    learner_epsilon: float = 1.0
    name = "leaky"

    def __post_init__(self) -> None:
        check_delta(self.delta)

    def __call__(self, dataset: tuple) -> Distribution:
        base = ExponentialLearner(self.concept_class, self.learner_epsilon)(dataset)
        x, y = min(dataset)
        leak = Distribution.point(_first_consistent_with(self.concept_class, x, y))
        return Distribution.mixture([(1 - self.delta, base), (self.delta, leak)])

    def on_labelings(self, point_counts: np.ndarray, representatives: np.ndarray, mistakes: np.ndarray) -> np.ndarray:
        base = exponential_rows(-self.learner_epsilon * mistakes / 2.0)
        first_x = int(np.flatnonzero(point_counts)[0])
        out = (1 - self.delta) * base
        for row, rep in enumerate(representatives):
            label = self.concept_class.label(int(rep), first_x)
            out[row, _first_consistent_with(self.concept_class, first_x, label)] += self.delta
        return out


@dataclass(frozen=True)
@mutant(of=ExponentialLearner, broken="outputs the first consistent concept: not private")
class ConsistentLearner:
    """The first concept (class order) consistent with the input: not private (a mutant)."""

    concept_class: ConceptClass
    name = "consistent"

    @property
    def delta(self) -> float:
        return 0.0

    def __call__(self, dataset: tuple) -> Distribution:
        consistent = self.concept_class.consistent(dataset)
        if consistent.size == 0:
            raise InvalidArgument(f"no concept of {self.concept_class.name} is consistent with {dataset}.")
        return Distribution.point(int(consistent[0]))

    def on_labelings(self, point_counts: np.ndarray, representatives: np.ndarray, mistakes: np.ndarray) -> np.ndarray:
        out = np.zeros(mistakes.shape)
        out[np.arange(mistakes.shape[0]), np.argmax(mistakes == 0, axis=1)] = 1.0
        return out


LEARNERS = {"exponential": ExponentialLearner, "leaky": LeakyLearner, "consistent": ConsistentLearner}


def learner(name: str, concept_class: ConceptClass, *, learner_epsilon: float = 1.0, delta: float = 0.0):
    """Build an inner learner by name: ``exponential``, ``leaky`` or ``consistent``."""
    if name == "exponential":
        return ExponentialLearner(concept_class, learner_epsilon)
    if name == "leaky":
        return LeakyLearner(concept_class, delta, learner_epsilon)
    if name == "consistent":
        return ConsistentLearner(concept_class)
    check_choice("name", name, sorted(LEARNERS), what="learner")
    raise AssertionError(f"learner {name!r} is listed in LEARNERS but not built here")
