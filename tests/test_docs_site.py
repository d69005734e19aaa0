"""The documentation site builds as ``make docs`` builds it, and the pages' links lead somewhere.

``mkdocs build --strict`` takes 6-8 s of wall time on 2 cores, the second slowest item of ``make test``, and
CI runs ``make docs`` (the same build) besides, so the build is under ``-m slow``: a page missing from the
nav, a broken link or anchor, an API name griffe cannot collect or a docstring it cannot read fails there
and in ``make docs``. Its default twin is the link check below: the README is not part of the site, so its
links (and every page's, read as files on GitHub) are checked by default.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]

_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_relative_links_lead_to_files(page: Path):
    """On GitHub the pages are read as files: every relative link must name one (anchors aside)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        if not path.exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files: {broken}"


@pytest.mark.slow  # 6-8 s; make docs builds the same site in CI
def test_docs_site_builds_strict(tmp_path: Path):
    """``make docs``: every page in the nav, no broken link, every API name collected, no warning."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "api" / "mechanisms.html").is_file()
    # opened from disk (file://), a link to a directory shows a listing: every page link names a .html file
    index = (tmp_path / "site" / "index.html").read_text()
    pages = [link for link in re.findall(r'<a href="([^"#]+)"[^>]*class="md-nav__link', index)
             if not re.match(r"[a-z]+:", link)]
    assert len(pages) >= 20, f"the nav of site/index.html links {len(pages)} pages: {pages}"
    assert all(link.endswith(".html") for link in pages), [link for link in pages if not link.endswith(".html")]
