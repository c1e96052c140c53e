"""``python -m localeval.cli``: the same as the ``localeval`` command."""

import sys

from localeval.cli.app import main

sys.exit(main())
