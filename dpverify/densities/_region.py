"""The region where ``p > e^eps q``, certified, for piecewise-exponential densities (internal to
:mod:`dpverify.densities.hockey_stick`).

``g = p - c q`` with ``c = e^eps`` (``eps`` rational) is again piecewise exponential with exact
terms. On each piece between the breakpoints of ``p`` and ``q`` its terms are grouped by (rate,
degree), ``g(x) = sum_(r, d) C_(r, d) x^d e^(r x)`` with exact :class:`ExpSum` coefficients
(unique: the functions ``x^d e^(r x)`` are linearly independent), and the piece is settled by the
first rule that applies:

* no group left: ``g = 0`` on the piece (an exact tie ``p = c q``): it adds nothing;
* one group ``C x^d e^(r x)``: the sign of ``C`` (times that of ``x^d``: an odd ``d`` changes sign
  at 0, a rational point);
* two groups of degree 0, ``C1 e^(r1 x) + C2 e^(r2 x)`` (``r1 < r2``; both densities single
  exponentials on the piece, as for Laplace and exponential noise): ``g e^(-r1 x) = C1 + C2 e^((r2 -
  r1) x)`` is monotone, so ``g`` changes sign at most once, from ``sign C1`` to ``sign C2``, at
  ``x* = ln(-C1/C2) / (r2 - r1)``. The exact signs of ``g`` at the piece's ends tell whether ``x*``
  is inside. When ``-C1/C2 = e^k`` exactly (both single terms with opposite rational coefficients:
  Laplace and exponential noise of equal scales) ``x*`` is the rational ``k / (r2 - r1)``, exact;
  otherwise ``x*`` is bracketed by two rationals from a 200-bit interval evaluation, each end's sign
  checked exactly, and the bracket (width ~2**-190 relative) is left out of the region;
* otherwise (sums of exponentials: the density of a noisy maximum, SVT Algorithm 3): float64 finds
  the sign changes and the region is *certified* with the vectorised interval enclosures of
  :mod:`dpverify.densities._enclosures`: boxes on which the enclosure of ``g`` is ``>= 0`` belong to
  the region, boxes on which it is ``<= 0`` do not, and a box on which it straddles 0 is split,
  down to a width of ``2**-40`` relative. Beside a piece end where ``g`` vanishes to order ``k``
  (ties at breakpoints, densities that both vanish there), where those enclosures cannot sign a
  difference of nearly equal terms, Taylor's theorem with the exact ``g^(k)(end)`` settles a stretch
  outright. Infinite ends are cut where the dominant term's
  coefficient outweighs a bound of every other term on the whole tail (the bound of
  :mod:`dpverify.densities._ratio_sup`'s tails): the tail's sign is then certified.

What cannot be settled is left out of the region and bounded: a bracket or an unsettled box of width
``w`` adds ``w * sup g+`` (an enclosure), an uncertified tail ``int_tail p`` (as ``g+ <= p``). So with
``S`` the region, ``int_S g <= delta <= int_S g + slack`` — and ``int_S g = P(S) - c Q(S)`` is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from mpmath import libmp

from dpverify.densities._enclosures import (
    Enclosure,
    approximate,
    coefficient_bounds,
    derivative_groups,
    float_with_error,
    groups,
    sign_of,
)
from dpverify.densities.piecewise import ExpSum, PiecewiseExp

__all__ = ["Region", "positive_region"]

iv = mpmath.iv

#: Working precision (bits) of a closed-form root's bracket and of the tails' bounds.
ROOT_BITS = 200
_START_BOXES = 128
_MAX_BOXES = 20_000
_MAX_ORDER = 8
_SPLIT = 8
_TINY_WIDTH = 2.0**-40
#: What the boxes left unsettled for being negligible may add to the slack, in all.
_NEGLIGIBLE = 2.0**-100

End = Any  # Fraction | None (None: an infinite end)


@dataclass
class Region:
    """Where ``g = p - c q >= 0`` is certified: disjoint sorted intervals (None for an infinite end),
    and ``slack``, a certified upper bound of ``int g+`` outside them."""

    intervals: list[tuple[End, End]] = field(default_factory=list)
    slack: float = 0.0
    closed_form: int = 0  # pieces settled by a rule above (no search)
    searched: int = 0  # pieces settled by the certified search

    def add(self, low: End, high: End) -> None:
        if low is not None and high is not None and low >= high:
            return
        self.intervals.append((low, high))

    def widen(self, bound: float) -> None:
        """Add a certified upper bound (rounded up) to the slack."""
        if bound > 0:
            self.slack = math.nextafter(self.slack + bound, math.inf)

    def finish(self) -> Region:
        """Sort the intervals and merge those that touch."""
        ordered = sorted(self.intervals, key=lambda ab: (ab[0] is not None, ab[0] if ab[0] is not None else 0))
        merged: list[tuple[End, End]] = []
        for low, high in ordered:
            if merged and merged[-1][1] is not None and low is not None and merged[-1][1] >= low:
                last = merged[-1]
                merged[-1] = (last[0], None if high is None or last[1] is None else max(last[1], high))
            else:
                merged.append((low, high))
        self.intervals = merged
        return self


def positive_region(p: PiecewiseExp, q: PiecewiseExp, epsilon: Fraction, *, cache: dict | None = None) -> Region:
    """The certified region where ``p > e^epsilon q`` (module docstring). ``cache``: a dict kept by
    the caller across calls, holding each piece's grouped form (the same densities at many eps)."""
    region = Region()
    breaks = sorted(set(p.breaks) | set(q.breaks))
    ends: list[End] = [None, *breaks, None]
    cache = {} if cache is None else cache
    for j in range(len(ends) - 1):
        low, high = ends[j], ends[j + 1]
        tp, tq = p.piece_at(low), q.piece_at(low)
        if not tp:
            continue  # p = 0: g <= 0
        if not tq:
            region.add(low, high)  # q = 0 < p
            region.closed_form += 1
            continue
        gp, gq = _grouped(tp, cache), _grouped(tq, cache)
        _piece(low, high, _combine(gp[0], gq[0], epsilon), p, region, lambda: _combine(gp[1], gq[1], epsilon))
    return region.finish()


