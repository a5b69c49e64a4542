"""Drawing methods of ``image.Image`` (maixpy-api.md §2.7), following the MaixPy v0.6.2 ``draw.c`` /
``font.c`` geometry.

All drawing writes only the pixel buffer (the AI buffer goes stale, §0) and returns the image.
The per-pixel loops (lines with their ``point_fill`` discs, circles, ellipses, glyphs,
``draw_image``) are compiled kernels (``_draw_kernels``) with numpy forms for when numba is missing;
the Python around them walks only the shape (the pen of a string, the arguments). Nothing is
allocated for pixels that fall off the image (``draw_image`` and glyphs compute only the part on
it), however large a scale or shape is asked for.
``tests/firmware/test_image_draw_cdiff.py`` compares every method with the firmware's own C.

Note on rounding: in MaixPy v0.6.2 ``fast_roundf``/``fast_floorf`` (``omv/img/include/fmath.h``)
are plain ``(int)x`` truncations, so glyph sizes, source rows/columns of scaled glyphs, proportional
advances, arrow heads and ``draw_image`` sampling all *truncate* (``int(8*1.9) == 15``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import _args, _color, _draw_kernels, _fmath, _font8x12
from ._core import GRAYSCALE
from ._jit import NOT_SERVED, compiled_now as compiled  # (the vectorised form until kernels are served compiled)
from ._host import ImageHost
from ._pixels import to_binary
from ..pixformat import BINARY

_F = np.float32
#: ``IM_DEG2RAD(x) = ((x) * M_PI) / 180``; the firmware's -ffast-math build folds it into one
#: multiplication by ``(float) M_PI * (1.0f / 180)`` (0x3c8efa36, one ulp above float32(pi/180))
_DEG2RAD = _F(np.pi) * (_F(1) / _F(180))


def scaled_index(start: int, stop: int, scale) -> np.ndarray:
    """``fast_roundf(i / scale)`` for i in start..stop-1 as the firmware computes it inside its
    loops: GCC's loop-invariant motion under ``-ffast-math`` rewrites a division by a loop
    invariant as a product with its reciprocal (``i * (1 / scale)``, ``rewrite_reciprocal``), which
    truncates differently where ``i / scale`` lands on an integer (9 / 0.6 is 14, 9 * (1/0.6) 15;
    found by the differential tests against the firmware's own draw code)."""
    over = _F(1) / _F(scale)
    return (np.arange(start, stop).astype(_F) * over).astype(np.int64)


def _ftrunc(v) -> int:
    """The firmware's ``fast_roundf``/``fast_floorf`` on a float32 value: truncation toward zero,
    saturating as the K210 converts (``x_scale=1e30`` is INT32_MAX columns there, not an error)."""
    return _fmath.ftoi(_F(v))


@lru_cache(maxsize=4096)
def _line_walk(dx: int, dy: int) -> tuple[np.ndarray, np.ndarray]:
    sx, sy = (1 if dx > 0 else -1), (1 if dy > 0 else -1)
    dx, dy = abs(dx), abs(dy)
    err = int((dx if dx > dy else -dy) / 2)  # C integer division truncates toward zero
    x = y = 0
    px, py = [], []
    while True:
        px.append(x)
        py.append(y)
        if x == sx * dx and y == sy * dy:
            break
        e2 = err
        if e2 > -dx:
            err -= dy
            x += sx
        if e2 < dy:
            err += dx
            y += sy
    ox, oy = np.array(px, np.int64), np.array(py, np.int64)
    ox.flags.writeable = oy.flags.writeable = False
    return ox, oy


def line_offsets(dx: int, dy: int) -> tuple[np.ndarray, np.ndarray]:
    """The points of ``imlib_draw_line``'s Bresenham walk from (0, 0) to (dx, dy), in order (the
    walk only depends on the difference, so every line of one shape shares it)."""
    return _line_walk(int(dx), int(dy))


class DrawMixin(ImageHost):
    # ------------------------------------------------------------------ low level
    def _plot(self, xs: np.ndarray, ys: np.ndarray, c) -> None:
        """Set pixels at coordinate arrays (clipped to the image, like ``imlib_set_pixel``)."""
        xs = np.asarray(xs, dtype=np.int64).ravel()
        ys = np.asarray(ys, dtype=np.int64).ravel()
        keep = (xs >= 0) & (xs < self.width()) & (ys >= 0) & (ys < self.height())
        if keep.any():
            if np.ndim(c):  # one value per coordinate (draw_image): drop the clipped ones with them
                c = np.asarray(c).ravel()[keep]
            self._pix[ys[keep], xs[keep]] = c

    def _fill(self, x0: int, x1: int, y0: int, y1: int, c) -> None:
        """Fill the inclusive box [x0, x1] x [y0, y1], clipped."""
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, self.width() - 1), min(y1, self.height() - 1)
        if x1 >= x0 and y1 >= y0:
            self._pix[y0:y1 + 1, x0:x1 + 1] = c

    def _color(self, rest, kwargs, index: int = 0):
        return _color.color_value(_args.pick(rest, index, kwargs, "color", -1), self._fmt)

    # ------------------------------------------------------------------ primitives (no touch)
    @staticmethod
    def _disc_offsets(r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        """``point_fill``: offsets (x, y) in [r0, r1]^2 with x^2 + y^2 <= r0^2."""
        rng = np.arange(r0, r1 + 1)
        yy, xx = np.meshgrid(rng, rng, indexing="ij")
        inside = xx * xx + yy * yy <= r0 * r0
        return xx[inside], yy[inside]

    def _line(self, x0: int, y0: int, x1: int, y1: int, c, thickness: int) -> None:
        if thickness <= 0:
            return
        t0 = thickness // 2
        t1 = (thickness - 1) // 2
        if compiled() and self._fill_line(x0, y0, x1, y1, -t0, t1, c):
            return
        lx, ly = line_offsets(x1 - x0, y1 - y0)
        ox, oy = self._disc_offsets(-t0, t1)
        px = (lx + x0)[:, None] + ox[None, :]
        py = (ly + y0)[:, None] + oy[None, :]
        self._plot(px, py, c)

    def _fill_line(self, x0, y0, x1, y1, r0: int, r1: int, c) -> bool:
        """One ``imlib_draw_line`` through the lines kernel (``point_fill`` discs r0..r1); False,
        drawing nothing, while the kernel is not served compiled (the caller's array form draws)."""
        one = np.empty(5, np.int64)
        one[:] = (int(x0), int(y0), int(x1), int(y1), int(c))
        return _draw_kernels.point_fill_lines.attempt(self._pix, one[0:1], one[1:2], one[2:3], one[3:4], r0, r1,
                                                      one[4:5]) is not NOT_SERVED

    def _thin_lines(self, x0, y0, x1, y1, colors) -> None:
        """Thickness-1 lines drawn one after the other (later ones over earlier ones), clipped: what
        that many ``_line`` calls draw, in one pass. Each distinct (dx, dy) is walked once."""
        x0, y0, x1, y1 = (np.asarray(v, np.int64).ravel() for v in (x0, y0, x1, y1))
        colors = np.asarray(colors).ravel()
        if x0.size == 0:
            return
        if compiled() and _draw_kernels.point_fill_lines.attempt(self._pix, x0, y0, x1, y1, 0, 0,
                                                                  colors.astype(np.int64)) is not NOT_SERVED:
            return
        dx, dy = x1 - x0, y1 - y0
        lo_x, lo_y = int(dx.min()), int(dy.min())
        keys, which = np.unique((dx - lo_x) * (int(dy.max()) - lo_y + 1) + (dy - lo_y), return_inverse=True)
        first = np.zeros(keys.size, np.int64)
        first[which] = np.arange(which.size)  # any line of each shape
        walks = [line_offsets(int(dx[i]), int(dy[i])) for i in first]
        longest = max(len(wx) for wx, _ in walks)
        ox = np.zeros((len(walks), longest), np.int64)
        oy = np.zeros((len(walks), longest), np.int64)
        used = np.zeros((len(walks), longest), bool)
        for i, (wx, wy) in enumerate(walks):
            ox[i, :len(wx)], oy[i, :len(wy)], used[i, :len(wx)] = wx, wy, True
        which = which.ravel()
        px = (x0[:, None] + ox[which]).ravel()  # in drawing order: line by line, point by point
        py = (y0[:, None] + oy[which]).ravel()
        h, w = self._pix.shape
        keep = np.flatnonzero(used[which].ravel() & (px >= 0) & (px < w) & (py >= 0) & (py < h))
        last = np.full(h * w, -1, np.int64)
        np.maximum.at(last, py[keep] * w + px[keep], keep)  # the last point drawn on each pixel wins
        hit = np.flatnonzero(last >= 0)
        self._pix[hit // w, hit % w] = colors[last[hit] // longest]

    def _rect(self, rx: int, ry: int, rw: int, rh: int, c, thickness: int, fill: bool) -> None:
        if fill:
            if rw > 0 and rh > 0:
                self._fill(rx, rx + rw - 1, ry, ry + rh - 1, c)
            return
        if thickness <= 0:
            return
        t0 = thickness // 2
        t1 = (thickness - 1) // 2
        k = ry + rh - 1
        if rx + rw + t1 > rx - t0:  # top and bottom bands
            self._fill(rx - t0, rx + rw + t1 - 1, ry - t0, ry + t1, c)
            self._fill(rx - t0, rx + rw + t1 - 1, k - t0, k + t1, c)
        k = rx + rw - 1
        if ry + rh + t1 > ry - t0:  # left and right bands
            self._fill(rx - t0, rx + t1, ry - t0, ry + rh + t1 - 1, c)
            self._fill(k - t0, k + t1, ry - t0, ry + rh + t1 - 1, c)

    def _circle(self, cx: int, cy: int, r: int, c, thickness: int, fill: bool) -> None:
        if fill:
            # point_fill(cx, cy, -r, r): the line kernel from the centre to itself
            if compiled() and self._fill_line(cx, cy, cx, cy, -int(r), int(r), c):
                return
            ox, oy = self._disc_offsets(-r, r)
            self._plot(cx + ox, cy + oy, c)
            return
        if thickness > 0:  # the spans of the thick-circle loop (few pixels: quick as Python too)
            _draw_kernels.thick_circle(self._pix, int(cx), int(cy), int(r), thickness // 2, (thickness - 1) // 2, c)

    # ------------------------------------------------------------------ public drawing
    def draw_line(self, *args, **kwargs):
        """``draw_line(x0, y0, x1, y1, color=white, thickness=1)`` (or one 4-tuple)."""
        (x0, y0, x1, y1), rest = _args.consume(args, 4)
        c = self._color(rest, kwargs, 0)
        t = _args.to_int(_args.pick(rest, 1, kwargs, "thickness", 1))
        self._line(x0, y0, x1, y1, c, t)
        self._touch()
        return self

    def draw_rectangle(self, *args, **kwargs):
        """``draw_rectangle(x, y, w, h, color, thickness=1, fill=False)``; thick borders are centred
        on the outline (``thickness//2`` outside, ``(thickness-1)//2`` inside) as in ``draw.c``."""
        (x, y, w, h), rest = _args.consume(args, 4)
        c = self._color(rest, kwargs, 0)
        t = _args.to_int(_args.pick(rest, 1, kwargs, "thickness", 1))
        fill = bool(_args.to_int(_args.pick(rest, 2, kwargs, "fill", False)))
        self._rect(x, y, w, h, c, t, fill)
        self._touch()
        return self

    def draw_circle(self, *args, **kwargs):
        """``draw_circle(x, y, r, color, thickness=1, fill=False)``."""
        (x, y, r), rest = _args.consume(args, 3)
        c = self._color(rest, kwargs, 0)
        t = _args.to_int(_args.pick(rest, 1, kwargs, "thickness", 1))
        fill = bool(_args.to_int(_args.pick(rest, 2, kwargs, "fill", False)))
        self._circle(x, y, r, c, t, fill)
        self._touch()
        return self

    def draw_cross(self, *args, **kwargs):
        """``draw_cross(x, y, color, size=5, thickness=1)``: two lines of length 2*size."""
        (x, y), rest = _args.consume(args, 2)
        c = self._color(rest, kwargs, 0)
        s = _args.to_int(_args.pick(rest, 1, kwargs, "size", 5))
        t = _args.to_int(_args.pick(rest, 2, kwargs, "thickness", 1))
        self._line(x - s, y, x + s, y, c, t)
        self._line(x, y - s, x, y + s, c, t)
        self._touch()
        return self

    def draw_arrow(self, *args, **kwargs):
        """``draw_arrow(x0, y0, x1, y1, color, size=10, thickness=1)``: shaft plus two head strokes."""
        (x0, y0, x1, y1), rest = _args.consume(args, 4)
        c = self._color(rest, kwargs, 0)
        s = _args.to_int(_args.pick(rest, 1, kwargs, "size", 10))
        t = _args.to_int(_args.pick(rest, 2, kwargs, "thickness", 1))
        dx, dy = x1 - x0, y1 - y0
        length = np.sqrt(_F(dx * dx + dy * dy), dtype=_F)
        ux = _F(dx) / length if length else _F(0)
        uy = _F(dy) / length if length else _F(0)
        vx, vy = -uy, ux

        def head(base, u, v, sign):
            # float expression, the `0.5` literal makes the last term double precision
            return _ftrunc(float(_F(base) - _F(s) * u) + sign * float(_F(s) * v) * 0.5)

        a0x, a0y = head(x1, ux, vx, 1), head(y1, uy, vy, 1)
        a1x, a1y = head(x1, ux, vx, -1), head(y1, uy, vy, -1)
        self._line(x0, y0, x1, y1, c, t)
        self._line(x1, y1, a0x, a0y, c, t)
        self._line(x1, y1, a1x, a1y, c, t)
        self._touch()
        return self

    def draw_ellipse(self, *args, **kwargs):
        """``draw_ellipse(cx, cy, rx, ry, rotation=0, color, thickness=1, fill=False)`` (or one 4-tuple).

        draw.c's sheared-ellipse rasteriser: a rotated ellipse is drawn as an axis-aligned one whose
        columns are shifted by ``(int)(dx * shear_dy / shear_dx)``, the shear found with
        ``fast_atanf``/``tanf``/``sinf``/``cosf`` in float32 (note ``IM_DIV(y_axis, x_axis)`` is an
        integer division there, so the shear angle is 0 whenever ry < rx).
        """
        (cx, cy, rx, ry), rest = _args.consume(args, 4)
        rot = _args.to_int(_args.pick(rest, 0, kwargs, "rotation", 0))
        c = self._color(rest, kwargs, 1)
        t = _args.to_int(_args.pick(rest, 2, kwargs, "thickness", 1))
        fill = bool(_args.to_int(_args.pick(rest, 3, kwargs, "fill", False)))
        self._rotated_ellipse(cx, cy, rx * 2, ry * 2, rot, fill, c, t)
        self._touch()
        return self

    def _rotated_ellipse(self, x: int, y: int, x_axis: int, y_axis: int, rotation: int, filled: bool, c, t: int):
        from . import _fmath as fm

        if not (x_axis > 0 and y_axis > 0):
            return
        r180 = int(fm.c_mod(rotation, 180))
        if x_axis == y_axis or r180 == 0:
            self._sheared_ellipse(x, y, x_axis // 2, y_axis // 2, filled, _F(1), _F(0), c, t)
        elif r180 == 90:
            self._sheared_ellipse(x, y, y_axis // 2, x_axis // 2, filled, _F(1), _F(0), c, t)
        else:
            rad = _F(rotation) * _DEG2RAD  # IM_DEG2RAD as -ffast-math folds it
            ratio = int(fm.c_div(y_axis, x_axis))
            theta = _F(fm.fast_atanf(_F(ratio) * (-fm.tanf(rad))))
            ct, st = fm.cosf(theta), fm.sinf(theta)
            cr, sr = fm.cosf(rad), fm.sinf(rad)
            shear_dx = _F(_F(_F(x_axis) * ct) * cr) - _F(_F(_F(y_axis) * st) * sr)
            shear_dy = _F(_F(_F(x_axis) * ct) * sr) + _F(_F(_F(y_axis) * st) * cr)
            sx_axis = _F(abs(shear_dx))
            sy_axis = _F(_F(y_axis * x_axis) / sx_axis) if sx_axis != 0 else _F(0)
            self._sheared_ellipse(x, y, int(fm.to_int(sx_axis / _F(2))), int(fm.to_int(sy_axis / _F(2))),
                                  filled, shear_dx, shear_dy, c, t)

    def _sheared_ellipse(self, x0, y0, width, height, filled, shear_dx, shear_dy, c, thickness):
        """``scratch_draw_sheared_ellipse``: the midpoint ellipse walk, points or columns per step
        (its kernel; as Python it writes whole columns at once and allocates nothing, so a very thin
        ellipse costs what it costs on the device, no more)."""
        t0, t1 = thickness // 2, (thickness - 1) // 2  # thickness >= 0 when used
        if (thickness > 0 or filled) and shear_dx != 0:
            _draw_kernels.sheared_ellipse(self._pix, int(x0), int(y0), int(width), int(height), bool(filled),
                                          _F(shear_dx), _F(shear_dy), c, t0, t1)

    # ------------------------------------------------------------------ text
    def draw_string(self, *args, **kwargs):
        """``draw_string(x, y, text, color=white, scale=1.0, x_spacing=0, y_spacing=2, mono_space=False)``.

        Built-in 8x12 font, transparent background, proportional by default, ``\\n``/``\\r``/``\\r\\n``
        start a new line at ``x``; bytes outside 0x20..0x7E (including every byte of a UTF-8
        sequence) draw an outlined box and do not advance the pen (firmware behaviour).
        """
        if args and isinstance(args[0], (tuple, list)):
            vec = _args.fixed_array(args[0], 3)
            rest = args[1:]
        else:
            if len(args) < 3:
                raise OSError("Not enough positional arguments!")
            vec, rest = list(args[:3]), args[3:]
        x, y = _args.to_int(vec[0]), _args.to_int(vec[1])
        text = vec[2]
        if isinstance(text, str):
            data = text.encode("utf-8")
        elif isinstance(text, (bytes, bytearray)):
            data = bytes(text)
        else:
            raise TypeError(f"can't convert '{type(text).__name__}' object to str implicitly")
        c = self._color(rest, kwargs, 0)
        scale = _F(_args.to_float(_args.pick(rest, 1, kwargs, "scale", 1.0)))
        if not scale > 0:
            raise OSError("Error: 0 < scale!")
        x_spacing = _args.to_int(_args.pick(rest, 2, kwargs, "x_spacing", 0))
        y_spacing = _args.to_int(_args.pick(rest, 3, kwargs, "y_spacing", 2))
        mono = bool(_args.to_int(_args.pick(rest, 4, kwargs, "mono_space", False)))
        self._draw_text(x, y, text, data, c, scale, x_spacing, y_spacing, mono)
        self._touch()
        return self

    def _draw_text(self, x, y, text, data: bytes, c, scale, x_spacing, y_spacing, mono) -> None:
        """``imlib_draw_string``'s dispatch on the loaded font (``_fonts.FontMixin`` adds UTF-8): the
        ASCII path reads the text as a C string, which ends at its first NUL byte."""
        self._draw_ascii(x, y, data.split(b"\0", 1)[0], c, scale, x_spacing, y_spacing, mono)

    def _draw_ascii(self, x_off, y_off, data: bytes, c, scale, x_spacing, y_spacing, mono) -> None:
        """``imlib_draw_ascii_string``: the pen walk in Python (integer steps from :func:`_ascii_metrics`),
        the glyphs' pixels in one kernel call (numba) or one ``_plot`` per glyph (numpy); every
        pixel gets ``c``, so the order is free."""
        m = _ascii_metrics(float(scale))
        anchor = x_off
        last = 0
        fast = compiled()
        table = _glyph_table(float(scale))
        codes: list[int] = []
        xs: list[int] = []
        ys: list[int] = []
        first = _font8x12.FIRST
        for ch in data:
            prev, last = last, ch
            if prev == 0x0D and ch == 0x0A:
                continue
            if ch == 0x0A or ch == 0x0D:
                x_off = anchor
                y_off += m.line + y_spacing
                continue
            if ch < 0x20 or ch > 0x7E:
                # unknown character: outlined box, width/height swapped as in the firmware, no advance
                self._rect(x_off + m.inset, y_off + m.inset, m.box_w, m.box_h, c, m.box_t, False)
                continue
            i = ch - first
            if not mono:
                x_off -= m.lead[i]
            if table is None:
                self._big_glyph(i, x_off, y_off, c, scale)
            elif fast:
                codes.append(i)
                xs.append(x_off)
                ys.append(y_off)
            else:
                gy, gx = np.nonzero(table[i])
                if gx.size:
                    self._plot(gx + x_off, gy + y_off, c)
            if mono:
                x_off += m.mono + x_spacing
            elif m.advance[i] is None:
                x_off += m.space  # space: no x_spacing added
            else:
                x_off += m.advance[i] + x_spacing
        if codes and table is not None and table.size:
            if _draw_kernels.blit_glyphs.attempt(self._pix, table, np.array(codes, np.int64), np.array(xs, np.int64),
                                                 np.array(ys, np.int64), c) is NOT_SERVED:
                for i, gx0, gy0 in zip(codes, xs, ys):  # (the kernel came out of service: one plot per glyph)
                    gy, gx = np.nonzero(table[i])
                    if gx.size:
                        self._plot(gx + gx0, gy + gy0, c)

    def _font(self, glyph: bytes, font_w: int, font_h: int, scale, x: int, y: int, c) -> None:
        """``imlib_draw_font``: the rows of the glyph that land on the image (:func:`font_bits`)."""
        y0 = max(-y, 0)
        bits = font_bits(glyph, font_w, font_h, scale, y0, self.height() - y)
        if bits.size:
            self._blit(bits, x, y + y0, c)

    def _blit(self, bits: np.ndarray, x: int, y: int, c) -> None:
        """Set ``c`` where the (rows, cols) uint8 ``bits`` are set, placed at (x, y), clipped."""
        if not compiled() or _draw_kernels.blit_bits.attempt(self._pix, bits, int(x), int(y), c) is NOT_SERVED:
            ys, xs = np.nonzero(bits)
            self._plot(xs + x, ys + y, c)

    def _big_glyph(self, index: int, x_off: int, y_off: int, c, scale) -> None:
        """One glyph too big for a table: only its rows and columns that land on the image."""
        h, w = self._pix.shape
        bits = _glyph_rows(np.array([index]), float(scale), max(-y_off, 0), h - y_off, max(-x_off, 0), w - x_off)[0]
        if bits.size:
            gy, gx = np.nonzero(bits)
            self._plot(gx + x_off + max(-x_off, 0), gy + y_off + max(-y_off, 0), c)

    def draw_font(self, *args, **kwargs):
        """``draw_font(x, y, width, height, glyph_bytes, scale=1, color=white)``: one raw 1-bit glyph.

        Rows are bytes; for 16/24/32-wide glyphs the firmware joins ``height//8`` bytes per row taken
        ``height`` bytes apart (left 8 columns of all rows first). Bytes past the buffer read as 0.
        """
        if args and isinstance(args[0], (tuple, list)):
            vec = _args.fixed_array(args[0], 5)
            rest = args[1:]
        else:
            if len(args) < 5:
                raise OSError("Not enough positional arguments!")
            vec, rest = list(args[:5]), args[5:]
        x, y, fw, fh = (_args.to_int(v) for v in vec[:4])
        font = vec[4]
        font = font.encode("utf-8") if isinstance(font, str) else bytes(font)
        if not (fw % 8 == 0 and fw <= 32):
            raise OSError("Error: font arg_w_font %% 8 == 0 && arg_w_font <= 32!")
        if int((fw / 8)) * int((fh / 8)) * 8 != len(font):
            raise OSError("Error: font (arg_w_font / 8) * (arg_h_font / 8) * 8 == font_len!")
        c = self._color(rest, kwargs, 0)
        scale = _F(_args.to_float(_args.pick(rest, 1, kwargs, "scale", 1.0)))
        if not scale > 0:
            raise OSError("Error: 0 < scale!")
        self._font(font, fw, fh, scale, x, y, c)
        self._touch()
        return self

    # ------------------------------------------------------------------ images
    def draw_image(self, *args, **kwargs):
        """``draw_image(img, x, y, x_scale=1.0, y_scale=1.0, alpha=256, mask=None)``.

        As in MaixPy v0.6.2 the source pixel is taken as a raw value and treated as RGB565 whatever
        the source format (a grayscale source is *not* converted — it shows in false colours on an
        RGB565 image, like on the device); sampling is ``int(x * (1/x_scale))``. With ``alpha < 256``
        the firmware's brightness-weighted blend is used.
        """
        if not args:
            raise TypeError("function missing required positional argument")
        other = args[0]
        if not isinstance(other, DrawMixin):
            raise TypeError("Image expected")
        (x_off, y_off), rest = _args.consume(args[1:], 2)
        xs = _F(_args.to_float(_args.pick(rest, 0, kwargs, "x_scale", 1.0)))
        if not xs >= 0:
            raise OSError("Error: 0.0 <= x_scale!")
        ys = _F(_args.to_float(_args.pick(rest, 1, kwargs, "y_scale", 1.0)))
        if not ys >= 0:
            raise OSError("Error: 0.0 <= y_scale!")
        alpha = _F(_args.to_int(_args.pick(rest, 2, kwargs, "alpha", 256)) / _F(256.0))
        if not (0 <= alpha <= 1):
            raise OSError("Error: 0 <= alpha <= 256!")
        mask = _args.pick(rest, 3, kwargs, "mask", None)
        if mask is not None and not isinstance(mask, DrawMixin):
            raise TypeError("Image expected")
        ow = _ftrunc(_F(other.width()) * xs)
        oh = _ftrunc(_F(other.height()) * ys)
        if ow <= 0 or oh <= 0:
            self._touch()
            return self
        over_x = _F(1.0 / float(xs)) if xs else _F(0)
        over_y = _F(1.0) / ys if ys else _F(0)
        # only the destination pixels on the image: imlib_set_pixel drops the others
        x0, x1 = max(-x_off, 0), min(ow, self.width() - x_off)
        y0, y1 = max(-y_off, 0), min(oh, self.height() - y_off)
        if x1 > x0 and y1 > y0:
            # other_x = fast_roundf(x * over_xscale): the int x made a float, the product truncated
            sx = (np.arange(x0, x1).astype(_F) * over_x).astype(np.int64)
            sy = (np.arange(y0, y1).astype(_F) * over_y).astype(np.int64)
            if np.shares_memory(self._pix, other._pix):
                self._blit_image(other, sx, sy, x_off + x0, y_off + y0, alpha, mask)
            elif not (compiled() and self._blit_image(other, sx, sy, x_off + x0, y_off + y0, alpha, mask,
                                                      served=True)):
                self._blend_image(other, sx, sy, x_off + x0, y_off + y0, alpha, mask)
        self._touch()
        return self

    def _blit_image(self, other, sx, sy, x_off: int, y_off: int, alpha, mask, served: bool = False) -> bool:
        """``imlib_draw_image``'s loop in the compiled kernel (its Python twin without numba, where
        the source is this very image: the C then reads pixels it has already drawn). With
        ``served``, only the compiled code runs: False, drawing nothing, while it is not in memory."""
        src = other._pix
        if src.dtype != np.uint16 and not np.shares_memory(self._pix, src):
            src = src.astype(np.uint16)  # the C reads every source pixel as an int RGB565 value
        bits = _NO_MASK if mask is None else to_binary(mask._pix, mask._fmt).view(np.uint8)
        out_mask = 0xFF if self._fmt == GRAYSCALE else 1 if self._fmt == BINARY else 0xFFFF
        args = (self._pix, src, sx, sy, x_off, y_off, bits, mask is not None, _F(alpha), _color.RGB888_OF_565,
                _color.PACK888, out_mask)
        if served:
            return _draw_kernels.draw_image.attempt(*args) is not NOT_SERVED
        _draw_kernels.draw_image(*args)
        return True

    def _blend_image(self, other, sx, sy, x_off: int, y_off: int, alpha, mask) -> None:
        """The numpy form of :meth:`_blit_image` (every sampled pixel at once)."""
        ow, oh = sx.size, sy.size
        inside = (sx[None, :] < other.width()) & (sy[:, None] < other.height())
        src = other._pix[np.minimum(sy, other.height() - 1)[:, None],
                         np.minimum(sx, other.width() - 1)[None, :]].astype(np.int64)
        src = np.where(inside, src, -1)  # imlib_get_pixel returns -1 outside
        sel = np.ones(src.shape, bool) if mask is None else _mask_bits(mask, sx, sy)
        raw = (src & 0xFFFF).astype(np.uint16)
        if alpha == 1:
            value = raw  # 8-bit and back gives every RGB565 value back (tests check all of them)
        else:
            dst = self._pix[y_off:y_off + oh, x_off:x_off + ow].astype(np.uint16)
            s8 = _color.rgb565_to_888(raw).astype(np.uint16)
            d8 = _color.rgb565_to_888(dst).astype(_F)
            tmp = ((s8[..., 0] | s8[..., 1] | s8[..., 2]).astype(np.float64) / 256.0).astype(_F)
            t_alpha = alpha * tmp
            beta = _F(1) - t_alpha
            mixed = (s8.astype(_F) * t_alpha[..., None] + d8 * beta[..., None])
            mixed = np.minimum(np.trunc(mixed).astype(np.int64) & 0xFFFF, 255).astype(np.uint8)
            value = _color.rgb888_to_565(mixed)
        if self._fmt == GRAYSCALE:
            value = (value & 0xFF).astype(np.uint8)  # imlib_set_pixel stores the low byte
        elif self._fmt == BINARY:
            value = (value & 1).astype(np.uint8)  # IMAGE_PUT_BINARY_PIXEL keeps bit 0 of the RGB565 value
        block = self._pix[y_off:y_off + oh, x_off:x_off + ow]
        block[sel] = value[sel]


#: the mask argument of the draw_image kernel when there is no mask
_NO_MASK = np.zeros((1, 1), np.uint8)


def font_bits(glyph: bytes, font_w: int, font_h: int, scale, y0: int = 0, y1: int | None = None) -> np.ndarray:
    """(rows, cols) uint8: the pixels ``imlib_draw_font(glyph, font_h, font_w, scale)`` sets, or
    only its rows y0..y1-1 (the others fall off the image).

    ``int(font_h * scale)`` rows and ``int(font_w * scale)`` columns (counted in a ``uint8_t``); row
    ``y`` shows glyph row ``uint8(int(y / scale))`` built from ``font_h // 8`` bytes ``font_h``
    apart, column ``x`` tests bit ``font_w - 1 - int(x / scale)`` of it (both as
    :func:`scaled_index`). Bytes past the glyph read as 0.
    """
    rows = _ftrunc(_F(font_h) * _F(scale))
    cols = _ftrunc(_F(font_w) * _F(scale)) & 0xFF
    y1 = rows if y1 is None else min(y1, rows)
    if y1 <= y0 or cols <= 0:
        return np.zeros((0, 0), np.uint8)
    pos = scaled_index(y0, y1, scale) & 0xFF  # uint8_t pos
    table = np.zeros(256 + max(font_h // 8, 1) * max(font_h, 0) + 1, np.uint64)  # every index read
    buf = np.frombuffer(bytes(glyph), np.uint8)[: table.size]
    table[: buf.size] = buf
    tmp = table[pos]
    for i in range(1, font_h // 8):
        tmp = ((tmp << np.uint64(8)) | table[pos + i * font_h]) & np.uint64(0xFFFFFFFF)
    shift = font_w - 1 - scaled_index(0, cols, scale)
    valid = (shift >= 0) & (shift < 32)
    bits = (tmp[:, None] >> np.where(valid, shift, 0).astype(np.uint64)[None, :]) & np.uint64(1)
    return ((bits == 1) & valid[None, :]).astype(np.uint8)


def _mask_bits(mask, sx: np.ndarray, sy: np.ndarray) -> np.ndarray:
    """``image_get_mask_pixel``: gray > 127 (RGB565: its gray > 127, a bitmap: its bit); outside the
    mask -> False."""
    inside = (sx[None, :] < mask.width()) & (sy[:, None] < mask.height())
    p = mask._pix[np.minimum(sy, mask.height() - 1)[:, None], np.minimum(sx, mask.width() - 1)[None, :]]
    return inside & to_binary(p, mask._fmt)


class _AsciiMetrics(NamedTuple):
    """The integer steps of ``imlib_draw_ascii_string`` at one scale (each a ``fast_roundf`` of a
    float32 product, as font.c computes them)."""

    lead: list[int]  # per glyph: the shift left to its first lit column (0 for a blank glyph)
    advance: list[int | None]  # per glyph: (last lit column + 2) * scale; None for a blank glyph
    space: int  # a blank glyph's advance: scale * 3 (no x_spacing)
    mono: int  # mono_space advance: 8 * scale
    line: int  # the newline step: 12 * scale
    inset: int  # the unknown-character box: inset, width, height, thickness
    box_w: int
    box_h: int
    box_t: int


@lru_cache(maxsize=64)
def _ascii_metrics(scale: float) -> _AsciiMetrics:
    s = _F(scale)
    lead: list[int] = []
    advance: list[int | None] = []
    for code in range(_font8x12.FIRST, _font8x12.LAST + 1):
        first, last = _glyph_extent(code)
        lead.append(0 if first is None else _ftrunc(_F(first) * s))
        advance.append(None if last is None else _ftrunc(_F(last + 2) * s))
    s3 = _ftrunc(s * _F(3))
    inset = s3 // 2
    line = _ftrunc(_F(_font8x12.HEIGHT) * s)
    mono = _ftrunc(_F(_font8x12.WIDTH) * s)
    return _AsciiMetrics(lead, advance, s3, mono, line, inset, line - inset * 2, mono - inset * 2, _ftrunc(s))


@lru_cache(maxsize=None)
def _glyph_extent(code: int) -> tuple[int | None, int | None]:
    """(first, last) non-empty column of a glyph, None/None for an empty glyph (space)."""
    m = _font8x12.MASKS[code - _font8x12.FIRST]
    cols = np.nonzero(m.any(axis=0))[0]
    if cols.size == 0:
        return None, None
    return int(cols[0]), int(cols[-1])


#: glyph tables of at most this many pixels per glyph are built for all 95 glyphs at once
_TABLE_PIXELS = 4096


def _glyph_size(scale) -> tuple[int, int]:
    """(rows, cols) ``imlib_draw_font`` draws for an 8x12 glyph: ``int(12 * scale)`` rows and
    ``int(8 * scale)`` columns counted in a ``uint8_t``."""
    s = _F(scale)
    return _ftrunc(_F(_font8x12.HEIGHT) * s), _ftrunc(_F(_font8x12.WIDTH) * s) & 0xFF


def _glyph_rows(codes: np.ndarray, scale: float, y0: int = 0, y1: int | None = None, x0: int = 0,
                x1: int | None = None) -> np.ndarray:
    """(len(codes), rows, cols) uint8: the pixels ``imlib_draw_font`` sets for ASCII glyphs
    ``codes`` (0 = space) at ``scale``, or only rows y0..y1-1 and columns x0..x1-1 of them.

    Output row ``y`` shows source row ``uint8(int(y/scale))``, column ``x`` source column
    ``int(x/scale)`` (both as :func:`scaled_index`; sizes: :func:`_glyph_size`); rows past a glyph read the next glyph's first rows,
    as the firmware's table is contiguous (zeros after the last one).
    """
    s = _F(scale)
    rows, cols = _glyph_size(scale)
    y1 = rows if y1 is None else min(y1, rows)
    x1 = cols if x1 is None else min(x1, cols)
    if y1 <= y0 or x1 <= x0:
        return np.zeros((codes.size, 0, 0), np.uint8)
    table = np.concatenate([_font8x12.GLYPHS.reshape(-1), np.zeros(256, np.uint8)])
    pos = scaled_index(y0, y1, s) & 0xFF
    col = scaled_index(x0, x1, s)
    row_bytes = table[codes[:, None] * _font8x12.HEIGHT + pos[None, :]]
    valid = col < 8
    bits = (row_bytes[:, :, None] >> np.where(valid, 7 - col, 0)[None, None, :]) & 1
    out = ((bits == 1) & valid[None, None, :]).astype(np.uint8)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=64)
def _glyph_table(scale: float) -> np.ndarray | None:
    """Every glyph at ``scale`` (:func:`_glyph_rows`), or None when that would be large (a big
    scale: each glyph is then made for the part of it that lands on the image)."""
    rows, cols = _glyph_size(scale)
    if rows * cols > _TABLE_PIXELS:
        return None
    return _glyph_rows(np.arange(_font8x12.LAST - _font8x12.FIRST + 1), scale)

