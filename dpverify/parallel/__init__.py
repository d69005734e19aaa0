"""Parallel execution: where the work runs.

:mod:`~dpverify.parallel.executors` runs blocks of work serially, on a process pool or on a Dask
cluster, with the same results everywhere; arrays travel as shared memory-mapped files
(``_transport``); :mod:`~dpverify.parallel.progress` reports long runs. Knows nothing of privacy.
"""
