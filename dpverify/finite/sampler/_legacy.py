"""numpy's legacy ``RandomState`` draws with numpy's meanings, answered exactly by the exact rng.

Code written against ``np.random.RandomState`` (scikit-learn's ``check_random_state``, diffprivlib,
``np.random.rand()`` routed by :mod:`dpverify.finite.sampler._routing`) calls names that numpy's
``Generator`` does not have: ``random_sample``, ``rand``, ``randint``, ``random_integers``,
``tomaxint``. :class:`LegacyDraws` answers them through the exact rng's own ``random`` and
``integers`` (so they are the same choice points): uniforms are lazy, integers uniform over their
range. ``randint`` is numpy's, ``high`` excluded (Python's inclusive ``randint(a, b)`` is on the
rng's Python view, ``rng.python.randint``). The legacy names shared with ``Generator``
(``choice``, ``permutation``, ``shuffle``, ``binomial``, ``hypergeometric``, ``multinomial``) are
the exact rng's own methods; legacy ``bytes``, ``seed``, ``get_state`` and ``set_state`` are refused
there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument, MechanismError
from dpverify.finite._numbers import _describe

__all__ = ["LegacyDraws"]

#: C ``long``: numpy's legacy ``dtype=int`` and the top of ``tomaxint``'s range.
_LONG = np.dtype("long")


class LegacyDraws:
    """numpy's legacy ``RandomState`` draws, for the exact rng (module docstring)."""

    random: Callable[..., Any]  # the exact rng's lazy uniforms
    integers: Callable[..., Any]  # and its uniform integers

    def random_sample(self, size: Any = None) -> Any:
        """A lazy uniform on [0, 1), or an object array of independent ones with ``size``."""
        return self.random(size)

    def rand(self, *dimensions: Any) -> Any:
        """``rand()``: a lazy uniform; ``rand(d0, d1, ...)``: an object array of that shape of them."""
        return self.random() if not dimensions else self.random(size=dimensions)

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = int) -> Any:
        """numpy's ``randint``: uniform integers in ``[low, high)`` (``[0, low)`` without high).

        Refused when the rng stands in for Python's ``random`` module (the calling code's global
        name ``random`` is bound to it: ``client.random = rng``, the idiom before ``patch=``): that
        code means Python's ``randint(a, b)``, ``b`` included, and numpy's meaning would give a
        verdict on other code (a k-RR client read as ``randint(0, d - 2)``, ``d - 2`` excluded)."""
        caller = sys._getframe(1)
        if caller.f_globals.get("random") is self:
            self._abort(MechanismError(  # the exact rng's
                f"random.randint({_describe(low)}, {_describe(high)}) in {caller.f_code.co_filename}, line "
                f"{caller.f_lineno}, is called on the exact rng standing in for Python's random module (that module's "
                "global `random` is the rng): Python's randint includes its upper end, numpy's (the rng's) excludes it, "
                "so no meaning can be assumed. Put the rng's Python view there instead (module.random = rng.python), "
                "or route the module: from_sampler(sampler, patch=[module]).",
                dataset=getattr(self, "_dataset", None),
            ))
        if high is None:
            low, high = 0, low
        _check_range("rng.randint", low, high, dtype, inclusive=False)
        return self.integers(low, high, size=size, dtype=dtype)

    def random_integers(self, low: Any, high: Any = None, size: Any = None) -> Any:
        """numpy's deprecated ``random_integers``: uniform integers in ``[low, high]`` (``[1, low]``
        without high), both ends included."""
        if high is None:
            low, high = 1, low
        _check_range("rng.random_integers", low, high, int, inclusive=True)
        return self.integers(low, high, size=size, dtype=int, endpoint=True)

    def tomaxint(self, size: Any = None) -> Any:
        """Uniform integers in ``[0, max of C long]``: more outcomes than any enumeration takes, so
        this raises :class:`~dpverify.errors.EnumerationTooLarge` (it is answered, not refused)."""
        return self.integers(0, int(np.iinfo(_LONG).max), size=size, dtype=_LONG, endpoint=True)


def _check_range(call: str, low: Any, high: Any, dtype: Any, *, inclusive: bool) -> None:
    """numpy's errors for an empty range or one that does not fit ``dtype``, named for ``call``
    (bounds that are not integers are left to the rng's own reading, which names them)."""
    lows, highs = (np.asarray(bound, dtype=object).ravel().tolist() for bound in (low, high))
    if not lows or not highs or not all(_is_integer(v) for v in lows + highs):
        return
    if np.ndim(low) == 0 and np.ndim(high) == 0 and (high < low if inclusive else high <= low):
        raise InvalidArgument(
            f"{call}: the range is empty, got low={_describe(low)}, high={_describe(high)}; high must "
            f"{'be at least' if inclusive else 'exceed'} low{'' if inclusive else ' (high is excluded, as in numpy)'}."
        )
    try:
        info = np.iinfo(dtype)
    except (TypeError, ValueError):  # bool or not an integer type: the rng converts the draws
        return
    top = max(highs) if inclusive else max(highs) - 1
    if min(lows) < info.min or top > info.max:
        raise InvalidArgument(
            f"{call}: the range [{_describe(low)}, {_describe(high)}{']' if inclusive else ')'} does not fit "
            f"dtype={np.dtype(dtype).name} ([{info.min}, {info.max}]); choose a wider dtype."
        )


def _is_integer(value: Any) -> bool:
    return isinstance(value, (Integral, np.integer)) and not isinstance(value, (bool, np.bool_))
