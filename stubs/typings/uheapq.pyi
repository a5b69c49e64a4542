"""MicroPython ``uheapq``: maixemu serves CPython's ``heapq`` under this name (a superset of the device's)."""

from heapq import *
