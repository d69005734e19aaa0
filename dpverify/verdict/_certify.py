"""Certified comparison of one neighbouring pair with an (epsilon, delta) claim.

The float64 search in :mod:`dpverify.checking.checker` finds the pairs whose privacy loss is near the claim;
this module decides them soundly. Every probability is turned into an mpmath interval that
contains its exact value:

* ``int``, ``Fraction``, sympy rationals and floats are exact (a float *is* a binary rational);
* other sympy numbers (``exp(-1/2)/(1 + exp(-1/2))``) are evaluated by sympy's adaptive ``evalf``
  to ``digits`` significant digits and widened by ``10**(5 - digits)`` relative;
* mpmath intervals are taken as they are.

The directed hockey-stick value ``sum_o max(0, P(o) - e^eps Q(o))`` is then enclosed in an
interval; precision grows (128 -> 1024 bits) until the interval lies on one side of ``delta``. A
term whose interval still straddles 0 at the top precision is proved to be exactly 0 with sympy
(``P(o) = e^eps Q(o)``, e.g. randomized response at exactly its epsilon); when every remaining
term is proved positive but their sum still straddles ``delta``, sympy proves the sum equals
``delta`` exactly (a tight delta, e.g. ``P(S) = 1/10``, ``Q(S) = 0`` at ``delta = 1/10``).
Otherwise the pair is *undecided*, which the checker reports as not holding (it never says
"private" without proof). Ties between rationals at a rational ``e^eps`` (``sympy.log(3)``) are
proved in Fraction arithmetic, without sympy.

The engine's helpers live here too: :func:`walk_candidates` certifies a sweep's candidates once per
distinct pair of rows (:class:`RowClasses` interns rows by exact content and error), and
:func:`exact_hockey_stick` / :func:`exact_log_ratio` give the exact figures of exact rows
(:mod:`dpverify.verdict.engine`, "Exact figures").
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from dpverify.validation import claim_number

if TYPE_CHECKING:
    import sympy

# mpmath is imported by the functions that compute with it, sympy only where an exact tie must be
# proved; a sympy (or mpmath) value can only exist once its library is imported, so sys.modules
# recognises one without importing the library (``import dpverify`` stays cheap).

__all__ = [
    "PairCertificate", "certify_pair", "to_interval", "effective_claim", "surely_within_rounding",
    "RowClasses", "Walk", "walk_candidates", "exact_hockey_stick", "exact_log_ratio", "is_zero",
]

_PRECISIONS = (128, 256, 512, 1024)


def _digits(bits: int) -> int:
    """The decimal digits an exact value is rounded to (:func:`to_interval`) at ``bits`` of precision."""
    return int(bits * 0.30103) - 2


@contextmanager
def _precision_ladder() -> Iterator[Iterator[int]]:
    """The precision ladder of every enclosure here: ``with _precision_ladder() as ladder: for digits
    in ladder: ...`` sets ``mpmath.iv.prec`` to each of :data:`_PRECISIONS` in turn (``digits``:
    :func:`_digits` of it) and puts the caller's precision back however the block ends."""
    import mpmath

    old_precision = mpmath.iv.prec

    def steps() -> Iterator[int]:
        for bits in _PRECISIONS:
            mpmath.iv.prec = bits
            yield _digits(bits)

    try:
        yield steps()
    finally:
        mpmath.iv.prec = old_precision


def effective_claim(value: Any) -> Any:
    """The exact value a claimed epsilon or delta is checked at (:func:`dpverify.validation.claim_number`).

    Exact claims (int, Fraction, sympy) are taken as they are (rationals as Fractions). A float is
    read by the one policy of :mod:`dpverify.validation` (the simplest fraction that rounds to it:
    ``0.1`` is 1/10) and stands for that value up to its own rounding: it is widened by a relative
    ``2**-50``, so ``epsilon=math.log(3)`` stands for ln 3 whichever way the float was rounded.
    """
    return claim_number("claim", value)


