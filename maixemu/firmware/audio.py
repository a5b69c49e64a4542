"""MaixPy ``audio``: ``audio.Audio`` buffers and WAV files played to / recorded from ``Maix.I2S``.

Follows ``py_audio.c`` and ``wav.c`` (MaixPy-v1; kendryte/canmv differs only in the ``[CANMV]``
prefix of its messages):

* ``Audio(array=None, path=None, *, points=1024, is_create=False, samplerate=44100)``: a buffer of
  32-bit I2S words (``array``: any buffer, taken as words; neither: ``points`` zero words), or a file
  on the device storage. Every file is parsed as WAV whatever its name (the firmware's format field
  starts at WAV). ``is_create=True`` creates/truncates the file for recording, 16-bit, header
  written by ``finish()``.
* ``play_process(i2s)`` reads the header (``[channels, samplerate, byterate, blockalign,
  bitspersample, datasize]``, printing the firmware's ``[MAIXPY]: ...`` lines); only a 16-byte
  ``fmt `` chunk, PCM, 1 or 2 channels, 8/16/24 bits, an optional ``LIST`` chunk and then ``data``
  pass (``OSError: wav init error`` with the firmware's error code otherwise — a WAV with an
  18-byte ``fmt`` chunk or a ``fact`` chunk fails on the board too).
* ``play()`` sends the next ``i2s.points`` frames (mono is duplicated to stereo), scaled by
  ``volume()`` as the firmware does it (float32 multiply, truncation); returns 1, or 0 at the end
  of the file (which is the end of the *file*: bytes after the data chunk are played too).
* ``record_process(i2s, channels=1)``, ``record(audio)`` (the low 16 bits of each word),
  ``finish()``, ``to_bytes()`` (``points * 4`` bytes), ``volume([0..100])`` (default 40),
  ``init(...)``, ``__deinit__()``.

Where the firmware would crash the board (``play()`` before ``play_process``, ``record`` on an
Audio not opened for recording) we raise an error saying so.
"""

from __future__ import annotations

import errno
import struct
from typing import Any

import numpy as np

from .chip import audio_device
from .mp import notices
from .chip.heap import check_alloc

__all__ = ["Audio"]

I2S_AUDIO, EXT_AUDIO, FILE_AUDIO = 0, 1, 2
MAX_SAMPLE_POINTS = 1024

#: wav_init's status codes (``wav.h``).
WAV_ERRORS = {
    3: "UNVALID_RIFF_ID", 4: "UNVALID_RIFF_SIZE", 5: "UNVALID_WAVE_ID", 6: "UNVALID_FMT_ID",
    7: "UNVALID_FMT_SIZE", 8: "UNSUPPORETD_FORMATTAG", 9: "UNSUPPORETD_NUMBER_OF_CHANNEL",
    11: "UNSUPPORETD_BITS_PER_SAMPLE", 12: "UNVALID_LIST_SIZE", 13: "UNVALID_DATA_ID",
}


def _brand() -> str:
    return audio_device.current().brand


def _say(text: str) -> None:
    print(f"[{_brand()}]: {text}")


class WavHeader:
    """What ``wav_init`` reads from the first ``head_size`` bytes of a file, or its error code."""

    def __init__(self, head: bytes, head_size: int, file_size: int):
        self.error = 0
        self.head_len = 0
        self.numchannels = self.samplerate = self.byterate = self.blockalign = 0
        self.bitspersample = self.datasize = 0
        buf = head[:head_size].ljust(head_size + 8, b"\0")

        def word(at: int) -> int:
            return struct.unpack_from("<I", buf, at)[0] if at + 4 <= len(buf) else 0

        def half(at: int) -> int:
            return struct.unpack_from("<H", buf, at)[0] if at + 2 <= len(buf) else 0

        def tag(at: int) -> bytes:
            return bytes(buf[at:at + 4])

        if tag(0) != b"RIFF":
            self.error = 3
        elif word(4) + 8 != file_size and word(4) != file_size:
            self.error = 4
        elif tag(8) != b"WAVE":
            self.error = 5
        elif tag(12) != b"fmt ":
            self.error = 6
        elif word(16) != 0x10:
            self.error = 7
        elif half(20) != 1:
            self.error = 8
        else:
            self._format(word, half, tag, head_size)

    def _format(self, word, half, tag, head_size: int) -> None:
        self.numchannels = half(22)
        if self.numchannels not in (1, 2):
            self.error = 9
            return
        self.samplerate, self.byterate = word(24), word(28)
        self.blockalign, self.bitspersample = half(32), half(34)
        if self.bitspersample not in (8, 16, 24):
            self.error = 11
            return
        index = 36
        if tag(index) == b"LIST":  # one LIST chunk may sit between fmt and data
            index += 4
            index += word(index) + 4
            if index >= head_size:
                self.error = 12
                return
        if tag(index) != b"data":
            self.error = 13
            return
        self.datasize = word(index + 4)
        self.head_len = index + 8

    def as_list(self) -> list[int]:
        return [self.numchannels, self.samplerate, self.byterate, self.blockalign, self.bitspersample, self.datasize]


