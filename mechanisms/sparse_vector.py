"""The six sparse vector variants of Lyu, Su, Li: Understanding the Sparse Vector Technique for
Differential Privacy, VLDB 2017 (Figure 1, Algorithms 1-6), with exact output distributions.

Every variant draws a noisy threshold ``T + rho`` and answers query ``i`` with ``⊤`` when
``q_i + nu_i >= T + rho`` and ``⊥`` otherwise (query answers have sensitivity ``Delta = 1``):

=========  ==================  ===================  ==========  ============================  ==============
variant    rho                 nu_i                 cutoff c    output for ⊤                  Lyu et al.
=========  ==================  ===================  ==========  ============================  ==============
1          Lap(2/eps)          Lap(4c/eps)          yes         ⊤                             eps-DP
2          Lap(2c/eps),        Lap(4c/eps)          yes         ⊤                             eps-DP
           refreshed after ⊤
3          Lap(2/eps)          Lap(2c/eps)          yes         the noisy answer q_i + nu_i   infinity-DP
4          Lap(4/eps)          Lap(4/(3 eps))       yes         ⊤                             ((1+6c)/4)eps-DP
5          Lap(2/eps)          none                 no          ⊤                             infinity-DP
6          Lap(2/eps)          Lap(2/eps)           no          ⊤                             infinity-DP
=========  ==================  ===================  ==========  ============================  ==============

(eps_1 = eps/2, eps_2 = eps - eps_1 except Algorithm 4's eps_1 = eps/4; the scales above are those
of the paper with Delta = 1, and agree with StatDP's ``SVT``/``iSVT1``–``iSVT4`` and DP-Sniper's
``SparseVectorTechnique1``–``6``.) With a cutoff the run stops after the c-th ⊤; the output is the
sequence of answers so far (a string of ``⊤``/``⊥``; with c = 1 the first-⊤ index).

Exactness: given ``rho = r`` the answers are independent, ``P(⊤ | r) = P(nu >= T + r - q_i)`` is a
tail of the query noise at a shifted point and ``P(⊥ | r)`` its CDF, so the probability of a
sequence is ``int f_rho(r) prod_i P(a_i | r) dr`` — a piecewise-exponential integral in closed form
(:mod:`dpverify.mechanisms.noise`). With refreshing (Algorithm 2) the run splits into independent segments
that each end with a ⊤. Algorithm 3's noisy answers are continuous; its density is
:meth:`SparseVector.output_density` (checked by :mod:`dpverify.densities.continuous`), for c = 1.

Geometric noise (``noise="geometric"``): every ``Lap(b)`` above becomes the two-sided geometric
``Geometric(b)`` (the discrete Laplace of the same scale, ``P(Z = z) ∝ e^(-|z|/b)``), on integer query
answers. Given the integer ``rho = r``, ``P(⊤ | r)`` is a tail of the query noise at an integer point, so a
sequence's probability is ``sum_r P(rho = r) prod_i P(a_i | r)``, summed over the integers in closed
form (:func:`dpverify.mechanisms.geometric.threshold_segment`): an exact rational function of
``a = e^(-g)``, ``g`` the largest rational of which both noises' ``1/b`` are integer multiples. Algorithm
3 is refused with geometric noise (its released value is an integer of unbounded support).

Ties have positive probability with geometric noise, so the comparison matters. Lyu, Su, Li's paper is
not among the project's sources (``/work/shared/papers``), so the comparison follows StatDP's
implementation (``statdp/algorithms.py``, :data:`COMPARISON`): ``q_i + nu_i >= T + rho`` for ``SVT``
(Algorithm 1), ``iSVT1`` (5) and ``iSVT2`` (6), the strict ``q_i + nu_i > T + rho`` for ``iSVT3`` (4) and
``iSVT4`` (3); Algorithm 2, which StatDP does not have, compares as Algorithm 1. ``comparison=">="`` or
``">"`` overrides it (DP-Sniper uses ``>=`` for all six). With integer answers and integer noise the
comparison is ``q_i + nu_i - rho >= t`` with the integer ``t = ceil(T)`` (``>=``) or ``floor(T) + 1``
(``>``): a threshold ``T = 0.5`` behaves as ``T = 1`` with ``>=`` and as ``T = 0`` with ``>``. (For
Laplace noise ties have probability 0 and the comparison changes nothing.)
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from dpverify.densities.piecewise import ExpSum, PiecewiseExp, as_fraction
from dpverify.errors import InvalidArgument

from .geometric import RationalExp, check_integers, common_rate, threshold_segment
from .noise import Geometric, Laplace, Noise, NoiseProgram, NoNoise

__all__ = ["SparseVector", "svt", "TOP", "BOTTOM", "VARIANTS", "NOISES", "COMPARISON"]

TOP, BOTTOM = "⊤", "⊥"
VARIANTS = (1, 2, 3, 4, 5, 6)
NOISES = ("laplace", "geometric")
#: StatDP's comparison of ``q_i + nu_i`` with ``T + rho`` per variant (statdp/algorithms.py: SVT, iSVT1,
#: iSVT2 ``>=``; iSVT3 = Algorithm 4 and iSVT4 = Algorithm 3 ``>``; Algorithm 2 as Algorithm 1).
COMPARISON = {1: ">=", 2: ">=", 3: ">", 4: ">", 5: ">=", 6: ">="}
#: Lyu, Su, Li's privacy of each variant as a multiple of eps (None: not private at any eps).
PROVED_FACTOR = {1: Fraction(1), 2: Fraction(1), 3: None, 4: None, 5: None, 6: None}


class _Segments:
    """The exact segment probabilities ``int f_rho(r) prod_i P(a_i | r) dr`` of one threshold noise,
    query noise and threshold ``T``, memoised by the multiset of answers.

    A segment's value depends only on the multiset of its ``(q_i, is_top)`` (a product does not depend
    on the order of its factors), and the integrand of a multiset is its parent's (one answer fewer)
    times one factor ``P(a | r)``: extending a run of answers by one costs one product and one integral,
    not a product per answer (Issue 21: eight from-scratch products per input vector at k = 7; ``⊥^i⊤``
    shares the integrand of ``⊥^i`` with ``⊥^(i+1)``). Keys are sorted tuples of ``(q, is_top)``, one per
    answer (:func:`_item_key`); values are exact, identical to the from-scratch product (the factors
    are exact and their product is canonical).
    """

    __slots__ = ("threshold", "query", "T", "_factors", "_integrands", "_values")

    def __init__(self, threshold: Noise, query: Noise, T: Fraction) -> None:
        self.threshold, self.query, self.T = threshold, query, T
        self._factors: dict[tuple[Fraction | int, bool], PiecewiseExp] = {}
        self._integrands: dict[tuple, PiecewiseExp] = {(): threshold.density()}
        self._values: dict[tuple, ExpSum] = {}

    def factor(self, q: Fraction | int, top: bool) -> PiecewiseExp:
        """``P(⊤ | r) = P(nu >= T + r - q)`` or ``P(⊥ | r)`` as a function of ``r``."""
        item = (q, top)
        factor = self._factors.get(item)
        if factor is None:
            factor = (self.query.tail() if top else self.query.cdf()).shift(self.T - q)
            self._factors[item] = factor
        return factor

    def integrand(self, key: tuple) -> PiecewiseExp:
        """``f_rho(r) prod P(a | r)`` over the answers of ``key``: a memoised parent (``key`` less one
        answer) times one factor, or, when no parent is memoised, built up from ``key[:-1]``."""
        integrand = self._integrands.get(key)
        if integrand is not None:
            return integrand
        parent, item = key[:-1], key[-1]
        for at in range(len(key) - 1):
            if key[at] != key[at + 1] and key[:at] + key[at + 1 :] in self._integrands:
                parent, item = key[:at] + key[at + 1 :], key[at]
                break
        integrand = self.integrand(parent) * self.factor(*item)
        self._integrands[key] = integrand
        return integrand

    def value(self, key: tuple) -> ExpSum:
        """The segment's exact probability ``int f_rho(r) prod P(a | r) dr``."""
        value = self._values.get(key)
        if value is None:
            value = self.integrand(key).integral()
            self._values[key] = value
        return value