def _combine(first: dict, second: dict, epsilon: Fraction) -> dict:
    """The grouped form of ``f - e^eps h`` from those of ``f`` and ``h`` (zero groups dropped)."""
    G = dict(first)
    for key, C in second.items():
        G[key] = G.get(key, ExpSum()) - C.times_exp(epsilon)
    return {k: C for k, C in G.items() if not C.is_zero()}


def _grouped(piece: dict, cache: dict) -> tuple[dict, dict]:
    """:func:`~dpverify.densities._enclosures.groups` of a piece's terms and of their derivative,
    kept in ``cache`` by the piece's identity (the piece itself is kept there too, so the identity
    stays its own): ``g = p - e^eps q`` and ``g'`` are then combined per eps without regrouping."""
    found = cache.get(id(piece))
    if found is None or found[0] is not piece:
        grouped = groups([(r, e, d, a) for (r, e, d), a in piece.items()])
        found = (piece, (grouped, derivative_groups(grouped)))
        cache[id(piece)] = found
    return found[1]


# -- closed forms ----------------------------------------------------------------------------------


def _value(G: dict, x: Fraction) -> ExpSum:
    """``g(x)`` exactly from the grouped form."""
    total = ExpSum()
    for (r, d), C in G.items():
        total = total + C.times_exp(r * x) * x**d
    return total


