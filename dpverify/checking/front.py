"""The front door: one :func:`verify` and one :func:`estimate` over inputs given as values.

A check is three values, as a claim already is one (:mod:`dpverify.verdict.claims`):

* the **mechanism**: ``dataset -> {outcome: probability}`` (a plain function, a mechanism of
  ``mechanisms/``, a sampler made exact by :func:`dpverify.from_sampler`, a mechanism with
  continuous outputs or a Gaussian mechanism);
* the **inputs**: :class:`Datasets` (every dataset of ``n`` records over a finite universe, with its
  neighbour relation), :class:`~dpverify.checking.input_pairs.InputPairs` (given pairs, StatDP's
  patterns, every query vector) or :class:`PublicData` (a mechanism that also reads a public
  sample, private in its private part);
* the **claim**: :class:`~dpverify.verdict.claims.PureDp`, ``ApproximateDp``, ``Stability`` or
  ``PredictionDp`` (or ``epsilon=``/``delta=``).

:func:`verify` sends each kind of input to its exact checker (:mod:`dpverify.checking.checker` for
datasets, :mod:`dpverify.checking.input_pairs` for given pairs and continuous outputs,
:mod:`dpverify.checking.public_data` for public data); every one decides through the one engine and
returns a :class:`~dpverify.verdict.results.VerificationResult` (or a subclass with more fields).
:func:`estimate` takes the same inputs for the statistical mode, whose
:class:`~dpverify.verdict.results.EstimateResult` never says HOLDS.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, overload

from dpverify.checking.checker import DEFAULT_MAX_PAIRS, Analysis, verify_datasets
from dpverify.checking.checker import analyze as analyze_datasets
from dpverify.checking.input_pairs import InputPairs, verify_pairs
from dpverify.checking.public_data import PublicDataResult, PublicSamples, all_public_samples, verify_with_public_data
from dpverify.checking.statistical.estimate import estimate_sampler
from dpverify.errors import InvalidArgument
from dpverify.finite.neighbors import NeighborRelation, check_enumeration_size, relation
from dpverify.finite.records import check_records
from dpverify.finite.sampler.sampling import SamplerMechanism
from dpverify.types import ExecutorSpec, Mechanism, Number, PublicMechanism, Sampler
from dpverify.validation import check_integer
from dpverify.verdict.assumptions import Assumption, Status
from dpverify.verdict.claims import ApproximateDp, Claim, PureDp, claim_from_arguments
from dpverify.verdict.engine import Verdict
from dpverify.verdict.privacy_loss import profile_grid
from dpverify.verdict.results import EstimateResult, PairsResult, VerificationResult

if TYPE_CHECKING:  # a protocol only: the Gaussian decision (mpmath) loads when a Gaussian mechanism is checked
    from dpverify.densities.gaussian import GaussianOutput
    from dpverify.densities.traced import TracedMechanism

__all__ = ["Datasets", "PublicData", "verify", "estimate", "analyze", "measurable"]

@dataclass(frozen=True)
class Datasets:
    """Every dataset of ``n`` records over the finite universe ``records``, and which are neighbours.

    Attributes:
        records: the record universe (hashable, distinct), e.g. ``range(3)`` or
            :func:`dpverify.finite.records.labeled_records`.
        n: the dataset size (>= 1).
        neighbors: ``"substitute"`` (replace one record, default), ``"add_remove"``, or a
            :class:`~dpverify.finite.neighbors.NeighborRelation` such as
            :func:`dpverify.checking.input_pairs.query_vectors`.
        exchangeable: None (the mechanism's own declaration, ``@dpverify.exchangeable``), True,
            False (every ordered dataset, a black box) or ``"assume"`` (accept a declaration that
            cannot be proved on every ordering; the verdict then says what it assumes).

    Raises:
        InvalidArgument: repeated or unhashable records, ``n`` not an integer >= 1, an unknown
            relation or exchangeable value (checked when the value is built).
    """

    records: Iterable[Hashable]  # kept as a tuple
    n: int
    neighbors: str | NeighborRelation = "substitute"
    exchangeable: bool | Literal["assume"] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", check_records(self.records))
        check_integer("n", self.n, at_least=1, fix="n is the dataset size, e.g. Datasets(range(3), n=4)")
        relation(self.neighbors)  # a bad name fails here, naming the relations
        if not (self.exchangeable is None or isinstance(self.exchangeable, bool) or self.exchangeable == "assume"):
            raise InvalidArgument(
                f"exchangeable must be None (use the mechanism's own declaration), True, False or 'assume', got "
                f"exchangeable={self.exchangeable!r}; 'assume' accepts the declaration where it cannot be proved "
                "on every ordering."
            )

    def as_pairs(self, *, max_pairs: int = DEFAULT_MAX_PAIRS) -> InputPairs:
        """Every neighbouring pair of ordered datasets as given pairs (for checkers that take pairs:
        continuous outputs, the Gaussian); refused beyond ``max_pairs`` pairs."""
        rel = relation(self.neighbors)
        records = list(self.records)
        check_enumeration_size(rel, len(records), self.n, exchangeable=False, max_pairs=max_pairs)
        enumerated = rel.pairs(records, self.n, exchangeable=False)
        return InputPairs(rel.name, list(enumerated.datasets), enumerated.left, enumerated.right, rel)

    def keywords(self) -> dict[str, Any]:
        """The datasets as the checkers' keywords (``records``, ``n``, ``neighbors``, ``exchangeable``)."""
        return {"records": self.records, "n": self.n, "neighbors": self.neighbors, "exchangeable": self.exchangeable}


@dataclass(frozen=True)
class PublicData:
    """A mechanism ``M(public, private)`` checked on its private part, for every public sample.

    Two inputs are neighbours when their public samples are equal and their private datasets are
    neighbours in ``private`` (Alon-Bassily-Moran 2019, Definition 2.4).

    Attributes:
        samples: the public samples: :meth:`every_sample` builds every sample of a size over a
            finite set of points; any iterable of tuples of public records also does.
        private: the private datasets (:class:`Datasets`).
        public_records: the public universe every sample must lie in (default: the points of
            ``samples`` when built by :meth:`every_sample`, else unchecked).
    """

    samples: Iterable[Iterable[Hashable]]
    private: Datasets
    public_records: Iterable[Hashable] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.private, Datasets):
            raise InvalidArgument(
                f"PublicData needs private=Datasets(records, n), got private={self.private!r}."
            )

    @classmethod
    def every_sample(cls, points: Iterable[Hashable], size: int, *, private: Datasets,
                     ordered: bool = True) -> PublicData:
        """Every public sample of ``size`` of ``points`` (tuples; multisets with ``ordered=False``,
        only for a mechanism that ignores the order of its public sample)."""
        return cls(all_public_samples(points, size, ordered=ordered), private)


