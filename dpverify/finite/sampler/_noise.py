"""Continuous noise traced: Laplace and exponential draws as variables, comparisons as constraints.

The exact rng cannot enumerate a continuous draw, so it does not draw it. ``rng.laplace(loc, scale)``
returns a :class:`Noisy` value: the affine form ``loc + X_i`` in a fresh noise variable ``X_i``
(:class:`~dpverify.finite.sampler._linear.NoiseVariable`), and the sampler computes with it as with a number:

* **arithmetic** keeps affine forms with exact coefficients: ``q + x``, ``x - y``, ``c * x``,
  ``x / c``, ``-x``, ``sum``; a float constant is its exact binary value;
* **a comparison** (``<``, ``<=``, ``>``, ``>=``) is a choice point with two branches whose
  probabilities are not known yet: the run takes one and the path keeps its *constraint*
  ``form > 0``. A branch the constraints so far make impossible is pruned at once (exactly, for
  constraints of the form ``X_i - X_j > c`` and ``X_i > c``: no cycle of them may have a
  non-negative sum, Bellman-Ford); a branch they already imply adds nothing. Ties have probability
  0, so ``<`` and ``<=`` branch alike; ``x == c`` is False and ``x != c`` True (probability 1);
* ``argmax``, ``argmin``, ``max`` and ``min`` of a :class:`NoisyArray` (what ``rng.laplace(size=k)``
  returns, and what numpy arithmetic on it keeps returning) are **one k-way choice** (winner ``i``:
  ``e_i > e_j`` for every ``j``), not the ``k - 1`` pairwise comparisons of numpy's scan; ``sort``
  and ``argsort`` choose the order element by element, each step one constraint ``e_prev < e_next``
  (the chain of a path is its whole region, so no redundant constraint is kept);
* ``abs``, ``np.maximum``, ``np.minimum``, ``np.clip``, ``np.sign`` split by comparisons; boolean
  masks and ``astype(int)`` of comparisons are ordinary arrays once the comparisons have branched.

A path's probability is its discrete mass (coins, integers, subsampling: exact as ever) times the
integral of the noise densities over the region its constraints cut out, which
:mod:`dpverify.densities.traced` computes exactly. A sampler that returns a noisy value returns the
form itself (a :class:`~dpverify.finite.sampler._linear.Linear` in its output), and its output is a density.

The model is real arithmetic, as for lazy uniforms: ``q + x`` is the real sum. The float program
that rounds it may leak where the real one does not (Mironov 2012); a verdict on traced noise says
so (:mod:`dpverify.densities.traced`), and ``dpverify.estimate`` sees float-structure leaks.

Refused, naming the construct and the way out (the statistical mode, or a hand-written
distribution): ``float()``, ``int()``, ``round``, ``math.*`` and ``bool()`` of a noisy value (they need
the value), ``np.exp``/``np.log`` and the other non-linear maps, the product of two noisy values or
a division by one, a noisy value combined with a lazy uniform, and (in the integrator) constraints
on three variables or in a cycle.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NoReturn

import numpy as np

from dpverify.errors import MechanismError
from dpverify.finite._numbers import _number
from dpverify.finite.sampler._lazy_ufuncs import objects
from dpverify.finite.sampler._linear import Linear, NoiseVariable

#: The exact rng of the run (dpverify.finite.sampler._exact_random.ExactRandom, not imported: it imports this module).
ExactRandom = Any

__all__ = ["Noisy", "NoisyArray", "Deferred", "NoisePath", "TracedPath", "TracedOutputs", "STATISTICAL_WAY"]

STATISTICAL_WAY = (
    "Ways on: check the sampler statistically with dpverify.estimate(sampler, inputs, claim), or write the "
    "mechanism's distribution by hand (dpverify.mechanisms.noise: Laplace, Exponential; noisy max, sparse vector)."
)

_ZERO, _ONE = Fraction(0), Fraction(1)
#: Plain int and float operands as constant forms, by (type, value): ``(form, read from a float)``.
_CONSTANTS: dict[tuple[type, Any], tuple[Linear, bool]] = {}
#: numpy's methods for maps of object arrays that are not affine (``np.exp(x)`` calls ``x.exp()``).
_NON_LINEAR = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "rint", "floor", "ceil",
    "trunc", "conjugate", "deg2rad", "rad2deg",
})


class Deferred(tuple):
    """The signature entry of a choice point whose branch probabilities are integrals computed at the
    end of the path (the branches' constraints, compared on replay). Its mass factor is 1."""


class NoisePath:
    """The continuous part of one run: its noise variables and its constraints (each ``form > 0``)."""

    __slots__ = ("variables", "constraints", "floats", "released", "gumbel", "gumbel_used")

    def __init__(self) -> None:
        self.variables: list[NoiseVariable] = []
        self.constraints: list[Linear] = []
        self.gumbel: dict[int, Fraction] = {}  # Gumbel variables (numbered from GUMBEL_BASE) and their scales
        self.gumbel_used: set[int] = set()  # those an argmax has consumed
        self.floats = False  # a float constant entered a form or a scale (its binary value is used)
        self.released: dict[int, int] = {}  # id of a lazy uniform released as a real number -> its variable

    def release_uniform(self, uniform: Any, low: Fraction, high: Fraction) -> int:
        """The variable of a lazy uniform released as a real number: uniform on ``[0, high - low)``
        given the path (its comparisons left it in ``[low, high)``, with the path's mass their
        probability), one variable per uniform however often it is released."""
        found = self.released.get(id(uniform))
        if found is None:
            found = self.released[id(uniform)] = len(self.variables)
            self.variables.append(NoiseVariable(found, "uniform", high - low))
        return found


# -- feasibility ------------------------------------------------------------------------------------


def _edges(constraints: Sequence[Linear], variables: Sequence[NoiseVariable]) -> list[tuple[int, int, Fraction]] | None:
    """Difference constraints ``x_u - x_v > c`` as edges ``(u, v, c)`` (node ``-1`` is the constant 0),
    the exponential variables' support ``x > 0`` included; None when some constraint is not of that
    form (its feasibility is then not decided here)."""
    edges = [(v.index, -1, _ZERO) for v in variables if v.kind == "exponential"]
    for form in constraints:
        coefs = form.coefs
        if len(coefs) == 1:
            (i, a), = coefs
            # a x_i + c > 0: x_i > -c/a (a > 0) or -x_i > c/a, i.e. 0 - x_i > c/a (a < 0)
            edges.append((i, -1, -form.const / a) if a > 0 else (-1, i, form.const / a))
        elif len(coefs) == 2:
            (i, a), (j, b) = coefs
            if a != -b:
                return None
            # a (x_i - x_j) + c > 0
            edges.append((i, j, -form.const / a) if a > 0 else (j, i, form.const / a))
        else:
            return None
    return edges


def feasible(constraints: Sequence[Linear], variables: Sequence[NoiseVariable]) -> bool | None:
    """Whether ``{form > 0 for every form}`` has positive probability: True, False, or None when the
    constraints are not all difference constraints (then it is not decided here, and the branch is
    kept: the integral decides, exactly).

    Strict difference constraints ``x_u - x_v > c`` are infeasible exactly when some cycle has
    ``sum c >= 0`` (summing its inequalities gives ``0 > sum c``). Longest paths with weights
    ``(c, 1)`` compared lexicographically (an infinitesimal added to each strict inequality): a cycle
    that can still be relaxed after ``n`` rounds has a lexicographically positive weight."""
    for form in constraints:
        if not form.coefs and not form.const > 0:
            return False
    edges = _edges([form for form in constraints if form.coefs], variables)
    if edges is None:
        return None
    nodes = {u for u, _, _ in edges} | {v for _, v, _ in edges}
    # x_u >= x_v + c + eps: longest distances d[u] >= d[v] + (c, 1)
    distance: dict[int, tuple[Fraction, int]] = {node: (_ZERO, 0) for node in nodes}
    for _ in range(len(nodes) + 1):  # n rounds settle every simple path; one more must change nothing
        changed = False
        for u, v, c in edges:
            dv = distance[v]
            candidate = (dv[0] + c, dv[1] + 1)
            if candidate > distance[u]:
                distance[u] = candidate
                changed = True
        if not changed:
            return True
    return False


# -- the values ---------------------------------------------------------------------------------------


def _refuse(rng: ExactRandom, what: str, why: str) -> NoReturn:
    rng._abort(MechanismError(
        f"the sampler {rng._name} {what} on dataset {rng._dataset!r}: {why}. {STATISTICAL_WAY}",
        dataset=rng._dataset,
    ))
    raise AssertionError("unreachable: the rng aborts the run")


class Noisy:
    """A real number computed from continuous noise: the affine form ``form`` in the path's noise
    variables (module docstring). Compares, adds and scales like a number; the value is never drawn."""

    __slots__ = ("_rng", "form")
    __array_priority__ = 1000

    def __init__(self, rng: ExactRandom, form: Linear) -> None:
        self._rng, self.form = rng, form

    def __repr__(self) -> str:
        return f"<noisy {self.form.text()}>"

    # -- operands ------------------------------------------------------------------------------

    def _operand(self, other: Any, operation: str) -> Linear | None:
        """``other`` as a form (a constant one for numbers); None for an operand numpy should handle."""
        if isinstance(other, Noisy):
            if other._rng is not self._rng:
                _refuse(self._rng, f"combined noisy values of two different runs ({operation})",
                        "a noisy value belongs to the run that drew it")
            return other.form
        if isinstance(other, np.ndarray):
            return None
        if isinstance(other, (bool, np.bool_)):
            return Linear.constant(Fraction(int(other)))
        if type(other).__name__ in ("LazyUniform", "LazyValue"):
            _refuse(self._rng, f"combined a noisy value with a lazy uniform ({operation})",
                    "a uniform and continuous noise in one expression are not traced")
        kind = type(other)
        if kind is int or kind is float:  # the common operands, read once: a run repeats them on every replay
            found = _CONSTANTS.get((kind, other))
            if found is None:
                if kind is float and not math.isfinite(other):
                    return None  # ±inf and nan: the comparisons and sums below answer them
                found = _CONSTANTS[(kind, other)] = (Linear.constant(Fraction(other)), kind is float)
                if len(_CONSTANTS) > 4096:
                    _CONSTANTS.clear()
            if found[1]:
                self._rng._noise.floats = True
            return found[0]
        try:
            value, inexact = _number(f"the noisy value {operation}", "operand", other)
        except Exception:
            return None
        if inexact:
            self._rng._noise.floats = True
        return Linear.constant(value)

    def _factor(self, other: Any, operation: str) -> Fraction | None:
        if isinstance(other, Noisy):
            if not other.form.coefs:
                return other.form.const
            if not self.form.coefs:
                return None
            _refuse(self._rng, f"multiplied or divided two noisy values ({self.form.text()} {operation} "
                    f"{other.form.text()})", "only affine forms (sums of noise times constants) are traced")
        form = self._operand(other, operation)
        return None if form is None else form.const

    def _new(self, form: Linear) -> Any:
        return Noisy(self._rng, form) if form.coefs else _plain(form.const, self._rng._noise.floats)

    # -- arithmetic ------------------------------------------------------------------------------

    def __add__(self, other: Any) -> Any:
        if _is_nonfinite(other):
            return float(other)  # a real number plus ±inf (or nan) is that
        form = self._operand(other, "+")
        return NotImplemented if form is None else self._new(self.form.plus(form))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        if _is_nonfinite(other):
            return -float(other)
        form = self._operand(other, "-")
        return NotImplemented if form is None else self._new(self.form.minus(form))

    def __rsub__(self, other: Any) -> Any:
        if _is_nonfinite(other):
            return float(other)
        form = self._operand(other, "-")
        return NotImplemented if form is None else self._new(form.minus(self.form))

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, Noisy) and not self.form.coefs:
            return other.__mul__(self.form.const)
        factor = self._factor(other, "*")
        return NotImplemented if factor is None else self._new(self.form.times(factor))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        factor = self._factor(other, "/")
        if factor is None:
            return NotImplemented
        if not factor:
            _refuse(self._rng, f"divided the noisy value {self.form.text()} by zero", "a division by zero")
        return self._new(self.form.times(1 / factor))

    def __rtruediv__(self, other: Any) -> Any:
        _refuse(self._rng, f"divided by the noisy value {self.form.text()}",
                "1 / x is not affine: only sums of noise times constants are traced")

    def __neg__(self) -> Noisy:
        return Noisy(self._rng, self.form.negated())

    def __pos__(self) -> Noisy:
        return self

    def __abs__(self) -> Any:
        return self if self._positive(self.form) else -self

    # -- comparisons: branches --------------------------------------------------------------------

    def _positive(self, form: Linear, strict: bool = True) -> bool:
        """Whether ``form > 0`` on this run: a choice point when both outcomes are possible."""
        return self._rng._compare(form, strict)

    def _compare(self, other: Any, operation: str, flip: bool) -> Any:
        if _is_nonfinite(other):  # a real number against ±inf (a running maximum starts at -inf); nan: False
            if math.isnan(other):
                return False
            above = other > 0  # other is +inf
            return above if (operation in ("<", "<=")) else not above
        form = self._operand(other, operation)
        if form is None:
            return NotImplemented
        difference = form.minus(self.form) if flip else self.form.minus(form)
        return self._positive(difference, strict=operation in ("<", ">"))

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, "<", True)

    def __le__(self, other: Any) -> Any:
        return self._compare(other, "<=", True)

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, ">", False)

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, ">=", False)

    def __eq__(self, other: Any) -> Any:
        form = self._operand(other, "==")
        if form is None:
            return NotImplemented
        difference = self.form.minus(form)
        return not difference.coefs and not difference.const  # a continuous value equals a constant w.p. 0

    def __ne__(self, other: Any) -> Any:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    # -- what needs the value: refused --------------------------------------------------------------

    def _value_refused(self, what: str) -> NoReturn:
        _refuse(self._rng, f"asked for {what} of the noisy value {self.form.text()}",
                "it needs the value, which is never drawn (the noise is traced as a variable); compare it "
                "(x > t branches exactly) instead of converting it")

    def __float__(self) -> NoReturn:
        self._value_refused("float() (or a math.* function, which calls it)")

    def __int__(self) -> NoReturn:
        self._value_refused("int()")

    def __index__(self) -> NoReturn:
        self._value_refused("an index (operator.index)")

    def __bool__(self) -> NoReturn:
        self._value_refused("the truth value (bool)")

    def __round__(self, digits: Any = None) -> NoReturn:
        self._value_refused("round()")

    def __floor__(self) -> NoReturn:
        self._value_refused("math.floor()")

    def __ceil__(self) -> NoReturn:
        self._value_refused("math.ceil()")

    def __trunc__(self) -> NoReturn:
        self._value_refused("math.trunc()")

    def __complex__(self) -> NoReturn:
        self._value_refused("complex()")

    def __floordiv__(self, other: Any) -> NoReturn:
        self._value_refused("the floor division (//)")

    __rfloordiv__ = __floordiv__

    def __mod__(self, other: Any) -> NoReturn:
        self._value_refused("the remainder (%)")

    __rmod__ = __mod__

    def __divmod__(self, other: Any) -> NoReturn:
        self._value_refused("divmod()")

    def __pow__(self, power: Any) -> Any:
        if isinstance(power, (int, np.integer)) and int(power) == 1:
            return self
        _refuse(self._rng, f"raised the noisy value {self.form.text()} to a power",
                "only affine forms (sums of noise times constants) are traced")

    def __getattr__(self, name: str) -> Any:
        # numpy calls x.exp(), x.log(), ... for np.exp of an object array: refused by name
        if name not in _NON_LINEAR:
            raise AttributeError(f"a noisy value has no attribute {name!r}")
        _refuse(self._rng, f"applied numpy's {name} to the noisy value {self.form.text()}",
                f"{name} is not affine; only sums, differences, constant multiples, comparisons, abs, max, min, "
                "clip and sign are traced")

    def clip(self, a_min: Any = None, a_max: Any = None, **kwargs: Any) -> Any:
        """``np.clip`` of a noisy value: split by comparisons with the bounds."""
        value: Any = self
        if a_min is not None:
            value = _maximum(value, a_min)
        if a_max is not None:
            value = _minimum(value, a_max)
        return value

    # -- numpy -------------------------------------------------------------------------------------

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _array_ufunc(self._rng, ufunc, method, inputs, kwargs)


