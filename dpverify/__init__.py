"""dpverify: exact, property-based verification of differential-privacy claims.

The public surface is small: :func:`verify` decides a claim exhaustively and soundly,
:func:`analyze` exposes the worst-case privacy loss, profile and stability of an instance, and
:class:`Distribution` is what mechanisms return.

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

    from dpverify.checking.checker import (
        Analysis,
        Verdict,
        VerificationResult,
        Witness,
        analyze,
        check_exchangeable,
        exchangeable,
        verify,
    )
    from dpverify.checking.estimate import estimate_sampler
    from dpverify.checking.input_pairs import all_query_vectors, query_vectors, statdp_patterns, verify_pairs
    from dpverify.checking.public_data import all_public_samples, verify_with_public_data
    from dpverify.finite.distribution import Distribution
    from dpverify.finite.mechanism import ExactMechanism, Learner, Mechanism, mutant
    from dpverify.finite.sampling import from_sampler
    from dpverify.verdict.claims import ApproximateDp, PredictionDp, PureDp, Stability

__all__ = [
    "verify",
    "analyze",
    "exchangeable",
    "verify_with_public_data",
    "all_public_samples",
    "verify_pairs",
    "estimate_sampler",
    "query_vectors",
    "statdp_patterns",
    "all_query_vectors",
    "check_exchangeable",
    "Analysis",
    "VerificationResult",
    "Witness",
    "Verdict",
    "PureDp",
    "ApproximateDp",
    "Stability",
    "PredictionDp",
    "Distribution",
    "from_sampler",
    "Mechanism",
    "ExactMechanism",
    "Learner",
    "mutant",
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
    "verify": "checking.checker",
    "analyze": "checking.checker",
    "exchangeable": "checking.checker",
    "check_exchangeable": "checking.checker",
    "Analysis": "checking.checker",
    "VerificationResult": "checking.checker",
    "Witness": "checking.checker",
    "Verdict": "checking.checker",
    "PureDp": "verdict.claims",
    "ApproximateDp": "verdict.claims",
    "Stability": "verdict.claims",
    "PredictionDp": "verdict.claims",
    "Distribution": "finite.distribution",
    "from_sampler": "finite.sampling",
    "verify_pairs": "checking.input_pairs",
    "estimate_sampler": "checking.estimate",
    "query_vectors": "checking.input_pairs",
    "statdp_patterns": "checking.input_pairs",
    "all_query_vectors": "checking.input_pairs",
    "Mechanism": "finite.mechanism",
    "ExactMechanism": "finite.mechanism",
    "Learner": "finite.mechanism",
    "mutant": "finite.mechanism",
    "verify_with_public_data": "checking.public_data",
    "all_public_samples": "checking.public_data",
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
