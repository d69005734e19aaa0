"""Where the work of a verification runs: serially, on this machine's cores, or on a Dask cluster.

``verify(..., executor=...)``, ``analyze`` and ``run_audit`` accept:

* ``None`` or ``"serial"`` — everything in this process (the default).
* ``"processes"`` — a process pool over this machine's cores, created for the call and shut down
  after it (never at import).
* ``"dask"`` — a Dask ``LocalCluster`` (one single-threaded worker process per core), created for
  the call and closed after it. Needs the extra: ``pip install dpverify[dask]``.
* a ``dask.distributed.Client`` — its cluster (a ``LocalCluster`` or a real scheduler address,
  ``Client("tcp://host:8786")``); dpverify does not close it.
* a ``concurrent.futures.Executor`` (process or thread pool) — used as is, not shut down; its
  workers must share this machine's file system (shared arrays travel as memory-mapped files).

Work is sharded by blocks of datasets (evaluating the mechanism) and by chunk-aligned ranges of pairs
(the float sweep); the driver merges the workers' partial worst cases in shard order and the engine
certifies as serially: every executor gives the same result, bit for bit (:func:`dpverify.verdict.engine.sweep`).

Pickling: a process pool sends the mechanism with :mod:`pickle`: a module-level function or an instance
of a module-level class (a lambda or closure will not pickle: :func:`check_picklable` says so before any
work). Dask uses cloudpickle, which ships closures; a remote cluster's workers must import its modules.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import contextlib
import contextvars
import gc
import importlib
import os
import pickle
import shutil
import signal
import tempfile
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from dpverify.errors import EnvironmentFailure, InvalidArgument
from dpverify.parallel import _recovery
from dpverify.parallel._exit_join import join_at_exit
from dpverify.parallel._transport import Shared, _call_mapped, _call_noted, _call_scattered, _Files, _Mapped

__all__ = [
    "EXECUTORS", "Runner", "open_executor", "use_executor", "local_cluster", "check_picklable", "is_dask_client",
    "shard_ranges", "serial_within",
]

#: The executor names ``verify(..., executor=...)`` accepts (besides executor objects).
EXECUTORS = ("serial", "processes", "dask")


def is_dask_client(value: Any) -> bool:
    """Whether ``value`` is a ``dask.distributed.Client`` (checked without importing Dask)."""
    return type(value).__name__ == "Client" and type(value).__module__.split(".")[0] == "distributed"


def shard_ranges(total: int, parts: int, unit: int = 1) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges covering ``0 .. total - 1`` in order: ``parts`` ranges (fewer when
    there are fewer units) whose sizes differ by at most one ``unit``, every boundary but the last
    a multiple of ``unit``. Equal shards keep every worker busy to the end of a phase (7 shards of
    5 on 2 workers leave one idle for a whole shard; 8 of 4 or 5 do not)."""
    units = -(-total // unit) if total > 0 else 0
    parts = max(1, min(parts, units))
    if not units:
        return [(0, 0)]
    bounds = [min(total, (units * g // parts) * unit) for g in range(parts + 1)]
    return [(bounds[g], bounds[g + 1]) for g in range(parts)]


#: Fork pools whose workers have not started: the first submit forks them with the driver's objects
#: frozen (:func:`gc.freeze`), so a worker's garbage collections skip everything it inherited instead
#: of walking it, which writes to every inherited object and so copies the driver's heap page by
#: page (copy-on-write). The fork waits for that first submit, after the driver's own set-up: workers
#: forked at pool creation instead ran C3's numpy-heavy privacy profile 2x slower (1.1 s against
#: 0.55 s per worker at n = 14; likely the allocator state they inherit, not yet grown for large
#: arrays). Freezing, measured on black-box EM called per dataset (|X| = 4, n = 6, 2 workers):
#: 6.1 s and 7.1 s unfrozen, 5.6 s and 6.1 s frozen (serial 10.7 s).
_FORK_FROZEN: weakref.WeakSet = weakref.WeakSet()


class Runner:
    """One executor for the length of a call: ``map`` tasks over it, results in task order.

    Attributes:
        kind: ``"serial"``, ``"processes"``, ``"dask"`` or ``"executor"`` (one passed in).
        workers: how many tasks run at once (shards are sized from it).
    """

    def __init__(
        self, kind: str, workers: int, pool: Any = None, client: Any = None, owned: Any = None, files: _Files | None = None,
        local: bool = False, lender: Runner | None = None,
    ) -> None:
        self.kind = kind
        self.workers = max(1, workers)
        self._lender = lender  # a lent runner's pool is its lender's, even after a renewal
        self._own_pool = pool
        self._client = client
        self._owned = owned  # what close() shuts down (None for executors the caller passed in)
        self._files = _Files() if files is None else files  # a lent runner writes into its lender's
        self._owns_files = files is None
        self._local = local  # a Dask cluster whose workers share this machine's files (a LocalCluster's)
        self.ambient = False  # lent by use_executor rather than asked for

    @property
    def _pool(self) -> Any:
        return self._lender._pool if self._lender is not None else self._own_pool

    def _renew_pool(self, broken: Any) -> Any:
        """A working pool in place of ``broken`` (one a worker's death broke): the one already made
        if another phase renewed it first, a fresh one of the same size if this runner (or its
        lender) made ``broken``; None for a pool passed in, which is the caller's."""
        if self._lender is not None:
            return self._lender._renew_pool(broken)
        if self._own_pool is not broken:
            return self._own_pool
        if self.kind != "processes" or not any(thing is broken for thing in self._owned or ()):
            return None
        fresh = _new_pool(self.workers)
        self._owned = [fresh if thing is broken else thing for thing in self._owned or ()]
        self._own_pool = fresh
        join_at_exit(broken)
        broken.shutdown(wait=False, cancel_futures=True)
        return fresh

    def _submit_noted(self, pool: Any, function: Callable, tasks: Sequence[Any], mapped: _Mapped, ledger: str,
                      indices: Sequence[int]) -> dict[int, Any]:
        """Tasks ``indices`` of ``tasks`` queued on ``pool``, each noting its worker in ``ledger``."""
        futures = {}
        for index in indices:
            if pool in _FORK_FROZEN:  # its workers start at this first submit (see _FORK_FROZEN)
                _FORK_FROZEN.discard(pool)
                gc.freeze()
                try:
                    futures[index] = pool.submit(_call_noted, function, tasks[index], mapped, ledger, index)
                finally:
                    gc.unfreeze()
            else:
                futures[index] = pool.submit(_call_noted, function, tasks[index], mapped, ledger, index)
        return futures

    @property
    def parallel(self) -> bool:
        return self.kind != "serial"

    def shards(self, per_worker: int = 16) -> int:
        """How many shards to cut a phase into: ``per_worker`` per worker on a process pool (small
        shards: the phase after a sweep waits for its last shard, so a worker left without one
        idles for up to a shard; 4 per worker left 0.03-0.06 s of C3's n = 14 idle on one of 2
        workers), a quarter of that on Dask (each task costs the in-process scheduler and the worker
        1-2 ms: 100 empty tasks took 0.17 s of the driver's CPU), 1 serially."""
        if not self.parallel:
            return 1
        return self.workers * (max(1, per_worker // 4) if self._client is not None else per_worker)

    @property
    def shares_memory(self) -> bool:
        """Whether tasks can write into an :meth:`output_array` that this process then reads: serially,
        on a process pool (or an executor passed in) and on a Dask ``LocalCluster``; not on another
        Dask cluster, whose workers may be on other machines."""
        return self._client is None or self._local

    def output_array(self, shape: tuple[int, ...], dtype: Any = float) -> Any:
        """A zeroed array of ``shape`` that the tasks of a phase fill in place when it is one of the
        phase's :class:`Shared` arrays (each task writing its own part), read here once the phase's
        results are in: a plain array serially, else a memory-mapped file that workers map writable.
        Raises :class:`InvalidArgument` where workers cannot share it (:attr:`shares_memory`)."""
        import numpy as np

        if not self.shares_memory:
            raise InvalidArgument(
                "this Dask cluster's workers may be on other machines and cannot write into this "
                "process's arrays; compute the array here (a serial Runner), or use a LocalCluster."
            )
        return np.zeros(shape, dtype) if not self.parallel else self._files.output(shape, dtype)

    def map(
        self, function: Callable[[Any, Shared], Any], tasks: Sequence[Any], shared: Shared,
        on_done: Callable[[int], None] | None = None,
    ) -> list:
        """``[function(task, shared) for task in tasks]`` on the executor; ``on_done(i)`` as each ends."""
        return self.submit(function, tasks, shared, on_done).results()

    def submit(
        self, function: Callable[[Any, Shared], Any], tasks: Sequence[Any], shared: Shared,
        on_done: Callable[[int], None] | None = None,
    ) -> Pending:
        """:meth:`map` without waiting: the tasks are queued behind those already submitted and
        :meth:`Pending.results` collects them, so the driver can prepare the next phase (or queue
        an independent one) while the workers compute. Serially the tasks run here and now."""
        if not tasks:  # nothing to send (and a fork pool's first submit must be a real one)
            return Pending(done=[])
        if not self.parallel:
            inline = []
            for index, task in enumerate(tasks):
                inline.append(function(task, shared))
                if on_done is not None:
                    on_done(index)
            return Pending(done=inline)
        if self._client is not None:
            name = getattr(function, "__name__", "task")  # the phase, in Dask's dashboard and task stream
            if self._local:  # workers on this machine map the arrays' files, as a process pool's do
                mapped, phase_files = self._files.write(shared)
                paths = _Mapped(mapped.paths, {}, mapped.writable)  # the objects travel scattered, once
                objects, fresh = self._files.scatter_objects(self._client, shared.objects)
                futures = [
                    self._client.submit(_call_mapped, function, task, paths, objects, key=f"{name}-{uuid.uuid4().hex}")
                    for task in tasks
                ]
                return Pending(futures=futures, client=self._client, handle=fresh, paths=phase_files, on_done=on_done)
            arrays, objects, fresh = self._files.scatter(self._client, shared)
            futures = [
                self._client.submit(_call_scattered, function, task, arrays, objects, key=f"{name}-{uuid.uuid4().hex}")
                for task in tasks
            ]
            return Pending(futures=futures, client=self._client, handle=fresh, on_done=on_done)
        mapped, phase_files = self._files.write(shared)
        ledger = self._files.ledger()
        pool = self._pool
        try:
            queued = self._submit_noted(pool, function, tasks, mapped, ledger, range(len(tasks)))
        except concurrent.futures.process.BrokenProcessPool:  # a death since the last phase's results
            pool = self._renew_pool(pool)
            if pool is None:
                raise _recovery.died_unrecoverable(_recovery.exit_codes(self._pool)) from None
            queued = self._submit_noted(pool, function, tasks, mapped, ledger, range(len(tasks)))
        retry = _Retry(self, pool, function, tasks, mapped, ledger)
        return Pending(futures=[queued[i] for i in range(len(tasks))], paths=phase_files, on_done=on_done, retry=retry)

    def close(self) -> None:
        """Shut down what this runner created (a pool, a LocalCluster); remove its shared files."""
        if self._owns_files:
            self._files.close()
        owned, self._owned = self._owned, None
        if owned is not None:
            for thing in owned:
                if isinstance(thing, concurrent.futures.Executor):
                    # The workers exit while the caller goes on (joined in the background: C3 at
                    # n = 14 returned 0.02-0.03 s after its last task while 2 workers with 200 MB
                    # heaps ended); after an error, tasks still queued are cancelled.
                    join_at_exit(thing)  # first: shutdown() forgets the pool's manager thread
                    thing.shutdown(wait=False, cancel_futures=True)
                else:
                    thing.close()

    def terminate(self) -> None:
        """:meth:`close` at once (after Ctrl-C, or a failure that makes the running tasks moot): the
        worker processes of a pool this runner made are killed instead of finishing their tasks."""
        for thing in self._owned or ():
            if isinstance(thing, concurrent.futures.ProcessPoolExecutor):
                for process in list((getattr(thing, "_processes", None) or {}).values()):
                    process.terminate()
        self.close()

    def exit_codes(self) -> dict[int, int | None]:
        """The worker processes of a pool this runner made, by pid: each one's exit code (None while
        it runs, ``-N`` when signal N ended it); empty for every other executor. After a worker died
        (:class:`concurrent.futures.process.BrokenProcessPool`) this tells which one."""
        codes: dict[int, int | None] = {}
        for thing in self._owned or ():
            if isinstance(thing, concurrent.futures.ProcessPoolExecutor):
                for pid, process in list((getattr(thing, "_processes", None) or {}).items()):
                    codes[pid] = process.exitcode
        return codes

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Pending:
    """Tasks submitted by :meth:`Runner.submit`; :meth:`results` waits for them, in task order."""

    def __init__(
        self, *, done: list | None = None, futures: list | None = None, client: Any = None, handle: Any = None,
        paths: Sequence[str] = (), on_done: Callable[[int], None] | None = None, retry: _Retry | None = None,
    ) -> None:
        self._done, self._futures, self._client, self._handle = done, futures or [], client, handle
        self._paths, self._on_done, self._retry = list(paths), on_done, retry

    def results(self) -> list:
        """The tasks' results in task order (a worker's exception is raised here)."""
        if self._done is not None:
            return self._done
        try:
            self._done = self._gather_dask() if self._client is not None else self._gather_pool()
            return self._done
        finally:
            self._release()

    def as_completed(self) -> Iterator[tuple[int, Any]]:
        """``(position, result)`` of each task as it ends, in the order they end (serially: task
        order); a worker's exception is raised here, tasks cancelled by :meth:`cancel` are skipped.
        For tasks whose results are used one by one (audit rows); use it or :meth:`results`."""
        if self._done is not None:
            yield from enumerate(self._done)
            return
        try:
            if self._client is not None:
                from distributed import as_completed

                keys = {future.key: i for i, future in enumerate(self._futures)}
                for future in as_completed(self._futures, loop=self._client.loop):
                    if future.status != "cancelled":
                        yield keys[future.key], future.result()
            else:
                yield from self._completed_pool()
        finally:
            self._release()

    def _completed_pool(self) -> Iterator[tuple[int, Any]]:
        """``(position, result)`` of each task of a process pool as it ends. The tasks a dead worker
        lost (``BrokenProcessPool``) are re-run on a fresh pool: each is a pure function of its
        inputs, so the results are those of an undisturbed run; a task whose worker dies a second
        time ends the call (:mod:`._recovery`). A re-run task keeps its position, so :meth:`cancel`
        and :meth:`_release` still reach it."""
        pending = dict(enumerate(self._futures))
        deaths: dict[int, int] = {}
        while pending:
            position = {future: i for i, future in pending.items()}
            lost = []
            for future in concurrent.futures.as_completed(position):
                if future.cancelled():
                    continue
                try:
                    result = future.result()
                except concurrent.futures.process.BrokenProcessPool:
                    lost.append(position[future])
                    continue
                yield position[future], result
            pending = {}
            if lost:
                if self._retry is None:
                    raise _recovery.died_unrecoverable({})
                pending = self._retry.rerun(sorted(lost), deaths)
                for index, future in pending.items():
                    self._futures[index] = future

    def cancel(self, positions: Iterable[int]) -> None:
        """Cancel the tasks at ``positions`` (in the order they were submitted) that have not started."""
        chosen = [self._futures[i] for i in positions]
        if self._client is not None:
            self._client.cancel(chosen)
        else:
            for future in chosen:
                future.cancel()

    def _gather_pool(self) -> list:
        """The results in task order (the lost tasks of a dead worker re-run: :meth:`_completed_pool`)."""
        results: list = [None] * len(self._futures)
        for position, result in self._completed_pool():
            results[position] = result
            if self._on_done is not None:
                self._on_done(position)
        return results

    def _gather_dask(self) -> list:
        from distributed import as_completed

        position = {future.key: i for i, future in enumerate(self._futures)}
        # On this client's loop: as_completed otherwise waits on the default client's (the newest
        # Client made in this process), and a phase on any other client took 1-2 s longer.
        for future in as_completed(self._futures, loop=self._client.loop):
            if future.status == "error":
                future.result()  # raises the worker's exception here
            if self._on_done is not None:
                self._on_done(position[future.key])
        return self._client.gather(self._futures)

    def _release(self) -> None:
        if self._client is not None:
            self._client.cancel([*self._futures, *(self._handle or [])])
        for future in self._futures:
            if hasattr(future, "cancel") and self._client is None:
                future.cancel()
        for path in self._paths:  # workers that still map a file keep it until they drop it
            with contextlib.suppress(OSError):
                os.remove(path)
        if self._retry is not None:
            shutil.rmtree(self._retry.ledger, ignore_errors=True)
        self._futures, self._paths = [], []


class _Retry:
    """How to re-run the lost tasks of one phase submitted to a process pool."""

    def __init__(self, runner: Runner, pool: Any, function: Callable, tasks: Sequence[Any], mapped: _Mapped,
                 ledger: str) -> None:
        self.runner, self.pool, self.function, self.tasks, self.mapped, self.ledger = (
            runner, pool, function, tasks, mapped, ledger)

    def rerun(self, lost: list[int], deaths: dict[int, int]) -> dict[int, Any]:
        """The ``lost`` tasks queued again on a working pool, by index; ``deaths`` counts each task's
        deaths (its own worker died running it; every lost task when none can be named). Raises
        :class:`EnvironmentFailure` for a task that died twice, or on a pool dpverify cannot replace."""
        codes = _recovery.exit_codes(self.pool)
        fresh = self.runner._renew_pool(self.pool)
        if fresh is None:
            raise _recovery.died_unrecoverable(codes)
        named = _recovery.culprits(self.ledger, lost, codes)
        dead = [code for code in codes.values() if code not in (None, 0, -signal.SIGTERM)]
        for index in named or lost:
            deaths[index] = deaths.get(index, 0) + 1
            if deaths[index] >= 2:
                code = named.get(index, dead[0] if dead else -signal.SIGKILL)
                raise _recovery.died_twice(index, len(self.tasks), self.function, code)
        for index in lost:  # a stale note would name a worker of the broken pool
            with contextlib.suppress(OSError):
                os.remove(os.path.join(self.ledger, str(index)))
        self.pool = fresh
        return self.runner._submit_noted(fresh, self.function, self.tasks, self.mapped, self.ledger, lost)




_AMBIENT: contextvars.ContextVar[Runner | None] = contextvars.ContextVar("dpverify_executor", default=None)
_WITHIN_TASK: contextvars.ContextVar[bool] = contextvars.ContextVar("dpverify_within_task", default=False)


@contextlib.contextmanager
def serial_within():
    """Within the block, the body of a task an executor runs whole (an audit row in a worker of
    ``dpverify audit --jobs N``), every executor given by name is serial: ``None``, ``"serial"``,
    ``"processes"`` and ``"dask"`` open no pool or cluster of their own, so N workers stay N
    processes (a row opening a pool of every core in each of N workers would run N x cores). An
    enclosing :func:`use_executor` is set aside (a forked worker inherits its parent's, unusable
    there). Executor objects passed in explicitly are used as they are."""
    within, ambient = _WITHIN_TASK.set(True), _AMBIENT.set(None)
    try:
        yield
    finally:
        _AMBIENT.reset(ambient)
        _WITHIN_TASK.reset(within)


@contextlib.contextmanager
def use_executor(executor: Any):
    """Within the block, every call given no executor (``executor=None``) runs on ``executor``: one
    pool or cluster for a whole audit (``run_audit(..., executor=...)``). Closed at the end if this
    made it. A mechanism that cannot be pickled is then evaluated here, serially (its pairs are
    still swept on the executor); an explicit ``executor="processes"`` refuses it instead."""
    runner = open_executor(executor)
    token = _AMBIENT.set(runner)
    try:
        yield runner
    finally:
        _AMBIENT.reset(token)
        runner.close()


def open_executor(executor: Any, *, workers: int | None = None) -> Runner:
    """A :class:`Runner` for ``executor`` (see the module docstring); use it as a context manager.
    ``None`` is the executor of an enclosing :func:`use_executor`, else serial; inside
    :func:`serial_within` every name is serial. ``workers``: the size of a pool or LocalCluster
    made here (default: one per core).

    Raises:
        InvalidArgument: an unknown name or object, or ``"dask"`` without Dask installed.
    """
    if _WITHIN_TASK.get() and (executor is None or isinstance(executor, str) and executor in EXECUTORS):
        return Runner("serial", 1)
    if executor is None and _AMBIENT.get() is not None:
        lent = open_executor(_AMBIENT.get())
        lent.ambient = True
        return lent
    if isinstance(executor, Runner):
        return Runner(executor.kind, executor.workers, None, executor._client, files=executor._files,
                      local=executor._local, lender=executor)  # not owned
    if executor is None or executor == "serial":
        return Runner("serial", 1)
    cores = workers or os.cpu_count() or 1
    if isinstance(executor, concurrent.futures.Executor):
        return Runner("executor", getattr(executor, "_max_workers", cores), pool=executor)
    if is_dask_client(executor):
        addresses = set(executor.scheduler_info().get("workers", {}))
        _tune_workers(executor, addresses)
        return Runner("dask", max(1, len(addresses)), client=executor, local=_on_this_machine(executor, addresses))
    if executor == "processes":
        pool = _new_pool(cores)
        return Runner("processes", cores, pool=pool, owned=[pool])
    if executor == "dask":
        cluster = local_cluster(cores)
        from distributed import Client

        try:
            client = Client(cluster)
        except Exception as error:
            cluster.close()
            raise EnvironmentFailure(
                f"executor='dask': cannot connect to the LocalCluster dpverify started "
                f"({type(error).__name__}: {error}); no verdict. {_DASK_FIX}"
            ) from error
        try:
            client.run(_warm)  # workers import the engine once, before the first timed task
        except Exception as error:
            client.close()
            cluster.close()
            raise EnvironmentFailure(
                f"executor='dask': the LocalCluster's workers failed on their first task "
                f"({type(error).__name__}: {error}); no verdict. {_DASK_FIX}"
            ) from error
        return Runner("dask", cores, client=client, owned=[client, cluster], local=True)
    raise InvalidArgument(
        f"executor={executor!r} is not an executor; pass None (serial), 'processes', 'dask', a "
        "dask.distributed.Client or a concurrent.futures.Executor."
    )


def _new_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool of ``workers`` workers, forked where the platform can (see :data:`_FORK_FROZEN`)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_keep_heap)
    if context.get_start_method() == "fork":
        _FORK_FROZEN.add(pool)
    return pool


#: glibc's mallopt parameters (malloc.h): M_TRIM_THRESHOLD, M_MMAP_THRESHOLD.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3

#: The same settings as environment variables, for workers started as new processes (Dask's).
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": 32 << 20, "MALLOC_TRIM_THRESHOLD_": 1 << 30}


def _keep_heap() -> None:
    """In a worker of a pool dpverify made: keep freed memory for the next task (glibc only).

    By default glibc maps each large temporary afresh and returns the heap's top to the system
    after every task, so a worker running many short numpy tasks page-faults its temporaries in
    again and again: C3's proof-step tasks ran 1.4x slower split into 16 calls than in one
    (0.48-0.58 s against 0.34-0.39 s at n = 14), the same with these settings. Arrays up to 32 MiB
    stay in the heap, which is trimmed only past 1 GiB free; the pool's workers end with the call."""
    import ctypes

    try:  # glibc's soname first: find_library runs ldconfig, a few ms in every new worker
        try:
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    except (OSError, AttributeError):  # not glibc (macOS, musl): the allocator's defaults stay
        pass


#: Workers already tuned by :func:`_tune_workers`, by client.
_TUNED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def _tune_workers(client: Any, addresses: set[str]) -> None:
    """Give the workers of a client the user started the settings of dpverify's own workers, at run
    time, once per worker: the heap kept between tasks (:func:`_keep_heap`: ``mallopt`` acts on a
    running process as the environment variables act on a new one) and Dask's statistical profiler
    stopped (the worker's periodic callbacks ``profile`` and ``profile-cycle``; the dashboard's
    profile page then stays empty for these workers). Two plain ``dask worker`` processes reached by
    address ran an n = 7 sweep 2.4x slower than the process pool without these settings, 1.03x with
    them. A worker that cannot be tuned (not glibc, another Dask version) keeps its settings: only
    speed depends on this."""
    todo = sorted(addresses - _TUNED.get(client, set()))
    if not todo:
        return
    try:
        client.run(_tune_dask_worker, workers=todo)
    except Exception:  # noqa: BLE001 - speed only; the verdict does not depend on it
        return
    _TUNED.setdefault(client, set()).update(todo)


def _tune_dask_worker(dask_worker: Any = None) -> None:
    """Run in a Dask worker by :func:`_tune_workers` (``client.run`` passes the worker)."""
    _keep_heap()
    callbacks = getattr(dask_worker, "periodic_callbacks", None) or {}
    for name in ("profile", "profile-cycle"):
        callback = callbacks.pop(name, None)
        if callback is not None:
            callback.stop()


def local_cluster(workers: int | None = None) -> Any:
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker processes (default: one per
    core), as ``executor="dask"`` makes it.

    Dask's nannies set ``MALLOC_TRIM_THRESHOLD_=65536`` in their workers, which turns off glibc's
    adaptive mmap threshold: every numpy temporary of a few MB is then mapped and unmapped afresh,
    and the sweep runs 3-4x slower than in a plain process. This cluster's workers keep their heap
    instead, as a process pool's do (:data:`WORKER_MALLOC`: temporaries up to 32 MiB in the heap,
    trimmed past 1 GiB); a client of your own cluster passed as ``executor`` gets the same settings
    at run time (:func:`_tune_workers`), nothing to configure. Dask's statistical profiler
    (a thread sampling every task's stack every 10 ms, for the dashboard) is off in this cluster: it
    cost 8% of C3's compute here (``distributed.worker.profile.enabled``).

    Dask starts its workers with the ``spawn`` method: each worker re-imports the main module, so a
    script that calls this (or ``verify(..., executor="dask")``) at its top level must put the call
    under ``if __name__ == "__main__":``, or each worker would run the script again.

    Raises:
        InvalidArgument: Dask's distributed scheduler is not installed.
        EnvironmentFailure: the cluster could not start (most often a script without the
            ``if __name__ == "__main__":`` guard; the message names the fix, the cause is chained).
    """
    try:
        import dask
        from distributed import LocalCluster
    except ImportError:
        raise InvalidArgument(
            "executor='dask' needs Dask's distributed scheduler, which is not installed; install "
            "the extra with `pip install dpverify[dask]`, or use executor='processes'."
        ) from None
    if _importing_main_in_spawned_worker():
        # Here we are a worker process that is re-importing the caller's script (spawn) and has
        # reached its unguarded call; starting a cluster from here would fail or recurse.
        raise EnvironmentFailure(
            "executor='dask' was called while a Dask worker process was importing the main module: "
            f"{_main_guard_fix()} {_DASK_ALTERNATIVES}"
        )
    # Dask's nannies put their workers' variables (OMP_NUM_THREADS=1, PYTHONHASHSEED, the allocator's)
    # into this process's own environment while spawning; they are put back as they were, so a
    # later subprocess of the caller does not inherit them.
    saved = dict(os.environ)
    try:
        settings: dict[str, Any] = {f"distributed.nanny.pre-spawn-environ.{name}": value for name, value in WORKER_MALLOC.items()}
        settings["distributed.worker.profile.enabled"] = False  # its sampling thread cost 8% of C3's compute here
        with dask.config.set(settings):
            try:
                return LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                    dashboard_address=":0")
            except Exception as error:  # distributed raises RuntimeError("Nanny failed to start.") and others
                raise EnvironmentFailure(
                    f"executor='dask': Dask's LocalCluster could not start its worker processes "
                    f"({type(error).__name__}: {error}); no verdict. {_DASK_FIX}"
                ) from error
    finally:
        for name in set(os.environ) - set(saved):
            del os.environ[name]
        os.environ.update(saved)


_DASK_ALTERNATIVES = (
    "Or pass executor='processes' (where the platform can fork, as Linux and macOS can, its workers are "
    "forked and do not re-import the script), or a dask.distributed.Client you started yourself."
)


def _main_script() -> str | None:
    """The file of the ``__main__`` module when it is a script that ``spawn`` re-imports, else None."""
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return str(path) if path else None


def _main_guard_fix() -> str:
    script = _main_script()
    where = f"your script ({script})" if script else "your main module"
    return (
        "Dask starts its worker processes with the 'spawn' method, which re-imports "
        f"{where} in every worker, so a call at its top level runs again in each of them. "
        'Put the call under `if __name__ == "__main__":`.'
    )


def _importing_main_in_spawned_worker() -> bool:
    """Whether this process is a spawned child still importing the main module (the state in which
    :mod:`multiprocessing` refuses to start processes: a script without a main guard)."""
    import multiprocessing

    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


class _DaskFix:
    """The hint appended to a Dask start-up failure (built when shown: it names the main script)."""

    def __str__(self) -> str:
        return f"If this runs from a script: {_main_guard_fix()} {_DASK_ALTERNATIVES}"


_DASK_FIX = _DaskFix()


def _on_this_machine(client: Any, addresses: set[str] | None = None) -> bool:
    """Whether ``client``'s workers are sure to share this machine's files. They then read shared
    arrays as memory-mapped files, as a process pool's workers do, instead of receiving scattered
    copies: C3's phases at n = 14 spent 0.1-0.3 s each scattering their 25 MB arrays, and an n = 7
    sweep by address ran 1.7x the pool's time with copies.

    A ``LocalCluster``'s workers (``Client(LocalCluster())``) do. For a cluster reached by address,
    every worker is asked to read a file with a random token written here, in each folder arrays may
    be written to (``/dev/shm`` and the temporary folder): workers on this machine (or sharing those
    folders) read it back; remote ones do not, and get copies. Asked once per client and workers."""
    try:
        from distributed import LocalCluster
    except ImportError:  # pragma: no cover - a Client exists, so distributed does
        return False
    if isinstance(getattr(client, "cluster", None), LocalCluster):
        return True
    addresses = set(client.scheduler_info().get("workers", {})) if addresses is None else addresses
    if not addresses:
        return False
    known = _LOCAL.get(client)
    if known is not None and known[0] == addresses:
        return known[1]
    token = uuid.uuid4().hex
    paths = []
    try:
        for folder in {tempfile.gettempdir(), *(["/dev/shm"] if os.path.isdir("/dev/shm") else [])}:
            descriptor, path = tempfile.mkstemp(prefix="dpverify-probe-", dir=folder)
            with os.fdopen(descriptor, "w") as file:
                file.write(token)
            paths.append(path)
        answers = client.run(_reads_token, paths, token, workers=sorted(addresses))
        local = len(answers) == len(addresses) and all(answer is True for answer in answers.values())
    except Exception:  # noqa: BLE001 - unknown: copies are always correct
        local = False
    finally:
        for path in paths:
            with contextlib.suppress(OSError):
                os.remove(path)
    _LOCAL[client] = (addresses, local)
    return local


#: The answer of :func:`_on_this_machine` for a client and its workers.
_LOCAL: weakref.WeakKeyDictionary[Any, tuple[set[str], bool]] = weakref.WeakKeyDictionary()


def _reads_token(paths: list[str], token: str) -> bool:
    """In a worker: whether every file of ``paths`` holds ``token``."""
    try:
        for path in paths:
            with open(path) as file:
                if file.read() != token:
                    return False
    except OSError:
        return False
    return True


#: Modules a new cluster's workers import before the first timed task. Named, not imported here:
#: the engine uses the executors, not the other way round.
WARM_MODULES = ("dpverify.verdict.engine", "dpverify.checking._evaluation")


def _warm() -> None:
    for name in WARM_MODULES:
        importlib.import_module(name)


def check_picklable(name: str, value: Any, runner: Runner) -> Runner:
    """The runner to send ``value`` with: ``runner`` if ``value`` can travel to its workers; a serial
    runner for a lent (ambient) process pool; else :class:`InvalidArgument` naming the fix."""
    if runner.kind not in ("processes", "executor") or isinstance(runner._pool, concurrent.futures.ThreadPoolExecutor):
        return runner
    try:
        pickle.dumps(value)
        return runner
    except Exception as error:  # pickle raises PicklingError, AttributeError or TypeError
        if runner.ambient:
            return Runner("serial", 1)
        label = getattr(value, "__qualname__", type(value).__name__)
        raise InvalidArgument(
            f"{name}={label!r} cannot be sent to worker processes ({type(error).__name__}: {error}); a "
            "process pool pickles it, so define it as a module-level function (not a lambda, a closure "
            "or a function defined inside another function) or an instance of a module-level class, "
            "or use executor=None or a Dask client (which ships closures with cloudpickle)."
        ) from None