def _is_nonfinite(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and not math.isfinite(value)


def _plain(value: Fraction, inexact: bool) -> Any:
    """A constant result of noisy arithmetic (the noise cancelled): an int or a float as numpy gives."""
    if value.denominator == 1 and not inexact:
        return int(value)
    return float(value)


def _maximum(first: Any, second: Any) -> Any:
    return second if first < second else first


def _minimum(first: Any, second: Any) -> Any:
    return second if second < first else first


def _sign(value: Any) -> Any:
    if isinstance(value, Noisy):
        return 1.0 if value._positive(value.form) else -1.0
    return np.sign(value)


_UFUNCS: dict[str, Callable[..., Any]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
    "true_divide": operator.truediv, "negative": operator.neg, "positive": operator.pos,
    "absolute": abs, "fabs": abs, "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge, "equal": operator.eq, "not_equal": operator.ne,
    "maximum": _maximum, "fmax": _maximum, "minimum": _minimum, "fmin": _minimum, "sign": _sign,
    "clip": lambda value, low, high: _minimum(_maximum(value, low) if low is not None else value, high)
    if high is not None else _maximum(value, low),
    "isnan": lambda value: False, "isinf": lambda value: False, "isfinite": lambda value: True,
}


def _array_ufunc(rng: ExactRandom, ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """A numpy ufunc with a noisy operand: its scalar operation, elementwise over object arrays."""
    name = ufunc.__name__
    operation = _UFUNCS.get(name)
    given = {key: option for key, option in kwargs.items() if option is not None and key != "out"}
    if method == "reduce" and name in ("add", "maximum", "minimum", "fmax", "fmin") and not given:
        (array,) = inputs
        reduced = _reduce(np.asarray(array, dtype=object), operation, kwargs.get("axis", 0))
        return reduced
    if operation is None or method != "__call__" or given:
        _refuse(rng, f"called numpy.{name}" + ("" if method == "__call__" else f".{method}") + " on a noisy value",
                f"{name} is not one of the maps traced (sums, constant multiples, comparisons, abs, maximum, "
                "minimum, clip, sign; no where= or dtype=)")
    assert operation is not None

    def apply(*operands: Any) -> Any:
        operands = tuple(o.item() if isinstance(o, np.generic) else o for o in operands)
        if not any(isinstance(o, Noisy) for o in operands):
            return ufunc(*operands)
        return operation(*operands)

    if not any(isinstance(operand, np.ndarray) for operand in inputs):
        result = apply(*inputs)
    else:
        make_ufunc: Any = np.frompyfunc
        result = make_ufunc(apply, ufunc.nin, 1)(*(objects(o, Noisy) for o in inputs))
        result = settle(result)
    out = kwargs.get("out")
    if out is not None:
        (target,) = out
        target[...] = result
        return target
    return result


def _reduce(array: np.ndarray, operation: Any, axis: Any) -> Any:
    if axis is None:
        array, axis = array.reshape(-1), 0
    moved = np.moveaxis(array, axis, -1)
    out = np.empty(moved.shape[:-1], dtype=object)
    for index in np.ndindex(*out.shape):
        lane = list(moved[index])
        total = lane[0]
        for item in lane[1:]:
            total = operation(total, item)
        out[index] = total
    return out[()] if out.ndim == 0 else settle(out)


def settle(result: Any) -> Any:
    """An elementwise result: a :class:`NoisyArray` while it holds noisy values, else numpy's plain
    dtype (bool for comparisons); a 0-d result as its element."""
    if not isinstance(result, np.ndarray):
        return result
    if result.ndim == 0:
        return result[()]
    if any(isinstance(item, Noisy) for item in result.flat):
        return result.view(NoisyArray) if type(result) is not NoisyArray else result
    return np.array(result.tolist())


class NoisyArray(np.ndarray):
    """An object array of noisy values (what ``rng.laplace(size=k)`` returns, and numpy arithmetic on
    it): elementwise arithmetic and comparisons as :class:`Noisy`, and ``argmax``/``argmin``/``max``/
    ``min``/``sort``/``argsort`` as one choice each (module docstring)."""

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _array_ufunc(self._run_rng(), ufunc, method, inputs, kwargs)

    def _run_rng(self) -> ExactRandom:
        for item in self.flat:
            if isinstance(item, Noisy):
                return item._rng
        raise AssertionError("dpverify internal error: a NoisyArray without a noisy value")

    def _lanes(self, axis: Any, choose: Callable[[list[Any]], Any]) -> Any:
        array = self.view(np.ndarray)
        if axis is None:
            return choose(list(array.reshape(-1)))
        moved = np.moveaxis(array, axis, -1)
        out = np.empty(moved.shape[:-1], dtype=object)
        for index in np.ndindex(*out.shape):
            out[index] = choose(list(moved[index]))
        return settle(out)

    def argmax(self, axis: Any = None, out: Any = None, **kwargs: Any) -> Any:
        rng = self._run_rng()
        return self._lanes(axis, lambda lane: rng._extreme(lane, largest=True))

    def argmin(self, axis: Any = None, out: Any = None, **kwargs: Any) -> Any:
        rng = self._run_rng()
        return self._lanes(axis, lambda lane: rng._extreme(lane, largest=False))

    def max(self, axis: Any = None, out: Any = None, **kwargs: Any) -> Any:
        rng = self._run_rng()
        return self._lanes(axis, lambda lane: lane[rng._extreme(lane, largest=True)])

    def min(self, axis: Any = None, out: Any = None, **kwargs: Any) -> Any:
        rng = self._run_rng()
        return self._lanes(axis, lambda lane: lane[rng._extreme(lane, largest=False)])

    def argsort(self, axis: Any = -1, kind: Any = None, order: Any = None, **kwargs: Any) -> Any:
        rng = self._run_rng()
        array = self.view(np.ndarray)
        stable = kind in ("stable", "mergesort") or kwargs.get("stable") is True
        if axis is None:
            return np.array(rng._order(list(array.reshape(-1)), stable=stable))
        moved = np.moveaxis(array, axis, -1)
        out = np.empty(moved.shape, dtype=np.intp)
        for index in np.ndindex(*moved.shape[:-1]):
            out[index] = rng._order(list(moved[index]), stable=stable)
        return np.moveaxis(out, -1, axis)

    def sort(self, axis: Any = -1, kind: Any = None, order: Any = None, **kwargs: Any) -> None:
        order_ = self.argsort(axis=axis, kind=kind)
        sorted_ = np.take_along_axis(self.view(np.ndarray), order_, axis=axis)
        self.view(np.ndarray)[...] = sorted_

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, **kwargs: Any) -> Any:
        return _reduce(self.view(np.ndarray), operator.add, axis)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, **kwargs: Any) -> Any:
        count = self.size if axis is None else self.shape[axis]
        return _reduce(self.view(np.ndarray), operator.add, axis) / count

    def tolist(self) -> Any:  # the elements themselves (Noisy), as an object array gives them
        return self.view(np.ndarray).tolist()

    def __array_function__(self, function: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if function in (np.sort,):
            (array, *rest) = args
            copy = np.array(array.view(np.ndarray), dtype=object).view(NoisyArray)
            copy.sort(*rest, **kwargs)
            return copy
        implementation = getattr(function, "_implementation", None)
        if implementation is None:
            return NotImplemented
        return implementation(*args, **kwargs)


def as_form(value: Any) -> Linear:
    """A noisy value's form, or a constant's (exact) form."""
    if isinstance(value, Noisy):
        return value.form
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MechanismError(f"a non-finite constant {value!r} was compared with noisy values")
        return Linear.constant(Fraction(value))
    return Linear.constant(Fraction(value))


# -- what an enumeration with traced noise gives -----------------------------------------------------------


@dataclass(frozen=True)
class TracedPath:
    """One execution path that drew continuous noise: its output (noisy values in it are their
    :class:`~dpverify.finite.sampler._linear.Linear` forms), its discrete mass (the product of its finite
    branch probabilities), its noise variables and its constraints (each ``form > 0``)."""

    output: Hashable
    mass: Fraction
    variables: tuple[NoiseVariable, ...]
    constraints: tuple[Linear, ...]


@dataclass(frozen=True)
class TracedOutputs:
    """A sampler's outputs on one dataset when some path drew continuous noise: the exact masses of
    the outputs of the paths that drew none (``atoms``) and every path that did. Its probabilities
    are integrals, computed by :mod:`dpverify.densities.traced`. ``floats``: a float constant was
    read as its binary value somewhere (a scale ``2.0 / 0.7``)."""

    atoms: dict[Hashable, Fraction]
    paths: tuple[TracedPath, ...]
    floats: bool


def without_redundant_cycles(constraints: Sequence[Linear], variables: Sequence[NoiseVariable]) -> tuple[Linear, ...]:
    """``constraints`` with those the others imply removed, when the comparisons link the variables in
    a cycle (Python's ``sorted`` compares ``a < b``, ``c < b`` and then ``a < c``, after which ``a < b``
    is implied): the region is the same, and the integrator needs a forest. Unchanged when they form
    none (the common case: nothing is computed)."""
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        while parent.setdefault(i, i) != i:
            i = parent[i]
        return i

    cyclic = False
    for form in constraints:
        if len(form.coefs) == 2:
            a, b = root(form.coefs[0][0]), root(form.coefs[1][0])
            if a == b:
                cyclic = True
                break
            parent[a] = b
    if not cyclic:
        return tuple(constraints)
    kept = list(constraints)
    for form in reversed(list(constraints)):
        rest = [other for other in kept if other is not form]
        if feasible([*rest, form.negated()], variables) is False:  # the others imply it
            kept = rest
    return tuple(kept)
