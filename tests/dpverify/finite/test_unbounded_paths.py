"""from_sampler on randomness without a bound: loops that run until a coin fails, draws with
infinitely many outcomes (geometric, negative binomial, Poisson), explored in order of probability
mass until at most ``tail`` is left; and the depth limit that turns a runaway loop into an error.

Every expected distribution is worked out by hand in a comment. The unexplored mass is exact
(``1 -`` the explored mass) for exact samplers, and the explored and unexplored masses add up to 1.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest

from dpverify import Distribution, from_sampler
from dpverify.errors import EnumerationTooLarge, InvalidArgument

HALF = Fraction(1, 2)


def until_tails(dataset, rng):
    """The number of heads before the first tail of a fair coin, capped at 3."""
    k = 0
    while rng.random() < HALF:
        k += 1
    return min(k, 3)


def test_a_loop_without_a_tail_is_refused_at_the_depth_limit():
    with pytest.raises(EnumerationTooLarge) as raised:
        from_sampler(until_tails, max_depth=50)(())
    message = str(raised.value)
    assert "max_depth=50" in message and "tail=1e-9" in message  # the limit, and the fix


def test_a_loop_is_explored_until_the_tail():
    found = from_sampler(until_tails, tail=Fraction(1, 2**20)).enumerate(())
    # k heads then a tail has mass 2^-(k+1). A path is set aside once its mass drops below the
    # cutoff 2^-20: the 21st head (mass 2^-21) and the tail after 20 heads (mass 2^-21) are the two
    # left, 2^-20 in all, which is <= tail, so the search stops there. Output 3 gets k = 3..19:
    # sum 2^-(k+1) = 2^-3 - 2^-20.
    left = Fraction(1, 2**20)
    assert found.distribution == Distribution({0: HALF, 1: Fraction(1, 4), 2: Fraction(1, 8), 3: Fraction(1, 8) - left},
                                              unexplored=left)
    assert found.distribution.unexplored == left


def test_a_smaller_tail_explores_further():
    coarse = from_sampler(until_tails, tail=Fraction(1, 2**10))(()).unexplored
    fine = from_sampler(until_tails, tail=Fraction(1, 2**30))(()).unexplored
    # The passes' cutoffs are 16^-k = 2^-4k whatever the tail, and each leaves exactly its cutoff
    # unexplored (as above). 2^-8 > 2^-10, so the search goes on to 2^-12; 2^-28 > 2^-30, so to 2^-32.
    assert coarse == Fraction(1, 2**12)
    assert fine == Fraction(1, 2**32)


def test_the_passes_do_not_depend_on_the_tail():
    # A tail between two passes' leftovers stops after the same passes as the finer one's: 2^-11 and
    # 2^-12 both stop after the pass at 2^-12 (with the same runs), 2^-8 after the one at 2^-8.
    runs = {tail: from_sampler(until_tails, tail=Fraction(1, 2**tail)).enumerate(()).paths for tail in (8, 11, 12)}
    assert runs[11] == runs[12] > runs[8]


def branching_loop(dataset, rng):
    """A loop that goes on with probability 9/10, adding 0..15 each round: its path masses shrink
    by 9/160 a round while the mass left shrinks by only 9/10, so every 16x finer cutoff opens about
    one more round: it keeps 0.9 of the mass left and runs 16x the paths of the pass before (34, 546,
    8,738 runs). Its tree is endless, and Knuth's estimate says so: 3.4e7 paths over its 64 probes."""
    k = 0
    while rng.random() < Fraction(9, 10):
        k += int(rng.integers(0, 16))
    return min(k, 3)


def test_a_tail_out_of_reach_is_refused_early_naming_the_tail_reached():
    with pytest.raises(EnumerationTooLarge) as raised:
        from_sampler(branching_loop, tail=1e-9)(())
    message = str(raised.value)
    # Refused after the first pass past 1,000 runs, far below max_paths=100,000: the pace (0.9 of the
    # mass kept per pass, 16x the runs) puts 1e-9 beyond 4 x 100,000 runs, in a tree Knuth's estimate
    # finds larger than that too.
    assert "cannot reach tail=1e-09 within max_paths=100,000 on dataset ()" in message
    reached = re.search(r"tail=([0-9.e-]+) stops after the same ([0-9,]+) runs", message)
    runs = int(reached.group(2).replace(",", ""))
    assert 1_000 <= runs < 20_000
    # The tail named is one a run stops at, after those very runs.
    assert from_sampler(branching_loop, tail=float(reached.group(1))).enumerate(()).paths == runs


def test_a_tail_out_of_reach_mid_pass_names_the_last_pass():
    with pytest.raises(EnumerationTooLarge, match=r"ran 300 times \(max_paths=300\) on dataset \(\) in .* ms per run\) "
                                                  r"and still leaves more than tail=1e-09 .*Mass left unexplored by its "
                                                  r"passes: .* runs; tail=.* stops after the same"):
        from_sampler(branching_loop, tail=1e-9, max_paths=300)(())


