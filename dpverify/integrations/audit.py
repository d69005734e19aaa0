"""Audits: claims checked on instances, as rows of a table with an expectation each.

An :class:`AuditCase` is the one way to declare an audit row: the claim's id (any label the audit
module chooses), the mechanism it is checked on, the instance parameters, a ``run`` function that
measures the instance exactly and returns a :class:`Measurement`, and what the row expects
(:class:`Expect`): the claim HOLDS, the mechanism is a mutant that must be VIOLATED (``parent``
names its parent), or the row is MEASURED only (a finding, no verdict asserted). Rows that share a
:class:`SweepSeries` form one table and plot in the report (an O(eps) claim as eps shrinks).

Audits are found through the entry-point group ``dpverify.audits`` (:func:`load_audits`): each
entry point names an audit module — any object with ``cases()`` returning audit cases and,
optionally, ``CLAIMS``, a mapping from claim id to a measurement function taking instance keyword
arguments (``dpverify claim``; its keyword parameters, annotated and with defaults, are the claim's
``--set`` keys: :mod:`dpverify.integrations.claim_command`) — or a list of them. A package adds its own
audits by declaring such an entry point; dpverify itself knows no claim. An audit declared in one
file (:class:`dpverify.auditing.Audit`, run by ``dpverify audit PATH.py``) needs no entry point: its
rows become cases with the author's ``statement`` and ``source``.
"""

from __future__ import annotations

import enum
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dpverify.integrations import contract
from dpverify.verdict.assumptions import Assumption, assuming
from dpverify.verdict.engine import Verdict
from dpverify.verdict.witness import Witness

__all__ = [
    "AuditCase",
    "Expect",
    "SweepSeries",
    "Measurement",
    "AuditRow",
    "AuditTiming",
    "run_audit",
    "longest_first",
    "format_table",
    "load_audits",
    "audit_cases",
    "claim_measurements",
    "ENTRY_POINT_GROUP",
]

#: The entry-point group under which packages register audit modules.
ENTRY_POINT_GROUP = "dpverify.audits"


@dataclass(frozen=True)
class Measurement:
    """What one audit case measured.

    Attributes:
        epsilon_star: worst-case epsilon measured (pure eps*, or eps at which delta* is read).
        delta_star: worst-case delta at the claimed epsilon (0.0 for pure claims that hold).
        claimed_epsilon, claimed_delta: the claim's explicit constants on this instance.
        verdict: the engine's :class:`dpverify.Verdict` (None for measured-only rows). A plain
            bool is refused: every row's verdict comes from the engine.
        witness: the witness as people read it (reports, ``dpverify claim``); made from
            ``witness_data`` and ``witness_part`` when not given.
        details: extra figures for the report (slack, sweep rows, per-step values); free-form,
            written to JSON as plain values (:func:`dpverify.integrations.contract.encode`).
        assumptions: what the verdict could rest on and how it stands
            (:class:`dpverify.verdict.assumptions.Assumption`); an accepted one is shown with the verdict.
        witness_data: the engine's :class:`~dpverify.verdict.witness.Witness` (datasets, output
            event, P and Q): the JSON's structured ``"witness"``. A witness given only as text
            appears in the Markdown and HTML reports, not in the JSON.
        witness_part: where in the claim the witness was found (``"query x = 2"``), if the claim
            is decided part by part.
    """

    epsilon_star: float
    delta_star: float
    claimed_epsilon: float
    claimed_delta: float
    verdict: Verdict | None
    witness: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    assumptions: tuple[Assumption, ...] = ()
    witness_data: Witness | None = None
    witness_part: str | None = None

    @property
    def assuming(self) -> str:
        """The accepted assumptions as ``"assuming ... (tested on ...)"``, else ``""``."""
        return assuming(self.assumptions)

    def __post_init__(self) -> None:
        if self.verdict is not None and not isinstance(self.verdict, Verdict):
            raise TypeError(
                f"Measurement.verdict must be a dpverify.Verdict from the engine (or None when "
                f"measured only), got {self.verdict!r}"
            )
        if self.witness_data is not None and not isinstance(self.witness_data, Witness):
            raise TypeError(
                f"Measurement.witness_data must be the engine's dpverify.verdict.witness.Witness (or None), got "
                f"{self.witness_data!r}; pass a witness as text with witness=..."
            )
        if self.witness is None and self.witness_data is not None:  # the text, made once from the data
            prefix = "" if self.witness_part is None else f"{self.witness_part}\n"
            object.__setattr__(self, "witness", prefix + str(self.witness_data))

    @property
    def holds(self) -> bool | None:
        """``verdict.passes`` (None for measured-only rows)."""
        return None if self.verdict is None else self.verdict.passes

    @classmethod
    def from_result(cls, result: Any, **details: Any) -> Measurement:
        """A :func:`dpverify.verify` result as a measurement: eps*, delta, the claim, the engine's
        verdict and witness; pairs, datasets and certified pairs in the details (plus ``details``)."""
        info = {"pairs": result.pairs, "datasets": result.datasets, "certified_pairs": result.certified_pairs,
                "neighbors": result.neighbors, "exchangeability": result.exchangeability, **details}
        if getattr(result, "unexplored", 0):  # sub-distributions: the figures are the explored outputs'
            info["unexplored"] = result.unexplored
        if result.verdict is Verdict.UNDECIDED:  # why, for the audit's log and report
            info["reason"] = _undecided_reason(result)
        return cls(result.epsilon, result.delta, float(result.claimed_epsilon), float(result.claimed_delta),
                   result.verdict, None, info, tuple(getattr(result, "assumptions", ())), witness_data=result.witness)

    def measured_only(self) -> Measurement:
        """The same figures with no verdict (a lemma's preconditions were not met)."""
        return replace(self, verdict=None)


