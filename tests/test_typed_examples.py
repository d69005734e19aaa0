"""The examples of the README and the docs pages pass ``mypy --strict`` against dpverify's public types.

dpverify ships ``py.typed``, so a user's type checker reads its signatures (:mod:`dpverify.types`:
``Number``, ``Mechanism``, ``Sampler``, ``ExecutorSpec``). Every fenced ``python`` block that
``tests/test_readme_examples.py`` finds (its parser, imported) is written to a file of its own, and
one mypy run checks them all, as a user's project would be checked: ``--strict``, dpverify read as an
installed package (its own modules analysed for their types, their errors not reported:
``follow_imports = silent``; ``dpverify.mechanisms`` reached through a folder of links, since mypy
cannot follow the editable install's mapping of ``mechanisms/``).

Third-party libraries: sympy and diffprivlib ship no type information (``ignore_missing_imports``:
their values are ``Any``, as in any user's project); scipy, matplotlib, mpmath, rich, Hypothesis,
pytest, Dask and distributed are imported by dpverify's internals or by the Dask example only, and are
not analysed (``follow_imports = skip``: their values are ``Any``), which keeps the run to a few seconds.

One more file, a probe, holds calls the public types must refuse (a list as epsilon, an unknown
executor name, a one-argument function as a sampler, ...), each marked with the error mypy must
report on its line; the run must report exactly those errors and no other, so types that decay to
``Any`` fail here as surely as an example that stops type-checking.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.test_readme_examples import BLOCKS, ROOT

PYTHON_BLOCKS = [block for block in BLOCKS if block.language == "python"]

CONFIG = """\
[mypy]
strict = True
python_version = 3.10

[mypy-dpverify.*]
follow_imports = silent

[mypy-sympy.*,diffprivlib.*]
ignore_missing_imports = True

[mypy-scipy.*,matplotlib.*,mpmath.*,rich.*,hypothesis.*,pytest.*,_pytest.*,dask.*,distributed.*]
follow_imports = skip
"""

#: Calls the public types must refuse, each line marked ``# E: <error code>``; and calls they must accept.
PROBE = """\
import concurrent.futures
import random
from fractions import Fraction

import numpy as np
import sympy

import dpverify
from dpverify import ApproximateDp, Datasets, Distribution, InputPairs, PublicData, PureDp, Stability, from_sampler, verify
from dpverify.checking.public_data import PublicDataResult
from dpverify.types import ExecutorSpec, Mechanism, Number, Sampler
from dpverify.verdict.results import PairsResult, VerificationResult


def rr(dataset: tuple[int, ...]) -> dict[int, Fraction]:
    (bit,) = dataset
    return {bit: Fraction(3, 4), 1 - bit: Fraction(1, 4)}


def coin(dataset: tuple[int, ...], rng: np.random.RandomState) -> int:
    return dataset[0] if rng.random() < 0.75 else 1 - dataset[0]


def draw(dataset: tuple[int, ...], rng: np.random.Generator) -> float:
    return sum(dataset) + rng.laplace(0.0, 1.0)


def public_rr(public: tuple[int, ...], dataset: tuple[int, ...]) -> dict[int, Fraction]:
    return rr(dataset)


# accepted: every kind of number, expression strings in claims, every executor spec
numbers: list[Number] = [1, 0.5, Fraction(1, 3), sympy.log(3), "ln(3)", "1/3"]
specs: list[ExecutorSpec] = [None, "serial", "processes", "dask", concurrent.futures.ThreadPoolExecutor()]
mechanism: Mechanism = rr
sampler: Sampler = coin
# the result's type follows the inputs' kind
on_datasets: VerificationResult = verify(rr, Datasets([0, 1], 1), PureDp(1))
on_pairs: PairsResult = verify(rr, InputPairs.statdp(1), PureDp(1))
on_public: PublicDataResult = verify(public_rr, PublicData.every_sample([0], 1, private=Datasets([0, 1], 1)), PureDp(1))
verify(rr, records=[0, 1], n=1, epsilon="ln(3)", delta=Fraction(1, 10), executor="processes")
verify(rr, records=[0, 1], n=1, claim=ApproximateDp("ln(3)", 1e-6), executor=concurrent.futures.ProcessPoolExecutor())
PureDp(sympy.log(3)), Stability(Fraction(1, 4))
from_sampler(coin, tail=1e-9, patch=[random, "numpy.random"])
dpverify.estimate(draw, [((0,), (1,))], epsilon=Fraction(1, 2), executor=None)
Distribution({0: Fraction(1, 2), 1: 0.5}), Distribution([(0, Fraction(1, 2)), (1, 0.5)], unexplored=0)

