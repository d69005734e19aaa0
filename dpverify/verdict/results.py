"""What a check returns: :class:`VerificationResult` (of :func:`dpverify.verify`), its
:class:`PairsResult` form (of :func:`dpverify.verify` on given pairs, continuous outputs included), the
:class:`SymmetryViolation` a refuted exchangeability declaration reports, and the statistical
:class:`EstimateResult` of :func:`dpverify.estimate` with its :class:`SampledEvent` events.

Results sit with the engine, below the checks that build them: the discrete and the continuous
checks return the same types without importing each other.
"""

from __future__ import annotations

import math
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any

from dpverify.finite.distribution import Distribution
from dpverify.verdict.assumptions import Assumption, assuming, blocking
from dpverify.verdict.claims import Claim, PredictionDp, Stability
from dpverify.verdict.engine import Verdict, Witness

__all__ = ["EstimateResult", "PairsResult", "SampledEvent", "SymmetryViolation", "VerificationResult"]


@dataclass(frozen=True)
class SymmetryViolation:
    """A counterexample to a declared exchangeability: same records, other order, other output."""

    dataset: tuple
    permuted: tuple
    first: Distribution
    second: Distribution


@dataclass(frozen=True)
class VerificationResult:
    """The verdict of :func:`verify`.

    Attributes:
        holds: True iff ``verdict`` passes: HOLDS or HOLDS_WITHIN_ROUNDING (see
            :mod:`dpverify.verdict.engine`); never True on a violation larger than rounding or an
            undecided pair.
        verdict: the state — HOLDS (certified), HOLDS_WITHIN_ROUNDING (no violation beyond the
            float error the outputs carry), VIOLATED (certified witness), UNDECIDED.
        epsilon: the worst-case pure privacy loss eps* over all pairs (``math.inf`` when some
            outcome has P > 0 = Q): the exact value correctly rounded where the pairs near the
            maximum are exact rows (:mod:`dpverify.verdict.engine`, "Exact figures"), else the float64 maximum.
        delta: the worst-case delta at the claimed epsilon (hockey-stick maximum), rounded the same
            way — exactly 0.0 at an exact tie; for continuous outputs the certified figure of
            :mod:`dpverify.densities.hockey_stick` (its enclosure in ``PairsResult.delta_bounds``);
            nan where it is not computed (``PairsResult.details["delta"]`` says why).
        witness: a certified :class:`Witness` when VIOLATED; the closest pair (marked
            ``within_rounding``) when HOLDS_WITHIN_ROUNDING; else None.
        pairs: number of unordered neighbouring pairs checked.
        datasets: number of datasets on which the mechanism was evaluated.
        exchangeable: whether the multiset (exchangeable) enumeration was used.
        certified_pairs: how many pairs needed certified arithmetic.
        undecided: pairs certification could not decide (counted as not holding).
        within_rounding: pairs within the float error of the claim.
        float_error: the relative error assumed for float probabilities (0 when exact).
        claim: the claim checked (:mod:`dpverify.verdict.claims`; the keyword form gives ``PureDp`` or
            ``ApproximateDp``); ``claimed_epsilon`` / ``claimed_delta`` are its (epsilon, delta), for
            a ``Stability`` claim 0 and gamma, and then ``delta`` is the measured gamma*.
        symmetry_violation: a counterexample when the mechanism was declared exchangeable wrongly.
        seconds: wall time.
        exchangeability: how a declared exchangeability stands: ``"proved on every ordering"``,
            ``"refuted (checked as a black box)"``, ``"accepted: tested on ..."`` (the caller passed
            ``exchangeable="assume"``), ``"unproved: tested on ..."`` (the verdict is then UNDECIDED)
            or ``"not declared"``.
        assumptions: every :class:`~dpverify.verdict.assumptions.Assumption` the verdict could rest on and
            how it stands (proved, refuted, accepted, unproved); :attr:`assuming` phrases the
            accepted ones.
        rechecked: datasets evaluated twice to check the mechanism returns one distribution per
            dataset (every certified and witness dataset and a random sample of the rest).
        seed: the seed of this run's random tests (pass ``seed=`` to repeat them).
        unexplored: the largest mass an output left unexplored (a sampler enumerated up to a
            tolerance, ``Distribution(..., unexplored=m)``), 0.0 when every output is complete. When
            positive, ``epsilon`` and ``delta`` are the explored outputs' figures (bounds, not the
            true worst case) and the verdict accounts for the unexplored mass
            (:mod:`dpverify.verdict._unexplored`).
        reason: why the verdict is HOLDS_WITHIN_ROUNDING when a traced program's float constants make
            its claim tight only up to their binary reading; why it is UNDECIDED when the unexplored mass leaves the claim open, with
            the fix; empty otherwise.
        profile: the worst-case privacy profile ``((eps, delta(eps)), ...)`` over the pairs, when
            ``verify(..., profile=)`` asked for it (float64 sweeps of the rows the verdict was
            decided on: a measurement, the verdict is the certified part); else ``()``.
    """

    holds: bool
    epsilon: float
    delta: float
    witness: Witness | None
    claimed_epsilon: Any
    claimed_delta: Any
    neighbors: str
    pairs: int
    datasets: int
    exchangeable: bool
    certified_pairs: int
    undecided: int
    symmetry_violation: SymmetryViolation | None
    seconds: float
    exchangeability: str = "not declared"
    verdict: Verdict = Verdict.HOLDS
    within_rounding: int = 0
    float_error: float = 0.0
    claim: Claim | None = None
    assumptions: tuple[Assumption, ...] = ()
    rechecked: int = 0
    seed: int | None = None
    unexplored: float = 0.0
    reason: str = ""
    profile: tuple[tuple[float, float], ...] = ()

    def __bool__(self) -> bool:
        return self.holds

    @property
    def assuming(self) -> str:
        """``"assuming ... (tested on ...)"`` for the assumptions the caller accepted, else ``""``."""
        return assuming(self.assumptions)

    @property
    def verdict_text(self) -> str:
        """The verdict as shown: ``"HOLDS"``, or ``"HOLDS, assuming ..."`` when it rests on an
        accepted assumption; a verdict on traced noise that does not pass says it is one of the
        real-number program (``"VIOLATED in real arithmetic"``): its witness is that program's."""
        text = str(self.verdict)
        if self.holds and self.assuming:
            return f"{text}, {self.assuming}"
        if any(assumption.name == "real arithmetic" for assumption in self.assumptions):
            return f"{text} in real arithmetic"
        return text

    def summary(self) -> str:
        if isinstance(self.claim, Stability):
            head = f"claimed {self.claim}, measured gamma*={self.delta:.6g}, eps*={self.epsilon:.6g}"
        elif isinstance(self.claim, PredictionDp):
            head = f"claimed {self.claim}, measured eps*={self.epsilon:.6g}, delta(eps)={self.delta:.6g} (worst query)"
        else:
            head = (
                f"claimed (eps={self.claimed_epsilon}, delta={self.claimed_delta}), "
                f"measured eps*={self.epsilon:.6g}, delta(eps)={self.delta:.6g}"
            )
        lines = [
            f"{self.verdict_text}: {head}",
            f"  {self.pairs:,} {self.neighbors.removesuffix(' pairs')} pairs over {self.datasets:,} datasets "
            f"({'exchangeable' if self.exchangeable else 'black-box'}), "
            f"{self.certified_pairs} certified, {self.seconds:.2f}s",
        ]
        if self.symmetry_violation is not None:
            v = self.symmetry_violation
            lines.append(
                f"  WARNING: declared exchangeable but M{v.dataset} != M{v.permuted}; checked as a black box"
            )
        for assumption in blocking(self.assumptions) if self.verdict is Verdict.UNDECIDED else ():
            lines.append(
                f"  not proved: {assumption.statement} ({assumption.evidence}); the verdict cannot pass on it. "
                f"Fix: {assumption.fix}"
            )
        if self.unexplored:
            where = ("on the declared outputs" if any(a.name == "declared outputs" for a in self.assumptions)
                     else "it may fall on any outcome")
            lines.append(
                f"  unexplored: up to {self.unexplored:.3g} of an output's mass was not explored ({where}); eps* and "
                "delta(eps) are the explored outputs' figures, and the verdict accounts for the rest"
            )
        if self.reason:
            rounding = self.verdict is Verdict.HOLDS_WITHIN_ROUNDING
            lines.append(f"  {'within rounding' if rounding else 'undecided'}: {self.reason}")
        if self.undecided:
            lines.append(f"  {self.undecided} pair(s) could not be decided exactly: not claimed to hold")
        if self.verdict is Verdict.HOLDS_WITHIN_ROUNDING and not self.reason:
            lines.append(
                f"  {self.within_rounding} pair(s) within the float error of the claim (relative "
                f"{self.float_error:.3g} per probability): the claim holds up to rounding; to certify it, make "
                "the probabilities exact: a mechanism returns Fraction or sympy values (or offers "
                "exact_distribution(dataset)); a sampler gives its weights as Fractions (rng.choice(k, "
                "p=[Fraction(3, 10), ...]), rng.random() < Fraction(3, 4))"
            )
        # a terminal of 100 columns shows every line whole (continuations indented under their line)
        lines = [_fill(line) for line in lines]
        if self.witness is not None:
            title = "closest pair" if self.witness.within_rounding else "witness"
            lines.append(f"  {title}:\n    " + str(self.witness).replace("\n", "\n    "))
        return "\n".join(lines)




