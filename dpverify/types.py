"""The public type names of dpverify: what its functions take, in one place, for a type checker.

dpverify ships ``py.typed``; these names are what its public signatures say instead of ``Any``:

* :data:`Number` — a privacy parameter as a claim states it: an ``int``, ``float``,
  :class:`~fractions.Fraction`, :class:`~decimal.Decimal`, a sympy number (``sympy.log(3)``) or an
  expression string (``"ln(2)"``, ``"1/3"``), read when the claim is made
  (:func:`dpverify.validation.number_from_text`). :data:`RealNumber` is the same without the
  string: a probability, or a parameter of a function that takes numbers only.
* :class:`Mechanism` — ``dataset -> {outcome: probability}``, the exact output distribution.
  :class:`PublicMechanism` is ``(public, dataset) -> {outcome: probability}``.
* :class:`Sampler` — ``(dataset, rng) -> output``, one draw (for ``from_sampler`` and
  ``estimate``).
* :data:`ExecutorSpec` — where the work runs: ``None``, ``"serial"``, ``"processes"``,
  ``"dask"``, a :class:`concurrent.futures.Executor` or a Dask client (:class:`DaskClient`).
* :data:`Dataset` — a tuple of records.

Two choices are forced by how type checkers compare callables. A parameter of a protocol must
accept whatever the caller's function is annotated with (parameters are contravariant), so a
dataset is ``tuple[Any, ...]``, not ``tuple[Hashable, ...]``: a mechanism annotated
``(dataset: tuple[int, ...])`` fits the first and not the second. And ``Mapping`` is invariant in its
key, so a mechanism's outcomes are ``Any``: ``Mapping[Hashable, float]`` would refuse a
``dict[int, float]``. Hashability and the numbers themselves are checked at run time, as before.

sympy ships no type information, so a type checker sees sympy values as ``Any``; a sympy number is
therefore described by :class:`SympyNumber`, the two attributes of sympy's numbers that dpverify
relies on, which no list, dict or string has. Importing this module costs nothing beyond the
standard library's ``typing`` and ``fractions`` (no numpy, no sympy, no ``concurrent.futures``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, Union, runtime_checkable

if TYPE_CHECKING:
    import concurrent.futures
    from decimal import Decimal

__all__ = [
    "Number",
    "RealNumber",
    "SympyNumber",
    "Dataset",
    "Mechanism",
    "PublicMechanism",
    "Sampler",
    "DaskClient",
    "ExecutorSpec",
]


class SympyNumber(Protocol):
    """A sympy number (``sympy.log(3)``, ``sympy.Rational(1, 3)``): what dpverify reads of one.

    dpverify requires no free symbols (``epsilon=sympy.Symbol("e")`` is refused, naming the symbol)
    and evaluates to any precision with ``evalf``.
    """

    @property
    def free_symbols(self) -> Any: ...

    def evalf(self, n: int = ...) -> Any: ...

    def __float__(self) -> float: ...


#: A real number: an int, float, Fraction, Decimal or sympy number (a probability, a mass bound).
RealNumber: TypeAlias = Union[int, float, Fraction, "Decimal", SympyNumber]
#: A privacy parameter as a claim states it: a :data:`RealNumber` or an expression string such as
#: ``"ln(2)"`` or ``"1/3"`` (numbers, ``+ - * / ** ( )`` and ``log``, ``ln``, ``exp``, ``sqrt``,
#: ``pi``, ``E``), read when the claim is made (:func:`dpverify.validation.number_from_text`); a
#: decimal string (``"0.1"``) is the float it spells, as on the command line.
Number: TypeAlias = RealNumber | str

#: A dataset: a tuple of (hashable) records. ``Any`` records, so that a mechanism may annotate its
#: own (``tuple[int, ...]``); see the module docstring.
Dataset: TypeAlias = tuple[Any, ...]


@runtime_checkable
class Mechanism(Protocol):
    """A randomized algorithm given by its exact output distribution: ``dataset -> {outcome: P}``.

    The mapping's values are probabilities (float, int, Fraction or sympy numbers) summing to 1;
    outcomes are any hashable values. Returning a :class:`dpverify.Distribution` validates that.
    """

    def __call__(self, dataset: Dataset, /) -> Mapping[Any, Any]: ...


class PublicMechanism(Protocol):
    """A mechanism with a public part: ``(public, dataset) -> {outcome: P}``, private in ``dataset``
    for every public sample (:func:`dpverify.verify` on :class:`~dpverify.checking.front.PublicData`)."""

    def __call__(self, public: tuple[Any, ...], dataset: Dataset, /) -> Mapping[Any, Any]: ...


class Sampler(Protocol):
    """Sampling code: ``sampler(dataset, rng)`` returns one output drawn with ``rng``.

    ``rng`` is whatever the caller passes: dpverify's exact generator under :func:`dpverify.from_sampler`
    (it answers numpy's ``Generator``, ``RandomState`` and ``random.Random`` calls), a
    :class:`numpy.random.Generator` under :func:`dpverify.estimate`. The output is
    ``object``: a list or numpy array is accepted (``from_sampler`` makes it a tuple;
    ``estimate`` reads vectors), so ``Hashable`` would refuse valid samplers.
    """

    def __call__(self, dataset: Dataset, rng: Any, /) -> object: ...


class DaskClient(Protocol):
    """A ``dask.distributed.Client`` as dpverify uses it (recognised at run time by its class)."""

    def submit(self, function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...

    def scatter(self, data: Any, /, *args: Any, **kwargs: Any) -> Any: ...

    def scheduler_info(self, *args: Any, **kwargs: Any) -> Any: ...


#: Where the work runs (:mod:`dpverify.parallel.executors`): None or ``"serial"`` (here),
#: ``"processes"`` (a pool made for the call), ``"dask"`` (a LocalCluster made for the call), a
#: ``concurrent.futures.Executor`` or a Dask client (used as they are, not shut down).
ExecutorSpec: TypeAlias = Union[Literal["serial", "processes", "dask"], "concurrent.futures.Executor", DaskClient, None]

