"""The audit figures the README and the docs quote are the committed report's, and the site opens from disk.

Every count of audit rows written in ``README.md`` or ``docs/**/*.md`` ("167 rows", "160 as
expected", "99 hold", "61 mutants caught", "7 measured", "0 unexpected", "0 undecided") must equal
the count of the committed reference report ``reports/audit.json``, computed here from its rows'
fields. When the audit gains a row and the report is regenerated, this test names every page, line
and figure left behind. Counts that are not about the full audit (a two-row audit of one's own file,
a DataFrame's rows, "Algorithms 1 and 2 hold") are listed in :data:`NOT_THE_AUDIT`, each with the
phrase that shows it; an entry whose phrase no longer occurs fails too, so the list stays honest.

The documentation site is opened from ``site/index.html`` (the README says so): with
``use_directory_urls`` on, mkdocs links pages as directories, which a browser shows as a directory
listing under ``file://``. ``mkdocs.yml`` must turn it off (read here; ``tests/test_docs_site.py``
builds the site).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "reports" / "audit.json"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: A count and what it counts; words may be split over lines (``\s+``). "hold" reads "holds" too,
#: "mutants caught" "mutant caught", "rows" "audit rows" and "row".
_FIGURE = re.compile(
    r"(?<![\w.,/])(?P<number>\d[\d,]*)\s+(?P<what>(?:audit\s+)?rows?\b|as\s+expected\b|holds?\b"
    r"|mutants?\s+caught\b|measured\b|unexpected\b|undecided\b)"
)

#: Counts in the pages that are not the full audit's: page -> the phrases that show them (each phrase
#: contains the count; the count is checked nowhere else on that page).
NOT_THE_AUDIT: dict[str, tuple[str, ...]] = {
    # the reader's own two-row audit file, and the one-row audit of verify.md
    "docs/guide/audit-your-learner.md": (
        "2 rows: 2 as expected (1 holds, 1 mutant caught), 0 measured, 0 unexpected, 0 undecided",
        "2 rows in 0.1 s",
    ),
    "docs/guide/verify.md": ("1 row: 1 as expected (1 holds, 0 mutants caught), 0 measured, 0 unexpected, 0 undecided",),
    # exit codes, not counts
    "docs/json.md": ("(0 holds, 1 violated", "4 undecided)"),
    # "Algorithms 1 and 2 hold at ε"
    "docs/benchmark-suite.md": ("Algorithms 1 and 2 hold",),
    # "the claim of ln 2 holds"
    "docs/guide/neighbours.md": ("ln 2 holds",),
    # rows of a DataFrame or of a score table, not of the audit
    # ... and "Issue 21 measured 1.54 s"
    "docs/performance.md": ("262,144 rows", "2,097,152 rows", "7,008 of 31,824 rows", "Issue 21 measured"),
    "docs/guide/parallel.md": ("6,435 rows",),
}


@dataclass(frozen=True)
class Counts:
    """The full audit's counts, as its table's last line gives them."""

    rows: int
    holds: int
    caught: int
    measured: int
    unexpected: int
    undecided: int

    @property
    def as_expected(self) -> int:
        return self.holds + self.caught

    def of(self, what: str) -> int:
        """The count a figure's words name: ``"rows"``, ``"as expected"``, ``"hold"``, ..."""
        word = " ".join(what.split())
        if word.startswith(("audit row", "row")):
            return self.rows
        if word.startswith("mutant"):
            return self.caught
        if word.startswith("hold"):
            return self.holds
        return {"as expected": self.as_expected, "measured": self.measured, "unexpected": self.unexpected,
                "undecided": self.undecided}[word]


def report_counts(document: dict) -> Counts:
    """Counts of a report's rows by their fields, as ``presentation.kind_of`` sorts an audit's rows."""
    rows = document["results"]
    kinds = []
    for row in rows:
        if row["measured_only"] or row["verdict"] in (None, "MEASURED"):
            kinds.append("measured")
        elif row["verdict"] == "UNDECIDED":
            kinds.append("undecided")
        elif not row["as_expected"]:
            kinds.append("unexpected")
        else:
            kinds.append("caught" if row["verdict"] == "VIOLATED" else "holds")
    return Counts(rows=len(rows), holds=kinds.count("holds"), caught=kinds.count("caught"),
                  measured=kinds.count("measured"), unexpected=kinds.count("unexpected"),
                  undecided=kinds.count("undecided"))


def drifted(name: str, text: str, counts: Counts, exempt: tuple[str, ...] = ()) -> list[str]:
    """Every figure of ``text`` that differs from ``counts``, as ``"name:line: ..."``.

    The phrases in ``exempt`` are blanked first (they are counts of something else); each must occur,
    else it is reported as stale.
    """
    problems = []
    for phrase in exempt:
        if phrase not in text:
            problems.append(f"{name}: the exempted phrase {phrase!r} no longer occurs; remove it from NOT_THE_AUDIT")
        text = text.replace(phrase, re.sub(r"\S", " ", phrase))
    for match in _FIGURE.finditer(text):
        written = int(match["number"].replace(",", ""))
        expected = counts.of(match["what"])
        if written != expected:
            line = text.count("\n", 0, match.start()) + 1
            what = " ".join(match["what"].split())
            problems.append(f"{name}:{line}: says {written} {what}; reports/audit.json has {expected} {what}")
    return problems


