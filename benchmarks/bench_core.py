"""Benchmark: black-box vs exchangeable enumeration in ``dpverify.verify``.

Instance: ``threshold_learner(4, epsilon=1.0)`` (the exponential mechanism over the 5 thresholds
of |X| = 4, score = mistakes, declared exchangeable), records = ``labeled_records(4)`` (8 records),
substitute neighbours, claim epsilon = 1.0.

What is measured and what is extrapolated (the output labels every number):

* the exchangeable path runs fully at n = 8 (C(14, 7) * 28 = 96,096 pairs): MEASURED;
* the black-box path at n = 8 would visit 8^8 * 8 * 7 / 2 = 469,762,048 pairs over 16,777,216
  ordered datasets: far too many. It is MEASURED at every n from 3 up to the largest n whose
  predicted time stays within ``BLACK_BOX_BUDGET`` seconds (n = 6 on the 2-core reference machine,
  ~7-10 s), and its n = 8 time is EXTRAPOLATED as ``c_dataset(8) * 8^8 + c_pair * pairs(8)``:
  ``c_pair`` (pair index arrays + the numpy eps*/hockey-stick sweep over the 5 outcomes, constant
  in n) and the per-dataset cost of ``analyze`` are measured stage by stage at that largest n; the
  per-dataset cost grows with n (the mechanism counts mistakes over the n records), so the
  per-dataset work (mechanism call + row fill) is also timed on a fixed random sample of 20,000
  datasets at every n up to 8 and scaled by the calibration at the largest measured n. The model
  is printed against the measured times at the smaller n;
* at every n where both paths run, their results (epsilon*, delta, holds) are asserted equal.

Every time is the best of several runs, as wall time and as this process's CPU time: the CPU
figures are the stabler ones on a shared machine. Nothing is asserted about time.

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_core.py``; ``... bench_core.py --against
REF [ROUNDS]`` times the black-box and exchangeable verify calls on this checkout and on commit
``REF`` instead, interleaved, best of ROUNDS (default 3), results compared (``benchmarks/_against.py``);
``... bench_core.py --kernels`` times black-box verify at n = 6 and 7 with the numpy and the compiled
sweep kernel (``pip install 'dpverify[fast]'``), results asserted equal.
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import platform
import random
import resource
import subprocess
import sys
import time

try:
    import dpverify  # noqa: F401
except ImportError:  # run from a checkout without PYTHONPATH / install
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from dpverify import analyze, verify
from dpverify.finite.neighbors import pair_count, relation
from dpverify.finite.records import labeled_records
from dpverify.mechanisms.exponential import threshold_learner
from dpverify.verdict.engine import DEFAULT_FLOAT_ERROR, sweep

DOMAIN_SIZE = 4
EPSILON = 1.0
N_TARGET = 8
BLACK_BOX_BUDGET = 30.0  # seconds: "well under a minute" for the largest measured black-box run
SAMPLE = 20_000  # datasets timed per n for the per-dataset cost model
SEED = 0
BIG = 10**12  # max_pairs for the explicit runs (the sizes are chosen here, not by the default cap)


class Timing:
    """Best wall and best CPU time over repeats (each minimum taken separately)."""

    def __init__(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = wall, cpu

    def __str__(self) -> str:
        return f"{self.wall:.3f} s wall / {self.cpu:.3f} s cpu"


def best_of(repeats: int, function):
    """(Timing, last result) over ``repeats`` calls, each after a full garbage collection."""
    wall, cpu, result = math.inf, math.inf, None
    for _ in range(repeats):
        result = None
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        result = function()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return Timing(wall, cpu), result


def header(title: str) -> None:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__)), check=False).stdout.strip()
    except OSError:
        commit = "?"
    print(title)
    print(f"  machine: {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start, commit {commit or '?'}")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def run(mechanism, records, n, exchangeable, repeats):
    return best_of(repeats, lambda: verify(
        mechanism, records=records, n=n, epsilon=EPSILON, exchangeable=exchangeable, max_pairs=BIG,
    ))


def stage_costs(mechanism, records, n, t_verify: Timing, repeats):
    """Per-dataset and per-pair cost (wall, cpu) of the black-box path at ``n`` from stage timings."""
    z = len(records)
    datasets = z**n
    pairs = pair_count("substitute", z, n, exchangeable=False)
    t_product, _ = best_of(repeats, lambda: list(itertools.product(records, repeat=n)))
    t_enum, _ = best_of(repeats, lambda: relation("substitute").pairs(records, n, exchangeable=False))
    t_analyze, analysis = best_of(repeats, lambda: analyze(mechanism, records=records, n=n, exchangeable=False, max_pairs=BIG))

    def sweep_once():
        # The engine's sweep as verify runs it: eps*, hockey-stick values and candidate pairs.
        return sweep(analysis.row_pairs(), EPSILON, claim_delta=0.0, error=DEFAULT_FLOAT_ERROR)

    t_sweep, _ = best_of(repeats, sweep_once)
    costs = {}
    for kind in ("wall", "cpu"):
        v, a, e, p, s = (getattr(t, kind) for t in (t_verify, t_analyze, t_enum, t_product, t_sweep))
        evaluation = a - e + p  # mechanism calls, Distribution checks, matrix fill, dataset list
        per_pair = (e - p) + s  # pair index arrays + the eps* and hockey-stick sweeps
        costs[kind] = (evaluation / datasets, per_pair / pairs)
        print(f"  n={n} [{kind}]: analyze {a:.3f} s (of which pair enumeration {e:.3f} s, dataset list {p:.3f} s), "
              f"sweep {s:.3f} s; sum {a + s:.3f} s vs verify {v:.3f} s")
        print(f"      per-dataset (evaluation + dataset list) {evaluation:.3f} s / {datasets:,} = "
              f"{evaluation / datasets * 1e6:.2f} us; per-pair (index arrays + sweep) {per_pair:.3f} s / "
              f"{pairs:,} = {per_pair / pairs * 1e9:.1f} ns")
    return costs


def evaluation_loop_cost(mechanism, records, n):
    """(datasets timed, Timing per dataset) of the per-dataset work of ``analyze``: the mechanism
    call and the outcome-index / matrix-row fill, on every ordered dataset or a fixed sample."""
    z = len(records)
    if z**n <= SAMPLE:
        sample = list(itertools.product(records, repeat=n))
    else:
        rng = random.Random(SEED)
        sample = [tuple(rng.choice(records) for _ in range(n)) for _ in range(SAMPLE)]

    def loop():
        index: dict = {}
        rows = []
        for dataset in sample:
            dist = mechanism(dataset)
            row = {}
            for o, p in dist.items():
                row[index.setdefault(o, len(index))] = float(p)
            rows.append(row)
        return rows

    t, _ = best_of(3, loop)
    return len(sample), Timing(t.wall / len(sample), t.cpu / len(sample))


def main() -> None:
    records = labeled_records(DOMAIN_SIZE)
    z = len(records)
    mechanism = threshold_learner(DOMAIN_SIZE, epsilon=EPSILON)
    header("bench_core: black-box vs exchangeable verify()")
    print(f"  instance: threshold_learner({DOMAIN_SIZE}, epsilon={EPSILON}), {z} records, "
          f"substitute neighbours, claim eps={EPSILON}")
    print()

    # 1. Both paths at small n: results asserted equal, rates measured.
    print("[1] both paths, n = 3.. (MEASURED, best of 3 (black-box n >= 6: best of 2); results asserted equal)")
    print(f"  {'n':>2} {'path':<12} {'datasets':>10} {'pairs':>11} {'wall s':>8} {'cpu s':>8} "
          f"{'pairs/s wall':>13} {'pairs/s cpu':>12}  {'eps*':<19} {'delta':<5} {'holds':<5} exchangeability")
    black_box, exchangeable = {}, {}  # n -> (Timing, result)
    n = 3
    while True:
        black_box[n] = run(mechanism, records, n, False, 3 if n <= 5 else 2)
        exchangeable[n] = run(mechanism, records, n, True, 3)
        for name, (t, r) in (("black-box", black_box[n]), ("exchangeable", exchangeable[n])):
            status = getattr(r, "exchangeability", "") if r.exchangeable else "-"
            print(f"  {n:>2} {name:<12} {r.datasets:>10,} {r.pairs:>11,} {t.wall:>8.3f} {t.cpu:>8.3f} "
                  f"{r.pairs / t.wall:>13,.0f} {r.pairs / t.cpu:>12,.0f}  {r.epsilon!r:<19} {r.delta!r:<5} "
                  f"{r.holds!s:<5} {status}")
        bb, ex = black_box[n][1], exchangeable[n][1]
        assert not bb.exchangeable and ex.exchangeable, "the paths were not the ones asked for"
        assert (bb.epsilon, bb.delta, bb.holds) == (ex.epsilon, ex.delta, ex.holds), (
            f"n={n}: black-box {(bb.epsilon, bb.delta, bb.holds)} != exchangeable {(ex.epsilon, ex.delta, ex.holds)}")
        # Next n: datasets x z, pairs x z (n+1)/n.
        predicted = black_box[n][0].cpu * z * (n + 1) / n
        if n + 1 >= N_TARGET or predicted > BLACK_BOX_BUDGET:
            if n + 1 < N_TARGET:
                print(f"  black-box stops at n={n}: n={n + 1} would take ~{predicted:.0f} s cpu "
                      f"(> budget {BLACK_BOX_BUDGET:.0f} s)")
            break
        n += 1
    n_bb = n
    rss_bb = peak_rss_mb()
    print(f"  results equal at every n = {min(black_box)}..{n_bb}: epsilon*, delta, holds (exact ==)")
    print(f"  peak RSS of this process after the n={n_bb} black-box runs: {rss_bb:,.0f} MB")
    print()

    # 2. Stage costs of the black-box path at the largest measured n, and the per-dataset cost at
    #    every n up to 8 measured on samples of datasets.
    print(f"[2] black-box cost model (stage costs MEASURED at n={n_bb}, best of 2)")
    stage = stage_costs(mechanism, records, n_bb, black_box[n_bb][0], 2)
    print(f"  per-dataset cost by n: the mechanism + outcome/matrix loop of analyze() timed on all datasets or a "
          f"fixed random sample of {SAMPLE:,} (MEASURED, best of 3), scaled by the n={n_bb} calibration "
          "analyze-per-dataset / loop-per-dataset")
    loop_cost = {m: evaluation_loop_cost(mechanism, records, m) for m in range(min(black_box), N_TARGET + 1)}
    model = {}
    for kind in ("wall", "cpu"):
        calibration = stage[kind][0] / getattr(loop_cost[n_bb][1], kind)
        model[kind] = ({m: getattr(t, kind) * calibration for m, (_, t) in loop_cost.items()}, stage[kind][1], calibration)
    for m, (size, t) in loop_cost.items():
        print(f"    n={m}: {size:>6,} datasets, loop {t.wall * 1e6:6.2f} us wall / {t.cpu * 1e6:6.2f} us cpu -> per-dataset "
              f"{model['wall'][0][m] * 1e6:6.2f} us wall / {model['cpu'][0][m] * 1e6:6.2f} us cpu"
              + (" (calibration point)" if m == n_bb else ""))
    print(f"  calibration factor: {model['wall'][2]:.3f} wall / {model['cpu'][2]:.3f} cpu; per-pair cost (n={n_bb}, "
          f"taken as constant in n): {model['wall'][1] * 1e9:.1f} ns wall / {model['cpu'][1] * 1e9:.1f} ns cpu")

    def predict(kind: str, m: int) -> float:
        per_dataset, c_pair, _ = model[kind]
        return per_dataset[m] * z**m + c_pair * pair_count("substitute", z, m, exchangeable=False)

    for m in sorted(black_box):
        print(f"  model check n={m}: predicted {predict('wall', m):.3f} s wall / {predict('cpu', m):.3f} s cpu, "
              f"measured {black_box[m][0]}")
    print()

    # 3. n = 8: exchangeable measured, black box extrapolated.
    print(f"[3] n={N_TARGET}")
    t_ex, ex = run(mechanism, records, N_TARGET, True, 3)
    assert ex.exchangeable and ex.holds
    datasets_8 = z**N_TARGET
    pairs_8 = pair_count("substitute", z, N_TARGET, exchangeable=False)
    bb8 = {kind: predict(kind, N_TARGET) for kind in ("wall", "cpu")}
    t_bb, r_bb = black_box[n_bb]
    t_ex_same, r_ex_same = exchangeable[n_bb]
    print(f"  exchangeable  MEASURED (best of 3): {t_ex}, {ex.pairs:,} pairs over {ex.datasets:,} multisets; "
          f"eps*={ex.epsilon!r}, delta={ex.delta!r}, holds={ex.holds}, exchangeability "
          f"{getattr(ex, 'exchangeability', '?')}")
    per_dataset, c_pair, _ = model["wall"]
    print(f"  black-box     EXTRAPOLATED (not run): {bb8['wall']:,.0f} s wall (= {bb8['wall'] / 3600:.2f} h) / "
          f"{bb8['cpu']:,.0f} s cpu for {pairs_8:,} pairs over {datasets_8:,} datasets "
          f"[wall: {per_dataset[N_TARGET] * 1e6:.2f} us x {datasets_8:,} + "
          f"{c_pair * 1e9:.1f} ns x {pairs_8:,}]")
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    estimate = rss_bb * z ** (N_TARGET - n_bb) / 1024
    verdict = "it fits" if estimate < 0.8 * physical else "it would not fit, so the extrapolated time is a lower bound"
    print(f"  black-box memory at n={N_TARGET} (ESTIMATE): pairs are streamed in chunks (held as index arrays they "
          f"would take {2 * 8 * pairs_8 / 2**30:.1f} GiB); peak RSS {rss_bb:,.0f} MB at n={n_bb} x "
          f"{z ** (N_TARGET - n_bb)} (datasets) ~ {estimate:,.1f} GiB vs {physical:.0f} GiB on this machine: {verdict}")
    print()
    print("[summary]                                                   wall          cpu")
    rows = [
        (f"pairs/s black-box (MEASURED, n={n_bb})", r_bb.pairs / t_bb.wall, r_bb.pairs / t_bb.cpu),
        (f"pairs/s exchangeable (MEASURED, n={N_TARGET})", ex.pairs / t_ex.wall, ex.pairs / t_ex.cpu),
        (f"pairs/s exchangeable (MEASURED, n={n_bb})", r_ex_same.pairs / t_ex_same.wall, r_ex_same.pairs / t_ex_same.cpu),
    ]
    for label, wall, cpu in rows:
        print(f"  {label:<55} {wall:>12,.0f} {cpu:>12,.0f}")
    print(f"  {'pairs/s ratio exchangeable(n=%d) / black-box(n=%d)' % (N_TARGET, n_bb):<55} "
          f"{rows[1][1] / rows[0][1]:>11.3f}x {rows[1][2] / rows[0][2]:>11.3f}x")
    print(f"  {'time n=%d: black-box EXTRAPOLATED (s)' % N_TARGET:<55} {bb8['wall']:>12,.0f} {bb8['cpu']:>12,.0f}")
    print(f"  {'time n=%d: exchangeable MEASURED (s)' % N_TARGET:<55} {t_ex.wall:>12.3f} {t_ex.cpu:>12.3f}")
    print(f"  {'total time ratio n=%d: black-box / exchangeable' % N_TARGET:<55} "
          f"{bb8['wall'] / t_ex.wall:>11,.0f}x {bb8['cpu'] / t_ex.cpu:>11,.0f}x")
    print(f"  pair-count ratio n={N_TARGET}: {pairs_8:,} / {ex.pairs:,} = {pairs_8 / ex.pairs:,.0f}x")


#: Loads the compiled sweep kernel when this tree has it and numba is installed (commits before it
#: have neither): numba's import and cache load (~0.3-0.5 s, once per process) stay out of the
#: timing, like every other import; ``kernels()`` prints them apart.
_WARM = """
from dpverify import verify
from dpverify.finite.records import labeled_records
from dpverify.mechanisms.exponential import threshold_learner
try:
    from dpverify.verdict._sweep import compiled_kernel
    compiled_kernel()
