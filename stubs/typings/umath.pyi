"""MicroPython ``umath``: maixemu serves CPython's ``math`` under this name (a superset of the device's)."""

from math import *
