"""The verdict engine: from probability rows to a certified verdict.

:mod:`~dpverify.verdict.engine` sweeps every pair of rows in float64 (``_sweep``), certifies the
pairs near the claim in exact or interval arithmetic (``_certify``) and returns one of the explicit
states (:class:`~dpverify.verdict.engine.Verdict`) with a :mod:`~dpverify.verdict.witness`.
:mod:`~dpverify.verdict.claims` states what is decided, :mod:`~dpverify.verdict.assumptions` what a
verdict may rest on, :mod:`~dpverify.verdict.results` what a check returns. Every verdict of every
path (verify on every kind of inputs, the audit, the plugin) comes from here.
"""
