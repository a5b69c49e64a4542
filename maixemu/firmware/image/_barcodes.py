"""``find_barcodes``: the firmware's zbar scan (``zbar.c``), run by the real zbar library.

The firmware links a port of zbar 0.10 (EAN/UPC with the 2/5-digit add-ons, ISBN, I25, DataBar,
Codabar, Code 39/93/128, PDF417; no QR) and wraps it in ``imlib_find_barcodes``. Decoding bars is
what zbar does well, so the scan itself is done by the system's libzbar (Debian ``libzbar0``)
through ``pyzbar``'s ctypes binding, called exactly as the firmware calls its copy: one image
scanner, ``ZBAR_CFG_ENABLE`` for every symbology, a ``Y800`` image cropped to the ROI (grayscale
images) or the ROI converted to gray (RGB565). On generated codes the library's symbols — type,
data, orientation, quality and every location point — equal those of the firmware's own zbar.c
compiled on the PC, with one difference that is undone here: zbar 0.23 reports a ``978`` EAN-13
as ISBN-13 where the firmware's 0.10 gives ISBN-10 priority (ten digits, recomputed check digit).

What the firmware adds on top is ported below: the rect is the union of the location points (the
first point's rect is 0x0 unless it is the only one, 1x1), the corners are that rect's, the
rotation is 0/90/180/270 degrees in radians, and symbols whose rects overlap with the same type
and payload are merged (qualities added, the larger one's rotation kept) until none merge.
"""

from __future__ import annotations

import functools

import numpy as np

from ._blob import _overlap  # rectangle_overlap
from ._core import GRAYSCALE

#: zbar symbol type -> the firmware's ``barcodes_t`` (``image.EAN2`` ...); others are dropped.
ZBAR_TO_FIRMWARE = {2: 0, 5: 1, 8: 2, 9: 3, 10: 4, 12: 5, 13: 6, 14: 7, 25: 8, 34: 9, 35: 10,
                    38: 11, 39: 12, 57: 13, 93: 14, 128: 15}
#: zbar orientation (UP, RIGHT, DOWN, LEFT) -> the firmware's rotation in degrees; UNKNOWN is dropped.
ORIENTATION_DEGREES = {0: 0, 1: 270, 2: 180, 3: 90}
_ZBAR_ISBN10, _ZBAR_ISBN13, _ZBAR_QRCODE, _ZBAR_SQCODE = 10, 14, 64, 80
_Y800 = 0x30303859  # fourcc "Y800"

MISSING_ZBAR = ("image.Image.find_barcodes needs the zbar library, which the firmware links: install "
                "Debian's libzbar0 (apt-get install libzbar0) and the pyzbar binding (pip install "
                "pyzbar, part of maixemu's 'codes' extra)")


@functools.lru_cache(maxsize=1)
def _zbar():
    """pyzbar's binding plus the two entry points it does not declare; NotImplementedError when absent."""
    try:
        from ctypes import POINTER, c_int, c_uint

        from pyzbar import wrapper
        get_type = wrapper.zbar_function("zbar_symbol_get_type", c_int, POINTER(wrapper.zbar_symbol))
        set_crop = wrapper.zbar_function("zbar_image_set_crop", None, POINTER(wrapper.zbar_image),
                                         c_uint, c_uint, c_uint, c_uint)
    except Exception as exc:  # ImportError (no pyzbar) or the library not found / too old
        raise NotImplementedError(f"{MISSING_ZBAR} ({type(exc).__name__}: {exc})") from None
    return wrapper, get_type, set_crop


def available() -> bool:
    try:
        _zbar()
    except NotImplementedError:
        return False
    return True