# refused
verify(rr, records=[0, 1], n=1, epsilon=[1])  # E: call-overload
verify(rr, records=[0, 1], n=1, epsilon=1, delta={"delta": 0})  # E: call-overload
verify(rr, records=[0, 1], n=1, epsilon=1, executor="threads")  # E: call-overload
verify(rr, records=[0, 1], n=1, epsilon=1, executor=4)  # E: call-overload
dpverify.analyze(rr, records=[0, 1], n=1, executor="pool")  # E: arg-type
PureDp(None)  # E: arg-type
ApproximateDp(1, b"0")  # E: arg-type
from_sampler(rr)  # E: arg-type
from_sampler(coin, tail="1e-9")  # E: arg-type
from_sampler(coin, patch=3)  # E: arg-type
dpverify.estimate(draw, records=[0, 1], n=1, epsilon=[2])  # E: arg-type
dpverify.estimate(draw, 3, epsilon=1)  # E: arg-type
Distribution({0: "1/2", 1: "1/2"})  # E: dict-item
not_a_mechanism: Mechanism = coin  # E: assignment
not_a_sampler: Sampler = rr  # E: assignment
"""


def _search_path(tmp_path: Path) -> Path:
    """A folder where ``dpverify`` is this checkout's package with ``mechanisms/`` as its ``mechanisms``
    (what the installed wheel holds), built of links."""
    package = tmp_path / "search" / "dpverify"
    package.mkdir(parents=True)
    for entry in (ROOT / "dpverify").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "mechanisms").symlink_to(ROOT / "mechanisms")
    return package.parent


def _errors(output: str, folder: Path) -> set[tuple[str, int, str]]:
    """``(file, line, code)`` of every error mypy reported (notes and the summary line skipped)."""
    found = set()
    for line in output.splitlines():
        match = re.match(r"(.+?):(\d+): error: .*\[([a-z-]+)\]$", line)
        if match:
            found.add((Path(match.group(1)).name, int(match.group(2)), match.group(3)))
        elif line.strip() and not re.match(r".+?:\d+: note: |Found \d+ errors? in |Success: ", line):
            found.add((line, 0, "unparsed"))  # an error without a code, a crash: shown, never passed
    return found


def test_the_pages_have_python_blocks_to_check():
    # the parser the check borrows finds the pages' examples (README's four and the guides')
    pages = {block.page.relative_to(ROOT).as_posix() for block in PYTHON_BLOCKS}
    assert len(PYTHON_BLOCKS) >= 20 and "README.md" in pages and "docs/guide/samplers.md" in pages


def test_examples_pass_mypy_strict_and_the_probe_fails_where_marked(tmp_path: Path):
    folder = tmp_path / "examples"
    folder.mkdir()
    files = []
    for number, block in enumerate(PYTHON_BLOCKS):
        stem = re.sub(r"\W", "_", block.page.relative_to(ROOT).with_suffix("").as_posix())
        path = folder / f"block_{number:02d}_{stem}_{block.line}.py"
        path.write_text(block.text)
        files.append(path)
    probe = folder / "probe.py"
    probe.write_text(PROBE)
    expected = {
        ("probe.py", number, mark.group(1))
        for number, line in enumerate(PROBE.splitlines(), start=1)
        if (mark := re.search(r"# E: ([a-z-]+)$", line))
    }
    (tmp_path / "mypy.ini").write_text(CONFIG)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", "--show-error-codes", *map(str, files), str(probe)],
        env={**os.environ, "MYPYPATH": str(_search_path(tmp_path))}, capture_output=True, text=True, timeout=600,
    )
    assert done.stderr == "", done.stderr
    found = _errors(done.stdout, folder)
    examples = {error for error in found if error[0] != "probe.py"}
    assert examples == set(), "the pages' examples fail mypy --strict:\n" + done.stdout
    assert found == expected, f"the probe's errors differ from its marks:\n{done.stdout}"
    assert len(expected) == 15