def to_interval(value: Any, digits: int):
    """An mpmath interval (in the current ``mpmath.iv`` precision) containing ``value``."""
    import mpmath

    iv = mpmath.iv
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return iv.mpf(value)
    if isinstance(value, float):
        return iv.mpf(value)
    if isinstance(value, Fraction):
        return iv.mpf(value.numerator) / iv.mpf(value.denominator)
    if isinstance(value, mpmath.mpf):
        return iv.mpf(value)
    if _is_sympy(value):
        if value.is_Rational:
            return iv.mpf(int(value.p)) / iv.mpf(int(value.q))
        centre = iv.mpf(_decimal(value, digits))
        radius = abs(centre) * iv.mpf(10) ** (5 - digits) + iv.mpf(10) ** (-3 * digits)
        return iv.mpf([(centre - radius).a, (centre + radius).b])
    if hasattr(value, "a") and hasattr(value, "b"):  # already an interval
        return value
    return iv.mpf(float(value))


@functools.lru_cache(maxsize=8192)
def _decimal(value: Any, digits: int) -> str:
    """``sympy.N(value, digits)`` as a string, kept per (value, digits): the same exact row is read
    by several pairs and both figures (C15's exact rows: 1,152 readings of 98 distinct values)."""
    import sympy  # already imported: value is a sympy number

    return str(sympy.N(value, digits))


def _is_sympy(value: Any) -> bool:
    """``isinstance(value, sympy.Basic)`` without importing sympy."""
    sympy = sys.modules.get("sympy")
    return sympy is not None and isinstance(value, sympy.Basic)


def _to_sympy(value: Any) -> sympy.Expr:
    import sympy

    if isinstance(value, float):
        return sympy.Rational(Fraction(value).numerator, Fraction(value).denominator)
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return sympy.sympify(value)


def _sum_is_exactly_delta(
    p: Mapping, q: Mapping, outcomes: list, epsilon: Any, delta: Any
) -> bool:
    rational = _rational_exp(epsilon), _as_fraction(delta)
    if rational[0] is not None and rational[1] is not None:
        values = [(_as_fraction(p[o]), _as_fraction(q.get(o, 0))) for o in outcomes]
        if all(a is not None and b is not None for a, b in values):
            return sum((a - rational[0] * b for a, b in values), Fraction(0)) == rational[1]  # type: ignore[operator]
    import sympy

    try:
        factor = sympy.exp(_to_sympy(epsilon))
        terms = [_to_sympy(p[o]) - factor * _to_sympy(q.get(o, 0)) for o in outcomes]
        return bool(sympy.simplify(sympy.Add(*terms) - _to_sympy(delta)) == 0)
    except (TypeError, ValueError, sympy.SympifyError):
        return False


def _surely_nonnegative(value: Any) -> bool:
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
        return value >= 0
    return getattr(value, "is_nonnegative", None) is True  # a sympy number, decided symbolically


def _surely_at_most(p: Any, q: Any) -> bool:
    """``p <= q`` proved cheaply: two rationals (int, Fraction or float: Python compares them
    exactly), two equal sympy values (sympy's ``==`` is structural: equal means equal), or two
    intervals with ``p``'s upper end at most ``q``'s lower end. False otherwise, which proves nothing
    (the intervals then decide). Two *equal intervals* prove nothing: mpmath's ``==`` says
    ``[0.4, 0.6] == [0.4, 0.6]``, but the values they enclose may be 0.6 and 0.4."""
    if _is_sympy(p) and _is_sympy(q) and p == q:
        return True
    if _is_interval(p) or _is_interval(q):
        p_high, q_low = (p.b if _is_interval(p) else p), (q.a if _is_interval(q) else q)
        try:
            return bool(p_high <= q_low)
        except TypeError:
            return False
    rational = (int, float, Fraction)
    if isinstance(p, bool) or isinstance(q, bool) or not (isinstance(p, rational) and isinstance(q, rational)):
        return False
    return p <= q


def _is_interval(value: Any) -> bool:
    """An mpmath interval (``mpmath.iv.mpf``, ends ``.a`` and ``.b``), without importing mpmath."""
    ctx_iv = sys.modules.get("mpmath.ctx_iv")
    return ctx_iv is not None and isinstance(value, ctx_iv.ivmpf)


def _is_exactly_zero(p: Any, q: Any, epsilon: Any) -> bool:
    factor, a, b = _rational_exp(epsilon), _as_fraction(p), _as_fraction(q)
    if factor is not None and a is not None and b is not None:
        return a == factor * b  # rationals: decided in Fraction arithmetic, no sympy
    import sympy

    try:
        expr = _to_sympy(p) - sympy.exp(_to_sympy(epsilon)) * _to_sympy(q)
        return bool(sympy.simplify(expr) == 0)
    except (TypeError, ValueError, sympy.SympifyError):
        return False


