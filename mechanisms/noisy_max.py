"""Report noisy max, noisy max returning its value, and noisy histograms, with exact outputs.

The benchmark versions of StatDP (Ding, Wang, Wang, Zhang, Kifer: Detecting Violations of
Differential Privacy, CCS 2018, Algorithms 5-10; ``statdp/algorithms.py``) and DP-Sniper
(``dpsniper/mechanisms/report_noisy_max.py``, ``noisy_hist.py``), on query answers of sensitivity 1:

* :class:`ReportNoisyMax` — ``argmax_i (q_i + N_i)`` with ``N_i ~ Lap(2/eps)`` (CCS 2018 Alg. 5) or
  the one-sided ``Exp(2/eps)`` (Alg. 6); eps-DP under "all answers differ by at most 1". Discrete:
  the probability of each index is an exact piecewise-exponential integral (:mod:`dpverify.mechanisms.noise`).
  With ``noise="geometric"`` (two-sided geometric ``Geometric(2/eps)``, on integer answers) it is an
  exact rational function of ``a = e^(-eps/2)`` (:mod:`dpverify.mechanisms.geometric`); ties then have
  positive probability and the **smallest index** among the largest noisy answers wins
  (``numpy.argmax``, as StatDP's implementation).
* :class:`NoisyMaxValue` — the same noisy answers but releasing ``max_i (q_i + N_i)`` (Alg. 7 and 8,
  the incorrect variants): a continuous output with density
  ``sum_i f(x - q_i) prod_{j != i} F(x - q_j)``.
* :class:`NoisyHistogram` — ``q + Lap(1/eps)^k`` (Alg. 9, eps-DP when one bin changes by 1) and the
  incorrect ``q + Lap(eps)^k`` (Alg. 10, eps* = 1/eps). StatDP releases the first noisy bin,
  DP-Sniper the whole vector; the vector is released here (its eps* is the same under "one differs").

The continuous ones offer ``output_density(dataset)`` (a :class:`dpverify.densities.continuous.MixedOutput`
or :class:`dpverify.densities.continuous.ProductOutput`), which :func:`dpverify.checking.input_pairs.verify_pairs`
decides with :mod:`dpverify.densities.continuous`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dpverify.densities.piecewise import as_fraction
from dpverify.errors import InvalidArgument

from .geometric import argmax_values, check_integers
from .noise import Exponential, Geometric, Laplace, Noise, NoiseProgram, argmax_probabilities, max_density

__all__ = ["ReportNoisyMax", "NoisyMaxValue", "NoisyHistogram", "noise_for"]

_NOISES = ("laplace", "exponential", "geometric")


def _epsilon(value: Any) -> Fraction:
    eps = as_fraction("epsilon", value)
    if eps <= 0:
        raise InvalidArgument(f"epsilon must be positive, got epsilon={value!r}.")
    return eps


def noise_for(noise: str, scale: Fraction) -> Noise:
    """``"laplace"`` -> ``Lap(scale)``, ``"exponential"`` -> one-sided ``Exp(scale)``, ``"geometric"`` ->
    two-sided ``Geometric(scale)`` (integer answers only)."""
    if noise == "laplace":
        return Laplace(scale)
    if noise == "exponential":
        return Exponential(scale)
    if noise == "geometric":
        return Geometric(scale)
    if noise == "gaussian":
        # Refused, not approximated: P(argmax = i) = int phi(x - q_i) prod_j Phi(x - q_j) dx has no closed
        # form, and a quadrature without rigorous error bounds must not reach a verdict.
        raise InvalidArgument(
            "noise='gaussian' is refused: the argmax probabilities of Gaussian noise have no closed form "
            "(integrals of products of normal CDFs) and dpverify puts no uncertified quadrature in a verdict. "
            "Use noise='laplace', 'exponential' or 'geometric' here; the Gaussian mechanism itself "
            "(dpverify.mechanisms.gaussian.GaussianMechanism) is decided exactly by "
            "dpverify.checking.gaussian.verify_gaussian."
        )
    raise InvalidArgument(f"noise must be one of {_NOISES}, got noise={noise!r}.")


def _set_noise(mechanism: Any, prefix: str) -> None:
    """A noisy max's noise of scale ``scale_factor / eps`` and its default name ``{prefix}_{noise}``."""
    scale = as_fraction("scale_factor", mechanism.scale_factor) / _epsilon(mechanism.epsilon)
    object.__setattr__(mechanism, "_noise", noise_for(mechanism.noise, scale))
    if not mechanism.name:
        object.__setattr__(mechanism, "name", f"{prefix}_{mechanism.noise}")


