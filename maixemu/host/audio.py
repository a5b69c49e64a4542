"""Audio on the PC: where the board's I2S output goes (a sink) and what its microphone hears (a source).

``maixemu.firmware`` turns I2S transfers into stereo ``int16`` frames ``(N, 2)`` at the rate the
I2S clock really runs at, and hands them to an :class:`AudioSink`; ``I2S.record`` asks an
:class:`AudioSource` for the next frames. Chosen by :func:`open_sink` / :func:`open_source`:

sinks (``--audio-out``)
  * ``None`` / ``"auto"`` — a WAV file created in the system temp folder the first time the script
    plays something (a run that plays nothing leaves no file); its path is reported as a notice.
  * ``"wav:PATH"`` (or a path ending ``.wav``) — that WAV file (16-bit stereo PCM).
  * ``"speaker"`` — the PC's default output device through the optional ``sounddevice`` library
    (``pip install maixemu[audio]``); without it or without a device: a WAV file, with a notice.
  * ``"none"`` — frames are counted and dropped.

sources (``--audio-in``)
  * ``None`` / ``"silence"`` — zeros (the default: nothing to hear, record demos still run).
  * ``"tone"`` / ``"tone:HZ"`` / ``"tone:HZ:AMPLITUDE"`` — a sine (440 Hz, amplitude 8000 by default).
  * ``"PATH.wav"`` (or ``"wav:PATH"``) — a WAV file, resampled to the rate asked for, looped.
  * ``"mic"`` — the PC's default input device through ``sounddevice``.

WAV files are written with their header patched after every chunk, so a recording stays a valid
WAV file however the run ends. This module imports nothing from ``maixemu.firmware``.
"""

from __future__ import annotations

import math
import os
import struct
import tempfile
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

Notice = Callable[[str], None]

AUDIO_OUT_HINT = "use --audio-out wav:OUT.wav|speaker|none"
AUDIO_IN_HINT = "use --audio-in silence|tone[:HZ[:AMPLITUDE]]|FILE.wav|mic"
DEFAULT_TONE_HZ = 440.0
DEFAULT_TONE_AMPLITUDE = 8000


class AudioError(RuntimeError):
    """An audio sink or source could not be opened or used; the text says what to do."""


def _as_frames(frames: np.ndarray) -> np.ndarray:
    frames = np.asarray(frames)
    if frames.ndim != 2 or frames.shape[1] != 2 or frames.dtype != np.int16:
        raise AudioError(f"audio frames must be an (N, 2) int16 array, got {frames.dtype} {frames.shape}")
    return frames


