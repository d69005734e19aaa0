"""verify(..., timeout=) bounds one evaluation of the mechanism: a hang becomes a MechanismError
naming the dataset and the limit (serially and on a process pool); refused where no alarm can reach."""

from __future__ import annotations

import math
import pickle
import signal
import threading

import pytest

from dpverify import InvalidArgument, MechanismError, verify
from dpverify.checking._time_limit import TimeLimited, time_limited
from tests.dpverify.parallel._executor_mechanisms import hangs_on_ones, randomized_response_bits

ARGUMENTS = dict(records=(0, 1), n=3, epsilon=1.0)


@pytest.mark.parametrize("executor", [None, "processes"])
def test_a_mechanism_that_never_returns_is_stopped_naming_the_dataset(executor):
    with pytest.raises(MechanismError, match=r"hangs_on_ones ran longer than the time limit timeout=1 s on "
                                             r"dataset \(1, 1, 1\)") as caught:
        verify(hangs_on_ones, timeout=1, executor=executor, **ARGUMENTS)
    assert caught.value.dataset == (1, 1, 1)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_limit_that_is_not_reached_changes_nothing():
    bounded = verify(randomized_response_bits, timeout=30, **ARGUMENTS)
    free = verify(randomized_response_bits, **ARGUMENTS)
    assert (bounded.verdict, bounded.epsilon, bounded.delta, bounded.witness) == (
        free.verdict, free.epsilon, free.delta, free.witness)
    assert bounded.epsilon == pytest.approx(math.log(3))  # (3/4) / (1/4) on the differing bit


def test_the_wrapper_keeps_the_mechanisms_name_and_declarations_and_pickles():
    class Declared:
        exchangeable = True
        __name__ = "declared"

    wrapped = time_limited(Declared(), 5)
    assert isinstance(wrapped, TimeLimited) and wrapped.exchangeable is True and wrapped.__name__ == "declared"
    assert time_limited(randomized_response_bits, None) is randomized_response_bits
    again = pickle.loads(pickle.dumps(time_limited(randomized_response_bits, 5)))
    assert again((1,)) == randomized_response_bits((1,))


@pytest.mark.parametrize("bad", [0, -1, float("inf"), "10", True])
def test_a_bad_timeout_is_refused(bad):
    with pytest.raises(InvalidArgument, match="positive number of seconds"):
        verify(randomized_response_bits, timeout=bad, **ARGUMENTS)


def test_dask_and_other_kinds_of_inputs_refuse_a_timeout():
    with pytest.raises(InvalidArgument, match="SIGALRM"):
        verify(randomized_response_bits, timeout=1, executor="dask", **ARGUMENTS)
    with pytest.raises(InvalidArgument, match="timeout=1 does not apply"):
        verify(randomized_response_bits, [((0,), (1,))], epsilon=1.0, timeout=1)


def test_outside_the_main_thread_the_limit_is_refused_with_the_fix():
    caught: list[BaseException] = []

    def run() -> None:
        try:
            verify(randomized_response_bits, timeout=1, **ARGUMENTS)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            caught.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert len(caught) == 1 and isinstance(caught[0], InvalidArgument)
    assert "main thread" in str(caught[0]) and "executor='processes'" in str(caught[0])


def test_cli_timeout_exits_3_naming_the_dataset(capsys):
    from dpverify.integrations.cli import main

    code = main(["check", "tests.dpverify.parallel._executor_mechanisms:hangs_on_ones", "--records", "[0, 1]",
                 "--n", "3", "--epsilon", "1", "--timeout", "1", "--no-progress"])
    assert code == 3 and "(1, 1, 1)" in capsys.readouterr().err
