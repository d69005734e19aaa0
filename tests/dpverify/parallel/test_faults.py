"""Faults a verification survives: a process pool's worker killed mid-run (the out-of-memory killer's
SIGKILL) costs a re-run of the chunks it lost, not the run; a second death of the same chunk is an
EnvironmentFailure naming the chunk, the signal and the fix (exit 3 in the CLI)."""

from __future__ import annotations

import math

import pytest

from dpverify import EnvironmentFailure, Verdict, verify
from dpverify.parallel.executors import open_executor
from tests.dpverify.parallel._executor_mechanisms import (
    MARKER,
    always_dies_on_ones,
    dies_once_on_ones,
    randomized_response_bits,
)

# Randomized response on 3 bits, claimed at 1 < ln 3: VIOLATED, every pair at ln 3 (8 datasets).
ARGUMENTS = dict(records=(0, 1), n=3, epsilon=1.0)


def _fields(result):
    return (result.verdict, result.epsilon, result.delta, result.witness, result.pairs, result.datasets)


def test_a_worker_killed_once_costs_a_rerun_and_the_result_is_the_undisturbed_one(tmp_path, monkeypatch):
    marker = tmp_path / "died"
    monkeypatch.setenv(MARKER, str(marker))
    serial = verify(randomized_response_bits, **ARGUMENTS)
    assert serial.verdict is Verdict.VIOLATED
    assert serial.epsilon == pytest.approx(math.log(3))  # (3/4) / (1/4) = 3 on the differing bit
    assert serial.delta == pytest.approx(0.75 - math.e / 4)  # delta(1) = 3/4 - e * 1/4, the other bits summed out
    with open_executor("processes", workers=2) as runner:
        first_pool = runner._pool
        result = verify(dies_once_on_ones, executor=runner, **ARGUMENTS)
        renewed = runner._pool is not first_pool
    assert marker.exists()  # a worker did die on (1, 1, 1) ...
    assert renewed  # ... and the lost chunks ran on a fresh pool
    assert _fields(result) == _fields(serial)


def test_a_chunk_that_kills_its_worker_twice_is_an_environment_failure_with_the_fix():
    with pytest.raises(EnvironmentFailure) as caught:
        verify(always_dies_on_ones, executor="processes", **ARGUMENTS)
    message = str(caught.value)
    assert "(SIGKILL, exit code -9)" in message and "died again" in message
    assert "chunk " in message and "out-of-memory killer" in message
    assert "fewer workers" in message and "row blocks" in message and "executor=None" in message


def test_a_pool_passed_in_is_not_replaced_but_its_dead_worker_is_named():
    import concurrent.futures
    import multiprocessing

    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        with pytest.raises(EnvironmentFailure, match=r"executor passed in died \(SIGKILL, exit code -9\)"):
            verify(always_dies_on_ones, executor=pool, **ARGUMENTS)


def test_cli_exit_3_names_the_signal(capsys):
    from dpverify.integrations.cli import main

    code = main(["check", "tests.dpverify.parallel._executor_mechanisms:always_dies_on_ones", "--records", "[0, 1]",
                 "--n", "3", "--epsilon", "1", "--executor", "processes", "--no-progress"])
    error = capsys.readouterr().err
    assert code == 3
    assert "SIGKILL" in error and "fewer workers" in error


def test_dask_survives_a_worker_killed_once_with_the_undisturbed_result(tmp_path, monkeypatch):
    """On a LocalCluster the nanny restarts a worker killed by SIGKILL and the scheduler runs its lost
    tasks again (Dask's allowed-failures, 3): the verdict, eps*, delta and witness of the serial run."""
    pytest.importorskip("distributed")
    marker = tmp_path / "died"
    monkeypatch.setenv(MARKER, str(marker))  # before the cluster starts: its workers inherit it
    serial = verify(randomized_response_bits, **ARGUMENTS)
    result = verify(dies_once_on_ones, executor="dask", **ARGUMENTS)
    assert marker.exists()  # a worker did die on (1, 1, 1)
    assert _fields(result) == _fields(serial)
