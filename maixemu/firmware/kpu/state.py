"""The KPU side of one board: the model budget of its firmware build, the AI-memory policy, the call log.

One instance per board (``current().kpu``), so every run starts with no models loaded, the
policy it asked for and an empty log.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from ...kmodel.k210 import MAIXPY_MODEL_BUDGETS
from ..state import board_part
from .calls import KpuCallLog


#: ``--ai-memory`` modes: the device's silence, a warning, or an error
MODES = ("device", "warn", "strict")


@dataclass
class AIMemoryPolicy:
    """``--ai-memory``: what happens when the KPU reads AI memory older than the pixels (one per board)."""

    mode: str = "device"
    warned_sites: set[tuple[str, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"--ai-memory must be one of {', '.join(MODES)}, not {self.mode!r}")


@dataclass
class MemoryBudget:
    """RAM the firmware has left for models; ``used`` maps each live model object to its cost.

    The budget refers to the model objects weakly: the firmware frees a ``kpu_net`` in its
    finaliser, so a model the script dropped stops counting.
    """

    firmware: str = "full"
    used: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)

    @property
    def limit(self) -> int:
        return MAIXPY_MODEL_BUDGETS[self.firmware]

    def free(self) -> int:
        return self.limit - sum(self.used.values())


@board_part("kpu")
class KpuState:
    """``firmware``: the MaixPy build (``full``/``minimum``/``none``: how much RAM models get);
    ``ai_memory``: ``device``/``warn``/``strict``; ``log``: the calls made (``--kpu-log``, tests)."""

    def __init__(self, *, firmware: str = "full", ai_memory: str = "device", log: KpuCallLog | None = None):
        if firmware not in MAIXPY_MODEL_BUDGETS:
            raise ValueError(f"--firmware must be one of {', '.join(MAIXPY_MODEL_BUDGETS)}, not {firmware!r}")
        self.budget = MemoryBudget(firmware)
        self.ai_memory = AIMemoryPolicy(ai_memory)
        self.log = log or KpuCallLog()

    def close(self) -> None:
        """The board closes: the call log's file (``--kpu-log``) is complete."""
        self.log.close()


__all__ = ["MODES", "AIMemoryPolicy", "KpuState", "MemoryBudget"]
