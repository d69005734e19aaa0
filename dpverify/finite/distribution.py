"""Finite probability distributions with exact or float probabilities.

A :class:`Distribution` maps finitely many hashable outcomes to probabilities. It is immutable and
validated on construction: every probability is a finite, non-negative number and the total is 1.

Number kinds and the tolerance model:

* **Exact** numbers — ``int``, :class:`fractions.Fraction` and sympy numbers — must sum to exactly
  1 (sympy expressions that are not rational, such as ``exp(-1)/(1 + exp(-1))``, are summed
  symbolically and compared with 1 at 60 significant digits, tolerance ``1e-50``).
* **Floats** (and mpmath ``mpf``) must sum to 1 within :data:`FLOAT_SUM_TOLERANCE` = ``1e-9``
  (absolute). The values themselves are *not* changed: the checker treats each float as the exact
  binary number it is, so a float distribution summing to ``1 - 1e-12`` is analysed as given.

Outcomes with probability zero are dropped: the support is the key set.

Unexplored mass (sub-distributions). A sampler with unbounded randomness (``while rng.random() < p``)
has infinitely many execution paths; its enumeration stops once the paths not taken carry at most a
tolerance. Its result is ``Distribution(explored, unexplored=m)``: the explored outcomes with their
masses ``P_e(o)`` and an upper bound ``m`` on the mass not explored, which may fall on any outcome,
listed or new. The true distribution is then ``P(o) = P_e(o) + T(o)`` for some unknown ``T >= 0``
of total at most ``m``. Validation: the explored masses sum to at most 1 and, with ``m``, to at
least 1 (exactly for exact numbers, within the tolerances above otherwise); ``m = 1`` with no
outcome listed is allowed. The mapping (``d[o]``, ``items()``, ``len``) is the explored part;
every operation either carries ``m`` soundly (``map`` keeps it, ``mixture`` and ``bind`` weight it,
``product`` combines it) or refuses it (``probability`` needs the whole distribution: use
``probability_bounds``). The verdict on such outputs is decided by :mod:`dpverify.verdict.engine`
(see :mod:`dpverify.verdict._unexplored` for the bounds).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from fractions import Fraction
from numbers import Number
from typing import Any, overload

from dpverify.errors import InvalidArgument
from dpverify.types import RealNumber

__all__ = ["Distribution", "FLOAT_SUM_TOLERANCE", "is_exact_number"]

FLOAT_SUM_TOLERANCE = 1e-9
_SYMPY_SUM_TOLERANCE_EXPONENT = 50  # a symbolic total may differ from 1 by at most 10**-50


# sympy and mpmath are imported only where a sympy or mpmath value has to be handled: such a value
# can only exist once its library is imported, so ``sys.modules`` recognises it without importing
# the library (``import dpverify`` must stay cheap; see dpverify/__init__.py). ``_sympy_basic()`` is
# ``sympy.Basic``, or ``()`` (which nothing is an instance of) while sympy is not imported; it is
# spelt out inline where a Distribution checks each probability, to keep that loop fast.
def _sympy_basic() -> Any:
    return getattr(sys.modules.get("sympy"), "Basic", ())


def is_exact_number(value: Any) -> bool:
    """True for ``int``, ``Fraction`` and sympy numbers (rational or symbolic); False for floats."""
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, Fraction, getattr(sys.modules.get("sympy"), "Basic", ())))


def _check_probability(outcome: Hashable, value: Any) -> None:
    basic: Any = getattr(sys.modules.get("sympy"), "Basic", ())
    mpf: Any = getattr(sys.modules.get("mpmath"), "mpf", ())
    if isinstance(value, bool) or not (
        isinstance(value, (Number, basic)) or isinstance(value, mpf)
    ):
        raise InvalidArgument(
            f"probability of outcome {outcome!r} must be a number (float, int, Fraction or sympy), "
            f"got {value!r} of type {type(value).__name__}."
        )
    if isinstance(value, basic):
        import sympy

        if value.free_symbols:
            raise InvalidArgument(
                f"probability of outcome {outcome!r} is symbolic ({value}); substitute numbers for "
                f"the symbols {sorted(map(str, value.free_symbols))} first."
            )
        if value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            raise InvalidArgument(
                f"probability of outcome {outcome!r} must be finite, got {value}."
            )
        if value.is_extended_real is False:
            raise InvalidArgument(
                f"probability of outcome {outcome!r} must be a real number, got {value}."
            )
        negative = value.is_negative
        if negative is None:
            negative = sympy.N(value, 30) < 0
        if negative:
            raise InvalidArgument(
                f"probability of outcome {outcome!r} must be non-negative, got {value}."
            )
        return
    try:
        as_float = float(value)  # type: ignore[arg-type]  # complex numbers raise TypeError here
    except TypeError:
        raise InvalidArgument(
            f"probability of outcome {outcome!r} must be a real number, got {value!r}."
        ) from None
    if math.isnan(as_float) or math.isinf(as_float):
        raise InvalidArgument(
            f"probability of outcome {outcome!r} must be finite, got {value!r}; "
            "a mechanism must return a proper probability for every outcome."
        )
    if value < 0:  # type: ignore[operator]  # a real Number (complex rejected above)
        raise InvalidArgument(
            f"probability of outcome {outcome!r} must be non-negative, got {value!r}."
        )


def _is_zero(value: Any) -> bool:
    basic: Any = getattr(sys.modules.get("sympy"), "Basic", ())
    if isinstance(value, basic):
        return value.is_zero is True
    return value == 0


def _check_unexplored(value: Any) -> Any:
    """``unexplored=`` validated: a finite number in [0, 1] (int, Fraction, float, mpmath or sympy);
    zero is returned as ``0``."""
    try:
        _check_probability("unexplored", value)
    except InvalidArgument:
        raise InvalidArgument(
            f"unexplored must be a finite number in [0, 1] (int, Fraction, float or sympy), got unexplored={value!r}; "
            "it bounds the probability of the paths an enumeration did not explore (0 for a complete distribution)."
        ) from None
    if _is_zero(value):
        return 0
    if isinstance(value, _sympy_basic()):
        import sympy

        above = bool(sympy.N(value, 30) > 1)
    else:
        above = value > 1
    if above:
        raise InvalidArgument(
            f"unexplored={value!r} must be at most 1: it bounds the probability of the paths not explored."
        )
    return value


def _check_total_with_unexplored(values: list, unexplored: Any) -> None:
    """Explored masses summing to at most 1 and, with the unexplored bound, to at least 1 (exactly
    for exact numbers, sympy within its tolerance, floats within :data:`FLOAT_SUM_TOLERANCE`)."""
    basic = _sympy_basic()
    exact = all(is_exact_number(v) for v in values) and (is_exact_number(unexplored) or isinstance(unexplored, float))
    total: Any
    if exact and (isinstance(unexplored, basic) or any(isinstance(v, basic) for v in values)):
        import sympy

        tolerance = sympy.Rational(1, 10**_SYMPY_SUM_TOLERANCE_EXPONENT)
        total = sum(values, sympy.Integer(0))
        reading = sympy.N(total, 60)
        ok = bool(reading <= 1 + tolerance) and bool(reading + sympy.N(unexplored, 60) >= 1 - tolerance)
    elif exact:  # a float unexplored bound is a binary rational: compared exactly
        total = sum(values, Fraction(0))
        ok = total <= 1 and total + Fraction(unexplored) >= 1
    else:
        total = math.fsum(float(v) for v in values)
        ok = total <= 1 + FLOAT_SUM_TOLERANCE and total + float(unexplored) >= 1 - FLOAT_SUM_TOLERANCE
    if not ok:
        raise InvalidArgument(
            f"the explored probabilities must sum to at most 1 and, with the unexplored mass, to at least 1; got "
            f"an explored total of {total} with unexplored={unexplored!r}. unexplored bounds the mass of the paths "
            "not explored: pass at least 1 minus the explored total."
        )


def _check_total(probabilities: Mapping[Any, Any], unexplored: Any = 0) -> None:
    values = list(probabilities.values())
    if unexplored != 0:
        _check_total_with_unexplored(values, unexplored)
        return
    if not values:
        raise InvalidArgument("a distribution needs at least one outcome with positive probability.")
    if all(is_exact_number(v) for v in values):
        basic = _sympy_basic()
        if any(isinstance(v, basic) for v in values):
            import sympy

            total = sum(values, sympy.Integer(0))
            if total.is_Rational:
                ok = total == 1
            else:
                tolerance = sympy.Rational(1, 10**_SYMPY_SUM_TOLERANCE_EXPONENT)
                # First the total (not total - 1) to 60 digits: an exact 1 minus 1 has no
                # significant digit, and evalf raises its precision to the limit chasing one (4x
                # slower on the user-level learner's mixtures, C15). That reading is off by about
                # 1e-60, so it decides only off the tolerance's edge (within half of it, or beyond
                # twice it); near the edge, total - 1 is read to 60 significant digits as before
                # (1 + 1e-50 + e^-150 is over the tolerance, and its total to 60 digits is not).
                off = abs(sympy.N(total, 60) - 1)
                if off <= tolerance / 2 or off > 2 * tolerance:
                    ok = off <= tolerance
                else:
                    ok = abs(sympy.N(total - 1, 60)) <= tolerance
        else:
            total = sum(values, Fraction(0))
            ok = total == 1
        if not ok:
            raise InvalidArgument(
                f"probabilities must sum to exactly 1 for exact numbers, got a total of {total}; "
                "normalise the weights (Distribution.from_weights does it for you)."
            )
        return
    total = math.fsum(float(v) for v in values)
    if abs(total - 1.0) > FLOAT_SUM_TOLERANCE:
        raise InvalidArgument(
            f"probabilities must sum to 1 (float tolerance {FLOAT_SUM_TOLERANCE:g}), got a total "
            f"of {total!r}; normalise the weights (Distribution.from_weights does it for you)."
        )


class Distribution(Mapping):
    """An immutable finite distribution: outcome -> probability.

    Args:
        probabilities: a mapping from hashable outcomes to probabilities (float, int, Fraction,
            sympy number or mpmath mpf). Zero entries are dropped.
        unexplored: an upper bound on the probability not listed (the paths an enumeration did not
            explore, which may fall on any outcome, listed or not); default 0, a complete
            distribution. See the module docstring.

    Raises:
        InvalidArgument: an outcome is unhashable, a probability is negative, NaN, infinite or not
            a number, or the total is not 1 (exactly for exact numbers, within
            :data:`FLOAT_SUM_TOLERANCE` for floats); with ``unexplored``, the listed total is above
            1 or, with ``unexplored``, below 1, or ``unexplored`` is not a number in [0, 1].
    """

    # Outcomes are typed ``Any`` where a caller passes them in (a mapping's key, a kernel's
    # argument): the class is not generic, and ``Mapping`` is invariant in its key type, so
    # ``Mapping[Hashable, Any]`` would refuse a ``dict[int, Fraction]``. Hashability is checked here.
    __slots__ = ("_probabilities", "_hash", "_unexplored", "_declared")

    # Two signatures for a type checker: a dict display such as ``{0: Fraction(1, 2), 1: 0.5}`` is read
    # against each alone (against their union mypy infers ``dict[int, object]`` and refuses it).
    @overload
    def __init__(self, probabilities: Mapping[Any, RealNumber], *, unexplored: RealNumber = 0) -> None: ...

    @overload
    def __init__(self, probabilities: Iterable[tuple[Hashable, RealNumber]], *, unexplored: RealNumber = 0) -> None: ...

    def __init__(
        self, probabilities: Mapping[Any, RealNumber] | Iterable[tuple[Hashable, RealNumber]], *, unexplored: RealNumber = 0
    ) -> None:
        items = probabilities.items() if isinstance(probabilities, Mapping) else probabilities
        cleaned: dict[Hashable, Any] = {}
        for outcome, value in items:
            try:
                hash(outcome)
            except TypeError:
                raise InvalidArgument(
                    f"outcome {outcome!r} is unhashable ({type(outcome).__name__}); return tuples "
                    "or frozensets instead of lists or sets."
                ) from None
            _check_probability(outcome, value)
            if _is_zero(value):
                continue
            if outcome in cleaned:
                cleaned[outcome] = cleaned[outcome] + value
            else:
                cleaned[outcome] = value
        if type(unexplored) is not int or unexplored != 0:  # (the default 0 costs nothing)
            unexplored = _check_unexplored(unexplored)
        _check_total(cleaned, unexplored)
        self._probabilities = cleaned
        self._hash: int | None = None
        self._unexplored: Any = unexplored
        self._declared: frozenset | None = None

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def point(cls, outcome: Hashable) -> Distribution:
        """The distribution that puts probability 1 on ``outcome``."""
        return cls({outcome: 1})

    @classmethod
    def uniform(cls, outcomes: Iterable[Hashable]) -> Distribution:
        """Uniform over ``outcomes`` (exact: each gets ``Fraction(count, len)``)."""
        outcomes = list(outcomes)
        if not outcomes:
            raise InvalidArgument("uniform() needs at least one outcome, got an empty iterable.")
        share = Fraction(1, len(outcomes))
        result: dict[Hashable, Any] = {}
        for outcome in outcomes:
            result[outcome] = result.get(outcome, 0) + share
        return cls(result)

    @classmethod
    def _of_positive_floats(cls, probabilities: dict[Hashable, float]) -> Distribution:
        """A distribution of finite positive floats made where they were checked (the certified roundings
        of a noise program's exact probabilities, on hashable outcomes): the general checks of
        :meth:`__init__` (number kinds, sympy values, zeros, duplicate outcomes) are skipped; each value
        is still checked to be a positive finite float (else :meth:`__init__` runs and names the bad
        value) and the total as always. Internal; ``probabilities`` is kept, not copied."""
        if not all(type(v) is float and 0.0 < v < math.inf for v in probabilities.values()):
            return cls(probabilities)
        _check_total(probabilities)
        distribution = cls.__new__(cls)
        distribution._probabilities = probabilities
        distribution._hash = None
        distribution._unexplored = 0
        distribution._declared = None
        return distribution

    @classmethod
    def from_weights(cls, weights: Mapping[Any, Any]) -> Distribution:
        """Normalise non-negative ``weights`` into a distribution (exact for exact weights)."""
        for outcome, value in weights.items():
            _check_probability(outcome, value)
        values = list(weights.values())
        if all(is_exact_number(v) for v in values):
            basic = _sympy_basic()
            if any(isinstance(v, basic) for v in values):
                import sympy

                total = sum(values, sympy.Integer(0))
            else:
                total = sum(values, Fraction(0))
        else:
            total = math.fsum(float(v) for v in values)
        if total == 0:
            raise InvalidArgument("from_weights() needs a positive total weight, got 0.")
        if isinstance(total, Fraction):
            return cls({o: Fraction(v) / total for o, v in weights.items()})
        return cls({o: v / total for o, v in weights.items()})

    @staticmethod
    def mixture(components: Iterable[tuple[Any, Mapping[Any, Any]]]) -> Distribution:
        """The mixture ``sum_i w_i * D_i`` of ``(weight, distribution)`` pairs; weights sum to 1.
        A component may be any mapping outcome -> probability (the result is checked as a whole).
        Components with unexplored mass ``m_i`` leave ``sum_i w_i m_i`` unexplored: the mass each
        one did not list may fall anywhere, weighted as its component."""
        result: dict[Hashable, Any] = {}
        unexplored: Any = 0
        for weight, component in components:
            if _is_zero(weight):
                continue
            for outcome, p in component.items():
                term = weight * p
                result[outcome] = result[outcome] + term if outcome in result else term
            rest = getattr(component, "unexplored", 0)
            if not _is_zero(rest):
                unexplored = unexplored + weight * rest
        return Distribution(result, unexplored=unexplored)

    # -- Mapping protocol ---------------------------------------------------------------------

    def __getitem__(self, outcome: Hashable) -> Any:
        return self._probabilities.get(outcome, 0)

    def __contains__(self, outcome: object) -> bool:
        return outcome in self._probabilities

    def __iter__(self) -> Iterator[Any]:
        return iter(self._probabilities)

    def __len__(self) -> int:
        return len(self._probabilities)

    def __repr__(self) -> str:
        inner = ", ".join(f"{o!r}: {p}" for o, p in self._probabilities.items())
        rest = f", unexplored={self._unexplored}" if self._unexplored != 0 else ""
        return f"Distribution({{{inner}}}{rest})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Distribution):
            return NotImplemented
        return self._probabilities == other._probabilities and self._unexplored == other._unexplored

    def __hash__(self) -> int:
        if self._hash is None:
            items = frozenset(self._probabilities.items())
            self._hash = hash(items) if self._unexplored == 0 else hash((items, self._unexplored))
        return self._hash

    # -- queries and transformations ------------------------------------------------------------

    @property
    def unexplored(self) -> Any:
        """The upper bound on the mass not listed (0 for a complete distribution): it may fall on
        any outcome, listed or new (module docstring)."""
        return self._unexplored

    @property
    def declared_outputs(self) -> frozenset | None:
        """The outputs the unexplored mass can fall on, when the sampler's author declared them
        (``from_sampler(..., outputs=[...])``: then it falls on these only, not on any outcome); None
        when nothing was declared."""
        return self._declared

    def with_declared_outputs(self, outputs: frozenset) -> Distribution:
        """This distribution with its declared outputs (every explored outcome must be one of them)."""
        outside = [o for o in self._probabilities if o not in outputs]
        if outside:
            raise AssertionError(f"internal error: explored outcomes {outside!r} are not among the declared outputs")
        self._declared = frozenset(outputs)
        return self

    @property
    def support(self) -> frozenset:
        """Outcomes with positive probability; with unexplored mass, the explored ones (the mass
        not explored may add others)."""
        return frozenset(self._probabilities)

    @property
    def is_exact(self) -> bool:
        """True when every probability (and the unexplored bound) is an exact number (int, Fraction or sympy)."""
        return all(is_exact_number(v) for v in self._probabilities.values()) and (
            self._unexplored == 0 or is_exact_number(self._unexplored)
        )

    def _explored(self, event: Iterable[Hashable] | Callable[[Any], bool]) -> Any:
        if callable(event):
            chosen = [p for o, p in self._probabilities.items() if event(o)]
        else:
            chosen = [self._probabilities[o] for o in set(event) if o in self._probabilities]
        return sum(chosen[1:], chosen[0]) if chosen else 0

    def probability(self, event: Iterable[Hashable] | Callable[[Any], bool]) -> Any:
        """P(event) for an outcome set or a predicate on outcomes.

        Raises:
            InvalidArgument: the distribution has unexplored mass, so P(event) is only known to lie in
                :meth:`probability_bounds`.
        """
        if self._unexplored != 0:
            raise InvalidArgument(
                f"probability(event) needs the whole distribution, and this one leaves unexplored={self._unexplored} "
                "unexplored (it may fall in the event or not); use probability_bounds(event) for the interval "
                "P(event) lies in, or explore further (from_sampler(..., tail=smaller))."
            )
        return self._explored(event)

    def probability_bounds(self, event: Iterable[Hashable] | Callable[[Any], bool]) -> tuple[Any, Any]:
        """``(low, high)`` with ``low <= P(event) <= high``: the explored mass of the event, and that
        plus the unexplored mass (at most 1). Both are P(event) for a complete distribution."""
        low = self._explored(event)
        if self._unexplored == 0:
            return low, low
        high = low + self._unexplored
        return low, (high if high <= 1 else 1)

    def map(self, function: Callable[[Any], Hashable]) -> Distribution:
        """The push-forward of the distribution through ``function`` (merging equal images); the
        unexplored mass stays unexplored (its image is unknown too)."""
        result: dict[Hashable, Any] = {}
        for outcome, p in self._probabilities.items():
            image = function(outcome)
            result[image] = result[image] + p if image in result else p
        return Distribution(result, unexplored=self._unexplored)

    def bind(self, kernel: Callable[[Any], Distribution]) -> Distribution:
        """Compose with a Markov kernel: outcome o is followed by a draw from ``kernel(o)``. The
        unexplored mass of this distribution (its outcome unknown, so its kernel too) stays
        unexplored, with the kernels' own weighted by their outcomes' masses."""
        components: list[tuple[Any, Mapping[Any, Any]]] = [(p, kernel(o)) for o, p in self._probabilities.items()]
        if self._unexplored != 0:
            components.append((self._unexplored, Distribution({}, unexplored=1)))
        return Distribution.mixture(components)

    def product(self, other: Distribution) -> Distribution:
        """The independent joint distribution over pairs ``(a, b)``. With unexplored masses ``m``
        and ``m'``, the pairs not explored have mass ``1 - (1 - t)(1 - t')`` for the true
        unexplored masses ``t <= m``, ``t' <= m'``, which is at most ``m + m' - m m'`` (it grows
        with each)."""
        first, second = self._unexplored, getattr(other, "unexplored", 0)
        unexplored = first + second - first * second if first != 0 or second != 0 else 0
        return Distribution(
            {(a, b): p * q for a, p in self._probabilities.items() for b, q in other.items()}, unexplored=unexplored
        )

    def to_float(self) -> Distribution:
        """The same distribution with every probability converted to float (an unexplored bound
        rounded up, so that it stays a bound)."""
        rest = self._unexplored
        if rest != 0:
            rounded = float(rest)
            if not isinstance(rest, float) and _exceeds(rest, rounded):
                rounded = math.nextafter(rounded, math.inf)
            rest = min(rounded, 1.0)
        return Distribution({o: float(p) for o, p in self._probabilities.items()}, unexplored=rest)


def _exceeds(value: Any, rounded: float) -> bool:
    """Whether the exact ``value`` is above the float ``rounded``."""
    if isinstance(value, _sympy_basic()):
        import sympy

        return bool(sympy.N(value - sympy.Rational(Fraction(rounded)), 30) > 0)
    try:
        return Fraction(value) > Fraction(rounded)
    except (TypeError, ValueError):
        return True  # an mpmath value: round up one step to be safe
