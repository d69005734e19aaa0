"""Mechanisms from sampling code: the exact output distribution of a sampler, by enumerating its paths.

Users write mechanisms as samplers — ``def mechanism(dataset, rng): ...`` drawing from a random
generator and returning one output. :func:`from_sampler` turns such a sampler into a
:class:`~dpverify.finite.mechanism.Mechanism` (dataset -> exact :class:`Distribution`) without
drawing anything. The ``rng`` it passes (:class:`~dpverify.finite.sampler._exact_random.ExactRandom`)
answers each draw as a *choice point* with finitely many branches and their exact probabilities;
a run of the sampler takes one branch at each choice point, so one run is one *execution path*,
of probability the product of its branch probabilities. The paths are enumerated depth first by
replaying choice prefixes: after a run, the deepest choice point with a branch not yet taken moves
to its next branch, everything before it is replayed as it was, everything after takes the first
branch. The outputs of all paths are merged into the distribution:

    P(output = o) = sum over paths ending in o of  prod_{choice points on the path} P(branch taken).

Lazy uniforms (``rng.random()``) are choice points too: a comparison ``u < t`` splits the interval
the uniform is known to lie in (see :class:`~dpverify.finite.sampler._lazy.LazyUniform`). A branch
probability that is irrational (a threshold ``exp(-1/2)``, a Poisson draw) is a certified
:class:`~dpverify.finite._numbers.Enclosure`; the path's mass is then carried as rational bounds
and the distribution holds floats (the middle of each output's bounds, whose relative width must be
below 2^-64, far inside the engine's float error model).

Unbounded randomness. A loop that runs until a coin fails (``while rng.random() < p: k += 1``) or a
draw with infinitely many outcomes (``geometric``, ``negative_binomial``, ``poisson``: chains of
coins, "stop at k?") has infinitely many paths. With ``tail > 0`` they are explored by mass, in
passes: a run whose mass drops below the pass's cutoff is set aside at that choice point (a uniform
draw's branch with its later siblings: they weigh the same); while the mass set aside exceeds
``tail``, it is explored again with a cutoff 16 times finer. The cutoffs are 1/16, 1/256, ...
whatever the tail, so every path heavier than the final cutoff is explored, heaviest first, at most
``tail`` is left, and the mass one pass left is a tail that stops a run after that very pass (what
a refusal names). That unexplored mass is exactly 1 minus the explored mass (checked), and the
distribution carries it as ``unexplored``: the verdict accounts for it (a violation only from
explored paths; an (eps, delta) claim holds only if the explored delta plus the unexplored mass
fits; a pure claim with mass left is undecided). With ``tail = 0`` (the default) every path is
enumerated; a draw with infinitely many outcomes is refused at once, and a path longer than
``max_depth`` draws (a loop that does not end) raises :class:`~dpverify.errors.EnumerationTooLarge`
naming the depth and the ``tail`` option.

Determinism. A path must give the same draws and the same output every time it is replayed; a
sampler that also reads a global generator, the clock or state kept between calls is not the
function of ``(dataset, rng)`` that the enumeration assumes. Every replayed prefix is checked draw
by draw against the run that recorded it; the first path and a sample of others are replayed in
full at the end and must give the same output; and the states of Python's and numpy's global
generators must be unchanged by the whole enumeration. A failure raises
:class:`~dpverify.errors.NondeterministicMechanism`.

Hidden randomness. A sampler that ignores ``rng`` and draws from a generator of its own (a
``RandomState`` made outside, a ``SystemRandom``) makes no draw dpverify sees: one path per dataset,
whose output is a sample. Two defences make a verdict from it improbable by design: a path with no
draws is replayed :data:`ZERO_DRAW_REPLAYS` (64) more times and every replay must agree -- a hidden
draw whose likeliest outcome has probability q passes with probability at most q^64 (2e-9 for
randomized response at eps = 1); and a sampler that has drawn nothing from ``rng`` on every
dataset so far, yet gives two datasets different outputs, is refused unless it is declared
``deterministic=True`` (a genuinely deterministic mechanism then gets its verdict, eps* = inf).

Size. The path count is bounded by ``max_paths``. Past it (or once an estimate made after the first
1,000 paths exceeds it four times over) the enumeration stops with
:class:`~dpverify.errors.EnumerationTooLarge`, giving an estimate of the path count: Knuth's
estimator (the product of the branch counts along a path whose branches are drawn uniformly; its
mean is the number of paths, Knuth 1975), averaged over 64 such paths. With a tail the estimate is
the passes' pace instead (:mod:`dpverify.finite.sampler._budget`), refused over four times
``max_paths``, naming the tail reached: rejection sampling whose rounds branch is refused in
seconds, not after ``max_paths`` runs.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any

from dpverify.errors import InvalidArgument, MechanismError, NondeterministicMechanism
from dpverify.finite._global_random import (  # the readers live there now; the old names still work here
    _check_global_states,
    _ctypes_layout,  # noqa: F401
    _global_states,
    _numpy_state,  # noqa: F401
)
from dpverify.finite.distribution import FLOAT_SUM_TOLERANCE, Distribution
from dpverify.finite.sampler._budget import (
    CUTOFF_STEP,
    ESTIMATE_AFTER,
    OVER,
    PROBES,
    Pass,
    out_of_reach,
    refuse_paths,
    refuse_tail,
)
from dpverify.finite.sampler._exact_random import (
    DEFAULT_MAX_DEPTH,
    SUPPORTED_CALLS,
    ExactRandom,
    Signature,
    _Abort,
    _Suspend,
)
from dpverify.finite.sampler._noise import TracedOutputs, TracedPath, without_redundant_cycles
from dpverify.finite.sampler._outputs import convert, outcome
from dpverify.finite.sampler._routing import module_names, route
from dpverify.types import RealNumber, Sampler
from dpverify.validation import check_bool, check_callable, check_integer, check_number, exact_number

__all__ = ["from_sampler", "SamplerMechanism", "Enumeration", "DEFAULT_MAX_PATHS", "SUPPORTED_CALLS"]

DEFAULT_MAX_PATHS = 100_000
#: Paths replayed in full at the end besides the first (a uniform sample of the rest).
_REPLAYS = 4
_SEED = 20_240_618  # the probes' and the replay sample's own generator (never the global one)
#: Replays of the one path of a sampler that drew nothing from ``rng`` on a dataset (module docstring).
ZERO_DRAW_REPLAYS = 64
#: The first pass's mass cutoff: the passes' cutoffs are 16^-k whatever the tail, so the tail one
#: pass reached is a tail a run would stop at after those very passes (module docstring).
_FIRST_CUTOFF = Fraction(1, CUTOFF_STEP)
#: Largest relative width of an enclosed output probability (far below the engine's float error).
_ENCLOSURE_WIDTH = Fraction(1, 2**64)
_ZERO = Fraction(0)


def from_sampler(
    sampler: Sampler,
    *,
    max_paths: int = DEFAULT_MAX_PATHS,
    tail: RealNumber = 0,
    max_depth: int = DEFAULT_MAX_DEPTH,
    deterministic: bool = False,
    patch: str | ModuleType | Iterable[str | ModuleType] | None = None,
    outputs: Iterable[Hashable] | None = None,
) -> SamplerMechanism:
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
    * numpy's legacy ``RandomState`` (``rng`` is an instance of it, so ``random_state=rng`` passes
      scikit-learn's ``check_random_state``): ``random_sample(size=None)``; ``rand(d0, d1, ...)``;
      ``randint(low, high=None, size=None, dtype=int)`` (numpy's: ``high`` excluded);
      ``random_integers(low, high=None, size=None)``; ``tomaxint(size=None)``.
    * ``random.Random``: ``random()``; ``randrange(start, stop=None, step=1)``; ``choice(seq)``;
      ``choices(population, weights=None, *, cum_weights=None, k=1)``; ``sample(population, k, *,
      counts=None)``; ``shuffle(x)``; ``getrandbits(k)``; ``binomialvariate(n=1, p=0.5)``. Python's
      inclusive ``randint(a, b)`` is on ``rng.python``, the rng as a ``random.SystemRandom``.

    * draws with infinitely many outcomes, with ``tail > 0``: ``geometric(p)``, ``poisson(lam)``,
      ``negative_binomial(n, p)`` (integer ``n``), explored by mass (module docstring).

    ``random()`` returns a *lazy uniform* (``random(size=k)`` an object array of them): it compares
    with thresholds (``u < p``, ``<=``, ``>``, ``>=``; elementwise on arrays, giving bool arrays),
    each comparison branching with the exact probability of the part of its interval below ``p``,
    so coins (``rng.random() < p``) and inverse-CDF sampling of finite distributions are exact.
    Arithmetic on it is followed exactly (:mod:`dpverify.finite.sampler._lazy`): affine maps, ``np.log``,
    ``np.exp``, ``np.sqrt``, powers and the other monotone maps, ``abs``/``np.sign`` split at 0,
    ``int``/``np.floor``/``np.round`` (one branch per integer), ``np.isclose``; each comparison maps
    back to a threshold on ``u``, a Fraction when rational, else a certified enclosure. The model:
    ``u`` is a real uniform on [0, 1), float constants are their exact binary values, and rounding
    *inside* the arithmetic is not modelled (a float-level leak needs ``dpverify.estimate``). What
    needs the value itself is refused: ``float(u)`` (so ``math.log(u)``: use ``np.log(u)``). A real
    number ``a*u + b`` returned as the output is released as a density (``u`` uniform on the interval
    its comparisons left); other maps of ``u`` returned are refused.

    Continuous noise is traced (:mod:`dpverify.finite.sampler._noise`): ``laplace(loc, scale, size)``,
    ``exponential(scale, size)``, ``standard_exponential`` and Python's ``expovariate`` return noisy
    values (affine forms in noise variables); comparisons branch and keep their constraint,
    ``argmax``/``max``/``sort`` of a noisy vector are one choice, and each path's probability is an
    exact integral, computed when :func:`dpverify.verify` decides the mechanism (a noisy number
    returned is a density; the verdict assumes real arithmetic). ``normal`` (``gauss``) is traced
    only to be released, as the Gaussian mechanism. Calling such a mechanism directly raises (its
    probabilities are integrals): pass it to ``verify``.

    Refused with a :class:`~dpverify.errors.MechanismError` naming the call: the other continuous
    draws (``uniform``, ``gamma``, ``gumbel``, ``standard_cauchy`` and the rest), ``logseries``,
    ``zipf``, seeding and state. Two ways on: the exact noise programs of ``mechanisms/``
    (``dpverify.mechanisms.noise``) or statistical checking with ``dpverify.estimate``. Any other
    attribute of ``rng`` raises an AttributeError listing
    the supported calls (``hasattr`` works; a call to it is reported as a MechanismError). A refusal
    cannot be swallowed by the sampler's own ``except Exception``.

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
        max_paths: refuse a dataset on which the sampler has more execution paths than this (runs
            set aside below the mass cutoff count too).
        tail: the probability mass a dataset's enumeration may leave unexplored (module docstring,
            "Unbounded randomness"), for loops until a coin fails and draws with infinitely many
            outcomes; a float is its binary value. 0 (default): every path, and such draws are refused.
        max_depth: refuse a path with more random draws than this (a loop that does not end).
        deterministic: declare that the sampler's output is a function of its dataset, so that one
            that draws nothing from ``rng`` and gives datasets different outputs is verified rather
            than refused as hiding its randomness (module docstring, "Hidden randomness").
        patch: modules (or their dotted names) whose module-level randomness goes to the exact rng
            while the sampler runs: ``random.random()``, ``np.random.rand()``, ``secrets.choice``,
            a ``SystemRandom()`` / ``np.random.RandomState(seed)`` / ``np.random.default_rng()``
            built inside, and such names imported into the modules (``from random import random``);
            restored afterwards. See :mod:`dpverify.finite.sampler._routing` for what is patched and what
            cannot be routed. None: nothing is routed, and global generator use is refused.
        outputs: with ``tail``, the sampler's every possible output, declared by you (a finite
            collection, read as outputs are): the unexplored mass then falls on these only, so
            each output's probability is known within ``[explored, explored + unexplored]`` and a
            pure claim can be proved (:mod:`dpverify.verdict._unexplored`, "Declared outputs"). Every explored output is
            checked against it (one outside is a MechanismError); the declaration itself cannot be
            checked on the paths not explored, so every verdict records it as an accepted assumption.

    Returns:
        A :class:`SamplerMechanism`: ``mechanism(dataset)`` is the exact :class:`Distribution`
        (with ``unexplored`` mass when ``tail`` left some).

    Raises:
        InvalidArgument: ``sampler`` is not callable, ``max_paths`` or ``max_depth`` is not an
            integer >= 1, ``tail`` is not in [0, 1), or an entry of ``patch`` is not a module or an
            importable dotted name (here).
        EnumerationTooLarge: more than ``max_paths`` paths on a dataset (on call; with an estimate),
            a path deeper than ``max_depth``, a draw with infinitely many outcomes without ``tail``.
        NondeterministicMechanism: a path replayed differently, or a sampler that draws nothing yet
            answers differently across datasets without ``deterministic`` (on call).
        MechanismError: the sampler raised, made a refused draw or returned an unhashable output
            (on call; the dataset and the path's draws are named).
    """
    check_callable("sampler", sampler, fix="pass a function sampler(dataset, rng) -> output")
    check_integer("max_paths", max_paths, at_least=1, fix="max_paths bounds the execution paths enumerated per dataset, e.g. max_paths=100_000")
    check_integer("max_depth", max_depth, at_least=1, fix="max_depth bounds the draws on one execution path, e.g. max_depth=10_000")
    check_number("tail", tail, at_least=0, fix="tail is the probability mass a dataset's enumeration may leave unexplored, e.g. tail=1e-9 (0: every path)")
    tail_value = _tail_fraction(tail)
    if not tail_value < 1:
        raise InvalidArgument(f"tail must be below 1, got tail={tail!r}; it is the probability mass left unexplored, e.g. tail=1e-9.")
    check_bool("deterministic", deterministic, fix="declare deterministic=True only for a sampler whose output is a function of its dataset")
    return SamplerMechanism(sampler, max_paths, tail=tail_value, max_depth=max_depth, deterministic=deterministic,
                            patch=patch, outputs=_declared_outputs(outputs))


