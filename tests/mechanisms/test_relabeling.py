"""Tests of dpverify.mechanisms.relabeling: A_Relabel, A_Agnostic and A_Auxiliary (Li–Wang–Ye 2025, Algorithms 1-3).

Hand instances use thresholds over X = {0, 1}: c0 = (1, 1), c1 = (0, 1), c2 = (0, 0) (concept u
labels x with 1 iff x >= u). The fast exchangeable path (relabel_tables + agnostic_table) is
cross-checked against the literal reference (agnostic_reference) on every multiset.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from dpverify.errors import InvalidArgument
from dpverify.finite.records import intervals, labeled_records, thresholds
from dpverify.mechanisms.learners import ConsistentLearner, ExponentialLearner, LeakyLearner
from dpverify.mechanisms.relabeling import (
    SCORES,
    agnostic_reference,
    agnostic_table,
    auxiliary,
    relabel,
    relabel_tables,
    subsample_size,
)

S_HALF = math.exp(-0.5)  # 0.6065306597126334
S_QUARTER = math.exp(-0.25)  # 0.7788007830714049


# -- subsample_size -----------------------------------------------------------------------------


def test_subsample_size_values():
    # k = ceil(eps n): ceil(0.2 * 6) = ceil(1.2) = 2; ceil(0.4 * 5) = ceil(2) = 2 (the float 0.4 is
    # read as 2/5, not as 0.4000000000000000222 which would round up to 3).
    assert subsample_size(0.2, 6) == 2
    assert subsample_size(0.4, 5) == 2
    assert subsample_size(0.1, 10) == 1  # eps n = 1 exactly
    assert subsample_size(1 / 24, 24) == 1
    assert subsample_size(Fraction(1, 3), 6) == 2
    assert subsample_size(Fraction(1, 3), 7) == 3  # ceil(7/3) = ceil(2.33) = 3
    assert subsample_size(1 / 3, 27) == 9


# -- relabel on a hand instance -------------------------------------------------------------------


def test_relabel_hand_instance():
    # thresholds(2), T = ((0, 1),), W = ((1, 0),), eps = 1, |T| = |W| = 1.
    # T_X = {0}: labelings of point 0: label 1 (c0 only) and label 0 (c1, c2; "first" -> c1).
    # H = {c0, c1}. err_W(f) on (1, 0): c0(1) = 1 -> 1, c1(1) = 1 -> 1, c2(1) = 0 -> 0.
    # q(h) = min_f dis_T(h, f) + err_W(f):
    #   h = c0: f = c0: 0 + 1, f = c1: 1 + 1, f = c2: 1 + 0  -> q = 1
    #   h = c1: f = c0: 1 + 1, f = c1: 0 + 1, f = c2: 0 + 0  -> q = 0
    # P(h) ∝ exp(-eps |W| q / 2): c0 -> e^{-1/2}, c1 -> 1.
    # Output T^h: c0 -> ((0, 1),), c1 -> ((0, 0),).
    cc = thresholds(2)
    out = relabel(cc, 1.0, ((0, 1),), ((1, 0),))
    assert set(out) == {((0, 1),), ((0, 0),)}
    assert out[((0, 1),)] == pytest.approx(S_HALF / (1 + S_HALF), rel=1e-15)  # 0.3775406687981454
    assert out[((0, 0),)] == pytest.approx(1 / (1 + S_HALF), rel=1e-15)  # 0.6224593312018546


def test_relabel_never_reads_the_labels_of_T():
    # Same T_X, other label: identical output distribution (Alg. 1 uses only T_X).
    cc = thresholds(2)
    assert relabel(cc, 1.0, ((0, 0),), ((1, 0),)) == relabel(cc, 1.0, ((0, 1),), ((1, 0),))


def test_relabel_bns_score_hand_instance():
    # bns: err_T(h) with Delta = 1/|T|: P(h) ∝ exp(-eps * mistakes_T(h) / 2).
    # T = ((0, 1),): c0 labels 1 (0 mistakes) -> 1; c1 labels 0 (1 mistake) -> e^{-1/2}.
    cc = thresholds(2)
    out = relabel(cc, 1.0, ((0, 1),), ((1, 0),), score="bns")
    assert out[((0, 1),)] == pytest.approx(1 / (1 + S_HALF), rel=1e-15)
    assert out[((0, 0),)] == pytest.approx(S_HALF / (1 + S_HALF), rel=1e-15)


def test_relabel_full_sample_w_score_depends_on_the_representative():
    # full_sample_w: err_S(h) over S = T∘W = ((0, 1), (1, 0)), Delta = 1/|W|: P ∝ exp(-|W| err_S / 2).
    #   c0 = (1, 1): T right, W wrong -> err 1/2 -> e^{-1/4}
    #   c1 = (0, 1): T wrong, W wrong -> err 1   -> e^{-1/2}   ("first" representative of label 0)
    #   c2 = (0, 0): T wrong, W right -> err 1/2 -> e^{-1/4}   ("last" representative of label 0)
    # So this baseline (C8b) reads h off T_X, and the rule changes its output:
    #   first: P(((0,1),)) = e^{-1/4} / (e^{-1/4} + e^{-1/2}) = 1 / (1 + e^{-1/4}) = 0.5621765008857981
    #   last:  P(((0,1),)) = 1/2
    cc = thresholds(2)
    first = relabel(cc, 1.0, ((0, 1),), ((1, 0),), score="full_sample_w")
    last = relabel(cc, 1.0, ((0, 1),), ((1, 0),), score="full_sample_w", representative="last")
    assert first[((0, 1),)] == pytest.approx(1 / (1 + S_QUARTER), rel=1e-15)
    assert last[((0, 1),)] == pytest.approx(0.5, rel=1e-15)


def test_relabel_full_sample_uses_its_own_sensitivity_one_over_n():
    # full_sample: the same err_S(h), Delta = 1/n = 1/2: P ∝ exp(-eps n err_S / 2) = exp(-err_S):
    #   c0: err 1/2 -> e^{-1/2}; c1: err 1 -> e^{-1}; c2: err 1/2 -> e^{-1/2}
    #   first: P(((0,1),)) = e^{-1/2} / (e^{-1/2} + e^{-1}) = 1 / (1 + e^{-1/2}) = 0.6224593312018546
    cc = thresholds(2)
    first = relabel(cc, 1.0, ((0, 1),), ((1, 0),), score="full_sample")
    last = relabel(cc, 1.0, ((0, 1),), ((1, 0),), score="full_sample", representative="last")
    assert first[((0, 1),)] == pytest.approx(1 / (1 + S_HALF), rel=1e-15)
    assert first[((0, 1),)] == pytest.approx(0.6224593312018546, rel=1e-15)
    assert last[((0, 1),)] == pytest.approx(0.5, rel=1e-15)


def test_relabel_bns_runs_at_privacy_one_whatever_eps():
    # BNS as Li–Wang–Ye 2025 Sec. 3 describes it: the relabeling EM at the constant privacy 1, not at eps:
    # at eps = 0.2 still P ∝ exp(-mistakes_T / 2): 1 / (1 + e^{-1/2}) for the consistent labeling.
    out = relabel(thresholds(2), 0.2, ((0, 1),), ((1, 0),), score="bns")
    assert out[((0, 1),)] == pytest.approx(1 / (1 + S_HALF), rel=1e-15)


def test_relabel_empty_W_is_uniform_over_labelings():
    # |W| = 0 (the no-subsampling mutant's convention): exponent 0, uniform over Pi_C(T_X).
    # T_X = {0, 1} under thresholds(2): labelings (1,1), (0,1), (0,0): 1/3 each.
    out = relabel(thresholds(2), 1.0, ((0, 0), (1, 1)), ())
    assert dict(out) == pytest.approx({((0, 1), (1, 1)): 1 / 3, ((0, 0), (1, 1)): 1 / 3, ((0, 0), (1, 0)): 1 / 3})


def test_relabel_output_keeps_T_order_and_multiplicity():
    # T = ((1, 0), (0, 1), (1, 1)): outputs are (1, h(1)), (0, h(0)), (1, h(1)) in that order.
    out = relabel(thresholds(2), 0.5, ((1, 0), (0, 1), (1, 1)), ((0, 0),))
    assert set(out) == {((1, 1), (0, 1), (1, 1)), ((1, 1), (0, 0), (1, 1)), ((1, 0), (0, 0), (1, 0))}
    assert math.fsum(out.values()) == pytest.approx(1.0, abs=1e-15)


def test_relabel_rejects_unknown_score():
    with pytest.raises(InvalidArgument, match="unknown relabeling score"):
        relabel(thresholds(2), 1.0, ((0, 1),), ((1, 0),), score="nope")


# -- representative rule ------------------------------------------------------------------------


def _middle(concept_class, labeling, candidates):
    return candidates[len(candidates) // 2]


@pytest.mark.parametrize("score", ["agnostic", "bns"])
@pytest.mark.parametrize("cc", [thresholds(3), intervals(3)], ids=["thresholds3", "intervals3"])
def test_representative_rule_does_not_change_relabel(cc, score):
    records = labeled_records(3)
    checked = 0
    for size_t in (1, 2, 3):
        for T in itertools.combinations_with_replacement(records, size_t):
            for W in itertools.combinations_with_replacement(records, 2):
                first = relabel(cc, 0.7, T, W, score=score)
                for rule in ("last", _middle):
                    other = relabel(cc, 0.7, T, W, score=score, representative=rule)
                    assert set(other) == set(first)
                    for outcome in first:
                        assert abs(other[outcome] - first[outcome]) < 1e-15
                checked += 1
    # (6 + 21 + 56) T's x 21 W's
    assert checked == 83 * 21


# -- fast path vs reference ---------------------------------------------------------------------


def _learners(cc):
    return {
        "exponential": ExponentialLearner(cc),
        "leaky": LeakyLearner(cc, 0.1),
        "consistent": ConsistentLearner(cc),
    }


#: The (learner, score) cases of the default run (0.4-0.8 s each): every score and every learner once; the other
#: eight of the 3 x 4 run under -m slow.
DEFAULT_CASES = {("leaky", "full_sample_w"), ("exponential", "bns"), ("consistent", "agnostic"),
                 ("consistent", "full_sample")}


@pytest.mark.parametrize(("learner_name", "score"), [
    pytest.param(learner_name, score, id=f"{learner_name}-{score}",
                 marks=() if (learner_name, score) in DEFAULT_CASES else pytest.mark.slow)
    for learner_name in ["exponential", "leaky", "consistent"] for score in SCORES
])
def test_agnostic_table_equals_reference_on_every_multiset(learner_name, score):
    # thresholds(3), n = 5, eps = 0.4: k = ceil(0.4 * 5) = 2, C(5, 2) = 10 index sets per dataset;
    # 6 records, C(6 + 5 - 1, 5) = 252 multisets, each in three orderings.
    cc = thresholds(3)
    learner = _learners(cc)[learner_name]
    n, eps = 5, 0.4
    k = subsample_size(eps, n)
    assert k == 2
    tables = relabel_tables(cc, eps, n, k, learner, score=score)
    table, probs = agnostic_table(tables, n)
    assert len(table) == 252
    assert probs.shape == (252, len(cc))
    rng = random.Random(f"{learner_name}-{score}")
    worst = 0.0
    for row in range(len(table)):
        records = table.records(row, tables.universe)
        orderings = [(records, "first"), (tuple(rng.sample(records, n)), "first")]
        # The representative rule cannot change A_Agnostic for the agnostic and bns scores.
        orderings.append((tuple(reversed(records)), "first" if score.startswith("full_sample") else "last"))
        for ordered, rule in orderings:
            reference = agnostic_reference(cc, eps, ordered, learner, score=score, representative=rule)
            assert set(reference) <= set(range(len(cc)))
            worst = max(worst, max(abs(float(reference[o]) - probs[row, o]) for o in range(len(cc))))
    assert worst < 1e-12
    assert np.abs(probs.sum(axis=1) - 1).max() < 1e-12


@pytest.mark.parametrize("score", SCORES)
def test_agnostic_table_equals_reference_on_intervals(score):
    # A second class: intervals(2) (4 concepts: empty, [0,0], [0,1], [1,1]), n = 4, eps = 1/3:
    # k = ceil(4/3) = 2; 4 records, C(4 + 4 - 1, 4) = 35 multisets.
    cc = intervals(2)
    n, eps = 4, 1 / 3
    for learner in _learners(cc).values():
        tables = relabel_tables(cc, eps, n, subsample_size(eps, n), learner, score=score)
        table, probs = agnostic_table(tables, n)
        assert len(table) == 35
        for row in range(len(table)):
            records = table.records(row, tables.universe)
            for ordered in (records, tuple(reversed(records))):
                reference = agnostic_reference(cc, eps, ordered, learner, score=score)
                assert max(abs(float(reference[o]) - probs[row, o]) for o in range(len(cc))) < 1e-12


def test_agnostic_table_equals_reference_without_subsampling():
    # k = n (the no-subsampling mutant): W is empty and both paths relabel uniformly.
    cc = thresholds(2)
    n = 3
    learner = ExponentialLearner(cc)
    tables = relabel_tables(cc, 0.3, n, n, learner)
    table, probs = agnostic_table(tables, n)
    for row in range(len(table)):
        reference = agnostic_reference(cc, 0.3, table.records(row, tables.universe), learner, k=n)
        assert max(abs(float(reference[o]) - probs[row, o]) for o in range(len(cc))) < 1e-12


def test_agnostic_reference_hand_value_without_subsampling():
    # thresholds(2), S = ((0, 1),), k = n = 1, W empty: relabel uniform over the two labelings of
    # point 0: T^h = ((0, 1),) or ((0, 0),), 1/2 each. Consistent learner: ((0, 1),) -> c0,
    # ((0, 0),) -> c1 (first concept with label 0 at 0). So P(c0) = P(c1) = 1/2.
    out = agnostic_reference(thresholds(2), 1.0, ((0, 1),), ConsistentLearner(thresholds(2)), k=1)
    assert dict(out) == pytest.approx({0: 0.5, 1: 0.5})


def test_agnostic_reference_hand_value_with_subsampling():
    # thresholds(2), S = ((0, 1), (1, 0)), eps = 1/2: k = ceil(1/2 * 2) = 1, two index sets (1/2 each).
    # I = {0}: T = ((0,1),), W = ((1,0),): P(T^h = ((0,1),)) = e^{-1/2}/(1+e^{-1/2})  (hand instance
    #          above with eps = 1/2: exponent -eps |W| q / 2 = -q/4, q = 1 vs 0: e^{-1/4}/(1+e^{-1/4})).
    #          Consistent learner: ((0,1),) -> c0; ((0,0),) -> c1.
    # I = {1}: T = ((1,0),), W = ((0,1),). err_W: c0 0, c1 1, c2 1. Labelings of point 1:
    #          label 1 (c0 first), label 0 (c2). q(c0) = min(0+0, 0+1, 1+1) = 0;
    #          q(c2) = min(1+0, 1+1, 0+1) = 1. Weights 1 and e^{-1/4}.
    #          Consistent: ((1,1),) -> c0; ((1,0),) -> c2.
    # P(c0) = 1/2 * e^{-1/4}/(1+e^{-1/4}) + 1/2 * 1/(1+e^{-1/4}) = 1/2
    # P(c1) = 1/2 * 1/(1+e^{-1/4}) = 0.28108825044289906;  P(c2) = 1/2 * e^{-1/4}/(1+e^{-1/4}).
    cc = thresholds(2)
    out = agnostic_reference(cc, 0.5, ((0, 1), (1, 0)), ConsistentLearner(cc))
    assert out[0] == pytest.approx(0.5, rel=1e-15)
    assert out[1] == pytest.approx(0.5 / (1 + S_QUARTER), rel=1e-15)
    assert out[2] == pytest.approx(0.5 * S_QUARTER / (1 + S_QUARTER), rel=1e-15)


def test_agnostic_reference_rejects_bad_k():
    cc = thresholds(2)
    with pytest.raises(InvalidArgument, match="subsample size k"):
        agnostic_reference(cc, 0.1, ((0, 1), (1, 0)), ExponentialLearner(cc), k=3)
    with pytest.raises(InvalidArgument, match="subsample size k"):
        agnostic_reference(cc, 0.1, ((0, 1), (1, 0)), ExponentialLearner(cc), k=0)


def test_relabel_tables_rows_are_distributions():
    cc = thresholds(3)
    tables = relabel_tables(cc, 0.2, 6, 2, LeakyLearner(cc, 0.05))
    assert len(tables.t_table) == math.comb(6 + 2 - 1, 2)  # 21 sub-multisets of size 2
    assert len(tables.w_table) == math.comb(6 + 4 - 1, 4)  # 126 rests of size 4
    for out in tables.outputs:
        assert out.shape == (126, 4)
        assert (out >= 0).all()
        assert np.abs(out.sum(axis=1) - 1).max() < 1e-12


# -- A_Auxiliary ---------------------------------------------------------------------------------


def test_auxiliary_hand_instance():
    # thresholds(2), U = ((0, 1),), V = ((1, 1),), W = ((0, 0),), eps = 1, consistent learner.
    # T = U∘V, T_X = {0, 1}: H = {c0, c1, c2}. err_W on (0, 0): c0 1, c1 0, c2 0.
    # |T| = 2, |W| = 1. q(c0) = min(0 + 1, 1/2 + 0, 1 + 0) = 1/2; q(c1) = 0; q(c2) = 0.
    # Weights exp(-q/2): c0 e^{-1/4}, c1 1, c2 1; Z = 2 + e^{-1/4}.
    # A(T^h) = h (first consistent on both points). hbar = first concept consistent with V^h:
    #   h = c0: V^h = (1, 1) -> c0; c0 ⊕ c0 = (0, 0)
    #   h = c1: V^h = (1, 1) -> c0; c1 ⊕ c0 = (0,1) ⊕ (1,1) = (1, 0)
    #   h = c2: V^h = (1, 0) -> c2; c2 ⊕ c2 = (0, 0)
    # P((0, 0)) = (1 + e^{-1/4}) / (2 + e^{-1/4}) = 0.6401325326766674; P((1, 0)) = 1 / (2 + e^{-1/4}).
    cc = thresholds(2)
    out = auxiliary(cc, 1.0, ((0, 1),), ((1, 1),), ((0, 0),), ConsistentLearner(cc))
    assert set(out) == {(0, 0), (1, 0)}
    assert out[(0, 0)] == pytest.approx((1 + S_QUARTER) / (2 + S_QUARTER), rel=1e-15)
    assert out[(1, 0)] == pytest.approx(1 / (2 + S_QUARTER), rel=1e-15)


@pytest.mark.parametrize("learner_name", ["exponential", "leaky", "consistent"])
def test_auxiliary_outputs_are_bit_tuples_summing_to_one(learner_name):
    cc = thresholds(3)
    learner = _learners(cc)[learner_name]
    records = labeled_records(3)
    for U in itertools.combinations_with_replacement(records, 1):
        for V in itertools.combinations_with_replacement(records, 1):
            out = auxiliary(cc, 1 / 3, U, V, ((1, 1), (2, 0), (0, 0), (2, 1)), learner)
            assert math.fsum(float(p) for p in out.values()) == pytest.approx(1.0, abs=1e-12)
            for outcome in out:
                assert isinstance(outcome, tuple) and len(outcome) == 3
                assert all(bit in (0, 1) for bit in outcome)


@pytest.mark.parametrize(("learner_name", "step"), [
    ("exponential", 6), ("consistent", 6),  # every 6th W: the default run (~0.3 s each)
    *(pytest.param(name, 1, marks=pytest.mark.slow) for name in ("exponential", "leaky", "consistent")),
])
def test_auxiliary_with_a_memo_equals_without(learner_name, step):
    # One memo shared by every (U, V, W) (as C4's audit shares it) against no memo: every U, V of
    # one record and every step-th W of two over X = {0, 1, 2} (6 * 6 * 21 calls at step 1), then
    # |U| = |V| = 2 (every 7th V) in the same memo (its keys carry |U|); the same floats, exactly.
    cc = thresholds(3)
    learner = _learners(cc)[learner_name]
    records = labeled_records(3)
    memo: dict = {}
    for size_u in (1, 2):
        for U in itertools.combinations_with_replacement(records, size_u):
            for V in list(itertools.combinations_with_replacement(records, size_u))[:: 1 if size_u == 1 else 7]:
                for W in list(itertools.combinations_with_replacement(records, 2))[::step]:
                    got = auxiliary(cc, 1 / 3, U, V, W, learner, memo=memo)
                    assert dict(got) == dict(auxiliary(cc, 1 / 3, U, V, W, learner))
    assert 0 < len(memo) < 6 * 6 * 21 // step


def test_distinct_rows_expand_back_on_both_paths():
    from dpverify.mechanisms.relabeling import _distinct_rows

    counts = np.array([[2, 0, 1], [0, 0, 0], [2, 0, 1], [1, 2, 2], [0, 0, 0]])
    distinct, inverse = _distinct_rows(counts, 2)  # keys in base 3: 2 + 0*3 + 1*9 = 11, 0, 11, 1 + 6 + 18 = 25, 0
    assert len(distinct) == 3
    np.testing.assert_array_equal(distinct[inverse], counts)
    wide = np.array([[40, 0] * 10, [0, 40] * 10, [40, 0] * 10])  # 41**20 > 2**62: the np.unique(axis=0) path
    distinct, inverse = _distinct_rows(wide, 40)
    assert len(distinct) == 2
    np.testing.assert_array_equal(distinct[inverse], wide)
    assert _distinct_rows(np.zeros((0, 3), dtype=np.int64), 5)[0].shape == (0, 3)


def _same_tables(one, other) -> None:
    assert len(one.outputs) == len(other.outputs)
    assert all(np.array_equal(a, b) for a, b in zip(one.outputs, other.outputs))
    np.testing.assert_array_equal(one.distinct[0], other.distinct[0])
    np.testing.assert_array_equal(one.distinct[1], other.distinct[1])
    np.testing.assert_array_equal(one.distinct_logs, other.distinct_logs)  # -inf where an output is 0


@pytest.mark.parametrize("executor", [None, "processes"])
@pytest.mark.parametrize(("score", "learner_name"), [("agnostic", "exponential"), ("agnostic", "leaky"),
                                                     ("bns", "consistent"), ("full_sample_w", "exponential")])
def test_tables_computed_on_workers_into_one_array_are_the_serial_tables(executor, score, learner_name):
    from dpverify.mechanisms.relabeling import start_relabel_tables
    from dpverify.parallel.executors import open_executor

    # thresholds(3), n = 7, eps = 0.4: k = ceil(2.8) = 3; 6 records, C(8, 3) = 56 sets t; the agnostic
    # score shares one output per point multiset t_X: C(3 + 3 - 1, 3) = 10 distinct outputs.
    cc = thresholds(3)
    learner = _learners(cc)[learner_name]
    serial = relabel_tables(cc, 0.4, 7, 3, learner, score=score)
    with open_executor(executor) as runner:
        layout, finish = start_relabel_tables(cc, 0.4, 7, 3, learner, runner, score=score, logs=True)
        assert len(layout.of_t) == 56 and layout.of_t.max() + 1 == (10 if score == "agnostic" else 56)
        shared = finish()
    _same_tables(serial, shared)
    assert not shared.distinct[1].flags.writeable and not shared.distinct_logs.flags.writeable


def test_tables_on_workers_refuse_a_learner_whose_outcomes_vary_with_t():
    from dpverify.mechanisms.audits.realizable_to_agnostic import _LabelingLearner
    from dpverify.mechanisms.relabeling import start_relabel_tables
    from dpverify.parallel.executors import open_executor

    # C2's learner outputs the relabeling itself: one outcome per labeling of t's points, so t = {0}
    # has 2 outcomes and t = {0, 1} (on thresholds) 3: no common array. Serially they stay apart.
    cc = thresholds(3)
    with open_executor("processes") as runner:
        _, finish = start_relabel_tables(cc, 0.4, 5, 2, _LabelingLearner(), runner)
        with pytest.raises(InvalidArgument, match="differ in shape"):
            finish()
    shapes = {out.shape for out in relabel_tables(cc, 0.4, 5, 2, _LabelingLearner()).outputs}
    assert {shape[1] for shape in shapes} == {2, 3}
