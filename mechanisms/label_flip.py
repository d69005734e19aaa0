"""Label flipping: stability to private prediction (Dagan–Feldman 2020 Corollary 2, C10).

Corollary 2 of Dagan and Feldman runs a gamma-uniformly-stable learner and then flips the
predicted label with probability ``alpha``. Flipping makes both labels appear with probability at
least ``alpha``, so an additive stability ``|P - P'| <= gamma`` becomes the multiplicative bound
``(P + gamma) / P <= 1 + gamma / alpha``: ``ln(1 + gamma / alpha)``-DP prediction. For a
prediction bit with ``P(1) = r`` the flip gives

    P'(1) = (1 - alpha) r + alpha (1 - r),   P'(0) = (1 - alpha)(1 - r) + alpha r.

``alpha`` is restricted to [0, 1/2] as in docs/claims.md (C10): beyond 1/2 the flip would invert more
often than not.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction
from typing import Any

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.validation import check_callable, check_number

__all__ = ["flip", "label_flip"]

_HALF = Fraction(1, 2)


def _check_alpha(alpha: Any) -> None:
    check_number(
        "alpha", alpha, at_least=0, at_most=_HALF, what="the probability of flipping the predicted label",
        fix="Corollary 2 of Dagan–Feldman 2020 uses a small alpha",
    )


def flip(distribution: Mapping[Hashable, Any], alpha: Any) -> Distribution:
    """Dagan–Feldman 2020 Corollary 2 (C10): flip a predicted bit with probability alpha.

    Args:
        distribution: a distribution (or mapping) over the labels {0, 1}.
        alpha: the flip probability, in [0, 1/2] (Fraction keeps an exact input exact).

    Returns:
        The distribution of the bit after flipping: ``P'(b) = (1 - alpha) P(b) + alpha P(1 - b)``.

    Raises:
        InvalidArgument: ``alpha`` outside [0, 1/2], or an outcome other than 0 and 1.
    """
    _check_alpha(alpha)
    source = distribution if isinstance(distribution, Distribution) else Distribution(distribution)
    for outcome in source:
        if isinstance(outcome, bool) or outcome not in (0, 1):
            raise InvalidArgument(
                f"flip() needs a distribution over the labels 0 and 1, got outcome {outcome!r}; "
                "apply it to a binary prediction."
            )
    return source.bind(lambda bit: Distribution([(bit, 1 - alpha), (1 - bit, alpha)]))


def flip_rows(probs: Any, alpha: Any) -> Any:
    """:func:`flip` on every row of a float array ``probs[..., y]`` (``y`` in {0, 1}, last axis):
    ``P'(y) = (1 - alpha) P(y) + alpha P(1 - y)`` — the fast tables' form of the same flip."""
    _check_alpha(alpha)
    a = float(alpha)
    return (1 - a) * probs + a * probs[..., ::-1]


def label_flip(
    mechanism: Callable[[tuple], Mapping[Hashable, Any]], *, alpha: Any
) -> Callable[[tuple], Distribution]:
    """Dagan–Feldman 2020 Corollary 2 (C10): a prediction mechanism followed by a flip.

    Args:
        mechanism: ``dataset -> distribution over {0, 1}`` (a prediction at a fixed query point).
        alpha: the flip probability, in [0, 1/2].

    Returns:
        A callable ``dataset -> flip(mechanism(dataset), alpha)``, marked exchangeable when
        ``mechanism`` is.

    Raises:
        InvalidArgument: ``alpha`` outside [0, 1/2] or ``mechanism`` not callable (here); a
            non-binary output (on call).
    """
    _check_alpha(alpha)
    check_callable("mechanism", mechanism, fix="pass a function dataset -> distribution")

    def flipped(dataset: tuple) -> Distribution:
        return flip(mechanism(dataset), alpha)

    flipped.__name__ = f"label_flip_{getattr(mechanism, '__name__', 'mechanism')}"
    if getattr(mechanism, "exchangeable", False):
        flipped.exchangeable = True  # type: ignore[attr-defined]
    return flipped
