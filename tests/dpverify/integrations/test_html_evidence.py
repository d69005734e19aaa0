"""What the audit page shows a reviewer: the summary, each claim's statement and source, the witnesses,
the assumptions, the claim on its privacy profile (dpverify.integrations.html_evidence, html_summary).

The rows are ``_report_rows``' six, one of each kind; their hand-computed figures are in its docstring.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

from dpverify.integrations.audit import audit_cases
from dpverify.integrations.html_evidence import MARKED_FROM, differing, source_html, witness_rows, witness_table
from dpverify.integrations.report import html_report
from dpverify.verdict.witness import Witness
from tests.dpverify.integrations._report_rows import USER_SOURCE, USER_STATEMENT, WITNESS, rows

GENERATED = "2025-01-02 03:04 UTC"


@pytest.fixture(scope="module")
def page():
    return html_report(rows(), generated=GENERATED, directory="/project/reports")


def _text(fragment: str) -> str:
    """The fragment's text: tags dropped, whitespace collapsed (references left as written)."""
    return " ".join(re.sub(r"<[^>]+>", "", fragment).split())


def test_the_summary_comes_first_and_says_what_was_checked_failed_and_assumed(page):
    summary = re.search(r'<section id="summary".*?</section>', page, re.S).group(0)
    assert page.index(summary) < page.index('<h2 id="claims">') < page.index('<h2 id="table">')
    entries = dict(re.findall(r"<dt>(\w+)</dt><dd>(.*?)</dd>", summary, re.S))
    assert list(entries) == ["Checked", "Failed", "Assumed"]
    # 6 rows, 6 claims, 6 mechanisms: 2 mutants (rows 2 and 6), 1 measured (row 3), so 6 - 2 - 1 = 3 assert a claim
    assert _text(entries["Checked"]).startswith("6 rows: 6 claims (listed below) on 6 mechanisms")
    assert "3 rows assert that a claim holds; 2 rows are mutants" in entries["Checked"]
    assert "1 row reports figures only" in entries["Checked"]
    failed = entries["Failed"]
    assert re.findall(r'<a href="#([\w-]+)">', failed) == ["row-5", "witness-5", "row-6", "row-4", "witnesses"]
    assert "<strong>2 rows are not as expected</strong>" in failed and "<strong>1 row is UNDECIDED</strong>" in failed
    assert "2 rows are VIOLATED (1 of them a mutant, as expected), each with its witness" in failed
    # row 1's assumption is proved, row 4's unproved: none accepted, so no verdict holds "assuming"
    assert _text(entries["Assumed"]) == ("No verdict holds on an assumption that was not proved. All assumptions: "
                                         "1 proved, 1 unproved (each, with what was checked).")


def test_a_clean_audit_says_nothing_failed_and_lists_what_holds_assuming():
    from dpverify.verdict.assumptions import Assumption, Status

    accepted = Assumption("pair cover", "the pair cover's loss components", Status.ACCEPTED, "tested on 112 pairs")
    first = rows()[0]
    clean = [replace(first, measurement=replace(first.measurement, assumptions=(accepted,))), rows()[1]]
    text = html_report(clean, generated=GENERATED)
    entries = dict(re.findall(r"<dt>(\w+)</dt><dd>(.*?)</dd>", text, re.S))
    assert entries["Failed"].startswith("Nothing unexpected: every claim asserted to hold holds and every mutant")
    assert _text(entries["Assumed"]) == (
        '1 verdict holds assuming what was tested but not proved (each says "holds, assuming"):the pair cover&#x27;s '
        "loss components: 1 row 1 All assumptions: 1 accepted (each, with what was checked).")
    assert '<a href="#row-1">1</a>' in entries["Assumed"]


