"""Claims as values: what a mechanism is claimed to satisfy, decided by the one engine.

A claim is a frozen value, validated once on construction through :mod:`dpverify.validation`
(numbers are read by its one policy: a float ``0.1`` is 1/10, and a float claim stands for any
real within its rounding). Its parameters are :data:`dpverify.types.Number` values: an expression
string (``PureDp("ln(3)")``) is read on construction, and the claim holds the number it spells
(``sympy.log(3)``; ``"1/3"`` a Fraction, ``"0.1"`` the float):

* :class:`PureDp` ``(epsilon)`` — ``P(S) <= e^eps Q(S)`` for every neighbour pair and output set S
  (Dwork & Roth 2014, Def. 2.4 with delta = 0).
* :class:`ApproximateDp` ``(epsilon, delta)`` — ``P(S) <= e^eps Q(S) + delta``.
* :class:`Stability` ``(gamma)`` — uniform additive stability: ``|P(o) - Q(o)| <= gamma`` for every
  neighbour pair and outcome o (the stability of Dagan & Feldman 2020, for a binary prediction
  ``|P(1) - Q(1)|``).
* :class:`PredictionDp` ``(epsilon, delta, queries)`` — for a mechanism whose outcomes are
  predictors ``h`` (label tuples, mappings ``x -> label`` or callables): for every query ``x`` the
  distribution of the label ``h(x)`` is (epsilon, delta)-DP (private prediction, Dwork & Feldman
  2018; Li, Wang & Ye 2025).

Every claim is decided by :func:`dpverify.verdict.engine.decide` on :class:`~dpverify.verdict.engine.RowPairs` —
there is no second verdict path. The DP claims pass the rows as they are. Stability passes the
binary projections ``{o, not o}`` of every row at ``epsilon = 0``: the hockey-stick value of a
binary pair at 0 is ``max(0, P(o) - Q(o)) + max(0, Q(o) - P(o)) = |P(o) - Q(o)|``, so
``(0, gamma)``-DP of every projection is exactly uniform gamma-stability. PredictionDp passes the
projections ``o -> h_o(x)`` per query. A projected mass is a sum of a row's probabilities: exact
rows are summed exactly; a float row's sums are the float sums, whose relative error is the row's
own plus ``(K + 1) u`` (``K`` outcomes, ``u = 2**-53``; non-negative terms), and that is the error
the engine allows them. Witnesses name the datasets of the original pair and the event: ``{o}``,
``{not o}`` or ``{h(x) = label}``. Projections multiply the rows and pairs by the number of
outcomes (Stability) or queries (PredictionDp): meant for the small instances dpverify enumerates.
A row's unexplored mass (``RowPairs.unexplored``) is every projection's: the mass not explored may
fall in any event, so each projected row keeps the bound of its row.

:func:`dpverify.verify` and :func:`dpverify.checking.public_data.verify_with_public_data` take ``claim=``
beside the keyword form ``epsilon=, delta=``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpverify.errors import InvalidArgument
from dpverify.types import Number, RealNumber
from dpverify.validation import check_callable, check_delta, check_epsilon, check_probability, number_from_text

if TYPE_CHECKING:
    from dpverify.verdict.engine import Decision, RowPairs

__all__ = [
    "Claim",
    "PureDp",
    "ApproximateDp",
    "Stability",
    "PredictionDp",
    "Complement",
    "Prediction",
    "claim_from_arguments",
    "outcome_projections",
    "prediction_projections",
]

_UNIT = 2.0**-53


class Claim:
    """Base of the claim values: ``decide(pairs)`` gives the engine's
    :class:`~dpverify.verdict.engine.Decision` on ``project(pairs)`` (the pairs themselves, or their binary
    or per-query projections) at ``claimed_epsilon`` / ``claimed_delta`` (for :class:`Stability`: 0
    and gamma)."""

    @property
    def claimed_epsilon(self) -> RealNumber:
        return getattr(self, "epsilon")  # noqa: B009  (every subclass has one, or overrides this)

    @property
    def claimed_delta(self) -> RealNumber:
        return getattr(self, "delta")  # noqa: B009

    def _read_text(self, *names: str) -> None:
        """Replace each expression string among the fields ``names`` by the number it spells."""
        for name in names:
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, number_from_text(name, value))

    def project(self, pairs: RowPairs) -> RowPairs:
        """The rows the claim is a DP claim about (default: the mechanism's own outputs)."""
        return pairs

    def decide(self, pairs: RowPairs) -> Decision:
        from dpverify.verdict.engine import decide

        return decide(self.project(pairs), self.claimed_epsilon, self.claimed_delta)


@dataclass(frozen=True)
class PureDp(Claim):
    """Pure epsilon-differential privacy: ``P(S) <= e^eps Q(S)`` for every pair and set S.

    Attributes:
        epsilon: >= 0; int, Fraction, float, sympy (``sympy.log(3)``) or an expression string
            (``"ln(3)"``, read on construction).
    """

    epsilon: Number

    def __post_init__(self) -> None:
        self._read_text("epsilon")
        check_epsilon(self.epsilon)

    @property
    def delta(self) -> int:
        return 0

    def __str__(self) -> str:
        return f"pure DP (eps={self.epsilon})"


@dataclass(frozen=True)
class ApproximateDp(Claim):
    """(epsilon, delta)-differential privacy: ``P(S) <= e^eps Q(S) + delta`` for every pair and set S.

    Attributes:
        epsilon: >= 0. delta: in [0, 1].
    """

    epsilon: Number
    delta: Number

    def __post_init__(self) -> None:
        self._read_text("epsilon", "delta")
        check_epsilon(self.epsilon)
        check_delta(self.delta)

    def __str__(self) -> str:
        return f"(eps={self.epsilon}, delta={self.delta})-DP"


@dataclass(frozen=True)
class Stability(Claim):
    """Uniform additive gamma-stability: ``|P(o) - Q(o)| <= gamma`` for every pair and outcome o.

    Decided as ``(0, gamma)``-DP of the binary projections ``{o, not o}`` (module docstring).

    Attributes:
        gamma: in [0, 1].
    """

    gamma: Number

    def __post_init__(self) -> None:
        self._read_text("gamma")
        check_probability("gamma", self.gamma, fix="gamma bounds |P(o) - Q(o)|, a difference of probabilities")

    @property
    def claimed_epsilon(self) -> RealNumber:
        return 0

    @property
    def claimed_delta(self) -> RealNumber:
        assert not isinstance(self.gamma, str), "gamma is read on construction (_read_text)"
        return self.gamma

    def project(self, pairs: RowPairs) -> RowPairs:
        return outcome_projections(pairs)

    def __str__(self) -> str:
        return f"uniform stability (gamma={self.gamma})"


@dataclass(frozen=True)
class PredictionDp(Claim):
    """(epsilon, delta)-DP prediction: for every query ``x``, the label ``h(x)`` of the predictor ``h``
    the mechanism outputs is (epsilon, delta)-DP.

    Attributes:
        epsilon: >= 0. delta: in [0, 1] (default 0).
        queries: the queries x (default: every index of the first outcome — the keys of a mapping,
            ``range(len(h))`` of a label tuple; required when the outcomes are callables).
        predict: ``(outcome, x) -> label`` (default ``outcome[x]``, or ``outcome(x)`` for a callable).
    """

    epsilon: Number
    delta: Number = 0
    queries: tuple | None = None
    predict: Callable[[Any, Any], Hashable] | None = None

    def __post_init__(self) -> None:
        self._read_text("epsilon", "delta")
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        if self.queries is not None:
            if isinstance(self.queries, (str, bytes)) or not isinstance(self.queries, Iterable):
                raise InvalidArgument(
                    f"queries must be an iterable of query points, got queries={self.queries!r}; pass e.g. "
                    "queries=range(domain_size), or None for every index of the predictors."
                )
            queries = tuple(self.queries)
            if not queries:
                raise InvalidArgument("queries must hold at least one query, got an empty iterable; pass None for every index.")
            object.__setattr__(self, "queries", queries)
        if self.predict is not None:
            check_callable("predict", self.predict, fix="pass a function (outcome, x) -> label, or None")

    def project(self, pairs: RowPairs) -> RowPairs:
        return prediction_projections(pairs, self.queries, self.predict)

    def __str__(self) -> str:
        where = "every query" if self.queries is None else f"queries {list(self.queries)}"
        return f"(eps={self.epsilon}, delta={self.delta})-DP prediction on {where}"


def claim_from_arguments(claim: Any, epsilon: Number | None, delta: Number | None) -> Claim:
    """The claim of a ``verify(..., claim=)`` / ``verify(..., epsilon=, delta=)`` call: exactly one
    of the two forms; the keyword form is :class:`PureDp` without delta, else :class:`ApproximateDp`."""
    if claim is not None:
        if epsilon is not None or delta is not None:
            given = ", ".join(f"{k}={v!r}" for k, v in (("epsilon", epsilon), ("delta", delta)) if v is not None)
            raise InvalidArgument(
                f"pass the claim once: claim={claim!r} and {given} were both given; drop {given}, or "
                "state it in the claim, e.g. claim=ApproximateDp(epsilon, delta)."
            )
        if not isinstance(claim, Claim):
            raise InvalidArgument(
                f"claim must be a PureDp, ApproximateDp, Stability or PredictionDp, got claim={claim!r}; "
                "e.g. claim=dpverify.PureDp(1)."
            )
        return claim
    if epsilon is None:
        if delta is not None:
            raise InvalidArgument(
                f"delta={delta!r} needs an epsilon: pass epsilon= too, or claim=ApproximateDp(epsilon, delta)."
            )
        raise InvalidArgument(
            "no claim to check, got epsilon=None and claim=None; pass epsilon= (and delta=), or "
            "claim=PureDp(epsilon) / ApproximateDp(epsilon, delta) / Stability(gamma) / PredictionDp(epsilon)."
        )
    return PureDp(epsilon) if delta is None else ApproximateDp(epsilon, delta)


# -- projections --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Complement:
    """The event "the outcome is not ``outcome``" of a Stability projection."""

    outcome: Any

    def __repr__(self) -> str:
        return f"not {self.outcome!r}"


@dataclass(frozen=True)
class Prediction:
    """The event "the predictor labels ``query`` with ``label``" of a PredictionDp projection."""

    query: Any
    label: Any

    def __repr__(self) -> str:
        return f"h({self.query!r}) = {self.label!r}"


def outcome_projections(pairs: RowPairs) -> RowPairs:
    """Every row projected on ``{o, not o}`` for every outcome o (rows and pairs times the outcomes);
    a binary row needs one projection (the other is its complement)."""
    names = pairs.outcome_names()
    views = names[:1] if len(names) == 2 else names
    return _project(pairs, [{o: (o if o == view else Complement(view)) for o in names} for view in views])


def prediction_projections(
    pairs: RowPairs, queries: Sequence | None = None, predict: Callable[[Any, Any], Hashable] | None = None
) -> RowPairs:
    """Every row projected on the label of each query: outcome ``h`` -> ``Prediction(x, h(x))``."""
    names = pairs.outcome_names()
    if not names:
        raise InvalidArgument("PredictionDp needs outcomes (predictors), got none.")
    if queries is None:
        queries = _default_queries(names[0])
    label_of = predict or _label
    views = []
    for x in queries:
        view = {}
        for h in names:
            try:
                view[h] = Prediction(x, label_of(h, x))
            except (KeyError, IndexError, TypeError) as error:
                raise InvalidArgument(
                    f"PredictionDp: the outcome {h!r} gives no label at query {x!r} ({type(error).__name__}: "
                    f"{error}); the outcomes must be predictors (label tuples, mappings x -> label or "
                    "callables), or pass predict=(outcome, x) -> label and queries=."
                ) from None
        views.append(view)
    return _project(pairs, views)


def _label(h: Any, x: Any) -> Hashable:
    if callable(h) and not isinstance(h, (Mapping, Sequence)):
        return h(x)
    return h[x]


def _default_queries(h: Any) -> tuple:
    if isinstance(h, Mapping):
        return tuple(h)
    if isinstance(h, Sequence) and not isinstance(h, (str, bytes)):
        return tuple(range(len(h)))
    raise InvalidArgument(
        f"PredictionDp cannot list the queries of the outcome {h!r}; pass queries=, e.g. "
        "PredictionDp(epsilon, queries=range(domain_size))."
    )


def _project(pairs: RowPairs, views: list[dict]) -> RowPairs:
    """Stack one projection of every row per view (``view[outcome]`` is the event it falls in)."""
    import numpy as np

    from dpverify.verdict._certify import _exact_sum
    from dpverify.verdict.engine import RowPairs

    names = pairs.outcome_names()
    rows, outcomes = pairs.matrix.shape
    errors = pairs.errors()
    events: list[list] = []
    indicators = []
    for view in views:
        order = list(dict.fromkeys(view[o] for o in names))
        column = {event: i for i, event in enumerate(order)}
        indicator = np.zeros((outcomes, len(order)))
        indicator[np.arange(outcomes), [column[view[o]] for o in names]] = 1.0
        events.append(order)
        indicators.append(indicator)
    width = max(len(order) for order in events)
    matrix = np.zeros((len(views) * rows, width))
    for v, indicator in enumerate(indicators):
        matrix[v * rows : (v + 1) * rows, : indicator.shape[1]] = pairs.matrix @ indicator
    # a float row's projected masses are float sums: their own error plus (K + 1) u, rounded up
    sum_error = (outcomes + 1) * _UNIT
    projected_errors = np.where(errors > 0, (errors + sum_error + errors * sum_error) * (1 + 2.0**-40), 0.0)

    def exact_row(index: int) -> Mapping:
        v, r = divmod(index, rows)
        order = events[v]
        if errors[r] > 0:  # the certified values are the float sums themselves
            return {order[k]: float(matrix[index, k]) for k in range(len(order)) if matrix[index, k] > 0}
        masses: dict = {}
        for o, p in pairs.exact(r).items():
            masses.setdefault(views[v][o], []).append(p)
        return {event: _exact_sum(values) for event, values in masses.items()}

    from dpverify.finite.pair_sources import TiledPairs

    return RowPairs(
        matrix, None, None, source=TiledPairs(pairs.source, len(views), rows), executor=pairs.executor,
        progress=pairs.progress, symmetric=pairs.symmetric, exact_row=exact_row, row_error=np.tile(projected_errors, len(views)),
        label=lambda index: pairs.name(index % rows), is_neighbor=pairs.is_neighbor,
        expected_pairs=None if pairs.expected_pairs is None else pairs.expected_pairs * len(views),
        matrix_error=(pairs.matrix_error + sum_error + pairs.matrix_error * sum_error) * (1 + 2.0**-40)
        if pairs.matrix_error else 0.0,
        unexplored=None if pairs.unexplored is None else np.tile(pairs.unexplored, len(views)),
    )
