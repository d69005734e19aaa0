"""Argument checks and the one policy for reading numbers exactly.

Every public function of dpverify and of ``mechanisms`` validates its arguments through this
module, so one rule is worded one way everywhere: a message names the bad value (``name=value``),
states the rule and says what to do, e.g. ``"n must be an integer >= 1, got n=0; pass the dataset
size, e.g. n=4."``. Each check raises :class:`dpverify.errors.InvalidArgument` (a ``ValueError``)
and returns the value in the form the caller computes with (an ``int`` for an integer, the value
itself for a number).

Reading numbers exactly (:func:`exact_number`). dpverify computes certificates with exact numbers,
and a parameter or claim may be an ``int``, a :class:`~fractions.Fraction`, a ``float``, a sympy
number or a ``decimal.Decimal`` (:data:`dpverify.types.RealNumber`); a claim may also be stated as
an expression string (:data:`dpverify.types.Number`, below). Exact kinds are taken as they are.
A float ``x`` is read as the *simplest fraction that rounds to x* — the one with the smallest
denominator among all rationals whose nearest float is ``x`` (Common Lisp's ``rationalize``) — so
``0.1`` is 1/10, ``1/3`` typed as a float is 1/3, ``1/24`` is 1/24 (``ceil(epsilon * n)`` at
``n = 24`` is 1, not 2 through the float's binary excess), and ``math.log(3)`` is a fraction with a
denominator of about 10**8 that lies within half a unit in the last place of the float
(``float(exact_number(x)) == x`` always). A sympy ``Float`` is read the same way at its own
precision. This is the one reading: the checker's claims, the mechanisms' exact modes and the
command line all give ``0.1`` the value 1/10.

A float *claim* stands for any real number within its own rounding: ``epsilon=math.log(3)`` means
ln 3, which no float equals. :func:`claim_number` therefore checks a float claim at
``exact_number(x) * (1 + 2**-50)`` (a few units in the last place above, enough for a library
function such as ``math.log`` that is not correctly rounded, and for a mechanism computing with the
float's binary value), so randomized response with ``p = 3/4`` holds at ``math.log(3)`` and is
violated at ``math.log(3) - 1e-9``. Exact claims (``Fraction``, ``sympy.log(3)``) get no allowance.
Probabilities returned by a mechanism are not parameters: a float probability is its binary value
with the engine's float error model around it (see :mod:`dpverify.verdict.engine`).

Expression strings (:func:`number_from_text`). A claim may state its parameters as text, as the
command line does: ``"ln(2)"`` is ``sympy.log(2)``, ``"1/3"`` is ``Fraction(1, 3)``, and a decimal
literal ``"0.1"`` is the float ``0.1`` (so ``--epsilon 0.1``, ``PureDp("0.1")`` and ``PureDp(0.1)``
are one claim). Only numbers, ``+ - * / ** ( )`` and the names ``log``, ``ln``, ``exp``, ``sqrt``,
``pi``, ``E`` are read; nothing else is evaluated. Strings are read where a claim is made (the claim
values of :mod:`dpverify.verdict.claims` read them on construction, so ``verify(epsilon="ln(2)")``
works) and nowhere else: :func:`exact_number` and the ``check_*`` functions refuse them, so the
parameters of a mechanism stay numbers (a ``check_*`` function returns the value it was given, and
a string accepted there would reach arithmetic unread).
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Iterable
from fractions import Fraction
from numbers import Integral, Real
from typing import Any

from dpverify.errors import InvalidArgument

__all__ = [
    "FLOAT_CLAIM_ALLOWANCE",
    "exact_number",
    "number_from_text",
    "EXPRESSION_NAMES",
    "claim_number",
    "simplest_fraction",
    "check_integer",
    "check_number",
    "check_positive",
    "check_probability",
    "check_epsilon",
    "check_delta",
    "check_type",
    "check_choice",
    "check_bool",
    "check_callable",
    "required_positionals",
    "arity_advice",
]

#: Relative allowance a float claim gets above its exact reading (a few units in the last place).
FLOAT_CLAIM_ALLOWANCE = Fraction(1, 2**50)


def _message(name: str, value: Any, rule: str, *, what: str | None = None, fix: str | None = None) -> str:
    subject = f"{name} ({what})" if what else name
    text = f"{subject} must be {rule}, got {name}={value!r}"
    if fix:
        text += f"; {fix.rstrip('.')}"
    return text + "."


def _sympy_basic() -> Any:
    """``sympy.Basic`` if sympy is imported, else ``()``: a sympy value implies an imported sympy."""
    return getattr(sys.modules.get("sympy"), "Basic", ())


def _is_decimal(value: Any) -> bool:
    return isinstance(value, getattr(sys.modules.get("decimal"), "Decimal", ()))


# -- reading numbers exactly ---------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def simplest_fraction(value: float) -> Fraction:
    """The simplest fraction that rounds to the float ``value`` (smallest denominator, then
    smallest numerator, in the open interval of reals whose nearest float is ``value``)."""
    if not math.isfinite(value):
        raise InvalidArgument(_message("value", value, "a finite number"))
    if value == 0:
        return Fraction(0)
    if value < 0:
        return -simplest_fraction(-value)
    exact = Fraction(value)
    below = Fraction(math.nextafter(value, 0.0))
    above_float = math.nextafter(value, math.inf)
    above = Fraction(above_float) if math.isfinite(above_float) else 2 * exact - below
    return _simplest_between((exact + below) / 2, (exact + above) / 2)


def _simplest_between(low: Fraction, high: Fraction) -> Fraction:
    """The fraction of smallest denominator in the open interval ``(low, high)``, ``0 <= low < high``,
    by continued fractions (the Stern–Brocot descent)."""
    terms: list[int] = []
    while True:
        whole = low.numerator // low.denominator
        if whole + 1 < high:  # the smallest integer above low lies inside
            terms.append(whole + 1)
            break
        terms.append(whole)
        if low == whole:  # (whole, high) with high <= whole + 1: whole + 1/y, y > 1/(high - whole)
            terms.append(math.floor(1 / (high - whole)) + 1)
            break
        low, high = 1 / (high - whole), 1 / (low - whole)
    result = Fraction(terms[-1])
    for term in reversed(terms[:-1]):
        result = term + 1 / result
    return result


def _sympy_float_fraction(value: Any) -> Fraction:
    """A sympy ``Float`` read like a float, at its own precision."""
    sign, mantissa, exponent, bits = value._mpf_
    if not mantissa:
        return Fraction(0)
    exact = Fraction(mantissa) * Fraction(2) ** exponent
    half_unit = Fraction(2) ** (exponent + bits - value._prec - 1)
    result = _simplest_between(exact - half_unit, exact + half_unit)
    return -result if sign else result


#: The names an expression string may use (:func:`number_from_text`); ``ln`` is ``log``.
EXPRESSION_NAMES = frozenset({"log", "ln", "exp", "sqrt", "pi", "E"})


def number_from_text(name: str, text: str) -> Any:
    """The number an expression string spells (module docstring, "Expression strings").

    A float literal (``"0.1"``, ``"1e-5"``) stays a float, read like ``0.1`` in Python; an
    expression of numbers, ``+ - * / ** ( )`` and :data:`EXPRESSION_NAMES` becomes an exact value:
    a Fraction when rational (``"1/3"``), else a sympy number (``"ln(2)"`` is ``log(2)``). Nothing
    else is evaluated.

    Raises:
        InvalidArgument: another name or character, or an expression that is not a finite real
            number; the message names ``name`` and the string.
    """
    try:
        return float(text)
    except ValueError:
        pass
    names = set(re.findall(r"[A-Za-z_]+", text))
    if not re.fullmatch(r"[0-9A-Za-z_+\-*/().\s]+", text) or not names <= EXPRESSION_NAMES:
        raise InvalidArgument(
            f"{name} must be a number or an expression such as log(3) or 1/3 (names allowed: "
            f"{', '.join(sorted(EXPRESSION_NAMES))}), got {name}={text!r}."
        )
    import sympy  # only for expressions: reading numbers needs no sympy

    try:
        value = sympy.sympify(text.replace("ln", "log"), rational=True)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
        value = None
    if not isinstance(value, sympy.Basic) or value.free_symbols or not value.is_real:
        raise InvalidArgument(f"{name} must be a real number or expression like log(3), got {name}={text!r}.")
    return exact_number(name, value)


def exact_number(name: str, value: Any, *, fix: str | None = None) -> Any:
    """``value`` as an exact number, by the one policy of this module's docstring.

    Returns a :class:`~fractions.Fraction` for every rational input (``int``, ``Fraction``,
    ``Decimal``, a sympy rational; a float or sympy ``Float`` as the simplest fraction that rounds
    to it; any other real type through ``float()``), and an irrational sympy number (``log(3)``)
    unchanged. A string is refused: :func:`number_from_text` reads one.

    Raises:
        InvalidArgument: not a real number, not finite, or a sympy expression with free symbols.
    """
    if isinstance(value, bool):
        raise InvalidArgument(_message(name, value, "a real number (int, float, Fraction or sympy), not a bool", fix=fix))
    if isinstance(value, Fraction):
        return value
    if isinstance(value, Integral):
        return Fraction(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument(_message(name, value, "a finite real number", fix=fix))
        return simplest_fraction(value)
    basic = _sympy_basic()
    if isinstance(value, basic):
        return _exact_sympy(name, value, fix)
    if _is_decimal(value):
        if not value.is_finite():
            raise InvalidArgument(_message(name, value, "a finite real number", fix=fix))
        return Fraction(value)
    if isinstance(value, Real):
        return exact_number(name, float(value), fix=fix)
    raise InvalidArgument(_message(name, value, "a real number (int, float, Fraction or sympy)", fix=fix))


def _exact_sympy(name: str, value: Any, fix: str | None) -> Any:
    import sympy  # already imported: value is a sympy object

    if value.free_symbols:
        raise InvalidArgument(
            f"{name} must be a number, got the symbolic {name}={value}; substitute numbers for "
            f"{sorted(map(str, value.free_symbols))} first."
        )
    if value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) or value.is_extended_real is not True or value.is_finite is False:
        raise InvalidArgument(_message(name, value, "a finite real number", fix=fix))
    if isinstance(value, sympy.Float):
        return _sympy_float_fraction(value)
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    return value


def claim_number(name: str, value: Any) -> Any:
    """The exact number a claimed epsilon or delta is checked at: :func:`exact_number`, raised by the
    relative :data:`FLOAT_CLAIM_ALLOWANCE` when the claim is a float (a float stands for any real
    within its rounding; see the module docstring)."""
    number = exact_number(name, value)
    if isinstance(value, float) or type(value).__name__ == "Float":
        return number * (1 + FLOAT_CLAIM_ALLOWANCE)
    return number


def _sign(number: Any) -> int:
    """The sign of an exact number (Fraction, or a real sympy number; float as a last resort)."""
    if isinstance(number, Fraction):
        return (number > 0) - (number < 0)
    if number.is_zero:
        return 0
    if number.is_positive:
        return 1
    if number.is_negative:
        return -1
    approx = float(number.evalf(60))
    return (approx > 0) - (approx < 0)


def _compare(value: Any, number: Any, bound: Any) -> int:
    """The sign of ``value - bound``; ``number`` is ``value`` read exactly, ``bound`` any number
    (read exactly too)."""
    if isinstance(value, float) and isinstance(bound, int):
        # An integer is a float, and the simplest fraction rounding to a float lies on the same
        # side of every float as the float itself: compare the float directly (fast path).
        return (value > bound) - (value < bound)
    return _sign(number - exact_number("bound", bound))


# -- checks --------------------------------------------------------------------------------------


def check_integer(
    name: str, value: Any, *, at_least: int | None = None, at_most: int | None = None,
    what: str | None = None, fix: str | None = None,
) -> int:
    """``value`` as an ``int`` (any integral type, never a bool) within ``[at_least, at_most]``."""
    if at_least is not None and at_most is not None:
        rule = f"an integer in [{at_least}, {at_most}]"
    elif at_least is not None:
        rule = f"an integer >= {at_least}"
    elif at_most is not None:
        rule = f"an integer <= {at_most}"
    else:
        rule = "an integer"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidArgument(_message(name, value, rule, what=what, fix=fix))
    number = int(value)
    if (at_least is not None and number < at_least) or (at_most is not None and number > at_most):
        raise InvalidArgument(_message(name, value, rule, what=what, fix=fix))
    return number


def check_number(
    name: str, value: Any, *, at_least: Any = None, above: Any = None, at_most: Any = None,
    what: str | None = None, fix: str | None = None,
) -> Any:
    """A finite real number (see :func:`exact_number` for the kinds accepted) with optional bounds,
    compared exactly; returns ``value`` unchanged."""
    kind = type(value)
    if (kind is int or (kind is float and math.isfinite(value))) and all(
        type(b) is int for b in (at_least, above, at_most) if b is not None
    ):
        # Hot path (mechanisms validate every score): a plain int or finite float against integer
        # bounds compares exactly as it stands (see _compare); messages are built only on failure.
        if not (
            (at_least is None or value >= at_least)
            and (above is None or value > above)
            and (at_most is None or value <= at_most)
        ):
            return _check_number_slow(name, value, at_least=at_least, above=above, at_most=at_most, what=what, fix=fix)
        return value
    return _check_number_slow(name, value, at_least=at_least, above=above, at_most=at_most, what=what, fix=fix)


def _check_number_slow(
    name: str, value: Any, *, at_least: Any, above: Any, at_most: Any, what: str | None, fix: str | None,
) -> Any:
    lower = f"[{at_least}" if at_least is not None else f"({above}" if above is not None else None
    if lower is not None and at_most is not None:
        rule = f"in {lower}, {at_most}]"
    elif at_least is not None:
        rule = f">= {at_least}"
    elif above is not None:
        rule = f"> {above}"
    elif at_most is not None:
        rule = f"<= {at_most}"
    else:
        rule = None
    if isinstance(value, bool):
        raise InvalidArgument(_message(name, value, "a real number, not a bool", what=what, fix=fix))
    if isinstance(value, float) and math.isnan(value):
        raise InvalidArgument(_message(name, value, rule or "a real number, not nan", what=what, fix=fix))
    if isinstance(value, float) and math.isinf(value):
        raise InvalidArgument(_message(name, value, "finite", what=what, fix=fix))
    if isinstance(value, float) and all(isinstance(b, int) for b in (at_least, above, at_most) if b is not None):
        number = value  # compared as a float (see _compare); read exactly only where needed
    else:
        number = _read(name, value, what, fix)
    for bound, ok in ((at_least, lambda s: s >= 0), (above, lambda s: s > 0), (at_most, lambda s: s <= 0)):
        if bound is not None and not ok(_compare(value, number, bound)):
            raise InvalidArgument(_message(name, value, str(rule), what=what, fix=fix))
    return value


def _read(name: str, value: Any, what: str | None, fix: str | None) -> Any:
    try:
        return exact_number(name, value, fix=fix)
    except InvalidArgument:
        if isinstance(value, (Real, _sympy_basic())) or _is_decimal(value):
            raise
        raise InvalidArgument(_message(name, value, "a number", what=what, fix=fix)) from None


def check_positive(name: str, value: Any, *, what: str | None = None, fix: str | None = None) -> Any:
    """A finite real number > 0."""
    return check_number(name, value, above=0, what=what, fix=fix)


def check_probability(name: str, value: Any, *, what: str | None = None, fix: str | None = None) -> Any:
    """A real number in [0, 1]."""
    return check_number(name, value, at_least=0, at_most=1, what=what, fix=fix)


#: What a NaN privacy parameter is told.
_NAN_CLAIM = "NaN is not a number a privacy claim can state; give an epsilon such as 1, 0.5 or log(3)"
_NAN_DELTA = "NaN is not a number a privacy claim can state; give a delta such as 0 or 1e-5"


def check_epsilon(value: Any, name: str = "epsilon", *, positive: bool = False, fix: str | None = None) -> Any:
    """A privacy parameter epsilon: a finite real number >= 0 (> 0 with ``positive``)."""
    if isinstance(value, float) and math.isinf(value):
        raise InvalidArgument(_message(name, value, "finite", fix=fix or "an infinite epsilon claims nothing"))
    if isinstance(value, float) and math.isnan(value):
        raise InvalidArgument(_message(name, value, "a number", fix=fix or _NAN_CLAIM))
    if not isinstance(value, float):
        check_number(name, value)  # a non-number is named as such, without the sign rule's fix
    if positive:
        return check_number(name, value, above=0, fix=fix)
    return check_number(name, value, at_least=0, fix=fix or "privacy parameters are non-negative")


def check_delta(value: Any, name: str = "delta", *, fix: str | None = None) -> Any:
    """A privacy parameter delta: a real number in [0, 1]."""
    if isinstance(value, float) and math.isnan(value):
        raise InvalidArgument(_message(name, value, "a number in [0, 1]", fix=fix or _NAN_DELTA))
    return check_number(name, value, at_least=0, at_most=1, fix=fix)


def check_type(name: str, value: Any, types: type | tuple[type, ...], *, what: str | None = None, fix: str | None = None) -> Any:
    """``value`` if it is an instance of ``types`` (a bool is never accepted for a number type)."""
    kinds = types if isinstance(types, tuple) else (types,)
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return value
    names = " or ".join(k.__name__ for k in kinds)
    raise InvalidArgument(
        _message(name, value, f"a {names} (not {type(value).__name__})", what=what, fix=fix)
    )


def check_choice(name: str, value: Any, choices: Iterable[Any], *, what: str | None = None, fix: str | None = None) -> Any:
    """``value`` if it is one of ``choices``; else "unknown <what> name=value; choose one of [...]"."""
    options = list(choices)
    try:
        found = value in options
    except TypeError:
        found = False
    if found:
        return value
    text = f"unknown {what or name} {name}={value!r}; choose one of {options}"
    if fix:
        text += f" {fix.rstrip('.')}"
    raise InvalidArgument(text + ".")


def check_bool(name: str, value: Any, *, fix: str | None = None) -> bool:
    """``value`` if it is True or False (not 1, 0 or None)."""
    if isinstance(value, bool):
        return value
    raise InvalidArgument(_message(name, value, "True or False", fix=fix))


def check_callable(name: str, value: Any, *, what: str | None = None, fix: str | None = None) -> Any:
    """``value`` if it is callable."""
    if callable(value):
        return value
    raise InvalidArgument(_message(name, value, "callable", what=what, fix=fix))


def required_positionals(function: Any) -> list[str]:
    """The positional arguments ``function`` requires (none when its signature cannot be read)."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in parameters if p.kind in positional and p.default is inspect.Parameter.empty]


