"""The Gaussian check with its inputs by keyword (:mod:`dpverify.checking.gaussian`): pairs given or
enumerated reach the same decision, and misuse is refused before any work."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpverify.checking.gaussian import verify_gaussian
from dpverify.densities.gaussian import decide_gaussian
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import relation
from dpverify.mechanisms.gaussian import GaussianMechanism

from ..densities._gaussian_references import HISTOGRAM, histogram, histogram_pairs


def test_function_of_datasets_and_explicit_pairs_agree():
    mechanism = GaussianMechanism(Fraction(5, 2), histogram)
    enumerated_pairs = relation("substitute").pairs(HISTOGRAM["records"], 3, exchangeable=False)
    datasets = list(enumerated_pairs.datasets)
    pairs = [(datasets[i], datasets[j]) for i, j in zip(enumerated_pairs.left.tolist(), enumerated_pairs.right.tolist())]
    by_pairs = verify_gaussian(mechanism, epsilon=Fraction(1, 2), delta=Fraction(1, 100), pairs=pairs)
    enumerated = verify_gaussian(mechanism, epsilon=Fraction(1, 2), delta=Fraction(1, 100), **HISTOGRAM)
    assert by_pairs.verdict is enumerated.verdict
    assert by_pairs.delta == enumerated.delta
    assert by_pairs.details["pairs_per_distance"] == enumerated.details["pairs_per_distance"] == [27, 54]
    # the enumeration is named as dpverify.verify names it; the decision is decide_gaussian's on it
    assert enumerated.neighbors == "substitute"
    decided = decide_gaussian(mechanism, histogram_pairs(), epsilon=Fraction(1, 2), delta=Fraction(1, 100))
    assert (decided.verdict, decided.delta, decided.details) == (enumerated.verdict, enumerated.delta,
                                                                 enumerated.details)


def test_misuse_is_refused():
    mechanism = GaussianMechanism(1)
    with pytest.raises(InvalidArgument, match="different lengths"):
        verify_gaussian(mechanism, epsilon=1, delta=0, pairs=[((0, 0), (1,))])
    with pytest.raises(InvalidArgument, match="not both"):
        verify_gaussian(mechanism, epsilon=1, pairs=[((0,), (1,))], records=(0, 1), n=1)
    with pytest.raises(InvalidArgument, match="give the inputs"):
        verify_gaussian(mechanism, epsilon=1)
    with pytest.raises(InvalidArgument, match="more than max_pairs"):
        verify_gaussian(GaussianMechanism(1, histogram), epsilon=1, records=(0, 1, 2), n=3, max_pairs=80)
    with pytest.raises(InvalidArgument, match="not a neighbour pair"):
        verify_gaussian(mechanism, epsilon=1, pairs=[((0, 0), (1, 1))], neighbors="substitute")
    with pytest.raises(InvalidArgument, match="GaussianOutput protocol"):
        verify_gaussian(lambda dataset: {0: 1}, epsilon=1, pairs=[((0,), (1,))])
