"""Python's view of the exact rng: ``random.Random`` and ``secrets.SystemRandom`` meanings, every draw
answered by the exact rng of the run.

``rng.python`` (:class:`PythonRandom`) is an instance of ``random.SystemRandom``, hence of
``random.Random``, so code that checks ``isinstance(x, secrets.SystemRandom)`` (diffprivlib's
``check_random_state``) or ``isinstance(x, random.Random)`` accepts it. It cannot be the exact rng
itself: CPython refuses a class deriving from both numpy's ``RandomState`` and ``random.Random``
(their C instance layouts conflict), so it is a second object that delegates each draw to the
exact rng it belongs to. Draws are choice points of the current run, as on the exact rng.

Where numpy's and Python's meanings differ, the view answers Python's: ``randint(a, b)`` includes
``b`` (numpy's ``rng.randint`` excludes ``high``) and ``choice(seq)`` takes a sequence only (numpy's
``rng.choice(n)`` draws from ``range(n)``). Continuous draws (``uniform``, ``gauss``, ...), bytes and
the generator's state are refused with a :class:`~dpverify.errors.MechanismError` naming the call,
and so is every other public name of ``random.Random`` and ``random.SystemRandom`` (by construction,
:func:`~dpverify.finite.sampler._refusals.refuse_the_rest`). The routed module-level calls of
:mod:`dpverify.finite.sampler._routing` (``random.random()``, ``SystemRandom()``, ``secrets.choice``) land here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument, MechanismError
from dpverify.finite._numbers import WAYS_ON, _arguments, _integer
from dpverify.finite.sampler._noise import STATISTICAL_WAY
from dpverify.finite.sampler._refusals import PYTHON_APIS, refuse_the_rest

__all__ = ["PythonRandom", "COPY_REFUSAL"]

COPY_REFUSAL = (
    "is refused: a copy of a generator (copy.copy, copy.deepcopy, pickle) replays the stream of the original, and the "
    "exact rng has no stream (each draw is a choice point of the run, enumerated); pass the rng itself"
)


class PythonRandom(random.SystemRandom):
    """``random.Random`` / ``secrets.SystemRandom`` over the exact rng ``exact`` (module docstring):
    ``random()`` is a lazy uniform, integer and sequence draws are uniform choice points."""

    def __new__(cls, exact: Any) -> PythonRandom:
        return super().__new__(cls)  # seeded from the OS and never used: no draw goes to the C generator

    def __init__(self, exact: Any) -> None:  # random.Random.__init__ would call seed(), refused here
        self._exact = exact

    def random(self) -> Any:
        """A lazy uniform on [0, 1) (see :class:`~dpverify.finite.sampler._lazy.LazyUniform`)."""
        return self._exact.random()

    def randrange(self, start: Any, stop: Any = None, step: Any = 1) -> int:
        """A uniform element of ``range(start, stop, step)`` (``range(start)`` without stop)."""
        return self._exact.randrange(start, stop, step)

    def gauss(self, mu: Any = 0.0, sigma: Any = 1.0) -> Any:
        """A traced Gaussian value ``mu + N(0, sigma^2)``: released only (see
        :meth:`dpverify.finite.sampler._noise_draws.NoiseDraws.normal`)."""
        return self._exact.gauss(mu, sigma)

    normalvariate = gauss

    def expovariate(self, lambd: Any = 1.0) -> Any:
        """A traced exponential value of rate ``lambd`` (scale ``1 / lambd``; see
        :mod:`dpverify.finite.sampler._noise`)."""
        from fractions import Fraction

        from dpverify.finite._numbers import _number

        rate, inexact = _number("random.expovariate", "lambd", lambd)
        if rate <= 0:
            raise InvalidArgument(f"random.expovariate: lambd must be > 0 (a rate), got lambd={lambd!r}.")
        value = self._exact.exponential(1 / Fraction(rate))
        if inexact:
            self._exact._noise.floats = True
        return value

    def randint(self, a: Any, b: Any) -> int:
        """A uniform integer in ``[a, b]``, both ends included (Python's meaning)."""
        return self._exact.randrange(a, _integer("rng.python.randint", "b", b) + 1)

    def choice(self, seq: Any) -> Any:
        """A uniform element of the non-empty sequence ``seq``."""
        if isinstance(seq, (Integral, np.integer)):
            raise InvalidArgument(
                f"rng.python.choice: seq must be a sequence, got the integer {seq!r}; Python's choice takes a "
                "sequence (numpy's rng.choice(n) draws from range(n))."
            )
        return self._exact.choice(seq)

    def choices(self, population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1) -> list:
        """``k`` draws with replacement, uniform or by relative ``weights`` (or ``cum_weights``)."""
        return self._exact.choices(population, weights, cum_weights=cum_weights, k=k)

    def sample(self, population: Any, k: Any, *, counts: Any = None) -> list:
        """``k`` elements without replacement, in a uniformly random order."""
        return self._exact.sample(population, k, counts=counts)

    def shuffle(self, x: Any, random: Any = None) -> None:
        """Shuffle the mutable sequence ``x`` in place, uniformly (``random=``, Python 3.10's own source
        of uniforms, removed in 3.11, is refused)."""
        if random is not None:
            raise InvalidArgument(
                "rng.python.shuffle: random= (a function to draw the uniforms from, removed in Python 3.11) is not "
                "supported; call shuffle(x) and the exact rng draws the permutation."
            )
        self._exact.shuffle(x)

    def getrandbits(self, k: Any) -> int:
        """A uniform integer in ``[0, 2**k)``."""
        return self._exact.getrandbits(k)

    def binomialvariate(self, n: Any = 1, p: Any = 0.5) -> int:
        """Python 3.12's ``binomialvariate``: Binomial(n, p)."""
        return self._exact.binomialvariate(n, p)

    def _randbelow(self, n: Any) -> int:
        """A uniform integer in ``[0, n)`` (what ``secrets.randbelow`` and Python's own draws call)."""
        return self._exact.randrange(n)

    _randbelow_with_getrandbits = _randbelow_without_getrandbits = _randbelow

    def __reduce_ex__(self, protocol: Any) -> Any:
        _refuse(self, f"copying rng.python {COPY_REFUSAL}")

    def __copy__(self) -> Any:
        _refuse(self, f"copy.copy(rng.python) {COPY_REFUSAL}")

    def __deepcopy__(self, memo: Any) -> Any:
        _refuse(self, f"copy.deepcopy(rng.python) {COPY_REFUSAL}")

    def __repr__(self) -> str:
        return f"<random.Random view of {self._exact!r}>"


def _refuse(view: PythonRandom, message: str) -> Any:
    exact = view._exact
    exact._abort(MechanismError(f"{message}.", dataset=exact._dataset))


def _refused(name: str, reason: str, fix: str = WAYS_ON) -> Callable[..., Any]:
    def refused(self: PythonRandom, *args: Any, **kwargs: Any) -> Any:
        exact = self._exact
        _refuse(self, (
            f"rng.python.{name}({_arguments(args, kwargs)}) {reason}, so the sampler {exact._name} cannot be "
            f"enumerated exactly (rng.python is the exact rng's random.Random view; routed module-level calls such as "
            f"random.{name}(...) and SystemRandom().{name}(...) land there). {fix}"
        ).rstrip("."))

    refused.__name__ = name
    refused.__doc__ = f"Refused: {reason}."
    return refused


_CONTINUOUS = (
    "betavariate", "gammavariate", "lognormvariate", "paretovariate",
    "triangular", "uniform", "vonmisesvariate", "weibullvariate",
)
_STATE_FIX = "Draw from the rng without seeding it: every combination of draws is enumerated, so there is no state."

for _name in _CONTINUOUS:
    setattr(PythonRandom, _name, _refused(_name, "draws from a continuous distribution that is not traced (expovariate "
                                          "is: it becomes a noise variable)", STATISTICAL_WAY))
for _name in ("seed", "getstate", "setstate"):
    setattr(PythonRandom, _name, _refused(_name, "works on the state of a generator, and the exact rng has none", _STATE_FIX))
PythonRandom.randbytes = _refused(  # type: ignore[method-assign]
    "randbytes", "returns raw random bytes", "Draw integers instead, e.g. rng.integers(0, 256, size=n), and convert them."
)
PythonRandom._notimplemented = _refused("_notimplemented", "is SystemRandom's stub for its state", _STATE_FIX)  # type: ignore[attr-defined]
#: The public names of random.Random and random.SystemRandom refused because the view has no exact answer for them.
REFUSED_BY_CONSTRUCTION = refuse_the_rest(
    PythonRandom, PYTHON_APIS, lambda name: _refused(name, "is not a draw the exact rng answers")
)
