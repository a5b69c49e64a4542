"""``Maix.utils``: MicroPython heap size setting, free C heap, raw flash reads."""

def gc_heap_size(size: int | None = None, /) -> int | None:
    """Get the configured MicroPython heap (default 0x80000 = 512 KB) or set it (applies after reboot)."""
def heap_free() -> int:
    """Free bytes in the system (C) heap."""
def flash_read(addr: int, length: int, /) -> bytes:
    """``length`` bytes of SPI flash from ``addr``."""
