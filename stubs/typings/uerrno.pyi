"""MicroPython ``uerrno``: maixemu serves CPython's ``errno`` under this name (a superset of the device's)."""

from errno import *
