"""mechanisms/suite_programs.py: the twelve benchmark programs, their closed forms, and their exact verdicts.

Three parts:

1. The programs as ordinary sampling code: each runs on a seeded real generator (numpy's ``Generator``
   for the function style, ``np.random`` for the class style) and returns the documented output; the
   parameters are the hand-written mechanisms' (:mod:`dpverify.mechanisms.sparse_vector`); extreme answers
   fix the outcome, and a seed replays the noise, so nothing here is statistical.
2. Closed forms derived by hand in this file (not from dpverify's mechanisms code): report noisy max with
   k = 2 and Laplace noise, the Laplace histogram's eps*, and SVT Algorithm 1 with k = 1; each checked
   by quadrature (mpmath) and against the hand-written exact mechanisms to 1e-12. They are the
   independent references for the traced programs.
3. Exact verification through the tracer (``from_sampler`` + ``verify``), skipped only while the exact
   rng still refuses ``rng.laplace``: every program, in both styles, has the hand-written mechanism's
   eps*, verdict and witness probabilities, and the closed forms.
"""

from __future__ import annotations

import math
import pickle
from fractions import Fraction
from functools import cache

import mpmath
import numpy as np
import pytest

import dpverify
from dpverify import InputPairs, PureDp, Verdict
from dpverify.errors import InvalidArgument, MechanismError, NondeterministicMechanism
from dpverify.mechanisms import suite_programs
from dpverify.mechanisms.audits.benchmark_suite import BENCHMARK, EPSILONS
from dpverify.mechanisms.noisy_max import NoisyHistogram, ReportNoisyMax
from dpverify.mechanisms.sparse_vector import svt
from dpverify.mechanisms.suite_programs import (
    BATCH_CLASSES,
    EXPECTED_HOLDS,
    SUITE_DIFFER,
    SUITE_EPSILONS,
    SUITE_K,
    SUITE_NAMES,
    ClassProgram,
    NoisyHistogramProgram,
    NoisyMaxValueProgram,
    ReportNoisyMaxProgram,
    SparseVectorProgram,
    class_program,
    function_program,
)

STYLES = ("function", "class")
SPECS = {spec.name: spec for spec in BENCHMARK}
BIG = 1e6  # far beyond any noise these seeds draw at eps = 0.7 (scales <= 6): the outcome is fixed


@pytest.fixture(autouse=True)
def _keep_global_generator():
    """The class style draws from numpy's global generator: seed it per test and put its state back."""
    state = np.random.get_state()
    yield
    np.random.set_state(state)


def _program(name: str, style: str, epsilon: float):
    return function_program(name, epsilon) if style == "function" else class_program(name, epsilon)


def _run(program, dataset, seed: int):
    """One output of ``program`` on ``dataset``: a seeded Generator for the function style, a seeded
    ``np.random`` for the class style (which ignores its rng argument)."""
    np.random.seed(seed)
    return program(dataset, np.random.default_rng(seed))


# == 1. the programs as sampling code ================================================================


def test_suite_table_is_the_benchmark_suite() -> None:
    assert SUITE_NAMES == tuple(spec.name for spec in BENCHMARK)
    assert EXPECTED_HOLDS == {spec.name: spec.correct for spec in BENCHMARK}
    assert SUITE_K == {spec.name: spec.k for spec in BENCHMARK}
    assert SUITE_DIFFER == {spec.name: spec.differ for spec in BENCHMARK}
    assert SUITE_EPSILONS == tuple(float(e) for e in EPSILONS)
    assert set(BATCH_CLASSES) == set(suite_programs.FUNCTION_PROGRAMS) == set(SUITE_NAMES)


def _check_svt_answers(name: str, output, k: int) -> None:
    """``output`` is SVT ``name``'s answer tuple as the module docstring documents it."""
    variant = int(name[-1])
    assert isinstance(output, tuple) and len(output) == k, output
    if variant in (5, 6):
        assert all(type(answer) is bool for answer in output), output
        return
    below = 0
    while below < k and output[below] is False:
        below += 1
    if below == k:
        return  # no answer above the threshold
    top = output[below]
    if variant == 3:
        assert isinstance(top, float) and not isinstance(top, bool), output
    else:
        assert top is True, output
    assert all(answer is None for answer in output[below + 1:]), output


