"""What dpverify checks: the mechanism protocols, and how a known-broken variant names its parent.

Any callable that maps a dataset to its exact output distribution is a :class:`Mechanism` (defined
in :mod:`dpverify.types` with the other public type names, and importable from here); nothing
needs to inherit from anything. A mechanism tells the checker more through optional attributes:

* ``exact_distribution(dataset)`` (:class:`ExactMechanism`) — the same distribution with exact
  values (int, Fraction, sympy). The checker computes with the fast float outputs and certifies the
  pairs near the claim with the exact ones, so a float mechanism that is tight at its claim is
  proved to hold instead of being reported within rounding.
* ``exchangeable = True`` (or :func:`dpverify.exchangeable`) — the distribution ignores the order
  of the records; the checker then enumerates multisets (the declaration is tested first).
* ``float_relative_error`` — the relative error its float probabilities carry, when larger than
  the engine's default (see :mod:`dpverify.verdict.engine`).

A :class:`Learner` is a mechanism over labeled records ``(x, y)`` whose outcomes are concepts of
a class (their indices in class order), with the (epsilon, delta) it claims and, optionally, a
vectorised ``on_labelings`` for the fast tables of the realizable-to-agnostic transformation.

Mutants — deliberately broken variants an audit must catch — are declared beside their parent with
:func:`mutant`, which records the parent and what was broken; :func:`parent_of` reads it back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

from dpverify.types import Dataset, Mechanism  # the protocol lives with the other public type names

__all__ = ["Mechanism", "ExactMechanism", "Learner", "TwoNumberModes", "mutant", "parent_of", "is_mutant"]

_T = TypeVar("_T")


@runtime_checkable
class ExactMechanism(Mechanism, Protocol):
    """A mechanism that can also give its distribution in exact numbers (used to certify)."""

    def exact_distribution(self, dataset: Dataset, /) -> Mapping[Any, Any]: ...


@runtime_checkable
class Learner(Mechanism, Protocol):
    """A learner: labeled dataset -> distribution over concept indices of ``concept_class``.

    Attributes:
        concept_class: the class whose concepts (by index) are the outcomes.
        delta: the delta of the (epsilon, delta)-DP the learner claims (0 for pure learners).
        name: a short name for reports.

    Fast tables may also call ``on_labelings(point_counts, representatives, mistakes)``: the
    distributions for every labeling of one point multiset at once (see
    :mod:`dpverify.mechanisms.learners`).
    """

    concept_class: Any
    delta: float
    name: str


class TwoNumberModes:
    """Base for a mechanism computed in two number modes by one ``_distribution(dataset, exact=)``:
    calling it gives the mode of its ``exact`` attribute (float by default), and
    ``exact_distribution`` always the exact one — an :class:`ExactMechanism`."""

    exact: bool = False

    def __call__(self, dataset: Dataset) -> Mapping[Any, Any]:
        return self._distribution(dataset, exact=self.exact)

    def exact_distribution(self, dataset: Dataset) -> Mapping[Any, Any]:
        """The output distribution in exact numbers, whatever the number mode."""
        return self._distribution(dataset, exact=True)

    def _distribution(self, dataset: Dataset, *, exact: bool) -> Mapping[Any, Any]:
        raise NotImplementedError


def mutant(*, of: Any, broken: str) -> Callable[[_T], _T]:
    """Declare a known-broken variant of ``of`` (a function, class or name) beside it.

    ``@mutant(of=exponential_mechanism, broken="the factor 1/2 dropped")`` records the parent and
    what was broken on the decorated function or class as ``__dpverify_mutation__``; audits check a
    mutant against its parent's claim and must catch it. Returns the object unchanged otherwise.
    """
    if not broken or not isinstance(broken, str):
        raise ValueError(f"mutant() needs broken= saying what the variant breaks, got broken={broken!r}")
    parent = of if isinstance(of, str) else getattr(of, "__qualname__", None) or getattr(of, "__name__", repr(of))

    def declare(target: _T) -> _T:
        target.__dpverify_mutation__ = (parent, broken)  # type: ignore[attr-defined]
        return target

    return declare


def parent_of(obj: Any) -> str | None:
    """The parent's name recorded by :func:`mutant` on ``obj`` (or its class), else None."""
    declared = getattr(obj, "__dpverify_mutation__", None)
    return None if declared is None else declared[0]


def is_mutant(obj: Any) -> bool:
    """Whether ``obj`` (or its class) was declared with :func:`mutant`."""
    return parent_of(obj) is not None
