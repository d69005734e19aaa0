"""What a process pool's lost worker cost: which task it ran, what ended it, and what to do.

A worker of ``executor="processes"`` that dies (the out-of-memory killer's SIGKILL, a crash in a C
extension, ``kill`` by hand) breaks the whole pool: every task not yet back fails with
``BrokenProcessPool``. Every task dpverify sends is a pure function of its inputs, so
:class:`~dpverify.parallel.executors.Pending` re-runs the lost ones on a fresh pool, and the result is
that of an undisturbed run. Each task notes, before it starts, which worker runs it (a ledger of
small files, :func:`dpverify.parallel._transport._call_noted`); after a death this module reads the
ledger and the workers' exit codes to name the task the dead worker ran (its *culprit*), and, when
the same task is the culprit twice, builds the :class:`~dpverify.errors.EnvironmentFailure` that ends
the call. Used by :mod:`dpverify.parallel.executors` (kept apart to keep modules small).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from dpverify.errors import EnvironmentFailure

__all__ = ["culprits", "died_twice", "died_unrecoverable", "exit_codes", "signal_name"]


def exit_codes(pool: Any, *, wait: float = 5.0) -> dict[int, int | None]:
    """The exit code of each worker process of ``pool`` by pid (``-N``: signal N ended it), waiting up
    to ``wait`` seconds for the pool's own thread to reap the workers it terminates after a death."""
    deadline = time.monotonic() + wait
    while True:
        processes = dict(getattr(pool, "_processes", None) or {})
        codes = {pid: process.exitcode for pid, process in processes.items()}
        if all(code is not None for code in codes.values()) or time.monotonic() >= deadline:
            return codes
        time.sleep(0.02)


def culprits(ledger: str | None, lost: Sequence[int], codes: dict[int, int | None]) -> dict[int, int]:
    """The lost tasks whose worker died on its own (not terminated by the broken pool, which sends
    SIGTERM to the survivors), with that worker's exit code: ``{task index: exit code}``."""
    found: dict[int, int] = {}
    if ledger is None:
        return found
    for index in lost:
        try:
            with open(os.path.join(ledger, str(index))) as file:
                pid = int(file.read())
        except (OSError, ValueError):  # never started (queued behind the death)
            continue
        code = codes.get(pid)
        if code is not None and code not in (0, -signal.SIGTERM):
            found[index] = code
    return found


def signal_name(code: int) -> str:
    """``"SIGKILL, exit code -9"`` for a worker ended by a signal, ``"exit status 1"`` otherwise."""
    if code >= 0:
        return f"exit status {code}"
    try:
        return f"{signal.Signals(-code).name}, exit code {code}"
    except ValueError:
        return f"signal {-code}, exit code {code}"


def _peak_memory() -> str:
    """The largest resident size any finished worker of this process reached, as measured by the
    kernel (``ru_maxrss`` of the reaped children: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak_bytes = peak if sys.platform == "darwin" else peak * 1024
    return f"; the largest worker so far peaked at {peak_bytes / 2**20:.0f} MiB resident" if peak_bytes else ""


_FIX = ("run with fewer workers (open_executor('processes', workers=k) and pass its runner, or "
        "`dpverify audit --jobs k`), let a large instance run in row blocks (a black-box replace-one "
        "instance above the row-block size does so by itself), or use executor=None (serial: one copy "
        "of the data in memory)")


def _cause(code: int) -> str:
    if code == -signal.SIGKILL:
        return ("A worker killed by SIGKILL is most often the out-of-memory killer (or a kill by "
                f"hand){_peak_memory()}: {_FIX}.")
    return (f"A worker ended by {signal_name(code)} crashed outside Python (a C extension, or a "
            "signal sent to it); run the call with executor=None to see the failure in this process.")


def died_twice(index: int, total: int, phase: Callable[..., Any], code: int) -> EnvironmentFailure:
    """The failure ending a call whose task ``index`` (of ``total``) killed its worker twice: once
    on the first pool, once on the fresh pool it was re-run on."""
    name = getattr(phase, "__qualname__", type(phase).__name__)
    failure = EnvironmentFailure(
        f"executor='processes': a worker process died running chunk {index} of {total} of phase "
        f"{name!r} ({signal_name(code)}), and died again when that chunk was re-run once on a fresh "
        f"pool; no verdict. {_cause(code)}"
    )
    failure.task, failure.exit_code = index, code  # for a caller that names its tasks (audit rows)
    return failure


def died_unrecoverable(codes: dict[int, int | None]) -> EnvironmentFailure:
    """The failure of a worker of a pool dpverify cannot replace (a ``concurrent.futures`` executor
    passed in): named, with the fix, instead of a raw ``BrokenProcessPool``."""
    dead = sorted(code for code in codes.values() if code not in (None, 0, -signal.SIGTERM))
    how = f" ({signal_name(dead[0])})" if dead else ""
    cause = _cause(dead[0]) if dead else "Most often the out-of-memory killer: " + _FIX + "."
    return EnvironmentFailure(
        f"a worker process of the executor passed in died{how}, which breaks the whole pool; no "
        "verdict. dpverify re-runs lost work only on a pool it made itself (executor='processes'). "
        f"{cause}"
    )
