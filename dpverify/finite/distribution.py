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
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from fractions import Fraction
from numbers import Number
from typing import Any

from dpverify.errors import InvalidArgument

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


def _check_total(probabilities: Mapping[Any, Any]) -> None:
    values = list(probabilities.values())
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

    Raises:
        InvalidArgument: an outcome is unhashable, a probability is negative, NaN, infinite or not
            a number, or the total is not 1 (exactly for exact numbers, within
            :data:`FLOAT_SUM_TOLERANCE` for floats).
    """

    # Outcomes are typed ``Any`` where a caller passes them in (a mapping's key, a kernel's
    # argument): the class is not generic, and ``Mapping`` is invariant in its key type, so
    # ``Mapping[Hashable, Any]`` would refuse a ``dict[int, Fraction]``. Hashability is checked here.
    __slots__ = ("_probabilities", "_hash")

    def __init__(self, probabilities: Mapping[Any, Any] | Iterable[tuple[Hashable, Any]]):
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
        _check_total(cleaned)
        self._probabilities = cleaned
        self._hash: int | None = None

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
        A component may be any mapping outcome -> probability (the result is checked as a whole)."""
        result: dict[Hashable, Any] = {}
        for weight, component in components:
            if _is_zero(weight):
                continue
            for outcome, p in component.items():
                term = weight * p
                result[outcome] = result[outcome] + term if outcome in result else term
        return Distribution(result)

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
        return f"Distribution({{{inner}}})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Distribution):
            return NotImplemented
        return self._probabilities == other._probabilities

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._probabilities.items()))
        return self._hash

    # -- queries and transformations ------------------------------------------------------------

    @property
    def support(self) -> frozenset:
        """Outcomes with positive probability."""
        return frozenset(self._probabilities)

    @property
    def is_exact(self) -> bool:
        """True when every probability is an exact number (int, Fraction or sympy)."""
        return all(is_exact_number(v) for v in self._probabilities.values())

    def probability(self, event: Iterable[Hashable] | Callable[[Any], bool]) -> Any:
        """P(event) for an outcome set or a predicate on outcomes."""
        if callable(event):
            chosen = [p for o, p in self._probabilities.items() if event(o)]
        else:
            chosen = [self._probabilities[o] for o in set(event) if o in self._probabilities]
        return sum(chosen[1:], chosen[0]) if chosen else 0

    def map(self, function: Callable[[Any], Hashable]) -> Distribution:
        """The push-forward of the distribution through ``function`` (merging equal images)."""
        result: dict[Hashable, Any] = {}
        for outcome, p in self._probabilities.items():
            image = function(outcome)
            result[image] = result[image] + p if image in result else p
        return Distribution(result)

    def bind(self, kernel: Callable[[Any], Distribution]) -> Distribution:
        """Compose with a Markov kernel: outcome o is followed by a draw from ``kernel(o)``."""
        return Distribution.mixture((p, kernel(o)) for o, p in self._probabilities.items())

    def product(self, other: Distribution) -> Distribution:
        """The independent joint distribution over pairs ``(a, b)``."""
        return Distribution(
            {(a, b): p * q for a, p in self._probabilities.items() for b, q in other.items()}
        )

    def to_float(self) -> Distribution:
        """The same distribution with every probability converted to float."""
        return Distribution({o: float(p) for o, p in self._probabilities.items()})
