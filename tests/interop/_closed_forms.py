"""Closed forms of the exact output distributions of IBM diffprivlib 0.6.6 mechanisms, as its code computes them.

Independent of dpverify and of diffprivlib's sampling code: each distribution is derived by hand
from the mechanism's ``randomise`` (the derivation is in the comments) and evaluated in exact
rational arithmetic (Fractions), or in mpmath at 50 digits where a threshold is transcendental.

The model is the one dpverify's exact rng implements:

* ``rng.random()`` is a real uniform ``u`` on [0, 1); every arithmetic operation applied to it is
  exact real arithmetic (``u * c``, ``np.log``, ``np.floor`` of a real), so an event such as
  ``u * c > t`` has probability ``1 - t / c`` exactly. Rounding *inside* that arithmetic is not
  modelled (a real float ``u`` has 53 bits; the difference is far below anything measured here).
* Every constant the code computes WITHOUT ``u`` (``np.exp(eps) + 1``, a cumulative sum, ``gamma /
  counter``) is a float, rounded as the code rounds it, and enters the formulas at its exact binary
  value. To get those floats the constants are recomputed here with the same numpy / Python
  expressions, in the same order (a float is what it is; recomputing it is not re-deriving the
  distribution). Each function says which expressions it mirrors.

Distributions are ``dict[output, Fraction | mpf]`` summing to 1 (to 50 digits where mpmath is used).
:func:`epsilon_star` and :func:`delta_at` compute the privacy figures over neighbouring datasets
(replace-one: tuples of equal length differing in one position), as an independent check of the
verifier's figures.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

DIGITS = 50  # mpmath working precision (decimal digits)
_NEGLIGIBLE = mpmath.mpf(10) ** -60  # series are summed until their terms fall below this

Number = Any  # Fraction or mpmath.mpf
Distribution = dict[Hashable, Number]


def _mpf(value: Number) -> mpmath.mpf:
    """``value`` (a Fraction, int or float: exact binary value) as an mpf at the working precision."""
    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


def _exact(value: float) -> Fraction:
    """The exact binary value of a float (numpy or Python)."""
    return Fraction(float(value))


# ---------------------------------------------------------------------------------------------
# Binary (binary.py)
# ---------------------------------------------------------------------------------------------


def binary(epsilon: float, value: str, *, labels: tuple[str, str] = ("0", "1"), delta: float = 0.0) -> Distribution:
    """``Binary(epsilon=epsilon, value0, value1).randomise(value)``.

    randomise computes ``unif_rv = u * (np.exp(eps) + 1)`` and flips when
    ``unif_rv > np.exp(eps) + delta``. With the floats ``E = np.exp(eps)``, ``c = fl(E + 1)`` and
    ``T = fl(E + delta)`` (delta is 0.0 for Binary, so ``T = E``): flip iff ``u > T / c``, so

        P(keep) = T / c,   P(flip) = 1 - T / c,

    and eps* = ln(T / (c - T)), which is ln(E) = ln(fl(exp(eps))) when ``E + 1`` is exact, and
    otherwise off by the rounding of ``c`` (relative 2^-52 at most).
    """
    e = np.exp(epsilon)
    c = _exact(e + 1)  # np.float64 + int: rounded once
    t = _exact(e + delta)
    keep = t / c
    other = labels[1] if value == labels[0] else labels[0]
    return {value: keep, other: 1 - keep}


# ---------------------------------------------------------------------------------------------
# Geometric, GeometricTruncated, GeometricFolded (geometric.py)
# ---------------------------------------------------------------------------------------------


class GeometricNoise:
    """The integer noise ``N`` that ``Geometric.randomise`` adds (sensitivity 1).

    randomise: ``v = (u - 0.5) * a`` with the float ``a = fl(1 + np.exp(s))``, ``s = -eps / 1``;
    ``sgn = -1 if v < 0 else 1`` (i.e. ``u < 1/2``); ``N = sgn * floor(ln(sgn * v) / s)``.
    Let ``w = sgn * v = |u - 1/2| a``: given the sign, ``w`` is uniform on [0, a/2) (density
    ``2 / a``, and each sign has probability 1/2, so P(sign, w in I) = |I| / a). As ``s < 0``,

        floor(ln(w) / s) = k  <=>  k <= ln(w) / s < k + 1  <=>  r^(k+1) < w <= r^k,   r = e^s

    (``r`` the real exponential of the float ``s``, not the float ``np.exp(s)``). For k >= 1 the
    interval lies inside (0, a/2) (``r < a/2`` since ``a ~ 1 + r``); for k = 0 it is (r, a/2). So

        P(N = 0)  = 2 (a/2 - r) / a = (a - 2r) / a,
        P(N = ±k) = (r^k - r^(k+1)) / a           (k >= 1),
        P(N >= m) = P(N <= -m) = r^m / a          (m >= 1, a geometric series),

    which sums to 1. When ``a = 1 + r`` exactly this is the two-sided geometric
    (1 - r) / (1 + r) r^|k|; the float ``a`` moves P(N = 0) by the rounding of ``1 + np.exp(s)``.
    """

    def __init__(self, epsilon: float) -> None:
        scale = -epsilon / 1  # Geometric._scale = -self.epsilon / self.sensitivity
        self.a = _mpf(_exact(1 + np.exp(scale)))
        self.r = mpmath.exp(_mpf(_exact(scale)))

    def pmf(self, k: int) -> mpmath.mpf:
        if k == 0:
            return (self.a - 2 * self.r) / self.a
        k = abs(k)
        return (self.r**k - self.r ** (k + 1)) / self.a

    def at_least(self, m: int) -> mpmath.mpf:
        """P(N >= m)."""
        if m >= 1:
            return self.r**m / self.a
        return 1 - self.at_most(m - 1)

    def at_most(self, m: int) -> mpmath.mpf:
        """P(N <= m) (the noise is symmetric: P(N <= m) = P(N >= -m))."""
        return self.at_least(-m)

    def residue(self, c: int, period: int) -> mpmath.mpf:
        """P(N = c mod period), 0 <= c < period: two geometric series (n = c + period j, j >= 0, and
        n = c - period - period j, j >= 0), plus P(N = 0) for c = 0."""
        a, r = self.a, self.r
        series = (1 - r) / (a * (1 - r**period))  # sum over j >= 0 of (r^(m + period j) - r^(m + 1 + period j)) / a, per r^m
        if c == 0:
            return self.pmf(0) + 2 * r**period * series
        return (r**c + r ** (period - c)) * series


def geometric_clipped(epsilon: float, value: int, low: int, high: int) -> Distribution:
    """``min(max(Geometric(epsilon).randomise(value), low), high)``: the noise of
    :class:`GeometricNoise`; the two ends take the tails P(N <= low - value) and P(N >= high - value)."""
    with mpmath.workdps(DIGITS):
        noise = GeometricNoise(epsilon)
        out: Distribution = {o: noise.pmf(o - value) for o in range(low + 1, high)}
        out[low] = noise.at_most(low - value)
        out[high] = noise.at_least(high - value)
        return out


def geometric_truncated(epsilon: float, value: int, lower: int, upper: int) -> Distribution:
    """``GeometricTruncated(epsilon, lower, upper).randomise(value)``: ``Geometric.randomise`` first
    (its ``int(np.round(...))`` makes the noise a concrete integer), then ``_truncate`` maps
    anything above ``upper`` to ``upper`` and below ``lower`` to ``lower``: the clipped geometric."""
    return geometric_clipped(epsilon, value, lower, upper)


def fold(z: int, lower: int, upper: int) -> int:
    """diffprivlib's ``_fold`` on an integer: reflect below ``lower`` about ``lower`` and above
    ``upper`` about ``upper`` until inside (integer bounds; ``int(np.round)`` of an int is itself)."""
    while z < lower or z > upper:
        z = 2 * lower - z if z < lower else 2 * upper - z
    return z


def geometric_folded(epsilon: float, value: int, lower: int, upper: int) -> Distribution:
    """``GeometricFolded(epsilon, lower, upper).randomise(value)`` for integer bounds.

    Reflections about ``lower`` and ``upper`` compose to a translation by ``2 (upper - lower)``, so
    ``fold`` is periodic with period ``T = 2 (upper - lower)``: every integer ``z`` with ``z = j mod
    T`` folds to ``fold(j)``. Hence P(out = o) = sum over j in [0, T) with fold(j) = o of
    P(N = j - value mod T), each a pair of geometric series (:meth:`GeometricNoise.residue`).
    """
    period = 2 * (upper - lower)
    with mpmath.workdps(DIGITS):
        noise = GeometricNoise(epsilon)
        out: Distribution = {}
        for j in range(lower, lower + period):
            o = fold(j, lower, upper)
            out[o] = out.get(o, 0) + noise.residue((j - value) % period, period)
        return out


# ---------------------------------------------------------------------------------------------
# Exponential, PermuteAndFlip (exponential.py) and bernoulli_neg_exp (base.py)
# ---------------------------------------------------------------------------------------------


def exponential_cumulative(epsilon: float, utility: Sequence[int], sensitivity: float = 1.0) -> np.ndarray:
    """The float array ``Exponential._probabilities``: mirrors ``_find_probabilities`` (monotonic
    False, no measure): ``scale = eps / sensitivity / 2``; ``np.exp(scale * (u - max u))``;
    divided by its ``sum()``; ``np.cumsum``."""
    scale = epsilon / float(sensitivity) / (2 - False)
    probabilities = np.exp(scale * (np.array(utility) - max(utility)))
    probabilities *= 1
    probabilities /= probabilities.sum()
    return np.cumsum(probabilities)


def exponential(epsilon: float, utility: Sequence[int], sensitivity: float = 1.0) -> Distribution:
    """``Exponential(epsilon, sensitivity, utility).randomise()``.

    With the float cumulative sums ``c_0 <= ... <= c_{n-1}``, randomise returns the first ``i``
    with ``u <= c_i``: P(i) = c_i - c_{i-1} (c_{-1} = 0). The float ``c_{n-1}`` need not be 1:

    * ``c_{n-1} >= 1``: every ``u < 1`` finds an index; the last gets ``1 - c_{n-2}``.
    * ``c_{n-1} < 1`` (e.g. 0.9999999999999998 = 1 - 2^-52 for utilities [3, 0, 0] at eps = 1):
      ``u`` in (c_{n-1}, 1) finds none, and the fallback ``np.isclose(u, c_{n-1})`` — true when
      ``|u - c| <= 1e-8 + 1e-5 |c|``, i.e. for every ``u`` in that sliver, which is 2^-52 wide —
      returns the LAST index. So the sliver's mass goes to the last candidate.

    Either way P(last) = 1 - c_{n-2}.
    """
    cumulative = [_exact(c) for c in exponential_cumulative(epsilon, utility, sensitivity)]
    out: Distribution = {}
    below = Fraction(0)
    for i, c in enumerate(cumulative[:-1]):
        out[i] = c - below
        below = c
    out[len(cumulative) - 1] = 1 - below
    return out


@functools.lru_cache(maxsize=4096)
def _counter_parity_at(gamma: float, precision: int) -> mpmath.mpf:
    with mpmath.workprec(precision):
        return _counter_parity_series(gamma)


def _counter_parity(gamma: float) -> mpmath.mpf:
    """:func:`_counter_parity_series`, remembered per float ``gamma`` and working precision."""
    return _counter_parity_at(float(gamma), mpmath.mp.prec)


def _counter_parity_series(gamma: float) -> mpmath.mpf:
    """P(the loop ``counter = 1; while rng.random() <= gamma / counter: counter += 1`` ends with an
    odd counter), ``gamma`` in [0, 1]: the threshold ``t_k = fl(gamma / k)`` is a float (a float
    divided by an int), so the loop reaches counter ``k`` with probability ``R_k = t_1 ... t_{k-1}``
    and stops there with ``R_k - R_{k+1}``; P(odd) = R_1 - R_2 + R_3 - ... (e^-gamma when t_k is
    exactly gamma / k). Thresholds at or below 0 are never met (u <= 0 has probability 0)."""
    total, reach, k = mpmath.mpf(0), mpmath.mpf(1), 1
    while reach > _NEGLIGIBLE:
        threshold = gamma / k
        share = min(max(_mpf(_exact(threshold)), mpmath.mpf(0)), mpmath.mpf(1))
        after = reach * share
        if k % 2 == 1:
            total += reach - after
        reach, k = after, k + 1
    return total


def bernoulli_neg_exp(gamma: float) -> mpmath.mpf:
    """P(``bernoulli_neg_exp(gamma)`` returns 1) as the code computes it: ``while gamma > 1: gamma
    -= 1; if not bernoulli_neg_exp(1): return 0`` (each a counter loop at gamma = 1, whose first
    threshold 1/1 is always met), then the counter loop at the remaining gamma in [0, 1]:
    P = P_1^m P(remaining), with P(.) from :func:`_counter_parity`."""
    probability = mpmath.mpf(1)
    while gamma > 1:
        gamma -= 1
        probability *= _counter_parity(1.0)
    return probability * _counter_parity(gamma)


def permute_and_flip_log_probabilities(epsilon: float, utility: Sequence[int], sensitivity: float = 1.0) -> np.ndarray:
    """The float array ``PermuteAndFlip._probabilities``: mirrors its ``_find_probabilities``:
    ``scale = eps / sensitivity / 2`` times ``utility - max(utility)`` (an integer array)."""
    scale = epsilon / float(sensitivity) / (2 - False)
    shifted = np.array(utility)
    shifted -= max(shifted)
    return scale * shifted


def permute_and_flip(epsilon: float, utility: Sequence[int], sensitivity: float = 1.0) -> Distribution:
    """``PermuteAndFlip(epsilon, sensitivity, utility).randomise()``.

    ``_find_probabilities`` gives ``log p_i = scale (u_i - max u)`` (floats; ``scale = eps /
    sensitivity / 2``). randomise draws ``idx = ids[int(u * len(ids))]`` -- uniform among the
    candidates left, since ``int(u k) = j`` for ``u`` in [j/k, (j+1)/k) -- removes it and accepts it
    when ``bernoulli_neg_exp(-log p_idx)`` is 1, with probability ``q_idx`` (:func:`bernoulli_neg_exp`;
    the top candidate has ``-log p = -0.0`` and is always accepted). Successive uniform picks
    without replacement visit the candidates in a uniform random order, so

        P(i) = (1 / n!) sum over orders, of q_i prod over candidates j before i of (1 - q_j).
    """
    log_probabilities = permute_and_flip_log_probabilities(epsilon, utility, sensitivity)
    with mpmath.workdps(DIGITS):
        accept = [bernoulli_neg_exp(-log_probabilities[i]) for i in range(len(utility))]
        out: Distribution = {i: mpmath.mpf(0) for i in range(len(utility))}
        orders = list(itertools.permutations(range(len(utility))))
        for order in orders:
            reach = mpmath.mpf(1)
            for i in order:
                out[i] += reach * accept[i] / len(orders)
                reach *= 1 - accept[i]
        return out


# ---------------------------------------------------------------------------------------------
# ExponentialCategorical, ExponentialHierarchical (exponential.py)
# ---------------------------------------------------------------------------------------------


def exponential_categorical(epsilon: float, utility: Callable[[str, str], int], domain: Sequence[str], value: str) -> Distribution:
    """``ExponentialCategorical(epsilon, utility_list).randomise(value)``, ``domain`` in the order the
    mechanism records its values (first appearance in the utility list), ``utility(a, b)`` symmetric
    and 0 on the diagonal; the sensitivity is the largest utility.

    Mirrors the floats: ``p(a, b) = 1.0`` if a == b else ``np.exp(-eps * u(a, b) / f / sensitivity)``
    with the balancing factor ``f = 2``, unless every normalising constant ``Z_a = 0.0 + p(a, d_1) +
    p(a, d_2) + ...`` (summed in domain order) is np.isclose to the first, when ``f = 1`` and the
    constants are summed again. randomise: ``u * Z_value <= cum_k`` with the same running float sums
    ``cum_k`` (``cum_n`` is the very float ``Z_value``), so

        P(d_k) = (cum_k - cum_{k-1}) / Z_value,

    each difference of floats taken exactly (not ``p(value, d_k) / Z`` where the sum rounded).
    """
    sums = [_exact(s) for s in categorical_sums(epsilon, utility, domain, value)]
    normaliser = sums[-1]
    return {b: (sums[k] - (sums[k - 1] if k else 0)) / normaliser for k, b in enumerate(domain)}


def categorical_sums(epsilon: float, utility: Callable[[str, str], int], domain: Sequence[str], value: str) -> list[float]:
    """The running float sums ``cum_1, ..., cum_n = Z_value`` of :func:`exponential_categorical`,
    with the balancing factor chosen as diffprivlib chooses it."""
    sensitivity = max(utility(a, b) for a in domain for b in domain)

    def probability(a: str, b: str, factor: int) -> float:
        return 1.0 if a == b else np.exp(-epsilon * utility(a, b) / factor / sensitivity)

    def running_sums(a: str, factor: int) -> list[float]:
        sums, total = [], 0.0
        for b in domain:
            total += probability(a, b, factor)
            sums.append(total)
        return sums

    constants = [running_sums(a, 2)[-1] for a in domain]
    factor = 1 if all(np.isclose(c, constants[0]) for c in constants) else 2
    return running_sums(value, factor)


def hierarchy_utility(hierarchy: Sequence) -> tuple[list[str], Callable[[str, str], int]]:
    """The leaves of a nested list (in order) and diffprivlib's hierarchical utility: the tree
    height minus the length of the common prefix of the two leaves' positions."""
    positions: dict[str, tuple[int, ...]] = {}

    def walk(node: Sequence, path: tuple[int, ...]) -> None:
        for i, child in enumerate(node):
            if isinstance(child, str):
                positions[child] = (*path, i)
            else:
                walk(child, (*path, i))

    walk(hierarchy, ())
    height = len(next(iter(positions.values())))

    def utility(a: str, b: str) -> int:
        common = 0
        while common < height and positions[a][common] == positions[b][common]:
            common += 1
        return height - common

    return list(positions), utility


