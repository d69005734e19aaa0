"""dpverify.estimate on the whole benchmark suite and the float-Laplace pair, as numpy samplers.

The twelve mechanisms of :data:`dpverify.mechanisms.audits.benchmark_suite.BENCHMARK` (report noisy max,
Laplace and exponential; noisy max value, both, incorrect; the noisy histogram and its wrong scale; SVT
Algorithms 1-6 of Lyu, Su, Li, c = 1), written as samplers in :mod:`dpverify.mechanisms.suite_samplers`,
each claimed eps-DP at eps = 0.7 on StatDP's patterns (k = 5 noisy max / histogram, 10 SVT; "all" or
"one differs" as the suite says), run through ``estimate_sampler`` with the engine's DEFAULT settings
(executor "processes"; ``--samples N`` / ``--time-budget S`` pass through when the engine takes them).
Printed per mechanism: seconds, the lower bound, the verdict, the exact eps* on the same pairs
(``measure(name, Fraction(7, 10))``, the suite row of reports/audit.json), bound / eps*, and DP-Sniper's
own result (eps_lcb and seconds of :data:`DP_SNIPER`; its runs are at eps = 0.1 on its own inputs, so
only the ratio eps_lcb / 0.1 compares). Then the float pair at eps = 0.1, inputs 1.0 vs 0.0: the naive
``loc + rng.laplace(0, 1/eps)`` and Mironov's snapping fix, both claimed 0.1-DP.

Two bounds per row: the run's largest (any event), and the largest from events on the outputs' values
(not their float bits): eps* is the ideal mechanism's, on real numbers, so the value bound is the one
compared with it (a suite sampler adds double-precision noise to integers, so its float program leaks
through its low bits as Mironov's Laplace does, and its bit events can exceed the ideal eps*).

Targets (met / MISSED per row): <= 10 s each; value bound >= 0.95 eps* where eps* is finite; VIOLATED with a
bound >= 3 x the claim where eps* is infinite; SVT 3 flagged (VIOLATED); the naive float Laplace VIOLATED
with a bound >= 0.5 in <= 30 s; the snapping fix not flagged. A bound above eps* (at most a 1 - confidence
event) is printed as "ABOVE eps*".

Usage: python benchmarks/bench_sampler.py [--serial] [--samples N] [--time-budget S] [--seeds S]
(``--seeds S`` repeats each run with random_state 0 .. S-1; default 1.)

``--exact`` instead times the exact mode, ``from_sampler``'s path enumeration, on the cases of
``benchmarks/_exact_paths.py`` (paths per CPU-second, best of 3); ``--exact --against REF`` runs
them on this checkout and on the commit ``REF`` interleaved and prints the ratios (``_against.py``).
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpverify import Verdict
from dpverify.checking.input_pairs import statdp_patterns
from dpverify.checking.statistical.estimate import estimate_sampler
from dpverify.mechanisms.audits.benchmark_suite import BENCHMARK, measure
from dpverify.mechanisms.suite_samplers import (
    FLOAT_EPSILON,
    FLOAT_PAIRS,
    FloatLaplaceSampler,
    SnappingLaplaceSampler,
    suite_sampler,
)

EPSILON = Fraction(7, 10)
CLAIM = float(EPSILON)

#: DP-Sniper's reference results (eps_lcb, seconds = time_dd_search + time_final_estimate_eps), from
#: eval_sp2021/reference-results/dd_search_reg_data.log of eth-sri/dp-sniper (logistic regression;
#: the suite at eps = 0.1, c = 1, on its own inputs: PatternGenerator over [-10, 10], histograms over
#: integers [0, 10]), and floating_point_data.log / floating_fixed_data.log for the float pair.
DP_SNIPER = {
    "report_noisy_max_laplace": ("ReportNoisyMax1", 0.0923, 61.8),
    "report_noisy_max_exponential": ("ReportNoisyMax2", 0.0975, 58.4),
    "noisy_max_value_laplace": ("ReportNoisyMax3", 0.2478, 62.4),
    "noisy_max_value_exponential": ("ReportNoisyMax4", 0.3463, 62.9),
    "noisy_histogram": ("NoisyHist1", 0.0978, 37.7),
    "noisy_histogram_wrong_scale": ("NoisyHist2", 4.6020, 40.6),
    "svt1": ("SparseVectorTechnique1", 0.0858, 126.0),
    "svt2": ("SparseVectorTechnique2", 0.0859, 159.9),
    "svt3": ("SparseVectorTechnique3", 0.1716, 160.3),
    "svt4": ("SparseVectorTechnique4", 0.1687, 130.5),
    "svt5": ("SparseVectorTechnique5", 1.7612, 58.9),
    "svt6": ("SparseVectorTechnique6", 0.2720, 95.5),
    "float_laplace": ("LaplaceMechanism (floating_point)", 0.2521, 2124.6),
    "snapping_laplace": ("LaplaceFixed (floating_fixed)", 0.0979, 2900.5),
}
SECONDS = 10.0
FLOAT_SECONDS = 30.0


def _options(args: argparse.Namespace) -> dict:
    """The engine options given on the command line, refused when the engine does not take them."""
    accepted = inspect.signature(estimate_sampler).parameters
    options = {"executor": None if args.serial else "processes"}
    for flag, name, value in (("--samples", "samples", args.samples), ("--time-budget", "time_budget", args.time_budget)):
        if value is None:
            continue
        if name not in accepted:
            raise SystemExit(f"{flag}: this engine's estimate_sampler has no {name}= (it takes "
                             f"{', '.join(accepted)}); drop {flag}.")
        options[name] = value
    return options


def _targets(name: str, result, exact: float | None, claim: float) -> list[str]:
    """Each target of the row as 'what met' or 'what MISSED (why)'."""
    verdict, seconds = result.verdict, result.seconds
    # eps* of a suite mechanism is the ideal one's, on real numbers: compared with the bound from value events
    # (float-bit events also see the float program's own leak, whose eps* is infinite: Mironov 2012)
    bound = result.epsilon_lower_bound if exact is None or math.isinf(exact) else result.value_epsilon_lower_bound
    limit = FLOAT_SECONDS if name == "float_laplace" else SECONDS
    found = [("time", seconds <= limit, f"{seconds:.1f} s > {limit:.0f} s")]
    if name == "float_laplace":
        found.append(("flagged", verdict is Verdict.VIOLATED and bound >= 0.5, f"{verdict}, bound {bound:.3f} < 0.5"))
    elif name == "snapping_laplace":
        found.append(("not flagged", verdict is not Verdict.VIOLATED, "VIOLATED"))
    elif exact is not None and math.isinf(exact):
        found.append(("flagged", verdict is Verdict.VIOLATED and bound >= 3 * claim,
                      f"{verdict}, bound {bound:.3f} < {3 * claim:.2f}"))
    else:
        assert exact is not None
        found.append(("tight", bound >= 0.95 * exact, f"{bound:.3f} < 0.95 eps* = {0.95 * exact:.3f}"))
        if name == "svt3":
            found.append(("flagged", verdict is Verdict.VIOLATED, str(verdict)))
    if exact is not None and bound > exact:
        found.append(("sound", False, "ABOVE eps*"))
    if name == "snapping_laplace" and exact is not None and result.epsilon_lower_bound > exact:
        found.append(("sound with bit events", False, "ABOVE eps*"))  # its outputs are exact multiples of Lambda
    return [f"{what} met" if met else f"{what} MISSED ({why})" for what, met, why in found]


def _snapping_epsilon(mechanism: SnappingLaplaceSampler, first: float, second: float) -> float:
    """eps* of the snapping mechanism's law in exact arithmetic on (first, second): the largest
    |ln P(o | first) / P(o | second)| over its outputs (each output's Laplace mass in closed form)."""
    def cdf(x: float, location: float) -> float:
        z = (x - location) / mechanism.scale
        return 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)

    top = math.floor(mechanism.B / mechanism.Lambda)
    edges = [-math.inf] + [(j + 0.5) * mechanism.Lambda for j in range(-top, top)] + [math.inf]
    laws = [[cdf(high, loc) - cdf(low, loc) if math.isfinite(high) else 1 - cdf(low, loc)
             for low, high in zip(edges[:-1], edges[1:])] for loc in (first, second)]
    return max(abs(math.log(p / q)) for p, q in zip(*laws))


