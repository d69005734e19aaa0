"""Samplers with traced continuous noise through the front door: verdicts, figures and witnesses
against closed forms written here, the real-arithmetic assumption, the rounding of float constants,
and the total-mass invariant (a mutant that drops a branch must be caught)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpverify.finite.sampler._noise_draws as noise_draws
import dpverify.finite.sampler.sampling as sampling
from dpverify import ApproximateDp, Datasets, PureDp, analyze, from_sampler, verify
from dpverify.checking.input_pairs import InputPairs
from dpverify.densities.continuous import MixedOutput, ProductOutput
from dpverify.densities.traced import REAL, TracedMechanism
from dpverify.errors import InvalidArgument, MechanismError
from dpverify.mechanisms.noisy_max import ReportNoisyMax
from dpverify.verdict.engine import Verdict


def laplace_cdf(x: float, scale: float) -> float:
    """P(Lap(scale) <= x), written out: e^(x/b)/2 below 0, 1 - e^(-x/b)/2 above."""
    return math.exp(x / scale) / 2 if x < 0 else 1 - math.exp(-x / scale) / 2


def _module_level_noisy_max(dataset, rng):  # module level: picklable for a process pool
    return int(np.argmax(np.asarray(dataset) + rng.laplace(scale=2 / 0.7, size=len(dataset))))


def release(scale):
    def sampler(dataset, rng):
        return dataset[0] + rng.laplace(scale=scale)

    return sampler


# -- plain user code ----------------------------------------------------------------------------------


def test_the_laplace_mechanism_holds_at_its_scale_under_real_arithmetic():
    result = verify(from_sampler(release(2.0)), Datasets([0, 1], n=1), PureDp(0.5))
    assert result.verdict is Verdict.HOLDS and result.epsilon == 0.5  # sensitivity 1 / scale 2
    assert [a.name for a in result.assumptions] == ["real arithmetic"]
    assert "assuming real arithmetic" in result.summary() and "Mironov 2012" in result.summary()


def test_the_laplace_mechanism_at_half_the_scale_is_violated_with_a_real_witness():
    result = verify(from_sampler(release(1.0)), Datasets([0, 1], n=1), PureDp(0.5))
    assert result.verdict is Verdict.VIOLATED and result.epsilon == pytest.approx(1.0, rel=1e-12)
    witness = result.witness
    assert {witness.dataset, witness.neighbor} == {(0,), (1,)}
    # S is an interval of the output; its probabilities under Lap(1) centred at the two datasets' values
    (text,) = witness.output_set
    low, high = (float(x) for x in text.split("[")[1].rstrip("]").split(", "))
    center_p, center_q = witness.dataset[0], witness.neighbor[0]
    p = laplace_cdf(high - center_p, 1.0) - laplace_cdf(low - center_p, 1.0)
    q = laplace_cdf(high - center_q, 1.0) - laplace_cdf(low - center_q, 1.0)
    assert float(witness.p) == pytest.approx(p, rel=1e-12) and float(witness.q) == pytest.approx(q, rel=1e-12)
    assert witness.p > math.exp(0.5) * witness.q


def test_an_approximate_claim_reads_delta_of_the_laplace_mechanism():
    # delta(eps) of Lap(2) at sensitivity 1: 1 - e^((eps - 1/2)/2); at eps = 0.4: 1 - e^-0.05 = 0.0487706
    result = verify(from_sampler(lambda d, rng: sum(d) + rng.laplace(scale=2.0)), Datasets([0, 1], n=2),
                    ApproximateDp(0.4, 0.05))
    assert result.verdict is Verdict.HOLDS and result.delta == pytest.approx(1 - math.exp(-0.05), rel=1e-9)
    assert verify(from_sampler(lambda d, rng: sum(d) + rng.laplace(scale=2.0)), Datasets([0, 1], n=2),
                  ApproximateDp(0.4, 0.048)).verdict is Verdict.VIOLATED


def test_a_value_or_false_output_is_atoms_and_a_density():
    def above_one(dataset, rng):
        value = dataset[0] + rng.laplace(scale=2.0)
        return value if value > 1 else False

    # the atom False: P = F(1 - q) (ratio at most e^(1/2)); the density f(v - q) above 1: ratio e^(1/2)
    mechanism = TracedMechanism(from_sampler(above_one))
    assert mechanism.probe((0,))
    output = mechanism.output_density((0,))
    assert isinstance(output, MixedOutput) and set(output.atoms) == {False} and set(output.densities) == {REAL}
    assert output.atoms[False].to_float() == pytest.approx(laplace_cdf(1, 2.0), rel=1e-15)
    assert verify(from_sampler(above_one), Datasets([0, 1], n=1), PureDp(0.5)).verdict is Verdict.HOLDS
    assert verify(from_sampler(above_one), Datasets([0, 1], n=1), PureDp(0.49)).verdict is Verdict.VIOLATED


def test_a_noisy_vector_without_comparisons_is_a_product():
    def histogram(dataset, rng):
        return np.asarray(dataset) + rng.laplace(scale=2.0, size=len(dataset))

    mechanism = TracedMechanism(from_sampler(histogram))
    assert mechanism.probe((0, 1)) and isinstance(mechanism.output_density((0, 1)), ProductOutput)
    # one record changes one bin by 1 here (substitute on n = 2 changes one coordinate by 1): eps* = 1/2
    result = verify(from_sampler(histogram), Datasets([0, 1], n=2), PureDp(0.5))
    assert result.verdict is Verdict.HOLDS and result.epsilon == pytest.approx(0.5)


def test_report_noisy_max_on_datasets_equals_the_hand_written_mechanism():
    def noisy_max(dataset, rng):
        return int(np.argmax(np.asarray(dataset) + rng.laplace(scale=2.0, size=len(dataset))))

    traced = verify(from_sampler(noisy_max), Datasets([0, 1], n=3), PureDp(1))
    hand = verify(ReportNoisyMax(1), Datasets([0, 1], n=3), PureDp(1))
    assert traced.verdict is hand.verdict is Verdict.HOLDS
    assert traced.epsilon == pytest.approx(hand.epsilon, rel=1e-12)
    values = TracedMechanism(from_sampler(noisy_max)).exact_values((1, 0, 0))
    assert values == ReportNoisyMax(1).exact_values((1, 0, 0))  # the same ExpSums, exactly


def test_a_finite_traced_mechanism_is_a_distribution_when_called():
    mechanism = TracedMechanism(from_sampler(lambda d, rng: d[0] + rng.laplace(scale=1) > 0))
    distribution = mechanism((0,))
    assert distribution[True] == pytest.approx(0.5) and distribution[False] == pytest.approx(0.5)


# -- floats: a claim tight only up to the binary reading of the constants --------------------------------


def test_a_float_scale_tight_only_up_to_its_reading_is_within_rounding_never_a_leak():
    # 1/0.07 as a double is below 100/7, so eps* = 1/double(1/0.07) exceeds 7/100 by about 1e-17
    assert Fraction(1 / 0.07) < 1 / Fraction(7, 100)
    result = verify(from_sampler(release(1 / 0.07)), Datasets([0, 1], n=1), PureDp(Fraction(7, 100)))
    assert result.verdict is Verdict.HOLDS_WITHIN_ROUNDING and result.holds and result.witness is None
    assert "within rounding" in result.summary()


def test_a_leak_beyond_rounding_is_still_a_violation():
    result = verify(from_sampler(release(0.99 / 0.07)), Datasets([0, 1], n=1), PureDp(Fraction(7, 100)))
    assert result.verdict is Verdict.VIOLATED and result.witness is not None


# -- invariants -------------------------------------------------------------------------------------------


def test_a_path_lost_is_caught_by_the_total(monkeypatch):
    # the mutant: the search drops the traced paths ending in 1 (mass lost, nothing compensates it)
    original = sampling._Search._add

    def losing(self, output, indices, signatures):
        if output == 1 and self.rng._noise.variables:
            return
        original(self, output, indices, signatures)

    monkeypatch.setattr(sampling._Search, "_add", losing)
    with pytest.raises(AssertionError, match="not exactly 1"):
        verify(from_sampler(_module_level_noisy_max), InputPairs.statdp(3), PureDp(1))


def _programs():
    def svt(dataset, rng):
        rho = rng.laplace(scale=2)
        answers = []
        for q in dataset:
            above = q + rng.laplace(scale=4) >= Fraction(1, 2) + rho
            answers.append(bool(above))
            if above:
                break
        return tuple(answers)

    def order(dataset, rng):
        return tuple(int(i) for i in np.argsort(np.asarray(dataset) + rng.exponential(2, size=len(dataset))))

    def clipped(dataset, rng):
        value = np.clip(sum(dataset) + rng.laplace(), 0, 2)
        return bool(value > 1), bool(abs(value - 1) > Fraction(1, 2))

    return [_module_level_noisy_max, svt, order, clipped]


@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.__name__)
def test_pruning_drops_only_branches_of_probability_zero(program, monkeypatch):
    # the naive reference: every branch kept (no pruning, no implied comparison skipped); the pruned
    # tracer must give exactly the same probabilities (an impossible branch integrates to 0)
    for dataset in [(0, 1, 1), (1, 0, 2)]:
        pruned = TracedMechanism(from_sampler(program)).exact_values(dataset)
        with monkeypatch.context() as patched:
            patched.setattr(noise_draws.NoiseDraws, "_possible", lambda self, extra: True)
            naive = TracedMechanism(from_sampler(program)).exact_values(dataset)
        assert pruned == naive


def test_outputs_of_two_forms_are_refused():
    def sometimes(dataset, rng):
        value = dataset[0] + rng.laplace()
        return value if dataset[0] else value > 0

    with pytest.raises(MechanismError, match="one mechanism's outputs must have one form"):
        verify(from_sampler(sometimes), Datasets([0, 1], n=1), PureDp(1))


def test_two_noisy_numbers_after_a_comparison_are_refused():
    def both(dataset, rng):
        x, y = rng.laplace(size=2)
        return (x, y) if x > y else (y, x)

    with pytest.raises(MechanismError, match="only one released real number per output"):
        verify(from_sampler(both), Datasets([0, 1], n=1), PureDp(1))


def test_analyze_measures_finite_traced_outputs_and_refuses_densities():
    def noisy_max(dataset, rng):
        return int(np.argmax(np.asarray(dataset) + rng.laplace(scale=2.0, size=len(dataset))))

    analysis = analyze(from_sampler(noisy_max), Datasets([0, 1], n=3))
    assert analysis.epsilon_star() == pytest.approx(verify(ReportNoisyMax(1), Datasets([0, 1], n=3), PureDp(1)).epsilon)
    with pytest.raises(InvalidArgument, match="releases noisy real numbers"):
        analyze(from_sampler(release(1.0)), Datasets([0, 1], n=1))


def test_processes_give_the_serial_verdict():
    serial = verify(from_sampler(_module_level_noisy_max), InputPairs.statdp(4), PureDp(0.7))
    pooled = verify(from_sampler(_module_level_noisy_max), InputPairs.statdp(4), PureDp(0.7), executor="processes")
    assert (pooled.verdict, pooled.epsilon) == (serial.verdict, serial.epsilon)


# -- mixed programs: finite draws and noise in one program ------------------------------------------------


def laplace_tail(t: float, scale: float) -> float:
    """P(Lap(scale) > t)."""
    return 1 - laplace_cdf(t, scale)


def test_a_coin_before_the_noise_weights_its_paths():
    def coin_then_noise(dataset, rng):
        if rng.random() < Fraction(1, 2):
            return False
        return bool(dataset[0] + rng.laplace(scale=1) > Fraction(1, 2))

    # P(True | q) = 1/2 P(Lap(1) > 1/2 - q): e^(-1/2)/4 at q = 0, (1 - e^(-1/2)/2)/2 at q = 1
    values = TracedMechanism(from_sampler(coin_then_noise)).exact_values((1,))
    assert values[True].to_float() == pytest.approx((1 - math.exp(-0.5) / 2) / 2, rel=1e-15)
    result = verify(from_sampler(coin_then_noise), Datasets([0, 1], n=1), PureDp(1))
    # the worst event is True: (1 - e^(-1/2)/2) / (e^(-1/2)/2) = 2 e^(1/2) - 1
    assert result.epsilon == pytest.approx(math.log(2 * math.exp(0.5) - 1), rel=1e-12)


def test_subsampling_then_a_noisy_count_is_the_hypergeometric_mixture():
    def subsampled(dataset, rng):
        chosen = rng.choice(len(dataset), size=2, replace=False)
        count = sum(dataset[i] for i in chosen)
        return bool(count + rng.laplace(scale=2) > Fraction(3, 2))

    # (1, 1, 0): the sample holds two ones with probability 1/3, one with 2/3
    expected = laplace_tail(1.5 - 2, 2.0) / 3 + 2 * laplace_tail(1.5 - 1, 2.0) / 3
    values = TracedMechanism(from_sampler(subsampled)).exact_values((1, 1, 0))
    assert values[True].to_float() == pytest.approx(expected, rel=1e-14)


# -- Gaussian noise: decided where the Gaussian mechanism's decision applies ------------------------------


def _gaussian_vector(dataset, rng):
    return np.asarray(dataset, dtype=float) + rng.normal(scale=2.0, size=len(dataset))


@pytest.mark.parametrize("claim", [ApproximateDp(1, Fraction(1, 1000)), ApproximateDp(1, Fraction(1, 100)), PureDp(5)])
def test_a_released_gaussian_vector_is_the_gaussian_mechanism(claim):
    from dpverify.mechanisms.gaussian import GaussianMechanism

    traced = verify(from_sampler(_gaussian_vector), InputPairs.statdp(3), claim)
    hand = verify(GaussianMechanism(2), InputPairs.statdp(3), claim)
    assert (traced.verdict, traced.epsilon) == (hand.verdict, hand.epsilon)
    assert traced.delta == pytest.approx(hand.delta, rel=1e-12)
    assert [a.name for a in traced.assumptions] == ["real arithmetic"]


def test_delta_of_the_traced_gaussian_is_balle_and_wangs():
    # Delta = 1, sigma = 2, eps = 1: Phi(1/4 - 2) - e Phi(-1/4 - 2) (Balle and Wang 2018, Theorem 8)
    phi = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    expected = phi(0.25 - 2) - math.e * phi(-0.25 - 2)
    result = verify(from_sampler(_gaussian_vector), Datasets([0, 1], n=2), ApproximateDp(1, Fraction(1, 100)))
    assert result.verdict is Verdict.HOLDS and result.delta == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "program, message",
    [
        (lambda d, rng: d[0] + rng.normal() > 0, "compared a value involving Gaussian noise"),
        (lambda d, rng: int(np.argmax(np.asarray(d) + rng.normal(size=2))), "argmax of values involving Gaussian"),
        (lambda d, rng: (d[0] + rng.normal(), d[0] + rng.normal(scale=2.0)), "standard deviations"),
        (lambda d, rng: d[0] + rng.normal() + rng.laplace(), "decided only as the Gaussian mechanism"),
    ],
)
def test_gaussian_noise_elsewhere_is_refused_with_the_reason(program, message):
    with pytest.raises(MechanismError, match=message):
        verify(from_sampler(program), Datasets([0, 1], n=1), ApproximateDp(1, Fraction(1, 100)))


def test_pythons_sorted_equals_numpys_argsort_exactly():
    # sorted() compares pairs as Timsort goes (a < b, c < b, then a < c makes a < b redundant: a cycle
    # of comparisons, reduced to the chain it implies); argsort chooses the order element by element
    def by_sorted(dataset, rng):
        noisy = [q + rng.laplace(scale=2.0) for q in dataset]
        return tuple(sorted(range(len(dataset)), key=lambda i: noisy[i]))

    def by_argsort(dataset, rng):
        return tuple(int(i) for i in np.argsort(np.asarray(dataset) + rng.laplace(scale=2.0, size=len(dataset))))

    for dataset in [(1, 0, 0, 2), (0, 3, 1, 1)]:
        first = TracedMechanism(from_sampler(by_sorted)).exact_values(dataset)
        second = TracedMechanism(from_sampler(by_argsort)).exact_values(dataset)
        assert len(first) == 24 and first == second


# -- found by fuzzing against Monte Carlo (each once wrong or a crash) --------------------------------------


def test_sorting_after_a_comparison_or_with_constants_and_repeats():
    def compare_then_sort(dataset, rng):
        v = rng.laplace(0, 1.0, size=2)
        return int(v[0] > v[1]), tuple(int(i) for i in np.argsort(v))

    def above_a_constant(dataset, rng):  # [X0, -1] with X0 > 0: always (1, 0)
        return tuple(int(i) for i in np.argsort(rng.exponential(1.0, size=2) * np.array([1, 0]) - np.array([0, 1])))

    def one_variable_twice(dataset, rng):  # equal values keep their index order
        return tuple(int(i) for i in np.argsort(rng.laplace(0, 1.0, size=1)[[0, 0]]))

    half = Fraction(1, 2)
    assert {o: p.to_float() for o, p in TracedMechanism(from_sampler(compare_then_sort)).exact_values((0,)).items()} \
        == {(1, (1, 0)): half, (0, (0, 1)): half}
    assert list(TracedMechanism(from_sampler(above_a_constant)).exact_values((0,))) == [(1, 0)]
    assert list(TracedMechanism(from_sampler(one_variable_twice)).exact_values((0,))) == [(0, 1)]


def test_a_running_maximum_from_minus_infinity_is_report_noisy_max():
    def running(dataset, rng):
        best, arg = -np.inf, -1
        for i, q in enumerate(dataset):
            value = q + rng.laplace(0, 1.0)
            if value > best:
                best, arg = value, i
        return arg

    q = (0, 1, Fraction(1, 2))
    traced = TracedMechanism(from_sampler(running)).exact_values(q)
    hand = ReportNoisyMax(2, scale_factor=2).exact_values(q)  # scale 2/2 = 1
    assert {o: p.to_float() for o, p in traced.items()} == pytest.approx({o: p.to_float() for o, p in hand.items()},
                                                                         rel=1e-14)


def test_a_scale_zero_draw_is_numpys_float_loc():
    assert from_sampler(lambda d, rng: rng.laplace(d[0], 0))((1,)) == from_sampler(lambda d, rng: 1.0)((1,))


def test_floor_division_of_noise_is_refused_by_name():
    with pytest.raises(MechanismError, match=r"the floor division \(//\)"):
        from_sampler(lambda d, rng: rng.laplace() // 1).enumerate((0,))


def test_numpys_unstable_order_of_equal_values_beyond_16_is_refused_unless_stable():
    def sorted_with_ties(dataset, rng):
        values = np.concatenate([np.zeros(17), rng.laplace(size=1)])
        return int(np.argsort(values, kind=None)[-1])

    with pytest.raises(MechanismError, match="kind='stable'"):
        from_sampler(sorted_with_ties).enumerate((0,))


# -- public data: a sampler (public, dataset, rng) ----------------------------------------------------------


def test_a_sampler_on_public_data_is_enumerated_per_public_sample_and_integrated():
    from dpverify import PublicData

    def count_above(public, dataset, rng):
        return bool(sum(dataset) + rng.laplace(scale=2.0) > sum(public))

    inputs = PublicData.every_sample([0, 1], 1, private=Datasets([0, 1], n=2))
    # a count of sensitivity 1 against a threshold, Lap(2): P(above) = 1/2 at count = threshold and
    # e^(-1/2)/2 one below: the worst ratio is (1/2) / (e^(-1/2)/2) = e^(1/2) on the event False
    result = verify(from_sampler(count_above), inputs, PureDp(0.5))
    assert result.holds and result.epsilon == pytest.approx(0.5, rel=1e-12)
    assert [a.name for a in result.assumptions] == ["real arithmetic"]
    assert verify(from_sampler(count_above), inputs, PureDp(0.4)).verdict is Verdict.VIOLATED


def test_a_sampler_on_public_data_without_noise_is_enumerated_and_assumes_nothing():
    from dpverify import PublicData

    def coin(public, dataset, rng):
        return bool(rng.random() < Fraction(1, 4) + Fraction(dataset[0], 2)) if public[0] else bool(rng.random() < 0.5)

    result = verify(from_sampler(coin), PublicData.every_sample([0, 1], 1, private=Datasets([0, 1], n=1)), PureDp(2))
    assert result.holds and result.epsilon == pytest.approx(math.log(3))  # (3/4) / (1/4) on public (1,)
    assert not result.assumptions


def test_a_density_on_public_data_is_refused_naming_the_way():
    from dpverify import PublicData

    def release(public, dataset, rng):
        return dataset[0] + public[0] + rng.laplace(scale=2.0)

    with pytest.raises(MechanismError, match="releases noisy real numbers on public data"):
        verify(from_sampler(release), PublicData.every_sample([0, 1], 1, private=Datasets([0, 1], n=1)), PureDp(1))


# -- Gumbel noise: report noisy max with Gumbel noise is the exponential mechanism ------------------------


def _gumbel_max(dataset, rng):
    return int(np.argmax(np.asarray(dataset) + rng.gumbel(scale=2.0, size=len(dataset))))


def _exponential_mechanism_on_the_answers(dataset):
    # P(i) proportional to exp(eps q_i / (2 Delta)) at eps = 1, Delta = 1: the loss is -q_i
    from dpverify.mechanisms.exponential import exponential_mechanism

    return exponential_mechanism({i: -q for i, q in enumerate(dataset)}, epsilon=1, sensitivity=1)


def test_the_gumbel_argmax_is_the_exponential_mechanism():
    for dataset in [(1, 0, 0), (0, 1, 1), (2, 0, 1)]:
        traced = from_sampler(_gumbel_max)(dataset)
        hand = _exponential_mechanism_on_the_answers(dataset)
        weights = [math.exp(q / 2) for q in dataset]  # softmax of q / scale, scale 2
        for i, weight in enumerate(weights):
            assert traced[i] == pytest.approx(weight / sum(weights), rel=1e-15) == pytest.approx(hand[i], rel=1e-15)
    result = verify(from_sampler(_gumbel_max), Datasets([0, 1], n=3), PureDp(1))
    assert result.holds and result.epsilon == pytest.approx(
        verify(_exponential_mechanism_on_the_answers, Datasets([0, 1], n=3), PureDp(1)).epsilon, rel=1e-12)
    assert [a.name for a in result.assumptions] == ["real arithmetic"]


@pytest.mark.parametrize(
    "program, message",
    [
        (lambda d, rng: rng.gumbel() > 0, "compared a value involving Gumbel noise"),
        (lambda d, rng: rng.gumbel(), "a value of Gumbel noise"),
        (lambda d, rng: int(np.argmin(rng.gumbel(size=2))), "argmin of values involving Gumbel noise"),
        (lambda d, rng: int(np.argmax(rng.gumbel(size=2) * np.array([1, 2]))), "in a form that is not traced"),
    ],
)
def test_gumbel_noise_elsewhere_is_refused(program, message):
    with pytest.raises(MechanismError, match=message):
        from_sampler(program)((0,))
