"""Tests of dpverify.checking.statistical._features: functions of one output whose level sets are events.

Bit features are checked on floats worked out by hand and against ``float.as_integer_ratio`` on
random bit patterns; the Mironov pair against a closed-form model of numpy's Laplace sampler; joint
keys on small hand-written arrays; the score against the exact log-likelihood ratio of Gaussians.
"""

from __future__ import annotations

import math
import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from dpverify.checking.statistical._features import (
    INFINITE,
    NOT_APPLICABLE,
    OTHER,
    ZERO,
    Exponent,
    JointKey,
    LowestBit,
    Prefix,
    Score,
    TrailingZeros,
    fitted_features,
    fixed_features,
)
from dpverify.checking.statistical._outputs import Outputs


def real(*values: float) -> Outputs:
    return Outputs("real", values=np.array(values, dtype=np.float64))


def vector(rows: list) -> Outputs:
    return Outputs("vector", values=np.array(rows, dtype=np.float64))


# -- bit features --------------------------------------------------------------------------------

HAND = [
    # value, lsb, exponent (frexp), trailing zeros of the 53-bit significand
    (0.75, -2, 0, 51),  # 3 * 2^-2; 0.75 = 0.75 * 2^0; significand 1.5 * 2^52 = 3 * 2^51
    (3.0, 0, 2, 51),  # 3 * 2^0; 3 = 0.75 * 2^2; significand 3 * 2^51
    (1.0, 0, 1, 52),  # 1 * 2^0; 1 = 0.5 * 2^1; significand 2^52
    (2.0**-1074, -1074, -1073, 0),  # the least subnormal: significand 1, times 2^-1074 = 0.5 * 2^-1073
    (2.0**-1022, -1022, -1021, 52),  # the least normal: 2^52 * 2^-1074
    (-0.75, -2, 0, 51),  # the sign is not read
    (np.finfo(np.float64).max, 971, 1024, 0),  # (2^53 - 1) * 2^971, an odd significand
    # 0.1: (0.1).as_integer_ratio() = (3602879701896397, 2^55), the numerator odd: lsb -55. 0.1 lies in
    # [2^-4, 2^-3) = [0.0625, 0.125), whose spacing is 2^(-4-52) = 2^-56: significand = 0.1 * 2^56 =
    # 2 * 3602879701896397, one trailing zero; exponent: 0.1 = 0.8 * 2^-3.
    (0.1, -55, -3, 1),
]


@pytest.mark.parametrize(("value", "lsb", "exponent", "zeros"), HAND)
def test_bit_features_on_hand_computed_floats(value: float, lsb: int, exponent: int, zeros: int) -> None:
    assert (0.1).as_integer_ratio() == (3602879701896397, 2**55)
    outputs = real(value)
    assert LowestBit()(outputs).values.tolist() == [lsb]
    assert Exponent()(outputs).values.tolist() == [exponent]
    assert TrailingZeros()(outputs).values.tolist() == [zeros]
    assert Exponent()(outputs).values.tolist() == [math.frexp(value)[1]]


def test_zero_and_infinity_map_to_their_sentinels() -> None:
    outputs = real(0.0, -0.0, math.inf, -math.inf)
    for feature in (LowestBit(), Exponent(), TrailingZeros()):
        assert feature(outputs).values.tolist() == [ZERO, ZERO, INFINITE, INFINITE]


def _reference_lsb(value: float) -> int:
    """The exponent of the lowest set bit from the exact fraction ``p / 2^k`` (p odd or k = 0)."""
    numerator, denominator = value.as_integer_ratio()
    numerator = abs(numerator)
    twos = (numerator & -numerator).bit_length() - 1  # 2-adic valuation of the numerator
    return twos - (denominator.bit_length() - 1)


