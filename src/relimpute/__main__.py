"""``python -m relimpute``: the ``relimpute`` command line."""

import sys

from .cli import main

sys.exit(main())