# ---------------------------------------------------------------------------------------------
# Uniform (uniform.py)
# ---------------------------------------------------------------------------------------------


def uniform_floor(delta: float, value: int, sensitivity: float = 1.0) -> Distribution:
    """``floor(Uniform(delta, sensitivity).randomise(value))``.

    randomise: ``(2u - 1) * h`` with the float ``h = fl(fl(sensitivity / delta) / 2)``, so the
    output ``value + (2u - 1) h`` is uniform on [value - h, value + h). floor = k iff ``u`` lies in
    [((k - value) / h + 1) / 2, ((k + 1 - value) / h + 1) / 2), intersected with [0, 1).
    """
    h = _exact(float(sensitivity) / delta / 2)
    out: Distribution = {}
    low = math.floor(value - h)
    for k in range(low, math.ceil(value + h) + 1):
        start = max(((k - value) / h + 1) / 2, Fraction(0))
        end = min(((k + 1 - value) / h + 1) / 2, Fraction(1))
        if end > start:
            out[k] = end - start
    return out


# ---------------------------------------------------------------------------------------------
# Staircase (staircase.py)
# ---------------------------------------------------------------------------------------------


def staircase_constants(epsilon: float) -> tuple[float, float, float]:
    """Staircase's floats ``(p, gamma, beta)``: ``p = 1 - np.exp(-eps)`` (of ``rng.geometric``),
    ``gamma = float(1 / (1 + np.exp(eps / 2)))`` (``_check_gamma``'s default) and ``beta = gamma /
    (gamma + (1 - gamma) * np.exp(-eps))`` (the threshold of ``binary_rv``)."""
    q = np.exp(-epsilon)
    gamma = float(1 / (1 + np.exp(epsilon / 2)))
    return float(1 - q), gamma, float(gamma / (gamma + (1 - gamma) * q))


