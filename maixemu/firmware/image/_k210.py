"""K210-specific image methods from the MaixPy firmware: ``conv3`` (run by the KPU on the AI
buffer), ``strech_char`` (sic), ``stretch`` and ``dump_roi`` — all return ``None`` like the firmware.
"""

from __future__ import annotations

import numpy as np

from . import _args
from ._core import GRAYSCALE, RGB565
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (the vectorised form until kernels are served compiled)
from ._host import ImageHost


class K210Mixin(ImageHost):
    def conv3(self, *args, **kwargs):
        """3x3 convolution run by the KPU **on the AI buffer** (MaixPy ``conv.c`` + ``sipeed_conv.c``).

        The 3x3x3x3 kernel (the 9 weights on each channel's own plane, zeros across channels) is
        quantised to 16 bits over its [min, max] range; the KPU sums ``x*w_q``, adds the
        ``arg_x * sum(x) >> shr_x`` offset, and the activation table scales back with
        ``y_mul >> shift_number`` (round half to even), negatives -> 0, clamp to 255 — all in
        integers as in kpu-hardware.md §5. The result replaces the AI planes; pixels are rebuilt
        with plain shifts (``r>>3``, ``g>>2``, ``b>>3``). Without an AI buffer it prints
        ``pix_ai or pixels is NULL!`` and does nothing. Returns ``None``. (On a grayscale image the
        firmware would overrun the buffers; here the single plane is convolved instead.)
        """
        kern = kwargs.pop("kern", None)
        if kern is None and args:
            kern = args[0]
        if kern is None:
            print("please input 9 kern parm!")
            return None
        krn = [_args.to_float(v) for v in _args.fixed_array(kern, 9)]
        ai = self._buf.ai
        if ai is None:
            print("pix_ai or pixels is NULL!")
            return None
        h, w = self.height(), self.width()
        flat = ai.reshape(-1)
        nplanes = 3 if (self._fmt == RGB565 and flat.size >= 3 * w * h) else 1
        planes = flat[: nplanes * w * h].reshape(nplanes, h, w)  # (uint8: _kpu_conv3 widens where it must)
        out = _kpu_conv3(planes, krn)
        flat[: nplanes * w * h] = out.reshape(-1)
        if self._fmt == RGB565:
            if nplanes < 3 or _pack_shifted.attempt(out, self._pix) is NOT_SERVED:
                r, g, b = (out[min(i, nplanes - 1)].astype(np.uint16) for i in range(3))
                self._pix[...] = ((r >> 3) << 3) + (g >> 5) + ((b >> 3) << 8) + ((g & 0x1C) << 11)
        else:
            self._pix[...] = out[0]
        self._buf.pix_gen += 1
        self._buf.ai_gen = self._buf.pix_gen
        return None

    def strech_char(self, de_dark):
        """Contrast stretch for character images (MaixPy, grayscale only; sic "strech"); ``None``.

        ``(v - mean) * 255 / (max - mean)`` in C integers (truncating; a zero divisor gives -1 as
        RISC-V's division does), clamped to 0..255; ``de_dark`` then divides by
        ``1 + 32 r^4 / w^2 / h^2`` evaluated in float32 left to right (r = distance to the centre).
        """
        de_dark = _args.to_int(de_dark)
        if self._fmt != GRAYSCALE:
            print("only support grayscale now\r")
            return None
        h, w = self.height(), self.width()
        p = self._pix.astype(np.int64)
        graymax = int(p.max())
        gate = int(p.sum()) // w // h
        d = p - gate
        den = graymax - gate
        if den == 0:
            dat = np.full_like(d, -1)  # RISC-V integer division by zero yields -1
        else:
            num = d * 255
            dat = np.sign(num) * np.sign(den) * (np.abs(num) // abs(den))  # C truncation
        dat = np.clip(dat, 0, 255)
        if de_dark:
            F = np.float32
            yy, xx = np.mgrid[0:h, 0:w]
            r2 = ((xx - w // 2) ** 2 + (yy - h // 2) ** 2).astype(F)
            t = F(32.0) * r2 * r2
            for v in (w, w, h, h):
                t = (t / F(v)).astype(F)
            dat = np.trunc(dat.astype(F) / (F(1.0) + t)).astype(np.int64)
        self._pix[...] = dat.astype(np.uint8)
        self._touch()
        return None

    def stretch(self, to_min, to_max):
        """Linear stretch of a grayscale image to [to_min, to_max]; ``None``.

        The source range is the min/max of the *interior* pixels (``min``/``max`` in py_image.c skip
        the first and last row and column, starting from pixel (1, 1)); the scale is the C integer
        quotient ``(to_max - to_min) / (max - min)`` capped at 5; every pixel (borders included)
        becomes ``uint8((v - min) * scale + to_min)`` (wrapping).
        """
        to_min, to_max = _args.to_int(to_min), _args.to_int(to_max)
        if self._fmt != GRAYSCALE:
            print("only support grayscale now\r")
            return None
        p = self._pix.astype(np.int64)
        h, w = p.shape
        flat = p.reshape(-1)
        start = int(flat[w + 1]) if flat.size > w + 1 else 0
        inner = p[1:h - 1, 1:w - 1]
        lo = min(start, int(inner.min())) if inner.size else start
        hi = max(start, int(inner.max())) if inner.size else start
        if lo == hi:
            return None
        q, r = to_max - to_min, hi - lo
        scale = float(abs(q) // r * (1 if q >= 0 else -1))  # C int division, then stored in a float
        scale = min(scale, 5.0)
        v = (p - lo).astype(np.float32) * np.float32(scale) + np.float32(to_min)
        self._pix[...] = (np.trunc(v).astype(np.int64) & 0xFF).astype(np.uint8)
        self._touch()
        return None

    def dump_roi(self, *args, **kwargs):
        """Print the ROI's memory two bytes per pixel (MaixPy ``dump_roi``; returns None).

        Each pixel prints ``0x%02x 0x%02x; `` of bytes ``2 * (w * y + x)`` and the next, whatever the
        format (the firmware's "TODO: pixel format": a grayscale image prints pairs from twice the
        offset); a newline after every 8 pixels and after each row, one more at the end. Nothing is
        bounds-checked on the board; bytes outside the image memory print as 0x00 here.
        """
        (x0, y0, w, h), _ = _args.consume(args, 4)
        from . import _kinds

        mem = _kinds.memory_bytes(self)
        width = self.width() & 0xFFFF

        def byte(i: int) -> int:
            return mem[i] if 0 <= i < len(mem) else 0

        out = []
        for y in range(y0, y0 + h):
            for x in range(x0, x0 + w):
                i = 2 * width * y + 2 * x
                out.append(f"0x{byte(i):02x} 0x{byte(i + 1):02x}; ")
                if (x - x0) % 8 == 7:
                    out.append("\n")
            out.append("\n")
        out.append("\n")
        print("".join(out), end="")
        return None



def _round_half_even_shift(t: np.ndarray, s: int) -> np.ndarray:
    """kpu-hardware.md §5.3 round_shift for t >= 0: round half to even of t / 2^s."""
    if s == 0:
        return t
    q = t >> s
    f = t & ((1 << s) - 1)
    half = 1 << (s - 1)
    return np.where(f < half, q, np.where(f > half, q + 1, q + (q & 1)))


def _kpu_conv3(planes: np.ndarray, krn: list[float]) -> np.ndarray:
    """``sipeed_conv``: per-plane 3x3 conv of (C, H, W) planes of byte values (any integer dtype) on
    the KPU model, -> uint8."""
    F = np.float32
    C, H, W = planes.shape
    data = np.zeros((C, C, 9), F)  # conv_data[oc][ic][k]: the kernel only on the diagonal
    for c in range(C):
        data[c, c] = np.array(krn, F)
    flat = data.reshape(-1)
    dmin = F(flat.min())
    drange = F(flat.max()) - dmin
    if drange == 0:
        return np.zeros_like(planes, dtype=np.uint8)
    scale = F(65535.0 / float(drange))
    wq = np.trunc((flat - dmin) * scale).astype(np.int64).reshape(C, C, 9)
    a = F(scale * (dmin if dmin >= 0 else -dmin))
    i = 0
    while a < F(0x400000) and a != 0:
        a = F(a * F(2))
        i += 1
    arg_x = int(a) if dmin >= 0 else (0x1000000 - int(a))
    arg_x &= 0xFFFFFF
    if arg_x & 0x800000:
        arg_x -= 0x1000000
    shr_x = i & 0xF
    inv = F(1.0 / float(scale))
    shift = 0
    while inv <= F(16383.0):
        inv = F(inv * F(2))
        shift += 1
    y_mul = int(inv) & 0xFFFF
    if compiled():
        # the kernel reads the padded planes as bytes (one specialisation; 8x less memory traffic)
        padded = np.pad(np.asarray(planes, np.uint8), ((0, 0), (1, 1), (1, 1)))  # pad_value 0
        out = np.empty((C, H, W), np.uint8)
        q0s = np.zeros(C, np.int64)
        own = np.zeros((C, 9), np.int64)  # per output plane: its own plane's weights minus q0
        for oc in range(C):
            across = np.delete(wq[oc], oc, axis=0)
            # sipeed_conv's data holds the kernel on the diagonal only, so every weight across
            # planes is the quantised zero: one value (the array form below keeps the general sum)
            q0s[oc] = int(across.flat[0]) if across.size else 0
            own[oc] = wq[oc, oc] - q0s[oc]
        if _conv3_planes.attempt(padded, q0s, own, arg_x, shr_x, y_mul, shift, out) is not NOT_SERVED:
            return out  # (while the kernel compiles, the array form below serves: its twin is per pixel)
    padded = np.pad(np.asarray(planes, np.int64), ((0, 0), (1, 1), (1, 1)))  # pad_value 0
    taps = [(dy, dx) for dy in range(3) for dx in range(3)]
    sx = np.zeros((H, W), np.int64)
    for ic in range(C):
        for dy, dx in taps:
            sx += padded[ic, dy:dy + H, dx:dx + W]
    out = np.empty((C, H, W), np.uint8)
    offset_term = (arg_x * sx) >> shr_x
    for oc in range(C):
        # the weights across planes are all the quantised zero ``q0``: their taps sum to q0 times
        # the other planes' 3x3 sums, so acc = q0 * sx + sum((w - q0) * own plane) (exact integers)
        across = np.delete(wq[oc], oc, axis=0)
        q0 = int(across.flat[0]) if across.size and (across == across.flat[0]).all() else 0
        acc = q0 * sx if q0 else np.zeros((H, W), np.int64)
        for ic in range(C):
            for k, (dy, dx) in enumerate(taps):
                wk = int(wq[oc, ic, k]) - q0
                if wk:
                    acc += padded[ic, dy:dy + H, dx:dx + W] * wk
        acc += offset_term
        pos = acc > 0  # segments 1..15 (x_start 0); segment 0 (y_mul 0) gives 0
        r = _round_half_even_shift(np.where(pos, acc, 0) * y_mul, shift)
        out[oc] = np.clip(np.where(pos, r, 0), 0, 255).astype(np.uint8)
    return out


@kernel
def _conv3_planes(padded, q0s, own, arg_x, shr_x, y_mul, shift, out):
    """:func:`_kpu_conv3`'s accumulation and output stage per pixel (numba), the same integers: the
    3x3 sum over all planes ``sx``, ``acc = q0 * sx + sum((w - q0) * own tap)`` (``q0`` the quantised
    zero every cross-plane weight holds, ``own`` the output plane's nine weights minus it), the
    offset ``(arg_x * sx) >> shr_x``, then for a positive ``acc`` the round-half-even shift of
    ``acc * y_mul``, clipped to a byte (0 otherwise). One pass per output row: the nine taps, the
    offset and the output stage fused, so the row's sums never leave registers."""
    C, H, W = out.shape
    total = np.zeros((H + 2, W + 2), np.int32)  # the planes summed (at most 3 * 255)
    for ic in range(C):
        for y in range(H + 2):
            for x in range(W + 2):
                total[y, x] += padded[ic, y, x]
    sx = np.zeros((H, W), np.int32)  # its 3x3 sums, tap by tap (whole rows: the loops vectorise)
    for k in range(9):
        dy = k // 3
        dx = k % 3
        for y in range(H):
            for x in range(W):
                sx[y, x] += total[y + dy, x + dx]
    round_bias = (1 << (shift - 1)) - 1 if shift else 0
    for oc in range(C):
        q0 = q0s[oc]
        w0, w1, w2 = own[oc, 0], own[oc, 1], own[oc, 2]
        w3, w4, w5 = own[oc, 3], own[oc, 4], own[oc, 5]
        w6, w7, w8 = own[oc, 6], own[oc, 7], own[oc, 8]
        plane = padded[oc]
        for y in range(H):
            r0 = plane[y]
            r1 = plane[y + 1]
            r2 = plane[y + 2]
            srow = sx[y]
            orow = out[oc, y]
            for x in range(W):  # branch-free, so the row vectorises
                s = np.int64(srow[x])
                a = (q0 * s + ((arg_x * s) >> shr_x)
                     + w0 * np.int64(r0[x]) + w1 * np.int64(r0[x + 1]) + w2 * np.int64(r0[x + 2])
                     + w3 * np.int64(r1[x]) + w4 * np.int64(r1[x + 1]) + w5 * np.int64(r1[x + 2])
                     + w6 * np.int64(r2[x]) + w7 * np.int64(r2[x + 1]) + w8 * np.int64(r2[x + 2]))
                t = a * y_mul if a > 0 else 0
                # round half to even: (t + half - 1 + (q & 1)) >> shift, q = t >> shift (t >= 0)
                r = (t + round_bias + ((t >> shift) & 1)) >> shift if shift else t
                orow[x] = r if r < 255 else 255


@kernel
def _pack_shifted(planes, pix):
    """conv3's pixels from its three output planes with plain shifts (the firmware's byte-swapped
    RGB565 words), in one pass: ``((r >> 3) << 3) + (g >> 5) + ((b >> 3) << 8) + ((g & 0x1C) << 11)``."""
    H, W = pix.shape
    for y in range(H):
        for x in range(W):
            r = np.uint16(planes[0, y, x])
            g = np.uint16(planes[1, y, x])
            b = np.uint16(planes[2, y, x])
            pix[y, x] = ((r >> 3) << 3) + (g >> 5) + ((b >> 3) << 8) + ((g & 0x1C) << 11)

