"""The Gaussian mechanism's check with its inputs by keyword: given pairs, or every neighbouring pair.

:func:`verify_gaussian` builds the input pairs -- the ``pairs`` given (a list or an
:class:`~dpverify.checking.input_pairs.InputPairs`), or every neighbouring pair of the datasets of
``n`` records from ``records`` under ``neighbors``, as :func:`dpverify.verify` enumerates them -- and
hands them to the decision, :func:`dpverify.densities.gaussian.decide_gaussian` (the facts it rests on
are proved there). Given pairs reach the same decision through
:func:`~dpverify.checking.input_pairs.verify_pairs`, which routes a mechanism declaring
:class:`~dpverify.densities.gaussian.GaussianOutput` to it.
"""

from __future__ import annotations

from typing import Any

from dpverify.checking.front import Datasets
from dpverify.checking.input_pairs import InputPairs
from dpverify.densities.gaussian import GaussianOutput, check_gaussian, decide_gaussian
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import relation
from dpverify.validation import check_delta, check_epsilon
from dpverify.verdict.results import PairsResult

__all__ = ["verify_gaussian"]


def _input_pairs(pairs: Any, records: Any, n: Any, neighbors: Any, max_pairs: int) -> InputPairs:
    if pairs is not None:
        if records is not None or n is not None:
            raise InvalidArgument("give either pairs= or records= and n= (every neighbouring pair), not both.")
        rel = None if neighbors is None else relation(neighbors)
        if isinstance(pairs, InputPairs):
            if rel is not None:
                for number, (a, b) in enumerate(pairs):
                    if not rel.is_neighbor(a, b, exchangeable=False):
                        raise InvalidArgument(f"pair {number} of {pairs.name} = ({a!r}, {b!r}) is not a neighbour pair "
                                              f"under {rel.name}.")
                return InputPairs(pairs.name, pairs.datasets, pairs.left, pairs.right, rel)
            return pairs
        return InputPairs.from_pairs(pairs, relation=rel)
    if records is None or n is None:
        raise InvalidArgument("give the inputs as pairs=[(D, D'), ...] (or an InputPairs), or as records= and n= "
                              "with neighbors= (default 'substitute') to check every neighbouring pair.")
    return Datasets(tuple(records), n, "substitute" if neighbors is None else neighbors).as_pairs(max_pairs=max_pairs)


def verify_gaussian(
    mechanism: GaussianOutput,
    *,
    epsilon: Any,
    delta: Any = 0,
    pairs: Any = None,
    records: Any = None,
    n: int | None = None,
    neighbors: Any = None,
    max_pairs: int = 1_000_000,
) -> PairsResult:
    """Decide ``(epsilon, delta)``-DP of a Gaussian mechanism (:func:`~dpverify.densities.gaussian.decide_gaussian`).

    Args:
        mechanism: a :class:`~dpverify.densities.gaussian.GaussianOutput`, such as
            :class:`dpverify.mechanisms.gaussian.GaussianMechanism`.
        epsilon, delta: the claim (exact numbers, or floats read as the engine reads them).
        pairs: the input pairs ``[(D, D'), ...]`` or an :class:`~dpverify.checking.input_pairs.InputPairs`
            (e.g. :func:`~dpverify.checking.input_pairs.all_query_vectors`); or else
        records, n, neighbors: every neighbouring pair of datasets of ``n`` records (``neighbors``:
            a relation name or :class:`~dpverify.finite.neighbors.NeighborRelation`, default
            ``"substitute"``), as :func:`dpverify.verify` enumerates them.
        max_pairs: refuse an enumeration of more pairs (each pair's distance is computed exactly).

    Returns:
        The :class:`~dpverify.verdict.results.PairsResult` of
        :func:`~dpverify.densities.gaussian.decide_gaussian` on those pairs.

    Raises:
        InvalidArgument: the mechanism does not declare the Gaussian protocol, a claim is malformed,
            the inputs are given both ways or neither, a pair is not a neighbour pair under
            ``neighbors``, or the enumeration holds more than ``max_pairs`` pairs.
    """
    check_gaussian(mechanism)
    check_epsilon(epsilon)
    check_delta(delta)
    inputs = _input_pairs(pairs, records, n, neighbors, max_pairs)
    return decide_gaussian(mechanism, inputs, epsilon=epsilon, delta=delta)