@dataclass(frozen=True)
class PairsResult(VerificationResult):
    """A :class:`~dpverify.checking.checker.VerificationResult` on given pairs, with where eps* was found.

    Attributes:
        worst_pair: ``(D, D')`` attaining ``epsilon`` (the loss of ``M(D)`` against ``M(D')``).
        epsilon_bounds: a certified enclosure ``(low, high)`` of eps* when it was computed from
            densities (continuous outputs, :mod:`dpverify.densities.continuous`); None for discrete outputs,
            whose eps* is the engine's float64 sweep.
        input_set: the name of the input set.
        details: further figures (e.g. ``"privacy_profile"`` when asked for; for continuous outputs
            ``"delta"`` says why delta was not computed when it was not).
        delta_bounds: a certified enclosure ``(low, high)`` of ``delta`` (the worst hockey-stick
            divergence at the claimed eps) for continuous outputs
            (:mod:`dpverify.densities.hockey_stick`); None for discrete outputs.
        delta_pair: ``(D, D')`` attaining ``delta`` (continuous outputs; None when it is 0).
    """

    worst_pair: tuple | None = None
    epsilon_bounds: tuple[float, float] | None = None
    input_set: str = ""
    details: dict = field(default_factory=dict)
    delta_bounds: tuple[float, float] | None = None
    delta_pair: tuple | None = None

    @classmethod
    def on_inputs(cls, inputs: Any, started: float, **fields: Any) -> PairsResult:
        """A result on the given input pairs ``inputs`` (an :class:`~dpverify.checking.input_pairs.InputPairs`:
        its ``name``, ``relation`` and ``datasets``), the run having begun at ``perf_counter()`` time
        ``started``: what every verifier of given pairs reports alike (the input set, no
        exchangeability), plus ``fields``."""
        named = inputs.relation is None or inputs.name == inputs.relation.name  # every pair of Datasets: the relation
        neighbors = inputs.name if named else f"{inputs.name} under {inputs.relation.name}"
        return cls(neighbors=neighbors, datasets=len(inputs.datasets), exchangeable=False, symmetry_violation=None,
                   input_set=inputs.name, seconds=time.perf_counter() - started, **fields)


