"""Checking mechanisms: the public checks built on the engine.

:func:`~dpverify.checking.checker.verify` (every neighbouring pair of a finite domain),
:func:`~dpverify.checking.input_pairs.verify_pairs` (given input pairs, covers in
:mod:`~dpverify.checking.pair_cover`), :func:`~dpverify.checking.gaussian.verify_gaussian` (the
Gaussian mechanism on given pairs or every neighbouring pair), :mod:`~dpverify.checking.public_data`
(semi-private learners); evaluating mechanisms in blocks (:mod:`~dpverify.checking._evaluation`) and proving
declared exchangeability (:mod:`~dpverify.checking._symmetry`).
"""
