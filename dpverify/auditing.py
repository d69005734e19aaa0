"""An audit of your own learners, declared in one Python file: ``dpverify audit my_audit.py``.

An audit is a title, a description and rows; a row is one claim checked on one instance, as three
values and your own words:

* the **mechanism** (``dataset -> {outcome: probability}``, as :func:`dpverify.verify` takes it);
* the **inputs** (:class:`dpverify.Datasets`, :class:`dpverify.InputPairs` or
  :class:`dpverify.PublicData`);
* the **claim** (:class:`dpverify.PureDp`, ``ApproximateDp``, ``Stability``, ``PredictionDp``);
* the claim's **statement** and **source** in your words (``"noisy_threshold is ln(3)-DP"``,
  ``"my notes, Lemma 2"``), printed in the reports beside the verdict;
* what the row **expects**: ``"holds"`` (the claim must hold) or ``"violated"`` (a mutant, a
  broken copy of a mechanism, that the check must catch with a witness).

A file declares one :class:`Audit` at its top level (any name)::

    from dpverify import Datasets, PureDp
    from dpverify.auditing import Audit, Row

    audit = Audit(
        "My learner",
        [Row(my_learner, Datasets(range(3), n=2), PureDp("ln(3)"), statement="my_learner is ln(3)-DP"),
         Row(my_broken_learner, Datasets(range(3), n=2), PureDp("ln(3)"), statement="my_learner is ln(3)-DP",
             expect="violated")],
        description="What the learner does, and why the claim should hold.",
    )

``dpverify audit my_audit.py`` (or ``dpverify audit my_package.my_audit``) loads it, no packaging
needed, and runs every row through the audit's machinery
(:mod:`dpverify.integrations.audit`): the same table, JSON document and Markdown and HTML reports
as ``dpverify audit``, under your title, with your statements. Every row is decided by
:func:`dpverify.verify`; a mechanism that raises stops the audit with an error (exit 3), never a
verdict. Values are checked when they are built: a bad row is an
:class:`~dpverify.errors.InvalidArgument` naming the fix (exit 2 on the command line).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal

from dpverify.checking.front import Datasets, PublicData, verify
from dpverify.checking.input_pairs import InputPairs
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import relation
from dpverify.integrations.audit import AuditCase, Expect, Measurement
from dpverify.types import Mechanism, PublicMechanism
from dpverify.validation import arity_advice, required_positionals
from dpverify.verdict.claims import ApproximateDp, Claim, PureDp

__all__ = ["Audit", "Row"]

#: Records shown one by one in the instance column up to this many characters, else counted.
_SHOWN_RECORDS = 60


@dataclass(frozen=True)
class Row:
    """One row of an audit: ``claim`` checked for ``mechanism`` on ``inputs``, with your words.

    Attributes:
        mechanism: ``dataset -> {outcome: probability}`` (for :class:`dpverify.PublicData`,
            ``(public, dataset) -> {outcome: probability}``).
        inputs: :class:`dpverify.Datasets`, :class:`dpverify.InputPairs` or :class:`dpverify.PublicData`.
        claim: :class:`dpverify.PureDp`, ``ApproximateDp``, ``Stability`` or ``PredictionDp``.
        statement: the claim in your words (``"noisy_threshold is ln(3)-DP"``); rows sharing a
            statement share a number in the table's claim column.
        source: where the claim comes from (a paper, a note, a URL), shown with the statement.
        expect: ``"holds"`` (the claim must hold) or ``"violated"`` (a mutant: the check must
            find a violation, with its witness).
        name: the row's name in the table (default: the mechanism's ``__name__``).
        mutant_of: for ``expect="violated"``, the name of the row whose mechanism this one breaks
            (default: the first row expected to hold with the same statement).

    Raises:
        InvalidArgument: a value of the wrong kind, an empty statement, an unknown ``expect``, a
            mechanism without a name (a lambda: give ``name=``), ``mutant_of`` on a row that holds.
    """

    mechanism: Mechanism | PublicMechanism
    inputs: Datasets | InputPairs | PublicData
    claim: Claim
    _: KW_ONLY
    statement: str
    source: str = ""
    expect: Literal["holds", "violated"] = "holds"
    name: str | None = None
    mutant_of: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.mechanism):
            raise InvalidArgument(f"Row: mechanism must be a callable dataset -> {{outcome: probability}}, got "
                                  f"{self.mechanism!r}.")
        called = ("public", "dataset") if isinstance(self.inputs, PublicData) else ("dataset",)
        advice = arity_advice(self.label or repr(self.mechanism), required_positionals(self.mechanism), called=called)
        if advice is not None:
            raise InvalidArgument(f"Row {self.label!r}: {advice}")
        if not isinstance(self.inputs, (Datasets, InputPairs, PublicData)):
            raise InvalidArgument(
                f"Row {self.label!r}: inputs must be dpverify.Datasets(records, n=...), dpverify.InputPairs or "
                f"dpverify.PublicData, got {self.inputs!r}."
            )
        if not isinstance(self.claim, Claim):
            raise InvalidArgument(
                f"Row {self.label!r}: claim must be a claim value such as dpverify.PureDp(1) or "
                f"dpverify.ApproximateDp(1, 1e-5), got {self.claim!r}."
            )
        for field_name in ("statement", "source"):
            if not isinstance(getattr(self, field_name), str):
                raise InvalidArgument(f"Row {self.label!r}: {field_name} must be text, got "
                                      f"{field_name}={getattr(self, field_name)!r}.")
        if not self.statement.strip():
            raise InvalidArgument(
                f"Row {self.label!r}: statement is empty; say what is claimed, e.g. "
                f"statement=\"{self.label} is ln(3)-DP under substitution\"."
            )
        if self.expect not in ("holds", "violated"):
            raise InvalidArgument(f"Row {self.label!r}: expect must be 'holds' or 'violated' (a mutant that must be "
                                  f"caught), got expect={self.expect!r}.")
        if self.mutant_of is not None and self.expect == "holds":
            raise InvalidArgument(f"Row {self.label!r} names mutant_of={self.mutant_of!r} but expects the claim to "
                                  "hold; a mutant expects expect=\"violated\".")
        if self.name is None and self.label in ("", "<lambda>"):
            raise InvalidArgument(f"Row: the mechanism {self.mechanism!r} has no name to show; give one with name=...")

    @property
    def label(self) -> str:
        """The row's name in the table: ``name``, else the mechanism's ``__name__``."""
        if self.name is not None:
            return self.name
        return str(getattr(self.mechanism, "__name__", ""))


@dataclass(frozen=True)
class Audit:
    """An audit declared in a file: a title, the rows, a description (``dpverify audit PATH.py``).

    Attributes:
        title: the reports' title (``"Noisy threshold learner"``).
        rows: the :class:`Row` values, in the table's order (at least one).
        description: a paragraph under the title: what is audited and why.

    Raises:
        InvalidArgument: an empty title, no rows, a row that is not a :class:`Row`, a mutant whose
            parent cannot be found (``mutant_of`` naming no row that holds, or no row that holds
            with its statement).
    """

    title: str
    rows: Sequence[Row]
    _: KW_ONLY
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise InvalidArgument(f"Audit: title must be non-empty text, got title={self.title!r}.")
        if not isinstance(self.description, str):
            raise InvalidArgument(f"Audit {self.title!r}: description must be text, got {self.description!r}.")
        if isinstance(self.rows, (str, bytes, Row)) or not isinstance(self.rows, Iterable):
            raise InvalidArgument(f"Audit {self.title!r}: rows must be a list of Row values, got {self.rows!r}.")
        rows = tuple(self.rows)
        if not rows:
            raise InvalidArgument(f"Audit {self.title!r} has no rows; add Row(mechanism, inputs, claim, statement=...).")
        for index, row in enumerate(rows):
            if not isinstance(row, Row):
                raise InvalidArgument(f"Audit {self.title!r}: rows[{index}] must be a dpverify.auditing.Row, got {row!r}.")
        object.__setattr__(self, "rows", rows)
        for row in rows:
            self._parent_of(row)  # a mutant without a parent fails here, when the file is loaded

    def _parent_of(self, row: Row) -> str | None:
        """The name of the row whose mechanism ``row`` breaks (None for a row that holds)."""
        if row.expect == "holds":
            return None
        holding = [other for other in self.rows if other.expect == "holds"]
        if row.mutant_of is not None:
            if not any(other.label == row.mutant_of for other in holding):
                names = sorted({other.label for other in holding})
                raise InvalidArgument(f"Row {row.label!r}: mutant_of={row.mutant_of!r} names no row expected to hold; "
                                      f"choose one of {names}.")
            return row.mutant_of
        for other in holding:
            if other.statement == row.statement:
                return other.label
        raise InvalidArgument(
            f"Row {row.label!r} expects a violation: name the row whose mechanism it breaks with mutant_of=..., or "
            "give it the same statement as that row."
        )

    def cases(self) -> list[AuditCase]:
        """The rows as audit cases (:class:`dpverify.integrations.audit.AuditCase`): numbered by
        statement in the claim column, the inputs as the instance, each run by :func:`dpverify.verify`.
        With it an ``Audit`` is also an audit of the entry-point group ``dpverify.audits``: a package
        may register ``my_learner:audit`` there to run it with every other audit."""
        numbers: dict[str, str] = {}
        cases = []
        for row in self.rows:
            number = numbers.setdefault(row.statement, str(len(numbers) + 1))
            shown, parameters = _instance(row.inputs)
            cases.append(AuditCase(
                number, row.label, parameters, _Check(row.mechanism, row.inputs, row.claim),
                expect=Expect.HOLDS if row.expect == "holds" else Expect.VIOLATED, parent=self._parent_of(row),
                shown=shown, statement=row.statement, source=row.source,
            ))
        return cases


@dataclass(frozen=True)
class _Check:
    """A row's measurement: :func:`dpverify.verify` on its inputs, with the privacy profile δ(ε)
    (for DP claims) for the report's chart. The seed is fixed, so a run repeats exactly."""

    mechanism: Any
    inputs: Any
    claim: Claim

    def __call__(self) -> Measurement:
        profile = isinstance(self.claim, (PureDp, ApproximateDp))
        result = verify(self.mechanism, self.inputs, self.claim, profile=profile, seed=0)
        if not result.profile:
            return Measurement.from_result(result)
        points = [{"epsilon": float(epsilon), "delta": float(delta)} for epsilon, delta in result.profile]
        return Measurement.from_result(result, privacy_profile=points)


def _instance(inputs: Datasets | InputPairs | PublicData) -> tuple[str, Mapping[str, Any]]:
    """How the inputs show in the instance column, and as the row's parameters (JSON)."""
    if isinstance(inputs, InputPairs):
        return f"{inputs.name}: {len(inputs.left)} pairs", {"pairs": inputs.name, "count": len(inputs.left)}
    if isinstance(inputs, PublicData):
        shown, parameters = _datasets(inputs.private)
        return f"public data; private {shown}", {"public_data": True, **parameters}
    return _datasets(inputs)


def _datasets(datasets: Datasets) -> tuple[str, dict[str, Any]]:
    records: tuple[Hashable, ...] = tuple(datasets.records)
    neighbors = relation(datasets.neighbors).name
    listed = repr(list(records))
    shown = f"records={listed}" if len(listed) <= _SHOWN_RECORDS else f"{len(records)} records"
    shown += f", n={datasets.n}, {neighbors}"
    parameters: dict[str, Any] = {"records": list(records), "n": datasets.n, "neighbors": neighbors}
    if datasets.exchangeable is not None:
        shown += f", exchangeable={datasets.exchangeable}"
        parameters["exchangeable"] = datasets.exchangeable
    return shown, parameters