@dataclass(frozen=True)
class SampledEvent:
    """An output event tested on the test half of a sampled run: ``S`` was chosen on the other
    half as likelier under ``M(dataset)`` (P) than under ``M(neighbor)`` (Q).

    Attributes:
        dataset, neighbor: the pair, the P side first.
        event: the event, readable (``"o <= 0.97"``, ``"o[2] > 1.5"``, ``"o in {3, 4}"``).
        p_count, p_samples: how many of the ``p_samples`` test draws from ``M(dataset)`` fell in S.
        q_count, q_samples: the same for ``M(neighbor)``.
        p_lower: an exact (Clopper–Pearson) lower confidence bound on ``P(S)``.
        q_upper: an exact upper confidence bound on ``Q(S)``.
        level: the one-sided error of each of the two bounds (the run's ``1 - confidence`` split
            over every interval it computed).
        delta: the claimed delta the bound subtracts.
        epsilon_lower_bound: ``ln((p_lower - delta) / q_upper)``; ``-inf`` when ``p_lower <= delta``.
        event_set: the event itself (an interval with ``low``, ``high`` and ``coordinate``, a set
            of ``outcomes``, or either on a feature of the output); ``event_set.count(outputs)`` counts it.
        epsilon: the claimed epsilon ``delta_lower_bound`` is computed at.
        delta_lower_bound: ``p_lower - e^epsilon q_upper``: the mechanism is not ``(epsilon, d)``-DP
            for any ``d`` below it (negative: no such refutation).
        float_structure: the event reads the outputs' float representation (their low bits), not
            only their values: a leak of the float program, not of the mechanism on real numbers.
    """

    dataset: Any
    neighbor: Any
    event: str
    p_count: int
    p_samples: int
    q_count: int
    q_samples: int
    p_lower: float
    q_upper: float
    level: float
    delta: float
    epsilon_lower_bound: float
    event_set: Any = None
    epsilon: float = math.nan
    delta_lower_bound: float = -math.inf
    float_structure: bool = False

    @property
    def p_frequency(self) -> float:
        return self.p_count / self.p_samples

    @property
    def q_frequency(self) -> float:
        return self.q_count / self.q_samples

    def __str__(self) -> str:
        minus = f" - {self.delta:.6g}" if self.delta else ""
        return "\n".join([
            f"D  = {self.dataset}",
            f"D' = {self.neighbor}",
            # a long event (a union of joint keys) wraps under its brace: 100 columns in the summary's indent
            textwrap.fill(f"S  = {{{self.event}}}", width=96, subsequent_indent=" " * 6, break_long_words=False,
                          break_on_hyphens=False),
            f"M(D) in S:  {self.p_count:,} of {self.p_samples:,} ({self.p_frequency:.6g}); P(S) >= {self.p_lower:.6g}",
            f"M(D') in S: {self.q_count:,} of {self.q_samples:,} ({self.q_frequency:.6g}); Q(S) <= {self.q_upper:.6g}",
            f"eps >= ln(({self.p_lower:.6g}{minus}) / {self.q_upper:.6g}) = {self.epsilon_lower_bound:.6g}",
        ])


