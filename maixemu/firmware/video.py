"""MaixPy ``video``: MJPEG AVI files recorded from images and played to the LCD (and sound to I2S0).

As ``py_video.c``, ``video.c`` and ``avi.c`` (MaixPy-v1; kendryte/canmv prints ``[CanMV]``):

* ``video.open(path, *, record=False, interval=100000, quality=50, width=320, height=240,
  audio=False, sample_rate=44100, channels=1)`` — ``path`` must end in ``.avi`` (else
  ``NotImplementedError: [MaixPy] video: format not support``), on the device storage.
* recording: the firmware's header layout byte for byte (``RIFF``/``hdrl``/``avih``/``strl``
  ``vids MJPG``, an ``auds`` list when ``audio=True`` — the firmware never writes sound data),
  ``record(img)`` appends a ``00dc`` chunk of the image JPEG-encoded at ``quality`` (padded to 8
  bytes) and returns its length, waiting until ``interval`` µs passed since the previous
  ``record`` (of any file, as the firmware's static timer); ``record_finish()`` patches the sizes
  and the frame count. No ``idx1`` index is written (the firmware writes none either).
* playing: the firmware's parser (``avi_init``: MJPG video, optional PCM audio, ``movi`` in the
  first 35 KiB) and its chunk walk; ``play()`` shows the next frame on the LCD (centred, cropped
  when larger), paced at the file's frame interval, sends sound chunks to I2S device 0 at
  ``volume()`` percent (80 by default) and returns 3 (video), 4 (audio) or 0 (end);
  ``capture(img)`` decodes the next frame into ``img`` instead (sound chunks skipped).
  A file the board cannot play fails as there: ``OSError`` with the parser's status code.
* ``volume([v])``, ``__del__()``; ``play``/``capture`` on a recording and ``record`` on a
  player raise ``OSError(EPERM)``.

JPEG encoding and decoding use OpenCV; the encoder follows OpenMV's chroma subsampling choice by
quality (4:2:0 up to 35, 4:2:2 below 60, 4:4:4 above), so frame sizes are close to the board's.
"""

from __future__ import annotations

import errno
import struct
from typing import Any

import cv2
import numpy as np

from . import audio_device, utime

__all__ = ["open"]

AVI_BUFF_SIZE = 35 * 1024  # VIDEO_AVI_BUFF_SIZE: the parser only looks this far for "movi"
STATUS_PLAY_END, STATUS_PLAYING, STATUS_RESUME = 0, -1, -2
STATUS_DECODE_VIDEO, STATUS_DECODE_AUDIO = -3, -4
AVI_STATUS = {1: "AVI_STATUS_ERR_RIFF", 2: "AVI_STATUS_ERR_AVI", 3: "AVI_STATUS_ERR_LIST", 4: "AVI_STATUS_ERR_HDRL",
              5: "AVI_STATUS_ERR_AVIH", 6: "AVI_STATUS_ERR_STRL", 7: "AVI_STATUS_ERR_STRH", 8: "AVI_STATUS_ERR_STRF",
              9: "AVI_STATUS_ERR_MOVI", 10: "AVI_STATUS_ERR_FORMAT", 11: "AVI_STATUS_ERR_STREAM"}
_VIDS_FLAG, _AUDS_FLAG = 0x6463, 0x7762  # "dc", "wb" read big-endian from a chunk id's last 2 bytes
PCM = 1


class VideoState:
    """The firmware's one piece of ``video`` state: the static timer ``record`` paces itself with
    (one per board: ``current().video``)."""

    def __init__(self) -> None:
        self.last_record_ns: int | None = None
        self.open_files: list[Any] = []

    def close(self) -> None:
        for handle in self.open_files:
            if not handle.closed:
                handle.close()
        self.open_files.clear()


def _video() -> VideoState:
    from .state import current

    return current().video


def _brand() -> str:
    return {"MAIXPY": "MaixPy", "CANMV": "CanMV"}.get(audio_device.current().brand, "MaixPy")


