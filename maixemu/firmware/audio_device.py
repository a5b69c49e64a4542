"""The board's audio path as one object: PLL2, the I2S DMA channels' timing, the PC's speaker and microphone.

``Maix.I2S``, ``audio.Audio``, ``video`` playback and ``mic_array`` share one :class:`AudioDevice`
per powered-on board (``current().audio``, :func:`current`). The session wires the PC side when it
builds the board (``--audio-out``/``--audio-in``): a sink that takes stereo ``int16`` frames and a
source that gives them. Without one nothing is played and the microphone hears silence.

Timing is the DMA's: a transfer of N frames keeps its DMA channel busy for N / rate seconds, and
the next transfer on that channel first waits for it (``dmac_wait_idle`` in the SDK), so a
``while True: tx.play(rx.record(1024))`` loop runs at the device's pace on the board clock
(:mod:`~maixemu.firmware.utime`, virtual in tests that install one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..host import audio as host_audio
from . import k210_clock, utime
from . import state as _state

#: DMA channels the firmware uses: I2S receive (and WAV recording) on 3, I2S/WAV/AVI playback on 4.
DMA_RECEIVE, DMA_SEND = 3, 4

SinkFactory = Callable[[], host_audio.AudioSink]
SourceFactory = Callable[[], host_audio.AudioSource]

class I2sRegisters:
    """The parts of one I2S block's registers that decide how it sounds; shared by every ``I2S``
    object of that bus (two ``I2S(I2S.DEVICE_0)`` objects drive the same hardware, and a video
    playing sound re-programs device 0 under the script's feet, as on the board)."""

    __slots__ = ("threshold", "word_select", "divide_16")

    def __init__(self) -> None:
        self.threshold = k210_clock.I2S_DEFAULT_THRESHOLD  # clock divider
        self.word_select = 0  # CCR clk_word_size: 0/1/2 = 16/24/32 SCLK cycles
        self.divide_16 = False  # DMA "divide by 16": one 32-bit word carries a whole stereo frame


class AudioDevice:
    """One board's audio hardware and its PC adapters (opened lazily, closed by :meth:`close`)."""

    def __init__(self, sink_factory: SinkFactory | None = None, source_factory: SourceFactory | None = None):
        self.pll2_hz = k210_clock.pll_frequency(k210_clock.PLL2_BOOT_REQUEST_HZ)
        #: Message prefix of the firmware build: "MAIXPY" (MaixPy-v1) or "CANMV" (kendryte/canmv).
        self.brand = "MAIXPY"
        self._sink_factory = sink_factory or host_audio.NullAudioSink
        self._source_factory = source_factory or host_audio.SilenceSource
        self._sink: host_audio.AudioSink | None = None
        self._source: host_audio.AudioSource | None = None
        self._busy_until_ns: dict[int, int] = {}
        self.i2s = [I2sRegisters() for _ in range(3)]
        self.frames_played = 0
        self.frames_recorded = 0
        #: The 12 SK9822 LEDs of a microphone-array board, as ``mic_array.set_led`` last sent them.
        self.mic_leds: list[int] = [0xE0000000] * 12
        self.mic_array_ready = False
        #: Files ``audio.Audio`` opened; the device leaves them to the script, the emulator closes
        #: them when the board powers off.
        self.open_files: list[Any] = []

    # -- PC side ---------------------------------------------------------------------------------
    @property
    def sink(self) -> host_audio.AudioSink:
        if self._sink is None:
            self._sink = self._sink_factory()
        return self._sink

    @property
    def source(self) -> host_audio.AudioSource:
        if self._source is None:
            self._source = self._source_factory()
        return self._source

    # -- DMA timing ------------------------------------------------------------------------------
    def wait_idle(self, channel: int) -> None:
        """Block until the last transfer on ``channel`` has finished (``dmac_wait_idle``)."""
        left = self._busy_until_ns.get(channel, 0) - utime._now_ns()
        if left > 0:
            utime._hardware_wait_ns(left)

    def _start(self, channel: int, frames: int, rate: int) -> None:
        self.wait_idle(channel)
        duration = int(frames * 1_000_000_000 / max(1, rate))
        self._busy_until_ns[channel] = utime._now_ns() + duration

    def i2s_rate(self, bus: int) -> int:
        """Frames per second I2S ``bus`` runs at with its current divider and word-select size."""
        regs = self.i2s[bus]
        clock = k210_clock.i2s_clock(self.pll2_hz, regs.threshold)
        return max(1, k210_clock.i2s_sample_rate(clock, regs.word_select))

    def set_i2s_rate(self, bus: int, sample_rate: int) -> int:
        """``i2s_set_sample_rate``: program the divider of ``bus``; returns the block clock in Hz."""
        regs = self.i2s[bus]
        regs.threshold = k210_clock.i2s_threshold(self.pll2_hz, sample_rate, regs.word_select)
        return k210_clock.i2s_clock(self.pll2_hz, regs.threshold)

    # -- transfers -------------------------------------------------------------------------------
    def play(self, frames: np.ndarray, rate: int) -> None:
        """Send stereo int16 frames out at ``rate`` frames/s (waits for the previous send first)."""
        self._start(DMA_SEND, len(frames), rate)
        self.sink.write(frames, rate)
        self.frames_played += len(frames)

    def play_pcm(self, bus: int, frames: np.ndarray) -> None:
        """``i2s_play`` of 16-bit PCM (WAV files, AVI sound): the bus goes to divide-16 word mode."""
        self.i2s[bus].divide_16 = True
        self.play(frames, self.i2s_rate(bus))

    def record(self, count: int, rate: int) -> np.ndarray:
        """The next ``count`` stereo int16 frames the microphone hears at ``rate`` frames/s."""
        self._start(DMA_RECEIVE, count, rate)
        frames = self.source.read(count, rate)
        self.frames_recorded += count
        return frames

    def close(self) -> None:
        for handle in self.open_files:
            try:
                handle.close()
            except OSError:
                pass
        self.open_files.clear()
        for adapter in (self._sink, self._source):
            if adapter is not None:
                adapter.close()
        self._sink = self._source = None


def current() -> AudioDevice:
    """The audio hardware of the running board (``maixemu.firmware.state.current().audio``)."""
    return _state.current().audio
