"""The certified supremum of a density ratio ``sup p(x)/q(x)`` (internal to :mod:`dpverify.densities.continuous`).

``p`` and ``q`` are :class:`~dpverify.densities.piecewise.PiecewiseExp` densities; :func:`sup_ratio` returns a
:class:`RatioSup`: a certified enclosure of the essential supremum over ``p > 0``, an exact value when
one is known, and where it is attained (from which :mod:`dpverify.densities.continuous` builds witness sets).
:func:`quick_lower` is a cheap certified lower bound that seeds the pruning of the search.

How ``sup p/q`` is found and certified, piece by piece:

* a piece where ``p = 0`` contributes nothing; where ``q = 0 < p``, the loss is infinite;
* a piece where ``p = A e^(r x)`` and ``q = B e^(r' x)`` (after grouping terms by rate and degree;
  ``A, B`` exact ExpSums) has a log-linear ratio: its supremum is at a piece end (or its analytic
  limit at an infinite end), the exact ratio ``N / D`` of two ExpSums, compared with ``e^eps``
  exactly (:class:`~dpverify.densities.piecewise.ExpSum`);
* a piece where ``p = c q`` exactly (proportional coefficients) has the constant ratio ``c``, exact;
* otherwise the supremum is enclosed by bisection in interval arithmetic (:mod:`dpverify.densities._enclosures`:
  float64 enclosures widened outward by a relative ``2**-44`` at every step, direct and mean-value
  forms of ``p`` and ``q``, all boxes of a round at once); lower bounds are the enclosures of ``p/q``
  at box midpoints. At a finite piece end where ``q`` vanishes to order ``k`` the ratio is enclosed
  by ``p^(k)/q^(k)`` (Taylor with Lagrange remainder); an infinite end is cut at a point beyond which
  the dominant terms bound the ratio analytically (the tails' limits are exact ratios of dominant
  coefficients). The enclosures are tight to a relative ``1e-6``. Nothing is sampled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from dpverify.densities._enclosures import TOLERANCE as _TOLERANCE
from dpverify.densities._enclosures import derivative as _derivative
from dpverify.densities._enclosures import down as _down
from dpverify.densities._enclosures import enclose_points, float_branch_and_bound
from dpverify.densities._enclosures import groups as _groups
from dpverify.densities.piecewise import ExpSum, PiecewiseExp

__all__ = ["BITS", "RatioSup", "sup_ratio", "quick_lower", "combine", "exact_interval", "float_of", "float_up_of"]

#: Working precision (bits) of the mpmath interval computations.
BITS = 80
iv = mpmath.iv


# -- one piece: terms, intervals, derivatives ------------------------------------------------------


def _terms(piece: Mapping) -> list[tuple[Fraction, Fraction, int, Fraction]]:
    return [(r, e, d, a) for (r, e, d), a in piece.items() if a]


def _mirror(terms: list) -> list:
    """Terms of ``x -> f(-x)``."""
    return [(-r, e, d, a * (-1) ** d) for r, e, d, a in terms]


class _Fn:
    """A piece's exact terms ``[(r, e, d, a)]`` standing for ``sum a x^d e^(r x + e)``."""

    def __init__(self, terms: list) -> None:
        self.terms = terms

    def at(self, x: Fraction) -> ExpSum:
        """The exact value at a rational point."""
        out: dict = {}
        for r, e, d, a in self.terms:
            exponent = r * x + e
            out[exponent] = out.get(exponent, 0) + a * x**d
        return ExpSum(out)


def _order(fn: _Fn, x: Fraction, limit: int = 12) -> int | None:
    """The order to which the piece's expression vanishes at ``x`` (exact), None beyond ``limit``."""
    terms = fn.terms
    for k in range(limit + 1):
        if not _Fn(terms).at(x).is_zero():
            return k
        terms = _derivative(terms)
    return None


# -- the supremum --------------------------------------------------------------------------------


