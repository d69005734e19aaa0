"""dpverify: exact, property-based verification of differential-privacy claims.

The public surface is small and grouped: :func:`verify` decides a claim exactly (every exact
check goes through it), :func:`estimate` bounds a sampled mechanism statistically, :func:`analyze`
measures an instance (eps*, the privacy profile, stability); the inputs (:class:`Datasets`,
:class:`InputPairs`, :class:`PublicData`) and the claims (:class:`PureDp`, :class:`ApproximateDp`,
:class:`Stability`, :class:`PredictionDp`) are values; :class:`Distribution` is what mechanisms
return and :func:`from_sampler` makes sampling code one. The pytest helpers are in
:mod:`dpverify.testing`, the result types in :mod:`dpverify.verdict.results`.

``import dpverify`` is cheap: the public names are loaded on first use (PEP 562), so importing
the package (as its pytest plugin does in every pytest session) pulls in neither numpy nor sympy
nor mpmath. ``from dpverify import verify`` loads the checker (and numpy); sympy is imported only
when an exact tie has to be proved or a sympy number is parsed.
"""

from __future__ import annotations

import importlib

from dpverify.errors import (
    DpverifyError,
    EnumerationTooLarge,
    EnvironmentFailure,
    InvalidArgument,
    MechanismError,
    NondeterministicMechanism,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load lazily (see __getattr__)
    from typing import Any

    from dpverify.checking.checker import exchangeable
    from dpverify.checking.front import Datasets, PublicData, analyze, estimate, verify
    from dpverify.checking.input_pairs import InputPairs
    from dpverify.finite.distribution import Distribution
    from dpverify.finite.sampler.sampling import from_sampler
    from dpverify.verdict.claims import ApproximateDp, PredictionDp, PureDp, Stability
    from dpverify.verdict.engine import Verdict

__all__ = [
    # checks: one door for exact verdicts, one for the statistical mode, and the measurements
    "verify",
    "estimate",
    "analyze",
    # inputs
    "Datasets",
    "InputPairs",
    "PublicData",
    # claims
    "PureDp",
    "ApproximateDp",
    "Stability",
    "PredictionDp",
    # mechanisms
    "Distribution",
    "from_sampler",
    "exchangeable",
    # verdicts and errors
    "Verdict",
    "DpverifyError",
    "InvalidArgument",
    "EnumerationTooLarge",
    "MechanismError",
    "NondeterministicMechanism",
    "EnvironmentFailure",
]

__version__ = "0.1.0"

#: public name -> the submodule that defines it (imported on first access).
_LAZY = {
    "verify": "checking.front",
    "estimate": "checking.front",
    "Datasets": "checking.front",
    "PublicData": "checking.front",
    "InputPairs": "checking.input_pairs",
    "analyze": "checking.front",
    "exchangeable": "checking.checker",
    "PureDp": "verdict.claims",
    "ApproximateDp": "verdict.claims",
    "Stability": "verdict.claims",
    "PredictionDp": "verdict.claims",
    "Distribution": "finite.distribution",
    "from_sampler": "finite.sampler.sampling",
    "Verdict": "verdict.engine",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"dpverify.{module}"), name)
        globals()[name] = value  # later look-ups skip __getattr__
        return value
    if not name.startswith("_"):
        # ``import dpverify; dpverify.checking.checker.verify`` kept working when the package imported its
        # submodules eagerly; load a submodule on attribute access the same way.
        try:
            return importlib.import_module(f"dpverify.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"dpverify.{name}":
                raise
    raise AttributeError(f"module 'dpverify' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