def _declared_outputs(outputs: Any) -> frozenset | None:
    """``outputs=`` read as the sampler's outputs are (numpy scalars as Python ones, lists and arrays
    as tuples): a non-empty finite set, or None when not given."""
    if outputs is None:
        return None
    declared = frozenset() if isinstance(outputs, (str, bytes)) or not isinstance(outputs, Iterable) else \
        frozenset(convert(output, "outputs=", None) for output in outputs)
    if not declared:
        raise InvalidArgument(f"outputs must be a non-empty collection of every output the sampler can return, e.g. "
                              f"outputs=[0, 1, 2]; got outputs={outputs!r}.")
    return declared


def _tail_fraction(tail: Any) -> Fraction:
    """``tail`` (checked a number >= 0) as a Fraction: a float its binary value, an exact rational as
    it is, an irrational (``sympy.exp(-20)``) the float below it (a smaller tail only explores more)."""
    if isinstance(tail, float):
        return Fraction(tail)
    value = exact_number("tail", tail)
    try:
        return Fraction(value)
    except TypeError:
        return Fraction(math.nextafter(float(value), 0.0))


@dataclass(frozen=True)
class Enumeration:
    """What enumerating a sampler on one dataset found: the distribution (with the mass left
    unexplored, if a ``tail`` allowed any), the number of runs of the sampler (paths, including
    runs suspended below the mass cutoff) and the largest number of draws on one path."""

    distribution: Distribution | None  # None when paths drew continuous noise: see ``traced``
    paths: int
    depth: int = 0
    traced: TracedOutputs | None = None
    gumbel: bool = False  # a Gumbel argmax was chosen (an exponential mechanism of real noise)