def staircase_binned(epsilon: float, value: int, low: int, high: int) -> Distribution:
    """``min(max(floor(2 * Staircase(epsilon, sensitivity=1).randomise(value)), low), high)``
    (default gamma).

    randomise draws ``sign = -1 if u1 < 1/2 else 1``; ``G = rng.geometric(p) - 1`` with the float
    ``p = fl(1 - np.exp(-eps))``, so P(G = g) = p (1 - p)^g; ``U = u3``; ``b = 0 if u4 < beta``
    with the float ``beta = gamma / (gamma + (1 - gamma) * np.exp(-eps))``, ``gamma = 1 / (1 +
    np.exp(eps / 2))``. The noise magnitude ``X`` is then exactly uniform on

        b = 0:  [g, g + gamma)                 (g + gamma * U; gamma * U is exact real arithmetic)
        b = 1:  [A, A + L), A = fl(g + gamma), L = fl(1 - gamma)   (both constants are floats)

    and the output ``value + sign * X``. The bin ``m = floor(2 out)`` is the output in [m/2,
    (m + 1)/2): its probability given (sign, g, b) is the overlap of that bin with the output's
    interval, over the interval's length. Bins beyond [low, high] are clipped. Once ``g`` is large
    enough that every interval lies wholly in the end bins (checked), the remaining terms sum to
    ``(1 - p)^g0`` per sign, each half going to its end bin.
    """
    p_float, gamma, beta_float = staircase_constants(epsilon)
    p, beta = _exact(p_float), _exact(beta_float)
    half = Fraction(1, 2)
    out: Distribution = {m: Fraction(0) for m in range(low, high + 1)}

    def add(start: Fraction, length: Fraction, weight: Fraction) -> None:
        end = start + length
        for m in range(math.floor(2 * start), math.floor(2 * end) + 1):
            overlap = min(end, Fraction(m + 1, 2)) - max(start, Fraction(m, 2))
            if overlap > 0:
                out[min(max(m, low), high)] += weight * overlap / length

    g = 0
    while True:
        intervals = [(Fraction(g), _exact(gamma), beta), (_exact(g + gamma), _exact(1 - gamma), 1 - beta)]
        if all(value + start >= Fraction(high, 2) and value - start <= Fraction(low + 1, 2) for start, _, _ in intervals):
            break  # this g and every larger one: sign + lands in bins >= high, sign - in bins <= low
        for start, length, share in intervals:
            weight = half * p * (1 - p) ** g * share
            add(value + start, length, weight)  # sign +1: value + X
            add(value - start - length, length, weight)  # sign -1: value - X, X uniform on [start, start + length)
        g += 1
    out[high] += half * (1 - p) ** g
    out[low] += half * (1 - p) ** g
    return out


