"""A powered-on board for the audio/video/power tests: storage in a temp folder, a virtual clock,
a memory speaker and a chosen microphone source. Used as a context manager by the test modules."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from maixemu.firmware.chip import audio_device
from maixemu.firmware.state import BoardState, activate, deactivate
from maixemu.host import audio as host_audio
from maixemu.host import storage


class Speaker(host_audio.AudioSink):
    """Keeps every chunk the board played, with its rate."""

    name = "test-speaker"

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[tuple[np.ndarray, int]] = []

    def _write(self, frames: np.ndarray, rate: int) -> None:
        self.chunks.append((frames.copy(), rate))

    @property
    def frames(self) -> np.ndarray:
        return np.concatenate([c for c, _ in self.chunks]) if self.chunks else np.zeros((0, 2), np.int16)


class Clock:
    """Virtual board time: sleeping advances it, nothing else does."""

    def __init__(self) -> None:
        self.ns = 0

    def now(self) -> int:
        return self.ns

    def sleep(self, ns: int) -> None:
        self.ns += max(0, int(ns))


class Board:
    def __init__(self, folder: Path, source: host_audio.AudioSource):
        self.sd = folder / "sd"
        self.flash = folder / "flash"
        self.speaker = Speaker()
        self.source = source
        self.clock = Clock()


@contextmanager
def media_board(folder: Path, source: host_audio.AudioSource | None = None) -> Iterator[Board]:
    board = Board(folder, source or host_audio.SilenceSource())
    board.sd.mkdir(parents=True, exist_ok=True)
    board.flash.mkdir(parents=True, exist_ok=True)
    state = BoardState(storage=storage.Storage(sd_dir=board.sd, flash_dir=board.flash))  # a power-on
    state.plug(audio_device.AudioDevice(lambda: board.speaker, lambda: board.source))
    state.clock.use(board.clock.now, board.clock.sleep)
    activate(state)
    try:
        yield board
    finally:
        deactivate(state)
        state.close_parts()