# The result type follows the inputs: given pairs add where eps* was found, public data each sample.
@overload
def verify(
    mechanism: PublicMechanism, inputs: PublicData, claim: Claim | None = None,
    *,
    epsilon: Number | None = None,
    delta: Number | None = None,
    profile: bool | Sequence[Number] = False,
    float_error: float | None = None,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    progress: bool | Callable[[str], None] = False,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    exchangeable_samples: int | None = None,
    cover: str | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    exchangeable: bool | str | None = None,
    timeout: float | None = None,
) -> PublicDataResult: ...


@overload
def verify(
    mechanism: Mechanism | GaussianOutput, inputs: InputPairs | Iterable[tuple[Any, Any]], claim: Claim | None = None,
    *,
    epsilon: Number | None = None,
    delta: Number | None = None,
    profile: bool | Sequence[Number] = False,
    float_error: float | None = None,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    progress: bool | Callable[[str], None] = False,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    exchangeable_samples: int | None = None,
    cover: str | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    exchangeable: bool | str | None = None,
    timeout: float | None = None,
) -> PairsResult: ...


@overload
def verify(
    mechanism: Mechanism | GaussianOutput, inputs: Datasets | None = None, claim: Claim | None = None,
    *,
    epsilon: Number | None = None,
    delta: Number | None = None,
    profile: bool | Sequence[Number] = False,
    float_error: float | None = None,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    progress: bool | Callable[[str], None] = False,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    exchangeable_samples: int | None = None,
    cover: str | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    exchangeable: bool | str | None = None,
    timeout: float | None = None,
) -> VerificationResult: ...


