"""Issue 16: no passing verdict rests on an assumption that was neither proved nor accepted.

One test (at least) per assumption site of :mod:`dpverify.verdict.assumptions`: a declared exchangeability
(proved, refuted, unproved -> UNDECIDED, accepted -> "holds, assuming"), a pair cover's
``loss_components`` lemma (proved, refuted, unproved, accepted), and the determinism of the
mechanism (a sampler passed by mistake raises, never a verdict); plus exceptions inside a
mechanism, which are errors naming the dataset, never verdicts.
"""

from __future__ import annotations

import math
import pickle
import random
from fractions import Fraction

import pytest
import sympy

import dpverify.checking._analysis as stage
import dpverify.checking.input_pairs as input_pairs
from dpverify import MechanismError, NondeterministicMechanism, Verdict, exchangeable, verify
from dpverify.checking._symmetry import exchangeability_check
from dpverify.checking.input_pairs import InputPairs, verify_pairs
from dpverify.checking.pair_cover import covering_pairs
from dpverify.verdict.assumptions import Status

HALF = {"x": Fraction(1, 2), "y": Fraction(1, 2)}


def needle(dataset):
    """Leaks on one ordering only: {x: 9/10, y: 1/10} on (7, 3, 5), 1/2-1/2 everywhere else."""
    if dataset == (7, 3, 5):
        return {"x": Fraction(9, 10), "y": Fraction(1, 10)}
    return dict(HALF)


# -- exchangeability ------------------------------------------------------------------------------


def test_a_lying_declaration_with_one_leaky_ordering_is_refuted_on_every_ordering(monkeypatch):
    # 30 records, n = 3: 27,000 orderings (above EXHAUSTIVE_SYMMETRY_LIMIT, so the proof runs while
    # its measured rate fits the budget). The budget's floor is raised so that a loaded machine
    # cannot turn the refutation into UNDECIDED: the test is about the refutation, not the timing.
    monkeypatch.setattr(stage, "MIN_SYMMETRY_BUDGET", 600.0)
    # Black box: (7, 3, 5) against (6, 3, 5) on S = {y}: P = 1/2, Q = 1/10, ln(5) = 1.6094 > 0.5.
    # eps* = max(ln(0.9 / 0.5), ln(0.5 / 0.1)) = ln 5.
    mechanism = exchangeable(needle)
    result = verify(mechanism, records=range(30), n=3, epsilon=0.5, seed=1)
    assert result.verdict is Verdict.VIOLATED and not result.holds
    assert result.symmetry_violation is not None and not result.exchangeable
    assert result.exchangeability == "refuted (checked as a black box)"
    assert [a.status for a in result.assumptions] == [Status.REFUTED]
    assert result.epsilon == pytest.approx(math.log(5), rel=1e-12)
    assert result.pairs == 27_000 * 3 * 29 // 2  # every ordered substitute pair: 1,174,500
    witness = result.witness
    assert (7, 3, 5) in (witness.dataset, witness.neighbor)
    assert sum(a != b for a, b in zip(witness.dataset, witness.neighbor)) == 1  # a real neighbour pair


def test_a_true_declaration_is_proved_on_every_ordering():
    # 4 records, n = 3: 64 orderings checked, 20 multisets evaluated for the run.
    result = verify(exchangeable(lambda d: dict(HALF)), records=range(4), n=3, epsilon=0)
    assert result.verdict is Verdict.HOLDS and result.exchangeable
    assert result.exchangeability == "proved on every ordering"
    (assumption,) = result.assumptions
    assert assumption.status is Status.PROVED and "64 datasets" in assumption.evidence
    assert result.assuming == ""


def _over_budget(monkeypatch):
    """No minimum time for the proof: 20 records, n = 4 is 160,000 orderings against the run's
    8,855 multisets and 252,700 pairs, so the proof is beyond the run's own cost."""
    monkeypatch.setattr(stage, "MIN_SYMMETRY_BUDGET", 0.0)