def zbar_scan(gray: np.ndarray, crop: tuple[int, int, int, int]) -> list[tuple]:
    """``zbar_scan_image`` as imlib calls it: ``[(zbar type, orientation, quality, points, data)]``."""
    import ctypes

    w, get_type, set_crop = _zbar()
    height, width = gray.shape
    scanner = w.zbar_image_scanner_create()
    image = w.zbar_image_create()
    try:
        w.zbar_image_scanner_set_config(scanner, 0, 0, 1)  # (0, ZBAR_CFG_ENABLE, 1): every symbology
        for sym in (_ZBAR_QRCODE, _ZBAR_SQCODE):  # not in the firmware's build (and dropped by imlib)
            w.zbar_image_scanner_set_config(scanner, sym, 0, 0)
        w.zbar_image_set_format(image, _Y800)
        w.zbar_image_set_size(image, width, height)
        data = np.ascontiguousarray(gray, dtype=np.uint8).tobytes()
        w.zbar_image_set_data(image, data, len(data), None)
        set_crop(image, *crop)
        symbols = []
        if w.zbar_scan_image(scanner, image) > 0:
            s = w.zbar_image_first_symbol(image)
            while s:
                kind = get_type(s)
                payload = ctypes.string_at(w.zbar_symbol_get_data(s), w.zbar_symbol_get_data_length(s))
                points = [(w.zbar_symbol_get_loc_x(s, k), w.zbar_symbol_get_loc_y(s, k))
                          for k in range(w.zbar_symbol_get_loc_size(s))]
                if kind == _ZBAR_ISBN13 and payload.startswith(b"978"):
                    kind, payload = _ZBAR_ISBN10, payload[3:12] + isbn10_check(payload[3:12])
                symbols.append((kind, w.zbar_symbol_get_orientation(s), w.zbar_symbol_get_quality(s),
                                points, payload))
                s = w.zbar_symbol_next(s)
        return symbols
    finally:
        w.zbar_image_destroy(image)
        w.zbar_image_scanner_destroy(scanner)


def isbn10_check(nine_digits: bytes) -> bytes:
    """zbar's ``isbn10_calc_checksum``: weights 10..2, mod 11, 'X' for ten."""
    chk = sum((c - 48) * (10 - i) for i, c in enumerate(nine_digits)) % 11
    if not chk:
        return b"0"
    chk = 11 - chk
    return b"X" if chk == 10 else bytes([48 + chk])


def _united(a: list[int], b: list[int]) -> list[int]:
    """``rectangle_united`` on [x, y, w, h]."""
    x, y = min(a[0], b[0]), min(a[1], b[1])
    return [x, y, max(a[0] + a[2], b[0] + b[2]) - x, max(a[1] + a[3], b[1] + b[3]) - y]


def find_barcodes(img, roi: tuple[int, int, int, int]) -> list[dict]:
    """``imlib_find_barcodes``: the scan, the firmware's rects and types, the overlap merge."""
    from ._find import _gray8

    rx, ry, rw, rh = roi
    if img._fmt == GRAYSCALE:  # the whole image, cropped to the ROI: points are image coordinates
        symbols, dx, dy = zbar_scan(img._pix, roi), 0, 0
    else:  # the ROI converted to gray: points are ROI coordinates, shifted back
        symbols, dx, dy = zbar_scan(_gray8(img, roi), (0, 0, rw, rh)), rx, ry
    found = []
    for kind, orient, quality, points, payload in symbols:
        if not points:
            continue
        (x, y), first_size = points[0], (1 if len(points) == 1 else 0)
        rect = [x + dx, y + dy, first_size, first_size]
        for px, py in points[1:]:
            rect = _united(rect, [px + dx, py + dy, 0, 0])
        if kind not in ZBAR_TO_FIRMWARE or orient not in ORIENTATION_DEGREES:
            continue
        found.append({"rect": rect, "payload": payload, "type": ZBAR_TO_FIRMWARE[kind],
                      "rotation": ORIENTATION_DEGREES[orient], "quality": quality})
    return _merge_overlapping(found)


def _merge_overlapping(codes: list[dict]) -> list[dict]:
    """The firmware's merge loop (the list merging of hough.c): same type and payload, overlapping
    rects -> one code with the united rect, the larger one's rotation and the summed quality."""
    from ._hough import merge_until_stable

    def merge(a: dict, b: dict):
        if not (_overlap(a["rect"], b["rect"]) and a["payload"] == b["payload"] and a["type"] == b["type"]):
            return None
        ra, rb = a["rect"], b["rect"]
        return {"rect": _united(ra, rb), "payload": a["payload"], "type": a["type"],
                "rotation": a["rotation"] if ra[2] * ra[3] > rb[2] * rb[3] else b["rotation"],
                "quality": a["quality"] + b["quality"]}

    return merge_until_stable(codes, merge)