@dataclass
class _Path:
    indices: list[int]
    signatures: list[Signature]
    output: Hashable
    mass: tuple  # (numerator, denominator, enclosed factor or None) of the path's probability


@dataclass
class _Node:
    """A subtree of paths left for a finer pass: the choices that lead to it and its mass. A ``fan``
    node holds its last choice's later siblings too (a uniform draw's: as light as it)."""

    indices: list[int]
    signatures: list[Signature]
    mass: tuple  # as _Path.mass (with a fan, of all its branches)
    fan: bool = False


def _fraction_sum(numerators: dict[int, int]) -> Fraction:
    """The sum of ``n / d`` over ``{d: n}`` (one Fraction per distinct denominator)."""
    if len(numerators) == 1:
        ((denominator, numerator),) = numerators.items()
        return Fraction(numerator, denominator)
    return sum((Fraction(n, d) for d, n in numerators.items()), _ZERO)


def _node_mass_bound(nodes: list[_Node]) -> Fraction:
    """An upper bound on the total mass of ``nodes`` (exact when no mass is enclosed)."""
    exact: dict[int, int] = {}
    enclosed = _ZERO
    for node in nodes:
        numerator, denominator, bounds = node.mass
        if bounds is None:
            exact[denominator] = exact.get(denominator, 0) + numerator
        else:
            enclosed += Fraction(numerator, denominator) * bounds[1]
    return _fraction_sum(exact) + enclosed if exact else enclosed


