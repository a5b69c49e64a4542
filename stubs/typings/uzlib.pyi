"""MicroPython ``uzlib``: maixemu serves CPython's ``zlib`` under this name (a superset of the device's)."""

from zlib import *
