"""How shared arrays reach an executor's workers, and the worker side of a task.

A process pool's workers, and those of a Dask ``LocalCluster``, memory-map ``.npy`` files (in
``/dev/shm`` when it has room); other Dask clusters' workers receive scattered arrays. A read-only
array is sent once per call and kept until it is garbage or the runner closes; a writable one is
sent per phase and released after it. Used by
:mod:`dpverify.parallel.executors` (kept apart to keep modules small).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Shared"]


@dataclass
class Shared:
    """What every task of one phase needs: large arrays (sent once) and small objects."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.arrays[name] if name in self.arrays else self.objects[name]


@dataclass(frozen=True)
class _Mapped:
    """A :class:`Shared` whose arrays are ``.npy`` files, memory-mapped by each worker once."""

    paths: dict[str, str]
    objects: dict[str, Any]
    writable: frozenset[str] = frozenset()  # arrays the tasks write into (Runner.output_array)


_MAPPED: dict[tuple, Shared] = {}

_PHASES_MAPPED = 4


def _resolve(shared: Any) -> Shared:
    if not isinstance(shared, _Mapped):
        return shared
    key = (tuple(sorted(shared.paths.items())), shared.writable)
    found = _MAPPED.pop(key, None)
    if found is None:
        arrays = {name: np.load(path, mmap_mode="r+" if name in shared.writable else "r")
                  for name, path in shared.paths.items()}
        found = Shared(arrays, {})
    _MAPPED[key] = found  # most recent last; phases may interleave (Runner.submit), so keep a few
    while len(_MAPPED) > _PHASES_MAPPED:
        del _MAPPED[next(iter(_MAPPED))]
    return Shared(found.arrays, shared.objects)


def _call(function: Callable[[Any, Shared], Any], task: Any, shared: Any) -> Any:
    return function(task, _resolve(shared))


def _call_noted(function: Callable[[Any, Shared], Any], task: Any, shared: Any, ledger: str, index: int) -> Any:
    """:func:`_call` in a process pool's worker, first noting in ``ledger`` (a folder) that this
    worker (its pid) runs task ``index``: if the worker dies, the driver reads which task it ran
    (:meth:`dpverify.parallel.executors.Pending.results`, which re-runs it once)."""
    with contextlib.suppress(OSError):  # the note only names a culprit; the task runs without it
        with open(os.path.join(ledger, str(index)), "w") as file:
            file.write(str(os.getpid()))
    return function(task, _resolve(shared))


def _call_mapped(function: Callable[[Any, Shared], Any], task: Any, mapped: _Mapped, objects: dict) -> Any:
    """A Dask task on a cluster sharing this machine's files: the arrays are mapped from ``mapped``'s
    paths (once per worker, as :func:`_call` does), the objects arrive scattered once per phase."""
    return function(task, _resolve(_Mapped(mapped.paths, objects, mapped.writable)))


_ALIGNED: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _call_scattered(function: Callable[[Any, Shared], Any], task: Any, arrays: dict, objects: dict) -> Any:
    """A Dask task: ``arrays`` arrive as the worker's own copies of the scattered arrays (Dask
    resolves the futures), each kept by the worker for every task of every phase that uses it."""
    ready = {}
    for name, array in arrays.items():
        if array.flags.aligned:
            ready[name] = array
            continue
        # An array deserialised by Dask can be an unaligned view on the received frame, which numpy
        # reads on slow paths (4x here): one aligned copy per stored array, reused by later tasks.
        found = _ALIGNED.get(id(array))
        if found is None or found[0] is not array:
            found = _ALIGNED[id(array)] = (array, np.require(array, requirements=["A", "C"]))
            while len(_ALIGNED) > 16:
                del _ALIGNED[next(iter(_ALIGNED))]
        ready[name] = found[1]
    return function(task, Shared(ready, objects))


def _once(
    kept: dict, array: np.ndarray, send: Callable[[np.ndarray], Any], fresh: list,
    release: Callable[[Any], None] | None = None,
) -> Any:
    """``send(array)`` (a file path, a Dask future), or for a read-only array what it gave the first
    time (``kept`` by the array's id, checked against the array itself); a writable array's handle
    goes to ``fresh``, released after its phase. With ``release``, a kept handle is released as
    soon as its array is garbage (a long audit does not pile up the files of finished rows)."""
    identity = (array.__array_interface__["data"][0], array.shape, array.dtype.str, array.strides)
    found = kept.get(id(array))
    if found is not None and found[0]() is array and found[1] == identity:
        return found[2]
    handle = send(array)
    if array.flags.writeable:
        fresh.append(handle)
    else:
        kept[id(array)] = (weakref.ref(array), identity, handle)
        if release is not None:
            weakref.finalize(array, release, handle)
    return handle


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):  # gone already (the runner closed): nothing to do
        os.remove(path)


