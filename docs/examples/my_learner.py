"""my_learner.py: a noisy threshold learner, its privacy claim, and a broken copy that must be caught.

Run with `dpverify audit my_learner.py --output my_audit` (docs/guide/audit-your-learner.md).
"""

from fractions import Fraction

from dpverify import Datasets, PureDp
from dpverify.auditing import Audit, Row

#: A record is an example (x, y): a point x of the domain {0, 1, 2} and its label y in {0, 1}.
RECORDS = [(x, y) for x in range(3) for y in (0, 1)]
#: Threshold t labels x with 1 when x >= t (t = 3 labels every point 0).
THRESHOLDS = range(4)

Dataset = tuple[tuple[int, int], ...]


def mistakes(t: int, dataset: Dataset) -> int:
    return sum((x >= t) != (y == 1) for x, y in dataset)


def best_threshold(dataset: Dataset) -> int:
    """The threshold with the fewest mistakes on the dataset (the smallest one on a tie)."""
    return min(THRESHOLDS, key=lambda t: (mistakes(t, dataset), t))


def noisy_threshold(dataset: Dataset) -> dict[int, Fraction]:
    """The best threshold with probability 1/2, each of the three others with probability 1/6."""
    best = best_threshold(dataset)
    return {t: Fraction(1, 2) if t == best else Fraction(1, 6) for t in THRESHOLDS}


def noisy_threshold_broken(dataset: Dataset) -> dict[int, Fraction]:
    """A broken copy: half the time it draws from all four thresholds, the best one included, so the
    best gets 1/2 + 1/8 = 5/8 and each other 1/8, a ratio of 5 where the claim allows 3."""
    best = best_threshold(dataset)
    return {t: Fraction(5, 8) if t == best else Fraction(1, 8) for t in THRESHOLDS}


CLAIM = ("noisy_threshold is ln(3)-DP: on every dataset each threshold has probability 1/2 or 1/6, "
         "and (1/2) / (1/6) = 3")
DATASETS = Datasets(RECORDS, n=2)  # every dataset of 2 records; neighbours differ in one record

audit = Audit(
    "Noisy threshold learner",
    [
        Row(noisy_threshold, DATASETS, PureDp("ln(3)"), statement=CLAIM,
            source="the argument in noisy_threshold's docstring"),
        Row(noisy_threshold_broken, DATASETS, PureDp("ln(3)"), statement=CLAIM, expect="violated"),
    ],
    description="A threshold learner on the domain {0, 1, 2} that answers the threshold with the fewest "
                "mistakes half the time and one of the others otherwise, checked exactly on every pair of "
                "neighbouring datasets of 2 records; and a broken copy of it that the audit must catch.",
)
