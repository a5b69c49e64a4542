"""The K210 memory MaixPy allocates from, and the MemoryErrors it raises when an allocation fails.

Two texts, because the firmware has two allocators a script meets:

* MicroPython's own (``m_new``: ``bytes``, ``Maix.utils.flash_read``...): ``m_malloc_fail`` raises
  ``MemoryError: memory allocation failed, allocating N bytes``;
* OpenMV's ``xalloc`` for image buffers (``image.Image(path)``, ``image.Image(size=...)``, copies):
  ``MemoryError: Out of normal MicroPython Heap Memory! Please reduce the resolution ...``.

maixemu does not emulate the heap byte for byte (CPython objects are not MicroPython objects), but
nothing bigger than the chip's main memory can ever be allocated on the board, so image buffers
past :data:`MAIN_MEMORY_BYTES` fail here as they would there — before the PC allocates or decodes
anything (a 633-byte JPEG claiming 30000x30000 pixels must not cost gigabytes).
"""

from __future__ import annotations

from ...kmodel.k210 import K210_MAIN_MEMORY_BYTES, MIB  # noqa: F401 - MIB is part of this module's API

#: The K210's general-purpose SRAM (8 MiB on chip, of which 2 MiB is the KPU's): everything the
#: firmware, the heaps and every image buffer share.
MAIN_MEMORY_BYTES = K210_MAIN_MEMORY_BYTES

#: ``image.Image(path)`` and ``Image(size=...)`` refuse buffers past this: at 2 bytes per RGB565 pixel,
#: 3 145 728 pixels (2048x1536); at 1 byte per grayscale pixel, twice that.
IMAGE_MAX_BYTES = MAIN_MEMORY_BYTES

#: MicroPython's GC heap as MaixPy configures it by default (``gc.mem_alloc() + gc.mem_free()``)
GC_HEAP_BYTES = 0x80000

_XALLOC_TEXT = ("Out of normal MicroPython Heap Memory! Please reduce the resolution of the image you are "
                "running this algorithm on to bypass this issue!")


def alloc_failed(nbytes: int) -> MemoryError:
    """MicroPython's ``m_malloc_fail``: the size is printed as the firmware's unsigned 32-bit value."""
    return MemoryError(f"memory allocation failed, allocating {int(nbytes) & 0xFFFFFFFF} bytes")


def check_alloc(words: int) -> None:
    """``m_new(uint32_t, words)`` on the GC heap (``Maix.I2S`` and ``audio.Audio`` buffers): MicroPython's
    MemoryError when it cannot fit (the size as the firmware computes it, not truncated)."""
    size = int(words) * 4
    if size > GC_HEAP_BYTES:
        raise MemoryError(f"memory allocation failed, allocating {size} bytes")


def image_alloc_failed() -> MemoryError:
    """OpenMV's ``xalloc_fail``, raised for an image buffer that does not fit."""
    return MemoryError(_XALLOC_TEXT)


def check_image_buffer(width: int, height: int, bytes_per_pixel: int) -> None:
    """Raise the firmware's MemoryError when a ``width`` x ``height`` image cannot exist on the board."""
    if width * height * bytes_per_pixel > IMAGE_MAX_BYTES:
        raise image_alloc_failed()
