"""MicroPython ``ustruct``: CPython's ``struct`` functions under MicroPython's module name.

CPython accepts every format MicroPython does; it is stricter about range errors (``struct.error``)
where MicroPython silently truncates.
"""

from __future__ import annotations

from struct import calcsize, error, pack, pack_into, unpack, unpack_from

__all__ = ["calcsize", "error", "pack", "pack_into", "unpack", "unpack_from"]
