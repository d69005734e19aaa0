"""The Gaussian mechanism (:mod:`dpverify.mechanisms.gaussian`): the class the checker decides.

Its decision is tested in ``tests/dpverify/densities/test_gaussian.py`` (and its profile and
calibrations beside it); here the mechanism itself: its query, its sigma, its declaration.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from dpverify.checking.gaussian import verify_gaussian
from dpverify.densities.gaussian_profile import delta_for_epsilon
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.gaussian import GaussianMechanism


def histogram(dataset):
    return (dataset.count(1), dataset.count(2))


def test_sigma_must_be_positive():
    with pytest.raises(InvalidArgument, match="sigma must be positive"):
        GaussianMechanism(0)
    assert GaussianMechanism(0.25).exact_sigma == Fraction(1, 4)  # a float is read exactly


def test_the_answer_is_the_query_vector_in_fractions():
    assert GaussianMechanism(1, histogram).answer((1, 2, 2)) == (Fraction(1), Fraction(2))
    assert GaussianMechanism(1).answer((0.5, 3)) == (Fraction(1, 2), Fraction(3))  # no query: the dataset itself
    with pytest.raises(InvalidArgument, match="sequence of numbers"):
        GaussianMechanism(1, lambda dataset: 3).answer((0,))


def test_it_declares_the_gaussian_protocol_and_its_methods_are_the_core_functions():
    mechanism = GaussianMechanism(Fraction(5, 2), histogram)
    assert GaussianMechanism.gaussian_output is True
    assert [f.name for f in dataclasses.fields(GaussianMechanism)] == ["sigma", "query", "name"]  # not a field
    assert (mechanism.delta_for_epsilon(1, sensitivity_squared=2).a
            == delta_for_epsilon(1, sigma=Fraction(5, 2), sensitivity_squared=2).a)
    options = {"epsilon": Fraction(1, 2), "delta": Fraction(1, 100), "records": (0, 1, 2), "n": 3}
    ours, core = mechanism.verify(**options), verify_gaussian(mechanism, **options)
    assert (ours.verdict, ours.delta, ours.details) == (core.verdict, core.delta, core.details)
    assert ours.details["pairs_per_distance"] == [27, 54]


def test_report_noisy_max_refuses_gaussian_noise_rather_than_guess():
    from dpverify.mechanisms.noisy_max import NoisyMaxValue, ReportNoisyMax

    for build in (ReportNoisyMax, NoisyMaxValue):
        with pytest.raises(InvalidArgument, match="no uncertified quadrature in a verdict"):
            build(Fraction(1, 2), "gaussian")
