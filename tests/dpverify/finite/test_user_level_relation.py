"""The user-level neighbour relation (Li–Wang–Ye 2024 Section 4): counts, the neighbour
property, lookups, bad input, and that the checker catches an item-level-private mechanism that is
not user-level private."""

from __future__ import annotations

import itertools
from collections import Counter
from math import comb

import pytest

from dpverify import verify
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import UserLevel, pair_count, relation, user_blocks, user_level
from dpverify.finite.records import labeled_records
from dpverify.mechanisms.exponential import threshold_learner


def test_block_universe_sizes():
    records = labeled_records(2)  # 4 records
    # ordered blocks: 4^m;  multisets: C(4 + m - 1, m)
    assert len(user_blocks(records, 1)) == 4
    assert len(user_blocks(records, 2)) == 16
    assert len(user_blocks(records, 3)) == 64
    assert len(user_blocks(records, 2, ordered=False)) == 10  # C(5, 2)
    assert len(user_blocks(records, 3, ordered=False)) == 20  # C(6, 3)
    assert user_blocks(records, 2)[:2] == (((0, 0), (0, 0)), ((0, 0), (0, 1)))


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("exchangeable", [False, True])
def test_counts_are_substitute_over_blocks(n, exchangeable):
    blocks = user_blocks(("a", "b"), 2)  # 4 blocks
    z = len(blocks)
    expected = comb(z + n - 2, n - 1) * comb(z, 2) if exchangeable else z**n * n * (z - 1) // 2
    rel = user_level(2)
    assert rel.count(z, n, exchangeable=exchangeable) == expected
    assert rel.count_for_records(2, n, exchangeable=exchangeable) == expected
    assert pair_count(("user_level", 2), z, n, exchangeable=exchangeable) == expected
    assert len(rel.pairs(blocks, n, exchangeable=exchangeable)) == expected


def test_counts_by_hand():
    # 2 records, m = 2: 4 ordered blocks. n = 3 users:
    #   black box 4^3 * 3 * 3 / 2 = 288;  multisets of users C(4 + 1, 2) * C(4, 2) = 10 * 6 = 60.
    assert user_level(2).count_for_records(2, 3, exchangeable=False) == 288
    assert user_level(2).count_for_records(2, 3, exchangeable=True) == 60
    # multiset blocks: C(3, 2) = 3 blocks; n = 3: 3^3 * 3 * 2 / 2 = 81, C(3 + 1, 2) * C(3, 2) = 18
    assert user_level(2).count_for_records(2, 3, exchangeable=False, ordered=False) == 81
    assert user_level(2).count_for_records(2, 3, exchangeable=True, ordered=False) == 18


@pytest.mark.parametrize("n", [1, 2, 3])
def test_black_box_pairs_replace_exactly_one_whole_user(n):
    blocks = user_blocks(labeled_records(1), 2)  # records (0,0), (0,1): 4 blocks
    ps = user_level(2).pairs(blocks, n, exchangeable=False)
    found = set()
    for i, j in zip(ps.left.tolist(), ps.right.tolist()):
        a, b = ps.datasets[i], ps.datasets[j]
        assert len(a) == len(b) == n
        assert all(len(block) == 2 for block in a + b)
        assert sum(u != v for u, v in zip(a, b)) == 1  # one user's block differs ...
        found.add(frozenset((a, b)))
    # ... and every such pair is listed once: brute force over all ordered datasets.
    everything = list(itertools.product(blocks, repeat=n))
    brute = {frozenset((a, b)) for a in everything for b in everything if sum(u != v for u, v in zip(a, b)) == 1}
    assert found == brute and len(found) == len(ps)


def test_a_user_block_may_change_in_all_its_records():
    blocks = user_blocks(labeled_records(1), 2)
    ps = user_level(2).pairs(blocks, 1, exchangeable=False)
    pairs = {frozenset((ps.datasets[i], ps.datasets[j])) for i, j in zip(ps.left.tolist(), ps.right.tolist())}
    both_changed = frozenset(((((0, 0), (0, 0)),), (((0, 1), (0, 1)),)))
    assert both_changed in pairs  # item level would need two steps for this


@pytest.mark.parametrize("n", [1, 2, 3])
def test_exchangeable_pairs_are_multisets_of_users_one_apart(n):
    blocks = user_blocks(labeled_records(1), 2)
    ps = user_level(2).pairs(blocks, n, exchangeable=True)
    seen = set()
    for i, j in zip(ps.left.tolist(), ps.right.tolist()):
        a, b = Counter(ps.datasets[i]), Counter(ps.datasets[j])
        assert sum((a - b).values()) == 1 and sum((b - a).values()) == 1
        seen.add(frozenset((ps.datasets[i], ps.datasets[j])))
    assert len(seen) == len(ps)
    # every multiset pair at distance one appears
    multisets = list(itertools.combinations_with_replacement(blocks, n))
    brute = {
        frozenset((a, b)) for a in multisets for b in multisets
        if sum((Counter(a) - Counter(b)).values()) == 1
    }
    assert seen == brute


def test_lookups():
    assert isinstance(relation("user_level"), UserLevel) and relation("user_level").m is None
    assert relation(("user_level", 3)).m == 3
    assert user_level(2).name == "user_level"
    with pytest.raises(InvalidArgument, match="user_level"):
        relation("users")


@pytest.mark.parametrize("m", [0, -1, 1.5, True])
def test_bad_m(m):
    with pytest.raises(InvalidArgument, match=r"m must be an integer >= 1"):
        user_level(m)
    with pytest.raises(InvalidArgument, match=r"m must be an integer >= 1"):
        user_blocks(labeled_records(1), m)


def test_blocks_of_the_wrong_size_are_refused():
    blocks = user_blocks(labeled_records(1), 2) + (((0, 0),),)
    with pytest.raises(InvalidArgument, match=r"m=2 records, got the block \(\(0, 0\),\) of size 1"):
        user_level(2).pairs(blocks, 2, exchangeable=False)
    with pytest.raises(InvalidArgument, match="m=2 records"):
        relation("user_level").pairs(blocks, 2, exchangeable=True)  # size taken from the first block
    with pytest.raises(InvalidArgument, match="user_blocks"):
        user_level(2).pairs(("a", "b"), 2, exchangeable=False)  # plain records, not blocks
    with pytest.raises(InvalidArgument, match="m=3 records"):
        user_level(3).pairs(labeled_records(1), 2, exchangeable=False)  # (x, y) is not a block of 3


def test_item_level_private_is_not_user_level_private():
    # EM over thresholds with score = mistakes over all n*m records is 1-DP when one *record* changes
    # (Delta = 1), but one *user* moves the score by up to m = 2: the checker must say so.
    inner = threshold_learner(2, epsilon=1)

    def flattened(z):
        return inner(tuple(record for block in z for record in block))

    flattened.exchangeable = True
    blocks = user_blocks(labeled_records(2), 2)
    item = verify(inner, records=labeled_records(2), n=4, epsilon=1)
    user = verify(flattened, records=blocks, n=2, epsilon=1, neighbors=user_level(2))
    assert item.holds and item.epsilon <= 1
    assert not user.holds and user.epsilon > 1 and user.witness is not None
    assert user.neighbors == "user_level"
    assert user.exchangeability == "proved on every ordering"  # 16^2 orderings
