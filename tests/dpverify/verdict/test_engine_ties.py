"""Issue 16: exact figures at exact ties, and tight claims certified per distinct row pair.

* At an exact tie (``P(o) = e^eps Q(o)`` exactly) the float sweep's hockey-stick maximum is ~1e-16
  and its ``ln P - ln Q`` an ulp or two off ``ln r``; :func:`dpverify.verdict.engine.decide` now reports the
  exact figures when every pair that may attain them has exact rows (module docstring, "Exact
  figures"), and keeps the float figure otherwise.
* A tight claim makes about every pair a certification candidate; the candidates are now certified
  once per distinct row pair (:func:`dpverify.verdict._certify.walk_candidates`), with the same verdict,
  counts and witness as the per-candidate walk it replaces (checked here against that walk).
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest
import sympy

from dpverify import Verdict, analyze, verify
from dpverify.verdict import _sweep as sweep_kernel
from dpverify.verdict import engine
from dpverify.verdict._certify import certify_pair
from dpverify.verdict.engine import RowPairs, decide


def two_rows(p: dict, q: dict):
    """A mechanism on records (0, 1), n = 1: dataset (0,) -> p, (1,) -> q."""

    def mechanism(dataset):
        return dict(p if dataset[0] == 0 else q)

    return mechanism


# -- exact ties report exact figures ----------------------------------------------------------------


@pytest.mark.parametrize(("r", "p"), [(3, Fraction(3, 4)), (5, Fraction(5, 6)), (7, Fraction(7, 8)), (Fraction(18, 5), Fraction(18, 23))])
def test_exact_tie_reports_delta_exactly_zero(r, p):
    # Randomized response P = (p, 1 - p), Q = (1 - p, p) with p / (1 - p) = r: at eps = ln r
    # (sympy.log(r), so e^eps = r exactly) the terms are P(0) - r Q(0) = p - r (1 - p) = 0 and
    # P(1) - r Q(1) = (1 - p) - r p < 0, so delta(ln r) = max(0, 0) + max(0, < 0) = 0 exactly. In
    # float64, e^float(ln 5) = 4.999999999999999 < 5 and 5/6 - 4.999999999999999 * 1/6 = 2.2e-16 > 0:
    # the sweep's maximum was reported as delta = 2.220446049250313e-16 (1.1e-16 for r = 7).
    mechanism = two_rows({0: p, 1: 1 - p}, {0: 1 - p, 1: p})
    epsilon = sympy.log(sympy.Rational(r.numerator, r.denominator) if isinstance(r, Fraction) else r)
    result = verify(mechanism, records=[0, 1], n=1, epsilon=epsilon)
    assert result.verdict is Verdict.HOLDS
    assert result.delta == 0.0 and math.copysign(1.0, result.delta) == 1.0
    # eps* = max ln(P/Q) = ln r exactly: reported as the nearest float to ln r, the claim's float value
    assert result.epsilon == float(epsilon)


def test_a_float_claim_at_an_exact_tie_reports_delta_zero():
    # math.log(5) stands for ln 5 up to its rounding (certified at its value times 1 + 2**-50,
    # where 5/6 - e^eps 1/6 < 0): the tie is exact there, delta 0.0 (the float sweep: 2.2e-16).
    mechanism = two_rows({0: Fraction(5, 6), 1: Fraction(1, 6)}, {0: Fraction(1, 6), 1: Fraction(5, 6)})
    assert analyze(mechanism, records=[0, 1], n=1).delta_for_epsilon(math.log(5)) > 0
    result = verify(mechanism, records=[0, 1], n=1, epsilon=math.log(5))
    assert result.verdict is Verdict.HOLDS and result.delta == 0.0
    assert result.epsilon == math.log(5) == float(sympy.log(5))


# P = (25, 26, 49)/100, Q = (5, 5, 90)/100 at e^eps = 5: P(0) - 5 Q(0) = 25/100 - 25/100 = 0 (a tie),
# P(1) - 5 Q(1) = 26/100 - 25/100 = 1/100, P(2) - 5 Q(2) = 49/100 - 450/100 < 0, and backwards every
# Q(o) - 5 P(o) < 0: delta(ln 5) = 1/100 exactly. The float sweep gives 0.010000000000000064.
NEAR_P = {0: Fraction(25, 100), 1: Fraction(26, 100), 2: Fraction(49, 100)}
NEAR_Q = {0: Fraction(5, 100), 1: Fraction(5, 100), 2: Fraction(90, 100)}


@pytest.mark.parametrize(("delta", "verdict"), [(Fraction(1, 100), Verdict.HOLDS), (0, Verdict.VIOLATED)])
def test_a_near_tie_that_is_not_a_tie_reports_its_exact_delta(delta, verdict):
    mechanism = two_rows(NEAR_P, NEAR_Q)
    assert analyze(mechanism, records=[0, 1], n=1).delta_for_epsilon(math.log(5)) == 0.010000000000000064
    result = verify(mechanism, records=[0, 1], n=1, epsilon=sympy.log(5), delta=delta)
    assert result.verdict is verdict
    assert result.delta == 0.01 == float(Fraction(1, 100))  # never 0: the pair is no tie
    assert result.epsilon == float(sympy.log(sympy.Rational(26, 5)))  # max P/Q = (26/100)/(5/100)
    if verdict is Verdict.VIOLATED:
        assert result.witness.p - 5 * result.witness.q == Fraction(1, 100)  # S = {1}: the exact excess


def test_a_float_claim_keeps_the_float_figure_when_the_exact_one_is_not_zero():
    # At a float claim only an exact 0 replaces the float figure (the claim stands for an interval).
    result = verify(two_rows(NEAR_P, NEAR_Q), records=[0, 1], n=1, epsilon=math.log(5), delta=Fraction(1, 100))
    assert result.verdict is Verdict.HOLDS and result.delta == 0.010000000000000064


def test_float_rows_keep_the_float_figure():
    # The same tie in float64 rows: they carry rounding, so no exact figure exists; the verdict is
    # within rounding and the figure stays the sweep's (2.2e-16), never lowered to 0.
    floats = two_rows({0: 5 / 6, 1: 1 / 6}, {0: 1 / 6, 1: 5 / 6})
    result = verify(floats, records=[0, 1], n=1, epsilon=sympy.log(5))
    assert result.verdict.passes
    swept = analyze(floats, records=[0, 1], n=1).delta_for_epsilon(float(sympy.log(5)))
    assert result.delta == swept > 0


def test_one_float_row_among_the_near_maximal_pairs_keeps_the_float_figure():
    # Rows (0,) and (1,) are an exact tie at ln 5; row (2,) is the same distribution as (1,) in
    # floats. The pairs (0,)-(2,) attain the same float maximum, and a float row can be off by its
    # rounding: the exact figure of the exact pairs alone would understate it.
    p = {0: Fraction(5, 6), 1: Fraction(1, 6)}
    q = {0: Fraction(1, 6), 1: Fraction(5, 6)}
    rows = {0: p, 1: q, 2: {o: float(v) for o, v in q.items()}}
    mechanism = lambda dataset: dict(rows[dataset[0]])  # noqa: E731
    result = verify(mechanism, records=[0, 1, 2], n=1, epsilon=sympy.log(5))
    assert result.verdict.passes
    assert result.delta == analyze(mechanism, records=[0, 1, 2], n=1).delta_for_epsilon(float(sympy.log(5))) > 0


def test_no_pair_past_the_claimed_epsilon_reports_delta_zero():
    # A claim above eps*: no directed pair passes the sweep's loss filter, every exact value is 0.
    mechanism = two_rows({0: Fraction(5, 6), 1: Fraction(1, 6)}, {0: Fraction(1, 6), 1: Fraction(5, 6)})
    result = verify(mechanism, records=[0, 1], n=1, epsilon=sympy.log(5) + sympy.Rational(1, 100))
    assert result.verdict is Verdict.HOLDS and result.delta == 0.0
    assert result.epsilon == float(sympy.log(5))  # a small instance: its near-maximal pairs are kept


# -- tight claims: grouped certification -------------------------------------------------------------


def rr_count(p: Fraction, n: int, split: int, exact: bool = True):
    """Randomized response (p) on each record's bit (record >= split), the count of ones released."""
    table = []
    for c in range(n + 1):
        row: dict = {}
        for bits in itertools.product((0, 1), repeat=n):
            weight = Fraction(1)
            for b, x in zip(bits, [1] * c + [0] * (n - c)):
                weight *= p if b == x else 1 - p
            row[sum(bits)] = row.get(sum(bits), 0) + weight
        table.append(row if exact else {k: float(v) for k, v in row.items()})

    def mechanism(dataset):
        return dict(table[sum(1 for x in dataset if x >= split)])

    return mechanism


