"""Tests of dpverify.integrations.strategies: generated objects are valid, and the targeted search finds bugs."""

from __future__ import annotations

import ast
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from dpverify import Distribution, InvalidArgument, analyze
from dpverify.checking.checker import check_exchangeable
from dpverify.finite.records import CONCEPT_CLASSES, ConceptClass, labeled_records
from dpverify.integrations.strategies import (
    MAX_RANDOM_CONCEPTS,
    NeighboringPair,
    _rename_privacy_property,
    concept_classes,
    datasets,
    neighboring_pairs,
    privacy_property,
    record_universes,
)
from dpverify.verdict.privacy_loss import delta_for_epsilon


def label_sum(dataset):
    """Not private: the exact number of positive labels."""
    return {sum(y for _, y in dataset): 1}


def randomized_response(dataset):
    """Randomized response on the first record's label, p = 3/4: eps* = ln(3/4 / 1/4) = ln 3."""
    y = dataset[0][1]
    return {y: Fraction(3, 4), 1 - y: Fraction(1, 4)}


# pytest collects the returned Hypothesis test: the intended use in a test module.
test_randomized_response_search = privacy_property(
    randomized_response, records=labeled_records(2), n=1, epsilon=math.log(3), max_examples=50
)


# -- domains -------------------------------------------------------------------------------------


