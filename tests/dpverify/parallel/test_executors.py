"""Every executor gives the same VerificationResult as the serial path (serial vs processes vs
Dask on a LocalCluster of 2 worker processes, started once for the module, reached both through
its own client (arrays as shared files) and through its scheduler's address (scattered arrays))."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
from fractions import Fraction

import pytest
import sympy

from dpverify import InvalidArgument, Verdict, analyze, verify
from dpverify.mechanisms.exponential import exponential_mechanism_without_half, threshold_learner
from tests.dpverify.parallel._executor_mechanisms import ClampedGeometric, count_with_secret, randomized_response_bits

distributed = pytest.importorskip("distributed")

FIELDS = ("holds", "verdict", "epsilon", "delta", "witness", "pairs", "datasets", "exchangeable",
          "certified_pairs", "undecided", "within_rounding", "float_error")


@pytest.fixture(scope="module")
def dask_client():
    from dpverify.parallel.executors import local_cluster

    cluster = local_cluster(2)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def dask_by_address(dask_client):
    """The same cluster through its scheduler's address, as a remote cluster is reached: dpverify
    cannot tell that its workers share this machine, so arrays are scattered to them."""
    client = distributed.Client(dask_client.scheduler.address)
    yield client
    client.close()


def _fields(result):
    return {name: getattr(result, name) for name in FIELDS}


INSTANCES = [
    # exact, every pair tight at ln 3: HOLDS
    (randomized_response_bits, dict(records=(0, 1), n=4, epsilon=sympy.log(3)), Verdict.HOLDS),
    # float, tight at its epsilon: HOLDS_WITHIN_ROUNDING, with the closest pair as witness
    (ClampedGeometric(0.5), dict(records=(0, 1), n=6, epsilon=Fraction(1, 2)), Verdict.HOLDS_WITHIN_ROUNDING),
    # EM without its 1/2, black box over 6 records, n = 4 (3,240 pairs): VIOLATED
    (threshold_learner(2, epsilon=1.0, selector=exponential_mechanism_without_half),
     dict(records=((0, 0), (0, 1), (1, 0), (1, 1)), n=4, epsilon=1.0, exchangeable=False), Verdict.VIOLATED),
    # several shards of 2**16 pairs: 4 records, n = 7, 172,032 black-box pairs
    (threshold_learner(2, epsilon=1.0), dict(records=((0, 0), (0, 1), (1, 0), (1, 1)), n=7, epsilon=1.0,
                                            exchangeable=False), Verdict.HOLDS),
    # exchangeable (multiset pairs) and a leak with infinite epsilon
    (threshold_learner(3, epsilon=0.5), dict(records=((0, 0), (1, 1), (2, 0)), n=5, epsilon=0.5), Verdict.HOLDS),
    (count_with_secret, dict(records=(0, 1, 2), n=3, epsilon=2.0), Verdict.VIOLATED),
    (randomized_response_bits, dict(records=(0, 1), n=3, epsilon=1.0, delta=0.05), Verdict.VIOLATED),
]


@pytest.mark.parametrize(("mechanism", "arguments", "verdict"), INSTANCES)
def test_processes_and_dask_give_the_serial_result(dask_client, dask_by_address, mechanism, arguments, verdict):
    serial = verify(mechanism, **arguments)
    assert serial.verdict is verdict
    expected = _fields(serial)
    assert _fields(verify(mechanism, executor="processes", **arguments)) == expected
    assert _fields(verify(mechanism, executor=dask_client, **arguments)) == expected
    assert _fields(verify(mechanism, executor=dask_by_address, **arguments)) == expected
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        assert _fields(verify(mechanism, executor=pool, **arguments)) == expected
        assert not pool._shutdown  # an executor passed in is not shut down


def test_dask_by_name_starts_and_closes_a_local_cluster():
    arguments = dict(records=(0, 1), n=3, epsilon=sympy.log(3))
    result = verify(randomized_response_bits, executor="dask", **arguments)
    assert _fields(result) == _fields(verify(randomized_response_bits, **arguments))


def test_analysis_on_an_executor_measures_the_same(dask_client):
    mechanism = threshold_learner(2, epsilon=1.0)
    records = ((0, 0), (0, 1), (1, 0), (1, 1))
    serial = analyze(mechanism, records=records, n=5, exchangeable=False)
    for executor in ("processes", dask_client):
        other = analyze(mechanism, records=records, n=5, exchangeable=False, executor=executor)
        assert other.epsilon_star() == serial.epsilon_star()
        assert other.profile([0.1, 0.5]) == serial.profile([0.1, 0.5])
        assert (other.matrix == serial.matrix).all() and other.outcomes == serial.outcomes


def test_a_closure_is_refused_for_processes_with_the_fix():
    def local(dataset):
        return {0: 1}

    with pytest.raises(InvalidArgument, match="module-level function"):
        verify(local, records=(0, 1), n=2, epsilon=1.0, executor="processes")
    assert verify(local, records=(0, 1), n=2, epsilon=1.0, executor=None).holds


def test_an_unknown_executor_is_refused():
    with pytest.raises(InvalidArgument, match=r"executor='threads'.*'processes', 'dask'"):
        verify(randomized_response_bits, records=(0, 1), n=2, epsilon=1.0, executor="threads")


def test_witness_fields_are_values():
    # the witness compares by value (a frozen dataclass), so the equality above is meaningful
    result = verify(count_with_secret, records=(0, 1, 2), n=2, epsilon=1.0)
    assert dataclasses.is_dataclass(result.witness) and result.witness == dataclasses.replace(result.witness)


def _audit_figures(rows):
    return [(r.case.claim, r.case.mechanism, r.measurement.epsilon_star, r.measurement.delta_star, r.measurement.verdict,
             r.measurement.witness, {k: v for k, v in r.measurement.details.items()}) for r in rows]


def test_audit_rows_are_the_same_on_every_executor(dask_client):
    from dpverify.integrations.audit import audit_cases, run_audit

    wanted = {("C1", "exponential_mechanism"), ("C1", "mutant_exponential_without_half"), ("C2", "a_relabel"),
              ("C3", "a_agnostic"), ("C3", "mutant_inner_consistent"), ("C14", "item_level_learner")}
    first = {}
    for case in audit_cases():  # the first row of each wanted (claim, mechanism): a small instance
        first.setdefault((case.claim, case.mechanism), case)
    cases = [first[key] for key in sorted(wanted)]
    serial = _audit_figures(run_audit(cases))
    assert _audit_figures(run_audit(cases, executor="processes")) == serial
    assert _audit_figures(run_audit(cases, executor=dask_client)) == serial


def test_c3_with_proof_steps_is_the_same_on_every_executor(dask_client, dask_by_address):
    from dpverify.mechanisms.audits.realizable_to_agnostic import measure_agnostic

    # The relabel tables are computed by the workers into one shared array, except through the
    # address (workers maybe elsewhere): there the driver computes them and scatters them.
    serial = measure_agnostic(domain_size=3, n=10, epsilon=0.2)
    for executor in ("processes", dask_client, dask_by_address):
        other = measure_agnostic(domain_size=3, n=10, epsilon=0.2, executor=executor)
        assert (other.epsilon_star, other.delta_star, other.verdict, other.details) == (
            serial.epsilon_star, serial.delta_star, serial.verdict, serial.details)


def test_cli_check_runs_on_processes(capsys):
    from dpverify.integrations.cli import main

    code = main(["check", "tests.dpverify.parallel._executor_mechanisms:randomized_response_bits", "--records", "[0, 1]",
                 "--n", "3", "--epsilon", "log(3)", "--executor", "processes", "--no-progress"])
    assert code == 0 and "HOLDS" in capsys.readouterr().out


def test_progress_bar_shows_datasets_and_pairs(monkeypatch):
    import io

    from dpverify.parallel import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    seen = []
    original = progress.ProgressBar.__init__

    def spy(self, label, total, unit, **kwargs):
        seen.append((label, unit, total))
        original(self, label, total, unit, stream=screen, delay=0)  # drawn at once

    monkeypatch.setattr(progress.ProgressBar, "__init__", spy)
    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    verify(randomized_response_bits, records=(0, 1), n=3, epsilon=sympy.log(3), progress=True)
    # 2^3 = 8 datasets; 8 * 3 / 2 = 12 substitute pairs
    assert ("evaluating randomized_response_bits", "datasets", 8) in seen
    assert ("checking randomized_response_bits", "pairs", 12) in seen
    drawn = screen.getvalue()
    assert "8/8 datasets" in drawn and "12/12 pairs" in drawn, drawn


def test_max_pairs_refusal_says_how_long_the_run_would_take():
    from dpverify import EnumerationTooLarge

    with pytest.raises(EnumerationTooLarge, match=r"At the rate measured here .* would take about \S+"):
        verify(threshold_learner(4, epsilon=1.0), records=[(x, y) for x in range(4) for y in (0, 1)], n=8,
               epsilon=1.0, exchangeable=False)


def test_verify_pairs_same_result_on_processes():
    # StatDP's patterns for report noisy max (k = 5, eps = 0.7): eps* = 0.681883 on every executor.
    from fractions import Fraction

    from dpverify.checking.input_pairs import statdp_patterns, verify_pairs
    from dpverify.mechanisms.noisy_max import ReportNoisyMax

    mechanism = ReportNoisyMax(Fraction(7, 10))
    serial = verify_pairs(mechanism, pairs=statdp_patterns(5), epsilon=Fraction(7, 10))
    pooled = verify_pairs(mechanism, pairs=statdp_patterns(5), epsilon=Fraction(7, 10), executor="processes")
    assert serial.epsilon == pooled.epsilon and abs(serial.epsilon - 0.681883) < 1e-6
    assert (serial.verdict, serial.delta, serial.pairs, serial.witness) == (pooled.verdict, pooled.delta, pooled.pairs, pooled.witness)


# -- a Dask cluster that cannot start is an EnvironmentFailure naming the fix -------------------------

NO_MAIN_GUARD = '''
from fractions import Fraction

from dpverify import verify


def randomized_response(dataset):
    (bit,) = dataset
    return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}


print(verify(randomized_response, records=(0, 1), n=1, epsilon=1.1, executor="dask").summary())
'''

GUARD_FIX = 'Put the call under `if __name__ == "__main__":`.'


def test_dask_in_a_script_without_main_guard_names_the_fix(tmp_path):
    # Dask spawns its workers, which re-import the script and reach the unguarded call (about 2 s).
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(NO_MAIN_GUARD)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]  # what the script died of
    assert last.startswith(
        "dpverify.errors.EnvironmentFailure: executor='dask': Dask's LocalCluster could not start its worker "
        "processes (RuntimeError: Nanny failed to start.); no verdict. If this runs from a script: Dask starts its "
        f"worker processes with the 'spawn' method, which re-imports your script ({script}) in every worker"
    )
    assert GUARD_FIX in last and "executor='processes'" in last
    # and each worker, re-importing the script, stopped at the call with the same fix
    assert "executor='dask' was called while a Dask worker process was importing the main module" in done.stderr


def test_a_cluster_that_fails_to_start_is_an_environment_failure_with_the_fix(monkeypatch):
    from dpverify.errors import EnvironmentFailure
    from dpverify.parallel.executors import local_cluster

    def nanny_fails(*args, **kwargs):
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", nanny_fails)
    environment = dict(os.environ)
    with pytest.raises(EnvironmentFailure) as info:
        local_cluster(2)
    message = str(info.value)
    assert message.startswith("executor='dask': Dask's LocalCluster could not start its worker processes "
                              "(RuntimeError: Nanny failed to start.); no verdict. If this runs from a script:")
    assert "'spawn' method" in message and GUARD_FIX in message and "executor='processes'" in message
    assert isinstance(info.value.__cause__, RuntimeError)
    assert dict(os.environ) == environment  # the nannies' variables are put back after a failure too
    with pytest.raises(EnvironmentFailure, match="Nanny failed to start"):
        verify(randomized_response_bits, records=(0, 1), n=2, epsilon=1.0, executor="dask")


def test_a_spawned_worker_importing_the_script_does_not_start_a_cluster(monkeypatch):
    import multiprocessing

    from dpverify.errors import EnvironmentFailure
    from dpverify.parallel.executors import local_cluster

    started = []
    monkeypatch.setattr(distributed, "LocalCluster", lambda *args, **kwargs: started.append(1))
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(EnvironmentFailure) as info:
        local_cluster(2)
    assert str(info.value).startswith(
        "executor='dask' was called while a Dask worker process was importing the main module: Dask starts its "
        "worker processes with the 'spawn' method"
    )
    assert GUARD_FIX in str(info.value) and started == []


def test_a_client_that_cannot_connect_closes_the_cluster(monkeypatch):
    import dpverify.parallel.executors as executors
    from dpverify.errors import EnvironmentFailure

    class Cluster:
        closed = False

        def close(self):
            Cluster.closed = True

    def refuse(cluster):
        raise OSError("Timed out trying to connect to tcp://127.0.0.1:1")

    monkeypatch.setattr(executors, "local_cluster", lambda workers: Cluster())
    monkeypatch.setattr(distributed, "Client", refuse)
    with pytest.raises(EnvironmentFailure, match=r"cannot connect to the LocalCluster .*\(OSError: Timed out"):
        executors.open_executor("dask")
    assert Cluster.closed


def test_a_closed_pools_manager_thread_is_joined_at_exit_even_after_the_pool_is_collected():
    # CPython < 3.12.8 printed "Exception ignored ... OSError: [Errno 9] Bad file descriptor" at exit when
    # concurrent.futures' exit hook woke a pool's manager thread as it closed its pipe (gh-125451). dpverify
    # joins those threads first; it must keep the THREAD, which outlives the pool object (a WeakSet of pools
    # lost every pool collected before exit, and the message came back on 2 of 2 runs of bench_shapes.py).
    import gc

    from dpverify.parallel import executors

    with executors.open_executor("processes") as runner:
        runner.map(_square, [(1,), (2,)], executors.Shared(objects={}))
        pool = runner._pool
        thread = pool._executor_manager_thread
    del runner, pool
    gc.collect()
    from dpverify.parallel import _exit_join

    assert thread in _exit_join._CLOSING or not thread.is_alive()
    _exit_join.join_closing()
    assert not thread.is_alive()


def _square(task, shared):
    return task[0] ** 2