def _check_output(name: str, style: str, output, k: int) -> None:
    if name.startswith("report_noisy_max"):
        assert (type(output) is int) if style == "class" else isinstance(output, np.integer), type(output)
        assert 0 <= output < k
    elif name.startswith("noisy_max_value"):
        assert (type(output) is float) if style == "class" else isinstance(output, float), type(output)
    elif name.startswith("noisy_histogram"):
        if style == "class":
            assert isinstance(output, tuple) and len(output) == k and all(type(x) is float for x in output), output
        else:
            assert isinstance(output, np.ndarray) and output.shape == (k,) and output.dtype == float, output
    else:
        _check_svt_answers(name, output, k)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", SUITE_NAMES)
def test_program_runs_on_a_real_generator(name: str, style: str) -> None:
    for epsilon in SUITE_EPSILONS:
        program = _program(name, style, epsilon)
        for seed, dataset in enumerate([(1, 1, 1, 1, 1), (0, 2, 1, 0, 2), (2, 0, 0, 0, 0, 1, 1, 1, 2, 1), (1,)]):
            _check_output(name, style, _run(program, dataset, seed), len(dataset))


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_class_style_draws_a_batch(name: str) -> None:
    np.random.seed(7)
    batch = BATCH_CLASSES[name](0.7).m((1, 0, 2, 1, 1), 4)
    vector = name.startswith(("noisy_histogram", "svt"))
    assert batch.shape == ((4, 5) if vector else (4,))
    if name in ("svt5", "svt6"):
        assert batch.dtype == bool
    elif name.startswith("svt"):
        assert batch.dtype == object
        for row in batch.tolist():
            _check_svt_answers(name, tuple(row), 5)


@pytest.mark.parametrize("style", STYLES)
def test_extreme_answers_fix_the_outcome(style: str) -> None:
    one_high, all_low = (-BIG, -BIG, BIG, -BIG, -BIG), (-BIG,) * 5
    for seed in range(5):
        assert _run(_program("report_noisy_max_laplace", style, 0.7), one_high, seed) == 2
        assert _run(_program("report_noisy_max_exponential", style, 0.7), one_high, seed) == 2
        for name in ("noisy_max_value_laplace", "noisy_max_value_exponential"):
            assert abs(_run(_program(name, style, 0.7), one_high, seed) - BIG) < 100
        for name in ("svt1", "svt2", "svt4"):
            assert _run(_program(name, style, 0.7), one_high, seed) == (False, False, True, None, None)
        released = _run(_program("svt3", style, 0.7), one_high, seed)
        assert released[:2] == (False, False) and released[3:] == (None, None) and abs(released[2] - BIG) < 100
        for name in ("svt5", "svt6"):
            assert _run(_program(name, style, 0.7), one_high, seed) == (False, False, True, False, False)
        for name in ("svt1", "svt2", "svt3", "svt4", "svt5", "svt6"):
            assert _run(_program(name, style, 0.7), all_low, seed) == (False,) * 5


@pytest.mark.parametrize("epsilon", SUITE_EPSILONS)
def test_a_seed_replays_the_noise_of_the_paper_scale(epsilon: float) -> None:
    """Same seed, the noise drawn by hand at the paper's scale: the same output, float for float."""
    q = (1, 0, 2, 1, 1)
    for name, scale in [("noisy_histogram", 1.0 / epsilon), ("noisy_histogram_wrong_scale", epsilon)]:
        expected = np.asarray(q) + np.random.default_rng(3).laplace(scale=scale, size=5)
        np.testing.assert_array_equal(function_program(name, epsilon)(q, np.random.default_rng(3)), expected)
        np.random.seed(3)
        expected = np.asarray(q, dtype=float) + np.random.laplace(0.0, scale, size=(2, 5))
        np.random.seed(3)
        np.testing.assert_array_equal(BATCH_CLASSES[name](epsilon).m(q, 2), expected)
    for noise in ("laplace", "exponential"):
        draw = getattr(np.random.default_rng(4), noise)
        noisy = np.asarray(q, dtype=float) + draw(scale=2.0 / epsilon, size=5)
        assert function_program(f"report_noisy_max_{noise}", epsilon)(q, np.random.default_rng(4)) == np.argmax(noisy)
        assert function_program(f"noisy_max_value_{noise}", epsilon)(q, np.random.default_rng(4)) == np.max(noisy)
        np.random.seed(4)
        noise_draw = np.random.laplace(0.0, 2.0 / epsilon, (3, 5)) if noise == "laplace" else \
            np.random.exponential(2.0 / epsilon, (3, 5))
        np.random.seed(4)
        np.testing.assert_array_equal(BATCH_CLASSES[f"noisy_max_value_{noise}"](epsilon).m(q, 3),
                                      np.max(np.asarray(q, dtype=float) + noise_draw, axis=1))


