"""``Maix.I2S``: the K210's three I2S buses, recording from the PC's microphone source and playing to its sink.

As ``Maix_i2s.c`` (MaixPy-v1 and kendryte/canmv, which differ only in the ``[CANMV]`` message
prefix): ``I2S(I2S.DEVICE_n, sample_points=1024, pll2=0, mclk=0)``, ``channel_config(channel,
mode, resolution=, cycles=, align_mode=)``, ``set_sample_rate(rate)``, ``record(points)`` /
``record(time=s)`` giving an ``audio.Audio``, ``wait_record()``, ``play(audio)``, ``init``,
``__deinit__`` and the constants, with the firmware's checks and messages.

Samples travel as the hardware moves them: one 32-bit DMA word per channel sample, left and right
alternating, sign-extended at the channel's resolution (``I2S.record(1024)`` holds 512 stereo
frames). After an ``Audio.play`` or a video's sound the bus is in the SDK's "divide by 16" mode
(one word = one stereo frame, left in the low half) until the next ``channel_config``. The sample
rate is what the divider gives (:mod:`~maixemu.firmware.chip.k210_clock`): ``set_sample_rate(16000)``
runs at 16 003 Hz, and the object's ``sample_rate`` says so in ``print(i2s)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..chip import audio_device, k210_clock
from ..audio import Audio
from ..chip.heap import check_alloc
from ..mp.mp_args import int_arg as _arg_int

DEVICE_0, DEVICE_1, DEVICE_2 = 0, 1, 2
CHANNEL_0, CHANNEL_1, CHANNEL_2, CHANNEL_3 = 0, 1, 2, 3
IGNORE_WORD_LENGTH, RESOLUTION_12_BIT, RESOLUTION_16_BIT = 0, 1, 2
RESOLUTION_20_BIT, RESOLUTION_24_BIT, RESOLUTION_32_BIT = 3, 4, 5
SCLK_CYCLES_16, SCLK_CYCLES_24, SCLK_CYCLES_32 = 0, 1, 2
TRANSMITTER, RECEIVER = 0, 1
STANDARD_MODE, RIGHT_JUSTIFYING_MODE, LEFT_JUSTIFYING_MODE = 1, 2, 4

MAX_SAMPLE_RATE = 4 * 1024 * 1024
MAX_SAMPLE_POINTS = 64 * 1024

#: Left shift that puts a 16-bit sample at each resolution (negative: right shift).
_RESOLUTION_SHIFT = {IGNORE_WORD_LENGTH: 0, RESOLUTION_12_BIT: -4, RESOLUTION_16_BIT: 0,
                     RESOLUTION_20_BIT: 4, RESOLUTION_24_BIT: 8, RESOLUTION_32_BIT: 16}


def _brand() -> str:
    return audio_device.current().brand


def words_from_frames(frames: np.ndarray, resolution: int) -> np.ndarray:
    """Stereo int16 frames -> the uint32 DMA words an I2S receiver delivers (L, R, L, R, ...)."""
    samples = frames.astype(np.int64).reshape(-1)
    shift = _RESOLUTION_SHIFT.get(resolution, 0)
    samples = samples << shift if shift >= 0 else samples >> -shift
    return (samples & 0xFFFFFFFF).astype(np.uint32)


def frames_from_words(words: np.ndarray, resolution: int, divide_16: bool) -> np.ndarray:
    """The uint32 DMA words an I2S transmitter sends -> stereo int16 frames."""
    words = np.asarray(words, dtype=np.uint32)
    if divide_16:  # one word per stereo frame: left in the low half
        low = (words & 0xFFFF).astype(np.uint16).view(np.int16)
        high = (words >> 16).astype(np.uint16).view(np.int16)
        return np.stack([low, high], axis=1)
    if len(words) % 2:
        words = np.append(words, np.uint32(0))
    shift = _RESOLUTION_SHIFT.get(resolution, 0)
    signed = words.view(np.int32).astype(np.int64)
    if shift >= 0:
        samples = ((signed >> shift) & 0xFFFF).astype(np.uint16).view(np.int16)
    else:
        samples = ((signed << -shift) & 0xFFFF).astype(np.uint16).view(np.int16)
    return samples.reshape(-1, 2)


class _Channel:
    __slots__ = ("resolution", "cycles", "align_mode", "mode")

    def __init__(self) -> None:
        self.resolution = self.cycles = self.align_mode = self.mode = 0


class I2S(audio_device.I2sDevice):
    """One I2S bus; see the module docstring."""

    DEVICE_0, DEVICE_1, DEVICE_2 = DEVICE_0, DEVICE_1, DEVICE_2
    CHANNEL_0, CHANNEL_1, CHANNEL_2, CHANNEL_3 = CHANNEL_0, CHANNEL_1, CHANNEL_2, CHANNEL_3
    IGNORE_WORD_LENGTH, RESOLUTION_12_BIT, RESOLUTION_16_BIT = IGNORE_WORD_LENGTH, RESOLUTION_12_BIT, RESOLUTION_16_BIT
    RESOLUTION_20_BIT, RESOLUTION_24_BIT, RESOLUTION_32_BIT = RESOLUTION_20_BIT, RESOLUTION_24_BIT, RESOLUTION_32_BIT
    SCLK_CYCLES_16, SCLK_CYCLES_24, SCLK_CYCLES_32 = SCLK_CYCLES_16, SCLK_CYCLES_24, SCLK_CYCLES_32
    TRANSMITTER, RECEIVER = TRANSMITTER, RECEIVER
    STANDARD_MODE, RIGHT_JUSTIFYING_MODE, LEFT_JUSTIFYING_MODE = STANDARD_MODE, RIGHT_JUSTIFYING_MODE, LEFT_JUSTIFYING_MODE

    def __init__(self, i2s_num: int, *, sample_points: int = 1024, pll2: int = 0, mclk: int = 0):
        number = _arg_int(i2s_num)
        if not 0 <= number < 3:
            raise ValueError(f"[{_brand()}]I2S{number}:does not exist")
        self.i2s_num = number
        self.sample_rate = 0
        self.channel = [_Channel() for _ in range(4)]
        self.cycles = SCLK_CYCLES_16
        self._init(sample_points, pll2, mclk)

    @property
    def _regs(self) -> audio_device.I2sRegisters:
        return audio_device.current().i2s[self.i2s_num]

    def _init(self, sample_points: int, pll2: int, mclk: int) -> bool:
        pll2, mclk, points = _arg_int(pll2), _arg_int(mclk), _arg_int(sample_points)
        if pll2 != 0:  # 262144000 in the docs' example; changes PLL2 for every I2S bus
            audio_device.current().pll2_hz = k210_clock.pll_frequency(pll2 & 0xFFFFFFFF)
        if mclk != 0:
            self.mclk_threshold = mclk
        if points > MAX_SAMPLE_POINTS or points < 0:
            raise ValueError(f"[{_brand()}]I2S:invalid buffer length")
        check_alloc(points)
        self.points_num = points
        self.buf = np.zeros(points, dtype=np.uint32)
        self.chn_mask = 0
        return True

    def init(self, *, sample_points: int = 1024, pll2: int = 0, mclk: int = 0) -> bool:
        return self._init(sample_points, pll2, mclk)

    def channel_config(self, channel: int = CHANNEL_0, mode: int = RECEIVER, *, resolution: int = RESOLUTION_16_BIT,
                       cycles: int = SCLK_CYCLES_32, align_mode: int = STANDARD_MODE) -> bool:
        channel, mode = _arg_int(channel) & 0xFFFFFFFF, _arg_int(mode) & 0xFFFFFFFF
        resolution, cycles = _arg_int(resolution) & 0xFFFFFFFF, _arg_int(cycles) & 0xFFFFFFFF
        align_mode = _arg_int(align_mode)
        brand = _brand()
        if channel > CHANNEL_3:
            raise ValueError(f"[{brand}]I2S:invalid i2s channle")
        slot = self.channel[channel]
        if resolution > RESOLUTION_32_BIT:
            raise ValueError(f"[{brand}]I2S:invalid resolution")
        slot.resolution = resolution
        if cycles > SCLK_CYCLES_32:
            raise ValueError(f"[{brand}]I2S:invalid cycles")
        slot.cycles = self.cycles = cycles
        if align_mode not in (STANDARD_MODE, RIGHT_JUSTIFYING_MODE, LEFT_JUSTIFYING_MODE):
            raise ValueError(f"[{brand}]I2S:invalid align mode")
        slot.align_mode = align_mode
        if mode > RECEIVER:
            raise ValueError(f"[{brand}]I2S:invalid cycles")  # sic: the firmware's message for a bad mode
        slot.mode = mode
        self.chn_mask |= 0x3 << (channel * 2)
        # i2s_init resets the block (divider back to 7, DMA word mode off); the channel's word
        # select size then goes into the CCR register that i2s_set_sample_rate reads.
        regs = self._regs
        regs.threshold = k210_clock.I2S_DEFAULT_THRESHOLD
        regs.divide_16 = False
        regs.word_select = cycles
        return True

    def set_sample_rate(self, sample_rate: int) -> bool:
        rate = _arg_int(sample_rate) & 0xFFFFFFFF
        if rate > MAX_SAMPLE_RATE or rate == 0:
            raise ValueError(f"[{_brand()}]I2S:invalid sample rate")
        clock = audio_device.current().set_i2s_rate(self.i2s_num, rate)
        if self.cycles in (SCLK_CYCLES_16, SCLK_CYCLES_24, SCLK_CYCLES_32):
            self.sample_rate = k210_clock.i2s_sample_rate(clock, self.cycles)
        return True

    # -- what the hardware does -----------------------------------------------------------------
    def _hardware_rate(self) -> int:
        """Frames per second the bus really runs at now (its divider and word-select size)."""
        return audio_device.current().i2s_rate(self.i2s_num)

    def _resolution(self, mode: int) -> int:
        for slot in self.channel:
            if slot.mode == mode and slot.resolution:
                return slot.resolution
        return RESOLUTION_16_BIT

    def record(self, points: int = 0, *, time: int = 0) -> Any:
        points, seconds = _arg_int(points), _arg_int(time)
        brand = _brand()
        if points > 0:
            count = points
        elif seconds > 0:
            if self.sample_rate <= 0:
                raise ValueError(f"[{brand}]I2S:please set sample rate")
            count = self.sample_rate * seconds
            if count > self.points_num:
                raise ValueError(f"[{brand}]I2S:sampling size is out of bounds")
        else:
            raise ValueError(f"[{brand}]I2S:please input recording points or time")
        check_alloc(count)
        frames = audio_device.current().record((count + 1) // 2, self._hardware_rate())
        words = words_from_frames(frames, self._resolution(RECEIVER))[:count]
        return Audio._from_i2s(words)

    def wait_record(self) -> None:
        audio_device.current().wait_idle(audio_device.DMA_RECEIVE)
        return None

    def play(self, audio: Any) -> None:
        if not isinstance(audio, Audio):
            raise TypeError(f"I2S.play needs an audio.Audio (from I2S.record or audio.Audio(...)), "
                            f"got {type(audio).__name__}")
        words = audio._words_for_play()
        frames = frames_from_words(words, self._resolution(TRANSMITTER), self._regs.divide_16)
        audio_device.current().play(frames, self._hardware_rate())
        return None

    def _play_frames(self, frames: np.ndarray) -> None:
        """``i2s_play`` of 16-bit stereo PCM (WAV and AVI sound): switches the bus to divide-16 mode."""
        audio_device.current().play_pcm(self.i2s_num, frames)

    def __deinit__(self) -> None:
        self.buf = np.zeros(0, dtype=np.uint32)
        return None

    def __repr__(self) -> str:
        brand = _brand()
        lines = [f"[{brand}]i2s{self.i2s_num}:(sampling rate={self.sample_rate}, sampling points={self.points_num})"]
        for index, slot in enumerate(self.channel):
            lines.append(f"[{brand}]channle{index}:(resolution={slot.resolution}, cycles={slot.cycles}, "
                         f"align_mode={slot.align_mode}, mode={slot.mode})")
        return "\n".join(lines) + "\n"
