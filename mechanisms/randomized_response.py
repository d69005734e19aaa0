"""Randomized response (Warner 1965): the closed-form baseline used to test the checker.

None of the papers in /work/shared/papers/ defines this mechanism; it is here because its privacy
is known in closed form. Keeping a bit ``b`` with probability ``p`` and flipping it otherwise,

    P(b | b) / P(b | 1 - b) = p / (1 - p),   so   epsilon* = ln(p / (1 - p))

(``p = 3/4`` gives ``epsilon* = ln 3``; ``p = 1`` is not private, ``epsilon* = inf``). The
subsampled variant answers for one uniformly chosen record of ``n``; it is the closed-form case of
privacy amplification by subsampling (Li–Wang–Ye 2025 Alg. 2 step 1,
Dagan–Feldman 2020 Lemma 8) with ``eta = 1/n``: ``epsilon* = ln(1 + (e^eps - 1) / n)``
under substitution, attained between a dataset of ones and one with a single zero.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dpverify.errors import InvalidArgument
from dpverify.finite.distribution import Distribution
from dpverify.validation import check_number

__all__ = [
    "randomized_response",
    "randomized_response_mechanism",
    "subsampled_randomized_response",
]

_HALF = Fraction(1, 2)


def _check_keep_probability(p: Any) -> None:
    check_number(
        "p", p, at_least=_HALF, at_most=1, what="the probability of keeping the true bit",
        fix="for p < 1/2 report the flipped bit with 1 - p instead",
    )


def _check_bit(bit: Any, where: str) -> None:
    if isinstance(bit, bool) or bit not in (0, 1):
        raise InvalidArgument(f"{where} must be the bit 0 or 1, got {where}={bit!r}.")


def randomized_response(bit: int, *, p: Any) -> Distribution:
    """Randomized response (Warner 1965), the closed-form baseline: keep ``bit`` w.p. ``p``.

    Args:
        bit: the true bit, 0 or 1.
        p: the probability of reporting the true bit, in [1/2, 1] (Fraction for exact output,
            float for float output).

    Returns:
        ``{bit: p, 1 - bit: 1 - p}`` (the zero entry dropped when ``p = 1``).

    Raises:
        InvalidArgument: ``bit`` not in {0, 1} or ``p`` outside [1/2, 1].
    """
    _check_bit(bit, "bit")
    _check_keep_probability(p)
    return Distribution([(bit, p), (1 - bit, 1 - p)])


def randomized_response_mechanism(*, p: Any) -> Callable[[tuple], Distribution]:
    """Randomized response (Warner 1965), the closed-form baseline, as a dataset mechanism.

    Args:
        p: the probability of reporting the true bit, in [1/2, 1].

    Returns:
        A callable on datasets of size 1 whose single record is a bit (records ``(0, 1)``, ``n=1``
        for :func:`dpverify.verify`); its epsilon* is ``ln(p / (1 - p))``.

    Raises:
        InvalidArgument: ``p`` outside [1/2, 1] (here); a dataset that is not one bit (on call).
    """
    _check_keep_probability(p)

    def mechanism(dataset: tuple) -> Distribution:
        if len(dataset) != 1:
            raise InvalidArgument(
                f"randomized response takes a dataset of exactly one bit, got {dataset!r}; "
                "verify it with n=1 and records=(0, 1)."
            )
        _check_bit(dataset[0], "dataset[0]")
        return randomized_response(dataset[0], p=p)

    mechanism.__name__ = "randomized_response"
    mechanism.exchangeable = True  # type: ignore[attr-defined]
    return mechanism


def subsampled_randomized_response(*, p: Any) -> Callable[[tuple], Distribution]:
    """Randomized response (Warner 1965) on one uniformly chosen record: closed-form baseline.

    On a dataset of ``n`` bits with ``c`` ones, ``P(1) = (c/n) p + (1 - c/n)(1 - p)``. It is
    ``ln(1 + (e^eps - 1)/n)``-DP under substitution, ``e^eps = p / (1 - p)`` (for ``p = 3/4`` and
    ``n = 2``: ``ln 2``). Exchangeable.

    Args:
        p: the probability of reporting the chosen bit truthfully, in [1/2, 1].

    Returns:
        A callable on non-empty tuples of bits.

    Raises:
        InvalidArgument: ``p`` outside [1/2, 1] (here); an empty dataset or a non-bit (on call).
    """
    _check_keep_probability(p)

    def mechanism(dataset: tuple) -> Distribution:
        if not dataset:
            raise InvalidArgument("subsampled randomized response needs a non-empty dataset, got ().")
        for index, bit in enumerate(dataset):
            _check_bit(bit, f"dataset[{index}]")
        share = Fraction(1, len(dataset))
        return Distribution.mixture((share, randomized_response(bit, p=p)) for bit in dataset)

    mechanism.__name__ = "subsampled_randomized_response"
    mechanism.exchangeable = True  # type: ignore[attr-defined]
    return mechanism
