"""MicroPython ``uselect``: maixemu serves CPython's ``select`` under this name (a superset of the device's)."""

from select import *
