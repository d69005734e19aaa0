"""Distribution: validation, the float tolerance, exact and sympy arithmetic, immutability."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import FLOAT_SUM_TOLERANCE, Distribution, is_exact_number

E = sympy.exp(-1)
LOW = E / (1 + E)  # e^-1 / (1 + e^-1) = 0.268941421369995...
HIGH = 1 / (1 + E)  # 1 / (1 + e^-1)   = 0.731058578630004...


def _same(a, b) -> bool:
    """Exact equality of two sympy-compatible numbers (simplify the difference to 0)."""
    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


# -- validation ---------------------------------------------------------------------------------


def test_invalid_argument_is_a_value_error():
    assert issubclass(InvalidArgument, ValueError)


@pytest.mark.parametrize(
    "probabilities, fragment",
    [
        ({0: Fraction(1, 3), 1: Fraction(1, 3)}, "2/3"),  # 1/3 + 1/3 = 2/3 != 1, exactly
        ({0: Fraction(1, 2), 1: Fraction(1, 2) + Fraction(1, 10**30)}, "sum to exactly 1"),
        ({0: 1, 1: 1}, "got a total of 2"),  # ints are exact: 1 + 1 = 2
        ({0: 0.5, 1: 0.4}, "0.9"),  # fsum = 0.9, off by 0.1 > 1e-9
        ({0: 0.5, 1: 0.5 + 2e-9}, "1.000000002"),  # off by 2e-9 > 1e-9
        ({0: 0.5, 1: 0.5 - 2e-9}, "0.999999998"),
        ({0: -0.25, 1: 1.25}, "-0.25"),  # sums to 1 but negative
        ({0: Fraction(-1, 4), 1: Fraction(5, 4)}, "Fraction(-1, 4)"),
        ({0: float("nan"), 1: 1.0}, "nan"),
        ({0: float("inf"), 1: 0.0}, "inf"),
        ({0: float("-inf"), 1: 1.0}, "inf"),
        ({0: "0.5", 1: 0.5}, "'0.5'"),  # a string is not a number
        ({0: None, 1: 1.0}, "None"),
        ({0: True}, "True"),  # bool is not accepted as a probability
        ({0: 0.5 + 0j, 1: 0.5}, "0.5+0j"),
        ({0: sympy.nan, 1: 1}, "nan"),
        ({0: sympy.oo, 1: 0}, "oo"),
        ({0: -LOW, 1: 1 + LOW}, "non-negative"),
        ({0: sympy.I, 1: 1 - sympy.I}, "real"),  # sums to 1, but imaginary
        ({0: sympy.Symbol("x"), 1: 1 - sympy.Symbol("x")}, "symbolic"),
        ({0: mpmath.mpf("nan"), 1: 1.0}, "nan"),
        ({}, "at least one outcome"),
        ({0: 0.0, 1: 0}, "at least one outcome"),  # every entry is zero, nothing is left
    ],
)
def test_invalid_probabilities_are_rejected(probabilities, fragment):
    with pytest.raises(InvalidArgument) as info:
        Distribution(probabilities)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value)


@pytest.mark.parametrize("outcome", [[0, 1], {0}, {"a": 1}])
def test_unhashable_outcome_is_rejected(outcome):
    with pytest.raises(InvalidArgument, match="unhashable"):
        Distribution([(outcome, 1)])


def test_sympy_sum_off_by_1e_minus_40_is_rejected():
    # LOW + HIGH = 1 exactly; adding 10^-40 leaves a total 1 + 1e-40, above the 1e-50 tolerance.
    with pytest.raises(InvalidArgument, match="sum to exactly 1"):
        Distribution({0: LOW, 1: HIGH + sympy.Rational(1, 10**40)})


@pytest.mark.parametrize(
    "off",
    [
        sympy.Rational(1, 10**49),
        sympy.Rational(1, 10**55),
        sympy.Integer(0),
        # at the tolerance's edge, beyond 60 digits of the total: 1 + 1e-50 + e^-150 is over the
        # 1e-50 tolerance, though its total to 60 digits reads 1 + 1e-50 (review of 88de0b2)
        sympy.Rational(1, 10**50) + sympy.exp(-150),
        sympy.Rational(1, 10**50) - sympy.exp(-150),  # just within: accepted
    ],
)
def test_sympy_total_read_at_60_digits_decides_as_total_minus_one(off):
    # The total is evaluated to 60 digits and compared with 1 (it was total - 1 to 60 digits, which
    # for an exact 1 chased a significant digit to evalf's limit). Reference: the old reading.
    # 1 + 1e-49 is over the 1e-50 tolerance, 1 + 1e-55 within it, LOW + HIGH exactly 1.
    values = {0: LOW * E / E, 1: HIGH + off}  # LOW * E / E: sympy keeps a product of exps
    total = sum(values.values(), sympy.Integer(0))
    accepted_before = abs(sympy.N(total - 1, 60)) <= sympy.Rational(1, 10**50)
    assert accepted_before == bool(off <= sympy.Rational(1, 10**50))
    if accepted_before:
        assert Distribution(values)[1] == HIGH + off
    else:
        with pytest.raises(InvalidArgument, match="sum to exactly 1"):
            Distribution(values)


def test_float_tolerance_is_1e_minus_9_and_values_are_kept():
    assert FLOAT_SUM_TOLERANCE == 1e-9
    # Total 1 + 5e-10 is within the tolerance: accepted, and the values are not renormalised.
    d = Distribution({0: 0.5, 1: 0.5 + 5e-10})
    assert d[1] == 0.5 + 5e-10
    assert d[0] == 0.5
    d = Distribution({0: 0.5, 1: 0.5 - 5e-10})
    assert d[1] == 0.5 - 5e-10


def test_exact_numbers_have_no_tolerance():
    # 1/2 + (1/2 - 10^-30): a float check would accept it, the exact check must not.
    with pytest.raises(InvalidArgument):
        Distribution({0: Fraction(1, 2), 1: Fraction(1, 2) - Fraction(1, 10**30)})


def test_is_exact_number():
    assert is_exact_number(1)
    assert is_exact_number(Fraction(1, 3))
    assert is_exact_number(sympy.Rational(1, 3))
    assert is_exact_number(LOW)
    assert not is_exact_number(0.5)
    assert not is_exact_number(True)
    assert not is_exact_number(mpmath.mpf("0.5"))


# -- construction and queries -------------------------------------------------------------------


def test_zero_entries_are_dropped():
    d = Distribution({"a": 0, "b": 0.0, "c": Fraction(0), "d": sympy.Integer(0), "e": 1})
    assert len(d) == 1
    assert list(d) == ["e"]
    assert "a" not in d
    assert d["a"] == 0  # absent outcomes read as 0
    assert d.support == frozenset({"e"})


def test_repeated_outcomes_from_an_iterable_are_summed():
    d = Distribution([(0, Fraction(1, 4)), (1, Fraction(1, 2)), (0, Fraction(1, 4))])
    assert dict(d) == {0: Fraction(1, 2), 1: Fraction(1, 2)}  # 1/4 + 1/4 = 1/2


def test_immutability():
    source = {0: Fraction(1, 4), 1: Fraction(3, 4)}
    d = Distribution(source)
    source[0] = Fraction(1, 2)  # mutating the input afterwards changes nothing
    assert d[0] == Fraction(1, 4)
    with pytest.raises(TypeError):
        d[0] = Fraction(1, 2)  # type: ignore[index]
    with pytest.raises(TypeError):
        del d[0]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        d.extra = 1  # type: ignore[attr-defined]
    assert not hasattr(d, "__dict__")
    assert dict(d) == {0: Fraction(1, 4), 1: Fraction(3, 4)}


def test_equality_and_hash():
    a = Distribution({0: Fraction(1, 2), 1: Fraction(1, 2)})
    b = Distribution.uniform([1, 0])
    assert a == b and hash(a) == hash(b)
    assert a != Distribution({0: Fraction(1, 4), 1: Fraction(3, 4)})
    assert len({a, b}) == 1


def test_point_and_uniform():
    assert dict(Distribution.point("x")) == {"x": 1}
    u = Distribution.uniform(["a", "b", "a"])  # a listed twice: 2/3, b: 1/3
    assert dict(u) == {"a": Fraction(2, 3), "b": Fraction(1, 3)}
    assert all(isinstance(v, Fraction) for v in u.values())
    assert u.is_exact
    with pytest.raises(InvalidArgument, match="empty"):
        Distribution.uniform([])


def test_probability_of_events():
    d = Distribution({1: Fraction(1, 4), 2: Fraction(1, 4), 3: Fraction(1, 2)})
    assert d.probability({1, 3}) == Fraction(3, 4)  # 1/4 + 1/2
    assert d.probability([3, 3, 99]) == Fraction(1, 2)  # repeats and absent outcomes ignored
    assert d.probability(lambda o: o % 2 == 0) == Fraction(1, 4)
    assert d.probability(set()) == 0


def test_map_merges_equal_images():
    d = Distribution({1: Fraction(1, 4), 2: Fraction(1, 4), 3: Fraction(1, 2)})
    parity = d.map(lambda o: o % 2)
    assert dict(parity) == {1: Fraction(3, 4), 0: Fraction(1, 4)}  # 1 and 3: 1/4 + 1/2


def test_bind_composes_a_kernel():
    # 0 -> uniform{0, 1}; 1 -> point 1.  P(1) = 1/3 * 1/2 + 2/3 * 1 = 5/6, P(0) = 1/6.
    d = Distribution({0: Fraction(1, 3), 1: Fraction(2, 3)})
    out = d.bind(lambda o: Distribution.uniform([0, 1]) if o == 0 else Distribution.point(1))
    assert dict(out) == {0: Fraction(1, 6), 1: Fraction(5, 6)}


def test_mixture():
    # 1/3 * point(0) + 2/3 * uniform{0, 1}: P(0) = 1/3 + 2/3 * 1/2 = 2/3, P(1) = 1/3.
    mix = Distribution.mixture(
        [(Fraction(1, 3), Distribution.point(0)), (Fraction(2, 3), Distribution.uniform([0, 1]))]
    )
    assert dict(mix) == {0: Fraction(2, 3), 1: Fraction(1, 3)}
    # A zero weight is skipped; weights not summing to 1 are caught by validation.
    assert dict(Distribution.mixture([(0, Distribution.point(5)), (1, Distribution.point(6))])) == {6: 1}
    with pytest.raises(InvalidArgument):
        Distribution.mixture([(Fraction(1, 2), Distribution.point(0))])


def test_product():
    a = Distribution.uniform([0, 1])
    b = Distribution({"x": Fraction(1, 3), "y": Fraction(2, 3)})
    # (0, x): 1/2 * 1/3 = 1/6, (0, y): 1/2 * 2/3 = 1/3, same for 1.
    assert dict(a.product(b)) == {
        (0, "x"): Fraction(1, 6),
        (0, "y"): Fraction(1, 3),
        (1, "x"): Fraction(1, 6),
        (1, "y"): Fraction(1, 3),
    }


def test_from_weights_exact_and_float():
    exact = Distribution.from_weights({"a": 1, "b": 3})  # 1/4, 3/4
    assert dict(exact) == {"a": Fraction(1, 4), "b": Fraction(3, 4)}
    assert all(isinstance(v, Fraction) for v in exact.values())
    floats = Distribution.from_weights({"a": 1.0, "b": 3.0})
    assert dict(floats) == {"a": 0.25, "b": 0.75}
    assert not floats.is_exact
    assert dict(Distribution.from_weights({"a": 0, "b": 2})) == {"b": 1}  # zero weight dropped
    with pytest.raises(InvalidArgument, match="positive total"):
        Distribution.from_weights({"a": 0, "b": 0})
    with pytest.raises(InvalidArgument, match="non-negative"):
        Distribution.from_weights({"a": -1, "b": 2})
    with pytest.raises(InvalidArgument, match="nan"):
        Distribution.from_weights({"a": float("nan"), "b": 2.0})


def test_to_float():
    d = Distribution({0: Fraction(1, 4), 1: Fraction(3, 4)}).to_float()
    assert dict(d) == {0: 0.25, 1: 0.75}
    assert all(type(v) is float for v in d.values())


# -- sympy numbers ------------------------------------------------------------------------------


def test_sympy_distribution_is_accepted_and_exact():
    d = Distribution({0: LOW, 1: HIGH})
    assert d.is_exact
    assert float(d[0]) == pytest.approx(0.2689414213699951, abs=1e-15)


def test_sympy_from_weights():
    # weights 1 and e^-1: P(0) = 1 / (1 + e^-1), P(1) = e^-1 / (1 + e^-1)
    d = Distribution.from_weights({0: 1, 1: E})
    assert _same(d[0], HIGH) and _same(d[1], LOW)


def test_sympy_map_bind_mixture_product():
    d = Distribution({0: LOW, 1: HIGH})
    merged = d.map(lambda o: "c")
    assert list(merged) == ["c"] and _same(merged["c"], 1)  # LOW + HIGH = 1
    flipped = d.bind(lambda o: Distribution.point(1 - o))
    assert _same(flipped[1], LOW) and _same(flipped[0], HIGH)
    mix = Distribution.mixture([(LOW, Distribution.point("a")), (HIGH, Distribution.uniform("ab"))])
    # P(a) = LOW + HIGH/2, P(b) = HIGH/2
    assert _same(mix["a"], LOW + HIGH / 2) and _same(mix["b"], HIGH / 2)
    square = d.product(d)
    assert _same(square[(0, 1)], LOW * HIGH)
    assert _same(sum(square.values()), 1)  # (LOW + HIGH)^2 = 1


# -- properties ---------------------------------------------------------------------------------

weights = st.dictionaries(st.integers(0, 6), st.integers(0, 20), min_size=1).filter(
    lambda w: sum(w.values()) > 0
)


@settings(max_examples=60, deadline=None)
@given(weights)
def test_from_weights_is_exact_and_proportional(w):
    d = Distribution.from_weights(w)
    total = sum(w.values())
    assert sum(d.values()) == 1
    for outcome, weight in w.items():
        assert d[outcome] == Fraction(weight, total)


@settings(max_examples=60, deadline=None)
@given(weights, st.integers(1, 4))
def test_map_and_bind_preserve_total_mass(w, modulus):
    d = Distribution.from_weights(w)
    image = d.map(lambda o: o % modulus)
    assert sum(image.values()) == 1
    for residue in image:
        assert image[residue] == d.probability(lambda o: o % modulus == residue)
    spread = d.bind(lambda o: Distribution.uniform(range(o + 1)))
    assert sum(spread.values()) == 1
    # P(spread = 0) = sum_o P(o) / (o + 1)
    assert spread[0] == sum(p / (o + 1) for o, p in d.items())


# -- unexplored mass (sub-distributions) ---------------------------------------------------------

HALF, QUARTER = Fraction(1, 2), Fraction(1, 4)


@pytest.mark.parametrize(
    "probabilities, unexplored",
    [
        ({0: HALF, 1: QUARTER}, QUARTER),  # 3/4 + 1/4 = 1: the normal case
        ({0: HALF, 1: QUARTER}, HALF),  # 3/4 + 1/2 >= 1: the bound may be loose
        ({}, 1),  # nothing explored at all
        ({0: 0.5, 1: 0.25}, 0.25),  # floats
        ({0: 0.5, 1: 0.25}, 0.25 - 5e-10),  # a total of 1 - 5e-10, within the float tolerance 1e-9
        ({0: HALF}, 0.5),  # a float bound on exact masses: compared exactly (1/2 + 1/2 = 1)
        ({0: LOW}, HIGH),  # sympy: e^-1/(1+e^-1) + 1/(1+e^-1) = 1
    ],
)
def test_unexplored_mass_is_accepted(probabilities, unexplored):
    d = Distribution(probabilities, unexplored=unexplored)
    assert d.unexplored == unexplored and dict(d) == {o: p for o, p in probabilities.items()}


@pytest.mark.parametrize(
    "probabilities, unexplored, fragment",
    [
        ({0: HALF}, QUARTER, "explored total of 1/2"),  # 1/2 + 1/4 = 3/4 < 1: mass unaccounted for
        ({0: HALF, 1: Fraction(3, 4)}, QUARTER, "explored total of 5/4"),  # explored alone above 1
        ({}, HALF, "explored total of 0"),
        ({0: 0.5}, 0.4, "explored total of 0.5"),  # 0.9 < 1 - 1e-9
        ({0: HALF}, -QUARTER, "unexplored=Fraction(-1, 4)"),
        ({0: HALF}, 2, "unexplored=2 must be at most 1"),
        ({0: HALF}, float("nan"), "unexplored=nan"),
        ({0: HALF}, "1/2", "unexplored='1/2'"),
    ],
)
def test_bad_unexplored_mass_is_refused_with_the_value(probabilities, unexplored, fragment):
    with pytest.raises(InvalidArgument) as info:
        Distribution(probabilities, unexplored=unexplored)
    assert fragment in str(info.value)


def test_unexplored_mass_in_equality_hash_repr_and_pickling():
    import pickle

    d = Distribution({0: HALF, 1: QUARTER}, unexplored=QUARTER)
    assert d == Distribution({1: QUARTER, 0: HALF}, unexplored=QUARTER)
    assert d != Distribution({0: HALF, 1: QUARTER}, unexplored=HALF)  # same explored part, other bound
    assert Distribution({0: 1}, unexplored=0) == Distribution({0: 1}) and Distribution({0: 1}).unexplored == 0
    assert hash(d) == hash(Distribution({0: HALF, 1: QUARTER}, unexplored=QUARTER))
    assert repr(d) == "Distribution({0: 1/2, 1: 1/4}, unexplored=1/4)"
    assert repr(Distribution({0: 1})) == "Distribution({0: 1})"
    again = pickle.loads(pickle.dumps(d))
    assert again == d and again.unexplored == QUARTER and hash(again) == hash(d)
    assert d.is_exact and not Distribution({0: HALF}, unexplored=0.5).is_exact  # a float bound is a float


def test_operations_carry_the_unexplored_mass_or_refuse_it():
    d = Distribution({0: HALF, 1: QUARTER}, unexplored=QUARTER)
    with pytest.raises(InvalidArgument, match=r"unexplored=1/4 .*probability_bounds"):
        d.probability({0})
    assert d.probability_bounds({0}) == (HALF, Fraction(3, 4))  # 1/2 explored, + 1/4 at most
    assert d.probability_bounds({0, 1}) == (Fraction(3, 4), 1)  # 3/4 + 1/4
    assert Distribution({0: 1}).probability_bounds({0}) == (1, 1)
    assert d.map(lambda o: "same") == Distribution({"same": Fraction(3, 4)}, unexplored=QUARTER)
    # mixture: 1/2 d + 1/2 {0: 1}: explored {0: 1/4 + 1/2, 1: 1/8}, unexplored 1/2 * 1/4 = 1/8
    mixed = Distribution.mixture([(HALF, d), (HALF, Distribution({0: 1}))])
    assert mixed == Distribution({0: Fraction(3, 4), 1: Fraction(1, 8)}, unexplored=Fraction(1, 8))
    # bind: the kernel of 0 is {a: 1}, of 1 is {b: 1/2} with 1/2 unexplored: explored {a: 1/2, b: 1/8};
    # unexplored 1/4 (d's own) + 1/4 * 1/2 (the kernel's) = 3/8
    kernel = {0: Distribution({"a": 1}), 1: Distribution({"b": HALF}, unexplored=HALF)}
    assert d.bind(kernel.__getitem__) == Distribution({"a": HALF, "b": Fraction(1, 8)}, unexplored=Fraction(3, 8))
    # product: explored masses multiply; 1 - (1 - 1/4)(1 - 1/2) = 1/4 + 1/2 - 1/8 = 5/8 unexplored
    other = Distribution({"x": HALF}, unexplored=HALF)
    joint = d.product(other)
    assert joint == Distribution({(0, "x"): QUARTER, (1, "x"): Fraction(1, 8)}, unexplored=Fraction(5, 8))
    # to_float: 1/3 as a float is below 1/3; the bound is rounded up so that it stays a bound
    third = Distribution({0: Fraction(2, 3)}, unexplored=Fraction(1, 3)).to_float()
    assert Fraction(third.unexplored) >= Fraction(1, 3) and third.unexplored == 1 / 3 + 2**-54