except ImportError:
    pass
m, r = threshold_learner(4, epsilon=1.0), labeled_records(4)
verify(m, records=r, n=3, epsilon=1.0, exchangeable=False)  # imports and first-call costs out of the timing
"""


def _black_box(n: int, kernel: str | None = None) -> str:
    force = "" if kernel is None else f"import os; os.environ['DPVERIFY_KERNEL'] = {kernel!r}\n"
    return force + _WARM + f"""
def run():
    result = verify(m, records=r, n={n}, epsilon=1.0, exchangeable=False, max_pairs=10**10)
    return [repr(result.epsilon), repr(result.delta), str(result.verdict), result.pairs]
report(run)
"""


#: The same verify calls on this checkout and on another commit (``--against REF``): the sweep
#: kernel's and the exchangeable path's speed-ups measured in one run, interleaved, best of 3.
#: "numpy kernel" forces it on this checkout (``DPVERIFY_KERNEL=numpy``); the others use the
#: compiled kernel when numba is installed.
AGAINST = {
    "black-box EM |X|=4 n=6 (5.5 M pairs)": _black_box(6),
    "  the same, numpy kernel": _black_box(6, "numpy"),
    "black-box EM |X|=4 n=7 (51 M pairs)": _black_box(7),
    "exchangeable EM |X|=4 n=14": """
