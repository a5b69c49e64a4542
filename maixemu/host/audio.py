"""Audio on the PC: where the board's I2S output goes (a sink) and what its microphone hears (a source).

``maixemu.firmware`` turns I2S transfers into stereo ``int16`` frames ``(N, 2)`` at the rate the
I2S clock really runs at, and hands them to an :class:`AudioSink`; ``I2S.record`` asks an
:class:`AudioSource` for the next frames. Chosen by :func:`open_sink` / :func:`open_source`:

sinks (``--audio-out``)
  * ``None`` / ``"auto"`` — a WAV file created in the system temp folder the first time the script
    plays something (a run that plays nothing leaves no file); its path is reported as a notice.
  * ``"wav:PATH"`` (or a path ending ``.wav``) — that WAV file (16-bit stereo PCM). Checked when the
    run starts: a folder, a folder the run cannot write into, or a file maixemu did not write
    (``--overwrite`` allows it) is one line and exit 2, never a failure at the first sound.
  * ``"speaker"`` — the PC's default output device through the optional ``sounddevice`` library
    (``pip install maixemu[audio]``); without it or without a device: a WAV file, with a notice.
  * ``"none"`` — frames are counted and dropped.

sources (``--audio-in``)
  * ``None`` / ``"silence"`` — zeros (the default: nothing to hear, record demos still run).
  * ``"tone"`` / ``"tone:HZ"`` / ``"tone:HZ:AMPLITUDE"`` — a sine (440 Hz, amplitude 8000 by default;
    0 < HZ <= :data:`MAX_TONE_HZ`, 0 <= AMPLITUDE <= 32767).
  * ``"PATH.wav"`` (or ``"wav:PATH"``) — a PCM WAV file, looped, resampled to the rate asked for as
    it is read (memory-mapped: a long file costs no memory, a header with a strange rate no
    allocation); its header is checked first (:data:`WAV_RATES`, :data:`MAX_WAV_CHANNELS`, 1..4-byte
    samples).
  * ``"mic"`` — the PC's default input device through ``sounddevice``.

WAV files are written with their header patched after every chunk, so a recording stays a valid
WAV file however the run ends; an ``INFO`` chunk names maixemu, so the next run may replace the file
(:mod:`maixemu.host.outputs`). This module imports nothing from ``maixemu.firmware``.
"""

from __future__ import annotations

import math
import os
import stat
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from . import outputs

Notice = Callable[[str], None]

AUDIO_OUT_HINT = "use --audio-out wav:OUT.wav|speaker|none"
AUDIO_IN_HINT = "use --audio-in silence|tone[:HZ[:AMPLITUDE]]|FILE.wav|mic"
DEFAULT_TONE_HZ = 440.0
DEFAULT_TONE_AMPLITUDE = 8000
#: The highest tone frequency (far above what any I2S rate can carry; a bound, not a device fact).
MAX_TONE_HZ = 1_000_000.0
#: Sample rates a WAV input may declare: from telephone-grade audio to the highest PCM rate in use.
WAV_RATES = (1000, 768_000)
#: Channels a WAV input may declare (WAVE_FORMAT_EXTENSIBLE names 18 speaker positions).
MAX_WAV_CHANNELS = 32
#: Chunks of a WAV input looked through for its ``data`` chunk at most.
MAX_WAV_CHUNKS = 1024
#: Frames resampled at a time when a chunk's rate differs from the sink's (bounded memory).
RESAMPLE_BLOCK = 1 << 16
#: The most data a WAV file can describe (its 32-bit RIFF size).
WAV_MAX_DATA = 0xFFFFFFFF - 256


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
    return _interpolate(frames, np.arange(count) * (rate_in / rate_out))


def resampled_blocks(frames: np.ndarray, rate_in: int, rate_out: int):
    """:func:`resample` in pieces of at most :data:`RESAMPLE_BLOCK` frames: a short chunk at a low
    rate played into a sink at a high one never needs its whole result in memory at once."""
    if rate_in == rate_out or len(frames) == 0:
        yield frames
        return
    count = max(1, int(round(len(frames) * rate_out / rate_in)))
    for start in range(0, count, RESAMPLE_BLOCK):
        positions = np.arange(start, min(count, start + RESAMPLE_BLOCK)) * (rate_in / rate_out)
        yield _interpolate(frames, positions)


