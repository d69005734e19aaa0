"""What a verdict rests on: every assumption is proved, refuted, accepted by the caller, or it blocks.

A verdict that passes (HOLDS, HOLDS_WITHIN_ROUNDING) may use structure the mechanism *declares*
instead of what the checker enumerates. Each such place is an :class:`Assumption` with a
:class:`Status`:

* ``PROVED`` — checked exhaustively in this run (e.g. the mechanism evaluated on every ordering);
* ``REFUTED`` — a counterexample was found; the checker did without the assumption (e.g. a
  declared exchangeability refuted: every ordered dataset was checked as a black box);
* ``ACCEPTED`` — not proved, tested on a sample, and accepted explicitly by the caller (e.g.
  ``verify(..., exchangeable="assume")``): the verdict may pass, and every output says
  "holds, assuming ..., tested on ...";
* ``UNPROVED`` — not proved and not accepted: a passing verdict becomes ``UNDECIDED``
  (:func:`settle`), with the reason and the fix.

A ``VIOLATED`` verdict rests on no assumption: its witness is a certified neighbour pair whose
datasets the mechanism was run on.

The assumption sites (each has a test):

1. **Exchangeability** (:func:`dpverify.verify`, ``exchangeable=``): the multiset enumeration is
   equivalent to the ordered one only if the output ignores the order. Proved on every ordering
   when that costs no more than the run (:mod:`dpverify.checking._symmetry`, an evaluation budget from the
   measured rate); otherwise tested on random datasets and every transposition of each, and then
   ``UNPROVED`` unless ``exchangeable="assume"``.
2. **Pair covers** (:func:`dpverify.checking.pair_cover.covering_pairs`): deciding a claim on a cover is
   equivalent to deciding it on all pairs only if the mechanism's ``loss_components`` are right
   (a lemma proved in its docstring, not in code). Tested on the pairs outside the cover (their
   loss may not exceed the cover's worst); accepted explicitly by the caller (the audit does).
3. **Float errors** (:mod:`dpverify.verdict.engine`): the float model (every float probability within
   relative ``rho`` of the exact one) decides only the ``HOLDS_WITHIN_ROUNDING`` state, which names
   it, and the rounding allowance of a violation; HOLDS is proved for the returned floats with that
   allowance to spare. A mechanism offering ``exact_distribution`` has its float rows compared
   with the exact ones on every certified row.
4. **Determinism**: a mechanism must return its distribution, a function of the dataset alone.
   Every certified or witness dataset and a random sample of the rest are evaluated twice; a
   difference raises :class:`~dpverify.errors.NondeterministicMechanism` (never a verdict).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable
from dataclasses import dataclass

from dpverify.verdict.engine import Verdict

__all__ = ["Status", "Assumption", "settle", "assuming", "blocking", "new_seed"]


class Status(enum.Enum):
    """How an assumption stands in one run."""

    PROVED = "proved"
    REFUTED = "refuted"
    ACCEPTED = "accepted"
    UNPROVED = "unproved"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Assumption:
    """One thing a verdict would rest on, and how it stands.

    Attributes:
        name: the site (``"exchangeable"``, ``"pair cover"``).
        statement: what is assumed, as a sentence fragment ("the output ignores the order of the
            records").
        status: :class:`Status`.
        evidence: what was checked ("every ordering: 27,000 datasets", "tested on 1,000 random
            datasets and every transposition of each (seed 7)").
        fix: what the caller can do when it blocks a verdict (empty when nothing is needed).
    """

    name: str
    statement: str
    status: Status
    evidence: str
    fix: str = ""

    def __str__(self) -> str:
        named = self.statement if self.statement.startswith(self.name) else f"{self.name} ({self.statement})"
        text = f"{named}: {self.status}, {self.evidence}"
        return f"{text}; {self.fix}" if self.status is Status.UNPROVED and self.fix else text

    def to_json(self) -> dict:
        return {"name": self.name, "statement": self.statement, "status": self.status.value,
                "evidence": self.evidence, "fix": self.fix}


def blocking(assumptions: Iterable[Assumption]) -> list[Assumption]:
    """The assumptions that keep a verdict from passing (``UNPROVED``)."""
    return [a for a in assumptions if a.status is Status.UNPROVED]


def settle(verdict: Verdict, assumptions: Iterable[Assumption]) -> Verdict:
    """The verdict once its assumptions are counted: a passing verdict with an ``UNPROVED``
    assumption is ``UNDECIDED``; every other verdict is unchanged."""
    if verdict.passes and blocking(assumptions):
        return Verdict.UNDECIDED
    return verdict


def assuming(assumptions: Iterable[Assumption]) -> str:
    """``"assuming <statement> (<evidence>); ..."`` for the accepted assumptions, else ``""``."""
    accepted = [a for a in assumptions if a.status is Status.ACCEPTED]
    return "; ".join(f"assuming {a.statement} ({a.evidence})" for a in accepted)


def new_seed(seed: int | None) -> int:
    """``seed`` itself, or a fresh one when None (reported, so a run can be repeated)."""
    return random.SystemRandom().randrange(2**32) if seed is None else int(seed)
