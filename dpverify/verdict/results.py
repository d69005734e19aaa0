"""What a check returns: :class:`VerificationResult` (of :func:`dpverify.verify`), its
:class:`PairsResult` form (of :func:`dpverify.verify_pairs`, continuous outputs included) and the
:class:`SymmetryViolation` a refuted exchangeability declaration reports.

Results sit with the engine, below the checks that build them: the discrete and the continuous
checks return the same types without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpverify.finite.distribution import Distribution
from dpverify.verdict.assumptions import Assumption, assuming, blocking
from dpverify.verdict.claims import Claim, PredictionDp, Stability
from dpverify.verdict.engine import Verdict, Witness

__all__ = ["PairsResult", "SymmetryViolation", "VerificationResult"]


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
            way — exactly 0.0 at an exact tie; nan where it is not computed (continuous outputs are
            decided for pure claims only).
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

    def __bool__(self) -> bool:
        return self.holds

    @property
    def assuming(self) -> str:
        """``"assuming ... (tested on ...)"`` for the assumptions the caller accepted, else ``""``."""
        return assuming(self.assumptions)

    @property
    def verdict_text(self) -> str:
        """The verdict as shown: ``"HOLDS"``, or ``"HOLDS, assuming ..."`` when it rests on an
        accepted assumption."""
        text = str(self.verdict)
        return f"{text}, {self.assuming}" if self.holds and self.assuming else text

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
            f"  {self.pairs:,} {self.neighbors} pairs over {self.datasets:,} datasets "
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
        if self.undecided:
            lines.append(f"  {self.undecided} pair(s) could not be decided exactly: not claimed to hold")
        if self.verdict is Verdict.HOLDS_WITHIN_ROUNDING:
            lines.append(
                f"  {self.within_rounding} pair(s) within the float error of the claim (relative "
                f"{self.float_error:.3g} per probability): the claim holds up to rounding; to certify it, "
                "return exact probabilities (Fraction, sympy) or offer exact_distribution(dataset)"
            )
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
    """

    worst_pair: tuple | None = None
    epsilon_bounds: tuple[float, float] | None = None
    input_set: str = ""
    details: dict = field(default_factory=dict)