def _interpolate(frames: np.ndarray, positions: np.ndarray) -> np.ndarray:
    source = np.arange(len(frames))
    out = np.empty((len(positions), frames.shape[1]), dtype=np.int16)
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

    def __init__(self, path: str | os.PathLike | Callable[[], Path], *, on_notice: Notice | None = None,
                 overwrite: bool = False):
        """A path given is checked now (:func:`maixemu.host.outputs.check_file`): a folder, an unwritable
        place or a file maixemu did not write (unless ``overwrite``) is an :class:`AudioError`."""
        super().__init__()
        self._path_source = path
        self.path: Path | None = None if callable(path) else Path(path)
        self.name = f"wav:{self.path}" if self.path else "wav:(temp file on first sound)"
        self._notice = on_notice
        self._overwrite = overwrite
        self._fp: IO[bytes] | None = None
        self._data_bytes = 0
        self._told_rate = False
        self._told_full = False
        if self.path is not None:
            self._check(self.path)

    def _check(self, path: Path) -> None:
        try:
            outputs.check_file(path, "cannot write the audio output", ours=outputs.is_maixemu_wav,
                               overwrite=self._overwrite)
        except outputs.OutputRefused as exc:
            raise AudioError(f"{exc}; {AUDIO_OUT_HINT}") from None

    def _open(self, rate: int) -> IO[bytes]:
        if self.path is None:
            self.path = Path(self._path_source())  # type: ignore[operator]  # (callable: checked in __init__)
            self.name = f"wav:{self.path}"
        self._check(self.path)
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
        for block in resampled_blocks(frames, rate, file_rate):
            data = block.astype("<i2").tobytes()
            if self._data_bytes + len(data) > WAV_MAX_DATA:  # the RIFF sizes are 32 bits
                if not self._told_full and self._notice is not None:
                    self._notice(f"maixemu: {self.path} reached the 4 GiB a WAV file can hold; later sound is dropped")
                self._told_full = True
                break
            fp.write(data)
            self._data_bytes += len(data)
        self._patch_header(fp)

    def _patch_header(self, fp: IO[bytes]) -> None:
        end = fp.tell()
        fp.seek(4)
        fp.write(struct.pack("<I", WAV_HEADER_BYTES - 8 + self._data_bytes))
        fp.seek(WAV_HEADER_BYTES - 4)
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
    """RIFF/WAVE, ``fmt`` (16-bit PCM), maixemu's ``LIST/INFO`` mark, then ``data``."""
    block = channels * 2
    mark = outputs.wav_mark()
    return (b"RIFF" + struct.pack("<I", 28 + len(mark) + data_bytes) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block, block, 16)
            + mark + b"data" + struct.pack("<I", data_bytes))


#: Bytes before the samples of the WAV files maixemu writes.
WAV_HEADER_BYTES = len(_wav_header(8000, 2, 0))


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


