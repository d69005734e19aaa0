"""Audit rows run N at a time (``dpverify audit --jobs N``, ``run_audit(cases, jobs=N)``).

Each row runs whole, serially, in one worker of an executor of :mod:`dpverify.parallel.executors`:
a process pool of N workers made for the audit, or a Dask cluster. Rows are queued longest first
(by a cost per row: the previous report's seconds) so the longest does not start last, and each
worker takes the next row as it frees; results come back by row. A row inside a worker opens no
pool of its own (:func:`~dpverify.parallel.executors.serial_within`), so N jobs are N processes.

A worker forked from this process finds the rows where the driver left them (:data:`_CASES`;
rows hold closures, which :mod:`pickle` cannot send); a Dask worker receives its row with
cloudpickle. A row that raises is sent back as its exception chain (pickling drops ``__cause__``
and the traceback, so both travel alongside) and re-raised here as the serial run raises it; the
first failing row in report order wins, as serially, and the rows after it are not started. A
worker that dies (killed, out of memory) fails the audit with an :class:`EnvironmentFailure` that
names the row it was running.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dpverify.errors import EnvironmentFailure, InvalidArgument
from dpverify.parallel.executors import Shared, is_dask_client, open_executor, serial_within

__all__ = ["RowDone", "run_rows", "available_cpus"]

#: The rows of the audit being run, for workers forked from this process (a task is then an index).
_CASES: Sequence[Any] = ()

#: How deep an exception's chain of causes travels back from a worker.
_CHAIN = 8


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it, else every core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker, as text: the ``__context__`` of the last
    cause re-raised here, so a printed traceback shows where the worker raised it (the messages,
    which read only ``__cause__``, stay those of the serial run)."""

    def __str__(self) -> str:
        return f"\n'''\n{self.args[0]}'''"


class _Unpicklable(Exception):
    """Stands in for an exception that cannot travel back from a worker: its type and message."""


@dataclass(frozen=True)
class _Carried:
    """A row's exception on its way back: the chain of causes and the formatted traceback."""

    chain: tuple[BaseException, ...]
    text: str

    @classmethod
    def of(cls, error: BaseException) -> _Carried:
        chain: list[BaseException] = []
        link: BaseException | None = error
        while link is not None and len(chain) < _CHAIN:
            try:
                pickle.loads(pickle.dumps(link))
                chain.append(link)
            except Exception:  # noqa: BLE001 - any pickling failure: send its type and message
                chain.append(_Unpicklable(f"{type(link).__module__}.{type(link).__qualname__}: {link}"))
            link = link.__cause__
        return cls(tuple(chain), "".join(traceback.format_exception(type(error), error, error.__traceback__)))

    def rebuilt(self) -> BaseException:
        """The exception with its causes chained again (``raise chain[0]`` reads as the serial raise)."""
        for error, cause in zip(self.chain, self.chain[1:]):
            error.__cause__ = cause
        self.chain[-1].__context__ = RemoteTraceback(self.text)  # printed first, as the worker's traceback
        return self.chain[0]


@dataclass(frozen=True)
class RowDone:
    """One row's outcome from a worker: its measurement (None when it raised), wall and CPU seconds."""

    index: int
    measurement: Any
    seconds: float
    cpu_seconds: float
    error: _Carried | None = None


def _run_row(task: tuple[int, Any], shared: Shared) -> RowDone:
    """In a worker: run one row serially, recording in ``started`` which row this process runs."""
    index, case = task
    if case is None:
        case = _CASES[index]
    if "started" in shared.arrays:
        shared.arrays["started"][index] = os.getpid()
    wall, cpu = time.perf_counter(), time.process_time()
    error = None
    try:
        with serial_within():
            measurement = case.run()
    except Exception as caught:  # a row's error travels back and is raised there
        measurement, error = None, _Carried.of(caught)
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    if measurement is not None:
        _send_intervals()
        try:
            pickle.dumps(measurement)  # fails here, naming the row, rather than in the pool's pipe
        except Exception as caught:  # noqa: BLE001 - whatever pickle raises
            measurement, error = None, _Carried.of(EnvironmentFailure(
                f"audit row {case.claim}/{case.mechanism} ({case.instance}): its measurement cannot be sent back "
                f"from the worker process ({type(caught).__name__}: {caught}); run it with --jobs 1 (jobs=1)."))
    return RowDone(index, measurement, seconds, cpu_seconds, error)