def _row(label: str, k: str, result, exact: float | None, seed: int, targets: list[str],
         reference: tuple[str, float, float]) -> str:
    ratio = "-" if exact is None or math.isinf(exact) else f"{result.value_epsilon_lower_bound / exact:.3f}"
    exact_text = "-" if exact is None else ("inf" if math.isinf(exact) else f"{exact:.4f}")
    met = all(t.endswith(" met") for t in targets)
    leak = "bits" if result.witness is not None and result.witness.float_structure else "value"
    return (f"{label:29} {k:>2} {result.pairs:>5} {seed:>4} {result.seconds:>7.2f} {result.epsilon_lower_bound:>8.4f} "
            f"{leak:5} {result.value_epsilon_lower_bound:>7.4f} {str(result.verdict):10} {exact_text:>7} {ratio:>6} "
            f"{reference[1]:>8.4f} {reference[2]:>7.0f}  {'met' if met else 'MISSED'}: {'; '.join(targets)}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serial", action="store_true", help="sample serially (default: a process pool)")
    parser.add_argument("--samples", type=int, default=None, help="passed to the engine (default: its own)")
    parser.add_argument("--time-budget", type=float, default=None, help="passed to the engine when it takes time_budget=")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--exact", action="store_true", help="time from_sampler's path enumeration instead")
    parser.add_argument("--against", metavar="REF", help="with --exact: compare with the commit REF")
    parser.add_argument("--rounds", type=int, default=3, help="with --against: interleaved rounds")
    args = parser.parse_args(argv)
    if args.exact:
        return _exact(args.against, args.rounds)
    options = _options(args)
    defaults = {name: p.default for name, p in inspect.signature(estimate_sampler).parameters.items()
                if p.default is not inspect.Parameter.empty and name not in ("pairs", "records", "n", "neighbors", "random_state")}
    print(f"estimate_sampler with {', '.join(f'{k}={v!r}' for k, v in {**defaults, **options}.items())}, "
          f"random_state=seed ({os.cpu_count()} cores, load {os.getloadavg()[0]:.2f})")
    print("DP-Sniper columns: its eps_lcb and seconds from eval_sp2021/reference-results (dd_search_reg_data.log; "
          "floating_*_data.log), at eps = 0.1 on its own inputs, on its authors' machine: not the same claim or inputs")
    print("bound: the largest (any event; 'bits' when its witness reads the outputs' float bits, a leak of the "
          "float program); value: from events on the outputs' values (the mechanism on real numbers, compared "
          "with the exact eps*); val/eps*: value / eps*")
    header = (f"{'mechanism':29} {'k':>2} {'pairs':>5} {'seed':>4} {'seconds':>7} {'bound':>8} {'by':5} {'value':>7} "
              f"{'verdict':10} {'eps*':>7} {'val/eps*':>6} {'DPS lcb':>8} {'DPS s':>7}  targets")
    print(header)
    print("-" * len(header))
    rows = met = 0
    for spec in BENCHMARK:
        exact = measure(spec.name, EPSILON).epsilon_star
        pairs = statdp_patterns(spec.k, differ=spec.differ)
        for seed in range(args.seeds):
            result = estimate_sampler(suite_sampler(spec.name, CLAIM), pairs=pairs, epsilon=CLAIM, random_state=seed,
                                      **options)
            targets = _targets(spec.name, result, exact, CLAIM)
            rows, met = rows + 1, met + all(t.endswith(" met") for t in targets)
            print(_row(spec.name, str(spec.k), result, exact, seed, targets, DP_SNIPER[spec.name]),
                  flush=True)
    print(f"float pair: claimed {FLOAT_EPSILON}-DP, inputs {FLOAT_PAIRS[0][0][0]} vs {FLOAT_PAIRS[0][1][0]} "
          "(eps* of the snapping fix: its law in exact arithmetic; of the naive one: none computed)")
    snapping = SnappingLaplaceSampler(FLOAT_EPSILON)
    float_rows = (("float_laplace", FloatLaplaceSampler(FLOAT_EPSILON), None),
                  ("snapping_laplace", snapping, _snapping_epsilon(snapping, 1.0, 0.0)))
    for name, sampler, exact in float_rows:
        for seed in range(args.seeds):
            result = estimate_sampler(sampler, pairs=list(FLOAT_PAIRS), epsilon=FLOAT_EPSILON, random_state=seed,
                                      **options)
            targets = _targets(name, result, exact, FLOAT_EPSILON)
            rows, met = rows + 1, met + all(t.endswith(" met") for t in targets)
            print(_row(name, "1", result, exact, seed, targets, DP_SNIPER[name]), flush=True)
    print(f"{met} of {rows} rows met every target")
    return 0


