"""Python's and numpy's global random generators: whether code run between two readings drew from them.

dpverify sees only the randomness it is handed: a mechanism returns its exact distribution, a
sampler draws from the ``rng`` it is given. Code that also draws from a global generator
(``random.random()``, ``np.random.rand()``) returns one sample of something dpverify cannot see, and
a verdict on it would be a verdict on one draw. Both global generators are Mersenne Twisters, and
every draw moves one: its 624 state words or its position in them. So the states read before and
after running user code differ exactly when the code drew (or reseeded) -- a deterministic test,
with no false negatives for any draw that reaches the twister.

The one draw that does not reach it: a cached Gaussian. ``random.gauss`` keeps its second value in
``gauss_next`` (read here), numpy's legacy ``standard_normal`` in ``has_gauss``/``gauss``, which only
``np.random.get_state`` shows (``full=True``, 35 us); the fast reading leaves them out. Such a draw
returns the value the previous Gaussian draw made, and the draw after it moves the twister: code
that reads Gaussians is seen on its second call at the latest. Where one call may be all there is
(a block of the checker's evaluation, a vectorised call) the reading is full.

Readings. ``random.getstate()`` builds a 625-int tuple (9 us); numpy's ``get_state`` 35 us. Both
states are read here as raw bytes through ctypes instead (about 0.2 us each), where the memory
layout is first confirmed against the slow reading: CPython's ``_random.Random`` object holds
``{int index; uint32 state[624]}`` right after its object header, and numpy's ``MT19937`` bit
generator exposes ``{uint32 key[624]; int pos}`` at ``ctypes.state_address``. An unconfirmed
layout (another Python, another numpy) falls back to the slow readings.

Another thread drawing from a global generator at the same moment (Dask's event loop picks workers
with ``random.choice``) changes the state too. :func:`run_unchanged` therefore runs code a second
time when the state changed, and raises only when it changes again; the result it returns always
comes from a run in which neither generator moved.
"""

from __future__ import annotations

import ctypes
import functools
import random
import struct
import threading
import time
from array import array
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from dpverify.errors import DpverifyError, NondeterministicMechanism

__all__ = ["PYTHON", "NUMPY", "global_states", "changed_generators", "run_unchanged", "call_unchanged", "drew_error",
           "routes_of"]

#: How the two generators are named in errors.
PYTHON = "Python's global random generator (random.random(), random.choice(), ...)"
NUMPY = "numpy's global generator (np.random.rand(), np.random.choice(), ...)"

Result = TypeVar("Result")

_MT_BYTES = 624 * 4 + 4
_NUMPY_RANDOM: Any = np.random  # numpy's stubs leave out get_bit_generator and type get_state loosely
_HEADER = object.__basicsize__  # ob_refcnt and ob_type: where a C object's own fields start


def global_states(*, full: bool = False) -> tuple:
    """The states of Python's global ``random`` generator and numpy's legacy global generator.

    Args:
        full: also numpy's cached Gaussian (through ``np.random.get_state``, about 35 us); the
            default reading (about 0.5 us for both) leaves it out (module docstring).
    """
    return _python_state(), (_numpy_full_state() if full else _numpy_state())


def changed_generators(before: tuple) -> list[str]:
    """The generators (:data:`PYTHON`, :data:`NUMPY`) whose state differs from ``before`` (a
    :func:`global_states` reading, taken with the same ``full``)."""
    return _differences(before, global_states(full=isinstance(before[1], tuple)))


def _differences(before: tuple, after: tuple) -> list[str]:
    return [name for name, old, new in ((PYTHON, before[0], after[0]), (NUMPY, before[1], after[1])) if old != new]


#: Runs a call gets before a moved generator is blamed on it: in a process with one thread a draw seen
#: twice in a row is the call's; with other threads alive (a Dask worker's event loop draws from
#: ``random``), one of them may have drawn, so the call must move a generator on every one of more runs.
_RUNS_ALONE, _RUNS_SHARED = 2, 6


