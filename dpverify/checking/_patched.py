"""``estimate(..., patch=[module])``: module-level randomness served from the run's own streams.

A sampler that draws from numpy's or Python's global generators (``np.random.laplace(...)``,
``random.random()``) cannot be estimated as it is: its draws would not come from the seed, and the
repeatability check refuses it. :class:`PatchedSampler` runs it with the named modules routed
(:mod:`dpverify.finite._routing`, as ``from_sampler(..., patch=)`` routes them into the exact rng)
to a :class:`Stream` made from the ``rng`` the estimate passes: numpy's module-level functions go to
a legacy ``RandomState`` on the same bit generator, Python's ``random`` functions to a
``random.Random`` seeded from that stream, and a generator built inside (``default_rng()``,
``RandomState(seed)``) is the stream itself, whatever its seed. So every task draws from its own
stream, the figures are those of the seed on every executor, and the routing is put back when the
call returns or raises. Seeding or reading a routed generator's state is refused (it would make the
draws stop depending on the seed).
"""

from __future__ import annotations

import random
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import MechanismError
from dpverify.finite._routing import module_names, route

__all__ = ["PatchedSampler", "Stream"]

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
