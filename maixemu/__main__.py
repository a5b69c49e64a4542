"""``python -m maixemu`` is the ``maixemu`` command."""

import sys

from .cli import main

sys.exit(main())