@dataclass(frozen=True)
class PairCertificate:
    """The certified verdict on one ordered pair ``(P, Q)``.

    Attributes:
        holds: True when ``P(S) <= e^eps Q(S) + delta`` for every S is proved (for float inputs:
            proved even if every probability is off by its allowed relative error, or
            ``within_rounding``); False when a set S with ``P(S) > e^eps Q(S) + delta`` is proved
            (for float inputs: by more than their rounding allows); None when undecided.
        within_rounding: True when the float inputs cannot decide: their nominal values and the
            values their error model allows fall on both sides of the claim (``holds`` is then
            True: the claim holds within rounding).
        output_set: the witness set ``S`` (outcomes whose term is proved positive; for a pair
            within rounding the outcomes whose term the allowed rounding can make positive).
        p_mass, q_mass: ``P(S)``, ``Q(S)`` (exact where the inputs were exact).
        excess_low: a certified lower bound of ``P(S) - e^eps Q(S) - delta`` (as a float).
    """

    holds: bool | None
    output_set: frozenset
    p_mass: Any
    q_mass: Any
    excess_low: float
    within_rounding: bool = False


def certify_pair(
    p: Mapping[Any, Any],
    q: Mapping[Any, Any],
    epsilon: Any,
    delta: Any,
    *,
    p_error: float = 0.0,
    q_error: float = 0.0,
) -> PairCertificate:
    """Decide the directed claim ``P(S) <= e^eps Q(S) + delta`` for all S, soundly.

    ``p_error`` / ``q_error`` are the relative errors the values of ``P`` / ``Q`` may carry (0 for
    exact values; see :mod:`dpverify.verdict.engine` for the float error model). With errors, the pair is
    decided against every admissible exact distribution: it holds when the largest admissible
    hockey-stick value is at most delta, is violated when the smallest one exceeds delta, and is
    otherwise ``within_rounding``.
    """
    if p_error or q_error:
        return _certify_with_errors(p, q, epsilon, delta, float(p_error), float(q_error))
    return _certify_exact(p, q, epsilon, delta)


def _certify_with_errors(p: Mapping, q: Mapping, epsilon: Any, delta: Any, p_error: float, q_error: float) -> PairCertificate:
    import mpmath

    outcomes = list(p.keys())
    epsilon = effective_claim(epsilon)
    delta = effective_claim(delta)
    with _precision_ladder() as ladder:
        for digits in ladder:
            iv = mpmath.iv
            factor = iv.exp(to_interval(epsilon, digits))
            bound = to_interval(delta, digits)
            rp, rq = iv.mpf(p_error), iv.mpf(q_error)
            upper = iv.mpf(0)  # largest admissible hockey-stick value (upper bound)
            lower = iv.mpf(0)  # smallest admissible hockey-stick value (lower bound)
            lower_hi = iv.mpf(0)  # an upper bound of the smallest admissible value
            violated, nominal, reachable = [], [], []
            for o in outcomes:
                pv, qv = to_interval(p[o], digits), factor * to_interval(q.get(o, 0), digits)
                high = pv * (1 + rp) - qv * (1 - rq)
                low = pv * (1 - rp) - qv * (1 + rq)
                if high.b > 0:
                    upper += iv.mpf(high.b)
                    reachable.append(o)
                if low.a > 0:
                    lower += iv.mpf(low.a)
                    violated.append(o)
                if low.b > 0:
                    lower_hi += iv.mpf(low.b)
                if (pv - qv).a > 0:
                    nominal.append(o)
            if upper.b <= bound.a:
                return PairCertificate(True, frozenset(nominal), *_masses(p, q, nominal), _low(-bound.b))
            if lower.a > bound.b:
                return PairCertificate(False, frozenset(violated), *_masses(p, q, violated), _low(lower.a - bound.b))
            if lower_hi.b <= bound.a:
                # Not violated beyond rounding, and (upper.b > delta) not proved beyond it either. The
                # witness set: the outcomes whose term rounding could make positive (the nominal ones
                # may be none, at an exact tie such as P(o) = e^eps Q(o) in binary).
                return PairCertificate(True, frozenset(reachable), *_masses(p, q, reachable), _low(lower.a - bound.b), True)
        return PairCertificate(None, frozenset(violated), *_masses(p, q, violated), _low(lower.a - bound.b))


