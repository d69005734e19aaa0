"""``dpverify check ... --report FILE.html``: one mechanism's verdict as a self-contained HTML page.

:func:`check_page` shows what ``dpverify check`` prints, laid out: the verdict against the claim,
the measured figures, the witness (the two datasets, the output set, both probabilities and the
inequality they break) and the worst-case privacy profile δ(ε) with the claim marked on it.

The profile is the one ``verify(..., profile=True)`` swept on the rows the verdict was decided on
(``result.profile``: float64, no certification, no second evaluation): it is a picture of the
mechanism, the verdict above it is the certified one. A sampled estimate (``--estimate``) has no exact profile: its
page shows the verdict, the bound and the strongest event.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from dpverify.integrations.charts import profile_chart
from dpverify.integrations.html_evidence import witness_table
from dpverify.integrations.html_report import page
from dpverify.integrations.presentation import generated_now, number

__all__ = ["check_page"]

_BANNER = {"HOLDS": "ok", "HOLDS_WITHIN_ROUNDING": "ok", "VIOLATED": "bad", "UNDECIDED": "open"}


def _facts(result: Any) -> list[tuple[str, str]]:
    """The figures of the result, as (name, value) rows."""
    rows = [("claimed", f"eps={result.claimed_epsilon}, delta={result.claimed_delta}")]
    if hasattr(result, "epsilon_lower_bound"):  # a sampled estimate
        rows.append(("epsilon, at least", f"{number(result.epsilon_lower_bound, 6)} (confidence {result.confidence:g})"))
        if result.value_epsilon_lower_bound != result.epsilon_lower_bound:  # the largest reads the float bits
            rows.append(("on real numbers, at least", f"{number(result.value_epsilon_lower_bound, 6)} (events on the "
                                                      "outputs' values, not their float bits)"))
        if result.delta_lower_bound > 0:
            rows.append(("delta at the claimed eps, at least", number(result.delta_lower_bound, 6)))
        rounds = len(result.rounds)
        schedule = ("" if result.time_budget is None else
                    f"; {rounds} test round(s) within a {result.time_budget:g} s budget")
        rows += [
            ("input pairs", f"{result.input_set}: {result.pairs:,} pair(s), both directions, {result.datasets:,} datasets"),
            ("samples", f"{result.samples:,} per dataset{schedule}; seed {result.seed}"),
        ]
    else:
        rows += [
            ("eps* measured", number(result.epsilon, 6)),
            ("delta at the claimed eps", number(result.delta, 6)),
            ("pairs", f"{result.pairs:,} {result.neighbors} pairs over {result.datasets:,} datasets "
                      f"({'exchangeable' if result.exchangeable else 'black-box'})"),
            ("certified pairs", f"{result.certified_pairs:,}"),
            ("exchangeability", result.exchangeability),
            ("seed", str(result.seed)),
        ]
        rows += [(f"assumption: {a.name}", str(a)) for a in getattr(result, "assumptions", ())]
    rows.append(("seconds", f"{result.seconds:.2f}"))
    return rows


def _witness(result: Any) -> str:
    witness = result.witness
    if witness is None:
        return ""
    if not hasattr(witness, "output_set"):  # a sampled event: its own text says it all
        title = "Witness" if result.verdict.value == "VIOLATED" else "Strongest event"
        lead = ("" if not getattr(witness, "float_structure", False) else
                "<p>" + html.escape("A float-structure event: it reads the output's low bits, and the floats the "
                                    "mechanism can output depend on its input (Mironov 2012). The float program "
                                    "leaks; the mechanism on real numbers is judged by the value events above.")
                + "</p>\n")
        return f"<h2 id=\"witness\">{title}</h2>\n{lead}<pre>{html.escape(str(witness))}</pre>"
    within = getattr(witness, "within_rounding", False)
    title = "Closest pair (within rounding)" if within else "Witness"
    lead = ("The pair of neighbouring datasets and the set of outputs on which the claim is broken: M(D) lands in "
            "S more often than e^eps times M(D') does, plus delta." if not within else
            "The pair closest to breaking the claim; its excess is within the rounding its float probabilities carry.")
    return f"<h2 id=\"witness\">{title}</h2>\n<p>{html.escape(lead)}</p>\n{witness_table(witness)}"


def _profile(result: Any, profile: Sequence[tuple[float, float]] | None) -> str:
    if not profile:
        return ""
    title = "Privacy profile δ(ε)"
    svg = profile_chart(tuple(profile), (float(result.claimed_epsilon), float(result.claimed_delta)), title=title,
                        prefix="profile-")
    note = ("The smallest delta for which the mechanism is (eps, delta)-DP, at each eps: the worst hockey-stick "
            "divergence over every neighbouring pair, measured in float64 on the rows the verdict was decided on. "
            "The claim holds where its star lies on or above the curve; the verdict above is the certified one.")
    return (f'<h2>Privacy profile</h2>\n<figure class="chart" id="profile"><h3>{title}</h3>\n'
            f"<p>{html.escape(note)}</p>\n{svg}</figure>")


#: The page's own style beside :data:`~dpverify.integrations.html_report.STYLE` (which styles the
#: facts tables and the chart): the chart no wider than it is drawn.
_STYLE = "table.facts{max-width:60em}figure.chart{max-width:36em}"


def check_page(result: Any, *, mechanism: str, instance: str = "", profile: Sequence[tuple[float, float]] | None = None,
               generated: str | None = None, version: str | None = None) -> str:
    """The result of ``dpverify check`` as one HTML page.

    Args:
        result: a :class:`~dpverify.verdict.results.VerificationResult` (or the
            :class:`~dpverify.verdict.results.EstimateResult` of ``--estimate``).
        mechanism: how the mechanism was named (``MODULE:CALLABLE``).
        instance: the instance checked, as text (records, n, neighbours).
        profile: ``[(eps, delta(eps))]`` (:func:`worst_case_profile`), None for no chart.
        generated: when, as the header shows it (default: now).
        version: the dpverify version shown (default: the installed one).
    """
    if version is None:
        from dpverify import __version__ as version
    state = result.verdict.value
    verdict_text = getattr(result, "verdict_text", state)
    facts = "".join(f"<tr><th scope=\"row\">{html.escape(k, quote=False)}</th><td>{html.escape(v, quote=False)}</td></tr>"
                    for k, v in _facts(result))
    body = [
        f"<header><h1>dpverify check: <code>{html.escape(mechanism)}</code></h1>",
        f'<p class="meta">dpverify {html.escape(str(version))} &middot; generated {html.escape(generated or generated_now())}'
        + (f" &middot; {html.escape(instance)}" if instance else "") + "</p>",
        f'<p class="banner {_BANNER.get(state, "open")}" id="verdict">{html.escape(verdict_text)}</p></header>',
        f'<table class="facts">{facts}</table>',
        _witness(result),
        _profile(result, profile),
        "<h2>As printed</h2>",
        f"<pre>{html.escape(result.summary())}</pre>",
    ]
    return page(f"dpverify check: {mechanism}", "\n".join(part for part in body if part), style=_STYLE)