@pytest.mark.parametrize("epsilon", SUITE_EPSILONS)
@pytest.mark.parametrize("variant", range(1, 7))
def test_sparse_vector_parameters_are_the_hand_written_ones(variant: int, epsilon: float) -> None:
    exact = svt(variant, epsilon=Fraction(str(epsilon)))
    query_noise = exact.query_noise()
    for program in (SparseVectorProgram(epsilon, variant), BATCH_CLASSES[f"svt{variant}"](epsilon)):
        assert program.T == exact.T
        assert program.strict == (exact.compare == ">")
        assert math.isclose(program.rho_scale, exact.threshold_noise().scale, rel_tol=1e-15)
        if variant == 5:
            assert program.nu_scale is None and not hasattr(query_noise, "scale")
        else:
            assert math.isclose(program.nu_scale, query_noise.scale, rel_tol=1e-15)
    assert BATCH_CLASSES[f"svt{variant}"].cutoff == (exact.cutoff is not None)


@pytest.mark.parametrize("epsilon", SUITE_EPSILONS)
def test_float_scales_do_not_lift_the_correct_programs_above_their_claim(epsilon: float) -> None:
    """The correct programs whose eps* is the claim itself (the Laplace histogram: 1/b; report noisy max
    with exponential noise: 2/b) read ``b`` as a float; its exact binary value keeps eps* at or below the
    claim (read as the simplest fraction, 7/10 and 1/10), so an exact verdict on the real-number program
    holds rather than failing by a rounding hair."""
    claim = Fraction(str(epsilon))
    histogram, noisy_max = NoisyHistogramProgram(epsilon), ReportNoisyMaxProgram(epsilon, "exponential")
    assert 1 / Fraction(histogram.scale) <= claim
    assert 2 / Fraction(noisy_max.scale) <= claim
    assert BATCH_CLASSES["noisy_histogram"](epsilon).scale == histogram.scale
    assert BATCH_CLASSES["report_noisy_max_exponential"](epsilon).scale == noisy_max.scale


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", SUITE_NAMES)
def test_programs_pickle(name: str, style: str) -> None:
    program = _program(name, style, 0.7)
    copy = pickle.loads(pickle.dumps(program))
    first, second = _run(program, (1, 0, 2), 11), _run(copy, (1, 0, 2), 11)
    if isinstance(first, np.ndarray):
        np.testing.assert_array_equal(first, second)
    else:
        assert first == second


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InvalidArgument, match="name must be a benchmark mechanism"):
        function_program("svt7", 0.7)
    with pytest.raises(InvalidArgument, match="name must be a benchmark mechanism"):
        class_program("noisy_max", 0.7)
    for bad in (0, -0.7, math.inf, True, "0.7"):
        with pytest.raises(InvalidArgument, match="epsilon must be a positive finite number"):
            function_program("svt1", bad)
        with pytest.raises(InvalidArgument, match="epsilon must be a positive finite number"):
            class_program("svt1", bad)
    with pytest.raises(InvalidArgument, match="noise must be"):
        NoisyMaxValueProgram(0.7, "gaussian")
    with pytest.raises(InvalidArgument, match="variant must be"):
        SparseVectorProgram(0.7, 7)


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_class_style_without_routing_is_refused(name: str) -> None:
    """Unrouted, the class style's ``np.random`` draws are samples the enumeration cannot see."""
    assert isinstance(class_program(name, 0.7), ClassProgram)
    with pytest.raises(NondeterministicMechanism, match="global generator"):
        dpverify.from_sampler(class_program(name, 0.7))((1, 0, 2))


# == 2. closed forms, derived by hand ================================================================


