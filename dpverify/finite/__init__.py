"""Finite domains: what a mechanism is checked on.

Records and concept classes (:mod:`~dpverify.finite.records`), the exact output distribution a
mechanism returns (:mod:`~dpverify.finite.distribution`, :mod:`~dpverify.finite.mechanism`),
neighbour relations (:mod:`~dpverify.finite.neighbors`) and the enumeration of datasets and
neighbouring pairs, ordered or as multisets (:mod:`~dpverify.finite.pair_sources`,
:mod:`~dpverify.finite.multisets`). Depends on nothing in dpverify but errors and validation.
"""