def run_unchanged(call: Callable[[], Result], error: Callable[[list[str]], DpverifyError], *,
                  full: bool = False) -> Result:
    """``call()`` with the global states compared around it; a changed state runs it again.

    Returns the result of a run during which neither generator moved. When every run moves one --
    two runs in a process with one thread, six while other threads are alive (they may draw too:
    a Dask worker's event loop does), with a pause growing by a millisecond between runs -- raises
    ``error(names of the generators the last run moved)``, also when the call raised after drawing
    (that exception chained): the draw, not what followed from it, is the fault. A mechanism that
    draws moves a generator on every run, so it is refused whatever the threads do.

    The first run is read with ``full``, later ones always in full: a first run that drew a pair of
    numpy Gaussians leaves the second to take the cached one without moving the twister, and only
    the full reading sees that (else code reading one Gaussian a call would pass every call).
    """
    runs = _RUNS_ALONE if threading.active_count() == 1 else _RUNS_SHARED
    for attempt in range(runs):
        reading = full if attempt == 0 else True
        last = attempt == runs - 1
        if attempt > 1:
            time.sleep(0.001 * (attempt - 1))
        before = global_states(full=reading)
        try:
            result = call()
        except NondeterministicMechanism:  # already the verdict-less answer, and more specific (a sampler's)
            raise
        except Exception as failure:
            used = changed_generators(before)
            if not used:
                raise
            if last:
                raise error(used) from failure
            continue
        after = global_states(full=reading)
        if after == before:
            return result
        if last:
            raise error(_differences(before, after))
    raise AssertionError("unreachable: the last run returns or raises")


def call_unchanged(function: Callable[[Any], Result], dataset: Any, *, what: str) -> Result:
    """``function(dataset)`` through :func:`run_unchanged`, a draw reported as ``what`` (e.g. "the
    mechanism f.output_density") drawing on ``dataset``."""
    return run_unchanged(lambda: function(dataset),
                         lambda used: drew_error(what, f"dataset {dataset!r}", used, dataset=dataset))


def routes_of(used: list[str]) -> tuple[str, ...]:
    """The modules whose routing (``patch=``) serves the global generators ``used`` (:data:`NUMPY`,
    :data:`PYTHON`) from a run's own generator."""
    return tuple(module for generator, module in ((NUMPY, "numpy.random"), (PYTHON, "random")) if generator in used)


def drew_error(what: str, where: str, used: list[str], *, dataset: Any) -> NondeterministicMechanism:
    """The error for a distribution-returning mechanism (``what``, e.g. "the mechanism f") that drew
    from the global generators ``used`` while computing ``where`` (e.g. "dataset (0, 1)")."""
    return NondeterministicMechanism(
        f"{what} drew from {' and '.join(used)} on {where} (on every one of repeated calls). No verdict was given: a mechanism "
        "must return its exact output distribution, a function of the dataset alone, and one that draws returns "
        "a sample (or picks one of several distributions at random), so a verdict on it would be a verdict on one "
        "draw. Draw no random numbers in it: compute each outcome's exact probability (a random choice between "
        "distributions is their mixture: weight each by its probability and add them). For sampling code, pass "
        "dpverify.from_sampler(sampler): it takes sampler(dataset, rng), draws every random choice from rng and "
        "computes the exact distribution over all of them.",
        dataset=dataset,
    )


# The generator last read and a ctypes view of its state (None: its layout is not the expected one).
# Holding the generator keeps the memory the view reads alive.
_python_cache: list[Any] = [None, None]
_numpy_cache: list[Any] = [None, None]


def _python_state() -> Any:
    generator: Any = random._inst  # the instance behind random.random() & co (typeshed: a Random)
    if generator is not _python_cache[0]:
        _python_cache[:] = [generator, _python_view(generator)]
    view = _python_cache[1]
    if view is None:
        return generator.getstate()
    return view.raw, generator.gauss_next