# ---------------------------------------------------------------------------------------------
# GaussianDiscrete (gaussian.py)
# ---------------------------------------------------------------------------------------------


def gaussian_discrete_clipped(scale: float, value: int, low: int, high: int) -> Distribution:
    """``min(max(GaussianDiscrete(...).randomise(value), low), high)`` for the mechanism's float
    ``scale`` (``_scale``, found by diffprivlib's bisection; taken here as given).

    randomise repeats rounds until one accepts: ``tau = 1 / (1 + floor(scale))``, ``sigma2 =
    scale ** 2``; ``geom_x`` counts the 1s of ``bernoulli_neg_exp(tau)`` before its first 0
    (P(geom_x = k) = b^k (1 - b), ``b`` = P(bernoulli_neg_exp(tau) = 1)); ``bern_b = u < 1/2``; the
    round is rejected when ``bern_b`` and ``geom_x = 0``; else ``y = -geom_x`` if ``bern_b`` else
    ``geom_x`` is returned with probability ``c(|y|) = P(bernoulli_neg_exp(gamma_|y|) = 1)``,
    ``gamma_k = (k - tau * sigma2) ** 2 / 2 / sigma2`` (floats). A round returns ``y`` with
    probability (1 - b) / 2 b^|y| c(|y|) for every integer y (y = 0 only with ``bern_b`` false), so

        P(Y = y) = b^|y| c(|y|) / sum_z b^|z| c(|z|).

    The terms fall like exp(-y^2 / (2 sigma2)); they are summed until below 1e-60 of the first.
    """
    tau = 1 / (1 + np.floor(scale))
    sigma2 = scale**2
    with mpmath.workdps(DIGITS):
        b = bernoulli_neg_exp(tau)
        weights = {0: bernoulli_neg_exp((0 - tau * sigma2) ** 2 / 2 / sigma2)}
        k = 1
        while True:
            weight = b**k * bernoulli_neg_exp((k - tau * sigma2) ** 2 / 2 / sigma2)
            weights[k] = weights[-k] = weight
            if weight < _NEGLIGIBLE * weights[0]:
                break
            k += 1
        total = mpmath.fsum(weights.values())
        out: Distribution = {o: mpmath.mpf(0) for o in range(low, high + 1)}
        for y, weight in weights.items():
            out[min(max(value + y, low), high)] += weight / total
        return out


