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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from dpverify.densities.piecewise import ExpSum, PiecewiseExp, as_fraction
from dpverify.errors import InvalidArgument

from .noise import Laplace, Noise, NoiseProgram, NoNoise

__all__ = ["SparseVector", "svt", "TOP", "BOTTOM", "VARIANTS"]

TOP, BOTTOM = "⊤", "⊥"
VARIANTS = (1, 2, 3, 4, 5, 6)
#: Lyu, Su, Li's privacy of each variant as a multiple of eps (None: not private at any eps).
PROVED_FACTOR = {1: Fraction(1), 2: Fraction(1), 3: None, 4: None, 5: None, 6: None}


@lru_cache(maxsize=1 << 16)
def _segment(threshold: Noise, query: Noise, T: Fraction, key: tuple) -> ExpSum:
    """``int f_rho(r) prod P(a | r)^n dr`` for ``key = ((q, is_top, n), ...)``."""
    integrand = threshold.density()
    for q, is_top, n in key:
        factor = (query.tail() if is_top else query.cdf()).shift(T - q)
        integrand = integrand * factor.power(n)
    return integrand.integral()


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

    Calling it on ``q = (q_1, ..., q_k)`` returns the exact distribution over answer strings
    (certified floats; exact values through ``exact_probabilities``). Algorithm 3 releases noisy
    answers: use :meth:`output_density` (its ⊤ outcomes are continuous).
    """

    epsilon: Any
    variant: int = 1
    c: int = 1
    T: Any = 1
    name: str = field(default="", compare=False)
    # epsilon and T as exact numbers, set in __post_init__
    _eps: Fraction = field(init=False, repr=False, compare=False)
    _T: Fraction = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise InvalidArgument(f"variant must be one of {VARIANTS} (Lyu, Su, Li Algorithms 1-6), got variant={self.variant!r}.")
        if not isinstance(self.c, int) or isinstance(self.c, bool) or self.c < 1:
            raise InvalidArgument(f"c must be an integer >= 1 (the cutoff), got c={self.c!r}.")
        eps = as_fraction("epsilon", self.epsilon)
        if eps <= 0:
            raise InvalidArgument(f"epsilon must be positive, got epsilon={self.epsilon!r}.")
        object.__setattr__(self, "_eps", eps)
        object.__setattr__(self, "_T", as_fraction("T", self.T))
        if not self.name:
            object.__setattr__(self, "name", f"svt{self.variant}")

    def __repr__(self) -> str:
        return f"SparseVector(epsilon={self.epsilon}, variant={self.variant}, c={self.c}, T={self.T})"

    @property
    def cutoff(self) -> int | None:
        return None if self.variant in (5, 6) else self.c

    @property
    def refresh(self) -> bool:
        return self.variant == 2

    def threshold_noise(self) -> Laplace:
        eps, c = self._eps, self.c
        if self.variant == 2:
            return Laplace(2 * c / eps)
        if self.variant == 4:
            return Laplace(4 / eps)
        return Laplace(2 / eps)

    def query_noise(self) -> Noise:
        eps, c = self._eps, self.c
        return {
            1: lambda: Laplace(4 * c / eps),
            2: lambda: Laplace(4 * c / eps),
            3: lambda: Laplace(2 * c / eps),
            4: lambda: Laplace(4 / (3 * eps)),
            5: lambda: NoNoise(),
            6: lambda: Laplace(2 / eps),
        }[self.variant]()

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

    def sequence_probability(self, q: tuple[Fraction | int, ...], sequence: str) -> ExpSum:
        """The exact probability of one answer string on answers ``q``."""
        threshold, query, T = self.threshold_noise(), self.query_noise(), self._T
        answers = [(q[i], a == TOP) for i, a in enumerate(sequence)]
        if not self.refresh:
            return _segment(threshold, query, T, _key(answers))
        result, start = ExpSum.constant(1), 0
        for i, (_, top) in enumerate(answers):
            if top or i == len(answers) - 1:
                result = result * _segment(threshold, query, T, _key(answers[start : i + 1]))
                start = i + 1
        return result

    def probabilities(self, dataset: tuple) -> dict:
        if self.variant == 3:
            raise InvalidArgument(
                "Algorithm 3 releases noisy answers (continuous outputs); verify it through "
                "verify_pairs, which uses its output_density."
            )
        q = tuple(_answer(i, v) for i, v in enumerate(dataset))
        return {s: self.sequence_probability(q, s) for s in self.sequences(len(q))}

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
        atoms = {BOTTOM * k: _segment(threshold, query, T, _key([(v, False) for v in q]))}
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


def svt(variant: int, *, epsilon: Any, c: int = 1, T: Any | None = None) -> SparseVector:
    """Lyu, Su, Li's Algorithm ``variant`` with the peers' default threshold (0.5 for Algorithm 1,
    1 otherwise) unless ``T`` is given."""
    if T is None:
        T = Fraction(1, 2) if variant == 1 else 1
    return SparseVector(epsilon, variant, c, T)
