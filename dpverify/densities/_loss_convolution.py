"""The privacy-loss distribution of a vector of independent noisy values (internal to
:mod:`dpverify.densities.hockey_stick`).

For independent coordinates the privacy loss ``L(x) = ln p(x)/q(x)`` of a product
``p = prod p_i`` against ``q = prod q_i`` is the sum of the coordinates' losses
``L_i(x_i) = ln p_i(x_i)/q_i(x_i)``, independent under ``X ~ p``, and (Balle, Wang 2018, Thm. 5;
Sommer, Meiser, Mohammadi 2019)

    ``delta(eps) = P(L > eps) - e^eps E_P[e^(-L) 1{L > eps}]``,  ``S = {x : L(x) > eps}`` the best set,

with ``P(S) = P(L > eps)`` and ``Q(S) = E_P[e^(-L) 1{L > eps}]``. This module computes the law of
``L`` under ``p`` exactly when every differing coordinate is *log-linear with a rational loss*: on
each piece between breakpoints ``p_i = A e^(r_p x)`` and ``q_i = B e^(r_q x)`` (one group of degree
0 each) with ``A / B = e^k``, ``k`` rational — Laplace and exponential noise of one scale per
coordinate, at rational inputs. Then ``L_i`` is piecewise linear with rational slope and offset:

* where the slope is 0 (Laplace's outer pieces) ``L_i = k`` is an *atom* of mass ``int_piece p_i``;
* where the slope ``s = r_p - r_q`` is not 0, ``L_i`` maps the piece (finite: an infinite one would
  make ``L_i`` unbounded, refused) onto an interval, and its law there has the density
  ``p_i((l - k)/s) / |s|``, again a single exponential in ``l`` with rational rate;
* where ``q_i = 0 < p_i`` the loss is ``+inf`` with mass ``int_piece p_i``.

Sums of independent losses are convolutions: atoms with atoms (masses multiply), atoms shift
densities, and two compactly supported piecewise-exponential densities convolve, piece by piece, to
a piecewise polynomial-exponential density with breakpoints at sums of breakpoints (the integral
``int f(t) g(s - t) dt`` over ``t`` between bounds that are constants or ``s`` minus a constant,
in closed form). Every mass and every breakpoint stays exact (ExpSums and Fractions), so
``P(S)``, ``Q(S)`` and ``delta(eps)`` are exact. Coordinates outside this class raise
:class:`Unsupported`, saying why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dpverify.densities._enclosures import groups
from dpverify.densities.piecewise import ExpSum, PiecewiseExp

__all__ = ["LossDistribution", "Unsupported", "coordinate_loss", "convolve"]

_ZERO = Fraction(0)


class Unsupported(Exception):
    """A coordinate whose loss is not piecewise linear with rational slopes and offsets."""


@dataclass(frozen=True)
class LossDistribution:
    """The law of a privacy loss ``L`` under ``X ~ p``: finite atoms ``{l: P(L = l)}``, the mass at
    ``+inf`` and a density in ``l`` that is 0 outside its first and last breakpoints."""

    atoms: dict[Fraction, ExpSum]
    infinite: ExpSum
    density: PiecewiseExp

    def total(self) -> ExpSum:
        return ExpSum.total([*self.atoms.values(), self.infinite, self.density.integral()])

    def set_masses(self, epsilon: Fraction) -> tuple[ExpSum, ExpSum]:
        """``(P(L > eps), E_P[e^(-L) 1{L > eps}])`` exactly: ``P(S)`` and ``Q(S)`` of ``S = {L > eps}``."""
        tail = [m for value, m in self.atoms.items() if value > epsilon]
        discounted = [m.times_exp(-value) for value, m in self.atoms.items() if value > epsilon]
        P = ExpSum.total([self.infinite, *tail, self.density.integral(epsilon, None)])
        Q = ExpSum.total([*discounted, (self.density * _EXP_MINUS).integral(epsilon, None)])
        return P, Q


_EXP_MINUS = PiecewiseExp([], [{(Fraction(-1), _ZERO, 0): Fraction(1)}])  # l -> e^(-l)


def _supported(low: Fraction, high: Fraction, terms: dict) -> PiecewiseExp:
    """``terms`` on ``[low, high]``, 0 elsewhere."""
    return PiecewiseExp([low, high], [{}, dict(terms), {}])


def _times(terms: dict, mass: ExpSum) -> dict:
    """Terms multiplied by an exact number ``sum_j c_j e^(e_j)``."""
    out: dict = {}
    for (r, e, d), a in terms.items():
        for e2, c in mass.terms.items():
            key = (r, e + e2, d)
            out[key] = out.get(key, 0) + a * c
    return {k: a for k, a in out.items() if a}


def _sum(parts: list[tuple[Fraction, Fraction, dict]]) -> PiecewiseExp:
    """The sum of functions each given by terms on ``[low, high]`` (0 elsewhere)."""
    points = sorted({x for low, high, _ in parts for x in (low, high)})
    if not points:
        return PiecewiseExp.constant(0)
    pieces: list[dict] = [{}]
    for left, right in zip(points[:-1], points[1:]):
        merged: dict = {}
        for low, high, terms in parts:
            if low <= left and right <= high:
                for key, a in terms.items():
                    merged[key] = merged.get(key, 0) + a
        pieces.append({k: a for k, a in merged.items() if a})
    pieces.append({})
    return PiecewiseExp(points, pieces)


def _parts(density: PiecewiseExp) -> list[tuple[Fraction, Fraction, dict]]:
    """The non-zero finite pieces of a compactly supported density."""
    if density.pieces[0] or density.pieces[-1]:
        raise Unsupported("the loss density is not compactly supported")
    return [(density.breaks[j - 1], density.breaks[j], density.pieces[j])
            for j in range(1, len(density.breaks)) if density.pieces[j]]


def coordinate_loss(p: PiecewiseExp, q: PiecewiseExp) -> LossDistribution:
    """The law of ``ln p(X)/q(X)`` under ``X ~ p`` (module docstring), or :class:`Unsupported`."""
    atoms: dict[Fraction, ExpSum] = {}
    infinite = ExpSum()
    parts: list[tuple[Fraction, Fraction, dict]] = []
    breaks = sorted(set(p.breaks) | set(q.breaks))
    ends: list[Fraction | None] = [None, *breaks, None]
    for j in range(len(ends) - 1):
        low, high = ends[j], ends[j + 1]
        tp, tq = p.piece_at(low), q.piece_at(low)
        if not tp:
            continue
        mass = p.integral(low, high)
        if not tq:
            infinite = infinite + mass
            continue
        gp = groups([(r, e, d, a) for (r, e, d), a in tp.items()])
        gq = groups([(r, e, d, a) for (r, e, d), a in tq.items()])
        if len(gp) != 1 or len(gq) != 1:
            raise Unsupported(f"on ({_show(low)}, {_show(high)}) a density is a sum of exponentials (not log-linear)")
        ((rp, dp), A), ((rq, dq), B) = next(iter(gp.items())), next(iter(gq.items()))
        if dp or dq:
            raise Unsupported(f"on ({_show(low)}, {_show(high)}) a density has a polynomial factor (not log-linear)")
        offset = _log_ratio(A, B)
        if offset is None:
            raise Unsupported(
                f"on ({_show(low)}, {_show(high)}) the loss offset ln({A.to_sympy()} / ({B.to_sympy()})) is not rational "
                "(the two densities' coefficients differ by more than a factor e^k: different noise scales?)"
            )
        slope = rp - rq
        if slope == 0:
            atoms[offset] = atoms.get(offset, ExpSum()) + mass
            continue
        if low is None or high is None:
            raise Unsupported(f"the loss is unbounded on ({_show(low)}, {_show(high)}) (different noise scales?)")
        # L = slope x + offset; x = (l - offset)/slope; p(x) = A e^(rp x): a density in l of rate rp/slope
        terms = {(rp / slope, e - rp * offset / slope, 0): a / abs(slope) for e, a in A.terms.items()}
        ends_l = sorted((slope * low + offset, slope * high + offset))
        parts.append((ends_l[0], ends_l[1], terms))
    return LossDistribution(atoms, infinite, _sum(parts))


def _log_ratio(A: ExpSum, B: ExpSum) -> Fraction | None:
    """``k`` with ``A = e^k B`` exactly, or None."""
    if len(A.terms) != len(B.terms) or not A.terms:
        return None
    k = min(A.terms) - min(B.terms)
    return k if B.times_exp(k) == A else None


def _show(x: Fraction | None) -> str:
    return ("-inf" if x is None else str(x)) if x is None or x.denominator < 10**6 else f"{float(x):.17g}"


def convolve(first: LossDistribution, second: LossDistribution) -> LossDistribution:
    """The law of ``L1 + L2`` for independent ``L1 ~ first``, ``L2 ~ second``."""
    atoms: dict[Fraction, ExpSum] = {}
    for a, ma in first.atoms.items():
        for b, mb in second.atoms.items():
            atoms[a + b] = atoms.get(a + b, ExpSum()) + ma * mb
    # L1 + L2 = +inf when either is: P(L1 = inf) P(L2 anything) + P(L1 finite) P(L2 = inf)
    infinite = first.infinite * second.total() + (first.total() - first.infinite) * second.infinite
    parts: list[tuple[Fraction, Fraction, dict]] = []
    f_parts, g_parts = _parts_or_empty(first.density), _parts_or_empty(second.density)
    for a, ma in first.atoms.items():  # L1 = a: the density of L2 shifted by a
        parts += [(low + a, high + a, _times(_shift(terms, -a), ma)) for low, high, terms in g_parts]
    for b, mb in second.atoms.items():
        parts += [(low + b, high + b, _times(_shift(terms, -b), mb)) for low, high, terms in f_parts]
    for fa, fb, f_terms in f_parts:
        for ga, gb, g_terms in g_parts:
            parts += _convolve_pieces(fa, fb, f_terms, ga, gb, g_terms)
    return LossDistribution({k: m for k, m in atoms.items() if not m.is_zero()}, infinite, _sum(parts))


def _parts_or_empty(density: PiecewiseExp) -> list[tuple[Fraction, Fraction, dict]]:
    return [] if not density.breaks and not any(density.pieces) else _parts(density)


def _shift(terms: dict, offset: Fraction) -> dict:
    """Terms of ``x -> f(x + offset)``."""
    return PiecewiseExp([], [terms]).shift(offset).pieces[0]


def _convolve_pieces(fa: Fraction, fb: Fraction, f_terms: dict, ga: Fraction, gb: Fraction, g_terms: dict) -> list:
    """``h(s) = int f(t) g(s - t) dt`` for ``f`` on ``[fa, fb]`` and ``g`` on ``[ga, gb]``, as terms on
    up to three intervals of ``s``: ``t`` runs from ``max(fa, s - gb)`` to ``min(fb, s - ga)``."""
    primitive = _primitive(f_terms, g_terms)
    s0, s3 = fa + ga, fb + gb
    s1, s2 = min(fb + ga, fa + gb), max(fb + ga, fa + gb)
    out = []
    if s0 < s1:  # t from fa to s - ga
        out.append((s0, s1, _difference(_at_shift(primitive, ga), _at_constant(primitive, fa))))
    if s1 < s2:
        if fb + ga <= fa + gb:  # f narrower: t over all of [fa, fb]
            out.append((s1, s2, _difference(_at_constant(primitive, fb), _at_constant(primitive, fa))))
        else:  # t from s - gb to s - ga
            out.append((s1, s2, _difference(_at_shift(primitive, ga), _at_shift(primitive, gb))))
    if s2 < s3:  # t from s - gb to fb
        out.append((s2, s3, _difference(_at_constant(primitive, fb), _at_shift(primitive, gb))))
    return out


def _primitive(f_terms: dict, g_terms: dict) -> list[tuple]:
    """An antiderivative in ``t`` of ``f(t) g(s - t)``, as terms
    ``coefficient s^sd e^(rho s + exponent) t^td e^(lam t)``: ``(rho, exponent, sd, td, lam, coefficient)``."""
    out = []
    for (r, e, d), a in f_terms.items():
        for (rho, eta, m), b in g_terms.items():
            lam = r - rho
            # g(s - t) = b e^(rho s + eta) sum_k C(m, k) s^(m - k) (-t)^k e^(-rho t)
            for k in range(m + 1):
                coefficient = a * b * math.comb(m, k) * (-1) ** k
                n = d + k
                if lam == 0:
                    out.append((rho, e + eta, m - k, n + 1, lam, coefficient / (n + 1)))
                    continue
                falling = 1
                for j in range(n + 1):  # int t^n e^(lam t) = e^(lam t) sum_j (-1)^j n!/(n-j)! t^(n-j) / lam^(j+1)
                    out.append((rho, e + eta, m - k, n - j, lam, coefficient * (-1) ** j * falling / lam ** (j + 1)))
                    falling *= n - j
    return out


def _at_constant(primitive: list, c: Fraction) -> dict:
    """The primitive at ``t = c``, as terms in ``s``."""
    out: dict = {}
    for rho, exponent, sd, td, lam, coefficient in primitive:
        key = (rho, exponent + lam * c, sd)
        out[key] = out.get(key, 0) + coefficient * c**td
    return out


def _at_shift(primitive: list, c: Fraction) -> dict:
    """The primitive at ``t = s - c``: ``(s - c)^td e^(lam s - lam c)`` expanded in powers of ``s``."""
    out: dict = {}
    for rho, exponent, sd, td, lam, coefficient in primitive:
        for u in range(td + 1):
            key = (rho + lam, exponent - lam * c, sd + u)
            out[key] = out.get(key, 0) + coefficient * math.comb(td, u) * (-c) ** (td - u)
    return out


def _difference(upper: dict, lower: dict) -> dict:
    out = dict(upper)
    for key, a in lower.items():
        out[key] = out.get(key, 0) - a
    return {k: a for k, a in out.items() if a}