@given(record_universes(min_domain_size=2, max_domain_size=3))
def test_record_universes_are_labeled_records_in_range(records):
    assert len(records) in (4, 6)  # 2 * d records for d in {2, 3}
    assert records == labeled_records(len(records) // 2)


@given(concept_classes(max_domain_size=3))
def test_concept_classes_are_named_builders_or_random_matrices(concept_class):
    assert isinstance(concept_class, ConceptClass)
    assert 1 <= concept_class.domain_size <= 3
    assert len(concept_class) >= 1
    if concept_class.name == "random":
        assert len(concept_class) <= MAX_RANDOM_CONCEPTS
    else:
        built = CONCEPT_CLASSES[concept_class.name](concept_class.domain_size)
        assert np.array_equal(concept_class.matrix, built.matrix)


def test_concept_classes_draw_every_named_builder_and_random_ones():
    seen = set()

    @settings(derandomize=True, database=None, max_examples=200)
    @given(concept_classes(max_domain_size=2))
    def collect(concept_class):
        seen.add(concept_class.name)

    collect()
    assert seen == set(CONCEPT_CLASSES) | {"random"}


# -- datasets and neighbours -----------------------------------------------------------------------


@given(st.data())
def test_datasets_have_n_records_from_the_universe(data):
    records = data.draw(record_universes())
    n = data.draw(st.integers(0, 4))
    dataset = data.draw(datasets(records, n=n))
    assert isinstance(dataset, tuple) and len(dataset) == n
    assert set(dataset) <= set(records)


@given(st.data())
def test_substitute_pairs_differ_in_exactly_one_position(data):
    records = data.draw(record_universes())
    n = data.draw(st.integers(1, 4))
    pair = data.draw(neighboring_pairs(records, n=n))
    assert isinstance(pair, NeighboringPair)
    dataset, neighbor = pair
    assert len(dataset) == len(neighbor) == n
    assert set(dataset) | set(neighbor) <= set(records)
    assert sum(a != b for a, b in zip(dataset, neighbor)) == 1


@given(st.data())
def test_add_remove_pairs_drop_one_entry(data):
    records = data.draw(record_universes())
    n = data.draw(st.integers(1, 4))
    dataset, neighbor = data.draw(neighboring_pairs(records, n=n, neighbors="add_remove"))
    assert len(dataset) == n and len(neighbor) == n - 1
    assert any(dataset[:i] + dataset[i + 1 :] == neighbor for i in range(n))


def test_a_neighboring_pair_is_a_tuple_hypothesis_prints_one_dataset_per_line():
    from hypothesis.vendor.pretty import pretty  # the printer of Hypothesis's "Failing test case"

    short = NeighboringPair((0, 1), (0, 2))
    assert short == ((0, 1), (0, 2)) and isinstance(short, tuple) and repr(short) == "((0, 1), (0, 2))"
    assert pretty(short) == "((0, 1), (0, 2))"
    long = NeighboringPair((0,) * 30, (2,) + (0,) * 29)
    zeros = ", ".join(["0"] * 29)
    # A plain tuple this long is printed one record per line (60 lines); this one takes two.
    assert len(pretty(((0,) * 30, (2,) + (0,) * 29)).splitlines()) == 60
    assert pretty(long).splitlines() == [f"((0, {zeros}),", f" (2, {zeros}))"]


@pytest.mark.parametrize(
    "build",
    [
        lambda: record_universes(min_domain_size=3, max_domain_size=2),
        lambda: record_universes(min_domain_size=0),
        lambda: concept_classes(max_domain_size=17),
        lambda: datasets([], n=2),
        lambda: datasets([(0, 0), (0, 0)], n=2),
        lambda: datasets(labeled_records(1), n=-1),
        lambda: neighboring_pairs(labeled_records(1), n=0),
        lambda: neighboring_pairs(labeled_records(1), n=2, neighbors="user_level"),
        lambda: neighboring_pairs([(0, 0)], n=2),
        lambda: privacy_property(label_sum, records=labeled_records(1), n=1, epsilon=-1.0),
        lambda: privacy_property(label_sum, records=labeled_records(1), n=1, epsilon=1, delta=2),
        lambda: privacy_property(label_sum, records=labeled_records(1), n=1, epsilon=1, max_examples=0),
        lambda: privacy_property(None, records=labeled_records(1), n=1, epsilon=1),
    ],
)
def test_misuse_raises_invalid_argument_when_the_strategy_is_built(build):
    with pytest.raises(InvalidArgument):
        build()


# -- the targeted search -------------------------------------------------------------------------------


def _witness_datasets(message: str) -> tuple[tuple, tuple]:
    lines = {line.split("=", 1)[0].strip(): line.split("=", 1)[1] for line in message.splitlines()
             if line.strip().startswith(("D  =", "D' ="))}
    return ast.literal_eval(lines["D"].strip()), ast.literal_eval(lines["D'"].strip())


def test_privacy_property_finds_a_violation_of_a_non_private_mechanism():
    records = labeled_records(2)
    search = privacy_property(label_sum, records=records, n=3, epsilon=1)
    with pytest.raises(AssertionError) as failure:
        search()
    message = str(failure.value)
    assert "violated" in message and "S  =" in message and "P[M(D') in S]" in message
    dataset, neighbor = _witness_datasets(message)
    # The witness is a genuine substitute pair on which the claim fails.
    assert len(dataset) == len(neighbor) == 3
    assert sum(a != b for a, b in zip(dataset, neighbor)) == 1
    assert delta_for_epsilon(label_sum(dataset), label_sum(neighbor), 1.0) == 1.0  # disjoint supports


def test_privacy_property_finds_an_add_remove_violation():
    search = privacy_property(
        label_sum, records=labeled_records(1), n=2, epsilon=1, neighbors="add_remove"
    )
    with pytest.raises(AssertionError) as failure:
        search()
    dataset, neighbor = _witness_datasets(str(failure.value))
    assert {len(dataset), len(neighbor)} == {1, 2}  # reported in the violating direction


def test_privacy_property_passes_randomized_response_at_its_epsilon():
    privacy_property(randomized_response, records=labeled_records(2), n=1, epsilon=math.log(3))()


def test_privacy_property_catches_randomized_response_below_its_epsilon():
    # delta(1) = 3/4 - e * 1/4 = 0.0704... > 0
    search = privacy_property(randomized_response, records=labeled_records(1), n=1, epsilon=1.0)
    with pytest.raises(AssertionError, match="violated"):
        search()


def test_privacy_property_passes_randomized_response_with_a_sufficient_delta():
    # delta(1) = 3/4 - e/4 = 0.07043; claim delta = 0.08
    privacy_property(randomized_response, records=labeled_records(1), n=1, epsilon=1, delta=0.08)()


def test_privacy_property_is_named_after_the_mechanism_until_renamed():
    search = privacy_property(label_sum, records=labeled_records(1), n=2, epsilon=1)
    assert search.__name__ == "test_label_sum_privacy"
    _rename_privacy_property(search, "test_search")  # what the pytest plugin does before the test runs
    with pytest.raises(AssertionError) as failure:
        search()
    notes = "\n".join(getattr(failure.value, "__notes__", []))
    assert "Failing test case: test_search(" in notes and "test_label_sum_privacy" not in notes

    def plain():
        pass

    _rename_privacy_property(plain, "other")  # not a privacy_property test: left alone
    assert plain.__name__ == "plain"


def test_privacy_property_runs_the_profiles_phases_but_explain():
    # explain would list dpverify's own lines that only failing pairs ran
    search = privacy_property(label_sum, records=labeled_records(1), n=1, epsilon=1)
    phases = search._hypothesis_internal_use_settings.phases
    assert set(phases) == set(settings.default.phases) - {Phase.explain}
    settings.register_profile("dpverify-test-generate-only", phases=[Phase.generate, Phase.explain])
    previous = settings.get_current_profile_name()
    settings.load_profile("dpverify-test-generate-only")
    try:
        search = privacy_property(label_sum, records=labeled_records(1), n=1, epsilon=1)
    finally:
        settings.load_profile(previous)
    assert search._hypothesis_internal_use_settings.phases == (Phase.generate,)


# -- declared exchangeability ----------------------------------------------------------------------


def _brute_force_exchangeable(mechanism, records, n) -> bool:
    for dataset in itertools.product(records, repeat=n):
        base = Distribution(mechanism(dataset))
        for permuted in set(itertools.permutations(dataset)):
            if Distribution(mechanism(permuted)) != base:
                return False
    return True


@st.composite
def table_mechanisms(draw, records, n):
    """A random mechanism with a binary output, P(1) looked up in a table keyed by the dataset
    as a multiset (exchangeable), as an ordered tuple, or by its first record (not exchangeable)."""
    kind = draw(st.sampled_from(["multiset", "ordered", "first_record"]))
    halves = st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)])
    position = {r: i for i, r in enumerate(records)}
    if kind == "multiset":
        keys = itertools.combinations_with_replacement(records, n)
        key = lambda d: tuple(sorted(d, key=position.get))  # noqa: E731
    elif kind == "ordered":
        keys = itertools.product(records, repeat=n)
        key = lambda d: d  # noqa: E731
    else:
        keys = records
        key = lambda d: d[0]  # noqa: E731
    if kind == "first_record":  # injective: every record its own probability
        order = draw(st.permutations(range(len(records))))
        table = {r: Fraction(order[i] + 1, len(records) + 1) for i, r in enumerate(records)}
    else:
        table = {k: draw(halves) for k in keys}

    def mechanism(dataset):
        p = table[key(dataset)]
        return {1: p, 0: 1 - p}

    return kind, mechanism


