"""A bound on one evaluation of the mechanism: ``verify(..., timeout=SECONDS)``.

A mechanism that never returns on some dataset would hang a verification forever. With a limit,
each call of the mechanism (and of its ``exact_distribution`` / ``distributions`` methods) runs
under a watchdog and a call that runs longer raises :class:`~dpverify.errors.MechanismError` naming
the dataset and the limit: no verdict, never a wrong one.

The watchdog is ``signal.setitimer(ITIMER_REAL)``: a thread cannot interrupt running Python code,
only a signal can, and Python runs signal handlers in the main thread only. So the limit applies
where the mechanism is evaluated in a process's main thread: serially in the caller's process, and
in the workers of ``executor="processes"`` (each task runs in its worker's main thread). It cannot
apply in a Dask worker (tasks run on its threads) or when ``verify`` itself runs outside the main
thread: there it is refused with :class:`~dpverify.errors.InvalidArgument`, naming the fix. The timer
also stops a mechanism blocked in a system call Python retries (``time.sleep``, a socket read),
not one stuck inside a C extension that never returns to the interpreter. While a limit is active
this module owns ``SIGALRM``; the previous handler and timer are put back after each call.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Callable
from typing import Any

from dpverify.errors import InvalidArgument, MechanismError

__all__ = ["TimeLimited", "check_timeout", "time_limited"]

#: The mechanism's methods that evaluate it (and so run under the limit too).
_EVALUATING = ("exact_distribution", "distributions")


class _OutOfTime(BaseException):
    """Raised by the alarm inside the mechanism; a BaseException so that a mechanism's own
    ``except Exception`` does not swallow it."""


def _alarm(signum: int, frame: Any) -> None:
    raise _OutOfTime


def check_timeout(timeout: float | None) -> float | None:
    """``timeout`` as seconds (a positive finite number) or None; else :class:`InvalidArgument`."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise InvalidArgument(
            f"timeout={timeout!r} is not a time limit; pass a positive number of seconds per evaluation of the "
            "mechanism (e.g. timeout=60), or None for no limit."
        )
    return float(timeout)


def run_limited(function: Callable[..., Any], seconds: float, what: str, dataset: Any, *arguments: Any) -> Any:
    """``function(*arguments)`` stopped after ``seconds`` with a :class:`MechanismError` naming
    ``what`` and ``dataset``; refused outside a main thread, where no alarm can reach it."""
    if threading.current_thread() is not threading.main_thread():
        raise InvalidArgument(
            f"timeout={seconds:g} cannot bound {what} here: the limit is a SIGALRM timer, and signals reach only "
            f"a process's main thread, while this evaluation runs in thread {threading.current_thread().name!r} "
            "(a Dask worker, a thread pool, or verify called from a thread). Call verify from the main thread "
            "with executor=None or executor='processes', or drop timeout=."
        )
    previous = signal.signal(signal.SIGALRM, _alarm)
    outer = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return function(*arguments)
    except _OutOfTime:
        raise MechanismError(
            f"{what} ran longer than the time limit timeout={seconds:g} s on dataset {dataset!r} and was "
            "stopped; no verdict. Fix the mechanism on that dataset (a loop that does not end, a blocking "
            "call), or raise timeout= if it is merely slow.",
            dataset=dataset,
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer[0] > 0:  # an enclosing timer (the caller's own) keeps running, less the time spent
            signal.setitimer(signal.ITIMER_REAL, max(outer[0] - seconds, 1e-3), outer[1])


class TimeLimited:
    """``mechanism`` whose every evaluation runs under a limit of ``seconds`` (see the module); its
    other attributes (declarations such as ``exchangeable``, ``__name__``) are the mechanism's.
    Picklable when the mechanism is, so it travels to a process pool's workers."""

    def __init__(self, mechanism: Any, seconds: float) -> None:
        self._mechanism = mechanism
        self._seconds = seconds

    def __call__(self, *arguments: Any) -> Any:
        return run_limited(self._mechanism, self._seconds, f"the mechanism {_name(self._mechanism)}",
                           arguments[-1] if arguments else None, *arguments)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and name not in ("__name__", "__qualname__", "__module__", "__doc__"):
            raise AttributeError(name)  # also during unpickling, before _mechanism is set
        value = getattr(self._mechanism, name)
        if name in _EVALUATING and callable(value):
            seconds, what = self._seconds, f"the mechanism {_name(self._mechanism)}.{name}"
            return lambda *arguments: run_limited(value, seconds, what, arguments[-1] if arguments else None,
                                                  *arguments)
        return value


def _name(mechanism: Any) -> str:
    return getattr(mechanism, "__name__", None) or type(mechanism).__name__


def time_limited(mechanism: Any, timeout: float | None) -> Any:
    """``mechanism`` itself without a limit, else a :class:`TimeLimited` of it."""
    seconds = check_timeout(timeout)
    return mechanism if seconds is None else TimeLimited(mechanism, seconds)
