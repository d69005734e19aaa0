"""Placeholder until the features branch lands: no derived features."""

from __future__ import annotations

from typing import Any

from dpverify.checking._outputs import Outputs


def fixed_features(kind: str, width: int | None) -> tuple[Any, ...]:
    return ()


def fitted_features(first: Outputs, second: Outputs) -> tuple[Any, ...]:
    return ()


def fitted_features_apply(kind: str) -> bool:
    return kind == "vector"
