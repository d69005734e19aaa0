"""numpy's legacy ``RandomState`` draws with numpy's meanings, answered exactly by the exact rng.

Code written against ``np.random.RandomState`` (scikit-learn's ``check_random_state``, diffprivlib,
``np.random.rand()`` routed by :mod:`dpverify.finite._routing`) calls names that numpy's
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

from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np

from dpverify.errors import InvalidArgument
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
        """numpy's ``randint``: uniform integers in ``[low, high)`` (``[0, low)`` without high)."""
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