def _avi_error(code: int) -> OSError:
    name = errno.errorcode.get(code, str(code))
    what = AVI_STATUS.get(code)
    if what is None:
        return OSError(code, name)
    return OSError(code, f"{name} ({what}: the board plays MJPEG AVI files only, e.g. "
                         f"ffmpeg -i in.mp4 -c:v mjpeg -q:v 5 -vf scale=320:240 -c:a pcm_s16le -ar 44100 out.avi)")


def _open_file(path: str, mode: str) -> Any:
    from . import uos

    handle = uos.open_device(path, mode)
    _video().open_files.append(handle)
    return handle


def _subsampling(quality: int) -> int:
    """OpenMV ``jpeg_compress``'s choice: 4:2:0 up to 35, 4:2:2 below 60, 4:4:4 from 60."""
    if quality <= 35:
        return cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420
    if quality < 60:
        return cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422
    return cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444


def encode_jpeg(img: Any, quality: int) -> bytes:
    """An image as the MJPEG frame ``record`` stores (baseline JPEG at ``quality``)."""
    from . import image

    params = [cv2.IMWRITE_JPEG_QUALITY, int(min(100, max(1, quality)))]
    if hasattr(cv2, "IMWRITE_JPEG_SAMPLING_FACTOR"):
        params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, _subsampling(quality)]
    if img.format() == image.GRAYSCALE:
        pixels = np.ascontiguousarray(img._pix)
    else:
        pixels = cv2.cvtColor(np.ascontiguousarray(img._rgb888()), cv2.COLOR_RGB2BGR)
    ok, data = cv2.imencode(".jpg", pixels, params)
    if not ok:
        raise OSError(errno.EIO, "EIO")
    return data.tobytes()


def _u32(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}I", *(v & 0xFFFFFFFF for v in values))


def record_header(usec_per_frame: int, width: int, height: int, audio: bool, sample_rate: int,
                  channels: int) -> tuple[bytes, int]:
    """The bytes ``avi_record_header_init`` writes and the offset of its ``movi`` tag."""
    rate = int(1000 / (usec_per_frame / 1000.0)) if usec_per_frame else 0
    avih = b"avih" + _u32(56, usec_per_frame, 0, 0, 0, 0, 0, 2, 0x00100000, width, height, 0, 0, 0, 0)
    strh_v = (b"strh" + _u32(56) + b"vids" + b"MJPG" + _u32(0) + struct.pack("<HH", 0, 0)
              + _u32(0, 1, rate, 0, 0, 5128, 0xFFFFFFFF, 0) + struct.pack("<hhhh", 0, 0, width, height))
    strf_v = b"strf" + _u32(40) + _u32(40, width, height) + struct.pack("<HH", 1, 24) + b"MJPG" + _u32(0, 0, 0, 0, 0)
    video_list = b"LIST" + _u32(4 + len(strh_v) + len(strf_v)) + b"strl" + strh_v + strf_v
    lists = video_list
    if audio:
        strh_a = (b"strh" + _u32(56) + b"auds" + _u32(PCM, 0) + struct.pack("<HH", 0, 0)
                  + _u32(0, 1, sample_rate, 0, 0, 4096, 0xFFFFFFFF, 0) + struct.pack("<hhhh", 0, 0, 0, 0))
        strf_a = b"strf" + _u32(16) + struct.pack("<HHIIHH", PCM, channels, sample_rate, 0, 4, 16)
        lists += b"LIST" + _u32(4 + len(strh_a) + len(strf_a)) + b"strl" + strh_a + strf_a
    hdrl = b"LIST" + _u32(4 + len(avih) + len(lists)) + b"hdrl" + avih + lists
    head = b"RIFF" + _u32(0) + b"AVI " + hdrl + b"LIST" + _u32(0) + b"movi"
    return head, len(head) - 4