def test_bit_features_match_exact_fractions_on_random_bit_patterns() -> None:
    rng = np.random.default_rng(29)
    patterns = rng.integers(0, 2**63, size=3000, dtype=np.uint64) | (rng.integers(0, 2, 3000, dtype=np.uint64) << 63)
    patterns[:500] &= np.uint64((1 << 52) - 1)  # subnormals too
    values = patterns.view(np.float64)
    values = values[np.isfinite(values) & (values != 0)]
    lsb = LowestBit()(Outputs("real", values=values)).values
    exponent = Exponent()(Outputs("real", values=values)).values
    zeros = TrailingZeros()(Outputs("real", values=values)).values
    for k, value in enumerate(values.tolist()):
        assert lsb[k] == _reference_lsb(value), value
        assert exponent[k] == math.frexp(value)[1], value
        # value = significand * 2^(max(exponent, -1021) - 53): subnormals share the least normal's scale
        assert zeros[k] == lsb[k] - (max(exponent[k], -1021) - 53), value


def test_bit_features_of_coordinates_and_of_outputs_they_do_not_apply_to() -> None:
    rows = vector([[1.0, 0.75], [0.1, 3.0]])
    assert LowestBit(1)(rows).values.tolist() == [-2, 0]
    assert LowestBit(0)(rows).values.tolist() == [0, -55]
    assert LowestBit(2)(rows).values.tolist() == [NOT_APPLICABLE] * 2  # width 2 has no o[2]
    assert LowestBit()(rows).values.tolist() == [NOT_APPLICABLE] * 2  # a vector is not a number
    assert LowestBit(0)(real(1.0)).values.tolist() == [NOT_APPLICABLE]
    # a discrete half (mixed batches) is read item by item with the same rule
    mixed = Outputs("discrete", items=[0.75, "yes", 3, (1.0, 0.75), True])
    assert LowestBit()(mixed).values.tolist() == [-2, NOT_APPLICABLE, 0, NOT_APPLICABLE, NOT_APPLICABLE]
    assert LowestBit(1)(mixed).values.tolist() == [NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, -2, NOT_APPLICABLE]


# -- the Mironov pair: loc + Laplace(10) at loc = 1.0 and at loc = 0.0 -----------------------------

N_DRAWS = 200_000


def _mironov_probability() -> float:
    """P(lsb(X) < -53) for numpy's X = +-10 * log(v) (v near 1): a model, worked out by hand.

    lsb(X) >= -53 when |X| >= 1/2 (its spacing is >= 2^-53). In the binade [2^k, 2^(k+1)), k <= -2,
    spacing 2^(k-52), lsb(X) < -53 unless the significand has t = -1-k trailing zeros. X = 10 * y =
    5 * M * 2^(e+1) with y's significand M (low bits as if uniform): 5M is rounded to 53 bits with
    ties to even. 5M < 2^55 (X's significand in [1.25, 2) * 2^52) drops 2 bits, a tie (low bits 10)
    with probability 1/4; else ([1, 1.25) * 2^52) 3 bits, a tie (100) with probability 1/8. A tie
    gives an even result, so P(t trailing zeros) = tie * 2^-(t-1) + (1 - tie) * 2^-t = 2^-t (1 + tie).
    |X| ~ Exponential(mean 10): P(a <= |X| < b) = e^(-a/10) - e^(-b/10).
    """

    def mass(a: float, b: float) -> float:
        return math.exp(-a / 10) - math.exp(-b / 10)

    total = 0.0
    for k in range(-2, -1075, -1):
        t = -1 - k
        total += mass(2.0**k, 1.25 * 2.0**k) * (1 - 1.125 * 2.0**-t)
        total += mass(1.25 * 2.0**k, 2.0 ** (k + 1)) * (1 - 1.25 * 2.0**-t)
    return total


