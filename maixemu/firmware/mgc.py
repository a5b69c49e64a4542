"""MaixPy ``gc``: MicroPython's garbage-collector API with device-like memory numbers.

Named ``mgc`` so it can never shadow CPython's ``gc``; the runner serves it as ``gc``.

The numbers are a fixed, plausible picture of a Maix board, not a measurement of the PC:
the MicroPython heap is 512 KB (``Maix.utils.gc_heap_size()`` default, 0x80000) and a script that
has imported the usual modules sees ``mem_free()`` = 360544 bytes (352.09 KB, what the
``demo_view_mem.py`` sample prints on a board) and ``mem_alloc()`` = the rest. They do not move,
so scripts that print them give stable output.

``collect()`` runs a cheap young-generation CPython collection (scripts call it every frame) and
returns None like the firmware. ``enable``/``disable`` only flip the board's flag: a MaixPy
script switching its GC off must not change how the emulator itself manages memory.
"""

from __future__ import annotations

import gc as _gc

from .chip.heap import GC_HEAP_BYTES as HEAP_SIZE  # 524288 bytes, the firmware's default gc heap
from .state import current as _current

TYPICAL_ALLOC = HEAP_SIZE - 360544  # mem_free() == 360544 as on a board after the usual imports


def collect() -> None:
    """Run a garbage collection (a young-generation one on the PC); returns None as on the device."""
    _gc.collect(0)


def enable() -> None:
    _current().system.gc_enabled = True


def disable() -> None:
    _current().system.gc_enabled = False


def isenabled() -> bool:
    return _current().system.gc_enabled


def mem_alloc() -> int:
    """Bytes of the MicroPython heap in use (a fixed device-like figure)."""
    return TYPICAL_ALLOC


def mem_free() -> int:
    """Bytes free in the MicroPython heap: 360544 (352.09 KB) of the default 512 KB heap."""
    return HEAP_SIZE - TYPICAL_ALLOC


def threshold(amount: int | None = None) -> int | None:
    """Get (-1 when unset) or set the allocation threshold that triggers a collection."""
    system = _current().system
    if amount is None:
        return system.gc_threshold
    value = int(amount)
    if value < 0:
        value = -1
    system.gc_threshold = value
    return None
