"""Features of a sampler's outputs: functions of one output whose level sets are new events.

An event of :mod:`dpverify.checking.statistical._events` is an interval on the output (or on one coordinate) or
a set of outcomes. Three kinds of leak are invisible to those and visible to an event
``{f(o) in A}`` on a *feature* ``f`` of the output ``o``:

* **Float structure** (Mironov, "On significance of the least significant bits for differential
  privacy", CCS 2012): ``1.0 + X`` for a double ``X`` is rounded onto the grid of the larger
  operand, so every output is a multiple of ``2^-53``; ``0.0 + X = X`` keeps the finer grid of a
  small ``X``. The event ``{lsb(o) < -53}`` has probability 0 under the first and about 3% under the
  second (``X ~ Laplace(10)``): epsilon is infinite. :class:`LowestBit`, :class:`Exponent` and
  :class:`TrailingZeros` read a double's bits (``o = m * 2^e``) with numpy bit views.
* **Joint events** on vector outputs: :class:`Prefix` (the first ``m`` coordinates, when they are
  integers: SVT's answer vectors), :class:`JointKey` (a low-cardinality coordinate with the bin
  of a continuous one: SVT Alg. 3's (index of the first answer above the threshold, its noisy value)),
  and for an entry value that repeats (a marker: SVT's 1 / 0 / -1) :class:`Tally` (how many entries
  equal it: the number of ``⊤`` answers) and :class:`FirstIndex` (where it first occurs).
* **Likelihood-ratio events** (DP-Sniper, Bichsel et al., IEEE S&P 2021): :class:`Score`, a logistic
  regression of "drawn from ``M(D)``" against "drawn from ``M(D')``" on the standardised
  coordinates and their squares, fitted by Newton's method (IRLS); ``{score(o) > t}`` approximates
  the likelihood-ratio test's rejection region.

Why an event on a feature keeps the bound sound: a feature is a function of the output alone, fixed
before the test half is drawn -- :func:`fixed_features` by construction (it sees only the kind and
the width), :func:`fitted_features` fitted on the selection half only -- so ``{f(o) in A}`` is the
event ``f^-1(A)`` on ``o``, chosen independently of the test half, and the test half's exact
Clopper-Pearson bounds on its two probabilities hold as they do for any other event.

Every feature is a frozen dataclass (picklable, hashable, equal when its parameters are) mapping
:class:`~dpverify.checking.statistical._sampling.Outputs` to derived ``Outputs`` of the same length: kind
``"real"`` (float64 values; the bit features give integers as floats, so threshold events such as
``{lsb(o) <= -54}`` and the engine's outcome events both apply) or ``"discrete"`` (tuples). An
output a feature does not apply to (a label, a vector too short, a prefix that is not integral)
maps to a fixed sentinel: :data:`NOT_APPLICABLE` (real) or :data:`OTHER` (discrete).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from dpverify.checking.statistical._outputs import Outputs, is_number

__all__ = ["Feature", "LowestBit", "Exponent", "TrailingZeros", "Prefix", "JointKey", "Score", "Tally", "FirstIndex",
           "fixed_features", "fitted_features", "ZERO", "INFINITE", "NOT_APPLICABLE", "OTHER"]

#: The bit features' value at ``o = 0`` (no set bit): above every finite one (lsb <= 971,
#: exponent <= 1024, trailing zeros <= 52).
ZERO = 4096.0
#: The bit features' value at ``o = +-inf``.
INFINITE = 8192.0
#: A real feature's value on an output it does not apply to (a label, a vector too short).
NOT_APPLICABLE = 16384.0
#: A discrete feature's value on an output it does not apply to.
OTHER = "n/a"

_FRACTION = np.uint64((1 << 52) - 1)


class Feature(Protocol):
    """A function of one output, applied to many at once (see the module docstring)."""

    @property
    def name(self) -> str:
        """How the feature reads in an event's text, in place of ``o``."""
        ...

    def __call__(self, outputs: Outputs) -> Outputs:
        ...


