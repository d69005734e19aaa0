"""``estimate(..., patch=[module])`` and ``check --estimate --patch``: a sampler drawing from numpy's or
Python's global generator is estimated from the run's own streams, the same figures on every executor,
the modules restored afterwards (also after an exception); seeding a routed generator is refused."""

from __future__ import annotations

import json
import random
import textwrap

import numpy as np
import pytest

from dpverify import Datasets, PureDp, estimate
from dpverify.errors import MechanismError, NondeterministicMechanism
from dpverify.integrations.cli import main

ORIGINAL_LAPLACE = np.random.laplace
ORIGINAL_RANDOM = random.random


def global_laplace(dataset, rng):  # module level: picklable for a process pool
    return dataset[0] + np.random.laplace(scale=0.5)


def global_coin(dataset, rng):
    return (random.random() < 0.75) == bool(dataset[0])


def _estimate(sampler, claim, **options):
    return estimate(sampler, Datasets([0, 1], n=1), claim, samples=20_000, random_state=0, float_bits=False, **options)


def test_a_global_laplace_sampler_is_estimated_from_the_runs_streams():
    # Lap(1/2) at sensitivity 1: eps* = 2, so a 1-DP claim is refuted
    result = _estimate(global_laplace, PureDp(1), patch=["numpy.random"])
    assert result.verdict.name == "VIOLATED" and 1 < result.epsilon_lower_bound <= 2
    assert np.random.laplace is ORIGINAL_LAPLACE  # restored


def test_the_figures_are_the_seeds_on_every_executor():
    serial = _estimate(global_laplace, PureDp(1), patch=["numpy.random"])
    pooled = _estimate(global_laplace, PureDp(1), patch=["numpy.random"], executor="processes")
    assert pooled.epsilon_lower_bound == serial.epsilon_lower_bound


def test_pythons_random_is_routed_too():
    # randomized response at 3/4: eps* = ln 3 = 1.0986, above the claimed 1/2
    result = _estimate(global_coin, PureDp(0.5), patch=["random"])
    assert result.verdict.name == "VIOLATED" and 0.5 < result.epsilon_lower_bound <= np.log(3)
    assert random.random is ORIGINAL_RANDOM


def test_without_patch_the_global_draws_are_refused_naming_patch():
    with pytest.raises(NondeterministicMechanism, match=r"estimate\(\.\.\., patch=\['numpy\.random'\]\)"):
        _estimate(global_laplace, PureDp(1))


def test_the_modules_are_restored_after_the_sampler_raises():
    def failing(dataset, rng):
        np.random.laplace()
        raise ValueError("a failure inside the sampler")

    with pytest.raises(MechanismError, match="a failure inside the sampler"):
        _estimate(failing, PureDp(1), patch=["numpy.random"])
    assert np.random.laplace is ORIGINAL_LAPLACE


def test_seeding_a_routed_generator_is_refused():
    def seeded(dataset, rng):
        np.random.seed(1)
        return dataset[0] + np.random.rand()

    with pytest.raises(MechanismError, match="seed of a generator routed by estimate"):
        _estimate(seeded, PureDp(1), patch=["numpy.random"])


def test_check_estimate_takes_patch(tmp_path, monkeypatch, capsys):
    (tmp_path / "estimate_patch_mods.py").write_text(textwrap.dedent('''
        import numpy as np

        def noisy(dataset, rng):
            return dataset[0] + np.random.laplace(scale=0.5)
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["check", "estimate_patch_mods:noisy", "--estimate", "--patch", "numpy.random", "--records", "0,1",
                 "--n", "1", "--epsilon", "1", "--samples", "20000", "--seed", "0", "--no-float-bits",
                 "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["verdict"] == "VIOLATED"
    code = main(["check", "estimate_patch_mods:noisy", "--patch", "numpy.random", "--records", "0,1", "--n", "1",
                 "--epsilon", "1"])
    assert code == 2 and "--estimate" in capsys.readouterr().err
