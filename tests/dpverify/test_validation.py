"""dpverify.validation: each check accepts what it should and rejects the rest with a message naming
the value, the rule and the fix; exact_number reads floats by the one documented policy."""

from __future__ import annotations

import decimal
import math
import re
from fractions import Fraction

import numpy as np
import pytest
import sympy

from dpverify.errors import InvalidArgument
from dpverify.validation import (
    FLOAT_CLAIM_ALLOWANCE,
    check_bool,
    check_callable,
    check_choice,
    check_delta,
    check_epsilon,
    check_integer,
    check_number,
    check_positive,
    check_probability,
    check_type,
    claim_number,
    exact_number,
    number_from_text,
    simplest_fraction,
)

# -- the number policy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.1, Fraction(1, 10)),
        (1 / 3, Fraction(1, 3)),
        (1 / 24, Fraction(1, 24)),  # binary 1/24 is above 1/24: ceil(24 x) would be 2
        (5 / 6, Fraction(5, 6)),
        (0.2, Fraction(1, 5)),
        (1e-6, Fraction(1, 10**6)),
        (3.0, Fraction(3)),
        (-0.25, Fraction(-1, 4)),
        (0.0, Fraction(0)),
        (2, Fraction(2)),
        (Fraction(1, 3), Fraction(1, 3)),
        (np.int64(7), Fraction(7)),
        (np.float64(0.1), Fraction(1, 10)),
        (decimal.Decimal("0.1"), Fraction(1, 10)),
        (sympy.Rational(2, 7), Fraction(2, 7)),
        (sympy.Float(0.1), Fraction(1, 10)),  # a sympy Float is read like a float, at its precision
        (sympy.Float("0.1", 30), Fraction(1, 10)),
    ],
)
def test_exact_number_reads_the_simplest_fraction_that_rounds_to_the_float(value, expected):
    assert exact_number("x", value) == expected
    assert type(exact_number("x", value)) is Fraction


def test_exact_number_of_an_irrational_float_is_a_fraction_within_half_an_ulp():
    x = math.log(3)
    read = exact_number("epsilon", x)
    assert read == Fraction(149921313, 136464260)  # the simplest fraction rounding to 1.0986122886681098
    assert float(read) == x
    assert abs(read - Fraction(x)) <= Fraction(math.ulp(x)) / 2


@pytest.mark.parametrize("value", [0.1, 1 / 3, math.pi, 1e-300, 5e-324, 1.7976931348623157e308, 0.30000000000000004])
def test_simplest_fraction_always_rounds_back(value):
    assert float(simplest_fraction(value)) == value


def test_exact_number_keeps_irrational_sympy_numbers():
    assert exact_number("epsilon", sympy.log(3)) == sympy.log(3)