#: Parameter names that say "a random generator": a function (dataset, <one of these>) is a sampler.
_GENERATOR_NAMES = frozenset({"rng", "random_state", "generator", "gen", "prng", "random", "randomness", "seed",
                              "rnd", "rand", "r"})


def arity_advice(name: str, required: list[str], *, called: tuple[str, ...] = ("dataset",),
                 command_line: bool = False) -> str | None:
    """Why ``name``, requiring the positional arguments ``required``, cannot be called with the
    arguments ``called`` it will get (a mechanism's ``("dataset",)``, a sampler's ``("dataset",
    "rng")``, a semi-private learner's ``("public", "dataset")``), and the fix; None when it can. The
    command line and audit files give the same advice."""
    takes = len(called)
    if len(required) <= takes:
        return None
    extra = required[takes:]
    if takes == 1 and len(required) == 2 and required[1].lower() in _GENERATOR_NAMES:
        return (f"{name} requires 2 arguments ({', '.join(required)}) where a mechanism takes the dataset alone: "
                f"it looks like a sampler (dataset, {required[1]}); "
                + ("add --sampler (every path of its random choices enumerated exactly), or --estimate (run on a real "
                   "random generator)." if command_line else
                   "wrap it: dpverify.from_sampler(" + name.rsplit(":", 1)[-1] + ")."))
    shown = required[-1]
    example = f"{shown}=1.0"
    bind = (f"give {'them' if len(extra) > 1 else 'it'} a value: a default in the definition (def "
            f"{name.rsplit(':', 1)[-1]}({', '.join(required[:takes])}, {example})), or "
            f"functools.partial({name.rsplit(':', 1)[-1]}, {example}) assigned to a name")
    if command_line:
        bind += f", or on the command line --set {example}"
    shown_call = "the dataset alone" if called == ("dataset",) else f"({', '.join(called)})"
    return (f"{name} requires {len(required)} arguments ({', '.join(required)}) where it is called with {shown_call}: "
            f"{', '.join(extra)} {'have' if len(extra) > 1 else 'has'} no value; {bind}.")