def test_each_row_shows_its_claim_statement_and_source(page):
    row = {n: re.search(rf'<tr id="row-{n}"[^>]*>(.*?)</tr>', page).group(1) for n in (1, 2, 5)}
    # built-in rows: the source linked, relative to the report's folder /project/reports
    assert '<a class="source" href="../docs/bibliography.md">[W65] randomized response</a>' in row[1]
    assert '<a class="source" href="../docs/claims.md#C1">[LWY25] Lemma 11; claims ledger C1</a>' in row[2]
    assert ('<span class="statement">Mutant of <code>exponential_mechanism</code>, checked against its claim: '
            "The factor 2 dropped.</span>") in row[2]
    # a user's row: its own statement and source, no link
    assert f'<span class="statement">{USER_STATEMENT}</span><span class="source">{USER_SOURCE}</span>' in row[5]
    hover = re.findall(r'title="([^"]*)"', page)  # nothing is only on hover: the statements were tooltips
    assert not any(USER_STATEMENT in text or "factor 2" in text for text in hover)


def test_the_claims_table_gives_each_claim_once_with_its_source_and_outcome(page):
    table = re.search(r'<table class="audit claims">.*?</table>', page, re.S).group(0)
    lines = re.findall(r'<tr( class="unexpected")?><td><a href="#row-(\d)">(\w+)</a></td><td>(.*?)</td>'
                       r'<td class="num">(\d+)</td><td>([^<]*)</td></tr>', table)
    assert [(claim, first, count, outcome, bool(flag)) for flag, first, claim, _, count, outcome in lines] == [
        ("RR", "1", "1", "1 holds", False), ("C1", "2", "1", "1 mutant caught", False),
        ("C8b", "3", "1", "1 measured", False), ("C13", "4", "1", "1 undecided", True),
        ("C5", "5", "1", "1 not as expected", True), ("C14", "6", "1", "1 not as expected", True)]
    assert lines[4][3] == f'<span class="source">{USER_SOURCE}</span>' and lines[2][3] == "&mdash;"


def test_every_violated_row_links_to_its_witness_and_back(page):
    section = page[page.index('<h2 id="witnesses">'):page.index('<h2 id="assumptions">')]
    assert re.findall(r'<section class="witness" id="witness-(\d+)"><h3><a href="#row-(\d+)">', section) == [
        ("2", "2"), ("5", "5")]
    for n in (2, 5):
        assert re.search(rf'<tr id="row-{n}".*?<br><a href="#witness-{n}">witness</a></td>', page)
    assert "<pre>D  = (0,)\nD&#x27; = (1,)</pre>" in section  # row 2's witness, given as text
    facts = dict(re.findall(r'<th scope="row">([^<]*)</th><td><code>([^<]*)</code></td>', section))
    # row 5: 3/5 > e^1 * 1/10 + 0.1 = 0.371828182846; two records each, read at a glance: nothing marked
    assert facts == {"D": "(0, 1)", "D'": "(1, 1)", "S (event)": "{'leak'}", "P[M(D) &#8712; S]": "0.6 (exactly 3/5)",
                     "P[M(D') &#8712; S]": "0.1 (exactly 1/10)", "claim": "eps = 1, delta = 0.1",
                     "check": "0.6 &gt; e^1 &#183; 0.1 + 0.1 = 0.371828182846"}


def test_a_witness_is_titled_by_its_row_its_claim_and_its_mechanism(page):
    titles = re.findall(r'<section class="witness" id="witness-\d+"><h3><a href="#row-\d+">([^<]*)</a></h3>', page)
    assert titles == ["Row 2 &#8212; claim C1, mutant_without_half", "Row 5 &#8212; claim C5, leaky_learner"]
    # the summary's and the assumptions' links to a row read the same
    assert '<a href="#row-5">Row 5 &#8212; claim C5, leaky_learner</a> (' in page
    assert '<li><a href="#row-4">Row 4 &#8212; claim C13, exchangeable_learner</a>: ' in page


def test_the_records_in_which_d_and_d_prime_differ_are_found():
    # substitution: one position, the same in both
    assert differing((0, 1, 1, 1, 1, 1, 1, 1), (0, 1, 1, 1, 1, 0, 1, 1)) == ((5,), (5,))
    assert differing([0, 1], [0, 2]) == ((1,), (1,))
    assert differing((0, 1, 2), (1, 1, 3)) == ((0, 2), (0, 2))  # another relation: every position that differs
    # add/remove: the extra record, in the longer dataset only
    assert differing((4, 5, 6, 7), (4, 6, 7)) == ((1,), ())
    assert differing((4, 6, 7), (4, 6, 7, 9)) == ((), (3,))
    assert differing((1, 1, 1), (1, 1)) == ((2,), ())  # a run of equal records: where the two part
    assert differing((), (3,)) == ((), (0,))
    # nothing to mark: lengths two apart, a record besides the extra one changed, not a tuple or a list
    assert differing((1, 2, 3), (1,)) == ((), ())
    assert differing((1, 2, 3), (1, 3, 4, 5)) == ((), ())
    assert differing((4, 5, 6, 7), (4, 6, 8)) == ((), ())
    assert differing("ab", "ac") == ((), ())
    assert differing(frozenset({1}), frozenset({2})) == ((), ())