class _Files:
    """Shared arrays written as ``.npy`` files for a process pool's workers to memory-map (or
    scattered to a Dask cluster's workers, :meth:`scatter`).

    A phase's files are removed once its results are in; a read-only array (``writeable`` False:
    the multiset tables, their pair indices, relabel outputs) is written once and its file kept
    until :meth:`close`, so phases that share it (C3's sweep and privacy profile read the same
    pair indices) do not write it again.
    """

    def __init__(self) -> None:
        self.folders: dict[str | None, str] = {}  # memory (/dev/shm) or the system's temporary folder
        self.kept: dict[int, tuple[weakref.ref, tuple, str]] = {}
        self.kept_futures: dict[int, tuple[weakref.ref, tuple, Any]] = {}  # the same for a Dask client
        self.backed: dict[int, tuple[weakref.ref, str]] = {}  # arrays that are files already (output)
        self.client: Any = None

    def write(self, shared: Shared) -> tuple[_Mapped, list[str]]:
        """The arrays as files: ``(handle for the workers, files to remove after the phase)``."""
        paths: dict[str, str] = {}
        fresh: list[str] = []
        writable = []
        if not shared.arrays:
            return _Mapped(paths, shared.objects), fresh
        where = _memory_folder(sum(array.nbytes for array in shared.arrays.values()))
        for name, array in shared.arrays.items():
            backed = self.backed.get(id(array))
            if backed is not None and backed[0]() is array:  # a file already: tasks map it, and may write
                paths[name] = backed[1]
                if array.flags.writeable:
                    writable.append(name)
                continue
            paths[name] = _once(self.kept, array, functools.partial(self._save, name, where), fresh, _remove_quietly)
        return _Mapped(paths, shared.objects, frozenset(writable)), fresh

    def ledger(self) -> str:
        """A fresh empty folder (in memory when there is room) where a phase's tasks note which
        worker runs them (:func:`_call_noted`); removed with the phase, or when the runner closes."""
        path = self._new_path("ledger", _memory_folder(0))
        os.mkdir(path)
        return path

    def output(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A zeroed array that is a file (in memory when there is room) which tasks map writable when
        it is in a phase's :class:`Shared`: they fill it in place, the driver sees what they wrote.
        The file goes when the array is garbage or the runner closes."""
        path = self._new_path("output", _memory_folder(int(np.prod(shape)) * np.dtype(dtype).itemsize))
        array = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
        self.backed[id(array)] = (weakref.ref(array), path)
        weakref.finalize(array, _remove_quietly, path)
        return array

    def _save(self, name: str, where: str | None, array: np.ndarray) -> str:
        path = self._new_path(name, where)
        np.save(path, np.ascontiguousarray(array))
        return path

    def _new_path(self, name: str, where: str | None) -> str:
        """A fresh ``.npy`` path in this runner's folder in ``where`` (made on first use)."""
        if where not in self.folders:
            self.folders[where] = tempfile.mkdtemp(prefix="dpverify-", dir=where)
        return os.path.join(self.folders[where], f"{name}-{uuid.uuid4().hex}.npy")

    def scatter(self, client: Any, shared: Shared) -> tuple[dict, Any, list]:
        """The arrays and objects sent to every Dask worker: ``(futures by name, objects' future,
        futures to release after the phase)``; a read-only array is sent once and kept until
        :meth:`close`, as its file is for a process pool."""
        self.client = client
        fresh: list = []
        futures = {
            name: _once(self.kept_futures, array, lambda data: client.scatter(data, broadcast=True, hash=False, direct=True), fresh)
            for name, array in shared.arrays.items()
        }
        objects, handles = self.scatter_objects(client, shared.objects)
        return futures, objects, fresh + handles

    def scatter_objects(self, client: Any, objects: dict) -> tuple[Any, list]:
        """A phase's small objects sent to every Dask worker once (not pickled into every task):
        ``(their future, futures to release after the phase)``."""
        self.client = client
        # In a list, because Dask scatters a dict as one key per item.
        (future,) = client.scatter([objects], broadcast=True, hash=False, direct=True)
        return future, [future]

    def close(self) -> None:
        for folder in self.folders.values():
            shutil.rmtree(folder, ignore_errors=True)
        if self.kept_futures and self.client is not None:
            with contextlib.suppress(Exception):  # the client may already be closed
                self.client.cancel([future for _, _, future in self.kept_futures.values()])
        self.folders, self.kept, self.kept_futures, self.backed, self.client = {}, {}, {}, {}, None


def _memory_folder(nbytes: int) -> str | None:
    """``/dev/shm`` (memory, 5x faster to write than a disk's ``/tmp`` here) if it has room for
    four times ``nbytes``, else None (the system's temporary folder). Containers often give
    ``/dev/shm`` only 64 MiB, hence the check."""
    folder = "/dev/shm"
    try:
        return folder if os.access(folder, os.W_OK) and shutil.disk_usage(folder).free > 4 * nbytes else None
    except OSError:
        return None
