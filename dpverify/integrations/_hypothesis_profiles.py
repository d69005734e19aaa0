"""The Hypothesis effort profiles ``dpverify-ci`` and ``dpverify-dev``, registered by Hypothesis.

They are registered in one place: Hypothesis's own entry-point group, which Hypothesis runs when it
is first imported (``hypothesis.entry_points``), declared in ``pyproject.toml``::

    [project.entry-points.hypothesis]
    dpverify = "dpverify.integrations._hypothesis_profiles:register_profiles"

So the profiles exist wherever Hypothesis does (a pytest session, a conftest, plain Python after
``import hypothesis``), and a session that never imports Hypothesis does not pay for it. Nothing
else registers them: the pytest plugin only loads one for ``--dpverify-profile``. When the entry
point cannot run (dpverify on ``sys.path`` but not installed, or ``HYPOTHESIS_NO_PLUGINS`` set),
call :func:`register_profiles` yourself, e.g. in a conftest; ``--dpverify-profile`` does so.

This module imports nothing heavy: :func:`register_profiles` imports Hypothesis when called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PROFILES", "register_profiles"]

#: ``--dpverify-profile`` value -> registered Hypothesis profile name.
PROFILES = {"ci": "dpverify-ci", "dev": "dpverify-dev"}

_registered = False


def register_profiles() -> None:
    """Register ``dpverify-ci`` and ``dpverify-dev`` with Hypothesis (imports Hypothesis).

    Hypothesis calls this through its entry point when it is imported. It registers once per
    process; later calls do nothing. A profile already registered under one of these names (say,
    defined by the user's conftest first) is left as it is.
    """
    global _registered
    if _registered:
        return
    import hypothesis
    from hypothesis.errors import InvalidArgument

    profiles: dict[str, dict[str, Any]] = {
        PROFILES["ci"]: dict(
            max_examples=1000,
            derandomize=True,  # the same examples on every CI run: a failure is reproducible
            database=None,
            deadline=None,  # exact distributions can take a while; time is not the property under test
            print_blob=True,
            suppress_health_check=[hypothesis.HealthCheck.too_slow],
        ),
        PROFILES["dev"]: dict(max_examples=50, deadline=None),
    }
    for name, options in profiles.items():
        try:
            hypothesis.settings.get_profile(name)
        except InvalidArgument:
            hypothesis.settings.register_profile(name, **options)
    _registered = True
