"""Tests of the pytest plugin: assert_private, JSON baselines, options and Hypothesis profiles."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import hypothesis
import pytest

import dpverify
import dpverify.checking.checker as checker
import dpverify.checking.front as front
from dpverify import InvalidArgument, Verdict
from dpverify.errors import EnvironmentFailure, MechanismError, NondeterministicMechanism
from dpverify.finite.records import labeled_records
from dpverify.integrations import contract
from dpverify.integrations.pytest_plugin import PROFILES, BaselineEntry, BaselineStore, assert_private

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[3]

MECHANISMS = '''
from fractions import Fraction
from dpverify.finite.records import labeled_records
from dpverify.integrations.pytest_plugin import assert_private

RECORDS = labeled_records(1)

def label_sum(dataset):
    return {sum(y for _, y in dataset): 1}

def randomized_response(dataset, p=Fraction(3, 4)):
    y = dataset[0][1]
    return {y: p, 1 - y: 1 - p}
'''


@pytest.fixture
def run(pytester, monkeypatch):
    """Run pytest in-process on pytester's files with only this plugin loaded."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # an installed copy must not load twice
    monkeypatch.delenv("DPVERIFY_STRICT_BASELINES", raising=False)  # these tests write missing baselines
    pytester.syspathinsert(ROOT)

    def _run(*args):
        return pytester.runpytest_inprocess("-p", "dpverify.integrations.pytest_plugin", *args)

    return _run


def _baseline_test(p: str, *, n: int = 1, epsilon: str = "1.0") -> str:
    return MECHANISMS + f'''
def test_baseline(dpverify_baseline):
    mechanism = lambda d: randomized_response(d, p=Fraction({p}))
    dpverify_baseline.check("rr", mechanism, records=RECORDS, n={n}, epsilon={epsilon})
'''


# -- assert_private ---------------------------------------------------------------------------------


def test_assert_private_fails_a_non_private_mechanism_and_passes_randomized_response(pytester, run):
    pytester.makepyfile(
        MECHANISMS
        + '''
import math

def test_label_sum():
    assert_private(label_sum, records=RECORDS, n=2, epsilon=1.0)

def test_randomized_response():
    assert_private(randomized_response, records=RECORDS, n=1, epsilon=math.log(3))
'''
    )
    result = run()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*VIOLATED: claimed (eps=1.0, delta=0.0)*", "*D  = *", "*D' = *"])


def test_assert_private_returns_the_result_when_the_claim_holds():
    def randomized_response(dataset):
        y = dataset[0][1]
        return {y: Fraction(3, 4), 1 - y: Fraction(1, 4)}

    result = assert_private(randomized_response, records=labeled_records(2), n=1, epsilon=math.log(3))
    assert result.holds and result.epsilon == pytest.approx(math.log(3))


def test_assert_private_checks_sampling_code_through_from_sampler():
    # The shipped code itself: keep the bit when the lazy uniform is below 3/4, exactly RR with
    # eps* = ln 3 = 1.0986; a claim of 1.1 holds, a claim of 1.0 fails with the exact witness 3/4 vs 1/4.
    from dpverify import from_sampler
    from dpverify.integrations.pytest_plugin import assert_private

    def shipped(dataset, rng):
        (bit,) = dataset
        return bit if rng.random() < Fraction(3, 4) else 1 - bit

    assert assert_private(from_sampler(shipped), records=[0, 1], n=1, epsilon=1.1).epsilon == pytest.approx(math.log(3))
    with pytest.raises(AssertionError, match="VIOLATED") as failure:
        assert_private(from_sampler(shipped), records=[0, 1], n=1, epsilon=1.0)
    assert "3/4" in str(failure.value) and "1/4" in str(failure.value)


def test_assert_private_passes_verify_options_on():
    def label_sum(dataset):
        return {sum(y for _, y in dataset): 1}

    with pytest.raises(AssertionError, match="exchangeable"):
        assert_private(label_sum, records=labeled_records(1), n=2, epsilon=1.0, exchangeable=True)


def _divide_by_label(dataset):
    """Raises ZeroDivisionError on every dataset whose first label is 0."""
    return {"out": Fraction(1, dataset[0][1]) * 0 + 1}


