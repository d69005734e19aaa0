"""Integrations: dpverify where its users work.

The command line (:mod:`~dpverify.integrations.cli`), the claim audit and its reports
(:mod:`~dpverify.integrations.audit`, :mod:`~dpverify.integrations.report`), the JSON contract every
JSON document follows, with its schema (:mod:`~dpverify.integrations.contract`), the pytest plugin
(:mod:`~dpverify.integrations.pytest_plugin`) and Hypothesis strategies
(:mod:`~dpverify.integrations.strategies`). Nothing below this package imports it.
"""