@pytest.mark.parametrize("exchangeable", [False, True])
def test_small_tight_twin_matches_the_claim_above_it(exchangeable):
    # The benchmark's instance (benchmarks/bench_tight_claim.py) at 6 records, n = 2: exactly tight
    # at ln 3 (every neighbouring count ratio is 1/3, 1 or 3 at worst) and 1/100 above it.
    mechanism = rr_count(Fraction(3, 4), 2, 3)
    tight = verify(mechanism, records=range(6), n=2, epsilon=sympy.log(3), exchangeable=exchangeable)
    above = verify(mechanism, records=range(6), n=2, epsilon=sympy.log(3) + sympy.Rational(1, 100),
                   exchangeable=exchangeable)
    assert tight.verdict is above.verdict is Verdict.HOLDS
    assert tight.delta == above.delta == 0.0
    assert tight.epsilon == above.epsilon == float(sympy.log(3))
    assert tight.witness is None and above.witness is None
    assert above.certified_pairs == 0
    # Counts c = 0, 1, 2 with rows (9, 6, 1)/16, (3, 10, 3)/16, (1, 6, 9)/16: the directed tight
    # pairs are c -> c +- 1, four distinct row pairs, however many dataset pairs share them.
    assert tight.certified_pairs == 4 and tight.within_rounding == tight.undecided == 0