def test_assert_private_lets_a_mechanism_error_propagate_not_a_privacy_failure():
    with pytest.raises(MechanismError) as info:  # not an AssertionError "the claim does not hold"
        assert_private(_divide_by_label, records=labeled_records(1), n=1, epsilon=1.0)
    assert "raised ZeroDivisionError: Fraction(1, 0) -- on dataset ((0, 0),)" in str(info.value)
    assert info.value.dataset == ((0, 0),)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_mechanism_error_errors_the_test_with_the_dpverify_exception(pytester, run):
    pytester.makepyfile(
        MECHANISMS
        + """
from fractions import Fraction

def divide(dataset):
    return {"out": Fraction(1, dataset[0][1])}

def test_divide():
    assert_private(divide, records=RECORDS, n=1, epsilon=1.0)
"""
    )
    result = run()
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "VIOLATED" not in output and "AssertionError" not in output
    result.stdout.fnmatch_lines(
        ["E *dpverify.errors.MechanismError: the mechanism divide raised ZeroDivisionError*on dataset ((0, 0),)*"]
    )


@pytest.mark.parametrize(
    "error",
    [
        MechanismError("the mechanism f raised ZeroDivisionError: division by zero -- on dataset (1, 2).",
                       dataset=(1, 2)),
        NondeterministicMechanism("the mechanism f returned two different distributions for (0,)", dataset=(0,)),
        EnvironmentFailure("executor='dask': Dask's LocalCluster could not start"),
    ],
)
def test_no_verdict_errors_propagate_unchanged_from_both_helpers(error, monkeypatch, tmp_path):
    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(front, "verify", failing)
    monkeypatch.setattr(checker, "analyze", failing)
    with pytest.raises(type(error)) as info:
        assert_private(lambda d: {0: 1}, records=(0, 1), n=1, epsilon=1.0)
    assert info.value is error
    store = BaselineStore(tmp_path)
    with pytest.raises(type(error)) as info:
        store.check("rr", lambda d: {0: 1}, records=(0, 1), n=1, epsilon=1.0)
    assert info.value is error
    assert list(tmp_path.iterdir()) == [] and store.events == []  # nothing measured, nothing written


def test_an_undecided_verdict_is_not_reported_as_a_violation(monkeypatch):
    def randomized_response(dataset):
        y = dataset[0][1]
        return {y: Fraction(3, 4), 1 - y: Fraction(1, 4)}

    real = front.verify(randomized_response, records=labeled_records(1), n=1, epsilon=1.1)
    undecided = dataclasses.replace(real, holds=False, verdict=Verdict.UNDECIDED, undecided=1)
    monkeypatch.setattr(front, "verify", lambda *args, **kwargs: undecided)
    with pytest.raises(AssertionError) as info:
        assert_private(randomized_response, records=labeled_records(1), n=1, epsilon=1.1)
    message = str(info.value)
    assert message.startswith("UNDECIDED: claimed (eps=1.1")
    assert "1 pair(s) could not be decided exactly" in message
    assert message.endswith(
        "UNDECIDED is not a privacy violation: the claim could not be proved (nor refuted), so the test fails; "
        "the lines above say what could not be decided."
    )
    assert "VIOLATED" not in message and "witness" not in message


# -- baselines -------------------------------------------------------------------------------------


def test_baseline_is_written_then_a_worsened_mechanism_fails(pytester, run):
    pytester.makepyfile(_baseline_test("3, 4"))
    first = run()
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*dpverify baselines*", "*wrote baseline*rr.json*"])
    path = pytester.path / ".dpverify-baselines" / "rr.json"
    stored = json.loads(path.read_text())
    assert (stored["schema_version"], stored["document"]) == ("1.4", "baseline")
    assert stored["epsilon_star"]["value"] == pytest.approx(math.log(3))  # ln((3/4) / (1/4))
    assert stored["epsilon_star"]["kind"] == "finite"
    assert stored["delta"]["value"] == pytest.approx(0.75 - math.e / 4)  # hockey stick at eps = 1
    assert stored["instance"] == {"records": [[0, 0], [0, 1]], "n": 1, "neighbors": "substitute", "epsilon": 1.0}

    pytester.makepyfile(_baseline_test("4, 5"))  # eps* = ln 4 > ln 3
    second = run()
    second.assert_outcomes(failed=1)
    # ln 3 = 1.09861228867, ln 4 = 1.38629436112; delta(1) = 3/4 - e/4 = 0.0704295, 4/5 - e/5 = 0.256344
    second.stdout.fnmatch_lines([
        "*privacy loss of 'rr' worsened*: eps* 1.09861228867 (baseline) -> 1.38629436112 (measured);"
        " delta(eps=1.0) 0.0704295428852 (baseline) -> 0.256343634308 (measured)"
    ])
    assert json.loads(path.read_text()) == stored  # a failing run does not touch the baseline

    third = run("--dpverify-update-baselines")
    third.assert_outcomes(passed=1)
    third.stdout.fnmatch_lines(["*updated baseline*rr.json*"])
    assert json.loads(path.read_text())["epsilon_star"]["value"] == pytest.approx(math.log(4))