@dataclass(frozen=True)
class EstimateRound:
    """One test round of a sampled run: events chosen on ``selection_samples`` earlier draws per
    dataset, bounded on ``test_samples`` fresh ones at ``level`` (its share of ``1 - confidence``)."""

    selection_samples: int
    test_samples: int
    events: int
    level: float
    epsilon_lower_bound: float
    seconds: float


@dataclass(frozen=True)
class EstimateResult:
    """What :func:`dpverify.estimate` found: a lower confidence bound on epsilon.

    Sampling can refute a privacy claim, never prove one, so the verdict is never HOLDS:

    * ``VIOLATED`` — ``epsilon_lower_bound > claimed_epsilon``: with probability at least
      ``confidence`` over the run's draws the mechanism is not ``(claimed_epsilon,
      claimed_delta)``-DP; ``witness`` is the pair and event.
    * ``UNDECIDED`` — no violation was found at this sample size (``reason`` says so and gives the
      bound): more samples may find one; a proof needs :func:`dpverify.verify` on an exact mechanism.

    Attributes:
        verdict: VIOLATED or UNDECIDED (never a passing state; ``holds`` is always False).
        epsilon_lower_bound: with probability at least ``confidence``, the smallest epsilon for
            which the mechanism is ``(epsilon, claimed_delta)``-DP is at least this (0 when no
            event gave a positive bound).
        claimed_epsilon, claimed_delta: the claim, as given.
        witness: the tested event with the largest bound (the violation when VIOLATED), or None
            when no event was tested.
        tested: every event the test half certified (the union bound counts them all).
        samples: draws from the mechanism on each dataset (half to choose events, half to test).
        confidence: the probability that every bound of the run holds at once.
        seed: the run's seed (pass ``random_state=seed`` to repeat it exactly).
        seconds: wall time.
        pairs, datasets: the input pairs (each compared in both directions) and the distinct datasets.
        input_set: how the pairs were named.
        batched: whether the sampler was called with ``size=``.
        events_scored: (pair, direction, event) candidates ranked on the selection draws.
        reason: the verdict in words.
        delta_lower_bound: with the same confidence, the mechanism is not ``(claimed_epsilon, d)``-DP
            for any ``d`` below this (0 when no event refutes any delta at the claimed epsilon);
            VIOLATED exactly when it exceeds ``claimed_delta``.
        value_epsilon_lower_bound: the largest bound from events on the outputs' values (not their
            float bits): a lower bound on the epsilon of the mechanism read on real numbers.
        rounds: each test round of the run (:class:`EstimateRound`); one without a time budget.
        time_budget: the seconds the run was given (None: a fixed ``samples``).
    """

    verdict: Verdict
    epsilon_lower_bound: float
    claimed_epsilon: Any
    claimed_delta: Any
    witness: SampledEvent | None
    tested: tuple[SampledEvent, ...]
    samples: int
    confidence: float
    seed: int
    seconds: float
    pairs: int
    datasets: int
    input_set: str
    batched: bool
    events_scored: int
    reason: str
    delta_lower_bound: float = 0.0
    value_epsilon_lower_bound: float = 0.0
    rounds: tuple[EstimateRound, ...] = ()
    time_budget: float | None = None

    def __post_init__(self) -> None:
        if self.verdict not in (Verdict.VIOLATED, Verdict.UNDECIDED):  # invariant: sampling proves nothing
            raise AssertionError(f"internal error: a sampled estimate cannot be {self.verdict}")
        if not (self.epsilon_lower_bound >= 0 and math.isfinite(self.epsilon_lower_bound)):
            raise AssertionError(f"internal error: epsilon_lower_bound={self.epsilon_lower_bound!r}")

    @property
    def holds(self) -> bool:
        """Always False: a sample never proves a claim (see :attr:`verdict`)."""
        return False

    @property
    def violated(self) -> bool:
        return self.verdict is Verdict.VIOLATED

    def __bool__(self) -> bool:
        return self.holds

    def summary(self) -> str:
        paragraphs = [
            f"{self.verdict}: claimed (eps={self.claimed_epsilon}, delta={self.claimed_delta}), "
            f"eps >= {self.epsilon_lower_bound:.6g} at confidence {self.confidence:g}",
            f"  {self.reason}",
            f"  {self.input_set}: {self.pairs:,} pair(s), both directions, {self.datasets:,} datasets; "
            f"{self.samples:,} samples each ({'batched' if self.batched else 'one call per sample'}"
            f"{_rounds_text(self)}); {len(self.tested)} event(s) tested of {self.events_scored:,} scored; "
            f"seed {self.seed}; {self.seconds:.2f}s",
        ]
        if self.delta_lower_bound > 0 and (self.claimed_delta or not self.violated):
            paragraphs.insert(2, f"  at eps = {self.claimed_epsilon}, delta >= {self.delta_lower_bound:.6g} (claimed "
                                 f"{self.claimed_delta}): not (eps, d)-DP for any smaller d")
        # a terminal of 100 columns shows every line whole (continuations indented under their line)
        lines = [_fill(text) for text in paragraphs]
        if self.witness is not None:
            title = "witness" if self.violated else "strongest event"
            lines.append(f"  {title}:\n    " + str(self.witness).replace("\n", "\n    "))
        return "\n".join(lines)


def _rounds_text(result: EstimateResult) -> str:
    if result.time_budget is None:
        return ""
    last = result.rounds[-1].test_samples if result.rounds else 0
    return (f", {len(result.rounds)} test round(s) within a {result.time_budget:g} s budget, the last of "
            f"{last:,}")


def _fill(text: str) -> str:
    """``text`` wrapped at 100 columns, continuations indented four spaces (numbers never split)."""
    return textwrap.fill(text, width=100, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False)
