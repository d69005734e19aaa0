"""Mechanisms whose exact output distributions dpverify checks, one module per family.

* :mod:`mechanisms.exponential` — the exponential mechanism (000_d409ab0d7c2a9535.txt Lemma 11,
  C1), its factory over datasets, the threshold learner example and the no-half mutant;
* :mod:`mechanisms.randomized_response` — randomized response (Warner 1965), the closed-form
  baseline used to test the checker, plain and on one uniformly chosen record;
* :mod:`mechanisms.subsampling` — uniform subsampling without replacement
  (000 Alg. 2, 003_d99040f93afebb88.txt Lemma 8) and with replacement (000 Lemma 21, C5), as exact
  distributions over subsamples and as mechanism wrappers;
* :mod:`mechanisms.label_flip` — flipping a predicted label with probability alpha
  (003 Corollary 2, C10);
* :mod:`mechanisms.learners` — inner learners A for Lemma 15 / Claim 23 (exponential, leaky
  (1, delta), consistent mutant);
* :mod:`mechanisms.relabeling` — A_Relabel, A_Agnostic (reference and grouped fast form),
  A_Auxiliary (000 Algorithms 1-3);
* :mod:`mechanisms.private_prediction` — realizable private prediction (000 Lemma 19, C6) and its
  use inside A_Agnostic (C7);
* :mod:`mechanisms.semi_private` — ASSPP (001 Alg. 1, C13);
* :mod:`mechanisms.laplace` — exact probabilities of comparisons of Laplace-noised values
  (004 App. C, Alg. 1), reusable by any mechanism;
* :mod:`mechanisms.audit_000`, :mod:`mechanisms.audit_001` and :mod:`mechanisms.registry` — the
  audit's measurements and default instances.

Every mechanism returns a :class:`dpverify.Distribution`.
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
