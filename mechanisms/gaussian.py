"""Balle and Wang 2018 (and Dwork–Roth 2014, App. A): the Gaussian mechanism ``M(D) = f(D) + N(0, sigma^2 I)``.

``f`` maps a dataset to a vector of ``k`` rational numbers. :class:`GaussianMechanism` declares the
core's :class:`~dpverify.densities.gaussian.GaussianOutput` protocol (``gaussian_output``, ``sigma``,
``answer``), so the checker decides it exactly: :func:`dpverify.checking.input_pairs.verify_pairs` on
given pairs, :func:`dpverify.checking.gaussian.verify_gaussian` on given pairs or every neighbouring
pair of a finite domain. Its privacy profile (Balle–Wang Thm. 8) and the calibrations of ``sigma``
(Dwork–Roth Thm. A.1, Balle–Wang Alg. 1) are in :mod:`dpverify.densities.gaussian_profile`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from dpverify.checking.gaussian import verify_gaussian
from dpverify.densities.gaussian_profile import delta_for_epsilon, positive_sigma
from dpverify.densities.piecewise import as_fraction
from dpverify.errors import InvalidArgument
from dpverify.verdict.results import PairsResult

__all__ = ["GaussianMechanism"]


@dataclass(frozen=True, eq=False)
class GaussianMechanism:
    """Balle and Wang 2018 (and Dwork–Roth 2014 App. A): ``M(D) = f(D) + N(0, sigma^2 I_k)``.

    Args:
        sigma: the noise's standard deviation (rational; a float is read exactly).
        query: ``f``: dataset -> sequence of ``k`` rational numbers; None (default): the dataset is
            itself the vector of query answers (the benchmark suites' convention).
        name: how reports name it.
    """

    #: The declaration the checker routes on (:class:`~dpverify.densities.gaussian.GaussianOutput`).
    gaussian_output: ClassVar[bool] = True

    sigma: Any
    query: Callable[[Any], Sequence[Any]] | None = None
    name: str = field(default="gaussian", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sigma", positive_sigma(self.sigma))

    def __repr__(self) -> str:
        return f"GaussianMechanism(sigma={self.sigma!r}{'' if self.query is None else ', query=' + repr(self.query)})"

    @property
    def exact_sigma(self) -> Fraction:
        return self._sigma  # type: ignore[attr-defined]

    def answer(self, dataset: Any) -> tuple[Fraction, ...]:
        """``f(D)`` as exact Fractions."""
        values = dataset if self.query is None else self.query(dataset)
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidArgument(f"the query must return a sequence of numbers, got {values!r} on {dataset!r}.")
        return tuple(as_fraction(f"f(D)[{i}]", v) for i, v in enumerate(values))

    def delta_for_epsilon(self, epsilon: Any, *, sensitivity: Any = None, sensitivity_squared: Any = None) -> Any:
        """A certified enclosure of ``delta(eps)`` at l2 distance ``Delta``
        (:func:`dpverify.densities.gaussian_profile.delta_for_epsilon`)."""
        return delta_for_epsilon(epsilon, sigma=self.exact_sigma, sensitivity=sensitivity,
                                 sensitivity_squared=sensitivity_squared)

    def verify(self, **options: Any) -> PairsResult:
        """:func:`dpverify.checking.gaussian.verify_gaussian` of this mechanism."""
        return verify_gaussian(self, **options)
