"""CanMV's ``maix`` module: MaixPy's ``Maix`` plus ``KPU`` (``from maix import GPIO, utils, KPU``).

kendryte/canmv's ``modMaix.c`` (both branches) holds ``FPIOA``, ``GPIO``, ``I2S``, ``FFT``,
``mic_array`` (builds with a microphone array), ``freq``, ``utils``, ``config`` and ``KPU``; no
``Audio`` (commented out there) and no ``MIC_ARRAY`` spelling. The objects are MaixPy's, so pins
registered through ``fm`` or ``FPIOA`` and keys pressed on the PC behave the same under either name.
``KPU`` serves both CanMV KPU APIs (see :mod:`maixemu.firmware.kpu.canmv`).
"""

from __future__ import annotations

from .Maix import FFT, FPIOA, GPIO, I2S, config, freq, utils
from .Maix import MIC_ARRAY as mic_array
from .kpu.canmv import KPU

__all__ = ["FPIOA", "GPIO", "I2S", "FFT", "mic_array", "freq", "utils", "config", "KPU"]