def _interval(parts: tuple, is_complex: bool) -> Any:
    """An mpmath interval number from its endpoints, in ``mpmath.iv`` (unpickling)."""
    import mpmath

    return mpmath.iv.make_mpc(parts) if is_complex else mpmath.iv.make_mpf(parts)


def _reduce_interval(value: Any) -> tuple:
    if type(value).__name__ == "ivmpc":  # an ivmpf has an _mpci_ too (its value as a complex)
        return _interval, (value._mpci_, True)
    return _interval, (value._mpi_, False)


def _send_intervals() -> None:
    """Let mpmath's interval numbers travel (certified enclosures in witnesses): ``mpmath.iv`` makes
    its number classes per context, which :mod:`pickle` cannot find by name; they go as their exact
    endpoints and come back as the same numbers of ``mpmath.iv``."""
    import copyreg

    import mpmath

    for value in (mpmath.iv.mpf(0), mpmath.iv.mpc(0)):
        if type(value) not in copyreg.dispatch_table:
            copyreg.pickle(type(value), _reduce_interval)


def _runner_for(executor: Any, jobs: int) -> Any:
    """The executor that runs whole rows: a pool of ``jobs`` processes, or a Dask cluster."""
    if executor is None or executor == "serial":
        return open_executor("processes", workers=jobs)
    if executor == "dask" or is_dask_client(executor):
        return open_executor(executor, workers=jobs)
    raise InvalidArgument(
        f"jobs={jobs} runs {jobs} audit rows at once, each serially; executor={executor!r} would run each row's "
        f"work on a pool of its own besides ({jobs} x the cores, oversubscribed). Choose one: jobs=1 with "
        f"executor={executor!r} (every row sharded over the pool, one row at a time), or jobs={jobs} with "
        "executor=None (rows on a pool of that many processes) or 'dask' (rows on a Dask cluster); "
        "on the command line: --jobs 1 --executor processes, or --jobs N alone."
    )


