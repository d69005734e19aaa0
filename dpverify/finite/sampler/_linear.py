"""Affine forms in continuous noise variables: the values a traced sampler computes with.

``rng.laplace(loc, scale)`` and ``rng.exponential(scale)`` of the exact rng return no number: they
return a fresh *noise variable* ``X_i`` (:class:`NoiseVariable`, numbered in draw order on its
execution path), and arithmetic keeps the affine form ``c + sum_i a_i X_i`` (:class:`Linear`) with
exact rational ``c`` and ``a_i`` (a float constant is its exact binary value). A comparison of a
form with a constant or another form is a constraint ``form > 0`` on the path
(:mod:`dpverify.finite.sampler._noise`); the path's probability is the integral of the noise densities over
the region its constraints cut out (:mod:`dpverify.densities.traced`). Ties have probability 0, so a
constraint is always read strict.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

__all__ = ["NoiseVariable", "Linear", "NOISE_KINDS", "GUMBEL_BASE"]

#: The noise distributions traced, by name: numpy's ``laplace(loc, scale)`` (density
#: ``exp(-|x|/scale) / (2 scale)``, the ``loc`` kept in the form's constant), ``exponential(scale)``
#: (density ``exp(-x/scale) / scale`` on ``x > 0``) and ``normal(loc, scale)`` (``"gaussian"``: only
#: released, never compared; the Gaussian mechanism's decision takes it); ``"uniform"`` on ``[0, scale)``
#: is a lazy uniform of ``rng.random()`` released as a real number (an affine map of it), its interval
#: after the path's comparisons shifted to start at 0.
NOISE_KINDS = ("laplace", "exponential", "gaussian", "uniform")
#: Gumbel variables are numbered from here, apart from the path's integrated variables (they are never
#: integrated: the one use traced, an argmax, is a discrete choice); shown as ``G0``, ``G1``, ...
GUMBEL_BASE = 1 << 40


@dataclass(frozen=True)
class NoiseVariable:
    """The noise drawn ``index``-th on a path (from 0): its distribution ``kind`` (one of
    :data:`NOISE_KINDS`, centred at 0) and its ``scale`` (a positive Fraction)."""

    index: int
    kind: str
    scale: Fraction

    def __post_init__(self) -> None:
        if self.kind not in NOISE_KINDS or not (isinstance(self.scale, Fraction) and self.scale > 0):
            raise AssertionError(f"dpverify internal error: a noise variable {self.kind}({self.scale!r}) is malformed")


@dataclass(frozen=True, repr=False)
class Linear:
    """The affine form ``const + sum coefs[i] * X_i`` (Fractions; ``coefs`` a tuple of ``(index,
    coefficient)`` sorted by index, no zero coefficient)."""

    const: Fraction
    coefs: tuple[tuple[int, Fraction], ...] = ()

    @staticmethod
    def variable(index: int) -> Linear:
        return Linear(Fraction(0), ((index, Fraction(1)),))

    @staticmethod
    def constant(value: Fraction) -> Linear:
        return Linear(Fraction(value))

    @property
    def indices(self) -> tuple[int, ...]:
        return tuple(i for i, _ in self.coefs)

    def plus(self, other: Linear) -> Linear:
        if not other.coefs:
            return Linear(self.const + other.const, self.coefs)
        merged = dict(self.coefs)
        for i, a in other.coefs:
            merged[i] = merged.get(i, Fraction(0)) + a
        return Linear(self.const + other.const, tuple(sorted((i, a) for i, a in merged.items() if a)))

    def times(self, factor: Fraction) -> Linear:
        if not factor:
            return Linear(Fraction(0))
        return Linear(self.const * factor, tuple((i, a * factor) for i, a in self.coefs))

    def minus(self, other: Linear) -> Linear:
        if not other.coefs:
            return Linear(self.const - other.const, self.coefs)
        merged = dict(self.coefs)
        for i, a in other.coefs:
            merged[i] = merged.get(i, 0) - a
        return Linear(self.const - other.const, tuple(sorted((i, a) for i, a in merged.items() if a)))

    def negated(self) -> Linear:
        return Linear(-self.const, tuple((i, -a) for i, a in self.coefs))

    def shifted(self, value: Fraction) -> Linear:
        return Linear(self.const + value, self.coefs)

    def __repr__(self) -> str:  # shown in outputs and messages: the form as read, <2 + X0>
        return f"<{self.text()}>"

    def text(self) -> str:
        """``2 + X0 - 1/2 X3``: the form as a person reads it."""
        parts = [] if not self.const and self.coefs else [_number(self.const)]
        for i, a in self.coefs:
            sign = "-" if a < 0 else "+"
            size = abs(a)
            variable = f"G{i - GUMBEL_BASE}" if i >= GUMBEL_BASE else f"X{i}"
            term = variable if size == 1 else f"{_number(size)} {variable}"
            parts.append(f"{sign} {term}" if parts else (f"-{term}" if a < 0 else term))
        return " ".join(parts)


def _number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if value.denominator.bit_length() > 24:  # a float's binary value: its shortest float form
        return repr(float(value))
    return f"{value.numerator}/{value.denominator}"
