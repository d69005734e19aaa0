"""The exact rng's continuous draws: ``laplace`` and ``exponential`` as traced noise variables.

:class:`NoiseDraws` is a mixin of :class:`~dpverify.finite.sampler._exact_random.ExactRandom`: the draws
(numpy's ``Generator`` and ``RandomState`` share their signatures; Python's ``expovariate`` is on
the ``random.Random`` view) and the choice points of traced values (:mod:`dpverify.finite.sampler._noise`):
a comparison, a k-way extreme, an order. Each choice point's branches carry their constraints; the
mass of such a branch is deferred to the end of the path (``Deferred`` in the signature: factor 1
now, the integral later).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import MechanismError
from dpverify.finite._numbers import Enclosure, _arguments, _number, enclosure_of
from dpverify.finite.sampler._linear import GUMBEL_BASE, Linear, NoiseVariable
from dpverify.finite.sampler._noise import STATISTICAL_WAY, Deferred, NoisePath, Noisy, NoisyArray, as_form, feasible

__all__ = ["NoiseDraws"]

_FEASIBLE_CACHE_SIZE = 100_000


_READ: dict[tuple[type, Any], tuple[Fraction, bool]] = {}
_SCALARS = frozenset({int, float, Fraction})


@functools.lru_cache(maxsize=4096)
def _softmax(exponents: tuple[Fraction, ...]) -> tuple[Enclosure, ...]:
    """``exp(x_i) / sum_j exp(x_j)`` for each ``i``, certified (mpmath intervals at 256 bits); memoised,
    as every replay of a path takes the same argmax again."""
    import mpmath

    iv = mpmath.iv
    old = iv.prec
    try:
        iv.prec = 256
        top = max(exponents)
        shifted = [x - top for x in exponents]
        weights = [iv.exp(iv.mpf(x.numerator) / x.denominator) for x in shifted]  # exact rationals, enclosed
        total = sum(weights[1:], weights[0])
        return tuple(enclosure_of(weight / total) for weight in weights)
    finally:
        iv.prec = old


def _is_infinite(item: Any) -> bool:
    return isinstance(item, (float, np.floating)) and math.isinf(item)


def _read(call: str, name: str, value: Any) -> tuple[Fraction, bool]:
    """:func:`~dpverify.finite._numbers._number`, memoised for plain ints and floats (a run draws with
    the same parameters on every replay)."""
    kind = type(value)
    if kind is not int and kind is not float:
        return _number(call, name, value)
    found = _READ.get((kind, value))
    if found is None:
        found = _number(call, name, value)
        if len(_READ) > 4096:
            _READ.clear()
        _READ[(kind, value)] = found
    return found


class NoiseDraws:
    """Continuous draws and the choice points of traced noise, for the exact rng (module docstring)."""

    _noise: NoisePath
    _abort: Callable[..., NoReturn]
    _choose: Callable[..., int]
    _elementwise: Callable[..., Any]
    python: Any
    _tail: Fraction
    _name: str
    _dataset: Any
    _feasible_cache: dict
    _asked: list[int]  # [the run's branch count when last asked, questions asked since] (see _possible)

    # -- draws -------------------------------------------------------------------------------------

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """A traced Laplace value ``loc + X`` (``X`` of density ``exp(-|x|/scale) / (2 scale)``), or a
        :class:`~dpverify.finite.sampler._noise.NoisyArray` of independent ones with ``size`` (parameters
        broadcast as in numpy)."""
        return self._noise_draw("laplace", "rng.laplace", (loc, scale), size)

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        """A traced exponential value ``X`` of density ``exp(-x/scale) / scale`` on ``x > 0`` (or an
        array of independent ones)."""
        return self._noise_draw("exponential", "rng.exponential", (0, scale), size)

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, method: Any = None, out: Any = None) -> Any:
        """``exponential(1.0, size)``."""
        return self._noise_draw("exponential", "rng.standard_exponential", (0, 1), size)

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """A Gumbel value ``loc + G``, or an array of independent ones: traced for one use, the argmax of
        a vector ``c_i + G_i`` (one scale), which is the exponential mechanism: ``P(argmax = i) =
        exp(c_i / scale) / sum_j exp(c_j / scale)``, a discrete choice with certified probabilities.
        Anything else done with Gumbel noise is refused (its densities are not piecewise exponential)."""
        if self._tail > 0:
            self._abort(MechanismError(f"rng.gumbel with tail= is not supported; drop tail=. {STATISTICAL_WAY}",
                                       dataset=self._dataset))

        def draw(loc: Any, scale: Any) -> Any:
            where, inexact_loc = _read("rng.gumbel", "loc", loc)
            width, inexact_scale = _read("rng.gumbel", "scale", scale)
            if width <= 0:
                self._abort(MechanismError(f"rng.gumbel: scale must be > 0, got scale={scale!r}.", dataset=self._dataset))
            if inexact_loc or inexact_scale:
                self._noise.floats = True
            index = GUMBEL_BASE + len(self._noise.gumbel)
            self._noise.gumbel[index] = width
            self._choose("gumbel", 1, Deferred((width,)), False)
            return Noisy(self, Linear(where, ((index, Fraction(1)),)))

        value = self._elementwise("rng.gumbel", size, (loc, scale), draw, object)
        return value.view(NoisyArray) if isinstance(value, np.ndarray) else value

    def _gumbel_argmax(self, forms: list[Linear], largest: bool, call: str) -> int | None:
        """The exponential mechanism's choice when the lane is ``c_i + G_i`` (fresh Gumbel variables of one
        scale); None when no Gumbel variable is in the lane; refused for any other use of one."""
        gumbel = self._noise.gumbel
        used = [i for form in forms for i, _ in form.coefs if i in gumbel]
        if not used:
            return None
        scales = {gumbel[i] for i in used}
        shape = (largest and len(used) == len(forms) == len(set(used)) and len(scales) == 1
                 and all(len(form.coefs) == 1 and form.coefs[0][1] == 1 for form in forms)
                 and not set(used) & self._noise.gumbel_used)
        if not shape:
            self._abort(MechanismError(
                f"the sampler {self._name} took the {call} of values involving Gumbel noise on dataset {self._dataset!r} "
                "in a form that is not traced: only the argmax of c_i + G_i, fresh Gumbel draws of one scale, one per "
                f"element, is decided (the exponential mechanism). {STATISTICAL_WAY}",
                dataset=self._dataset,
            ))
        (scale,) = scales
        self._noise.gumbel_used.update(used)
        shares = _softmax(tuple(form.const / scale for form in forms))
        if len(forms) == 1:
            return 0
        return self._choose(call, len(forms), shares, False)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """A traced Gaussian value ``loc + Z`` (``Z ~ N(0, scale^2)``), or an array of independent ones. It
        may only be released (the Gaussian mechanism ``q + N(0, sigma^2 I)``, decided exactly): a
        comparison of Gaussian noise is refused, its integrals having no closed form."""
        return self._noise_draw("gaussian", "rng.normal", (loc, scale), size)

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """``normal(0.0, 1.0, size)``."""
        return self._noise_draw("gaussian", "rng.standard_normal", (0, 1), size)

    def randn(self, *dimensions: Any) -> Any:
        """numpy's legacy ``randn(d0, d1, ...)``: standard normal values of that shape."""
        return self._noise_draw("gaussian", "rng.randn", (0, 1), dimensions or None)

    def gauss(self, mu: Any = 0.0, sigma: Any = 1.0) -> Any:
        """Python's ``gauss(mu, sigma)``: a traced Gaussian value (as :meth:`normal`)."""
        return self._noise_draw("gaussian", "random.gauss", (mu, sigma), None)

    normalvariate = gauss

    def expovariate(self, lambd: Any = 1.0) -> Any:
        """Python's ``expovariate``: a traced exponential value of rate ``lambd`` (scale ``1/lambd``)."""
        return self.python.expovariate(lambd)

    def _noise_draw(self, kind: str, call: str, parameters: tuple[Any, Any], size: Any) -> Any:
        if self._tail > 0:
            self._abort(MechanismError(
                f"{call}: the sampler {self._name} draws continuous noise, and from_sampler(..., tail={float(self._tail):g}) "
                "explores paths by their mass, which a traced noise path only has once its constraints are integrated. "
                "Drop tail= (a sampler with continuous noise and no unbounded loop needs none), or check it "
                f"statistically with dpverify.estimate.",
                dataset=self._dataset,
            ))

        def draw(loc: Any, scale: Any) -> Any:
            return self._variable(kind, call, loc, scale)

        if size is None and type(parameters[0]) in _SCALARS and type(parameters[1]) in _SCALARS:
            return draw(*parameters)  # the common scalar draw, without numpy's broadcasting
        value = self._elementwise(call, size, parameters, draw, object)
        if isinstance(value, np.ndarray):
            return value.view(NoisyArray) if any(isinstance(item, Noisy) for item in value.flat) else value.astype(float)
        return value

    def _variable(self, kind: str, call: str, loc: Any, scale: Any) -> Any:
        path = self._noise
        where, inexact_loc = _read(call, "loc", loc)
        width, inexact_scale = _read(call, "scale", scale)
        if width < 0:
            self._abort(MechanismError(f"{call}: scale must be >= 0, got scale={scale!r}.", dataset=self._dataset))
        if inexact_loc or inexact_scale:
            path.floats = True
        if width == 0:  # numpy returns loc itself, as a float
            return float(loc)
        variable = NoiseVariable(len(path.variables), kind, width)
        self._choose(kind, 1, Deferred((width,)), False)  # a step of the path, replayed
        path.variables.append(variable)
        return Noisy(self, Linear(where, ((variable.index, Fraction(1)),)))

    # -- choice points of traced values ----------------------------------------------------------------

    def _possible(self, extra: Sequence[Linear]) -> bool:
        """Whether the path's constraints and ``extra`` may all hold (True when undecided here).

        Memoised for the replays of the enumeration: a run's constraints are a function of the branches
        it took (replays are checked to repeat them), so the ``j``-th question asked after the same
        branches is keyed by ``(branches, j)``, and its ``extra`` is compared with the one stored (a
        sampler that asks another question there is answered afresh)."""
        path = self._noise
        indices = self._indices  # type: ignore[attr-defined]
        if len(indices) != self._asked[0]:
            self._asked = [len(indices), 0]
        key = (tuple(indices), self._asked[1])
        self._asked[1] += 1
        extra = tuple(extra)
        cache = self._feasible_cache
        found = cache.get(key)
        if found is not None and found[0] == extra:
            return found[1]
        supports = tuple(v for v in path.variables if v.kind == "exponential")
        answer = feasible((*path.constraints, *extra), supports) is not False
        if len(cache) >= _FEASIBLE_CACHE_SIZE:
            cache.clear()
        cache[key] = (extra, answer)
        return answer

    def _needed(self, constraints: Sequence[Linear]) -> list[Linear]:
        """``constraints`` without those the path already implies (their negation is impossible)."""
        return [form for form in constraints if self._possible([form.negated()])]

    def _refuse_uncomparable(self, forms: Sequence[Linear], what: str) -> None:
        """Refuse comparing Gumbel noise (only its argmax is traced) or Gaussian noise (only released)."""
        variables = self._noise.variables
        for form in forms:
            for i, _ in form.coefs:
                if i >= GUMBEL_BASE:
                    self._abort(MechanismError(
                        f"the sampler {self._name} {what} involving Gumbel noise ({form.text()} > 0) on dataset "
                        f"{self._dataset!r}: only the argmax of c_i + G_i (fresh Gumbel draws of one scale) is decided, "
                        f"the exponential mechanism. {STATISTICAL_WAY}",
                        dataset=self._dataset,
                    ))
                if variables[i].kind == "gaussian":
                    self._abort(MechanismError(
                        f"the sampler {self._name} {what} involving Gaussian noise ({form.text()} > 0, X{i} from "
                        f"rng.normal) on dataset {self._dataset!r}: Gaussian noise is decided only when released as "
                        "q + N(0, sigma^2 I) (the Gaussian mechanism); the integrals of its comparisons have no closed "
                        f"form; compare Laplace noise instead. {STATISTICAL_WAY}",
                        dataset=self._dataset,
                    ))

    def _compare(self, form: Linear, strict: bool) -> bool:
        """``form > 0`` (``>= 0``) on this run: a two-way choice point when both may hold."""
        if not form.coefs:
            return form.const > 0 if strict else form.const >= 0
        self._refuse_uncomparable([form], "compared a value")
        positive = self._possible([form])
        negative = self._possible([form.negated()])
        if not negative:
            return True
        if not positive:
            return False
        index = self._choose("compare", 2, Deferred((form,)), False)
        self._noise.constraints.append(form if index == 0 else form.negated())
        return index == 0

    def _extreme(self, lane: list[Any], *, largest: bool, call: str = "") -> int:
        """The index of the largest (smallest) element of ``lane``: one choice among the elements that
        can be it, branch ``i`` constraining ``e_i > e_j`` (``e_i < e_j``) for every ``j``. Equal
        constants tie as numpy's argmax does (the first wins); noisy ties have probability 0. An
        infinite constant decides at once (``+inf`` is the largest; ``-inf`` never is, unless all are)."""
        call = call or ("argmax" if largest else "argmin")
        if not lane:
            raise ValueError(f"attempt to get {call} of an empty sequence")
        infinite = [i for i, item in enumerate(lane) if _is_infinite(item)]
        if infinite:
            best = math.inf if largest else -math.inf
            winners = [i for i in infinite if float(lane[i]) == best]
            if winners:
                return winners[0]
            finite = [i for i in range(len(lane)) if i not in infinite]
            if not finite:
                return 0
            return finite[self._extreme([lane[i] for i in finite], largest=largest, call=call)]
        forms = [self._form(item, call) for item in lane]
        chosen = self._gumbel_argmax(forms, largest, call)
        if chosen is not None:
            return chosen
        self._refuse_uncomparable(forms, f"took the {call} of values")
        options: list[tuple[int, list[Linear]]] = []
        for i, own in enumerate(forms):
            needed: list[Linear] | None = []
            for j, other in enumerate(forms):
                if j == i:
                    continue
                difference = own.minus(other) if largest else other.minus(own)
                if not difference.coefs:
                    if difference.const > 0 or (difference.const == 0 and j > i):
                        continue
                    needed = None
                    break
                assert needed is not None
                needed.append(difference)
            if needed is None:
                continue
            needed = self._needed(needed)
            if self._possible(needed):
                options.append((i, needed))
        if len(options) == 1:
            return options[0][0]
        index = self._choose(call, len(options), Deferred(tuple(tuple(c) for _, c in options)), False)
        winner, constraints = options[index]
        self._noise.constraints.extend(constraints)
        return winner

    def _order(self, lane: list[Any], *, stable: bool = False) -> list[int]:
        """The indices of ``lane`` in increasing order: the smallest of the elements left, chosen as
        :meth:`_extreme` chooses, again and again (each step constrains the chosen element below the
        rest; at the end of the path the chain implies the others, which are then dropped:
        :func:`~dpverify.finite.sampler._noise.without_redundant_cycles`). Equal constants keep their index
        order, as numpy's sort does for up to 16 elements or with ``kind="stable"``; beyond, numpy
        orders them as its algorithm goes, so a longer lane with equal constants is refused."""
        if not stable and len(lane) > 16:
            constants = [item for item in lane if not isinstance(item, Noisy)]
            if len(set(constants)) < len(constants):
                self._abort(MechanismError(
                    f"the sampler {self._name} sorted {len(lane)} values holding equal constants beside noisy ones on "
                    f"dataset {self._dataset!r}: numpy's default sort orders equal values of more than 16 elements as "
                    "its algorithm goes, not by index. Pass kind='stable' (np.argsort(x, kind='stable')), which keeps "
                    "them in index order.",
                    dataset=self._dataset,
                ))
        remaining = list(range(len(lane)))
        order: list[int] = []
        while remaining:
            chosen = remaining[self._extreme([lane[i] for i in remaining], largest=False, call="argsort")]
            order.append(chosen)
            remaining.remove(chosen)
        return order

    def _form(self, item: Any, call: str) -> Linear:
        if isinstance(item, Noisy) and item._rng is not self:
            self._abort(MechanismError(f"{call}: a noisy value of another run", dataset=self._dataset))
        try:
            return as_form(item)
        except (TypeError, ValueError):
            self._abort(MechanismError(
                f"the sampler {self._name} took the {call} of a vector holding {item!r} beside noisy values on dataset "
                f"{self._dataset!r}; only numbers and noisy values are compared. {STATISTICAL_WAY}",
                dataset=self._dataset,
            ))

    def _refuse_noise(self, call: str, args: tuple, kwargs: dict, why: str) -> Any:
        self._abort(MechanismError(
            f"rng.{call}({_arguments(args, kwargs)}) {why}. {STATISTICAL_WAY}", dataset=self._dataset,
        ))


