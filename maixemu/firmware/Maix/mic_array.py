"""``Maix.MIC_ARRAY`` (CanMV: ``maix.mic_array``): the Sipeed 6+1 microphone array with its 12 SK9822 LEDs.

As ``Maix_mic_array.c``: ``init(i2s_d0=23, i2s_d1=22, i2s_d2=21, i2s_d3=20, i2s_ws=19, i2s_sclk=18,
sk9822_dat=24, sk9822_clk=25)`` muxes those pins (visible through ``FPIOA``), ``get_map()`` gives the
16x16 grayscale sound map, ``get_dir(map)`` the 12 LED strengths computed from it exactly as the
firmware does (including its cast of each sum to 8 bits before the division), ``set_led(dir,
color)`` the SK9822 frames (kept in ``audio_device.current().mic_leds``), ``deinit()``.

The firmware's beamforming library (``lib_mic``) is closed source and the PC has one sound channel,
so ``get_map`` cannot say where a sound comes from: every cell holds the loudness of the
microphone source over the last 256 frames (RMS / 64, at most 255) — silence gives a black map,
a tone a uniform one. ``get_map`` before ``init`` loops forever on the board; here it raises
``OSError(ETIMEDOUT)``.
"""

from __future__ import annotations

import errno
from typing import Any, Sequence

import numpy as np

from ..chip import audio_device
from ..mp.mp_args import fixed_items as _fixed  # mp_obj_get_array_fixed_n
from . import fpioa

_LEN = (14, 20, 14, 14, 20, 14, 14, 20, 14, 14, 20, 14)
#: Map cells summed per LED (``voice_strength`` in the firmware).
_CELLS = (
    (197, 198, 199, 213, 214, 215, 228, 229, 230, 231, 244, 245, 246, 247),
    (178, 179, 192, 193, 194, 195, 196, 208, 209, 210, 211, 212, 224, 225, 226, 227, 240, 241, 242, 243),
    (128, 129, 130, 131, 144, 145, 146, 147, 160, 161, 162, 163, 176, 177),
    (64, 65, 80, 81, 82, 83, 96, 97, 98, 99, 112, 113, 114, 115),
    (0, 1, 2, 3, 16, 17, 18, 19, 32, 33, 34, 35, 36, 48, 49, 50, 51, 52, 66, 67),
    (4, 5, 6, 7, 20, 21, 22, 23, 37, 38, 39, 53, 54, 55),
    (8, 9, 10, 11, 24, 25, 26, 27, 40, 41, 42, 56, 57, 58),
    (12, 13, 14, 15, 28, 29, 30, 31, 43, 44, 45, 46, 47, 59, 60, 61, 62, 63, 76, 77),
    (78, 79, 92, 93, 94, 95, 108, 109, 110, 111, 124, 125, 126, 127),
    (140, 141, 142, 143, 156, 157, 158, 159, 173, 172, 174, 175, 190, 191),
    (188, 189, 203, 204, 205, 206, 207, 219, 220, 221, 222, 223, 236, 237, 238, 239, 252, 253, 254, 255),
    (200, 201, 202, 216, 217, 218, 232, 233, 234, 235, 248, 249, 250, 251),
)
SK9822_DAT_GPIONUM, SK9822_CLK_GPIONUM = 27, 28
MAP_FRAMES, MAP_RATE = 256, 16000


class MIC_ARRAY:  # noqa: N801 - the firmware's name
    """The microphone array (called on the class, as on the board)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "MIC_ARRAY":
        raise TypeError("cannot create 'MIC_ARRAY' instances")

    @staticmethod
    def init(i2s_d0: int = 23, i2s_d1: int = 22, i2s_d2: int = 21, i2s_d3: int = 20, i2s_ws: int = 19,
             i2s_sclk: int = 18, sk9822_dat: int = 24, sk9822_clk: int = 25) -> bool:
        pins = (i2s_d0, i2s_d1, i2s_d2, i2s_d3, i2s_ws, i2s_sclk, sk9822_dat, sk9822_clk)
        functions = ("I2S0_IN_D0", "I2S0_IN_D1", "I2S0_IN_D2", "I2S0_IN_D3", "I2S0_WS", "I2S0_SCLK",
                     f"GPIOHS{SK9822_DAT_GPIONUM}", f"GPIOHS{SK9822_CLK_GPIONUM}")
        mapping = zip(pins, functions)
        for pin, function in mapping:
            fpioa.set_pin_function(int(pin), fpioa.FUNCTIONS[function])
        audio_device.current().mic_array_ready = True
        return True

    @staticmethod
    def deinit() -> bool:
        audio_device.current().mic_array_ready = False
        return True

    @staticmethod
    def get_map() -> Any:
        from .. import image

        device = audio_device.current()
        if not device.mic_array_ready:
            raise OSError(errno.ETIMEDOUT, "ETIMEDOUT: call mic_array.init() first (on the board get_map() "
                                           "waits forever without it)")
        frames = device.record(MAP_FRAMES, MAP_RATE).astype(np.float64)
        rms = float(np.sqrt(np.mean(frames * frames))) if len(frames) else 0.0
        level = min(255, int(rms / 64))
        return image.Image._wrap(image.GRAYSCALE, np.full((16, 16), level, dtype=np.uint8))

    @staticmethod
    def get_dir(img: Any) -> tuple[int, ...]:
        from .. import image

        if not isinstance(img, image.Image):
            raise TypeError("Image expected")
        if img.width() != 16 or img.height() != 16 or img.format() != image.GRAYSCALE:
            raise ValueError("image type error, only support 16*16 grayscale image")
        cells = np.asarray(img._pix, dtype=np.int64).reshape(-1)
        out = []
        for index, members in enumerate(_CELLS):
            total = int(cells[list(members)].sum())
            strength = (total & 0xFF) // _LEN[index]  # (uint8_t)sum / len
            out.append(min(strength, 15))
        return tuple(out)

    @staticmethod
    def set_led(dir: Sequence[int], color: Sequence[int]) -> bool:  # noqa: A002 - the firmware's name
        strengths = [int(v) for v in _fixed(dir, 12)]
        rgb = [int(v) for v in _fixed(color, 3)]
        set_color = ((rgb[2] << 16) | (rgb[1] << 8) | rgb[0]) & 0xFFFFFFFF
        leds = []
        for brightness in strengths:
            if brightness // 2 > 1:
                leds.append(((((0xE0 | (brightness * 2)) & 0xFF) << 24) | set_color) & 0xFFFFFFFF)
            else:
                leds.append(0xE0000000)
        audio_device.current().mic_leds = leds
        return True