def report_noisy_max_two(q0: float, q1: float, b: float) -> float:
    """P(argmax = 0) for report noisy max on ``(q0, q1)`` with Laplace noise of scale ``b``.

    argmax = 0 iff ``q0 + N0 > q1 + N1`` iff ``Z = N1 - N0 < d = q0 - q1`` (ties have probability 0).
    ``Z``'s density is the convolution of two ``Lap(b)`` densities; for ``z >= 0``
    ``f_Z(z) = 1/(4 b^2) [int_{-inf}^{-z} e^{(2x+z)/b} dx + int_{-z}^{0} e^{-z/b} dx + int_0^inf e^{-(2x+z)/b} dx]
    = (b + z) e^{-z/b} / (4 b^2)``, symmetric in ``z``. Its tail: ``P(Z > t) = int_t^inf f_Z =
    (1/4) e^{-t/b} + (1/4)(1 + t/b) e^{-t/b} = (2 + t/b) e^{-t/b} / 4`` for ``t >= 0``.
    So ``P(argmax = 0) = 1 - (2 + d/b) e^{-d/b} / 4`` for ``d >= 0`` and ``(2 + |d|/b) e^{-|d|/b} / 4`` for ``d < 0``.
    """
    d = q0 - q1
    tail = (2 + abs(d) / b) * math.exp(-abs(d) / b) / 4
    return 1 - tail if d >= 0 else tail


def histogram_epsilon(pairs: InputPairs, b: float) -> float:
    """eps* of ``q + Lap(b)^k`` on ``pairs``: ``max over pairs of sum_i |q_i - q'_i| / b``.

    The density ratio at ``x`` is ``prod_i exp((|x_i - q'_i| - |x_i - q_i|) / b) <= exp(sum_i |q_i - q'_i| / b)``
    (triangle inequality), with equality on the positive-measure set where every ``x_i`` lies beyond
    both ``q_i`` and ``q'_i``, on ``q_i``'s side: the supremum is that bound, attained.
    """
    return max(sum(abs(a - c) for a, c in zip(first, second)) / b for first, second in pairs)


def laplace_sum_tail(t: float, a: float, b: float) -> float:
    """``P(X + Y >= t)`` for independent ``X ~ Lap(a)``, ``Y ~ Lap(b)``, ``a != b``.

    Characteristic functions: ``1/((1 + a^2 s^2)(1 + b^2 s^2)) = [a^2/(1 + a^2 s^2) - b^2/(1 + b^2 s^2)] / (a^2 - b^2)``
    (partial fractions: ``a^2 (1 + b^2 s^2) - b^2 (1 + a^2 s^2) = a^2 - b^2``), so the density of the sum is
    ``(a^2 Lap_a(z) - b^2 Lap_b(z)) / (a^2 - b^2)`` and for ``t >= 0`` its tail is
    ``(a^2 e^{-t/a} - b^2 e^{-t/b}) / (2 (a^2 - b^2))``; for ``t < 0`` it is ``1 - tail(-t)`` (symmetry).
    """
    if t < 0:
        return 1 - laplace_sum_tail(-t, a, b)
    return (a * a * math.exp(-t / a) - b * b * math.exp(-t / b)) / (2 * (a * a - b * b))


def svt1_top(q: float, epsilon: float, T: float = 0.5) -> float:  # noqa: N803 -- the paper's symbol
    """P(⊤) for SVT Algorithm 1 on one query ``q``: ``P(q + nu >= T + rho) = P(nu + (-rho) >= T - q)``
    with ``nu ~ Lap(4/eps)`` and ``-rho ~ Lap(2/eps)`` (Laplace is symmetric)."""
    return laplace_sum_tail(T - q, 4 / epsilon, 2 / epsilon)


def _laplace_cdf(x, b):
    return mpmath.e ** (x / b) / 2 if x < 0 else 1 - mpmath.e ** (-x / b) / 2


