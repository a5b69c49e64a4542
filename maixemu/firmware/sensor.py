"""The MaixPy ``sensor`` module: the board camera, fed by a PC frame source (maixpy-api.md §3).

A frame travels like on the board: the PC source (webcam, video, folder, still image, synthetic —
``maixemu.host.camera``) plays the image sensor; :func:`fit_frame` scales it to the frame size the
way the camera's scaler would (cover the frame, keep the aspect ratio, crop the middle, ``INTER_AREA``);
mirror/flip happen "in the sensor" on the whole frame; the window is cut out of that frame; and the
image module's ``_load_frame`` writes the RGB565 pixels and the AI buffer of the **one** main frame
buffer, exactly as the DVP block writes both copies on the K210. Every ``snapshot()`` returns a new
Python object over that memory, so an older snapshot changes when the next frame arrives.

Device rules kept on purpose (scripts and teaching material depend on them):

* ``set_windowing`` on the usual OV2640 boards keeps the **top-left** w×h corner and ignores the
  offsets (sipeed/MaixPy-v1 issue #191). A board whose sensor state has ``windowing="centred"``
  (``maixemu run --sensor gc0328``) gives the GC0328 behaviour, which honours ``(x, y)`` and the centring of the ``(w, h)`` form.
* ``sensor.width()/height()`` report the frame size, never the window.
* Error types and texts are the firmware's (``TypeError("not found sensor")``, ``RuntimeError("Not
  init!")``, ``OSError`` for OpenMV assertions, ``ValueError("Sensor control failed!")`` ...).

Emulator choices:

* Pacing: nothing sleeps. ``snapshot()`` returns as soon as the source has a frame (a webcam paces
  itself; files and the synthetic pattern are as fast as the script). ``skip_frames`` exists to let a
  real camera settle its exposure, so it discards frames only from *live* sources (webcams):
  ``skip_frames(time=t)`` discards ``ceil(t / 33.3)`` frames (30 fps) but at most
  :data:`SKIP_TIME_MAX_FRAMES` instead of waiting ``t`` ms, ``skip_frames(n)`` discards ``n``. Videos,
  folders, still images and the synthetic pattern are not advanced, so the script's first snapshot is
  their first frame (what a user who passes ``--camera DIR`` expects to see first).
* Frame sizes are the firmware's ``resolution[]`` table (``omv/sensor.c``). Note HQQQVGA = 60×40 and
  HQQVGA = 120×80 there, while OpenMV (and the comments in ``py_sensor.c``) say 80×40 / 160×80: the
  table is what the board delivers.
* ``set_special_effect(sensor.NEGATIVE)`` inverts the frames; brightness/contrast/saturation, gain,
  exposure and white balance are accepted and remembered but do not change the pixels.

Board state: :class:`SensorState` (``current().sensor``) and the camera connector
:class:`CameraPort` (``current().camera``, the PC source); ``snapshot()`` fires the board's
``before_capture`` (the frame boundary) and ``snapshot`` events (the frame budget, scripted keys);
what listens to them — the display's frame boundary among them — the session wires, so this module
never calls the LCD.
"""

from __future__ import annotations

import errno
import functools
import math
import weakref
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from .chip import ov2640_controls as _ov2640
from . import pixformat as _pf
from . import state as _state_mod
from .mp.mp_args import fixed_items as _fixed_items
from .mp.mp_args import float_arg as _float
from .mp.notices import advised as _advised
from .mp.mp_args import int_arg as _int
from .mp.mp_args import items_of as _items_of

# ------------------------------------------------------------------------------------ constants
RGB565 = _pf.RGB565
GRAYSCALE = _pf.GRAYSCALE
YUV422 = _pf.YUV422
BAYER = _pf.BAYER
JPEG = _pf.JPEG

OV9650 = _pf.OV9650
OV2640 = _pf.OV2640
OV7725 = _pf.OV7725
MT9V034 = _pf.MT9V034
LEPTON = _pf.LEPTON

NORMAL = 0
NEGATIVE = 1

