"""``python -m dpverify``: the ``dpverify`` command line (see :mod:`dpverify.integrations.cli`)."""

import sys

from dpverify.integrations.cli import main

if __name__ == "__main__":
    sys.exit(main())