def test_a_witness_on_many_records_marks_the_one_that_differs():
    dataset = (0,) * 7 + (1,) + (0,) * 4  # 12 records, record 8 (D[7]) a 1 in D, a 0 in D'
    witness = replace(WITNESS, dataset=dataset, neighbor=(0,) * 12)
    table = witness_table(witness)
    facts = dict(re.findall(r'<th scope="row">([^<]*)</th><td><code>(.*?)</code></td>', table))
    assert facts["D"] == '(0, 0, 0, 0, 0, 0, 0, <mark class="differs">1</mark>, 0, 0, 0, 0)'
    assert facts["D'"] == '(0, 0, 0, 0, 0, 0, 0, <mark class="differs">0</mark>, 0, 0, 0, 0)'
    assert facts["neighbours"] == "record 8 of 12 differs: D[7] = 1, D'[7] = 0"
    assert list(facts)[:4] == ["D", "D'", "neighbours", "S (event)"]
    assert re.sub(r"<[^>]+>", "", facts["D"]) == repr(dataset)  # the marks leave the text as it was


def test_a_witness_under_add_remove_marks_the_extra_record_in_the_larger_dataset():
    larger = ("a", "b", "c", "d", "e", "f", "g", "h")
    removed = replace(WITNESS, dataset=larger, neighbor=larger[:2] + larger[3:])  # D' is D without "c"
    facts = dict(re.findall(r'<th scope="row">([^<]*)</th><td><code>(.*?)</code></td>', witness_table(removed)))
    assert facts["D"] == """('a', 'b', <mark class="differs">'c'</mark>, 'd', 'e', 'f', 'g', 'h')"""
    assert "<mark" not in facts["D'"]
    assert dict(witness_rows(removed))["neighbours"] == "D has one record more: record 3 of 8, D[2] = 'c'"
    added = replace(WITNESS, dataset=[1, 2], neighbor=[1, 0, 2])  # lists: D' has a 0 inserted as its record 2
    facts = dict(re.findall(r'<th scope="row">([^<]*)</th><td><code>(.*?)</code></td>', witness_table(added)))
    assert (facts["D"], facts["D'"]) == ("[1, 2]", '[1, <mark class="differs">0</mark>, 2]')
    assert facts["neighbours"] == "D' has one record more: record 2 of 3, D'[1] = 0"


def test_datasets_of_one_or_two_records_are_not_marked():
    # the larger of D and D' needs MARKED_FROM = 3 records: (0, 1) against (1, 1) is read at a glance
    assert MARKED_FROM == 3
    for dataset, neighbor in (((0, 1), (1, 1)), ((0,), (1,)), ((0, 1), (0,)), ((5, 5), (5, 6))):
        witness = replace(WITNESS, dataset=dataset, neighbor=neighbor)
        assert "<mark" not in witness_table(witness) and "neighbours" not in dict(witness_rows(witness))
        assert differing(dataset, neighbor) != ((), ())  # found, only not shown
    three = replace(WITNESS, dataset=(0, 1), neighbor=(0, 1, 1))
    assert dict(witness_rows(three))["neighbours"] == "D' has one record more: record 3 of 3, D'[2] = 1"


def test_a_witness_whose_datasets_are_not_sequences_marks_nothing():
    witness = replace(WITNESS, dataset=frozenset({1, 2}), neighbor=frozenset({1, 3}))
    assert "neighbours" not in dict(witness_rows(witness))
    assert "<mark" not in witness_table(witness)