def verify(
    mechanism: Mechanism | PublicMechanism | GaussianOutput,
    inputs: Datasets | InputPairs | PublicData | Iterable[tuple[Any, Any]] | None = None,
    claim: Claim | None = None,
    *,
    epsilon: Number | None = None,
    delta: Number | None = None,
    profile: bool | Sequence[Number] = False,
    float_error: float | None = None,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    progress: bool | Callable[[str], None] = False,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    exchangeable_samples: int | None = None,
    cover: str | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    exchangeable: bool | str | None = None,
    timeout: float | None = None,
) -> VerificationResult:
    """Decide ``claim`` for ``mechanism`` on ``inputs``, exactly: the one door of every exact check.

    Args:
        mechanism: ``dataset -> Mapping[outcome, probability]`` (exact numbers or floats); a
            sampler made exact by :func:`dpverify.from_sampler`; a mechanism with continuous
            outputs (``continuous_output = True``, :mod:`dpverify.densities.continuous`); for
            :class:`PublicData`, ``(public, dataset) -> Mapping``, or a :func:`~dpverify.from_sampler`
            mechanism whose sampler takes ``(public, dataset, rng)``. A sampler that draws continuous
            noise (``rng.laplace``, ``rng.exponential``) is integrated exactly and its verdict says it
            assumes real arithmetic (:mod:`dpverify.densities.traced`).
        inputs: :class:`Datasets` (every neighbouring pair of datasets),
            :class:`~dpverify.checking.input_pairs.InputPairs` or a list of pairs ``[(D, D'), ...]``
            (given pairs: ``InputPairs.statdp(k)``, ``InputPairs.query_vectors(k, m=)``), or
            :class:`PublicData`. The keywords ``records=``, ``n=`` (``neighbors=``,
            ``exchangeable=``) are a short form of ``Datasets(records, n, ...)``.
        claim: :class:`~dpverify.verdict.claims.PureDp`, ``ApproximateDp``, ``Stability`` or
            ``PredictionDp``; or instead ``epsilon=`` (and ``delta=``): numbers (int, float,
            Fraction, sympy), a float read as the simplest fraction that rounds to it.
        profile: also measure the worst-case privacy profile delta(eps) over the pairs: True at
            :func:`~dpverify.verdict.privacy_loss.profile_grid` points around eps* and the claim, or the eps values to use; it is
            ``result.profile``, ``((eps, delta), ...)`` (float64 figures, a measurement; the
            verdict is the certified part). Empty for a sampler whose outputs leave mass unexplored
            (``tail=``): its delta(eps) is only bounded.
        float_error: the relative error of the mechanism's float probabilities (default: its
            ``float_relative_error``, else the engine's default); exact probabilities carry none.
        executor: where the work runs: None (serial), ``"processes"``, ``"dask"``, a Dask client or
            a ``concurrent.futures.Executor``; every executor gives the same result.
        seed: the seed of the run's random tests (exchangeability, determinism sample, a cover's
            sample); None draws a fresh one, reported as ``result.seed``.
        progress: True for a progress bar on stderr, or a callable receiving progress lines.
        max_pairs: refuse enumerations of more pairs than this (the error says what to lower).
        exchangeable_samples: test an exchangeability declaration that cannot be proved on every
            ordering on exactly this many random datasets (:class:`Datasets` only).
        cover: ``"assume"`` accepts a pair cover's lemma (given pairs made by
            :func:`dpverify.checking.pair_cover.covering_pairs` only).
        timeout: seconds one evaluation of the mechanism may take (:class:`Datasets` only): a call
            that runs longer raises MechanismError naming the dataset and the limit. None (default)
            is no limit, because the watchdog is a SIGALRM timer: a thread cannot interrupt Python
            code, a signal reaches only a process's main thread, so the limit applies serially and in
            ``executor="processes"`` workers and is refused on Dask or outside the main thread
            (:mod:`dpverify.checking._time_limit`).

    Returns:
        A :class:`~dpverify.verdict.results.VerificationResult`: the verdict (HOLDS,
        HOLDS_WITHIN_ROUNDING, VIOLATED with a certified witness, or UNDECIDED), eps*, delta at the
        claimed epsilon, the profile when asked, the assumptions and the evidence counts. Given
        pairs add where eps* was found (:class:`~dpverify.verdict.results.PairsResult`); public
        data adds each sample's result (:class:`~dpverify.checking.public_data.PublicDataResult`).

    Raises:
        InvalidArgument: bad input, checked before any work starts.
        EnumerationTooLarge: more than ``max_pairs`` pairs.
        MechanismError: the mechanism raised on an input (named; the original chained).
        NondeterministicMechanism: the mechanism gave two outputs for one input, or drew from a
            generator dpverify cannot see.
    """
    inputs = _inputs(inputs, records, n, neighbors, exchangeable)
    checked: Any = mechanism  # its form (one argument, or public and private) is the inputs' kind's
    claimed = claim_from_arguments(claim, epsilon, delta)
    grid = _profile_points(profile)
    if isinstance(inputs, PublicData) and isinstance(mechanism, SamplerMechanism):
        return _verify_public_sampler(mechanism, inputs, claimed, grid, float_error=float_error, executor=executor,
                                      seed=seed, progress=progress, max_pairs=max_pairs,
                                      exchangeable_samples=exchangeable_samples, cover=cover, timeout=timeout)
    traced = _traced(mechanism, inputs)
    if traced is not None:  # a sampler drawing continuous noise: its traced paths, integrated
        checked = mechanism = traced
        if (traced.continuous_output or traced.gaussian_output) and isinstance(inputs, Datasets):
            _only("a sampler releasing noisy real numbers", cover=cover, exchangeable_samples=exchangeable_samples)
            if inputs.exchangeable not in (None, False):
                raise InvalidArgument("a sampler releasing noisy real numbers is checked on every ordered dataset (its "
                                      "output is a density); drop exchangeable= from the Datasets.")
            inputs = inputs.as_pairs(max_pairs=max_pairs)
        options: dict[str, Any] = {"float_error": float_error, "executor": executor, "seed": seed, "progress": progress,
                   "max_pairs": max_pairs, "exchangeable_samples": exchangeable_samples, "cover": cover,
                   "timeout": timeout}
        result = _verify(checked, inputs, claimed, grid, **options)
        if traced.floats and _near_the_claim(result, claimed):
            result = _within_rounding(result, traced, inputs, claimed, grid, options)
        from dpverify.densities.traced import real_arithmetic

        return replace(result, assumptions=(*result.assumptions, real_arithmetic()))
    result = _verify(checked, inputs, claimed, grid, float_error=float_error, executor=executor, seed=seed,
                     progress=progress, max_pairs=max_pairs, exchangeable_samples=exchangeable_samples, cover=cover,
                     timeout=timeout)
    if isinstance(mechanism, SamplerMechanism) and mechanism.__dict__.get("_real_noise"):
        from dpverify.densities.traced import real_arithmetic

        result = replace(result, assumptions=(*result.assumptions, real_arithmetic()))
    if isinstance(mechanism, SamplerMechanism) and mechanism.declared_outputs is not None \
            and bool(getattr(result, "unexplored", 0)):
        result = replace(result, assumptions=(*result.assumptions, _declared(mechanism.declared_outputs)))
    return result