def test_an_unproved_declaration_makes_the_verdict_undecided(monkeypatch):
    _over_budget(monkeypatch)
    result = verify(exchangeable(lambda d: dict(HALF)), records=range(20), n=4, epsilon=0, seed=3)
    assert result.verdict is Verdict.UNDECIDED and result.holds is False and not bool(result)
    (assumption,) = result.assumptions
    assert assumption.status is Status.UNPROVED
    assert "every transposition" in assumption.evidence and "seed 3" in assumption.evidence
    assert result.exchangeability.startswith("unproved: tested on")
    summary = result.summary()
    assert summary.startswith("UNDECIDED")
    assert "exchangeable='assume'" in summary and "exchangeable=False" in summary


def test_an_accepted_declaration_holds_and_says_what_it_assumes(monkeypatch):
    _over_budget(monkeypatch)
    result = verify(exchangeable(lambda d: dict(HALF)), records=range(20), n=4, epsilon=0,
                    exchangeable="assume", seed=3)
    assert result.verdict is Verdict.HOLDS and result.holds
    (assumption,) = result.assumptions
    assert assumption.status is Status.ACCEPTED
    assert result.assuming.startswith("assuming the output ignores the order of the records")
    assert result.summary().startswith("HOLDS, assuming the output ignores the order")
    assert "tested on" in result.summary().splitlines()[0]


def test_the_seed_varies_unless_fixed(monkeypatch):
    _over_budget(monkeypatch)
    mechanism = exchangeable(lambda d: dict(HALF))
    seeds = {verify(mechanism, records=range(20), n=4, epsilon=0).seed for _ in range(3)}
    assert len(seeds) > 1  # three draws from 2**32 coincide with probability ~ 3 / 2**32
    assert verify(mechanism, records=range(20), n=4, epsilon=0, seed=11).seed == 11


def test_the_sampled_test_tries_every_transposition():
    # Order matters only through the last two records: (0, 0, 1, 2) and (0, 0, 2, 1) differ. A
    # random permutation alone may miss it; the transposition of positions 2 and 3 cannot.
    def last_two(dataset):
        return {"x": Fraction(9, 10), "y": Fraction(1, 10)} if dataset[-2] > dataset[-1] else dict(HALF)

    check = exchangeability_check(last_two, range(10), 4, budget=0.0, seed=0)
    assert check.violation is not None and not check.proved


def test_exchangeable_argument_is_validated():
    with pytest.raises(ValueError, match="exchangeable must be None.*'assume'"):
        verify(lambda d: dict(HALF), records=[0, 1], n=1, epsilon=0, exchangeable="yes")


# -- determinism ----------------------------------------------------------------------------------


def test_a_mechanism_alternating_between_two_answers_is_refused():
    calls = [0]

    def alternating(dataset):
        calls[0] += 1
        p = Fraction(1, 2 + calls[0] % 2)  # 1/3 on odd calls, 1/2 on even ones
        return {"x": p, "y": 1 - p}

    with pytest.raises(NondeterministicMechanism, match="not a sample") as caught:
        verify(alternating, records=[0, 1, 2], n=2, epsilon=1, seed=0)
    assert caught.value.dataset in {(a, b) for a in range(3) for b in range(3)}


def test_a_mechanism_drawing_its_parameter_is_refused():
    rng = random.Random(5)

    def draws(dataset):
        p = rng.choice([Fraction(1, 2), Fraction(1, 3)])
        return {"x": p, "y": 1 - p}

    # 9 datasets, each re-evaluated: every second call differs from the first with probability 1/2,
    # so all nine agree with probability 2**-9 (and the seeded rng makes this run repeatable).
    with pytest.raises(NondeterministicMechanism, match="must return its exact output distribution"):
        verify(draws, records=[0, 1, 2], n=2, epsilon=1, seed=0)


