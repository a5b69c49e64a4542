"""Camera sources on the PC: what stands in for the board's OV2640 when a MaixPy script calls ``sensor``.

A :class:`FrameSource` hands out RGB frames of whatever size it has (``read() -> (H, W, 3) uint8``);
``maixemu.firmware.sensor`` scales, crops, flips and quantises them the way the camera would deliver
them. Keeping the sources dumb means every source behaves the same once it reaches the sensor.

Sources, chosen by :func:`open_source` from the ``--camera`` value:

* ``None`` / ``"auto"`` — webcam 0 if one opens, else the synthetic pattern (said once).
* ``"0"``, ``"1"``, ... — an OpenCV webcam index.
* a folder — its images, sorted by name, looped; files that do not decode are skipped (one line each).
* a still image — the same frame every time.
* a video file — its frames, looped when it ends (said once).
* ``"synthetic"`` — colour bars, a moving square and a frame counter; frame ``n`` depends only on
  ``n``, so tests and CI get the same pictures everywhere.

This module imports nothing from ``maixemu.firmware`` (the host layer stays below the firmware layer).
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

Notice = Callable[[str], None]

#: What to tell a user whose camera choice failed.
CAMERA_HINT = "use --camera synthetic|DIR|VIDEO|IMAGE"

#: File name endings read as still images (everything else that is a file is tried as a video).
IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pbm", ".pnm", ".tif", ".tiff", ".webp", ".gif"}
)

SYNTHETIC_SIZE = (320, 240)

#: The largest camera picture decoded: 64 megapixels (8192x8192; a 48 MP phone photo or an 8K video
#: frame fits). The sensor scales every source down to at most its own 1600x1200, so nothing larger
#: can matter to a script, and the header is checked before decoding: a 633-byte JPEG claiming
#: 30000x30000 pixels is refused instead of costing 5 GB and half a minute per frame.
MAX_SOURCE_PIXELS = 8192 * 8192


class CameraError(RuntimeError):
    """A camera source could not be opened or delivers nothing; the text says what to do."""


class FrameTooLarge(CameraError):
    """A picture whose header declares more pixels than :data:`MAX_SOURCE_PIXELS`; ``size`` says how many."""

    def __init__(self, what: object, size: str):
        super().__init__(f"{what} is {size}, more than the 8192x8192 (64 Mpx) maixemu decodes for a camera "
                         f"frame; {CAMERA_HINT}")
        self.size = size


def _check_frame_size(width: int, height: int, what: object) -> None:
    if width * height > MAX_SOURCE_PIXELS:
        raise FrameTooLarge(what, f"{width}x{height} pixels")


class CameraLost(CameraError):
    """A source that did deliver frames stopped (webcam unplugged, files gone mid-run).

    Separate from :class:`CameraError` because the user's choice was right and the run failed
    later: ``maixemu run`` exits 1 for this one and 2 for a source that never worked.
    """


class FrameSource:
    """Base of all sources: ``read()`` one RGB frame, ``close()`` when done, ``name`` for messages."""

    name: str = "source"
    #: True for real cameras: their first frames are dark while the exposure settles, which is what
    #: ``sensor.skip_frames`` exists for. Files and the synthetic pattern need no settling.
    live: bool = False

    def read(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        """Release the device or file; reading afterwards is an error. Safe to call twice."""

    def __enter__(self) -> "FrameSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _bgr_to_rgb(frame: np.ndarray) -> np.ndarray:
    """OpenCV hands out BGR (or gray / BGRA); the firmware side wants RGB."""
    if frame.ndim == 2:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2RGB)
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2RGB)
    return cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)


def _as_uint8(frame: np.ndarray) -> np.ndarray:
    """16-bit PNG/TIFF files come back as uint16; scale them to 8 bits like a camera would deliver."""
    if frame.dtype == np.uint8:
        return frame
    if frame.dtype == np.uint16:
        return (frame >> 8).astype(np.uint8)
    return np.clip(frame, 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------- synthetic
class SyntheticSource(FrameSource):
    """A moving test pattern: eight colour bars, a white square sliding across, a frame counter.

    Why synthetic and deterministic: CI machines have no webcam, and tests need frames whose pixels do
    not change between runs. Frame ``n`` is a pure function of ``n`` (the counter starts at 0).
    """

    BARS = np.array(
        [
            (255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
            (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0),
        ],
        dtype=np.uint8,
    )

    def __init__(self, width: int = SYNTHETIC_SIZE[0], height: int = SYNTHETIC_SIZE[1]):
        if width < 16 or height < 16:
            raise CameraError(f"synthetic source needs at least 16x16 pixels, got {width}x{height}")
        self.width, self.height = int(width), int(height)
        self.name = "synthetic"
        self.index = 0
        cols = (np.arange(self.width) * len(self.BARS)) // self.width
        self._bars = np.ascontiguousarray(np.broadcast_to(self.BARS[cols], (self.height, self.width, 3)))

    def frame(self, n: int) -> np.ndarray:
        """Frame number ``n`` (what the ``n``-th ``read()`` returns)."""
        img = self._bars.copy()
        side = max(8, self.height // 4)
        span = self.width - side
        x = (n * 4) % (2 * span) if span > 0 else 0
        x = x if x <= span else 2 * span - x  # bounce back and forth
        y = (self.height - side) // 2
        img[y : y + side, x : x + side] = (255, 255, 255)
        img[y + side // 4 : y + side - side // 4, x + side // 4 : x + side - side // 4] = (255, 0, 0)
        # frame counter on a black strip at the bottom
        strip = max(12, self.height // 10)
        img[self.height - strip :, :] = 0
        scale = strip / 30.0
        cv2.putText(img, f"frame {n}", (4, self.height - strip // 4), cv2.FONT_HERSHEY_SIMPLEX,
                    scale, (255, 255, 255), 1, cv2.LINE_8)
        return img

    def read(self) -> np.ndarray:
        img = self.frame(self.index)
        self.index += 1
        return img


# ---------------------------------------------------------------------------------- still image
def _header_size(source: Path | io.BytesIO, what: object) -> tuple[int, int] | None:
    """(width, height) from an image's header without decoding it, or None if Pillow cannot tell."""
    from PIL import Image as PILImage

    try:
        with PILImage.open(source) as im:
            return im.size
    except PILImage.DecompressionBombError as exc:  # far past our bound: Pillow itself refuses to open it
        pixels = "".join(c for c in str(exc).split("pixels", 1)[0] if c.isdigit()) or "too many"
        raise FrameTooLarge(what, f"{pixels} pixels") from None
    except Exception:  # not a picture Pillow knows: OpenCV decides below, under its own pixel limit
        return None


