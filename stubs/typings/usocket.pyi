"""MicroPython ``usocket``: maixemu serves CPython's ``socket`` under this name (a superset of the device's)."""

from socket import *