#: One :class:`_Segments` per (threshold noise, query noise, T), shared by every instance with those noises
#: (the audit builds one mechanism per row; rows at the same eps share their segments).
_TABLES: dict[tuple[Noise, Noise, Fraction], _Segments] = {}
_MAX_TABLES = 64


def _segments_for(threshold: Noise, query: Noise, T: Fraction) -> _Segments:
    table = _TABLES.get((threshold, query, T))
    if table is None:
        if len(_TABLES) >= _MAX_TABLES:
            _TABLES.clear()
        table = _TABLES[(threshold, query, T)] = _Segments(threshold, query, T)
    return table


def _insert(key: tuple, item: tuple[Fraction | int, bool]) -> tuple:
    """The sorted tuple ``key`` with ``item`` added (a multiset of answers)."""
    at = bisect.bisect_right(key, item)
    return key[:at] + (item,) + key[at:]


def _item_key(answers: list[tuple[Fraction | int, bool]]) -> tuple:
    """The multiset of ``(q, is_top)`` answers as a sorted tuple (a :class:`_Segments` key)."""
    return tuple(sorted(answers))


@lru_cache(maxsize=4096)
def _below_then(threshold: Noise, query: Noise, T: Fraction, below: tuple) -> PiecewiseExp:
    """``G(v - T)`` with ``G(s) = int_{-inf}^{s} f_rho(r) prod_j F_nu(T + r - q_j) dr`` over the answers
    ``q_j`` that were below (Algorithm 3's density of releasing ``v`` is ``f_nu(v - q_i) G(v - T)``)."""
    integrand = threshold.density()
    for v in below:
        integrand = integrand * query.cdf().shift(T - v)
    return integrand.antiderivative().shift(-T)