def _undecided_reason(result: Any) -> str:
    """Why ``result`` is UNDECIDED, in one line: its reason, or its pairs that could not be decided."""
    reason = str(getattr(result, "reason", "") or "")
    undecided = getattr(result, "undecided", 0)
    if undecided:
        reason += ("; " if reason else "") + (f"{undecided} pair(s) could not be decided exactly: not claimed to hold "
                                              "(exact probabilities, Fraction or sympy, decide them)")
    return reason or "neither proved nor refuted (an assumption could not be proved: see the assumptions)"


class Expect(enum.Enum):
    """What an audit row expects of its verdict."""

    HOLDS = "holds"  #: the verdict must pass (HOLDS or HOLDS_WITHIN_ROUNDING)
    VIOLATED = "violated"  #: a mutant: the verdict must be VIOLATED, with a witness
    MEASURED = "measured"  #: a finding: figures reported, no verdict asserted


@dataclass(frozen=True)
class SweepSeries:
    """Rows sharing a series form one table and one plot in the report: the measured ratio
    ``eps*/x`` and the claim's ``claimed/x`` against the swept parameter ``x``.

    Attributes:
        name: the series' title in the report.
        variable: the parameter swept (read from the row's parameters).
        columns: parameter or detail keys shown beside the ratios (details win on a clash).
    """

    name: str
    variable: str = "epsilon"
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditCase:
    """One row of an audit: a claim checked on one instance.

    Attributes:
        claim: the claim's id in its audit module (``"C1"``, ``"BENCH"``).
        mechanism: the name the row is reported under.
        parameters: the instance (JSON-serialisable values; shown abbreviated in tables).
        run: measures the instance exactly.
        description: one or two sentences for the report.
        expect: HOLDS (default), VIOLATED (a mutant; then ``parent`` names its parent) or
            MEASURED (no verdict asserted).
        parent: the mechanism a mutant breaks (the claim checked is the parent's).
        sweep: the report series this row belongs to, if any.
        shown: the instance as tables show it (default: ``key=value`` for every parameter, floats
            to 4 digits); :func:`audit_cases` fills it from the audit's ``instance(parameters)``.
        statement: the claim in its author's words (an audit file's rows, :mod:`dpverify.auditing`),
            shown with the row in every report; empty for rows that say it in ``description``.
        source: where the claim comes from, as the reports show it beside the statement
            (``"[LWY25] Lemma 11"``, ``"my derivation, notes.md"``); :func:`audit_cases` fills it
            from the audit's ``SOURCES`` when empty.
        source_link: where the report links the source: a URL, or an absolute file path (with an
            optional ``#anchor``) that the report writes relative to itself; empty for no link.
    """

    claim: str
    mechanism: str
    parameters: Mapping[str, Any]
    run: Callable[[], Measurement]
    description: str = ""
    expect: Expect = Expect.HOLDS
    parent: str | None = None
    sweep: SweepSeries | None = None
    shown: str | None = None
    statement: str = ""
    source: str = ""
    source_link: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.expect, Expect):
            raise TypeError(f"AuditCase.expect must be an Expect, got {self.expect!r}")
        if self.parent is not None and self.expect is Expect.HOLDS:
            raise ValueError(
                f"audit row {self.claim}/{self.mechanism} names parent={self.parent!r} but expects "
                f"the claim to hold; a mutant expects Expect.VIOLATED (or Expect.MEASURED)."
            )
        if self.expect is Expect.VIOLATED and self.parent is None:
            raise ValueError(
                f"audit row {self.claim}/{self.mechanism} expects a violation: name the parent it breaks "
                f"with parent=..."
            )

    @property
    def expect_violation(self) -> bool:
        return self.expect is Expect.VIOLATED

    @property
    def measured_only(self) -> bool:
        return self.expect is Expect.MEASURED

    @property
    def key(self) -> str:
        """The row as messages and cost hints name it: ``"C6/realizable_prediction (n=4, ...)"``."""
        return f"{self.claim}/{self.mechanism} ({self.instance})"

    @property
    def instance(self) -> str:
        """The instance as tables show it: ``shown``, else ``key=value`` pairs (floats to 4 digits)."""
        if self.shown is not None:
            return self.shown
        return ", ".join(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}"
                         for key, value in self.parameters.items())


