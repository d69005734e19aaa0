"""Samplers adapted for the statistical mode: ``patch=`` (module-level randomness served from the run's
own streams, :class:`PatchedSampler`) and rows mixing labels and reals (:class:`EncodedSampler`).

``estimate(..., patch=[module])``.

A sampler that draws from numpy's or Python's global generators (``np.random.laplace(...)``,
``random.random()``) cannot be estimated as it is: its draws would not come from the seed, and the
repeatability check refuses it. :class:`PatchedSampler` runs it with the named modules routed
(:mod:`dpverify.finite.sampler._routing`, as ``from_sampler(..., patch=)`` routes them into the exact rng)
to a :class:`Stream` made from the ``rng`` the estimate passes: numpy's module-level functions go to
a legacy ``RandomState`` on the same bit generator, Python's ``random`` functions to a
``random.Random`` seeded from that stream, and a generator built inside (``default_rng()``,
``RandomState(seed)``) is the stream itself, whatever its seed. So every task draws from its own
stream, the figures are those of the seed on every executor, and the routing is put back when the
call returns or raises. Seeding or reading a routed generator's state is refused (it would make the
draws stop depending on the seed).
"""

from __future__ import annotations

import math
import random
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import MechanismError
from dpverify.finite.sampler._routing import module_names, route

__all__ = ["PatchedSampler", "Stream", "EncodedSampler", "encoded", "mixed_width", "check_labels_repeat"]

#: Labels are refused when more than this share of the probe's outputs are distinct (at least 100 drawn).
UNIQUE_SHARE = 0.9

_STATEFUL = frozenset({"seed", "get_state", "set_state", "getstate", "setstate", "bit_generator", "spawn", "jumped"})


class Stream:
    """The generator the routed calls of one sampler call go to: numpy's legacy API and the Generator
    API on the estimate's stream, and Python's (``python``) on a ``random.Random`` seeded from it."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._generator = rng
        self._legacy = np.random.RandomState(rng.bit_generator)
        self.python = random.Random(int(rng.integers(2**63)))
        self._active = False
        self._dataset: Any = None

    def __getattr__(self, name: str) -> Any:
        if name in _STATEFUL:
            self._abort(MechanismError(
                f"{name} of a generator routed by estimate(..., patch=) is refused: it would make the draws stop "
                "depending on the estimate's seed; draw without seeding (the routed generator is seeded for you)."
            ))
        for source in (self._legacy, self._generator):
            if hasattr(source, name):
                return getattr(source, name)
        raise AttributeError(f"the routed generator has no {name!r}")

    def _abort(self, error: MechanismError) -> NoReturn:
        raise error


class PatchedSampler:
    """``sampler`` with the module-level randomness of ``modules`` served from the ``rng`` of each call
    (module docstring). Always called batched, ``(dataset, rng, size=k)``: the inner sampler is called
    batched when it takes ``size``, else ``k`` times. Picklable when ``sampler`` is (module names are
    kept, resolved on use)."""

    def __init__(self, sampler: Any, modules: Any, *, batched: bool) -> None:
        self.sampler = sampler
        self.patch = module_names(modules)
        self.inner_batched = batched
        self.__name__ = getattr(sampler, "__name__", None) or type(sampler).__name__

    def __call__(self, dataset: Any, rng: np.random.Generator, size: int = 1) -> Any:
        stream = Stream(rng)
        with route(self.patch, stream):  # type: ignore[arg-type]  # the routing calls it as it calls the exact rng
            stream._active = True
            try:
                if self.inner_batched:
                    return self.sampler(dataset, rng, size=size)
                return [self.sampler(dataset, rng) for _ in range(size)]
            finally:
                stream._active = False


class EncodedSampler:
    """``sampler`` whose outputs are rows mixing labels and real numbers (``(3, False)`` on some draws,
    ``(3, 1.72)`` on others): each row flattened (nested tuples too) and read as numbers, ``False``/``True``
    as 0/1 and ``None`` as -1, so the statistical mode sees a vector (its joint keys bin the real
    coordinates) instead of labels that never repeat. Any fixed map of the output is a post-processing,
    so the events stay events of the mechanism and the bounds stay sound. A row of another width, or
    holding another label, is refused by name (:func:`encoded`)."""

    def __init__(self, sampler: Any, *, batched: bool, width: int) -> None:
        self.sampler, self.inner_batched, self.width = sampler, batched, width
        self.__name__ = getattr(sampler, "__name__", None) or type(sampler).__name__

    def __call__(self, dataset: Any, rng: np.random.Generator, size: int = 1) -> Any:
        raw = self.sampler(dataset, rng, size=size) if self.inner_batched else [self.sampler(dataset, rng)
                                                                                 for _ in range(size)]
        rows = [encoded(item, self.width, dataset) for item in (raw.tolist() if isinstance(raw, np.ndarray) else raw)]
        return np.array(rows, dtype=np.float64)


def _flat(value: Any) -> list[Any] | None:
    """The entries of a (nested) tuple/list/array row, or None when ``value`` is not one."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (tuple, list)):
        return None
    entries: list[Any] = []
    for item in value:
        inner = _flat(item) if isinstance(item, (tuple, list, np.ndarray)) else None
        entries.extend(inner if inner is not None else [item])
    return entries


