"""Privacy of the private part only, for mechanisms that also read public data.

A mechanism ``M(public, private)`` with a public input (e.g. an unlabeled public sample, as in
Alon–Bassily–Moran 2019 Definition 2.4 and Lemma 3.2) is (epsilon, delta)-DP *w.r.t. the private
part* when for every public input ``T`` in a given set, ``M(T, .)`` is (epsilon, delta)-DP: the
neighbour relation is

    (T, S) ~ (T', S')  iff  T = T'  and  S ~ S'  (``S ~ S'`` in the named private relation),

so the public part is identical on both sides and ranges over every public sample considered.

:func:`verify_with_public_data` checks each public sample with :func:`dpverify.verify` (exhaustive
and sound, as there) and combines the verdicts: the claim holds iff it holds for every public
sample; eps* and delta are the worst over public samples, reported with the sample attaining them;
a violation's witness names its public sample. :func:`all_public_samples` enumerates every public
sample of a given size over a finite set of public points.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from dpverify.checking.checker import VerificationResult, Witness, verify_datasets
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import NeighborRelation
from dpverify.finite.records import check_records
from dpverify.types import Number, PublicMechanism
from dpverify.validation import check_callable, check_integer
from dpverify.verdict.assumptions import Assumption
from dpverify.verdict.claims import Claim, PredictionDp, Stability, claim_from_arguments
from dpverify.verdict.engine import Verdict
from dpverify.verdict.privacy_loss import profile_grid

__all__ = ["PublicSamples", "PublicDataResult", "PublicWitness", "all_public_samples", "verify_with_public_data"]



@dataclass(frozen=True)
class PublicSamples:
    """Every public sample of ``size`` points of ``points``: tuples (``ordered``) or multisets.

    Iterating yields tuples; a multiset is the tuple sorted by position in ``points``. Built by
    :func:`all_public_samples`.
    """

    points: tuple
    size: int
    ordered: bool = True

    def __iter__(self) -> Iterator[tuple]:
        if self.ordered:
            return itertools.product(self.points, repeat=self.size)
        return itertools.combinations_with_replacement(self.points, self.size)

    def __len__(self) -> int:
        z = len(self.points)
        return z**self.size if self.ordered else math.comb(z + self.size - 1, self.size)


def all_public_samples(points: Iterable[Hashable], size: int, *, ordered: bool = True) -> PublicSamples:
    """Every public sample of ``size`` public points.

    Args:
        points: the public universe (hashable, distinct), e.g. ``range(domain_size)``.
        size: the public sample size (>= 0).
        ordered: True (default) for every tuple in ``points^size``; False for every multiset
            (use it only when the mechanism ignores the order of the public sample).

    Raises:
        InvalidArgument: empty or repeated points, or a size that is not an integer >= 0.
    """
    universe = _check_public_universe(points)
    check_integer("size", size, at_least=0, fix="size is the public sample size")
    return PublicSamples(universe, size, bool(ordered))


@dataclass(frozen=True)
class PublicWitness(Witness):
    """A certified violation on one public sample: a :class:`dpverify.Witness` of ``M(public, .)``
    (``dataset`` and ``neighbor`` are the private parts, both read with the public sample ``public``)."""

    public: tuple = ()

    @classmethod
    def on(cls, public: tuple, witness: Witness) -> PublicWitness:
        """``witness`` (found on ``M(public, .)``) with its public sample."""
        return cls(**{f.name: getattr(witness, f.name) for f in fields(Witness)}, public=public)

    @property
    def witness(self) -> Witness:
        """The witness of the private part alone."""
        return Witness(**{f.name: getattr(self, f.name) for f in fields(Witness)})

    def __str__(self) -> str:
        return f"public = {self.public}\n{super().__str__()}"


@dataclass(frozen=True)
class PublicDataResult(VerificationResult):
    """The combined verdict of a check on :class:`~dpverify.checking.front.PublicData`: a
    :class:`~dpverify.verdict.results.VerificationResult` over every public sample.

    Attributes (besides the common ones, summed or worst over public samples):
        epsilon: the worst eps* over public samples; ``epsilon_public`` attains it.
        delta: the worst delta at the claimed epsilon; ``delta_public`` attains it.
        witness: None when the claim holds, else a :class:`PublicWitness` (first violated sample).
        results: public sample -> its :class:`dpverify.VerificationResult`, in enumeration order.
        profile: at each eps, the worst delta(eps) over public samples (when asked).
    """

    epsilon_public: tuple = ()
    delta_public: tuple = ()
    results: dict[tuple, VerificationResult] = field(default_factory=dict)

    def summary(self) -> str:
        verdict = {
            Verdict.HOLDS: "HOLDS for every public sample",
            Verdict.HOLDS_WITHIN_ROUNDING: "HOLDS_WITHIN_ROUNDING (float-tight on some public sample)",
            Verdict.VIOLATED: "VIOLATED for some public sample",
            Verdict.UNDECIDED: "UNDECIDED on some public sample",
        }[self.verdict]
        if isinstance(self.claim, (Stability, PredictionDp)):
            claimed = f"claimed {self.claim}"
        else:
            claimed = f"claimed (eps={self.claimed_epsilon}, delta={self.claimed_delta})"
        if self.holds and self.assuming:
            verdict += f", {self.assuming}"
        lines = [
            f"{verdict}: {claimed}, measured eps*={self.epsilon:.6g} (public "
            f"{self.epsilon_public}), delta(eps)={self.delta:.6g} (public {self.delta_public})",
            f"  {len(self.results):,} public samples, {self.pairs:,} pairs of private parts, "
            f"{self.seconds:.2f}s",
        ]
        unexplored = max((r.unexplored for r in self.results.values()), default=0.0)
        if unexplored:  # sub-distributions: the figures are the explored outputs'
            lines.append(f"  unexplored: up to {unexplored:.3g} of an output's mass was not explored (it may fall on any "
                         "outcome); the figures are the explored outputs', and the verdicts account for the rest")
        open_sample = next(((public, r) for public, r in self.results.items() if r.reason), None)
        if open_sample is not None:
            lines.append(f"  undecided on public {open_sample[0]}: {open_sample[1].reason}")
        undecided = sum(r.undecided for r in self.results.values())
        if undecided:
            lines.append(f"  {undecided} pair(s) could not be decided exactly: not claimed to hold")
        if self.witness is not None:
            lines.append("  witness:\n    " + str(self.witness).replace("\n", "\n    "))
        return "\n".join(lines)


def _combined_assumptions(results: Iterable[VerificationResult]) -> tuple[Assumption, ...]:
    """Every public sample's assumptions, one per (site, status) with how many samples share it."""
    first: dict[tuple, Assumption] = {}
    counts: dict[tuple, int] = {}
    for result in results:
        for assumption in result.assumptions:
            key = (assumption.name, assumption.status)
            first.setdefault(key, assumption)
            counts[key] = counts.get(key, 0) + 1
    return tuple(
        replace(a, evidence=f"{a.evidence}; on {counts[k]} public samples") if counts[k] > 1 else a
        for k, a in first.items()
    )