def _is_zero_at(G: dict, x: Fraction) -> bool:
    """``g(x) == 0`` exactly: float64 with an error bound settles a clearly non-zero value, else
    the exact value decides (:class:`ExpSum`: zero iff no term is left)."""
    unit, total, error, magnitude = 2.0**-53, 0.0, 0.0, 0.0
    fx = float(x)
    for (r, d), C in G.items():
        fast = float_with_error(C)
        argument = float(r) * fx
        if fast is None or abs(argument) > 600:
            return _value(G, x).is_zero()
        rest = fx**d * math.exp(argument)
        term = fast[0] * rest
        total += term
        magnitude += abs(term)
        # the coefficient's own error, then x^d, the exponent and exp, the product (relative)
        error += fast[1] * abs(rest) + abs(term) * (6 + 2 * d + 3.1 * abs(argument)) * unit
    error = (error + len(G) * unit * magnitude) * 1.1 + 1e-300
    if abs(total) > error:
        return False
    return _value(G, x).is_zero()


def _piece(low: End, high: End, G: dict, p: PiecewiseExp, region: Region, slopes: Any = None) -> None:
    """Settle one piece (module docstring); ``slopes()`` gives the grouped form of ``g'`` (for a search)."""
    if not G:
        region.closed_form += 1
        return  # g = 0 exactly on the piece
    keys = sorted(G)
    if len(keys) == 1:
        (_, d), C = keys[0], G[keys[0]]
        sign = sign_of(C)
        region.closed_form += 1
        if d % 2 == 0:
            if sign > 0:
                region.add(low, high)
        elif sign > 0:  # positive for x > 0
            region.add(_clip(Fraction(0), low, high), high)
        else:
            region.add(low, _clip(Fraction(0), low, high))
        return
    if len(keys) == 2 and keys[0][1] == 0 and keys[1][1] == 0 and _two_exponentials(low, high, G, keys, region):
        region.closed_form += 1
        return
    region.searched += 1
    _search(low, high, G, p, region, slopes)


def _clip(x: Fraction, low: End, high: End) -> End:
    """``x`` moved into ``[low, high]`` (None ends are infinite)."""
    if low is not None and x < low:
        return low
    if high is not None and x > high:
        return high
    return x


def _two_exponentials(low: End, high: End, G: dict, keys: list, region: Region) -> bool:
    """``C1 e^(r1 x) + C2 e^(r2 x)``, ``r1 < r2``: one sign change at most (module docstring).
    False when the bracket of the root could not be checked (the caller searches instead)."""
    (r1, _), (r2, _) = keys
    C1, C2 = G[keys[0]], G[keys[1]]
    s1, s2 = sign_of(C1), sign_of(C2)
    if s1 == s2:
        if s1 > 0:
            region.add(low, high)
        return True
    # the root x* is at or left of `low` when g(low) already has the right-hand sign (or is 0)
    if low is not None and sign_of(_value(G, low)) in (s2, 0):
        if s2 > 0:
            region.add(low, high)
        return True
    if high is not None and sign_of(_value(G, high)) in (s1, 0):
        if s1 > 0:
            region.add(low, high)
        return True
    exact = _exact_root(C1, C2, r2 - r1)
    if exact is not None:
        if s1 > 0:
            region.add(low, exact)
        else:
            region.add(exact, high)
        return True
    bracket = _bracket(C1, C2, r2 - r1, G, s1, s2, low, high)
    if bracket is None:
        return False
    a, b = bracket
    if s1 > 0:
        region.add(low, a)
    else:
        region.add(b, high)
    region.widen(_bracket_slack(C1, C2, r1, r2, a, b))
    return True


def _exact_root(C1: ExpSum, C2: ExpSum, slope: Fraction) -> Fraction | None:
    """``ln(-C1/C2) / slope`` when ``-C1/C2 = e^k`` exactly (single terms, opposite coefficients)."""
    if len(C1.terms) != 1 or len(C2.terms) != 1:
        return None
    (e1, a1), (e2, a2) = next(iter(C1.terms.items())), next(iter(C2.terms.items()))
    if a1 != -a2:
        return None
    return (e1 - e2) / slope


def _fraction(point: Any) -> Fraction:
    """An mpmath interval end (a point interval or raw mpf) as the exact binary rational it is."""
    raw = point._mpi_[0] if hasattr(point, "_mpi_") else point
    numerator, denominator = libmp.to_rational(raw)
    return Fraction(numerator, denominator)


