"""Exceptions raised by dpverify.

A privacy violation is a *result* (``VerificationResult.holds is False``), never an exception. The
exceptions say that no verdict could be given:

* :class:`InvalidArgument` (and :class:`EnumerationTooLarge`): the input itself is wrong; raised
  before any work starts. The CLI exits with 2.
* :class:`MechanismError`: the mechanism raised on a dataset; the dataset is named and the original
  exception chained (``__cause__``). The CLI exits with 3.
* :class:`NondeterministicMechanism`: the mechanism returned two different distributions for the
  same dataset, or drew from Python's or numpy's global generator, so it returns samples, not its
  distribution (a sampler given to ``estimate_sampler``: its outputs differ under one seed). The
  CLI exits with 3.
* :class:`EnvironmentFailure`: the machine or an executor failed (an unwritable report path, a Dask
  cluster that cannot start). The CLI exits with 3.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DpverifyError",
    "InvalidArgument",
    "EnumerationTooLarge",
    "MechanismError",
    "NondeterministicMechanism",
    "EnvironmentFailure",
]


class DpverifyError(Exception):
    """Base class of every exception dpverify raises on purpose."""


class InvalidArgument(DpverifyError, ValueError):
    """An argument is outside what the function accepts; the message names it and the fix."""


class EnumerationTooLarge(InvalidArgument):
    """The exhaustive enumeration asked for would visit more pairs than the allowed maximum."""


class MechanismError(DpverifyError):
    """The mechanism raised while dpverify ran it on ``dataset``; no verdict was given.

    The original exception is chained as ``__cause__`` (and kept as ``original``).
    """

    def __init__(self, message: str, *, dataset: Any = None, original: BaseException | None = None) -> None:
        super().__init__(message)
        self.dataset = dataset
        self.original = original

    def __reduce__(self) -> tuple:  # across a process pool: the message and the dataset travel
        return (_rebuild, (type(self), str(self), self.dataset))


class NondeterministicMechanism(DpverifyError):
    """The mechanism returned different distributions on two calls with the same ``dataset``, or
    drew from a random generator dpverify does not see (a global one, or for a sampler any but its
    ``rng``).

    A mechanism must return its exact output distribution, a function of the dataset alone; one
    that draws random numbers returns a sample of it. ``first`` and ``second`` are the two outputs
    (None when a generator's move was seen instead).
    """

    def __init__(self, message: str, *, dataset: Any = None, first: Any = None, second: Any = None,
                 routes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.dataset = dataset
        self.first = first
        self.second = second
        #: for a sampler that drew from a global generator: the modules whose routing fixes it
        #: (``patch=[...]``, ``--patch MODULE``): ``"numpy.random"``, ``"random"``
        self.routes = routes

    def __reduce__(self) -> tuple:
        return (_rebuild, (type(self), str(self), self.dataset))


class EnvironmentFailure(DpverifyError):
    """The environment failed (a path cannot be written, an executor cannot start); no verdict.

    A process pool's task whose worker died on it twice sets ``task`` (its index in the phase) and
    ``exit_code`` (the dead worker's, ``-N`` for signal N), for a caller that names its tasks."""

    task: int | None = None
    exit_code: int | None = None


def _rebuild(cls: type, message: str, dataset: Any) -> DpverifyError:
    return cls(message, dataset=dataset)