def _exact(against: str | None, rounds: int) -> int:
    """Paths per CPU-second of every exact case, here (and on ``against``, with the ratio)."""

    from _against import ROOT, _run, checkout, commit_of
    from _exact_paths import CASES

    def run(tree: str, snippet: str) -> dict:
        return _run(tree, snippet)["check"]

    print(f"from_sampler path enumeration, paths per CPU-second (best of 3 per run); load {os.getloadavg()[0]:.2f}")
    if against is None:
        print(f"{'case':38} {'paths':>7} {'paths/s':>9}")
        for name, snippet in CASES.items():
            found = run(ROOT, snippet)
            print(f"{name:38} {found['paths']:>7} {found['paths_per_s']:>9,}", flush=True)
        return 0
    with checkout(against) as baseline:
        print(f"baseline {against} = {commit_of(baseline)}, current = {commit_of(ROOT)} (+ uncommitted changes); "
              f"best of {rounds} interleaved rounds")
        print(f"{'case':38} {'paths':>7} {'before':>9} {'after':>9} {'ratio':>6}")
        for name, snippet in CASES.items():
            best = {"before": 0, "after": 0}
            digests = set()
            for _ in range(rounds):
                for label, tree in (("before", baseline), ("after", ROOT)):
                    found = run(tree, snippet)
                    best[label] = max(best[label], found["paths_per_s"])
                    digests.add((found["paths"], found["digest"]))
            same = "" if len(digests) == 1 else f"  RESULTS DIFFER: {sorted(digests)}"
            print(f"{name:38} {found['paths']:>7} {best['before']:>9,} {best['after']:>9,} "
                  f"{best['after'] / best['before']:>5.2f}x{same}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