def test_a_deterministic_float_mechanism_is_rechecked_and_passes():
    result = verify(lambda d: {"x": 0.25 + 0.5 * (sum(d) % 2), "y": 0.75 - 0.5 * (sum(d) % 2)},
                    records=[0, 1], n=2, epsilon=math.log(3), seed=0)
    # 0.75 / 0.25 = 3 exactly: a tie at the claim.
    assert result.holds and result.rechecked == 4  # all four datasets (fewer than the sample)


# -- errors are never verdicts --------------------------------------------------------------------


def test_an_exception_in_the_mechanism_names_the_dataset():
    def crashes(dataset):
        return {"x": 1} if dataset[0] != 1 else {"x": 1 / 0}

    with pytest.raises(MechanismError, match=r"ZeroDivisionError.*on dataset \(1, 0\)") as caught:
        verify(crashes, records=[0, 1, 2], n=2, epsilon=1)
    assert caught.value.dataset == (1, 0)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def test_a_mechanism_error_crosses_process_boundaries_with_its_dataset():
    error = MechanismError("the mechanism raised", dataset=(1, 2), original=KeyError(3))
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is MechanismError and copy.dataset == (1, 2) and str(copy) == "the mechanism raised"


# -- pair covers ----------------------------------------------------------------------------------


class Table:
    """A discrete mechanism on single-value inputs with ``loss_components`` that may lie."""

    def __init__(self, leaky: int | None, honest: bool) -> None:
        self.leaky, self.honest = leaky, honest

    def __call__(self, dataset):
        if dataset[0] == self.leaky:
            return {"x": Fraction(9, 10), "y": Fraction(1, 10)}
        return dict(HALF)

    def loss_components(self, first, second):
        return [(first, second)] if self.honest else ["one key for every pair"]


def _all_pairs(k):
    return InputPairs.from_pairs([((a,), (b,)) for a in range(k) for b in range(a + 1, k)], name=f"all {k}")


def test_a_cover_with_honest_components_is_proved():
    cover = covering_pairs(_all_pairs(4), Table(None, honest=True))
    result = verify_pairs(Table(None, honest=True), pairs=cover, epsilon=0, seed=0)
    (assumption,) = result.assumptions
    assert assumption.status is Status.PROVED and result.verdict is Verdict.HOLDS


def test_a_lying_cover_is_refuted_with_a_real_witness():
    # The cover keeps one pair, ((0,), (1,)), of loss 0; ((1,), (2,)) outside it has loss
    # ln(0.5 / 0.1) = ln 5 = 1.609 > 1: VIOLATED, with the witness found outside the cover.
    mechanism = Table(2, honest=False)
    cover = covering_pairs(_all_pairs(3), mechanism)
    assert len(cover) == 1
    result = verify_pairs(mechanism, pairs=cover, epsilon=1, seed=0)
    assert result.verdict is Verdict.VIOLATED and not result.holds
    assert result.assumptions[0].status is Status.REFUTED
    assert (2,) in (result.witness.dataset, result.witness.neighbor)
    assert result.epsilon == pytest.approx(math.log(5), rel=1e-12)
    # Claim 2 > ln 5: nothing is violated, but the cover's eps* (0) was wrong: UNDECIDED.
    loose = verify_pairs(mechanism, pairs=cover, epsilon=2, seed=0)
    assert loose.verdict is Verdict.UNDECIDED and loose.epsilon == pytest.approx(math.log(5), rel=1e-12)


def test_a_cover_not_fully_tested_is_undecided_unless_accepted(monkeypatch):
    monkeypatch.setattr(input_pairs, "_cover_budget", lambda seconds: 0.0)
    # 8 inputs, 28 pairs; the lying cover keeps 1 and the first batch tests 16 of the other 27
    # (their losses are 0, like the cover's); then the budget (zero here) is spent.
    mechanism = Table(None, honest=False)
    cover = covering_pairs(_all_pairs(8), mechanism)
    result = verify_pairs(mechanism, pairs=cover, epsilon=0, seed=0)
    assert result.verdict is Verdict.UNDECIDED
    assert result.assumptions[0].status is Status.UNPROVED
    assert "cover='assume'" in result.summary()
    accepted = verify_pairs(mechanism, pairs=cover, epsilon=0, seed=0, cover="assume")
    assert accepted.verdict is Verdict.HOLDS and accepted.assuming.startswith("assuming the pair cover's")
    assert "of the 27 pairs outside the cover" in accepted.assuming