@dataclass
class RatioSup:
    """A certified enclosure of ``sup p/q`` (as ratios, not logs) and where it is attained.

    Attributes:
        low, high: ``low <= sup <= high`` (``high`` may be ``inf``; ``low`` is attained or a limit).
        exact: ``(N, D)`` (ExpSums, ``D > 0``) when the supremum is exactly ``N / D``.
        infinite: the ratio is unbounded (``p > 0 = q`` on a set of positive measure, or a pole).
        where: how to build an output set near the supremum: ``("point", x)``, ``("left", x)``
            for ``(-inf, x]``, ``("right", x)``, ``("interval", a, b)`` or None.
    """

    low: float
    high: float
    exact: tuple[ExpSum, ExpSum] | None = None
    infinite: bool = False
    where: tuple | None = None


def float_of(bound: Any) -> float:
    """A lower interval end as a float rounded down (mpmath's float() of an interval may round
    either way, so the nearest float is moved one step outward)."""
    try:
        return math.nextafter(float(mpmath.mpf(bound)), -math.inf)
    except OverflowError:  # pragma: no cover
        return math.inf


def float_up_of(bound: Any) -> float:
    """An upper interval end as a float rounded up."""
    try:
        return math.nextafter(float(mpmath.mpf(bound)), math.inf)
    except OverflowError:  # pragma: no cover
        return math.inf


def sup_ratio(p: PiecewiseExp, q: PiecewiseExp, *, target: float = math.inf, known: float = 0.0) -> RatioSup:
    """Certified enclosure of the essential ``sup p(x)/q(x)`` over ``p > 0``.

    ``known``: a certified lower bound of a supremum found elsewhere (another pair): bounds below it
    need no refinement, so the enclosure returned is ``[low, max(high, known)]``-tight only above it.
    """
    breaks = sorted(set(p.breaks) | set(q.breaks))
    ends: list[Fraction | None] = [None, *breaks, None]
    pieces = []
    for j in range(len(ends) - 1):
        low, high = ends[j], ends[j + 1]
        fp, fq = _Fn(_terms(p.piece_at(low))), _Fn(_terms(q.piece_at(low)))
        if not fp.terms:
            continue
        if not fq.terms:
            return RatioSup(math.inf, math.inf, infinite=True, where=("interval", low, high))
        pieces.append((low, high, fp, fq))
    results: list[RatioSup | None] = []  # None: a piece left for the branch and bound below
    for low, high, fp, fq in pieces:
        exact = _single_term_sup(low, high, fp, fq)
        if exact is not None:
            results.append(exact)
            if exact.infinite:
                return exact
            continue
        results.append(None)
    lower = max([r.low for r in results if r is not None] + [0.0])
    for index, (low, high, fp, fq) in enumerate(pieces):
        if results[index] is not None:
            continue
        result = _piece_sup(low, high, fp, fq, max(lower, known, 0.0), target)
        results[index] = result
        if result.infinite:
            return result
        lower = max(lower, result.low)
    searched = [r for r in results if r is not None]
    assert len(searched) == len(results), "the loop above fills every piece left as None"
    return combine(searched)


def _exact_value_greater(x: tuple[ExpSum, ExpSum], y: tuple[ExpSum, ExpSum]) -> bool:
    """``N1/D1 > N2/D2`` exactly (denominators positive)."""
    return (x[0] * y[1] - y[0] * x[1]).sign() > 0


def combine(results: list[RatioSup]) -> RatioSup:
    """The supremum over pieces: the largest lower bound (and where), the largest upper bound, and
    an exact value when every piece that could hold the supremum is exact."""
    if not results:
        return RatioSup(0.0, 0.0)
    top = max(results, key=lambda r: r.low)
    high = max(r.high for r in results)
    contenders = [r for r in results if r.high >= top.low * (1 - 1e-9)]
    exact = None
    exacts = [r.exact for r in contenders if r.exact is not None]
    if len(exacts) == len(contenders):  # every contender is exact
        exact = exacts[0]
        for value in exacts[1:]:
            if _exact_value_greater(value, exact):
                exact = value
    return RatioSup(top.low, high, exact, False, top.where)