def _combined_profile(results: Iterable[VerificationResult]) -> tuple[tuple[float, float], ...]:
    """The worst delta(eps) over public samples at each eps (every sample measured at the same points)."""
    profiles = [r.profile for r in results]
    if not profiles or not profiles[0]:
        return ()
    points = [e for e, _ in profiles[0]]
    if any([e for e, _ in p] != points for p in profiles):
        raise AssertionError("internal error: the public samples' profiles were measured at different points")
    return tuple((e, max(p[k][1] for p in profiles)) for k, e in enumerate(points))


def verify_with_public_data(
    mechanism: PublicMechanism,
    *,
    public_samples: Iterable[Iterable[Hashable]],
    records: Sequence[Hashable],
    n: int,
    epsilon: Number | None = None,
    delta: Number | None = None,
    neighbors: str | NeighborRelation = "substitute",
    public_records: Iterable[Hashable] | None = None,
    claim: Claim | None = None,
    **verify_kwargs: Any,
) -> PublicDataResult:
    """Check that ``mechanism(public, .)`` is (epsilon, delta)-DP for every public sample.

    Args:
        mechanism: ``mechanism(public, private_dataset) -> Mapping[outcome, probability]``. Its
            ``exchangeable`` declaration and ``exact_distribution(public, dataset)`` method, if
            present, are used for the private part as :func:`dpverify.verify` uses them.
        public_samples: the public samples, e.g. ``all_public_samples(range(3), 2)``, or any
            iterable of samples (each an iterable of public records).
        records: the private record universe; ``n``: the private dataset size.
        epsilon, delta: the claim, as in :func:`dpverify.verify`; or ``claim=`` (a
            :mod:`dpverify.verdict.claims` value), not both.
        neighbors: the relation on the private part (``"substitute"`` or ``"add_remove"``).
        public_records: the public universe every sample must lie in (default: the points of
            ``public_samples`` when built by :func:`all_public_samples`, else unchecked).
        **verify_kwargs: passed to :func:`dpverify.verify` (``exchangeable``, ``max_pairs``, ...).

    Returns:
        A :class:`PublicDataResult`.

    Raises:
        InvalidArgument: bad input, checked before any work starts: a non-callable mechanism, no
            public samples, a sample that is not an iterable of hashables or has a record outside
            the public universe, and whatever :func:`dpverify.verify` rejects.
    """
    check_callable("mechanism", mechanism, fix="pass a function (public, private_dataset) -> distribution")
    claimed = claim_from_arguments(claim, epsilon, delta)
    check_records(records)
    samples = _check_samples(public_samples, public_records)
    started = time.perf_counter()
    profile = verify_kwargs.pop("profile", None)
    if profile is True:  # one grid for every sample, around the worst eps*: a first pass finds it
        first = [verify_datasets(_bind(mechanism, public), records=records, n=n, claim=claimed, neighbors=neighbors,
                                 **verify_kwargs) for public in samples]
        profile = profile_grid(max(r.epsilon for r in first), float(claimed.claimed_epsilon))
    results: dict[tuple, VerificationResult] = {}
    witness: PublicWitness | None = None
    for public in samples:
        result = verify_datasets(
            _bind(mechanism, public), records=records, n=n, claim=claimed, neighbors=neighbors, profile=profile,
            **verify_kwargs,
        )
        results[public] = result
        if result.witness is not None and (witness is None or (
            witness.within_rounding and not result.witness.within_rounding
        )):
            witness = PublicWitness.on(public, result.witness)
    worst_epsilon = max(results, key=lambda t: results[t].epsilon)
    worst_delta = max(results, key=lambda t: results[t].delta)
    verdict = Verdict.combine(r.verdict for r in results.values())
    if verdict is not Verdict.VIOLATED and verdict is not Verdict.HOLDS_WITHIN_ROUNDING:
        witness = None
    every = list(results.values())
    return PublicDataResult(
        verdict=verdict,
        holds=verdict.passes,
        epsilon=results[worst_epsilon].epsilon,
        delta=results[worst_delta].delta,
        epsilon_public=worst_epsilon,
        delta_public=worst_delta,
        witness=witness,
        claimed_epsilon=claimed.claimed_epsilon,
        claimed_delta=claimed.claimed_delta,
        results=results,
        neighbors=every[0].neighbors,
        pairs=sum(r.pairs for r in every),
        datasets=sum(r.datasets for r in every),
        exchangeable=all(r.exchangeable for r in every),
        certified_pairs=sum(r.certified_pairs for r in every),
        undecided=sum(r.undecided for r in every),
        within_rounding=sum(r.within_rounding for r in every),
        rechecked=sum(r.rechecked for r in every),
        float_error=max(r.float_error for r in every),
        symmetry_violation=next((r.symmetry_violation for r in every if r.symmetry_violation is not None), None),
        seconds=time.perf_counter() - started,
        claim=claimed,
        assumptions=_combined_assumptions(every),
        seed=every[0].seed,
        unexplored=max(r.unexplored for r in every),
        reason=next((r.reason for r in every if r.reason), ""),
        profile=_combined_profile(every),
    )


