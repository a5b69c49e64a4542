"""MicroPython ``ure``: maixemu serves CPython's ``re`` under this name (a superset of the device's)."""

from re import *