def _single_term_sup(low, high, fp: _Fn, fq: _Fn) -> RatioSup | None:
    """Exact supremum on a piece where p = A e^(r x) and q = B e^(r' x) (one group each, degree 0):
    the log ratio is linear, so the supremum is ``(A / B) e^(slope * end)`` at a piece end, a constant,
    or infinite towards an infinite end; kept as the exact ratio ``N / D`` of two ExpSums."""
    gp, gq = _groups(fp.terms), _groups(fq.terms)
    if gp.keys() == gq.keys() and len(gp) > 1:
        # p = c q exactly when every coefficient has the same ratio: a constant ratio
        keys = sorted(gp)
        A, B = gp[keys[0]], gq[keys[0]]
        if all((gp[k] * B - A * gq[k]).is_zero() for k in keys[1:]):
            value = exact_interval((A, B))
            return RatioSup(float_of(value.a), float_up_of(value.b), exact=(A, B), where=("point", _midpoint(low, high)))
        return None
    if len(gp) != 1 or len(gq) != 1:
        return None
    ((rp, dp), A), ((rq, dq), B) = next(iter(gp.items())), next(iter(gq.items()))
    if dp or dq:
        return None
    slope = rp - rq
    point: tuple  # a RatioSup.where: ("point", x), ("left_of", end, other) or ("right_of", end, other)
    if slope == 0:
        point, at = ("point", _midpoint(low, high)), Fraction(0)
    elif slope > 0:  # increasing: supremum at the right end
        if high is None:
            return RatioSup(math.inf, math.inf, infinite=True, where=("right", low if low is not None else Fraction(0)))
        point, at = ("left_of", high, low), slope * high
    else:
        if low is None:
            return RatioSup(math.inf, math.inf, infinite=True, where=("left", high if high is not None else Fraction(0)))
        point, at = ("right_of", low, high), slope * low
    numerator, denominator = A.times_exp(at), B
    value = exact_interval((numerator, denominator))
    return RatioSup(float_of(value.a), float_up_of(value.b), exact=(numerator, denominator), where=point)


def exact_interval(exact: tuple):
    old = iv.prec
    try:
        iv.prec = BITS
        return exact[0].interval(BITS) / exact[1].interval(BITS)
    finally:
        iv.prec = old


def _midpoint(low, high) -> Fraction:
    if low is None and high is None:
        return Fraction(0)
    if low is None:
        return high - 1
    if high is None:
        return low + 1
    return (low + high) / 2


def _dominant(terms: list) -> tuple[Fraction, int, ExpSum, list]:
    """For x -> -inf: the slowest-decaying (rate, degree) with a non-zero exact coefficient."""
    groups: dict[tuple[Fraction, int], dict] = {}
    for r, e, d, a in terms:
        g = groups.setdefault((r, d), {})
        g[e] = g.get(e, 0) + a
    keyed = sorted(((r, -d), ExpSum(g), d) for (r, d), g in groups.items())
    keyed = [item for item in keyed if not item[1].is_zero()]
    (r0, _), lead, d0 = keyed[0]
    rest = [(r - r0, d - d0, value) for (r, _), value, d in keyed[1:]]
    return r0, d0, lead * (-1) ** d0, rest


