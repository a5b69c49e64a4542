"""MaixPy ``Maix``: ``GPIO``, ``FPIOA``, ``utils``, ``freq``, ``config``, ``I2S``, ``FFT``, ``Audio``, ``MIC_ARRAY``.

``from Maix import GPIO, FPIOA, utils, freq, I2S, FFT, Audio, MIC_ARRAY, config`` works as on the
board (``modMaix.c``; ``Audio`` is the ``audio`` module's class). GPIO reads go through the FPIOA
mux to physical pins the PC can drive; see :mod:`maixemu.firmware.Maix.gpio` for the runner's
key/LED hooks. The audio parts play to and record from the PC through
:mod:`maixemu.firmware.chip.audio_device`.
"""

from __future__ import annotations

from . import config, freq, utils
from .fpioa import FPIOA
from .gpio import GPIO
from ..audio import Audio
from .fft import FFT
from .i2s import I2S
from .mic_array import MIC_ARRAY

__all__ = ["GPIO", "FPIOA", "utils", "freq", "config", "I2S", "FFT", "Audio", "MIC_ARRAY"]
