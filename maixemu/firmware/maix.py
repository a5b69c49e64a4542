"""CanMV's ``maix`` module: MaixPy's ``Maix`` plus ``KPU`` (``from maix import GPIO, utils, KPU``).

kendryte/canmv's ``modMaix.c`` (both branches) holds ``FPIOA``, ``GPIO``, ``I2S``, ``FFT``,
``mic_array`` (builds with a microphone array), ``freq``, ``utils``, ``config`` and ``KPU``; no
``Audio`` (commented out there) and no ``MIC_ARRAY`` spelling. The objects are MaixPy's, so pins
registered through ``fm`` or ``FPIOA`` and keys pressed on the PC behave the same under either name.
``KPU`` serves both CanMV KPU APIs (see :mod:`maixemu.firmware.kpu.canmv`).
"""

from __future__ import annotations

from typing import Any

from .Maix import FFT, FPIOA, GPIO, I2S, config, freq, utils
from .Maix import MIC_ARRAY as mic_array
from .kpu.canmv import KPU

__all__ = ["FPIOA", "GPIO", "I2S", "FFT", "mic_array", "freq", "utils", "config", "KPU"]


#: Modules of MaixPy v4's ``maix`` package (MaixCAM, Linux; sipeed/MaixPy), which share the
#: name: scripts written for it start ``from maix import camera, display, app``.
_MAIXPY_V4 = frozenset({
    "app", "camera", "display", "image", "nn", "time", "touchscreen", "key", "err", "uart", "pinmap", "gpio",
    "i2c", "spi", "pwm", "adc", "audio", "video", "network", "comm", "protocol", "fs", "sys", "tensor",
    "peripheral", "ext_dev", "rtsp", "rtmp", "thread", "util", "http", "log", "i18n", "tracker", "ahrs",
})


def __getattr__(name: str) -> Any:
    """MicroPython's ``cannot import name X`` for a name CanMV's ``maix`` lacks; for MaixPy v4's
    module names, also what the script is (a MaixCAM script) and what runs it."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _MAIXPY_V4:
        from .notices import advised

        raise advised(ImportError(f"cannot import name {name}"),
                      f"maix.{name} is MaixPy v4's API (MaixCAM, Linux); this board's 'maix' is CanMV's "
                      "(FPIOA, GPIO, I2S, FFT, utils, freq, config, KPU). maixemu runs K210 MaixPy-v1/CanMV "
                      "scripts: camera is 'sensor', display is 'lcd', models are 'KPU'")
    raise AttributeError(f"'module' object has no attribute '{name}'")