@pytest.mark.parametrize(
    "value, pattern",
    [
        (None, "x must be a real number .*got x=None"),
        ("0.1", "got x='0.1'"),
        (True, "not a bool, got x=True"),
        (float("nan"), "finite real number, got x=nan"),
        (float("inf"), "finite real number, got x=inf"),
        (sympy.Symbol("t") + 1, r"substitute numbers for \['t'\]"),
        (sympy.I, "finite real number"),
        (sympy.oo, "finite real number"),
    ],
)
def test_exact_number_rejects(value, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        exact_number("x", value)


# -- expression strings: read by number_from_text where a claim is made, refused by the number readers -----


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.1", 0.1),  # a decimal literal is the float it spells (exact_number then reads it as 1/10)
        ("1e-5", 1e-5),
        (" 3 ", 3.0),
        ("1/3", Fraction(1, 3)),  # exact: sympy's Rational(1, 3), as a Fraction
        ("2**-3", Fraction(1, 8)),
        ("ln(2)", sympy.log(2)),  # ln is log
        ("log(3) / 2", sympy.log(3) / 2),
        ("exp(-1) + sqrt(2)", sympy.exp(-1) + sympy.sqrt(2)),
        ("pi", sympy.pi),
        ("E", sympy.E),
    ],
)
def test_number_from_text_reads_a_float_literal_or_an_expression(text, expected):
    read = number_from_text("x", text)
    assert read == expected and type(read) is type(expected)


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("", r"x must be a number or an expression such as log\(3\) or 1/3 .*got x=''"),
        ("eps", r"names allowed: E, exp, ln, log, pi, sqrt\), got x='eps'"),
        ("__import__('os')", r"got x=\"__import__\('os'\)\""),  # a quote is no character of an expression
        ("lambda: 1", r"got x='lambda: 1'"),
        ("log(3", r"x must be a real number or expression like log\(3\), got x='log\(3'"),  # does not parse
        ("sqrt(-1)", r"real number or expression like log\(3\), got x='sqrt\(-1\)'"),  # I
        ("1/0", r"real number or expression like log\(3\), got x='1/0'"),  # zoo
    ],
)
def test_number_from_text_refuses_a_string_that_spells_no_real_number(text, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        number_from_text("x", text)


@pytest.mark.parametrize(
    "read", [exact_number, claim_number, check_number, check_positive, check_probability, check_epsilon, check_delta]
)
def test_the_number_readers_refuse_strings(read):
    # strings are read where a claim is made, nowhere else: a check_* returns the value it was
    # given, and a string accepted there would reach a mechanism's arithmetic unread
    name = {check_epsilon: "epsilon", check_delta: "delta"}.get(read, "x")
    with pytest.raises(InvalidArgument, match=f"{name} must be .*got {name}='1/3'"):
        read("1/3") if read in (check_epsilon, check_delta) else read(name, "1/3")


def test_a_float_claim_gets_its_rounding_allowance_an_exact_one_none():
    assert claim_number("epsilon", 0.1) == Fraction(1, 10) * (1 + FLOAT_CLAIM_ALLOWANCE)
    assert claim_number("epsilon", Fraction(1, 10)) == Fraction(1, 10)
    assert claim_number("delta", 0.0) == 0
    # ln 3 = 1.09861228866810969...; math.log(3) stands for it, math.log(3) - 1e-9 does not.
    assert claim_number("epsilon", math.log(3)) > sympy.log(3)
    assert claim_number("epsilon", math.log(3) - 1e-9) < sympy.log(3)
    # the binary value of a float claim is within the allowance too
    assert Fraction(0.1) < claim_number("epsilon", 0.1)


# -- checks ---------------------------------------------------------------------------------------


def test_check_integer():
    assert check_integer("n", 3, at_least=1) == 3
    assert type(check_integer("n", np.int64(3), at_least=1)) is int
    assert check_integer("k", 0, at_least=0, at_most=2) == 0
    with pytest.raises(InvalidArgument, match=re.escape("n must be an integer >= 1, got n=0; pass e.g. n=4.")):
        check_integer("n", 0, at_least=1, fix="pass e.g. n=4")
    for bad in (1.5, "2", True, None, 2.0):
        with pytest.raises(InvalidArgument, match=re.escape(f"got n={bad!r}")):
            check_integer("n", bad, at_least=1)
    with pytest.raises(InvalidArgument, match=re.escape("k must be an integer in [0, 2], got k=3.")):
        check_integer("k", 3, at_least=0, at_most=2)
    with pytest.raises(InvalidArgument, match=re.escape("T (the number of rounds) must be an integer >= 1, got T=0")):
        check_integer("T", 0, at_least=1, what="the number of rounds")


def test_check_number_and_positive():
    assert check_number("a", Fraction(1, 2), at_least=0, at_most=1) == Fraction(1, 2)
    assert check_positive("gamma", 0.1) == 0.1
    assert check_positive("scale", sympy.log(2)) == sympy.log(2)
    with pytest.raises(InvalidArgument, match=re.escape("gamma must be > 0, got gamma=0.")):
        check_positive("gamma", 0)
    with pytest.raises(InvalidArgument, match=re.escape("gamma must be > 0, got gamma=-1e-300")):
        check_positive("gamma", -1e-300)
    with pytest.raises(InvalidArgument, match="scale must be > 0"):
        check_positive("scale", -sympy.log(2))
    with pytest.raises(InvalidArgument, match=re.escape("a must be a number, got a=[1].")):
        check_number("a", [1])
    with pytest.raises(InvalidArgument, match="finite"):
        check_number("a", -math.inf)
    with pytest.raises(InvalidArgument, match=re.escape("a must be <= 1/2, got a=Fraction(2, 3)")):
        check_number("a", Fraction(2, 3), at_most=Fraction(1, 2))


def test_check_probability():
    assert check_probability("p", 1) == 1
    assert check_probability("p", 0.0) == 0.0
    for bad in (-0.1, 1.0000000000000002, Fraction(3, 2)):
        with pytest.raises(InvalidArgument, match=re.escape(f"p must be in [0, 1], got p={bad!r}")):
            check_probability("p", bad)


def test_check_epsilon_and_delta():
    assert check_epsilon(0) == 0
    assert check_epsilon(sympy.log(3)) == sympy.log(3)
    assert check_epsilon(800.0) == 800.0  # e^eps overflows a float but the claim is valid
    with pytest.raises(InvalidArgument, match=re.escape("epsilon must be >= 0, got epsilon=-1e-09; privacy parameters are non-negative.")):
        check_epsilon(-1e-9)
    with pytest.raises(InvalidArgument, match="epsilon must be finite, got epsilon=inf"):
        check_epsilon(math.inf)
    with pytest.raises(InvalidArgument, match="epsilon must be a number, got epsilon=None"):
        check_epsilon(None)
    with pytest.raises(InvalidArgument, match="epsilon must be > 0, got epsilon=0"):
        check_epsilon(0, positive=True)
    with pytest.raises(InvalidArgument, match=re.escape("eps_A must be >= 0, got eps_A=-1")):
        check_epsilon(-1, "eps_A")
    assert check_delta(Fraction(1, 10)) == Fraction(1, 10)
    with pytest.raises(InvalidArgument, match=re.escape("delta must be in [0, 1], got delta=1.5.")):
        check_delta(1.5)
    with pytest.raises(InvalidArgument, match="delta=nan"):
        check_delta(math.nan)


def test_check_type_choice_bool_callable():
    assert check_type("scores", {}, dict) == {}
    with pytest.raises(InvalidArgument, match=re.escape("scores must be a dict (not list), got scores=[]; pass a mapping.")):
        check_type("scores", [], dict, fix="pass a mapping")
    with pytest.raises(InvalidArgument, match="not bool"):
        check_type("n", True, int)
    assert check_choice("score", "agnostic", ("agnostic", "bns")) == "agnostic"
    with pytest.raises(InvalidArgument, match=re.escape("unknown relabeling score score='x'; choose one of ['agnostic', 'bns'].")):
        check_choice("score", "x", ("agnostic", "bns"), what="relabeling score")
    with pytest.raises(InvalidArgument, match="unknown variant variant=\\[\\]"):
        check_choice("variant", [], {"a": 1})  # an unhashable value is simply not a choice
    assert check_bool("exact", False) is False
    with pytest.raises(InvalidArgument, match="exact must be True or False, got exact=1."):
        check_bool("exact", 1)
    assert check_callable("mechanism", len) is len
    with pytest.raises(InvalidArgument, match="mechanism must be callable, got mechanism=42"):
        check_callable("mechanism", 42)