def _bind(mechanism: PublicMechanism, public: tuple) -> Callable[[tuple], Any]:
    """``dataset -> mechanism(public, dataset)``, carrying the declarations the checker reads."""

    def private_part(dataset: tuple) -> Any:
        return mechanism(public, dataset)

    private_part.__name__ = f"{getattr(mechanism, '__name__', 'mechanism')}[public={public}]"
    if getattr(mechanism, "exchangeable", False):
        private_part.exchangeable = True  # type: ignore[attr-defined]
    exact_of = getattr(mechanism, "exact_distribution", None)
    if callable(exact_of):
        private_part.exact_distribution = lambda dataset: exact_of(public, dataset)  # type: ignore[attr-defined]
    return private_part


def _check_public_universe(points: Iterable[Hashable]) -> tuple:
    try:
        return check_records(points)
    except InvalidArgument as error:
        raise InvalidArgument(f"public universe: {error}") from None


def _check_samples(
    public_samples: Iterable[Iterable[Hashable]], public_records: Iterable[Hashable] | None
) -> list[tuple]:
    if isinstance(public_samples, (str, bytes)) or not isinstance(public_samples, Iterable):
        raise InvalidArgument(
            f"public_samples must be an iterable of public samples, got public_samples={public_samples!r}; "
            "pass e.g. all_public_samples(range(domain_size), size) or [(0, 1), (2, 2)]."
        )
    universe: set | None = None
    if public_records is not None:
        universe = set(_check_public_universe(public_records))
    elif isinstance(public_samples, PublicSamples):
        universe = set(public_samples.points)
    samples: list[tuple] = []
    seen: set[tuple] = set()
    for sample in public_samples:
        if isinstance(sample, (str, bytes)) or not isinstance(sample, Iterable):
            raise InvalidArgument(
                f"each public sample must be a tuple of public records, got {sample!r}; wrap a "
                f"single record as ({sample!r},)."
            )
        public = tuple(sample)
        for record in public:
            try:
                hash(record)
            except TypeError:
                raise InvalidArgument(
                    f"public sample {public!r} holds the unhashable record {record!r}; use tuples."
                ) from None
            if universe is not None and record not in universe:
                raise InvalidArgument(
                    f"public sample {public!r} holds the record {record!r}, outside the public "
                    f"universe {sorted(universe, key=repr)!r}; drop that sample, or pass the "
                    "universe it belongs to as public_records=..."
                )
        if public not in seen:
            seen.add(public)
            samples.append(public)
    if not samples:
        raise InvalidArgument(
            "public_samples is empty: there is no public sample to check; pass e.g. "
            "all_public_samples(range(domain_size), size)."
        )
    return samples
