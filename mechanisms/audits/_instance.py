"""What the papers' audits share: how an instance shows in tables (common keys abbreviated, defaults
left out), and the fixed sample an exchangeability that cannot be proved is tested on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["instance", "EXCHANGEABLE_SAMPLES"]

#: Random datasets (each under every transposition) a declared exchangeability is tested on when it
#: cannot be proved on every ordering (``verify(..., exchangeable="assume", exchangeable_samples=...)``):
#: a fixed count, not a time budget, so each row and its "assuming ... tested on ..." repeat exactly.
EXCHANGEABLE_SAMPLES = 500

_SHORT = {
    "concept_class": "class",
    "concept": "class",
    "domain_size": "X",
    "epsilon": "eps",
    "learner": "A",
    "learner_epsilon": "eps_A",
    "learner_delta": "delta_A",
}
_IMPLIED = {("representative", "first"), ("learner_epsilon", 1.0)}


def instance(parameters: Mapping[str, Any]) -> str:
    """``class=thresholds, X=3, n=6, eps=0.2``: floats to 4 digits, ``representative=first`` and
    ``learner_epsilon=1.0`` (the defaults) left out."""
    parts = []
    for key, value in parameters.items():
        if (key, value) in _IMPLIED:
            continue
        if isinstance(value, float):
            value = f"{value:.4g}"
        parts.append(f"{_SHORT.get(key, key)}={value}")
    return ", ".join(parts)
