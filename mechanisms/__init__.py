"""Mechanisms whose exact output distributions dpverify checks, one module per family.

* :mod:`mechanisms.exponential` — the exponential mechanism (McSherry–Talwar; Li–Wang–Ye 2025
  Lemma 11), its factory over datasets, the threshold learner example and the no-half mutant;
* :mod:`mechanisms.randomized_response` — randomized response (Warner 1965), plain and on one
  uniformly chosen record: the closed-form baselines the checker is tested against;
* :mod:`mechanisms.subsampling` — uniform subsampling without replacement (Li–Wang–Ye 2025
  Alg. 2; Dagan–Feldman 2020 Lemma 8) and with replacement (Li–Wang–Ye 2025 Lemma 21);
* :mod:`mechanisms.label_flip` — flipping a predicted label with probability alpha
  (Dagan–Feldman 2020 Corollary 2);
* :mod:`mechanisms.learners` — inner learners for Lemma 15 / Claim 23 of Li–Wang–Ye 2025
  (exponential, leaky (1, delta), consistent mutant);
* :mod:`mechanisms.relabeling` — A_Relabel, A_Agnostic, A_Auxiliary (Li–Wang–Ye 2025 Alg. 1-3);
* :mod:`mechanisms.private_prediction` — realizable private prediction (Li–Wang–Ye 2025 Lemma 19)
  and its use inside A_Agnostic (Thm. 20);
* :mod:`mechanisms.stable_prediction` — A^sta, the flip, subsampled prediction and the Appendix C
  learner of Dagan–Feldman 2020;
* :mod:`mechanisms.semi_private` — ASSPP (Alon–Bassily–Moran 2019, Alg. 1);
* :mod:`mechanisms.item_level` — the item-level learner (Li–Wang–Ye 2024, Thm. 3.4);
* :mod:`mechanisms.user_data`, :mod:`mechanisms.private_min_error`, :mod:`mechanisms.user_level`,
  :mod:`mechanisms.private_threshold` — user-level data, PrivateCompare / PrivateMinError, the
  user-level learner and PrivateMedian / PrivateThreshold (Li–Wang–Ye 2024, Sec. 4-5, App. C);
* :mod:`mechanisms.laplace` — exact probabilities of comparisons of Laplace-noised values;
* :mod:`mechanisms.audits` — the papers' claims audited on default instances (``dpverify audit``).

Every mechanism returns a :class:`dpverify.Distribution`. The papers are listed in
``docs/bibliography.md``; ``docs/claims.md`` is the ledger of claims and their constants.
"""

from mechanisms.exponential import (
    exponential_mechanism,
    exponential_mechanism_over,
    exponential_mechanism_without_half,
    threshold_learner,
)
from mechanisms.label_flip import flip, label_flip
from mechanisms.randomized_response import (
    randomized_response,
    randomized_response_mechanism,
    subsampled_randomized_response,
)
from mechanisms.subsampling import (
    canonical,
    sample_with_replacement,
    sample_with_replacement_ordered,
    subsample_index_sets,
    subsample_multisets,
    subsampled,
    subsampled_with_replacement,
)

__all__ = [
    "exponential_mechanism",
    "exponential_mechanism_over",
    "exponential_mechanism_without_half",
    "threshold_learner",
    "randomized_response",
    "randomized_response_mechanism",
    "subsampled_randomized_response",
    "canonical",
    "subsample_index_sets",
    "subsample_multisets",
    "sample_with_replacement",
    "sample_with_replacement_ordered",
    "subsampled",
    "subsampled_with_replacement",
    "flip",
    "label_flip",
]