def test_lsb_sees_the_mironov_leak() -> None:
    rng = np.random.default_rng(2012)
    shifted = LowestBit()(real(*(1.0 + rng.laplace(0.0, 10.0, N_DRAWS)))).values
    centred = LowestBit()(real(*(0.0 + rng.laplace(0.0, 10.0, N_DRAWS)))).values
    # 1.0 + X: if |X| >= 1/2, X and the exact sum are multiples of 2^-53; a result below 1/2 in
    # magnitude (X in (-3/2, -1/2)) is then exact (|j| < 2^52 fits 53 bits); if |X| < 1/2 the sum
    # rounds into [1/2, 3/2], spacing >= 2^-53. So lsb(1.0 + X) >= -53 for every X (0 is ZERO).
    assert np.count_nonzero(shifted < -53) == 0
    probability = _mironov_probability()
    assert 0.0290 < probability < 0.0292  # 0.02910: 60% of P(|X| < 1/2) = 1 - e^-0.05 = 0.0488
    found = np.count_nonzero(centred < -53)
    standard_error = math.sqrt(N_DRAWS * probability * (1 - probability))  # about 75
    assert abs(found - N_DRAWS * probability) < 5 * standard_error
    # without the ties to even (1/2 odd in [1/4, 1/2), ...) the share would be 0.0326: 9 errors away


@dataclass(frozen=True)
class HighBitsOnly:
    """A mutant of lsb that ignores the low 29 significand bits (reads o as a float32)."""

    name: str = "lsb(float32(o))"

    def __call__(self, outputs: Outputs) -> Outputs:
        assert outputs.values is not None
        return LowestBit()(Outputs("real", values=outputs.values.astype(np.float32).astype(np.float64)))


def test_a_feature_blind_to_the_low_bits_misses_the_mironov_event() -> None:
    rng = np.random.default_rng(2012)
    shifted = real(*(1.0 + rng.laplace(0.0, 10.0, N_DRAWS)))
    centred = real(*(0.0 + rng.laplace(0.0, 10.0, N_DRAWS)))
    # a float32 has 24 significand bits: lsb < -53 needs |o| < 2^-30, probability about 1e-10
    assert np.count_nonzero(HighBitsOnly()(centred).values < -53) == 0
    assert np.count_nonzero(HighBitsOnly()(shifted).values < -53) == 0
    assert np.count_nonzero(LowestBit()(centred).values < -53) > 5000  # the real feature: about 5,820


# -- prefixes and joint keys ----------------------------------------------------------------------


def test_prefixes_of_integer_vectors() -> None:
    rows = vector([[1, 0, 1], [1, 1, 0], [0.5, 1, 1], [2, 3, 4], [-0.0, -1, 7]])
    assert Prefix(2)(rows).items == [(1, 0), (1, 1), OTHER, (2, 3), (0, -1)]
    assert Prefix(1)(rows).items == [(1,), (1,), OTHER, (2,), (0,)]
    assert Prefix(3)(vector([[1, 2]])).items == [OTHER]  # too short
    assert Prefix(1)(real(1.0)).items == [OTHER]
    assert all(type(x) is int for x in Prefix(2)(rows).items[0])
    # far-apart integers take the other path (np.unique on rows): the same keys
    wide = vector([[2**30, -(2**30)], [0, 5], [2**30, -(2**30)], [1e13, 0]])
    assert Prefix(2)(wide).items == [(2**30, -(2**30)), (0, 5), (2**30, -(2**30)), OTHER]  # 1e13 > 2^40
    # tuple outputs in a discrete half: numbers by the same rule, labels kept
    items = Outputs("discrete", items=[("T", "F"), (1.0, 2.0, 3.0), "x", (1.5, 2.0), (True,)])
    assert Prefix(1)(items).items == [("T",), (1,), OTHER, OTHER, (True,)]


def test_joint_keys_on_hand_written_rows() -> None:
    key = JointKey(0, 1, (0.0, 1.0))  # bins: o[1] <= 0 is 0, 0 < o[1] <= 1 is 1, o[1] > 1 is 2
    rows = vector([[2, -1.0], [2, 0.0], [2, 0.5], [3, 1.0], [3, 7.0]])
    assert key(rows).items == [(2, 0), (2, 0), (2, 1), (3, 1), (3, 2)]
    with_fraction = vector([[2, -1.0], [1.5, 0.5], [3, 7.0]])  # a key that is not an integer
    assert key(with_fraction).items == [(2, 0), (1.5, 1), (3, 2)]
    assert key(vector([[2.0], [3.0]])).items == [OTHER, OTHER]  # no o[1]
    assert key(Outputs("discrete", items=[(2.0, 0.5), "label"])).items == [(2, 1), OTHER]
    assert key.bin_bounds(0) == (-math.inf, 0.0) and key.bin_bounds(2) == (1.0, math.inf)
    assert key.name == "(o[0], bin(o[1]))"