def _entry(value: Any) -> float | None:
    if value is None:
        return -1.0
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value):
        return float(value)
    return None


#: Entry types a flat row is read by :func:`encoded` without the general walk (None: -1, bools: 0/1).
_SCALARS = frozenset({int, float, bool, type(None), np.float64, np.int64, np.bool_})


def encoded(value: Any, width: int, dataset: Any) -> list[float]:
    """One output row as :class:`EncodedSampler` reads it; refused when it cannot be."""
    if type(value) is tuple and len(value) == width and all(type(x) in _SCALARS for x in value):
        row = [-1.0 if x is None else float(x) for x in value]
        if all(math.isfinite(x) for x in row):
            return row
    entries = _flat(value)
    numbers = None if entries is None else [_entry(entry) for entry in entries]
    if numbers is None or len(numbers) != width or any(number is None for number in numbers):
        raise MechanismError(
            f"the sampler returned {value!r} on dataset {dataset!r}, where its outputs were rows of {width} entries "
            "each a number, True/False or None (read as numbers: False/True 0/1, None -1); the statistical mode "
            "cannot summarise an output of another shape. Return one shape on every draw.",
            dataset=dataset,
        )
    return numbers  # type: ignore[return-value]


def mixed_width(items: list[Any]) -> int | None:
    """The row width when ``items`` (discrete outputs) are rows of one width mixing labels (bools,
    None) and real numbers, at least one of them not an integer; else None (labels that repeat, such
    as answer vectors of True/False/None, are summarised as they are)."""
    width = None
    real = False
    for item in items:
        entries = _flat(item)
        if entries is None:
            return None
        numbers = [_entry(entry) for entry in entries]
        if any(number is None for number in numbers):
            return None
        if width is None:
            width = len(numbers)
        elif len(numbers) != width:
            return None
        real = real or any(isinstance(e, (float, np.floating)) and not float(e).is_integer() for e in entries)
    return width if real and width else None


def check_labels_repeat(items: list[Any], dataset: Any) -> None:
    """Refuse labels that almost never repeat (more than 90% of ``items`` distinct): the statistical
    mode compares how often outcomes occur, so such outputs (``("a", 3.14)``, a string holding a noisy
    number) would give a silent bound of 0 instead of an answer."""
    if len(items) < 100:
        return
    distinct = len(set(items))
    if distinct > UNIQUE_SHARE * len(items):
        raise MechanismError(
            f"the sampler's outputs almost never repeat ({distinct:,} distinct of {len(items):,} on dataset "
            f"{dataset!r}, e.g. {items[0]!r}) and are not numbers, rows of numbers, or rows mixing numbers with "
            "True/False/None: the statistical mode cannot summarise them (it compares how often outputs occur). "
            "Return the released values as numbers (a float, a tuple or array of floats; False/True/None may "
            "stand in some places), not inside strings or other objects.",
            dataset=dataset,
        )