def _certify_exact(p: Mapping[Any, Any], q: Mapping[Any, Any], epsilon: Any, delta: Any) -> PairCertificate:
    import mpmath

    epsilon = effective_claim(epsilon)
    delta = effective_claim(delta)
    # An outcome with P(o) <= Q(o) (proved exactly: _surely_at_most) adds nothing at any eps >= 0,
    # since e^eps >= 1: it is dropped before interval arithmetic, which cannot tell P(o) - e^eps Q(o)
    # from 0 when eps is below about 2^-1024 (identical distributions were UNDECIDED at eps = 5.4e-309).
    outcomes = list(p.keys())
    if _surely_nonnegative(epsilon):
        outcomes = [o for o in outcomes if not _surely_at_most(p[o], q.get(o, 0))]
    proved_zero: set[Hashable] = set()
    with _precision_ladder() as ladder:
        for digits in ladder:
            factor = mpmath.iv.exp(to_interval(epsilon, digits))
            bound = to_interval(delta, digits)
            upper = mpmath.iv.mpf(0)
            lower = mpmath.iv.mpf(0)
            positive, straddling = [], []
            for o in outcomes:
                term = to_interval(p[o], digits) - factor * to_interval(q.get(o, 0), digits)
                if term.b <= 0 or o in proved_zero:
                    continue
                upper += mpmath.iv.mpf(term.b)
                if term.a > 0:
                    lower += mpmath.iv.mpf(term.a)
                    positive.append(o)
                else:
                    straddling.append(o)
            if upper.b <= bound.a:
                return PairCertificate(True, frozenset(positive), *_masses(p, q, positive), _low(lower.a - bound.b))
            if lower.a > bound.b:
                return PairCertificate(False, frozenset(positive), *_masses(p, q, positive), _low(lower.a - bound.b))
            if digits == _digits(_PRECISIONS[-1]) or straddling:
                for o in straddling:
                    if o not in proved_zero and _is_exactly_zero(p[o], q.get(o, 0), epsilon):
                        proved_zero.add(o)
        undecided_terms = [o for o in straddling if o not in proved_zero]
        if not undecided_terms and _sum_is_exactly_delta(p, q, positive, epsilon, delta):
            return PairCertificate(True, frozenset(positive), *_masses(p, q, positive), 0.0)
        return PairCertificate(None, frozenset(positive), *_masses(p, q, positive), _low(lower.a - bound.b))


def _masses(p: Mapping, q: Mapping, outcomes: list) -> tuple[Any, Any]:
    """``P(S)`` and ``Q(S)`` summed exactly: a float result only when the exact sum is that float."""
    return _exact_sum([p[o] for o in outcomes]), _exact_sum([q.get(o, 0) for o in outcomes])


def _exact_sum(values: list) -> Any:
    if not values:
        return 0
    if all(isinstance(v, (int, float, Fraction)) and not isinstance(v, bool) for v in values):
        total = sum((Fraction(v) for v in values), Fraction(0))
        if all(isinstance(v, float) for v in values) and Fraction(float(total)) == total:
            return float(total)
        return total if total.denominator != 1 or not all(isinstance(v, int) for v in values) else int(total)
    return sum(values[1:], values[0])


def _low(value: Any) -> float:
    """The lower end of an mpmath interval as a float (an interval difference is rarely a point)."""
    return float(value.a) if hasattr(value, "a") else float(value)


_UNIT = 2.0**-53
_ROWS_AT_ONCE = 1 << 16