@pytest.mark.parametrize("epsilon", [sympy.log(3), math.log(3), sympy.log(3) - sympy.Rational(1, 10**8)])
def test_the_float_prefilter_grouped_by_rows_decides_as_per_candidate(monkeypatch, epsilon):
    # surely_within_rounding computes one result per distinct pair of float rows when candidates
    # are many: the same answers as candidate by candidate (its grouping switched off). At ln 3 all
    # 15,000 candidates are within rounding, at ln 3 - 1e-8 none (a violation beyond rounding).
    from dpverify.checking._analysis import certifiable
    from dpverify.verdict import _certify

    mechanism = rr_count(Fraction(3, 4), 3, 5, exact=False)
    pairs = certifiable(analyze(mechanism, records=range(10), n=3), mechanism, None)
    errors = pairs.errors()
    candidates = engine.sweep(pairs, float(epsilon), claim_delta=0.0, error=float(errors.max())).candidates
    assert len(candidates) >= 4096
    grouped = _certify.surely_within_rounding(pairs, candidates, errors, epsilon, 0)
    assert _certify._float_row_groups(pairs.matrix, errors, candidates.first, candidates.second) is not None
    monkeypatch.setattr(_certify, "_float_row_groups", lambda *args: None)
    assert np.array_equal(grouped, _certify.surely_within_rounding(pairs, candidates, errors, epsilon, 0))


