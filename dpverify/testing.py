"""What a test suite needs from dpverify, at one short path.

* :func:`assert_private` fails a test unless a mechanism satisfies its claim, exactly:
  ``assert_private(mechanism, Datasets(records, n), PureDp(1))``.
* The ``dpverify_baseline`` pytest fixture (a :class:`BaselineStore`, registered by dpverify's
  pytest plugin) compares a mechanism's worst-case privacy loss with a stored baseline:
  ``dpverify_baseline.check("name", mechanism, records=..., n=..., epsilon=...)``.
* :func:`privacy_property` turns a search over instances into a Hypothesis test, and
  :class:`AssumptionWarning` is what a test that passed on an accepted assumption warns.
* :func:`mutant` marks a deliberately broken copy of a mechanism, so a suite can check that its
  privacy tests catch it.

The plugin itself (options, hooks) is :mod:`dpverify.integrations.pytest_plugin`.
"""

from __future__ import annotations

from dpverify.finite.mechanism import mutant
from dpverify.integrations.pytest_plugin import AssumptionWarning, BaselineStore, assert_private
from dpverify.integrations.strategies import privacy_property

__all__ = ["assert_private", "BaselineStore", "AssumptionWarning", "privacy_property", "mutant"]