@dataclass(frozen=True, eq=False)
class ReportNoisyMax(NoiseProgram):
    """Ding et al. (CCS 2018) Alg. 5 / 6: the index of the largest ``q_i + N_i``, ``N_i`` of scale
    ``2/eps`` (Laplace, one-sided exponential, or two-sided geometric).

    Args:
        epsilon: eps (rational; floats are read exactly).
        noise: ``"laplace"`` (Alg. 5), ``"exponential"`` (Alg. 6) or ``"geometric"`` (Alg. 5 with the
            discrete Laplace ``Geometric(2/eps)``, on integer answers; ties go to the smallest index).
        scale_factor: the noise scale is ``scale_factor / eps`` (2 in the paper; a mutant may lower it).
    """

    epsilon: Any
    noise: str = "laplace"
    scale_factor: Any = 2
    name: str = field(default="", compare=False)
    _noise: Noise = field(init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        _set_noise(self, "report_noisy_max")

    def __repr__(self) -> str:
        return f"ReportNoisyMax(epsilon={self.epsilon}, noise={self.noise!r}, scale_factor={self.scale_factor})"

    @property
    def rational_values(self) -> bool:
        return self.noise == "geometric"

    def probabilities(self, dataset: tuple) -> dict:
        if isinstance(self._noise, Geometric):
            return argmax_values(check_integers(dataset), 1 / self._noise.scale)
        return argmax_probabilities(list(dataset), self._noise)


@dataclass(frozen=True, eq=False)
class NoisyMaxValue:
    """Ding et al. (CCS 2018) Alg. 7 / 8 (incorrect): releases ``max_i (q_i + N_i)``, ``N_i`` of scale
    ``2/eps``. A continuous output: :meth:`output_density`."""

    epsilon: Any
    noise: str = "laplace"
    scale_factor: Any = 2
    name: str = field(default="", compare=False)
    _noise: Noise = field(init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        if self.noise == "geometric":
            raise InvalidArgument(
                "NoisyMaxValue releases the noisy maximum; with noise='geometric' that is an integer of "
                "unbounded support, which is not supported: use noise='laplace' or 'exponential'."
            )
        _set_noise(self, "noisy_max_value")

    def __repr__(self) -> str:
        return f"NoisyMaxValue(epsilon={self.epsilon}, noise={self.noise!r}, scale_factor={self.scale_factor})"

    continuous_output = True

    def output_density(self, dataset: tuple):
        from dpverify.densities.continuous import MixedOutput

        return MixedOutput({}, {"max": max_density(list(dataset), self._noise)})

    def loss_components(self, first: tuple, second: tuple) -> list[tuple]:
        """The key the loss of ``(first, second)`` depends on (:mod:`dpverify.checking.pair_cover`).

        The output is one density, ``p_D(x) = sum_i f(x - q_i) prod_{j != i} F(x - q_j)``, and the
        loss is ``sup_x p_D(x) / p_D'(x)``. (1) ``p_D`` is symmetric in the answers, so it depends only
        on the multiset of ``D``: the loss depends on ``(sorted D, sorted D')`` (each sorted on its own,
        not jointly). (2) Adding ``m`` to every answer of both shifts both densities by ``m``
        (``p_{D+m}(x) = p_D(x - m)``), which leaves the supremum of their ratio unchanged. So the key
        is ``(sorted D - m, sorted D' - m)`` with ``m`` the smallest answer of the two; pairs with the
        same multisets have the same density (empty when ``sorted D == sorted D'``: ratio 1).
        """
        if sorted(first) == sorted(second):
            return []
        low = min(*first, *second)
        return [(tuple(sorted(v - low for v in first)), tuple(sorted(v - low for v in second)))]


@dataclass(frozen=True, eq=False)
class NoisyHistogram:
    """Ding et al. (CCS 2018) Alg. 9 (``Lap(1/eps)``, correct) and Alg. 10 (``Lap(eps)``, incorrect):
    every bin plus independent Laplace noise; the noisy vector is released.

    Args:
        epsilon: eps.
        wrong_scale: use ``Lap(eps)`` instead of ``Lap(1/eps)`` (Alg. 10).
        scale_factor: the noise scale is ``scale_factor / eps`` (1 in the paper; a mutant may lower
            it; ignored with ``wrong_scale``). With one bin, a Laplace count of sensitivity 1 at
            scale ``b = scale_factor / eps``.
    """

    epsilon: Any
    wrong_scale: bool = False
    name: str = field(default="", compare=False)
    scale_factor: Any = 1
    _noise: Laplace = field(init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        eps = _epsilon(self.epsilon)
        factor = as_fraction("scale_factor", self.scale_factor)
        if factor <= 0:
            raise InvalidArgument(f"scale_factor must be positive, got scale_factor={self.scale_factor!r}.")
        object.__setattr__(self, "_noise", Laplace(eps if self.wrong_scale else factor / eps))
        if not self.name:
            object.__setattr__(self, "name", "noisy_histogram_wrong_scale" if self.wrong_scale else "noisy_histogram")

    def __repr__(self) -> str:
        extra = "" if self.scale_factor == 1 else f", scale_factor={self.scale_factor}"
        return f"NoisyHistogram(epsilon={self.epsilon}, wrong_scale={self.wrong_scale}{extra})"

    continuous_output = True

    def output_density(self, dataset: tuple):
        from dpverify.densities.continuous import ProductOutput

        density = self._noise.density()
        return ProductOutput(tuple(density.shift(-as_fraction(f"q[{i}]", v)) for i, v in enumerate(dataset)))