#: Continuous draws of numpy's and Python's generators that are not traced.
UNTRACED = (
    "beta", "chisquare", "dirichlet", "f", "gamma", "logistic", "lognormal", "multivariate_normal",
    "noncentral_chisquare", "noncentral_f", "pareto", "power", "rayleigh", "standard_cauchy", "standard_gamma",
    "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull",
    "betavariate", "gammavariate", "lognormvariate", "paretovariate", "vonmisesvariate", "weibullvariate",
)
_NOT_TRACED = (
    "draws from a continuous distribution that is not traced (laplace, exponential and standard_exponential are: "
    "each becomes a noise variable whose comparisons are integrated exactly)"
)
_WHY_NOT: dict[str, str] = {}


def refuse_untraced(rng_class: type) -> None:
    """Give ``rng_class`` a refusal, naming the draw and the way on, for each name of :data:`UNTRACED`."""
    for name in UNTRACED:
        reason = _WHY_NOT.get(name, _NOT_TRACED)

        def refused(self: NoiseDraws, *args: Any, name: str = name, reason: str = reason, **kwargs: Any) -> Any:
            self._refuse_noise(name, args, kwargs, reason)

        refused.__name__ = name
        refused.__doc__ = f"Refused: {reason}."
        setattr(rng_class, name, refused)
