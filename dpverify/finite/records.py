"""Finite domains: records, datasets and concept classes as boolean matrices.

A record is an example ``(x, y)`` with ``x`` a point of the finite domain ``X = {0, ..., d-1}`` and
``y`` in ``{0, 1}``; a dataset is a tuple of records. A concept class over ``X`` is a boolean matrix
with one row per concept and one column per point, in a fixed class order: that order is what the
representative rule ``"first"`` refers to.

Builders (``d = |X|``):

* :func:`thresholds` — ``c_u(x) = 1`` iff ``x >= u``, for ``u = 0, 1, ..., d`` (``d + 1`` concepts);
* :func:`intervals` — the empty concept, then ``1[a <= x <= b]`` for ``0 <= a <= b < d`` in
  lexicographic order of ``(a, b)``;
* :func:`point_functions` — ``c_j(x) = 1`` iff ``x = j``, ``j = 0, ..., d-1``;
* :func:`all_functions` — all ``2^d`` functions, concept ``i`` labelling ``x`` with bit ``x`` of ``i``;
* :func:`unions_of_two_intervals` — every union of at most two intervals, duplicates removed,
  in order of first appearance (empty, single intervals, then pairs).

:meth:`ConceptClass.labelings` gives ``Pi_C(T_X)``, the labelings of a dataset's points realised by
the class, each with one representative concept chosen by a named rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpverify.errors import InvalidArgument
from dpverify.validation import check_integer

__all__ = [
    "Record",
    "Dataset",
    "ConceptClass",
    "labeled_records",
    "thresholds",
    "intervals",
    "point_functions",
    "all_functions",
    "unions_of_two_intervals",
    "CONCEPT_CLASSES",
    "concept_class",
    "vc_dimension",
]

Record = tuple[int, int]
Dataset = tuple[Record, ...]
#: A representative rule: ``"first"``, ``"last"`` or ``rule(concept_class, labeling, candidates)``
#: returning one of ``candidates`` (concept indices consistent with the labeling, in class order).
RepresentativeRule = str | Callable[["ConceptClass", tuple, Sequence[int]], int]


def _check_domain_size(domain_size: int) -> None:
    check_integer("domain_size", domain_size, at_least=1, fix="domain_size is |X|, e.g. domain_size=3")


def labeled_records(domain_size: int) -> tuple[Record, ...]:
    """All records ``(x, y)`` with ``x`` in ``{0..domain_size-1}`` and ``y`` in ``{0, 1}``."""
    _check_domain_size(domain_size)
    return tuple((x, y) for x in range(domain_size) for y in (0, 1))


@dataclass(frozen=True, eq=False)
class ConceptClass:
    """A finite concept class over ``X = {0, ..., domain_size - 1}``.

    Attributes:
        name: a short name used in reports (``"thresholds"``).
        matrix: read-only boolean array of shape ``(len(class), domain_size)``; ``matrix[c, x]``
            is concept ``c``'s label of point ``x``.
    """

    name: str
    matrix: np.ndarray
    _row_index: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        matrix = np.array(self.matrix, dtype=bool, copy=True)
        if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
            raise InvalidArgument(
                f"a concept class needs a non-empty 2-d boolean matrix (concepts x points), got "
                f"shape {matrix.shape}."
            )
        matrix.setflags(write=False)
        object.__setattr__(self, "matrix", matrix)
        object.__setattr__(self, "_row_index", {})

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def __repr__(self) -> str:
        return f"ConceptClass({self.name!r}, concepts={len(self)}, domain_size={self.domain_size})"

    @property
    def domain_size(self) -> int:
        return self.matrix.shape[1]

    def label(self, concept: int, x: int) -> int:
        """Concept ``concept``'s label (0 or 1) of point ``x``."""
        return int(self.matrix[concept, x])

    def mistakes(self, dataset: Sequence[Record]) -> np.ndarray:
        """Number of records of ``dataset`` each concept mislabels (int array, one per concept)."""
        counts = np.zeros(len(self), dtype=np.int64)
        for x, y in dataset:
            counts += self.matrix[:, x] != bool(y)
        return counts

    def mistake_matrix(self) -> np.ndarray:
        """``(records, concepts)`` float matrix: 1.0 where the concept mislabels the record, records in
        :func:`labeled_records` order — ``counts @ mistake_matrix()`` is the mistake count of every
        concept on every count vector."""
        universe = labeled_records(self.domain_size)
        x_of = np.array([x for x, _ in universe])
        y_of = np.array([y for _, y in universe], dtype=bool)
        return (self.matrix[:, x_of] != y_of[None, :]).T.astype(float)

    def consistent(self, dataset: Sequence[Record]) -> np.ndarray:
        """Indices (class order) of the concepts that label every record of ``dataset`` correctly."""
        return np.flatnonzero(self.mistakes(dataset) == 0)

    def labelings(
        self, points: Iterable[int], *, representative: RepresentativeRule = "first"
    ) -> dict[tuple[int, ...], int]:
        """``Pi_C(T_X)``: each labeling of the distinct ``points`` realised by the class.

        Args:
            points: the points ``T_X`` (repeats allowed; the labeling is over the sorted distinct
                points).
            representative: ``"first"`` (lowest index in class order, the default), ``"last"``,
                or a callable ``rule(concept_class, labeling, candidates) -> index``.

        Returns:
            A dict ``labeling -> representative concept index``, in order of first appearance in
            class order. A labeling is a tuple of 0/1 over ``sorted(set(points))``.
        """
        distinct = tuple(sorted(set(points)))
        key = (distinct, representative if isinstance(representative, str) else id(representative))
        cached = self._row_index.get(key)
        if cached is not None:
            return dict(cached)
        columns = self.matrix[:, list(distinct)] if distinct else np.zeros((len(self), 0), bool)
        groups: dict[tuple[int, ...], list[int]] = {}
        for concept, row in enumerate(columns):
            groups.setdefault(tuple(int(v) for v in row), []).append(concept)
        result = {
            labeling: _choose(self, representative, labeling, members)
            for labeling, members in groups.items()
        }
        if isinstance(representative, str):
            self._row_index[key] = dict(result)
        return result