def open_sink(spec: str | None, *, on_notice: Notice = print, overwrite: bool = False) -> AudioSink:
    """The sink for an ``--audio-out`` value (see the module docstring); ``overwrite``: a WAV file
    maixemu did not write may be replaced (``--overwrite``)."""
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
        return WavFileSink(Path(target).expanduser(), on_notice=on_notice, overwrite=overwrite)
    if low.endswith(".wav"):
        return WavFileSink(Path(text).expanduser(), on_notice=on_notice, overwrite=overwrite)
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
        if not (0 < hz <= MAX_TONE_HZ and math.isfinite(hz)):
            raise AudioError(f"tone frequency must be > 0 and at most {MAX_TONE_HZ:g} Hz, got {hz}; {AUDIO_IN_HINT}")
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
    """A PCM WAV file (8/16/24/32-bit, 1..:data:`MAX_WAV_CHANNELS` channels), looped, resampled to
    the rate asked for as it is read.

    The header is checked before anything is allocated, and the samples stay in the file (a memory
    map): what a read costs depends on the frames asked for, never on the file's length or rate.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.name = f"wav:{self.path}"
        try:
            channels, width, rate, offset, size = _wav_layout(self.path)
        except OSError as exc:
            raise AudioError(f"cannot read the audio input {self.path}: {exc.strerror or exc}; {AUDIO_IN_HINT}") from None
        self.channels, self.width, self.rate = channels, width, rate
        count = size // (channels * width)
        self._rows: np.ndarray | None = None
        if count:
            data = np.memmap(self.path, dtype=np.uint8, mode="r", offset=offset, shape=(count * channels * width,))
            self._rows = data.reshape(count, channels * width)
        self.frame_count = count
        self._position = 0.0  # frames of the file

    def read(self, count: int, rate: int) -> np.ndarray:
        count = max(0, int(count))
        if self._rows is None or count == 0:
            return np.zeros((count, 2), dtype=np.int16)
        step = self.rate / max(1, int(rate))
        positions = self._position + step * np.arange(count)
        self._position = float((self._position + step * count) % self.frame_count)
        below = np.floor(positions)
        weight = (positions - below)[:, None]
        first = below.astype(np.int64) % self.frame_count
        a = self._frames(first)
        if not weight.any():
            return a
        b = self._frames((first + 1) % self.frame_count).astype(np.float64)
        return np.rint(a + (b - a) * weight).astype(np.int16)

    def _frames(self, index: np.ndarray) -> np.ndarray:
        assert self._rows is not None
        return _pcm_to_stereo16(self._rows[index].tobytes(), self.channels, self.width)

    def close(self) -> None:
        self._rows = None


def _wav_layout(path: Path) -> tuple[int, int, int, int, int]:
    """(channels, bytes per sample, rate, offset and size of the samples) of a PCM WAV file, from
    its chunks; :class:`AudioError` for anything :class:`WavFileSource` cannot play."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device: opening it could wait for ever
        raise AudioError(f"{path} is not a regular file; {AUDIO_IN_HINT}")
    total = info.st_size
    with open(path, "rb") as handle:
        head = handle.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            raise AudioError(f"{path} is not a WAV file (no RIFF/WAVE header); {AUDIO_IN_HINT}")
        fmt: bytes | None = None
        for _ in range(MAX_WAV_CHUNKS):
            chunk = handle.read(8)
            if len(chunk) < 8:
                raise AudioError(f"{path}: no {'fmt' if fmt is None else 'data'} chunk; {AUDIO_IN_HINT}")
            kind, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if kind == b"fmt ":
                fmt = handle.read(min(size, 64))
                handle.seek(size - len(fmt) + (size & 1), os.SEEK_CUR)
            elif kind == b"data":
                if fmt is None:
                    raise AudioError(f"{path}: the data chunk comes before fmt; {AUDIO_IN_HINT}")
                offset = handle.tell()
                return (*_wav_format(path, fmt), offset, max(0, min(size, total - offset)))
            else:
                handle.seek(size + (size & 1), os.SEEK_CUR)
    raise AudioError(f"{path}: no data chunk in its first {MAX_WAV_CHUNKS} chunks; {AUDIO_IN_HINT}")


def _wav_format(path: Path, fmt: bytes) -> tuple[int, int, int]:
    if len(fmt) < 16:
        raise AudioError(f"{path}: a short fmt chunk ({len(fmt)} bytes); {AUDIO_IN_HINT}")
    tag, channels, rate, _, block, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == 0xFFFE and len(fmt) >= 40:  # WAVE_FORMAT_EXTENSIBLE: the sub-format's tag
        tag = struct.unpack("<H", fmt[24:26])[0]
    width = (bits + 7) // 8
    problems = []
    if tag != 1:
        problems.append(f"format {tag:#x} is not PCM")
    if not 1 <= channels <= MAX_WAV_CHANNELS:
        problems.append(f"{channels} channels (1..{MAX_WAV_CHANNELS})")
    if not 1 <= width <= 4:
        problems.append(f"{bits}-bit samples (8, 16, 24 or 32)")
    if not WAV_RATES[0] <= rate <= WAV_RATES[1]:
        problems.append(f"a rate of {rate} Hz ({WAV_RATES[0]}..{WAV_RATES[1]})")
    if not problems and block != channels * width:
        problems.append(f"{block} bytes per frame for {channels} x {width}")
    if problems:
        raise AudioError(f"{path}: cannot play this WAV file: {', '.join(problems)}; {AUDIO_IN_HINT}")
    return channels, width, rate


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
            if len(parts) > 2:
                raise ValueError
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
