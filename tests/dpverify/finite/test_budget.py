"""The path budget's projection from passes by mass (dpverify.finite.sampler._budget): when a tail is
out of reach early, and when a pattern of passes must not be read as one."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpverify import from_sampler
from dpverify.errors import EnumerationTooLarge
from dpverify.finite.sampler._budget import Pass, out_of_reach

GAUSSIAN = [Pass(19, Fraction(811, 1000), 0.0), Pass(212, Fraction(468, 1000), 0.1), Pass(2_280, Fraction(303, 1000), 1.3)]


def test_a_tree_that_multiplies_its_paths_is_projected_out_of_reach():
    # GaussianDiscrete's passes (diffprivlib, tail 1e-10): kept 0.577 and 0.647 of the mass left, for
    # 193 / 19 = 10.2x and 2,068 / 193 = 10.7x the runs. The kinder pace, 0.577 and 10.2x: 1e-10 is
    # ceil(log(1e-10 / 0.303) / log(0.577)) = 41 passes away, 2,068 * 10.2^41 runs: far over 4 x 100,000.
    projected = out_of_reach(GAUSSIAN, Fraction(1, 10**10), 100_000)
    assert projected is not None and projected > 1e43
    # a tail a pass or two away is not refused: 0.1 is 3 passes away, about 2,068 * (10.2 + 104 + 1,061)
    # = 2.4 million runs > 400,000 -- still refused; 0.2 is one pass away: 2,280 + 21,100 < 400,000
    assert out_of_reach(GAUSSIAN, Fraction(2, 10), 100_000) is None


def test_a_wide_draw_opening_over_passes_is_not_projected():
    # A uniform draw of 2,000 branches then a coin loop, at tail 1e-12: the draw is set aside whole by
    # the first passes (2 runs), then its branches open (6,002, then 18,002 runs: 3x, then 2x). Read
    # as geometric growth that is 1e7 runs; the passes that follow grow by 1x, and the enumeration
    # ends after 126,002 runs. Growth under 4x a pass is never projected.
    fan = [Pass(1, Fraction(1), 0.0), Pass(2, Fraction(1), 0.0), Pass(6_002, Fraction(1, 2), 0.1),
           Pass(18_002, Fraction(1, 32), 0.3)]
    assert out_of_reach(fan, Fraction(1, 10**12), 1_000_000) is None
    # nor is a pass that finished nothing (no pace): the draw still set aside whole
    assert out_of_reach(fan[:3], Fraction(1, 10**12), 1) is None


def test_a_finite_tree_opening_pass_after_pass_is_enumerated_not_refused_early():
    from tests.dpverify.finite.test_tail_reference import OPENING, _program

    # Its passes open it 16x a pass to 1,016 runs, a pace that puts 2^-40 at 3e10 runs; but Knuth's
    # estimate of its whole tree is 936 paths, under 4 x max_paths, so it is enumerated: nothing left.
    found = from_sampler(_program(OPENING), tail=Fraction(1, 2**40)).enumerate(())
    assert found.distribution.unexplored == 0 and found.distribution == from_sampler(_program(OPENING))(())


@pytest.mark.slow  # 3 s; the default twin is the projection above on this very pattern of passes
def test_a_wide_draw_then_a_loop_is_enumerated_not_refused_early():
    def fan(dataset, rng):
        i = int(rng.integers(0, 2000))
        k = 0
        while rng.random() < Fraction(1, 2):
            k += 1
        return i % 2 + min(k, 2)

    assert from_sampler(fan, tail=1e-6, max_paths=70_000).enumerate(()).paths == 66_002


def test_a_refusal_names_a_tail_that_stops_there():
    def branching(dataset, rng):  # as test_unbounded_paths.branching_loop
        k = 0
        while rng.random() < Fraction(9, 10):
            k += int(rng.integers(0, 16))
        return min(k, 3)

    with pytest.raises(EnumerationTooLarge, match=r"tail=0\.66 stops after the same 8,738 runs"):
        from_sampler(branching, tail=1e-9)(())
    assert from_sampler(branching, tail=0.66).enumerate(()).paths == 8_738


def test_the_reachable_tail_is_carried_at_most_ten_thousand_passes():
    from dpverify.finite.sampler._budget import _reach

    # one run a pass keeping 0.999 of the mass: max_paths=100,000 would allow 99,990 more passes; the
    # projection stops at 10,000 (in floats): 0.5 * 0.999^10000 = 2.2587e-5
    reached = _reach(Pass(10, Fraction(1, 2), 0.0), 1, 0.999, 1.0, 100_000)
    assert float(reached) == pytest.approx(0.5 * 0.999**10_000, rel=1e-9)
    # GaussianDiscrete's pace, 2,068 runs growing 10.2x a pass: one more pass fits in 100,000 (2,280 +
    # 2,068 * 10.2 = 23,374 runs; two would take 2,280 + 2,068 * (10.2 + 104.04) = 238,529), keeping
    # 0.577 of 0.303: 0.1748, named "about tail=0.18"
    assert float(_reach(GAUSSIAN[-1], 2_068, 0.577, 10.2, 100_000)) == pytest.approx(0.303 * 0.577)