def test_an_improved_mechanism_passes_without_rewriting_the_baseline(pytester, run):
    pytester.makepyfile(_baseline_test("4, 5"))
    run().assert_outcomes(passed=1)
    path = pytester.path / ".dpverify-baselines" / "rr.json"
    before = path.read_text()
    pytester.makepyfile(_baseline_test("3, 4"))
    result = run()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*rr: eps* improved*"])
    assert path.read_text() == before


def test_a_baseline_of_another_instance_fails(pytester, run):
    pytester.makepyfile(_baseline_test("3, 4"))
    run().assert_outcomes(passed=1)
    pytester.makepyfile(_baseline_test("3, 4", n=2))
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*recorded on another instance*"])


def test_baseline_dir_option_and_infinite_loss(pytester, run):
    pytester.makepyfile(
        MECHANISMS
        + '''
def test_baseline(dpverify_baseline):
    dpverify_baseline.check("label_sum", label_sum, records=RECORDS, n=2)
'''
    )
    run("--dpverify-baseline-dir", "privacy/baselines").assert_outcomes(passed=1)
    text = (pytester.path / "privacy" / "baselines" / "label_sum.json").read_text()
    stored = json.loads(text)
    # standard JSON has no Infinity literal: the figure's kind says it is infinite
    assert stored["epsilon_star"] == {"value": None, "kind": "+inf", "exact": None}
    assert stored["delta"]["kind"] == "not_computed" and stored["instance"]["epsilon"] is None  # no epsilon given
    run("--dpverify-baseline-dir", "privacy/baselines").assert_outcomes(passed=1)  # inf is not worse


def test_baseline_names_must_be_file_name_safe(tmp_path):
    store = BaselineStore(tmp_path)
    for name in ("../escape", "", ".hidden", "a/b"):
        with pytest.raises(InvalidArgument, match="baseline name"):
            store.check(name, lambda d: {0: 1}, records=labeled_records(1), n=1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("epsilon_star", "delta"), [(math.log(3), 0.75 - math.e / 4), (math.inf, None), (0.0, 0.0)]
)
def test_baseline_entry_round_trips_through_the_json_contract(epsilon_star, delta):
    instance = {"records": [[0, 0], [0, 1]], "n": 2, "neighbors": "substitute", "epsilon": 1.0}
    entry = BaselineEntry(instance, epsilon_star, delta, "mech")
    text = entry.to_json()
    assert BaselineEntry.from_json(text) == entry
    data = json.loads(text)
    contract.validate(data, "baseline")
    assert list(data) == ["schema_version", "document", "dpverify_version", "mechanism", "instance", "epsilon_star", "delta"]
    assert data["schema_version"] == contract.SCHEMA_VERSION and data["instance"] == instance
    if epsilon_star == math.inf:
        assert data["epsilon_star"] == {"value": None, "kind": "+inf", "exact": None}
    else:  # a JSON number, bit for bit
        assert data["epsilon_star"] == {"value": epsilon_star, "kind": "finite", "exact": None}
    if delta is None:
        assert data["delta"] == {"value": None, "kind": "not_computed", "exact": None}
    else:
        assert data["delta"] == {"value": delta, "kind": "finite", "exact": None}


def test_a_baseline_file_holds_a_record_a_line_and_a_figure_a_line():
    instance = {"records": [[0, 0], [0, 1]], "n": 1, "neighbors": "substitute", "epsilon": 1.0}
    assert BaselineEntry(instance, math.inf, None, "label_sum").to_json() == f"""{{
  "schema_version": "1.4",
  "document": "baseline",
  "dpverify_version": "{dpverify.__version__}",
  "mechanism": "label_sum",
  "instance": {{
    "records": [
      [0, 0],
      [0, 1]
    ],
    "n": 1,
    "neighbors": "substitute",
    "epsilon": 1.0
  }},
  "epsilon_star": {{"value": null, "kind": "+inf", "exact": null}},
  "delta": {{"value": null, "kind": "not_computed", "exact": null}}
}}
"""