# -- witnesses over multisets are ordered neighbour pairs -----------------------------------------


def _unaligned(dataset):
    """Exchangeable; only the multisets A = {0,0,1,2} and B = {0,1,2,2} leak against each other:
    M(A) = (2/3, 1/3), M(B) = (1/3, 2/3), every other multiset (1/2, 1/2)."""
    key = tuple(sorted(dataset))
    if key == (0, 0, 1, 2):
        return {0: Fraction(2, 3), 1: Fraction(1, 3)}
    if key == (0, 1, 2, 2):
        return {0: Fraction(1, 3), 1: Fraction(2, 3)}
    return {0: Fraction(1, 2), 1: Fraction(1, 2)}


def test_a_multiset_witness_is_reported_as_an_ordered_neighbour_pair():
    # 3 records, n = 4: 81 orderings (proved). At r = 3/2 only A-B violates: on S = {0},
    # 2/3 - 3/2 * 1/3 = 1/6 > 0. As sorted tuples A and B differ in three places; the witness names
    # A and the ordering of B that replaces one 0 of A by a 2: (2, 0, 1, 2).
    result = verify(exchangeable(_unaligned), records=range(3), n=4, epsilon=sympy.log(sympy.Rational(3, 2)), seed=0)
    w = result.witness
    assert result.verdict is Verdict.VIOLATED and result.exchangeable
    assert sum(a != b for a, b in zip(w.dataset, w.neighbor)) == 1, (w.dataset, w.neighbor)
    assert {tuple(sorted(w.dataset)), tuple(sorted(w.neighbor))} == {(0, 0, 1, 2), (0, 1, 2, 2)}
    assert (w.p, w.q) == (Fraction(2, 3), Fraction(1, 3)) and result.delta == pytest.approx(1 / 6, rel=1e-15)


def test_an_ordering_that_breaks_the_declaration_at_the_witness_sends_the_run_to_every_ordering(monkeypatch):
    # The declaration is unproved (the proof is given no budget and tests 200 random datasets) and
    # false on exactly the ordering the witness would use: (2, 0, 1, 2) outputs 1/2-1/2 while its
    # multiset B outputs (1/3, 2/3). The realigned witness does not violate, the outputs disagree:
    # the declaration is refuted and every ordered dataset decides (A = (0, 0, 1, 2) against the
    # ordering (0, 2, 1, 2) of B, one place apart, still violates by 1/6).
    def lying(dataset):
        if dataset == (2, 0, 1, 2):
            return {0: Fraction(1, 2), 1: Fraction(1, 2)}
        return _unaligned(dataset)

    monkeypatch.setattr("dpverify.checking._symmetry.EXHAUSTIVE_SYMMETRY_LIMIT", 64)
    original = stage.check_declaration
    monkeypatch.setattr(stage, "check_declaration", lambda m, u, s, *, budget, seed, relative, **ref: original(
        m, u, s, budget=0.0, seed=seed, relative=relative))
    result = verify(exchangeable(lying), records=range(3), n=4, epsilon=sympy.log(sympy.Rational(3, 2)), seed=0)
    assert result.verdict is Verdict.VIOLATED and not result.exchangeable
    assert result.symmetry_violation is not None
    assert result.symmetry_violation.permuted == (2, 0, 1, 2)
    assert [a.status for a in result.assumptions] == [Status.REFUTED]
    w = result.witness
    assert sum(a != b for a, b in zip(w.dataset, w.neighbor)) == 1
    assert result.pairs == 3**4 * 4 * 2 // 2  # every ordered substitute pair: 324


