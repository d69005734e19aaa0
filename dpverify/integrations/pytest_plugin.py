"""pytest plugin: privacy regression checks in CI (registered under the ``pytest11`` entry point).

* :func:`assert_private` — ``assert_private(mechanism, records=..., n=3, epsilon=1.0)`` runs the
  exhaustive, certified :func:`dpverify.verify` and fails the test with the verdict and witness
  when the claim does not hold (VIOLATED), or says it could not be proved (UNDECIDED).
* the ``dpverify_baseline`` fixture — ``dpverify_baseline.check("rr", mechanism, records=..., n=1,
  epsilon=...)`` measures the worst-case ``eps*`` (and ``delta(eps)``) and compares it with a JSON
  baseline stored per name: a privacy loss that *worsens* beyond the baseline (+1e-9) fails the
  build; a missing baseline is written.
* Hypothesis effort profiles ``dpverify-ci`` and ``dpverify-dev`` (for :mod:`dpverify.integrations.strategies`
  and your own ``@given`` tests), selected with ``--dpverify-profile=ci|dev`` (or
  ``--hypothesis-profile=dpverify-ci``). They are namespaced so they do not replace Hypothesis's
  own built-in ``ci`` profile. Hypothesis registers them itself when it is imported, through its
  ``hypothesis`` entry point (:mod:`dpverify.integrations._hypothesis_profiles`); this plugin only
  loads one for ``--dpverify-profile`` (registering them first if that entry point could not run).
* tests made by :func:`dpverify.integrations.strategies.privacy_property` are reported under the
  name they are collected as: Hypothesis's "Failing test case: test_search(pair=...)" for
  ``test_search = privacy_property(...)``, like pytest's own ``FAILED ...::test_search``.

Errors are never verdicts: when the mechanism raises (:class:`~dpverify.errors.MechanismError`, the
dataset named), is not deterministic (:class:`~dpverify.errors.NondeterministicMechanism`) or the
environment fails (:class:`~dpverify.errors.EnvironmentFailure`), the helpers let that exception
propagate as it is, so the test errors with it; it is never reported as a privacy failure.

The plugin loads in every pytest session of whoever installs dpverify, so importing it is cheap:
numpy, sympy, mpmath, Hypothesis and the checker are imported only when a fixture, an
:func:`assert_private` call or a Hypothesis profile needs them.

Options (group "dpverify"): ``--dpverify-baseline-dir`` (default ``.dpverify-baselines``, relative
to the rootdir), ``--dpverify-update-baselines`` (rewrite baselines with the measured values) and
``--dpverify-profile``.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from dpverify.integrations._hypothesis_profiles import PROFILES, register_profiles

__all__ = [
    "assert_private",
    "AssumptionWarning",
    "BaselineStore",
    "BaselineEntry",
    "PROFILES",
    "TOLERANCE",
    "register_profiles",
]

#: How much a measured eps* (or delta) may exceed its baseline before the check fails.
TOLERANCE = 1e-9
_FORMAT_VERSION = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")

Mechanism = Callable[[tuple], Mapping[Hashable, Any]]


def assert_private(
    mechanism: Mechanism,
    *,
    records: Sequence[Hashable],
    n: int,
    epsilon: Any,
    delta: Any = 0.0,
    neighbors: str = "substitute",
    **verify_kwargs: Any,
):
    """Fail the current test unless ``mechanism`` is (epsilon, delta)-DP on every neighbouring pair.

    Runs :func:`dpverify.verify` (exhaustive and certified); ``verify_kwargs`` are passed on
    (``exchangeable=``, ``max_pairs=``, ``progress=``). Sampling code is checked as it ships by
    passing ``dpverify.from_sampler(sampler)`` as the mechanism (its paths enumerated exactly).

    Returns:
        The :class:`~dpverify.checking.checker.VerificationResult` when the claim holds (HOLDS or
        HOLDS_WITHIN_ROUNDING).

    Raises:
        AssertionError: the claim is VIOLATED (the message is ``result.summary()``: verdict,
            measured eps* and delta, witness), or UNDECIDED (the message starts with
            ``UNDECIDED``, says the claim could not be proved, which is not a violation, and why).
        InvalidArgument: misuse, as for :func:`dpverify.verify`.
        MechanismError, NondeterministicMechanism, EnvironmentFailure: no verdict (the mechanism
            raised, is not deterministic, or the environment failed); raised as they are, never
            turned into a privacy failure.
    """
    __tracebackhide__ = True
    from dpverify.checking.checker import verify
    from dpverify.verdict.engine import Verdict

    result = verify(
        mechanism, records=records, n=n, epsilon=epsilon, delta=delta, neighbors=neighbors,
        **verify_kwargs,
    )
    if result.verdict is Verdict.UNDECIDED:
        raise AssertionError(
            f"{result.summary()}\nUNDECIDED is not a privacy violation: the claim could not be proved (nor "
            "refuted), so the test fails; the lines above say what could not be decided."
        )
    if not result.holds:
        raise AssertionError(result.summary())
    if result.assuming:  # holds on an assumption the caller accepted: say so in the test report
        warnings.warn(AssumptionWarning(f"dpverify: {result.verdict_text}"), stacklevel=2)
    return result


class AssumptionWarning(UserWarning):
    """A claim held on an assumption the caller accepted (e.g. ``exchangeable="assume"``), tested
    but not proved; the message says "HOLDS, assuming ..., tested on ...". """


# -- baselines ----------------------------------------------------------------------------------


def _encode(value: float) -> float | str:
    return "inf" if value == math.inf else value


def _decode(value: float | str) -> float:
    return math.inf if value == "inf" else float(value)


@dataclass(frozen=True)
class BaselineEntry:
    """One stored measurement: the instance it was taken on and its worst-case privacy loss.

    Attributes:
        instance: what was measured (record universe, n, neighbour relation, epsilon); a baseline
            only compares with a measurement of the same instance.
        epsilon_star: worst-case pure privacy loss (``math.inf`` allowed).
        delta: worst-case ``delta(epsilon)`` at the instance's epsilon, None without epsilon.
        mechanism: the mechanism's qualified name (informative, not compared).
    """

    instance: dict
    epsilon_star: float
    delta: float | None
    mechanism: str

    def to_json(self) -> str:
        data = asdict(self)
        data["epsilon_star"] = _encode(self.epsilon_star)
        data["format"] = _FORMAT_VERSION
        return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> BaselineEntry:
        data = json.loads(text)
        return cls(
            instance=data["instance"],
            epsilon_star=_decode(data["epsilon_star"]),
            delta=None if data.get("delta") is None else float(data["delta"]),
            mechanism=data.get("mechanism", ""),
        )


class BaselineStore:
    """JSON privacy baselines in a directory, one file ``<name>.json`` per checked mechanism.

    Args:
        directory: where the baselines live.
        update: rewrite every baseline with the measured values instead of comparing.
    """

    def __init__(self, directory: Path, *, update: bool = False) -> None:
        self.directory = Path(directory)
        self.update = update
        self.events: list[str] = []

    def path(self, name: str) -> Path:
        if not isinstance(name, str) or not _NAME.match(name):
            from dpverify.errors import InvalidArgument

            raise InvalidArgument(
                f"baseline name={name!r} must be a non-empty file-name-safe string (letters, "
                "digits, '_', '.', '-', not starting with '.' or '-'), e.g. 'randomized_response'."
            )
        return self.directory / f"{name}.json"

    def load(self, name: str) -> BaselineEntry | None:
        path = self.path(name)
        if not path.exists():
            return None
        return BaselineEntry.from_json(path.read_text(encoding="utf-8"))

    def save(self, name: str, entry: BaselineEntry) -> None:
        path = self.path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(entry.to_json())
        os.replace(temporary, path)

    def check(
        self,
        name: str,
        mechanism: Mechanism,
        *,
        records: Sequence[Hashable],
        n: int,
        epsilon: Any | None = None,
        neighbors: str = "substitute",
        **analyze_kwargs: Any,
    ) -> BaselineEntry:
        """Measure ``mechanism`` and compare with the baseline stored under ``name``.

        Measures the worst-case eps* over every neighbouring pair (:func:`dpverify.analyze`) and,
        when ``epsilon`` is given, the worst-case delta at it. Writes the baseline when none is
        stored or the run has ``--dpverify-update-baselines``; otherwise fails when eps* (or delta)
        exceeds the stored value by more than :data:`TOLERANCE`. An improvement passes (update
        the baseline to lock it in). This is a regression check, not a claim check: combine it
        with :func:`assert_private`.

        Returns:
            The measured :class:`BaselineEntry`.

        Raises:
            pytest.fail.Exception: the privacy loss worsened, or the stored baseline was measured
                on another instance (the test fails with the stored and measured values).
            InvalidArgument: misuse (a bad name, epsilon or instance).
            MechanismError, NondeterministicMechanism, EnvironmentFailure: nothing was measured
                (raised as they are; no baseline is written or compared).
        """
        __tracebackhide__ = True
        from dpverify.checking.checker import analyze
        from dpverify.validation import check_epsilon

        path = self.path(name)
        records = tuple(records)
        if epsilon is not None:
            check_epsilon(epsilon)
        analysis = analyze(mechanism, records=records, n=n, neighbors=neighbors, **analyze_kwargs)
        symmetry = analysis.symmetry
        if symmetry is not None and symmetry.violation is None and not symmetry.proved:
            if analyze_kwargs.get("exchangeable") != "assume":
                pytest.fail(
                    f"dpverify baseline {name!r}: UNDECIDED -- the figures would rest on the declared "
                    f"exchangeability, not proved ({symmetry.evidence}); pass exchangeable='assume' to accept "
                    "it, or exchangeable=False to measure every ordered dataset.",
                    pytrace=False,
                )
            warnings.warn(AssumptionWarning(
                f"dpverify baseline {name!r}: measured assuming the output ignores the order of the records "
                f"({symmetry.evidence})"), stacklevel=2)
        measured = BaselineEntry(
            instance={
                "records": [repr(r) for r in records],
                "n": n,
                "neighbors": getattr(neighbors, "name", neighbors),
                "epsilon": None if epsilon is None else repr(epsilon),
            },
            epsilon_star=analysis.epsilon_star(),
            delta=None if epsilon is None else analysis.delta_for_epsilon(float(epsilon)),
            mechanism=getattr(mechanism, "__qualname__", repr(mechanism)),
        )
        stored = self.load(name)
        if stored is None or self.update:
            self.save(name, measured)
            self.events.append(f"{'updated' if stored else 'wrote'} baseline {path}")
            return measured
        if stored.instance != measured.instance:
            pytest.fail(
                f"dpverify baseline {name!r} ({path}) was recorded on another instance:\n"
                f"  stored:   {stored.instance}\n  measured: {measured.instance}\n"
                "rerun with --dpverify-update-baselines if the change is intended.",
                pytrace=False,
            )
        worse = []
        if measured.epsilon_star > stored.epsilon_star + TOLERANCE:
            worse.append(f"eps* {stored.epsilon_star:.12g} -> {measured.epsilon_star:.12g}")
        if (
            measured.delta is not None
            and stored.delta is not None
            and measured.delta > stored.delta + TOLERANCE
        ):
            worse.append(f"delta(eps={epsilon}) {stored.delta:.12g} -> {measured.delta:.12g}")
        if worse:
            pytest.fail(
                f"dpverify: privacy loss of {name!r} worsened against its baseline {path}: "
                + "; ".join(worse)
                + "\nrerun with --dpverify-update-baselines only if the new guarantee is intended.",
                pytrace=False,
            )
        if measured.epsilon_star < stored.epsilon_star - TOLERANCE:
            self.events.append(
                f"{name}: eps* improved {stored.epsilon_star:.12g} -> {measured.epsilon_star:.12g}"
                " (--dpverify-update-baselines to lock it in)"
            )
        return measured


# -- pytest hooks -------------------------------------------------------------------------------

_STORE_KEY = pytest.StashKey[BaselineStore]()
_PREVIOUS_PROFILE_KEY = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpverify", "dpverify: exact differential-privacy checks")
    group.addoption(
        "--dpverify-baseline-dir",
        action="store",
        default=".dpverify-baselines",
        metavar="DIR",
        help="directory of the JSON privacy baselines (relative to the rootdir); "
        "default: .dpverify-baselines",
    )
    group.addoption(
        "--dpverify-update-baselines",
        action="store_true",
        default=False,
        help="write the measured eps*/delta as the new baselines instead of comparing",
    )
    group.addoption(
        "--dpverify-profile",
        action="store",
        default=None,
        choices=sorted(PROFILES),
        help="load a Hypothesis effort profile: 'ci' (1000 examples, derandomized, no database) "
        "or 'dev' (50 examples)",
    )


def pytest_configure(config: pytest.Config) -> None:
    directory = Path(config.getoption("dpverify_baseline_dir"))
    if not directory.is_absolute():
        directory = config.rootpath / directory
    config.stash[_STORE_KEY] = BaselineStore(
        directory, update=config.getoption("dpverify_update_baselines")
    )
    profile = config.getoption("dpverify_profile")
    if profile is not None:
        if config.getoption("hypothesis_profile", None):
            raise pytest.UsageError(
                "--dpverify-profile and --hypothesis-profile both select a Hypothesis profile; "
                f"pass one of them (e.g. --hypothesis-profile={PROFILES[profile]})."
            )
        import hypothesis  # its entry point registers the profiles

        register_profiles()  # a no-op then; registers them when the entry point could not run
        config.stash[_PREVIOUS_PROFILE_KEY] = hypothesis.settings.get_current_profile_name()
        hypothesis.settings.load_profile(PROFILES[profile])


def pytest_unconfigure(config: pytest.Config) -> None:
    previous = config.stash.get(_PREVIOUS_PROFILE_KEY, None)
    if previous is not None:
        import hypothesis

        hypothesis.settings.load_profile(previous)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Before a :func:`~dpverify.integrations.strategies.privacy_property` test runs, name its
    Hypothesis report ("Failing test case: ...") after the test as collected, e.g. ``test_search``
    for ``test_search = privacy_property(...)``."""
    function = getattr(item, "obj", None)
    if function is not None and getattr(function, "_dpverify_privacy_property", False):
        from dpverify.integrations.strategies import _rename_privacy_property

        _rename_privacy_property(function, getattr(item, "originalname", item.name))


def pytest_report_header(config: pytest.Config) -> str | None:
    profile = config.getoption("dpverify_profile")
    return None if profile is None else f"dpverify: hypothesis profile {PROFILES[profile]!r}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    store = config.stash.get(_STORE_KEY, None)
    if store is not None and store.events:
        terminalreporter.section("dpverify baselines")
        for line in store.events:
            terminalreporter.write_line(line)


@pytest.fixture
def dpverify_baseline(request: pytest.FixtureRequest) -> BaselineStore:
    """The run's :class:`BaselineStore`: ``dpverify_baseline.check(name, mechanism, ...)``."""
    return request.config.stash[_STORE_KEY]