def _forks() -> bool:
    """Whether the pool's workers are forked from this process (and so see :data:`_CASES`)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _died(error: BaseException, runner: Any, started: Any, finished: set[int], cases: Sequence[Any]) -> EnvironmentFailure:
    """The failure of a worker that died, naming the row it was running."""
    running = [i for i in range(len(cases)) if started is not None and started[i] and i not in finished]
    codes = runner.exit_codes()
    deadline = time.monotonic() + 5  # the pool's own thread is terminating and reaping the others
    while any(code is None for code in codes.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
        codes = runner.exit_codes()
    dead = [i for i in running if codes.get(int(started[i])) not in (None, -signal.SIGTERM)]
    named = dead or running
    rows = " or ".join(f"{cases[i].claim}/{cases[i].mechanism} ({cases[i].instance})" for i in named)
    how = ""
    if len(dead) == 1:
        code = codes[int(started[dead[0]])]
        assert code is not None
        how = f" ({_how(code)})"
    where = f" while running audit row {rows}" if rows else ""
    again = f"; run it alone to see why: dpverify audit --claim {cases[named[0]].claim} --jobs 1" if named else ""
    return EnvironmentFailure(
        f"a worker process of the audit died{where}{how}; no verdict for the rows not yet run{again}."
    )


def _how(code: int) -> str:
    """How a worker ended: ``killed by SIGKILL: out of memory, or killed by hand``, or its exit status."""
    if code >= 0:
        return f"exit status {code}"
    return f"killed by {_signal_name(code)}{': out of memory, or killed by hand' if code == -signal.SIGKILL else ''}"


def _died_twice(case: Any, code: int) -> EnvironmentFailure:
    """The failure of a row whose worker died on it, and again when it ran once more on a fresh pool."""
    return EnvironmentFailure(
        f"a worker process of the audit died while running audit row {case.claim}/{case.mechanism} "
        f"({case.instance}) ({_how(code)}), and died again when the row was run once more on a fresh pool; no verdict "
        f"for the rows not yet run; run it alone to see why: dpverify audit --claim {case.claim} --jobs 1."
    )


def run_rows(
    cases: Sequence[Any], order: Sequence[int], *, jobs: int, executor: Any = None,
    on_done: Callable[[RowDone, list[int]], None] | None = None,
) -> list[RowDone]:
    """Run every case whole in ``jobs`` workers, queued in ``order``; the outcomes in case order.

    Args:
        cases: the audit cases (:class:`~dpverify.integrations.audit.AuditCase`).
        order: the indices of ``cases`` in the order to start them (longest first).
        jobs: how many rows run at once.
        executor: None (a pool of ``jobs`` processes), ``"dask"`` (a LocalCluster of ``jobs``
            workers) or a Dask client (its workers).
        on_done: called as each row ends with its outcome and the indices of the rows still running.

    Raises:
        the first failing row's exception (in case order), as the serial run raises it;
        EnvironmentFailure: a worker died twice on one row (a row whose worker dies once runs again on a
            fresh pool: each row is a pure function of its case; the row is named); InvalidArgument: an executor
        that would run a pool in every worker.
    """
    global _CASES
    runner = _runner_for(executor, jobs)
    outcomes: dict[int, RowDone] = {}
    started = None
    try:
        forked = runner.kind == "processes" and _forks()
        if runner.shares_memory:  # each worker writes its pid at the row it starts: the rows running
            import numpy as np

            started = runner.output_array((len(cases),), np.int64)
        shared = Shared(arrays={} if started is None else {"started": started})
        if runner.kind == "processes" and not forked:  # spawned workers need each row pickled
            try:
                pickle.dumps(list(cases))
            except Exception as error:  # noqa: BLE001 - whatever pickle raises
                raise InvalidArgument(
                    f"jobs={jobs}: this platform starts worker processes without fork, so each audit row is "
                    f"pickled, and these rows cannot be ({type(error).__name__}: {error}); use jobs=1 "
                    "(--jobs 1) or executor='dask' (--executor dask), which ships closures."
                ) from None
        tasks = [(index, None if forked else cases[index]) for index in order]
        _CASES = cases
        pending = runner.submit(_run_row, tasks, shared)
        first_failed: int | None = None
        ending = pending.as_completed()
        while True:
            try:
                _, done = next(ending)
            except StopIteration:
                break
            except Exception as error:  # the executor failed (a worker died twice): no row raises here
                task, code = getattr(error, "task", None), getattr(error, "exit_code", None)
                if task is not None and code is not None:  # the pool named the task whose worker died on it twice
                    raise _died_twice(cases[tasks[task][0]], code) from error
                raise _died(error, runner, started, set(outcomes), cases) from error
            outcomes[done.index] = done
            if done.error is not None and (first_failed is None or done.index < first_failed):
                first_failed = done.index  # serially the audit stops here: later rows are not started
                pending.cancel([p for p, (i, _) in enumerate(tasks) if i > done.index and i not in outcomes])
            if on_done is not None:  # workers take rows in queue order: the first ones not done run
                waiting = [i for i in order if i not in outcomes and (first_failed is None or i < first_failed)]
                on_done(done, waiting[:runner.workers])
        if first_failed is not None:
            failure = outcomes[first_failed].error
            assert failure is not None
            raise failure.rebuilt()
        return [outcomes[index] for index in range(len(cases))]
    except BaseException:
        runner.terminate()  # Ctrl-C or a failure: the workers stop now, not after their rows
        raise
    finally:
        _CASES = ()
        runner.close()
