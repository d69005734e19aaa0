"""Continuous outputs: mechanisms that release noisy numbers, decided from their densities.

Piecewise log-linear densities (:mod:`~dpverify.densities.piecewise`), certified enclosures of the
supremum of a density ratio (``_ratio_sup``, ``_enclosures``), the hockey-stick divergence
``delta(eps)`` with its best output set (:mod:`~dpverify.densities.hockey_stick`: regions in
``_region``, products through the law of the summed loss in ``_loss_convolution``) and the pair
check (:mod:`~dpverify.densities.continuous`) that :func:`dpverify.verify` on given pairs calls for a
mechanism with ``continuous_output``. The Gaussian mechanism, declared by ``gaussian_output``, is
decided on half-spaces (:mod:`~dpverify.densities.gaussian`) from its certified privacy profile
(:mod:`~dpverify.densities.gaussian_profile`, ``Phi`` in :mod:`~dpverify.densities.normal`).
"""