def surely_within_rounding(pairs: Any, candidates: Any, errors: np.ndarray, epsilon: Any, delta: Any) -> np.ndarray:
    """Candidates that are certainly HOLDS_WITHIN_ROUNDING, decided in float64 (vectorised).

    Only float rows (error > 0), whose matrix values are exactly the values certified. With
    ``f_lo <= e^eps <= f_hi`` (the effective claim included), the smallest admissible value
    ``L = sum max(0, P(1-rp) - f Q(1+rq))`` is at most its value at ``f_lo`` and the largest
    ``U = sum max(0, P(1+rp) - f Q(1-rq))`` at least its value at ``f_hi``; each float sum is off
    each term is computed within ``4u (P + f Q)`` and the sum of non-negative terms within a relative
    ``K u``; both are added against the claim. A pair whose bounded ``L`` is at most delta (not
    violated beyond rounding) and whose bounded ``U`` exceeds it (not certified to hold) is within
    rounding. Everything else is left to interval certification. Candidates with equal float rows
    (and errors) on both sides are computed once (:func:`_float_row_groups`).
    """
    count = len(candidates)
    quick = np.zeros(count, dtype=bool)
    eps = float(epsilon)
    if count == 0 or not (0.0 <= eps <= 700.0):
        return quick
    first, second = candidates.first, candidates.second
    rp, rq = errors[first], errors[second]
    usable = (rp > 0) & (rq > 0)
    if not usable.any():
        return quick
    factor = math.exp(eps)
    slack = 2.0**-40  # covers the float exp and a float claim's 2**-50 widening (eps <= 700)
    f_lo, f_hi = factor * (1 - slack), factor * (1 + slack)
    bounds = float(delta) if pairs.pair_delta is None else pairs.pair_delta[candidates.pair]
    delta_lo = np.asarray(bounds) * (1 - 2.0**-48)  # a float or a rounded exact delta, delta >= 0
    delta_hi = np.asarray(bounds) * (1 + 2.0**-48)
    sum_error = pairs.matrix.shape[1] * _UNIT * 1.01  # relative, for a sum of non-negative terms
    groups = _float_row_groups(pairs.matrix, errors, first, second) if np.ndim(delta_lo) == 0 else None
    if groups is not None:  # one computation per distinct pair of float rows, the same for each member
        representative, inverse = groups
        first, second, rp, rq, usable = (a[representative] for a in (first, second, rp, rq, usable))
    chosen = np.zeros(first.size, dtype=bool)
    for start in range(0, first.size, _ROWS_AT_ONCE):
        stop = start + _ROWS_AT_ONCE
        p, q = pairs.matrix[first[start:stop]], pairs.matrix[second[start:stop]]
        a, b = rp[start:stop, None], rq[start:stop, None]
        term_error = 4 * _UNIT * (p + f_hi * q) * 1.01  # each term's own float error
        low = np.maximum(p * (1 - a) - f_lo * q * (1 + b) + term_error, 0.0).sum(axis=1) * (1 + sum_error)
        high = np.maximum(p * (1 + a) - f_hi * q * (1 - b) - term_error, 0.0).sum(axis=1) * (1 - sum_error)
        d_lo = delta_lo if np.ndim(delta_lo) == 0 else delta_lo[start:stop]
        d_hi = delta_hi if np.ndim(delta_hi) == 0 else delta_hi[start:stop]
        chosen[start:stop] = usable[start:stop] & (low <= d_lo) & (high > d_hi)
    return chosen if groups is None else chosen[groups[1]]


def _float_row_groups(matrix: np.ndarray, errors: np.ndarray, first: np.ndarray, second: np.ndarray) -> Any:
    """``(representative, inverse)``: the candidates grouped by equal (float row, error) on both sides,
    one representative position per group and each candidate's group; None when grouping would not
    pay (few candidates, many distinct rows or pairs)."""
    rows = matrix.shape[0]
    if first.size < 1 << 12 or rows > 1 << 24:
        return None
    used = np.zeros(rows, dtype=bool)
    used[first] = True
    used[second] = True
    used_rows = np.flatnonzero(used)
    if used_rows.size > 1 << 16:
        return None
    _, classes = np.unique(np.column_stack([matrix[used_rows], errors[used_rows]]), axis=0, return_inverse=True)
    classes = classes.reshape(-1)
    n = int(classes.max()) + 1
    if n * n > 1 << 22:
        return None
    of_row = np.zeros(rows, dtype=np.int64)
    of_row[used_rows] = classes
    key = of_row[first] * n + of_row[second]
    present = np.zeros(n * n, dtype=bool)
    present[key] = True
    keys = np.flatnonzero(present)
    if 4 * keys.size > first.size:
        return None
    group = np.zeros(n * n, dtype=np.int64)
    group[keys] = np.arange(keys.size)
    inverse = group[key]
    representative = np.zeros(keys.size, dtype=np.int64)
    representative[inverse] = np.arange(key.size)  # any member: equal rows compute equal results
    return representative, inverse


# -- exact rationals -----------------------------------------------------------------------------


