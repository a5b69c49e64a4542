"""Former home of the CanMV class API; it lives in :mod:`maixemu.firmware.kpu.canmv` now."""

from __future__ import annotations

from .kpu.canmv import KPU, feature_compare

__all__ = ["KPU", "feature_compare"]
