"""MaixPy ``Maix``: ``GPIO``, ``FPIOA``, ``utils``, ``freq``, ``config``, and inert audio parts.

``from Maix import GPIO, FPIOA, utils, freq, I2S, FFT, Audio, MIC_ARRAY, config`` works as on the
board. GPIO reads go through the FPIOA mux to physical pins the PC can drive; see
:mod:`maixemu.firmware.Maix.gpio` for the runner's key/LED hooks.
"""

from __future__ import annotations

from . import config, freq, utils
from .fpioa import FPIOA
from .gpio import GPIO
from .inert import FFT, I2S, MIC_ARRAY, Audio

__all__ = ["GPIO", "FPIOA", "utils", "freq", "config", "I2S", "FFT", "Audio", "MIC_ARRAY"]