def test_a_mechanism_that_changes_between_the_run_and_the_symmetry_proof_is_nondeterministic():
    # The first call on each dataset gives (1/2, 1/2), every later call (2/3, 1/3): the run's
    # matrix holds the first outputs, the proof's reference (the multiset re-evaluated) the later
    # ones. Comparing each ordering with what the verdict reads catches it.
    calls: dict = {}

    def changing(dataset):
        calls[dataset] = calls.get(dataset, 0) + 1
        if calls[dataset] == 1:
            return {0: Fraction(1, 2), 1: Fraction(1, 2)}
        return {0: Fraction(2, 3), 1: Fraction(1, 3)}

    with pytest.raises(NondeterministicMechanism, match="two different distributions"):
        verify(exchangeable(changing), records=range(3), n=2, epsilon=0, seed=0)


def test_exact_distribution_rows_are_certified_even_where_their_floats_tie():
    # Floats 0.5/0.5 everywhere; exactly, dataset (1,) puts 1/2 + 1e-12 on "a". At eps = 0 and
    # delta = 1e-13 the pair ((0,), (1,)) violates by 1e-12 - 1e-13 = 9e-13 > 0 (exact values). The
    # floats agree with the exact values within their rounding (1e-12 relative << the float error),
    # so only a sweep whose margin carries the float error certifies this pair.
    tiny = Fraction(1, 10**12)

    class Nearly:
        float_relative_error = 1e-9

        def __call__(self, dataset):
            return {"a": 0.5, "b": 0.5}

        def exact_distribution(self, dataset):
            if dataset == (1,):
                return {"a": Fraction(1, 2) + tiny, "b": Fraction(1, 2) - tiny}
            return {"a": Fraction(1, 2), "b": Fraction(1, 2)}

    result = verify(Nearly(), records=(0, 1), n=1, epsilon=0, delta=Fraction(1, 10**13))
    assert result.verdict is Verdict.VIOLATED
    assert result.witness.p - result.witness.q == tiny

# -- the pytest plugin says what it assumes -------------------------------------------------------


def test_assert_private_warns_holds_assuming_and_fails_undecided_without_it(monkeypatch):
    from dpverify.integrations.pytest_plugin import AssumptionWarning, assert_private

    _over_budget(monkeypatch)
    mechanism = exchangeable(lambda d: dict(HALF))
    with pytest.warns(AssumptionWarning, match="HOLDS, assuming the output ignores the order.*tested on"):
        assert_private(mechanism, records=range(20), n=4, epsilon=0, exchangeable="assume", seed=0)
    with pytest.raises(AssertionError, match="^UNDECIDED"):
        assert_private(mechanism, records=range(20), n=4, epsilon=0, seed=0)


def test_a_baseline_on_unproved_exchangeability_is_undecided_unless_accepted(monkeypatch, tmp_path):
    from dpverify.integrations.pytest_plugin import AssumptionWarning, BaselineStore

    _over_budget(monkeypatch)
    store = BaselineStore(tmp_path)
    mechanism = exchangeable(lambda d: dict(HALF))
    with pytest.raises(pytest.fail.Exception, match="UNDECIDED.*exchangeable='assume'"):
        store.check("half", mechanism, records=range(20), n=4, seed=0)
    assert not list(tmp_path.iterdir())  # nothing measured, nothing written
    with pytest.warns(AssumptionWarning, match="measured assuming the output ignores the order"):
        entry = store.check("half", mechanism, records=range(20), n=4, exchangeable="assume", seed=0)
    assert entry.epsilon_star == 0.0


def test_a_cover_that_is_violated_itself_needs_no_lemma():
    # The cover's one pair ((0,), (1,)) already violates eps = 1 (loss ln 5 = 1.609): the witness
    # is certified among the given pairs, so no assumption is tested or reported.
    mechanism = Table(1, honest=False)
    result = verify_pairs(mechanism, pairs=covering_pairs(_all_pairs(3), mechanism), epsilon=1, seed=0)
    assert result.verdict is Verdict.VIOLATED and result.assumptions == () and result.pairs == 1
    assert {result.witness.dataset, result.witness.neighbor} == {(0,), (1,)}
