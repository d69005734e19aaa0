"""Fewer input pairs with the same answer: a cover of a pair set by the pieces its losses are made of.

For a pure claim the loss of a directed pair ``(D, D')`` is ``L(D, D') = sup_S P_D(S) / P_D'(S)``.
For many mechanisms it is the largest of a few *components*, each depending on only part of the
pair: a continuous output made of atoms and labelled densities on the line
(:class:`dpverify.densities.continuous.MixedOutput`) has

    ``L(D, D') = max(1, max_c v(c))``, ``c`` over ``components(D, D')``,

where ``v(c)`` is the supremum of one atom's or one density's ratio (the supremum over a disjoint
union of outputs is the largest of the suprema over the parts; the ``1`` is free, as
``sup_S P(S)/Q(S) >= P(all)/Q(all) = 1``). When ``v(c)`` depends only on a *key* of the component
(noisy max's value density depends on the multiset of the answers, up to translation; SVT
Algorithm 3's density for ``⊥^i v`` on the multiset of the first ``i`` answers and the ``i``-th),
many pairs share their components, and a subset of the pairs that holds every key suffices:

**Claim.** Let ``keys(D, D')`` be the keys of both directions of the unordered pair ``{D, D'}`` and
let ``C`` be a subset of the pairs ``P`` such that every key of every pair of ``P`` is a key of some
pair of ``C``. Then ``max_{P} L = max_{C} L`` (both directions), and the claim ``L <= e^eps`` holds
on every pair of ``P`` if and only if it holds on every pair of ``C``.

*Proof.* ``C`` is part of ``P``, so ``max_C L <= max_P L``. Conversely, for a pair of ``P`` and a
direction, ``L(D, D') = max(1, v(c))`` for one of its components ``c`` (or is 1, and every
``L >= 1``); the key of ``c`` is a key of some ``(E, E')`` in ``C`` in some direction, whose loss
is at least ``v(c)``. The second statement is the first read at ``e^eps``. ∎

So :func:`dpverify.checking.input_pairs.verify_pairs` on the cover decides the claim on the whole set — if
the mechanism's components are right: that lemma is proved on paper, not here, so ``verify_pairs``
tests it on the pairs outside the cover and a passing verdict rests on it only when every such pair
was tested or the caller passes ``cover="assume"`` (:mod:`dpverify.verdict.assumptions`) —, and
its worst pair (one of the cover, hence one of the given pairs) attains eps* of the whole set; the
engine and the certified path are unchanged, only the pairs are fewer. A component whose two sides
are the same function (ratio 1) needs no covering. The mechanism states its keys and proves them in
its docstring (``loss_components(D, D')``); :func:`covering_pairs` picks the cover greedily (the
pair with the most keys not yet held first), which keeps it small but not minimal.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

from dpverify.checking.input_pairs import InputPairs
from dpverify.errors import InvalidArgument

__all__ = ["covering_pairs", "pair_keys"]


def pair_keys(components: Callable[[tuple, tuple], Iterable[Hashable]], first: tuple, second: tuple) -> frozenset:
    """The keys of both directions of the unordered pair ``{first, second}``."""
    return frozenset(components(first, second)) | frozenset(components(second, first))


def covering_pairs(pairs: InputPairs, components: Callable[[tuple, tuple], Iterable[Hashable]] | Any) -> InputPairs:
    """A subset of ``pairs`` holding every component key of every pair (module docstring).

    Args:
        pairs: the full input set (e.g. :func:`dpverify.checking.input_pairs.all_query_vectors`).
        components: ``(D, D') -> keys`` of the directed pair's loss components, or a mechanism with a
            ``loss_components`` method.

    Returns:
        An :class:`~dpverify.checking.input_pairs.InputPairs` of the chosen pairs (and only their datasets), named
        ``"{name} (cover)"``, with the same relation.

    Raises:
        InvalidArgument: ``components`` is neither callable nor a mechanism with ``loss_components``.
    """
    method = getattr(components, "loss_components", None)
    if method is not None:
        components = method
    if not callable(components):
        raise InvalidArgument(
            f"components must be a function (D, D') -> keys or a mechanism with loss_components, got {components!r}."
        )
    datasets = pairs.datasets
    lefts, rights = pairs.left.tolist(), pairs.right.tolist()
    keys = [pair_keys(components, datasets[i], datasets[j]) for i, j in zip(lefts, rights)]
    wanted = frozenset().union(*keys)
    heap = [(-len(k), n) for n, k in enumerate(keys) if k]
    heapq.heapify(heap)
    held: set = set()
    chosen: list[int] = []
    while heap and len(held) < len(wanted):
        _, n = heapq.heappop(heap)
        new = len(keys[n] - held)
        if new == 0:
            continue
        if heap and new < -heap[0][0]:  # lazy greedy: re-queue with its current gain
            heapq.heappush(heap, (-new, n))
            continue
        chosen.append(n)
        held |= keys[n]
    if not chosen:  # every pair compares equal outputs: any one pair stands for all
        chosen = [0]
    chosen.sort()
    used = sorted({lefts[n] for n in chosen} | {rights[n] for n in chosen})
    renumber = {old: new for new, old in enumerate(used)}
    left = np.array([renumber[lefts[n]] for n in chosen], np.int64)
    right = np.array([renumber[rights[n]] for n in chosen], np.int64)
    return InputPairs(f"{pairs.name} (cover)", [datasets[i] for i in used], left, right, pairs.relation, covers=pairs)