class _Tail:
    """The ratio p/q on (-inf, X] bounded through the dominant terms (module docstring).

    ``p(x) = |x|^d0 e^(r0 x) (lead + sum_j A_j sgn(x)^d_j |x|^m_j e^(delta_j x))``; for ``x <= X`` each
    remainder term is at most its value at ``X`` once ``|X| >= m_j / delta_j`` (the term then grows
    with x), so the bracket ``lead +- sum |A_j| |X|^m_j e^(-delta_j |X|)`` holds on the whole tail."""

    def __init__(self, fp: _Fn, fq: _Fn) -> None:
        self.rp, self.dp, lead_p, rest_p = _dominant(fp.terms)
        self.rq, self.dq, lead_q, rest_q = _dominant(fq.terms)
        self.infinite = (self.rp, -self.dp) < (self.rq, -self.dq)
        old = iv.prec
        try:
            iv.prec = BITS
            self.lp, self.lq = lead_p.interval(BITS), lead_q.interval(BITS)
            # |A_j| <= sum |a| e^e, rounded up; delta_j rounded down (so each bound below only grows)
            self.rest_p = [(_float_down(delta), m, _magnitude_up(v)) for delta, m, v in rest_p]
            self.rest_q = [(_float_down(delta), m, _magnitude_up(v)) for delta, m, v in rest_q]
            self.lp_b, self.lq_a = _float_up(self.lp.b), _float_down_mp(self.lq.a)
            self.limit = self.lp / self.lq if (self.rp, self.dp) == (self.rq, self.dq) else None
        finally:
            iv.prec = old
        # exact: delta is a float (rounded down above), read as the binary rational it is, so the
        # cut X below stays a Fraction and the witness arithmetic stays exact
        reach: list[Fraction] = [Fraction(m) / Fraction(delta) for delta, m, _ in self.rest_p + self.rest_q if m > 0 and delta > 0]
        if self.limit is None and self.rp != self.rq and self.dp > self.dq:
            reach.append(Fraction(self.dp - self.dq) / (self.rp - self.rq))
        self.reach = max(reach, default=Fraction(0))

    def bracket(self, X: Fraction | float):
        """(limit interval or None, upper bound of p/q on (-inf, X]) or None if X is too close."""
        ax = -X
        if ax <= 0 or ax < self.reach:
            return None
        A = float(ax) * (1 - 2.0**-50)  # |X| rounded down: every remainder term is larger there

        def remainder(rest) -> float:
            total = 0.0
            for delta, m, value in rest:
                term = value * (A if m < 0 else float(ax) * (1 + 2.0**-50)) ** m * math.exp(-delta * A)
                total += term
            return total * (1 + 2.0**-40) + 1e-300

        up_high = self.lp_b + remainder(self.rest_p)
        uq_low = self.lq_a - remainder(self.rest_q)
        if not uq_low > 0:
            return None
        upper = up_high / uq_low * (1 + 2.0**-40)
        if self.limit is not None:
            return self.limit, upper
        delta, m = float(self.rp - self.rq) * (1 - 2.0**-50), self.dp - self.dq
        scale = (A if m < 0 else float(ax) * (1 + 2.0**-50)) ** m * math.exp(-delta * A)
        return iv.mpf(0), upper * scale * (1 + 2.0**-40) + 1e-300


def _float_up(x) -> float:
    value = float(x)
    return math.nextafter(value, math.inf) if value < math.inf else value


def _float_down_mp(x) -> float:
    value = float(x)
    return math.nextafter(value, -math.inf)


def _float_down(x: Fraction) -> float:
    return math.nextafter(float(x), -math.inf)


def _magnitude_up(value: ExpSum) -> float:
    """An upper bound of |value| in float: sum |a| e^e, each rounded up generously."""
    total = 0.0
    for e, a in value.terms.items():
        total += abs(float(a)) * math.exp(float(e)) * (1 + 2.0**-45)
    return total * (1 + 2.0**-40) + 1e-300


def _piece_sup(low, high, fp: _Fn, fq: _Fn, known: float, target: float) -> RatioSup:
    """Branch and bound on one piece (module docstring)."""
    old = iv.prec
    iv.prec = BITS
    try:
        return _piece_sup_inner(low, high, fp, fq, known, target)
    finally:
        iv.prec = old


def _piece_sup_inner(low, high, fp: _Fn, fq: _Fn, known: float, target: float) -> RatioSup:
    lower, where = 0.0, None
    tail_high = 0.0
    # -- infinite ends: cut them where the dominant terms bound the ratio
    left_cut, right_cut = low, high
    if low is None:
        base = min(Fraction(-1), (high if high is not None else Fraction(0)) - 1)
        result = _cut_tail(fp, fq, base, known, target)
        if result[0] == "inf":
            return RatioSup(math.inf, math.inf, infinite=True, where=("left", base))
        left_cut, limit_low, bound = result
        tail_high = max(tail_high, bound)
        if limit_low > lower:
            lower, where = limit_low, ("left", left_cut)
    if high is None:
        mp_, mq_ = _Fn(_mirror(fp.terms)), _Fn(_mirror(fq.terms))
        start = (low if low is not None else Fraction(0))
        base = min(Fraction(-1), -start - 1)
        result = _cut_tail(mp_, mq_, base, known, target)
        if result[0] == "inf":
            return RatioSup(math.inf, math.inf, infinite=True, where=("right", -base))
        cut, limit_low, bound = result
        right_cut = -cut
        tail_high = max(tail_high, bound)
        if limit_low > lower:
            lower, where = limit_low, ("right", right_cut)
    a, b = left_cut, right_cut
    if a >= b:  # pragma: no cover
        return RatioSup(lower, tail_high, where=where)
    # -- finite ends where q vanishes: the Taylor-divided forms
    order_left = _order(fq, a) if low is not None else 0
    order_right = _order(fq, b) if high is not None else 0
    if order_left is None or order_right is None:
        return RatioSup(lower, math.inf, where=where)
    for end, k, side in ((a, order_left, "right_of"), (b, order_right, "left_of")):
        if k:
            kp = _order(fp, end)
            if kp is not None and kp < k:
                return RatioSup(math.inf, math.inf, infinite=True, where=(side, end, b if side == "right_of" else a))
    divided = {}
    for end, k in ((a, order_left), (b, order_right)):
        if k:
            tp, tq = fp.terms, fq.terms
            for _ in range(k):
                tp, tq = _derivative(tp), _derivative(tq)
            divided[end] = (_Fn(tp), _Fn(tq))
    high_bound, value, point = float_branch_and_bound(fp.terms, fq.terms, a, b, {k: (n.terms, d.terms) for k, (n, d) in divided.items()}, max(known, lower))
    if point is not None and value > lower:
        lower, where = value, ("point", point)
    return RatioSup(lower, max(high_bound, tail_high, lower), where=where)


def _cut_tail(fp: _Fn, fq: _Fn, base: Fraction, known: float, target: float):
    """Move the cut X left until the tail bound on (-inf, X] is below what matters."""
    tail = _Tail(fp, fq)
    if tail.infinite:
        return ("inf",)
    X: Fraction = min(base, -tail.reach - 1)
    limit_low, upper = 0.0, math.inf
    for _ in range(80):
        found = tail.bracket(X)
        if found is not None:
            limit, upper = found
            limit_low = float_of(limit.a)
            if upper <= max(known, limit_low) * (1 + _TOLERANCE):
                return X, limit_low, upper
        X = X * 2
    return X, limit_low, upper


def quick_lower(p: PiecewiseExp, q: PiecewiseExp) -> float:
    """A cheap certified lower bound of ``sup p/q``: enclosures at a few points of every piece and
    the exact tail limits. It seeds the pruning threshold of every branch and bound."""
    breaks = sorted(set(p.breaks) | set(q.breaks))
    ends: list[Fraction | None] = [None, *breaks, None]
    best = 0.0
    for j in range(len(ends) - 1):
        low, high = ends[j], ends[j + 1]
        fp, fq = _terms(p.piece_at(low)), _terms(q.piece_at(low))
        if not fp:
            continue
        if not fq:
            return math.inf
        if low is not None and high is not None:
            width = float(high - low)
            points = [float(low) + width * t for t in (1e-6, 0.25, 0.5, 0.75, 1 - 1e-6)]
        elif low is not None:  # (low, +inf)
            points = [float(low) + w for w in (1e-6, 0.5, 2.0, 8.0, 32.0)]
        elif high is not None:  # (-inf, high)
            points = [float(high) - w for w in (1e-6, 0.5, 2.0, 8.0, 32.0)]
        else:  # the whole line
            points = [-8.0, -1.0, 0.0, 1.0, 8.0]
        xs = np.array(points)
        rates = [float(r) for r, _e, _d, _a in fq]
        r0 = np.where(xs < 0, min(rates), max(rates))
        p_lo, _ = enclose_points(fp, xs, r0)
        _, q_hi = enclose_points(fq, xs, r0)
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where((q_hi > 0) & (p_lo > 0), _down(p_lo / q_hi), 0.0)
        best = max(best, float(values.max(initial=0.0)))
        for side, (tp, tq) in (("left", (fp, fq)), ("right", (_mirror(fp), _mirror(fq)))):
            if (side == "left" and low is None) or (side == "right" and high is None):
                rp, dp, lead_p, _ = _dominant(tp)
                rq, dq, lead_q, _ = _dominant(tq)
                if (rp, -dp) < (rq, -dq):
                    return math.inf
                if (rp, dp) == (rq, dq):
                    best = max(best, float_of((lead_p.interval(BITS) / lead_q.interval(BITS)).a))
    return best
