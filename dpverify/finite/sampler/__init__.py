"""The sampler enumeration: ``from_sampler`` (:mod:`~dpverify.finite.sampler.sampling`) runs sampling
code once per execution path with the exact rng (``_exact_random``: numpy's and Python's draws with
their meanings, ``_legacy``, ``_python_random``, ``_weights``; everything else refused by construction,
``_refusals``), lazy uniforms followed exactly (``_lazy*``), continuous noise traced as variables
(``_linear``, ``_noise``, ``_noise_draws``), and module-level randomness routed to it (``_routing``)."""