def _constant(dataset):
    return {0: 1}


def test_records_and_epsilon_are_stored_as_json_values(tmp_path):
    records = [(0, "a"), (1, "b"), Fraction(1, 2), None, frozenset({2, 1})]
    BaselineStore(tmp_path).check("constant", _constant, records=records, n=1, epsilon=Fraction(1, 4))
    stored = json.loads((tmp_path / "constant.json").read_text())
    assert stored["instance"] == {
        "records": [[0, "a"], [1, "b"], "1/2", None, [1, 2]],
        "n": 1,
        "neighbors": "substitute",
        "epsilon": 0.25,
    }
    # a constant output leaks nothing
    assert stored["epsilon_star"]["value"] == 0.0 and stored["delta"]["value"] == 0.0


# What dpverify wrote before schema_version 2 (records and epsilon as repr strings, eps* "inf").
_OLD_RR_BASELINE = """{
  "delta": 0.07042954288523873,
  "epsilon_star": 1.0986122886681098,
  "format": 1,
  "instance": {
    "epsilon": "1.0",
    "n": 1,
    "neighbors": "substitute",
    "records": [
      "(0, 0)",
      "(0, 1)"
    ]
  },
  "mechanism": "test_baseline.<locals>.<lambda>"
}
"""


def test_an_old_format_baseline_is_read_and_still_guards_the_stored_epsilon(pytester, run):
    path = pytester.path / ".dpverify-baselines" / "rr.json"
    path.parent.mkdir()
    path.write_text(_OLD_RR_BASELINE)
    entry = BaselineEntry.from_json(_OLD_RR_BASELINE)
    assert (entry.schema_version, entry.epsilon_star, entry.instance["records"]) == (1, math.log(3), ["(0, 0)", "(0, 1)"])
    assert BaselineEntry.from_json(_OLD_RR_BASELINE.replace("1.0986122886681098", '"inf"')).epsilon_star == math.inf

    pytester.makepyfile(_baseline_test("3, 4"))  # the mechanism it was measured on: same eps*
    same = run()
    same.assert_outcomes(passed=1)
    same.stdout.fnmatch_lines(["*rr: baseline*rr.json has schema_version 1*--dpverify-update-baselines rewrites it*"])
    assert path.read_text() == _OLD_RR_BASELINE  # read, never rewritten behind the user's back

    pytester.makepyfile(_baseline_test("4, 5"))  # eps* = ln 4 > ln 3
    worse = run()
    worse.assert_outcomes(failed=1)
    worse.stdout.fnmatch_lines(["*worsened*eps* 1.09861228867 (baseline) -> 1.38629436112 (measured)*"])

    run("--dpverify-update-baselines").assert_outcomes(passed=1)
    rewritten = json.loads(path.read_text())
    assert rewritten["schema_version"] == "1.4" and rewritten["epsilon_star"]["value"] == pytest.approx(math.log(4))
    assert rewritten["instance"]["records"] == [[0, 0], [0, 1]]


# What dpverify wrote as schema_version 2 (typed records, eps* and delta as bare numbers).
_V2_RR_BASELINE = """{
  "schema_version": 2,
  "mechanism": "test_baseline.<locals>.<lambda>",
  "instance": {
    "records": [
      [0, 0],
      [0, 1]
    ],
    "n": 1,
    "neighbors": "substitute",
    "epsilon": 1.0
  },
  "epsilon_star": 1.0986122886681098,
  "epsilon_star_infinite": false,
  "delta": 0.07042954288523873
}
"""


