"""``python -m maixemu`` is the ``maixemu`` command."""

import sys

from .cli import console_main

sys.exit(console_main())