def _declared(outputs: frozenset) -> Assumption:
    """The declared outputs of a sampler with unexplored mass, as the accepted assumption a verdict rests on."""
    shown = sorted(outputs, key=repr)
    listed = ", ".join(map(repr, shown[:8])) + (f", ... ({len(shown) - 8} more)" if len(shown) > 8 else "")
    return Assumption(
        "declared outputs", f"declared outputs (the unexplored mass falls on {listed} only)", Status.ACCEPTED,
        "declared with from_sampler(..., outputs=); every explored output was one of them, the paths not explored "
        "cannot be checked",
        "drop outputs= to decide without it (a pure claim is then undecided), or explore further with a smaller tail",
    )


def _verify(checked: Any, inputs: Any, claimed: Claim, grid: Any, *, float_error: Any, executor: Any, seed: Any,
            progress: Any, max_pairs: int, exchangeable_samples: Any, cover: Any, timeout: Any) -> Any:
    """:func:`verify` once the mechanism and the inputs are settled: each kind of input to its checker."""
    mechanism = checked
    if isinstance(inputs, Datasets) and getattr(mechanism, "gaussian_output", False):
        # continuous outputs: every neighbouring pair of the datasets, decided on densities
        _only("a Gaussian mechanism", cover=cover, exchangeable_samples=exchangeable_samples)
        if inputs.exchangeable not in (None, False):
            raise InvalidArgument("a Gaussian mechanism is checked on every ordered dataset; drop exchangeable= "
                                  "from the Datasets.")
        inputs = inputs.as_pairs(max_pairs=max_pairs)
    if isinstance(inputs, Datasets):
        _only("Datasets", cover=cover)
        return verify_datasets(
            checked, **inputs.keywords(), claim=claimed, float_error=float_error, executor=executor, seed=seed,
            progress=progress, max_pairs=max_pairs, exchangeable_samples=exchangeable_samples, profile=grid,
            timeout=timeout,
        )
    if isinstance(inputs, PublicData):
        _only("PublicData", cover=cover, timeout=timeout)
        return verify_with_public_data(
            checked, public_samples=inputs.samples, public_records=inputs.public_records, **inputs.private.keywords(),
            claim=claimed, float_error=float_error, executor=executor, seed=seed, progress=progress,
            max_pairs=max_pairs, exchangeable_samples=exchangeable_samples, profile=grid,
        )
    _only("given pairs (InputPairs)", exchangeable_samples=exchangeable_samples, timeout=timeout)
    epsilon_, delta_ = _epsilon_delta(claimed)
    # the default grid needs eps*: made from the decision's own eps* in the one pass over the rows, except for
    # continuous outputs, whose checkers take explicit points (a second pass, their outputs kept)
    continuous = getattr(checked, "gaussian_output", False) or getattr(checked, "continuous_output", False)
    result = verify_pairs(
        checked, pairs=inputs, epsilon=epsilon_, delta=delta_, float_error=float_error, executor=executor,
        cover=cover, seed=seed, profile=None if grid is True and continuous else grid,
    )
    if grid is True and continuous:
        points = profile_grid(result.epsilon, float(epsilon_))
        result = verify_pairs(checked, pairs=inputs, epsilon=epsilon_, delta=delta_, float_error=float_error,
                              executor=executor, cover=cover, seed=result.seed, profile=points)
    return _with_pairs_profile(result)


