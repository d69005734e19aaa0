"""dpverify.types: the public type names, one definition each, importable without numpy or sympy.

What a type checker makes of them is tested in tests/test_typed_examples.py (mypy --strict on the
pages' examples and on a probe of calls the types must refuse)."""

from __future__ import annotations

import subprocess
import sys
import typing
from fractions import Fraction

import dpverify
import dpverify.finite.mechanism
import dpverify.types
from dpverify.types import Mechanism, Number, RealNumber


def test_importing_the_types_loads_neither_numpy_nor_sympy():
    code = (
        "import sys, dpverify.types; "
        "print(sorted(m for m in ('numpy', 'sympy', 'mpmath', 'concurrent.futures') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_mechanism_protocol_has_one_definition():
    assert dpverify.finite.mechanism.Mechanism is Mechanism is dpverify.types.Mechanism
    assert Mechanism.__module__ == "dpverify.types"
    assert issubclass(dpverify.finite.mechanism.ExactMechanism, Mechanism)


def test_the_mechanism_protocol_is_checked_at_run_time():
    def randomized_response(dataset: tuple[int, ...]) -> dict[int, Fraction]:
        return {dataset[0]: Fraction(3, 4), 1 - dataset[0]: Fraction(1, 4)}

    assert isinstance(randomized_response, Mechanism)
    assert not isinstance(Fraction(1, 2), Mechanism)  # not callable


def test_number_is_the_real_numbers_and_expression_strings():
    # typing.get_args flattens the nested unions: Number is RealNumber's members and str
    real = typing.get_args(RealNumber)
    assert real[:3] == (int, float, Fraction) and dpverify.types.SympyNumber in real
    assert typing.get_args(Number) == (*real, str)
    assert set(dpverify.types.__all__) == {
        "Number", "RealNumber", "SympyNumber", "Dataset", "Mechanism", "PublicMechanism", "Sampler", "DaskClient",
        "ExecutorSpec",
    }