class _Search:
    """Depth-first enumeration of a sampler's paths, subtree by subtree, merging the masses of equal
    outputs: exact ones as integer numerators per denominator (one Fraction sum per output at the
    end, not one per path), enclosed ones as rational bounds."""

    def __init__(self, mechanism: SamplerMechanism, rng: ExactRandom, dataset: Any, started: float) -> None:
        self.mechanism, self.rng, self.dataset, self.started = mechanism, rng, dataset, started
        self.paths = 0
        self.depth = 0
        self.exact: dict[Hashable, dict[int, int]] = {}
        self.enclosed: dict[Hashable, list[Fraction]] = {}
        self.inexact = False
        self.replays: list[_Path] = []
        self.passes: list[Pass] = []  # the passes by mass finished so far (with a tail)
        self.traced: list[TracedPath] = []
        self.floats = False
        self.gumbel = False
        self._complete = 0
        self._sampler = random.Random(_SEED)

    def explore(self, subtree: _Node, cutoff: Fraction | None, suspended: list[_Node]) -> None:
        """Every path through ``subtree`` (its choices fixed, the later ones enumerated); those whose
        mass falls below ``cutoff`` are appended to ``suspended`` instead of being finished."""
        mechanism, rng, dataset = self.mechanism, self.rng, self.dataset
        base = len(subtree.indices) - subtree.fan  # a fan's last choice point is enumerated here
        prefix, expected = subtree.indices, subtree.signatures
        while True:
            output = mechanism._run(rng, dataset, prefix, expected, cutoff=cutoff, base=base)
            self.paths += 1
            indices, signatures = rng._indices, rng._signatures
            if rng._inexact:
                self.inexact = True
            if len(indices) > self.depth:
                self.depth = len(indices)
            position = len(indices) - 1
            if rng._suspended:
                fan = rng._fan
                suspended.append(_Node(list(indices), list(signatures), (rng._numerator * fan, rng._denominator, rng._bounds),
                                       fan > 1))
                if fan > 1:  # the later siblings went with it
                    position -= 1
            else:
                self._add(output, indices, signatures)
            while position >= base and indices[position] == signatures[position][1] - 1:
                position -= 1
            if position < base:
                return
            if self.paths >= mechanism.max_paths:
                elapsed = time.perf_counter() - self.started
                if cutoff is not None:
                    refuse_tail(mechanism.__name__, mechanism.max_paths, mechanism.tail, dataset, elapsed, self.passes,
                                runs=self.paths)
                mechanism._refuse(rng, dataset, self.paths, elapsed)
            if self.paths == ESTIMATE_AFTER and cutoff is None:
                elapsed = time.perf_counter() - self.started
                estimate = mechanism._estimate(rng, dataset)
                if estimate > 4 * mechanism.max_paths:
                    mechanism._refuse(rng, dataset, self.paths, elapsed, estimate)
            prefix = indices[:position] + [indices[position] + 1]
            expected = signatures[: position + 1]

    def _add(self, output: Hashable, indices: list[int], signatures: list[Signature]) -> None:
        rng = self.rng
        numerator, denominator, bounds = rng._numerator, rng._denominator, rng._bounds
        noise = rng._noise
        if noise.floats:
            self.floats = True
        if noise.gumbel:
            self.gumbel = True
        if noise.variables:
            if bounds is not None:
                raise MechanismError(
                    f"the sampler {self.mechanism.__name__} drew continuous noise on a path whose other branch "
                    f"probabilities are irrational (an enclosed threshold) on dataset {self.dataset!r}; the two are not "
                    "integrated together. Make the thresholds of rng.random() comparisons rational, or check the "
                    "sampler statistically with dpverify.estimate.",
                    dataset=self.dataset,
                )
            constraints = without_redundant_cycles(noise.constraints, noise.variables)
            self.traced.append(TracedPath(output, Fraction(numerator, denominator), tuple(noise.variables), constraints))
        elif bounds is None:
            by_denominator = self.exact.get(output)
            if by_denominator is None:
                self.exact[output] = {denominator: numerator}
            else:
                by_denominator[denominator] = by_denominator.get(denominator, 0) + numerator
        else:
            mass = Fraction(numerator, denominator)
            entry = self.enclosed.get(output)
            if entry is None:
                self.enclosed[output] = [mass * bounds[0], mass * bounds[1]]
            else:
                entry[0] += mass * bounds[0]
                entry[1] += mass * bounds[1]
        self._complete += 1
        if len(self.replays) < _REPLAYS + 1:
            self.replays.append(_Path(list(indices), list(signatures), output, (numerator, denominator, bounds)))
        else:
            slot = self._sampler.randrange(self._complete - 1)  # reservoir sample of the paths after the first
            if slot < _REPLAYS:
                self.replays[1 + slot] = _Path(list(indices), list(signatures), output, (numerator, denominator, bounds))

    def result(self, unexplored: Fraction) -> Enumeration:
        """The enumeration: exact Fractions, or floats when a float parameter or an enclosed
        probability took part (each the exact total, or the middle of its bounds, rounded once).
        Checks that the explored and unexplored masses add up to 1."""
        totals = {o: _fraction_sum(by) for o, by in self.exact.items()}
        name, dataset = self.mechanism.__name__, self.dataset
        if self.traced:
            if self.enclosed:
                raise MechanismError(
                    f"the sampler {name} drew continuous noise on some paths and made comparisons with irrational "
                    f"thresholds on others on dataset {dataset!r}; the two are not combined. Make the thresholds "
                    "rational, or check the sampler statistically with dpverify.estimate.",
                    dataset=dataset,
                )
            outputs = TracedOutputs(totals, tuple(self.traced), self.floats or self.inexact)
            return Enumeration(None, self.paths, self.depth, traced=outputs)
        if self.enclosed:
            bounds = {o: (totals.get(o, _ZERO) + lo, totals.get(o, _ZERO) + hi) for o, (lo, hi) in self.enclosed.items()}
            bounds.update({o: (t, t) for o, t in totals.items() if o not in bounds})
            low = sum((lo for lo, _ in bounds.values()), _ZERO)
            high = sum((hi for _, hi in bounds.values()), _ZERO)
            if not (low <= 1 and 1 <= high + unexplored):
                raise AssertionError(
                    f"dpverify internal error: the enclosed path masses of {name} on {dataset!r} add up to "
                    f"[{float(low)}, {float(high)}] with {float(unexplored)} unexplored, which cannot make 1."
                )
            values: dict[Hashable, Any] = {}
            for outcome, (lo, hi) in bounds.items():
                if hi - lo > lo * _ENCLOSURE_WIDTH:
                    raise MechanismError(
                        f"the probability of the output {outcome!r} of the sampler {name} on dataset {dataset!r} is "
                        f"only known within [{float(lo)!r}, {float(hi)!r}] (irrational thresholds too close to each "
                        "other to separate); no verdict was given.",
                        dataset=dataset,
                    )
                values[outcome] = float((lo + hi) / 2)
            return self._distribution(values, unexplored, inexact=True)
        by_denominator: dict[int, int] = {}
        for by in self.exact.values():
            for d, n in by.items():
                by_denominator[d] = by_denominator.get(d, 0) + n
        explored = _fraction_sum(by_denominator)
        # float parameters (p = [0.1, 0.2, 0.7]) need only sum to 1 in float, as numpy requires
        if explored + unexplored != 1 if not self.inexact else abs(explored + unexplored - 1) > FLOAT_SUM_TOLERANCE:
            raise AssertionError(
                f"dpverify internal error: the path masses of {name} on {dataset!r} add up to {explored} with "
                f"{unexplored} unexplored, not to 1."
            )
        if self.inexact:
            return self._distribution({o: float(m) for o, m in totals.items()}, unexplored, inexact=True)
        return self._distribution(dict(totals), unexplored, inexact=False)

    def _distribution(self, values: dict, unexplored: Fraction, *, inexact: bool) -> Enumeration:
        if unexplored == 0:
            return Enumeration(Distribution(values), self.paths, self.depth, gumbel=self.gumbel)
        bound: Any = unexplored
        if inexact:
            bound = float(unexplored)
            if bound < unexplored:
                bound = math.nextafter(bound, math.inf)
        return Enumeration(Distribution(values, unexplored=bound), self.paths, self.depth, gumbel=self.gumbel)