class _AviInfo:
    """What ``avi_init`` reads from the start of a file (raises the parser's status as OSError)."""

    def __init__(self, buf: bytes):
        def word(at: int) -> int:
            return struct.unpack_from("<I", buf, at)[0] if 0 <= at and at + 4 <= len(buf) else 0

        def tag(at: int) -> bytes:
            return bytes(buf[at:at + 4]) if at >= 0 else b""

        def fail(code: int):
            raise _avi_error(code)

        self.audio_sample_rate = self.audio_channels = self.audio_format = 0
        if tag(0) != b"RIFF":
            fail(1)
        if tag(8) != b"AVI ":
            fail(2)
        at = 12
        if tag(at) != b"LIST":
            fail(3)
        if tag(at + 8) != b"hdrl":
            fail(4)
        at += 12
        if tag(at) != b"avih":
            fail(5)
        self.usec_per_frame, self.max_byte_sec = word(at + 8), word(at + 12)
        self.total_frame = word(at + 24)
        def stream_list(at: int) -> tuple[bytes, int, int]:
            """A ``LIST strl`` at ``at``: (stream type, its strh offset, its strf offset)."""
            if tag(at) != b"LIST":
                fail(3)
            if tag(at + 8) != b"strl":
                fail(6)
            strh = at + 12
            if tag(strh) != b"strh":
                fail(7)
            return tag(strh + 8), strh, strh + word(strh + 4) + 8

        at += word(at + 4) + 8
        kind, strh, strf = stream_list(at)
        if kind == b"vids":
            if tag(strh + 12) != b"MJPG":
                fail(10)
            self.video_flag, self.audio_flag = b"00dc", b"01wb"
            if tag(strf) != b"strf":
                fail(8)
            self.width, self.height = word(strf + 12), word(strf + 16)
            at += word(at + 4) + 8
            if tag(at + 8) == b"strl":  # a second strl list: it must be the sound
                second, _, strf = stream_list(at)
                if second != b"auds":
                    fail(10)
                self._audio(buf, strf, tag, word, fail)
        elif kind == b"auds":
            self.video_flag, self.audio_flag = b"01dc", b"00wb"
            self._audio(buf, strf, tag, word, fail)
            at += word(at + 4) + 8
            second, _, strf = stream_list(at)
            if second != b"vids":
                fail(10)
            if tag(strf) != b"strf":
                fail(8)
            if tag(strf + 24) != b"MJPG":
                fail(10)
            self.width, self.height = word(strf + 12), word(strf + 16)
        else:
            self.width = self.height = 0  # neither: the firmware goes on and fails later
            self.video_flag, self.audio_flag = b"00dc", b"01wb"
        movi = buf.find(b"movi", 0, max(0, len(buf) - 4))
        if movi <= 0:
            fail(9)
        self.offset_movi = movi
        if self.audio_sample_rate and buf.find(self.audio_flag, movi + 4, len(buf) - 4) < 0:
            fail(11)

    def _audio(self, buf: bytes, strf: int, tag, word, fail) -> None:
        if tag(strf) != b"strf":
            fail(8)
        self.audio_format, self.audio_channels = struct.unpack_from("<HH", buf, strf + 8)
        self.audio_sample_rate = word(strf + 12)


def _stream_info(header: bytes) -> tuple[int, int] | None:
    """``avi_get_streaminfo``: (stream id, even size) of a chunk header, None if it is no stream."""
    if len(header) < 8:
        return None
    stream_id = (header[2] << 8) | header[3]
    size = struct.unpack_from("<I", header, 4)[0]
    size += size & 1
    return (stream_id, size) if stream_id in (_VIDS_FLAG, _AUDS_FLAG) else None


