"""Strict baselines: with ``--dpverify-strict`` or ``DPVERIFY_STRICT_BASELINES=1`` a baseline check whose
file is missing fails (and writes nothing), as pytest-regressions fails on a missing file; without
them the file is written and the test passes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

# the checker (and numpy) loaded before pytester's in-process runs snapshot sys.modules: numpy cannot
# be imported twice in one process
import dpverify.checking.checker  # noqa: F401
from dpverify.integrations.pytest_plugin import STRICT_ENVIRONMENT, BaselineStore

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[3]

BASELINE_TEST = '''
from fractions import Fraction
from dpverify.finite.records import labeled_records

def randomized_response(dataset):
    y = dataset[0][1]
    return {y: Fraction(3, 4), 1 - y: Fraction(1, 4)}

def test_baseline(dpverify_baseline):
    dpverify_baseline.check("rr", randomized_response, records=labeled_records(1), n=1, epsilon=1.0)
'''


@pytest.fixture
def run(pytester, monkeypatch):
    """pytest in-process on a test of randomized response's baseline, only this plugin loaded, no
    strict switch in the environment unless the test sets one."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv(STRICT_ENVIRONMENT, raising=False)
    pytester.syspathinsert(ROOT)
    pytester.makepyfile(BASELINE_TEST)

    def _run(*args):
        return pytester.runpytest_inprocess("-p", "dpverify.integrations.pytest_plugin", *args)

    return _run


def _baseline(pytester) -> Path:
    return pytester.path / ".dpverify-baselines" / "rr.json"


def test_a_missing_baseline_fails_with_the_strict_option_and_is_not_written(pytester, run):
    result = run("--dpverify-strict")
    result.assert_outcomes(failed=1)
    # eps* of randomized response at p = 3/4: ln((3/4) / (1/4)) = ln 3 = 1.09861228867
    result.stdout.fnmatch_lines([
        "*dpverify baseline 'rr': no baseline at *rr.json, and baselines are strict (--dpverify-strict or "
        "DPVERIFY_STRICT_BASELINES=1)*measured eps* = 1.09861228867.",
    ])
    assert not _baseline(pytester).exists()


def test_a_missing_baseline_passes_and_is_written_without_it(pytester, run):
    run().assert_outcomes(passed=1)
    stored = json.loads(_baseline(pytester).read_text())
    assert stored["epsilon_star"]["value"] == pytest.approx(math.log(3))


@pytest.mark.parametrize(("value", "outcome"), [("1", "failed"), ("true", "failed"), ("ON", "failed"),
                                                ("0", "passed"), ("", "passed"), ("no", "passed")])
def test_the_environment_switch(pytester, run, monkeypatch, value, outcome):
    monkeypatch.setenv(STRICT_ENVIRONMENT, value)
    run().assert_outcomes(**{outcome: 1})
    assert _baseline(pytester).exists() == (outcome == "passed")


def test_an_environment_value_that_is_not_a_switch_is_a_usage_error(run, monkeypatch):
    monkeypatch.setenv(STRICT_ENVIRONMENT, "maybe")
    result = run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*DPVERIFY_STRICT_BASELINES='maybe' is not a switch: set it to 1*or 0.*"])


def test_strict_mode_compares_a_stored_baseline_as_usual(pytester, run):
    run().assert_outcomes(passed=1)  # recorded without strict mode
    before = _baseline(pytester).read_text()
    result = run("--dpverify-strict")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["dpverify: strict baselines (a missing baseline fails)"])  # the run's header
    assert _baseline(pytester).read_text() == before


def test_update_writes_a_missing_baseline_even_in_strict_mode(pytester, run):
    run("--dpverify-strict", "--dpverify-update-baselines").assert_outcomes(passed=1)
    assert json.loads(_baseline(pytester).read_text())["epsilon_star"]["value"] == pytest.approx(math.log(3))


def test_the_store_is_lenient_unless_asked(tmp_path):
    assert BaselineStore(tmp_path).strict is False
    assert BaselineStore(tmp_path, strict=True).strict is True


def test_a_baseline_check_takes_the_doors_datasets_and_refuses_both_forms(pytester):
    pytester.makepyfile(
        """
        from fractions import Fraction

        import pytest

        from dpverify import Datasets
        from dpverify.errors import InvalidArgument


        def rr(dataset):
            (bit,) = dataset
            return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}


        def test_value(dpverify_baseline):
            entry = dpverify_baseline.check("rr", rr, Datasets([0, 1], 1), epsilon=1)
            # eps* = ln 3; delta(1) = 3/4 - e/4 = 0.0704295...
            assert entry.epsilon_star == pytest.approx(1.0986122886681098)
            assert entry.delta == pytest.approx(0.75 - 2.718281828459045 / 4)


        def test_both_forms(dpverify_baseline):
            with pytest.raises(InvalidArgument, match="not both"):
                dpverify_baseline.check("rr2", rr, Datasets([0, 1], 1), records=[0, 1], n=1)
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
