"""``--input file``: the file's own RGB888, as ``maixemu forward`` and the golden vectors take it.

PIL decodes, ``convert("L")`` for a one-channel model (``"RGB"`` otherwise), the recipe's geometry
(frame-size fit, crop, resize) runs on those 8-bit pixels and a final bilinear resize gives the
model's size. No RGB565 step and no firmware resampling: this is the input a float model is
trained on, and the float reference always gets it.
"""

from __future__ import annotations

import numpy as np

from .device_input import PreparedInput
from .errors import Undecodable
from .geometry import Geometry
from .recipe import InputRecipe


def pil_to_chw(img, channels: int, height: int, width: int) -> np.ndarray:
    """A PIL image as (C, H, W) uint8: convert, bilinear resize to (W, H), HWC → CHW."""
    from PIL import Image

    img = img.convert("L" if channels == 1 else "RGB").resize((width, height), Image.Resampling.BILINEAR)
    arr = np.asarray(img, dtype=np.uint8)
    return np.ascontiguousarray(arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1))


def file_input(path: str, recipe: InputRecipe, model_chw: tuple[int, int, int]) -> PreparedInput:
    from PIL import Image, UnidentifiedImageError

    from ..firmware.sensor import fit_frame

    channels, height, width = model_chw
    try:
        with Image.open(path) as opened:
            img = opened.convert("L" if channels == 1 else "RGB")
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError):
        raise Undecodable("not an image Pillow can decode") from None
    source_w, source_h = img.size
    geometry = Geometry()
    if recipe.framesize is not None:
        fw, fh = recipe.framesize
        arr = fit_frame(np.asarray(img.convert("RGB")), fw, fh)
        img = Image.fromarray(np.ascontiguousarray(arr)).convert(img.mode)
        geometry = geometry.fit(source_w, source_h, fw, fh)
    for step in recipe.steps:
        if step.op == "crop":
            x, y, w, h = step.args
            img = img.crop((x, y, x + w, y + h))  # outside the picture reads 0, as cut() leaves it
            geometry = geometry.crop(x, y)
        elif step.op == "resize":
            w, h = step.args
            geometry = geometry.resize(img.width, img.height, w, h)
            img = img.resize((w, h), Image.Resampling.BILINEAR)
    if img.size != (width, height):
        geometry = geometry.resize(img.width, img.height, width, height)
    return PreparedInput(pil_to_chw(img, channels, height, width), geometry, (source_w, source_h))
