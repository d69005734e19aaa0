"""``python -m dpverify``: the ``dpverify`` command line (see :mod:`dpverify.cli`)."""

import sys

from dpverify.cli import main

if __name__ == "__main__":
    sys.exit(main())
