"""``--input device``: the picture as the board's camera and a script deliver it to the KPU.

The path is the firmware's: the camera decoder of ``maixemu run --camera`` reads the file, the
sensor's ``fit_frame`` scales it to ``--framesize`` (when given), the frame is stored as RGB565 (or
grayscale) exactly as ``sensor.snapshot()`` stores it, with the AI buffer the snapshot fills; the
steps (``cut``, ``resize``, ``to_grayscale``) run as firmware image methods, ``pix_to_ai()`` refreshes
the AI buffer, and the KPU module's own reader (``ai_memory.read_ai_input``, what ``kpu.forward``
calls) takes the planar bytes. So the model sees what ``kpu.forward(task, img)`` would see on
the device, 5/6-bit colour rounding and the firmware's resampling included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import EvalError, Undecodable
from .geometry import Geometry
from .recipe import InputRecipe


@dataclass
class PreparedInput:
    """The model's input (C, H, W) uint8, how the original maps onto it, and the original's size."""

    chw: np.ndarray
    geometry: Geometry
    source_size: tuple[int, int]


def decode_like_camera(path: str) -> np.ndarray:
    """(H, W, 3) RGB as maixemu's still-image camera source decodes the file."""
    from ..host.camera import CameraError, StillImageSource

    try:
        return StillImageSource(path).read()
    except CameraError:
        raise Undecodable("not an image OpenCV or Pillow can decode") from None


def final_format(recipe: InputRecipe) -> str:
    """``"grayscale"`` or ``"rgb565"``: the image's format after the recipe's steps."""
    if recipe.pixformat == "grayscale" or any(s.op == "to_grayscale" for s in recipe.steps):
        return "grayscale"
    return "rgb565"


def check_recipe(recipe: InputRecipe, model_chw: tuple[int, int, int]) -> None:
    """Refuse, before the run, a device recipe the KPU would refuse on every image."""
    channels, height, width = model_chw
    fmt = final_format(recipe)
    if recipe.mode == "device" and fmt == "rgb565" and channels != 3:
        raise EvalError(
            f"[MAIXPY]kpu: RGB img, but model channel={channels}: this model reads a grayscale image; "
            "use --pixformat grayscale (a grayscale camera) or --to-grayscale (img.to_grayscale() in the script)"
        )
    if recipe.mode == "device" and fmt == "grayscale" and channels != 1:
        raise EvalError(
            f"[MAIXPY]kpu: grayscale img, but model channel={channels}: this model reads RGB; use --pixformat rgb565 "
            "and no --to-grayscale"
        )
    check_sizes(recipe)
    last_resize = next((s for s in reversed(recipe.steps) if s.op != "to_grayscale"), None)
    if last_resize is not None and last_resize.op == "resize" and tuple(last_resize.args) != (width, height):
        raise EvalError(
            f"[MAIXPY]kpu: img w={last_resize.args[0]},h={last_resize.args[1]}, but model w={width},h={height}: "
            f"the last --resize must give the model's input size {width},{height}"
        )


def check_sizes(recipe: InputRecipe) -> None:
    """Sizes no image can go through, refused before the first one: a ``--framesize`` the camera does
    not deliver (the firmware's largest frame, UXGA), a ``--crop``/``--resize`` whose image the
    K210's memory cannot hold (``img.cut``/``img.resize`` raise the firmware's MemoryError)."""
    from ..firmware import heap, sensor

    largest = max(sensor.RESOLUTION.values())
    if recipe.framesize is not None:
        fw, fh = recipe.framesize
        if fw > largest[0] or fh > largest[1]:
            raise EvalError(f"--framesize {fw}x{fh}: the camera delivers at most {largest[0]}x{largest[1]} (UXGA)")
    gray = recipe.pixformat == "grayscale"
    for step in recipe.steps:
        if step.op == "to_grayscale":
            gray = True
            continue
        option, (w, h) = ("--crop", step.args[2:]) if step.op == "crop" else ("--resize", step.args)
        shown = ",".join(str(a) for a in step.args)
        if w <= 0 or h <= 0:
            raise EvalError(f"{option} {shown}: needs a width and height > 0 ({'X,Y,W,H' if option == '--crop' else 'W,H'})")
        try:
            heap.check_image_buffer(w, h, 1 if gray else 2)
        except MemoryError as exc:
            raise EvalError(f"{option} {shown}: a {w}x{h} image does not fit the K210's memory "
                            f"(MemoryError: {exc})") from None


def device_input(path: str, recipe: InputRecipe, model_chw: tuple[int, int, int]) -> PreparedInput:
    """The AI buffer ``kpu.forward`` reads after snapshot → steps → ``pix_to_ai()``."""
    from ..firmware import ai_memory, image, sensor

    channels, height, width = model_chw
    frame = decode_like_camera(path)
    source_h, source_w = frame.shape[:2]
    geometry = Geometry()
    if recipe.framesize is not None:
        fw, fh = recipe.framesize
        frame = sensor.fit_frame(frame, fw, fh)
        geometry = geometry.fit(source_w, source_h, fw, fh)
    fmt = image.GRAYSCALE if recipe.pixformat == "grayscale" else image.RGB565
    # What sensor.snapshot() stores in the frame buffer, then its AI fill (pix_to_ai() on an
    # unchanged snapshot rewrites the same bytes, so one call stands for both).
    img = image.Image._from_rgb888(frame, fmt)
    img.pix_to_ai()
    for step in recipe.steps:
        if step.op == "crop":
            x, y, w, h = step.args
            img = img.cut(x, y, w, h)
            geometry = geometry.crop(x, y)
        elif step.op == "resize":
            w, h = step.args
            geometry = geometry.resize(img.width(), img.height(), w, h)
            img = img.resize(w, h)
        elif step.op == "to_grayscale":
            img = img.to_grayscale()
    if (img.width(), img.height()) != (width, height):
        geometry = geometry.resize(img.width(), img.height(), width, height)
        img = img.resize(width, height)
    img.pix_to_ai()
    try:
        ai = ai_memory.read_ai_input(img, model_chw, "kpu.forward")
    except ValueError as exc:  # checked up front; kept as the device's refusal if it ever happens
        raise EvalError(str(exc)) from None
    return PreparedInput(np.array(ai, dtype=np.uint8, copy=True), geometry, (source_w, source_h))