def _bracket(C1, C2, slope, G, s1, s2, low, high) -> tuple[Fraction, Fraction] | None:
    """Two rationals around ``x* = ln(-C1/C2)/slope`` whose exact signs of ``g`` are ``s1`` and ``s2``."""
    bits = ROOT_BITS
    while bits <= 4 * ROOT_BITS:
        old = iv.prec
        try:
            iv.prec = bits
            root = iv.log(-C1.interval(bits) / C2.interval(bits)) / (iv.mpf(slope.numerator) / slope.denominator)
            a, b = _fraction(root._mpi_[0]), _fraction(root._mpi_[1])
        finally:
            iv.prec = old
        if low is not None:
            a, b = max(a, low), max(b, low)
        if high is not None:
            a, b = min(a, high), min(b, high)
        left_ok = (low is not None and a == low) or sign_of(_value(G, a)) == s1
        right_ok = (high is not None and b == high) or sign_of(_value(G, b)) == s2
        if left_ok and right_ok:
            return a, b
        bits *= 2
    return None  # pragma: no cover - the root is exactly representable or the interval is wide


def _bracket_slack(C1: ExpSum, C2: ExpSum, r1: Fraction, r2: Fraction, a: Fraction, b: Fraction) -> float:
    """``(b - a) * sup_[a, b] (|C1| e^(r1 x) + |C2| e^(r2 x))``, rounded up."""
    old = iv.prec
    try:
        iv.prec = 80
        A, B = iv.mpf(a.numerator) / a.denominator, iv.mpf(b.numerator) / b.denominator
        total = iv.mpf(0)
        for r, C in ((r1, C1), (r2, C2)):
            rate = iv.mpf(r.numerator) / r.denominator
            total += abs(C.interval(80)) * iv.exp(iv.mpf([min((rate * A).a, (rate * B).a), max((rate * A).b, (rate * B).b)]))
        width = b - a  # exact: the bracket is ~2**-190 wide, below the 80-bit rounding of its ends
        bound = iv.mpf(width.numerator) / width.denominator * total
        return math.nextafter(float(mpmath.mpf(bound.b)), math.inf)
    finally:
        iv.prec = old


# -- the certified search --------------------------------------------------------------------------


def _mirror(G: dict) -> dict:
    """The grouped form of ``x -> g(-x)``."""
    return {(-r, d): C * (-1) ** d for (r, d), C in G.items()}


def _tail_cut(G: dict, start: Fraction) -> tuple[Fraction, int | None]:
    """A cut ``X <= start - 1`` (``X < 0``) and the certified sign of ``g`` on ``(-inf, X]``, or None.

    With ``(r0, d0)`` the dominant group (smallest rate, then largest degree), for ``x <= X``
    ``g(x) = e^(r0 x) |x|^d0 (L + sum_j C_j (+-1) |x|^m_j e^(-delta_j |x|))`` with ``L = C0 (-1)^d0``,
    ``delta_j = r_j - r0 >= 0`` and ``m_j = d_j - d0 < 0`` where ``delta_j = 0``. Past
    ``|x| >= m_j / delta_j`` each remainder term only shrinks as ``|x|`` grows, so its value at
    ``|X|`` bounds it on the whole tail: if the sum of those bounds is below ``|L|``, ``g`` has the
    sign of ``L`` there. The bounds are float64 with outward rounding (coefficients from
    :func:`~dpverify.densities._enclosures.coefficient_bounds`, a relative ``2**-40`` on the rest)."""
    r0 = min(r for r, _ in G)
    d0 = max(d for r, d in G if r == r0)
    lead = G[(r0, d0)] * (-1) ** d0
    others = [(r - r0, d - d0, C) for (r, d), C in G.items() if (r, d) != (r0, d0)]
    reach = max([Fraction(m) / delta for delta, m, _ in others if delta > 0 and m > 0], default=Fraction(0))
    X = min(start - 1, -reach - 1)
    low, high = coefficient_bounds(lead)
    lead_low = min(abs(low), abs(high))
    magnitudes = []
    for delta, m, C in others:
        c_low, c_high = coefficient_bounds(C)
        magnitudes.append((_down(float(delta)) if delta > 0 else 0.0, m, max(abs(c_low), abs(c_high))))
    for _ in range(64):
        A = float(-X)
        a_low, a_high = A * (1 - 2.0**-50), A * (1 + 2.0**-50)  # |x| >= |X| rounded down; powers rounded out
        bound = 0.0
        for rate, m, size in magnitudes:
            try:
                power = a_high**m if m > 0 else a_low**m
            except OverflowError:
                power = math.inf
            # -rate * a_low rounded toward 0 by more than its rounding: exp of it bounds e^(-delta |X|)
            bound += size * power * math.exp(-rate * a_low * (1 - 2.0**-50))
        if bound * (1 + 2.0**-40) + 1e-300 < lead_low:
            return X, sign_of(lead)
        X = 2 * X
    return X, None