#: How far a traced program's figures may move when its float constants (a scale ``2.0 / 0.7``) are
#: read as the reals they stand for instead of their binary values: a relative ``2**-40``.
ROUNDING_ALLOWANCE = Fraction(1, 2**40)


def _near_the_claim(result: Any, claimed: Claim) -> bool:
    """Whether a traced program's verdict that does not pass might pass at the claim widened for the
    float reading of its constants (:data:`ROUNDING_ALLOWANCE`): UNDECIDED, or VIOLATED with eps* and
    delta* within twice the allowance of the claim (a violation beyond it stands as it is)."""
    if result.verdict.passes or not isinstance(claimed, (PureDp, ApproximateDp)):
        return False
    if result.verdict is not Verdict.VIOLATED:
        return True
    margin = 1 + 2 * float(ROUNDING_ALLOWANCE)
    epsilon_claim = float(claimed.claimed_epsilon)
    if isinstance(claimed, PureDp):
        return result.epsilon <= epsilon_claim * margin
    return result.delta <= float(claimed.claimed_delta) * margin + 2.0**-50


def _within_rounding(result: Any, traced: Any, inputs: Any, claimed: Claim, grid: Any, options: dict) -> Any:
    """A traced program that read float constants, not passing its claim: decided again at the claim
    widened by :data:`ROUNDING_ALLOWANCE`. If it passes there, the claim is tight only up to the binary
    reading of the constants: HOLDS_WITHIN_ROUNDING, never a leak. A violation of the widened claim
    (beyond rounding) is the verdict, with its witness; an undecided one stays undecided."""
    from dpverify.validation import exact_number

    widen = 1 + ROUNDING_ALLOWANCE
    epsilon_ = exact_number("epsilon", claimed.claimed_epsilon) * widen
    if isinstance(claimed, PureDp):
        relaxed: Claim = PureDp(epsilon_)
    else:
        relaxed = ApproximateDp(epsilon_, min(1, exact_number("delta", claimed.claimed_delta) * widen + Fraction(1, 2**60)))
    again = _verify(traced, inputs, relaxed, grid, **{**options, "seed": result.seed})
    if again.verdict is Verdict.VIOLATED:
        return replace(again, claim=result.claim, claimed_epsilon=result.claimed_epsilon,
                       claimed_delta=result.claimed_delta)
    if not again.verdict.passes:
        return result
    return replace(result, verdict=Verdict.HOLDS_WITHIN_ROUNDING, holds=True, witness=None, undecided=0, reason=(
        f"the claim holds within a relative {float(ROUNDING_ALLOWANCE):.2g} of eps and delta: eps*={result.epsilon!r} "
        "is that of the program's float constants read as their binary values (a scale 2.0 / 0.7 is not 20/7), "
        "whose rounding moves the figures by about that much"))


