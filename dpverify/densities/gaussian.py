"""The Gaussian mechanism ``M(D) = f(D) + N(0, sigma^2 I)``, decided exactly on given input pairs.

A mechanism declares itself Gaussian by the :class:`GaussianOutput` protocol (``gaussian_output =
True``, ``sigma``, ``answer(dataset)`` the query vector ``f(D)`` of ``k`` rational numbers), as one
with densities declares ``continuous_output``; :func:`dpverify.checking.input_pairs.verify_pairs`
then sends it to :func:`decide_gaussian`. The pair's privacy profile, Balle and Wang's Theorem 8, and
the calibrations of ``sigma`` are in :mod:`dpverify.densities.gaussian_profile`; ``Phi`` is certified
in :mod:`dpverify.densities.normal`. The decision rests on three facts, proved here.

**One direction carries the whole pair.** With ``Delta = ||f(D) - f(D')||_2 > 0`` and
``u = (f(D) - f(D'))/Delta``, the map ``y -> (<y - f(D'), u>, the rest of y in an orthonormal basis)``
is an isometry that sends ``N(f(D), sigma^2 I)`` to ``N(Delta, sigma^2) x N(0, sigma^2 I_{k-1})`` and
``N(f(D'), sigma^2 I)`` to ``N(0, sigma^2) x N(0, sigma^2 I_{k-1})``. An invertible map is a
post-processing both ways, so the pair's privacy profile is that of ``N(Delta, sigma^2)`` against
``N(0, sigma^2)``: it depends on ``Delta`` alone. The privacy loss is
``L(z) = (Delta z - Delta^2/2)/sigma^2`` at ``z = <y - f(D'), u>``, increasing in ``z``.

**The optimal event is a half-space.** The hockey-stick divergence is attained by
``S* = {L > eps} = {z >= t*}``, ``t* = Delta/2 + eps sigma^2/Delta``, and Theorem 8 is exactly
``P(S*) - e^eps Q(S*)``. The pair is therefore decided on the two-outcome post-processing
``{S*, not S*}`` (:class:`HalfSpace` outcomes), by the engine (:func:`dpverify.verdict.engine.decide`)
as :func:`dpverify.densities.continuous.verify_densities` decides its witness sets: its hockey-stick
value at eps is ``delta(eps)`` (on ``not S*``, ``L <= eps``, so that outcome adds nothing), and the
reverse direction of the same two outcomes is a post-processing too, so it cannot exceed it. HOLDS
on the post-processing is HOLDS for the mechanism; a VIOLATED comes with the engine's witness, a real
half-space of outputs. The set is taken at the claim's epsilon as the engine reads it
(:func:`dpverify.validation.claim_number`). For a pure claim (``delta = 0``) the same set is the
witness: every point of ``S*`` has loss ``> eps``, so ``P(S*) > e^eps Q(S*)``; and since
``P(z >= t)/Q(z >= t) >= e^{L(t)} -> inf`` as ``t -> inf``, eps* is infinite (reported as
``math.inf``: a proof, not a measurement).

**Every distance is decided.** Pairs are grouped by their exact ``Delta^2`` (first fact) and one
representative pair per group is decided; ``delta`` grows with ``Delta``
(:mod:`~dpverify.densities.gaussian_profile`), so the largest group is the worst, but the checker
does not rely on it. The engine reads the certified intervals as the exact rows; a verdict it cannot
separate at :data:`~dpverify.densities.normal.BITS` bits is recomputed at 640.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar, Protocol

import mpmath
import numpy as np

from dpverify.densities.gaussian_profile import pair_profile, positive_sigma
from dpverify.densities.normal import BITS, as_interval, float_at_least, float_at_most, fraction_of, precision
from dpverify.densities.piecewise import as_fraction
from dpverify.errors import InvalidArgument, NondeterministicMechanism
from dpverify.finite._global_random import run_unchanged
from dpverify.validation import check_delta, check_epsilon, claim_number, exact_number
from dpverify.verdict.engine import RowPairs, Verdict, decide
from dpverify.verdict.results import PairsResult

__all__ = ["GaussianOutput", "HalfSpace", "check_gaussian", "decide_gaussian"]

#: The working precision of the second attempt, when the first cannot separate the verdict.
_RETRY_BITS = 640


class GaussianOutput(Protocol):
    """A mechanism ``M(D) = f(D) + N(0, sigma^2 I_k)`` declared to the checker.

    The checker never samples it: it reads ``f(D)`` on every dataset of the input pairs and decides
    the claim from ``sigma`` and the distances ``||f(D) - f(D')||_2`` alone (module docstring).
    :class:`dpverify.mechanisms.gaussian.GaussianMechanism` is one.

    Attributes:
        gaussian_output: True: the declaration :func:`dpverify.checking.input_pairs.verify_pairs`
            routes on (a class attribute, as ``continuous_output`` for densities).
        sigma: the noise's standard deviation, a positive rational (int, Fraction; a float is read
            exactly).
    """

    gaussian_output: ClassVar[bool]

    @property
    def sigma(self) -> Any: ...

    def answer(self, dataset: Any) -> Iterable[Any]:
        """``f(D)``: the query vector of ``k`` rational numbers, a function of ``dataset`` alone."""
        ...


@dataclass(frozen=True)
class HalfSpace:
    """An output set of the Gaussian mechanism on a pair: ``{y : <y - f(D'), u> >= t}`` (or its
    complement), ``u = (f(D) - f(D'))/Delta``, ``t = Delta/2 + eps sigma^2/Delta`` at the claim's eps.

    Attributes:
        toward, away: ``f(D)`` and ``f(D')`` (exact).
        sigma: the noise's standard deviation (exact).
        epsilon: the exact epsilon ``t`` is taken at (the claim as the engine reads it).
        threshold: ``t`` rounded to a float (shown only; the set is defined by the exact ``t``).
        complement: the set ``{<y - f(D'), u> < t}``.
    """

    toward: tuple
    away: tuple
    sigma: Fraction
    epsilon: Any
    threshold: float
    complement: bool = False

    def __repr__(self) -> str:
        def shown(vector: tuple) -> str:
            return "(" + ", ".join(str(v) for v in vector) + ")"

        relation_ = "<" if self.complement else ">="
        return (
            f"{{y : <y - f(D'), u> {relation_} t}} with f(D) = {shown(self.toward)}, f(D') = {shown(self.away)}, "
            f"u = (f(D) - f(D'))/Delta, t = Delta/2 + eps sigma^2/Delta = {self.threshold:.10g}"
        )

    def probabilities(self) -> tuple[Any, Any]:
        """``(P(S), Q(S))`` as exact sympy expressions: ``Phi(+-(a - b))`` and ``Phi(-+(a + b))`` with
        ``a = Delta/(2 sigma)``, ``b = eps sigma/Delta``, ``Phi(x) = erfc(-x/sqrt 2)/2``."""
        import sympy

        def phi(x: Any) -> Any:
            return sympy.erfc(-x / sympy.sqrt(2)) / 2

        squared = _distance_squared(self.toward, self.away)
        distance = sympy.sqrt(sympy.Rational(squared.numerator, squared.denominator))
        sigma = sympy.Rational(self.sigma.numerator, self.sigma.denominator)
        eps = self.epsilon if not isinstance(self.epsilon, Fraction) else sympy.Rational(
            self.epsilon.numerator, self.epsilon.denominator)
        a, b = distance / (2 * sigma), eps * sigma / distance
        if self.complement:
            return phi(b - a), phi(a + b)
        return phi(a - b), phi(-a - b)


def _distance_squared(first: tuple, second: tuple) -> Fraction:
    if len(first) != len(second):
        raise InvalidArgument(f"the query returned vectors of different lengths: {first!r} and {second!r}.")
    return sum(((a - b) ** 2 for a, b in zip(first, second)), Fraction(0))


def _name(mechanism: Any) -> str:
    return getattr(mechanism, "name", None) or type(mechanism).__name__


def check_gaussian(mechanism: Any) -> Fraction:
    """The exact ``sigma`` of a mechanism that declares :class:`GaussianOutput`.

    Raises:
        InvalidArgument: the mechanism does not declare the protocol, or its ``sigma`` is not a
            positive rational.
    """
    declared = bool(getattr(mechanism, "gaussian_output", False))
    if not declared or not callable(getattr(mechanism, "answer", None)) or not hasattr(mechanism, "sigma"):
        raise InvalidArgument(
            f"the Gaussian check needs a mechanism declaring the GaussianOutput protocol (gaussian_output = True, "
            f"sigma and answer(dataset) returning f(D)), got {mechanism!r}; use "
            "dpverify.mechanisms.gaussian.GaussianMechanism(sigma, query)."
        )
    return positive_sigma(mechanism.sigma)


def _query_vector(mechanism: Any, dataset: Any) -> tuple[Fraction, ...]:
    """``f(D)`` as exact Fractions; a query that draws from a global random generator is refused."""
    what = f"{_name(mechanism)}.answer"

    def drew(used: list[str]) -> NondeterministicMechanism:
        return NondeterministicMechanism(
            f"{what} drew from {' and '.join(used)} on dataset {dataset!r}. The query f of a Gaussian mechanism "
            "must be a function of the dataset alone (the noise N(0, sigma^2 I) is the checker's to reason "
            "about); draw no random numbers in answer().",
            dataset=dataset,
        )

    values = run_unchanged(lambda: mechanism.answer(dataset), drew)
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidArgument(f"{what} must return a sequence of numbers (f(D)), got {values!r} on {dataset!r}.")
    return tuple(as_fraction(f"f(D)[{i}]", v) for i, v in enumerate(values))


def decide_gaussian(
    mechanism: GaussianOutput, inputs: Any, *, epsilon: Any, delta: Any = 0, profile: Sequence[Any] | None = None,
) -> PairsResult:
    """Decide ``(epsilon, delta)``-DP of a Gaussian mechanism on the input pairs ``inputs`` (module docstring).

    Args:
        mechanism: a :class:`GaussianOutput`.
        inputs: the input pairs, an :class:`~dpverify.checking.input_pairs.InputPairs` (its ``name``,
            ``relation``, ``datasets`` and index arrays ``left``, ``right``).
        epsilon, delta: the claim (exact numbers, or floats read as the engine reads them).
        profile: eps values at which the worst-case ``delta(eps)`` over the pairs is also enclosed,
            returned as ``details["privacy_profile"]``: ``{"epsilon", "delta", "delta_low",
            "delta_high"}`` per point (the certified bounds rounded outwards, ``delta`` their midpoint).

    Returns:
        A :class:`~dpverify.verdict.results.PairsResult`: the engine's verdict on the post-processings
        ``{S*, not S*}`` of one representative pair per distinct ``Delta`` (which decides every pair);
        ``epsilon`` is ``math.inf`` (the pure eps*) when some pair has ``Delta > 0``, ``delta`` the
        engine's ``delta(eps)`` of the worst pair; ``details`` holds the certified enclosure of
        ``delta(eps)`` (``delta_interval``), its width, the distinct distances and the worst one.

    Raises:
        InvalidArgument: the mechanism does not declare :class:`GaussianOutput`, a claim is malformed,
            or the query returns vectors of different lengths or non-rational answers.
        NondeterministicMechanism: the query draws from a global random generator.
    """
    sigma = check_gaussian(mechanism)
    check_epsilon(epsilon)
    check_delta(delta)
    started = time.perf_counter()
    answers = [_query_vector(mechanism, d) for d in inputs.datasets]
    groups: dict[Fraction, list[int]] = {}  # Delta^2 -> [representative pair index, pair count]
    for index, (i, j) in enumerate(zip(inputs.left.tolist(), inputs.right.tolist())):
        squared = _distance_squared(answers[i], answers[j])
        group = groups.setdefault(squared, [index, 0])
        group[1] += 1
    decided = sorted((s for s in groups if s > 0), reverse=True)  # the largest distance first
    given = {frozenset(pair) for pair in inputs}

    def is_given(a: Any, b: Any) -> bool:
        return frozenset((a, b)) in given

    eps = claim_number("epsilon", epsilon)  # the exact epsilon the engine checks (S* is taken there)
    decision, rows = None, None
    intervals: list[tuple[Fraction, Fraction]] = []
    for bits in (BITS, _RETRY_BITS):
        rows, intervals = _rows(sigma, inputs, answers, decided, groups, eps, bits, is_given)
        decision = decide(rows, epsilon, delta)
        if decision.verdict is not Verdict.UNDECIDED:
            break
    assert decision is not None and rows is not None
    worst_pair = None
    details: dict[str, Any] = {
        "sigma": float(sigma),
        "distances": [math.sqrt(s) for s in sorted(groups, reverse=True)],
        "pairs_per_distance": [groups[s][1] for s in sorted(groups, reverse=True)],
    }
    if decided:
        first = groups[decided[0]][0]
        worst_pair = (inputs.datasets[int(inputs.left[first])], inputs.datasets[int(inputs.right[first])])
        low, high = intervals[0]
        details.update(
            sensitivity=math.sqrt(decided[0]),
            delta_interval=[float_at_most(low), float_at_least(high)],  # rounded outwards
            delta_interval_width=float(high - low),
        )
    if profile is not None:
        details["privacy_profile"] = [_profile_point(e, decided, sigma) for e in profile]
    witness = decision.witness
    if witness is not None and all(isinstance(o, HalfSpace) for o in witness.output_set):
        # The engine certified the witness on intervals; report P(S) and Q(S) as the exact values
        # those intervals enclose (sympy erfc expressions), as verify_pairs does for noise programs.
        exact = [o.probabilities() for o in witness.output_set]  # (under M(D), under M(D')) of each row pair
        p_mass, q_mass = sum(p for p, _ in exact), sum(q for _, q in exact)
        assert decision.witness_rows is not None
        if decision.witness_rows[0] % 2:  # the reverse direction: the witness's dataset is D' (odd rows)
            p_mass, q_mass = q_mass, p_mass
        witness = replace(witness, p=p_mass, q=q_mass)
    infinite = bool(decided)
    return PairsResult.on_inputs(
        inputs, started,
        holds=decision.holds,
        epsilon=math.inf if infinite else 0.0,
        delta=decision.delta_star,
        witness=witness,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        pairs=len(inputs),
        certified_pairs=decision.certified_pairs,
        undecided=decision.undecided_pairs,
        verdict=decision.verdict,
        worst_pair=worst_pair,
        epsilon_bounds=(math.inf, math.inf) if infinite else (0.0, 0.0),
        details=details,
    )


def _profile_point(epsilon: Any, decided: list[Fraction], sigma: Fraction) -> dict[str, float]:
    """The worst ``delta(eps)`` over the distinct distances ``decided`` at one eps, certified: the
    largest lower and the largest upper bound (0 when every pair has identical outputs)."""
    check_epsilon(epsilon, "profile epsilon")
    exact = exact_number("profile epsilon", epsilon)
    low, high = Fraction(0), Fraction(0)  # delta(eps) >= 0: S* has loss > eps at every point
    for squared in decided:
        point = pair_profile(squared, sigma, exact, BITS)
        with precision(BITS):
            enclosure = point.delta(as_interval(exact))
        low, high = max(low, fraction_of(enclosure.a)), max(high, fraction_of(enclosure.b))
    return {"epsilon": float(exact), "delta": float((low + high) / 2), "delta_low": float_at_most(low),
            "delta_high": float_at_least(high)}


def _rows(
    sigma: Fraction, inputs: Any, answers: list, decided: list[Fraction],
    groups: dict[Fraction, list[int]], eps: Any, bits: int, is_given: Callable[[Any, Any], bool],
) -> tuple[RowPairs, list[tuple[Fraction, Fraction]]]:
    """The engine's rows: for each distinct ``Delta > 0`` (largest first) its representative pair's
    ``M(D)`` and ``M(D')`` on ``{S*, not S*}``; certified intervals as the exact rows. With no such
    pair (every pair has ``f(D) = f(D')``: identical outputs) one row pair of the whole output space."""
    labels: list[Any] = []
    exact: list[dict[Hashable, Any]] = []
    outcomes: list[Hashable] = []
    intervals: list[tuple[Fraction, Fraction]] = []
    for squared in decided:
        index = groups[squared][0]
        i, j = int(inputs.left[index]), int(inputs.right[index])
        profile = pair_profile(squared, sigma, eps, bits)
        with precision(bits):
            enclosure = profile.delta(as_interval(eps))
        intervals.append((fraction_of(enclosure.a), fraction_of(enclosure.b)))
        threshold = float(mpmath.mpf(profile.threshold.mid))
        inside = HalfSpace(answers[i], answers[j], sigma, eps, threshold)
        outside = HalfSpace(answers[i], answers[j], sigma, eps, threshold, complement=True)
        outcomes += [inside, outside]
        exact += [{inside: profile.p_in, outside: profile.p_out}, {inside: profile.q_in, outside: profile.q_out}]
        labels += [inputs.datasets[i], inputs.datasets[j]]
    if not decided:
        index = 0
        whole = "every output (f(D) = f(D') on every pair: identical distributions)"
        outcomes = [whole]
        exact = [{whole: 1}, {whole: 1}]
        labels = [inputs.datasets[int(inputs.left[index])], inputs.datasets[int(inputs.right[index])]]
    column = {o: k for k, o in enumerate(outcomes)}
    matrix = np.zeros((len(exact), len(outcomes)))
    for row, values in enumerate(exact):
        for o, value in values.items():
            matrix[row, column[o]] = float(mpmath.mpf(value.mid)) if hasattr(value, "mid") else float(value)
    count = len(exact) // 2
    return RowPairs(
        matrix, np.arange(0, 2 * count, 2), np.arange(1, 2 * count, 2), outcomes=outcomes,
        exact_row=exact.__getitem__, row_error=0.0, label=labels.__getitem__, is_neighbor=is_given,
        expected_pairs=count,
        # The floats only guide the engine's sweep; tail probabilities may underflow in them. A
        # relative error this large makes every row pair a certification candidate, so each is
        # decided on its intervals (there is one pair per distinct Delta: a handful).
        matrix_error=1e300,
    ), intervals
