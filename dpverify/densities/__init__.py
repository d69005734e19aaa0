"""Continuous outputs: mechanisms that release noisy numbers, decided from their densities.

Piecewise log-linear densities (:mod:`~dpverify.densities.piecewise`), certified enclosures of the
supremum of a density ratio (``_ratio_sup``, ``_enclosures``) and the pair check
(:mod:`~dpverify.densities.continuous`) that :func:`dpverify.verify_pairs` calls for a mechanism
with ``continuous_output``.
"""