def _verify_public_sampler(mechanism: SamplerMechanism, inputs: PublicData, claimed: Claim, grid: Any,
                           **options: Any) -> Any:
    """A sampler ``(public, dataset, rng)`` on public data: each public sample's mechanism enumerated
    (and integrated, when it draws continuous noise: the verdict then records real arithmetic)."""
    from dpverify.densities.traced import PublicSampler, real_arithmetic

    checked = PublicSampler(mechanism)
    result = _verify(checked, inputs, claimed, grid, **options)
    if not checked.traced:
        return result
    return replace(result, assumptions=(*result.assumptions, real_arithmetic()))


def _traced(mechanism: Any, inputs: Any) -> TracedMechanism | None:
    """A :func:`~dpverify.from_sampler` mechanism whose sampler draws continuous noise on the first
    input, as a :class:`~dpverify.densities.traced.TracedMechanism` (its outputs probed there); None
    for every other mechanism."""
    if not isinstance(mechanism, SamplerMechanism):
        return None
    if isinstance(inputs, Datasets):
        records = list(inputs.records)
        first: Any = (records[0],) * inputs.n if records else None
    elif isinstance(inputs, InputPairs) and inputs.datasets:
        first = inputs.datasets[0]
    else:
        return None
    if first is None:
        return None
    kept = mechanism.__dict__.get("_traced_view")
    if kept is not None:  # verified before: its integrated outputs are kept (a sweep over claims, a profile)
        kept.probe(first)
        return kept
    enumeration = mechanism.enumerate(first)
    if enumeration.traced is None:
        if enumeration.gumbel:  # a Gumbel argmax: a discrete choice, but of real noise
            mechanism.__dict__["_real_noise"] = True
        mechanism.keep_probe(first, enumeration)  # the checker's first evaluation of it: not run again
        return None
    from dpverify.densities.traced import TracedMechanism  # sympy and mpmath load only for traced noise

    traced = TracedMechanism(mechanism)
    traced.probe(first, enumeration)  # the first dataset's enumeration, not run again
    mechanism.__dict__["_traced_view"] = traced
    return traced


