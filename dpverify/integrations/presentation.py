"""How audit rows read in every report: what each verdict means, its mark, the counts and the legend.

The terminal table (:mod:`~dpverify.integrations.terminal`), the Markdown report
(:mod:`~dpverify.integrations.report`) and the HTML page (:mod:`~dpverify.integrations.html_report`)
take their words from here, so the three say the same thing. A row is an
:class:`~dpverify.integrations.audit.AuditRow` (read by attribute: this module sits below the audit
in the import graph and imports nothing of it).

Every row falls in exactly one :class:`Kind`:

* ``HOLDS`` — a claim asserted to hold, and it does (``holds``, ``holds (within rounding)``, ``holds, assuming``);
* ``CAUGHT`` — a mutant, VIOLATED as it must be (``VIOLATED (expected)``);
* ``MEASURED`` — figures reported, no verdict asserted;
* ``UNDECIDED`` — neither proved nor refuted (never as expected);
* ``UNEXPECTED`` — a claim violated, or a mutant missed.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dpverify.verdict.engine import Verdict

__all__ = [
    "Kind", "kind_of", "mark", "Counts", "LEGEND", "VERDICT_LEGEND", "legend", "claims_a_bound", "number",
    "series_groups", "symbol", "generated_now", "TITLE", "INTRODUCTION", "evidence",
]

#: The reports' title and first sentence for the registered audits (an audit file brings its own).
TITLE = "dpverify audit"
INTRODUCTION = "Every registered claim on its default instance"


class Kind(enum.Enum):
    """What a row's verdict means against its expectation."""

    HOLDS = "holds"
    CAUGHT = "caught"
    MEASURED = "measured"
    UNDECIDED = "undecided"
    UNEXPECTED = "unexpected"


def kind_of(row: Any) -> Kind:
    """The :class:`Kind` of an audit row (from its verdict and :attr:`AuditRow.as_expected`)."""
    verdict = row.measurement.verdict
    if row.case.measured_only or verdict is None:
        return Kind.MEASURED
    if verdict is Verdict.UNDECIDED:
        return Kind.UNDECIDED
    if not row.as_expected:
        return Kind.UNEXPECTED
    return Kind.CAUGHT if verdict is Verdict.VIOLATED else Kind.HOLDS


#: The mark before a verdict, by the engine's state: it shows the state even without colour.
_MARKS = {"passes": "✓", "violated": "✗", "undecided": "?", "measured": "·"}
_ASCII_MARKS = {"passes": "+", "violated": "x", "undecided": "?", "measured": "-"}


def _state(row: Any) -> str:
    verdict = row.measurement.verdict
    if row.case.measured_only or verdict is None:
        return "measured"
    if verdict is Verdict.UNDECIDED:
        return "undecided"
    return "passes" if verdict.passes else "violated"


def mark(row: Any, *, ascii_only: bool = False) -> str:
    """The row's verdict as shown: a mark, then :attr:`AuditRow.verdict` (``"✓ holds"``,
    ``"✗ VIOLATED (expected)"``, ``"· measured"``); ``ascii_only`` for streams that cannot encode ✓."""
    return f"{(_ASCII_MARKS if ascii_only else _MARKS)[_state(row)]} {row.verdict}"


def symbol(state: str, *, ascii_only: bool = False) -> str:
    """The mark of a state: ``"passes"``, ``"violated"``, ``"undecided"`` or ``"measured"``."""
    return (_ASCII_MARKS if ascii_only else _MARKS)[state]


@dataclass(frozen=True)
class Counts:
    """How many rows of each :class:`Kind`: the summary every report starts or ends with."""

    rows: int
    holds: int
    caught: int
    measured: int
    undecided: int
    unexpected: int

    @classmethod
    def of(cls, rows: Iterable[Any]) -> Counts:
        kinds = [kind_of(r) for r in rows]
        return cls(len(kinds), *(kinds.count(k) for k in Kind))

    @property
    def as_expected(self) -> int:
        """Rows whose asserted verdict came out as expected (claims holding, mutants caught)."""
        return self.holds + self.caught

    @property
    def all_well(self) -> bool:
        return self.undecided == 0 and self.unexpected == 0

    def summary(self) -> str:
        """``"134 rows: 127 as expected (76 hold, 51 mutants caught), 7 measured, 0 unexpected, 0 undecided"``."""
        rows = "row" if self.rows == 1 else "rows"
        hold = "holds" if self.holds == 1 else "hold"
        mutants = "mutant" if self.caught == 1 else "mutants"
        return (f"{self.rows} {rows}: {self.as_expected} as expected ({self.holds} {hold}, {self.caught} {mutants} "
                f"caught), {self.measured} measured, {self.unexpected} unexpected, {self.undecided} undecided")


