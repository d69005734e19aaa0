"""The mechanism protocols and the mutant declaration (dpverify.finite.mechanism)."""

from __future__ import annotations

import inspect
from fractions import Fraction

import pytest

import dpverify.mechanisms.exponential as exponential
import dpverify.mechanisms.item_level as item_level
import dpverify.mechanisms.learners as learners
import dpverify.mechanisms.private_threshold as private_threshold
import dpverify.mechanisms.semi_private as semi_private
import dpverify.mechanisms.user_level as user_level
from dpverify.finite.mechanism import ExactMechanism, Learner, Mechanism, is_mutant, mutant, parent_of
from dpverify.finite.records import thresholds
from dpverify.mechanisms.randomized_response import randomized_response_mechanism

MODULES = (exponential, item_level, learners, private_threshold, semi_private, user_level)


def test_plain_callables_are_mechanisms_and_exact_ones_are_recognised():
    def coin(dataset):
        return {0: Fraction(1, 2), 1: Fraction(1, 2)}

    class Exact:
        def __call__(self, dataset):
            return {0: 1.0}

        def exact_distribution(self, dataset):
            return {0: 1}

    assert isinstance(coin, Mechanism) and not isinstance(coin, ExactMechanism)
    assert isinstance(Exact(), ExactMechanism)
    assert isinstance(randomized_response_mechanism(p=Fraction(3, 4)), Mechanism)


def test_inner_learners_follow_the_learner_protocol():
    C = thresholds(3)
    for learner in (learners.ExponentialLearner(C), learners.LeakyLearner(C, 0.1), learners.ConsistentLearner(C)):
        assert isinstance(learner, Learner), learner


def test_every_mutant_class_or_function_is_declared_beside_its_parent():
    # Names that say "mutant" or "without half" must carry a declaration, and the declared parent
    # must be a real object of the same module (so the declaration cannot drift from the code).
    found = 0
    for module in MODULES:
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            if name.startswith("Mutant") or name.endswith("_without_half") or name == "ConsistentLearner":
                assert is_mutant(obj), f"{module.__name__}.{name} is not declared with @mutant"
                parent = parent_of(obj)
                assert parent in vars(module), (name, parent)
                found += 1
    # exponential_mechanism_without_half, MutantFamilyFromData, ConsistentLearner, two threshold
    # mutants, MutantCoverWithPrivatePoints, MutantUserLevelWithoutComposition: 7
    assert found == 7


def test_mutant_records_parent_and_reason_and_keeps_the_object():
    def parent(dataset):
        return {0: 1}

    @mutant(of=parent, broken="always answers 1")
    def broken(dataset):
        return {1: 1}

    assert broken((0,)) == {1: 1}
    assert parent_of(broken) == "test_mutant_records_parent_and_reason_and_keeps_the_object.<locals>.parent"
    assert broken.__dpverify_mutation__[1] == "always answers 1"
    assert not is_mutant(parent)
    with pytest.raises(ValueError, match="broken="):
        mutant(of=parent, broken="")
    assert inspect.isfunction(broken)
