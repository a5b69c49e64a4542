"""What the KPU reads from an image: its AI buffer, checked as the firmware checks it.

On the device ``kpu.forward`` and ``kpu.run_yolo2`` read only the planar RGB888 "AI memory" of an
image, never its RGB565 pixels. ``sensor.snapshot()`` fills it, ``pix_to_ai()`` refreshes it,
and everything else (loading a file, ``resize``, drawing) leaves it absent or stale. This module
reproduces the firmware's checks and messages and, in ``warn``/``strict`` mode, tells the user
(once per line of their script) when the KPU read AI memory older than the pixels.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import FrameType

import numpy as np

from . import pixformat
from .kpu.errors import CHECK_IMG_FORMAT_ERR, PIX_AI_NULL
from .script_paths import is_package_code

MODES = ("device", "warn", "strict")


class StaleAIMemoryError(RuntimeError):
    """``--ai-memory strict``: the KPU was about to read AI memory older than the image's pixels."""


@dataclass
class AIMemoryPolicy:
    """``--ai-memory``: what happens when the KPU reads AI memory older than the pixels (one per board)."""

    mode: str = "device"
    warned_sites: set[tuple[str, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"--ai-memory must be one of {', '.join(MODES)}, not {self.mode!r}")


def _policy() -> AIMemoryPolicy:
    from .state import current

    return current().kpu.ai_memory


def _stderr():
    from .state import current

    return current().console.stderr


def script_call_site() -> tuple[str, int]:
    """File and line of the innermost frame outside maixemu: the user's call."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not is_package_code(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def _stale_message(call: str, site: tuple[str, int]) -> str:
    where = f"{os.path.basename(site[0])}:{site[1]}"
    return (
        f"{where}: {call} read the image's AI memory, which is older than its pixels (the image was "
        "changed after its AI buffer was filled, e.g. by draw_image/resize into it, drawing or a "
        "new frame copied in). The KPU sees the old picture, as on the device. Call img.pix_to_ai() "
        "right before the KPU call to refresh it"
    )


def _check_stale(img, call: str) -> None:
    is_stale = getattr(img, "_ai_is_stale", None)
    if is_stale is None or not is_stale():
        return
    policy = _policy()
    site = script_call_site()
    message = _stale_message(call, site)
    if policy.mode == "strict":
        raise StaleAIMemoryError(f"[maixemu] {message}")
    if site in policy.warned_sites:
        return
    policy.warned_sites.add(site)
    if policy.mode == "warn":  # asked for: shown even under --quiet
        print(f"[maixemu] warning: {message}", file=_stderr(), flush=True)
    else:  # the device reads the old buffer silently; the PC says so once per line of the script
        from .notices import hint

        hint(message)


def read_ai_input(img, model_chw: tuple[int, int, int], call: str = "kpu.forward") -> np.ndarray:
    """The (C,H,W) uint8 AI buffer the KPU will read, after the firmware's ``check_img_format``.

    Problems print the firmware's line and raise ``ValueError("[MAIXPY]kpu: check img format err!")``,
    with one ``[maixemu]`` line saying what to do (unless ``--quiet``).
    """
    channels, height, width = model_chw
    ai = img._ai_array()
    fmt = img.format()
    problem = advice = None
    if ai is None:
        problem = PIX_AI_NULL
        advice = (f"{call} got an image without AI memory: image.Image(path), resize(), cut(), copy() and "
                  "kpu.fmap() images have none. Call img.pix_to_ai() first (sensor.snapshot() images have it)")
    elif img.width() != width or img.height() != height:
        problem = f"[MAIXPY]kpu: img w={img.width()},h={img.height()}, but model w={width},h={height}\r\n"
        advice = (f"the model reads {width}x{height} images: img = img.resize({width}, {height}) then "
                  f"img.pix_to_ai(), or sensor.set_windowing(({width}, {height})) before snapshot()")
    elif fmt == pixformat.GRAYSCALE and channels != 1:
        problem = f"[MAIXPY]kpu: grayscale img, but model channel={channels}\r\n"
        advice = ("the model reads RGB images: sensor.set_pixformat(sensor.RGB565), or "
                  "img.to_rgb565() then img.pix_to_ai()")
    elif fmt == pixformat.RGB565 and channels != 3:
        problem = f"[MAIXPY]kpu: RGB img, but model channel={channels}\r\n"
        advice = (f"the model reads {channels}-channel images: sensor.set_pixformat(sensor.GRAYSCALE), or "
                  "img.to_grayscale() then img.pix_to_ai()")
    elif fmt not in (pixformat.GRAYSCALE, pixformat.RGB565):
        problem = "[MAIXPY]kpu: img bpp not support yet!\r\n"
        advice = "the KPU reads RGB565 or grayscale images: img.to_rgb565() (or to_grayscale()) then img.pix_to_ai()"
    if problem is not None:
        from .kpu.errors import advised

        print(problem, end="")
        raise advised(ValueError(CHECK_IMG_FORMAT_ERR), advice)
    _check_stale(img, call)
    return np.asarray(ai, dtype=np.uint8).reshape(channels, height, width)
