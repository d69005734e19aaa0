"""The front door: verify(mechanism, inputs, claim) and estimate(...) over inputs given as values.

Randomized response keeping its bit with probability 3/4 is the yardstick: eps* = ln 3 and, for
0 <= eps <= ln 3, delta(eps) = 3/4 - e^eps / 4 (the one outcome where P > e^eps Q: P = 3/4, Q = 1/4).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import dpverify
from dpverify import (
    ApproximateDp,
    Datasets,
    InputPairs,
    InvalidArgument,
    PublicData,
    PureDp,
    Stability,
    Verdict,
    from_sampler,
    verify,
)
from dpverify.checking.checker import verify_datasets
from dpverify.checking.gaussian import verify_gaussian
from dpverify.checking.input_pairs import verify_pairs
from dpverify.checking.public_data import PublicDataResult, PublicWitness, verify_with_public_data
from dpverify.mechanisms.gaussian import GaussianMechanism
from dpverify.verdict.engine import Witness
from dpverify.verdict.results import PairsResult, VerificationResult


def randomized_response(dataset):
    bit = dataset[0]
    return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}


def public_randomized_response(public, dataset):
    keep = Fraction(3, 4) if public == (0,) else Fraction(2, 3)  # eps* ln 3 on public (0,), ln 2 on (1,)
    bit = dataset[0]
    return {bit: keep, 1 - bit: 1 - keep}


def rr_delta(epsilon: float) -> float:
    return max(0.0, 0.75 - math.exp(epsilon) / 4)


def test_the_top_level_is_the_grouped_short_list():
    assert dpverify.__all__ == [
        "verify", "estimate", "analyze",
        "Datasets", "InputPairs", "PublicData",
        "PureDp", "ApproximateDp", "Stability", "PredictionDp",
        "Distribution", "from_sampler", "exchangeable",
        "Verdict", "DpverifyError", "InvalidArgument", "EnumerationTooLarge", "MechanismError",
        "NondeterministicMechanism", "EnvironmentFailure",
    ]
    for gone in ("verify_pairs", "verify_with_public_data", "estimate_sampler", "statdp_patterns", "mutant"):
        with pytest.raises(AttributeError):
            getattr(dpverify, gone)


def test_datasets_give_the_same_result_as_the_datasets_checker():
    door = verify(randomized_response, Datasets([0, 1], 1), PureDp(1))
    direct = verify_datasets(randomized_response, records=[0, 1], n=1, epsilon=1)
    assert type(door) is VerificationResult and door.verdict is direct.verdict is Verdict.VIOLATED
    assert door.epsilon == direct.epsilon == pytest.approx(math.log(3), rel=1e-15)
    assert (door.witness.p, door.witness.q) == (Fraction(3, 4), Fraction(1, 4))
    short = verify(randomized_response, records=[0, 1], n=1, epsilon=1)  # the short form: the same value
    assert (short.verdict, short.epsilon, short.pairs) == (door.verdict, door.epsilon, door.pairs)


def test_datasets_validate_when_built_and_name_the_fix():
    with pytest.raises(InvalidArgument, match="n=0"):
        Datasets([0, 1], 0)
    with pytest.raises(InvalidArgument, match="appears twice"):
        Datasets([0, 1, 0], 2)
    with pytest.raises(InvalidArgument, match="exchangeable='maybe'"):
        Datasets([0, 1], 2, exchangeable="maybe")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="neighbors"):
        Datasets([0, 1], 2, neighbors="swap")
    assert Datasets(range(3), 2).records == (0, 1, 2)


def test_inputs_are_given_once_and_half_a_short_form_is_named():
    with pytest.raises(InvalidArgument, match="pass the inputs once"):
        verify(randomized_response, Datasets([0, 1], 1), PureDp(1), records=[0, 1], n=1)
    with pytest.raises(InvalidArgument, match="n=None"):
        verify(randomized_response, records=[0, 1], epsilon=1)
    with pytest.raises(InvalidArgument, match="no inputs to check on"):
        verify(randomized_response, epsilon=1)
    with pytest.raises(InvalidArgument, match="inputs must be"):
        verify(randomized_response, 3, PureDp(1))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="pass the claim once"):
        verify(randomized_response, Datasets([0, 1], 1), PureDp(1), epsilon=1)


def test_given_pairs_as_a_list_or_a_value_give_the_pairs_result():
    pairs = [((0,), (1,))]
    door = verify(randomized_response, pairs, ApproximateDp(1, Fraction(1, 10)))
    direct = verify_pairs(randomized_response, pairs=pairs, epsilon=1, delta=Fraction(1, 10))
    assert isinstance(door, PairsResult) and door.verdict is direct.verdict is Verdict.HOLDS
    assert door.delta == direct.delta == pytest.approx(rr_delta(1.0), rel=1e-12)  # 0.0704295 <= 0.1
    value = verify(randomized_response, InputPairs.from_pairs(pairs), ApproximateDp(1, Fraction(1, 10)))
    assert (value.verdict, value.delta) == (door.verdict, door.delta)


def test_claims_that_need_every_dataset_are_refused_on_given_pairs():
    with pytest.raises(InvalidArgument, match="only PureDp and ApproximateDp"):
        verify(randomized_response, [((0,), (1,))], Stability(Fraction(1, 2)))


def test_the_input_constructors_are_the_benchmark_helpers():
    patterns = InputPairs.statdp(3)
    # k = 3: 111 against 011, 211, 200, 022, 222, 000 and the X shape 100 / 011; the half/half
    # vector 2^1 0^2 = 200 repeats 200 and is kept once: 7 pairs
    assert patterns.name == "statdp_patterns" and len(patterns) == 7
    every = InputPairs.query_vectors(2, m=1)
    assert every.name == "all_vectors_m1" and len(every) == 6  # {0,1}^2: 4 vectors, all-differ: C(4,2) = 6 pairs


@pytest.mark.parametrize("inputs", [Datasets([0, 1], 1), [((0,), (1,))]], ids=["datasets", "pairs"])
def test_the_profile_is_three_quarters_minus_e_to_the_eps_over_four(inputs):
    result = verify(randomized_response, inputs, PureDp(1), profile=[0, 0.5, 1, math.log(3), 2])
    assert [e for e, _ in result.profile] == [0, 0.5, 1, math.log(3), 2]
    for epsilon, delta in result.profile:
        assert delta == pytest.approx(rr_delta(epsilon), abs=1e-15), epsilon
    around = verify(randomized_response, inputs, PureDp(1), profile=True)  # 25 points to 1.25 ln 3, eps* and 1
    assert len(around.profile) == 27 and around.profile[-1][0] == pytest.approx(1.25 * math.log(3))
    assert verify(randomized_response, inputs, PureDp(1)).profile == ()


def test_public_data_is_one_result_with_a_witness_that_names_its_public_sample():
    private = Datasets([0, 1], 1)
    door = verify(public_randomized_response, PublicData.every_sample([0, 1], 1, private=private), PureDp(1),
                  profile=[0, 1])
    direct = verify_with_public_data(public_randomized_response, public_samples=[(0,), (1,)], records=[0, 1], n=1,
                                     epsilon=1)
    assert isinstance(door, PublicDataResult) and isinstance(door, VerificationResult)
    assert door.verdict is direct.verdict is Verdict.VIOLATED
    assert door.epsilon == pytest.approx(math.log(3)) and door.epsilon_public == (0,)
    assert door.pairs == 2 and door.datasets == 4  # one pair and two datasets per public sample
    assert isinstance(door.witness, PublicWitness) and isinstance(door.witness, Witness)
    assert door.witness.public == (0,) and (door.witness.p, door.witness.q) == (Fraction(3, 4), Fraction(1, 4))
    # the worst delta(eps) over public samples: public (0,)'s 3/4 - e^eps/4 beats (1,)'s 2/3 - e^eps/3
    assert [e for e, _ in door.profile] == [0.0, 1.0]
    assert [d for _, d in door.profile] == pytest.approx([0.5, rr_delta(1.0)], abs=1e-15)
    with pytest.raises(InvalidArgument, match="private=Datasets"):
        PublicData([(0,)], private=[0, 1])  # type: ignore[arg-type]


def test_a_gaussian_mechanism_on_datasets_is_decided_on_every_ordered_pair():
    gaussian = GaussianMechanism(1)
    door = verify(gaussian, Datasets(range(3), 1), ApproximateDp(1, Fraction(1, 10)))
    direct = verify_gaussian(gaussian, records=range(3), n=1, epsilon=1, delta=Fraction(1, 10))
    assert door.verdict is direct.verdict is Verdict.VIOLATED
    assert (door.delta, door.pairs, door.neighbors) == (direct.delta, direct.pairs, direct.neighbors)
    with pytest.raises(InvalidArgument, match="drop exchangeable"):
        verify(gaussian, Datasets(range(3), 1, exchangeable=True), ApproximateDp(1, Fraction(1, 10)))


def test_a_sampler_goes_through_from_sampler_and_a_tail_has_no_profile():
    def geometric_count(dataset, rng):
        k = 0
        while rng.random() < Fraction(1, 2):
            k += 1
        return sum(dataset) + min(k, 2)

    exact = verify(from_sampler(geometric_count, tail=1e-6), Datasets([0, 1], 1), ApproximateDp(2, 1e-3))
    assert exact.unexplored > 0 and exact.verdict in (Verdict.HOLDS, Verdict.VIOLATED, Verdict.UNDECIDED)
    # its delta(eps) is only bounded: no profile (an audit, which always asks for one, must not fail on it)
    profiled = verify(from_sampler(geometric_count, tail=1e-6), Datasets([0, 1], 1), ApproximateDp(2, 1e-3), profile=True)
    assert profiled.profile == () and profiled.verdict is exact.verdict
    with pytest.raises(InvalidArgument, match="unexplored"):  # a measurement asked of analyze is refused
        dpverify.analyze(from_sampler(geometric_count, tail=1e-6), Datasets([0, 1], 1)).profile([1.0])


def test_testing_holds_assert_private_in_both_forms():
    import dpverify.testing

    held = dpverify.testing.assert_private(randomized_response, Datasets([0, 1], 1), PureDp(Fraction(11, 10)))
    assert held.verdict is Verdict.HOLDS
    with pytest.raises(AssertionError, match="VIOLATED"):
        dpverify.testing.assert_private(randomized_response, records=[0, 1], n=1, epsilon=1)


def test_analyze_takes_datasets_and_measures_the_closed_forms():
    analysis = dpverify.analyze(randomized_response, Datasets([0, 1], 1))
    assert analysis.epsilon_star() == pytest.approx(math.log(3), rel=1e-15)
    assert analysis.profile([0.0, 1.0]) == pytest.approx([0.5, rr_delta(1.0)], abs=1e-15)
    short = dpverify.analyze(randomized_response, records=[0, 1], n=1)
    assert short.epsilon_star() == analysis.epsilon_star()
    with pytest.raises(InvalidArgument, match="verify\\(..., profile=True\\)"):
        dpverify.analyze(randomized_response, [((0,), (1,))])  # type: ignore[arg-type]


def test_the_summary_names_given_pairs_once():
    # "1 given pairs pairs" before: the input set's name already ends in "pairs"
    line = verify(randomized_response, [((0,), (1,))], PureDp(2)).summary().splitlines()[1]
    assert line.startswith("  1 given pairs over 2 datasets (black-box)"), line


def test_the_front_doors_probe_of_a_sampler_is_its_first_evaluation_not_an_extra_one(monkeypatch):
    # issue 37 (work done twice): verify probes the first dataset to see whether the sampler draws noise; a
    # discrete sampler's probe is kept and used as that dataset's evaluation. Each dataset is then enumerated
    # twice: the evaluation and the determinism recheck (was three times for the first)
    from dpverify.finite.sampler import sampling

    counted: dict = {}
    original = sampling.SamplerMechanism._enumerate

    def counting(self, dataset):
        counted[dataset] = counted.get(dataset, 0) + 1
        return original(self, dataset)

    monkeypatch.setattr(sampling.SamplerMechanism, "_enumerate", counting)

    def coin(dataset, rng):
        return dataset[0] if rng.random() < Fraction(3, 4) else 1 - dataset[0]

    result = verify(from_sampler(coin), Datasets([0, 1], 1), PureDp(Fraction(11, 10)))
    assert result.verdict is Verdict.HOLDS  # randomized response: ln 3 = 1.0986 <= 1.1
    assert counted == {(0,): 2, (1,): 2}