def test_a_witness_with_unexplored_mass_bounds_q_by_it():
    witness = Witness((0,), (1,), frozenset({0}), 0.5, 0.1, math.log(2), 0.0, unexplored=0.05)
    facts = dict(witness_rows(witness, "query x = 2"))
    assert facts["where"] == "query x = 2"
    assert facts["P[M(D) ∈ S]"] == ">= 0.5 (explored)"
    assert facts["P[M(D') ∈ S]"] == "<= 0.1 (explored) + 0.05 (unexplored) = 0.15"
    # 0.5 > e^ln 2 * (0.1 + 0.05) + 0 = 0.3
    assert facts["check"] == "0.5 > e^0.69314718056 · 0.15 + 0 = 0.3"


def test_exact_values_are_shown_when_short_and_never_as_a_floats_binary_expansion():
    witness = replace(WITNESS, p=Fraction(0.6), q=Fraction(1, 3), epsilon=sympy.log(3), delta=0)
    facts = dict(witness_rows(witness))
    assert facts["P[M(D) ∈ S]"] == "0.6"  # Fraction(0.6) = 5404319552844595/9007199254740992 is the float itself
    assert facts["P[M(D') ∈ S]"] == "0.333333333333 (exactly 1/3)"
    assert facts["claim"] == "eps = 1.09861228867 (exactly log(3)), delta = 0"
    # 0.6 > 3 * 1/3 + 0 = 1 is false: the closest pair of a verdict within rounding reads <=
    assert facts["check"] == "0.6 <= e^1.09861228867 · 0.333333333333 + 0 = 1"


def test_source_links_are_urls_as_given_and_files_relative_to_the_report():
    case = rows()[0].case
    base = Path("/project/reports")
    assert source_html(replace(case, source_link="https://example.org/paper.pdf#page=3"), base) == (
        '<a class="source" href="https://example.org/paper.pdf#page=3">[W65] randomized response</a>')
    assert 'href="notes%20v2.md#s2"' in source_html(replace(case, source_link="notes v2.md#s2"), base)
    assert 'href="../../elsewhere/a.md"' in source_html(replace(case, source_link="/elsewhere/a.md"), base)
    assert 'href="file:///elsewhere/a.md"' in source_html(replace(case, source_link="/elsewhere/a.md"), None)
    assert source_html(replace(case, source="", source_link="/x.md"), base) == ""


def test_every_shipped_claim_has_a_source_linked_to_the_docs():
    cases = audit_cases()
    assert all(case.source for case in cases), sorted({c.claim for c in cases if not c.source})
    docs = Path(__file__).resolve().parents[3] / "docs"
    for case in cases:
        path, _, anchor = case.source_link.partition("#")
        assert Path(path).parent == docs and Path(path).is_file(), case.source_link
        if anchor:  # the claims ledger has an anchor for each claim id
            assert f'<a id="{anchor}"></a>{anchor} |' in Path(path).read_text(encoding="utf-8"), anchor


def test_the_assumptions_section_gives_each_status_and_what_was_checked(page):
    items = re.findall(r'<li><a href="#row-(\d)">[^<]*</a>: <span class="a a-(\w+)">\w+</span> <b>(\w+)</b>'
                       r" \([^)]*\): ([^<]*)</li>", page)
    assert items == [("1", "proved", "exchangeable", "proved on every ordering (2 datasets)"),
                     ("4", "unproved", "exchangeable",
                      "tested on 20 random datasets; pass exchangeable=&quot;assume&quot; to accept it")]


def test_the_privacy_profile_marks_the_claim_and_its_axis_reaches_it(page):
    figure = re.search(r'<figure class="chart" id="profile-3">(.*?)</figure>', page, re.S).group(1)
    legend = re.findall(r"<text[^>]*>([^<]*)</text>", figure.split('<g class="legend">')[1])
    assert legend == ["worst-case &#948;(&#949;) over all pairs", "claim (&#949;=2.773, &#948;=0)"]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", figure.split('<g class="legend">')[0])
    x_ticks = [float(label) for label in labels[:labels.index("&#949;")]]
    # the profile stops at eps = 0.12 (its own ticks would end at 0.125); the claimed eps 2.773 widens the axis
    assert x_ticks == [0.0, 1.0, 2.0]
    assert "Claimed (eps=2.773, delta=0), the star" in figure
