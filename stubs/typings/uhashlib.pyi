"""MicroPython ``uhashlib``: maixemu serves CPython's ``hashlib`` under this name (a superset of the device's)."""

from hashlib import *