def test_a_schema_2_baseline_is_read_and_guards_until_rewritten_as_the_contract(pytester, run):
    path = pytester.path / ".dpverify-baselines" / "rr.json"
    path.parent.mkdir()
    path.write_text(_V2_RR_BASELINE)
    entry = BaselineEntry.from_json(_V2_RR_BASELINE)
    assert (entry.schema_version, entry.epsilon_star, entry.delta) == (2, math.log(3), 0.07042954288523873)

    pytester.makepyfile(_baseline_test("4, 5"))  # eps* = ln 4 > ln 3: the stored figure still guards
    worse = run()
    worse.assert_outcomes(failed=1)
    worse.stdout.fnmatch_lines(["*worsened*eps* 1.09861228867 (baseline) -> 1.38629436112 (measured)*"])
    assert path.read_text() == _V2_RR_BASELINE

    pytester.makepyfile(_baseline_test("3, 4"))
    same = run()
    same.assert_outcomes(passed=1)
    same.stdout.fnmatch_lines(["*rr: baseline*rr.json has schema_version 2 (figures as bare numbers)*rewrites it*"])
    run("--dpverify-update-baselines").assert_outcomes(passed=1)
    rewritten = json.loads(path.read_text())
    contract.validate(rewritten, "baseline")
    assert rewritten["epsilon_star"]["kind"] == "finite"
    assert rewritten["epsilon_star"]["value"] == pytest.approx(math.log(3))  # measured again: ln 3 up to rounding


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema_version": 2, "instance": {}, "epsilon_star": "1.0", "epsilon_star_infinite": false, "delta": null}',
         "epsilon_star='1.0' must be a JSON number, or null with \"epsilon_star_infinite\": true if infinite"),
        ('{"schema_version": 2, "instance": {}, "epsilon_star": 0.5, "epsilon_star_infinite": false, "delta": "0.1"}',
         "delta='0.1' must be a JSON number or null"),
        ('{"schema_version": 2, "instance": {}, "epsilon_star": 1.0, "epsilon_star_infinite": true, "delta": null}',
         "epsilon_star=1.0 must be null when epsilon_star_infinite is true"),
        ('{"schema_version": 3}', "schema_version=3 is not one this dpverify reads ('1.4', 2, or files with \"format\": 1)"),
        ('{"schema_version": "2.0", "document": "baseline"}',
         "schema_version='2.0' is not one this dpverify reads (1.x; this dpverify writes '1.4')"),
        ('{"schema_version": "1.1", "document": "audit", "instance": {}}', 'document=\'audit\' must be "baseline"'),
        ('{"schema_version": "1.1", "document": "baseline", "instance": {}, "epsilon_star": 0.5, "delta": null}',
         "epsilon_star=0.5 must be a figure object {\"value\": number | null, \"kind\": \"finite\" | \"+inf\" | "
         "\"-inf\" | \"not_computed\", \"exact\": string | null}"),
        ('{"schema_version": "1.1", "document": "baseline", "instance": {}, '
         '"epsilon_star": {"value": 1.0, "kind": "+inf", "exact": null}, "delta": null}',
         "epsilon_star: a '+inf' figure has value null, got value=1.0"),
        ('{"schema_version": "1.1", "document": "baseline", "instance": {}, '
         '"epsilon_star": {"value": null, "kind": "not_computed", "exact": null}, "delta": null}',
         "epsilon_star={'value': None, 'kind': 'not_computed', 'exact': None}: a measured eps* is a number or +inf"),
        ("[1, 2]", "a baseline file holds a JSON object, got list"),
        ('{"format": 1, "instance": {}}', "epsilon_star=None: a measured eps* is a number"),
        ('{"format": 1, "epsilon_star": 1.0}', "no key 'instance'"),
        ('{"format": 1, "epsilon_star": "1.5", "instance": {}}',
         "epsilon_star='1.5' must be a number, null or \"inf\" in a file with \"format\": 1"),
        ("{not json", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ],
)
def test_an_unreadable_baseline_names_the_file_the_value_and_the_fix(tmp_path, text, message):
    store = BaselineStore(tmp_path)
    (tmp_path / "rr.json").write_text(text)
    with pytest.raises(InvalidArgument) as info:
        store.load("rr")
    assert str(info.value) == (
        f"dpverify baseline 'rr' ({tmp_path / 'rr.json'}) cannot be read: {message}. Fix the file, or rewrite it "
        "from a measurement with --dpverify-update-baselines."
    )
    updating = BaselineStore(tmp_path, update=True)  # the fix it names works on that very file
    updating.check("rr", _constant, records=labeled_records(1), n=1)
    assert store.load("rr") == BaselineEntry(
        {"records": [[0, 0], [0, 1]], "n": 1, "neighbors": "substitute", "epsilon": None}, 0.0, None, "_constant"
    )