def test_geometric_draws():
    def sampler(dataset, rng):
        return min(int(rng.geometric(Fraction(1, 3))), 4)

    tail = Fraction(1, 10**6)
    found = from_sampler(sampler, tail=tail)(())
    # P(k) = (2/3)^(k-1) / 3: 1/3, 2/9, 4/27; every path with k >= 4 gives 4: (2/3)^3 = 8/27 in all,
    # of which the unexplored mass is the part not yet found
    left = found.unexplored
    assert 0 < left <= tail
    assert found == Distribution({1: Fraction(1, 3), 2: Fraction(2, 9), 3: Fraction(4, 27), 4: Fraction(8, 27) - left},
                                 unexplored=left)


def test_geometric_without_a_tail_is_refused_with_the_fix():
    with pytest.raises(EnumerationTooLarge, match=r"rng\.geometric has infinitely many outcomes.*tail=1e-9"):
        from_sampler(lambda d, rng: rng.geometric(0.5))(())


def test_a_certain_geometric_draw_needs_no_tail():
    assert from_sampler(lambda d, rng: rng.geometric(1))(()) == Distribution.point(1)  # p = 1: the first trial


def test_negative_binomial_draws():
    def sampler(dataset, rng):
        return min(int(rng.negative_binomial(2, HALF)), 2)

    found = from_sampler(sampler, tail=Fraction(1, 10**9))(())
    # failures before the 2nd success: P(k) = C(k + 1, k) / 2^(k + 2): 1/4, 2/8 = 1/4; k >= 2: 1/2
    left = found.unexplored
    assert 0 < left <= Fraction(1, 10**9)
    assert found == Distribution({0: Fraction(1, 4), 1: Fraction(1, 4), 2: HALF - left}, unexplored=left)


def test_poisson_draws_are_enclosed():
    def sampler(dataset, rng):
        return min(int(rng.poisson(1)), 2)

    found = from_sampler(sampler, tail=1e-12)(())
    # P(0) = P(1) = e^-1 (irrational: floats from certified bounds); k >= 2: 1 - 2/e
    assert not found.is_exact
    assert found[0] == pytest.approx(math.exp(-1), rel=1e-15)
    assert found[1] == pytest.approx(math.exp(-1), rel=1e-15)
    assert found[2] + found.unexplored == pytest.approx(1 - 2 * math.exp(-1), rel=1e-14)
    assert 0 < found.unexplored <= 1e-12


def test_a_chain_with_floats_gives_a_float_distribution():
    def sampler(dataset, rng):
        return min(int(rng.geometric(0.5)), 2)

    found = from_sampler(sampler, tail=1e-9)(())
    assert not found.is_exact
    assert found[1] == 0.5 and found[2] + found.unexplored == 0.5  # 0.5 is exact in binary


@pytest.mark.parametrize("tail", [-0.1, 1, 1.5, float("nan")])
def test_a_bad_tail_is_refused(tail):
    with pytest.raises(InvalidArgument, match="tail"):
        from_sampler(until_tails, tail=tail)


def test_an_irrational_tail_is_read_from_below():
    import sympy
    tail = from_sampler(until_tails, tail=sympy.exp(-20)).tail
    assert isinstance(tail, Fraction) and 0 < tail < sympy.exp(-20)  # the float just below e^-20
    assert from_sampler(until_tails, tail=0.5).tail == Fraction(1, 2)  # a float: its binary value


def test_a_wide_uniform_draw_is_set_aside_as_one_node():
    def wide(dataset, rng):
        return int(rng.integers(0, 3000)) % 3

    found = from_sampler(wide, tail=1e-9).enumerate(())
    # Each branch weighs 1/3000 = 3.3e-4: below the cutoffs 1/16 and 1/256, above 1/4096. Its 3,000
    # branches are set aside together (one run, one node: a uniform draw's later siblings weigh the
    # same) by the first two passes, then enumerated by the third: 1 + 1 + 3,000 runs, not 3 x 3,000.
    assert found.paths == 3_002
    assert found.distribution == Distribution({0: Fraction(1, 3), 1: Fraction(1, 3), 2: Fraction(1, 3)})


def test_a_wide_draw_then_a_loop_is_exact_up_to_its_unexplored_mass():
    def fan_loop(dataset, rng):
        i = int(rng.integers(0, 3000))
        k = 0
        while rng.random() < HALF:
            k += 1
        return (i % 3, min(k, 2))

    tail = Fraction(1, 2**16)
    found = from_sampler(fan_loop, tail=tail)(())
    # i % 3 is uniform; k = 0, 1 with 1/2, 1/4, k >= 2 with 1/4, of which the unexplored mass (each of
    # the 3,000 chains leaves 2^-16 / 3000 after the pass at 2^-16) is taken from (r, 2): 1/12 - 2^-16/3.
    assert found.unexplored == tail
    expected = {}
    for r in range(3):
        expected |= {(r, 0): Fraction(1, 6), (r, 1): Fraction(1, 12), (r, 2): Fraction(1, 12) - tail / 3}
    assert found == Distribution(expected, unexplored=tail)
