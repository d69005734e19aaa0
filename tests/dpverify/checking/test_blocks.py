"""Row blocks (dpverify/checking/_blocks.py): every global replace-one pair in exactly one block, in
global order; and verify in blocks gives the whole-matrix verify's figures, verdict and witness."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpverify import verify
from dpverify.checking import _blocks
from dpverify.checking._blocks import BlockPlan, global_pair_index, plan_blocks
from dpverify.finite.pair_sources import SubstitutePairs


def _blocks_pairs(plan: BlockPlan) -> list[np.ndarray]:
    """Each block's pairs as global pair indices, in the block's own (local) order."""
    found = []
    for task in plan.tasks():
        rows = plan.rows(task)
        left, right = SubstitutePairs(plan.z, plan.digits(task[0])).chunk(0, plan.local_pairs(task[0]))
        found.append(global_pair_index(plan.z, plan.n, rows[left], rows[right]))
    return found


@pytest.mark.parametrize(("z", "n", "rows"), [
    (2, 5, 4), (2, 7, 8), (3, 4, 9), (3, 5, 20), (4, 4, 16), (4, 5, 50), (5, 3, 7), (3, 3, 1000), (2, 1, 4),
    (8, 3, 64),
])
def test_every_pair_in_exactly_one_block_in_global_order(z, n, rows):
    plan = plan_blocks(z, n, rows)
    assert all(len(plan.rows(task)) <= max(rows, z) for task in plan.tasks())
    pieces = _blocks_pairs(plan)
    every = np.concatenate(pieces)
    source = SubstitutePairs(z, n)
    # each of the z^(n-1) C(z, 2) n pairs once: 2^4 * 1 * 5 = 80 at z=2, n=5, and so on
    assert every.size == len(source) == z ** (n - 1) * math.comb(z, 2) * n
    assert np.array_equal(np.sort(every), np.arange(len(source)))
    for piece in pieces:  # a block's local order is the global order
        assert np.all(np.diff(piece) > 0)
    # and the index names the very pair: the rows of global pair k are those the block compared
    left, right = source.materialise()
    for task, piece in zip(plan.tasks(), pieces):
        rows_of = plan.rows(task)
        local_left, local_right = SubstitutePairs(z, plan.digits(task[0])).chunk(0, plan.local_pairs(task[0]))
        assert np.array_equal(left[piece], rows_of[local_left])
        assert np.array_equal(right[piece], rows_of[local_right])


def test_plan_of_the_n8_instance():
    # 8 records, n = 8, blocks of 8^6 rows: the low 6 positions in contiguous blocks (64 of them), the top
    # 2 positions with runs of 8^4 = 4096 datasets (8^(8-2-4) = 64 blocks): each dataset evaluated twice
    plan = plan_blocks(8, 8, 1 << 18)
    assert plan.groups == ((2, 8, 0), (0, 2, 4))
    assert len(plan.tasks()) == 128
    assert plan.runs((1, 0, 4096))[:2] == [(4096, 8192), (4096 + 8**6, 4096 + 8**6 + 4096)]
    assert plan.runs((0, 3, 0)) == [(3 * 8**6, 4 * 8**6)]
    assert sum(plan.local_pairs(g) for g, _, _ in plan.tasks()) == 8 * 8**7 * 28  # 469,762,048 pairs


@pytest.mark.parametrize(("left", "right"), [
    (0, 5),   # 0 = 000, 5 = 012 in base 3: two digits differ
    (5, 0),   # backwards
    (2, 3),   # 002 -> 010: a carry, not one digit
    (0, 0),   # the same dataset
    (26, 27),  # past the last dataset
])
def test_a_pair_that_is_no_neighbour_pair_is_refused(left, right):
    with pytest.raises(AssertionError, match="not a replace-one pair"):
        global_pair_index(3, 3, np.array([left]), np.array([right]))


def test_global_pair_index_by_hand():
    # z = 3, n = 2: segments (position 0, shift 1) pairs 0..5, (0, 2) 6..8, (1, 1) 9..14, (1, 2) 15..17.
    # (1, 4) = (01, 11): position 0, shift 1, left 1 -> pair 1; (0, 6) = (00, 20): position 0, shift 2 -> 6;
    # (3, 4) = (10, 11): position 1, shift 1, left digit 0 of run 1 -> 9 + 1 * 2 + 0 = 11
    found = global_pair_index(3, 2, np.array([1, 0, 3]), np.array([4, 6, 4]))
    assert found.tolist() == [1, 6, 11]
    left, right = SubstitutePairs(3, 2).materialise()
    assert (left[[1, 6, 11]].tolist(), right[[1, 6, 11]].tolist()) == ([1, 0, 3], [4, 6, 4])


class TableMechanism:
    """A random mechanism: dataset -> one of a few random rows over ``outcomes`` outcomes (a table by
    a hash of the dataset), so many pairs share rows and tie; ``exact`` rows are Fractions, else
    floats; ``vectorised`` adds ``distributions(datasets)``; ``sparse`` drops outcomes from some rows
    (their columns then appear in the order the datasets first show them)."""

    def __init__(self, seed: int, outcomes: int, distinct: int, *, exact: bool, vectorised: bool, sparse: bool):
        rng = np.random.default_rng(seed)
        weights = rng.integers(1, 12, size=(distinct, outcomes))
        if sparse:
            weights[rng.random((distinct, outcomes)) < 0.3] = 0
            weights[:, 0] += weights.sum(axis=1) == 0
        self.rows = [[Fraction(int(w), int(row.sum())) for w in row] for row in weights]
        self.floats = np.array([[float(p) for p in row] for row in self.rows])
        self.order = rng.permutation(outcomes).tolist()  # outcome labels, not 0..K-1
        self.exact, self.vectorised, self.distinct, self.seed = exact, vectorised, distinct, seed
        self.salt = int(rng.integers(1, 1 << 30))

    def _which(self, codes: np.ndarray) -> np.ndarray:
        weights = np.array([1, 7, 31, 131, 523, 2087, 8363], dtype=np.int64)[: codes.shape[1]]
        return ((codes * weights).sum(axis=1) * self.salt) % 1_000_003 % self.distinct

    def __call__(self, dataset):
        row = self.rows[int(self._which(np.array([dataset]))[0])]
        return {self.order[k]: (p if self.exact else float(p)) for k, p in enumerate(row) if p}

    def __getattr__(self, name):
        if name == "distributions" and self.__dict__.get("vectorised"):
            return self._distributions
        if name == "exact_distribution" and self.__dict__.get("offers_exact"):
            return self._exact_distribution
        raise AttributeError(name)

    def _exact_distribution(self, dataset):
        row = self.rows[int(self._which(np.array([dataset]))[0])]
        return {self.order[k]: p for k, p in enumerate(row) if p}

    def _distributions(self, datasets):
        codes = np.array([list(d) for d in datasets], dtype=np.int64).reshape(len(datasets), -1)
        return self.order, self.floats[self._which(codes)]


def _figures(result):
    return (result.epsilon, result.delta, result.verdict, result.witness, result.certified_pairs,
            result.within_rounding, result.undecided, result.rechecked, result.pairs)


def _both_ways(monkeypatch, mechanism, z, n, epsilon, delta, rows, executor=None):
    answers = []
    for from_rows in (10**12, 1):
        monkeypatch.setattr(_blocks, "BLOCKS_FROM_ROWS", from_rows)
        monkeypatch.setattr(_blocks, "BLOCK_ROWS", rows)
        answers.append(verify(mechanism, records=list(range(z)), n=n, epsilon=epsilon, delta=delta,
                              exchangeable=False, executor=executor, seed=1))
    return answers


_CASES = [
    # seed, records, n, outcomes, distinct rows, exact, vectorised, sparse, block rows
    (0, 2, 4, 3, 3, True, False, False, 4),
    (1, 3, 3, 4, 5, False, False, True, 5),
    (2, 3, 4, 5, 4, False, True, False, 10),
    (3, 4, 3, 2, 2, True, False, True, 7),
    (4, 2, 6, 9, 6, False, True, False, 16),
    (5, 5, 3, 3, 8, False, False, True, 30),
    (6, 3, 4, 4, 3, True, False, False, 81),
]


def test_blocks_with_exact_distribution(monkeypatch):
    """Float rows certified from ``exact_distribution``: the rows the blocks return are checked against it."""
    mechanism = TableMechanism(8, 5, 3, exact=False, vectorised=True, sparse=False)
    mechanism.offers_exact = True
    whole, _ = _both_ways(monkeypatch, mechanism, 3, 4, 1.0, 0.0, 10**9)
    for epsilon in (whole.epsilon, 0.8 * whole.epsilon):
        first, second = _both_ways(monkeypatch, mechanism, 3, 4, epsilon, 0.0, 9)
        assert _figures(first) == _figures(second)
    assert first.witness is not None and first.float_error == 0.0


@pytest.mark.parametrize("case", _CASES)
def test_blocks_give_the_whole_matrix_result(monkeypatch, case):
    seed, z, n, outcomes, distinct, exact, vectorised, sparse, rows = case
    mechanism = TableMechanism(seed, outcomes, distinct, exact=exact, vectorised=vectorised, sparse=sparse)
    whole, _ = _both_ways(monkeypatch, mechanism, z, n, 1.0, 0.0, 10**9)
    epsilon_star = whole.epsilon
    verdicts = set()
    # the claim at eps*, just under it (violated, witnesses among many tied pairs), above, and with a delta
    claims = [(epsilon_star, 0.0), (0.9 * epsilon_star, 0.0), (epsilon_star + 0.5, 0.0), (0.5 * epsilon_star, 0.05)]
    if exact and math.isfinite(epsilon_star):
        claims.append((Fraction(epsilon_star).limit_denominator(1000), 0))
    if not math.isfinite(epsilon_star):  # P > 0 = Q somewhere: only a delta can cover it
        claims = [(0.5, 0.0), (1.0, 0.2), (2.0, 0.6), (1.0, 1.0)]  # delta = 1 holds on any pair
    for epsilon, delta in claims:
        first, second = _both_ways(monkeypatch, mechanism, z, n, epsilon, delta, rows)
        assert _figures(first) == _figures(second), (epsilon, delta)
        verdicts.add(first.verdict)
    assert len(verdicts) >= 2  # the claims reach both sides: the comparison is not only of HOLDS


def test_blocks_on_a_process_pool(monkeypatch):
    mechanism = TableMechanism(7, 4, 4, exact=False, vectorised=True, sparse=False)
    serial, _ = _both_ways(monkeypatch, mechanism, 3, 5, 1.0, 0.0, 10**9)
    whole, blocks = _both_ways(monkeypatch, mechanism, 3, 5, 0.8 * serial.epsilon, 0.0, 27, executor="processes")
    assert _figures(whole) == _figures(blocks)
    assert blocks.witness is not None


def test_the_witness_order_matters(monkeypatch):
    """A mutant of the merge's order (directions not kept apart within a chunk) names another witness
    among the tied pairs: the comparison above would catch it."""
    mechanism = TableMechanism(2, 5, 4, exact=False, vectorised=True, sparse=False)
    whole, _ = _both_ways(monkeypatch, mechanism, 3, 4, 1.0, 0.0, 10**9)
    claim = 0.9 * whole.epsilon
    reference, blocks = _both_ways(monkeypatch, mechanism, 3, 4, claim, 0.0, 10)
    assert reference.witness == blocks.witness is not None
    monkeypatch.setattr(_blocks, "_order", lambda pair, first, second: np.argsort(-pair, kind="stable"))
    _, mutant = _both_ways(monkeypatch, mechanism, 3, 4, claim, 0.0, 10)
    assert (mutant.witness.dataset, mutant.witness.neighbor) != (reference.witness.dataset, reference.witness.neighbor)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_blocks_give_the_whole_matrix_result_many(monkeypatch, seed):
    rng = np.random.default_rng(1000 + seed)
    z = int(rng.integers(2, 6))
    n = int(rng.integers(2, 7 if z <= 3 else 5))
    case = (seed, z, n, int(rng.integers(2, 10)), int(rng.integers(2, 8)), bool(rng.integers(2)),
            bool(rng.integers(2)), bool(rng.integers(2)), int(rng.integers(2, z**n + 2)))
    test_blocks_give_the_whole_matrix_result(monkeypatch, case)


def test_all_records_and_orderings_listed():  # the blocks' rows are real datasets: itertools.product's
    plan = plan_blocks(3, 3, 9)
    rows = np.sort(np.concatenate([plan.rows(task) for task in plan.tasks() if task[0] == 1]))
    assert rows.tolist() == list(range(27))
    products = list(itertools.product(range(3), repeat=3))
    # group (0, 1, 1): position 0 with one trailing digit; block r0 = 3 holds runs 3..5, 12..14, 21..23
    assert plan.groups == ((1, 3, 0), (0, 1, 1))
    assert plan.rows((1, 0, 3)).tolist() == [3, 4, 5, 12, 13, 14, 21, 22, 23]
    assert products[plan.rows((1, 0, 3))[4]] == (1, 1, 1)  # 13 = 1*9 + 1*3 + 1


def test_no_whole_matrix_in_blocks(monkeypatch):
    """In blocks no process evaluates the whole matrix (evaluate_blocks) nor sweeps one (engine.sweep)."""
    from dpverify.checking import _analysis
    from dpverify.verdict import engine

    mechanism = TableMechanism(3, 4, 4, exact=False, vectorised=True, sparse=False)
    whole, _ = _both_ways(monkeypatch, mechanism, 3, 4, 1.0, 0.0, 10**9)

    def refused(*args, **kwargs):
        raise AssertionError("the whole matrix was built")

    monkeypatch.setattr(_analysis, "evaluate_blocks", refused)
    monkeypatch.setattr(engine, "sweep", refused)
    monkeypatch.setattr(_blocks, "BLOCKS_FROM_ROWS", 1)
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 9)
    blocks = verify(mechanism, records=list(range(3)), n=4, epsilon=1.0, exchangeable=False, seed=1)
    assert _figures(blocks) == _figures(whole)


class _Remote:
    """A runner whose workers do not share this machine's memory (a Dask cluster on other machines)."""

    parallel, workers, shares_memory = True, 4, False


