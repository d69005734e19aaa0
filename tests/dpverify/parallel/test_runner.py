"""The executors' plumbing: equal shards, queued phases, shared files, frozen forks."""

from __future__ import annotations

import gc
import os
import sys
import tempfile

import numpy as np
import pytest

from dpverify.parallel import executors
from dpverify.parallel.executors import Shared, open_executor, shard_ranges


def test_shard_ranges_are_equal_ordered_and_cover_everything():
    # 36 rows in 8 parts: boundaries 36*g//8 = 0, 4, 9, 13, 18, 22, 27, 31, 36
    assert shard_ranges(36, 8) == [(0, 4), (4, 9), (9, 13), (13, 18), (18, 22), (22, 27), (27, 31), (31, 36)]
    # 34 chunks of 4 pairs (the last one short) in 8 parts: chunk bounds 0,4,8,12,17,21,25,29,34
    ranges = shard_ranges(34 * 4 - 3, 8, unit=4)
    assert [start for start, _ in ranges] == [0, 16, 32, 48, 68, 84, 100, 116]
    assert ranges[-1] == (116, 133)
    assert all(stop == start for (_, stop), (start, _) in zip(ranges, ranges[1:]))


def test_shard_ranges_small_and_empty():
    assert shard_ranges(3, 8) == [(0, 1), (1, 2), (2, 3)]  # never an empty shard when there is work
    assert shard_ranges(0, 8) == [(0, 0)]
    assert shard_ranges(10, 1) == [(0, 10)]


def _square_plus(task, shared):
    if task == "boom":
        raise ValueError("the worker's error")
    return task * task + int(shared["offset"][0])


@pytest.mark.parametrize("executor", [None, "processes"])
def test_submitted_phases_give_results_in_task_order(executor):
    with open_executor(executor) as runner:
        first = runner.submit(_square_plus, [3, 1, 2], Shared({"offset": np.array([10])}, {}))
        second = runner.submit(_square_plus, [5], Shared({"offset": np.array([100])}, {}))
        assert second.results() == [125]  # collected out of submission order
        assert first.results() == [19, 11, 14]
        assert first.results() == [19, 11, 14]  # a second call returns the same list


@pytest.mark.parametrize("executor", [None, "processes"])
def test_a_worker_error_is_raised_by_results(executor):
    with open_executor(executor) as runner:
        with pytest.raises(ValueError, match="the worker's error"):
            runner.submit(_square_plus, [1, "boom"], Shared({"offset": np.array([0])}, {})).results()


def test_shared_files_are_removed_after_their_phase():
    with open_executor("processes") as runner:
        pending = runner.submit(_square_plus, [2], Shared({"offset": np.array([1])}, {}))
        paths = list(pending._paths)
        assert paths and all(os.path.exists(path) for path in paths)
        assert pending.results() == [5]
        assert not any(os.path.exists(path) for path in paths)


def test_shared_files_fall_back_to_the_temporary_folder_when_memory_is_short(monkeypatch):
    from dpverify.parallel import _transport

    assert _transport._memory_folder(0) in ("/dev/shm", None)

    class Usage:
        free = 1000

    monkeypatch.setattr(_transport.shutil, "disk_usage", lambda folder: Usage())
    assert _transport._memory_folder(250) is None  # needs 4 * 250 = 1000 < free, which is not the case
    assert _transport._memory_folder(249) in ("/dev/shm", None)  # 996 < 1000 (None where /dev/shm is absent)


def _freeze_count(task, shared):
    return gc.get_freeze_count()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork pools exist only where fork does")
def test_fork_pool_workers_inherit_a_frozen_heap_and_the_driver_does_not_stay_frozen():
    with open_executor("processes") as runner:
        assert gc.get_freeze_count() == 0
        counts = runner.map(_freeze_count, [0, 1], Shared({}, {}))
    assert min(counts) > 1000  # every object the driver held at the fork (tens of thousands)


def test_a_read_only_array_is_written_once_for_every_phase_and_removed_at_close():
    table = np.arange(6)
    table.setflags(write=False)
    with open_executor("processes") as runner:
        first = runner.submit(_square_plus, [1], Shared({"offset": table}, {}))
        second = runner.submit(_square_plus, [2], Shared({"offset": table}, {}))
        assert first._paths == second._paths == []  # kept, not removed after each phase
        assert first.results() == [1] and second.results() == [4]  # offset = table[0] = 0
        (kept,) = [path for _, _, path in runner._files.kept.values()]
        assert os.path.exists(kept)
        writable = np.arange(6)
        third = runner.submit(_square_plus, [3], Shared({"offset": writable}, {}))
        assert len(third._paths) == 1 and third._paths[0] != kept  # a writable array: a fresh file per phase
        assert third.results() == [9]
    assert not os.path.exists(kept)


