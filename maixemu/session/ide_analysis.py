"""The IDE page's numbers, computed by maixemu's own ``image`` methods on the frame-buffer copy.

Why through the firmware methods: a threshold a user reads off the page goes into ``find_blobs``
on the board, so the histogram, statistics, LAB values and the binary preview must be the
firmware's (``get_histogram``, ``get_statistics``, ``get_pixel``, ``image.rgb_to_lab``, ``binary``,
``find_blobs``), not a PC colour library's. Every request works on a private copy, so it never
touches the running script's images, and may run on any thread.

Colour spaces: ``lab`` is the firmware's own (``get_histogram`` of the RGB565 frame); ``gray`` is
the frame converted by ``to_grayscale``; ``rgb`` applies the gray-image ``get_histogram`` and
``get_statistics`` to each 8-bit channel of the frame's RGB565 → RGB888 expansion (the firmware has
no RGB histogram; the IDE computes one from the picture it receives); ``yuv`` does the same with
the firmware's own YUV of each RGB565 pixel (``COLOR_RGB565_TO_Y/U/V``, the ``yuv_table`` of the
full build: Y, U and V are signed, -128..127, as imlib's ``COLOR_Y_MIN``..``COLOR_V_MAX``; a
grayscale frame has Y = gray - 128 and no colour).

The threshold editor also works on a picture file the page gives (:func:`picture`): decoded as
``--camera FILE`` decodes it, packed to RGB565 as the camera packs a frame, at most the camera's
UXGA size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from ..firmware import image as image_mod
from ..firmware.image import _tables
from ..host import camera as camera_mod

SPACES = ("rgb", "gray", "lab", "yuv")
#: (name, lowest value, highest value) of each channel per colour space.
CHANNELS = {
    "rgb": (("R", 0, 255), ("G", 0, 255), ("B", 0, 255)),
    "gray": (("Gray", 0, 255),),
    "lab": (("L", 0, 100), ("A", -128, 127), ("B", -128, 127)),
    "yuv": (("Y", -128, 127), ("U", -128, 127), ("V", -128, 127)),
}
#: Offset from a stored channel value to the one shown (YUV is signed: stored + 128 in a gray plane).
_SHOWN_OFFSET = {"yuv": -128}
#: The largest picture file the threshold editor keeps at its own size: the camera's UXGA frame
#: (the biggest frame buffer a script can have); larger ones are scaled down to fit, as the camera would.
PICTURE_MAX_SIZE = (1600, 1200)
STAT_KEYS = ("mean", "median", "mode", "stdev", "min", "max", "lq", "uq")
#: Blobs listed per answer at most (largest first).
MAX_BLOBS = 16


class FrameBufferCopy:
    """The IDE's copy of the frame buffer: a detached ``image.Image`` plus its display pixels."""

    def __init__(self, img: Any, **info: Any):
        self.image = img
        self.width = int(img.width())
        self.height = int(img.height())
        gray = img.format() == image_mod.GRAYSCALE
        self.info = {"format": "GRAYSCALE" if gray else "RGB565", "width": self.width, "height": self.height, **info}
        self._rgb: np.ndarray | None = None

    def rgb888(self) -> np.ndarray:
        """(H, W, 3) RGB as the LCD would show it (the firmware's 5/6 → 8 bit expansion)."""
        if self._rgb is None:
            self._rgb = self.image._rgb888()
        return self._rgb

    @property
    def is_gray(self) -> bool:
        return self.info["format"] == "GRAYSCALE"


#: The largest magnitude a page's number may have: the board's ints (a frame is far smaller anyway).
INT_LIMIT = 2**31 - 1


def _ints(text: Any, count: int | None, what: str) -> list[int]:
    """Whole numbers of a page request; ValueError (a 400) for anything else — ``inf``, ``1e400``,
    ``nan``, numbers past :data:`INT_LIMIT` — never an OverflowError (an HTTP 500)."""
    if isinstance(text, (list, tuple)):
        items = list(text)
    else:
        items = [part for part in str(text or "").replace("(", "").replace(")", "").split(",") if part.strip()]
    values = []
    for item in items:
        try:
            number = float(item)
        except (TypeError, ValueError):
            raise ValueError(f"{what} must be numbers separated by commas, got {text!r}") from None
        if not math.isfinite(number) or abs(number) > INT_LIMIT:
            raise ValueError(f"{what} must be whole numbers between {-INT_LIMIT} and {INT_LIMIT}, got {item!r}")
        values.append(int(number))
    if count is not None and len(values) != count:
        raise ValueError(f"{what} needs {count} numbers, got {len(values)}")
    return values


