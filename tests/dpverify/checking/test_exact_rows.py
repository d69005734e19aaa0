"""Certification's exact rows: a mechanism's ``exact_distribution`` checked against its float row,
with the floats of one shared exact object converted once (_evaluation.check_float_row).

Randomised response on one bit with ``P(report the bit) = e / (1 + e)``: eps* = 1 exactly, so a
claim of eps = 1 is tight and certification reads the exact row of both datasets.
"""

from __future__ import annotations

import pytest
import sympy

from dpverify import Distribution, verify
from dpverify.errors import MechanismError

E = sympy.E
HIGH, LOW = E / (1 + E), 1 / (1 + E)  # 0.7310585786300049, 0.2689414213699951


class SympyResponse:
    """Float rows as computed; exact rows either one memoised object per bit (``shared``) or a new
    equal object at every call (the reference: nothing to reuse)."""

    def __init__(self, *, shared: bool, lie_on: int | None = None) -> None:
        self.shared, self.lie_on = shared, lie_on
        self.memo = {bit: Distribution({bit: HIGH, 1 - bit: LOW}) for bit in (0, 1)}
        self.calls = 0

    def __call__(self, dataset):
        (bit,) = dataset
        return {bit: float(HIGH), 1 - bit: float(LOW)}

    def exact_distribution(self, dataset):
        self.calls += 1
        (bit,) = dataset
        if self.lie_on is not None:  # one exact object for every dataset: right for 1 - lie_on only
            return self.memo[1 - self.lie_on]
        return self.memo[bit] if self.shared else Distribution({bit: HIGH, 1 - bit: LOW})


def test_shared_exact_objects_give_the_reference_figures():
    mechanisms = SympyResponse(shared=True), SympyResponse(shared=False)
    shared, fresh = (verify(mechanism, records=(0, 1), n=1, epsilon=1) for mechanism in mechanisms)
    assert all(mechanism.calls >= 2 for mechanism in mechanisms)  # both exact rows were read
    assert shared.holds and fresh.holds
    # ln(HIGH / LOW) = ln e = 1: both read exactly 1
    assert shared.epsilon == fresh.epsilon == 1.0
    assert shared.delta == fresh.delta == 0.0
    assert shared.verdict == fresh.verdict


@pytest.mark.parametrize("lie_on", [0, 1])
def test_a_shared_exact_object_that_disagrees_with_a_float_row_is_still_caught(lie_on):
    # exact_distribution returns the row of bit 1 - lie_on for both datasets: the float row of
    # dataset (lie_on,) puts HIGH on lie_on, the shared exact object LOW. Its floats were converted
    # for the other dataset already (or are converted here first): the comparison still runs per row.
    with pytest.raises(MechanismError, match=rf"disagree on dataset \({lie_on},\)"):
        verify(SympyResponse(shared=True, lie_on=lie_on), records=(0, 1), n=1, epsilon=1)
