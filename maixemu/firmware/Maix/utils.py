"""``Maix.utils``: the MicroPython heap size setting, free C-heap bytes, raw flash reads.

``gc_heap_size(size)`` only stores the setting (the firmware writes it to its config file and it
takes effect after a reboot — scripts follow it with ``machine.reset()``). ``heap_free()`` reports
4640 KB like the ``demo_view_mem.py`` sample on a board. ``flash_read`` reads the flash contents
the runner mapped (``--flash ADDR=FILE``, ``.kfpkg`` images); unmapped flash reads as erased
(0xFF), like blank flash. The buffer comes from the MicroPython heap: asking for more than it holds
is the firmware's ``MemoryError: memory allocation failed, allocating N bytes``.
"""

from __future__ import annotations

from ..state import current as _current

DEFAULT_GC_HEAP_SIZE = 0x80000  # 512 KB
HEAP_FREE = 4640 * 1024  # bytes free in the C heap of a board running a typical script


def gc_heap_size(size: int | None = None) -> int | None:
    """Get the configured MicroPython heap size, or set it (applies after a reboot; returns None)."""
    system = _current().system
    if size is None:
        return system.gc_heap_size
    system.gc_heap_size = int(size)
    return None


def heap_free() -> int:
    """Free bytes in the system (C) heap."""
    return HEAP_FREE


def flash_read(addr: int, length: int) -> bytes:
    """``length`` bytes of SPI flash from ``addr``: mapped files where mapped, 0xFF elsewhere."""
    from ..chip import heap

    start, size = int(addr), int(length)
    board = _current()
    if size < 0 or size > board.system.gc_heap_size:  # m_new(byte, length) on the MicroPython heap
        raise heap.alloc_failed(size)
    data = bytearray(b"\xff" * size)
    for base, path in board.storage.flash_map.items():
        try:
            file_size = path.stat().st_size
        except OSError:
            continue
        lo, hi = max(start, base), min(start + size, base + file_size)
        if lo >= hi:
            continue
        with open(path, "rb") as handle:
            handle.seek(lo - base)
            chunk = handle.read(hi - lo)
        data[lo - start : lo - start + len(chunk)] = chunk
    return bytes(data)
