"""A run's outputs of a sampler on one dataset, read as one of three kinds (``"real"``, ``"vector"``,
``"discrete"``; :mod:`dpverify.checking.statistical._sampling` reads them): what events and features are
evaluated on."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

__all__ = ["Outputs", "is_number", "items_of"]


@dataclass
class Outputs:
    """``count`` outputs of one kind: ``values`` (float64, ``(count,)`` real or ``(count, d)``
    vector) or ``items`` (a list of hashable discrete outputs)."""

    kind: str
    values: np.ndarray | None = None
    items: list | None = None

    def __len__(self) -> int:
        if self.values is not None:
            return int(self.values.shape[0])
        return len(self.items or ())


#: The number types a sampler returns most often, recognised without the abstract-class check.
_NUMBER_TYPES = frozenset({int, float, np.float64, np.int64, np.float32, np.int32})


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (a bool is a label, not a number)."""
    if type(value) in _NUMBER_TYPES:
        return True
    return isinstance(value, (Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def items_of(outputs: Outputs) -> list:
    """The outputs as hashable Python values (floats, tuples of floats, labels)."""
    if outputs.items is not None:
        return outputs.items
    assert outputs.values is not None
    if outputs.kind == "real":
        return outputs.values.tolist()
    return [tuple(row) for row in outputs.values.tolist()]