@pytest.mark.parametrize("epsilon", [0.7, 0.1, 2.0])
def test_closed_forms_against_quadrature(epsilon: float) -> None:
    """The two derivations against 30-digit quadrature of their defining integrals, split at the kinks."""
    with mpmath.workdps(30):
        b = mpmath.mpf(2) / epsilon
        for q0, q1 in [(0, 0), (0, 1), (1, 0), (2, 0), (0, 2)]:
            # P(argmax = 0) = int f(x - q0) F(x - q1) dx
            integral = mpmath.quad(lambda x: mpmath.e ** (-abs(x - q0) / b) / (2 * b) * _laplace_cdf(x - q1, b),
                                   [-mpmath.inf, min(q0, q1), max(q0, q1), mpmath.inf])
            assert math.isclose(report_noisy_max_two(q0, q1, float(b)), float(integral), abs_tol=1e-14)
        rho_scale, nu_scale = mpmath.mpf(2) / epsilon, mpmath.mpf(4) / epsilon
        for q in (0, 1, 2):
            # P(⊤) = int f_rho(r) P(nu >= 0.5 + r - q) dr
            integral = mpmath.quad(
                lambda r: mpmath.e ** (-abs(r) / rho_scale) / (2 * rho_scale) * (1 - _laplace_cdf(0.5 + r - q, nu_scale)),
                sorted({-mpmath.inf, mpmath.mpf(0), q - mpmath.mpf(0.5), mpmath.inf}))
            assert math.isclose(svt1_top(q, epsilon), float(integral), abs_tol=1e-14)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_report_noisy_max_closed_form_is_the_hand_written_mechanism(epsilon: Fraction) -> None:
    mechanism = ReportNoisyMax(epsilon, "laplace")
    for q0 in range(3):
        for q1 in range(3):
            exact = mechanism.exact_values((q0, q1))[0].to_float()
            # e.g. eps = 7/10, q = (0, 1): b = 20/7, (2 + 7/20) e^(-7/20) / 4 = 47/80 e^(-7/20) = 0.414004...
            assert math.isclose(report_noisy_max_two(q0, q1, 2 / float(epsilon)), exact, abs_tol=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("wrong_scale", [False, True])
def test_histogram_closed_form_is_the_hand_written_mechanism(epsilon: Fraction, wrong_scale: bool) -> None:
    b = float(epsilon) if wrong_scale else 1 / float(epsilon)
    for k, differ in [(5, "one"), (3, "all"), (1, "all")]:
        pairs = InputPairs.statdp(k, differ=differ)
        result = dpverify.verify(NoisyHistogram(epsilon, wrong_scale=wrong_scale), pairs, PureDp(epsilon))
        # "one": one bin moves by 1, eps* = 1/b; "all" with k = 3: (1,1,1) vs (2,2,2), eps* = 3/b
        assert math.isclose(histogram_epsilon(pairs, b), result.epsilon, rel_tol=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_svt1_closed_form_is_the_hand_written_mechanism(epsilon: Fraction) -> None:
    mechanism = svt(1, epsilon=epsilon)
    for q in range(3):
        exact = mechanism.exact_values((q,))
        # e.g. eps = 7/10, q = 0: a = 40/7, b = 20/7, t = 1/2: (2/3) e^(-7/80) - (1/6) e^(-7/40) = 0.470903...
        assert math.isclose(svt1_top(q, float(epsilon)), exact["⊤"].to_float(), abs_tol=1e-12)
        assert math.isclose(1 - svt1_top(q, float(epsilon)), exact["⊥"].to_float(), abs_tol=1e-12)


# == 3. exact verification through the tracer ========================================================


def _one_laplace_comparison(dataset, rng):
    return dataset[0] + rng.laplace(0.0, 1.0) > 0


def _continuous_draws_refused() -> bool:
    """True while the exact rng still refuses ``rng.laplace`` as a continuous draw (the tracer is not in):
    the only reason to skip the tests below. Any other outcome, an error included, runs them."""
    try:
        dpverify.verify(dpverify.from_sampler(_one_laplace_comparison), [((0,), (1,))], PureDp(1.0))
    except MechanismError as error:
        return "continuous distribution" in str(error)
    except Exception:
        return False
    return False


requires_tracer = pytest.mark.skipif(
    _continuous_draws_refused(), reason="the exact rng still refuses rng.laplace (continuous distribution)"
)

#: How each style's program is handed to from_sampler: the class style's np.random draws are routed.
PATCH = {"function": None, "class": ["numpy.random"]}


def _traced(name: str, style: str, epsilon: float, *, patch=None):
    program = _program(name, style, epsilon)
    return dpverify.from_sampler(program, patch=PATCH[style] if patch is None else patch)


@cache
def _hand_written(name: str, k: int, epsilon: Fraction):
    """The hand-written mechanism's result on the suite's pairs (shared by the two styles)."""
    pairs = InputPairs.statdp(k, differ=SUITE_DIFFER[name])
    return dpverify.verify(SPECS[name].build(epsilon), pairs, PureDp(epsilon))


def _check_traced(name: str, style: str, k: int, epsilon: Fraction, *, patch=None) -> None:
    pairs = InputPairs.statdp(k, differ=SUITE_DIFFER[name])
    result = dpverify.verify(_traced(name, style, float(epsilon), patch=patch), pairs, PureDp(float(epsilon)))
    reference = _hand_written(name, k, epsilon)
    context = f"{name} ({style} style, k = {k}, eps = {epsilon}):\n{result.summary()}\nhand-written:\n{reference.summary()}"
    assert math.isclose(result.epsilon, reference.epsilon, rel_tol=1e-9), context
    if EXPECTED_HOLDS[name]:
        assert result.holds, context
        return
    assert result.verdict == Verdict.VIOLATED, context
    witness, expected = result.witness, reference.witness
    assert witness is not None, context
    assert math.isclose(float(witness.p), float(expected.p), rel_tol=1e-9), context
    assert math.isclose(float(witness.q), float(expected.q), rel_tol=1e-9), context


@requires_tracer
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", SUITE_NAMES)
def test_traced_program_is_the_hand_written_mechanism(name: str, style: str) -> None:
    _check_traced(name, style, 5, EPSILONS[0])


@pytest.mark.slow
@requires_tracer
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", SUITE_NAMES)
def test_traced_program_is_the_hand_written_mechanism_on_ten_queries(name: str, style: str, epsilon: Fraction) -> None:
    _check_traced(name, style, 10, epsilon)


@requires_tracer
@pytest.mark.parametrize("name", ["report_noisy_max_laplace", "svt1", "svt3"])
def test_class_style_routed_by_naming_the_module(name: str) -> None:
    _check_traced(name, "class", 5, EPSILONS[0], patch=["dpverify.mechanisms.suite_programs"])


def _traced_values(mechanism, dataset) -> dict:
    """Exact output probabilities of a traced program (the tracer's mechanism, as ``verify`` builds it)."""
    from dpverify.densities.traced import TracedMechanism

    return {outcome: value.to_float() for outcome, value in TracedMechanism(mechanism).exact_values(dataset).items()}


@requires_tracer
@pytest.mark.parametrize("style", STYLES)
def test_traced_report_noisy_max_is_the_closed_form(style: str) -> None:
    epsilon = 0.7
    mechanism = _traced("report_noisy_max_laplace", style, epsilon)
    for q0 in range(3):
        for q1 in range(3):
            values = _traced_values(mechanism, (q0, q1))
            assert math.isclose(values[0], report_noisy_max_two(q0, q1, 2 / epsilon), abs_tol=1e-12)
            assert math.isclose(values[1], report_noisy_max_two(q1, q0, 2 / epsilon), abs_tol=1e-12)
    # eps* on every pair of {0, 1, 2}^2: the largest log ratio of the closed form's probabilities
    pairs = InputPairs.query_vectors(2)
    expected = max(abs(math.log(report_noisy_max_two(*a, 2 / epsilon) / report_noisy_max_two(*b, 2 / epsilon)))
                   for first, second in pairs for a, b in [(first, second), (first[::-1], second[::-1])])
    result = dpverify.verify(mechanism, pairs, PureDp(epsilon))
    assert math.isclose(result.epsilon, expected, rel_tol=1e-9) and result.holds


@requires_tracer
@pytest.mark.parametrize("style", STYLES)
def test_traced_svt1_is_the_closed_form(style: str) -> None:
    epsilon = 0.7
    mechanism = _traced("svt1", style, epsilon)
    for q in range(3):
        values = _traced_values(mechanism, (q,))
        assert math.isclose(values[(True,)], svt1_top(q, epsilon), abs_tol=1e-12)
        assert math.isclose(values[(False,)], 1 - svt1_top(q, epsilon), abs_tol=1e-12)


@requires_tracer
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", ["noisy_histogram", "noisy_histogram_wrong_scale"])
def test_traced_histogram_is_the_closed_form(name: str, style: str) -> None:
    epsilon = 0.7
    b = epsilon if name.endswith("wrong_scale") else 1 / epsilon
    for k, differ in [(5, "one"), (3, "all")]:
        pairs = InputPairs.statdp(k, differ=differ)
        result = dpverify.verify(_traced(name, style, epsilon), pairs, PureDp(epsilon))
        assert math.isclose(result.epsilon, histogram_epsilon(pairs, b), rel_tol=1e-9), result.summary()
