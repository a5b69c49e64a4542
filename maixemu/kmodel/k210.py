"""The K210's memories, the facts every kmodel check is made against (one place for them).

6 MiB of general SRAM (main memory), the 2 MiB KPU RAM (AI SRAM, 64-byte rows) and 16 MiB of
flash, the largest model file a board can hold. Firmware budgets (how much of the SRAM MaixPy
leaves for models) are the firmware's facts, not the chip's, and live with the firmware.
"""

from __future__ import annotations

K210_MAIN_MEMORY_BYTES = 6 * 1024 * 1024
K210_KPU_RAM_BYTES = 2 * 1024 * 1024
K210_KPU_ROW_BYTES = 64
K210_FLASH_BYTES = 16 * 1024 * 1024