def _as_fraction(value: Any) -> Fraction | None:
    """``value`` as a Fraction when it is a rational number of a known type (int, Fraction, float,
    a sympy rational), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value) if math.isfinite(value) else None
    if _is_sympy(value) and value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    return None


def _rational_exp(epsilon: Any) -> Fraction | None:
    """``e^epsilon`` as a Fraction when it is rational: ``epsilon = 0``, or a sympy number whose
    exponential sympy evaluates to a rational (``log(3)``, ``log(18/5)``); else None."""
    if isinstance(epsilon, (int, Fraction, float)) and not isinstance(epsilon, bool):
        return Fraction(1) if epsilon == 0 else None
    if _is_sympy(epsilon):
        return _sympy_rational_exp(epsilon)
    return None


_EXP_CACHE: dict[Any, Fraction | None] = {}


def _sympy_rational_exp(epsilon: Any) -> Fraction | None:
    if epsilon not in _EXP_CACHE:
        import sympy

        if len(_EXP_CACHE) > 256:
            _EXP_CACHE.clear()
        _EXP_CACHE[epsilon] = _as_fraction(sympy.exp(epsilon))
    return _EXP_CACHE[epsilon]


def _fraction_of(x: Any) -> Fraction:
    """An interval end (mpmath ``iv``: a point interval) or an mpf as the exact Fraction it is."""
    from mpmath import libmp

    value = x._mpi_[0] if hasattr(x, "_mpi_") else x._mpf_
    if value in (libmp.finf, libmp.fninf, libmp.fnan):
        raise OverflowError("an infinite interval end")
    numerator, denominator = libmp.to_rational(value)
    return Fraction(int(numerator), int(denominator))


# -- exact figures -------------------------------------------------------------------------------

Bounds = tuple[Any, Any]  # (low, high): Fractions (equal when the value is known exactly) or +inf


def exact_hockey_stick(p: Mapping, q: Mapping, epsilon: Any) -> Bounds | None:
    """Bounds of the directed hockey-stick value ``sum_o max(0, P(o) - e^eps Q(o))`` of two exact
    rows at the claim as certification reads it (:func:`effective_claim`): exact (low == high) for
    rationals at a rational ``e^eps``; else an interval enclosure narrow enough to fix its nearest
    float, every tie ``P(o) = e^eps Q(o)`` proved (a value that is exactly 0 is ``(0, 0)``). None
    when that cannot be settled."""
    epsilon = effective_claim(epsilon)
    outcomes = list(p.keys())
    if _surely_nonnegative(epsilon):
        outcomes = [o for o in outcomes if not _surely_at_most(p[o], q.get(o, 0))]
    factor = _rational_exp(epsilon)
    if factor is not None:
        values = [(_as_fraction(p[o]), _as_fraction(q.get(o, 0))) for o in outcomes]
        if all(a is not None and b is not None for a, b in values):
            total = sum((max(Fraction(0), a - factor * b) for a, b in values), Fraction(0))  # type: ignore[operator]
            return total, total
    import mpmath

    proved_zero: set = set()
    tried: set = set()
    try:
        with _precision_ladder() as ladder:
            for digits in ladder:
                scale = mpmath.iv.exp(to_interval(epsilon, digits))
                low, high = Fraction(0), Fraction(0)
                straddling = []
                for o in outcomes:
                    if o in proved_zero:
                        continue
                    term = to_interval(p[o], digits) - scale * to_interval(q.get(o, 0), digits)
                    if term.b <= 0:
                        continue
                    if term.a > 0:
                        low += _fraction_of(term.a)
                        high += _fraction_of(term.b)
                    else:
                        straddling.append(o)
                for o in straddling:
                    if o not in tried:
                        tried.add(o)
                        if _is_exactly_zero(p[o], q.get(o, 0), epsilon):
                            proved_zero.add(o)
                if all(o in proved_zero for o in straddling) and float(low) == float(high):
                    return low, high  # (0, 0) when no term is positive: the value is exactly 0
            return None
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def exact_log_ratio(p: Mapping, q: Mapping) -> Bounds | None:
    """Bounds of the directed pure loss ``max_o ln(P(o)/Q(o))`` over ``P(o) > 0`` of two exact rows
    (``(inf, inf)`` when some ``P(o) > 0 = Q(o)``): exact for a ratio of 1, else an enclosure narrow
    enough to fix the nearest float; None when that cannot be settled."""
    outcomes = [o for o in p if not is_zero(p[o])]
    if not outcomes:
        return None
    if any(is_zero(q.get(o, 0)) for o in outcomes):
        return math.inf, math.inf
    ratios = [(_as_fraction(p[o]), _as_fraction(q[o])) for o in outcomes]
    rational = None
    if all(a is not None and b is not None for a, b in ratios):
        rational = max(a / b for a, b in ratios)  # type: ignore[operator]
        if rational == 1:
            return Fraction(0), Fraction(0)
    import mpmath

    try:
        with _precision_ladder() as ladder:
            for digits in ladder:
                if rational is not None:
                    enclosures = [mpmath.iv.log(mpmath.iv.mpf(rational.numerator) / mpmath.iv.mpf(rational.denominator))]
                else:
                    enclosures = [mpmath.iv.log(to_interval(p[o], digits)) - mpmath.iv.log(to_interval(q[o], digits))
                                  for o in outcomes]
                low = max(_fraction_of(e.a) for e in enclosures)
                high = max(_fraction_of(e.b) for e in enclosures)
                if float(low) == float(high):
                    return low, high
            return None
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def is_zero(value: Any) -> bool:
    """Whether ``value`` (a probability, a claimed delta: any number type) is 0; False where it cannot be compared."""
    try:
        return bool(value == 0)
    except TypeError:
        return False


# -- certifying the candidates of a sweep, grouped by their rows -----------------------------------


def _key(distribution: Mapping) -> Any:
    """A dictionary key for a row's exact content (the mapping itself when hashable)."""
    try:
        hash(distribution)
        return distribution
    except TypeError:
        return tuple(distribution.items())


