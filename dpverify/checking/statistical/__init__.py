"""The statistical mode: ``estimate``, a lower confidence bound on epsilon for code that can only be
run (:mod:`~dpverify.checking.statistical.estimate`), with its draws (``_sampling``), outputs
(``_outputs``), events (``_events``), features (``_features``), event selection (``_selection``), the
rounds under a time budget (``_schedule``), selection on the executors (``_chunked``) and the samplers
it adapts (``_patched``). It never proves a claim: exact verdicts are the rest of ``checking``."""