class SamplerMechanism:
    """A sampler as a mechanism: ``mechanism(dataset)`` is its exact output distribution (see
    :func:`from_sampler`); :meth:`enumerate` also gives the path count."""

    def __init__(
        self, sampler: Callable[[Any, Any], Any], max_paths: int, *, tail: Fraction = _ZERO,
        max_depth: int = DEFAULT_MAX_DEPTH, deterministic: bool = False, patch: Any = None,
        outputs: frozenset | None = None,
    ) -> None:
        self.sampler, self.max_paths = sampler, max_paths
        self.declared_outputs = outputs  # declared by the user: where unexplored mass may fall
        self.tail, self.max_depth, self.deterministic = tail, max_depth, deterministic
        self.patch = module_names(patch)  # names, resolved on use: the mechanism stays picklable
        self._draws_seen = False  # some dataset's enumeration drew from rng
        self._silent: tuple[Any, Hashable] | None = None  # (dataset, output) of the first that drew nothing
        self.__name__ = getattr(sampler, "__name__", None) or type(sampler).__name__
        self.__doc__ = getattr(sampler, "__doc__", None)
        if hasattr(sampler, "exchangeable"):
            self.exchangeable = sampler.exchangeable

    def keep_probe(self, dataset: Any, enumeration: Enumeration) -> None:
        """Keep ``enumeration`` of ``dataset`` (the front door's probe) for the next call on it, once."""
        self.__dict__["_probed"] = (dataset, enumeration)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_traced_view", None)  # verify's integrated view of it (dpverify.checking.front): kept here only
        state.pop("_probed", None)
        return state

    def __repr__(self) -> str:
        options = [f"max_paths={self.max_paths}", *([f"tail={float(self.tail):g}"] if self.tail else []),
                   *(["deterministic=True"] if self.deterministic else []),
                   *([f"outputs={sorted(self.declared_outputs, key=repr)!r}"] if self.declared_outputs is not None else [])]
        return f"from_sampler({self.__name__}, {', '.join(options)})"

    def __call__(self, dataset: Any) -> Distribution:
        enumeration = self.enumerate(dataset)
        if enumeration.distribution is None:
            raise MechanismError(
                f"the sampler {self.__name__} draws continuous noise (laplace, exponential, normal) or releases a "
                f"real number on dataset {dataset!r}: its output probabilities are integrals over the noise, which "
                "dpverify.verify computes (pass the mechanism to verify), as does "
                "dpverify.densities.traced.TracedMechanism(mechanism)(dataset) for finitely many outputs.",
                dataset=dataset,
            )
        return enumeration.distribution

    def enumerate(self, dataset: Any) -> Enumeration:
        """Run the sampler on every execution path for ``dataset``: the exact distribution and the number of
        paths (the front door's probe of it, ``keep_probe``, once). Raises as :func:`from_sampler` says."""
        probed = self.__dict__.pop("_probed", None)
        if probed is not None and probed[0] == dataset:
            return probed[1]
        before = _global_states()
        try:
            with route(self.patch):
                enumeration = self._enumerate(dataset)
        except NondeterministicMechanism as error:
            _check_global_states(before, self.__name__, dataset, cause=error)
            raise
        _check_global_states(before, self.__name__, dataset)
        self._note_draws(dataset, enumeration)
        if self.declared_outputs is not None and enumeration.distribution is not None:
            outside = [o for o in enumeration.distribution if o not in self.declared_outputs]
            if outside:
                raise MechanismError(
                    f"the sampler {self.__name__} returned {outside[0]!r} on dataset {dataset!r}, which is not among its "
                    f"declared outputs={sorted(self.declared_outputs, key=repr)!r}; declare every output it can return.",
                    dataset=dataset,
                )
            enumeration.distribution.with_declared_outputs(self.declared_outputs)
        return enumeration

    def _note_draws(self, dataset: Any, enumeration: Enumeration) -> None:
        """Refuse a sampler that has drawn nothing from ``rng`` on every dataset so far yet gave two
        of them different outputs, unless it is declared deterministic: its randomness, if any, is
        one dpverify cannot see, and its point masses would give a confident ε* = ∞ (module
        docstring, "Determinism")."""
        if enumeration.depth > 0 or enumeration.traced is not None:  # a released uniform is a draw too
            self._draws_seen = True
            return
        if self.deterministic or self._draws_seen:
            return
        assert enumeration.distribution is not None  # a run that drew nothing traced nothing
        (output,) = enumeration.distribution.support
        if self._silent is None:
            self._silent = (dataset, output)
            return
        first_dataset, first_output = self._silent
        if output != first_output:
            raise NondeterministicMechanism(
                f"the sampler {self.__name__} drew nothing from its rng on dataset {first_dataset!r} nor on "
                f"{dataset!r}, yet returned {first_output!r} on one and {output!r} on the other. Either it is "
                "deterministic -- then declare it: from_sampler(sampler, deterministic=True) -- or it draws from a "
                "generator dpverify cannot see (one it keeps or makes: a RandomState, a SystemRandom, a "
                "default_rng(); a module-level one: route it with from_sampler(sampler, patch=[module]); or pass "
                "the rng on: random_state=rng), and no verdict can be given.",
                dataset=dataset, first=first_output, second=output,
            )

    def _enumerate(self, dataset: Any) -> Enumeration:
        started = time.perf_counter()
        rng = ExactRandom(dataset, self.__name__, self.max_paths, max_depth=self.max_depth, tail=self.tail)
        search = _Search(self, rng, dataset, started)
        cutoff = _FIRST_CUTOFF if self.tail > 0 else None  # paths lighter than this are left for a finer pass
        subtrees = [_Node([], [], (1, 1, None))]
        while True:
            suspended: list[_Node] = []
            for subtree in subtrees:
                search.explore(subtree, cutoff, suspended)
            if not suspended:
                unexplored: Fraction = _ZERO
                break
            unexplored = _node_mass_bound(suspended)
            if unexplored <= self.tail:
                break
            assert cutoff is not None, "a path was suspended without a cutoff"
            search.passes.append(Pass(search.paths, unexplored, time.perf_counter() - started))
            self._project(search, dataset)
            cutoff /= CUTOFF_STEP
            subtrees = suspended
        for path in search.replays:
            self._replay(rng, dataset, path)
        if search.paths == 1 and search.replays and not search.replays[0].indices:
            self._replay_zero_draws(rng, dataset, search.replays[0])
        return search.result(unexplored)

    def _replay_zero_draws(self, rng: ExactRandom, dataset: Any, path: _Path) -> None:
        """A sampler that drew nothing from ``rng`` on ``dataset`` has one path; if it draws from a
        generator dpverify cannot see, its replays differ (module docstring, "Determinism")."""
        for _ in range(ZERO_DRAW_REPLAYS):
            self._replay(rng, dataset, path)

    def _run(self, rng: ExactRandom, dataset: Any, prefix: list[int], expected: list[Signature], probe: random.Random | None = None,
             cutoff: Fraction | None = None, base: int = 0) -> Hashable:
        """One run of the sampler along ``prefix`` (then first branches, or ``probe``'s): its output
        (None when the run was suspended below ``cutoff``: ``rng._suspended``; a uniform draw's later
        siblings with it from choice point ``base`` on)."""
        rng._start(prefix, expected, probe, cutoff, base)
        try:
            value = self.sampler(dataset, rng)
        except _Suspend:
            return None
        except _Abort as abort:  # a refused draw (of this run, or of an rng or uniform kept from another)
            raise abort.args[0] from None
        except Exception as error:
            if rng._failure is not None:
                raise rng._failure from error
            raise MechanismError(f"the sampler {self.__name__} raised {type(error).__name__}: {error} -- on dataset "
                                 f"{dataset!r}, after the draws {_path_text(rng)}. No verdict was given; fix the sampler "
                                 "(or choose records and n it accepts).", dataset=dataset, original=error) from error
        finally:
            rng._finish()
        if rng._failure is not None:  # the sampler caught the error of a refused draw and went on
            raise rng._failure
        if rng._suspended:  # the sampler caught the suspension and went on: the path is still left for later
            return None
        if len(rng._indices) < len(prefix):
            raise rng._mismatch(len(rng._indices), None)
        return outcome(value, self.__name__, dataset)

    def _replay(self, rng: ExactRandom, dataset: Any, path: _Path) -> None:
        """Run ``path`` again in full: the same draws (no more), the same output, the same mass."""
        output = self._run(rng, dataset, path.indices, path.signatures)
        mass = (rng._numerator, rng._denominator, rng._bounds)
        if len(rng._indices) > len(path.indices):
            raise rng._mismatch(len(path.indices), rng._signatures[len(path.indices)])
        if not (output == path.output or repr(output) == repr(path.output)) or mass != path.mass:
            raise NondeterministicMechanism(
                f"the sampler {self.__name__} is not a function of its dataset and rng: on dataset {dataset!r} the "
                f"execution path {_path_text(rng)} gave {path.output!r} and, replayed, {output!r}. It draws randomness "
                "from somewhere else too: a global generator (random.random(), np.random.rand(), a "
                "np.random.default_rng() made inside), its own generator (a RandomState or SystemRandom it keeps or "
                "makes), the clock, or state kept between calls. Draw every random choice from the rng argument, or "
                "route module-level randomness to it with from_sampler(sampler, patch=[module, ...]).",
                dataset=dataset, first=path.output, second=output,
            )

    def _estimate(self, rng: ExactRandom, dataset: Any) -> float:
        """Knuth's estimate of the number of paths: the mean over random paths of the product of the
        branch counts along each."""
        probe = random.Random(_SEED)
        total = 0
        for _ in range(PROBES):
            self._run(rng, dataset, [], [], probe)
            total += math.prod(signature[1] for signature in rng._signatures)
        try:
            return total / PROBES
        except OverflowError:  # beyond 1e308 paths
            return math.inf

    def _project(self, search: _Search, dataset: Any) -> None:
        """Refuse, after a pass by mass, a tail the passes' pace puts beyond ``max_paths`` in a tree
        Knuth's estimate finds larger than that too (a finite tree whose paths open pass after pass
        has the pace of an endless one until its lightest paths are reached: its estimate is its size)."""
        if search.paths >= ESTIMATE_AFTER:
            projected = out_of_reach(search.passes, self.tail, self.max_paths)
            if projected is not None:
                estimate = self._estimate(search.rng, dataset)
                if estimate > OVER * self.max_paths:
                    refuse_tail(self.__name__, self.max_paths, self.tail, dataset, search.passes[-1].seconds,
                                search.passes, projected=projected, estimate=estimate)

    def _refuse(self, rng: ExactRandom, dataset: Any, paths: int, elapsed: float, estimate: float | None = None) -> None:
        """Raise EnumerationTooLarge after ``paths`` paths (``elapsed`` seconds), with Knuth's estimate."""
        early = estimate is not None
        refuse_paths(self.__name__, self.max_paths, dataset, paths, elapsed,
                     self._estimate(rng, dataset) if estimate is None else estimate, early=early)


def _path_text(rng: ExactRandom) -> str:
    if not rng._indices:
        return "[] (none)"
    steps = []
    for (kind, count, _, _), index in zip(rng._signatures, rng._indices):
        if kind == "random":
            steps.append(f"random() {'<' if index == 0 else '>='} threshold")
        elif count == 1:
            steps.append(f"{kind} noise")
        elif kind == "compare":
            steps.append(f"noisy comparison {'true' if index == 0 else 'false'}")
        else:
            steps.append(f"{kind} -> outcome {index + 1} of {count}")
    return "[" + ", ".join(steps) + "]"