#: How each state reads in tables (the JSON carries the state's name in "verdict").
_SHOWN = {
    Verdict.HOLDS: "holds",
    Verdict.HOLDS_WITHIN_ROUNDING: "holds (within rounding)",
    Verdict.VIOLATED: "VIOLATED",
    Verdict.UNDECIDED: "UNDECIDED",
}


@dataclass(frozen=True)
class AuditTiming:
    """How an audit ran, for the reports' headers: how many rows ran at once (``jobs``) and the run's
    wall time; the rows' own seconds (summed: the row time) are in the rows.

    Attributes:
        jobs: rows run at once (``dpverify audit --jobs``).
        wall_seconds: from the first row's start to the last row's end, workers' start included.
    """

    jobs: int
    wall_seconds: float

    def describe(self, rows: Sequence[AuditRow]) -> str:
        """``"167 rows in 70.2 s with 2 jobs (133.7 s of row time)"``."""
        noun = "row" if len(rows) == 1 else "rows"
        jobs = "1 job" if self.jobs == 1 else f"{self.jobs} jobs"
        return (f"{len(rows)} {noun} in {self.wall_seconds:.1f} s with {jobs} "
                f"({sum(r.seconds for r in rows):.1f} s of row time)")


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
        if verdict.passes and self.measurement.assuming:
            text += ", assuming"  # what is assumed: the table's notes, the JSON's "assuming"
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

    @property
    def measured(self) -> bool:
        """The row reports figures without a verdict: measured only, or no verdict was given."""
        return self.case.measured_only or self.measurement.verdict is None

    def to_json(self) -> dict[str, Any]:
        """The row as the JSON contract writes it (:mod:`dpverify.integrations.contract`; docs/json.md):
        figures as ``{"value", "kind", "exact"}`` objects, the witness structured, ``"verdict"`` the
        engine's state or ``"MEASURED"`` (then ``"holds"`` is null); ``"statement"`` and ``"source"``
        only for a row that has a statement (an audit file's)."""
        m = self.measurement
        verdict = "MEASURED" if self.measured or m.verdict is None else m.verdict.value
        witness = None
        if m.witness_data is not None:
            witness = contract.witness(m.witness_data, m.witness_part)
        stated = {"statement": self.case.statement, "source": self.case.source or None} if self.case.statement else {}
        return {
            "claim": self.case.claim,
            "mechanism": self.case.mechanism,
            "parent": self.case.parent,
            "instance": self.case.instance,
            "parameters": contract.encode(dict(self.case.parameters)),
            "description": self.case.description,
            **stated,
            "expect": self.case.expect.value,
            "expected_violation": self.case.expect_violation,
            "measured_only": self.case.measured_only,
            "verdict": verdict,
            "holds": None if verdict == "MEASURED" else m.holds,
            "as_expected": self.as_expected,
            "epsilon_star": contract.figure(m.epsilon_star),
            "delta_star": contract.figure(m.delta_star),
            "claimed_epsilon": contract.figure(m.claimed_epsilon),
            "claimed_delta": contract.figure(m.claimed_delta),
            "slack": contract.figure(self.slack),
            "seconds": round(self.seconds, 4),
            "witness": witness,
            "assuming": m.assuming or None,
            "assumptions": [a.to_json() for a in m.assumptions],
            "details": contract.encode(m.details),
        }


