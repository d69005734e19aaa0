"""numpy on lazy values: the ufuncs (``np.log(x)``, ``np.floor(x)``, ``x < array``, ...) and the
functions (``np.isclose``) that a lazy uniform answers through ``__array_ufunc__`` and
``__array_function__``.

A ufunc on lazy operands applies the scalar operation the lazy value defines (``np.log(x)`` is
``x.log()``, ``np.floor(x)`` is ``math.floor(x)`` as a float, ``np.less(x, t)`` is ``x < t``), once
for scalars and elementwise (``np.frompyfunc`` over object arrays) when an operand is an array: a
result without lazy values is converted to the plain dtype numpy would give (bool for comparisons,
float for ``np.floor``). ``np.isclose`` is answered by its formula applied exactly (see
:meth:`LazyUniform._within <dpverify.finite.sampler._lazy.LazyUniform>`); every other numpy function runs
numpy's own implementation (``np.round(x)`` then calls ``x.round()``).

Functions here take the lazy class as an argument (``lazy_type``) rather than importing it: the
class imports this module.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["array_ufunc", "array_function", "objects"]


def _maximum(first: Any, second: Any) -> Any:
    return second if first < second else first


def _minimum(first: Any, second: Any) -> Any:
    return second if second < first else first


def _clip(value: Any, low: Any, high: Any) -> Any:
    if low is not None:
        value = _maximum(value, low)
    return value if high is None else _minimum(value, high)


def _method(name: str) -> Callable[[Any], Any]:
    return lambda value: getattr(value, name)()


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
    "equal": operator.eq, "not_equal": operator.ne,
}

#: The scalar operation of each ufunc dpverify follows on a lazy operand.
_UFUNCS: dict[str, Callable[..., Any]] = {
    **_COMPARISONS,
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
    "floor_divide": operator.floordiv, "remainder": operator.mod, "power": operator.pow, "float_power": operator.pow,
    "negative": operator.neg, "positive": operator.pos, "absolute": abs, "fabs": abs,
    "square": lambda value: value**2, "reciprocal": lambda value: 1 / value,
    **{name: _method(name) for name in ("log", "log2", "log10", "log1p", "exp", "exp2", "expm1", "sqrt", "cbrt", "rint")},
    "floor": lambda value: np.float64(math.floor(value)), "ceil": lambda value: np.float64(math.ceil(value)),
    "trunc": lambda value: np.float64(math.trunc(value)), "sign": lambda value: value._numpy_sign(),
    "maximum": _maximum, "fmax": _maximum, "minimum": _minimum, "fmin": _minimum, "clip": _clip,
    "isnan": lambda value: False, "isinf": lambda value: False, "isfinite": lambda value: True,  # f(u) is a real number
}


def objects(operand: Any, lazy_type: Any) -> np.ndarray:
    """``operand`` as an object array (a lazy value boxed in a 0-d one; numpy scalars as Python's)."""
    if isinstance(operand, lazy_type):
        boxed = np.empty((), dtype=object)
        boxed[()] = operand
        return boxed
    return np.asarray(operand).astype(object)


def _settle(result: Any, lazy_type: Any) -> Any:
    """An elementwise result: kept as objects while it holds lazy values, else numpy's plain dtype."""
    if not isinstance(result, np.ndarray):
        return result
    if any(isinstance(item, lazy_type) for item in result.flat):
        return result
    return np.array(result.tolist())


def array_ufunc(value: Any, lazy_type: Any, ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc(*inputs)`` where ``value`` (a lazy operand) asked: see the module docstring."""
    name = ufunc.__name__
    operation = _UFUNCS.get(name)
    given = {key: option for key, option in kwargs.items() if option is not None}
    if operation is None or method != "__call__" or given:
        call = f"numpy.{name}" + ("" if method == "__call__" else f".{method}")
        options = "".join(f", {key}=..." for key in given)
        value._refuse(
            f"called {call}(..., {options[2:]}) on {value._name()}" if options else f"called {call} on {value._name()}",
            "it is not one of the maps dpverify follows (with no out=, where= or dtype=)",
        )
    assert operation is not None

    def apply(*operands: Any) -> Any:
        operands = tuple(o.item() if isinstance(o, np.generic) else o for o in operands)
        if not any(isinstance(operand, lazy_type) for operand in operands):
            return ufunc(*operands)
        return operation(*operands)

    if not any(isinstance(operand, np.ndarray) for operand in inputs):
        return apply(*inputs)
    make_ufunc: Any = np.frompyfunc  # numpy's stubs type it by the number of outputs
    return _settle(make_ufunc(apply, ufunc.nin, 1)(*(objects(o, lazy_type) for o in inputs)), lazy_type)


def array_function(value: Any, lazy_type: Any, function: Any, args: tuple, kwargs: dict) -> Any:
    """A numpy function called with a lazy argument: ``np.isclose``/``np.allclose`` exactly, the rest
    by numpy's own implementation."""
    if function is np.isclose or function is np.allclose:
        close = _isclose(lazy_type, *args, **kwargs)
        return close if function is np.isclose else bool(np.all(close))
    implementation = getattr(function, "_implementation", None)
    if implementation is None:
        return NotImplemented
    return implementation(*args, **kwargs)


def _isclose(lazy_type: Any, a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    def close(first: Any, second: Any) -> bool:
        if isinstance(second, lazy_type):  # the tolerance depends on |b|: lazy arithmetic, split at the kinks
            return bool(abs(first - second) <= atol + rtol * abs(second))
        if isinstance(first, lazy_type):
            return first._within(second, rtol, atol)
        return bool(np.isclose(first, second, rtol=rtol, atol=atol, equal_nan=equal_nan))

    if np.ndim(a) == 0 and np.ndim(b) == 0:
        return close(a, b)
    make_ufunc: Any = np.frompyfunc
    return np.asarray(make_ufunc(close, 2, 1)(objects(a, lazy_type), objects(b, lazy_type)), dtype=bool)
