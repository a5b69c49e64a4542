"""``find_displacement``: phase correlation with the firmware's own FFT (``phasecorrelation.c`` +
``fft.c``), in float32 and in the firmware's order of operations, vectorised over rows/columns.

The firmware's FFT is a radix-2 decimation-in-time transform with 512-entry cos/sin tables (the
values printed to 6 decimals), real rows packed two samples per complex value into a half-size
FFT and unpacked with the TI "efficient real FFT" coefficients, columns transformed in place with a
stride; sizes are padded to powers of two (at most 1024 columns and 512 rows). Each butterfly,
unpack and pack step here performs the same float32 operations in the same order as the C, one
numpy operation over all independent elements of a stage. The only sequential parts — the running
sums of the peak search — use cumulative sums, which accumulate in order as the C loop does.

The reference is the firmware's C built with its own flags (``-Os -ffast-math
-fsingle-precision-constant``): under ``-ffast-math`` GCC regroups the butterflies' sums (``x0 +
(a*c + b*s)`` becomes ``(a*c + x0) + b*s`` for the parts it does not share), and this port follows
that grouping; built on the PC there are no fused multiply-adds, while the K210 build may contract
``a*b + c`` into ``fmadd.s``, so a device's last bits can differ (as the golden cases'
``expected_nofma`` notes). This port matches the no-FMA build bit for bit.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import _fmath
from ._core import GRAYSCALE
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (the vectorised form until kernels are served compiled)

F = np.float32


@functools.lru_cache(maxsize=1)
def fft_tables() -> tuple[np.ndarray, np.ndarray]:
    """``fft_cos_table``/``fft_sin_table``: cos/sin(pi k / 512), k < 512, printed to 6 decimals."""
    cos = np.array([float(f"{math.cos(math.pi * k / 512):.6f}") for k in range(512)], F)
    sin = np.array([float(f"{math.sin(math.pi * k / 512):.6f}") for k in range(512)], F)
    return cos, sin


def _twiddles(k: np.ndarray, n_pow2: int) -> tuple[np.ndarray, np.ndarray]:
    cos, sin = fft_tables()
    idx = np.asarray(k) << (9 - n_pow2)
    return cos[idx], sin[idx]


@functools.lru_cache(maxsize=None)
def _bit_reverse(n_pow2: int) -> np.ndarray:
    """Complex index -> complex index of ``bit_reverse(2k, n_pow2) / 2`` (``__RBIT(i) >> (30 - p)``)."""
    out = np.empty(1 << n_pow2, np.int64)
    for c in range(1 << n_pow2):
        r = int(f"{2 * c:032b}"[::-1], 2)
        out[c] = (r >> (30 - n_pow2)) // 2
    return out


def _butterflies(re: np.ndarray, im: np.ndarray, n_pow2: int, inverse: bool) -> None:
    """``do_fft``/``do_ifft`` in place on the last axis (2^n_pow2 complex values, bit-reversed order):
    :func:`_butterfly_rows` where kernels are served compiled, one numpy operation per stage
    otherwise (the same float32 operations, grouped alike)."""
    n = 1 << n_pow2
    if compiled() and re.flags.c_contiguous and im.flags.c_contiguous:
        cos, sin = fft_tables()
        if _butterfly_rows.attempt(re.reshape(-1, n), im.reshape(-1, n), n_pow2, inverse, cos, sin) is not NOT_SERVED:
            return
    lead = re.shape[:-1]
    for s in range(1, n_pow2 + 1):
        half = 1 << (s - 1)
        r = re.reshape(*lead, n // (2 * half), 2, half)
        i = im.reshape(*lead, n // (2 * half), 2, half)
        c, sn = _twiddles(np.arange(half) << (n_pow2 + 1 - s), n_pow2)
        x1r, x1i = r[..., 1, :], i[..., 1, :]
        x0r, x0i = r[..., 0, :].copy(), i[..., 0, :].copy()
        rc, rs, ic, is_ = x1r * c, x1r * sn, x1i * c, x1i * sn
        if inverse:  # the -ffast-math build's grouping (GCC's reassociation of the C's expressions)
            ti = ic + rs
            r[..., 1, :] = (is_ + x0r) - rc
            i[..., 1, :] = x0i - ti
            r[..., 0, :] = (rc + x0r) - is_
            i[..., 0, :] = x0i + ti
        else:
            tr = rc + is_
            r[..., 1, :] = x0r - tr
            i[..., 1, :] = (rs + x0i) - ic
            r[..., 0, :] = x0r + tr
            i[..., 0, :] = (ic + x0i) - rs
    if inverse:
        div = F(1) / F(n)
        re *= div
        im *= div


@kernel
def _butterfly_rows(re, im, n_pow2, inverse, cos, sin):
    """``do_fft``/``do_ifft`` of each row of ``re``/``im`` (float32, 2^n_pow2 values each, in
    place): stage ``s`` pairs ``x0 = g * 2h + j`` with ``x1 = x0 + h`` (``h = 2^(s-1)``), twiddle
    ``j << (10 - s)`` of the 512-entry tables, the -ffast-math grouping of :func:`_butterflies`;
    the inverse scales by ``1 / n`` at the end."""
    n = 1 << n_pow2
    for row in range(re.shape[0]):
        for s in range(1, n_pow2 + 1):
            half = 1 << (s - 1)
            for g in range(0, n, 2 * half):
                for j in range(half):
                    c = cos[j << (10 - s)]
                    sn = sin[j << (10 - s)]
                    a = g + j
                    b = a + half
                    x0r = re[row, a]
                    x0i = im[row, a]
                    x1r = re[row, b]
                    x1i = im[row, b]
                    rc = np.float32(x1r * c)
                    rs = np.float32(x1r * sn)
                    ic = np.float32(x1i * c)
                    is_ = np.float32(x1i * sn)
                    if inverse:
                        ti = np.float32(ic + rs)
                        re[row, b] = np.float32(np.float32(is_ + x0r) - rc)
                        im[row, b] = np.float32(x0i - ti)
                        re[row, a] = np.float32(np.float32(rc + x0r) - is_)
                        im[row, a] = np.float32(x0i + ti)
                    else:
                        tr = np.float32(rc + is_)
                        re[row, b] = np.float32(x0r - tr)
                        im[row, b] = np.float32(np.float32(rs + x0i) - ic)
                        re[row, a] = np.float32(x0r + tr)
                        im[row, a] = np.float32(np.float32(ic + x0i) - rs)
        if inverse:
            div = np.float32(np.float32(1.0) / np.float32(n))
            for k in range(n):
                re[row, k] = np.float32(re[row, k] * div)
                im[row, k] = np.float32(im[row, k] * div)


def _unpack(re: np.ndarray, im: np.ndarray, n_pow2: int) -> tuple[np.ndarray, np.ndarray]:
    """``unpack_fft``: the half-size FFT of a packed real sequence -> its full spectrum (2x values)."""
    n = 1 << n_pow2
    k = np.arange(n)
    nk = np.where(k == 0, 0, n - k)
    cos, sin = _twiddles(k, n_pow2)
    ar, br = F(0.5) * (F(1) - sin), F(0.5) * (F(1) + sin)
    ai, bi = F(0.5) * (-cos), F(0.5) * (+cos)
    ir, ii, nr, ni = re, im, re[..., nk], im[..., nk]
    out_r = np.zeros(re.shape[:-1] + (2 * n,), F)
    out_i = np.zeros_like(out_r)
    out_r[..., :n] = (((ir * ar) - (ii * ai)) + (nr * br)) + (ni * bi)
    out_i[..., :n] = (((ii * ar) + (ir * ai)) + (nr * bi)) - (ni * br)
    out_r[..., n + 1:] = out_r[..., n - 1:0:-1]
    out_i[..., n + 1:] = -out_i[..., n - 1:0:-1]
    out_r[..., n] = re[..., 0] - im[..., 0]
    out_i[..., n] = 0
    return out_r, out_i


def _pack(re: np.ndarray, im: np.ndarray, n_pow2: int) -> tuple[np.ndarray, np.ndarray]:
    """``pack_fft``: a full spectrum (2^(n_pow2+1) values) -> the half-size one of its packed ifft."""
    n = 1 << n_pow2
    k = np.arange(n)
    cos, sin = _twiddles(k, n_pow2)
    asr, bsr = F(0.5) * (F(1) - sin), F(0.5) * (F(1) + sin)
    asi, bsi = F(0.5) * (+cos), F(0.5) * (-cos)
    ir, ii, nr, ni = re[..., :n], im[..., :n], re[..., n - k], im[..., n - k]
    # the -ffast-math build's grouping of the C's ``a - b + c + d`` sums
    out_r = (((nr * bsr) - (ii * asi)) + (ni * bsi)) + (ir * asr)
    out_i = ((ii * asr) + ((ir * asi) + (nr * bsi))) - (ni * bsr)
    return out_r.astype(F), out_i.astype(F)


def _real_rows_fft(samples: np.ndarray, pow2: int) -> tuple[np.ndarray, np.ndarray]:
    """``fft1d_run`` (or ``fft1d_run_again``) of each row of real samples, zero-padded to 2^pow2."""
    half = 1 << (pow2 - 1)
    padded = np.zeros(samples.shape[:-1] + (2 * half,), F)
    padded[..., :samples.shape[-1]] = samples
    perm = _bit_reverse(pow2 - 1)
    re = np.empty(samples.shape[:-1] + (half,), F)
    im = np.empty_like(re)
    re[..., perm] = padded[..., 0::2]
    im[..., perm] = padded[..., 1::2]
    _butterflies(re, im, pow2 - 1, inverse=False)
    return _unpack(re, im, pow2 - 1)


def _columns(re: np.ndarray, im: np.ndarray, h_pow2: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """The column pass: ``prepare_complex_input`` (bit reversal) then ``do_fft``/``do_ifft`` per column."""
    perm = _bit_reverse(h_pow2)
    cr = np.ascontiguousarray(re[perm].T)
    ci = np.ascontiguousarray(im[perm].T)
    _butterflies(cr, ci, h_pow2, inverse)
    return np.ascontiguousarray(cr.T), np.ascontiguousarray(ci.T)


class FFT2D:
    """``fft2d_controller_t``: a 2^h_pow2 x 2^w_pow2 complex float32 array and the firmware's passes."""

    def __init__(self, gray: np.ndarray):
        self.rh, self.rw = gray.shape
        self.w_pow2 = max(int(self.rw - 1).bit_length(), 0)
        self.h_pow2 = max(int(self.rh - 1).bit_length(), 0)
        if self.w_pow2 > 10 or self.h_pow2 > 9 or self.w_pow2 < 1:
            raise ValueError("the firmware's FFT handles 2..1024 columns and up to 512 rows")
        self.gray = gray
        shape = (1 << self.h_pow2, 1 << self.w_pow2)
        self.re = np.zeros(shape, F)
        self.im = np.zeros(shape, F)

    def run(self) -> None:
        """``fft2d_run``: row FFTs of the pixels, then the column FFTs."""
        r, i = _real_rows_fft(self.gray.astype(F), self.w_pow2)
        self.re[:self.rh], self.im[:self.rh] = r, i
        self.re, self.im = _columns(self.re, self.im, self.h_pow2, inverse=False)

    def run_again(self) -> None:
        """``fft2d_run_again``: row FFTs of the real parts, then the column FFTs."""
        self.re, self.im = _real_rows_fft(self.re, self.w_pow2)
        self.im = self.im.astype(F)
        self.re, self.im = _columns(self.re, self.im, self.h_pow2, inverse=False)

    def inverse(self) -> None:
        """``ifft2d_run``: column iffts, then the packed row iffts (real results in both parts)."""
        re, im = _columns(self.re, self.im, self.h_pow2, inverse=True)
        half_pow2 = self.w_pow2 - 1
        pr, pi = _pack(re, im, half_pow2)
        perm = _bit_reverse(half_pow2)
        hr, hi = np.empty_like(pr), np.empty_like(pi)
        hr[:, perm], hi[:, perm] = pr, pi
        _butterflies(hr, hi, half_pow2, inverse=True)
        w = 1 << self.w_pow2
        real = np.zeros((re.shape[0], w), F)  # the row's first 2^w_pow2 floats: h interleaved
        real[:, 0::2], real[:, 1::2] = hr, hi
        self.real = real

    def mag(self) -> None:
        self.re = _fmath.fast_sqrtf((self.re * self.re) + (self.im * self.im)).astype(F)
        self.im = np.zeros_like(self.re)

    def swap(self) -> None:
        """``fft2d_swap``: fftshift of rows, then of columns."""
        w2, h2 = self.re.shape[1] // 2, self.re.shape[0] // 2
        self.re = np.roll(np.roll(self.re, w2, axis=1), h2, axis=0)
        self.im = np.roll(np.roll(self.im, w2, axis=1), h2, axis=0)

    def logpolar(self) -> None:
        """``fft2d_logpolar``: nearest resampling on log-radius / angle rows (zeros where off the grid)."""
        h, w = self.re.shape
        w_2, h_2 = F(w) / F(2), F(h) / F(2)
        rho_scale = _fmath.fast_log(_fmath.fast_sqrtf((w_2 * w_2) + (h_2 * h_2))) / F(h)
        sx, sy = _polar_sources(w, h, w_2, h_2, F(rho_scale), F(F(360) / F(w)))
        ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
        re, im = np.zeros_like(self.re), np.zeros_like(self.im)
        re[ok], im[ok] = self.re[sy[ok], sx[ok]], self.im[sy[ok], sx[ok]]
        self.re, self.im = re, im