def _choose(
    concept_class: ConceptClass, rule: RepresentativeRule, labeling: tuple, members: list[int]
) -> int:
    if rule == "first":
        return members[0]
    if rule == "last":
        return members[-1]
    if callable(rule):
        chosen = rule(concept_class, labeling, tuple(members))
        if chosen not in members:
            raise InvalidArgument(
                f"representative rule {rule!r} returned {chosen!r}, which is not one of the "
                f"concepts {members} consistent with labeling {labeling}."
            )
        return int(chosen)
    raise InvalidArgument(
        f"representative must be 'first', 'last' or a callable, got representative={rule!r}."
    )


def thresholds(domain_size: int) -> ConceptClass:
    """Thresholds ``c_u(x) = 1 iff x >= u`` for ``u = 0, ..., domain_size``."""
    _check_domain_size(domain_size)
    u = np.arange(domain_size + 1)[:, None]
    x = np.arange(domain_size)[None, :]
    return ConceptClass("thresholds", x >= u)


def intervals(domain_size: int) -> ConceptClass:
    """The empty concept, then ``1[a <= x <= b]`` for ``0 <= a <= b < domain_size``."""
    _check_domain_size(domain_size)
    x = np.arange(domain_size)
    rows = [np.zeros(domain_size, bool)]
    rows += [(a <= x) & (x <= b) for a in range(domain_size) for b in range(a, domain_size)]
    return ConceptClass("intervals", np.array(rows))


def point_functions(domain_size: int) -> ConceptClass:
    """Point functions ``c_j(x) = 1 iff x = j``, ``j = 0, ..., domain_size - 1``."""
    _check_domain_size(domain_size)
    return ConceptClass("point_functions", np.eye(domain_size, dtype=bool))


def all_functions(domain_size: int) -> ConceptClass:
    """All ``2^domain_size`` functions; concept ``i`` labels ``x`` with bit ``x`` of ``i``."""
    _check_domain_size(domain_size)
    if domain_size > 16:
        raise InvalidArgument(
            f"all_functions(domain_size={domain_size}) would have 2^{domain_size} concepts; use "
            "domain_size <= 16."
        )
    i = np.arange(2**domain_size)[:, None]
    x = np.arange(domain_size)[None, :]
    return ConceptClass("all_functions", ((i >> x) & 1).astype(bool))


def unions_of_two_intervals(domain_size: int) -> ConceptClass:
    """Every union of at most two intervals over ``X``, duplicates removed (first appearance)."""
    _check_domain_size(domain_size)
    base = intervals(domain_size).matrix
    rows: list[np.ndarray] = list(base)
    rows += [a | b for a, b in itertools.combinations(base[1:], 2)]
    seen: set[bytes] = set()
    unique = []
    for row in rows:
        key = row.tobytes()
        if key not in seen:
            seen.add(key)
            unique.append(row)
    return ConceptClass("unions_of_two_intervals", np.array(unique))


CONCEPT_CLASSES: dict[str, Callable[[int], ConceptClass]] = {
    "thresholds": thresholds,
    "intervals": intervals,
    "point_functions": point_functions,
    "all_functions": all_functions,
    "unions_of_two_intervals": unions_of_two_intervals,
}


def concept_class(name: str, domain_size: int) -> ConceptClass:
    """Build a named concept class (a key of :data:`CONCEPT_CLASSES`)."""
    try:
        builder = CONCEPT_CLASSES[name]
    except KeyError:
        raise InvalidArgument(
            f"unknown concept class {name!r}; choose one of {sorted(CONCEPT_CLASSES)}."
        ) from None
    return builder(domain_size)


def vc_dimension(concept_class: ConceptClass) -> int:
    """The VC dimension, by brute force over subsets of ``X`` (largest shattered subset size)."""
    matrix = concept_class.matrix
    best = 0
    for size in range(1, concept_class.domain_size + 1):
        shattered_one = False
        for subset in itertools.combinations(range(concept_class.domain_size), size):
            patterns = {row.tobytes() for row in matrix[:, subset]}
            if len(patterns) == 2**size:
                shattered_one = True
                break
        if not shattered_one:
            break
        best = size
    return best


def check_records(records: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """Validate a record universe: non-empty, hashable, no repeats. Returns it as a tuple."""
    universe = tuple(records)
    if not universe:
        raise InvalidArgument(
            "records must be a non-empty record universe, got an empty collection; pass e.g. "
            "labeled_records(domain_size=3)."
        )
    seen: set = set()
    for record in universe:
        try:
            hash(record)
        except TypeError:
            raise InvalidArgument(
                f"record {record!r} is unhashable; use tuples such as (x, y)."
            ) from None
        if record in seen:
            raise InvalidArgument(f"record {record!r} appears twice in records; list each once.")
        seen.add(record)
    return universe