def _space(request: dict[str, Any], default: str = "lab") -> str:
    space = str(request.get("space") or default).lower()
    if space not in SPACES:
        raise ValueError(f"space must be one of {', '.join(SPACES)}, not {space!r}")
    return space


def _roi(request: dict[str, Any], frame: FrameBufferCopy) -> tuple[int, int, int, int] | None:
    if not request.get("roi"):
        return None
    x, y, w, h = _ints(request["roi"], 4, "roi")
    # The page's drag can leave the picture: clip to it, as a user means "this part of the frame".
    x0, y0 = max(0, min(x, x + w)), max(0, min(y, y + h))
    x1, y1 = min(frame.width, max(x, x + w)), min(frame.height, max(y, y + h))
    if x1 <= x0 or y1 <= y0:
        raise ValueError("the ROI lies outside the frame buffer")
    return (x0, y0, x1 - x0, y1 - y0)


def _channel_images(frame: FrameBufferCopy, space: str) -> list[tuple[Any, str]]:
    """(image, which statistics prefix) per channel of ``space``: the firmware does the counting."""
    img = frame.image
    if space == "lab":
        lab_img = img.to_rgb565(copy=True) if frame.is_gray else img
        return [(lab_img, "l_"), (lab_img, "a_"), (lab_img, "b_")]
    if space == "gray":
        return [(img if frame.is_gray else img.to_grayscale(copy=True), "")]
    if space == "yuv":
        pixels = img._buf.pix
        if frame.is_gray:  # Y = gray - 128 (stored as gray), no colour
            planes = [pixels, np.full_like(pixels, 128), np.full_like(pixels, 128)]
        else:
            yuv = _tables.yuv_table()[pixels]
            planes = [(yuv[..., c].astype(np.int16) + 128).astype(np.uint8) for c in range(3)]
        return [(image_mod.Image._from_gray_view(np.ascontiguousarray(plane)), "") for plane in planes]
    rgb = frame.rgb888()
    return [(image_mod.Image._from_gray_view(np.ascontiguousarray(rgb[:, :, c])), "") for c in range(3)]


def histogram(frame: FrameBufferCopy, request: dict[str, Any]) -> dict[str, Any]:
    """Bins and statistics of every channel of ``space`` over the ROI (whole frame without one)."""
    space = _space(request)
    roi = _roi(request, frame)
    kwargs = {"roi": roi} if roi else {}
    channels = []
    lab_hist = lab_stats = None
    for (img, prefix), (name, lo, hi) in zip(_channel_images(frame, space), CHANNELS[space]):
        if prefix:  # one LAB histogram/statistics call serves the three channels
            if lab_hist is None:
                lab_hist, lab_stats = img.get_histogram(**kwargs), img.get_statistics(**kwargs)
            hist, stats = lab_hist, lab_stats
            bins = {"l_": hist.l_bins, "a_": hist.a_bins, "b_": hist.b_bins}[prefix]()
        else:
            hist, stats = img.get_histogram(**kwargs), img.get_statistics(**kwargs)
            bins = hist.bins()
        values = {key: int(getattr(stats, prefix + key)()) for key in STAT_KEYS}
        offset = _SHOWN_OFFSET.get(space, 0)
        if offset:  # every statistic but the spread moves with the values (floor(x) + k = floor(x + k))
            values = {key: value if key == "stdev" else value + offset for key, value in values.items()}
        channels.append({"name": name, "lo": lo, "hi": hi, "bins": [float(b) for b in bins], "stats": values})
    return {"space": space, "roi": list(roi) if roi else [0, 0, frame.width, frame.height],
            "frame": frame.info, "channels": channels}


def pixel(frame: FrameBufferCopy, request: dict[str, Any]) -> dict[str, Any]:
    """What the firmware says about one pixel: raw value, RGB888, LAB of the LAB table (and gray)."""
    x, y = _ints([request.get("x"), request.get("y")], 2, "x, y")
    img = frame.image
    if not (0 <= x < frame.width and 0 <= y < frame.height):
        raise ValueError(f"({x}, {y}) is outside the {frame.width}x{frame.height} frame buffer")
    if frame.is_gray:
        gray = int(img.get_pixel(x, y))
        rgb = tuple(int(v) for v in img.get_pixel(x, y, rgbtuple=True))
        raw = None
    else:
        rgb = tuple(int(v) for v in img.get_pixel(x, y))
        raw = int(img.get_pixel(x, y, rgbtuple=False))
        gray = int(image_mod.rgb_to_grayscale(rgb))
    # LAB as the image methods see this pixel (the firmware's LAB table, what find_blobs compares);
    # ``image.rgb_to_lab`` is imlib's float formula and differs from the table by a few units.
    lab_img = img.to_rgb565(copy=True) if frame.is_gray else img
    stats = lab_img.get_statistics(roi=(x, y, 1, 1))
    lab = (int(stats.l_mean()), int(stats.a_mean()), int(stats.b_mean()))
    answer: dict[str, Any] = {"x": x, "y": y, "rgb888": list(rgb), "lab": list(lab), "gray": gray,
                              "format": frame.info["format"]}
    if raw is not None:
        # The K210 keeps RGB565 byte-swapped in memory (get_pixel(rgbtuple=False) returns that word);
        # "rgb565" is the same colour as the usual RRRRRGGG GGGBBBBB value.
        answer["raw"] = raw
        answer["rgb565"] = ((raw & 0xFF) << 8) | (raw >> 8)
    return answer


