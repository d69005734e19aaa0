"""pytest plugin: privacy regression checks in CI (registered under the ``pytest11`` entry point).

* :func:`assert_private` — ``assert_private(mechanism, Datasets(records, n), PureDp(1))`` runs the
  exhaustive, certified :func:`dpverify.verify` and fails the test with the verdict and witness
  when the claim does not hold (VIOLATED), or says it could not be proved (UNDECIDED).
* the ``dpverify_baseline`` fixture — ``dpverify_baseline.check("rr", mechanism, records=..., n=1,
  epsilon=...)`` measures the worst-case ``eps*`` (and ``delta(eps)``) and compares it with a JSON
  baseline stored per name: a privacy loss that *worsens* beyond the baseline (+1e-9) fails the
  build; a missing baseline is written, or, in strict mode (``--dpverify-strict`` or the environment
  variable ``DPVERIFY_STRICT_BASELINES=1``, for CI), fails the test: a check with no baseline to
  compare with cannot fail, so in CI it must not pass.
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
to the rootdir), ``--dpverify-update-baselines`` (rewrite baselines with the measured values),
``--dpverify-strict`` (a missing baseline fails; also :data:`STRICT_ENVIRONMENT` set to ``1``,
``true``, ``yes`` or ``on``; ``--dpverify-update-baselines`` still writes it) and ``--dpverify-profile``.

Baseline files, ``<name>.json``, are documents of dpverify's JSON contract
(:mod:`dpverify.integrations.contract`, docs/json.md), ``"document": "baseline"``::

    {
      "schema_version": "1.4",
      "document": "baseline",
      "dpverify_version": "0.1.0",
      "mechanism": "randomized_response",
      "instance": {
        "records": [
          [0, 0],
          [0, 1]
        ],
        "n": 1,
        "neighbors": "substitute",
        "epsilon": 1.0
      },
      "epsilon_star": {"value": 1.0986122886681096, "kind": "finite", "exact": null},
      "delta": {"value": 0.07042954288523873, "kind": "finite", "exact": null}
    }

* ``epsilon_star`` and ``delta`` (the worst-case delta at the instance's epsilon) are figures, as in
  every other dpverify document: an infinite eps* is ``{"value": null, "kind": "+inf", "exact":
  null}``, and ``delta`` is ``"not_computed"`` when the instance has no epsilon.
  ``instance.epsilon`` (finite: dpverify refuses an infinite one) is a number, or null.
* Records are JSON values in the contract's encoding: tuples and lists are arrays; int, str, bool
  and None stay themselves; a finite float is a number; a Fraction is its text ``"3/4"``; a set is
  an array sorted by the repr of its members; a mapping is an object with text keys; a non-finite
  float is ``"inf"``, ``"-inf"`` or ``"nan"``; anything else is its ``repr``.
* ``mechanism`` is informative; ``instance`` must equal the measured instance.
* Older files are still read, as they are, and the run's summary says ``--dpverify-update-baselines``
  rewrites them: ``"schema_version": 2`` (the same instance encoding, eps* and delta as bare numbers,
  an infinite eps* as null with ``"epsilon_star_infinite": true``) and ``"format": 1`` (epsilon and
  every record as their repr strings, an infinite eps* as ``"inf"``; the instance is compared in
  that old encoding). They are not refused, because the only way out would be to re-measure with
  ``--dpverify-update-baselines``, which accepts whatever the code does now, the very thing a
  baseline is there to stop.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
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
    "SCHEMA_VERSION",
    "TOLERANCE",
    "STRICT_ENVIRONMENT",
    "register_profiles",
]

#: How much a measured eps* (or delta) may exceed its baseline before the check fails.
TOLERANCE = 1e-9
#: The version of the baseline files written: the JSON contract's (see "Baseline files" in the
#: module docstring). Files of the older baseline formats 1 and 2 are read too.
SCHEMA_VERSION = "1.4"
#: The environment variable that turns strict baselines on (as ``--dpverify-strict``): ``1``, ``true``,
#: ``yes`` or ``on``; ``0``, ``false``, ``no``, ``off`` or empty leave them off.
STRICT_ENVIRONMENT = "DPVERIFY_STRICT_BASELINES"
_DOCUMENT = "baseline"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")

Mechanism = Callable[[tuple], Mapping[Any, Any]]  # Mapping is invariant in its key: dict[int, Fraction] must fit


def assert_private(
    mechanism: Mechanism,
    inputs: Any = None,
    claim: Any = None,
    *,
    epsilon: Any = None,
    delta: Any = None,
    records: Sequence[Hashable] | None = None,
    n: int | None = None,
    neighbors: str | None = None,
    **verify_kwargs: Any,
) -> Any:
    """Fail the current test unless ``mechanism`` satisfies the claim on every neighbouring pair.

    Runs :func:`dpverify.verify` (exact and certified) with the same arguments:
    ``assert_private(mechanism, Datasets(records, n), PureDp(1))``, or the short form
    ``assert_private(mechanism, records=..., n=3, epsilon=1.0)`` (``delta`` defaults to 0 there);
    ``verify_kwargs`` are passed on (``max_pairs=``, ``progress=``, ``executor=``). Sampling code
    is checked as it ships by passing ``dpverify.from_sampler(sampler)`` as the mechanism.

    Returns:
        The :class:`~dpverify.verdict.results.VerificationResult` when the claim holds (HOLDS or
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
    from dpverify.checking.front import verify
    from dpverify.verdict.engine import Verdict

    if claim is None and epsilon is not None and delta is None:
        delta = 0.0  # the short form's claim is (epsilon, 0)
    if inputs is None and records is not None and neighbors is None:
        neighbors = "substitute"
    result = verify(
        mechanism, inputs, claim, epsilon=epsilon, delta=delta, records=records, n=n, neighbors=neighbors,
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


def _json_value(value: Any) -> Any:
    """A record (or epsilon) as a plain JSON value: the JSON contract's encoding
    (:func:`dpverify.integrations.contract.encode`: tuples as arrays, Fractions as ``"3/4"``, anything
    else its repr), so a baseline file and ``dpverify check --format json`` write records alike."""
    from dpverify.integrations.contract import encode

    return encode(value)


def _dumps(value: Any, *, expand: int, indent: int = 0) -> str:
    """JSON with the outer ``expand`` levels of objects and arrays one item a line, and the values
    below them (a record) on one line each: a file of many records reads and diffs a record a line.
    A figure object is one line too."""
    if expand and isinstance(value, (dict, list)) and value and not _is_figure(value):
        pad = " " * (indent + 2)
        if isinstance(value, dict):
            items = [f"{pad}{json.dumps(key)}: {_dumps(item, expand=expand - 1, indent=indent + 2)}"
                     for key, item in value.items()]
            opening, closing = "{", "}"
        else:
            items = [f"{pad}{_dumps(item, expand=expand - 1, indent=indent + 2)}" for item in value]
            opening, closing = "[", "]"
        return opening + "\n" + ",\n".join(items) + "\n" + " " * indent + closing
    return json.dumps(value, allow_nan=False)


def _is_figure(value: Any) -> bool:
    return isinstance(value, dict) and list(value) == ["value", "kind", "exact"]


def _number(data: Mapping[str, Any], key: str, *, infinite_key: str | None = None) -> float | None:
    """``data[key]``: a JSON number, or null (infinite when ``data[infinite_key]`` is true)."""
    value = data.get(key)
    infinite = data.get(infinite_key, False) if infinite_key else False
    if not isinstance(infinite, bool):
        raise ValueError(f"{infinite_key}={infinite!r} must be true or false")
    if infinite:
        if value is not None:
            raise ValueError(f"{key}={value!r} must be null when {infinite_key} is true")
        return math.inf
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        return None if value is None else float(value)
    if infinite_key:
        raise ValueError(f'{key}={value!r} must be a JSON number, or null with "{infinite_key}": true if infinite')
    raise ValueError(f"{key}={value!r} must be a JSON number or null")


def _legacy_number(key: str, value: Any) -> float | None:
    """A number of a schema-1 file: a number, null or the string "inf"."""
    if value is None:
        return None
    if value == "inf":
        return math.inf
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f'{key}={value!r} must be a number, null or "inf" in a file with "format": 1')


def _legacy_epsilon_star(value: Any) -> float:
    number = _legacy_number("epsilon_star", value)
    if number is None:
        raise ValueError("epsilon_star=None: a measured eps* is a number")
    return number


@dataclass(frozen=True)
class BaselineEntry:
    """One stored measurement: the instance it was taken on and its worst-case privacy loss.

    Attributes:
        instance: what was measured (record universe, n, neighbour relation, epsilon), in its JSON
            form; a baseline only compares with a measurement of the same instance.
        epsilon_star: worst-case pure privacy loss (``math.inf`` allowed).
        delta: worst-case ``delta(epsilon)`` at the instance's epsilon, None without epsilon.
        mechanism: the mechanism's qualified name (informative, not compared).
        schema_version: the file format it was read from: :data:`SCHEMA_VERSION`, 2 (figures as bare
            numbers), or 1 (written before numbers and records were typed; its ``instance`` keeps that
            encoding).
    """

    instance: dict
    epsilon_star: float
    delta: float | None
    mechanism: str
    schema_version: str | int = SCHEMA_VERSION

    def to_json(self) -> str:
        """The file's text, in :data:`SCHEMA_VERSION` (see the module docstring).

        Raises:
            ValueError: the entry was read from a schema-1 file (its instance is in the old encoding);
                measure it again to write it.
        """
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(
                f"this baseline entry was read from a schema_version={self.schema_version} file; only a "
                f"measured entry (schema_version={SCHEMA_VERSION}) is written: rerun with --dpverify-update-baselines."
            )
        from dpverify.integrations.contract import figure, header

        data = {
            **header(_DOCUMENT),
            "mechanism": self.mechanism,
            "instance": self.instance,
            "epsilon_star": figure(self.epsilon_star),
            "delta": figure(math.nan if self.delta is None else self.delta),
        }
        return _dumps(data, expand=3) + "\n"

    @classmethod
    def from_json(cls, text: str) -> BaselineEntry:
        """Read a baseline file of :data:`SCHEMA_VERSION`, or of schema 1 (``"format": 1``).

        Raises:
            ValueError: not a baseline file of a schema this dpverify reads (the message names the
                bad key and value).
        """
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"a baseline file holds a JSON object, got {type(data).__name__}")
        version = data.get("schema_version")
        if version is None and data.get("format") == 1:  # written before schema_version 2
            return cls(
                instance=data["instance"],
                epsilon_star=_legacy_epsilon_star(data.get("epsilon_star")),
                delta=_legacy_number("delta", data.get("delta")),
                mechanism=data.get("mechanism", ""),
                schema_version=1,
            )
        if isinstance(version, str):
            return cls._from_contract(data)
        if version != 2:
            raise ValueError(
                f"schema_version={version!r} is not one this dpverify reads ({SCHEMA_VERSION!r}, 2, or files "
                'with "format": 1)'
            )
        epsilon_star = _number(data, "epsilon_star", infinite_key="epsilon_star_infinite")
        if epsilon_star is None:
            raise ValueError('epsilon_star=None: a measured eps* is a number, or null with "epsilon_star_infinite": true')
        instance = data.get("instance")
        if not isinstance(instance, dict):
            raise ValueError(f"instance={instance!r} must be a JSON object")
        return cls(
            instance=instance,
            epsilon_star=epsilon_star,
            delta=_number(data, "delta"),
            mechanism=str(data.get("mechanism", "")),
            schema_version=2,
        )

    @classmethod
    def _from_contract(cls, data: dict) -> BaselineEntry:
        """A baseline document of the JSON contract (any 1.x: a reader ignores keys it does not know)."""
        from dpverify.integrations.contract import read_figure

        version = data["schema_version"]
        if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
            raise ValueError(
                f"schema_version={version!r} is not one this dpverify reads (1.x; this dpverify writes "
                f"{SCHEMA_VERSION!r})"
            )
        if data.get("document") != _DOCUMENT:
            raise ValueError(f'document={data.get("document")!r} must be "baseline"')
        instance = data.get("instance")
        if not isinstance(instance, dict):
            raise ValueError(f"instance={instance!r} must be a JSON object")
        epsilon_star = read_figure(data.get("epsilon_star"), "epsilon_star")
        if math.isnan(epsilon_star) or epsilon_star == -math.inf:
            raise ValueError(f"epsilon_star={data['epsilon_star']!r}: a measured eps* is a number or +inf")
        delta = read_figure(data.get("delta"), "delta")
        if math.isinf(delta):
            raise ValueError(f"delta={data['delta']!r}: a measured delta is a number, or not_computed")
        return cls(
            instance=instance,
            epsilon_star=epsilon_star,
            delta=None if math.isnan(delta) else delta,
            mechanism=str(data.get("mechanism", "")),
        )


