"""Camera frames of handwritten-looking digits, drawn with PIL: clean (black on white) and on paper.

Shared by the sample tests and the README pictures; nothing here comes from a dataset.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

#: Strokes of handwritten-looking digits in a 100x140 box: lines, ellipses, arcs (PIL degrees).
DIGIT_STROKES = {
    0: [("e", (10, 5, 90, 135))],
    1: [("l", [(35, 30), (60, 5), (60, 135)])],
    2: [("a", (10, 5, 90, 75), 180, 30), ("l", [(85, 52), (10, 135), (92, 135)])],
    3: [("a", (12, 5, 88, 70), 200, 90), ("a", (8, 70, 92, 135), 270, 160)],
    4: [("l", [(65, 5), (5, 95), (95, 95)]), ("l", [(70, 45), (70, 135)])],
    5: [("l", [(88, 5), (18, 5), (12, 62)]), ("a", (8, 50, 92, 135), 220, 150)],
    6: [("l", [(75, 5), (20, 75)]), ("e", (12, 62, 88, 135))],
    7: [("l", [(8, 5), (92, 5), (40, 135)])],
    8: [("e", (18, 5, 82, 68)), ("e", (10, 68, 90, 135))],
    9: [("e", (12, 5, 88, 72)), ("l", [(86, 38), (70, 135)])],
}


def _digit_mask(digit: int, *, height: float, width: int, centre: tuple[float, float] = (112, 112)) -> Image.Image:
    """The digit's strokes (255) on black, 320x240, the digit ``height`` pixels tall around ``centre``."""
    im = Image.new("L", (320, 240), 0)
    draw = ImageDraw.Draw(im)
    s = height / 140
    ox, oy = centre[0] - 50 * s, centre[1] - 70 * s

    def at(x: float, y: float) -> tuple[float, float]:
        return ox + x * s, oy + y * s

    for kind, *spec in DIGIT_STROKES[digit]:
        if kind == "l":
            points = [at(*p) for p in spec[0]]
            draw.line(points, fill=255, width=width, joint="curve")
            for x, y in (points[0], points[-1]):  # round pen ends
                draw.ellipse((x - width / 2, y - width / 2, x + width / 2, y + width / 2), fill=255)
        elif kind == "e":
            box = spec[0]
            draw.ellipse((*at(box[0], box[1]), *at(box[2], box[3])), outline=255, width=width)
        else:
            box, start, end = spec
            draw.arc((*at(box[0], box[1]), *at(box[2], box[3])), start, end, fill=255, width=width)
    return im


def draw_digit(digit: int, *, height: int = 170, width: int = 24) -> np.ndarray:
    """A 320x240 RGB camera frame: a black digit on pure white, centred in the top-left 224x224 window.

    The MNIST samples window the QVGA frame to 224x224; on OV2640 boards that is the top-left corner.
    """
    ink = np.asarray(_digit_mask(digit, height=height, width=width))
    return np.repeat((255 - ink)[..., None], 3, axis=2)


def paper_digit(digit: int, *, seed: int, height: float = 120, width: int = 14, centre=(112, 112),
                paper: float = 185, ink: float = 55, blur: float = 1.5, noise: float = 6) -> np.ndarray:
    """A digit written dark on light paper as a camera sees it: gray, warm paper (not white) lit
    unevenly (brighter top left, darker right), soft-edged dark-gray ink, sensor noise; the digit
    smaller than the 224x224 window and wherever the hand holds it."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:240, 0:320]
    light = paper + 25 * (1 - ((xx - 100) ** 2 + (yy - 90) ** 2) / 320**2) - 20 * xx / 320
    mask = np.asarray(_digit_mask(digit, height=height, width=width, centre=centre)
                      .filter(ImageFilter.GaussianBlur(blur)), np.float64) / 255
    gray = light * (1 - mask) + ink * mask + rng.normal(0, noise, mask.shape)
    return np.clip(np.stack([gray * 1.02, gray, gray * 0.93], -1), 0, 255).astype(np.uint8)


#: Paper frames of all ten digits: as held (120 px tall), small and off centre, dim light and blurred.
PAPER_VARIANTS = {
    "held": {},
    "small, off centre": dict(height=90, width=10, centre=(135, 100)),
    "dim, blurred": dict(paper=150, ink=70, blur=3, noise=9),
}


def paper_frames() -> list[np.ndarray]:
    return [paper_digit(d, seed=10 * k + d, **kw) for k, kw in enumerate(PAPER_VARIANTS.values()) for d in range(10)]
