"""The exact random source ``rng`` that :func:`dpverify.from_sampler` hands to a sampler.

:class:`ExactRandom` answers the commonly used draws of numpy's ``Generator``, of numpy's legacy
``RandomState`` (:mod:`dpverify.finite.sampler._legacy`) and of Python's ``random.Random`` without drawing
anything: every draw is a *choice point* with finitely many
branches and their exact probabilities. One run of the sampler follows one branch at each choice
point (the branches a caller asks for by a prefix of branch indices, the first branch after it),
and records the choice points it met, so :mod:`dpverify.finite.sampler.sampling` can enumerate every
execution path depth first and weight each by the product of its branch probabilities.

``rng.random()`` returns a :class:`~dpverify.finite.sampler._lazy.LazyUniform`: a uniform on ``[0, 1)`` that is never drawn. It
keeps the interval ``[lo, hi)`` (exact Fractions) it is known to lie in; a comparison with a
threshold ``t`` inside the interval is a choice point with two branches, ``u < t`` with probability
``(t - lo) / (hi - lo)`` and ``u >= t`` with the rest, and narrows the interval on each. So a
Bernoulli coin ``rng.random() < p`` and inverse-CDF sampling of a finite distribution are exact.
Ties ``u == t`` have probability 0, so ``<`` and ``<=`` (``>`` and ``>=``) branch alike.
Arithmetic on a lazy uniform (``u * 3``, ``np.log(u)``, ``int(u * k)``) is followed exactly, each
comparison of the result mapped back to a threshold on ``u`` (see :mod:`dpverify.finite.sampler._lazy`);
``float(u)`` (so ``math.log(u)``) is refused: it would need the value, which is never drawn.

Where real code expects a generator. The exact rng is an instance of ``np.random.RandomState``, so
``random_state=rng`` passes scikit-learn's ``check_random_state`` (and diffprivlib's, built on it);
``rng.python`` is its ``random.Random`` / ``secrets.SystemRandom`` view
(:mod:`dpverify.finite.sampler._python_random`). Subclassing ``RandomState`` would inherit methods that draw
from a hidden Mersenne Twister, so the class is closed by construction: every public name of
``RandomState``, ``Generator``, ``random.Random`` and ``random.SystemRandom`` is an exact draw here or
a refusal naming the call (:mod:`dpverify.finite.sampler._refusals`). ``RandomState.__init__`` is never run
(it seeds a Mersenne Twister, about 100 us): the hidden bit generator stays ``None``, so even an
inherited method could not draw, it would fail.

Numbers: exact probabilities and weights (``int``, ``Fraction``, ``Decimal``, sympy rationals) stay
exact Fractions. A float is its binary value and marks the path *inexact*: the distribution that
:mod:`dpverify.finite.sampler.sampling` builds then holds floats (each total computed exactly from the
binary values and rounded once), as the float error model of :mod:`dpverify.verdict.engine` expects.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import (
    DpverifyError,
    EnumerationTooLarge,
    InvalidArgument,
    MechanismError,
    NondeterministicMechanism,
)
from dpverify.finite._numbers import WAYS_ON, Enclosure, _arguments, _describe, _integer, _number, poisson_hazard
from dpverify.finite.sampler._lazy import LazyUniform
from dpverify.finite.sampler._legacy import LegacyDraws
from dpverify.finite.sampler._noise import Deferred, NoisePath
from dpverify.finite.sampler._noise_draws import NoiseDraws, refuse_untraced
from dpverify.finite.sampler._python_random import COPY_REFUSAL, PythonRandom
from dpverify.finite.sampler._refusals import GENERATOR_APIS, refuse_the_rest
from dpverify.finite.sampler._weights import _Probabilities, _weights

__all__ = ["ExactRandom", "LazyUniform", "SUPPORTED_CALLS", "ROUTING", "RouteSlot"]

#: The draws :class:`ExactRandom` answers, by the API they come from (used in its error messages).
SUPPORTED_CALLS = (
    "numpy Generator: random(size=None), integers(low, high=None, size=None, dtype=int64, endpoint=False), "
    "choice(a, size=None, replace=True, p=None, axis=0), permutation(x, axis=0), shuffle(x, axis=0), "
    "permuted(x, axis=None, out=None), binomial(n, p, size=None), hypergeometric(ngood, nbad, nsample, size=None), "
    "multinomial(n, pvals, size=None); traced continuous noise: laplace(loc, scale, size), exponential(scale, size), "
    "standard_exponential(size), normal(loc, scale, size) (released only), expovariate(lambd), gauss(mu, sigma); "
    "numpy RandomState (legacy): random_sample(size=None), rand(d0, d1, ...), "
    "randint(low, high=None, size=None, dtype=int) (high excluded), random_integers(low, high=None, size=None), "
    "tomaxint(size=None); random.Random: random(), randrange(start, stop=None, step=1), choice(seq), "
    "choices(population, weights=None, *, cum_weights=None, k=1), sample(population, k, *, counts=None), "
    "shuffle(x), getrandbits(k), binomialvariate(n=1, p=0.5), and Python's randint(a, b) (b included) on the "
    "random.Random view rng.python"
)

Signature = tuple  # (kind, branch count, branch probabilities or None for uniform, inexact)


class _Abort(BaseException):
    """Stops a run of the sampler with the error to raise (``args[0]``, also kept as the rng's
    ``_failure`` in case the sampler swallows it). A BaseException, so a sampler's ``except
    Exception:`` cannot swallow it."""


class _Suspend(BaseException):
    """Stops a run whose mass fell below the enumeration's cutoff: the path is left for a later,
    finer pass (see :mod:`dpverify.finite.sampler.sampling`). A BaseException, like :class:`_Abort`."""


#: Paths longer than this many draws are refused (a loop that does not end), unless the sampler's
#: tail is explored by mass: then the cutoff ends every run first.
DEFAULT_MAX_DEPTH = 10_000
_ZERO, _ONE = Fraction(0), Fraction(1)
_BOUND_BITS = 256  # enclosed masses are rounded outward to this many bits below their leading one


def _round_down(value: Fraction) -> Fraction:
    """The largest dyadic rational <= ``value`` with about :data:`_BOUND_BITS` significant bits."""
    shift = _BOUND_BITS - (value.numerator.bit_length() - value.denominator.bit_length())
    if value <= 0 or value.denominator.bit_length() <= 2 * _BOUND_BITS:
        return value
    return Fraction((value.numerator << shift) // value.denominator, 1 << shift) if shift >= 0 else value


def _round_up(value: Fraction) -> Fraction:
    """The smallest dyadic rational >= ``value`` with about :data:`_BOUND_BITS` significant bits."""
    shift = _BOUND_BITS - (value.numerator.bit_length() - value.denominator.bit_length())
    if value <= 0 or value.denominator.bit_length() <= 2 * _BOUND_BITS:
        return value
    return Fraction(-((-(value.numerator << shift)) // value.denominator), 1 << shift) if shift >= 0 else value



def _shape(call: str, size: Any) -> tuple[int, ...] | None:
    if size is None:
        return None
    sizes = (size,) if isinstance(size, (Integral, np.integer)) else size
    try:
        shape = tuple(_integer(call, "size", s, at_least=0) for s in sizes)
    except TypeError:
        raise InvalidArgument(f"{call}: size must be None, an integer or a tuple of integers, got size={size!r}.") from None
    return shape


def _sequence(call: str, name: str, value: Any) -> Sequence:
    if isinstance(value, (set, frozenset, dict)) or not (hasattr(value, "__len__") and hasattr(value, "__getitem__")):
        raise InvalidArgument(
            f"{call}: {name} must be a sequence (list, tuple, range, str or numpy array), got {type(value).__name__}; "
            "sets have no order to draw by: pass sorted(...) of it."
        )
    return value


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(total,)]
    return [(first, *rest) for first in range(total + 1) for rest in _compositions(total - first, parts - 1)]


@dataclass
class RouteSlot:
    """The routing of module-level randomness in force in a context (:mod:`dpverify.finite.sampler._routing`):
    the patched places (``(module name, attribute)``) it asked for, and the exact rng their calls go
    to (the one given to the routing, or else the last one made inside it)."""

    keys: frozenset[tuple[str, str]]
    rng: ExactRandom | None = None


#: The routing in force in this context, if any: an :class:`ExactRandom` made inside joins it.
ROUTING: ContextVar[RouteSlot | None] = ContextVar("dpverify_routing", default=None)


class ExactRandom(NoiseDraws, LegacyDraws, np.random.RandomState):
    """The ``rng`` a sampler receives from :func:`dpverify.from_sampler`: numpy ``Generator``,
    ``RandomState`` and ``random.Random`` draws answered by enumeration (see the module docstring and
    :data:`SUPPORTED_CALLS`). Scalars come back as Python ints (or the chosen element); arrays as
    numpy arrays, as numpy returns them; ``random()`` as a :class:`LazyUniform`. An instance of
    ``np.random.RandomState`` whose hidden generator is never seeded (module docstring); its
    ``random.Random`` view is :attr:`python`."""

    def __init__(self, dataset: Any, name: str, max_branches: int, *, max_depth: int = DEFAULT_MAX_DEPTH, tail: Fraction = _ZERO) -> None:  # no RandomState.__init__: no seeding
        self._dataset, self._name, self._max_branches = dataset, name, max_branches
        self._max_depth, self._tail = max_depth, tail
        self._run = 0
        self._hazards: dict[tuple, list] = {}
        self._feasible_cache: dict = {}
        self._view: PythonRandom | None = None
        self._start([], [], None)
        slot = ROUTING.get()
        if slot is not None:
            slot.rng = self

    @property
    def python(self) -> PythonRandom:
        """This rng as a ``random.Random`` / ``secrets.SystemRandom`` (an instance of both), with
        Python's meanings (``randint(a, b)`` includes ``b``); every draw is a draw of this rng."""
        if self._view is None:
            self._view = PythonRandom(self)
        return self._view

    # -- the run: choice points --------------------------------------------------------------

    def _start(self, prefix: list[int], expected: list[Signature], probe: random.Random | None, cutoff: Fraction | None = None,
               base: int = 0) -> None:
        """Begin a run along ``prefix`` (the branch indices of the first choice points; ``expected``
        their signatures), then first branches (or ``probe``'s random ones). With ``cutoff``, the run
        is suspended (:class:`_Suspend`) at the first new choice point after which its mass is below
        ``cutoff``; at a uniform draw from position ``base`` on (the subtree being enumerated), the
        branch and its later siblings are suspended together (``_fan`` of them: they weigh the same)."""
        self._run += 1
        self._prefix, self._expected, self._probe = prefix, expected, probe
        self._cutoff, self._base = cutoff, base
        self._fan = 1
        self._signatures: list[Signature] = []
        self._indices: list[int] = []
        self._numerator, self._denominator = 1, 1
        self._bounds: tuple[Fraction, Fraction] | None = None  # the product of the enclosed branch probabilities
        self._inexact = False
        self._noise = NoisePath()
        self._asked = [-1, 0]
        self._suspended = False
        self._failure: DpverifyError | None = None
        self._active = True

    def _finish(self) -> None:
        self._active = False

    def _abort(self, error: DpverifyError) -> NoReturn:
        if self._failure is None:
            self._failure = error
        raise _Abort(error)

    def _choose(self, kind: str, count: int, probabilities: tuple[Any, ...] | None = None, inexact: bool = False) -> int:
        """A choice point of ``count`` >= 2 branches: uniform (``probabilities`` None), by the positive
        exact ``probabilities``, or a coin (``count`` 2, ``probabilities`` the first branch's alone).
        A probability is a Fraction or, for an irrational one, an :class:`~dpverify.finite._numbers.Enclosure`.
        Returns the branch this run takes."""
        if not self._active:
            self._abort(MechanismError(
                f"rng.{kind} was called after the sampler {self._name} returned; the rng is only valid during the "
                "call it was passed to (do not keep it, or lazy uniforms drawn from it, between calls).",
                dataset=self._dataset,
            ))
        indices = self._indices
        position = len(indices)
        signature = (kind, count, probabilities, inexact)
        prefix = self._prefix
        if position < len(prefix):
            expected = self._expected[position]
            if expected is not signature and expected != signature:
                self._abort(self._mismatch(position, signature))
            index = prefix[position]
        elif position >= self._max_depth:
            self._abort(self._too_deep(kind))
        elif self._probe is not None:
            index = self._probe.randrange(count)
        else:
            if count > self._max_branches:
                self._abort(EnumerationTooLarge(
                    f"rng.{kind} alone has {count:,} outcomes on dataset {self._dataset!r}, more than "
                    f"max_paths={self._max_branches:,} execution paths of the sampler {self._name}; draw from a smaller "
                    "range, raise max_paths (from_sampler(sampler, max_paths=...)), or check the sampler "
                    "statistically with dpverify.estimate.",
                ))
            index = 0
        self._signatures.append(signature)
        indices.append(index)
        if probabilities is None:
            self._denominator *= count
        elif type(probabilities) is Deferred:
            pass  # a traced branch: its mass is the integral over the path's region, known at the end
        else:
            whole = len(probabilities) == count
            chosen = probabilities[index] if whole else probabilities[0]
            if type(chosen) is Fraction:
                numerator, denominator = chosen.as_integer_ratio()
                # a coin is given by the probability of its first branch
                self._numerator *= numerator if whole or index == 0 else denominator - numerator
                self._denominator *= denominator
            else:  # an Enclosure
                low, high = (chosen.lo, chosen.hi) if whole or index == 0 else (1 - chosen.hi, 1 - chosen.lo)
                self._enclose(low, high)
        if inexact:
            self._inexact = True
        cutoff = self._cutoff
        if cutoff is not None and position >= len(prefix) - 1 and self._lighter_than(cutoff):
            self._suspended = True
            if probabilities is None and position >= self._base:  # its later siblings are as light
                self._fan = count - index
            raise _Suspend()
        return index

    def _enclose(self, low: Fraction, high: Fraction) -> None:
        """Multiply the path's enclosed factor by ``[low, high]``, rounded outward to keep it small."""
        if self._bounds is None:
            self._bounds = (low, high)
        else:
            self._bounds = (_round_down(self._bounds[0] * low), _round_up(self._bounds[1] * high))

    def _lighter_than(self, cutoff: Fraction) -> bool:
        """Whether the path's mass so far is surely below ``cutoff``."""
        numerator = self._numerator
        if self._bounds is not None:
            high = self._bounds[1]
            return numerator * high.numerator * cutoff.denominator < cutoff.numerator * self._denominator * high.denominator
        return numerator * cutoff.denominator < cutoff.numerator * self._denominator

    def _too_deep(self, kind: str) -> EnumerationTooLarge:
        how = (
            "raise max_depth (from_sampler(sampler, max_depth=...)) if the sampler really makes that many draws"
            if self._tail > 0 else
            "if the sampler loops until a coin fails (while rng.random() < p: ...) or draws from an unbounded "
            "range, explore it by probability mass instead: from_sampler(sampler, tail=1e-9) leaves at most that "
            "much mass unexplored and the verdict accounts for it"
        )
        return EnumerationTooLarge(
            f"the sampler {self._name} made more than max_depth={self._max_depth:,} random draws on one execution "
            f"path on dataset {self._dataset!r} (the last one rng.{kind}); it looks like a loop that does not end. "
            f"{how[0].upper()}{how[1:]}."
        )

    def _mismatch(self, position: int, signature: Signature | None) -> NondeterministicMechanism:
        before = self._expected[position] if position < len(self._expected) else None
        return NondeterministicMechanism(
            f"the sampler {self._name} is not a function of its dataset and rng: replaying an execution path on "
            f"dataset {self._dataset!r}, its random draw #{position + 1} was {_signature_text(signature)}, where the "
            f"first run of that path made {_signature_text(before)}. It draws randomness from somewhere else too: "
            "a global generator (random.random(), np.random.rand(), a np.random.default_rng() made inside), the "
            "clock, or state kept between calls. Draw every random choice from the rng argument.",
            dataset=self._dataset,
        )

    def _uniform(self, kind: str, count: int) -> int:
        return 0 if count == 1 else self._choose(kind, count)

    def _weighted(self, kind: str, probabilities: Sequence[Fraction], inexact: bool) -> int:
        """An index of ``probabilities`` (exact, summing to 1), zero entries never taken."""
        if type(probabilities) is _Probabilities:
            positive, shares = probabilities.positive, probabilities.shares
        else:
            positive = [i for i, p in enumerate(probabilities) if p > 0]
            shares = tuple(probabilities[i] for i in positive)
        if len(positive) == 1:
            return positive[0]
        return positive[self._choose(kind, len(positive), shares, inexact)]

    def _without_replacement(self, kind: str, n: int, count: int, weights: Sequence[Fraction] | None, inexact: bool) -> list[int]:
        """``count`` distinct indices of ``range(n)`` in draw order: uniform, or successive sampling
        (each draw proportional to the weights of the indices not yet drawn), as numpy does."""
        remaining = list(range(n))
        drawn = []
        for j in range(count):
            if weights is None:
                index = self._uniform(kind, n - j)
            else:
                if inexact:
                    floats = [float(weights[i]) for i in remaining]
                    total = math.fsum(floats)
                    shares = [Fraction(f / total) for f in floats]
                else:
                    exact_total = sum((weights[i] for i in remaining), Fraction(0))
                    shares = [weights[i] / exact_total for i in remaining]
                index = self._weighted(kind, shares, inexact)
            drawn.append(remaining.pop(index))
        return drawn

    def _elementwise(self, call: str, size: Any, parameters: tuple, draw: Callable[..., Any], dtype: Any) -> Any:
        """``draw(*parameters)`` once (scalars, no size) or per element of the broadcast shape."""
        if size is None and all(np.ndim(p) == 0 for p in parameters):
            return draw(*parameters)
        shapes = [np.shape(p) for p in parameters]
        try:
            shape = _shape(call, size) if size is not None else np.broadcast_shapes(*shapes)
            columns = [np.broadcast_to(np.asarray(p, dtype=object), shape) for p in parameters]  # type: ignore[arg-type]
        except ValueError:
            raise InvalidArgument(f"{call}: parameters of shapes {shapes} do not broadcast to size={size!r}.") from None
        assert shape is not None
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(*shape):
            out[index] = draw(*(column[index] for column in columns))
        return out if dtype is object else out.astype(dtype)

    # -- numpy Generator ------------------------------------------------------------------------

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """A :class:`LazyUniform` on [0, 1) (numpy's ``random()``, Python's ``random()``), or an
        object array of independent ones with ``size``."""
        if out is not None:
            raise InvalidArgument("rng.random: out= is not supported; use the returned array of lazy uniforms.")
        if size is None:
            return LazyUniform(self)
        return self._elementwise("rng.random", size, (), lambda: LazyUniform(self), object)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint: bool = False) -> Any:
        """Uniform integers in ``[low, high)`` (``[low, high]`` with ``endpoint``; ``[0, low)`` without high)."""
        if size is None and type(low) is int and dtype is np.int64 and not endpoint and (high is None or type(high) is int):
            start, stop = (0, low) if high is None else (low, high)  # the common call, rng.integers(n): fast
            if stop - start == 1:
                return start
            if stop - start > 1:
                return start + self._choose("integers", stop - start)
        if high is None:
            low, high = 0, low

        def bounds(lo: Any, hi: Any) -> tuple[int, int]:
            start = _integer("rng.integers", "low", lo)
            stop = _integer("rng.integers", "high", hi) + (1 if endpoint else 0)
            if stop <= start:
                raise InvalidArgument(
                    f"rng.integers: the range is empty, got low={start}, high={_describe(hi)}, endpoint={endpoint}; "
                    "high must exceed low (or equal it with endpoint=True)."
                )
            return start, stop - start

        if np.ndim(low) == 0 and np.ndim(high) == 0:  # scalar bounds, checked once
            start, count = bounds(low, high)
            if size is None:
                value = start + self._uniform("integers", count)
                return bool(value) if np.dtype(dtype) == np.bool_ else value
            shape = _shape("rng.integers", size)
            assert shape is not None
            values = [start + self._uniform("integers", count) for _ in range(math.prod(shape))]
            return np.array(values, dtype=dtype).reshape(shape)

        def draw(lo: Any, hi: Any) -> int:
            start, count = bounds(lo, hi)
            return start + self._uniform("integers", count)

        return self._elementwise("rng.integers", size, (low, high), draw, dtype)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0, shuffle: bool = True) -> Any:
        """numpy's ``choice`` (``a`` an int or a sequence, weights ``p``, with or without replacement)
        and Python's ``choice(seq)``: without ``size`` the chosen element itself."""
        call = "rng.choice"
        if isinstance(a, (Integral, np.integer)) and not isinstance(a, bool):
            n, pool = _integer(call, "a", a, at_least=0), None
        else:
            pool = _sequence(call, "a", a)
            if isinstance(pool, np.ndarray):
                if pool.ndim == 0:
                    raise InvalidArgument(f"{call}: a must be an integer or at least 1-dimensional, got a 0-d array.")
                n = pool.shape[axis]
            else:
                if axis != 0:
                    raise InvalidArgument(f"{call}: axis={axis} applies to numpy arrays; a is a {type(a).__name__}.")
                n = len(pool)
        probabilities, inexact = (None, False) if p is None else _weights(call, "p", p, relative=False)
        if probabilities is not None and len(probabilities) != n:
            raise InvalidArgument(f"{call}: p must have one entry per element of a ({n}), got {len(probabilities)}.")
        shape = _shape(call, size)
        count = 1 if shape is None else math.prod(shape)
        if n == 0 and count:
            raise InvalidArgument(f"{call}: a is empty; there is nothing to choose from.")
        if replace:
            if probabilities is None:
                indices = [self._uniform("choice", n) for _ in range(count)]
            else:
                indices = [self._weighted("choice", probabilities, inexact) for _ in range(count)]
        else:
            if not shuffle:
                raise InvalidArgument(
                    f"{call}: shuffle=False leaves the order of the sample to numpy's implementation; drop it (the "
                    "default shuffle=True draws a uniformly ordered sample) and sort the result if order should not matter."
                )
            available = n if probabilities is None else sum(1 for q in probabilities if q > 0)
            if count > available:
                raise InvalidArgument(
                    f"{call}: cannot take {count} distinct elements without replacement from {available} "
                    f"{'with positive probability' if probabilities is not None else 'elements'}."
                )
            indices = self._without_replacement("choice", n, count, probabilities, inexact)
        if shape is None:
            if pool is None:
                return indices[0]
            return np.take(pool, indices[0], axis=axis) if isinstance(pool, np.ndarray) else pool[indices[0]]
        chosen = np.array(indices, dtype=np.int64).reshape(shape)
        return chosen if pool is None else np.take(np.asarray(pool), chosen, axis=axis)

    def _permutation(self, kind: str, n: int) -> list[int]:
        return self._without_replacement(kind, n, n, None, False)

    def permutation(self, x: Any, axis: int = 0) -> np.ndarray:
        """A uniformly random permutation: of ``range(x)`` for an int, else a permuted copy of ``x``
        along ``axis`` (each of the ``n!`` orders with probability exactly ``1/n!``)."""
        if isinstance(x, (Integral, np.integer)) and not isinstance(x, bool):
            return np.array(self._permutation("permutation", _integer("rng.permutation", "x", x, at_least=0)), dtype=np.int64)
        array = np.asarray(x)
        if array.ndim == 0:
            raise InvalidArgument("rng.permutation: x must be an integer or at least 1-dimensional.")
        return np.take(array, self._permutation("permutation", array.shape[axis]), axis=axis)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffle the mutable sequence ``x`` in place, uniformly (numpy's and Python's ``shuffle``)."""
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise InvalidArgument("rng.shuffle: x must be at least 1-dimensional.")
            x[...] = np.take(x, self._permutation("shuffle", x.shape[axis]), axis=axis)
            return
        if isinstance(x, (tuple, str, bytes, range)) or not hasattr(x, "__setitem__"):
            raise InvalidArgument(
                f"rng.shuffle: x must be a mutable sequence (a list or numpy array), got {type(x).__name__}; "
                "use rng.permutation(x) or rng.sample(x, len(x)) for a shuffled copy."
            )
        if axis != 0:
            raise InvalidArgument(f"rng.shuffle: axis={axis} applies to numpy arrays; x is a {type(x).__name__}.")
        items = [x[i] for i in self._permutation("shuffle", len(x))]
        for i, item in enumerate(items):
            x[i] = item

    def permuted(self, x: Any, axis: int | None = None, out: Any = None) -> np.ndarray:
        """numpy's ``permuted``: every 1-d slice along ``axis`` permuted independently (``axis=None``:
        the flattened array), into a copy or ``out``."""
        array = np.array(x, copy=True)
        if axis is None:
            flat = array.reshape(-1)
            array = flat[self._permutation("permuted", flat.size)].reshape(array.shape)
        else:
            moved = np.moveaxis(array, axis, -1)
            rows = moved.reshape(-1, moved.shape[-1]).copy()
            for row in range(rows.shape[0]):
                rows[row] = rows[row][self._permutation("permuted", rows.shape[1])]
            array = np.moveaxis(rows.reshape(moved.shape), -1, axis)
        if out is None:
            return array
        out[...] = array
        return out

    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        """Binomial(n, p): ``k`` with probability ``C(n, k) p^k (1 - p)^(n - k)``."""

        def draw(trials: Any, success: Any) -> int:
            count = _integer("rng.binomial", "n", trials, at_least=0)
            q, inexact = _number("rng.binomial", "p", success)
            if not 0 <= q <= 1:
                raise InvalidArgument(f"rng.binomial: p must be in [0, 1], got p={_describe(success)}.")
            masses = [math.comb(count, k) * q**k * (1 - q) ** (count - k) for k in range(count + 1)]
            return self._weighted("binomial", masses, inexact)

        return self._elementwise("rng.binomial", size, (n, p), draw, np.int64)

    # -- draws with infinitely many outcomes: chains of coins, explored by mass ---------------------

    def _chain(self, kind: str, start: int, hazard: Callable[[int], Any], inexact: bool) -> int:
        """``k = start, start + 1, ...``: stop at ``k`` with probability ``hazard(k)`` (given it did not
        stop before), each step a two-branch choice point (branch 0: stop). Infinitely many outcomes,
        so it needs the enumeration's ``tail``: without it the draw is refused."""
        k = start
        while True:
            share = hazard(k)
            if share == 1:
                return k
            if self._tail == 0 and self._probe is None:
                self._abort(EnumerationTooLarge(
                    f"rng.{kind} has infinitely many outcomes (on dataset {self._dataset!r}, in the sampler "
                    f"{self._name}); dpverify explores them in order of probability when told how much mass it may "
                    "leave unexplored: from_sampler(sampler, tail=1e-9). The verdict then accounts for that mass "
                    "(a pure claim stays UNDECIDED while any is left)."
                ))
            if self._choose(kind, 2, (share,), inexact) == 0:
                return k
            k += 1

    def geometric(self, p: Any, size: Any = None) -> Any:
        """The number of Bernoulli(``p``) trials up to the first success, ``k >= 1`` with probability
        ``(1 - p)^(k - 1) p`` (numpy's meaning; infinitely many outcomes: needs ``tail``)."""

        def draw(success: Any) -> int:
            q, inexact = _number("rng.geometric", "p", success)
            if not 0 < q <= 1:
                raise InvalidArgument(f"rng.geometric: p must be in (0, 1], got p={_describe(success)}.")
            return self._chain("geometric", 1, lambda k: q, inexact)

        return self._elementwise("rng.geometric", size, (p,), draw, np.int64)

    def negative_binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        """The number of failures before the ``n``-th success of Bernoulli(``p``) trials: ``k >= 0`` with
        probability ``C(k + n - 1, k) p^n (1 - p)^k`` (numpy's meaning for an integer ``n``;
        infinitely many outcomes: needs ``tail``)."""

        def draw(successes: Any, success: Any) -> int:
            call = "rng.negative_binomial"
            count = _integer(call, "n", successes, at_least=1) if not isinstance(successes, float) or not successes.is_integer() else int(successes)
            q, inexact = _number(call, "p", success)
            if not 0 < q <= 1:
                raise InvalidArgument(f"{call}: p must be in (0, 1], got p={_describe(success)}.")
            if count < 1:
                raise InvalidArgument(f"{call}: n must be an integer >= 1, got n={_describe(successes)}.")
            key = ("negative_binomial", count, q)
            return self._chain("negative_binomial", 0, lambda k: self._hazard(key, k, lambda j: math.comb(j + count - 1, j) * q**count * (1 - q) ** j), inexact)

        return self._elementwise("rng.negative_binomial", size, (n, p), draw, np.int64)

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        """Poisson(``lam``): ``k >= 0`` with probability ``e^-lam lam^k / k!`` (irrational: each step's
        probability is a certified enclosure; infinitely many outcomes: needs ``tail``)."""

        def draw(rate: Any) -> int:
            call = "rng.poisson"
            lam_exact, inexact = _number(call, "lam", rate)
            if lam_exact < 0:
                raise InvalidArgument(f"{call}: lam must be >= 0, got lam={_describe(rate)}.")
            if lam_exact == 0:
                return 0
            key = ("poisson", lam_exact)
            return self._chain("poisson", 0, lambda k: self._hazard(key, k, None, lam_exact), True)

        return self._elementwise("rng.poisson", size, (lam,), draw, np.int64)

    def _hazard(self, key: tuple, k: int, mass: Callable[[int], Fraction] | None, lam: Fraction | None = None) -> Any:
        """``P(X = k) / P(X >= k)`` of the distribution ``key`` names, cached on the rng (replays ask
        again): exact from ``mass`` (a Fraction per outcome), or an Enclosure for Poisson(``lam``)."""
        cache = self._hazards.setdefault(key, [])
        while len(cache) <= k:
            j = len(cache)
            if mass is not None:
                survival = _ONE - sum((mass(i) for i in range(j)), _ZERO)
                cache.append(mass(j) / survival)
            else:
                assert lam is not None
                cache.append(poisson_hazard(lam, j))
        return cache[k]

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None) -> Any:
        """The number of good items among ``nsample`` drawn without replacement from ``ngood`` good
        and ``nbad`` bad ones: ``C(ngood, k) C(nbad, nsample - k) / C(ngood + nbad, nsample)``."""

        def draw(good: Any, bad: Any, sample: Any) -> int:
            call = "rng.hypergeometric"
            good, bad = _integer(call, "ngood", good, at_least=0), _integer(call, "nbad", bad, at_least=0)
            sample = _integer(call, "nsample", sample, at_least=0)
            if sample > good + bad:
                raise InvalidArgument(f"{call}: nsample={sample} exceeds ngood + nbad = {good + bad}.")
            total = math.comb(good + bad, sample)
            masses = [Fraction(math.comb(good, k) * math.comb(bad, sample - k), total) for k in range(sample + 1)]
            return self._weighted("hypergeometric", masses, False)

        return self._elementwise("rng.hypergeometric", size, (ngood, nbad, nsample), draw, np.int64)

    def multinomial(self, n: Any, pvals: Any, size: Any = None) -> np.ndarray:
        """Counts of ``n`` draws over ``len(pvals)`` categories (``pvals`` must sum to 1), an int array
        of shape ``size + (len(pvals),)``."""
        call = "rng.multinomial"
        trials = _integer(call, "n", n, at_least=0)
        probabilities, inexact = _weights(call, "pvals", pvals, relative=False)
        support = [i for i, q in enumerate(probabilities) if q > 0]
        outcomes = []
        for counts in _compositions(trials, len(support)):
            vector = [0] * len(probabilities)
            mass = Fraction(math.factorial(trials))
            for i, c in zip(support, counts):
                vector[i] = c
                mass = mass * probabilities[i] ** c / math.factorial(c)
            outcomes.append((vector, mass))
        masses = [mass for _, mass in outcomes]
        shape = _shape(call, size) or ()
        draws = [outcomes[self._weighted("multinomial", masses, inexact)][0] for _ in range(math.prod(shape))]
        return np.array(draws, dtype=np.int64).reshape(*shape, len(probabilities))

    # -- random.Random ---------------------------------------------------------------------------

    def randrange(self, start: Any, stop: Any = None, step: Any = 1) -> int:
        """A uniform element of ``range(start, stop, step)`` (``range(start)`` without stop)."""
        call = "rng.randrange"
        if stop is None:
            start, stop = 0, _integer(call, "start", start)
        first, end, stride = _integer(call, "start", start), _integer(call, "stop", stop), _integer(call, "step", step)
        if stride == 0:
            raise InvalidArgument(f"{call}: step must not be 0, got step=0.")
        count = max(0, -((first - end) // stride))  # len(range(first, end, stride)), which overflows past sys.maxsize
        if not count:
            raise InvalidArgument(f"{call}: empty range {range(first, end, stride)!r}; there is nothing to choose from.")
        return first + stride * self._uniform("randrange", count)

    def choices(self, population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1) -> list:
        """``k`` draws with replacement, uniform or by relative ``weights`` (or ``cum_weights``)."""
        call = "rng.choices"
        pool = _sequence(call, "population", population)
        count = _integer(call, "k", k, at_least=0)
        if not len(pool):
            raise InvalidArgument(f"{call}: population is empty; there is nothing to choose from.")
        if weights is not None and cum_weights is not None:
            raise InvalidArgument(f"{call}: pass weights or cum_weights, not both.")
        if cum_weights is not None:
            cumulative = list(cum_weights)
            weights = [cumulative[0], *(b - a for a, b in zip(cumulative, cumulative[1:]))] if cumulative else []
        if weights is None:
            return [pool[self._uniform("choices", len(pool))] for _ in range(count)]
        probabilities, inexact = _weights(call, "weights", weights, relative=True)
        if len(probabilities) != len(pool):
            raise InvalidArgument(f"{call}: the number of weights ({len(probabilities)}) does not match the population ({len(pool)}).")
        return [pool[self._weighted("choices", probabilities, inexact)] for _ in range(count)]

    def sample(self, population: Any, k: Any, *, counts: Any = None) -> list:
        """``k`` elements without replacement (by position), in a uniformly random order."""
        call = "rng.sample"
        pool: Sequence = _sequence(call, "population", population)
        if counts is not None:
            repeats = [_integer(call, "counts[i]", c, at_least=0) for c in counts]
            if len(repeats) != len(pool):
                raise InvalidArgument(f"{call}: counts must have one entry per element of population ({len(pool)}).")
            pool = [item for item, r in zip(pool, repeats) for _ in range(r)]
        size = _integer(call, "k", k, at_least=0)
        if size > len(pool):
            raise InvalidArgument(f"{call}: k={size} is larger than the population ({len(pool)}).")
        return [pool[i] for i in self._without_replacement("sample", len(pool), size, None, False)]

    def getrandbits(self, k: Any) -> int:
        """A uniform integer with ``k`` random bits, in ``[0, 2**k)``."""
        return self._uniform("getrandbits", 2 ** _integer("rng.getrandbits", "k", k, at_least=0))

    def binomialvariate(self, n: Any = 1, p: Any = 0.5) -> int:
        """Python 3.12's ``binomialvariate``: the same as :meth:`binomial`."""
        return int(self.binomial(n, p))

    # -- everything else -------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(
            f"rng.{name} is not a draw dpverify's exact random source answers. It supports {SUPPORTED_CALLS}."
        )

    def __repr__(self) -> str:
        return f"<dpverify exact rng of {self._name} on dataset {self._dataset!r}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol: Any) -> Any:
        self._abort(MechanismError(f"copying the rng {COPY_REFUSAL}.", dataset=self._dataset))

    def __copy__(self) -> Any:
        self._abort(MechanismError(f"copy.copy(rng) {COPY_REFUSAL}.", dataset=self._dataset))

    def __deepcopy__(self, memo: Any) -> Any:
        self._abort(MechanismError(f"copy.deepcopy(rng) {COPY_REFUSAL}.", dataset=self._dataset))


def _signature_text(signature: Signature | None) -> str:
    if signature is None:
        return "no draw (the run ended before it)"
    kind, count, probabilities, _ = signature
    if kind == "random":
        first = probabilities[0]
        low, high = (first.lo, first.hi) if isinstance(first, Enclosure) else (first, first)  # an irrational split
        return f"a comparison of rng.random() splitting its interval {float(low):.6g} : {float(1 - high):.6g}"
    if type(probabilities) is Deferred:
        if count == 1:
            return f"rng.{kind}(scale={float(probabilities[0]):.6g})"
        return f"a traced {kind} of noisy values with {count} possible outcomes"
    how = "uniform" if probabilities is None else "weighted"
    return f"rng.{kind}(...) with {count} {how} outcomes"


def _refused_draw(name: str, reason: str) -> Callable[..., Any]:
    def refused(self: ExactRandom, *args: Any, **kwargs: Any) -> Any:
        self._abort(MechanismError(
            f"rng.{name}({_arguments(args, kwargs)}) {reason}, so the sampler {self._name} has no finite set of "
            f"execution paths to enumerate. {WAYS_ON}",
            dataset=self._dataset,
        ))

    refused.__name__ = name
    refused.__doc__ = f"Refused: {reason}."
    return refused


_UNBOUNDED = ("logseries", "zipf")
_STATEFUL = ("seed", "getstate", "setstate", "get_state", "set_state", "spawn", "jumped", "bit_generator")

refuse_untraced(ExactRandom)  # the continuous draws not traced: refused with their reasons
for _name in _UNBOUNDED:
    setattr(ExactRandom, _name, _refused_draw(_name, "draws from a distribution with infinitely many outcomes"))
for _name in _STATEFUL:
    setattr(ExactRandom, _name, _refused_draw(
        _name, "works on the state of a generator, and the exact rng has none (nothing is drawn: every combination "
        "of draws is enumerated)"
    ))
def _refused_call(name: str, explanation: str) -> Callable[..., Any]:
    def refused(self: ExactRandom, *args: Any, **kwargs: Any) -> Any:
        self._abort(MechanismError(f"rng.{name}({_arguments(args, kwargs)}) {explanation}", dataset=self._dataset))

    refused.__name__ = name
    refused.__doc__ = f"Refused: {explanation}"
    return refused


for _name in ("bytes", "randbytes"):
    setattr(ExactRandom, _name, _refused_call(
        _name, "returns raw random bytes, which the exact rng does not draw; draw integers instead (e.g. "
        "rng.integers(0, 256, size=n)) and convert them."
    ))
#: The public names of numpy's and Python's generators refused because the rng has no exact answer
#: for them (nothing is inherited from RandomState: see dpverify.finite.sampler._refusals).
REFUSED_BY_CONSTRUCTION = refuse_the_rest(ExactRandom, GENERATOR_APIS, lambda name: _refused_call(
    name, f"is not a draw the exact rng answers; it answers {SUPPORTED_CALLS}. Draw the same with those, or check "
    "the sampler statistically with dpverify.estimate."
))