def _read_image(path: Path) -> np.ndarray | None:
    """Decode one image file to RGB, or ``None`` if neither OpenCV nor Pillow can read it.

    Raises :class:`FrameTooLarge` before decoding a picture past :data:`MAX_SOURCE_PIXELS`.
    """
    if not path.is_file():
        return None
    return decode_picture(np.fromfile(str(path), dtype=np.uint8).tobytes(), path)


def decode_picture(data: bytes, what: object) -> np.ndarray | None:
    """Picture bytes (any format OpenCV or Pillow reads) as (H, W, 3) uint8 RGB, or ``None``.

    Raises :class:`FrameTooLarge` before decoding a picture past :data:`MAX_SOURCE_PIXELS`
    (``what`` names it in the message); 16-bit pictures come back scaled to 8 bits.
    """
    if not data:
        return None
    size = _header_size(io.BytesIO(data), what)
    if size is not None:
        _check_frame_size(*size, what)
    frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if frame is not None:
        _check_frame_size(frame.shape[1], frame.shape[0], what)
        return _bgr_to_rgb(_as_uint8(frame))
    if size is None:
        return None
    try:  # formats OpenCV lacks (e.g. GIF)
        from PIL import Image as PILImage

        with PILImage.open(io.BytesIO(data)) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8).copy()
    except Exception:
        return None