def _python_view(generator: Any) -> Any:
    """A ctypes view of ``{int index; uint32 state[624]}`` after ``generator``'s object header, when
    what it shows is what ``getstate()`` says the generator holds; else None."""
    if not isinstance(generator, random.Random):
        return None
    _, internal, _ = generator.getstate()
    expected = struct.pack("=i", internal[-1]) + array("I", internal[:-1]).tobytes()
    view = (ctypes.c_char * _MT_BYTES).from_address(id(generator) + _HEADER)
    return view if len(expected) == _MT_BYTES and view.raw == expected else None


def _numpy_state() -> bytes:
    """numpy's global MT19937 words and position: read through the bit generator's ctypes interface
    (``state_address`` points at ``{uint32 key[624]; int pos}``; 0.2 us against 35 us for
    ``np.random.get_state``) where that layout is confirmed, else from ``get_state``."""
    if _ctypes_layout():
        bit_generator = _NUMPY_RANDOM.get_bit_generator()
        if bit_generator is not _numpy_cache[0]:
            _numpy_cache[:] = [bit_generator, _numpy_view(bit_generator)]
        view = _numpy_cache[1]
        if view is not None:
            return view.raw
    _, key, pos, has_gauss, gauss = _NUMPY_RANDOM.get_state(legacy=True)
    return key.tobytes() + struct.pack("=iid", pos, has_gauss, gauss)


def _numpy_view(bit_generator: Any) -> Any:
    """A ctypes view of ``{uint32 key[624]; int pos}`` at ``bit_generator.ctypes.state_address``,
    when it shows what ``np.random.get_state`` says; else None (another bit generator)."""
    try:
        _, key, pos, _, _ = _NUMPY_RANDOM.get_state(legacy=True)
        view = (ctypes.c_char * _MT_BYTES).from_address(bit_generator.ctypes.state_address)
    except Exception:  # not an MT19937 (set_bit_generator), or no ctypes interface
        return None
    return view if view.raw == key.astype(np.uint32).tobytes() + struct.pack("=i", pos) else None


def _numpy_full_state() -> tuple:
    """numpy's global state with its cached Gaussian: ``(words and position, has_gauss, gauss)``."""
    _, key, pos, has_gauss, gauss = _NUMPY_RANDOM.get_state(legacy=True)
    return key.tobytes() + struct.pack("=i", pos), has_gauss, gauss


@functools.lru_cache(maxsize=1)
def _ctypes_layout() -> bool:
    """Whether numpy's global bit generator can be read as ``{uint32 key[624]; int pos}``."""
    try:
        generator = _NUMPY_RANDOM.get_bit_generator()
    except Exception:  # an older numpy (no get_bit_generator)
        return False
    return _numpy_view(generator) is not None


def _global_states() -> tuple:
    """The states of both global generators, as :func:`from_sampler <dpverify.finite.sampler.sampling.from_sampler>`
    compares them around an enumeration (every path the sampler takes is run at least twice -- the
    first is replayed -- so a sampler that reads a global generator moves it at least once)."""
    return global_states()


def _check_global_states(before: tuple, name: str, dataset: Any, cause: DpverifyError | None = None) -> None:
    """Raise :class:`NondeterministicMechanism` when the sampler ``name`` moved a global generator
    since ``before`` (a :func:`_global_states` reading) on ``dataset``."""
    used = changed_generators(before)
    if used:
        routes = routes_of(used)
        error = NondeterministicMechanism(
            f"the sampler {name} drew from {' and '.join(used)} on dataset {dataset!r}; those draws are not "
            f"enumerated, so its output is a sample, not a distribution. Route them into the rng: "
            f"from_sampler({name}, patch={list(routes)!r}). Or draw every random choice from the rng argument: it has "
            "numpy's Generator and random.Random methods (rng.random(), rng.integers(...), rng.choice(...), ...).",
            dataset=dataset, routes=routes,
        )
        raise error from cause