# Frame sizes: the firmware's framesize_t values and its resolution[] table (omv/sensor.c).
QQCIF, QCIF, CIF, QQSIF, QSIF, SIF = 1, 2, 3, 4, 5, 6
QQQQVGA, QQQVGA, QQVGA, QVGA, VGA, HQQQVGA, HQQVGA, HQVGA = 7, 8, 9, 10, 11, 12, 13, 14
B64X32, B64X64, B128X64, B128X128, B240X240 = 15, 16, 17, 18, 19
LCD, QQVGA2, WVGA, WVGA2, SVGA, SXGA, UXGA = 20, 21, 22, 23, 24, 25, 26

#: framesize constant -> (width, height), as the firmware's ``resolution[]`` table.
RESOLUTION: dict[int, tuple[int, int]] = {
    0: (0, 0),
    QQCIF: (88, 72), QCIF: (176, 144), CIF: (352, 288),
    QQSIF: (88, 60), QSIF: (176, 120), SIF: (352, 240),
    QQQQVGA: (40, 30), QQQVGA: (80, 60), QQVGA: (160, 120), QVGA: (320, 240), VGA: (640, 480),
    HQQQVGA: (60, 40), HQQVGA: (120, 80), HQVGA: (240, 160),
    B64X32: (64, 32), B64X64: (64, 64), B128X64: (128, 64), B128X128: (128, 128), B240X240: (240, 240),
    LCD: (128, 160), QQVGA2: (128, 160), WVGA: (720, 480), WVGA2: (752, 480),
    SVGA: (800, 600), SXGA: (1280, 1024), UXGA: (1600, 1200),
}

#: Pixel formats ``set_pixformat`` accepts on the K210 (BAYER/JPEG are refused by the DVP driver).
SUPPORTED_PIXFORMATS = (RGB565, YUV422, GRAYSCALE)

#: ``skip_frames(time=t)`` discards ceil(t / FRAME_MS) frames, at most this many (see module doc).
SKIP_TIME_MAX_FRAMES = 10
FRAME_MS = 1000.0 / 30.0

WINDOWING_MODES = ("ov2640", "centred")

_FRAMERATES = (2, 8, 15, 25, 30, 60)
_GAINCEILINGS = (2, 4, 8, 16, 32, 64, 128)

_KEEP: Any = object()