class avi:  # noqa: N801 - the firmware's type name
    """An open AVI file (from :func:`open`)."""

    def __init__(self) -> None:
        self.record_mode = False
        self.width = self.height = self.usec_per_frame = self.total_frame = 0
        self.audio_format = self.audio_channels = self.audio_sample_rate = 0
        self.status = 0
        self._volume = 0
        self._file: Any = None
        self._deleted = False

    # -- recording -------------------------------------------------------------------------------
    def _start_recording(self, path: str, interval: int, quality: int, width: int, height: int,
                         record_audio: bool, sample_rate: int, channels: int) -> None:
        self.record_mode = True
        self.usec_per_frame, self.width, self.height = interval & 0xFFFFFFFF, width, height
        self.quality = quality & 0xFF
        self.record_audio = record_audio
        self.audio_sample_rate = sample_rate if record_audio else 0
        self.audio_channels, self.audio_format = channels & 0xFFFF, PCM
        head, self.offset_movi = record_header(self.usec_per_frame, width, height, record_audio,
                                               self.audio_sample_rate, self.audio_channels)
        self._file = _open_file(path, "wb")
        self._file.write(head)
        self.content_size = 0
        self.total_frame = 0

    def record(self, img: Any) -> int:
        if not self.record_mode or self._file is None or self._file.closed:
            raise OSError(errno.EPERM, "EPERM")
        from . import image

        if not isinstance(img, image.Image):
            raise TypeError("Image expected")
        data = encode_jpeg(img, self.quality)
        data += b"\0" * (-len(data) % 8)
        self._file.write(b"00dc" + _u32(len(data)) + data)
        self.content_size += 8 + len(data)
        self.total_frame += 1
        wait_ns = self.usec_per_frame * 1000
        state = _video()
        if state.last_record_ns is not None:
            left = wait_ns - (utime._now_ns() - state.last_record_ns)
            if left > 0:
                utime._hardware_wait_ns(left)
        state.last_record_ns = utime._now_ns()
        return len(data)

    def record_finish(self) -> None:
        if not self.record_mode:
            raise OSError(errno.EPERM, "EPERM")
        f = self._file
        if f is None or f.closed:
            return None
        end = f.tell()
        f.seek(end - (self.content_size + 8))
        f.write(_u32(self.content_size + 4))
        f.seek(0, 2)
        size = f.tell()
        f.seek(4)
        f.write(_u32(size - 8))
        f.seek(48)  # avih.total_frame
        f.write(_u32(self.total_frame))
        f.close()
        return None

    # -- playing ---------------------------------------------------------------------------------
    def _start_playing(self, path: str) -> None:
        self._file = _open_file(path, "rb")
        buf = self._file.read(AVI_BUFF_SIZE)
        try:
            info = _AviInfo(buf)
        except OSError:
            self._stop()
            raise
        self.usec_per_frame, self.total_frame = info.usec_per_frame, info.total_frame
        self.width, self.height = info.width, info.height
        self.audio_format, self.audio_channels = info.audio_format, info.audio_channels
        self.audio_sample_rate = info.audio_sample_rate
        stream = _stream_info(buf[info.offset_movi + 4: info.offset_movi + 12])
        if stream is None:
            self._stop()
            raise _avi_error(11)
        self._stream = stream
        self._file.seek(info.offset_movi + 12)
        self.frame_count = 0
        self.status = STATUS_RESUME
        self._last_frame_ns = utime._now_ns()
        self._volume = 80
        if self.audio_sample_rate:  # video_hal_audio_init: I2S device 0 at the file's rate
            audio_device.current().set_i2s_rate(0, self.audio_sample_rate)

    def _stop(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.close()
        self.status = STATUS_PLAY_END

    def _step(self, img: Any, show: bool) -> int:
        """One chunk (``video_play_avi`` / ``video_avi_capture``); returns the status."""
        if self.status not in (STATUS_RESUME, STATUS_PLAYING, STATUS_PLAY_END):
            return self.status
        if self._file is None or self._file.closed:
            return STATUS_PLAY_END
        self.status = STATUS_PLAYING
        stream_id, size = self._stream
        chunk = self._file.read(size + 8)
        if stream_id == _VIDS_FLAG:
            frame = self._decode(chunk[:size], img)
            wait = self.usec_per_frame * 1000 - (utime._now_ns() - self._last_frame_ns)
            if wait > 0:
                utime._hardware_wait_ns(wait)
            self._last_frame_ns = utime._now_ns()
            if show:
                _show(frame)
            self.frame_count += 1
            status = STATUS_DECODE_VIDEO
        else:
            if show and self.audio_sample_rate:
                self._sound(chunk[:size])
            status = STATUS_DECODE_AUDIO
        following = _stream_info(chunk[size:size + 8])
        if following is None:
            self._stop()
            if self.frame_count != self.total_frame:
                print("frame error \r")
                self.status = 11
                return 11
            self.status = STATUS_PLAY_END
            return STATUS_PLAY_END
        self._stream = following
        return status

    def _decode(self, data: bytes, img: Any) -> Any:
        from . import image

        pixels = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR) if data else None
        if pixels is None:
            self._stop()
            raise OSError(errno.EIO, "EIO (a frame is not a JPEG the board's decoder reads)")
        rgb = cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB)
        if img is None:
            return image.Image._from_rgb888(rgb)
        img._load_frame(rgb, image.RGB565, fill_ai=False)
        return img

    def _sound(self, data: bytes) -> None:
        usable = len(data) - len(data) % 2
        samples = np.frombuffer(data[:usable], dtype="<i2").astype(np.float64)
        scaled = np.trunc(samples * (self._volume / 100.0)).astype(np.int32).astype(np.int16)
        if self.audio_channels == 2:
            frames = scaled[: len(scaled) - len(scaled) % 2].reshape(-1, 2)
        else:
            frames = np.repeat(scaled[:, None], 2, axis=1)
        audio_device.current().play_pcm(0, frames)

    def play(self) -> int:
        if self.record_mode:
            raise OSError(errno.EPERM, "EPERM")
        status = self._step(None, show=True)
        if status > 0:
            raise _avi_error(status)
        return -status

    def capture(self, img: Any) -> int:
        if self.record_mode:
            raise OSError(errno.EPERM, "EPERM")
        from . import image

        if not isinstance(img, image.Image):
            raise OSError("Please input an image as parameter")
        while True:
            status = self._step(img, show=False)
            if status > 0:
                raise _avi_error(status)
            if status in (STATUS_PLAY_END, STATUS_DECODE_VIDEO):
                return -status

    def volume(self, value: int | None = None) -> int:
        if value is not None:
            self._volume = int(value) & 0xFF
        return self._volume

    def __del__(self) -> None:
        if self._deleted:
            return None
        self._deleted = True
        if not self.record_mode:
            self._stop()
        return None

    def __repr__(self) -> str:
        fps = 1000.0 / (self.usec_per_frame / 1000.0) if self.usec_per_frame else float("inf")
        return (f"[{_brand()}] avi:\n[video] w:{self.width}, h:{self.height}, t:{self.usec_per_frame}us, "
                f"fps:{fps:.2f}, total_frame:{self.total_frame}, status:{-self.status}\n"
                f"[audio] format:{self.audio_format}, channel:{self.audio_channels}, "
                f"sample_rate:{self.audio_sample_rate}")