# ---------------------------------------------------------------------------------------------
# Privacy figures over neighbouring datasets
# ---------------------------------------------------------------------------------------------


def substitute_pairs(records: Sequence[Hashable], n: int) -> list[tuple[tuple, tuple]]:
    """Every ordered pair of datasets (tuples of ``n`` records) that differ in exactly one position."""
    pairs = []
    for dataset in itertools.product(records, repeat=n):
        for position, record in itertools.product(range(n), records):
            if record != dataset[position]:
                pairs.append((dataset, (*dataset[:position], record, *dataset[position + 1:])))
    return pairs


def epsilon_star(distribution_of: Callable[[tuple], Distribution], pairs: Sequence[tuple[tuple, tuple]]) -> float:
    """max over ordered pairs (D, D') and outputs o of ln(P_D(o) / P_D'(o)), as a float (``inf`` when
    some output has P > 0 = Q), computed at 50 digits."""
    best = mpmath.mpf("-inf")
    with mpmath.workdps(DIGITS):
        for dataset, neighbor in pairs:
            p, q = distribution_of(dataset), distribution_of(neighbor)
            for outcome, mass in p.items():
                if mass <= 0:
                    continue
                other = q.get(outcome, 0)
                if other <= 0:
                    return math.inf
                best = max(best, mpmath.log(_mpf(mass) / _mpf(other)))
    return float(best)


def delta_at(distribution_of: Callable[[tuple], Distribution], pairs: Sequence[tuple[tuple, tuple]], epsilon: Number) -> float:
    """max over ordered pairs of the hockey-stick divergence sum_o max(0, P(o) - e^eps Q(o)), at 50 digits."""
    best = mpmath.mpf(0)
    with mpmath.workdps(DIGITS):
        factor = mpmath.exp(_mpf(epsilon))
        for dataset, neighbor in pairs:
            p, q = distribution_of(dataset), distribution_of(neighbor)
            excess = mpmath.fsum(max(mpmath.mpf(0), _mpf(mass) - factor * _mpf(q.get(o, 0))) for o, mass in p.items())
            best = max(best, excess)
    return float(best)


def total(distribution: Mapping[Hashable, Number]) -> mpmath.mpf:
    """The total mass (1 for every closed form here, to 50 digits where mpmath is used)."""
    with mpmath.workdps(DIGITS):
        return mpmath.fsum(_mpf(v) for v in distribution.values())