def _answer(i: int, value: Any) -> Fraction | int:
    """A query answer as an exact number (an int when integral: faster to hash and compare)."""
    number = as_fraction(f"q[{i}]", value)
    return int(number) if number.denominator == 1 else number


def _key(answers: list[tuple[Fraction | int, bool]]) -> tuple:
    counts: dict[tuple[Fraction | int, bool], int] = {}
    for item in answers:
        counts[item] = counts.get(item, 0) + 1
    return tuple(sorted((q, top, n) for (q, top), n in counts.items()))


@dataclass(frozen=True, eq=False)
class SparseVector(NoiseProgram):
    """Lyu, Su, Li (VLDB 2017) Algorithm ``variant`` (1-6) on a vector of query answers.

    Args:
        epsilon: the privacy parameter eps of the paper (rational; floats are read exactly).
        variant: 1-6, the algorithm of Figure 1.
        c: the cutoff (number of ⊤ answers before the run stops; variants 5 and 6 have none).
        T: the public threshold (the peers use 0.5 for Algorithm 1 and 1 for the others).
        noise: ``"laplace"`` (the paper) or ``"geometric"`` (the discrete Laplace of the same scales,
            on integer answers; not for Algorithm 3).
        comparison: ``">="`` or ``">"`` (``q_i + nu_i`` against ``T + rho``); None: StatDP's for the
            variant (:data:`COMPARISON`). It matters for geometric noise only (module docstring).

    Calling it on ``q = (q_1, ..., q_k)`` returns the exact distribution over answer strings
    (certified floats; exact values through ``exact_values``). Algorithm 3 releases noisy
    answers: use :meth:`output_density` (its ⊤ outcomes are continuous).
    """

    epsilon: Any
    variant: int = 1
    c: int = 1
    T: Any = 1
    noise: str = "laplace"
    comparison: str | None = None
    name: str = field(default="", compare=False)
    # epsilon and T as exact numbers, set in __post_init__
    _eps: Fraction = field(init=False, repr=False, compare=False)
    _T: Fraction = field(init=False, repr=False, compare=False)
    # geometric noise: (rate g of the base a = e^-g, threshold and query multiples m, integer threshold t)
    _lattice: tuple[Fraction, int, int | None, int] = field(init=False, repr=False, compare=False)
    # the threshold and query noises (built once: each is hashed on every cached lookup)
    _noises: tuple[Laplace | Geometric, Noise] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise InvalidArgument(f"variant must be one of {VARIANTS} (Lyu, Su, Li Algorithms 1-6), got variant={self.variant!r}.")
        if not isinstance(self.c, int) or isinstance(self.c, bool) or self.c < 1:
            raise InvalidArgument(f"c must be an integer >= 1 (the cutoff), got c={self.c!r}.")
        if self.noise not in NOISES:
            raise InvalidArgument(f"noise must be one of {NOISES}, got noise={self.noise!r}.")
        if self.comparison not in (None, ">=", ">"):
            raise InvalidArgument(
                f"comparison must be '>=', '>' or None (StatDP's for the variant), got comparison={self.comparison!r}."
            )
        if self.noise == "geometric" and self.variant == 3:
            raise InvalidArgument(
                "Algorithm 3 releases the noisy answer; with noise='geometric' that is an integer of unbounded "
                "support, which is not supported: use noise='laplace' (a density, decided by verify_pairs)."
            )
        eps = as_fraction("epsilon", self.epsilon)
        if eps <= 0:
            raise InvalidArgument(f"epsilon must be positive, got epsilon={self.epsilon!r}.")
        object.__setattr__(self, "_eps", eps)
        object.__setattr__(self, "_T", as_fraction("T", self.T))
        object.__setattr__(self, "_noises", (self._build_threshold_noise(), self._build_query_noise()))
        if not self.name:
            suffix = "_geometric" if self.noise == "geometric" else ""
            object.__setattr__(self, "name", f"svt{self.variant}{suffix}")
        if self.noise == "geometric":
            threshold, query = self.threshold_noise(), self.query_noise()
            m_query: int | None = None
            if isinstance(query, Geometric):
                rate, (m_threshold, m_query) = common_rate(threshold.scale, query.scale)
            else:  # Algorithm 5: no query noise
                rate, (m_threshold,) = common_rate(threshold.scale)
            T = self._T
            t = math.ceil(T) if self.compare == ">=" else math.floor(T) + 1
            object.__setattr__(self, "_lattice", (rate, m_threshold, m_query, t))

    def __repr__(self) -> str:
        if self.noise == "laplace" and self.comparison is None:
            return f"SparseVector(epsilon={self.epsilon}, variant={self.variant}, c={self.c}, T={self.T})"
        return (f"SparseVector(epsilon={self.epsilon}, variant={self.variant}, c={self.c}, T={self.T}, "
                f"noise={self.noise!r}, comparison={self.compare!r})")

    @property
    def compare(self) -> str:
        """The comparison in force: ``comparison``, or StatDP's for the variant."""
        return COMPARISON[self.variant] if self.comparison is None else self.comparison

    @property
    def rational_values(self) -> bool:
        return self.noise == "geometric"

    @property
    def cutoff(self) -> int | None:
        return None if self.variant in (5, 6) else self.c

    @property
    def refresh(self) -> bool:
        return self.variant == 2

    def threshold_noise(self) -> Laplace | Geometric:
        """The noise ``rho`` added to the threshold (module docstring's table)."""
        return self._noises[0]

    def query_noise(self) -> Noise:
        """The noise ``nu_i`` added to each query answer (module docstring's table)."""
        return self._noises[1]

    def _build_threshold_noise(self) -> Laplace | Geometric:
        eps, c = self._eps, self.c
        kind = Geometric if self.noise == "geometric" else Laplace
        if self.variant == 2:
            return kind(2 * c / eps)
        if self.variant == 4:
            return kind(4 / eps)
        return kind(2 / eps)

    def _build_query_noise(self) -> Noise:
        eps, c = self._eps, self.c
        if self.variant == 5:
            return NoNoise()
        scale = {1: 4 * c / eps, 2: 4 * c / eps, 3: 2 * c / eps, 4: 4 / (3 * eps), 6: 2 / eps}[self.variant]
        return Geometric(scale) if self.noise == "geometric" else Laplace(scale)

    # -- discrete outputs ---------------------------------------------------------------------

    def sequences(self, k: int) -> list[str]:
        """Every output string on ``k`` queries (a run stops after the c-th ⊤)."""
        cutoff = self.cutoff
        out: list[str] = []

        def extend(prefix: str, tops: int) -> None:
            if len(prefix) == k or (cutoff is not None and tops == cutoff):
                out.append(prefix)
                return
            extend(prefix + BOTTOM, tops)
            extend(prefix + TOP, tops + 1)

        extend("", 0)
        return out

    def _segments(self, answers: list) -> list[list]:
        """The answers split at each threshold draw: one segment, or (Algorithm 2) one per ⊤."""
        if not self.refresh:
            return [answers]
        segments, start = [], 0
        for i, (_, top) in enumerate(answers):
            if top or i == len(answers) - 1:
                segments.append(answers[start : i + 1])
                start = i + 1
        return segments

    def sequence_probability(self, q: tuple[Fraction | int, ...], sequence: str) -> ExpSum | RationalExp:
        """The exact probability of one answer string on answers ``q``."""
        answers = [(q[i], a == TOP) for i, a in enumerate(sequence)]
        if self.noise == "geometric":
            return self._geometric_probability(answers, len(q))
        table = self._table()
        if not self.refresh:
            return table.value(_item_key(answers))
        result = ExpSum.constant(1)
        for segment in self._segments(answers):
            result = result * table.value(_item_key(segment))
        return result

    def _table(self) -> _Segments:
        """The memoised segment probabilities of this instance's noises and threshold (module-level, so
        that pickling an instance does not carry them)."""
        return _segments_for(self._noises[0], self._noises[1], self._T)

    def _geometric_probability(self, answers: list, queries: int) -> RationalExp:
        """A sequence's probability with geometric noise: a product over its threshold draws of
        :func:`~dpverify.mechanisms.geometric.threshold_segment` (answers taken relative to the integer
        threshold ``t``), each cached per instance with its enclosures."""
        rate, m_threshold, m_query, t = self._lattice
        cache = self.__dict__.setdefault("_segment_values", {})
        keys = tuple(_key([(q - t, top) for q, top in segment]) for segment in self._segments(answers))
        if (keys, queries) not in cache:
            parts = []
            for key in keys:
                if (key, queries) not in cache:
                    numerator, factors = threshold_segment(key, m_threshold, m_query, queries)
                    cache[(key, queries)] = RationalExp(dict(numerator), dict(factors), rate)
                parts.append(cache[(key, queries)])
            value = parts[0]
            for part in parts[1:]:
                value = value * part
            cache[(keys, queries)] = value
        return cache[(keys, queries)]

    def probabilities(self, dataset: tuple) -> dict:
        if self.variant == 3:
            raise InvalidArgument(
                "Algorithm 3 releases noisy answers (continuous outputs); verify it through "
                "verify_pairs, which uses its output_density."
            )
        if self.noise == "geometric":
            return self._geometric_probabilities(check_integers(dataset))
        q = tuple(_answer(i, v) for i, v in enumerate(dataset))
        if self.refresh:
            return {s: self.sequence_probability(q, s) for s in self.sequences(len(q))}
        return self._laplace_probabilities(q)

    def _laplace_probabilities(self, q: tuple[Fraction | int, ...]) -> dict[str, ExpSum]:
        """Every answer string's probability without refreshing (one threshold draw): the strings are
        enumerated depth first with their answer multisets; a string whose multiset is new costs one
        product (from a memoised parent) and one integral (:class:`_Segments`); the same value as
        :meth:`sequence_probability` on each string."""
        table, k, cutoff = self._table(), len(q), self.cutoff
        out: dict[str, ExpSum] = {}

        def extend(prefix: str, key: tuple, tops: int) -> None:
            i = len(prefix)
            if i == k or (cutoff is not None and tops == cutoff):
                out[prefix] = table.value(key)
                return
            extend(prefix + BOTTOM, _insert(key, (q[i], False)), tops)
            extend(prefix + TOP, _insert(key, (q[i], True)), tops + 1)

        extend("", (), 0)
        return out

    def _geometric_probabilities(self, q: tuple[int, ...]) -> dict[str, RationalExp]:
        """Every answer string's probability with geometric noise. Without refreshing, a string's value
        depends only on how many answers of each value are ⊤ and ⊥ (the segment's key): the strings are
        enumerated depth first with those counts, and each distinct count vector is computed once."""
        if self.refresh:
            return {s: self._geometric_probability([(q[i], a == TOP) for i, a in enumerate(s)], len(q))
                    for s in self.sequences(len(q))}
        values = sorted(set(q))
        slot = [2 * values.index(v) for v in q]  # counts[2j]: answers values[j] below, counts[2j + 1]: above
        k, cutoff = len(q), self.cutoff
        out: dict[str, RationalExp] = {}
        found: dict[tuple[int, ...], RationalExp] = {}

        def extend(prefix: str, counts: list[int], tops: int) -> None:
            i = len(prefix)
            if i == k or (cutoff is not None and tops == cutoff):
                key = tuple(counts)
                if key not in found:
                    answers = [(v, top == 1) for j, v in enumerate(values) for top in (0, 1) for _ in range(counts[2 * j + top])]
                    found[key] = self._geometric_probability(answers, k)
                out[prefix] = found[key]
                return
            counts[slot[i]] += 1
            extend(prefix + BOTTOM, counts, tops)
            counts[slot[i]] -= 1
            counts[slot[i] + 1] += 1
            extend(prefix + TOP, counts, tops + 1)
            counts[slot[i] + 1] -= 1

        extend("", [0] * (2 * len(values)), 0)
        return out

    # -- Algorithm 3: continuous outputs --------------------------------------------------------

    def output_density(self, dataset: tuple):
        """Algorithm 3 (c = 1): atoms and densities of the output (see :mod:`dpverify.densities.continuous`).

        The output is either ``⊥^k`` (no answer above the threshold, an atom) or ``⊥^i`` followed by
        the noisy answer ``v = q_i + nu_i``; the latter has density in ``v``
        ``f_nu(v - q_i) int_{-inf}^{v - T} f_rho(r) prod_{j < i} F_nu(T + r - q_j) dr``.
        """
        from dpverify.densities.continuous import MixedOutput

        if self.variant != 3:
            raise InvalidArgument(f"output_density is for Algorithm 3 (noisy answers); variant={self.variant} outputs ⊤/⊥.")
        if self.c != 1:
            raise InvalidArgument(
                f"Algorithm 3 is supported for c = 1 (one released value, a density on the line), got c={self.c}."
            )
        q = tuple(as_fraction(f"q[{i}]", v) for i, v in enumerate(dataset))
        threshold, query, T = self.threshold_noise(), self.query_noise(), self._T
        k = len(q)
        atoms = {BOTTOM * k: self._table().value(_item_key([(v, False) for v in q]))}
        densities = {}
        for i in range(k):
            accumulated = _below_then(threshold, query, T, tuple(sorted(q[:i])))
            densities[BOTTOM * i + "v"] = query.density().shift(-q[i]) * accumulated
        return MixedOutput(atoms, densities)

    def loss_components(self, first: tuple, second: tuple) -> list[tuple]:
        """Algorithm 3: the keys the loss of ``(first, second)`` depends on (:mod:`dpverify.checking.pair_cover`).

        The output (``c = 1``) is the atom ``⊥^k`` and, for each ``i``, the density of ``⊥^i v``:
        ``p_i(v) = f_nu(v - q_i) G_i(v - T)`` with ``G_i`` built from ``prod_{j < i} F_nu(T + r - q_j)``
        (:meth:`output_density`). ``P(⊥^k) = int f_rho(r) prod_j F_nu(T + r - q_j) dr`` depends only on the
        multiset of all answers; ``p_i`` only on the multiset of the first ``i`` answers and on
        ``q_i`` (a product does not depend on the order of its factors), not on ``k`` or on later
        answers. The loss is the largest of the atom's ratio and each ``sup_v p_i(v)/p'_i(v)``, so its
        components are keyed by ``("atom", sorted D, sorted D')`` and
        ``("v", sorted D[:i], sorted D'[:i], D_i, D'_i)``; a component whose two sides coincide (ratio
        1) is left out.
        """
        if self.variant != 3:
            raise InvalidArgument(f"loss_components is for Algorithm 3 (continuous outputs), variant={self.variant}.")
        keys: list[tuple] = []
        if sorted(first) != sorted(second):
            keys.append(("atom", tuple(sorted(first)), tuple(sorted(second))))
        for i in range(len(first)):
            before, after = tuple(sorted(first[:i])), tuple(sorted(second[:i]))
            if before != after or first[i] != second[i]:
                keys.append(("v", before, after, first[i], second[i]))
        return keys

    @property
    def continuous_output(self) -> bool:
        """Algorithm 3 releases noisy answers: its outputs are decided from densities."""
        return self.variant == 3


def svt(variant: int, *, epsilon: Any, c: int = 1, T: Any | None = None, noise: str = "laplace",
        comparison: str | None = None) -> SparseVector:
    """Lyu, Su, Li's Algorithm ``variant`` with the peers' default threshold (0.5 for Algorithm 1,
    1 otherwise) unless ``T`` is given; ``noise="geometric"`` for the discrete Laplace (integer
    answers), ``comparison`` as :class:`SparseVector`'s (default: StatDP's)."""
    if T is None:
        T = Fraction(1, 2) if variant == 1 else 1
    return SparseVector(epsilon, variant, c, T, noise, comparison)