def _polar_sources(w: int, h: int, w_2, h_2, rho_scale, theta_scale) -> tuple[np.ndarray, np.ndarray]:
    """Source pixel of each (y, x) of the log-polar grid: ``theta = 630 - (int)(x*theta_scale)`` in
    whole degrees on the firmware's sin/cos table, radius ``fast_expf(y*rho_scale)``, truncated."""
    y = np.arange(h)[:, None]
    x = np.arange(w)[None, :]
    rho = (y.astype(F) * rho_scale).astype(F)
    theta = 630 - _fmath.fast_roundf(x.astype(F) * theta_scale)
    theta = np.where(theta >= 360, theta - 360, theta)
    e = _fmath.fast_expf(rho)
    sx = _fmath.fast_roundf((e * _fmath.COS[theta]) + w_2)
    sy = _fmath.fast_roundf((e * _fmath.SIN[theta]) + h_2)
    return sx, sy


def logpolar_int(src: np.ndarray) -> np.ndarray:
    """``imlib_logpolar_int(dst, src, roi, linear=false, reverse=false)`` of a whole ROI array."""
    h, w = src.shape[:2]
    w_2, h_2 = F(w) / F(2), F(h) / F(2)
    rho_scale = F(_fmath.fast_log(_fmath.fast_sqrtf((w_2 * w_2) + (h_2 * h_2))) / F(h))
    sx, sy = _polar_sources(w, h, w_2, h_2, rho_scale, F(F(360) / F(w)))
    ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
    dst = np.zeros_like(src)
    dst[ok] = src[sy[ok], sx[ok]]
    return dst