def _instance(records: tuple, n: int, neighbors: Any, epsilon: Any | None, schema_version: str | int) -> dict:
    """The instance a measurement is compared on, in the encoding of ``schema_version``."""
    neighbors = getattr(neighbors, "name", neighbors)
    if schema_version == 1:  # records and epsilon as their repr strings
        return {
            "records": [repr(r) for r in records],
            "n": n,
            "neighbors": neighbors,
            "epsilon": None if epsilon is None else repr(epsilon),
        }
    return {
        "records": [_json_value(r) for r in records],
        "n": n,
        "neighbors": neighbors,
        "epsilon": None if epsilon is None else float(epsilon),
    }


class BaselineStore:
    """JSON privacy baselines in a directory, one file ``<name>.json`` per checked mechanism.

    Args:
        directory: where the baselines live.
        update: rewrite every baseline with the measured values instead of comparing.
        strict: a missing baseline fails the check instead of being written (``update`` still writes it).
    """

    def __init__(self, directory: Path, *, update: bool = False, strict: bool = False) -> None:
        self.directory = Path(directory)
        self.update = update
        self.strict = strict
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
        """The baseline stored under ``name``, None when there is none.

        Raises:
            InvalidArgument: the file is not a baseline this dpverify reads (the message names the
                file, the bad key and the fix).
        """
        path = self.path(name)
        if not path.exists():
            return None
        try:
            return BaselineEntry.from_json(path.read_text(encoding="utf-8"))
        except (ValueError, KeyError) as error:  # json.JSONDecodeError is a ValueError
            from dpverify.errors import InvalidArgument

            problem = f"no key {error}" if isinstance(error, KeyError) else str(error)
            raise InvalidArgument(
                f"dpverify baseline {name!r} ({path}) cannot be read: {problem}. Fix the file, or rewrite it "
                "from a measurement with --dpverify-update-baselines."
            ) from error

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
        inputs: Any = None,
        *,
        records: Sequence[Hashable] | None = None,
        n: int | None = None,
        epsilon: Any | None = None,
        neighbors: Any = None,
        **analyze_kwargs: Any,
    ) -> BaselineEntry:
        """Measure ``mechanism`` on ``inputs`` (a :class:`dpverify.Datasets`, or the short form
        ``records=``, ``n=``, ``neighbors=``) and compare with the baseline stored under ``name``.

        Measures the worst-case eps* over every neighbouring pair (:func:`dpverify.analyze`) and,
        when ``epsilon`` is given, the worst-case delta at it. Writes the baseline when none is
        stored (in strict mode, fails instead) or the run has ``--dpverify-update-baselines``;
        otherwise fails when eps* (or delta)
        exceeds the stored value by more than :data:`TOLERANCE`. An improvement passes (update
        the baseline to lock it in). This is a regression check, not a claim check: combine it
        with :func:`assert_private`.

        Returns:
            The measured :class:`BaselineEntry`.

        Raises:
            pytest.fail.Exception: the privacy loss worsened, the stored baseline was measured on
                another instance (the test fails with the stored and measured values), or there is no
                baseline in strict mode.
            InvalidArgument: misuse (a bad name, epsilon or instance).
            MechanismError, NondeterministicMechanism, EnvironmentFailure: nothing was measured
                (raised as they are; no baseline is written or compared).
        """
        __tracebackhide__ = True
        from dpverify.checking.checker import analyze
        from dpverify.errors import InvalidArgument
        from dpverify.validation import check_epsilon

        path = self.path(name)
        if inputs is not None:  # the door's value: its fields, never both forms
            from dpverify.checking.front import Datasets

            if not isinstance(inputs, Datasets) or records is not None or n is not None or neighbors is not None:
                raise InvalidArgument(
                    f"dpverify_baseline.check({name!r}, ...) takes Datasets(records, n, ...) or the keywords records=, "
                    f"n=, neighbors=, not both; got inputs={inputs!r}."
                )
            records, n, neighbors = tuple(inputs.records), inputs.n, inputs.neighbors
            if inputs.exchangeable is not None:
                analyze_kwargs.setdefault("exchangeable", inputs.exchangeable)
        if records is None or n is None:
            raise InvalidArgument(f"dpverify_baseline.check({name!r}, ...) needs the inputs: Datasets(records, n), "
                                  "or records= and n=.")
        neighbors = "substitute" if neighbors is None else neighbors
        records = tuple(records)
        if epsilon is not None:
            check_epsilon(epsilon)
        from dpverify.checking.front import Datasets, measurable

        measured_mechanism = measurable(mechanism, Datasets(records, n, neighbors))  # traced noise: integrated
        analysis = analyze(measured_mechanism, records=records, n=n, neighbors=neighbors, **analyze_kwargs)
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
            instance=_instance(records, n, neighbors, epsilon, SCHEMA_VERSION),
            epsilon_star=analysis.epsilon_star(),
            delta=None if epsilon is None else analysis.delta_for_epsilon(float(epsilon)),
            mechanism=getattr(mechanism, "__qualname__", repr(mechanism)),
        )
        stored = None if self.update else self.load(name)  # an update rewrites even an unreadable file
        if stored is None and self.strict and not self.update:
            pytest.fail(
                f"dpverify baseline {name!r}: no baseline at {path}, and baselines are strict (--dpverify-strict or "
                f"{STRICT_ENVIRONMENT}=1): a check with nothing to compare with cannot fail. Record it by running the "
                f"test without strict mode (or with --dpverify-update-baselines), then commit {path.name}; measured "
                f"eps* = {measured.epsilon_star:.12g}.",
                pytrace=False,
            )
        if stored is None:
            existed = path.exists()
            self.save(name, measured)
            self.events.append(f"{'updated' if existed else 'wrote'} baseline {path}")
            return measured
        compared = _instance(records, n, neighbors, epsilon, stored.schema_version)
        if stored.instance != compared:
            pytest.fail(
                f"dpverify baseline {name!r} ({path}) was recorded on another instance:\n"
                f"  stored:   {stored.instance}\n  measured: {compared}\n"
                "rerun with --dpverify-update-baselines if the change is intended.",
                pytrace=False,
            )
        if stored.schema_version != SCHEMA_VERSION:
            old = "numbers and records as text" if stored.schema_version == 1 else "figures as bare numbers"
            self.events.append(
                f"{name}: baseline {path} has schema_version {stored.schema_version} ({old}); read as it is. "
                f"--dpverify-update-baselines rewrites it as schema_version {SCHEMA_VERSION}"
            )
        worse = []
        if measured.epsilon_star > stored.epsilon_star + TOLERANCE:
            worse.append(f"eps* {stored.epsilon_star:.12g} (baseline) -> {measured.epsilon_star:.12g} (measured)")
        if (
            measured.delta is not None
            and stored.delta is not None
            and measured.delta > stored.delta + TOLERANCE
        ):
            worse.append(
                f"delta(eps={epsilon}) {stored.delta:.12g} (baseline) -> {measured.delta:.12g} (measured)"
            )
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
        "--dpverify-strict",
        action="store_true",
        default=False,
        help=f"fail a baseline check whose baseline file is missing instead of writing it (for CI; also "
        f"{STRICT_ENVIRONMENT}=1)",
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
    strict = config.getoption("dpverify_strict") or _strict_environment(os.environ.get(STRICT_ENVIRONMENT, ""))
    config.stash[_STORE_KEY] = BaselineStore(
        directory, update=config.getoption("dpverify_update_baselines"), strict=strict
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


def _strict_environment(text: str) -> bool:
    """:data:`STRICT_ENVIRONMENT`'s value as a switch; anything but a yes or a no is a usage error."""
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("", "0", "false", "no", "off"):
        return False
    raise pytest.UsageError(
        f"{STRICT_ENVIRONMENT}={text!r} is not a switch: set it to 1 (strict baselines: a missing one fails) or 0."
    )


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


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    profile = config.getoption("dpverify_profile")
    if profile is not None:
        lines.append(f"dpverify: hypothesis profile {PROFILES[profile]!r}")
    store = config.stash.get(_STORE_KEY, None)
    if store is not None and store.strict:
        lines.append("dpverify: strict baselines (a missing baseline fails)")
    return lines


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
