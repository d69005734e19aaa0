"""Samplers with continuous noise as mechanisms: traced paths integrated into exact outputs.

:func:`dpverify.from_sampler` enumerates a sampler's execution paths; a path that drew Laplace or
exponential noise comes back as a :class:`~dpverify.finite.sampler._noise.TracedPath` (its discrete mass,
its noise variables and the constraints its comparisons cut out; :mod:`dpverify.finite.sampler._noise`).
:class:`TracedMechanism` turns them into what the checkers decide:

* **finite outputs** (an index, a tuple of answers): ``P(o)`` is the sum over the paths ending in
  ``o`` of their mass times the integral of the noise densities over their region
  (:func:`dpverify.densities._path_integral.probability`), an exact
  :class:`~dpverify.densities.piecewise.ExpSum`. The mechanism then offers what the hand-written
  noise programs offer (:class:`dpverify.mechanisms.noise.NoiseProgram`): certified floats,
  ``exact_probabilities``, ``exact_distribution``, ``certified_intervals``; the engine decides;
* **real outputs** (a noisy number, alone or in a tuple beside discrete values, such as
  ``(count, value)``): one real number per output is a density labelled by the rest of the output
  (:class:`~dpverify.densities.continuous.MixedOutput`: the label puts :data:`REAL` where the number
  was); a vector of independent noisy numbers with no comparison among them (a noisy histogram) is
  a :class:`~dpverify.densities.continuous.ProductOutput`; the continuous checkers decide.

Every dataset's probabilities are checked to add up to exactly 1 (an internal invariant: a pruned
branch that had mass, or a path counted twice, would break it loudly).

The model is real arithmetic (:data:`REAL_ARITHMETIC`): a verdict on traced noise is on the
real-number mechanism; the float program that rounds ``q + noise`` may leak (Mironov 2012).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

from dpverify.densities._path_integral import Unsupported, density, probability
from dpverify.densities.continuous import MixedOutput, ProductOutput
from dpverify.densities.piecewise import ExpSum, PiecewiseExp
from dpverify.errors import MechanismError
from dpverify.finite.distribution import Distribution
from dpverify.finite.sampler._linear import Linear
from dpverify.finite.sampler._noise import STATISTICAL_WAY, TracedOutputs, TracedPath
from dpverify.finite.sampler.sampling import Enumeration, SamplerMechanism
from dpverify.verdict.assumptions import Assumption, Status

__all__ = ["TracedMechanism", "PublicSampler", "REAL", "REAL_ARITHMETIC", "real_arithmetic", "traced"]

#: What a verdict on traced continuous noise rests on (the model, stated with every such verdict).
REAL_ARITHMETIC = (
    "real arithmetic: the traced noise is a real number and the program's arithmetic on it exact; the float program "
    "rounds q + noise and what follows, so it can differ (x + a - x == a is always true here, not in floats) and "
    "leak through the low bits of its output (Mironov 2012: the textbook float Laplace mechanism has eps* = inf), "
    "which dpverify.estimate sees (float-bit events); snapping (Mironov's fix) avoids the latter"
)

_CACHE_SIZE = 4096


class _Real:
    """The place of the released real number in a density's label: ``(3, REAL)`` is the density of
    the outputs ``(3, x)``."""

    _instance: _Real | None = None

    def __new__(cls) -> _Real:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<real>"

    def __reduce__(self) -> Any:
        return (_Real, ())

    def __lt__(self, other: Any) -> bool:  # labels sort beside strings and numbers in reports
        return False


REAL = _Real()


def real_arithmetic() -> Assumption:
    """The real-arithmetic model as a recorded assumption of a verdict (accepted: it is the model of
    traced noise, stated with every verdict that rests on it; :data:`REAL_ARITHMETIC` in full)."""
    return Assumption(
        "real arithmetic", "real arithmetic, the model of traced noise", Status.ACCEPTED,
        "the noise is a real number and the arithmetic exact; the float program rounds, and may differ and leak, "
        "Mironov 2012: dpverify.estimate reads float bits",
        "check the float program with dpverify.estimate, or release snapped values (Mironov's fix)",
    )


class TracedMechanism:
    """A :func:`~dpverify.from_sampler` mechanism whose sampler draws continuous noise, decided from
    its traced paths (module docstring). ``continuous_output`` says which form its outputs take; it
    is set by :meth:`probe` (the first dataset evaluated) and checked on every dataset after."""

    float_relative_error = 2.0**-52

    def __init__(self, mechanism: SamplerMechanism) -> None:
        self.mechanism = mechanism
        self.__name__ = mechanism.__name__
        self.__doc__ = mechanism.__doc__
        if hasattr(mechanism, "exchangeable"):
            self.exchangeable = mechanism.exchangeable
        self.continuous_output = False
        self._form: tuple[Any, str] | None = None  # (dataset, "finite" or "real") of the first dataset
        self._cache: dict[Any, Any] = {}
        self.floats = False  # a float constant was read as its binary value on some dataset

    def __repr__(self) -> str:
        return f"traced({self.mechanism!r})"

    def __getstate__(self) -> dict:  # a worker integrates what it evaluates: the cache stays here
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    # -- evaluation ----------------------------------------------------------------------------------

    def probe(self, dataset: Any, enumeration: Enumeration | None = None) -> bool:
        """Evaluate ``dataset`` (from its ``enumeration`` when the caller has it already) and return
        whether the outputs are real numbers (densities, or the Gaussian mechanism's vector)."""
        self._resolve(dataset, enumeration)
        assert self._form is not None
        return self._form[1] in ("real", "gaussian")

    def _resolve(self, dataset: Any, enumeration: Enumeration | None = None) -> Any:
        key = tuple(dataset) if isinstance(dataset, list) else dataset
        found = self._cache.get(key)
        if found is not None:
            return found
        if enumeration is None:
            enumeration = self.mechanism.enumerate(dataset)
        if enumeration.traced is None:
            assert enumeration.distribution is not None
            values = enumeration.distribution.items()
            if any(isinstance(p, float) for _, p in values):  # totals of float probabilities, rounded once
                self.floats = True
            resolved: Any = ("finite", {o: ExpSum.constant(Fraction(p)) for o, p in values})
        else:
            if enumeration.traced.floats:
                self.floats = True
            resolved = _integrate(enumeration.traced, self.__name__, dataset)
        form = resolved[0]
        if self._form is None:
            self._form = (dataset, form)
            self.continuous_output = form == "real"  # the Gaussian form routes on gaussian_output
        elif self._form[1] != form:
            first, kind = self._form
            raise MechanismError(
                f"the sampler {self.__name__} returns {_kind(kind)} on dataset {first!r} but {_kind(form)} on {dataset!r}; "
                "one mechanism's outputs must have one form for the checkers to compare them (return the noisy value "
                f"on every path, or none). {STATISTICAL_WAY}",
                dataset=dataset,
            )
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = resolved
        return resolved

    # -- finite outputs: the NoiseProgram protocol ---------------------------------------------------

    def exact_values(self, dataset: Any) -> dict[Hashable, ExpSum]:
        form, values = self._resolve(dataset)
        if form != "finite":
            raise MechanismError(f"the sampler {self.__name__} returns real numbers on {dataset!r}: decide it from "
                                 "output_density(dataset)", dataset=dataset)
        return values

    exact_probabilities = exact_values

    def __call__(self, dataset: Any) -> Distribution:
        return Distribution._of_positive_floats({o: p.to_float() for o, p in self.exact_values(dataset).items()})

    def exact_distribution(self, dataset: Any) -> Distribution:
        return Distribution({o: p.to_sympy() for o, p in self.exact_values(dataset).items()})

    def certified_intervals(self, dataset: Any) -> dict:
        return {o: p.interval(256) for o, p in self.exact_values(dataset).items()}

    # -- the Gaussian mechanism: the GaussianOutput protocol ------------------------------------------------

    @property
    def gaussian_output(self) -> bool:
        return self._form is not None and self._form[1] == "gaussian"

    @property
    def sigma(self) -> Fraction:
        assert self._form is not None
        first, _ = self._form
        return self._resolve(first)[1][0]

    def answer(self, dataset: Any) -> tuple[Fraction, ...]:
        form, (sigma, answer) = self._resolve(dataset)
        if sigma != self.sigma:
            raise MechanismError(
                f"the sampler {self.__name__} adds Gaussian noise of standard deviation {float(sigma)!r} on {dataset!r} "
                f"but {float(self.sigma)!r} on {self._form[0]!r}: the Gaussian mechanism has one sigma",  # type: ignore[index]
                dataset=dataset,
            )
        return answer

    # -- real outputs ---------------------------------------------------------------------------------

    def output_density(self, dataset: Any) -> MixedOutput | ProductOutput:
        form, output = self._resolve(dataset)
        if form != "real":
            raise MechanismError(f"the sampler {self.__name__} returns no real number on {dataset!r}",
                                 dataset=dataset)
        return output


def traced(mechanism: SamplerMechanism) -> TracedMechanism:
    """``mechanism`` as a :class:`TracedMechanism`."""
    return TracedMechanism(mechanism)


def _kind(form: str) -> str:
    return {"real": "real numbers (a density)", "gaussian": "a Gaussian vector"}.get(form, "finitely many outputs")


# -- integrating the paths --------------------------------------------------------------------------


def _leaves(output: Any) -> list[Linear]:
    if isinstance(output, Linear):
        return [output]
    if isinstance(output, (tuple, frozenset)):
        return [leaf for item in output for leaf in _leaves(item)]
    return []


def _label(output: Any) -> Any:
    if isinstance(output, Linear):
        return REAL
    if isinstance(output, tuple):
        items = [_label(item) for item in output]
        return output._make(items) if hasattr(output, "_make") else tuple(items)
    if isinstance(output, frozenset):
        return frozenset(_label(item) for item in output)
    return output


def _integrate(outputs: TracedOutputs, name: str, dataset: Any) -> tuple[str, Any]:
    """``("finite", {outcome: ExpSum})`` or ``("real", MixedOutput | ProductOutput)``; the total is
    checked to be exactly 1."""
    try:
        if any(v.kind == "gaussian" for path in outputs.paths for v in path.variables):
            return "gaussian", _gaussian(outputs)
        if not any(_leaves(path.output) for path in outputs.paths):
            return "finite", _finite(outputs, name, dataset)
        return "real", _real(outputs, name, dataset)
    except Unsupported as reason:
        raise MechanismError(
            f"the sampler {name} cannot be integrated exactly on dataset {dataset!r}: {reason}. {STATISTICAL_WAY}",
            dataset=dataset,
        ) from None


def _finite(outputs: TracedOutputs, name: str, dataset: Any) -> dict[Hashable, ExpSum]:
    groups: dict[Hashable, list[ExpSum]] = {o: [ExpSum.constant(m)] for o, m in outputs.atoms.items()}
    for path in outputs.paths:
        groups.setdefault(path.output, []).append(_path_mass(path))
    values = {o: ExpSum.total(parts) for o, parts in groups.items()}
    _check_total(list(values.values()), name, dataset)
    return {o: p for o, p in values.items() if not p.is_zero()}


def _path_mass(path: TracedPath) -> ExpSum:
    return probability(path.variables, path.constraints) * path.mass


def _real(outputs: TracedOutputs, name: str, dataset: Any) -> MixedOutput | ProductOutput:
    product = _product(outputs)
    if product is not None:
        return product
    atoms: dict[Hashable, list[ExpSum]] = {o: [ExpSum.constant(m)] for o, m in outputs.atoms.items()}
    densities: dict[Hashable, PiecewiseExp] = {}
    for path in outputs.paths:
        leaves = _leaves(path.output)
        if not leaves:
            atoms.setdefault(path.output, []).append(_path_mass(path))
            continue
        if len(leaves) > 1:
            raise Unsupported(
                f"an output holding {len(leaves)} noisy numbers ({path.output!r}) after comparisons among them: only one "
                "released real number per output, or a vector of independent noisy numbers compared with nothing "
                "(a noisy histogram), is decided"
            )
        part = density(path.variables, path.constraints, leaves[0]).scale(path.mass)
        label = _label(path.output)
        densities[label] = part if label not in densities else densities[label] + part
    exact_atoms = {o: ExpSum.total(parts) for o, parts in atoms.items()}
    _check_total([*exact_atoms.values(), *(d.integral() for d in densities.values())], name, dataset)
    return MixedOutput({o: p for o, p in exact_atoms.items() if not p.is_zero()}, densities)


def _product(outputs: TracedOutputs) -> ProductOutput | None:
    """A noisy vector ``q + noise`` with no comparison: one path, no atom, each coordinate a distinct
    noise variable times a constant plus a constant."""
    if outputs.atoms or len(outputs.paths) != 1:
        return None
    (path,) = outputs.paths
    output = path.output
    if path.constraints or not isinstance(output, tuple) or not output or not all(isinstance(leaf, Linear) for leaf in output):
        return None
    used = [leaf.indices for leaf in output]
    if any(len(indices) != 1 for indices in used) or len({i for (i,) in used}) != len(used):
        return None
    factors = tuple(density(path.variables, (), leaf) for leaf in output)
    for factor in factors:
        if factor.integral() != 1:
            raise AssertionError("dpverify internal error: a coordinate's density does not integrate to 1")
    return ProductOutput(factors)


def _gaussian(outputs: TracedOutputs) -> tuple[Fraction, tuple[Fraction, ...]]:
    """``(sigma, f(D))`` of a sampler releasing ``f(D) + N(0, sigma^2 I)``: one path, no comparison, each
    released coordinate one Gaussian variable of the same standard deviation (its coefficient times
    its scale, up to sign: ``-Z`` is ``Z``), nothing else random."""
    shape = ("Gaussian noise is decided only as the Gaussian mechanism: the sampler returns q + N(0, sigma^2) in each "
             "coordinate of a number or a vector, one independent draw per coordinate, all of one sigma, with no other "
             "randomness")
    if outputs.atoms or len(outputs.paths) != 1:
        raise Unsupported(f"{shape}; this one has {len(outputs.paths) + len(outputs.atoms)} execution paths")
    (path,) = outputs.paths
    output = path.output
    items = list(output) if isinstance(output, tuple) else [output]
    leaves = [leaf for leaf in items if isinstance(leaf, Linear) and len(leaf.coefs) == 1]
    if not leaves or len(leaves) != len(items):
        raise Unsupported(f"{shape}; it returned {output!r}")
    used = [leaf.coefs[0][0] for leaf in leaves]
    kinds = {path.variables[i].kind for i in range(len(path.variables))}
    if len(set(used)) != len(used) or kinds != {"gaussian"} or len(used) != len(path.variables):
        raise Unsupported(f"{shape}; it returned {output!r} with the draws {[v.kind for v in path.variables]}")
    sigmas = {abs(leaf.coefs[0][1]) * path.variables[leaf.coefs[0][0]].scale for leaf in leaves}
    if len(sigmas) != 1:
        raise Unsupported(f"{shape}; its coordinates have the standard deviations {sorted(float(s) for s in sigmas)}")
    return sigmas.pop(), tuple(leaf.const for leaf in leaves)


def _check_total(parts: list[ExpSum], name: str, dataset: Any) -> None:
    total = ExpSum.total(parts)
    if total != 1:
        raise AssertionError(
            f"dpverify internal error: the traced paths of the sampler {name} on {dataset!r} have total probability "
            f"{total.to_float()!r}, not exactly 1 (a branch pruned with mass, or a path counted twice)."
        )


class PublicSampler:
    """A :func:`~dpverify.from_sampler` mechanism checked on :class:`~dpverify.PublicData`: its sampler
    takes ``(public, dataset, rng)``. Each public sample gets the mechanism of ``sampler(public, ., rng)``
    (the same options), integrated as :class:`TracedMechanism` integrates when it draws continuous
    noise; ``traced`` says whether any did (the verdict then rests on real arithmetic). Its
    probabilities are certified floats (the engine's float model decides a claim tight within them)."""

    def __init__(self, mechanism: SamplerMechanism) -> None:
        self.mechanism = mechanism
        self.__name__ = mechanism.__name__
        if hasattr(mechanism, "exchangeable"):
            self.exchangeable = mechanism.exchangeable
        self.traced = False
        self._views: dict[Any, Any] = {}

    def _view(self, public: Any, dataset: Any) -> Any:
        view = self._views.get(public)
        if view is None:
            sampler = functools.partial(self.mechanism.sampler, public)
            functools.update_wrapper(sampler, self.mechanism.sampler)
            plain = SamplerMechanism(sampler, self.mechanism.max_paths, tail=self.mechanism.tail,
                                     max_depth=self.mechanism.max_depth, deterministic=self.mechanism.deterministic,
                                     patch=self.mechanism.patch)
            plain.__name__ = f"{self.__name__}[public={public!r}]"
            enumeration = plain.enumerate(dataset)
            if enumeration.traced is None:
                view = plain
            else:
                view = TracedMechanism(plain)
                view.probe(dataset, enumeration)
                if view.continuous_output or view.gaussian_output:
                    raise MechanismError(
                        f"the sampler {self.__name__} releases noisy real numbers on public data {public!r}: a density, "
                        "which is decided on given pairs or Datasets, not yet on public data; release a finite "
                        f"output here, or check each public sample's mechanism on its Datasets. {STATISTICAL_WAY}",
                        dataset=dataset,
                    )
                self.traced = True
            self._views[public] = view
        return view

    def __call__(self, public: Any, dataset: Any) -> Distribution:
        return self._view(public, dataset)(dataset)