@given(st.data())
def test_check_exchangeable_agrees_with_brute_force(data):
    records = data.draw(record_universes(max_domain_size=2))
    n = data.draw(st.integers(1, 3))
    kind, mechanism = data.draw(table_mechanisms(records, n))
    exchangeable = _brute_force_exchangeable(mechanism, records, n)
    violation = check_exchangeable(mechanism, records, n)
    if kind == "multiset":
        assert exchangeable
    if kind == "first_record" and n >= 2:
        assert not exchangeable and violation is not None
    if exchangeable:
        assert violation is None
    if violation is not None:  # a counterexample is genuine
        assert not exchangeable
        assert sorted(violation.dataset) == sorted(violation.permuted)
        assert Distribution(mechanism(violation.dataset)) != Distribution(mechanism(violation.permuted))


@given(st.data())
def test_exchangeable_enumeration_matches_black_box_on_exchangeable_mechanisms(data):
    records = data.draw(record_universes(max_domain_size=2))
    n = data.draw(st.integers(1, 3))
    kind, mechanism = data.draw(table_mechanisms(records, n))
    declared = analyze(mechanism, records=records, n=n, exchangeable=True)
    black_box = analyze(mechanism, records=records, n=n, exchangeable=False)
    if declared.symmetry_violation is None and _brute_force_exchangeable(mechanism, records, n):
        assert declared.exchangeable
        assert declared.epsilon_star() == black_box.epsilon_star()
        assert declared.delta_for_epsilon(0.5) == pytest.approx(black_box.delta_for_epsilon(0.5), abs=1e-12)
    if declared.symmetry_violation is not None:  # a lie is caught and checked as a black box
        assert not declared.exchangeable
        assert declared.epsilon_star() == black_box.epsilon_star()