def _correlate(a: FFT2D, b: FFT2D) -> tuple[F, F, F]:
    """Normalised cross-power spectrum, inverse FFT, peak, 4x4 centroid, fft shift and noise filter."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ga_r, ga_i, gb_r, gb_i = a.re, a.im, b.re, -b.im
        hp_r = (ga_r * gb_r) - (ga_i * gb_i)
        hp_i = (ga_r * gb_i) + (ga_i * gb_r)
        mag = F(1) / _fmath.fast_sqrtf((hp_r * hp_r) + (hp_i * hp_i))
        a.re, a.im = (hp_r * mag).astype(F), (hp_i * mag).astype(F)
        a.inverse()
        h, w = a.real.shape
        vals = a.real.reshape(-1)
        total = np.cumsum(vals, dtype=F)[-1]  # the C's running float32 sum, in order
        positive = np.where(np.isnan(vals), -np.inf, vals)
        best = int(np.argmax(positive))
        peak = positive[best]
        if not peak > 0:
            best, peak = 0, F(0)
        off_y, off_x = divmod(best, w)
        response = F(F(peak) / total)
        f_sum = f_x = f_y = F(0)
        for i in range(-2, 2):
            for j in range(-2, 2):
                f_r = a.real[(off_y + i) % h, (off_x + j) % w]
                f_x = F(f_x + F(F(off_x + j) * f_r))
                f_y = F(f_y + F(F(off_y + i) * f_r))
                f_sum = F(f_sum + f_r)
        f_x = F(f_x / f_sum)
        f_y = F(f_y / f_sum)
    f_x = F(f_x - F(w)) if f_x >= F(w) / F(2) else f_x
    f_y = F(-(f_y - F(h))) if f_y >= F(h) / F(2) else F(-f_y)
    bad = (f_x < -F(w) / F(2) or F(w) / F(2) <= f_x or f_y < -F(h) / F(2) or F(h) / F(2) <= f_y
           or not np.isfinite(f_x) or not np.isfinite(f_y) or not np.isfinite(response))
    if bad:  # the firmware's noise filter
        return F(0), F(0), F(0)
    return f_x, f_y, response


def _polar_scales(rw: int, rh: int) -> tuple[F, F]:
    """``rho_scale`` and ``theta_scale`` of the ROI, to turn a log-polar shift into rotation/scale."""
    w_2, h_2 = F(rw) / F(2), F(rh) / F(2)
    rho_scale = F(_fmath.fast_log(_fmath.fast_sqrtf((w_2 * w_2) + (h_2 * h_2))) / F(rh))
    theta_scale = F(F(F(2) * F(np.pi)) / F(rw))
    return rho_scale, theta_scale


def _gray_roi(img, roi) -> np.ndarray:
    """The ROI's gray values (the YUV table's Y + 128 for RGB565)."""
    from ._find import _gray8

    return _gray8(img, roi)


def fft_input(gray: np.ndarray, fmt) -> np.ndarray:
    """The bytes ``fft2d_run`` puts in its buffer: a grayscale image's pixels; for any other image
    ``yuv_table[pixel * 3]``, the *signed* luma ``Y = gray - 128`` stored into a ``uint8_t`` without
    the ``+ 128`` of ``COLOR_RGB565_TO_GRAYSCALE`` -- so the firmware correlates ``gray ^ 0x80``, the
    brightness wrapped half-way round (black 128, mid-gray 0/255, white 127)."""
    if fmt == GRAYSCALE:
        return gray
    return gray ^ np.uint8(0x80)


def phasecorrelate(img0, img1, roi0, roi1, logpolar: bool, fix_rotation_scale: bool, rotation_corr=None):
    """``imlib_phasecorrelate`` -> (x_translation, y_translation, rotation, scale, response), float32.

    ``rotation_corr(pixels, z_rotation, zoom)`` is the firmware's ``imlib_rotation_corr(img, 0, 0,
    z_rotation, 0, 0, zoom, 60, NULL)`` on a copy of the first ROI (fix_rotation_scale only). Every
    FFT reads its image's bytes as :func:`fft_input` gives them (after the log-polar remap, which
    moves pixels, so a pixel it leaves black reads as black does).
    """
    rw, rh = roi0[2], roi0[3]
    rotation = scale = F(0)
    if not logpolar and fix_rotation_scale:  # step 1: rotation/scale from the log-polar magnitudes
        spectra = []
        for img, roi in ((img0, roi0), (img1, roi1)):
            f = FFT2D(fft_input(_gray_roi(img, roi), img._fmt))
            f.run()
            f.mag()
            f.swap()
            f.logpolar()
            f.run_again()
            spectra.append(f)
        dx, dy, _ = _correlate(*spectra)
        rho_scale, theta_scale = _polar_scales(rw, rh)
        rotation = F(dx * theta_scale)
        scale = F(F(dy * rho_scale) + F(1))

    if not logpolar and fix_rotation_scale:  # step 2: undo them on a copy of the first ROI
        fixed = _fixed_copy(img0, roi0)
        fixed = rotation_corr(fixed, rotation, scale)
        first = _gray_of(fixed, img0._fmt)
    else:
        first = _gray_roi(img0, roi0)
    second = _gray_roi(img1, roi1)

    if logpolar:  # step 3 on log-polar images: the shift is rotation (x) and log-scale (y)
        first, second = logpolar_int(first), logpolar_int(second)
    a, b = FFT2D(fft_input(first, img0._fmt)), FFT2D(fft_input(second, img1._fmt))
    a.run()
    b.run()
    x, y, response = _correlate(a, b)
    if logpolar:
        rho_scale, theta_scale = _polar_scales(rw, rh)
        rotation = F(x * theta_scale)
        scale = F(F(y * rho_scale) + F(1))
        x = y = F(0)
    return x, y, rotation, scale, response


def _fixed_copy(img, roi) -> np.ndarray:
    """Step 2's copy of the ROI as the firmware writes it: ``PUT_PIXEL(&fixed, x, y, ...)`` with the
    *source* coordinates, so only a ROI at (0, 0) lands where it should; writes past the ROI-sized
    buffer (which on the device overrun it) are dropped and the rest stays zero."""
    x0, y0, w, h = roi
    out = np.zeros(w * h, img._pix.dtype)
    ys, xs = np.mgrid[y0:y0 + h, x0:x0 + w]
    idx = (ys * w + xs).reshape(-1)
    keep = idx < w * h
    out[idx[keep]] = img._pix[y0:y0 + h, x0:x0 + w].reshape(-1)[keep]
    return out.reshape(h, w)


def _gray_of(pixels: np.ndarray, fmt) -> np.ndarray:
    if fmt == GRAYSCALE:
        return pixels
    from . import _color

    return _color.rgb565_to_gray(pixels)