def _numbers(outputs: Outputs, coordinate: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The output (``coordinate is None``) or its coordinate as float64, and where that exists.

    A discrete half (labels, or batches of mixed kinds) is read item by item with the same rule,
    so the feature stays a function of the output whatever kind its batch was read as.
    """
    values = outputs.values
    if values is not None:
        if coordinate is None and outputs.kind == "real":
            return values, np.ones(values.shape[0], dtype=bool)
        if coordinate is not None and outputs.kind == "vector" and values.shape[1] > coordinate:
            return values[:, coordinate], np.ones(values.shape[0], dtype=bool)
        return np.zeros(values.shape[0]), np.zeros(values.shape[0], dtype=bool)
    items = outputs.items or []
    if coordinate is None:
        picked = [float(item) if is_number(item) else None for item in items]
    else:
        picked = [float(item[coordinate]) if isinstance(item, tuple) and len(item) > coordinate
                  and all(is_number(x) for x in item) else None for item in items]
    applies = np.array([p is not None for p in picked], dtype=bool)
    return np.array([0.0 if p is None else p for p in picked], dtype=np.float64), applies


def _bit_feature(outputs: Outputs, coordinate: int | None, which: str) -> Outputs:
    """``which`` ("lsb", "exponent", "zeros") of each number, read from its bits: a finite double
    is ``significand * 2^exponent`` with a 53-bit integer significand (hidden bit set when the
    biased exponent ``E > 0``; subnormals ``E = 0`` have exponent -1074, like ``E = 1``)."""
    numbers, applies = _numbers(outputs, coordinate)
    numbers = np.ascontiguousarray(numbers, dtype=np.float64)
    bits = numbers.view(np.uint64)
    biased = (bits >> np.uint64(52)) & np.uint64(0x7FF)
    if which == "exponent":
        found = np.frexp(numbers)[1].astype(np.float64)
    else:
        significand = (bits & _FRACTION) | ((biased > 0).astype(np.uint64) << np.uint64(52))
        lowest = significand & (np.uint64(0) - significand)  # its lowest set bit, a power of two <= 2^52
        # log2 of a power of two: the biased exponent of its (exact) double, less 1023
        zeros = (lowest.astype(np.float64).view(np.uint64) >> np.uint64(52)).astype(np.int64) - 1023
        found = (zeros if which == "zeros" else zeros + np.maximum(biased.astype(np.int64), 1) - 1075).astype(np.float64)
    found[numbers == 0] = ZERO  # no set bit
    found[biased == 0x7FF] = INFINITE  # and nan, found only in a discrete half's items
    if not applies.all():
        found[~applies] = NOT_APPLICABLE
    return Outputs("real", values=found)


def _of(coordinate: int | None) -> str:
    return "o" if coordinate is None else f"o[{coordinate}]"


@dataclass(frozen=True)
class LowestBit:
    """``e`` with ``o = m * 2^e``, ``m`` odd: the exponent of the lowest set bit of ``o`` (or of
    ``o[coordinate]``). ``lsb(0.75) = -2`` (``3 * 2^-2``); ``lsb(2^-1074) = -1074``."""

    coordinate: int | None = None
    #: it reads the double's representation, not its value: its events are float-structure events
    reads_bits: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return f"lsb({_of(self.coordinate)})"

    def __call__(self, outputs: Outputs) -> Outputs:
        return _bit_feature(outputs, self.coordinate, "lsb")


@dataclass(frozen=True)
class Exponent:
    """The binade: ``e`` with ``o = f * 2^e``, ``0.5 <= |f| < 1`` (``math.frexp``)."""

    coordinate: int | None = None

    @property
    def name(self) -> str:
        return f"exponent({_of(self.coordinate)})"

    def __call__(self, outputs: Outputs) -> Outputs:
        return _bit_feature(outputs, self.coordinate, "exponent")


@dataclass(frozen=True)
class TrailingZeros:
    """The trailing zero bits of the 53-bit significand (``lsb = exponent - 53 + zeros``)."""

    coordinate: int | None = None
    reads_bits: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return f"trailing_zeros({_of(self.coordinate)})"

    def __call__(self, outputs: Outputs) -> Outputs:
        return _bit_feature(outputs, self.coordinate, "zeros")


def _as_tuples(columns: np.ndarray) -> list[tuple]:
    """Each output as the tuple of its integer coordinates (``columns``: int64, ``(m, count)``),
    as Python ints; the distinct tuples are built once and shared."""
    if columns.shape[1] == 0:
        return []
    low, high = columns.min(axis=1), columns.max(axis=1)
    spans = high - low + 1
    if float(np.prod(spans.astype(np.float64))) <= 1 << 20:  # few combinations: a code per output
        strides = np.concatenate(([1], np.cumprod(spans[:-1]))).astype(np.int64)
        codes = np.zeros(columns.shape[1], dtype=np.int64)
        for column, start, stride in zip(columns, low.tolist(), strides.tolist()):
            codes += (column - start) * stride
        present = np.flatnonzero(np.bincount(codes))
        lookup = np.zeros(int(present[-1]) + 1, dtype=np.int64)
        lookup[present] = np.arange(present.size)
        inverse = lookup[codes]
        distinct = (present[:, None] // strides % spans + low).tolist()
    else:
        distinct_rows, inverse = np.unique(columns.T, axis=0, return_inverse=True)
        distinct, inverse = distinct_rows.tolist(), inverse.reshape(-1)
    table = np.empty(len(distinct), dtype=object)
    table[:] = [tuple(row) for row in distinct]
    return table[inverse].tolist()


def _integers(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``columns`` (``(m, count)`` floats) as int64, and which outputs have only integer entries
    of magnitude at most :data:`_INTEGRAL`."""
    within = np.abs(columns) <= _INTEGRAL
    integers = np.where(within, columns, 0.0).astype(np.int64)
    return integers, ((integers == columns) & within).all(axis=0)


def _keys(columns: np.ndarray, applies: np.ndarray) -> list:
    """The tuple of each output's integer ``columns`` where ``applies``, else :data:`OTHER`."""
    if applies.all():
        return _as_tuples(columns)
    items: list = [OTHER] * columns.shape[1]
    where = np.flatnonzero(applies)
    for index, key in zip(where.tolist(), _as_tuples(columns[:, where])):
        items[index] = key
    return items


#: Integers up to this magnitude are exact in a double and in the int64 codes of :func:`_as_tuples`.
_INTEGRAL = float(1 << 40)


@dataclass(frozen=True)
class Prefix:
    """The first ``length`` coordinates ``o[:length]`` as a tuple of ints, for vector outputs of
    at least that width whose first ``length`` coordinates are integers (of magnitude at most
    2^40); :data:`OTHER` for any other output. Labels in a tuple output are kept as they are."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 1:
            raise AssertionError(f"a prefix has at least one coordinate, got length={self.length}")

    @property
    def name(self) -> str:
        return f"o[:{self.length}]"

    def _item(self, item: object) -> object:
        if not isinstance(item, tuple) or len(item) < self.length:
            return OTHER
        head = item[: self.length]
        if any(is_number(x) and not (float(x).is_integer() and abs(float(x)) <= _INTEGRAL) for x in head):
            return OTHER
        return tuple(int(x) if is_number(x) else x for x in head)

    def __call__(self, outputs: Outputs) -> Outputs:
        values = outputs.values
        if values is None:
            return Outputs("discrete", items=[self._item(item) for item in outputs.items or []])
        if outputs.kind != "vector" or values.shape[1] < self.length:
            return Outputs("discrete", items=[OTHER] * values.shape[0])
        integers, integral = _integers(np.ascontiguousarray(values[:, : self.length].T))
        return Outputs("discrete", items=_keys(integers, integral))


@dataclass(frozen=True)
class JointKey:
    """``(o[discrete], bin of o[continuous])`` for vector outputs: bin ``k`` is
    ``edges[k-1] < o[continuous] <= edges[k]`` (bin 0 below ``edges[0]``, bin ``len(edges)`` above the
    last); an integral ``o[discrete]`` reads as an int. :data:`OTHER` for other outputs."""

    discrete: int
    continuous: int
    edges: tuple[float, ...]

    @property
    def name(self) -> str:
        return f"(o[{self.discrete}], bin(o[{self.continuous}]))"

    def bin_bounds(self, index: int) -> tuple[float, float]:
        """Bin ``index`` as ``(low, high]`` (``-inf`` / ``inf`` at the ends)."""
        bounds = (-np.inf, *self.edges, np.inf)
        return float(bounds[index]), float(bounds[index + 1])

    def describe(self, key: object) -> str:
        """One key as the outputs it stands for: ``o[0] = 3 and 0.5 < o[1] <= 2.25``."""
        if not isinstance(key, tuple) or len(key) != 2:
            return f"(o[{self.discrete}], o[{self.continuous}]) of another form"
        value, index = key
        low, high = self.bin_bounds(int(index))
        name = f"o[{self.continuous}]"
        if low == -np.inf:
            interval = f"{name} <= {high!r}"
        elif high == np.inf:
            interval = f"{name} > {low!r}"
        else:
            interval = f"{low!r} < {name} <= {high!r}"
        return f"o[{self.discrete}] = {value!r} and {interval}"

    def __call__(self, outputs: Outputs) -> Outputs:
        keys, applies = _numbers(outputs, self.discrete)
        column, both = _numbers(outputs, self.continuous)
        applies &= both & ~np.isnan(keys) & ~np.isnan(column)  # nan: only in a discrete half's items
        bins = np.searchsorted(np.asarray(self.edges, dtype=np.float64), column, side="left")
        integers, integral = _integers(keys[None, :])
        if integral[applies].all():
            return Outputs("discrete", items=_keys(np.stack([integers[0], bins]), applies))
        distinct, inverse = np.unique(keys, return_inverse=True)  # some key is not an integer
        shown = [int(v) if v.is_integer() and abs(v) <= _INTEGRAL else v for v in distinct.tolist()]
        codes = inverse.reshape(-1) * (len(self.edges) + 1) + bins
        present, where = np.unique(codes, return_inverse=True)
        table = np.empty(present.size + 1, dtype=object)
        table[:-1] = [(shown[c // (len(self.edges) + 1)], c % (len(self.edges) + 1)) for c in present.tolist()]
        table[-1] = OTHER
        return Outputs("discrete", items=table[np.where(applies, where.reshape(-1), present.size)].tolist())


@dataclass(frozen=True)
class Tally:
    """How many coordinates of a vector output of width ``width`` equal ``value`` (SVT's number of
    ``⊤`` answers, of ``⊥`` answers, of aborted queries); :data:`NOT_APPLICABLE` for other outputs."""

    value: float
    width: int

    @property
    def name(self) -> str:
        return f"count(o[i] == {_shown_value(self.value)})"

    def __call__(self, outputs: Outputs) -> Outputs:
        rows, applies = _score_rows(outputs, self.width)
        found = (rows == self.value).sum(axis=1).astype(np.float64)
        return Outputs("real", values=np.where(applies, found, NOT_APPLICABLE))


@dataclass(frozen=True)
class FirstIndex:
    """The first ``i`` with ``o[i] == value`` in a vector output of width ``width`` (SVT's position of
    the first ``⊤``), ``width`` when there is none; :data:`NOT_APPLICABLE` for other outputs."""

    value: float
    width: int

    @property
    def name(self) -> str:
        return f"first(i: o[i] == {_shown_value(self.value)})"

    def __call__(self, outputs: Outputs) -> Outputs:
        rows, applies = _score_rows(outputs, self.width)
        equal = rows == self.value
        found = np.where(equal.any(axis=1), equal.argmax(axis=1), self.width).astype(np.float64)
        return Outputs("real", values=np.where(applies, found, NOT_APPLICABLE))


def _shown_value(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


#: An entry value of vector outputs gets a :class:`Tally` and a :class:`FirstIndex` when it makes up
#: at least this share of the entries (SVT's markers) -- at most :data:`_MARKERS` of them, the commonest.
_MARKER_SHARE = 0.01
_MARKERS = 4


def _markers(head: np.ndarray) -> list[Feature]:
    """:class:`Tally` and :class:`FirstIndex` features for the entry values that repeat in ``head``."""
    values, counts = np.unique(head[np.isfinite(head)], return_counts=True)
    common = values[counts >= _MARKER_SHARE * head.size]
    common = common[np.argsort(-counts[counts >= _MARKER_SHARE * head.size], kind="stable")][:_MARKERS]
    width = head.shape[1]
    return [feature for value in sorted(common.tolist()) for feature in (Tally(value, width), FirstIndex(value, width))]


def _score_rows(outputs: Outputs, width: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``width`` coordinates (``None``: real outputs, one column) and where they exist."""
    if width is None:
        numbers, applies = _numbers(outputs, None)
        return numbers[:, None], applies
    values = outputs.values
    if values is not None:
        if outputs.kind == "vector" and values.shape[1] == width:
            return values, np.ones(values.shape[0], dtype=bool)
        return np.zeros((values.shape[0], width)), np.zeros(values.shape[0], dtype=bool)
    items = outputs.items or []
    good = [isinstance(i, tuple) and len(i) == width and all(is_number(x) for x in i) for i in items]
    rows = np.array([[float(x) for x in i] if g else [0.0] * width for i, g in zip(items, good)], dtype=np.float64)
    return rows.reshape(len(items), width), np.array(good, dtype=bool)


#: Standardised coordinates are clipped to this many standard deviations, in the fit and in the
#: score alike: an infinite output gets a finite score, and a sentinel (SVT3's ``-inf``) or a far
#: outlier does not dominate the fit (tails beyond it keep their interval events on ``o``).
_CLIP = 20.0


@dataclass(frozen=True)
class Score:
    """A fitted log-likelihood-ratio estimate ``sum_i w_i z_i + sum_i v_i z_i^2`` with
    ``z = (o - center) / scale`` clipped to +-20 (``linear = w``, ``squares = v``, empty when not fitted);
    ``width`` is ``None`` for real outputs. Larger scores: likelier under the pair's first dataset."""

    center: tuple[float, ...]
    scale: tuple[float, ...]
    linear: tuple[float, ...]
    squares: tuple[float, ...]
    width: int | None

    @property
    def name(self) -> str:
        return "score(o)"

    def __call__(self, outputs: Outputs) -> Outputs:
        rows, applies = _score_rows(outputs, self.width)
        applies &= ~np.isnan(rows).any(axis=1)  # nan: only in a discrete half's items
        z = np.clip((rows - np.asarray(self.center)) / np.asarray(self.scale), -_CLIP, _CLIP)
        score = z @ np.asarray(self.linear)
        if self.squares:
            score = score + (z * z) @ np.asarray(self.squares)
        return Outputs("real", values=np.where(applies, score, NOT_APPLICABLE))


#: Coordinates of a vector that get the three bit features (the first ones), and longest prefix.
_MAX_COORDINATES = 16
_MAX_PREFIX = 32


def reads_bits(feature: object) -> bool:
    """Whether ``feature`` reads a double's representation rather than its value (its events are
    float-structure events: :class:`LowestBit`, :class:`TrailingZeros`; the binade is a value)."""
    return bool(getattr(feature, "reads_bits", False))


def fixed_features(kind: str, width: int | None) -> tuple[Feature, ...]:
    """The data-independent features for outputs of ``kind`` (not the identity: the engine already
    has events on ``o`` itself).

    Args:
        kind: ``"real"``, ``"vector"`` or ``"discrete"`` (as :class:`Outputs` reads them).
        width: a vector's width ``d`` (required for ``"vector"``); for ``"discrete"``, the length
            of its tuple outputs when they have one, else None.

    Returns:
        ``"real"``: lsb and trailing zeros of ``o`` (not the binade: :class:`Exponent` is a function
        of ``|o|``'s magnitude, whose unions of binades are value events the intervals nearly give,
        and which, ranked among thousands, won selection by chance). ``"vector"``: the same on each of the
        first 16 coordinates, then the prefixes ``o[:m]``, ``m = 1 .. d-1`` (at most 32; they map
        non-integral prefixes to :data:`OTHER`, so continuous vectors pay one outcome). ``"discrete"``
        with a width: the prefixes; else none.
    """
    if kind == "real":
        return (LowestBit(), TrailingZeros())
    if kind == "vector":
        if width is None or width < 1:
            raise AssertionError(f"vector outputs need their width d >= 1, got width={width!r}")
        coordinates = range(min(width, _MAX_COORDINATES))
        bits: list[Feature] = [LowestBit(i) for i in coordinates]
        bits += [TrailingZeros(i) for i in coordinates]
        return (*bits, *(Prefix(m) for m in range(1, min(width, _MAX_PREFIX + 1))))
    if kind == "discrete":
        return tuple(Prefix(m) for m in range(1, min(width, _MAX_PREFIX + 1))) if width else ()
    raise AssertionError(f"outputs are 'real', 'vector' or 'discrete', got kind={kind!r}")


#: Draws of each dataset the score and the joint keys' choice of coordinates look at (the first).
_FIT_ROWS = 25_000
#: Widths up to which the score has square terms, and past which it is not fitted.
_SQUARES_WIDTH = 8
_SCORE_WIDTH = 32
#: Ridge penalty (on the summed log-likelihood) and Newton steps of the score's fit.
_RIDGE = 1.0
_NEWTON_STEPS = 30
#: A coordinate is low-cardinality with at most this many distinct values among the first
#: :data:`_CARDINALITY_ROWS` draws of each dataset, continuous with more than :data:`_CONTINUOUS`;
#: at most :data:`_JOINT` joint keys.
_CARDINALITY_ROWS = 2_000
_LOW_CARDINALITY = 32
_CONTINUOUS = 64
_JOINT = 4
#: Quantile levels of the pooled draws that are a joint key's bin edges (those with at least
#: four draws beyond them).
_BIN_LEVELS = np.array([1e-5, 1e-4, 1e-3, 0.01, 0.05, *(i / 10 for i in range(1, 10)), 0.95, 0.99, 0.999,
                        0.9999, 0.99999])


def _fit_score(first: np.ndarray, second: np.ndarray, width: int | None) -> Score | None:
    """Logistic regression of label 1 (``first``'s rows) against 0 (``second``'s) on the
    standardised coordinates (and their squares up to width 8), by ridge-penalised Newton steps."""
    pooled = np.concatenate([first, second])
    finite = np.isfinite(pooled)  # an infinite sentinel (SVT3's (k, -inf)) would swamp the moments
    count = np.maximum(finite.sum(axis=0), 1)
    center = np.where(finite, pooled, 0.0).sum(axis=0) / count
    scale = np.sqrt(np.where(finite, (pooled - center) ** 2, 0.0).sum(axis=0) / count)
    scale = np.where(scale > 0, scale, 1.0)
    z = np.clip((pooled - center) / scale, -_CLIP, _CLIP)
    squares = z.shape[1] <= _SQUARES_WIDTH
    design = np.hstack([np.ones((z.shape[0], 1)), z, z * z] if squares else [np.ones((z.shape[0], 1)), z])
    label = np.concatenate([np.ones(first.shape[0]), np.zeros(second.shape[0])])
    penalty = np.full(design.shape[1], _RIDGE)
    weights = np.zeros(design.shape[1])
    for _ in range(_NEWTON_STEPS):
        probability = 0.5 * (1.0 + np.tanh(0.5 * (design @ weights)))  # the logistic function, no overflow
        gradient = design.T @ (label - probability) - penalty * weights
        weighted = design * np.sqrt(probability * (1.0 - probability))[:, None]
        hessian = weighted.T @ weighted + np.diag(penalty)  # a symmetric product (BLAS syrk)
        step = np.linalg.solve(hessian, gradient)
        largest = float(np.max(np.abs(step)))
        weights = weights + (step if largest <= 4.0 else step * (4.0 / largest))  # damped far from the optimum
        if largest < 1e-7:
            break
    if not np.isfinite(weights).all():
        return None  # no score is sound too (it would only have added events)
    d = z.shape[1]
    return Score(tuple(center.tolist()), tuple(scale.tolist()), tuple(weights[1 : d + 1].tolist()),
                 tuple(weights[d + 1 :].tolist()) if squares else (), width)


def _joint_keys(first: np.ndarray, second: np.ndarray, head: np.ndarray) -> list[JointKey]:
    """A key per (low-cardinality coordinate, continuous coordinate), bins at pooled quantiles."""
    distinct = [np.unique(head[:, i]).size for i in range(head.shape[1])]
    low = [i for i, count in enumerate(distinct) if count <= _LOW_CARDINALITY]
    continuous = [j for j, count in enumerate(distinct) if count > _CONTINUOUS]
    keys = []
    for i, j in [(i, j) for i in low for j in continuous][:_JOINT]:
        column = np.concatenate([first[:, j], second[:, j]])
        column = column[np.isfinite(column)]
        levels = _BIN_LEVELS[(_BIN_LEVELS * column.size >= 4) & ((1 - _BIN_LEVELS) * column.size >= 4)]
        if column.size == 0 or levels.size == 0:
            continue
        edges = np.unique(np.quantile(column, levels))
        keys.append(JointKey(i, j, tuple(edges.tolist())))
    return keys


def fitted_features(first: Outputs, second: Outputs) -> tuple[Feature, ...]:
    """Features fitted on the SELECTION draws of one pair (``first`` from ``M(D)``, ``second`` from
    ``M(D')``); never on test draws (see the module docstring).

    Returns:
        For real outputs and vectors of width at most 32: a :class:`Score` (larger: likelier under
        ``first``), fitted on the first 25,000 draws of each. For vectors, one :class:`JointKey` per
        (coordinate with at most 32 distinct values, coordinate with more than 64) among the first
        2,000 draws of each, at most 4, bin edges at quantiles of all the draws of both; and for each
        entry value making up at least 1% of those draws' entries (markers such as SVT's 1 / 0 / -1,
        the 4 commonest), a :class:`Tally` and a :class:`FirstIndex`. Empty for discrete outputs, for
        kinds or widths that differ, or for an empty half.
    """
    if first.values is None or second.values is None or first.kind != second.kind or not len(first) or not len(second):
        return ()
    a, b = first.values, second.values
    if first.kind == "real":
        a, b, width = a[:, None], b[:, None], None
    elif a.shape[1] != b.shape[1]:
        return ()
    else:
        width = a.shape[1]
    head_a, head_b = a[:_FIT_ROWS], b[:_FIT_ROWS]
    found: list[Feature] = []
    if a.shape[1] <= _SCORE_WIDTH:
        score = _fit_score(head_a, head_b, width)
        if score is not None:
            found.append(score)
    if width is not None and width >= 2:
        head = np.concatenate([a[:_CARDINALITY_ROWS], b[:_CARDINALITY_ROWS]])
        found.extend(_joint_keys(a, b, head))
        found.extend(_markers(head))
    return tuple(found)


def fitted_features_apply(kind: str) -> bool:
    """Whether :func:`fitted_features` may fit anything on outputs of ``kind`` (the engine keeps a
    sample of the selection draws for it only then): vectors. On one real number a score is a
    monotone or quadratic function of it, whose events the intervals on the number already are or
    nearly are; its narrow bands, scored among thousands, won selection by chance and took tests from
    better events (noisy max value at 2M draws: a bound of 1.55 with them, 1.71 without)."""
    return kind == "vector"
