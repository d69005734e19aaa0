"""Traced continuous noise everywhere the door goes: an audit file's rows, the pytest helpers, the
command line (``check --sampler``, with ``--patch`` for numpy's global generator) and its JSON.
Each verdict carries the real-arithmetic assumption."""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest

from dpverify import Datasets, PureDp, from_sampler
from dpverify.integrations import contract
from dpverify.integrations.cli import main
from dpverify.testing import AssumptionWarning, BaselineStore, assert_private

AUDIT_FILE = '''
import numpy as np
from dpverify import Datasets, PureDp, from_sampler
from dpverify.auditing import Audit, Row


def laplace_release(dataset, rng):
    return dataset[0] + rng.laplace(scale=2.0)


def laplace_release_broken(dataset, rng):
    return dataset[0] + rng.laplace(scale=1.0)


def noisy_max(dataset, rng):
    return int(np.argmax(np.asarray(dataset) + np.random.laplace(scale=2.0, size=len(dataset))))


CLAIM = "the Laplace mechanism of scale 2 is 1/2-DP for a sensitivity-1 value"
audit = Audit("Laplace, traced", [
    Row(from_sampler(laplace_release), Datasets([0, 1], n=1), PureDp(0.5), statement=CLAIM),
    Row(from_sampler(laplace_release_broken), Datasets([0, 1], n=1), PureDp(0.5), statement=CLAIM,
        expect="violated"),
    Row(from_sampler(noisy_max, patch=["numpy.random"]), Datasets([0, 1], n=3), PureDp(1),
        statement="report noisy max with Lap(2) noise is 1-DP"),
])
'''


def test_an_audit_file_decides_traced_rows(tmp_path, capsys):
    path = tmp_path / "traced_audit.py"
    path.write_text(textwrap.dedent(AUDIT_FILE))
    code = main(["audit", str(path), "--output", str(tmp_path / "out"), "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "3 rows: 3 as expected (2 hold, 1 mutant caught)" in out
    document = json.loads((tmp_path / "out" / "audit.json").read_text())
    contract.validate(document, "audit")
    release, broken, noisy_max = document["results"]
    assert release["epsilon_star"]["value"] == pytest.approx(0.5)  # sensitivity 1 / scale 2
    assert broken["verdict"] == "VIOLATED" and broken["epsilon_star"]["value"] == pytest.approx(1.0)
    for row in (release, noisy_max):
        assert any(a["name"] == "real arithmetic" for a in row["assumptions"]), row["assumptions"]
    assert "real arithmetic" in (tmp_path / "out" / "audit.html").read_text()


def test_assert_private_passes_a_traced_sampler_and_fails_its_mutant():
    def release(dataset, rng):
        return dataset[0] + rng.laplace(scale=2.0)

    def broken(dataset, rng):
        return dataset[0] + rng.laplace(scale=1.0)

    with pytest.warns(AssumptionWarning, match="assuming real arithmetic"):  # the model, said where it is used
        result = assert_private(from_sampler(release), Datasets([0, 1], n=1), PureDp(0.5))
    assert result.epsilon == pytest.approx(0.5)
    with pytest.raises(AssertionError, match="VIOLATED"):
        assert_private(from_sampler(broken), Datasets([0, 1], n=1), PureDp(0.5))


def test_a_baseline_measures_a_traced_argmax(tmp_path):
    def noisy_max(dataset, rng):
        return int(np.argmax(np.asarray(dataset) + rng.laplace(scale=2.0, size=len(dataset))))

    entry = BaselineStore(tmp_path).check("traced_noisy_max", from_sampler(noisy_max), Datasets([0, 1], n=3))
    # two records: the argmax of (1, 0, 0) against (0, 0, 0): P(argmax = 0) goes from 1/3 to more;
    # eps* is that of the hand-written ReportNoisyMax(1) on the same datasets
    from dpverify import verify
    from dpverify.mechanisms.noisy_max import ReportNoisyMax

    assert entry.epsilon_star == pytest.approx(verify(ReportNoisyMax(1), Datasets([0, 1], n=3), PureDp(1)).epsilon)


MODULE = '''
import numpy as np


def release(dataset, rng):
    return dataset[0] + rng.laplace(scale=2.0)


def global_noisy_max(dataset, rng):
    return int(np.argmax(np.asarray(dataset) + np.random.laplace(scale=2.0, size=len(dataset))))
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "traced_user_mods.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return "traced_user_mods"


def test_check_sampler_decides_traced_noise_and_says_what_it_assumes(user_module, capsys):
    code = main(["check", f"{user_module}:release", "--sampler", "--records", "0,1", "--n", "1", "--epsilon", "0.5"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("HOLDS, assuming real arithmetic") and "Mironov 2012" in out
    code = main(["check", f"{user_module}:release", "--sampler", "--records", "0,1", "--n", "1", "--epsilon", "0.4",
                 "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    contract.validate(document, "check")
    assert code == 1 and document["verdict"] == "VIOLATED"
    assert document["epsilon_star"]["value"] == pytest.approx(0.5)
    assert [a["name"] for a in document["assumptions"]] == ["real arithmetic"]


def test_check_sampler_routes_numpys_global_generator_with_patch(user_module, capsys):
    code = main(["check", f"{user_module}:global_noisy_max", "--sampler", "--patch", "numpy.random", "--records", "0,1",
                 "--n", "3", "--epsilon", "1"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("HOLDS, assuming real arithmetic"), out
    assert not math.isnan(float(out.split("eps*=")[1].split(",")[0]))