def _show(img: Any) -> None:
    """``video_hal_display``: centred when smaller than the LCD, centre-cropped when larger."""
    from . import lcd

    if not lcd._active():
        return
    lw, lh = lcd.width(), lcd.height()
    w, h = img.width(), img.height()
    x = y = l_pad = t_pad = 0
    if w > lw:
        x, w = (w - lw) // 2, lw
    else:
        l_pad = (lw - w) // 2
    if h > lh:
        y, h = (h - lh) // 2, lh
    else:
        t_pad = (lh - h) // 2
    lcd.display(img, roi=(x, y, w, h), oft=(l_pad, t_pad))


def open(path: Any, *, record: bool = False, interval: int = 100000, quality: int = 50,  # noqa: A001
         width: int = 320, height: int = 240, audio: bool = False, sample_rate: int = 44100,
         channels: int = 1) -> avi:
    """Open an AVI for playing or (``record=True``) recording; see the module docstring."""
    if not isinstance(path, str):
        raise TypeError(f"can't convert {type(path).__name__} to str")
    if not path.endswith(".avi"):
        raise NotImplementedError(f"[{_brand()}] video: format not support")
    obj = avi()
    if record:
        obj._start_recording(path, int(interval), int(quality), int(width), int(height), bool(audio),
                             int(sample_rate), int(channels))
    else:
        obj._start_playing(path)
    return obj