def resample(frames: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Linear-interpolation resampling of ``(N, C)`` int16 frames (enough for listening and demos)."""
    if rate_in == rate_out or len(frames) == 0:
        return frames
    count = max(1, int(round(len(frames) * rate_out / rate_in)))
    positions = np.arange(count) * (rate_in / rate_out)
    source = np.arange(len(frames))
    out = np.empty((count, frames.shape[1]), dtype=np.int16)
    for channel in range(frames.shape[1]):
        out[:, channel] = np.rint(np.interp(positions, source, frames[:, channel])).astype(np.int16)
    return out


# ------------------------------------------------------------------------------------------ sinks
class AudioSink:
    """Base of all sinks: ``write(frames, rate)`` stereo int16 frames, ``close()``, ``frames_written``."""

    name = "sink"

    def __init__(self) -> None:
        self.frames_written = 0
        self.rate: int | None = None
        self.closed = False

    def write(self, frames: np.ndarray, rate: int) -> None:
        frames = _as_frames(frames)
        if self.closed or len(frames) == 0:
            return
        rate = int(rate)
        if self.rate is None:
            self.rate = rate
        self._write(frames, rate)
        self.frames_written += len(frames)

    def _write(self, frames: np.ndarray, rate: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} frames_written={self.frames_written}>"


class NullAudioSink(AudioSink):
    """Counts frames and drops them."""

    name = "none"

    def _write(self, frames: np.ndarray, rate: int) -> None:
        pass


class WavFileSink(AudioSink):
    """16-bit stereo PCM WAV; the sample rate is the first chunk's, later chunks at another rate are
    resampled to it (one notice). ``path`` may be a callable giving the path on first write (the
    default sink creates its temp file only when something is played)."""

    def __init__(self, path: str | os.PathLike | Callable[[], Path], *, on_notice: Notice | None = None):
        super().__init__()
        self._path_source = path
        self.path: Path | None = None if callable(path) else Path(path)
        self.name = f"wav:{self.path}" if self.path else "wav:(temp file on first sound)"
        self._notice = on_notice
        self._fp: BinaryIO | None = None
        self._data_bytes = 0
        self._told_rate = False

    def _open(self, rate: int) -> BinaryIO:
        if self.path is None:
            self.path = Path(self._path_source())  # type: ignore[operator]  # (callable: checked in __init__)
            self.name = f"wav:{self.path}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fp = self._fp = open(self.path, "wb")
        except OSError as exc:
            raise AudioError(f"cannot write the audio output {self.path}: {exc}; {AUDIO_OUT_HINT}") from None
        fp.write(_wav_header(rate, 2, 0))
        if self._notice is not None:
            self._notice(f"maixemu: I2S audio output is recorded to {self.path} ({rate} Hz stereo)")
        return fp

    def _write(self, frames: np.ndarray, rate: int) -> None:
        file_rate = rate if self.rate is None else self.rate  # (write() set it from the first chunk)
        fp = self._fp if self._fp is not None else self._open(file_rate)
        if rate != file_rate:
            if not self._told_rate and self._notice is not None:
                self._notice(f"maixemu: the I2S rate changed to {rate} Hz; {self.path} stays at {file_rate} Hz "
                             "(later sound is resampled)")
                self._told_rate = True
            frames = resample(frames, rate, file_rate)
        data = frames.astype("<i2").tobytes()
        fp.write(data)
        self._data_bytes += len(data)
        self._patch_header(fp)

    def _patch_header(self, fp: BinaryIO) -> None:
        end = fp.tell()
        fp.seek(4)
        fp.write(struct.pack("<I", 36 + self._data_bytes))
        fp.seek(40)
        fp.write(struct.pack("<I", self._data_bytes))
        fp.seek(end)
        fp.flush()

    def close(self) -> None:
        if self._fp is not None:
            try:
                self._fp.close()
            finally:
                self._fp = None
        super().close()


class SpeakerSink(AudioSink):
    """The PC's default output device (``sounddevice``); opened at the first chunk's rate."""

    name = "speaker"

    def __init__(self, sounddevice_module) -> None:
        super().__init__()
        self._sd = sounddevice_module
        self._stream: Any = None  # a sounddevice stream (untyped)

    def _write(self, frames: np.ndarray, rate: int) -> None:
        if self._stream is None:
            self._stream = self._sd.OutputStream(samplerate=rate, channels=2, dtype="int16")
            self._stream.start()
        device_rate = rate if self.rate is None else self.rate  # (write() set it from the first chunk)
        if rate != device_rate:
            frames = resample(frames, rate, device_rate)
        self._stream.write(np.ascontiguousarray(frames))

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            except Exception:  # a broken device must not spoil the end of a run
                pass
            self._stream = None
        super().close()


def _wav_header(rate: int, channels: int, data_bytes: int) -> bytes:
    block = channels * 2
    return (b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block, block, 16)
            + b"data" + struct.pack("<I", data_bytes))


def _sounddevice(kind: str, on_notice: Notice):
    """The ``sounddevice`` module if it imports and has a default ``kind`` ("output"/"input") device."""
    try:
        import sounddevice  # optional: pip install maixemu[audio]
    except (ImportError, OSError) as exc:  # OSError: the PortAudio library itself is missing
        on_notice(f"maixemu: no sound {kind} ({exc.__class__.__name__}: {exc}); "
                  "pip install maixemu[audio] (and PortAudio) for the PC's sound device")
        return None
    try:
        sounddevice.query_devices(kind=kind)
    except Exception as exc:
        on_notice(f"maixemu: no default sound {kind} device ({exc})")
        return None
    return sounddevice


def _temp_wav_path() -> Path:
    handle, name = tempfile.mkstemp(prefix="maixemu-audio-", suffix=".wav")
    os.close(handle)
    return Path(name)


def open_sink(spec: str | None, *, on_notice: Notice = print) -> AudioSink:
    """The sink for an ``--audio-out`` value (see the module docstring)."""
    text = (spec or "auto").strip()
    low = text.lower()
    if low in ("auto", ""):
        return WavFileSink(_temp_wav_path, on_notice=on_notice)
    if low == "none":
        return NullAudioSink()
    if low == "speaker":
        sd = _sounddevice("output", on_notice)
        if sd is None:
            on_notice("maixemu: the I2S output goes to a WAV file instead")
            return WavFileSink(_temp_wav_path, on_notice=on_notice)
        return SpeakerSink(sd)
    if low.startswith("wav:"):
        target = text[4:].strip()
        if not target:
            raise AudioError(f"wav: needs a path, e.g. wav:out.wav; {AUDIO_OUT_HINT}")
        return WavFileSink(Path(target), on_notice=on_notice)
    if low.endswith(".wav"):
        return WavFileSink(Path(text), on_notice=on_notice)
    raise AudioError(f"unknown audio output {spec!r}; {AUDIO_OUT_HINT}")


# ---------------------------------------------------------------------------------------- sources
class AudioSource:
    """Base of all sources: ``read(count, rate)`` gives the next ``count`` stereo int16 frames."""

    name = "source"

    def read(self, count: int, rate: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        pass


class SilenceSource(AudioSource):
    name = "silence"

    def read(self, count: int, rate: int) -> np.ndarray:
        return np.zeros((max(0, int(count)), 2), dtype=np.int16)


class ToneSource(AudioSource):
    """A continuous sine: the phase carries over from one read to the next."""

    def __init__(self, hz: float = DEFAULT_TONE_HZ, amplitude: int = DEFAULT_TONE_AMPLITUDE):
        if not (hz > 0 and math.isfinite(hz)):
            raise AudioError(f"tone frequency must be > 0 Hz, got {hz}; {AUDIO_IN_HINT}")
        if not 0 <= amplitude <= 32767:
            raise AudioError(f"tone amplitude must be 0..32767, got {amplitude}; {AUDIO_IN_HINT}")
        self.hz = float(hz)
        self.amplitude = int(amplitude)
        self.name = f"tone:{self.hz:g}:{self.amplitude}"
        self._phase = 0.0

    def read(self, count: int, rate: int) -> np.ndarray:
        count = max(0, int(count))
        step = 2 * math.pi * self.hz / max(1, int(rate))
        phases = self._phase + step * np.arange(count)
        self._phase = float((self._phase + step * count) % (2 * math.pi))
        mono = np.rint(self.amplitude * np.sin(phases)).astype(np.int16)
        return np.stack([mono, mono], axis=1)


class WavFileSource(AudioSource):
    """A PCM WAV file (8/16/24/32-bit, mono or stereo), resampled to the rate asked for, looped."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.name = f"wav:{self.path}"
        try:
            with wave.open(str(self.path), "rb") as wav:
                channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
                raw = wav.readframes(wav.getnframes())
        except (OSError, wave.Error, EOFError) as exc:
            raise AudioError(f"cannot read the audio input {self.path}: {exc}; {AUDIO_IN_HINT}") from None
        self.frames = _pcm_to_stereo16(raw, channels, width)
        self.rate = rate
        self._cache: dict[int, np.ndarray] = {}
        self._position = 0.0  # seconds into the file

    def read(self, count: int, rate: int) -> np.ndarray:
        count = max(0, int(count))
        if len(self.frames) == 0:
            return np.zeros((count, 2), dtype=np.int16)
        rate = max(1, int(rate))
        at_rate = self._cache.get(rate)
        if at_rate is None:
            at_rate = self._cache[rate] = resample(self.frames, self.rate, rate)
        start = int(round(self._position * rate)) % len(at_rate)
        index = (start + np.arange(count)) % len(at_rate)
        self._position = ((start + count) % len(at_rate)) / rate
        return at_rate[index]


def _pcm_to_stereo16(raw: bytes, channels: int, width: int) -> np.ndarray:
    if width == 1:
        samples = (np.frombuffer(raw, dtype=np.uint8).astype(np.int16) - 128) << 8
    elif width == 2:
        samples = np.frombuffer(raw, dtype="<i2").astype(np.int16)
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3)
        samples = (b[:, 1].astype(np.int16) | (b[:, 2].astype(np.int8).astype(np.int16) << 8))
    elif width == 4:
        samples = (np.frombuffer(raw, dtype="<i4") >> 16).astype(np.int16)
    else:
        raise AudioError(f"unsupported WAV sample width {width} bytes")
    frames = samples[: len(samples) - len(samples) % channels].reshape(-1, channels)
    if channels == 1:
        return np.repeat(frames, 2, axis=1)
    return np.ascontiguousarray(frames[:, :2])