class RowClasses:
    """Rows interned by their exact content and float error: equal rows share a class id.

    ``exact(row)`` is asked once per row, in the order rows are first met, and only for the rows
    asked for (for a checker run: the exact output kept from the first evaluation, else the mechanism
    run again; equal kept rows are one object, hashed once)."""

    def __init__(self, rows: int, exact: Any, errors: np.ndarray) -> None:
        self._exact, self._errors = exact, errors
        self.ids = np.full(rows, -1, dtype=np.int64)
        self.contents: list[Mapping] = []
        self.errors: list[float] = []
        self.first_rows: list[int] = []  # the row each class was first read from
        self._index: dict[tuple, int] = {}

    def of(self, rows: np.ndarray, budget: int | None = None) -> np.ndarray | None:
        """The class of every row in ``rows``; None (nothing fetched) when more than ``budget``
        distinct rows would have to be fetched."""
        missing = rows[self.ids[rows] < 0]
        if missing.size:
            if budget is not None and missing.size > budget:  # count the distinct rows in one pass
                marked = np.zeros(self.ids.size, dtype=bool)
                marked[missing] = True
                if np.count_nonzero(marked) > budget:
                    return None
            unique, first = np.unique(missing, return_index=True)
            for row in unique[np.argsort(first, kind="stable")].tolist():
                content = self._exact(row)
                error = float(self._errors[row])
                key = (_key(content), error)
                found = self._index.get(key)
                if found is None:
                    found = self._index[key] = len(self.contents)
                    self.contents.append(content)
                    self.errors.append(error)
                    self.first_rows.append(row)
                self.ids[row] = found
        return self.ids[rows]


# The state of a candidate after the walk (int8 codes).
UNTOUCHED, HOLDS, WITHIN, UNDECIDED, VIOLATED = -1, 0, 1, 2, 3


@dataclass
class Walk:
    """The certification of a sweep's candidates (:func:`walk_candidates`).

    Attributes:
        stop: position of the first candidate certified violated (the witness), else the count.
        near: position of the first candidate certified within rounding, else None.
        within, undecided: candidates before ``stop`` within rounding (quick ones included) or
            undecided.
        certificates: every distinct ``(row class, row class, delta)`` certified.
        at: the certificates of ``stop`` and ``near``.
    """

    stop: int
    near: int | None
    within: int
    undecided: int
    certificates: dict
    at: dict


