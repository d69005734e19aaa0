"""Routing of module-level randomness into the exact rng, for the duration of one enumeration.

Real code often draws from generators it does not take as an argument: Python's ``random``
functions (``random.random()``, ``random.choice(...)``: bound methods of the hidden ``random._inst``),
numpy's legacy functions (``np.random.rand()``, ``np.random.randint(...)``: bound methods of
``np.random.mtrand._rand``), ``secrets`` (``secrets.randbelow``, ``secrets.choice``), or a generator
it builds inside (``random.SystemRandom()``, ``secrets.SystemRandom()``, ``np.random.RandomState(seed)``,
``np.random.default_rng()``, ``np.random.Generator(...)``). :func:`route` sends those to the exact rng
of the run while it is in force:

* a module-level numpy function goes to the exact rng's method of the same name (numpy's meaning;
  ``ranf`` and ``sample`` to ``random_sample``); a ``random``/``secrets`` function to the rng's
  Python view ``rng.python`` (Python's meaning: ``random.randint(a, b)`` includes ``b``);
* ``SystemRandom()`` built inside returns ``rng.python``; ``RandomState(...)``, ``default_rng(...)``
  and ``Generator(...)`` return the exact rng itself, whatever their seed (a seed is taken as a
  stand-in for randomness: two generators seeded alike are *not* modelled as one stream);
* refused calls (``random.gauss``, ``np.random.normal``, ``np.random.seed``, ``random.getstate``,
  ``secrets.token_bytes``, ``np.random.get_bit_generator``) raise a MechanismError naming the call.

What is patched. For each module named, its attributes that ARE one of those callables or classes
(``from random import random``, ``from numpy.random import rand, default_rng``) are replaced, and the
standard modules ``random``, ``numpy.random`` (with ``numpy.random.mtrand``) and ``secrets`` are
patched when named or when a named module refers to them (``import random``, ``import numpy as np``,
``import secrets``), which covers calls written through them (``random.random()``, ``np.random.rand()``).
Other modules a named module imports are not scanned: name each module that imports a random
function by name. The replacements keep ``isinstance`` working: a replaced class is a subclass of the
original whose ``isinstance``/``issubclass`` answer as the original's (and ``np.random.Generator``'s also
accept the exact rng), so diffprivlib's ``isinstance(seed, secrets.SystemRandom)`` and scikit-learn's
``isinstance(seed, np.random.RandomState)`` hold for the routed generators.

Dispatch. A replacement sends a call to the exact rng only from the context (thread, asyncio task)
whose :func:`route` asked for that place, and only while a run of the sampler is in progress
(``rng._active``); every other call goes to the original. So concurrent enumerations in threads do
not see each other's routing. Replacements are installed once, counted, and the originals put back
when the last routing using them exits, normally or by an exception (``random.random is original``
again). dpverify's own code must not call the routed functions or build the routed classes while a
run is active (it uses ``random.Random(seed)`` instances, which are never routed).

Not routable, and not pretended: code compiled ahead (a numba-jitted function draws from numba's
own generator state; a C or Cython extension's generator, e.g. ``bit_generator.random_raw()``),
generator objects made before the enumeration and kept (``_RNG = np.random.RandomState(1)`` at
module level, ``random._inst`` or ``np.random.mtrand._rand`` used directly), ``random.Random(seed)``
instances built inside, ``os.urandom``, and modules not named. Draws from those stay hidden; the
global-generator check and the replays of :mod:`dpverify.finite.sampler.sampling` catch the ones that change
Python's or numpy's global state or the output.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import random
import secrets
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument, MechanismError
from dpverify.finite._numbers import _arguments
from dpverify.finite.sampler._exact_random import ROUTING, ExactRandom, RouteSlot

__all__ = ["route", "module_names", "routed_places", "STANDARD_MODULES"]

#: The standard modules of generators, and the modules a reference to each patches.
STANDARD_MODULES: dict[str, tuple[str, ...]] = {
    "random": ("random",),
    "secrets": ("secrets",),
    "numpy": ("numpy.random", "numpy.random.mtrand"),
    "numpy.random": ("numpy.random", "numpy.random.mtrand"),
    "numpy.random.mtrand": ("numpy.random", "numpy.random.mtrand"),
}


@dataclass(frozen=True)
class _Target:
    """Where a routed call goes: ``kind`` "rng" (the exact rng's ``name``), "python" (its Python
    view's ``name``), "itself" (the rng: a generator built inside), "view" (``rng.python``), or
    "refused" (``name`` is the call, ``reason`` why)."""

    kind: str
    name: str = ""
    reason: str = ""

    def call(self, rng: ExactRandom, args: tuple, kwargs: dict) -> Any:
        if self.kind == "rng":
            return getattr(rng, self.name)(*args, **kwargs)
        if self.kind == "python":
            return getattr(rng.python, self.name)(*args, **kwargs)
        if self.kind == "itself":
            return rng
        if self.kind == "view":
            return rng.python
        assert self.kind == "refused", self.kind
        rng._abort(MechanismError(
            f"{self.name}({_arguments(args, kwargs)}) was routed to the exact rng (from_sampler(..., patch=...)), which "
            f"refuses it: {self.reason}.",
            dataset=rng._dataset,
        ))


_NUMPY_RANDOM: Any = np.random  # numpy's stubs leave out get_bit_generator and set_bit_generator
_STATE = "it works on the state of numpy's global generator, and the exact rng has none (every draw is enumerated)"
_BYTES = "it returns raw random bytes, which the exact rng does not draw; draw integers instead and convert them"
#: Module-level functions and classes that are not bound methods of a global generator.
_SPECIAL: tuple[tuple[Any, _Target], ...] = (
    (np.random.ranf, _Target("rng", "random_sample")),
    (np.random.sample, _Target("rng", "random_sample")),
    (np.random.seed, _Target("rng", "seed")),
    (_NUMPY_RANDOM.get_bit_generator, _Target("refused", "numpy.random.get_bit_generator", _STATE)),
    (_NUMPY_RANDOM.set_bit_generator, _Target("refused", "numpy.random.set_bit_generator", _STATE)),
    (np.random.default_rng, _Target("itself")),
    (np.random.RandomState, _Target("itself")),
    (np.random.Generator, _Target("itself")),
    (random.SystemRandom, _Target("view")),
    (secrets.randbelow, _Target("python", "_randbelow")),
    (secrets.token_bytes, _Target("refused", "secrets.token_bytes", _BYTES)),
    (secrets.token_hex, _Target("refused", "secrets.token_hex", _BYTES)),
    (secrets.token_urlsafe, _Target("refused", "secrets.token_urlsafe", _BYTES)),
)
_SPECIAL_BY_ID = {id(original): (original, target) for original, target in _SPECIAL}
#: The global generators whose bound methods are routed, to the rng ("rng") or its Python view.
_GLOBAL_GENERATORS: tuple[tuple[Any, str], ...] = (
    (np.random.mtrand._rand, "rng"), (random._inst, "python"), (secrets._sysrand, "python"),  # type: ignore[attr-defined]
)


def _target_of(value: Any) -> _Target | None:
    special = _SPECIAL_BY_ID.get(id(value))
    if special is not None and special[0] is value:
        return special[1]
    try:
        owner, name = value.__self__, value.__name__
    except Exception:  # not a bound method (or an object whose attributes raise)
        return None
    for generator, kind in _GLOBAL_GENERATORS:
        if owner is generator and isinstance(name, str) and not name.startswith("_"):
            return _Target(kind, name)
    return None


# -- the patches in force, shared by every routing in the process ---------------------------------


@dataclass
class _Installed:
    module: ModuleType
    attribute: str
    original: Any
    users: int = 0


_LOCK = threading.Lock()
_INSTALLED: dict[tuple[str, str], _Installed] = {}
#: What a place held when last scanned and its target, and the replacement last built for it: a
#: routing per dataset then costs dictionary lookups, not a classification and a new class per place.
_SCANNED: dict[tuple[str, str], tuple[Any, _Target | None]] = {}
_REPLACEMENTS: dict[tuple[str, str], tuple[Any, Any]] = {}


def _routed_rng(key: tuple[str, str]) -> ExactRandom | None:
    """The exact rng a call at ``key`` goes to: this context's routing asked for ``key`` and a run of
    its rng is in progress. Else None: the call goes to the original."""
    slot = ROUTING.get()
    if slot is None or key not in slot.keys:
        return None
    rng = slot.rng
    return rng if rng is not None and rng._active else None


def _dispatcher(key: tuple[str, str], original: Any, target: _Target) -> Any:
    def routed(*args: Any, **kwargs: Any) -> Any:
        rng = _routed_rng(key)
        if rng is None:
            return original(*args, **kwargs)
        return target.call(rng, args, kwargs)

    functools.update_wrapper(routed, original)
    return routed


class _StandIn(type):
    """The metaclass of a class standing in for a generator class while routed: ``isinstance`` and
    ``issubclass`` answer as for the original (``_original``) or the classes in ``_also``."""

    _original: type
    _also: tuple[type, ...]

    def __instancecheck__(cls, instance: Any) -> bool:
        if "_original" not in vars(cls):  # a subclass defined while routed: the ordinary answer
            return type.__instancecheck__(cls, instance)
        return isinstance(instance, (cls._original, *cls._also))

    def __subclasscheck__(cls, subclass: Any) -> bool:
        if "_original" not in vars(cls):
            return type.__subclasscheck__(cls, subclass)
        return issubclass(subclass, (cls._original, *cls._also))


def _stand_in(key: tuple[str, str], original: type, target: _Target) -> type:
    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is not stand_in:  # a subclass defined while routed: built as the original builds it
            return original.__new__(cls, *args, **kwargs)
        rng = _routed_rng(key)
        if rng is None:
            return original(*args, **kwargs)
        return target.call(rng, args, kwargs)

    also = (ExactRandom,) if original is np.random.Generator else ()
    namespace = {
        "__new__": __new__, "__module__": original.__module__, "__qualname__": original.__qualname__,
        "__doc__": original.__doc__, "_original": original, "_also": also,
    }
    stand_in = _StandIn(original.__name__, (original,), namespace)
    return stand_in


def _replacement(key: tuple[str, str], original: Any, target: _Target) -> Any:
    return _stand_in(key, original, target) if isinstance(original, type) else _dispatcher(key, original, target)


def _module(name: str) -> ModuleType:
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except Exception as error:
            raise InvalidArgument(f"patch: cannot import module {name!r} ({type(error).__name__}: {error}).") from None
    return module


def _plan(names: tuple[str, ...]) -> dict[tuple[str, str], tuple[ModuleType, Any, _Target | None]]:
    """The places to patch for ``names``: ``(module name, attribute) -> (module, original, target)``
    (target None where a replacement is already installed). Under the lock."""
    plan: dict[tuple[str, str], tuple[ModuleType, Any, _Target | None]] = {}
    pending = [standard for name in names for standard in STANDARD_MODULES.get(name, (name,))]
    seen: set[str] = set()
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        module = _module(name)
        for attribute, value in list(vars(module).items()):
            key = (name, attribute)
            if key in _INSTALLED:
                plan[key] = (module, _INSTALLED[key].original, None)
            elif isinstance(value, ModuleType):
                pending.extend(STANDARD_MODULES.get(value.__name__, ()))
            else:
                scanned = _SCANNED.get(key)
                if scanned is None or scanned[0] is not value:
                    scanned = _SCANNED[key] = (value, _target_of(value))
                if scanned[1] is not None:
                    plan[key] = (module, value, scanned[1])
    return plan


def _install(plan: dict[tuple[str, str], tuple[ModuleType, Any, _Target | None]]) -> frozenset[tuple[str, str]]:
    done: list[tuple[str, str]] = []
    try:
        for key, (module, original, target) in plan.items():
            installed = _INSTALLED.get(key)
            if installed is None:
                assert target is not None, key
                built = _REPLACEMENTS.get(key)
                if built is None or built[0] is not original:
                    built = _REPLACEMENTS[key] = (original, _replacement(key, original, target))
                setattr(module, key[1], built[1])
                installed = _INSTALLED[key] = _Installed(module, key[1], original)
            installed.users += 1
            done.append(key)
    except BaseException:
        _uninstall(done)
        raise
    return frozenset(done)


def _uninstall(keys: Any) -> None:
    for key in keys:
        installed = _INSTALLED[key]
        installed.users -= 1
        if installed.users == 0:
            setattr(installed.module, installed.attribute, installed.original)
            del _INSTALLED[key]


def routed_places() -> dict[tuple[str, str], Any]:
    """The places patched now, ``(module name, attribute) -> original`` (empty when no routing is in force)."""
    with _LOCK:
        return {key: installed.original for key, installed in _INSTALLED.items()}


# -- the public surface ---------------------------------------------------------------------------


def module_names(patch: Any) -> tuple[str, ...]:
    """``patch`` (None, a module, a dotted module name, or a list of those) as importable module
    names, in order, without repeats. Raises InvalidArgument naming a bad entry and the fix."""
    if patch is None:
        return ()
    if isinstance(patch, (str, ModuleType)):
        patch = [patch]
    try:
        items = list(patch)
    except TypeError:
        raise InvalidArgument(
            f"patch must be a list of modules or dotted module names, got patch={patch!r}; e.g. "
            "patch=[random, 'numpy.random', 'mypackage.mechanism']."
        ) from None
    names: list[str] = []
    for item in items:
        if isinstance(item, ModuleType):
            name = item.__name__
            if sys.modules.get(name) is not item:
                raise InvalidArgument(
                    f"patch: the module object {name!r} is not sys.modules[{name!r}], so it cannot be found again by "
                    "its name (the mechanism stores names, to be picklable); import the module normally and pass it."
                )
        elif isinstance(item, str) and item:
            name = item
            _module(name)
        else:
            raise InvalidArgument(
                f"patch: each entry must be a module or the dotted name of an importable module, got {item!r} of type "
                f"{type(item).__name__}; e.g. patch=[random, 'numpy.random', 'mypackage.mechanism']."
            )
        if name not in names:
            names.append(name)
    return tuple(names)


@contextlib.contextmanager
def route(modules: Any, rng: ExactRandom | None = None) -> Iterator[RouteSlot | None]:
    """Within the block, module-level randomness of ``modules`` goes to the exact rng (module docstring).

    Args:
        modules: what :func:`module_names` accepts; empty or None routes nothing (and hides any
            routing of an enclosing block from the block).
        rng: the exact rng the calls go to; None: the last :class:`ExactRandom` made inside the block
            (``from_sampler`` makes one per enumeration).

    Yields:
        The routing's :class:`RouteSlot` (None when nothing is routed).
    """
    names = module_names(modules)
    if not names:
        token = ROUTING.set(None)
        try:
            yield None
        finally:
            ROUTING.reset(token)
        return
    with _LOCK:
        keys = _install(_plan(names))
    slot = RouteSlot(keys, rng)
    token = ROUTING.set(slot)
    try:
        yield slot
    finally:
        ROUTING.reset(token)
        with _LOCK:
            _uninstall(keys)
