"""Tests of dpverify.checking.pair_cover: the cover of a pair set by its loss components gives the same answer.

The reduction is checked three ways: (1) the invariances the keys rest on, function by function (equal
keys give equal densities, exactly); (2) the cover holds every key and only given pairs; (3) eps*,
the verdict and the worst pair's loss agree with the plain enumeration on a smaller k (k = 2 here,
k = 3 under ``-m slow``).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from dpverify.checking.input_pairs import all_query_vectors, verify_pairs
from dpverify.checking.pair_cover import covering_pairs, pair_keys
from dpverify.errors import InvalidArgument
from dpverify.mechanisms.noisy_max import NoisyMaxValue
from dpverify.mechanisms.sparse_vector import svt

EPS = Fraction(7, 10)
MECHANISMS = {
    "noisy_max_value_laplace": lambda: NoisyMaxValue(EPS, "laplace"),
    "noisy_max_value_exponential": lambda: NoisyMaxValue(EPS, "exponential"),
    "svt3": lambda: svt(3, epsilon=EPS),
}


def _same(p, q) -> bool:
    return p.breaks == q.breaks and p.pieces == q.pieces


def test_noisy_max_value_density_depends_on_the_multiset_up_to_translation():
    mechanism = NoisyMaxValue(EPS, "laplace")
    vectors = list(itertools.product(range(3), repeat=3))
    for a in vectors:
        density = mechanism.output_density(a).densities["max"]
        for b in vectors:
            if sorted(a) == sorted(b):
                assert _same(density, mechanism.output_density(b).densities["max"])
        shifted = tuple(v + 1 for v in a)  # p_{D+1}(x) = p_D(x - 1)
        assert _same(mechanism.output_density(shifted).densities["max"], density.shift(-1))


def test_svt3_density_of_bottom_i_v_depends_on_the_prefix_multiset_and_the_ith_answer():
    mechanism = svt(3, epsilon=EPS)
    vectors = list(itertools.product(range(3), repeat=3))
    outputs = {v: mechanism.output_density(v) for v in vectors}
    for a, b in itertools.product(vectors, repeat=2):
        if sorted(a) == sorted(b):
            assert outputs[a].atoms["⊥⊥⊥"] == outputs[b].atoms["⊥⊥⊥"]
        for i in range(3):
            if sorted(a[:i]) == sorted(b[:i]) and a[i] == b[i]:
                label = "⊥" * i + "v"
                assert _same(outputs[a].densities[label], outputs[b].densities[label])
    # and the density of ⊥^i v does not depend on k (later answers)
    longer = mechanism.output_density((2, 0, 1, 2))
    assert _same(longer.densities["⊥v"], outputs[(2, 0, 1)].densities["⊥v"])


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_cover_holds_every_key_and_only_given_pairs(name):
    mechanism = MECHANISMS[name]()
    full = all_query_vectors(4)
    cover = covering_pairs(full, mechanism)
    given = {frozenset(p) for p in full}
    assert all(frozenset(p) in given for p in cover)
    held = frozenset().union(*(pair_keys(mechanism.loss_components, a, b) for a, b in cover))
    wanted = frozenset().union(*(pair_keys(mechanism.loss_components, a, b) for a, b in full))
    assert held == wanted
    assert len(cover) < len(full) / 3
    assert cover.relation is full.relation and cover.name == "all_vectors_m2 (cover)"


def _agree(name: str, k: int) -> None:
    mechanism = MECHANISMS[name]()
    full = all_query_vectors(k)
    plain = verify_pairs(mechanism, pairs=full, epsilon=EPS)
    reduced = verify_pairs(mechanism, pairs=covering_pairs(full, mechanism), epsilon=EPS)
    assert reduced.verdict is plain.verdict
    assert reduced.epsilon == pytest.approx(plain.epsilon, rel=1e-9)
    low, high = plain.epsilon_bounds
    assert low - 1e-9 <= reduced.epsilon <= high + 1e-9


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_cover_gives_the_plain_enumerations_answer_k2(name):
    _agree(name, 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_cover_gives_the_plain_enumerations_answer_k3(name):
    _agree(name, 3)


def test_components_must_be_callable():
    with pytest.raises(InvalidArgument, match="loss_components"):
        covering_pairs(all_query_vectors(2), 3)
    with pytest.raises(InvalidArgument, match="Algorithm 3"):
        svt(1, epsilon=EPS).loss_components((0,), (1,))
