"""MicroPython ``urandom``: maixemu serves CPython's ``random`` under this name (a superset of the device's)."""

from random import *
