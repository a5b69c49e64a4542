"""Datasets drawn for the eval tests: handwriting-like digits rendered with PIL, in class folders.

Deterministic (a seeded generator), small, and made at test time, so no data is committed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont


def draw_digit(digit: int, rng: np.random.Generator, size: int = 64) -> Image.Image:
    """A white digit on black, laid out as MNIST is: the digit's box scaled to fit 20/28 of the
    picture and centred, with some jitter in stroke, slant, place and blur."""
    font = ImageFont.load_default(size=96)
    canvas = Image.new("L", (192, 192), 0)
    draw = ImageDraw.Draw(canvas)
    stroke = int(rng.integers(0, 3))
    draw.text((48, 24), str(digit), fill=255, font=font, stroke_width=stroke, stroke_fill=255)
    canvas = canvas.rotate(float(rng.normal(0, 7)), resample=Image.BILINEAR)
    glyph = canvas.crop(canvas.getbbox())
    fit = size * 20 / 28 * float(rng.uniform(0.85, 1.0))
    scale = fit / max(glyph.size)
    glyph = glyph.resize((max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale))), Image.BILINEAR)
    out = Image.new("L", (size, size), 0)
    x = (size - glyph.width) // 2 + int(rng.integers(-2, 3))
    y = (size - glyph.height) // 2 + int(rng.integers(-2, 3))
    out.paste(glyph, (x, y))
    return out.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.0))))


def make_digits(root: Path, per_class: int, seed: int = 0, size: int = 64, rgb: bool = True) -> Path:
    """``root/<digit>/<digit>_<n>.png`` for the ten digits; returns ``root``."""
    rng = np.random.default_rng(seed)
    for digit in range(10):
        folder = root / str(digit)
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(per_class):
            img = draw_digit(digit, rng, size)
            (img.convert("RGB") if rgb else img).save(folder / f"{digit}_{n:03d}.png")
    return root