class MicrophoneSource(AudioSource):
    """The PC's default input device (``sounddevice``), opened at the rate first asked for."""

    name = "mic"

    def __init__(self, sounddevice_module) -> None:
        self._sd = sounddevice_module
        self._stream: Any = None  # a sounddevice stream (untyped)
        self._rate: int | None = None

    def read(self, count: int, rate: int) -> np.ndarray:
        count = max(0, int(count))
        if self._stream is None or self._rate is None:
            self._rate = int(rate)
            self._stream = self._sd.InputStream(samplerate=self._rate, channels=2, dtype="int16")
            self._stream.start()
        device_rate = self._rate
        want = max(1, int(round(count * device_rate / max(1, int(rate)))))
        data, _overflowed = self._stream.read(want)
        frames = resample(np.asarray(data, dtype=np.int16), device_rate, int(rate))
        if len(frames) < count:
            frames = np.concatenate([frames, np.zeros((count - len(frames), 2), dtype=np.int16)])
        return frames[:count]

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            except Exception:
                pass
            self._stream = None


def open_source(spec: str | None, *, on_notice: Notice = print) -> AudioSource:
    """The source for an ``--audio-in`` value (see the module docstring)."""
    text = (spec or "silence").strip()
    low = text.lower()
    if low in ("silence", "", "none"):
        return SilenceSource()
    if low == "tone" or low.startswith("tone:"):
        parts = text.split(":")[1:]
        try:
            hz = float(parts[0]) if parts and parts[0] else DEFAULT_TONE_HZ
            amplitude = int(parts[1]) if len(parts) > 1 else DEFAULT_TONE_AMPLITUDE
        except ValueError:
            raise AudioError(f"bad tone {spec!r}, e.g. tone:1000 or tone:1000:12000; {AUDIO_IN_HINT}") from None
        return ToneSource(hz, amplitude)
    if low == "mic":
        sd = _sounddevice("input", on_notice)
        if sd is None:
            on_notice("maixemu: the microphone hears silence instead")
            return SilenceSource()
        return MicrophoneSource(sd)
    path = text[4:].strip() if low.startswith("wav:") else text
    if not path.lower().endswith(".wav") and not low.startswith("wav:"):
        raise AudioError(f"unknown audio input {spec!r}; {AUDIO_IN_HINT}")
    return WavFileSource(path)