def test_fitted_joint_key_has_its_edges_at_pooled_quantiles() -> None:
    index = np.arange(1000)
    first = vector(np.column_stack([index % 3, index]).tolist())  # o[0] in {0, 1, 2}: 3 values
    second = vector(np.column_stack([index % 3, 1000 + index]).tolist())  # pooled o[1]: 0 .. 1999
    keys = [f for f in fitted_features(first, second) if isinstance(f, JointKey)]
    assert len(keys) == 1 and (keys[0].discrete, keys[0].continuous) == (0, 1)
    # levels with 4 draws beyond them among 2000: 0.01, 0.05, 0.1 .. 0.9, 0.95, 0.99 (not 1e-3: 2 draws);
    # numpy's linear quantile of 0 .. 1999 at level q is q * 1999
    levels = [0.01, 0.05, *(i / 10 for i in range(1, 10)), 0.95, 0.99]
    assert keys[0].edges == pytest.approx([q * 1999 for q in levels], abs=1e-9)


# -- the fitted score -----------------------------------------------------------------------------


def _gaussians(shift: list[float], count: int = 20_000, seed: int = 7) -> tuple[Outputs, Outputs]:
    rng = np.random.default_rng(seed)
    return (Outputs("vector", values=rng.normal(size=(count, len(shift))) + np.array(shift)),
            Outputs("vector", values=rng.normal(size=(count, len(shift)))))


def test_score_recovers_the_likelihood_ratio_direction_of_two_gaussians() -> None:
    shift = [1.0, -0.5, 0.0]  # N(shift, I) against N(0, I): log ratio = shift . o - |shift|^2 / 2
    first, second = _gaussians(shift)
    score = next(f for f in fitted_features(first, second) if isinstance(f, Score))
    raw = np.array(score.linear) / np.array(score.scale)  # the weight on o itself
    assert raw == pytest.approx(shift, abs=0.06)  # standard errors about 0.015 at 2 x 20,000 draws
    assert float(raw @ shift) / (np.linalg.norm(raw) * np.linalg.norm(shift)) > 0.995
    assert np.abs(score.squares).max() < 0.05  # the true ratio has no square terms
    assert fitted_features(first, second) == fitted_features(first, second)  # deterministic
    ranked = score(first).values.mean() - score(second).values.mean()
    assert ranked > 1.0  # E[shift . o] differs by |shift|^2 = 1.25 between the two


def test_score_of_real_outputs_finds_a_variance_difference() -> None:
    rng = np.random.default_rng(11)
    first, second = real(*rng.normal(0, 1, 20_000)), real(*rng.normal(0, 2, 20_000))
    (score,) = fitted_features(first, second)
    assert isinstance(score, Score) and score.width is None
    # log N(o; 0, 1) - log N(o; 0, 4) = -o^2 / 2 + o^2 / 8 + ln 2: -3/8 on o^2
    assert score.squares[0] / score.scale[0] ** 2 == pytest.approx(-0.375, abs=0.03)


def test_score_stays_finite_on_separable_draws_and_on_infinite_outputs() -> None:
    (score,) = fitted_features(real(*[0.0] * 500), real(*[1.0] * 500))  # perfectly separable
    assert all(math.isfinite(w) for w in (*score.linear, *score.squares))
    values = score(real(0.0, 1.0, math.inf, -math.inf)).values
    assert values[0] > values[1] and np.isfinite(values).all()
    assert score(Outputs("discrete", items=["label", 0.0])).values.tolist() == [NOT_APPLICABLE, values[0]]
    assert score(Outputs("discrete", items=[math.nan, "label"])).values.tolist() == [NOT_APPLICABLE] * 2


