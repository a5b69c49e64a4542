"""``find_datamatrices``: the firmware's libdmtx scan (``dmtx.c``), run by the real libdmtx.

The firmware links OpenMV's port of libdmtx 0.7 and wraps it in ``imlib_find_datamatrices``. The
scan is done here by the system's libdmtx (Debian ``libdmtx0b``) through ``pylibdmtx``'s ctypes
binding, driven as the firmware drives its copy: an 8-bit gray image, the ROI as the decoder's
X/Y limits (grayscale images) or the ROI converted to gray (RGB565), and the region search loop
of the port — which counts grid locations against ``effort`` instead of upstream's timeout — run
here over the library's own scan grid (``PopGridLocation`` ported) and ``dmtxRegionScanPixel``.

What the firmware computes from each decoded region is ported: the rect is the union of the four
unit-square corners mapped by ``fit2raw``, flipped to top-down rows and truncated (``fast_roundf``
is a cast there); corners are listed top-left first; the rotation is ``atan2`` of the bottom edge
in whole degrees (float32, the firmware's ``fast_atan2f``); rows/columns/capacity are the symbol
size's attributes and padding the message's pad count.

Not identical: the firmware's port is built with ``#define double float`` and OpenMV's fast
approximations (``sqrt``, ``atan2``, ``floor``/``round`` as casts), libdmtx computes in double
precision. Payload, rows, columns, capacity and padding agree where both decode a symbol, but the
fitted corners can differ by a pixel (so rect, corners and rotation may too), and on marginal
images one may find a symbol the other misses. A port of the firmware's float32 libdmtx would be
needed for bit-equality; see the tests for the measured agreement.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _fmath
from ._core import GRAYSCALE

MISSING_DMTX = ("image.Image.find_datamatrices needs the libdmtx library, which the firmware links: "
                "install Debian's libdmtx0b (apt-get install libdmtx0b) and the pylibdmtx binding "
                "(pip install pylibdmtx, part of maixemu's 'codes' extra)")

_RANGE_GOOD, _RANGE_BAD, _RANGE_END = 0, 1, 2  # DmtxRangeGood / Bad / End
_ATTR_ROWS, _ATTR_COLS, _ATTR_DATA_WORDS = 0, 1, 11  # DmtxSymAttribSymbolRows / SymbolCols / SymbolDataWords
_PROP_XMIN, _PROP_XMAX, _PROP_YMIN, _PROP_YMAX = 400, 401, 402, 403  # DmtxPropXmin ...
_PACK_8BPP_K = 300  # DmtxPack8bppK
_UNDEFINED = -1


@functools.lru_cache(maxsize=1)
def _dmtx():
    """pylibdmtx's binding plus the entry points it does not declare; NotImplementedError when absent."""
    import warnings
    from ctypes import POINTER, c_int

    try:
        with warnings.catch_warnings():  # pylibdmtx compares versions with distutils' LooseVersion
            warnings.simplefilter("ignore", DeprecationWarning)
            from pylibdmtx import wrapper
        scan_pixel = wrapper.libdmtx_function("dmtxRegionScanPixel", POINTER(wrapper.DmtxRegion),
                                              POINTER(wrapper.DmtxDecode), c_int, c_int)
        attribute = wrapper.libdmtx_function("dmtxGetSymbolAttribute", c_int, c_int, c_int)
    except Exception as exc:  # ImportError (no pylibdmtx) or the library not found
        raise NotImplementedError(f"{MISSING_DMTX} ({type(exc).__name__}: {exc})") from None
    return wrapper, scan_pixel, attribute


def available() -> bool:
    try:
        _dmtx()
    except NotImplementedError:
        return False
    return True


def _set_derived_fields(g) -> None:
    g.jumpSize = g.extent + 1
    g.pixelTotal = 2 * g.extent - 1
    g.startPos = g.extent // 2
    g.pixelCount = 0
    g.xCenter = g.yCenter = g.startPos


def _grid_coordinates(g) -> tuple[int, int, int]:
    """libdmtx's ``GetGridCoordinates``: the next location of the cross-pattern scan grid."""
    if g.pixelCount >= g.pixelTotal:
        g.pixelCount = 0
        g.xCenter += g.jumpSize
    if g.xCenter > g.maxExtent:
        g.xCenter = g.startPos
        g.yCenter += g.jumpSize
    if g.yCenter > g.maxExtent:
        g.total *= 4
        g.extent = int(g.extent / 2)  # C division of a non-negative int
        _set_derived_fields(g)
    if g.extent == 0 or g.extent < g.minExtent:
        return _RANGE_END, -1, -1
    count = g.pixelCount
    if count == g.pixelTotal - 1:
        x, y = g.xCenter, g.yCenter
    else:
        half = g.pixelTotal // 2
        quarter = half // 2
        if count < half:
            x = g.xCenter + ((count - quarter) if count < quarter else (half - count))
            y = g.yCenter
        else:
            count -= half
            x = g.xCenter
            y = g.yCenter + ((count - quarter) if count < quarter else (half - count))
    x += g.xOffset
    y += g.yOffset
    if x < g.xMin or x > g.xMax or y < g.yMin or y > g.yMax:
        return _RANGE_BAD, x, y
    return _RANGE_GOOD, x, y


