"""Mechanisms from sampling code: the exact output distribution of a sampler, by enumerating its paths.

Users write mechanisms as samplers — ``def mechanism(dataset, rng): ...`` drawing from a random
generator and returning one output. :func:`from_sampler` turns such a sampler into a
:class:`~dpverify.finite.mechanism.Mechanism` (dataset -> exact :class:`Distribution`) without
drawing anything. The ``rng`` it passes (:class:`~dpverify.finite._exact_random.ExactRandom`)
answers each draw as a *choice point* with finitely many branches and their exact probabilities;
a run of the sampler takes one branch at each choice point, so one run is one *execution path*,
of probability the product of its branch probabilities. The paths are enumerated depth first by
replaying choice prefixes: after a run, the deepest choice point with a branch not yet taken moves
to its next branch, everything before it is replayed as it was, everything after takes the first
branch. The outputs of all paths are merged into the distribution:

    P(output = o) = sum over paths ending in o of  prod_{choice points on the path} P(branch taken).

Lazy uniforms (``rng.random()``) are choice points too: a comparison ``u < t`` splits the interval
the uniform is known to lie in (see :class:`~dpverify.finite._exact_random.LazyUniform`).

Determinism. A path must give the same draws and the same output every time it is replayed; a
sampler that also reads a global generator, the clock or state kept between calls is not the
function of ``(dataset, rng)`` that the enumeration assumes. Every replayed prefix is checked draw
by draw against the run that recorded it; the first path and a sample of others are replayed in
full at the end and must give the same output; and the states of Python's and numpy's global
generators must be unchanged by the whole enumeration. A failure raises
:class:`~dpverify.errors.NondeterministicMechanism`.

Size. The path count is bounded by ``max_paths``. Past it (or once an estimate made after the first
:data:`_ESTIMATE_AFTER` paths exceeds it four times over) the enumeration stops with
:class:`~dpverify.errors.EnumerationTooLarge`, giving an estimate of the path count: Knuth's
estimator (the product of the branch counts along a path whose branches are drawn uniformly; its
mean is the number of paths, Knuth 1975), averaged over :data:`_PROBES` such paths.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpverify.errors import EnumerationTooLarge, MechanismError, NondeterministicMechanism
from dpverify.finite._exact_random import SUPPORTED_CALLS, ExactRandom, LazyUniform, Signature, _Abort
from dpverify.finite._global_random import (  # the readers live there now; the old names still work here
    _check_global_states,
    _ctypes_layout,  # noqa: F401
    _global_states,
    _numpy_state,  # noqa: F401
)
from dpverify.finite.distribution import Distribution
from dpverify.validation import check_callable, check_integer

__all__ = ["from_sampler", "SamplerMechanism", "Enumeration", "DEFAULT_MAX_PATHS", "SUPPORTED_CALLS"]

DEFAULT_MAX_PATHS = 100_000
#: Paths enumerated before the path count is first estimated (an early refusal of a huge sampler).
_ESTIMATE_AFTER = 1_000
#: Random paths averaged by the Knuth estimate of the path count.
_PROBES = 64
#: Paths replayed in full at the end besides the first (a uniform sample of the rest).
_REPLAYS = 4
_SEED = 20_240_618  # the probes' and the replay sample's own generator (never the global one)

_PLAIN = (int, float, str, bool, bytes, Fraction, type(None))


def from_sampler(sampler: Callable[[Any, Any], Any], *, max_paths: int = DEFAULT_MAX_PATHS) -> SamplerMechanism:
    """The mechanism whose exact output distribution is that of ``sampler(dataset, rng)``.

    ``sampler`` is ordinary sampling code: it takes a dataset and a random generator ``rng`` and
    returns one output. dpverify passes its own exact ``rng`` and runs the sampler once per
    execution path — every combination of outcomes of its draws — weighting each output by the
    exact probability of its path (module docstring). Nothing is sampled.

    The ``rng`` answers these calls, with numpy's and Python's meanings (scalars come back as
    Python ints or the chosen element, arrays as numpy arrays):

    * numpy ``Generator``: ``random(size=None)``; ``integers(low, high=None, size=None,
      dtype=int64, endpoint=False)``; ``choice(a, size=None, replace=True, p=None, axis=0)`` (``a``
      an int or a sequence/array; without ``size`` the chosen element itself); ``permutation(x,
      axis=0)``; ``shuffle(x, axis=0)``; ``permuted(x, axis=None, out=None)``; ``binomial(n, p,
      size=None)``; ``hypergeometric(ngood, nbad, nsample, size=None)``; ``multinomial(n, pvals,
      size=None)``. Parameters broadcast as in numpy.
    * ``random.Random``: ``random()``; ``randrange(start, stop=None, step=1)``; ``randint(a, b)``;
      ``choice(seq)``; ``choices(population, weights=None, *, cum_weights=None, k=1)``;
      ``sample(population, k, *, counts=None)``; ``shuffle(x)``; ``getrandbits(k)``;
      ``binomialvariate(n=1, p=0.5)``.

    ``random()`` returns a *lazy uniform* (``random(size=k)`` an object array of them): it compares
    with thresholds (``u < p``, ``<=``, ``>``, ``>=``; elementwise on arrays, giving bool arrays),
    each comparison branching with the exact probability of the part of its interval below ``p``,
    so coins (``rng.random() < p``) and inverse-CDF sampling of finite distributions are exact. No
    arithmetic on it (``u * 3``, ``math.log(u)``, ``float(u)``) and no monotone maps: compare the
    uniform itself with the transformed thresholds, or draw integers with ``rng.integers``.

    Refused with a :class:`~dpverify.errors.MechanismError` naming the call: draws with infinitely
    many outcomes (``normal``, ``laplace``, ``exponential``, ``uniform``, ``gamma``, ``gauss``,
    ``poisson``, ``geometric`` and the rest), seeding and state, arithmetic on lazy uniforms. Two
    ways on: the exact noise programs of ``mechanisms/`` (``dpverify.mechanisms.noise``) or statistical
    checking with ``dpverify.estimate_sampler``. Any other attribute of ``rng`` raises an
    AttributeError listing the supported calls (``hasattr`` works; a call to it is reported as a
    MechanismError). A refusal cannot be swallowed by the sampler's own ``except Exception``.

    Probabilities stay exact: ``p``/``weights`` and thresholds that are ints, Fractions, Decimals or
    sympy rationals give Fractions (exact ``p`` must sum to exactly 1; ``weights`` are relative).
    A float (in ``p``, ``weights``, a threshold) is its binary value (float ``p`` must sum to 1
    within numpy's tolerance; summing to 1.0 they are used as given, else divided by their sum, as
    numpy does); the distribution then holds floats, each the exact total of its paths rounded once.

    Outputs must be hashable; numpy scalars become Python scalars, numpy arrays and lists become
    tuples (nested for more dimensions), sets become frozensets, so equal outputs merge.

    Args:
        sampler: ``sampler(dataset, rng) -> output``; it must draw every random choice from ``rng``
            (no global generator, no clock). Its ``exchangeable`` attribute, if any, is carried
            over to the mechanism. A picklable sampler (a module-level function) gives a picklable
            mechanism, for ``verify(..., executor="processes")``.
        max_paths: refuse a dataset on which the sampler has more execution paths than this.

    Returns:
        A :class:`SamplerMechanism`: ``mechanism(dataset)`` is the exact :class:`Distribution`.

    Raises:
        InvalidArgument: ``sampler`` is not callable or ``max_paths`` is not an integer >= 1 (here).
        EnumerationTooLarge: more than ``max_paths`` paths on a dataset (on call; with an estimate).
        NondeterministicMechanism: a path replayed differently (on call).
        MechanismError: the sampler raised, made a refused draw or returned an unhashable output
            (on call; the dataset and the path's draws are named).
    """
    check_callable("sampler", sampler, fix="pass a function sampler(dataset, rng) -> output")
    check_integer("max_paths", max_paths, at_least=1, fix="max_paths bounds the execution paths enumerated per dataset, e.g. max_paths=100_000")
    return SamplerMechanism(sampler, max_paths)


@dataclass(frozen=True)
class Enumeration:
    """What enumerating a sampler on one dataset found: the distribution and the number of paths."""

    distribution: Distribution
    paths: int


@dataclass
class _Path:
    indices: list[int]
    signatures: list[Signature]
    output: Hashable
    mass: Fraction


class SamplerMechanism:
    """A sampler as a mechanism: ``mechanism(dataset)`` is its exact output distribution (see
    :func:`from_sampler`); :meth:`enumerate` also gives the path count."""

    def __init__(self, sampler: Callable[[Any, Any], Any], max_paths: int) -> None:
        self.sampler, self.max_paths = sampler, max_paths
        self.__name__ = getattr(sampler, "__name__", None) or type(sampler).__name__
        self.__doc__ = getattr(sampler, "__doc__", None)
        if hasattr(sampler, "exchangeable"):
            self.exchangeable = sampler.exchangeable

    def __repr__(self) -> str:
        return f"from_sampler({self.__name__}, max_paths={self.max_paths})"

    def __call__(self, dataset: Any) -> Distribution:
        return self.enumerate(dataset).distribution

    def enumerate(self, dataset: Any) -> Enumeration:
        """Run the sampler on every execution path for ``dataset``: the exact distribution and the
        number of paths. Raises as :func:`from_sampler` says."""
        before = _global_states()
        try:
            enumeration = self._enumerate(dataset)
        except NondeterministicMechanism as error:
            _check_global_states(before, self.__name__, dataset, cause=error)
            raise
        _check_global_states(before, self.__name__, dataset)
        return enumeration

    def _enumerate(self, dataset: Any) -> Enumeration:
        started = time.perf_counter()
        rng = ExactRandom(dataset, self.__name__, self.max_paths)
        masses: dict[Hashable, Fraction] = {}
        inexact = False
        replays: list[_Path] = []
        sampler = random.Random(_SEED)
        prefix: list[int] = []
        expected: list[Signature] = []
        paths = 0
        while True:
            output = self._run(rng, dataset, prefix, expected)
            paths += 1
            mass = Fraction(rng._numerator, rng._denominator)
            masses[output] = masses[output] + mass if output in masses else mass
            inexact = inexact or rng._inexact
            signatures, indices = rng._signatures, rng._indices
            if paths == 1 or len(replays) < _REPLAYS + 1:
                replays.append(_Path(list(indices), list(signatures), output, mass))
            else:
                slot = sampler.randrange(paths - 1)  # reservoir sample of the paths after the first
                if slot < _REPLAYS:
                    replays[1 + slot] = _Path(list(indices), list(signatures), output, mass)
            position = len(indices) - 1
            while position >= 0 and indices[position] == signatures[position][1] - 1:
                position -= 1
            if position < 0:
                break
            if paths >= self.max_paths:
                self._refuse(rng, dataset, paths, time.perf_counter() - started)
            if paths == _ESTIMATE_AFTER:
                elapsed = time.perf_counter() - started
                estimate = self._estimate(rng, dataset)
                if estimate > 4 * self.max_paths:
                    self._refuse(rng, dataset, paths, elapsed, estimate)
            prefix = indices[:position] + [indices[position] + 1]
            expected = signatures[: position + 1]
        for path in replays:
            self._replay(rng, dataset, path)
        if inexact:
            return Enumeration(Distribution({o: float(m) for o, m in masses.items()}), paths)
        return Enumeration(Distribution(masses), paths)

    def _run(self, rng: ExactRandom, dataset: Any, prefix: list[int], expected: list[Signature], probe: random.Random | None = None) -> Hashable:
        """One run of the sampler along ``prefix`` (then first branches, or ``probe``'s): its output."""
        rng._start(prefix, expected, probe)
        try:
            value = self.sampler(dataset, rng)
        except _Abort as abort:  # a refused draw (of this run, or of an rng or uniform kept from another)
            raise abort.args[0] from None
        except Exception as error:
            if rng._failure is not None:
                raise rng._failure from error
            raise MechanismError(
                f"the sampler {self.__name__} raised {type(error).__name__}: {error} -- on dataset {dataset!r}, "
                f"after the draws {_path_text(rng)}. No verdict was given; fix the sampler (or choose records and n it "
                "accepts).",
                dataset=dataset, original=error,
            ) from error
        finally:
            rng._finish()
        if rng._failure is not None:  # the sampler caught the error of a refused draw and went on
            raise rng._failure
        if len(rng._indices) < len(prefix):
            raise rng._mismatch(len(rng._indices), None)
        return _outcome(value, self.__name__, dataset)

    def _replay(self, rng: ExactRandom, dataset: Any, path: _Path) -> None:
        """Run ``path`` again in full: the same draws (no more), the same output, the same mass."""
        output = self._run(rng, dataset, path.indices, path.signatures)
        mass = Fraction(rng._numerator, rng._denominator)
        if len(rng._indices) > len(path.indices):
            raise rng._mismatch(len(path.indices), rng._signatures[len(path.indices)])
        if not (output == path.output or repr(output) == repr(path.output)) or mass != path.mass:
            raise NondeterministicMechanism(
                f"the sampler {self.__name__} is not a function of its dataset and rng: on dataset {dataset!r} the "
                f"execution path {_path_text(rng)} gave {path.output!r} and, replayed, {output!r}. It draws randomness "
                "from somewhere else too: a global generator (random.random(), np.random.rand(), a "
                "np.random.default_rng() made inside), the clock, or state kept between calls. Draw every random "
                "choice from the rng argument.",
                dataset=dataset, first=path.output, second=output,
            )

    def _estimate(self, rng: ExactRandom, dataset: Any) -> float:
        """Knuth's estimate of the number of paths: the mean over random paths of the product of the
        branch counts along each."""
        probe = random.Random(_SEED)
        total = 0
        for _ in range(_PROBES):
            self._run(rng, dataset, [], [], probe)
            total += math.prod(signature[1] for signature in rng._signatures)
        try:
            return total / _PROBES
        except OverflowError:  # beyond 1e308 paths
            return math.inf

    def _refuse(self, rng: ExactRandom, dataset: Any, paths: int, elapsed: float, estimate: float | None = None) -> None:
        """Raise EnumerationTooLarge after ``paths`` paths (enumerated in ``elapsed`` seconds)."""
        early = estimate is not None
        estimate = self._estimate(rng, dataset) if estimate is None else estimate
        per_path = elapsed / paths
        when = f"estimated after the first {paths:,} paths" if early else f"{paths:,} enumerated so far"
        count = max(estimate, paths + 1)
        size = "more than 1e308" if math.isinf(count) else f"about {count:.3g}"
        duration = "" if math.isinf(count) else f", which would take about {_seconds(count * per_path)} at the {per_path * 1e6:.3g} us per path measured here"
        raise EnumerationTooLarge(
            f"the sampler {self.__name__} has more than max_paths={self.max_paths:,} execution paths on dataset "
            f"{dataset!r} ({when}): {size} by Knuth's estimate over {_PROBES} random paths{duration}. "
            "Raise max_paths (from_sampler(sampler, max_paths=...)), "
            "make the sampler's draws smaller (fewer records, a smaller range, fewer draws), or check it "
            "statistically with dpverify.estimate_sampler."
        )


def _seconds(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def _path_text(rng: ExactRandom) -> str:
    if not rng._indices:
        return "[] (none)"
    steps = []
    for (kind, count, _, _), index in zip(rng._signatures, rng._indices):
        if kind == "random":
            steps.append(f"random() {'<' if index == 0 else '>='} threshold")
        else:
            steps.append(f"{kind} -> outcome {index + 1} of {count}")
    return "[" + ", ".join(steps) + "]"


def _outcome(value: Any, name: str, dataset: Any) -> Hashable:
    """``value`` as a hashable outcome: numpy scalars as Python scalars, arrays and lists as tuples,
    sets as frozensets (recursively); a lazy uniform or an unhashable value is an error."""
    if type(value) in _PLAIN:
        return value
    converted = _convert(value, name, dataset)
    try:
        hash(converted)
    except TypeError:
        raise MechanismError(
            f"the sampler {name} returned {converted!r} on dataset {dataset!r}, of the unhashable type "
            f"{type(converted).__name__}; return a number, a string, a tuple or a frozenset.",
            dataset=dataset,
        ) from None
    return converted


def _convert(value: Any, name: str, dataset: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return _convert(value.tolist(), name, dataset)
    if isinstance(value, LazyUniform):
        raise MechanismError(
            f"the sampler {name} returned a lazy uniform of rng.random() on dataset {dataset!r}; its value is never "
            "drawn. Return the outcome of comparisons instead (e.g. rng.random() < p), or draw integers with "
            "rng.integers.",
            dataset=dataset,
        )
    if isinstance(value, Distribution) or (hasattr(value, "items") and hasattr(value, "keys")):
        raise MechanismError(
            f"the sampler {name} returned a mapping on dataset {dataset!r}; a sampler returns one output, and "
            "from_sampler computes its distribution. (A function dataset -> distribution is already a mechanism: "
            "pass it to verify directly.)",
            dataset=dataset,
        )
    if isinstance(value, (list, tuple)):
        items = [_convert(item, name, dataset) for item in value]
        if isinstance(value, tuple) and all(a is b for a, b in zip(items, value)):
            return value
        if isinstance(value, tuple) and hasattr(value, "_make"):
            return value._make(items)
        return tuple(items)
    if isinstance(value, (set, frozenset)):
        return frozenset(_convert(item, name, dataset) for item in value)
    return value