def test_score_standardises_on_finite_values_and_clips_sentinels() -> None:
    # SVT3's rows are (index, noisy answer) or (k, -inf): moments of the finite answers only
    first = vector([[0, 1.0]] * 50 + [[1, -math.inf]] * 50)
    second = vector([[0, 3.0]] * 50 + [[1, -math.inf]] * 50)
    score = next(f for f in fitted_features(first, second) if isinstance(f, Score))
    # o[0]: 0 and 1 equally often, mean 1/2, sd 1/2; finite o[1]: 1 and 3 equally often, mean 2, sd 1
    assert score.center == (0.5, 2.0) and score.scale == (0.5, 1.0)
    values = score(vector([[0, 1.0], [0, 3.0], [1, -math.inf]])).values
    assert values[0] > values[1] and np.isfinite(values).all()  # 1.0 is first's answer; -inf clips to z = -20


def test_nan_in_a_discrete_half_maps_to_sentinels() -> None:
    # numeric batches refuse nan; a discrete half (labels beside numbers) may carry one
    items = Outputs("discrete", items=[math.nan, (2.0, math.nan), (math.nan, 0.5), (2.0, 0.5)])
    assert LowestBit()(items).values.tolist()[0] == INFINITE
    assert JointKey(0, 1, (0.0, 1.0))(items).items == [OTHER, OTHER, OTHER, (2, 1)]


# -- the lists, and what every feature promises ----------------------------------------------------


def test_fixed_features_by_kind() -> None:
    # the float-structure features (the binade, Exponent, is a value feature and not among them)
    assert fixed_features("real", None) == (LowestBit(), TrailingZeros())
    names = [f.name for f in fixed_features("vector", 3)]
    assert names == ["lsb(o[0])", "lsb(o[1])", "lsb(o[2])", "trailing_zeros(o[0])", "trailing_zeros(o[1])",
                     "trailing_zeros(o[2])", "o[:1]", "o[:2]"]
    assert fixed_features("discrete", None) == ()
    assert fixed_features("discrete", 3) == (Prefix(1), Prefix(2))
    with pytest.raises(AssertionError, match="width"):
        fixed_features("vector", None)
    with pytest.raises(AssertionError, match="kind='matrix'"):
        fixed_features("matrix", 2)


def test_fitted_features_are_empty_where_nothing_applies() -> None:
    labels = Outputs("discrete", items=["a", "b"])
    assert fitted_features(labels, labels) == ()
    assert fitted_features(real(1.0, 2.0), vector([[1.0, 2.0]])) == ()
    assert fitted_features(vector([[1.0, 2.0]]), vector([[1.0, 2.0, 3.0]])) == ()
    assert fitted_features(real(), real(1.0)) == ()


EVERY = [LowestBit(), LowestBit(1), Exponent(0), TrailingZeros(), Prefix(2), JointKey(0, 1, (0.0, 1.0)),
         Score((0.0, 1.0), (1.0, 2.0), (0.5, -0.5), (0.1, 0.0), 2), Score((0.0,), (1.0,), (1.0,), (), None)]


@pytest.mark.parametrize("feature", EVERY, ids=lambda f: f.name)
def test_every_feature_pickles_hashes_and_is_a_function_of_the_output(feature: object) -> None:
    assert pickle.loads(pickle.dumps(feature)) == feature
    assert hash(pickle.loads(pickle.dumps(feature))) == hash(feature)
    rows = [[0.75, 0.5], [3.0, -2.0], [1.0, 1.0], [2.0, 0.1]]
    for outputs, items in ((vector(rows), [tuple(r) for r in rows]), (real(0.75, 3.0), [0.75, 3.0])):
        # the same outputs read as a discrete half (a batch of mixed kinds) get the same values
        direct, itemwise = feature(outputs), feature(Outputs("discrete", items=items))  # type: ignore[operator]
        assert len(direct) == len(outputs)
        if direct.values is not None:
            assert direct.values.tolist() == itemwise.values.tolist()
        else:
            assert direct.items == itemwise.items