def per_candidate_walk(pairs: RowPairs, epsilon, delta=0.0):
    """The engine's walk before issue 16: every candidate in turn, one certificate per distinct
    (P, Q, errors, delta), the float quick path once a pair within rounding was certified."""
    errors = pairs.errors()
    result = engine.sweep(pairs, float(epsilon), claim_delta=float(delta), error=float(errors.max(initial=0.0)))
    quick = engine._surely_within_rounding(pairs, result.candidates, errors, epsilon, delta)
    certificates: dict = {}
    near = None
    within = undecided = 0
    for index, (_, i, j, pair) in enumerate(result.candidates):
        if quick[index] and near is not None:
            within += 1
            continue
        p, q = pairs.exact(i), pairs.exact(j)
        bound = delta if pairs.pair_delta is None else float(pairs.pair_delta[pair])
        key = (tuple(p.items()), tuple(q.items()), errors[i], errors[j], bound)
        if key not in certificates:
            certificates[key] = certify_pair(p, q, epsilon, bound, p_error=float(errors[i]), q_error=float(errors[j]))
        certificate = certificates[key]
        if certificate.holds is False:
            return Verdict.VIOLATED, (i, j), within, undecided, len(certificates)
        if certificate.holds is None:
            undecided += 1
        elif certificate.within_rounding:
            within += 1
            near = near or (i, j)
    if undecided:
        return Verdict.UNDECIDED, None, within, undecided, len(certificates)
    if within:
        return Verdict.HOLDS_WITHIN_ROUNDING, near, within, undecided, len(certificates)
    return Verdict.HOLDS, None, within, undecided, len(certificates)


def random_rows(rng: random.Random, rows: int, outcomes: int, kind: str):
    """Rows from a palette of integer weight vectors (many equal rows, exact ratios), as
    exact Fractions, float64 or a mix; pairs at random. Returns (RowPairs, the exact rows)."""
    palette = [[Fraction(rng.randint(1, 4)) for _ in range(outcomes)] for _ in range(3)]
    if rng.random() < 0.5:  # permutations of one vector: many distinct row pairs tie at the worst ratio
        palette = [rng.sample(palette[0], outcomes) for _ in range(4)]
    table = [[w / sum(weights) for w in weights] for weights in (rng.choice(palette) for _ in range(rows))]
    matrix = np.array([[float(v) for v in row] for row in table])
    count = rng.randint(1, 120)
    left = np.array([rng.randrange(rows) for _ in range(count)])
    right = np.array([rng.randrange(rows) for _ in range(count)])
    if kind == "float":
        return RowPairs(matrix, left, right), table
    exact = [kind == "exact" or rng.random() < 0.5 for _ in range(rows)]
    pairs = RowPairs(
        matrix, left, right,
        exact_row=lambda i: dict(enumerate(table[i])) if exact[i] else dict(enumerate(map(float, table[i]))),
        row_error=np.where(exact, 0.0, engine.DEFAULT_FLOAT_ERROR),
    )
    return pairs, table


@pytest.mark.parametrize("seed", range(100))
def test_grouped_walk_matches_the_per_candidate_walk(seed):
    rng = random.Random(seed)
    pairs, table = random_rows(rng, rng.randint(2, 10), rng.randint(2, 4), rng.choice(["exact", "float", "mixed"]))
    worst = max(max(a / b, b / a) for i, j in zip(pairs.left, pairs.right) for a, b in zip(table[i], table[j]))
    how = rng.choice(["tie", "tie", "float tie", "above", "below", "zero"])
    r = {"tie": worst, "float tie": worst, "above": worst * Fraction(101, 100), "below": worst * Fraction(9, 10),
         "zero": Fraction(1)}[how]
    epsilon = math.log(r) if how == "float tie" else sympy.log(sympy.Rational(r.numerator, r.denominator))
    delta = rng.choice([0, 0, Fraction(1, 20)])
    if rng.random() < 0.3:  # a delta per pair: violations need not come first
        pairs.pair_delta = np.array([rng.choice([0.0, 0.0, 0.02, 0.05]) for _ in range(len(pairs))])
    verdict, rows, within, undecided, certified = per_candidate_walk(pairs, epsilon, delta)
    decision = decide(pairs, epsilon, delta)
    assert (decision.verdict, decision.witness_rows, decision.within_rounding_pairs, decision.undecided_pairs,
            decision.certified_pairs) == (verdict, rows, within, undecided, certified)


