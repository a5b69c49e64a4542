"""MicroPython ``uio``: maixemu serves CPython's ``io`` under this name (a superset of the device's)."""

from io import *
