"""``Maix.utils``: MicroPython heap size setting, free C heap, raw flash reads."""

from typing import overload

@overload
def gc_heap_size() -> int:
    """Get the configured MicroPython heap (default 0x80000 = 512 KB) or set it (applies after reboot)."""
@overload
def gc_heap_size(size: int, /) -> None: ...
def heap_free() -> int:
    """Free bytes in the system (C) heap."""
def flash_read(addr: int, length: int, /) -> bytes:
    """``length`` bytes of SPI flash from ``addr``."""