def measurable(mechanism: Any, inputs: Datasets) -> Any:
    """``mechanism`` as :func:`analyze` measures it: a sampler drawing continuous noise with finitely
    many outputs as its traced, integrated form; every other mechanism as it is. A sampler releasing
    noisy real numbers is refused (its outputs are densities, which :func:`verify` decides)."""
    traced = _traced(mechanism, inputs)
    if traced is None:
        return mechanism
    if traced.continuous_output or traced.gaussian_output:
        raise InvalidArgument(
            f"the sampler {traced.__name__} releases noisy real numbers: its outputs are densities, which analyze() and "
            "baselines do not measure (they measure finite outputs); decide it with verify(mechanism, inputs, claim), "
            "whose result gives eps* and delta(eps)."
        )
    return traced


def estimate(
    sampler: Sampler,
    inputs: Datasets | InputPairs | Iterable[tuple[Any, Any]] | None = None,
    claim: Claim | None = None,
    *,
    epsilon: Number | None = None,
    delta: Number | None = None,
    samples: int | None = None,
    time_budget: float | None = None,
    confidence: float = 0.95,
    random_state: int | None = None,
    executor: ExecutorSpec = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    float_bits: bool = True,
    patch: Any = None,
) -> EstimateResult:
    """Bound the epsilon of a mechanism that can only be sampled, from below, at ``confidence``:
    the statistical mode, on the same inputs as :func:`verify` (:class:`Datasets`, as a black box,
    or given pairs). The result is VIOLATED when the bound exceeds the claim, else UNDECIDED: a
    sample never proves a claim. By default the run takes about ``time_budget`` = 10 seconds, in
    rounds of growing size; ``samples=N`` alone makes one round of ``N`` draws per dataset.
    ``patch=[module]`` serves a sampler's module-level randomness (``np.random.laplace``) from the run's
    own streams. See :func:`dpverify.checking.statistical.estimate.estimate_sampler` for the sampler's form and the
    options."""
    inputs = _inputs(inputs, records, n, neighbors, None)
    claimed = claim_from_arguments(claim, epsilon, delta)
    epsilon_, delta_ = _epsilon_delta(claimed)
    options = {"epsilon": epsilon_, "delta": delta_, "samples": samples, "time_budget": time_budget,
               "confidence": confidence, "random_state": random_state, "executor": executor, "float_bits": float_bits,
               "patch": patch}
    if isinstance(inputs, PublicData):
        raise InvalidArgument("estimate() takes Datasets or given pairs; for public data, estimate each public "
                              "sample's mechanism (public bound into it) on the private Datasets.")
    if isinstance(inputs, Datasets):
        if inputs.exchangeable not in (None, False):
            raise InvalidArgument(
                f"estimate() samples every ordered dataset (a black box); drop exchangeable={inputs.exchangeable!r} "
                "from the Datasets."
            )
        return estimate_sampler(sampler, records=tuple(inputs.records), n=inputs.n, neighbors=inputs.neighbors, **options)
    return estimate_sampler(sampler, pairs=inputs, **options)


def analyze(
    mechanism: Mechanism,
    inputs: Datasets | None = None,
    *,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: bool | Callable[[str], None] = False,
    executor: ExecutorSpec = None,
    seed: int | None = None,
    exchangeable_samples: int | None = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | NeighborRelation | None = None,
    exchangeable: bool | str | None = None,
) -> Analysis:
    """Measure ``mechanism`` on every neighbouring pair of ``inputs`` (a :class:`Datasets`; or the
    short form ``records=``, ``n=``) without a claim: the returned
    :class:`~dpverify.checking.checker.Analysis` gives eps* (``epsilon_star()``), the privacy
    profile (``profile([eps, ...])``), stability and every pair's loss. Float64 measurements; a
    verdict is :func:`verify`'s."""
    inputs = _inputs(inputs, records, n, neighbors, exchangeable)
    if not isinstance(inputs, Datasets):
        raise InvalidArgument(
            f"analyze() measures every neighbouring pair of Datasets(records, n), got {type(inputs).__name__}; "
            "on given pairs or public data, ask verify(..., profile=True) for the privacy profile."
        )
    return analyze_datasets(measurable(mechanism, inputs), **inputs.keywords(), max_pairs=max_pairs, progress=progress,
                            executor=executor, seed=seed, exchangeable_samples=exchangeable_samples)