from dpverify import verify
from dpverify.finite.records import labeled_records
from dpverify.mechanisms.exponential import threshold_learner
m, r = threshold_learner(4, epsilon=1.0), labeled_records(4)
verify(m, records=r, n=3, epsilon=1.0)
def run():
    result = verify(m, records=r, n=14, epsilon=1.0, max_pairs=10**10)
    return [repr(result.epsilon), repr(result.delta), str(result.verdict), result.pairs]
report(run)
""",
}


def kernels(sizes: tuple[int, ...] = (6, 7), repeats: int = 3) -> None:
    """Black-box verify at each n with the numpy and the compiled sweep kernel, in this process
    (kernel loaded first), best of ``repeats``: pairs/s wall and CPU, results asserted equal."""
    from dpverify.verdict import _sweep

    header("bench_core --kernels: the sweep kernels on black-box verify()")
    records, mechanism = labeled_records(DOMAIN_SIZE), threshold_learner(DOMAIN_SIZE, epsilon=EPSILON)
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        compiled = _sweep.compiled_kernel()
    except Exception as error:  # noqa: BLE001 - printed: the numpy kernel alone is measured
        print(f"  compiled kernel unavailable: {error}")
        compiled = None
    if compiled is not None:
        print(f"  numba import + kernel load from numba's cache: {time.perf_counter() - w0:.3f} s wall / "
              f"{time.process_time() - c0:.3f} s cpu (once per process)")
    verify(mechanism, records=records, n=3, epsilon=EPSILON, exchangeable=False)
    print(f"  {'n':>2} {'kernel':<9} {'pairs':>11} {'wall s':>8} {'cpu s':>8} {'pairs/s wall':>13} {'pairs/s cpu':>12}  eps*")
    for n in sizes:
        found = {}
        for kernel in ("numpy", "numba") if compiled is not None else ("numpy",):
            os.environ[_sweep.KERNEL_VARIABLE] = kernel
            t, result = run(mechanism, records, n, False, repeats)
            found[kernel] = (result.epsilon, result.delta, result.holds, str(result.verdict))
            print(f"  {n:>2} {kernel:<9} {result.pairs:>11,} {t.wall:>8.3f} {t.cpu:>8.3f} {result.pairs / t.wall:>13,.0f} "
                  f"{result.pairs / t.cpu:>12,.0f}  {result.epsilon!r}", flush=True)
        assert len(set(found.values())) == 1, f"n={n}: the kernels disagree: {found}"
        os.environ.pop(_sweep.KERNEL_VARIABLE, None)
    print("  results equal (eps*, delta, holds, verdict) with both kernels at every n")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--against":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from _against import compare

        compare(AGAINST, sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
    elif len(sys.argv) > 1 and sys.argv[1] == "--kernels":
        kernels()
    else:
        main()
