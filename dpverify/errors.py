"""Exceptions raised on misuse of dpverify.

A privacy violation is a *result* (``VerificationResult.holds is False``), never an exception:
these classes are raised only when the input itself is wrong, before any work starts.
"""

from __future__ import annotations

__all__ = ["DpverifyError", "InvalidArgument", "EnumerationTooLarge"]


class DpverifyError(Exception):
    """Base class of every exception dpverify raises on purpose."""


class InvalidArgument(DpverifyError, ValueError):
    """An argument is outside what the function accepts; the message names it and the fix."""


class EnumerationTooLarge(InvalidArgument):
    """The exhaustive enumeration asked for would visit more pairs than the allowed maximum."""