def wav_header_bytes(numchannels: int, samplerate: int, bitspersample: int, data_bytes: int) -> bytes:
    """The 44-byte header ``wav_finish`` writes (file chunk, 16-byte fmt chunk, data chunk)."""
    blockalign = numchannels * (bitspersample // 8)
    return (b"RIFF" + struct.pack("<I", (44 - 8 + data_bytes) & 0xFFFFFFFF) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, numchannels, samplerate & 0xFFFFFFFF,
                                    (samplerate * blockalign) & 0xFFFFFFFF, blockalign, bitspersample)
            + b"data" + struct.pack("<I", data_bytes & 0xFFFFFFFF))


def _scale(samples: np.ndarray, volume: float) -> np.ndarray:
    """``(int16_t)(x * volume / 100)`` in float32, truncated toward zero, as ``wav_play`` computes it."""
    scaled = samples.astype(np.float32) * np.float32(volume) / np.float32(100)
    return np.trunc(scaled).astype(np.int32).astype(np.int16)


class Audio:
    """An audio buffer or WAV file; see the module docstring."""

    def __init__(self, array: Any = None, path: Any = None, *, points: int = MAX_SAMPLE_POINTS,
                 is_create: bool = False, samplerate: int = 44100):
        self.type = EXT_AUDIO
        self._words: np.ndarray | None = None
        self.points = 0
        self._volume = 40.0
        self._fp: Any = None
        self._path = ""
        self._dev: Any = None
        self._play: WavHeader | None = None
        self._record: dict[str, int] | None = None
        self._init(array, path, points, is_create, samplerate)

    @classmethod
    def _from_i2s(cls, words: np.ndarray) -> "Audio":
        obj = cls.__new__(cls)
        cls.__init__(obj, points=0)
        obj.type = I2S_AUDIO
        obj._words = np.ascontiguousarray(words, dtype=np.uint32)
        obj.points = len(obj._words)
        return obj

    # -- construction ----------------------------------------------------------------------------
    def _init(self, array: Any, path: Any, points: int, is_create: bool, samplerate: int) -> bool:
        if array is not None:
            data = array.encode("utf-8") if isinstance(array, str) else memoryview(array).tobytes()
            usable = len(data) - len(data) % 4
            self._words = np.frombuffer(data[:usable], dtype="<u4").astype(np.uint32)
            self.points = len(self._words)
            return True
        if path is None:
            count = int(points) & 0xFFFFFFFF
            check_alloc(count)
            self.points = count
            self._words = np.zeros(count, dtype=np.uint32) if count else None
            return True
        if not isinstance(path, str):
            raise TypeError(f"can't convert {type(path).__name__} to str")
        self._open(path, "wb" if is_create else "rb")
        if is_create:
            self._finish()
            self._record = {"samplerate": int(samplerate), "chunk_size": 0}
            self._fp.seek(44)
        self.type = FILE_AUDIO
        return True

    def _open(self, path: str, mode: str) -> None:
        from . import uos

        self._fp = uos.open_device(path, mode)
        self._path = path
        audio_device.current().open_files.append(self._fp)

    def init(self, array: Any = None, path: Any = None, *, points: int = MAX_SAMPLE_POINTS,
             is_create: bool = False, samplerate: int = 44100) -> bool:
        return self._init(array, path, points, is_create, samplerate)

    # -- buffers ---------------------------------------------------------------------------------
    def to_bytes(self) -> bytearray:
        if self._words is None or self.points == 0:
            raise AttributeError("empty Audio")
        return bytearray(self._words[: self.points].astype("<u4").tobytes())

    def _words_for_play(self) -> np.ndarray:
        if self._words is None:
            return np.zeros(0, dtype=np.uint32)
        return self._words[: self.points]

    def volume(self, value: float | None = None) -> float:
        if value is None:
            return float(self._volume)
        v = float(value)
        if v < 0 or v > 100:
            raise ValueError("value:[0,100]")
        self._volume = float(np.float32(v))
        return float(self._volume)

    # -- playing ---------------------------------------------------------------------------------
    def _attach(self, dev: Any) -> None:
        if not isinstance(dev, audio_device.I2sDevice):
            raise ValueError("Invaild I2S device")
        self._dev = dev
        self.points = dev.points_num
        self._words = dev.buf

    def _file_size(self) -> int:
        if self._fp is None or self._fp.closed:
            raise OSError(errno.EBADF, "EBADF: this Audio has no open file (audio.Audio(path=...) opens one)")
        here = self._fp.tell()
        self._fp.seek(0, 2)
        size = self._fp.tell()
        self._fp.seek(here)
        return size

    def play_process(self, i2s: Any) -> Any:
        self._attach(i2s)
        size = self._file_size()
        if size == 0:
            _say("file length is 0")
            return False
        self._finish()  # wav_play_process starts with wav_finish: a second call closes the file first
        if self._fp is None or self._fp.closed:
            _say("read head error close file")
            raise OSError(errno.EBADF, "EBADF: play_process was called twice; open a new audio.Audio(path=...)")
        self._fp.seek(0)
        head_size = self.points * 4
        head = self._fp.read(head_size)
        header = WavHeader(head, head_size, size)
        if header.error:
            _say(f"wav error code : {header.error}")
            self._close_file()
            raise OSError(f"wav init error ({WAV_ERRORS.get(header.error, header.error)}; the board accepts "
                          "PCM WAV with a 16-byte fmt chunk, at most a LIST chunk, then data)")
        _say(f"result = {header.error}")
        for name in ("numchannels", "samplerate", "byterate", "blockalign", "bitspersample", "datasize"):
            _say(f"{name} = {getattr(header, name)}")
        self._fp.seek(header.head_len)
        if self._words is not None:
            self._words[:] = 0
        self._play = header
        if header.bitspersample != 16:
            notices.notice_once(f"audio-bits-{header.bitspersample}",
                                f"audio.Audio.play: {header.bitspersample}-bit WAV files are played as decoded PCM; "
                                "the firmware scales them as 16-bit words, which distorts them on the board")
        return header.as_list()

    def play(self) -> int | None:
        header = self._play
        if header is None:
            raise OSError(errno.EPERM, "EPERM: call play_process(i2s) first (on the board play() crashes without it)")
        stereo = header.numchannels == 2
        want = self.points * (4 if stereo else 2)
        data = self._fp.read(want) if not self._fp.closed else b""
        if len(data) == 0:
            return 0
        frames = self._decode(data, header, stereo)
        self._dev._play_frames(frames)
        return 1

    def _decode(self, data: bytes, header: WavHeader, stereo: bool) -> np.ndarray:
        bits = header.bitspersample
        if bits == 16:
            usable = len(data) - len(data) % (4 if stereo else 2)
            samples = _scale(np.frombuffer(data[:usable], dtype="<i2"), self._volume)
            return samples.reshape(-1, 2) if stereo else np.repeat(samples[:, None], 2, axis=1)
        from ..host.audio import _pcm_to_stereo16

        width = bits // 8
        channels = 2 if stereo else 1
        usable = len(data) - len(data) % (width * channels)
        frames = _pcm_to_stereo16(data[:usable], channels, width)
        return _scale(frames, self._volume)

    # -- recording -------------------------------------------------------------------------------
    def record_process(self, dev: Any = None, channels: int = 1) -> Any:
        self._attach(dev)
        if self._file_size() != 0:
            _say("file length isn't empty")
            return False
        if int(channels) > 2:
            _say("The number of channels must be less than or equal to 2")
            return False
        self._finish()  # wav_record_process starts with wav_finish, which closes an is_create file
        if self._fp is None or self._fp.closed:
            _say("seek error  close file")
            raise OSError(errno.EBADF, "EBADF: this file was closed by wav_finish (is_create=True already set up "
                                       "the recording: call record() directly)")
        self._record = {"samplerate": int(self._dev.sample_rate), "chunk_size": 0}
        self._fp.seek(44)
        if self._words is not None:
            self._words[:] = 0
        return None

    def record(self, record: Any) -> None:
        if not isinstance(record, Audio):
            raise TypeError(f"Audio.record needs an audio.Audio (from I2S.record), got {type(record).__name__}")
        state = self._record
        if state is None or self._fp is None or self._fp.closed:
            raise OSError(errno.EPERM, "EPERM: this Audio is not recording: open it with "
                                       "audio.Audio(path=..., is_create=True) or call record_process(i2s) "
                                       "(on the board this crashes)")
        low = (record._words_for_play() & 0xFFFF).astype("<u2")
        self._fp.write(low.tobytes())
        state["chunk_size"] += 2 * len(low)
        return None

    # -- the end ---------------------------------------------------------------------------------
    def _close_file(self) -> None:
        if self._fp is not None and not self._fp.closed:
            self._fp.close()

    def _finish(self) -> None:
        if self._play is not None:
            self._play = None
            self._close_file()
            self._fp = None
        state = self._record
        if state is not None:
            self._record = None
            rate = state["samplerate"]
            self._fp.seek(0)
            self._fp.write(wav_header_bytes(2, rate, 16, state["chunk_size"]))  # always 2 channels
            for name, value in (("numchannels", 2), ("samplerate", rate), ("byterate", rate * 4),
                                ("blockalign", 4), ("bitspersample", 16)):
                _say(f"{name} = {value}")
            self._close_file()

    def finish(self) -> None:
        self._finish()
        return None

    def __deinit__(self) -> None:
        if self.type == EXT_AUDIO:
            self._words = None
            self.points = 0
        return None

    def __repr__(self) -> str:
        address = 0 if self._words is None else 0x80000000 | (id(self._words) & 0x3FFFF8)
        return f"[{_brand()}]audio:(points={self.points}, buffer addr={address:x})"
