"""The papers' audits, one module per subject; each declares its rows as :class:`dpverify.integrations.audit.AuditCase`.

* :mod:`~dpverify.mechanisms.audits.primitives` — the exponential mechanism (C1) and randomized response;
* :mod:`~dpverify.mechanisms.audits.realizable_to_agnostic` — Li–Wang–Ye 2025: A_Relabel, A_Agnostic,
  A_Auxiliary, subsampling with replacement, private prediction, the baselines (C2-C8);
* :mod:`~dpverify.mechanisms.audits.stable_prediction` — Dagan–Feldman 2020: stability, the flip, subsampled
  prediction (C9-C11); :mod:`~dpverify.mechanisms.audits.agnostic_prediction` — its Appendix C learner (C12);
* :mod:`~dpverify.mechanisms.audits.public_data` — Alon–Bassily–Moran 2019: the semi-private ASSPP (C13);
* :mod:`~dpverify.mechanisms.audits.item_level` and :mod:`~dpverify.mechanisms.audits.user_level` — Li–Wang–Ye 2024:
  item- and user-level pure private learners (C14-C16);
* :mod:`~dpverify.mechanisms.audits.benchmark_suite` — the field's benchmark suite (report noisy max, noisy
  histograms, the six sparse vector variants of Lyu–Su–Li), claim ``BENCH``;
* :mod:`~dpverify.mechanisms.audits.gaussian` — the Gaussian mechanism (Balle–Wang 2018): classical and
  analytic calibrations, sigma halved and a pure claim, claim ``GAUSS``.

``AUDITS`` is what the project registers under the entry-point group ``dpverify.audits`` (name
``dpverify``), in report order; another package adds its own audits with an entry point of its own
(see the README, "Add your own audit").
"""

from . import (
    agnostic_prediction,
    benchmark_suite,
    gaussian,
    item_level,
    primitives,
    public_data,
    realizable_to_agnostic,
    stable_prediction,
    user_level,
)

AUDITS = [primitives, realizable_to_agnostic, stable_prediction, agnostic_prediction, public_data, item_level, user_level, benchmark_suite,
          gaussian]

__all__ = ["AUDITS"]