def run_audit(
    cases: Iterable[AuditCase],
    *,
    progress: bool | Callable[[str], None] | None = None,
    executor: Any = None,
    jobs: int = 1,
    costs: Mapping[str, float] | None = None,
) -> list[AuditRow]:
    """Run every case, timing each; the rows in the order of ``cases``.

    Args:
        cases: the audit cases.
        progress: a callable receiving one line per row, or True for a progress bar on stderr (rows
            done, the row(s) running, an ETA; shown once the audit has run for two seconds) when
            stderr is a terminal, a line per row there otherwise. With ``jobs > 1`` a line is
            written as each row ends (rows end out of order) and names the rows still running.
        executor: with ``jobs=1``, where every row's work runs (:mod:`dpverify.parallel.executors`:
            ``"processes"``, ``"dask"``, a Dask client...), one pool or cluster for the whole audit.
            With ``jobs > 1``, where the rows run: None (a pool of ``jobs`` processes), ``"dask"``
            (a LocalCluster of ``jobs`` workers) or a Dask client (its workers); ``"processes"``
            or an Executor is refused (a pool inside each of the ``jobs`` workers).
        jobs: how many rows run at once, each whole and serially in a worker process of its own
            (1: one after another in this process). Every figure, witness and verdict is that of
            the serial run; a row that raises raises here as serially (the first in case order).
        costs: seconds per row (by :attr:`AuditCase.key`, e.g. the previous report's,
            :func:`dpverify.integrations.report.previous_seconds`): with ``jobs > 1`` rows start
            longest first, rows of unknown cost before them, in case order.
    """
    cases = list(cases)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1 (rows run at once), got jobs={jobs!r}.")
    from dpverify.parallel.progress import terminal_bar

    bar = terminal_bar("audit", len(cases), "rows") if progress is True else None
    if progress is True and bar is None:
        progress = stderr_progress  # stderr is not a terminal: a line per row
    try:
        if min(jobs, len(cases)) > 1:
            return _run_jobs(cases, min(jobs, len(cases)), executor, costs, bar, progress)
        return _run_serially(cases, executor, bar, progress)
    finally:
        if bar is not None:
            bar.close()


def _run_serially(cases: list[AuditCase], executor: Any, bar: Any, progress: Any) -> list[AuditRow]:
    from dpverify.parallel.executors import use_executor

    rows = []
    with use_executor(executor):
        for index, case in enumerate(cases, 1):
            if bar is not None:
                bar.update(index - 1, label=f"{case.claim} {case.mechanism}")
            elif callable(progress):
                progress(f"[{index}/{len(cases)}] {case.claim} {case.mechanism} ({case.instance})")
            started = time.perf_counter()
            measurement = case.run()
            rows.append(AuditRow(case, measurement, time.perf_counter() - started))
        if bar is not None:
            bar.update(len(cases))
    return rows


def longest_first(cases: Sequence[AuditCase], costs: Mapping[str, float] | None) -> list[int]:
    """The indices of ``cases`` in the order to start them on several workers: rows of unknown cost
    first (in case order: a new row may be long), then by decreasing cost (ties in case order), so
    the longest row does not start last and leave one worker running it alone at the end."""
    def rank(index: int) -> tuple:
        cost = None if costs is None else costs.get(cases[index].key)
        return (0, index) if cost is None else (1, -cost, index)

    return sorted(range(len(cases)), key=rank)


