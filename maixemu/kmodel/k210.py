"""The K210's memories and what MaixPy leaves of them to models: the one place for these facts.

6 MiB of general SRAM (main memory), the 2 MiB KPU RAM (AI SRAM, 64-byte rows) and 16 MiB of
flash, the largest model file a board can hold. :data:`MAIXPY_MODEL_BUDGETS` is the SRAM each
MaixPy build leaves to ``kpu.load`` (maixpy-api.md §1.1 "How much model fits"), in MiB as the
firmware's allocator counts them, and :func:`kpu_load_bytes` what a loaded model takes of it.
``maixemu info``, ``kpu.load``, ``kpu.memtest`` and the image allocator all read them here, so they
never disagree (a 2 050 000-byte model fits the full build's 2 MiB in all of them).
"""

from __future__ import annotations

MIB = 1024 * 1024

K210_MAIN_MEMORY_BYTES = 6 * MIB
K210_KPU_RAM_BYTES = 2 * MIB
K210_KPU_ROW_BYTES = 64
K210_FLASH_BYTES = 16 * MIB

#: SRAM ``kpu.load`` finds for models, by ``--firmware`` build: the full firmware (camera, LCD and
#: every module), the minimum build, and none (the whole SRAM, as C code on a bare board).
MAIXPY_MODEL_BUDGETS: dict[str, int] = {"full": 2 * MIB, "minimum": 4 * MIB, "none": K210_MAIN_MEMORY_BYTES}
#: How ``maixemu info`` names the builds.
MAIXPY_BUILD_NAMES: dict[str, str] = {"full": "full firmware", "minimum": "minimum firmware",
                                      "none": "no firmware (whole SRAM)"}


def kpu_load_bytes(main_memory_bytes: int, file_bytes: int, streamed_layer_bytes: int | None = None) -> int:
    """SRAM a loaded model takes: its main-memory working buffers plus the file, which ``kpu.load``
    keeps whole (V3/V4); ``kpu.load_flash`` streams the weights, so only the largest layer's
    parameters (``streamed_layer_bytes``) are held instead of the file."""
    held = file_bytes if streamed_layer_bytes is None else streamed_layer_bytes
    return int(main_memory_bytes) + int(held)


__all__ = ["K210_FLASH_BYTES", "K210_KPU_RAM_BYTES", "K210_KPU_ROW_BYTES", "K210_MAIN_MEMORY_BYTES",
           "MAIXPY_BUILD_NAMES", "MAIXPY_MODEL_BUDGETS", "MIB", "kpu_load_bytes"]
