"""dpverify: exact, property-based verification of differential-privacy claims.

The public surface is small: :func:`verify` decides a claim exhaustively and soundly,
:func:`analyze` exposes the worst-case privacy loss, profile and stability of an instance, and
:class:`Distribution` is what mechanisms return.
"""

from dpverify.checker import (
    Analysis,
    VerificationResult,
    Verdict,
    Witness,
    analyze,
    check_exchangeable,
    exchangeable,
    verify,
)
from dpverify.distribution import Distribution
from dpverify.errors import DpverifyError, EnumerationTooLarge, InvalidArgument
from dpverify.public_data import all_public_samples, verify_with_public_data
from dpverify.input_pairs import all_query_vectors, query_vectors, statdp_patterns, verify_pairs

__all__ = [
    "verify",
    "analyze",
    "exchangeable",
    "verify_with_public_data",
    "all_public_samples",
    "verify_pairs",
    "query_vectors",
    "statdp_patterns",
    "all_query_vectors",
    "check_exchangeable",
    "Analysis",
    "VerificationResult",
    "Witness",
    "Verdict",
    "Distribution",
    "DpverifyError",
    "InvalidArgument",
    "EnumerationTooLarge",
]

__version__ = "0.1.0"