# -- reading the arguments --------------------------------------------------------------------------


def _inputs(inputs: Any, records: Any, n: Any, neighbors: Any, exchangeable: Any) -> Any:
    """The inputs value: as given, or built from the short form ``records=``/``n=`` (never both)."""
    short = {k: v for k, v in (("records", records), ("n", n), ("neighbors", neighbors),
                                ("exchangeable", exchangeable)) if v is not None}
    if inputs is None:
        if (records is None) != (n is None):  # half the short form
            missing = "n=None (the dataset size)" if n is None else "records=None (the record universe)"
            raise InvalidArgument(f"{missing}: the short form needs both records= and n=, or pass "
                                  "inputs=Datasets(records, n).")
        if records is None or n is None:
            raise InvalidArgument(
                "no inputs to check on: pass inputs=Datasets(records, n) (every neighbouring pair of datasets), "
                "InputPairs.statdp(k) or a list of pairs [(D, D'), ...], or PublicData(...); or the short form "
                f"records=..., n=... (got {', '.join(f'{k}={v!r}' for k, v in short.items()) or 'neither'})."
            )
        return Datasets(tuple(records), n, "substitute" if neighbors is None else neighbors, exchangeable)
    if short:
        given = ", ".join(f"{k}=" for k in short)
        raise InvalidArgument(
            f"pass the inputs once: {type(inputs).__name__} and {given} were both given; put them in the value, "
            "e.g. Datasets(records, n, neighbors='add_remove', exchangeable=True)."
        )
    if isinstance(inputs, (Datasets, InputPairs, PublicData)):
        return inputs
    if isinstance(inputs, PublicSamples):
        raise InvalidArgument("public samples alone are not inputs: pass PublicData(samples, private=Datasets(...)).")
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Iterable):
        raise InvalidArgument(
            f"inputs must be Datasets(records, n), InputPairs (or a list of pairs [(D, D'), ...]) or PublicData, "
            f"got inputs={inputs!r}."
        )
    return InputPairs.from_pairs(inputs)


def _only(where: str, **options: Any) -> None:
    for name, value in options.items():
        if value is not None:
            raise InvalidArgument(f"{name}={value!r} does not apply to {where}; drop it.")


def _epsilon_delta(claimed: Claim) -> tuple[Any, Any]:
    """(epsilon, delta) of a DP claim, for the checkers that take the pair (given pairs, sampling)."""
    if isinstance(claimed, (PureDp, ApproximateDp)):
        return claimed.claimed_epsilon, claimed.claimed_delta
    raise InvalidArgument(
        f"{claimed} is checked on Datasets (every neighbouring pair of datasets); on given pairs and in the "
        "statistical mode only PureDp and ApproximateDp claims are."
    )


def _profile_points(profile: Any) -> Literal[True] | list[Any] | None:
    """``profile=``: False (none), True (the default grid), or the eps values (checked numbers)."""
    if profile is False or profile is None:
        return None
    if profile is True:
        return True
    if isinstance(profile, (str, bytes)) or not isinstance(profile, Iterable):
        raise InvalidArgument(f"profile must be True, False or a list of eps values, got profile={profile!r}.")
    from dpverify.validation import check_epsilon, exact_number

    points = [exact_number("profile epsilon", e) for e in profile]
    for point in points:
        check_epsilon(point, "profile epsilon")
    return points


def _with_pairs_profile(result: Any) -> Any:
    """A given-pairs result with its measured profile as ``result.profile``."""
    measured = result.details.get("privacy_profile")
    if not measured:
        return result
    return replace(result, profile=tuple((float(p["epsilon"]), float(p["delta"])) for p in measured))