def _run_jobs(cases: list[AuditCase], jobs: int, executor: Any, costs: Mapping[str, float] | None, bar: Any,
              progress: Any) -> list[AuditRow]:
    from dpverify.integrations._audit_jobs import RowDone, run_rows

    finished = 0
    if bar is not None:
        bar.update(0, label=f"audit, {jobs} jobs")

    def on_done(done: RowDone, running: list[int]) -> None:
        nonlocal finished
        finished += 1
        names = ", ".join(f"{cases[i].claim} {cases[i].mechanism}" for i in running)
        if bar is not None:
            bar.update(finished, label=f"running {names}" if names else "audit")
        elif callable(progress):
            case = cases[done.index]
            progress(f"[{finished}/{len(cases)}] {case.claim} {case.mechanism} ({case.instance}): "
                     f"{done.seconds:.2f} s" + (f"; running {names}" if names else ""))

    outcomes = run_rows(cases, longest_first(cases, costs), jobs=jobs, executor=executor, on_done=on_done)
    return [AuditRow(case, done.measurement, done.seconds) for case, done in zip(cases, outcomes)]


def format_table(rows: Sequence[AuditRow], *, width: int | None = None, color: bool = False) -> str:
    """The rows as a text table (claim, mechanism, instance, eps*, claimed eps, delta*, claimed delta,
    slack, verdict, seconds), the notes on assumed verdicts, the legend and the summary line with
    the counts (:func:`dpverify.integrations.terminal.render_table`).

    Args:
        rows: the audit rows.
        width: wrap cells to this many columns (None: one line per row, nothing cut).
        color: ANSI colours for the verdicts (False: plain text).
    """
    from dpverify.integrations.terminal import render_table

    return render_table(rows, width=width, color=color)


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def load_audits() -> list[Any]:
    """Every audit registered under the entry-point group ``dpverify.audits``, in order: the entry
    point named ``dpverify`` first (the audits shipped with the project), the others by name. An
    entry point's object is an audit (``cases()``, optional ``CLAIMS``) or a list of audits."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name != "dpverify", e.name))
    audits: list[Any] = []
    for entry in found:
        target = entry.load()
        for audit in target if isinstance(target, (list, tuple)) else [target]:
            if not callable(getattr(audit, "cases", None)):
                raise TypeError(
                    f"entry point {entry.name} = {entry.value} in group {ENTRY_POINT_GROUP!r} must name an "
                    f"object with a cases() function (or a list of them), got {audit!r}"
                )
            audits.append(audit)
    return audits


def audit_cases(audits: Iterable[Any] | None = None) -> list[AuditCase]:
    """Every case of every audit (``load_audits()`` by default), in report order. An audit with an
    ``instance(parameters) -> str`` function decides how its rows' instances are shown; one with
    ``SOURCES``, a mapping from claim id to ``(source, source_link)``, gives the source of its rows
    that name none."""
    cases: list[AuditCase] = []
    for audit in load_audits() if audits is None else audits:
        show = getattr(audit, "instance", None)
        sources = getattr(audit, "SOURCES", {})
        for case in audit.cases():
            if not isinstance(case, AuditCase):
                raise TypeError(f"{audit!r}.cases() must return AuditCase rows, got {case!r}")
            if show is not None and case.shown is None:
                case = replace(case, shown=show(case.parameters))
            if not case.source and case.claim in sources:
                text, link = sources[case.claim]
                case = replace(case, source=text, source_link=link)
            cases.append(case)
    return cases


def claim_measurements(audits: Iterable[Any] | None = None) -> dict[str, Callable[..., Measurement]]:
    """Claim id -> measurement function taking instance keyword arguments, over every audit's
    ``CLAIMS`` (``dpverify claim``). Two audits claiming one id is an error."""
    merged: dict[str, Callable[..., Measurement]] = {}
    for audit in load_audits() if audits is None else audits:
        for claim, measure in getattr(audit, "CLAIMS", {}).items():
            if claim in merged and merged[claim] is not measure:
                raise ValueError(f"claim {claim!r} is measured by two audits ({merged[claim]!r} and {measure!r})")
            merged[claim] = measure
    return merged