#: What the columns mean, as (column, meaning): the same words in every report.
LEGEND: tuple[tuple[str, str], ...] = (
    ("eps*", "the worst-case privacy loss measured over every neighbouring pair (for a stability claim "
             "the measured stability)"),
    ("claimed eps", "the epsilon the claim guarantees on this instance, from the theorem's explicit bound; "
                    "not the instance's own eps parameter, which is the mechanism's input (an O(eps) claim "
                    "for a mechanism run at eps=0.2 can guarantee 2.773)"),
    ("delta*", "the worst-case delta (hockey-stick divergence) at the claimed eps"),
    ("slack", "the margin left to the claim: claimed delta - delta* for (eps, delta) claims, "
              "claimed eps - eps* for pure ones; negative when violated"),
)

#: ``claimed eps`` for rows whose claim is stated as it is checked (no theorem's bound at a parameter).
_STATED_CLAIM = ("claimed eps", "the epsilon the claim guarantees on this instance")


def claims_a_bound(row: Any) -> bool:
    """Whether the row's claimed eps is a theorem's bound at the instance's own eps: the instance
    has a numeric ``epsilon`` parameter (the mechanism's input) and the claimed eps differs from it
    (an O(eps) claim at eps = 0.2 guaranteeing 2.773). The reports' legend then explains the two."""
    epsilon = row.case.parameters.get("epsilon")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        return False
    return float(row.measurement.claimed_epsilon) != float(epsilon)


def legend(rows: Iterable[Any]) -> tuple[tuple[str, str], ...]:
    """:data:`LEGEND` for these rows: the note on a theorem's bound against the instance's eps
    only when some row claims one (:func:`claims_a_bound`), else the plain meaning of claimed eps."""
    if any(claims_a_bound(r) for r in rows):
        return LEGEND
    return tuple(_STATED_CLAIM if term == "claimed eps" else (term, meaning) for term, meaning in LEGEND)


#: What each kind of verdict means, as (kind, the state whose mark it shows, meaning).
VERDICT_LEGEND: tuple[tuple[Kind, str, str], ...] = (
    (Kind.HOLDS, "passes", "holds: the claim holds, certified (or within rounding, or assuming what the notes say)"),
    (Kind.CAUGHT, "violated", "VIOLATED (expected): a mutant caught, with a witness"),
    (Kind.MEASURED, "measured", "measured: figures only, no claim asserted"),
    (Kind.UNDECIDED, "undecided", "UNDECIDED: neither proved nor refuted (never as expected)"),
    (Kind.UNEXPECTED, "violated", "NOT AS EXPECTED / MUTANT MISSED: a claim violated, or a mutant that holds"),
)


def number(value: Any, digits: int = 4) -> str:
    """A figure for a table: ``digits`` significant digits, ``inf``, ``n/a`` for a figure not computed (nan)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}g}"


def series_groups(rows: Sequence[Any]) -> dict[Any, list[Any]]:
    """The rows of each sweep series (``row.case.sweep``), in order of first appearance."""
    groups: dict[Any, list[Any]] = {}
    for r in rows:
        if r.case.sweep is not None:
            groups.setdefault(r.case.sweep, []).append(r)
    return groups


def generated_now() -> str:
    """When a report is generated, as its header shows it: ``"2025-11-24 06:32 UTC"``. Reports take
    it as an argument (``generated=``), so an unchanged audit can keep its first date."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def evidence(row: Any) -> list[str]:
    """What a row that is not as expected rests on, as lines for a log (a CI log is all there is):
    the witness of a claim found VIOLATED (D, D', S, both probabilities and the check), why a mutant
    was not caught, why a row is UNDECIDED. The first line names the row; the others are indented."""
    m = row.measurement
    head = f"{row.case.claim}/{row.case.mechanism} ({row.case.instance}): {row.verdict}"
    if m.verdict is Verdict.VIOLATED:
        body = (m.witness or "").splitlines() or [
            f"eps* = {number(m.epsilon_star)} > claimed eps = {number(m.claimed_epsilon)} (no witness recorded)"]
        if m.witness_part:
            body.insert(0, f"found at {m.witness_part}")
    elif m.verdict is Verdict.UNDECIDED:
        reason = m.details.get("reason") or ""
        body = [reason or "neither proved nor refuted; the report's details say which part could not be decided"]
        body += [f"assumption: {assumption}" for assumption in m.assumptions]
    else:  # a mutant the check did not catch
        body = [f"eps* = {number(m.epsilon_star)}, delta* = {number(m.delta_star)} at the claimed eps = "
                f"{number(m.claimed_epsilon)}, within the claim (claimed delta = {number(m.claimed_delta)}): this "
                "mutant satisfies the claim, so there is no violation to find. A mutant must break the claim: make "
                "it leak more, or check it against a tighter claim."]
    import textwrap

    lines = [head]
    for line in body:  # a witness's lines are short; prose wraps at 100 columns
        lines += textwrap.wrap(line, width=100, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False,
                               break_long_words=False) or [""]
    return lines
