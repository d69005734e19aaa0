"""The sparse vector programs in the output shapes public testers give them, as one-draw samplers.

:mod:`dpverify.mechanisms.suite_samplers` writes the benchmark mechanisms with outputs chosen for the
statistical engine (one int, or an int matrix). Public testers return other shapes from the same
mechanisms, and a user's own code returns whatever its author chose; the statistical mode has to see
the same leaks through each of them. Each sampler here is ``sampler(dataset, rng)``: one output of
Lyu, Su, Li's (VLDB 2017) Algorithms 1-6 at cutoff ``c = 1``, the scales, thresholds and
comparisons of :data:`~dpverify.mechanisms.suite_samplers.SVT_SCALES` (threshold ``T = 0.5`` for
Algorithm 1, else 1), written as a loop over the queries with one ``rng.laplace`` draw each (none in Algorithm 5), the way such
code is written by hand. Every shape is a one-to-one encoding of the suite sampler's output, so
each has the suite's exact eps* (``measure(f"svt{variant}", ...)``; the traced exact mode gives the
same figure from this code, ``tests/mechanisms/test_suite_shapes.py``).

Shapes (``SHAPES``):

* ``"answers"`` -- the answer vector with abort markers, a numpy int array of length ``k``: 1 for
  ``⊤``, 0 for ``⊥``, -1 for each query after the run stopped (DP-Sniper's encoding); Algorithms 5
  and 6 have no cutoff, so their vectors are 0/1 only.
* ``"count"`` -- the number of ``⊥`` answers, a Python int (StatDP's ``out.count(False)``).
* ``"count_last"`` -- Algorithm 3: ``(number of ⊥ answers, last answer)``, the last answer ``False``
  when no query was above the threshold, else the released noisy answer, a float (StatDP's).
* ``"values"`` -- Algorithm 3: a float vector of length ``k`` with the released noisy answer at the
  ``⊤``, -1000.0 for ``⊥`` and -2000.0 after the run stopped (DP-Sniper's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument

from .suite_samplers import SVT_SCALES, SVT_STRICT

__all__ = ["ShapedSparseVector", "SHAPES", "SHAPED_PROGRAMS"]

#: Shape -> the algorithms it is given for.
SHAPES: dict[str, tuple[int, ...]] = {"answers": (1, 2, 4, 5, 6), "count": (1, 2, 4), "count_last": (3,),
                                      "values": (3,)}
#: The benchmark's rows (issue 35's table, then the other broken algorithms): (algorithm, shape).
SHAPED_PROGRAMS: tuple[tuple[int, str], ...] = (
    (3, "count_last"), (1, "answers"), (2, "answers"), (1, "count"), (2, "count"), (6, "answers"), (3, "values"),
    (4, "answers"), (4, "count"), (5, "answers"),
)
#: DP-Sniper's markers in Algorithm 3's float vector.
FALSE_MARKER = -1000.0
ABORTED_MARKER = -2000.0


@dataclass(frozen=True)
class ShapedSparseVector:
    """Algorithm ``variant`` at ``epsilon`` (c = 1) returning ``shape`` (module docstring)."""

    epsilon: float
    variant: int
    shape: str

    def __post_init__(self) -> None:
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or not 0 < self.epsilon < np.inf:
            raise InvalidArgument(f"epsilon must be a positive finite number, got epsilon={self.epsilon!r}.")
        if self.shape not in SHAPES:
            raise InvalidArgument(f"shape must be one of {sorted(SHAPES)}, got shape={self.shape!r}.")
        if self.variant not in SHAPES[self.shape]:
            raise InvalidArgument(f"shape {self.shape!r} is given for Algorithms {SHAPES[self.shape]}, "
                                  f"got variant={self.variant!r}.")

    @property
    def __name__(self) -> str:  # noqa: PLW3201 -- shown by the checks as the sampler's name
        return f"svt{self.variant}_{self.shape}"

    def __call__(self, dataset: Sequence[float], rng: np.random.Generator) -> Any:
        rho_factor, nu_factor = SVT_SCALES[self.variant]
        threshold = (0.5 if self.variant == 1 else 1.0) + rng.laplace(0.0, rho_factor / self.epsilon)
        answers: list[Any] = []
        for query in dataset:
            noisy = query if nu_factor is None else query + rng.laplace(0.0, nu_factor / self.epsilon)
            above = noisy > threshold if self.variant in SVT_STRICT else noisy >= threshold
            if self.variant in (5, 6):  # no cutoff: every query answered
                answers.append(int(above))
                continue
            if above:
                answers.append(noisy if self.variant == 3 else True)
                break
            answers.append(False)
        return self._shaped(answers, len(dataset))

    def _shaped(self, answers: list[Any], k: int) -> Any:
        if self.shape == "count":
            return answers.count(False)
        if self.shape == "count_last":
            return answers.count(False), answers[-1]
        if self.shape == "values":
            values = [FALSE_MARKER if a is False else a for a in answers]
            return np.array(values + [ABORTED_MARKER] * (k - len(values)))
        if self.variant in (5, 6):
            return np.array(answers, dtype=np.int64)
        return np.array([int(a) for a in answers] + [-1] * (k - len(answers)), dtype=np.int64)