def walk_candidates(
    candidates: Any, quick: np.ndarray, classes: RowClasses, epsilon: Any, delta: Any, pair_delta: Any,
) -> Walk:
    """Certify the candidates as a walk worst first would, one certificate per distinct row pair.

    The walk it reproduces: a candidate ``quick`` (surely within rounding, decided in float) is
    counted within rounding without certification once a candidate has been certified within
    rounding; every other candidate is certified (equal rows and delta: one certificate); the walk
    stops at the first violated one. Candidates are taken in blocks (1, 16, 256, ... of them), their
    rows interned (:class:`RowClasses`) and grouped in numpy, so a million candidates over a handful
    of distinct row pairs cost a handful of certificates and no per-candidate Python.
    """
    count = len(candidates)
    state = np.full(count, UNTOUCHED, dtype=np.int8)
    certificates: dict[tuple, PairCertificate] = {}
    at: dict[int, PairCertificate] = {}

    def block(positions: np.ndarray) -> int | None:
        ci = classes.of(candidates.first[positions])
        cj = classes.of(candidates.second[positions])
        assert ci is not None and cj is not None
        rows = (ci << 32) | cj
        if pair_delta is None:
            bounds = None
            unique, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
        else:
            bounds = np.asarray(pair_delta, dtype=float)[candidates.pair[positions]]
            keys = np.column_stack([rows, bounds.view(np.int64)])
            unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        codes = np.full(len(unique), UNTOUCHED, dtype=np.int8)
        for group in np.argsort(first, kind="stable").tolist():
            k = int(first[group])
            bound = delta if bounds is None else float(bounds[k])
            key = (int(ci[k]), int(cj[k]), bound)
            certificate = certificates.get(key)
            if certificate is None:
                certificate = certify_pair(
                    classes.contents[key[0]], classes.contents[key[1]], epsilon, bound,
                    p_error=classes.errors[key[0]], q_error=classes.errors[key[1]],
                )
                certificates[key] = certificate
            codes[group] = _code(certificate)
            if codes[group] == VIOLATED:
                state[positions[:k]] = codes[inverse[:k]]
                state[positions[k]] = VIOLATED
                at[int(positions[k])] = certificate
                return int(positions[k])
        state[positions] = codes[inverse]
        return None

    def run(positions: np.ndarray) -> int | None:
        done, size = 0, 1
        while done < positions.size:
            found = block(positions[done : done + size])
            if found is not None:
                return found
            done, size = done + size, min(size * 16, 1 << 16)
        return None

    others, quick_at = np.flatnonzero(~quick), np.flatnonzero(quick)
    stop, near, start, k = count, None, 0, 0
    while True:
        limit = int(quick_at[k]) if near is None and k < quick_at.size else count
        lo, hi = np.searchsorted(others, [start, limit])
        segment = others[lo:hi]
        found = run(segment)
        if found is not None:
            stop = found
            break
        if near is None:
            hits = np.flatnonzero(state[segment] == WITHIN)
            near = int(segment[hits[0]]) if hits.size else None
        if limit == count:
            break
        if near is None:  # the walk certifies this quick candidate: nothing within rounding yet
            found = run(np.array([limit], dtype=np.int64))
            if found is not None:
                stop = found
                break
            if state[limit] == WITHIN:
                near = limit
            k, start = k + 1, limit + 1
        else:  # every later quick candidate is counted within rounding uncertified
            start = limit
    head = state[:stop]
    skipped = np.count_nonzero(quick[:stop] & (head == UNTOUCHED))
    hits = np.flatnonzero(head == WITHIN)
    near = int(hits[0]) if hits.size else None
    if near is not None:
        at[near] = _certificate_at(near, candidates, classes, certificates, delta, pair_delta)
    return Walk(
        stop, near, int(np.count_nonzero(head == WITHIN) + skipped), int(np.count_nonzero(head == UNDECIDED)),
        certificates, at,
    )


def _code(certificate: PairCertificate) -> int:
    if certificate.holds is False:
        return VIOLATED
    if certificate.holds is None:
        return UNDECIDED
    return WITHIN if certificate.within_rounding else HOLDS


def _certificate_at(
    position: int, candidates: Any, classes: RowClasses, certificates: dict, delta: Any, pair_delta: Any
) -> PairCertificate:
    i, j = int(candidates.first[position]), int(candidates.second[position])
    bound = delta if pair_delta is None else float(pair_delta[int(candidates.pair[position])])
    return certificates[(int(classes.ids[i]), int(classes.ids[j]), bound)]