def test_a_remote_cluster_gets_blocks_at_any_size():
    from dpverify.finite.neighbors import relation

    pairs = relation("substitute").pairs(list(range(3)), 4, exchangeable=False)
    assert _blocks.block_plan_for(pairs, type("Local", (), {"parallel": True, "workers": 4, "shares_memory": True})()) is None
    plan = _blocks.block_plan_for(pairs, _Remote())
    # 81 datasets on 4 workers: blocks of at most max(3 * 64, 81 // 16) = 192 rows, i.e. all 81 in one group
    assert plan is not None and plan.groups == ((0, 4, 0),)
    multisets = relation("substitute").pairs(list(range(3)), 4, exchangeable=True)
    assert _blocks.block_plan_for(multisets, _Remote()) is None  # exchangeable pairs keep the whole (small) matrix


def test_a_refuted_declaration_in_blocks(monkeypatch):
    """A mechanism declared exchangeable that is not: refuted, then every ordered dataset in blocks
    (the outline pass of its own: the refutation is compared with the rows at once)."""
    mechanism = TableMechanism(9, 4, 5, exact=True, vectorised=False, sparse=True)
    mechanism.exchangeable = True
    answers = []
    for from_rows in (10**12, 1):
        monkeypatch.setattr(_blocks, "BLOCKS_FROM_ROWS", from_rows)
        monkeypatch.setattr(_blocks, "BLOCK_ROWS", 9)
        answers.append(verify(mechanism, records=list(range(3)), n=4, epsilon=1.0, delta=0.2, seed=3))
    whole, blocks = answers
    assert whole.symmetry_violation is not None and not whole.exchangeable
    assert _figures(whole) == _figures(blocks)
    assert whole.symmetry_violation == blocks.symmetry_violation


def test_a_claim_with_its_own_decide_gets_the_whole_matrix(monkeypatch):
    """Row blocks run the engine's own decide; a claim that overrides decide (or project) must still be
    asked itself, on the whole matrix, or its rule would be dropped silently (found in review)."""
    from dataclasses import dataclass

    from dpverify.verdict.claims import PureDp

    seen = []

    @dataclass(frozen=True)
    class Recorded(PureDp):
        def decide(self, pairs):
            seen.append(pairs.matrix.shape)
            return super().decide(pairs)

    mechanism = TableMechanism(3, 4, 4, exact=False, vectorised=True, sparse=False)
    monkeypatch.setattr(_blocks, "BLOCKS_FROM_ROWS", 1)
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 9)
    plain = verify(mechanism, records=list(range(3)), n=4, epsilon=1.0, exchangeable=False, seed=1)
    own = verify(mechanism, records=list(range(3)), n=4, claim=Recorded(1.0), exchangeable=False, seed=1)
    assert seen == [(3**4, 4)]  # asked once, on all 81 rows (4 outcomes), not skipped for blocks
    assert _figures(own) == _figures(plain)