def test_an_entry_read_from_an_old_file_is_not_written_as_the_new_schema():
    with pytest.raises(ValueError, match="schema_version=1 file; only a measured entry"):
        BaselineEntry.from_json(_OLD_RR_BASELINE).to_json()


# -- options and profiles -----------------------------------------------------------------------------


def test_options_are_listed_in_their_own_group(run):
    result = run("--help")
    result.stdout.fnmatch_lines(
        ["dpverify*", "*--dpverify-baseline-dir=DIR*", "*--dpverify-update-baselines*", "*--dpverify-profile*"]
    )


def test_profile_option_loads_and_restores_the_hypothesis_profile(pytester, run):
    before = hypothesis.settings.get_current_profile_name()
    pytester.makepyfile(
        '''
import hypothesis

def test_profile():
    assert hypothesis.settings.get_current_profile_name() == "dpverify-ci"
    assert hypothesis.settings.default.derandomize
    assert hypothesis.settings.default.max_examples == 1000
'''
    )
    result = run("--dpverify-profile", "ci")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["dpverify: hypothesis profile 'dpverify-ci'"])
    assert hypothesis.settings.get_current_profile_name() == before


_COUNT_REGISTRATIONS = """
import json, sys

registered = []

def watch(frame, event, arg):  # every call of hypothesis.settings.register_profile, by profile name
    code = frame.f_code
    if event == "call" and code.co_name == "register_profile" and code.co_filename.endswith("_settings.py"):
        registered.append(frame.f_locals["name"])

import dpverify  # hooks nothing into the import system (tests/dpverify/test_architecture.py)
finders = list(sys.meta_path)
import dpverify.integrations.pytest_plugin
assert sys.meta_path == finders, "loading the plugin hooked the import system"
sys.setprofile(watch)
import hypothesis  # runs Hypothesis's entry points, dpverify's among them
from dpverify.integrations._hypothesis_profiles import register_profiles
for _ in range(int(sys.argv[1])):
    register_profiles()
sys.setprofile(None)
profiles = {}
for name in ("dpverify-ci", "dpverify-dev"):
    try:
        profiles[name] = hypothesis.settings.get_profile(name).max_examples
    except hypothesis.errors.InvalidArgument:
        profiles[name] = None
print(json.dumps({"registered": [n for n in registered if n.startswith("dpverify")], "profiles": profiles}))
"""


