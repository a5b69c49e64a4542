"""``import time`` in MaixPy code is ``utime`` (this stub shadows CPython's ``time``: use it only for MaixPy scripts)."""

from utime import *