# ------------------------------------------------------------------------------------ frame shaping
def fit_frame(rgb: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale an RGB frame to ``width``×``height`` the way a camera delivers a frame size.

    The source is scaled to *cover* the frame (aspect ratio kept) and the middle is kept — a 16:9
    webcam frame loses its sides at QVGA, it is never squashed. ``cv2.INTER_AREA`` averages the pixels
    a sensor's binning/scaler would. Frames already of the right size are returned as they are.
    """
    rgb = np.asarray(rgb)
    if rgb.ndim == 2:
        rgb = np.repeat(rgb[:, :, np.newaxis], 3, axis=2)
    sh, sw = rgb.shape[:2]
    if (sw, sh) == (width, height):
        return rgb
    if sw <= 0 or sh <= 0:
        raise ValueError(f"the camera source delivered an empty frame ({sw}x{sh})")
    scale = max(width / sw, height / sh)
    cw = min(sw, max(1, round(width / scale)))
    ch = min(sh, max(1, round(height / scale)))
    x0, y0 = (sw - cw) // 2, (sh - ch) // 2
    crop = rgb[y0 : y0 + ch, x0 : x0 + cw, :3]
    return cv2.resize(np.ascontiguousarray(crop), (width, height), interpolation=cv2.INTER_AREA)


#: Bytes of scaled frames kept for sources that deliver the same read-only frame again and again
#: (a folder of pictures, one picture: ``host.camera`` marks what it shares read-only): scaling a
#: photo to the frame size cost 1.0–1.7 ms a frame (COCO photos to QVGA), over a third of the
#: face sample's frame with the compiled engine, for the same bytes every loop. Live frames
#: (webcam, video) are fresh, writable arrays and are never kept.
_FIT_CACHE_BYTES = 32 << 20


class _FittedFrames:
    """``fit_frame`` of read-only source frames, remembered per frame object and size (weakly: a
    frame the source dropped takes its scaled copy with it), up to ``_FIT_CACHE_BYTES``."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, int, int], tuple[weakref.ref, np.ndarray]] = {}
        self._bytes = 0

    def fit(self, raw: np.ndarray, width: int, height: int) -> np.ndarray:
        if not isinstance(raw, np.ndarray) or raw.flags.writeable:
            return fit_frame(raw, width, height)
        key = (id(raw), width, height)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is raw:
            return entry[1]
        frame = fit_frame(raw, width, height)
        if frame is raw or self._bytes + frame.nbytes > _FIT_CACHE_BYTES:
            return frame
        if entry is not None:  # (a dead frame's id, reused)
            self._forget(key)
        frame.setflags(write=False)  # (shared between snapshots, as the source's own frame is)
        self._entries[key] = (weakref.ref(raw, functools.partial(self._dropped, key)), frame)
        self._bytes += frame.nbytes
        return frame

    def _dropped(self, key: tuple[int, int, int], ref: object) -> None:
        entry = self._entries.get(key)
        if entry is not None and entry[0] is ref:  # (not a newer frame's entry under a reused id)
            self._forget(key)

    def _forget(self, key: tuple[int, int, int]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry[1].nbytes


# ------------------------------------------------------------------------------------ state
def _synthetic_source():
    """A board with no camera given: the deterministic synthetic pattern (never a webcam)."""
    from ..host.camera import SyntheticSource

    return SyntheticSource()


@_state_mod.board_part("camera")
class CameraPort:
    """The board's camera connector: a factory for the PC frame source, opened at the first
    ``sensor.reset()`` (a script without camera never opens the webcam) and closed with the board."""

    def __init__(self, factory: Callable[[], Any] | None = None):
        self.factory: Callable[[], Any] = factory or _synthetic_source
        self.source: Any = None
        #: sources this port opened (all closed with the board, also ones replaced by a new factory)
        self.opened: list[Any] = []

    def open(self) -> Any:
        if self.source is None:
            self.source = self.factory()
            self.opened.append(self.source)
        return self.source

    def plug(self, factory: Callable[[], Any] | None) -> None:
        """Connect another camera: the next ``sensor.reset()`` opens it."""
        self.factory = factory or _synthetic_source
        self.source = None

    def close(self) -> None:
        opened, self.opened, self.source = self.opened, [], None
        for source in opened:
            source.close()


@_state_mod.board_part("sensor")
class SensorState:
    """Everything the firmware keeps about the camera (``sensor_t`` + the main frame buffer header).

    ``windowing`` is the sensor chip's behaviour: ``"ov2640"`` (default; top-left window, offsets
    ignored, as on the common boards) or ``"centred"`` (GC0328 behaviour, offsets honoured).
    """

    def __init__(self, windowing: str = "ov2640") -> None:
        self.windowing = windowing_mode(windowing)
        self.found = False  # reset() probed a camera (the driver's function pointers exist)
        self.size_set = False  # set_framesize() succeeded at least once
        self.running = False  # DVP interrupts on: frames arrive
        self.framesize = 0  # what width()/height() report
        self.fb_size = (0, 0)  # the frame buffer's full frame size (kept across reset())
        self.window: tuple[int, int, int, int] | None = None
        self.pixformat = RGB565
        self.hmirror = False
        self.vflip = False
        self.sde = NORMAL
        self.have_frame = False
        self.controls: dict[str, Any] = {
            "contrast": 0, "brightness": 0, "saturation": 0, "gainceiling": 8, "colorbar": False,
            "auto_gain": True, "gain_db": 0.0, "auto_exposure": True, "exposure_us": 10000,
            "auto_whitebal": True, "rgb_gain_db": (0.0, 0.0, 0.0), "framerate": 30, "jb_quality": 95,
            "lens_correction": False,
        }
        #: the sensor's registers (``__write_reg``/``__read_reg``, and the gain/exposure controls)
        self.registers: dict[int, int] = _ov2640.default_registers()
        self.fitted = _FittedFrames()


def windowing_mode(name: str | None) -> str:
    """``"ov2640"`` or ``"centred"`` (``"gc0328"``, ``"center"`` and ``"centered"`` name the latter)."""
    mode = (name or "ov2640").lower()
    if mode in ("gc0328", "center", "centered"):
        mode = "centred"
    if mode not in WINDOWING_MODES:
        raise ValueError(f"windowing must be one of {WINDOWING_MODES}, got {name!r}")
    return mode


def _board():
    return _state_mod.current()


def _st() -> SensorState:
    return _state_mod.current().part(SensorState)


def _image_module():
    from . import image

    return image


def _open_source():
    from ..host.camera import CameraError

    try:
        return _board().part(CameraPort).open()
    except CameraError as e:
        raise OSError(f"Reset Failed ({e})") from None


# ------------------------------------------------------------------------------------ capture
def _read_frame() -> np.ndarray:
    """One frame from the source, shaped like the sensor delivers it (size, mirror, effect, window)."""
    from ..host.camera import CameraError

    st = _st()
    try:
        raw = _open_source().read()
    except CameraError as e:
        raise RuntimeError(f"Sensor timeout! ({e})") from None
    w, h = st.fb_size
    frame = st.fitted.fit(raw, w, h)
    if st.hmirror:
        frame = frame[:, ::-1]
    if st.vflip:
        frame = frame[::-1]
    if st.window is not None:
        x, y, ww, wh = st.window
        if st.windowing == "ov2640":
            x = y = 0  # the DVP only shrinks its capture size: the top-left corner (issue #191)
        frame = frame[y : y + wh, x : x + ww]
    if st.sde == NEGATIVE:
        frame = 255 - frame
    return frame


def _load(frame: np.ndarray):
    fb = _image_module()._main_frame()
    fb._load_frame(frame, _st().pixformat, fill_ai=True)
    _st().have_frame = True
    return fb


def _check_capture(timeout_msg: str) -> None:
    st = _st()
    if not st.found:
        raise _advised(TypeError("not found sensor"), "call sensor.reset() first (it finds the camera)")
    if st.pixformat == JPEG:
        raise OSError("Operation not supported on JPEG")
    if not st.size_set:
        raise _advised(RuntimeError("Not init!"), "call sensor.set_pixformat(...) and sensor.set_framesize(...) "
                       "after sensor.reset()")
    if not st.running:
        raise _advised(RuntimeError(timeout_msg), "sensor.run(0) stopped the camera: call sensor.run(1)")


# ------------------------------------------------------------------------------------ MaixPy API
def reset(freq: int = 24000000, set_regs: bool = True, dual_buff: bool = False, choice: int = 0) -> None:
    """Probe the camera (open the PC source), default registers, start capture if a size is set.

    Keeps the frame buffer size and window of an earlier ``set_framesize`` (the firmware does), but
    ``width()``/``height()`` read 0 again until the next ``set_framesize``. Mirror/flip are cleared.
    """
    _open_source()
    st = _st()
    st.found = True
    st.registers = _ov2640.default_registers()  # the driver's init table
    st.hmirror = st.vflip = False
    st.sde = NORMAL
    st.framesize = 0
    st.pixformat = RGB565
    if st.size_set:
        st.running = True


def binocular_reset(freq: int = 24000000) -> None:
    """Dual-sensor boards: both sensors come from the one PC source."""
    reset(freq)


def deinit() -> None:
    """Stop capture and free the frame buffers: snapshots fail until reset + set_framesize again."""
    st = _st()
    st.running = False
    st.size_set = False


def shutdown(enable: bool) -> None:
    """Select/power a sensor on dual-camera boards; one PC source serves both, so nothing changes."""


def sleep(enable: bool) -> None:
    """Sensor sleep mode: accepted, frames keep coming from the PC source."""


def flush() -> None:
    """Drop buffered frames (the PC sources hold none) and hand the IDE the frame buffer as it is now.

    ``sensor_flush`` calls ``fb_update_jpeg_buffer()``: a script that stops taking snapshots
    calls ``flush()`` so the IDE shows its last picture (see ``maixemu.firmware.ide_events``).
    """
    from . import ide_events

    ide_events.fb_update_jpeg_buffer()


def set_pixformat(*args: int, set_regs: bool = True) -> bool:
    """RGB565, YUV422 (delivered as RGB565) or GRAYSCALE; others: ``OSError("Pixel format is not supported!")``."""
    if len(args) != 1:
        raise ValueError("arg err")
    fmt = _int(args[0])
    if not _st().found or fmt not in SUPPORTED_PIXFORMATS:
        raise OSError("Pixel format is not supported!")
    _st().pixformat = fmt
    return True


def set_framesize(*args: int, set_regs: bool = True) -> None:
    """Choose the frame size (resets any window); starts capture when ``reset()`` was done."""
    if len(args) != 1:
        raise ValueError("arg err")
    size = _int(args[0])
    st = _st()
    if not st.found or size not in RESOLUTION or size == 0:
        raise OSError(errno.EIO, "EIO")
    st.framesize = size
    st.fb_size = RESOLUTION[size]
    st.window = None
    st.size_set = True
    st.running = True


def set_windowing(roi) -> bool:
    """Capture a w×h window: ``(w, h)`` (centred) or ``(x, y, w, h)``; multiples of 8, at least 8×8.

    Checks run against the frame size, in the firmware's order and with its messages. What is
    captured afterwards depends on the board: top-left corner (OV2640, default) or at ``(x, y)``
    (``windowing="centred"``). ``snapshot()`` then returns w×h images.
    """
    items = _array(roi)
    res_w, res_h = RESOLUTION.get(_st().framesize, (0, 0))
    if len(items) == 4:
        x, y, w, h = (_int(v) for v in items)
    elif len(items) == 2:
        w, h = (_int(v) for v in items)
        x = res_w // 2 - w // 2
        y = res_h // 2 - h // 2
    else:
        raise ValueError("The tuple/list must either be (x, y, w, h) or (w, h)")
    advice = (f"the window must lie inside the {res_w}x{res_h} frame (sensor.set_framesize), at least 8x8, "
              "width and height multiples of 8")
    if w < 8 or h < 8:
        raise _advised(ValueError("The selected window is too small"), advice)
    if x < 0 or x + w > res_w or y < 0 or y + h > res_h:
        raise _advised(ValueError("The selected window is outside the bounds of the frame"), advice)
    if w % 8 != 0 or h % 8 != 0:
        raise _advised(ValueError("value must be multiple of 8"), advice)
    _st().window = (x, y, w, h)
    return True


def set_hmirror(enable) -> None:
    """Mirror left-right in the sensor (both the pixels and the AI buffer)."""
    _control_or_fail()
    _st().hmirror = bool(enable)


def set_vflip(enable) -> None:
    """Flip upside down in the sensor (both the pixels and the AI buffer)."""
    _control_or_fail()
    _st().vflip = bool(enable)


def run(enable) -> bool:
    """``run(1)`` starts/continues capture, ``run(0)`` stops it (snapshots then time out)."""
    _st().running = bool(_int(enable))
    return True


def snapshot(update_jb: bool = True):
    """Capture one frame into the main frame buffer and return a new image object over it.

    Raises like the firmware: ``TypeError("not found sensor")`` before ``reset()``,
    ``RuntimeError("Not init!")`` before ``set_framesize()``, ``OSError("Operation not supported on
    JPEG")``, ``RuntimeError("Sensor timeout!")`` after ``run(0)`` (at once, no 300 ms wait).
    """
    board = _board()
    board.checkpoint()
    _check_capture("Sensor timeout!")
    if update_jb:  # the IDE gets the previous frame, with the script's drawings, before it is overwritten
        from . import ide_events

        ide_events.fb_update_jpeg_buffer()
    events = board.events
    if events.before_capture:
        events.fire(events.before_capture)
    fb = _load(_read_frame())
    if events.snapshot:
        events.fire(events.snapshot)
    return fb._alias()


def skip_frames(n: int | None = None, time: int | None = None) -> None:
    """Discard frames so the exposure settles; see the module docstring for the pacing choice.

    Before ``reset()``/``set_framesize()`` it does nothing (the firmware silently returns, too).
    After ``run(0)``: ``RuntimeError("Sensor Timeout!!")``.
    """
    _board().checkpoint()
    st = _st()
    if not st.found or not st.size_set:
        return None
    if not st.running:
        raise _advised(RuntimeError("Sensor Timeout!!"), "sensor.run(0) stopped the camera: call sensor.run(1)")
    if n is None:
        t = 300 if time is None else _int(time)
        count = min(SKIP_TIME_MAX_FRAMES, math.ceil(t / FRAME_MS)) if t > 0 else 0
    else:
        count = _int(n)
        if time is not None:
            t = _int(time)
            count = min(count, math.ceil(t / FRAME_MS)) if t > 0 else 0
    if not getattr(_open_source(), "live", False):
        return None  # files and patterns need no settling: keep their first frame for the script
    frame = None
    for _ in range(count):
        frame = _read_frame()
    if frame is not None:
        _load(frame)
    return None


def width() -> int:
    """Width of the current frame size (ignores the window; 0 before ``set_framesize``)."""
    return RESOLUTION.get(_st().framesize, (0, 0))[0]


def height() -> int:
    """Height of the current frame size (ignores the window; 0 before ``set_framesize``)."""
    return RESOLUTION.get(_st().framesize, (0, 0))[1]


def get_fb():
    """The main frame buffer as an image (the last frame), or ``None`` before the first frame."""
    if not _st().have_frame:
        return None
    return _image_module()._main_frame()._alias()


def get_id() -> int:
    """The camera id: ``sensor.OV2640`` (GC0328's id in ``"centred"`` windowing mode); 0 before reset."""
    if not _st().found:
        return 0
    return _pf.GC0328 if _st().windowing == "centred" else OV2640


# --- image tuning: accepted and remembered; return values as on an OV2640 --------------------
def _level_setter(name: str) -> Callable[[int], bool]:
    def setter(level) -> bool:
        level = _int(level)
        if not _st().found or not -2 <= level <= 2:
            return False
        _st().controls[name] = level
        return True

    setter.__name__ = f"set_{name}"
    setter.__doc__ = f"{name.capitalize()} level -2..+2 → True; out of range or no camera → False (pixels unchanged)."
    return setter


set_contrast = _level_setter("contrast")
set_brightness = _level_setter("brightness")
set_saturation = _level_setter("saturation")


def set_gainceiling(gainceiling) -> bool:
    """2, 4, 8, 16, 32, 64 or 128 (else ``ValueError("Invalid gainceiling")``)."""
    g = _int(gainceiling)
    if g not in _GAINCEILINGS:
        raise ValueError("Invalid gainceiling")
    if not _st().found:
        return False
    _st().controls["gainceiling"] = g
    return True


def set_colorbar(enable) -> bool:
    """The sensor's colour-bar test mode: remembered (use ``--camera synthetic`` for a pattern)."""
    if not _st().found:
        return False
    _st().controls["colorbar"] = bool(enable)
    return True


def _keyword(args: tuple, index: int, kwargs: dict, name: str, default: Any) -> Any:
    """``py_helper_keyword_*``: the argument at ``index`` or the keyword ``name``; other keywords are
    never looked at (the firmware ignores what it does not know: ``set_auto_gain(False, value=100)``)."""
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _enable_arg(args: tuple, function: str) -> int:
    if not args:
        raise TypeError("function missing 1 required positional arguments")
    return _int(args[0])


def _frame_width() -> int:
    return int(_st().fb_size[0] or 320)


def set_auto_gain(*args: Any, **kwargs: Any) -> None:
    """``set_auto_gain(enable, gain_db=nan, gain_db_ceiling=nan)``: AGC on/off; off with ``gain_db`` sets
    the GAIN register (``get_gain_db`` reads the step it holds); on with ``gain_db_ceiling`` sets COM9."""
    enable = _enable_arg(args, "set_auto_gain")
    gain_db = _float(_keyword(args, 1, kwargs, "gain_db", math.nan))
    ceiling = _float(_keyword(args, 2, kwargs, "gain_db_ceiling", math.nan))
    _control_or_fail()
    st = _st()
    _ov2640.set_auto_gain(st.registers, bool(enable), gain_db, ceiling)
    st.controls["auto_gain"] = bool(enable)


def get_gain_db() -> float:
    """The gain the GAIN register holds, in dB (the driver's conversion)."""
    _control_or_fail()
    return _ov2640.get_gain_db(_st().registers)


def set_auto_exposure(*args: Any, **kwargs: Any) -> None:
    """``set_auto_exposure(enable, exposure_us=-1)``: AEC on/off; off with ``exposure_us`` writes the
    exposure registers in lines (the driver's conversion, and its REG04/REG45 mix-up)."""
    enable = _enable_arg(args, "set_auto_exposure")
    exposure_us = _int(_keyword(args, 1, kwargs, "exposure_us", -1))
    _control_or_fail()
    st = _st()
    _ov2640.set_auto_exposure(st.registers, bool(enable), exposure_us, _frame_width())
    st.controls["auto_exposure"] = bool(enable)


def get_exposure_us() -> int:
    """The exposure the registers hold, in µs."""
    _control_or_fail()
    return _ov2640.get_exposure_us(_st().registers, _frame_width())


def set_auto_whitebal(*args: Any, **kwargs: Any) -> None:
    """``set_auto_whitebal(enable, rgb_gain_db=(nan, nan, nan))``: AWB on/off. The OV2640 driver does
    nothing with ``rgb_gain_db`` (its branch is empty); the tuple is still checked for 3 numbers."""
    enable = _enable_arg(args, "set_auto_whitebal")
    gains = _keyword(args, 1, kwargs, "rgb_gain_db", None)
    if gains is not None:
        [_float(v) for v in _array(gains, 3)]
    _control_or_fail()
    _st().controls["auto_whitebal"] = bool(enable)


def get_rgb_gain_db() -> tuple[float, float, float]:
    """(0.0, 0.0, 0.0) on the OV2640: its driver leaves the three gains as the caller initialised them."""
    _control_or_fail()
    return (0.0, 0.0, 0.0)


def set_framerate(rate) -> None:
    """2, 8, 15, 25, 30 or 60 (else ``ValueError("Invalid framerate")``); pacing is not emulated."""
    r = _int(rate)
    if r not in _FRAMERATES:
        raise ValueError("Invalid framerate")
    if not _st().found:
        raise ValueError("Fail")
    _st().controls["framerate"] = r


def set_special_effect(sde) -> bool:
    """``sensor.NORMAL`` or ``sensor.NEGATIVE`` (inverts the frames) → True; others → False."""
    value = _int(sde)
    if not _st().found or value not in (NORMAL, NEGATIVE):
        return False
    _st().sde = value
    return True


def set_lens_correction(enable, radi, coef) -> bool:
    if not _st().found:
        return False
    _st().controls["lens_correction"] = (bool(enable), _int(radi), _int(coef))
    return True


def set_jb_quality(quality) -> None:
    """JPEG quality of the IDE preview buffer; must be an int (``ValueError("must be int")``)."""
    if isinstance(quality, bool) or not isinstance(quality, (int, np.integer)):
        raise ValueError("must be int")
    _st().controls["jb_quality"] = int(quality)


def __write_reg(addr, val) -> None:
    """Raw register write: remembered so ``__read_reg`` returns it; the PC camera is not affected."""
    _st().registers[_int(addr)] = _int(val) & 0xFF


def __read_reg(addr) -> int:
    return _st().registers.get(_int(addr), 0)



# ------------------------------------------------------------------------------------ helpers
def _control_or_fail() -> None:
    if not _st().found:
        raise ValueError("Sensor control failed!")


def _array(v, n: int | None = None) -> list:
    return _items_of(v) if n is None else _fixed_items(v, n)
