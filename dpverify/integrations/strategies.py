"""Hypothesis strategies for dpverify, and a targeted search for privacy violations.

Strategies (plural-noun factories with keyword-only options; arguments are validated when the
strategy is built, not when it is drawn from):

* :func:`record_universes` — record universes ``labeled_records(d)`` of random domain size ``d``;
* :func:`concept_classes` — a named class of :data:`dpverify.finite.records.CONCEPT_CLASSES` or a random
  non-empty boolean matrix;
* :func:`datasets` — tuples of ``n`` records from a universe;
* :func:`neighboring_pairs` — ``(D, D')`` neighbouring under ``"substitute"`` (same size, one
  position replaced by a different record) or ``"add_remove"`` (``D'`` is ``D`` with one entry
  removed), as :class:`NeighboringPair` tuples, which Hypothesis prints one dataset per line.

Users write their own ``@given(neighboring_pairs(records, n=3))`` tests of a learner with them.

:func:`privacy_property` turns a privacy claim into a Hypothesis test. It draws neighbouring pairs,
computes each pair's exact output distributions and its hockey-stick divergence
``delta(eps) = max_S P(S) - e^eps Q(S)`` in both directions (:func:`dpverify.verdict.privacy_loss.delta_for_epsilon`),
and steers the search with ``hypothesis.target(eps*)`` toward the pair of largest pure privacy loss.
It is a *search*, for instances too large to enumerate: passing proves nothing. For a certified
verdict on every pair use :func:`dpverify.verify`, the exhaustive path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import hypothesis
import hypothesis.strategies as st
import numpy as np
from hypothesis.strategies import SearchStrategy, composite

from dpverify.checking.checker import evaluate
from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.records import CONCEPT_CLASSES, ConceptClass, check_records, labeled_records
from dpverify.validation import check_integer
from dpverify.verdict.engine import Verdict, decide_pair
from dpverify.verdict.privacy_loss import check_delta, check_epsilon, epsilon_star, hockey_stick, optimal_output_set

__all__ = [
    "record_universes",
    "concept_classes",
    "datasets",
    "neighboring_pairs",
    "NeighboringPair",
    "privacy_property",
    "NEIGHBOR_RELATIONS",
    "MAX_RANDOM_CONCEPTS",
    "TARGET_CAP",
]

#: Neighbour relations the strategies can sample (names as in :mod:`dpverify.finite.neighbors`).
NEIGHBOR_RELATIONS = ("substitute", "add_remove")
#: Largest number of rows of a random concept-class matrix drawn by :func:`concept_classes`.
MAX_RANDOM_CONCEPTS = 8
#: ``hypothesis.target`` needs finite scores: an infinite privacy loss is reported as this value.
TARGET_CAP = 1e6

Mechanism = Callable[[tuple], Mapping[Any, Any]]  # Mapping is invariant in its key: dict[int, Fraction] must fit


def _check_positive_int(name: str, value: Any, *, minimum: int = 1) -> None:
    check_integer(name, value, at_least=minimum)


def _check_neighbors(neighbors: Any) -> str:
    if neighbors not in NEIGHBOR_RELATIONS:
        raise InvalidArgument(
            f"neighbors={neighbors!r} cannot be sampled; choose one of {list(NEIGHBOR_RELATIONS)}."
        )
    return neighbors


# -- domains ---------------------------------------------------------------------------------


def record_universes(
    *, min_domain_size: int = 1, max_domain_size: int = 4
) -> SearchStrategy[tuple[tuple[int, int], ...]]:
    """Record universes ``labeled_records(d)`` for ``min_domain_size <= d <= max_domain_size``.

    Each universe holds the ``2 d`` records ``(x, y)``, ``x < d``, ``y`` in ``{0, 1}``; shrinks
    toward the smallest domain.

    Raises:
        InvalidArgument: a size is not a positive integer, or ``min_domain_size > max_domain_size``.
    """
    _check_positive_int("min_domain_size", min_domain_size)
    _check_positive_int("max_domain_size", max_domain_size)
    if min_domain_size > max_domain_size:
        raise InvalidArgument(
            f"min_domain_size={min_domain_size} is larger than max_domain_size={max_domain_size}; "
            "swap them or raise max_domain_size."
        )
    return st.integers(min_domain_size, max_domain_size).map(labeled_records)


@composite
def _random_concept_classes(draw: st.DrawFn, domain_size: int) -> ConceptClass:
    rows = draw(
        st.lists(
            st.lists(st.booleans(), min_size=domain_size, max_size=domain_size),
            min_size=1,
            max_size=MAX_RANDOM_CONCEPTS,
        )
    )
    return ConceptClass("random", np.array(rows, dtype=bool))


@composite
def _concept_classes(draw: st.DrawFn, max_domain_size: int) -> ConceptClass:
    domain_size = draw(st.integers(1, max_domain_size))
    name = draw(st.sampled_from([*CONCEPT_CLASSES, "random"]))
    if name == "random":
        return draw(_random_concept_classes(domain_size))
    return CONCEPT_CLASSES[name](domain_size)


def concept_classes(*, max_domain_size: int = 4) -> SearchStrategy[ConceptClass]:
    """Concept classes over ``X = {0, ..., d-1}`` with ``1 <= d <= max_domain_size``.

    Draws one of the named builders of :data:`dpverify.finite.records.CONCEPT_CLASSES` or (named
    ``"random"``) a random boolean matrix of 1 to :data:`MAX_RANDOM_CONCEPTS` concepts, repeats
    allowed. Shrinks toward small domains and the first named builder.

    Raises:
        InvalidArgument: ``max_domain_size`` is not an integer in ``[1, 16]`` (``all_functions``
            has ``2^d`` concepts).
    """
    _check_positive_int("max_domain_size", max_domain_size)
    if max_domain_size > 16:
        raise InvalidArgument(
            f"max_domain_size={max_domain_size} is too large: all_functions would have "
            f"2^{max_domain_size} concepts; use max_domain_size <= 16."
        )
    return _concept_classes(max_domain_size)


# -- datasets and neighbours ---------------------------------------------------------------------


def datasets(records: Sequence[Hashable], *, n: int) -> SearchStrategy[tuple]:
    """Datasets: tuples of ``n`` records drawn (with repetition) from the universe ``records``.

    Raises:
        InvalidArgument: ``records`` is empty, has repeats or unhashable entries, or ``n < 0``.
    """
    universe = check_records(records)
    _check_positive_int("n", n, minimum=0)
    return st.tuples(*[st.sampled_from(universe)] * n)


class NeighboringPair(tuple):
    """A pair ``(D, D')`` drawn by :func:`neighboring_pairs`: a plain 2-tuple that Hypothesis prints
    one dataset per line when it does not fit on one, never one record per line."""

    __slots__ = ()

    def __new__(cls, dataset: tuple, neighbor: tuple) -> NeighboringPair:
        return super().__new__(cls, (dataset, neighbor))

    def __repr__(self) -> str:
        return f"({self[0]!r}, {self[1]!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # Hypothesis's (IPython's) printer
        with printer.group(1, "(", ")"):
            printer.text(f"{self[0]!r},")
            printer.breakable()
            printer.text(repr(self[1]))


@composite
def _neighboring_pairs(
    draw: st.DrawFn, universe: tuple, n: int, neighbors: str
) -> NeighboringPair:
    dataset = draw(st.tuples(*[st.sampled_from(universe)] * n))
    position = draw(st.integers(0, n - 1))
    if neighbors == "add_remove":
        return NeighboringPair(dataset, dataset[:position] + dataset[position + 1 :])
    others = [r for r in universe if r != dataset[position]]
    replacement = draw(st.sampled_from(others))
    return NeighboringPair(dataset, dataset[:position] + (replacement,) + dataset[position + 1 :])


def neighboring_pairs(
    records: Sequence[Hashable], *, n: int, neighbors: str = "substitute"
) -> SearchStrategy[NeighboringPair]:
    """Pairs ``(D, D')`` of neighbouring datasets over ``records``, as :class:`NeighboringPair` tuples.

    Args:
        records: the record universe.
        n: the size of ``D`` (>= 1).
        neighbors: ``"substitute"`` — ``D'`` has size ``n`` and differs from ``D`` in exactly one
            position (a different record there); ``"add_remove"`` — ``D'`` is ``D`` with one entry
            removed (size ``n - 1``).

    Raises:
        InvalidArgument: bad ``records`` or ``n``, an unknown relation, or ``"substitute"`` over a
            one-record universe (no two datasets differ then).
    """
    universe = check_records(records)
    _check_positive_int("n", n)
    _check_neighbors(neighbors)
    if neighbors == "substitute" and len(universe) < 2:
        raise InvalidArgument(
            f"neighbors='substitute' needs at least 2 records to substitute one for another, got "
            f"records={universe!r}; add records or use neighbors='add_remove'."
        )
    return _neighboring_pairs(universe, n, neighbors)


# -- targeted search ----------------------------------------------------------------------------


def _distribution(mechanism: Mechanism, dataset: tuple) -> Distribution:
    return evaluate(mechanism, dataset)


def _witness_message(
    dataset: tuple, neighbor: tuple, p: Distribution, q: Distribution, *, epsilon: Any,
    delta: Any, neighbors: str, measured_delta: float, loss: float,
) -> str:
    factor = math.exp(float(epsilon))
    output_set = optimal_output_set(p, q, float(epsilon))
    outcomes = sorted(output_set, key=repr)
    shown = ", ".join(map(repr, outcomes[:6])) + (", ..." if len(outcomes) > 6 else "")
    p_mass, q_mass = p.probability(output_set), q.probability(output_set)
    return (
        f"privacy claim (epsilon={epsilon}, delta={delta}) violated on a {neighbors} pair:\n"
        f"  D  = {dataset!r}\n"
        f"  D' = {neighbor!r}\n"
        f"  S  = {{{shown}}}\n"
        f"  P[M(D) in S]  = {float(p_mass):.12g} ({p_mass})\n"
        f"  P[M(D') in S] = {float(q_mass):.12g} ({q_mass})\n"
        f"  P[M(D) in S] - e^eps * P[M(D') in S] = {float(p_mass) - factor * float(q_mass):.12g}"
        f" > delta = {float(delta):.12g}\n"
        f"  this pair: eps* = {loss:.6g} (fails every epsilon < eps* at delta = 0), "
        f"delta(eps={epsilon}) = {measured_delta:.12g}\n"
        "  (found by a Hypothesis search in float64; dpverify.verify(...) gives the exhaustive, "
        "certified verdict)"
    )


def privacy_property(
    mechanism: Mechanism,
    *,
    records: Sequence[Hashable],
    n: int,
    epsilon: Any,
    delta: Any = 0.0,
    neighbors: str = "substitute",
    max_examples: int = 200,
) -> Callable[[], None]:
    """A Hypothesis test that searches for a pair violating the (epsilon, delta)-DP claim.

    Use it as ``test_my_learner = privacy_property(my_learner, records=..., n=8, epsilon=1.0)`` in
    a test module (pytest collects it) or call the returned function directly. Each example is a
    neighbouring pair ``(D, D')`` from :func:`neighboring_pairs`; the test computes both exact
    output distributions, their symmetric hockey-stick divergence at ``epsilon`` and their pure
    privacy loss ``eps*``, reports ``hypothesis.target(min(eps*, TARGET_CAP))`` so the search climbs
    toward the worst pair, and fails when the engine (:func:`dpverify.verdict.engine.decide_pair`,
    the same states and float error model as :func:`dpverify.verify`) does not pass the pair.
    Hypothesis then shrinks the failure to a small witness. The message names both datasets (one
    line each), the output set ``S = {o : P(o) > e^eps Q(o)}``, ``P(S)`` and ``Q(S)``, and the
    pair's ``eps*`` and ``delta(epsilon)``; under pytest no frame of dpverify is shown, and
    Hypothesis's "Failing test case" carries the name the test is collected under.

    This is a *search*, not a proof: it is for instances too large to enumerate, and passing
    means no violation was found in ``max_examples`` pairs. :func:`dpverify.verify` is the
    exhaustive, certified path. Other Hypothesis settings (derandomize, database, phases, ...)
    come from the active profile, e.g. ``pytest --dpverify-profile=ci``, except the explain phase,
    which is off: it would list lines of dpverify, not of your code.

    Args:
        mechanism: a callable ``dataset (tuple of records) -> Mapping[outcome, probability]``.
        records: the record universe.
        n: the dataset size (``D`` has size ``n``; under ``"add_remove"``, ``D'`` has ``n - 1``).
        epsilon: the claimed epsilon (>= 0).
        delta: the claimed delta in ``[0, 1]``.
        neighbors: ``"substitute"`` or ``"add_remove"``.
        max_examples: how many pairs Hypothesis tries (>= 1).

    Returns:
        A zero-argument test function; it raises AssertionError with the witness on a violation.

    Raises:
        InvalidArgument: bad arguments (checked now, before any search).
    """
    if not callable(mechanism):
        raise InvalidArgument(
            f"mechanism must be callable (dataset -> distribution), got {mechanism!r}."
        )
    check_epsilon(epsilon)
    check_delta(delta)
    _check_positive_int("max_examples", max_examples)
    pairs = neighboring_pairs(records, n=n, neighbors=neighbors)
    eps_float = float(epsilon)

    def test_privacy_property(pair: tuple[tuple, tuple]) -> None:
        __tracebackhide__ = True  # a failure shows the witness, not dpverify's source
        dataset, neighbor = pair
        p, q = _distribution(mechanism, dataset), _distribution(mechanism, neighbor)
        partial = p.unexplored != 0 or q.unexplored != 0  # sub-distributions: the search reads the explored part
        loss = epsilon_star(dict(p), dict(q)) if partial else epsilon_star(p, q)
        hypothesis.target(min(loss, TARGET_CAP), label="privacy loss")
        decision = decide_pair(p, q, epsilon, delta, dataset=dataset, neighbor=neighbor)
        if decision.holds:
            return
        if decision.verdict is Verdict.UNDECIDED:  # not a violation: the pair could not be decided
            why = decision.reason or (
                "exact arithmetic could not settle a tie; return exact probabilities (Fraction, sympy) to decide it")
            raise AssertionError(
                f"UNDECIDED: the privacy claim (epsilon={epsilon}, delta={delta}) could be neither proved nor "
                f"refuted on the {neighbors} pair D = {dataset!r}, D' = {neighbor!r}: {why}. This is not a privacy "
                "violation."
            )
        if partial:  # the engine's witness: explored masses, and the unexplored mass it allows for
            raise AssertionError(
                f"privacy claim (epsilon={epsilon}, delta={delta}) violated on a {neighbors} pair:\n  "
                + str(decision.witness).replace("\n", "\n  ")
            )
        forward, backward = hockey_stick(p, q, eps_float), hockey_stick(q, p, eps_float)
        if backward > forward:
            dataset, neighbor, p, q = neighbor, dataset, q, p
        raise AssertionError(
            _witness_message(
                dataset, neighbor, p, q, epsilon=epsilon, delta=delta, neighbors=neighbors,
                measured_delta=max(forward, backward), loss=loss,
            )
        )

    name = getattr(mechanism, "__name__", type(mechanism).__name__)
    identifier = re.sub(r"\W", "_", name).strip("_") or "mechanism"
    # Hypothesis prints this name in "Failing test case: <name>(pair=...)"; under pytest the
    # plugin renames it to the name the test was collected under (see _rename_privacy_property).
    test_privacy_property.__name__ = f"test_{identifier}_privacy"
    test_privacy_property.__qualname__ = test_privacy_property.__name__
    # Distinct Hypothesis database keys for distinct claims (they share this source code).
    claim = f"{getattr(mechanism, '__qualname__', name)}|{n}|{epsilon!r}|{delta!r}|{neighbors}"
    test_privacy_property._hypothesis_internal_add_digest = claim.encode()  # type: ignore[attr-defined]
    # The explain phase would list the lines of dpverify that only failing pairs ran: dpverify's
    # internals, not the user's code. The other phases are the active profile's.
    phases = [phase for phase in hypothesis.settings().phases if phase is not hypothesis.Phase.explain]
    configured = hypothesis.settings(max_examples=max_examples, deadline=None, phases=phases)
    search = configured(hypothesis.given(pair=pairs)(test_privacy_property))
    search._dpverify_privacy_property = True  # type: ignore[attr-defined]
    _hide_from_pytest_tracebacks(search)
    return search


def _hide_from_pytest_tracebacks(search: Callable[..., Any]) -> None:
    """Hide the frame of Hypothesis's signature-copying proxy from pytest's tracebacks.

    ``@given`` returns a proxy compiled in a module of Hypothesis's own that claims the wrapped
    function's file and first line, so pytest shows it as a frame of ``strategies.py`` (with a line
    of this module's source, not even the one running). pytest hides a frame whose globals hold
    ``__tracebackhide__``. That module holds nothing but proxies of this name and signature
    (Hypothesis compiles one per distinct source and marks it ``__hypothesistracebackhide__`` for
    its own trimming), so it is marked here too. A proxy compiled anywhere else is left alone.
    """
    namespace = getattr(search, "__globals__", {})
    if namespace.get("__hypothesistracebackhide__") is True and str(namespace.get("__name__", "")).startswith(
        "hypothesis_temporary_module_"
    ):
        namespace["__tracebackhide__"] = True


def _rename_privacy_property(search: Callable[..., Any], name: str) -> None:
    """Name the test :func:`privacy_property` returned ``name`` in Hypothesis's report.

    Hypothesis names the failing test case after the function it runs, which
    :func:`privacy_property` names after the mechanism (``test_<mechanism>_privacy``); the user's
    module binds it to a name of their own (``test_search = privacy_property(...)``), the name
    pytest reports. The pytest plugin calls this with that name before the test runs. Anything
    else passed as ``search`` is left alone.
    """
    if getattr(search, "_dpverify_privacy_property", False):
        inner = search.hypothesis.inner_test  # type: ignore[attr-defined]
        inner.__name__ = inner.__qualname__ = name
