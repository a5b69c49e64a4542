"""Which source files are a user's script: the one rule for tracebacks and ``[maixemu]`` call sites.

maixemu's own frames are hidden from what a script sees, but the scripts maixemu ships (the default
sample in ``maixemu/data``, the samples in ``maixemu/samples``) live inside the package and are user
code all the same: their frames must show and their lines be named.
"""

from __future__ import annotations

import os

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # maixemu/ (from firmware/mp/)
#: Folders inside the package that hold MaixPy scripts (with a trailing separator).
SHIPPED_SCRIPT_DIRS = tuple(os.path.join(PACKAGE_DIR, d) + os.sep for d in ("data", "samples"))


def is_shipped_script(filename: str) -> bool:
    """True for a script maixemu ships (``filename`` absolute; symlinks resolved)."""
    return os.path.realpath(filename).startswith(SHIPPED_SCRIPT_DIRS)


def is_package_code(filename: str) -> bool:
    """True for maixemu's own modules (not the scripts it ships)."""
    path = os.path.abspath(filename)
    return path.startswith(PACKAGE_DIR + os.sep) and not is_shipped_script(path)