def _count_registrations(explicit_calls: int, **environment: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "HYPOTHESIS_NO_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_REGISTRATIONS, str(explicit_calls)], cwd=ROOT, env={**env, **environment},
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_profiles_are_registered_once_per_process_when_hypothesis_is_imported():
    # Each profile registered exactly once, by the entry point as Hypothesis is imported; the two
    # explicit calls of register_profiles after it register nothing.
    assert _count_registrations(2) == {
        "registered": ["dpverify-ci", "dpverify-dev"],
        "profiles": {"dpverify-ci": 1000, "dpverify-dev": 50},
    }


def test_the_entry_point_is_the_only_automatic_registration():
    # Hypothesis's entry points off: importing Hypothesis, the plugin loaded, registers nothing.
    assert _count_registrations(0, HYPOTHESIS_NO_PLUGINS="1") == {
        "registered": [], "profiles": {"dpverify-ci": None, "dpverify-dev": None}
    }


def test_hypothesis_profile_option_finds_the_dpverify_profiles(pytester, monkeypatch):
    # A fresh pytest process, as a user runs it, without dpverify's pytest plugin: Hypothesis's
    # entry point has registered the profiles by the time --hypothesis-profile loads one.
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_NO_PLUGINS", raising=False)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makepyfile(
        """
import hypothesis

def test_profile():
    assert hypothesis.settings.get_current_profile_name() == "dpverify-dev"
    assert hypothesis.settings.default.max_examples == 50
    assert hypothesis.settings.get_profile("dpverify-ci").max_examples == 1000
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:dpverify", "-p", "no:cacheprovider", "--hypothesis-profile", "dpverify-dev")
    result.assert_outcomes(passed=1)


def test_profiles_are_registered_without_replacing_hypothesis_ci():
    assert set(PROFILES) == {"ci", "dev"}
    assert hypothesis.settings.get_profile("dpverify-dev").deadline is None
    assert hypothesis.settings.get_profile("ci").max_examples != 1000  # Hypothesis's own, untouched


def test_privacy_property_in_a_test_module_reports_the_witness(pytester, run):
    pytester.makepyfile(
        MECHANISMS
        + '''
from dpverify.integrations.strategies import privacy_property

test_label_sum = privacy_property(label_sum, records=RECORDS, n=2, epsilon=1.0, max_examples=50)
test_randomized_response = privacy_property(randomized_response, records=RECORDS, n=1, epsilon=1.1)
'''
    )
    result = run("--dpverify-profile", "dev")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*privacy claim (epsilon=1.0, delta=0.0) violated*", "*D  = *", "*D' = *"])


# -- what a privacy_property failure shows ---------------------------------------------------------

LEAKY_SEARCH = '''
from fractions import Fraction
from dpverify.integrations.strategies import privacy_property

def leaky_count(dataset):
    """How many records are 2, reported one too high with probability 1/4: not private at all."""
    count = dataset.count(2)
    return {count: Fraction(3, 4), count + 1: Fraction(1, 4)}

test_counts_are_private = privacy_property(leaky_count, records=(0, 1, 2), n=30, epsilon=1.0)
'''


def _failure_section(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if "= FAILURES =" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return lines[start:end]


@pytest.mark.parametrize("tb", [[], ["--tb=short"], ["--tb=long"]], ids=["default", "short", "long"])
def test_a_privacy_property_failure_is_the_witness_under_the_users_test_name(pytester, run, tb):
    pytester.makepyfile(test_user=LEAKY_SEARCH)
    result = run("-p", "_hypothesis_pytestplugin", *tb)  # Hypothesis's plugin, as in a user's session
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_user.py::test_counts_are_private - AssertionError: privacy claim*"])
    section = _failure_section(result.stdout.lines)
    # Before: 113 lines (default), 80 (--tb=short), 110 (--tb=long): dpverify's source, then the
    # pair one record per line; now the witness and Hypothesis's two-line pair.
    assert len(section) <= 20, "\n".join(section)
    text = "\n".join(section)
    assert "test_leaky_count_privacy" not in result.stdout.str()  # the name dpverify made up
    assert re.search(r"^_+ test_counts_are_private _+$", text, re.MULTILINE)
    assert re.search(r"^\s*Failing test case: test_counts_are_private\($", text, re.MULTILINE)
    shown_source = [line for line in section if re.search(r"dpverify/|strategies\.py|\bdef |\braise |tracebackhide", line)]
    assert shown_source == []
    # One line per dataset: 30 records each, one substituted; D holds fewer 2s, so S = {D's count}
    # has P = 3/4 under D and Q = 0 under D' (whose outputs are count + 1 and count + 2).
    pair = r"\(((?:[012], ){29}[012])\)"
    dataset = re.search(rf"^\s*D  = {pair}$", text, re.MULTILINE)
    neighbor = re.search(rf"^\s*D' = {pair}$", text, re.MULTILINE)
    assert dataset and neighbor, text
    d, d_prime = (tuple(int(r) for r in found.group(1).split(", ")) for found in (dataset, neighbor))
    assert sum(a != b for a, b in zip(d, d_prime)) == 1 and d_prime.count(2) == d.count(2) + 1
    for expected in (
        f"S  = {{{d.count(2)}}}",
        "P[M(D) in S]  = 0.75 (3/4)",
        "P[M(D') in S] = 0 (0)",
        "P[M(D) in S] - e^eps * P[M(D') in S] = 0.75 > delta = 0",
        "this pair: eps* = inf (fails every epsilon < eps* at delta = 0), delta(eps=1.0) = 0.75",
    ):
        assert sum(line.strip() == expected for line in section) == 1, (expected, text)
    # Hypothesis's own report of the pair: at most one line per dataset too.
    first = next(i for i, line in enumerate(section) if "Failing test case:" in line)
    report = section[first : next(i for i in range(first, len(section)) if section[i].strip() == ")") + 1]
    assert len(report) == 4 and sum(bool(re.search(r"\((?:[012], ){29}[012]\)", line)) for line in report) == 2


def test_profile_option_conflicts_with_hypothesis_profile(pytester, run):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = run("-p", "_hypothesis_pytestplugin", "--dpverify-profile", "ci", "--hypothesis-profile", "ci")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dpverify-profile and --hypothesis-profile both*"])
