"""``from_sampler(..., tail=m, outputs=[...])``: outputs declared by the sampler's author, so the
unexplored mass falls on them only and a pure claim can be proved (issue 37;
dpverify/verdict/_unexplored.py, "Declared outputs").

The coin loop: ``k`` = failures before the first success of a fair coin (P(k) = 2^-(k+1)), output
``(k + record) % 2``. P(k even) = sum_j 2^-(2j+1) = (1/2) / (1 - 1/4) = 2/3, so record 0 outputs 0 with
probability 2/3 and record 1 outputs 0 with 1/3: eps* = ln((2/3) / (1/3)) = ln 2.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

import dpverify
from dpverify import Datasets, PureDp, Verdict, from_sampler, verify
from dpverify.errors import InvalidArgument, MechanismError
from dpverify.integrations.cli import main


def coin_loop(dataset, rng):
    (record,) = dataset
    k = 0
    while rng.random() < Fraction(1, 2):
        k += 1
    return (k + record) % 2


BITS = Datasets([0, 1], n=1)


@pytest.mark.parametrize(("claim", "declared", "undeclared"), [
    (math.log(2.5), Verdict.HOLDS, Verdict.UNDECIDED),  # 2/3 + m <= 2.5 (1/3 - m'): proved only when declared
    (math.log(1.9), Verdict.VIOLATED, Verdict.VIOLATED),  # 2/3 - m > 1.9 (1/3 + m): refuted either way
    (math.log(2), Verdict.UNDECIDED, Verdict.UNDECIDED),  # tight at eps*: never proved with mass unexplored
])
def test_the_coin_loop_decides_its_pure_claims_with_declared_outputs(claim, declared, undeclared):
    with_outputs = verify(from_sampler(coin_loop, tail=1e-9, outputs=[0, 1]), BITS, PureDp(claim))
    without = verify(from_sampler(coin_loop, tail=1e-9), BITS, PureDp(claim))
    assert with_outputs.verdict is declared and without.verdict is undeclared
    assert with_outputs.epsilon == pytest.approx(math.log(2), abs=1e-8)  # the explored paths' eps*
    assert [a.name for a in with_outputs.assumptions] == ["declared outputs"]


def test_the_declaration_is_shown_in_the_summary_and_the_json():
    result = verify(from_sampler(coin_loop, tail=1e-9, outputs=[0, 1]), BITS, PureDp(math.log(2.5)))
    summary = result.summary()
    assert summary.startswith("HOLDS, assuming declared outputs (the unexplored mass falls on 0, 1 only)")
    assert "was not explored (on the declared outputs)" in summary
    from dpverify.integrations import contract

    document = json.loads(contract.dumps(contract.check_document(result, "coin_loop", "sampler")))
    (assumption,) = [a for a in document["assumptions"] if a["name"] == "declared outputs"]
    assert assumption["status"] == "accepted"


def test_an_explored_output_outside_the_declaration_is_an_error():
    with pytest.raises(MechanismError, match=r"returned 1 on dataset \(0,\), which is not among its declared "
                                             r"outputs=\[0\]"):
        verify(from_sampler(coin_loop, tail=1e-9, outputs=[0]), BITS, PureDp(1))


@pytest.mark.parametrize("outputs", [[], "01", 3])
def test_a_bad_declaration_is_refused(outputs):
    with pytest.raises(InvalidArgument, match="outputs"):
        from_sampler(coin_loop, tail=1e-9, outputs=outputs)


def test_an_approximate_claim_is_decided_as_without_the_declaration():
    # for delta > 0 the bound H_e + m is reached by putting all unexplored mass on one output: nothing changes
    claim = dpverify.ApproximateDp(math.log(2), 1e-6)
    with_outputs = verify(from_sampler(coin_loop, tail=1e-9, outputs=[0, 1]), BITS, claim)
    without = verify(from_sampler(coin_loop, tail=1e-9), BITS, claim)
    assert with_outputs.verdict is without.verdict is Verdict.HOLDS  # H_e = 0 at ln 2, m ~ 1.2e-10 <= 1e-6


def test_the_command_line_declares_outputs(capsys, tmp_path, monkeypatch):
    (tmp_path / "coin_mods.py").write_text(
        "from fractions import Fraction\n\n"
        "def coin_loop(dataset, rng):\n"
        "    (record,) = dataset\n"
        "    k = 0\n"
        "    while rng.random() < Fraction(1, 2):\n"
        "        k += 1\n"
        "    return (k + record) % 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["check", "coin_mods:coin_loop", "--sampler", "--tail", "1e-9", "--records", "[0, 1]", "--n", "1",
            "--epsilon", "log(2.5)"]
    assert main([*args, "--outputs", "[0, 1]"]) == 0
    assert "HOLDS, assuming declared outputs" in capsys.readouterr().out
    assert main(args) == 4  # without: UNDECIDED
    capsys.readouterr()
    assert main([*args, "--outputs", "0, 1"]) == 0  # a tuple literal is a list too
    capsys.readouterr()
    assert main([*args, "--outputs", "zero"]) == 2
    assert "--outputs must be a Python literal list" in capsys.readouterr().err


def test_an_audit_row_on_a_tail_sampler_runs_and_carries_the_declaration(tmp_path, capsys):
    # an audit asks for the privacy profile; on outputs with unexplored mass it is not known, so the row shows
    # no chart instead of failing (it was exit 2: "delta_for_epsilon() needs the mechanism's whole outputs")
    path = tmp_path / "tail_audit.py"
    path.write_text(
        "import math\nfrom fractions import Fraction\nimport dpverify\nfrom dpverify.auditing import Audit, Row\n\n"
        "def coin_loop(dataset, rng):\n    (record,) = dataset\n    k = 0\n"
        "    while rng.random() < Fraction(1, 2):\n        k += 1\n    return (k + record) % 2\n\n"
        "coin = dpverify.from_sampler(coin_loop, tail=1e-9, outputs=[0, 1])\n"
        "audit = Audit('tail', [Row(coin, dpverify.Datasets([0, 1], n=1), dpverify.PureDp(math.log(2.5)), "
        "statement='coin is ln 2.5-DP')])\n")
    assert main(["audit", str(path), "--jobs", "1", "--quiet", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert row["verdict"] == "HOLDS" and [a["name"] for a in row["assumptions"]] == ["declared outputs"]
