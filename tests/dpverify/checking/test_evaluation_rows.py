"""Rows from a vectorised mechanism (``mechanism.distributions``) are checked to be distributions."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify import verify
from dpverify.checking._evaluation import _not_distributions
from dpverify.errors import InvalidArgument


def _reference(matrix: np.ndarray) -> np.ndarray:
    """Bad rows as the check read before: a negative entry or a sum off 1 by more than 1e-9, and NaN."""
    sums = matrix.sum(axis=1)
    return np.flatnonzero((matrix < 0).any(axis=1) | np.isnan(matrix).any(axis=1) | ~(np.abs(sums - 1) <= 1e-9))


@pytest.mark.parametrize("outcomes", [1, 2, 5, 9, 16, 17, 40])
def test_bad_rows_are_found_whatever_the_outcome_count(outcomes):
    rng = np.random.default_rng(outcomes)
    matrix = rng.dirichlet(np.ones(outcomes), size=300)
    assert _not_distributions(matrix).size == 0
    matrix[3, 0] = np.nan
    matrix[7, -1] = -1e-12  # negative, and the sum is still 1 within 1e-9
    matrix[9] *= 1 + 3e-9  # sum off by 3e-9
    matrix[11] *= 1 + 1e-10  # within 1e-9: fine
    assert _not_distributions(matrix).tolist() == _reference(matrix).tolist() == [3, 7, 9]


class _Rows:
    """Coin with a vectorised form whose row of dataset (1,) is ``bad``."""

    def __init__(self, bad: list[float]) -> None:
        self.bad = bad

    def __call__(self, dataset):
        from dpverify.finite.distribution import Distribution

        return Distribution({0: 0.5, 1: 0.5})

    def distributions(self, datasets):
        rows = np.full((len(datasets), 2), 0.5)
        for i, dataset in enumerate(datasets):
            if tuple(dataset) == (1,):
                rows[i] = self.bad
        return [0, 1], rows


@pytest.mark.parametrize("bad", [[np.nan, 0.5], [1.5, -0.5], [0.5, 0.6]], ids=["nan", "negative", "sum"])
def test_a_vectorised_mechanism_returning_a_non_distribution_is_refused(bad):
    with pytest.raises(InvalidArgument, match=r"the row of dataset \(1,\) is not a distribution"):
        verify(_Rows(bad), records=[0, 1], n=1, epsilon=1.0)


def test_a_vectorised_mechanism_returning_distributions_is_verified():
    assert verify(_Rows([0.5, 0.5]), records=[0, 1], n=1, epsilon=1.0).epsilon == 0.0
