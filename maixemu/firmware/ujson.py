"""MicroPython ``ujson``: ``dumps``/``loads``/``dump``/``load`` — CPython's ``json`` under that name.

CPython's default output (``{"a": 1, "b": [1, 2]}``) is what ujson writes too, and invalid input
raises ``ValueError`` (``json.JSONDecodeError`` is a subclass), as on the device.
"""

from __future__ import annotations

from json import dump, dumps, load, loads

__all__ = ["dump", "dumps", "load", "loads"]