def thresholds(request: dict[str, Any]) -> tuple[str, tuple[int, ...]]:
    """(space, threshold tuple) of a threshold-editor request: six LAB numbers or two gray ones."""
    space = _space(request, "lab")
    if space not in ("lab", "gray"):
        raise ValueError("thresholds are LAB (6 numbers) or grayscale (2 numbers), as find_blobs takes them")
    count = 6 if space == "lab" else 2
    values = tuple(_ints(request.get("t"), count, "thresholds"))
    return space, values


def _target(frame: FrameBufferCopy, space: str) -> Any:
    """A private image in the editor's space (the script's frame is never modified)."""
    img = frame.image
    if space == "gray":
        return img.copy() if frame.is_gray else img.to_grayscale(copy=True)
    return img.to_rgb565(copy=True) if frame.is_gray else img.copy()


def binary(frame: FrameBufferCopy, request: dict[str, Any]) -> np.ndarray:
    """The live preview: ``binary([thresholds], invert=...)`` of the frame, as RGB pixels."""
    space, values = thresholds(request)
    invert = str(request.get("invert") or "0").lower() in ("1", "true", "yes", "on")
    target = _target(frame, space)
    result = target.binary([values], invert=invert)
    return (result if result is not None else target)._rgb888()


def blobs(frame: FrameBufferCopy, request: dict[str, Any]) -> dict[str, Any]:
    """``find_blobs([thresholds])`` on the frame with the firmware's default size filters."""
    space, values = thresholds(request)
    invert = str(request.get("invert") or "0").lower() in ("1", "true", "yes", "on")
    found = _target(frame, space).find_blobs([values], invert=invert)
    ordered = sorted(found, key=lambda blob: -blob.pixels())
    listed = [{"rect": list(blob.rect()), "pixels": int(blob.pixels()), "cx": int(blob.cx()), "cy": int(blob.cy())}
              for blob in ordered[:MAX_BLOBS]]
    return {"space": space, "thresholds": list(values), "invert": invert, "count": len(ordered), "blobs": listed}


def picture(data: bytes, name: str = "picture") -> FrameBufferCopy:
    """A picture file for the threshold editor, as a frame-buffer copy: decoded as ``--camera FILE``
    decodes it (OpenCV, then Pillow; bounded before decoding), packed to RGB565 as the camera packs
    a frame, scaled down (``INTER_AREA``, aspect kept) when larger than the camera's UXGA."""
    try:
        rgb = camera_mod.decode_picture(data, name)
    except camera_mod.CameraError as exc:  # FrameTooLarge: the header claims too many pixels
        raise ValueError(str(exc).split(";")[0]) from None
    if rgb is None:
        raise ValueError(f"{name} is not a picture OpenCV or Pillow can decode")
    height, width = rgb.shape[:2]
    info: dict[str, Any] = {"name": name}
    scale = min(PICTURE_MAX_SIZE[0] / width, PICTURE_MAX_SIZE[1] / height, 1.0)
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        info["scaled_from"] = [width, height]
    return FrameBufferCopy(image_mod.Image._from_rgb888(np.ascontiguousarray(rgb), image_mod.RGB565), **info)


KINDS: dict[str, Callable[[FrameBufferCopy, dict[str, Any]], Any]] = {
    "histogram": histogram, "pixel": pixel, "binary": binary, "blobs": blobs}


def analyze(frame: FrameBufferCopy, request: dict[str, Any]) -> dict[str, Any] | np.ndarray:
    """Answer one page request (``kind`` = histogram | pixel | binary | blobs)."""
    kind = str(request.get("kind"))
    if kind not in KINDS:
        raise ValueError(f"unknown analysis {kind!r}; one of {', '.join(KINDS)}")
    return KINDS[kind](frame, request)
