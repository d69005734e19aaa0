"""Stable and private predictions of Dagan–Feldman 2020 (Dagan-Feldman): C9, C11, C12.

Each learner answers a query ``x`` with a random label; its *prediction* distribution for a dataset
``S`` is the probability ``P[A^S(x) = 1]`` for every ``x`` (the paper's randomized hypothesis
``h: X -> [0, 1]``, Appendix A). Parameters keep the paper's names: ``n`` = |S|, ``n_prime`` = n'
(the subsample size), ``gamma`` (stability), ``eta`` (net size / inverse temperature), ``alpha``
(flip probability); ``T`` = S_I is the subsample, ``H_T`` one representative per labeling of T's
points (class order, rule ``first`` by default), ``L_S`` the empirical error on all of S.

* **A^sta** (Appendix B, Lemma 13 / Thm. 10, claim C9): I uniform of size n', EM over ``H_{S_I}``
  with loss ``L_S`` and privacy ``gamma``: ``P(h) ∝ exp(-n L_S(h) gamma / 2)``; predict ``h(x)``.
  The outline's variant (Section 3: ``|T| = gamma n / 2``, EM at ``gamma / 4``) is the parameter
  choice ``variant="outline"`` of :func:`stable_parameters`.
* **Lemma 8** (C11): an eps-DP prediction algorithm run on a uniform subset of size ``n' = eta n``;
  inner predictors: C6's realizable predictor (one record per part) or EM over the class.
* **Appendix C** (Eq. (8)-(9), Lemma 15, C12): I uniform of size n', ``h`` from ``H_{S_I}`` with
  weight ``lambda_h = exp(-L_S(h) / eta)`` (the EM at privacy ``2/(eta n)``), normalised over
  ``H_{S_I}``; ``phi_S(h)`` = C6 at privacy ``1/(eta n)`` trained on ``S_h`` (S relabeled by h);
  predict ``phi_S(h)(x)``. The final flip (Corollary 2) is :mod:`dpverify.mechanisms.label_flip`.

Every learner comes as a literal *reference* on an ordered dataset (all ``C(n, n')`` index sets,
``H_T`` grouped by hand, C6 called as :class:`~dpverify.mechanisms.private_prediction.RealizablePredictor`)
and a *fast* exchangeable form over count vectors (sub-multisets grouped by their point support,
hypergeometric weights), returning ``(MultisetTable, probs)`` with ``probs[i, x, y] = P[A^{S_i}(x)=y]``.
Both labels are computed as sums of positive terms (never ``1 - p``), so each probability carries a
small *relative* error, as the checker's error model (:mod:`dpverify.verdict.rows`) requires.
Tests assert the two agree on every multiset of small instances.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.finite.multisets import MultisetTable, hypergeometric_weights, table
from dpverify.finite.records import ConceptClass
from dpverify.validation import check_choice, check_positive

from .exponential import exponential_rows
from .private_prediction import RealizablePredictor, vote_answer
from .relabeling import exact_parameter

__all__ = [
    "VARIANTS",
    "INNER_PREDICTORS",
    "PHI_LEARNERS",
    "StableParameters",
    "stable_parameters",
    "a_sta_reference",
    "a_sta_table",
    "inner_predictor",
    "subsampled_prediction_reference",
    "subsampled_prediction_table",
    "appendix_c_reference",
    "appendix_c_table",
    "not_net_reference",
    "not_net_table",
]

VARIANTS = ("lemma13", "outline")
INNER_PREDICTORS = ("realizable", "exponential")
#: phi_S(h): C6 at privacy 1/(eta n) (the paper), or the non-private first consistent concept (mutant).
PHI_LEARNERS = ("realizable", "mutant_consistent")


def _precondition(ok: bool, lemma: str, rule: str, values: str) -> None:
    if not ok:
        raise InvalidArgument(
            f"{lemma} needs {rule}, got {values}; change the parameters, or pass "
            "outside_preconditions=True to measure without asserting the claim."
        )


def _check_n_prime(n_prime: int, n: int) -> None:
    if isinstance(n_prime, bool) or not isinstance(n_prime, int) or not 1 <= n_prime <= n:
        raise InvalidArgument(
            f"the subsample size n' must be an integer in [1, n={n}], got n_prime={n_prime!r}; "
            "the paper draws I ⊆ [n] with |I| = n' in [n]."
        )


# -- A^sta: parameters and claims ------------------------------------------------------------------


@dataclass(frozen=True)
class StableParameters:
    """How A^sta is run (``n_prime``, ``em_privacy``) and what it claims.

    Attributes:
        variant: ``"lemma13"`` (Appendix B: n' given, EM at gamma, claim 3 gamma) or ``"outline"``
            (Section 3: ``n' = floor(gamma n / 2)``, EM at gamma/4, claim gamma).
        gamma: the paper's gamma, as the fraction it stands for.
        claimed_stability: 3 gamma (Lemma 13) or gamma (outline).
    """

    variant: str
    gamma: Fraction
    n: int
    n_prime: int
    em_privacy: Fraction
    claimed_stability: Fraction

    @property
    def explicit_stability(self) -> float:
        """The proof's explicit form ``(e^{em_privacy} - 1) + n'/n`` (Lemma 13's last display)."""
        return math.expm1(float(self.em_privacy)) + self.n_prime / self.n


def stable_parameters(
    gamma, n: int, *, variant: str = "lemma13", n_prime: int | None = None, outside_preconditions: bool = False
) -> StableParameters:
    """Dagan–Feldman 2020 Lemma 13 / Section 3 outline: A^sta's subsample size, EM privacy and claimed stability.

    Args:
        gamma: the stability parameter (a float is read as the fraction it stands for).
        n: the dataset size.
        variant: ``"lemma13"`` (default) or ``"outline"``.
        n_prime: Lemma 13's n' (default ``floor(gamma n)``, the largest allowed); the outline fixes
            ``n' = floor(gamma n / 2)`` (the paper's ``gamma n / 2`` rounded down, which keeps
            ``n'/n <= gamma/2``) and rejects an explicit one.
        outside_preconditions: skip the checks of ``n' <= gamma n`` and ``gamma <= 1``.

    Raises:
        InvalidArgument: unknown variant, n' outside [1, n], or a failed precondition (named).
    """
    check_choice("variant", variant, VARIANTS, what="A^sta variant")
    g = exact_parameter(check_positive("gamma", gamma), "gamma")
    if variant == "outline":
        if n_prime is not None:
            raise InvalidArgument(
                "the outline variant fixes |T| = gamma n / 2; drop n_prime (or use variant='lemma13')."
            )
        n_prime = math.floor(g * n / 2)
        em, claimed = g / 4, g
    else:
        n_prime = math.floor(g * n) if n_prime is None else n_prime
        em, claimed = g, 3 * g
    _check_n_prime(n_prime, n)
    if not outside_preconditions:
        _precondition(g <= 1, "Lemma 13", "gamma <= 1 (it uses e^x <= 1 + 2x for x <= 1)", f"gamma={gamma}")
        _precondition(n_prime <= g * n, "Lemma 13", "n' <= gamma n", f"n'={n_prime}, gamma={gamma}, n={n}")
    return StableParameters(variant, g, n, n_prime, em, claimed)


# -- shared pieces --------------------------------------------------------------------------------


def _support_groups(t_table: MultisetTable) -> dict[tuple[int, ...], list[int]]:
    """Sub-multisets grouped by their point support (the distinct x of T): H_T depends on it only."""
    points = t_table.counts[:, 0::2] + t_table.counts[:, 1::2]
    groups: dict[tuple[int, ...], list[int]] = {}
    for row, counts in enumerate(points):
        groups.setdefault(tuple(np.flatnonzero(counts).tolist()), []).append(row)
    return groups


def _support_weights(s_counts: np.ndarray, t_table: MultisetTable):
    """Yield ``(support, P[T's points = support | S])`` over every support (hypergeometric sums).

    With ``n' = n`` (T = S, the no-subsampling mutants) the weight is the indicator of S's support.
    """
    if t_table.n == int(s_counts[0].sum()):
        points = s_counts[:, 0::2] + s_counts[:, 1::2]
        for support in {tuple(np.flatnonzero(row).tolist()) for row in points}:
            mask = np.zeros(points.shape[1], dtype=bool)
            mask[list(support)] = True
            yield support, np.all((points > 0) == mask, axis=1).astype(float)
        return
    for support, rows in _support_groups(t_table).items():
        weight = sum(hypergeometric_weights(s_counts, t_table.counts[row]) for row in rows)
        if np.any(weight > 0):
            yield support, weight


def _labelings_by_hand(concept_class: ConceptClass, points: Sequence[int], representative: str) -> list[int]:
    """H_T literally: group the concepts by their labels on ``points``; one member per group."""
    if representative not in ("first", "last"):
        raise InvalidArgument(
            f"the reference implements representative='first' or 'last', got {representative!r}."
        )
    groups: dict[tuple, list[int]] = {}
    for concept in range(len(concept_class)):
        groups.setdefault(tuple(concept_class.label(concept, x) for x in points), []).append(concept)
    return [members[0] if representative == "first" else members[-1] for members in groups.values()]


def _labels(C_rows: np.ndarray) -> np.ndarray:
    """``(..., d, 2)`` indicator of each label: ``[..., x, y] = 1[c(x) = y]``."""
    return np.stack([~C_rows, C_rows], axis=-1).astype(float)


# -- A^sta (C9) -----------------------------------------------------------------------------------


def a_sta_reference(
    concept_class: ConceptClass, S: Sequence[tuple[int, int]], query: int, *, n_prime: int, em_privacy,
    representative: str = "first",
) -> Distribution:
    """Dagan–Feldman 2020 Appendix B (Lemma 13), literally: ``(1/C(n, n')) sum_I h_{S, S_I}(query)``.

    ``h_{S, T}`` = EM over H_T with ``P(h) ∝ exp(-n L_S(h) em_privacy / 2)``; returns the
    distribution of the predicted label.
    """
    n = len(S)
    _check_n_prime(n_prime, n)
    em = float(em_privacy)
    mistakes = [sum(concept_class.label(c, x) != y for x, y in S) for c in range(len(concept_class))]
    index_sets = list(itertools.combinations(range(n), n_prime))
    components = []
    for I in index_sets:
        H_T = _labelings_by_hand(concept_class, [S[i][0] for i in I], representative)
        weights = {0: 0.0, 1: 0.0}
        for h in H_T:
            weights[concept_class.label(h, query)] += math.exp(-em * mistakes[h] / 2)
        components.append((1 / len(index_sets), Distribution.from_weights(weights)))
    return Distribution.mixture(components)


def a_sta_table(
    concept_class: ConceptClass, n: int, n_prime: int, em_privacy, *, representative="first"
) -> tuple[MultisetTable, np.ndarray]:
    """A^sta on every dataset multiset of size n: ``probs[i, x, y] = P[A^{S_i}(x) = y]``.

    ``P_S = sum_A P[T's points = A | S] * EM_S(H_A)``: H_T depends on T only through its point
    support A, and the EM weights on S only through S's mistake counts.
    """
    _check_n_prime(n_prime, n)
    C = concept_class.matrix
    mistake = concept_class.mistake_matrix()
    z = mistake.shape[0]
    s_table, t_table = table(z, n), table(z, n_prime)
    mistakes_S = s_table.counts @ mistake  # (datasets, concepts)
    probs = np.zeros((len(s_table), concept_class.domain_size, 2))
    em = float(em_privacy)
    for support, weight in _support_weights(s_table.counts, t_table):
        reps = np.array(list(concept_class.labelings(support, representative=representative).values()))
        chosen = exponential_rows(-em * mistakes_S[:, reps] / 2)  # (datasets, |H_T|)
        probs += weight[:, None, None] * np.einsum("ih,hxy->ixy", chosen, _labels(C[reps]))
    return s_table, probs


# -- Lemma 8 (C11) --------------------------------------------------------------------------------


def inner_predictor(concept_class: ConceptClass, query: int, epsilon, *, inner: str = "realizable",
                    aggregation: str = "exponential"):
    """An eps-DP prediction algorithm A' for Lemma 8: ``dataset -> Distribution over {0, 1}``.

    ``"realizable"``: C6 (Li–Wang–Ye 2025, Lemma 19) with one record per part; ``"exponential"``: EM over the
    class with score = mistakes, ``P(c) ∝ exp(-eps mistakes / 2)``, predict ``c(query)`` (eps-DP by
    Lemma 7 / post-processing).
    """
    check_choice("inner", inner, INNER_PREDICTORS, what="inner predictor")
    eps = float(epsilon)

    def predict(dataset: tuple) -> Distribution:
        if inner == "realizable":
            return RealizablePredictor(concept_class, eps, query, len(dataset), aggregation)(dataset)
        weights = {0: 0.0, 1: 0.0}
        for c in range(len(concept_class)):
            mistakes = sum(concept_class.label(c, x) != y for x, y in dataset)
            weights[concept_class.label(c, query)] += math.exp(-eps * mistakes / 2)
        return Distribution.from_weights(weights)

    predict.__name__ = f"{inner}_predictor"
    return predict


def subsampled_prediction_reference(
    concept_class: ConceptClass, S: Sequence[tuple[int, int]], query: int, *, n_prime: int, epsilon,
    inner: str = "realizable", aggregation: str = "exponential",
) -> Distribution:
    """Dagan–Feldman 2020 Lemma 8, literally: A' on ``S_I`` for each of the ``C(n, n')`` index sets (uniform)."""
    _check_n_prime(n_prime, len(S))
    predict = inner_predictor(concept_class, query, epsilon, inner=inner, aggregation=aggregation)
    index_sets = list(itertools.combinations(range(len(S)), n_prime))
    return Distribution.mixture((1 / len(index_sets), predict(tuple(S[i] for i in I))) for I in index_sets)


def _inner_on_multisets(concept_class: ConceptClass, t_table: MultisetTable, epsilon: float, inner: str,
                        aggregation: str) -> np.ndarray:
    """``out[j, x, y] = P[A'(t_j)(x) = y]`` for every sub-multiset t_j (the inner predictor, vectorised)."""
    C = concept_class.matrix
    mistake = concept_class.mistake_matrix()
    if inner == "exponential":
        return np.einsum("jc,cxy->jxy", exponential_rows(-epsilon * (t_table.counts @ mistake) / 2), _labels(C))
    # C6, one record per part: part i votes g_i(x), g_i = first ERM of its single record.
    vote_of = C[np.argmin(mistake, axis=1)].astype(float)  # (records, queries)
    votes = t_table.counts @ vote_of
    size = int(t_table.counts[0].sum())
    if aggregation != "exponential":
        raise InvalidArgument(f"the fast Lemma 8 table implements aggregation='exponential', got {aggregation!r}.")
    return vote_answer(votes, size, epsilon)


def subsampled_prediction_table(
    concept_class: ConceptClass, n: int, n_prime: int, epsilon, *, inner: str = "realizable",
    aggregation: str = "exponential",
) -> tuple[MultisetTable, np.ndarray]:
    """Lemma 8 on every dataset multiset: ``P_S = sum_t hyp(t; S) P[A'(t) = 1]``."""
    check_choice("inner", inner, INNER_PREDICTORS, what="inner predictor")
    _check_n_prime(n_prime, n)
    z = 2 * concept_class.domain_size
    s_table, t_table = table(z, n), table(z, n_prime)
    inner_out = _inner_on_multisets(concept_class, t_table, float(epsilon), inner, aggregation)
    probs = np.zeros((len(s_table), concept_class.domain_size, 2))
    for t, out in zip(t_table.counts, inner_out):
        probs += hypergeometric_weights(s_table.counts, t)[:, None, None] * out[None]
    return s_table, probs


# -- Appendix C (C12) -----------------------------------------------------------------------------


def _check_phi(phi: str) -> None:
    check_choice("phi", phi, PHI_LEARNERS, what="phi learner")


def appendix_c_reference(
    concept_class: ConceptClass, S: Sequence[tuple[int, int]], query: int, *, n_prime: int, eta,
    representative: str = "first", phi: str = "realizable",
) -> Distribution:
    """Dagan–Feldman 2020 Appendix C, Eq. (8)-(9), literally (before the flip): the predicted label's distribution.

    ``h_{S,T} = (1/Z) sum_{h in H_T} lambda_h phi_S(h)`` with ``lambda_h = exp(-L_S(h)/eta)`` and
    ``Z = sum_{h in H_T} lambda_h`` (the paper prints ``H_{S_I}``, the same set for T = S_I);
    ``phi_S(h)`` = C6 at privacy ``1/(eta n)`` with one record per part on
    ``S_h = ((x_i, h(x_i)))_i``.
    """
    _check_phi(phi)
    n = len(S)
    _check_n_prime(n_prime, n)
    e = exact_parameter(eta)
    privacy = float(1 / (e * n))
    index_sets = list(itertools.combinations(range(n), n_prime))
    components = []
    for I in index_sets:
        H_T = _labelings_by_hand(concept_class, [S[i][0] for i in I], representative)
        lam = [math.exp(-sum(concept_class.label(h, x) != y for x, y in S) / n / float(e)) for h in H_T]
        Z = math.fsum(lam)
        for h, weight in zip(H_T, lam):
            S_h = tuple((x, concept_class.label(h, x)) for x, _ in S)
            if phi == "realizable":
                answer = RealizablePredictor(concept_class, privacy, query, n)(S_h)
            else:
                g = int(concept_class.consistent(S_h)[0])
                answer = Distribution.point(concept_class.label(g, query))
            components.append((weight / Z / len(index_sets), answer))
    return Distribution.mixture(components)


def appendix_c_table(
    concept_class: ConceptClass, n: int, n_prime: int, eta, *, representative="first", phi: str = "realizable",
) -> tuple[MultisetTable, np.ndarray]:
    """Appendix C (before the flip) on every dataset multiset: ``probs[i, x, y] = P[h_{S_i}(x) = y]``.

    ``phi_S(h)``'s votes: the record ``(p, h(p))`` votes ``g(x)`` with ``g`` the first concept
    labeling p as h does, so ``votes_h(x) = sum_p count_S(p) vote[p, h(p), x]``.
    """
    _check_phi(phi)
    _check_n_prime(n_prime, n)
    C = concept_class.matrix
    d = concept_class.domain_size
    mistake = concept_class.mistake_matrix()
    z = mistake.shape[0]
    e = exact_parameter(eta)
    privacy = float(1 / (e * n))
    s_table, t_table = table(z, n), table(z, n_prime)
    mistakes_S = s_table.counts @ mistake
    points_S = s_table.counts[:, 0::2] + s_table.counts[:, 1::2]  # (datasets, d)
    # vote[p, y]: the first concept labeling p with y, as a row over queries (its labels).
    first_with = np.argmin(mistake, axis=1).reshape(d, 2)  # record (p, y) has index 2p + y
    probs = np.zeros((len(s_table), d, 2))
    for support, weight in _support_weights(s_table.counts, t_table):
        reps = np.array(list(concept_class.labelings(support, representative=representative).values()))
        lam = exponential_rows(-mistakes_S[:, reps] / (n * float(e)))  # lambda_h / Z
        answer = np.zeros((len(s_table), d, 2))
        for column, h in enumerate(reps):
            if phi == "realizable":
                votes = points_S @ C[first_with[np.arange(d), C[h].astype(int)]].astype(float)
                said = vote_answer(votes, n, privacy)
            else:  # the first concept agreeing with h on S's points (deterministic, not private)
                disagree = points_S @ (C != C[h][None, :]).T.astype(float)  # (datasets, concepts)
                said = _labels(C[np.argmax(disagree == 0, axis=1)])
            answer += lam[:, column, None, None] * said
        probs += weight[:, None, None] * answer
    return s_table, probs


# -- Appendix C's additive part: index sets whose rest is not an eta-net ---------------------------


def _max_disagreement(concept_class: ConceptClass, agree_on: Sequence[int], point_counts: np.ndarray) -> np.ndarray:
    """max over h, h' in H agreeing on ``agree_on`` of the number of records (per row of
    ``point_counts``) on which they differ."""
    C = concept_class.matrix
    columns = list(agree_on)
    worst = np.zeros(point_counts.shape[0])
    for a, b in itertools.combinations(range(len(concept_class)), 2):
        if np.array_equal(C[a, columns], C[b, columns]):
            worst = np.maximum(worst, point_counts @ (C[a] != C[b]).astype(float))
    return worst


def not_net_table(concept_class: ConceptClass, n: int, n_prime: int, eta) -> tuple[MultisetTable, np.ndarray]:
    """For every rest R = S minus the changed record (a multiset of size n - 1): the fraction of
    index sets J ⊆ [n] minus {changed}, |J| = n' - 1, whose points are *not* an eta-net for H with
    respect to the uniform distribution over R (Appendix C, the family I'').

    eta-net (Section 2.1): every h, h' in H that agree on J's points differ on at most
    ``eta (n - 1)`` records of R. ``|I''| / C(n, n') = (n'/n) * fraction``.
    """
    _check_n_prime(n_prime, n)
    e = exact_parameter(eta)
    z = 2 * concept_class.domain_size
    r_table, j_table = table(z, n - 1), table(z, n_prime - 1)
    points_R = r_table.counts[:, 0::2] + r_table.counts[:, 1::2]
    fraction = np.zeros(len(r_table))
    limit = e * (n - 1)
    for support, weight in _support_weights(r_table.counts, j_table):
        worst = _max_disagreement(concept_class, support, points_R)
        failed = np.array([Fraction(int(w)) > limit for w in worst])  # exact comparison with eta (n - 1)
        fraction += weight * failed
    return r_table, fraction


def not_net_reference(concept_class: ConceptClass, S: Sequence[tuple[int, int]], changed: int, n_prime: int, eta) -> Fraction:
    """Appendix C's ``|I''| / |I|`` literally: index sets I ∋ changed, |I| = n', whose rest
    ``I \\ {changed}`` is not an eta-net for H w.r.t. the uniform distribution over S minus the
    changed record (exact Fraction)."""
    n = len(S)
    _check_n_prime(n_prime, n)
    e = exact_parameter(eta)
    others = [i for i in range(n) if i != changed]
    bad = 0
    for J in itertools.combinations(others, n_prime - 1):
        net = True
        for h, g in itertools.combinations(range(len(concept_class)), 2):
            if all(concept_class.label(h, S[j][0]) == concept_class.label(g, S[j][0]) for j in J):
                differ = sum(concept_class.label(h, S[j][0]) != concept_class.label(g, S[j][0]) for j in others)
                if differ > e * (n - 1):
                    net = False
                    break
        bad += not net
    return Fraction(bad, math.comb(n, n_prime))
