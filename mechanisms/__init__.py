"""Mechanisms whose exact output distributions dpverify checks, one module per family.

* :mod:`dpverify.mechanisms.exponential` — the exponential mechanism (McSherry–Talwar; Li–Wang–Ye 2025
  Lemma 11), its factory over datasets, the threshold learner example and the no-half mutant;
* :mod:`dpverify.mechanisms.randomized_response` — randomized response (Warner 1965), plain and on one
  uniformly chosen record: the closed-form baselines the checker is tested against;
* :mod:`dpverify.mechanisms.subsampling` — uniform subsampling without replacement (Li–Wang–Ye 2025
  Alg. 2; Dagan–Feldman 2020 Lemma 8) and with replacement (Li–Wang–Ye 2025 Lemma 21);
* :mod:`dpverify.mechanisms.label_flip` — flipping a predicted label with probability alpha
  (Dagan–Feldman 2020 Corollary 2);
* :mod:`dpverify.mechanisms.learners` — inner learners for Lemma 15 / Claim 23 of Li–Wang–Ye 2025
  (exponential, leaky (1, delta), consistent mutant);
* :mod:`dpverify.mechanisms.relabeling` — A_Relabel, A_Agnostic, A_Auxiliary (Li–Wang–Ye 2025 Alg. 1-3);
* :mod:`dpverify.mechanisms.private_prediction` — realizable private prediction (Li–Wang–Ye 2025 Lemma 19)
  and its use inside A_Agnostic (Thm. 20);
* :mod:`dpverify.mechanisms.stable_prediction` — A^sta, the flip, subsampled prediction and the Appendix C
  learner of Dagan–Feldman 2020;
* :mod:`dpverify.mechanisms.semi_private` — ASSPP (Alon–Bassily–Moran 2019, Alg. 1);
* :mod:`dpverify.mechanisms.item_level` — the item-level learner (Li–Wang–Ye 2024, Thm. 3.4);
* :mod:`dpverify.mechanisms.user_data`, :mod:`dpverify.mechanisms.private_min_error`, :mod:`dpverify.mechanisms.user_level`,
  :mod:`dpverify.mechanisms.private_threshold` — user-level data, PrivateCompare / PrivateMinError, the
  user-level learner and PrivateMedian / PrivateThreshold (Li–Wang–Ye 2024, Sec. 4-5, App. C);
* :mod:`dpverify.mechanisms.laplace` — exact probabilities of comparisons of Laplace-noised values;
* :mod:`dpverify.mechanisms.audits` — the papers' claims audited on default instances (``dpverify audit``).

Every mechanism returns a :class:`dpverify.Distribution`. The papers are listed in
``docs/bibliography.md``; ``docs/claims.md`` is the ledger of claims and their constants.
"""

from .exponential import (
    exponential_mechanism,
    exponential_mechanism_over,
    exponential_mechanism_without_half,
    threshold_learner,
)
from .label_flip import flip, label_flip
from .randomized_response import randomized_response, randomized_response_mechanism, subsampled_randomized_response
from .subsampling import (
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