_REFAULTED = """
import os, sys
import numpy as np
if sys.argv[1] == "keep":
    from dpverify.parallel.executors import _keep_heap
    _keep_heap()

def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

halves = [np.ones((4 << 20) - 64) for _ in range(2)]  # just under 32 MiB each, every page touched
del halves
before = resident()
halves = [np.ones((4 << 20) - 64) for _ in range(2)]  # the same again: kept pages or fresh ones?
print(resident() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and glibc's allocator")
def test_pool_workers_keep_their_heap_between_tasks():
    # With glibc's defaults each 32 MiB temporary is mapped afresh and unmapped when freed, so the second
    # pair of them is faulted in again (about 64 MiB more resident); after _keep_heap (heap up to 32 MiB
    # arrays, trimmed past 1 GiB) the freed pages are reused (next to nothing more).
    import concurrent.futures
    import subprocess


    clean = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    clean["PYTHONPATH"] = root

    def refaulted(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", _REFAULTED, mode], capture_output=True, text=True, env=clean, check=True)
        return int(done.stdout)

    assert refaulted("default") > 48 << 10
    assert refaulted("keep") < 8 << 10
    with open_executor("processes") as runner:  # and dpverify's pools run it in every worker
        assert isinstance(runner._pool, concurrent.futures.ProcessPoolExecutor)
        assert runner._pool._initializer is executors._keep_heap


def test_dask_workers_start_with_the_same_allocator_settings_and_no_profiler():
    distributed = pytest.importorskip("distributed")
    from dpverify.parallel.executors import WORKER_MALLOC, local_cluster

    cluster = local_cluster(1)
    try:
        with distributed.Client(cluster) as client:
            seen = client.run(lambda: {name: os.environ.get(name) for name in WORKER_MALLOC})
            profiling = client.run(lambda: __import__("dask").config.get("distributed.worker.profile.enabled"))
    finally:
        cluster.close()
    assert list(seen.values()) == [{name: str(value) for name, value in WORKER_MALLOC.items()}]
    assert list(profiling.values()) == [False]  # the sampling profiler cost 8% of C3's compute


def test_a_local_cluster_leaves_this_process_environment_as_it_was():
    pytest.importorskip("distributed")
    from dpverify.parallel.executors import local_cluster

    before = dict(os.environ)
    local_cluster(1).close()
    assert dict(os.environ) == before  # Dask's nannies set OMP_NUM_THREADS=1, PYTHONHASHSEED, ... here


def test_a_kept_file_goes_when_its_array_does():
    with open_executor("processes") as runner:
        table = np.arange(6)
        table.setflags(write=False)
        assert runner.map(_square_plus, [2], Shared({"offset": table}, {})) == [4]
        (kept,) = [path for _, _, path in runner._files.kept.values()]
        assert os.path.exists(kept)
        del table
        gc.collect()
        assert not os.path.exists(kept)  # not kept until close: a long audit would pile them up


def test_a_local_cluster_maps_shared_files_and_a_remote_cluster_gets_scattered_copies(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from dpverify.parallel import executors
    from dpverify.parallel.executors import local_cluster

    loops = []
    as_completed = distributed.as_completed

    def spy(futures, loop=None, **options):
        loops.append(loop)
        return as_completed(futures, loop=loop, **options)

    # Results are awaited on the runner's own client's loop: on the default client's (here the newer
    # `by_address`), every phase on `own` waited 1-2 s more (distributed.as_completed's default).
    monkeypatch.setattr(distributed, "as_completed", spy)
    cluster = local_cluster(1)
    try:
        with distributed.Client(cluster) as own, distributed.Client(cluster.scheduler_address) as by_address:
            with open_executor(own) as runner:
                assert runner._local  # a LocalCluster's workers share this machine's files
                pending = runner.submit(_square_plus, [2, 3], Shared({"offset": np.array([7])}, {}))
                (path,) = pending._paths  # the writable array went as a file, not a scattered copy
                assert os.path.exists(path)
                assert pending.results() == [11, 16]  # 2*2 + 7, 3*3 + 7
                assert not os.path.exists(path)  # removed with its phase
                assert loops == [own.loop]
            # workers that cannot read this machine's files (the probe of _on_this_machine failed)
            monkeypatch.setattr(executors, "_on_this_machine", lambda client, addresses=None: False)
            with open_executor(by_address) as runner:
                assert not runner._local
                pending = runner.submit(_square_plus, [2, 3], Shared({"offset": np.array([7])}, {}))
                assert pending._paths == []
                assert pending.results() == [11, 16]
    finally:
        cluster.close()


def _fill(task, shared):
    shared["out"][task] = task * 10 + int(shared["base"][0])


@pytest.mark.parametrize("executor", [None, "processes"])
def test_tasks_fill_an_output_array_in_place(executor):
    with open_executor(executor) as runner:
        out = runner.output_array((4,), np.int64)
        assert (out == 0).all()
        runner.map(_fill, [0, 1, 2, 3], Shared({"out": out, "base": np.array([7])}, {}))
        assert out.tolist() == [7, 17, 27, 37]  # each task wrote its own element; read here
        if executor is not None:
            (path,) = [path for _, path in runner._files.backed.values()]
            assert os.path.exists(path)
            out.setflags(write=False)  # then read-only: later phases map the same file, no copy
            pending = runner.submit(_square_plus, [2], Shared({"offset": out}, {}))
            assert pending._paths == [] and pending.results() == [11]  # 2*2 + out[0]
            del out, pending
            gc.collect()
            assert not os.path.exists(path)  # the file goes with its array


def test_an_output_array_is_refused_where_workers_may_be_elsewhere(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from dpverify.errors import InvalidArgument
    from dpverify.parallel import executors
    from dpverify.parallel.executors import local_cluster

    monkeypatch.setattr(executors, "_on_this_machine", lambda client, addresses=None: False)  # remote workers
    cluster = local_cluster(1)
    try:
        with distributed.Client(cluster.scheduler_address) as by_address, open_executor(by_address) as runner:
            assert not runner.shares_memory
            with pytest.raises(InvalidArgument, match="other machines"):
                runner.output_array((4,))
    finally:
        cluster.close()


def test_shards_per_worker_follow_each_executors_task_cost():
    with open_executor(None) as runner:
        assert runner.shards() == 1
    with open_executor("processes") as runner:
        assert runner.shards() == 16 * runner.workers and runner.shards(8) == 8 * runner.workers
    distributed = pytest.importorskip("distributed")
    from dpverify.parallel.executors import local_cluster

    cluster = local_cluster(2)
    try:
        with distributed.Client(cluster) as client, open_executor(client) as runner:
            assert runner.shards() == 4 * 2  # a quarter: each Dask task costs the scheduler 1-2 ms
            assert runner.shards(2) == 2  # never below one per worker
    finally:
        cluster.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork pools exist only where fork does")
def test_an_empty_phase_sends_nothing_and_leaves_the_pool_to_fork_at_its_first_real_task():
    with open_executor("processes") as runner:
        assert runner.submit(_freeze_count, [], Shared({"unused": np.arange(3)}, {})).results() == []
        assert runner._files.folders == {}  # no file written for an empty phase
        assert min(runner.map(_freeze_count, [0, 1], Shared({}, {}))) > 1000  # still forked frozen


def _profiling(dask_worker=None):
    return sorted(name for name in dask_worker.periodic_callbacks if name.startswith("profile"))


def test_a_cluster_by_address_on_this_machine_maps_files_and_its_workers_are_tuned():
    # Two plain `dask worker`s reached by address ran an n = 7 sweep 2.4x slower than the pool:
    # scattered copies of the matrix, glibc trimming the heap after every task, the profiler's thread.
    distributed = pytest.importorskip("distributed")
    import dask

    from dpverify.parallel import executors

    with dask.config.set({"distributed.worker.profile.enabled": True}):  # a plain worker's default
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0")
    try:
        with distributed.Client(cluster.scheduler_address) as by_address:
            assert list(by_address.run(_profiling).values()) == [["profile", "profile-cycle"]]
            with open_executor(by_address) as runner:
                assert runner._local  # the workers read back a token file written here
                assert runner.shares_memory
                pending = runner.submit(_square_plus, [2, 3], Shared({"offset": np.array([7])}, {}))
                assert len(pending._paths) == 1 and pending.results() == [11, 16]  # a file, not a copy
            assert list(by_address.run(_profiling).values()) == [[]]  # the profiler is stopped
            addresses = set(by_address.scheduler_info()["workers"])
            assert executors._TUNED[by_address] == addresses  # tuned once: a second run asks nothing
            assert executors._LOCAL[by_address] == (addresses, True)
            leftovers = [name for folder in (tempfile.gettempdir(), "/dev/shm") if os.path.isdir(folder)
                         for name in os.listdir(folder) if name.startswith("dpverify-probe-")]
            assert leftovers == []  # the token files are removed
    finally:
        cluster.close()


def test_workers_that_cannot_read_the_token_file_get_copies(tmp_path):
    from dpverify.parallel import executors

    token_file = tmp_path / "token"
    token_file.write_text("abc")
    assert executors._reads_token([str(token_file)], "abc")
    assert not executors._reads_token([str(token_file)], "abd")  # another machine's file of that name
    assert not executors._reads_token([str(token_file), str(tmp_path / "missing")], "abc")

    class Remote:
        cluster = None

        def __init__(self):
            self.asked = 0

        def run(self, function, *args, workers):
            self.asked += 1
            return {address: False for address in workers}

    remote = Remote()
    assert executors._on_this_machine(remote, {"tcp://10.0.0.2:1", "tcp://10.0.0.3:1"}) is False
    assert executors._on_this_machine(remote, {"tcp://10.0.0.2:1", "tcp://10.0.0.3:1"}) is False
    assert remote.asked == 1  # asked once per set of workers
