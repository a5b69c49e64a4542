"""``import os`` in MaixPy code is ``uos`` (this stub shadows CPython's ``os``: use it only for MaixPy scripts)."""

from uos import *
