"""MicroPython ``ubinascii``: maixemu serves CPython's ``binascii`` under this name (a superset of the device's)."""

from binascii import *
