"""Where each claim the project audits comes from: the paper and result, and the ledger entry.

``SOURCES`` maps a claim id to ``(source, source_link)``, the two fields of
:class:`dpverify.integrations.audit.AuditCase` that :func:`dpverify.integrations.audit.audit_cases`
fills from an audit's ``SOURCES``. The source cites the paper by its key in ``docs/bibliography.md``
and the result in it; the link is the claim's anchor in the claims ledger ``docs/claims.md`` (ids
``C1`` ... ``C16``), or the guide that states the claim (randomized response: the bibliography;
the benchmark suite and the Gaussian mechanism: their pages).

The link is the absolute path of the file in the source tree (the HTML report writes it relative to
itself). An installed wheel carries no ``docs/``: the link is then empty and the report shows the
source as text only.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SOURCES", "DOCS"]

_TREE_DOCS = Path(__file__).resolve().parents[2] / "docs"
#: The project's docs/ folder, when this module runs from the source tree (None from a wheel).
DOCS: Path | None = _TREE_DOCS if (_TREE_DOCS / "claims.md").is_file() else None


def _link(page: str, anchor: str = "") -> str:
    if DOCS is None:
        return ""
    return f"{DOCS / page}" + (f"#{anchor}" if anchor else "")


def _ledger(claim: str, source: str) -> tuple[str, str]:
    return f"{source}; claims ledger {claim}", _link("claims.md", claim)


SOURCES: dict[str, tuple[str, str]] = {
    "C1": _ledger("C1", "[LWY25] Lemma 11, after [MT07]"),
    "RR": ("[W65] randomized response, closed form", _link("bibliography.md")),
    "C2": _ledger("C2", "[LWY25] Alg. 1, Lemma 15 (first case)"),
    "C3": _ledger("C3", "[LWY25] Alg. 2, Lemma 15"),
    "C3a": _ledger("C3a", "[LWY25] proof of Lemma 15"),
    "C3b": _ledger("C3b", "[LWY25] proof of Lemma 15"),
    "C4": _ledger("C4", "[LWY25] Alg. 3, Claim 23"),
    "C5": _ledger("C5", "[LWY25] Lemma 21"),
    "C6": _ledger("C6", "[LWY25] Lemma 19, after [DF18]"),
    "C7": _ledger("C7", "[LWY25] Sec. 4, Thm. 20"),
    "C8a": _ledger("C8", "[BNS15], as [LWY25] Sec. 3 describes it"),
    "C8b": _ledger("C8", "[LWY25] Sec. 3"),
    "C9": _ledger("C9", "[DF20] Thm. 10, Lemma 13"),
    "C10": _ledger("C10", "[DF20] Corollary 2"),
    "C11": _ledger("C11", "[DF20] Lemma 8"),
    "C12": _ledger("C12", "[DF20] App. C, Lemma 15"),
    "C13": _ledger("C13", "[ABM19] Alg. 1, Lemma 3.2"),
    "C14": _ledger("C14", "[LWY24] Thm. 3.4"),
    "C15": _ledger("C15", "[LWY24] Sec. 4, Thm. 4.6, Lemma C.1"),
    "C16": _ledger("C16", "[LWY24] Sec. 5, Alg. 1, Lemma 5.1"),
    "BENCH": ("the benchmark suite: Ding et al. CCS 2018, Lyu-Su-Li VLDB 2017", _link("benchmark-suite.md")),
    "GAUSS": ("the Gaussian mechanism: Dwork-Roth Thm. A.1, Balle-Wang ICML 2018", _link("gaussian.md")),
}