class StillImageSource(FrameSource):
    """One picture, returned for every frame (a camera pointed at a poster)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.name = str(self.path)
        frame = _read_image(self.path)
        if frame is None:
            raise CameraError(f"cannot read image {self.path}: not a picture OpenCV or Pillow can decode; {CAMERA_HINT}")
        frame.setflags(write=False)  # shared between reads: nobody may change it
        self._frame = frame

    def read(self) -> np.ndarray:
        return self._frame


# ---------------------------------------------------------------------------------- folder
class FolderSource(FrameSource):
    """The images of a folder, sorted by file name, looped forever.

    Files that do not decode are skipped with one notice each (a stray ``notes.txt`` must not stop a
    run). Decoded frames are cached up to ``cache_bytes`` so a looped folder is not decoded again.
    """

    def __init__(self, path: str | os.PathLike, *, on_notice: Notice = print, cache_bytes: int = 256 << 20):
        self.path = Path(path)
        self.name = str(self.path)
        self._notice = on_notice
        self._files = sorted((p for p in self.path.iterdir() if p.is_file() and not p.name.startswith(".")),
                             key=lambda p: p.name)
        self._bad: set[Path] = set()
        self._cache: dict[Path, np.ndarray] = {}
        self._cache_left = cache_bytes
        self._pos = 0
        self._delivered = 0
        self._too_large: dict[Path, str] = {}  # files refused for their size, and why
        if not self._files:
            raise CameraError(f"folder {self.path} has no files to use as camera frames; {CAMERA_HINT}")
        self._probe()

    def _probe(self) -> None:
        """Decode files until one works, so a folder with no picture at all fails here with one line
        (not one "skipping" line per file and then an error at the first snapshot)."""
        unreadable: list[Path] = []
        for p in self._files:
            if self._load(p, tell=False) is not None:
                break
            unreadable.append(p)
        else:
            if self._too_large:
                path, why = next(iter(self._too_large.items()))
                raise CameraError(f"folder {self.path} has no image maixemu can use ({len(self._files)} files "
                                  f"tried; {path.name} is {why}); {CAMERA_HINT}")
            raise CameraError(f"folder {self.path} has no image OpenCV or Pillow can read "
                              f"({len(self._files)} files tried); {CAMERA_HINT}")
        for p in unreadable:
            self._tell_skipped(p)

    def _tell_skipped(self, p: Path) -> None:
        why = self._too_large.get(p, "not an image OpenCV or Pillow can read")
        self._notice(f"maixemu: camera folder: skipping {p.name} ({why})")

    def _load(self, p: Path, tell: bool = True) -> np.ndarray | None:
        frame = self._cache.get(p)
        if frame is not None:
            return frame
        try:
            frame = _read_image(p)
        except FrameTooLarge as exc:
            frame = None
            self._too_large[p] = f"{exc.size}, more than the 64 Mpx decoded for a camera frame"
        if frame is None:
            self._bad.add(p)
            if tell:
                self._tell_skipped(p)
            return None
        frame.setflags(write=False)
        if frame.nbytes <= self._cache_left:
            self._cache[p] = frame
            self._cache_left -= frame.nbytes
        return frame

    def read(self) -> np.ndarray:
        for _ in range(len(self._files)):
            p = self._files[self._pos]
            self._pos = (self._pos + 1) % len(self._files)
            if p in self._bad:
                continue
            frame = self._load(p)
            if frame is not None:
                self._delivered += 1
                return frame
        raise CameraLost(f"folder {self.path} has no readable image any more ({len(self._files)} files tried "
                         f"after {self._delivered} frames); {CAMERA_HINT}")


# ---------------------------------------------------------------------------------- OpenCV capture
class _CaptureSource(FrameSource):
    """Shared code of webcam and video file sources (both are a ``cv2.VideoCapture``)."""

    cap: cv2.VideoCapture | None = None

    def close(self) -> None:
        if self.cap is not None:
            self.cap.release()
            self.cap = None

    def _grab(self) -> np.ndarray | None:
        if self.cap is None:
            raise CameraError(f"camera source {self.name} is closed")
        try:
            ok, frame = self.cap.read()
        except cv2.error:  # some backends raise instead of returning False when the device vanished
            return None
        if not ok or frame is None or frame.size == 0:
            return None
        return _bgr_to_rgb(_as_uint8(frame))


class VideoSource(_CaptureSource):
    """A video file's frames, one per ``read()``; rewound at the end when ``loop`` (the default)."""

    def __init__(self, path: str | os.PathLike, *, loop: bool = True, on_notice: Notice = print):
        self.path = Path(path)
        self.name = str(self.path)
        self.loop = loop
        self._notice = on_notice
        self._looped_told = False
        self._frames_read = 0
        self.cap = cv2.VideoCapture(str(self.path))
        if not self.cap.isOpened():
            self.close()
            raise CameraError(f"cannot open video {self.path}: OpenCV has no decoder for it or it is not a video; {CAMERA_HINT}")
        try:
            _check_frame_size(int(self.cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(self.cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
                              f"video {self.path}")
        except FrameTooLarge:
            self.close()
            raise
        # Decode the first frame now: a video with no frame fails at sensor.reset(), not mid-run.
        self._pending = self._grab()
        if self._pending is None:
            self.close()
            raise CameraError(f"video {self.path} has no readable frames; {CAMERA_HINT}")

    def read(self) -> np.ndarray:
        frame, self._pending = self._pending, None
        if frame is None:
            frame = self._grab()
        if frame is not None:
            self._frames_read += 1
            return frame
        if not self.loop:
            raise CameraLost(f"video {self.path} ended after {self._frames_read} frames (looping is off)")
        if self._frames_read == 0:
            raise CameraLost(f"video {self.path} has no readable frames any more; {CAMERA_HINT}")
        if not self._looped_told:
            self._notice(f"maixemu: video {self.path.name} ended after {self._frames_read} frames; looping")
            self._looped_told = True
        # Rewinding by position is unreliable for some containers: reopen instead.
        if self.cap is not None:
            self.cap.release()
        self.cap = cv2.VideoCapture(str(self.path))
        self._frames_read = 0
        frame = self._grab()
        if frame is None:
            raise CameraLost(f"video {self.path} could not be rewound after its end; {CAMERA_HINT}")
        self._frames_read = 1
        return frame


class WebcamSource(_CaptureSource):
    """An OpenCV webcam. The first frames of many webcams fail while the device starts: retry a bit."""

    #: How long ``read()`` keeps retrying before it gives up on a webcam.
    READ_TIMEOUT_S = 3.0
    live = True

    def __init__(self, index: int = 0):
        self.index = int(index)
        self.name = f"webcam {self.index}"
        self.cap = None
        self.frames_read = 0
        if not _webcam_node_present(self.index):
            raise CameraError(f"no webcam at index {self.index}; {CAMERA_HINT}")
        self.cap = cv2.VideoCapture(self.index)
        if not self.cap.isOpened():
            self.close()
            raise CameraError(f"no webcam at index {self.index}; {CAMERA_HINT}")

    def read(self) -> np.ndarray:
        deadline = time.monotonic() + self.READ_TIMEOUT_S
        while True:
            frame = self._grab()
            if frame is not None:
                self.frames_read += 1
                return frame
            if time.monotonic() > deadline:
                if self.frames_read == 0:
                    raise CameraError(f"webcam {self.index} opened but delivered no frame in "
                                      f"{self.READ_TIMEOUT_S:g} s (is another program using it?); {CAMERA_HINT}")
                raise CameraLost(f"webcam {self.index} stopped delivering frames after {self.frames_read} frames "
                                 f"(unplugged?); {CAMERA_HINT}")
            time.sleep(0.02)


def _webcam_node_present(index: int) -> bool:
    """False when Linux has no ``/dev/videoN``: probing a missing V4L device only prints OpenCV warnings."""
    return not sys.platform.startswith("linux") or Path(f"/dev/video{index}").exists()


# ---------------------------------------------------------------------------------- choosing
def open_source(spec: str | int | os.PathLike | None, *, on_notice: Notice = print) -> FrameSource:
    """The frame source for a ``--camera`` value (see the module docstring for the forms).

    Raises :class:`CameraError` with a message that says what to pass instead when the choice cannot
    be opened. ``None``/``"auto"`` never raises for a missing webcam: it falls back to the synthetic
    pattern and says so once through ``on_notice``.
    """
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("", "auto")):
        try:
            return WebcamSource(0)
        except CameraError:
            on_notice("maixemu: no webcam found (index 0): the camera shows a synthetic test pattern; "
                      "pass --camera 0|DIR|VIDEO|IMAGE to choose a source")
            return SyntheticSource()
    if isinstance(spec, bool):  # (e.g. ``camera = true`` in a project file: no source)
        raise CameraError(f"--camera {spec!r} is not a camera source; {CAMERA_HINT}")
    if isinstance(spec, int):
        return WebcamSource(spec)
    text = os.fspath(spec) if not isinstance(spec, str) else spec.strip()
    if text.lower() == "synthetic":
        return SyntheticSource()
    if text.isdigit():
        return WebcamSource(int(text))
    path = Path(text).expanduser()
    if path.is_dir():
        return FolderSource(path, on_notice=on_notice)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            return StillImageSource(path)
        return VideoSource(path, on_notice=on_notice)
    raise CameraError(f"camera source {text!r} not found: it is not a webcam index, a folder, a video or an image "
                      f"file; {CAMERA_HINT}")