def _upper(value: ExpSum) -> float:
    """A float upper bound of an exact value."""
    interval = value.interval(80)
    return math.nextafter(float(mpmath.mpf(interval.b)), math.inf)


def _search(low: End, high: End, G: dict, p: PiecewiseExp, region: Region, slopes: Any = None) -> None:
    """Tails by :func:`_tail_cut`, the rest by :func:`_certify` (module docstring)."""
    a, b = low, high
    if low is None:
        cut, sign = _tail_cut(G, high if high is not None else Fraction(0))
        if sign is None:
            region.widen(_upper(p.integral(None, cut)))
        elif sign > 0:
            region.add(None, cut)
        a = cut
    if high is None:
        mirrored_cut, sign = _tail_cut(_mirror(G), -low if low is not None else Fraction(0))
        b = -mirrored_cut
        if sign is None:
            region.widen(_upper(p.integral(b, None)))
        elif sign > 0:
            region.add(b, None)
    assert a is not None and b is not None and a < b
    _certify(a, b, G, region, low is not None, high is not None, None if slopes is None else slopes())


class _Approximation:
    """``g`` in float64 (a guide only: nothing computed from it is trusted without an enclosure)."""

    def __init__(self, G: dict) -> None:
        keys = list(G)
        self.rates = np.array([float(r) for r, _ in keys])[:, None]
        self.degrees = np.array([d for _, d in keys])[:, None]
        self.coefficients = np.array([approximate(G[k]) for k in keys])[:, None]

    def __call__(self, xs: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            terms = self.coefficients * xs[None, :] ** self.degrees * np.exp(self.rates * xs[None, :])
            return terms.sum(axis=0)


def _guide(g: _Approximation, a: float, b: float) -> np.ndarray:
    """Cuts of ``[a, b]`` (floats, sorted): a uniform grid, and around every float sign change of ``g``
    on a fine grid (refined by float bisection) cuts at geometrically growing distances, so the
    boxes beside a root are small where ``g`` is small and one round of enclosures usually
    certifies them all."""
    xs = np.linspace(a, b, 257)
    signs = np.sign(g(xs))
    cuts = [np.linspace(a, b, _START_BOXES + 1)]
    changes = np.flatnonzero(signs[:-1] * signs[1:] < 0)
    if changes.size:
        left, right = xs[changes].copy(), xs[changes + 1].copy()
        left_sign = signs[changes]
        for _ in range(48):
            mid = (left + right) / 2
            move = np.sign(g(mid)) == left_sign
            left = np.where(move, mid, left)
            right = np.where(move, right, mid)
        roots = (left + right) / 2
        steps = (abs(a) + abs(b) + 1.0) * 2.0 ** -np.arange(12, 49, 4)
        cuts += [roots[:, None] - steps[None, :], roots[:, None] + steps[None, :]]
    found = np.unique(np.concatenate([c.ravel() for c in cuts]))
    return np.concatenate([[a], found[(found > a) & (found < b)], [b]])


def _down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _vanishing(G: dict, x: Fraction) -> tuple[int, dict]:
    """The order ``k`` to which ``g`` vanishes at the rational point ``x`` (exactly) and the grouped
    form of ``g^(k)``; ``k = 0`` when ``g(x) != 0`` or beyond :data:`_MAX_ORDER`."""
    current = G
    for k in range(_MAX_ORDER + 1):
        if not _is_zero_at(current, x):
            return k, current
        current = derivative_groups(current)
        if not current:
            return 0, G  # pragma: no cover - g is not identically 0 on the piece
    return 0, G


def _taylor_width(higher: dict, end: Fraction, order: int, side: str, length: Fraction) -> Fraction:
    """A width ``w`` such that beside ``end`` (within ``w``, on ``side``) ``g`` has the sign of
    ``D (x - end)^k`` exactly, ``D = g^(k)(end)`` (``k`` = ``order``, ``higher`` = ``g^(k)`` grouped);
    0 when none is found.

    Taylor: ``g(x) = D (x - end)^k / k! + g^(k+1)(xi) (x - end)^(k+1) / (k+1)!`` with ``xi`` between
    ``end`` and ``x``, so the first term decides while ``|x - end| < |D| (k + 1) / M``, ``M`` a bound
    of ``|g^(k+1)|`` on a window beside the end containing ``x``. ``D`` is exact (an ExpSum): no
    cancellation blurs it, where the enclosures of ``g`` itself, a difference of nearly equal terms
    beside a zero of high order, cannot settle boxes until they are tiny. Windows of ``length``
    times ``2**-j`` are tried at once (a narrower window, a smaller ``M``)."""
    D = _value(higher, end)
    low, high = coefficient_bounds(D)
    size = min(abs(low), abs(high))
    slopes = derivative_groups(higher)
    if not slopes:  # g^(k) is constant: the first term is all there is
        return length
    windows = float(length) * 2.0 ** -np.arange(0, 24, 2)
    e = float(end)
    x1 = np.full(windows.size, _down(e)) if side == "a" else np.nextafter(e - windows, -np.inf)
    x2 = np.nextafter(e + windows, np.inf) if side == "a" else np.full(windows.size, _up(e))
    with np.errstate(all="ignore"):
        lo, hi = Enclosure([], slopes).enclose(x1, x2, np.zeros(windows.size))
        bound = np.maximum(np.abs(lo), np.abs(hi)) * (1 + 2.0**-40)
        reach = np.where(bound > 0, size * (order + 1) / bound * (1 - 2.0**-40), np.inf)
    widths = np.minimum(np.nan_to_num(reach, nan=0.0, posinf=np.inf), windows * (1 - 2.0**-40))
    best = float(widths.max(initial=0.0))
    if not best > 0:
        return Fraction(0)
    return min(Fraction(best), length)


def _certify(a: Fraction, b: Fraction, G: dict, region: Region, at_a: bool = False, at_b: bool = False,
             slopes: dict | None = None) -> None:
    """Certify the sign of ``g`` box by box on ``[a, b]`` (module docstring). Boxes are float64
    intervals (exact binary rationals); the outer two are widened to contain ``a`` and ``b``, and
    what they add to the region is clipped back to ``[a, b]``.

    ``at_a``/``at_b``: ``a``/``b`` is a piece end, where ``g`` may vanish exactly (``p = e^eps q`` at a
    breakpoint, or both densities vanish there). Beside a zero of order ``k`` the enclosures of ``g``
    cannot settle boxes of width ``w`` once ``|g| ~ w^k`` is below their rounding, and bisection would
    multiply them. So first a stretch beside the end is settled outright from the exact
    ``g^(k)(end)`` (:func:`_taylor_width`); where none is found, the box touching the end is settled
    by Taylor's theorem: ``g(x) = g^(k)(xi) (x - end)^k / k!`` with ``xi`` in the box, so ``g`` has
    the sign of the enclosure of ``g^(k)`` (times ``(-1)^k`` left of ``b``)."""
    ends: list[tuple[str, Any, int]] = []  # (which side, enclosure of g^(k), sign of (x - end)^k beside it)
    for flag, end, side in ((at_a, a, "a"), (at_b, b, "b")):
        if flag:
            order, higher = _vanishing(G, end)
            if order:
                factor = 1 if side == "a" or order % 2 == 0 else -1
                width = _taylor_width(higher, end, order, side, b - a)
                if width > 0:  # settled outright beside the end (see _taylor_width); the rest is searched
                    near = (a, a + width) if side == "a" else (b - width, b)
                    if sign_of(_value(higher, end)) * factor > 0:
                        region.add(*near)
                    a, b = (near[1], b) if side == "a" else (a, near[0])
                else:
                    ends.append((side, Enclosure([], higher), factor))
    if a >= b:
        return
    enclosure = Enclosure([], G, slopes)
    rates = [float(r) for r, _ in G]
    rmin, rmax = min(rates), max(rates)
    fa, fb = _down(float(a)), _up(float(b))
    cuts = _guide(_Approximation(G), fa, fb)
    x1, x2 = cuts[:-1], cuts[1:]
    evaluated = 0
    positive: list[tuple[float, float]] = []
    negligible = _NEGLIGIBLE / max(fb - fa, 1e-300)  # sup g+ below it: the box adds < its share of 2**-100
    while x1.size:
        r0 = np.where(x1 + x2 < 0, rmin, rmax)
        lo, hi = enclosure.enclose(x1, x2, r0)
        evaluated += x1.size
        settled_positive = lo >= 0
        settled_negative = hi <= 0
        for side, taylor, factor in ends:
            touching = np.flatnonzero(x1 == fa) if side == "a" else np.flatnonzero(x2 == fb)
            if touching.size:
                d_lo, d_hi = taylor.enclose(x1[touching], x2[touching], r0[touching])
                up, down = (d_lo > 0, d_hi < 0) if factor > 0 else (d_hi < 0, d_lo > 0)
                settled_positive[touching[up]] = True
                settled_negative[touching[down]] = True
        open_ = ~settled_positive & ~settled_negative
        positive += list(zip(x1[settled_positive].tolist(), x2[settled_positive].tolist()))
        with np.errstate(over="ignore"):
            argument = np.maximum(r0 * x1, r0 * x2)
            peak = np.exp(argument + np.abs(argument) * 2.0**-50) * (1 + 2.0**-40)  # inf past float range
            height = np.where(hi > 0, hi * peak * (1 + 2.0**-40), 0.0)  # sup g+ on the box (g e^(-r0 x) enclosed)
        tiny = (x2 - x1) <= (np.abs(x1) + np.abs(x2) + 1) * _TINY_WIDTH
        stop = open_ & (tiny | (height <= negligible) | (evaluated > _MAX_BOXES))
        if stop.any():  # unsettled: int g+ <= width * sup g+
            widths = (x2[stop] - x1[stop]) * (1 + 2.0**-50)
            region.widen(float((widths * height[stop]).sum()) * (1 + 2.0**-40))
        split = open_ & ~stop
        left, right = x1[split], x2[split]
        # each open box in _SPLIT parts (a round costs about the same for a few boxes or a hundred);
        # the outer cuts stay the boxes' own ends (the end boxes keep touching a and b)
        cut = left[:, None] + (right - left)[:, None] * (np.arange(_SPLIT + 1) / _SPLIT)[None, :]
        cut[:, 0], cut[:, -1] = left, right
        x1, x2 = cut[:, :-1].ravel(), cut[:, 1:].ravel()
    for low, high in _runs(positive):
        region.add(max(Fraction(low), a), min(Fraction(high), b))


def _runs(boxes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Boxes merged where they touch."""
    merged: list[tuple[float, float]] = []
    for low, high in sorted(boxes):
        if merged and merged[-1][1] >= low:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged
