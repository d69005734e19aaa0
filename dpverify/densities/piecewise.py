"""Exact sums of exponentials and piecewise-exponential functions of one real variable.

The output probabilities of Laplace and exponential noise programs (noisy max, the sparse vector
technique, noisy histograms) are integrals of products of densities, CDFs and tails of the noise.
For rational inputs and rational noise scales every one of those functions is, between finitely
many rational breakpoints, a finite sum ``sum_k a_k exp(r_k x + e_k)`` with rational ``a_k, r_k,
e_k`` (times a power of ``x`` where rates cancel), and so is every product; integrating a piece gives again ``sum_j a_j exp(e_j)``. This module
keeps both kinds of object exact:

* :class:`ExpSum` — a real number ``sum_j a_j exp(e_j)``, ``a_j, e_j`` Fractions, equal exponents
  merged. By the Lindemann–Weierstrass theorem (Baker's form: ``exp`` of distinct algebraic
  numbers are linearly independent over the algebraic numbers), such a sum is zero *iff* every
  merged coefficient is zero. So equality is decided structurally, and the sign of a non-zero sum
  by interval evaluation at growing precision, which always terminates: :meth:`ExpSum.sign` is
  exact. :meth:`ExpSum.to_float` is certified (the float is the exact value rounded, within
  ``2**-52`` relative), :meth:`ExpSum.interval` a rigorous mpmath enclosure,
  :meth:`ExpSum.to_sympy` the exact sympy expression.
* :class:`PiecewiseExp` — a function of ``x`` given by sorted rational breakpoints and, on each of
  the pieces between them, a dict ``{(r, e, d): a}`` standing for ``sum a x^d exp(r x + e)`` (the
  powers of ``x`` appear when equal rates cancel, e.g. in an antiderivative). Products, shifts,
  antiderivatives and integrals over any interval are exact (``int a exp(r x + e) dx`` is
  ``a/r (exp(r hi + e) - exp(r lo + e))``, or ``a (hi - lo) exp(e)`` at ``r = 0``; ``x^d`` by
  parts). Values at the
  breakpoints themselves are never used: every quantity computed here is an integral (or a density
  compared almost everywhere), on which a point has no weight.

Irrational scales are out of scope (use :mod:`dpverify.mechanisms.laplace`'s sympy mode): every number here
is a Fraction, floats being read as the binary rationals they are.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from numbers import Integral, Real
from typing import Any

import mpmath
import sympy

from dpverify.errors import InvalidArgument

__all__ = ["ExpSum", "PiecewiseExp", "as_fraction", "Terms"]

#: ``{(rate, exponent, degree): coefficient}``: ``sum coefficient x^degree exp(rate x + exponent)`` on one piece.
Terms = dict

_MAX_SIGN_BITS = 1 << 14


def as_fraction(name: str, value: Any) -> Fraction:
    """``value`` as an exact Fraction (ints, Fractions, sympy rationals; floats read exactly)."""
    if isinstance(value, bool):
        raise InvalidArgument(f"{name} must be a real number, got {name}={value!r}.")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, Integral):
        return Fraction(int(value))
    if isinstance(value, sympy.Basic):
        if value.is_Rational:
            return Fraction(int(value.p), int(value.q))
        if isinstance(value, sympy.Float):
            return Fraction(float(value))
        raise InvalidArgument(
            f"{name} must be rational for the exact noise programs, got {name}={value}; pass a Fraction "
            "(e.g. Fraction(7, 10)) or a float."
        )
    if isinstance(value, Real):
        number = float(value)
        if not math.isfinite(number):
            raise InvalidArgument(f"{name} must be a finite real number, got {name}={value!r}.")
        return Fraction(number)
    raise InvalidArgument(f"{name} must be a real number (int, float, Fraction), got {name}={value!r}.")


class ExpSum:
    """An exact real number ``sum_j a_j exp(e_j)`` (``a_j``, ``e_j`` Fractions, distinct ``e_j``).

    Immutable; ``terms`` maps each exponent to its non-zero coefficient.
    """

    __slots__ = ("terms", "_float", "_interval")

    def __init__(self, terms: Mapping[Fraction, Fraction] | None = None) -> None:
        self.terms: dict[Fraction, Fraction] = _without_zeros(terms)
        self._float: float | None = None
        self._interval: tuple[int, Any] | None = None  # the last interval(bits) computed: (bits, enclosure)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def constant(cls, value: Any) -> ExpSum:
        return cls({Fraction(0): as_fraction("value", value)})

    @classmethod
    def _owned(cls, terms: dict[Fraction, Fraction]) -> ExpSum:
        """An ExpSum of a dict just built by the caller, taken as it is (not copied): its zero
        coefficients are deleted in place (the order of the rest is kept, as the copying constructor
        keeps it)."""
        zeros = [e for e, a in terms.items() if not a]
        for e in zeros:
            del terms[e]
        value = cls.__new__(cls)
        value.terms = terms
        value._float = None
        value._interval = None
        return value

    @classmethod
    def exp(cls, exponent: Any, coefficient: Any = 1) -> ExpSum:
        """``coefficient * exp(exponent)``."""
        return cls({as_fraction("exponent", exponent): as_fraction("coefficient", coefficient)})

    @staticmethod
    def total(values: Iterable[ExpSum]) -> ExpSum:
        """The exact sum: per exponent, the coefficients added as integers over their common
        denominator (one Fraction per exponent instead of one Fraction addition, with its gcd, per
        term; the same value)."""
        groups: dict[Fraction, list[Fraction]] = {}
        for value in values:
            for e, a in value.terms.items():
                group = groups.get(e)
                if group is None:
                    groups[e] = [a]
                else:
                    group.append(a)
        return ExpSum._owned({e: _exact_sum(group) for e, group in groups.items()})

    # -- arithmetic -----------------------------------------------------------------------------

    def __add__(self, other: Any) -> ExpSum:
        other = _lift(other)
        terms = dict(self.terms)
        for e, a in other.terms.items():
            terms[e] = terms.get(e, 0) + a
        return ExpSum._owned(terms)

    __radd__ = __add__

    def __neg__(self) -> ExpSum:
        return ExpSum._owned({e: -a for e, a in self.terms.items()})

    def __sub__(self, other: Any) -> ExpSum:
        # self + (-other) in one pass (x - a is x + (-a) exactly; the same keys in the same order)
        other = _lift(other)
        terms = dict(self.terms)
        for e, a in other.terms.items():
            terms[e] = terms.get(e, 0) - a
        return ExpSum._owned(terms)

    def __rsub__(self, other: Any) -> ExpSum:
        return _lift(other) - self

    def __mul__(self, other: Any) -> ExpSum:
        if isinstance(other, (int, Fraction)):
            return ExpSum._owned({e: a * other for e, a in self.terms.items()})
        other = _lift(other)
        terms: dict[Fraction, Fraction] = {}
        for e1, a1 in self.terms.items():
            for e2, a2 in other.terms.items():
                e = e1 + e2
                terms[e] = terms.get(e, 0) + a1 * a2
        return ExpSum._owned(terms)

    __rmul__ = __mul__

    def times_exp(self, exponent: Fraction) -> ExpSum:
        """``self * exp(exponent)`` (exact)."""
        return ExpSum._owned({e + exponent: a for e, a in self.terms.items()})

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, Fraction)):
            other = ExpSum.constant(other)
        if not isinstance(other, ExpSum):
            return NotImplemented
        return self.terms == other.terms  # exact by Lindemann–Weierstrass (module docstring)

    def __hash__(self) -> int:
        return hash(frozenset(self.terms.items()))

    def __repr__(self) -> str:
        return f"ExpSum({self.to_sympy()})"

    def is_zero(self) -> bool:
        return not self.terms

    # -- evaluation -----------------------------------------------------------------------------

    def interval(self, bits: int = 128):
        """A rigorous mpmath interval containing the value (at ``bits`` of working precision).

        Memoised: the last one computed is kept on the object, and every one by content (the terms in
        their order, which is the order they are summed in, and ``bits``): the same values are
        enclosed again for every pair they occur in, often as new objects. A memoised enclosure is
        the one the computation gives (it depends on nothing else)."""
        if self._interval is not None and self._interval[0] == bits:
            return self._interval[1]
        key = (bits, tuple(self.terms.items()))
        value = _INTERVALS.get(key)
        if value is None:
            if len(_INTERVALS) >= _MAX_INTERVALS:
                _INTERVALS.clear()
            value = _INTERVALS[key] = self._enclose(bits)
        self._interval = (bits, value)
        return value

    def _enclose(self, bits: int):
        iv = mpmath.iv
        old = iv.prec
        try:
            iv.prec = bits
            total = iv.mpf(0)
            for e, a in self.terms.items():
                total += iv.mpf(a.numerator) / a.denominator * _exp_iv(e, bits)
            return total
        finally:
            iv.prec = old

    def sign(self) -> int:
        """The exact sign (-1, 0, 1): zero iff no term is left after merging (module docstring)."""
        if not self.terms:
            return 0
        if len(self.terms) == 1:
            return 1 if next(iter(self.terms.values())) > 0 else -1
        bits = 64
        while bits <= _MAX_SIGN_BITS:
            value = self.interval(bits)
            if value.a > 0:
                return 1
            if value.b < 0:
                return -1
            bits *= 2
        raise AssertionError(f"internal error: could not separate {self!r} from 0 at {_MAX_SIGN_BITS} bits")

    def to_float(self) -> float:
        """The value rounded to float64, certified: within ``2**-52`` relative of the exact value
        (memoised on the object and by content, as :meth:`interval`)."""
        if self._float is None:
            key = tuple(self.terms.items())
            value = _FLOATS.get(key)
            if value is None:
                if len(_FLOATS) >= _MAX_INTERVALS:
                    _FLOATS.clear()
                value = _FLOATS[key] = _certified_float(self.terms)
            self._float = value
        return self._float

    def __float__(self) -> float:
        return self.to_float()

    def to_sympy(self) -> sympy.Expr:
        """The exact sympy expression ``sum a_j exp(e_j)``."""
        return sympy.Add(
            *(sympy.Rational(a.numerator, a.denominator) * sympy.exp(sympy.Rational(e.numerator, e.denominator))
              for e, a in sorted(self.terms.items()))
        )


def _without_zeros(terms: Mapping[Any, Any] | None) -> dict:
    """A copy of ``terms`` without its zero coefficients. ``dict(terms)`` reuses the stored hashes of
    a dict's keys (a Fraction's hash costs a modular inverse), so only the zero keys are hashed again."""
    if not terms:
        return {}
    copy = dict(terms)
    zeros = [key for key, a in copy.items() if not a]
    for key in zeros:
        del copy[key]
    return copy


def _exact_sum(numbers: list[Fraction]) -> Fraction:
    """``sum(numbers)`` exactly, as integers over the common denominator (one normalisation)."""
    if len(numbers) == 1:
        return numbers[0]
    denominator = 1
    for number in numbers:
        d = number.denominator
        if denominator % d:
            denominator = denominator // math.gcd(denominator, d) * d
    return Fraction(sum(number.numerator * (denominator // number.denominator) for number in numbers), denominator)


def _lift(value: Any) -> ExpSum:
    if isinstance(value, ExpSum):
        return value
    if isinstance(value, (int, Fraction)):
        return ExpSum({Fraction(0): Fraction(value)})
    raise TypeError(f"cannot combine ExpSum with {type(value).__name__}")


_EXP_CACHE: dict[tuple[Fraction, int], Any] = {}


def _exp_mpf(e: Fraction, dps: int):
    key = (e, dps)
    value = _EXP_CACHE.get(key)
    if value is None:
        if len(_EXP_CACHE) > 200_000:
            _EXP_CACHE.clear()
        value = mpmath.exp(mpmath.mpf(e.numerator) / e.denominator)
        _EXP_CACHE[key] = value
    return value


_EXP_IV_CACHE: dict[tuple[Fraction, int], Any] = {}
#: ExpSum.interval's enclosures by (bits, the terms in order).
_INTERVALS: dict[tuple[int, tuple[tuple[Fraction, Fraction], ...]], Any] = {}
_MAX_INTERVALS = 20_000  # each entry keeps its terms: a bounded memo (cleared when full)
#: ExpSum.to_float's certified floats by the terms in order (at most _MAX_INTERVALS).
_FLOATS: dict[tuple[tuple[Fraction, Fraction], ...], float] = {}


def _exp_iv(e: Fraction, bits: int):
    """``iv.exp(e)`` at ``bits`` of precision (the caller has set ``iv.prec = bits``), memoised: the
    same exponents recur in every probability of a mechanism, and the enclosure is the same object
    the uncached call computes."""
    key = (e, bits)
    value = _EXP_IV_CACHE.get(key)
    if value is None:
        if len(_EXP_IV_CACHE) > 200_000:
            _EXP_IV_CACHE.clear()
        iv = mpmath.iv
        value = iv.exp(iv.mpf(e.numerator) / e.denominator)
        _EXP_IV_CACHE[key] = value
    return value


def _certified_float(terms: Mapping[Fraction, Fraction]) -> float:
    """Sum in mpmath; the working precision grows until the rounding bound (each term within
    ``10**(3 - dps)`` relative, so the sum within that times ``sum |term|``) is below
    ``2**-60 |value|``; the float of the result is then within ``2**-53 + 2**-60`` relative."""
    if not terms:
        return 0.0
    dps = 30
    while dps <= 2000:
        with mpmath.workdps(dps):
            total = mpmath.mpf(0)
            magnitude = mpmath.mpf(0)
            for e, a in terms.items():
                term = mpmath.mpf(a.numerator) / a.denominator * _exp_mpf(e, dps)
                total += term
                magnitude += abs(term)
            bound = magnitude * mpmath.mpf(10) ** (3 - dps)
            if bound <= abs(total) * mpmath.mpf(2) ** -60:
                return float(total)
        dps *= 2
    raise AssertionError("internal error: an exact sum of exponentials is too close to 0 to round")


# -- piecewise functions --------------------------------------------------------------------------


def _multiply_terms(first: Terms, second: Terms) -> Terms:
    result: Terms = {}
    for (r1, e1, d1), a1 in first.items():
        for (r2, e2, d2), a2 in second.items():
            key = (r1 + r2, e1 + e2, d1 + d2)
            value = result.get(key, 0) + a1 * a2
            if value:
                result[key] = value
            else:
                result.pop(key, None)
    return result


def _antiderivative_terms(r: Fraction, e: Fraction, d: int, a: Fraction) -> list[tuple[Fraction, Fraction, int, Fraction]]:
    """An antiderivative of ``a x^d exp(r x + e)`` as terms ``(r, e, degree, coefficient)``:
    ``exp(r x + e) sum_j (-1)^j d!/(d-j)! x^(d-j) / r^(j+1)`` (``r != 0``), ``a x^(d+1)/(d+1) exp(e)``
    (``r = 0``)."""
    if r == 0:
        return [(r, e, d + 1, a / (d + 1))]
    out, falling = [], 1
    for j in range(d + 1):
        out.append((r, e, d - j, a * (-1) ** j * falling / r ** (j + 1)))
        falling *= d - j
    return out


def _evaluate_terms(terms: Any, x: Fraction, out: dict[Fraction, Fraction], sign: int = 1) -> None:
    """Add ``sign * sum a x^d exp(r x + e)`` at the rational point ``x`` to ``{exponent: coefficient}``."""
    for r, e, d, a in terms:
        exponent = r * x + e
        out[exponent] = out.get(exponent, 0) + sign * a * x**d


def _integrate_terms(terms: Terms, low: Fraction | None, high: Fraction | None) -> dict[Fraction, Fraction]:
    """``int_low^high sum a x^d exp(r x + e) dx`` as ``{exponent: coefficient}`` (None = infinite end;
    an infinite end needs every term to decay there)."""
    out: dict[Fraction, Fraction] = {}
    for (r, e, d), a in terms.items():
        if (low is None and not r > 0) or (high is None and not r < 0):
            raise ArithmeticError(f"the term {a} x^{d} exp({r} x + {e}) is not integrable on an infinite piece")
        primitive = _antiderivative_terms(r, e, d, a)
        if high is not None:
            _evaluate_terms(primitive, high, out, 1)
        if low is not None:
            _evaluate_terms(primitive, low, out, -1)
    return out


class PiecewiseExp:
    """A function of one real variable: exponential sums between rational breakpoints.

    Attributes:
        breaks: sorted distinct Fractions ``b_1 < ... < b_n``.
        pieces: ``n + 1`` term dicts; piece ``j`` covers ``(b_j, b_{j+1})`` with ``b_0 = -inf``,
            ``b_{n+1} = +inf``; ``{(r, e, d): a}`` stands for ``sum a x^d exp(r x + e)``.
    """

    __slots__ = ("breaks", "pieces")

    def __init__(self, breaks: list[Fraction], pieces: list[Terms]) -> None:
        if len(pieces) != len(breaks) + 1:
            raise AssertionError("a piecewise function needs one piece more than breakpoints")
        self.breaks = list(breaks)
        self.pieces = [_without_zeros(p) for p in pieces]

    @classmethod
    def constant(cls, value: Any) -> PiecewiseExp:
        value = as_fraction("value", value)
        return cls([], [{(Fraction(0), Fraction(0), 0): value} if value else {}])

    def shift(self, offset: Fraction) -> PiecewiseExp:
        """``x -> f(x + offset)``."""
        offset = Fraction(offset)
        pieces = []
        for piece in self.pieces:
            shifted: Terms = {}
            for (r, e, d), a in piece.items():
                # a (x + o)^d exp(r x + r o + e) = sum_j C(d, j) o^(d - j) a x^j exp(r x + r o + e)
                for j in range(d + 1):
                    key = (r, e + r * offset, j)
                    shifted[key] = shifted.get(key, 0) + a * math.comb(d, j) * offset ** (d - j)
            pieces.append(shifted)
        return PiecewiseExp([b - offset for b in self.breaks], pieces)

    def scale(self, factor: Fraction) -> PiecewiseExp:
        factor = Fraction(factor)
        return PiecewiseExp(self.breaks, [{k: a * factor for k, a in p.items()} for p in self.pieces])

    def piece_at(self, low: Fraction | None) -> Terms:
        """The piece just right of ``low`` (None: the leftmost piece)."""
        if low is None:
            return self.pieces[0]
        return self.pieces[bisect.bisect_right(self.breaks, low)]

    def __mul__(self, other: PiecewiseExp) -> PiecewiseExp:
        breaks = sorted(set(self.breaks) | set(other.breaks))
        lefts: list[Fraction | None] = [None, *breaks]
        pieces = [_multiply_terms(self.piece_at(low), other.piece_at(low)) for low in lefts]
        return PiecewiseExp(breaks, pieces)

    def __add__(self, other: PiecewiseExp) -> PiecewiseExp:
        breaks = sorted(set(self.breaks) | set(other.breaks))
        pieces = []
        for low in [None, *breaks]:
            merged = dict(self.piece_at(low))
            for key, a in other.piece_at(low).items():
                merged[key] = merged.get(key, 0) + a
            pieces.append(merged)
        return PiecewiseExp(breaks, pieces)

    def power(self, n: int) -> PiecewiseExp:
        result = PiecewiseExp.constant(1)
        for _ in range(n):
            result = result * self
        return result

    def _clipped(self, low: Fraction | None, high: Fraction | None) -> Iterator[tuple[Any, Fraction | None, Fraction | None]]:
        """Each piece that meets ``(low, high)`` (None: an infinite end) with its ends clipped to it."""
        ends: list[Fraction | None] = [None, *self.breaks, None]
        for j, piece in enumerate(self.pieces):
            a, b = ends[j], ends[j + 1]
            if (low is not None and b is not None and b <= low) or (high is not None and a is not None and a >= high):
                continue
            if low is not None and (a is None or a < low):
                a = low
            if high is not None and (b is None or b > high):
                b = high
            if a is not None and b is not None and a >= b:
                continue
            yield piece, a, b

    def integral(self, low: Fraction | None = None, high: Fraction | None = None) -> ExpSum:
        """``int_low^high f(x) dx`` exactly (None for an infinite end)."""
        terms: dict[Fraction, Fraction] = {}
        for piece, a, b in self._clipped(low, high):
            for e, c in _integrate_terms(piece, a, b).items():
                terms[e] = terms.get(e, 0) + c
        return ExpSum._owned(terms)

    def integral_float(self, low: Fraction | None = None, high: Fraction | None = None) -> tuple[float, float]:
        """``(v, err)``: ``int_low^high f`` in float64 arithmetic with ``|v - exact| <= err`` (no
        ExpSum is built: much faster than :meth:`integral` when only bounds are needed).

        Each antiderivative term ``a x^d e^(r x + e)`` at an end ``x`` is
        ``float(a) float(x)^d exp(float(r) float(x) + float(e))``, within
        ``(6 + 2d + 3.1 (|r x| + |e| + |r x + e|)) u`` relative (``u = 2**-53``: the roundings of
        ``a``, ``x``, the power, the exponent, one or two ulps of ``exp``, the product); the sum of
        ``k`` such terms adds ``k u`` times the sum of their magnitudes; ``err`` is the total, widened
        by 10%. An infinite end contributes 0 (every term decays there, as :meth:`integral`
        requires); ``err`` is ``inf`` when a term overflows."""
        unit = 2.0**-53
        total = magnitude = error = 0.0
        count = 0
        for piece, a, b in self._clipped(low, high):
            for (r, e, d), coefficient in piece.items():
                if (a is None and not r > 0) or (b is None and not r < 0):
                    raise ArithmeticError(f"the term {coefficient} x^{d} exp({r} x + {e}) is not integrable on an infinite piece")
                for r2, e2, d2, a2 in _antiderivative_terms(r, e, d, coefficient):
                    fr, fe = float(r2), float(e2)
                    for end, sign in ((b, 1.0), (a, -1.0)):
                        if end is None:
                            continue
                        x = float(end)
                        argument = fr * x + fe
                        if argument > 700:
                            return total, math.inf
                        term = float(a2) * x**d2 * math.exp(argument)
                        total += sign * term
                        magnitude += abs(term)
                        error += abs(term) * (6 + 2 * d2 + 3.1 * (abs(fr * x) + abs(fe) + abs(argument)))
                        count += 1
        return total, ((error + count * magnitude) * unit) * 1.1 + 1e-300

    def value(self, x: Fraction) -> ExpSum:
        """``f(x)`` on the piece right of ``x`` (the right limit at a breakpoint)."""
        x = Fraction(x)
        terms: dict[Fraction, Fraction] = {}
        _evaluate_terms(((r, e, d, a) for (r, e, d), a in self.piece_at(x).items()), x, terms)
        return ExpSum(terms)

    def antiderivative(self) -> PiecewiseExp:
        """``G(x) = int_{-inf}^x f`` (f must decay on the left), again piecewise exponential."""
        ends: list[Fraction | None] = [None, *self.breaks]
        pieces = []
        for j, piece in enumerate(self.pieces):
            low = ends[j]
            terms: Terms = {}
            constants: dict[Fraction, Fraction] = {} if low is None else dict(self.integral(None, low).terms)
            for (r, e, d), a in piece.items():
                if low is None and not r > 0:
                    raise ArithmeticError("the antiderivative from -inf needs every leftmost term to decay")
                primitive = _antiderivative_terms(r, e, d, a)
                for r2, e2, d2, a2 in primitive:
                    terms[(r2, e2, d2)] = terms.get((r2, e2, d2), 0) + a2
                if low is not None:
                    _evaluate_terms(primitive, low, constants, -1)
            for e2, a2 in constants.items():
                key = (Fraction(0), e2, 0)
                terms[key] = terms.get(key, 0) + a2
            pieces.append(terms)
        return PiecewiseExp(self.breaks, pieces)

    def rates(self) -> set[Fraction]:
        return {r for piece in self.pieces for (r, _e, _d) in piece}

    # -- affine substitution (the exact path integrals of dpverify.densities._path_integral) ----------

    @classmethod
    def from_exp_sum(cls, value: ExpSum) -> PiecewiseExp:
        """The constant function equal to the exact number ``value`` everywhere."""
        return cls([], [{(Fraction(0), e, 0): a for e, a in value.terms.items()}])

    def times_exp_sum(self, value: ExpSum) -> PiecewiseExp:
        """``x -> f(x) * value`` for an exact number ``value`` (:meth:`scale` takes a Fraction only)."""
        pieces: list[Terms] = []
        for piece in self.pieces:
            product: Terms = {}
            for (r, e, d), a in piece.items():
                for e2, a2 in value.terms.items():
                    key = (r, e + e2, d)
                    product[key] = product.get(key, 0) + a * a2
            pieces.append(product)
        return PiecewiseExp(self.breaks, pieces)

    def compose(self, alpha: Any, beta: Any) -> PiecewiseExp:
        """``x -> f(alpha x + beta)``, again piecewise exponential.

        A breakpoint ``b`` moves to ``(b - beta) / alpha``; a term ``a y^d exp(r y + e)`` at
        ``y = alpha x + beta`` is ``a exp(r beta + e) exp(r alpha x) sum_j C(d, j) alpha^j beta^(d-j) x^j``.
        ``alpha < 0`` reverses the order of the pieces; ``alpha = 0`` gives the constant ``f(beta)``
        (:meth:`value`: the right limit at a breakpoint, which for a continuous ``f`` such as an
        antiderivative is ``f(beta)``)."""
        alpha, beta = as_fraction("alpha", alpha), as_fraction("beta", beta)
        if not alpha:
            return PiecewiseExp.from_exp_sum(self.value(beta))
        breaks = [(b - beta) / alpha for b in self.breaks]
        pieces: list[Terms] = []
        for piece in self.pieces:
            composed: Terms = {}
            for (r, e, d), a in piece.items():
                rate, exponent = r * alpha, r * beta + e
                for j in range(d + 1):
                    key = (rate, exponent, j)
                    composed[key] = composed.get(key, 0) + a * math.comb(d, j) * alpha**j * beta ** (d - j)
            pieces.append(composed)
        if alpha < 0:
            breaks.reverse()
            pieces.reverse()
        return PiecewiseExp(breaks, pieces)

    def restricted(self, low: Fraction | None, high: Fraction | None) -> PiecewiseExp:
        """``f`` on ``(low, high)`` and 0 outside it (None: no bound on that side; an empty interval
        gives the zero function)."""
        if low is not None and high is not None and low >= high:
            return PiecewiseExp([], [{}])
        breaks: list[Fraction] = []
        pieces: list[Terms] = []
        if low is not None:
            breaks.append(low)
            pieces.append({})
        pieces.append(self.piece_at(low))
        for b in self.breaks:
            if (low is None or b > low) and (high is None or b < high):
                breaks.append(b)
                pieces.append(self.piece_at(b))
        if high is not None:
            breaks.append(high)
            pieces.append({})
        return PiecewiseExp(breaks, pieces)