COUNTS = report_counts(json.loads(REPORT.read_text()))


def test_report_counts_are_the_tables_last_line():
    """The counts computed from the rows' fields are the ones the committed audit.md prints."""
    # reports/audit.md's first line of figures is the table's count line, in bold
    summary = re.search(r"\*\*(\d+ rows: .*?)\.\*\*", (ROOT / "reports" / "audit.md").read_text())
    assert summary, "reports/audit.md has no bold count line"
    c = COUNTS
    assert summary[1] == (f"{c.rows} rows: {c.as_expected} as expected ({c.holds} hold, {c.caught} mutants caught), "
                          f"{c.measured} measured, {c.unexpected} unexpected, {c.undecided} undecided")


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_figures_are_the_reports(page: Path):
    name = str(page.relative_to(ROOT))
    problems = drifted(name, page.read_text(), COUNTS, NOT_THE_AUDIT.get(name, ()))
    assert not problems, "\n".join(problems)


def test_exemptions_name_pages_that_exist():
    missing = [name for name in NOT_THE_AUDIT if not (ROOT / name).is_file()]
    assert not missing, f"NOT_THE_AUDIT names pages that do not exist: {missing}"


def test_a_stale_figure_is_named_with_its_line_and_the_reports():
    """The checker itself: a README left at an older audit's figures fails, naming line and figure."""
    counts = Counts(rows=167, holds=99, caught=61, measured=7, unexpected=0, undecided=0)
    text = ("# dpverify\n\nThe audit has 167 rows.\n"
            "It printed `158 rows: 151 as expected (92 hold, 59 mutants\ncaught), 7 measured, 0 unexpected, "
            "1 undecided`.\n")
    assert drifted("README.md", text, counts) == [
        "README.md:4: says 158 rows; reports/audit.json has 167 rows",
        "README.md:4: says 151 as expected; reports/audit.json has 160 as expected",
        "README.md:4: says 92 hold; reports/audit.json has 99 hold",
        "README.md:4: says 59 mutants caught; reports/audit.json has 61 mutants caught",
        "README.md:5: says 1 undecided; reports/audit.json has 0 undecided",
    ]
    # the same text at the report's figures passes; an exempted phrase is skipped, a vanished one named
    assert drifted("README.md", text.replace("158", "167").replace("151", "160").replace("92", "99")
                   .replace("59", "61").replace("1 undecided", "0 undecided"), counts) == []
    assert drifted("p.md", "a 2 rows audit", counts, ("2 rows audit",)) == []
    assert drifted("p.md", "a 2 rows audit", counts, ("3 rows",)) == [
        "p.md: the exempted phrase '3 rows' no longer occurs; remove it from NOT_THE_AUDIT",
        "p.md:1: says 2 rows; reports/audit.json has 167 rows",
    ]


def test_report_counts_by_kind():
    """Rows sorted as the audit sorts them: measured first, then undecided, unexpected, caught, holds."""
    rows = [
        {"measured_only": True, "verdict": "MEASURED", "as_expected": True},
        {"measured_only": False, "verdict": "UNDECIDED", "as_expected": False},
        {"measured_only": False, "verdict": "HOLDS", "as_expected": False},  # a mutant that held
        {"measured_only": False, "verdict": "VIOLATED", "as_expected": True},
        {"measured_only": False, "verdict": "HOLDS", "as_expected": True},
        {"measured_only": False, "verdict": "HOLDS_WITHIN_ROUNDING", "as_expected": True},
    ]
    assert report_counts({"results": rows}) == Counts(rows=6, holds=2, caught=1, measured=1, unexpected=1,
                                                      undecided=1)


def test_site_links_work_from_file_urls():
    """``site/index.html`` opened from disk: page links must name .html files, not directories."""
    config = (ROOT / "mkdocs.yml").read_text()
    settings = re.findall(r"^use_directory_urls:\s*(\S+)\s*$", config, flags=re.M)
    assert settings == ["false"], f"mkdocs.yml must set `use_directory_urls: false` once, has {settings}"
    readme = (ROOT / "README.md").read_text()
    assert "site/index.html" in readme, "the README no longer says to open site/index.html"


def test_performance_page_quotes_the_reports_own_run():
    """performance.md quotes the committed report's own timing line; it changes when the report does."""
    document = json.loads(REPORT.read_text())
    row_time = sum(row["seconds"] for row in document["results"])
    jobs = "1 job" if document["jobs"] == 1 else f"{document['jobs']} jobs"
    line = f"{COUNTS.rows} rows in {document['wall_seconds']:.1f} s with {jobs} ({row_time:.1f} s\nof row time)"
    page = (ROOT / "docs" / "performance.md").read_text()
    assert " ".join(line.split()) in " ".join(page.split()), f"docs/performance.md must quote the report's run: {line!r}"
