"""MicroPython ``uarray``: maixemu serves CPython's ``array`` under this name (a superset of the device's)."""

from array import *
