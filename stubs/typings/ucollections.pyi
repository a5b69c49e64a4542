"""MicroPython ``ucollections``: maixemu serves CPython's ``collections`` under this name (a superset of the device's)."""

from collections import *