def _pop_grid_location(g) -> tuple[int, int, int]:
    while True:
        status, x, y = _grid_coordinates(g)
        g.pixelCount += 1
        if status != _RANGE_BAD:
            return status, x, y


def dmtx_scan(gray: np.ndarray, limits: tuple[int, int, int, int], effort: int) -> list[dict]:
    """The firmware's decode loop: regions found within ``effort`` grid locations, decoded."""
    import ctypes

    w, scan_pixel, attribute = _dmtx()
    height, width = gray.shape
    pixels = (ctypes.c_ubyte * gray.size).from_buffer_copy(np.ascontiguousarray(gray, np.uint8).tobytes())
    image = w.dmtxImageCreate(ctypes.cast(pixels, ctypes.POINTER(ctypes.c_ubyte)), width, height, _PACK_8BPP_K)
    if not image:
        raise MemoryError("Out of fast Frame Buffer Stack Memory!")
    decode = w.dmtxDecodeCreate(image, 1)
    found = []
    try:
        x0, y0, x1, y1 = limits
        for prop, value in ((_PROP_XMIN, x0), (_PROP_YMIN, y0), (_PROP_XMAX, x1), (_PROP_YMAX, y1)):
            w.dmtxDecodeSetProp(decode, prop, value)  # each re-initialises the scan grid, as in the port
        grid = decode.contents.grid
        iterations = 0
        while True:
            region = None
            while iterations < effort:  # dmtxRegionFindNext(decode, max_iterations, &current_iterations)
                status, x, y = _pop_grid_location(grid)
                if status == _RANGE_END:
                    break
                region = scan_pixel(decode, x, y)
                if region:
                    break
                region = None
                iterations += 1
            if region is None:
                break
            message = w.dmtxDecodeMatrixRegion(decode, region, _UNDEFINED)
            if message:
                m = message.contents
                reg = region.contents
                fit = [[reg.fit2raw[i][j] for j in range(3)] for i in range(3)]
                found.append({"fit2raw": fit, "payload": ctypes.string_at(m.output, m.outputIdx),
                              "rows": attribute(_ATTR_ROWS, reg.sizeIdx),
                              "columns": attribute(_ATTR_COLS, reg.sizeIdx),
                              "capacity": attribute(_ATTR_DATA_WORDS, reg.sizeIdx),
                              "padding": m.padCount, "height": height})
                w.dmtxMessageDestroy(ctypes.byref(message))
            w.dmtxRegionDestroy(ctypes.byref(region))
    finally:
        w.dmtxDecodeDestroy(ctypes.byref(decode))
        w.dmtxImageDestroy(ctypes.byref(image))
    return found


def _map(fit, u: float, v: float) -> tuple[np.float32, np.float32]:
    """``dmtxMatrix3VMultiplyBy`` of (u, v, 1) by fit2raw (the port's ``double`` is float32)."""
    f = np.float32
    x = f(f(f(u) * f(fit[0][0])) + f(f(v) * f(fit[1][0]))) + f(fit[2][0])
    y = f(f(f(u) * f(fit[0][1])) + f(f(v) * f(fit[1][1]))) + f(fit[2][1])
    ww = f(f(f(u) * f(fit[0][2])) + f(f(v) * f(fit[1][2]))) + f(fit[2][2])
    return f(x / ww), f(y / ww)


def find_datamatrices(img, roi: tuple[int, int, int, int], effort: int) -> list[dict]:
    """``imlib_find_datamatrices``: the scan and the firmware's rect, corners, rotation and sizes."""
    from ._find import _gray8

    rx, ry, rw, rh = roi
    if img._fmt == GRAYSCALE:
        gray, (ox, oy), (dx, dy) = img._pix, (rx, ry), (0, 0)
    else:
        gray, (ox, oy), (dx, dy) = _gray8(img, roi), (0, 0), (rx, ry)
    out = []
    for sym in dmtx_scan(gray, (ox, oy, ox + rw - 1, oy + rh - 1), effort):
        p = [_map(sym["fit2raw"], u, v) for u, v in ((0, 0), (1, 0), (1, 1), (0, 1))]
        height = sym["height"]
        pts = [(int(px) + dx, height - 1 - int(py) + dy) for px, py in p]  # fast_roundf is a cast
        xs, ys = [q[0] for q in pts], [q[1] for q in pts]
        rect = (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
        angle = _fmath.fast_atan2f(np.float32(p[1][1] - p[0][1]), np.float32(p[1][0] - p[0][0]))
        f = np.float32
        rotate = int(f(f(f(f(2) * f(np.pi)) + f(angle)) * f(180)) / f(np.pi))
        if rotate >= 360:
            rotate -= 360
        out.append({"rect": rect, "corners": (pts[3], pts[2], pts[1], pts[0]), "payload": sym["payload"],
                    "rotation": rotate, "rows": sym["rows"], "columns": sym["columns"],
                    "capacity": sym["capacity"], "padding": sym["padding"]})
    return out
