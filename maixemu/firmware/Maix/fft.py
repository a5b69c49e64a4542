"""``Maix.FFT``: the K210's hardware FFT as ``Maix_fft.c`` drives it — 16-bit fixed point, 64..512 points.

``FFT.run(byte, points=64, shift=0, direction=FFT.DIR_FORWARD)`` takes a buffer of 32-bit words (an
``Audio.to_bytes()``), uses the low 16 bits of each of the first ``points`` words as the real input
(imaginary 0; shorter buffers are zero-padded with ``[MAIXPY]FFT:Zero padding``) and returns
``points`` ``(real, imag)`` tuples. ``FFT.freq(points=64, sample_rate=16000)`` gives
``[k * (sample_rate // points)]`` and ``FFT.amplitude(list)`` ``2 * isqrt(r*r + i*i) // len`` per bin,
both in the firmware's unsigned integer arithmetic.

The accelerator itself is undocumented beyond its register map: ``fft_shift`` has one bit per
butterfly layer ("shift 1st layer" = bit 0), data are int16. This model is a radix-2
decimation-in-time FFT with Q15 twiddles (``round(32767 * cos)``), products rounded to nearest,
each layer's sums halved (arithmetic shift) when its shift bit is set and wrapped to int16 — so an unshifted
512-point transform of loud audio overflows as it does on the board (the MaixPy docs recommend a
shift for loud input). Results match the board in scale and behaviour; the last bits of rounding
are the model's, not verified against silicon.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..chip import audio_device
from ..mp.mp_args import int_arg

DIR_BACKWARD, DIR_FORWARD = 0, 1  # fft_direction_t: FFT_DIR_BACKWARD, FFT_DIR_FORWARD
POINTS = (64, 128, 256, 512)


def _brand() -> str:
    return audio_device.current().brand


def _wrap16(values: np.ndarray) -> np.ndarray:
    return ((values + 32768) & 0xFFFF) - 32768


@lru_cache(maxsize=16)
def _twiddles(size: int, forward: bool) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(size // 2)
    angle = 2 * math.pi * k / size
    sign = -1.0 if forward else 1.0
    return (np.rint(np.cos(angle) * 32767).astype(np.int64),
            np.rint(sign * np.sin(angle) * 32767).astype(np.int64))


@lru_cache(maxsize=8)
def _bit_reverse(n: int) -> np.ndarray:
    bits = n.bit_length() - 1
    index = np.arange(n)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((index >> b) & 1) << (bits - 1 - b)
    return out


def hardware_fft(real: np.ndarray, imag: np.ndarray, shift: int, forward: bool) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-point transform of int16 ``real``/``imag`` (length 64..512), see the module docstring."""
    n = len(real)
    order = _bit_reverse(n)
    re = np.asarray(real, dtype=np.int64)[order]
    im = np.asarray(imag, dtype=np.int64)[order]
    size, layer = 2, 0
    while size <= n:
        half = size // 2
        wr, wi = _twiddles(size, forward)
        re = re.reshape(-1, 2, half)
        im = im.reshape(-1, 2, half)
        ur, ui = re[:, 0, :], im[:, 0, :]
        vr, vi = re[:, 1, :], im[:, 1, :]
        tr = (vr * wr - vi * wi + 16384) >> 15
        ti = (vr * wi + vi * wr + 16384) >> 15
        top_r, top_i, bottom_r, bottom_i = ur + tr, ui + ti, ur - tr, ui - ti
        if (shift >> layer) & 1:
            top_r, top_i, bottom_r, bottom_i = top_r >> 1, top_i >> 1, bottom_r >> 1, bottom_i >> 1
        re = _wrap16(np.stack([top_r, bottom_r], axis=1)).reshape(-1)
        im = _wrap16(np.stack([top_i, bottom_i], axis=1)).reshape(-1)
        size *= 2
        layer += 1
    return re, im


def _buffer_words(byte: Any) -> np.ndarray:
    if byte is None:
        raise ValueError(f"[{_brand()}]FFT:invalid byte")
    try:
        data = memoryview(byte).cast("B").tobytes()
    except TypeError:
        if isinstance(byte, str):
            data = byte.encode("utf-8")
        else:
            raise TypeError("object with buffer protocol required") from None
    if len(data) % 4:
        raise ValueError(f"[{_brand()}]FFT:Buffer length must be a multiple of 4")
    return np.frombuffer(data, dtype="<u4")


def _u32(value: Any) -> int:
    return int_arg(value) & 0xFFFFFFFF


class FFT:
    """``FFT.run``, ``FFT.freq``, ``FFT.amplitude`` (called on the class; it has no instances)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "FFT":
        raise TypeError("cannot create 'FFT' instances")

    @staticmethod
    def run(byte: Any = None, points: int = 64, shift: int = 0, direction: int = DIR_FORWARD) -> list[tuple[int, int]]:
        count, mask, mode = _u32(points), _u32(shift) & 0x1FF, _u32(direction) & 1
        if count not in POINTS:
            raise ValueError(f"[{_brand()}]FFT:invalid points")
        words = _buffer_words(byte)
        if len(words) < count:
            print(f"[{_brand()}]FFT:Zero padding")
            words = np.concatenate([words, np.zeros(count - len(words), dtype=np.uint32)])
        real = (words[:count] & 0xFFFF).astype(np.uint16).view(np.int16)
        re, im = hardware_fft(real, np.zeros(count, dtype=np.int16), mask, forward=bool(mode))
        return list(zip(re.tolist(), im.tolist()))

    @staticmethod
    def freq(points: int = 64, sample_rate: int = 16000) -> list[int]:
        count, rate = _u32(points), _u32(sample_rate)
        if count == 0:
            raise ZeroDivisionError("FFT.freq: points must not be 0 (the board divides by it)")
        step = rate // count
        return [(step * i) & 0xFFFFFFFF for i in range(count)]

    @staticmethod
    def amplitude(list_obj: Any) -> list[int]:
        if type(list_obj) is not list:
            raise ValueError(f"[{_brand()}]FFT:obj is not a list")
        length = len(list_obj)
        out = []
        for item in list_obj:
            r, i = _u32(item[0]), _u32(item[1])
            amplitude = math.isqrt(((r * r) + (i * i)) & 0xFFFFFFFF)
            out.append((2 * amplitude & 0xFFFFFFFF) // length)
        return out
