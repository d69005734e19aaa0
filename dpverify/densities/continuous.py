"""Privacy loss of mechanisms with continuous outputs: the certified supremum of a density ratio.

A mechanism that releases a noisy value (noisy max returning the max, SVT Algorithm 3 returning the
noisy answer, a noisy histogram) has an output *density*. For a pure claim, the privacy loss of a
pair is ``sup_S ln(P(S)/Q(S))`` = the larger of the atoms' log ratios and the essential supremum of
``ln(p(x)/q(x))`` over each density's support (``inf`` where ``p > 0 = q`` on a set of positive
measure). The densities here are :class:`~dpverify.densities.piecewise.PiecewiseExp` functions: finitely
many pieces, each ``sum a x^d exp(r x + e)`` with rational ``a, r, e``. Two output forms:

* :class:`MixedOutput` — atoms (discrete outcomes with exact probabilities) plus labelled densities
  on the line (``{label} x R``): SVT Algorithm 3, noisy max's value;
* :class:`ProductOutput` — a vector of independent coordinates, each with its density (a noisy
  histogram); the ratio factorises, so its supremum is the product of the coordinates' suprema.

How ``sup p/q`` is found and certified, piece by piece (exact where the ratio is log-linear or
constant, otherwise interval branch and bound, tails cut analytically; nothing is sampled), is
described in :mod:`dpverify.densities._ratio_sup`.

Verdicts of a pure claim (the engine's states): VIOLATED when the certified lower bound of the loss
exceeds the claim — then a concrete output set ``S`` (an atom, ``{label} x`` interval, a product of
intervals) is built, its two probabilities computed exactly, and the two-outcome post-processing
``{S, not S}`` decided by :func:`dpverify.verdict.engine.decide_pair` (a violation of a post-processing is
a violation of the mechanism): the witness is the engine's. HOLDS when every pair's certified upper
bound is below ``e^eps`` or equal to it exactly. UNDECIDED when the enclosure cannot separate them.

An ``(eps, delta)`` claim is decided on ``delta(eps)``, the hockey-stick divergence
(:mod:`dpverify.densities.hockey_stick`): VIOLATED when some pair's certified lower bound exceeds
``delta`` — its set ``S = {p > e^eps q}`` (atoms, intervals per label, or a region of a product),
with ``P(S)`` and ``Q(S)`` exact, decided by the engine as ``{S, not S}`` as above; HOLDS when every
pair's certified upper bound is at most ``delta``; else UNDECIDED. Every result also reports
``delta*`` at the claimed eps (``delta``, its enclosure ``delta_bounds``) and, when asked for, the
privacy profile. Claims are read as the engine reads them
(:func:`dpverify.validation.claim_number`); they must be rational.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from dpverify.densities._ratio_sup import BITS as _BITS
from dpverify.densities._ratio_sup import RatioSup, quick_lower, sup_ratio
from dpverify.densities._ratio_sup import combine as _combine
from dpverify.densities._ratio_sup import exact_interval as _exact_interval
from dpverify.densities._ratio_sup import float_of as _float_of
from dpverify.densities._ratio_sup import float_up_of as _float_up_of
from dpverify.densities.hockey_stick import DeltaSweep
from dpverify.densities.piecewise import ExpSum, PiecewiseExp, as_fraction
from dpverify.errors import InvalidArgument
from dpverify.finite._global_random import call_unchanged
from dpverify.validation import claim_number, exact_number
from dpverify.verdict.engine import Verdict, decide_pair
from dpverify.verdict.results import PairsResult

__all__ = ["MixedOutput", "ProductOutput", "RatioSup", "sup_ratio", "pair_loss", "verify_densities"]

iv = mpmath.iv


@dataclass(frozen=True)
class MixedOutput:
    """Atoms ``{outcome: ExpSum}`` plus densities ``{label: PiecewiseExp}`` on the line."""

    # Keys are any hashable outcomes and labels: ``Mapping`` is invariant in its key type, so
    # ``Mapping[Hashable, ...]`` would refuse a ``dict[str, ExpSum]``.
    atoms: Mapping[Any, ExpSum]
    densities: Mapping[Any, PiecewiseExp]

    def total(self) -> ExpSum:
        return ExpSum.total([*self.atoms.values(), *(d.integral() for d in self.densities.values())])


@dataclass(frozen=True)
class ProductOutput:
    """Independent coordinates ``(x_1, ..., x_k)``, coordinate ``i`` with density ``factors[i]``."""

    factors: tuple[PiecewiseExp, ...]


def _output_quick_lower(first: Any, second: Any) -> float:
    if isinstance(first, ProductOutput):
        return 0.0  # a product's coordinates are compared one by one, mostly exactly: no seed needed
    best = 0.0
    for outcome, p in first.atoms.items():
        q = second.atoms.get(outcome, ExpSum())
        if p.is_zero():
            continue
        if q.is_zero():
            return math.inf
        best = max(best, _float_of((p.interval(_BITS) / q.interval(_BITS)).a))
    for label, p in first.densities.items():
        q = second.densities.get(label, PiecewiseExp.constant(0))
        best = max(best, quick_lower(p, q))
    return best


# -- pairs and verdicts ----------------------------------------------------------------------------


@dataclass
class PairLoss:
    """``sup`` of the likelihood ratio of ``M(D)`` against ``M(D')`` (a ratio, not a log)."""

    low: float
    high: float
    exact: tuple | None
    infinite: bool
    where: tuple | None  # ("atom", outcome) | ("density", label, where) | ("product", [where per coordinate])


def pair_loss(first: Any, second: Any, *, target: float = math.inf, known: float = 0.0) -> PairLoss:
    """The supremum of the likelihood ratio of two outputs of the same form (certified)."""
    if isinstance(first, ProductOutput):
        return _product_loss(first, second, target)
    parts: list[RatioSup] = []
    found = 0.0
    for outcome, p in first.atoms.items():
        if p.is_zero():
            continue
        q = second.atoms.get(outcome, ExpSum())
        if q.is_zero():
            return PairLoss(math.inf, math.inf, None, True, ("atom", outcome))
        ratio = _exact_interval((p, q))
        parts.append(RatioSup(_float_of(ratio.a), _float_up_of(ratio.b), (p, q), False, ("atom", outcome)))
        found = max(found, parts[-1].low)
    for label, p in first.densities.items():
        q = second.densities.get(label)
        if q is None:
            q = PiecewiseExp.constant(0)
        result = sup_ratio(p, q, target=target, known=max(known, found))
        if result.infinite:
            return PairLoss(math.inf, math.inf, None, True, ("density", label, result.where))
        parts.append(RatioSup(result.low, result.high, result.exact, False, ("density", label, result.where)))
        found = max(found, result.low)
    if not parts:
        return PairLoss(0.0, 0.0, None, False, None)
    best = _combine(parts)  # exact only when every part that may hold the supremum is exact
    return PairLoss(best.low, best.high, best.exact, False, best.where)


def _product_loss(first: ProductOutput, second: ProductOutput, target: float) -> PairLoss:
    if len(first.factors) != len(second.factors):
        raise InvalidArgument("product outputs of different lengths cannot be compared")
    low = high = 1.0
    exact_n, exact_d, all_exact = ExpSum.constant(1), ExpSum.constant(1), True
    wheres: list[tuple | None] = []  # per coordinate; None where the two factors are equal
    for p, q in zip(first.factors, second.factors):
        if p.breaks == q.breaks and p.pieces == q.pieces:
            wheres.append(None)
            continue
        result = sup_ratio(p, q)
        if result.infinite:
            return PairLoss(math.inf, math.inf, None, True, ("product", [result.where]))
        low, high = low * result.low, high * result.high
        wheres.append(result.where)
        if result.exact is None:
            all_exact = False
        else:
            exact_n, exact_d = exact_n * result.exact[0], exact_d * result.exact[1]
    # float products of certified bounds: widen by a few ulps per factor to stay certified
    widen = (1 + 4 * len(first.factors) * 2.0**-52)
    return PairLoss(low / widen, high * widen, (exact_n, exact_d) if all_exact else None, False, ("product", wheres))


def _compare_exact(exact: tuple, epsilon: Fraction) -> int:
    """The sign of ``N/D - e^eps`` (D > 0), exactly."""
    numerator, denominator = exact
    return (numerator - denominator.times_exp(epsilon)).sign()


def verify_densities(mechanism: Any, inputs: Any, *, epsilon: Any, delta: Any = 0.0, profile: Any = None,
                     delta_figure: bool = True):
    """:func:`dpverify.checking.input_pairs.verify_pairs` for continuous outputs (module docstring).

    ``profile``: eps values at which the worst-case ``delta(eps)`` is also computed (the privacy
    profile, ``result.details["privacy_profile"]``: ``{"epsilon", "delta", "delta_low", "delta_high"}``
    per point, certified bounds beside the value; ``details["profile_seconds"]`` the time it took).
    ``delta_figure=False`` skips delta* for a pure claim (``delta`` is then nan)."""
    started = time.perf_counter()
    eps = as_fraction("epsilon", epsilon)
    if isinstance(epsilon, float):
        eps = eps * (1 + Fraction(1, 2**50))  # a float claim stands for itself up to its rounding
    delta_eps, delta_claim = _rational_claim("epsilon", epsilon), _rational_claim("delta", delta)
    claim = math.exp(float(eps))
    what = f"the mechanism {getattr(mechanism, '__name__', None) or type(mechanism).__name__}.output_density"
    outputs = {d: call_unchanged(mechanism.output_density, d, what=what) for d in inputs.datasets}
    pairs = list(inputs)
    losses = []
    directed = [(first, second) for a, b in pairs for first, second in ((a, b), (b, a))]
    seeds = {(f, g): _output_quick_lower(outputs[f], outputs[g]) for f, g in directed}
    known = min(max(seeds.values(), default=0.0), 1e300)
    for a, b in sorted(pairs, key=lambda pair: -max(seeds[pair], seeds[pair[::-1]])):
        for first, second in ((a, b), (b, a)):
            loss = pair_loss(outputs[first], outputs[second], target=claim, known=known)
            losses.append((loss, first, second))
            known = max(known, loss.low)
    low = max(loss.low for loss, _, _ in losses)
    high = max(loss.high for loss, _, _ in losses)
    worst, wd, wn = max(losses, key=lambda item: (item[0].low, item[0].high))
    # delta(eps): the worst hockey-stick divergence at the claimed eps (dpverify.densities.hockey_stick)
    sweep = DeltaSweep(outputs, directed, {(f, g): (math.inf if loss.infinite else loss.high) for loss, f, g in losses})
    details: dict[str, Any] = {}
    note = _delta_over_cover(mechanism, inputs) if delta_figure or delta_claim else None
    worst_delta, points = None, None
    grid = None if profile is None else [_rational_claim("profile epsilon", e, widen=False) for e in profile]
    if note is None and (delta_figure or delta_claim or grid is not None):
        try:
            # the profile first, in increasing eps: each point bounds the next (DeltaSweep)
            profile_started = time.perf_counter()
            points = None if grid is None else sweep.profile(sorted({*grid, delta_eps}))
            details["profile_seconds"] = time.perf_counter() - profile_started
            worst_delta = sweep.at(delta_eps)
        except InvalidArgument as unsupported:
            if delta_claim:
                raise
            note = str(unsupported)
    elif delta_claim:
        raise InvalidArgument(note)
    witness, verdict, undecided = None, None, 0
    if delta_claim:
        assert worst_delta is not None
        verdict, witness, undecided = _delta_verdict(worst_delta, sweep, delta_claim, epsilon, delta, inputs)
    else:
        if worst.infinite or worst.low > claim * (1 + 1e-12):
            decision = _witness_decision(mechanism, outputs, wd, wn, worst, eps, epsilon, inputs)
            if decision is not None and decision.verdict is Verdict.VIOLATED:
                verdict, witness = Verdict.VIOLATED, decision.witness
        if verdict is None:
            states = []
            for loss, _, _ in losses:
                if loss.high < claim * (1 - 1e-12):
                    states.append(Verdict.HOLDS)
                elif loss.exact is not None and loss.high <= claim * (1 + 1e-9):
                    states.append(Verdict.HOLDS if _compare_exact(loss.exact, eps) <= 0 else Verdict.UNDECIDED)
                else:
                    states.append(Verdict.UNDECIDED)
            verdict = Verdict.combine(states)
        undecided = sum(1 for loss, _, _ in losses if not (loss.high < claim) and verdict is Verdict.UNDECIDED)
    if note is not None:
        details["delta"] = f"not computed: {note}"
    if grid is None:
        details.pop("profile_seconds", None)
    elif points is not None:
        at = {point.epsilon: point for point in points}
        details["privacy_profile"] = [
            {"epsilon": float(e), "delta": at[e].value, "delta_low": at[e].low, "delta_high": at[e].high} for e in grid
        ]
    if worst.infinite:
        reported = math.inf
    elif worst.exact is not None and worst.exact[0].sign() > 0:
        old_precision = iv.prec
        try:  # ln(N/D) of the exact N/D in 120-bit intervals, rounded once to float
            iv.prec = 120
            reported = float(mpmath.mpf(iv.log(worst.exact[0].interval(120) / worst.exact[1].interval(120)).mid.a))
        finally:
            iv.prec = old_precision
    else:
        reported = math.log(low) if low > 0 else 0.0
    return PairsResult.on_inputs(
        inputs, started,
        holds=verdict.passes,
        epsilon=reported,
        delta=math.nan if worst_delta is None else worst_delta.value,
        witness=witness,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        pairs=len(pairs),
        certified_pairs=len(losses),
        undecided=undecided,
        verdict=verdict,
        worst_pair=(wd, wn),
        epsilon_bounds=(
            math.inf if worst.infinite else (math.log(low) if low > 0 else -math.inf),
            math.inf if (worst.infinite or high == math.inf) else (math.log(high) if high > 0 else -math.inf),
        ),
        details=details,
        delta_bounds=None if worst_delta is None else (worst_delta.low, worst_delta.high),
        delta_pair=None if worst_delta is None else worst_delta.pair,
    )


def _rational_claim(name: str, value: Any, *, widen: bool = True) -> Fraction:
    """A claimed eps or delta as the exact rational the engine checks it at
    (:func:`dpverify.validation.claim_number`: a float stands for its simplest fraction, widened by
    its rounding; ``widen=False`` for figures that are not claims, such as a profile's eps)."""
    number = claim_number(name, value) if widen else exact_number(name, value)
    if not isinstance(number, Fraction):
        raise InvalidArgument(
            f"{name} must be rational for continuous outputs (the densities' exponents are exact rationals), "
            f"got {name}={value!r}; pass a Fraction (e.g. Fraction(7, 10)) or a float."
        )
    return number


def _delta_over_cover(mechanism: Any, inputs: Any) -> str | None:
    """Why ``delta`` cannot be read on a pair cover, or None (it can, or there is no cover).

    A cover (:mod:`dpverify.checking.pair_cover`) holds every loss component's key, and each
    component's figure depends only on its key. The pure loss is the *largest* component, so the
    cover's worst pair is the whole set's; ``delta`` is the *sum* over components (atoms and
    labels are disjoint parts of the output), so this holds for ``delta`` only when every directed
    pair of the whole set has at most one component: then its ``delta`` is that component's, also
    attained on the cover."""
    full = getattr(inputs, "covers", None)
    if full is None:
        return None
    components = getattr(mechanism, "loss_components", None)
    if components is not None and all(
        len(components(a, b)) <= 1 and len(components(b, a)) <= 1 for a, b in full
    ):
        return None
    return (
        f"delta over a pair cover needs at most one loss component per pair (delta adds up over components), "
        f"and {getattr(mechanism, 'name', mechanism)!r} has more on {full.name}; verify on the whole input set "
        "(without covering_pairs) to decide or measure delta"
    )


def _delta_verdict(worst: Any, sweep: DeltaSweep, delta_claim: Fraction, epsilon: Any, delta: Any, inputs: Any):
    """``(verdict, witness, undecided pairs)`` of an (eps, delta) claim from the worst case: VIOLATED
    when a pair's certified lower bound exceeds delta (its set S, with P(S) and Q(S) exact, decided
    by the engine as the post-processing {S, not S}); HOLDS when every pair's upper bound is at most
    delta; else UNDECIDED. There is no float error here to be within: every figure is certified."""
    if worst.stick is not None and Fraction(worst.low) > delta_claim:
        stick = worst.stick
        dataset, neighbor = worst.pair
        given = {frozenset(p) for p in inputs}
        description, complement = stick.event, f"not ({stick.event})"
        p_map = {description: stick.p_mass.to_sympy(), complement: (1 - stick.p_mass).to_sympy()}  # totals are 1
        q_map = {description: stick.q_mass.to_sympy(), complement: (1 - stick.q_mass).to_sympy()}
        decision = decide_pair(
            p_map, q_map, epsilon, delta, dataset=dataset, neighbor=neighbor, float_error=0.0,
            is_neighbor=lambda a, b: frozenset((a, b)) in given,
        )
        if decision.verdict is Verdict.VIOLATED:
            return Verdict.VIOLATED, decision.witness, 0
        return Verdict.UNDECIDED, None, 1
    if Fraction(worst.high) <= delta_claim:
        return Verdict.HOLDS, None, 0
    straddling = sum(1 for stick in sweep.computed(worst.epsilon) if Fraction(stick.high) > delta_claim)
    return Verdict.UNDECIDED, None, max(straddling, 1)


# -- witnesses -------------------------------------------------------------------------------------


def _candidate_sets(where: tuple, piece_low=None, piece_high=None):
    """Output sets near a supremum, from wide to narrow: (low, high) with None for infinite ends."""
    kind = where[0]
    if kind == "interval":
        low, high = where[1], where[2]
        if low is None and high is None:
            yield (Fraction(-1), Fraction(1))
        elif low is None:
            yield (high - 1, high)
        elif high is None:
            yield (low, low + 1)
        else:
            yield (low, high)
        return
    if kind == "left":
        x = where[1]
        for step in range(60):
            yield (None, x - (2**step - 1))
        return
    if kind == "right":
        x = where[1]
        for step in range(60):
            yield (x + (2**step - 1), None)
        return
    if kind in ("right_of", "left_of"):
        end, other = where[1], where[2]
        width = Fraction(1) if other is None else abs(other - end)
        for step in range(60):
            w = width / 2**step
            yield (end, end + w) if kind == "right_of" else (end - w, end)
        return
    if kind == "point":
        x = where[1]
        for step in range(60):
            w = Fraction(1, 2**step)
            yield (x - w, x + w)


def _describe(low, high) -> str:
    left = "(-inf" if low is None else f"[{float(low):.6g}"
    right = "+inf)" if high is None else f"{float(high):.6g}]"
    return f"{left}, {right}"


def _witness_decision(mechanism, outputs, dataset, neighbor, loss: PairLoss, eps: Fraction, epsilon, inputs):
    """Build an output set S near the supremum, compute P(S), Q(S) exactly, let the engine decide."""
    first, second = outputs[dataset], outputs[neighbor]
    given = {frozenset(p) for p in inputs}

    def is_given(a, b) -> bool:
        return frozenset((a, b)) in given

    factor = ExpSum.exp(eps)
    where_found = loss.where
    if not where_found:
        return None  # no location of the supremum: no output set to build
    kind = where_found[0]
    sets = []
    if kind == "atom":
        outcome = where_found[1]
        sets.append((repr(outcome), first.atoms[outcome], second.atoms.get(outcome, ExpSum())))
    elif kind == "density":
        label, where = where_found[1], where_found[2]
        p, q = first.densities[label], second.densities.get(label, PiecewiseExp.constant(0))
        for low, high in _candidate_sets(where):
            sets.append((f"{label} in {_describe(low, high)}", p.integral(low, high), q.integral(low, high)))
    elif kind == "product":
        wheres = where_found[1]
        generators = [None if w is None else list(_candidate_sets(w)) for w in wheres]
        for step in range(60):
            P, Q, parts = ExpSum.constant(1), ExpSum.constant(1), []
            for i, g in enumerate(generators):
                if g is None:
                    continue
                low, high = g[min(step, len(g) - 1)]
                P = P * first.factors[i].integral(low, high)
                Q = Q * second.factors[i].integral(low, high)
                parts.append(f"x{i} in {_describe(low, high)}")
            sets.append((" and ".join(parts) or "everything", P, Q))
    for description, P, Q in sets:
        if (P - factor * Q).sign() > 0:
            complement = f"not ({description})"
            p_map = {description: P.to_sympy(), complement: (1 - P).to_sympy()}
            q_map = {description: Q.to_sympy(), complement: (1 - Q).to_sympy()}
            return decide_pair(p_map, q_map, epsilon, 0, dataset=dataset, neighbor=neighbor, is_neighbor=is_given)
    return None
