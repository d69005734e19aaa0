"""Audit runner: every registered claim on its default instance, as a table of results.

An :class:`AuditCase` names a claim of ``CLAIMS.md`` (``"C1"``), the mechanism it is checked on,
the instance parameters and a ``run`` function that measures the instance exactly and returns a
:class:`Measurement`. Mutants (mechanism names starting with ``mutant_``) carry the claim of the
mechanism they break and are *expected* to violate it; an audit passes when every row's verdict
matches its expectation. Cases marked ``measured_only`` (findings such as C8's baselines) report
numbers without an expectation.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpverify.engine import Verdict

__all__ = ["AuditCase", "Measurement", "AuditRow", "run_audit", "format_table"]


@dataclass(frozen=True)
class Measurement:
    """What one audit case measured.

    Attributes:
        epsilon_star: worst-case epsilon measured (pure eps*, or eps at which delta* is read).
        delta_star: worst-case delta at the claimed epsilon (0.0 for pure claims that hold).
        claimed_epsilon, claimed_delta: the claim's explicit constants on this instance.
        verdict: the engine's :class:`dpverify.Verdict` (None for measured-only rows). A plain
            bool is refused: every row's verdict comes from the engine.
        witness: a printable witness when violated.
        details: extra figures for the report (slack, sweep rows, per-step values).
    """

    epsilon_star: float
    delta_star: float
    claimed_epsilon: float
    claimed_delta: float
    verdict: Verdict | None
    witness: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict is not None and not isinstance(self.verdict, Verdict):
            raise TypeError(
                f"Measurement.verdict must be a dpverify.Verdict from the engine (or None when "
                f"measured only), got {self.verdict!r}"
            )

    @property
    def holds(self) -> bool | None:
        """``verdict.passes`` (None for measured-only rows)."""
        return None if self.verdict is None else self.verdict.passes

    def measured_only(self) -> "Measurement":
        """The same figures with no verdict (a lemma's preconditions were not met)."""
        return Measurement(self.epsilon_star, self.delta_star, self.claimed_epsilon, self.claimed_delta, None,
                           self.witness, self.details)


_SHORT = {"concept_class": "class", "concept": "class", "domain_size": "X", "epsilon": "eps", "learner": "A", "learner_epsilon": "eps_A", "learner_delta": "delta_A"}
_IMPLIED = {("representative", "first"), ("learner_epsilon", 1.0)}


@dataclass(frozen=True)
class AuditCase:
    """One row of the audit: a claim checked on one instance."""

    claim: str
    mechanism: str
    parameters: dict[str, Any]
    run: Callable[[], Measurement]
    description: str = ""
    measured_only: bool = False

    @property
    def expect_violation(self) -> bool:
        return self.mechanism.startswith("mutant_")

    @property
    def instance(self) -> str:
        """The parameters in short form for tables (floats to 4 digits, common keys abbreviated,
        defaults such as representative=first and learner_epsilon=1.0 left out)."""
        parts = []
        for key, value in self.parameters.items():
            if (key, value) in _IMPLIED:
                continue
            if isinstance(value, float):
                value = f"{value:.4g}"
            parts.append(f"{_SHORT.get(key, key)}={value}")
        return ", ".join(parts)


#: How each state reads in tables (the JSON carries the state's name in "verdict").
_SHOWN = {
    Verdict.HOLDS: "holds",
    Verdict.HOLDS_WITHIN_ROUNDING: "holds (within rounding)",
    Verdict.VIOLATED: "VIOLATED",
    Verdict.UNDECIDED: "UNDECIDED",
}


@dataclass(frozen=True)
class AuditRow:
    case: AuditCase
    measurement: Measurement
    seconds: float

    @property
    def as_expected(self) -> bool:
        """Measured-only rows have no expectation; an UNDECIDED verdict is never as expected; a
        mutant must be VIOLATED; every other row must pass (HOLDS or HOLDS_WITHIN_ROUNDING)."""
        verdict = self.measurement.verdict
        if self.case.measured_only or verdict is None:
            return True
        if verdict is Verdict.UNDECIDED:
            return False
        if self.case.expect_violation:
            return verdict is Verdict.VIOLATED
        return verdict.passes

    @property
    def verdict(self) -> str:
        """The engine's state as shown in tables (``measured`` when there is none)."""
        verdict = self.measurement.verdict
        if self.case.measured_only or verdict is None:
            return "measured"
        text = _SHOWN[verdict]
        if self.case.expect_violation:
            text += " (expected)" if verdict is Verdict.VIOLATED else " (MUTANT MISSED)"
        elif not self.as_expected:
            text += " (NOT AS EXPECTED)"
        return text

    @property
    def slack(self) -> float:
        """Distance to the claim in the claim's own currency: claimed delta - delta* for
        (eps, delta) claims, claimed eps - eps* for pure ones (negative when violated)."""
        m = self.measurement
        if m.claimed_delta:
            return float(m.claimed_delta) - float(m.delta_star)
        return float(m.claimed_epsilon) - float(m.epsilon_star)

    def to_json(self) -> dict[str, Any]:
        m = self.measurement
        return {
            "claim": self.case.claim,
            "mechanism": self.case.mechanism,
            "parameters": self.case.parameters,
            "epsilon_star": _finite(m.epsilon_star),
            "delta_star": _finite(m.delta_star),
            "claimed_epsilon": _finite(m.claimed_epsilon),
            "claimed_delta": _finite(m.claimed_delta),
            "holds": m.holds,
            "verdict": None if m.verdict is None else m.verdict.value,
            "slack": _finite(self.slack),
            "expected_violation": self.case.expect_violation,
            "measured_only": self.case.measured_only,
            "as_expected": self.as_expected,
            "seconds": round(self.seconds, 4),
            "description": self.case.description,
            "witness": m.witness,
            "details": m.details,
        }


def _finite(value: float) -> float | str:
    """JSON has no infinity: +inf is written as the string "inf"."""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


def run_audit(
    cases: Iterable[AuditCase],
    *,
    progress: Callable[[str], None] | None = None,
) -> list[AuditRow]:
    """Run every case in order, timing each."""
    rows = []
    cases = list(cases)
    for index, case in enumerate(cases, 1):
        if progress is not None:
            progress(f"[{index}/{len(cases)}] {case.claim} {case.mechanism} ({case.instance})")
        started = time.perf_counter()
        measurement = case.run()
        rows.append(AuditRow(case, measurement, time.perf_counter() - started))
    return rows


def _number(value: float) -> str:
    if isinstance(value, str):
        return value
    if math.isinf(value):
        return "inf"
    return f"{value:.4g}"


def format_table(rows: Sequence[AuditRow]) -> str:
    """A fixed-width text table: claim, mechanism, instance, eps*, claimed eps, delta*, claimed delta,
    verdict, seconds."""
    header = ("claim", "mechanism", "instance", "eps*", "claim eps", "delta*", "claim delta", "verdict", "s")
    body = [
        (
            r.case.claim,
            r.case.mechanism,
            r.case.instance if len(r.case.instance) <= 72 else r.case.instance[:69] + "...",
            _number(r.measurement.epsilon_star),
            _number(r.measurement.claimed_epsilon),
            _number(r.measurement.delta_star),
            _number(r.measurement.claimed_delta),
            r.verdict,
            f"{r.seconds:.2f}",
        )
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)) for line in body]
    return "\n".join(lines)


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