@pytest.mark.parametrize("seed", range(200))
def test_walk_candidates_is_the_per_candidate_walk_on_any_outcomes(monkeypatch, seed):
    # walk_candidates against the per-candidate walk on random candidate lists whose certificates
    # are drawn at random per row pair (any order of holds / within / undecided / violated, quick
    # flags anywhere): the same stop, closest pair, counts and certificates.
    from dpverify.verdict import _certify
    from dpverify.verdict._certify import PairCertificate, RowClasses, walk_candidates
    from dpverify.verdict.engine import _Candidates

    rng = random.Random(seed)
    rows, count = rng.randint(1, 6), rng.randint(0, 300)
    outcome = {}
    for i in range(rows):
        for j in range(rows):
            holds = rng.choices([True, None, False], weights=[8, 1, 1 if rng.random() < 0.5 else 0])[0]
            outcome[(i, j)] = PairCertificate(holds, frozenset(), 0, 0, 0.0, holds is True and rng.random() < 0.5)
    monkeypatch.setattr(_certify, "certify_pair", lambda p, q, *a, **k: outcome[(p["row"], q["row"])])
    first = np.array([rng.randrange(rows) for _ in range(count)], dtype=np.int64)
    second = np.array([rng.randrange(rows) for _ in range(count)], dtype=np.int64)
    candidates = _Candidates(-np.arange(count, dtype=float), first, second, np.arange(count))
    quick = np.array([rng.random() < 0.4 for _ in range(count)], dtype=bool)
    contents = [{"row": i % max(1, rows - rng.randint(0, 1))} for i in range(rows)]  # rows may repeat
    walk = walk_candidates(candidates, quick, RowClasses(rows, contents.__getitem__, np.zeros(rows)), 1, 0, None)

    seen, near, within, undecided, stop = {}, None, 0, 0, count
    for position in range(count):
        if quick[position] and near is not None:
            within += 1
            continue
        key = (contents[first[position]]["row"], contents[second[position]]["row"])
        certificate = seen.setdefault(key, outcome[key])
        if certificate.holds is False:
            stop = position
            break
        if certificate.holds is None:
            undecided += 1
        elif certificate.within_rounding:
            within += 1
            near = position if near is None else near
    assert (walk.stop, walk.near, walk.within, walk.undecided, len(walk.certificates)) == (
        stop, near, within, undecided, len(seen))


# -- the sweep's near-maximal pairs are the same on every sharding ----------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_near_maximal_pairs_do_not_depend_on_the_sharding(monkeypatch, seed):
    monkeypatch.setattr(sweep_kernel, "FIGURE_CAP", 8)
    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, 1.0, 2.0, 2.0 - 1e-3, 3.0], size=200) if seed % 2 else rng.integers(0, 40, 200) / 10
    width = 0.15
    top = float(values.max())
    truth = np.flatnonzero(values >= top - width)
    answers = set()
    for shards in (1, 3, 7, 200):
        kept = []
        for part in np.array_split(np.arange(values.size), shards):
            near = sweep_kernel._Near(width)
            running = -math.inf
            for piece in np.array_split(part, 4):
                if piece.size:
                    running = max(running, float(values[piece].max()))
                    near.add(piece, piece, values[piece], np.ones(piece.size, bool), running)
            kept.append(near.result(running))
        first = np.concatenate([k[0] for k in kept])
        close = np.sort(first[values[first] >= top - width])
        answers.add(None if close.size > 8 else tuple(close.tolist()))
    expected = None if truth.size > 8 else tuple(truth.tolist())
    assert answers == {expected}
