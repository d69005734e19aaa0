"""Finite domains: what a mechanism is checked on.

Records and concept classes (:mod:`~dpverify.finite.records`), the exact output distribution a
mechanism returns (:mod:`~dpverify.finite.distribution`, :mod:`~dpverify.finite.mechanism`),
neighbour relations (:mod:`~dpverify.finite.neighbors`), the enumeration of datasets and
neighbouring pairs, ordered or as multisets (:mod:`~dpverify.finite.pair_sources`,
:mod:`~dpverify.finite.multisets`), and mechanisms from sampling code, whose exact distribution is
found by enumerating every execution path (:mod:`~dpverify.finite.sampler.sampling`). Depends on nothing in
dpverify but errors and validation.
"""
