"""same_distribution: two outputs of a mechanism agree (exactly, or floats within a relative error);
one object compared with itself (a memoised output) is decided without reading its values."""

from __future__ import annotations

import pytest
import sympy

from dpverify import Distribution
from dpverify.checking._evaluation import same_distribution

E = sympy.E


@pytest.mark.parametrize("probabilities", [
    {0: 0.25, 1: 0.75},
    {0: E / (1 + E), 1: 1 / (1 + E)},  # exact (sympy)
    {(k, k + 1): 1 / 64 for k in range(64)},  # 64 float outcomes, as C15's (eta^, h)
])
def test_an_output_agrees_with_itself_and_with_an_equal_copy(probabilities):
    output = Distribution(probabilities)
    assert same_distribution(output, output, 0.0)
    assert same_distribution(output, Distribution(dict(probabilities)), 0.0)  # the values compared


class _Unreadable(Distribution):
    """A float output whose values cannot be read: comparing it must not need them."""

    __slots__ = ()

    def __getitem__(self, outcome):
        raise AssertionError(f"value of {outcome!r} read")


def test_one_object_compared_with_itself_reads_no_value():
    output = _Unreadable({(k, k + 1): 1 / 64 for k in range(64)})
    assert same_distribution(output, output, 0.0)
    with pytest.raises(AssertionError, match="read"):  # a copy is compared value by value
        same_distribution(output, _Unreadable({(k, k + 1): 1 / 64 for k in range(64)}), 0.0)


def test_outputs_that_differ_still_disagree():
    # 0.25 vs 0.25 + 1e-12: relative 4e-12, over 1e-12, within 1e-11
    first, second = Distribution({0: 0.25, 1: 0.75}), Distribution({0: 0.25 + 1e-12, 1: 0.75 - 1e-12})
    assert not same_distribution(first, second, 1e-12)
    assert same_distribution(first, second, 1e-11)
    assert not same_distribution(first, Distribution({0: 1.0}), 0.5)  # supports differ
    exact = Distribution({0: E / (1 + E), 1: 1 / (1 + E)})
    assert not same_distribution(exact, Distribution({0: 1 / (1 + E), 1: E / (1 + E)}), 0.0)
