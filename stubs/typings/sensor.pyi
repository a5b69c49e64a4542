"""MaixPy ``sensor``: the board camera (OpenMV API, MaixPy v0.6.x ``py_sensor.c``).

Usual start: ``reset()``, ``set_pixformat(sensor.RGB565)``, ``set_framesize(sensor.QVGA)``,
optionally ``set_windowing((224, 224))``; capture starts once ``reset`` and ``set_framesize``
were done (``run(1)`` is optional). ``snapshot()`` fills both the pixels and the AI buffer.
"""

from typing import Any

from image import Image

# pixel formats (compare by name, the values are the firmware's enum)
BAYER: int
GRAYSCALE: int
RGB565: int
YUV422: int
JPEG: int
# sensor ids
OV9650: int
OV2640: int
OV7725: int
MT9V034: int
LEPTON: int
# special effects
NORMAL: int
NEGATIVE: int
# frame sizes (width x height)
QQCIF: int
"""88x72"""
QCIF: int
"""176x144"""
CIF: int
"""352x288"""
QQSIF: int
"""88x60"""
QSIF: int
"""176x120"""
SIF: int
"""352x240"""
QQQQVGA: int
"""40x30"""
QQQVGA: int
"""80x60"""
QQVGA: int
"""160x120"""
QVGA: int
"""320x240, by far the most used size on the K210."""
VGA: int
"""640x480 (does not fit the frame buffer in RGB565)."""
HQQQVGA: int
"""60x40 in this firmware's table."""
HQQVGA: int
"""120x80 in this firmware's table."""
HQVGA: int
"""240x160"""
B64X32: int
B64X64: int
B128X64: int
B128X128: int
B240X240: int
LCD: int
"""128x160"""
QQVGA2: int
"""128x160"""
WVGA: int
"""720x480"""
WVGA2: int
"""752x480"""
SVGA: int
"""800x600"""
SXGA: int
"""1280x1024"""
UXGA: int
"""1600x1200"""

def reset(freq: int = 24000000, set_regs: bool | int = True, dual_buff: bool | int = False, choice: int = 0) -> None:
    """Probe and initialise the camera; ``OSError("Reset Failed")`` if none answers."""
def binocular_reset(freq: int = 24000000) -> None:
    """Initialise both cameras of a dual-sensor board."""
def shutdown(enable: bool | int, /) -> None:
    """Power down / select a sensor (dual-sensor boards)."""
def sleep(enable: bool | int, /) -> None:
    """Put the sensor to sleep."""
def deinit() -> None:
    """Stop the camera and free its buffers."""
def set_pixformat(format: int, /, set_regs: bool | int = True) -> bool:
    """``sensor.RGB565`` or ``sensor.GRAYSCALE`` (grayscale: the pixels *are* the AI plane)."""
def set_framesize(framesize: int, /, set_regs: bool | int = True) -> None:
    """Set the frame size (``sensor.QVGA`` ...); resets any windowing."""
def set_windowing(roi: tuple[int, int] | tuple[int, int, int, int] | list[int], /) -> bool:
    """Capture a w x h window; sizes must be multiples of 8 and at least 8x8 (else ``ValueError``).

    On the usual OV2640/OV7740 boards the window is the **top-left** corner of the frame and the
    offsets are ignored (MaixPy-v1 issue #191). ``sensor.width()`` still reports the frame size.
    """
def set_hmirror(enable: bool | int, /) -> None:
    """Mirror the image left-right in the sensor (affects pixels and AI buffer)."""
def set_vflip(enable: bool | int, /) -> None:
    """Flip the image upside down in the sensor."""
def run(enable: bool | int, /) -> bool:
    """``run(1)`` starts streaming, ``run(0)`` stops it (a later snapshot times out)."""
def snapshot(update_jb: bool | int = True) -> Image:
    """Capture a frame: pixels **and** AI buffer filled (ready for ``kpu.forward``/``run_yolo2``).

    The image aliases the one frame buffer: an older snapshot object changes on the next capture.
    ``RuntimeError("Not init!")`` before ``reset``/``set_framesize``; ``RuntimeError("Sensor timeout!")``.
    """
def skip_frames(n: int | None = None, time: int | None = None) -> None:
    """Discard frames (``n`` frames and/or ``time`` ms; default 300 ms) to let exposure settle."""
def width() -> int:
    """Frame width of the current frame size (ignores windowing)."""
def height() -> int:
    """Frame height of the current frame size (ignores windowing)."""
def get_fb() -> Image | None:
    """The last captured frame, or None."""
def get_id() -> int:
    """The camera's id (e.g. ``sensor.OV2640``)."""
def flush() -> None:
    """Drop buffered frames."""
def set_contrast(level: int, /) -> bool:
    """Contrast -2..+2."""
def set_brightness(level: int, /) -> bool:
    """Brightness -2..+2."""
def set_saturation(level: int, /) -> bool:
    """Saturation -2..+2."""
def set_gainceiling(gainceiling: int, /) -> bool:
    """2, 4, 8, 16, 32, 64 or 128 (else ``ValueError("Invalid gainceiling")``)."""
def set_colorbar(enable: bool | int, /) -> bool:
    """Colour-bar test pattern on/off."""
def set_auto_gain(enable: bool | int, /, gain_db: float | None = None, gain_db_ceiling: float | None = None) -> None:
    """Automatic gain on/off (fixed ``gain_db`` when off)."""
def set_auto_exposure(enable: bool | int, /, exposure_us: int | None = None) -> None:
    """Automatic exposure on/off (fixed ``exposure_us`` when off)."""
def set_auto_whitebal(enable: bool | int, /, rgb_gain_db: tuple[float, float, float] | None = None) -> None:
    """Automatic white balance on/off."""
def get_gain_db() -> float:
    """Current gain in dB."""
def get_exposure_us() -> int:
    """Current exposure in microseconds."""
def get_rgb_gain_db() -> tuple[float, float, float]:
    """Current RGB gains in dB."""
def set_framerate(rate: int, /) -> None:
    """2, 8, 15, 30 or 60 fps (else ``ValueError("Invalid framerate")``)."""
def set_special_effect(sde: int, /) -> bool:
    """``sensor.NORMAL`` or ``sensor.NEGATIVE``."""
def set_lens_correction(enable: bool | int, radi: int, coef: int, /) -> bool:
    """Sensor lens-shading correction."""
def set_jb_quality(quality: int, /) -> None:
    """JPEG quality of the IDE frame-buffer stream."""
