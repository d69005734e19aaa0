"""``delta(eps)`` of mechanisms with continuous outputs: the hockey-stick divergence, certified.

For a pair of outputs ``P = M(D)``, ``Q = M(D')`` (Dwork, Roth 2014, Def. 2.4; Balle, Wang 2018)

    ``delta(eps) = sup_S P(S) - e^eps Q(S) = sum_atoms max(0, P(a) - e^eps Q(a)) + int max(0, p - e^eps q)``,

attained by ``S = {p > e^eps q}`` (the atoms where ``P(a) > e^eps Q(a)``, and on each label of a
:class:`~dpverify.densities.continuous.MixedOutput` the region where its density beats ``e^eps``
times the other). :func:`hockey_stick` finds that set exactly from the piecewise log-linear
structure (:mod:`dpverify.densities._region`: closed-form roots where both densities are single
exponentials, certified interval search where they are sums) and returns a :class:`HockeyStick`:

* the set ``S`` itself (readable in :attr:`HockeyStick.event`) and its exact masses ``P(S)`` and
  ``Q(S)`` (ExpSums: every interval end is rational, every integral closed form; built when first
  asked for, as for the worst pair and a witness);
* a certified enclosure ``[low, high]`` of ``delta(eps)``. ``P(S) - e^eps Q(S)`` is a lower bound
  (any set gives one) and ``delta`` exceeds it by at most the region's ``slack`` (what a root's
  bracket or an unsettled box could hide; 0 when ``exact``). The bounds are first read from a
  float64 evaluation of the same closed forms with a rigorous error bound
  (:meth:`~dpverify.densities.piecewise.PiecewiseExp.integral_float`, about ``1e-14`` wide);
  :meth:`HockeyStick.tightened` reads them from a 128-bit interval of the exact masses instead
  (a few ulps wide).

A :class:`~dpverify.densities.continuous.ProductOutput` (independent coordinates) whose pair
differs in one coordinate reduces to that coordinate (the others integrate to their common mass);
in two or more, ``delta`` is read from the exact law of the summed privacy loss
(:mod:`dpverify.densities._loss_convolution`: Laplace and exponential coordinates of one scale
each, at rational inputs); other products are refused with an :class:`InvalidArgument` that says
what is unsupported and what to do instead.

:class:`DeltaSweep` takes the worst case over the directed pairs of an input set at one eps or along
a grid (the privacy profile). Pairs are evaluated in decreasing order of a certified upper bound of
their ``delta`` (convexity in ``e^eps`` between what is known: the pair's certified ``sup p/q``,
where ``delta`` reaches 0, and ``delta`` already computed at other eps; see the class), the
likeliest worst pair first, and the sweep stops when no pair left can exceed the largest lower
bound found; the worst pair's bounds are then tightened (and any other pair's whose float bounds
reach above them). Densities, regions and product sets are computed once per content.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import mpmath

from dpverify.densities._enclosures import float_with_error, sign_of
from dpverify.densities._loss_convolution import LossDistribution, Unsupported, convolve, coordinate_loss
from dpverify.densities._region import positive_region
from dpverify.densities.piecewise import ExpSum, PiecewiseExp
from dpverify.errors import InvalidArgument

__all__ = ["HockeyStick", "WorstDelta", "DeltaSweep", "hockey_stick"]

_BITS = 128


@dataclass(frozen=True)
class HockeyStick:
    """``delta(eps)`` of one ordered pair: ``sup_S P(S) - e^eps Q(S)``, and the set that attains it.

    Attributes:
        epsilon: eps (exact).
        low, high: ``low <= delta(eps) <= high`` (certified floats).
        event: the set ``S``, readable (exact interval ends where they are short rationals).
        exact: ``S`` is exactly ``{p > e^eps q}`` up to a null set: ``delta(eps) = P(S) - e^eps Q(S)``.
        p_float, q_float: ``P(S)`` and ``Q(S)`` rounded (within the bounds' error; for guidance).
        method: ``"regions"`` (atoms and densities on the line) or ``"loss distribution"`` (a product
            whose pair differs in two or more coordinates).
        slack: what the region could not settle may add to ``delta`` (0 when ``exact``).
        p_mass, q_mass: ``P(S)`` and ``Q(S)`` exactly (ExpSums, computed when first asked for: the
            bounds come from a certified float64 evaluation of the same closed forms).
    """

    epsilon: Fraction
    low: float
    high: float
    event: str
    exact: bool
    p_float: float
    q_float: float
    masses: Callable[[], tuple[ExpSum, ExpSum]] = field(repr=False, compare=False)
    method: str = "regions"
    slack: float = 0.0

    @cached_property
    def _exact(self) -> tuple[ExpSum, ExpSum]:
        return self.masses()

    @property
    def p_mass(self) -> ExpSum:
        return self._exact[0]

    @property
    def q_mass(self) -> ExpSum:
        return self._exact[1]

    @property
    def value(self) -> ExpSum:
        """``P(S) - e^eps Q(S)`` exactly (a lower bound of ``delta(eps)``, equal to it when ``exact``)."""
        return self.p_mass - self.q_mass.times_exp(self.epsilon)

    def __float__(self) -> float:
        return self.value.to_float()

    @cached_property
    def _tightened(self) -> tuple[float, float]:
        return self._tighten()

    def tightened(self) -> tuple[float, float]:
        """``(low, high)`` from the exact masses (computed once; see :meth:`_tighten`)."""
        return self._tightened

    def _tighten(self) -> tuple[float, float]:
        """``(low, high)`` from the exact masses (a 128-bit interval of ``P(S) - e^eps Q(S)``, plus
        the slack ``high`` carries beyond the float bounds' value), within ``[low, high]``."""
        value = self.value
        if value.is_zero():
            return self.low, self.high
        interval = value.interval(_BITS)
        low = max(self.low, 0.0, math.nextafter(float(mpmath.mpf(interval.a)), -math.inf))
        high = math.nextafter(float(mpmath.mpf(interval.b)), math.inf)
        if self.slack:  # what the region left unsettled
            high = math.nextafter(high + self.slack, math.inf)
        return min(low, self.high), min(self.high, high)


_UNIT = 2.0**-53


def _bounds(P: tuple[float, float], Q: tuple[float, float], epsilon: Fraction, slack: float,
            empty: bool = False) -> tuple[float, float]:
    """A certified enclosure of ``delta`` in ``[P - e^eps Q, P - e^eps Q + slack]`` from float
    values with error bounds ``(v, err)`` of ``P(S)`` and ``Q(S)`` (the value is ``>= 0`` exactly:
    ``S`` lies where ``p >= e^eps q``). ``e^eps`` in float is within ``(|eps| + 3) u`` relative."""
    if empty:
        return 0.0, (0.0 if slack == 0 else math.nextafter(slack, math.inf))
    factor = math.exp(float(epsilon))
    value = P[0] - factor * Q[0]
    error = (P[1] + factor * Q[1] + factor * abs(Q[0]) * (abs(float(epsilon)) + 4) * _UNIT + abs(value) * 2 * _UNIT)
    error = error * 1.1 + 1e-300
    low = max(0.0, math.nextafter(value - error, -math.inf))
    high = min(1.0, math.nextafter(value + error + slack, math.inf))  # delta <= P(S) <= 1
    return low, high


def _sum_bounds(parts: list[tuple[float, float]]) -> tuple[float, float]:
    total = sum(v for v, _ in parts)
    magnitude = sum(abs(v) for v, _ in parts)
    return total, (sum(e for _, e in parts) + len(parts) * _UNIT * magnitude) * 1.1


def _exact_bounds(value: ExpSum) -> tuple[float, float]:
    fast = float_with_error(value)
    if fast is not None:
        return fast
    interval = value.interval(_BITS)
    return float(mpmath.mpf(interval.mid)), float(mpmath.mpf(interval.delta)) * 1.1 + 1e-300


def _describe(x: Fraction | None, infinite: str) -> str:
    if x is None:
        return infinite
    return str(x) if x.denominator <= 10**6 else f"{float(x):.17g}"


def _intervals_text(intervals: list) -> str:
    return " ∪ ".join(f"({_describe(a, '-inf')}, {_describe(b, '+inf')})" for a, b in intervals)


_ZERO_DENSITY = PiecewiseExp.constant(0)
_ONE = ExpSum.constant(1)


class _Parts:
    """What pairs share, computed once: each density's content key, its pieces' grouped forms, the
    region of each pair of densities at each eps, each product's loss law."""

    def __init__(self) -> None:
        self.keys: dict[int, tuple[PiecewiseExp, int]] = {}
        self.interned: dict[tuple, int] = {}
        self.groups: dict = {}
        self.regions: dict[tuple, tuple[list, float, tuple[float, float], tuple[float, float]]] = {}
        self.laws: dict[tuple, LossDistribution] = {}
        self.masses: dict[int, ExpSum] = {}
        self.sticks: dict[tuple, HockeyStick] = {}

    def key(self, function: PiecewiseExp) -> int:
        """Equal keys for equal piecewise functions (by content, interned to an int)."""
        found = self.keys.get(id(function))
        if found is None or found[0] is not function:
            content = (tuple(function.breaks), tuple(frozenset(piece.items()) for piece in function.pieces))
            found = (function, self.interned.setdefault(content, len(self.interned)))
            self.keys[id(function)] = found
        return found[1]

    def region(self, p: PiecewiseExp, q: PiecewiseExp, epsilon: Fraction):
        """``(intervals, slack, P(S) bounds, Q(S) bounds)`` of ``{p > e^eps q}``."""
        key = (self.key(p), self.key(q), epsilon)
        found = self.regions.get(key)
        if found is None:
            region = positive_region(p, q, epsilon, cache=self.groups)
            P = _sum_bounds([p.integral_float(a, b) for a, b in region.intervals])
            Q = _sum_bounds([q.integral_float(a, b) for a, b in region.intervals])
            found = (region.intervals, region.slack, P, Q)
            self.regions[key] = found
        return found

    def mass(self, p: PiecewiseExp) -> ExpSum:
        key = self.key(p)
        if key not in self.masses:
            self.masses[key] = p.integral()
        return self.masses[key]


def _exact_masses(intervals: list, p: PiecewiseExp, q: PiecewiseExp) -> tuple[ExpSum, ExpSum]:
    return (ExpSum.total([p.integral(a, b) for a, b in intervals]),
            ExpSum.total([q.integral(a, b) for a, b in intervals]))


def hockey_stick(first: Any, second: Any, epsilon: Any, *, parts: _Parts | None = None) -> HockeyStick:
    """``delta(epsilon)`` of ``first`` against ``second`` (two outputs of the same form), certified
    (module docstring). ``epsilon`` is rational and ``>= 0``.

    Raises:
        InvalidArgument: a product output differing in two or more coordinates that are not
            log-linear with a rational loss (see :mod:`dpverify.densities._loss_convolution`).
    """
    eps = Fraction(epsilon)
    if eps < 0:
        raise InvalidArgument(f"epsilon must be >= 0, got epsilon={epsilon!r}.")
    parts = _Parts() if parts is None else parts
    if hasattr(first, "factors"):  # a ProductOutput (continuous.py imports this module, not the reverse)
        return _product(first, second, eps, parts)
    pieces: list[str] = []
    P_parts: list[tuple[float, float]] = []
    Q_parts: list[tuple[float, float]] = []
    slack = 0.0
    atoms = []
    for outcome, p_atom in first.atoms.items():
        q_atom = second.atoms.get(outcome, ExpSum())
        excess = p_atom - q_atom.times_exp(eps)
        if not excess.is_zero() and sign_of(excess) > 0:
            atoms.append((p_atom, q_atom))
            pieces.append(repr(outcome))
            P_parts.append(_exact_bounds(p_atom))
            Q_parts.append(_exact_bounds(q_atom))
    pieces = ["{" + ", ".join(pieces) + "}"] if pieces else []
    labels = []
    for label, p in first.densities.items():
        q = second.densities.get(label, _ZERO_DENSITY)
        intervals, part_slack, P, Q = parts.region(p, q, eps)
        slack = math.nextafter(slack + part_slack, math.inf) if part_slack else slack
        if intervals:
            pieces.append(f"{label!r} in {_intervals_text(intervals)}")
            P_parts.append(P)
            Q_parts.append(Q)
            labels.append((intervals, p, q))

    def masses() -> tuple[ExpSum, ExpSum]:
        exact = [(P, Q) for P, Q in atoms] + [_exact_masses(*label) for label in labels]
        return ExpSum.total([P for P, _ in exact]), ExpSum.total([Q for _, Q in exact])

    P_total, Q_total = _sum_bounds(P_parts), _sum_bounds(Q_parts)
    low, high = _bounds(P_total, Q_total, eps, slack, empty=not P_parts)
    return HockeyStick(eps, low, high, " or ".join(pieces) or "nothing", slack == 0, P_total[0], Q_total[0], masses,
                       slack=slack)


def _product(first: Any, second: Any, eps: Fraction, parts: _Parts) -> HockeyStick:
    if len(first.factors) != len(second.factors):
        raise InvalidArgument("product outputs of different lengths cannot be compared")
    keys = [(parts.key(p), parts.key(q)) for p, q in zip(first.factors, second.factors)]
    differing = [i for i, (kp, kq) in enumerate(keys) if kp != kq]
    common = _ONE
    for i, p in enumerate(first.factors):
        if i not in differing:
            mass = parts.mass(p)
            common = common if mass == _ONE else mass if common == _ONE else common * mass
    # the set and its masses depend only on the differing coordinates and the others' common mass
    key = (tuple((i, *keys[i]) for i in differing), frozenset(common.terms.items()), eps)
    found = parts.sticks.get(key)
    if found is None:
        found = _product_stick(first, second, eps, parts, differing, common)
        parts.sticks[key] = found
    return found


def _product_stick(first: Any, second: Any, eps: Fraction, parts: _Parts, differing: list[int],
                   common: ExpSum) -> HockeyStick:
    if not differing:  # P = Q: delta(eps) = max(0, 1 - e^eps) = 0 for eps >= 0
        return HockeyStick(eps, 0.0, 0.0, "nothing", True, 0.0, 0.0, lambda: (ExpSum(), ExpSum()))
    scale = _exact_bounds(common)
    if len(differing) == 1:
        i = differing[0]
        p, q = first.factors[i], second.factors[i]
        intervals, slack, P, Q = parts.region(p, q, eps)
        P, Q = _product_bounds(P, scale), _product_bounds(Q, scale)

        def masses() -> tuple[ExpSum, ExpSum]:
            P_exact, Q_exact = _exact_masses(intervals, p, q)
            return P_exact * common, Q_exact * common

        low, high = _bounds(P, Q, eps, slack, empty=not intervals)
        event = f"x{i} in {_intervals_text(intervals)}" if intervals else "nothing"
        return HockeyStick(eps, low, high, event, slack == 0, P[0], Q[0], masses, slack=slack)
    law = _law(first, second, differing, parts)
    P_exact, Q_exact = law.set_masses(eps)
    P_exact, Q_exact = P_exact * common, Q_exact * common
    P, Q = _exact_bounds(P_exact), _exact_bounds(Q_exact)
    low, high = _bounds(P, Q, eps, 0.0, empty=P_exact.is_zero())
    names = ", ".join(f"x{i}" for i in differing)
    event = f"sum of ln(p_i(x_i)/q_i(x_i)) over {names} > {eps}"
    return HockeyStick(eps, low, high, event, True, P[0], Q[0], lambda: (P_exact, Q_exact), "loss distribution")


def _product_bounds(value: tuple[float, float], scale: tuple[float, float]) -> tuple[float, float]:
    """Bounds of a product of two values given with error bounds."""
    product = value[0] * scale[0]
    error = abs(value[0]) * scale[1] + abs(scale[0]) * value[1] + value[1] * scale[1] + abs(product) * _UNIT
    return product, error * 1.1


def _law(first: Any, second: Any, differing: list[int], parts: _Parts) -> LossDistribution:
    key = tuple((parts.key(first.factors[i]), parts.key(second.factors[i])) for i in differing)
    law = parts.laws.get(key)
    if law is not None:
        return law
    for i in differing:
        try:
            coordinate = coordinate_loss(first.factors[i], second.factors[i])
        except Unsupported as reason:
            raise InvalidArgument(
                f"delta(eps) of a product output whose pair differs in {len(differing)} coordinates is computed "
                f"from the exact law of the summed privacy loss, which needs every differing coordinate to be "
                f"log-linear with a rational loss (Laplace or exponential noise of one scale per coordinate); "
                f"coordinate {i}: {reason}. Decide a pure claim (delta=0) instead, or compare pairs that differ "
                f"in one coordinate (e.g. differ='one'), where any piecewise-exponential density is supported."
            ) from None
        law = coordinate if law is None else convolve(law, coordinate)
    assert law is not None
    parts.laws[key] = law
    return law


# -- the worst case over pairs ---------------------------------------------------------------------


@dataclass(frozen=True)
class WorstDelta:
    """The worst ``delta(eps)`` over the directed pairs of an input set.

    Attributes:
        epsilon: eps (exact).
        low, high: ``low <= max delta <= high`` (certified).
        value: the worst pair's ``P(S) - e^eps Q(S)`` rounded to the nearest float (in
            ``[low, high]``; the exact worst case when that pair's set is exact).
        pair: the worst directed pair ``(D, D')`` (``P = M(D)``), None when every delta is 0.
        stick: its :class:`HockeyStick`.
        computed: directed pairs whose delta was computed (the others were bounded below ``low``).
    """

    epsilon: Fraction
    low: float
    high: float
    value: float
    pair: tuple | None
    stick: HockeyStick | None
    computed: int


@dataclass
class DeltaSweep:
    """The worst ``delta(eps)`` over directed pairs, at any eps, with pruning (module docstring).

    Certified bounds of a pair's ``delta`` without computing it, in ``t = e^eps``: ``delta`` is a
    supremum of the affine functions ``P(S) - t Q(S)``, so it is convex and non-increasing in ``t``,
    1 at ``t = 0`` and 0 from ``t = R`` on (``R``: a certified bound of ``sup P/Q``, the pure loss).
    Every ``delta`` computed at another eps adds a point ``(t, high)``; at ``t`` the chord between the
    nearest known points on either side bounds ``delta`` from above (right of every point: the last
    one, as ``delta`` decreases), and every set ``S`` found at another eps gives the lower bound
    ``P(S) - t Q(S)``. ``delta(0)``, the total variation distance, is the same both ways: the reverse
    pair's set is the complement.

    Args:
        outputs: dataset -> output (:class:`MixedOutput` or :class:`ProductOutput`).
        directed: the directed pairs ``(D, D')`` to take the worst case over.
        ratio_bounds: a certified upper bound of ``sup P/Q`` (a ratio, ``inf`` allowed) per directed
            pair, for pruning; pairs without one are bounded by 1.
    """

    outputs: Mapping[Hashable, Any]
    directed: Sequence[tuple]
    ratio_bounds: Mapping[tuple, float] = field(default_factory=dict)
    parts: _Parts = field(default_factory=_Parts)
    _points: dict = field(default_factory=dict)  # pair -> [(t rounded, certified upper bound of delta(t))]
    _sticks: dict = field(default_factory=dict)  # (pair, eps) -> HockeyStick
    _sets: dict = field(default_factory=dict)  # pair -> [(P(S), Q(S)) as floats] of the sets found
    _complements: dict = field(default_factory=dict)  # id(stick) -> the reverse pair's stick at eps = 0

    def stick(self, pair: tuple, epsilon: Fraction) -> HockeyStick:
        """``delta(eps)`` of one directed pair (computed once)."""
        found = self._sticks.get((pair, epsilon))
        if found is None:
            reverse = self._sticks.get((pair[::-1], epsilon)) if epsilon == 0 else None
            if reverse is not None:  # total variation: the complement of the reverse pair's set
                found = self._complements.get(id(reverse))
                if found is None:
                    found = HockeyStick(
                        epsilon, reverse.low, reverse.high, f"not ({reverse.event})", reverse.exact,
                        1 - reverse.q_float, 1 - reverse.p_float, lambda: (1 - reverse.q_mass, 1 - reverse.p_mass),
                        reverse.method, reverse.slack,
                    )
                    self._complements[id(reverse)] = found  # (reverse stays in _sticks: its id stays its own)
            else:
                found = hockey_stick(self.outputs[pair[0]], self.outputs[pair[1]], epsilon, parts=self.parts)
            self._sticks[(pair, epsilon)] = found
            self._points.setdefault(pair, []).append((math.exp(float(epsilon)), found.high))
            self._sets.setdefault(pair, []).append((found.p_float, found.q_float))
        return found

    def computed(self, epsilon: Fraction) -> list[HockeyStick]:
        """The pairs' hockey sticks computed so far at ``epsilon``."""
        return [stick for (_, e), stick in self._sticks.items() if e == epsilon]

    def upper(self, pair: tuple, epsilon: Fraction) -> float:
        """A certified upper bound of ``delta(eps)`` of ``pair`` from what is known (class docstring)."""
        t = math.exp(float(epsilon))
        points = [(0.0, 1.0), *self._points.get(pair, ())]
        ratio = self.ratio_bounds.get(pair, math.inf)
        if ratio < math.inf:
            points.append((ratio * (1 + 2.0**-40), 0.0))  # R rounded up: delta is 0 from there on
        # the nearest points either side (at equal t the smaller bound)
        left = max((point for point in points if point[0] <= t), key=lambda point: (point[0], -point[1]))
        right = min((point for point in points if point[0] >= t), default=None)
        if right is None or right[0] - left[0] <= 1e-6 * t:  # (a chord this short would not survive rounding)
            return left[1]  # delta only decreases from the left point on
        weight = (t - left[0]) / (right[0] - left[0])
        chord = left[1] + (right[1] - left[1]) * weight
        # the chord in float: its weights are off by a few ulps, each bound by 1
        return min(left[1], max(0.0, chord * (1 + 2.0**-40) + 2.0**-50 * max(left[1], right[1])))

    def lower(self, pair: tuple, epsilon: Fraction) -> float:
        """A lower bound of ``delta(eps)`` of ``pair`` from the sets found at other eps (a guide for
        the order of work: figures come from the sets computed at ``eps`` itself)."""
        t = math.exp(float(epsilon))
        return max([p - t * q for p, q in self._sets.get(pair, ())] + [0.0])

    def at(self, epsilon: Any) -> WorstDelta:
        """The worst case at ``epsilon`` (rational, ``>= 0``)."""
        eps = Fraction(epsilon)
        uppers = [self.upper(pair, eps) for pair in self.directed]
        order = sorted(range(len(self.directed)), key=lambda i: -uppers[i])
        guess = max(range(len(self.directed)), key=lambda i: self.lower(self.directed[i], eps), default=None)
        if guess is not None:
            order.remove(guess)
            order.insert(0, guess)  # likely the worst: found first, it prunes the most
        best_low, best = 0.0, None
        highs: list[float] = []
        sticks: list[HockeyStick] = []
        for index in order:
            bound = uppers[index]
            if bound == 0.0 or (bound <= best_low and index != guess):
                if index == guess:
                    continue
                break  # this pair and every later one is bounded by what was found
            pair = self.directed[index]
            found = self.stick(pair, eps)
            highs.append(found.high)
            sticks.append(found)
            if best is None or found.low > best_low or (found.low == best_low and found.high > best[1].high):
                best_low, best = found.low, (pair, found)
        if best is None or best[1].high == 0.0:
            return WorstDelta(eps, 0.0, max(highs, default=0.0), 0.0, None, None, len(highs))
        pair, stick = best
        # the worst pair's bounds from its exact masses; every other pair's high still counts
        low, best_high = stick.tightened()
        for other in {id(found): found for found in sticks}.values():
            if other is not stick and other.high > best_high:  # float bounds past the worst one's: tightened too
                best_high = max(best_high, other.tightened()[1])
        return WorstDelta(eps, low, best_high, stick.value.to_float(), pair, stick, len(highs))

    def profile(self, epsilons: Sequence[Any]) -> list[WorstDelta]:
        """The worst case at every eps of a grid (computed in increasing order: each bounds the next)."""
        exact = [Fraction(e) for e in epsilons]
        found = {e: self.at(e) for e in sorted(set(exact))}
        return [found[e] for e in exact]
