"""Float interval enclosures of exponential sums, vectorised over boxes (internal to _ratio_sup.py).

:mod:`dpverify.densities._ratio_sup` bounds ``sup p/q`` on a piece by bisection with these enclosures. Terms
are grouped by (rate, degree) with exact :class:`~dpverify.densities.piecewise.ExpSum` coefficients, each
rounded once to float with a certificate.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpverify.densities.piecewise import ExpSum

__all__ = ["TOLERANCE", "Enclosure", "approximate", "coefficient_bounds", "float_with_error", "sign_of", "groups", "derivative", "derivative_groups", "down", "enclose_points", "float_branch_and_bound"]

#: Relative tolerance of the suprema's enclosures.
TOLERANCE = 1e-6
_START_BOXES = 32


def groups(terms: list) -> dict[tuple[Fraction, int], ExpSum]:
    """Terms grouped by (rate, degree): ``f(x) = sum_(r, d) C_(r, d) x^d e^(r x)`` with exact ``C``.
    The functions ``x^d e^(r x)`` are linearly independent, so this form is unique."""
    grouped: dict[tuple[Fraction, int], dict] = {}
    for r, e, d, a in terms:
        g = grouped.setdefault((r, d), {})
        g[e] = g.get(e, 0) + a
    return {key: ExpSum(g) for key, g in grouped.items() if not ExpSum(g).is_zero()}


def derivative(terms: list) -> list:
    """The exact terms of ``f'`` for ``f = sum a x^d e^(r x + e)``."""
    out: dict = {}
    for r, e, d, a in terms:
        if d:
            out[(r, e, d - 1)] = out.get((r, e, d - 1), 0) + a * d
        if r:
            out[(r, e, d)] = out.get((r, e, d), 0) + a * r
    return [(r, e, d, a) for (r, e, d), a in out.items() if a]


def derivative_groups(grouped: dict[tuple[Fraction, int], ExpSum]) -> dict[tuple[Fraction, int], ExpSum]:
    """The grouped form of ``f'``: ``(C x^d e^(r x))' = d C x^(d-1) e^(r x) + r C x^d e^(r x)``."""
    slopes: dict[tuple[Fraction, int], ExpSum] = {}
    for (r, d), c in grouped.items():
        if d:
            slopes[(r, d - 1)] = slopes.get((r, d - 1), ExpSum()) + c * d
        if r:
            slopes[(r, d)] = slopes.get((r, d), ExpSum()) + c * r
    return {k: c for k, c in slopes.items() if not c.is_zero()}


# Every operation is widened outward by a relative 2**-44 (a float operation errs by at most 2**-53;
# numpy's exp by at most an ulp or two) plus an absolute 1e-300 (underflow), so each enclosure below
# contains the exact value. Only enclosures (upper bounds) come from here; lower bounds are
# certified in mpmath at a chosen point (_point_ratio).

_WIDEN = 2.0**-44
_TINY = 1e-300


def down(x: np.ndarray) -> np.ndarray:
    """Round an array of values outward (down)."""
    return _down(x)


def _down(x: np.ndarray) -> np.ndarray:
    return x - np.abs(x) * _WIDEN - _TINY


def _up(x: np.ndarray) -> np.ndarray:
    return x + np.abs(x) * _WIDEN + _TINY


def _iv_mul(alo, ahi, blo, bhi):
    """Interval product, widened outward; a nan (0 * inf) widens to the whole line."""
    with np.errstate(invalid="ignore", over="ignore"):
        p1, p2, p3, p4 = alo * blo, alo * bhi, ahi * blo, ahi * bhi
        lo = np.minimum(np.minimum(p1, p2), np.minimum(p3, p4))  # nan propagates
        hi = np.maximum(np.maximum(p1, p2), np.maximum(p3, p4))
        return np.where(np.isnan(lo), -np.inf, _down(lo)), np.where(np.isnan(hi), np.inf, _up(hi))


def float_with_error(value: ExpSum) -> tuple[float, float] | None:
    """``(v, err)`` with ``|v - value| <= err``, in float64 arithmetic (no mpmath): each term
    ``a e^e`` is ``float(a) * exp(float(e))``, off by at most ``(|e| + 4) u`` relative (the rounding
    of ``a`` and ``e``, one or two ulps of ``exp``, the product), and the sum of ``k`` terms adds
    ``k u`` times the sum of magnitudes; ``err`` is that bound, widened by 10%. None when an
    exponent is too large for float64."""
    unit = 2.0**-53
    total = magnitude = 0.0
    largest = 0.0
    for e, a in value.terms.items():
        exponent = float(e)
        if abs(exponent) > 600:
            return None
        term = float(a) * math.exp(exponent)
        total += term
        magnitude += abs(term)
        largest = max(largest, abs(exponent))
    error = ((largest + 4) * 1.01 + len(value.terms) + 2) * unit * magnitude * 1.1 + 1e-300
    return total, error


def coefficient_bounds(value: ExpSum) -> tuple[float, float]:
    """Float bounds ``(lo, hi)`` of a non-zero exact coefficient, both of its sign, widened by a
    relative ``2**-44`` beyond its rounding: float64 arithmetic when its error bound is small
    (:func:`float_with_error`), else the certified float of :meth:`ExpSum.to_float`."""
    fast = float_with_error(value)
    if fast is not None and fast[1] <= abs(fast[0]) * 2.0**-46:
        v, error = fast
        return v - error - abs(v) * _WIDEN, v + error + abs(v) * _WIDEN
    v = value.to_float()
    return v - abs(v) * _WIDEN, v + abs(v) * _WIDEN


def sign_of(value: ExpSum) -> int:
    """The exact sign of ``value``: from float64 when its error bound settles it, else
    :meth:`ExpSum.sign` (interval arithmetic at growing precision)."""
    fast = float_with_error(value)
    if fast is not None and fast[1] < abs(fast[0]):
        return 1 if fast[0] > 0 else -1
    return value.sign()


def approximate(value: ExpSum) -> float:
    """A float near ``value`` (float64 arithmetic; no certificate): a guide for a search only."""
    fast = float_with_error(value)
    return value.to_float() if fast is None else fast[0]


class _FloatTerms:
    """A piece's terms as arrays, for the vectorised enclosures."""

    def __init__(self, terms: list, grouped: dict | None = None) -> None:
        # grouped by (rate, degree): each coefficient an exact ExpSum, bounded in float with a
        # certificate (coefficient_bounds), inside the 2**-44 widening below
        items = sorted((groups(terms) if grouped is None else grouped).items())
        self.rates = np.array([float(r) for (r, _d), _c in items])[:, None]
        self.exps = np.zeros((len(items), 1))
        self.degrees = np.array([d for (_r, d), _c in items])
        bounds = [coefficient_bounds(c) for _k, c in items]
        self.a_lo = np.array([b[0] for b in bounds])[:, None]
        self.a_hi = np.array([b[1] for b in bounds])[:, None]
        self.count = len(items)

    def enclose(self, x1: np.ndarray, x2: np.ndarray, r0: np.ndarray):
        """Enclosure of ``f(x) exp(-r0 x)`` for x in each box [x1, x2]."""
        u = 2.0**-53
        reach = np.maximum(np.abs(x1), np.abs(x2))[None, :]
        with np.errstate(over="ignore", invalid="ignore"):
            slopes = self.rates - r0[None, :]
            e1 = slopes * x1[None, :] + self.exps
            e2 = slopes * x2[None, :] + self.exps
            slack = 4 * u * ((np.abs(slopes) + np.abs(self.rates)) * reach + np.abs(self.exps)) + _TINY
            lo = np.maximum(_down(np.exp(np.minimum(e1, e2) - slack)), 0.0)
            hi = _up(np.exp(np.maximum(e1, e2) + slack))
        for degree in np.unique(self.degrees):
            if degree == 0:
                continue
            rows = self.degrees == degree
            plo, phi = x1[None, :], x2[None, :]
            for _ in range(int(degree) - 1):
                plo, phi = _iv_mul(plo, phi, x1[None, :], x2[None, :])
            lo[rows], hi[rows] = _iv_mul(lo[rows], hi[rows], plo, phi)
        # times the coefficient interval [a_lo, a_hi], which has the sign of a (widened by 2**-44)
        positive = self.a_lo > 0
        with np.errstate(invalid="ignore", over="ignore"):
            low_pos = np.where(lo >= 0, lo * self.a_lo, lo * self.a_hi)
            high_pos = np.where(hi >= 0, hi * self.a_hi, hi * self.a_lo)
            low_neg = np.where(hi >= 0, hi * self.a_lo, hi * self.a_hi)
            high_neg = np.where(lo >= 0, lo * self.a_hi, lo * self.a_lo)
            lo = _down(np.where(positive, low_pos, low_neg))
            hi = _up(np.where(positive, high_pos, high_neg))
        with np.errstate(invalid="ignore"):
            magnitude = np.maximum(np.abs(lo), np.abs(hi)).sum(axis=0)
            slack = (self.count + 2) * 2.0**-52 * magnitude
            low, high = _down(lo.sum(axis=0) - slack), _up(hi.sum(axis=0) + slack)
        return np.where(np.isnan(low), -np.inf, low), np.where(np.isnan(high), np.inf, high)


class _Enclosure:
    """Mean-value enclosures of ``g(x) = f(x) exp(-r0 x)`` over boxes: ``g(m) + g'(X)(X - m)``
    intersected with the direct enclosure (the mean-value form's overestimate shrinks with the box
    width squared, and does not grow with the size of cancelling terms)."""

    def __init__(self, terms: list, grouped: dict | None = None, slopes: dict | None = None) -> None:
        """``grouped``: the terms' :func:`groups`, when the caller has them; ``slopes``: those of the
        derivative (:func:`derivative_groups`), likewise."""
        if grouped is None:
            self.f = _FloatTerms(terms)
            slope_terms = derivative(terms)
            self.df = _FloatTerms(slope_terms) if slope_terms else None
            return
        self.f = _FloatTerms([], grouped)
        slopes = derivative_groups(grouped) if slopes is None else slopes
        self.df = _FloatTerms([], slopes) if slopes else None

    def enclose(self, x1: np.ndarray, x2: np.ndarray, r0: np.ndarray):
        if self.df is None:
            return self.f.enclose(x1, x2, r0)
        n = x1.size
        mids = (x1 + x2) / 2
        both_lo, both_hi = self.f.enclose(np.concatenate([x1, mids]), np.concatenate([x2, mids]), np.concatenate([r0, r0]))
        direct_lo, direct_hi, m_lo, m_hi = both_lo[:n], both_hi[:n], both_lo[n:], both_hi[n:]
        d_lo, d_hi = self.df.enclose(x1, x2, r0)
        # g' = (f' - r0 f) exp(-r0 x)
        r_lo, r_hi = _iv_mul(direct_lo, direct_hi, r0, r0)
        g_lo, g_hi = _down(d_lo - r_hi), _up(d_hi - r_lo)
        s_lo, s_hi = _iv_mul(g_lo, g_hi, _down(x1 - mids), _up(x2 - mids))
        lo, hi = _down(m_lo + s_lo), _up(m_hi + s_hi)
        with np.errstate(invalid="ignore"):
            lo = np.where(np.isnan(lo), -np.inf, lo)
            hi = np.where(np.isnan(hi), np.inf, hi)
            return np.maximum(lo, direct_lo), np.minimum(hi, direct_hi)


#: Enclosures of ``f(x) exp(-r0 x)`` over boxes (also used by :mod:`dpverify.densities._region`).
Enclosure = _Enclosure

_ENCLOSURES: dict[tuple, _Enclosure] = {}
_MAX_ENCLOSURES = 8192


def _enclosure_of(terms: list) -> _Enclosure:
    """``_Enclosure(terms)``, memoised by the terms' content: the same densities recur in many pairs
    (and at every eps), and building one groups the terms and rounds each coefficient with a
    certificate. An enclosure is never changed after it is built, so a shared one encloses the same."""
    key = tuple(terms)
    found = _ENCLOSURES.get(key)
    if found is None:
        if len(_ENCLOSURES) >= _MAX_ENCLOSURES:
            _ENCLOSURES.clear()
        found = _ENCLOSURES[key] = _Enclosure(terms)
    return found


def float_branch_and_bound(fp: list, fq: list, a: Fraction, b: Fraction, divided: dict, known: float):
    """Upper bound of p/q on [a, b] by vectorised interval bisection, and a certified lower bound
    (p/q at box midpoints, enclosed the same way) with its point.

    Returns (upper bound, lower bound, the point where the lower bound holds)."""
    rates = [float(r) for r, _e, _d, _a in fq]
    rmin, rmax = min(rates), max(rates)
    tp, tq = _enclosure_of(fp), _enclosure_of(fq)
    ends = {end: (_enclosure_of(n), _enclosure_of(d)) for end, (n, d) in divided.items()}
    # start from several boxes (fewer vectorised rounds); the outer ends are rounded outward
    cuts = np.linspace(float(a), float(b), _START_BOXES + 1)
    cuts[0], cuts[-1] = math.nextafter(float(a), -math.inf), math.nextafter(float(b), math.inf)
    x1, x2 = cuts[:-1].copy(), cuts[1:].copy()
    at_a, at_b = np.arange(_START_BOXES) == 0, np.arange(_START_BOXES) == _START_BOXES - 1
    best_value, best_point = 0.0, None
    high, evaluated = 0.0, 0
    for _ in range(400):
        if x1.size == 0:
            break
        n = x1.size
        mids = (x1 + x2) / 2
        inside = (mids > float(a)) & (mids < float(b))
        # boxes and their midpoints (as point boxes) in one evaluation
        bx1, bx2 = np.concatenate([x1, mids]), np.concatenate([x2, mids])
        r0 = np.where(bx1 + bx2 < 0, rmin, rmax)
        p_lo, p_hi = tp.enclose(bx1, bx2, r0)
        q_lo, q_hi = tq.enclose(bx1, bx2, r0)
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.where(q_lo[:n] > 0, _up(np.maximum(p_hi[:n], 0.0) / q_lo[:n]), np.inf)
            point_low = np.where((q_hi[n:] > 0) & (p_lo[n:] > 0) & inside, _down(p_lo[n:] / q_hi[n:]), 0.0)
        for end, mask in ((a, at_a), (b, at_b)):
            if end in ends and mask.any():
                na, nb = ends[end]
                m_lo, m_hi = na.enclose(x1[mask], x2[mask], r0[:n][mask])
                d_lo, d_hi = nb.enclose(x1[mask], x2[mask], r0[:n][mask])
                with np.errstate(divide="ignore", invalid="ignore"):
                    upper[mask] = np.where(d_lo > 0, _up(np.maximum(m_hi, 0.0) / d_lo), np.inf)
        evaluated += n
        i = int(np.argmax(point_low))
        if point_low[i] > best_value:
            best_value, best_point = float(point_low[i]), float(mids[i])
        threshold = max(known, best_value) * (1 + TOLERANCE)
        done = upper <= threshold
        if done.any():
            high = max(high, float(upper[done].max()))
        keep = ~done
        tiny = (x2 - x1) <= (np.abs(x1) + np.abs(x2) + 1) * 2.0**-42
        if (keep & tiny).any() or evaluated > 200_000:
            high = max(high, float(upper[keep].max(initial=0.0)))
            break
        x1, x2, at_a, at_b, mids = x1[keep], x2[keep], at_a[keep], at_b[keep], mids[keep]
        x1, x2 = np.concatenate([x1, mids]), np.concatenate([mids, x2])
        at_a, at_b = np.concatenate([at_a, np.zeros_like(at_a)]), np.concatenate([np.zeros_like(at_b), at_b])
    return high, best_value, (None if best_point is None else Fraction(best_point))


def enclose_points(terms: list, xs: np.ndarray, r0: np.ndarray):
    """Rigorous enclosures of ``f(x) exp(-r0 x)`` at the points ``xs``."""
    return _FloatTerms(terms).enclose(xs, xs, r0)
