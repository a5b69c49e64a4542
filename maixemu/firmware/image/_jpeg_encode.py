"""The firmware's software JPEG encoder (MaixPy-v1 ``omv/img/jpeg.c``, ``jpeg_compress``), bit-exact.

What it reproduces, and why it matters (``compress``, ``compressed``, ``*_for_ide``, ``save(.jpg)``
and the IDE stream all go through it):

* quality -> quantisation: ``q = 5000 / quality`` below 50, else ``200 - 2 * quality``; each table
  entry ``clamp((QT[i] * q + 50) / 100, 1, 255)`` (integer division) stored in zig-zag order;
  ``fdtbl = 1 / (aasf[r] * aasf[c] * T * 8)`` in float32;
* chroma subsampling by quality: >= 60 -> 4:4:4 (``0x11``), 36..59 -> 4:2:2 (``0x21``), <= 35 ->
  4:2:0 (``0x22``), chroma taken from the even pixels (no averaging), Y/U/V from ``yuv_table``;
* the integer AAN forward DCT with 8-bit fixed-point constants and ``>> 8`` descaling, quantised
  as ``(int)(DU * fdtbl)`` (truncation), the standard Huffman tables, ``0xFF`` stuffing, 1-bit
  padding before EOI; MCU pixels outside the image are 0 (RGB565 black; grayscale value 128);
* RGB565 images are encoded by the K210's two cores: core 0 the top MCU rows, core 1 the rest (its
  DC predictors primed from the last MCU before its half), then ``jpg_bpp2_end`` splices core 1's
  bytes after core 0's bit position. The splice's quirks are kept: its first byte is never followed
  by a stuffing zero, and when both halves' pending bits add up to 8 or more the last byte of core
  1 loses its pending bits (a few padding bits before EOI differ from a one-core encoder). Memory
  the firmware reads past core 1's buffer reads as 0 here.

Where kernels are compiled (``_jit``), ``_jpeg_scan`` runs the C's loops MCU by MCU; elsewhere the
same encoder runs as array code here (every block at once, the tokens sorted into the C's order;
only the splice walks core 1's bytes in Python). The tests compare the two byte for byte.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _jpeg_scan, _tables
from ._jit import NOT_SERVED, compiled_now as compiled

_F = np.float32

ZIGZAG = np.array([
    0, 1, 5, 6, 14, 15, 27, 28, 2, 4, 7, 13, 16, 26, 29, 42, 3, 8, 12, 17, 25, 30, 41, 43,
    9, 11, 18, 24, 31, 40, 44, 53, 10, 19, 23, 32, 39, 45, 52, 54, 20, 22, 33, 38, 46, 51, 55, 60,
    21, 34, 37, 47, 50, 56, 59, 61, 35, 36, 48, 49, 57, 58, 62, 63], dtype=np.int64)

_YQT = np.array([
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
    14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99], dtype=np.int64)
_UVQT = np.full(64, 99, dtype=np.int64)
_UVQT[[0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 24, 25]] = [17, 18, 24, 47, 18, 21, 26, 66, 24, 26, 56, 47, 66]

_AASF = np.array([1.0, 1.387039845, 1.306562965, 1.175875602, 1.0, 0.785694958, 0.541196100,
                  0.275899379], dtype=_F)

# The standard (JPEG Annex K) Huffman tables as the header lists them: code counts per length 1..16
# and the symbol values; the encoder's code tables are derived from these (canonical codes).
_DC_Y_COUNTS = (0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)
_DC_UV_COUNTS = (0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)
_DC_VALUES = tuple(range(12))
_AC_Y_COUNTS = (0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D)
_AC_UV_COUNTS = (0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77)
_AC_Y_VALUES = bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728"
    "292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a83848586878889"
    "8a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2"
    "e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa")
_AC_UV_VALUES = bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718191a26"
    "2728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a82838485868788"
    "898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3"
    "e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa")

SUBSAMPLE_1X1, SUBSAMPLE_2X1, SUBSAMPLE_2X2 = 0x11, 0x21, 0x22
_FIX_0_382683433, _FIX_0_541196100, _FIX_0_707106781, _FIX_1_306562965 = 98, 139, 181, 334
_CORES = 2


def _canonical(counts, values) -> tuple[np.ndarray, np.ndarray]:
    """(code, length) per symbol value 0..255 of a canonical Huffman table (0 length: unused)."""
    code_of = np.zeros(256, np.int64)
    len_of = np.zeros(256, np.int64)
    code, k = 0, 0
    for length, n in enumerate(counts, start=1):
        for _ in range(n):
            code_of[values[k]], len_of[values[k]] = code, length
            code += 1
            k += 1
        code <<= 1
    return code_of, len_of


@lru_cache(maxsize=1)
def _huffman() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {"ydc": _canonical(_DC_Y_COUNTS, _DC_VALUES), "uvdc": _canonical(_DC_UV_COUNTS, _DC_VALUES),
            "yac": _canonical(_AC_Y_COUNTS, _AC_Y_VALUES), "uvac": _canonical(_AC_UV_COUNTS, _AC_UV_VALUES)}


def scale_of(quality: int) -> int:
    """``jpeg_init``'s table scale: ``5000 / quality`` below 50, else ``200 - 2 * quality``."""
    return 5000 // quality if quality < 50 else 200 - quality * 2


@lru_cache(maxsize=128)
def _tables_for(q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(YTable, UVTable) in zig-zag order (as written to DQT) and (fdtbl_Y, fdtbl_UV) of scale ``q``."""
    ytab = np.zeros(64, np.int64)
    uvtab = np.zeros(64, np.int64)
    ytab[ZIGZAG] = np.clip((_YQT * q + 50) // 100, 1, 255)
    uvtab[ZIGZAG] = np.clip((_UVQT * q + 50) // 100, 1, 255)
    scale = (_AASF[:, None] * _AASF[None, :]).reshape(64)  # aasf[r] * aasf[c], float32
    fd_y = (_F(1.0) / (scale * ytab[ZIGZAG].astype(_F) * _F(8.0))).astype(_F)
    fd_uv = (_F(1.0) / (scale * uvtab[ZIGZAG].astype(_F) * _F(8.0))).astype(_F)
    return ytab.astype(np.uint8), uvtab.astype(np.uint8), fd_y, fd_uv


class EncoderState:
    """``jpeg_init``'s static cache (jpeg.c ``static int q``, zero-initialised tables); a part of the
    board (``current().jpeg_encoder``), so it starts empty at every power-on.

    The tables are rebuilt only when the scale changes, and the cache starts at scale 0 — which is
    what quality 100 maps to. So a quality-100 compression before any other one after power-on uses
    the never-built all-zero tables (every coefficient 0, a DQT of zeros), as on the board.
    """

    def __init__(self) -> None:
        self.q = 0
        zero = np.zeros(64, np.uint8)
        self.current = (zero, zero, np.zeros(64, _F), np.zeros(64, _F))

    def init(self, quality: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        q = scale_of(quality)
        if q != self.q:
            self.q = q
            self.current = _tables_for(q)
        return self.current




def subsampling(quality: int) -> int:
    return SUBSAMPLE_1X1 if quality >= 60 else SUBSAMPLE_2X1 if quality > 35 else SUBSAMPLE_2X2


def headers(w: int, h: int, bpp: int, quality: int, ytab: np.ndarray, uvtab: np.ndarray) -> bytes:
    """``jpeg_write_headers``: SOI, APP0 (JFIF 1.1), DQT, SOF0, DHT, SOS (``bpp`` 1 = gray, 2 = YUV)."""
    ncomp = 1 if bpp == 1 else 3
    out = bytearray(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    out += bytes([0xFF, 0xDB, (bpp * 65 + 2) >> 8, (bpp * 65 + 2) & 0xFF, 0]) + ytab.tobytes()
    if bpp > 1:
        out += b"\x01" + uvtab.tobytes()
    out += bytes([0xFF, 0xC0, (ncomp * 3 + 8) >> 8, (ncomp * 3 + 8) & 0xFF, 8,
                  (h >> 8) & 0xFF, h & 0xFF, (w >> 8) & 0xFF, w & 0xFF, ncomp])
    for i in range(ncomp):
        out += bytes([i + 1, subsampling(quality) if (i == 0 and bpp == 2) else 0x11, int(i > 0)])
    out += bytes([0xFF, 0xC4, (bpp * 208 + 2) >> 8, (bpp * 208 + 2) & 0xFF])
    out += b"\x00" + bytes(_DC_Y_COUNTS) + bytes(_DC_VALUES)
    out += b"\x10" + bytes(_AC_Y_COUNTS) + _AC_Y_VALUES
    if bpp > 1:
        out += b"\x01" + bytes(_DC_UV_COUNTS) + bytes(_DC_VALUES)
        out += b"\x11" + bytes(_AC_UV_COUNTS) + _AC_UV_VALUES
    out += bytes([0xFF, 0xDA, (ncomp * 2 + 6) >> 8, (ncomp * 2 + 6) & 0xFF, ncomp])
    for i in range(ncomp):
        out += bytes([i + 1, 0x00 if i == 0 else 0x11])
    out += b"\x00\x3f\x00"
    return bytes(out)


# ---------------------------------------------------------------------- DCT and quantisation
def _mul(x: np.ndarray, c: int) -> np.ndarray:
    return (x * c) >> 8  # MULTIPLY(x, y) = DESCALE(x * y, 8), an arithmetic shift


def _dct_1d(d: list[np.ndarray]) -> list[np.ndarray]:
    """One pass of jpeg_processDU's AAN butterfly over 8 vectors (the same for rows and columns)."""
    t0, t1, t2, t3 = d[0] + d[7], d[1] + d[6], d[2] + d[5], d[3] + d[4]
    t7, t6, t5, t4 = d[0] - d[7], d[1] - d[6], d[2] - d[5], d[3] - d[4]
    t10, t13, t11, t12 = t0 + t3, t0 - t3, t1 + t2, t1 - t2
    z1 = _mul(t12 + t13, _FIX_0_707106781)
    out: list[np.ndarray] = [np.empty(0)] * 8
    out[0], out[4], out[2], out[6] = t10 + t11, t10 - t11, t13 + z1, t13 - z1
    t10, t11, t12 = t4 + t5, t5 + t6, t6 + t7
    z5 = _mul(t10 - t12, _FIX_0_382683433)
    z2 = _mul(t10, _FIX_0_541196100) + z5
    z4 = _mul(t12, _FIX_1_306562965) + z5
    z3 = _mul(t11, _FIX_0_707106781)
    z11, z13 = t7 + z3, t7 - z3
    out[5], out[3], out[1], out[7] = z13 + z2, z13 - z2, z11 + z4, z11 - z4
    return out


def quantised_blocks(blocks: np.ndarray, fdtbl: np.ndarray) -> np.ndarray:
    """(N, 64) int8 samples (row-major) -> (N, 64) quantised coefficients in zig-zag order."""
    b = blocks.astype(np.int32).reshape(-1, 8, 8)
    rows = _dct_1d([b[:, :, k] for k in range(8)])  # each (N, 8): over rows
    du = np.stack(rows, axis=2)  # (N, row, u)
    cols = _dct_1d([du[:, k, :] for k in range(8)])
    du = np.stack(cols, axis=1).reshape(-1, 64)  # (N, v, u) -> natural order v*8+u
    q = np.trunc(du.astype(_F) * fdtbl).astype(np.int64)  # fast_roundf = (int) truncation
    out = np.empty_like(q)
    out[:, ZIGZAG] = q
    return out


# ---------------------------------------------------------------------- entropy coding
def _magnitude(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``jpeg_calcBits``: (bits, size) of values (size = bit length of |v|; negatives as v - 1)."""
    a = np.abs(v)
    size = np.zeros(v.shape, np.int64)
    nz = a > 0
    size[nz] = np.floor(np.log2(a[nz])).astype(np.int64) + 1
    bits = np.where(v < 0, v - 1, v) & ((np.int64(1) << size) - 1)
    return bits, size


def _tokens(coef: np.ndarray, dc_pred: np.ndarray, dc_tab, ac_tab) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sort keys, codes, lengths) of the Huffman tokens of ``coef`` (N, 64) zig-zag blocks.

    ``dc_pred``: the DC each block is predicted from. Keys order tokens as the C code writes them.
    """
    n = coef.shape[0]
    blk = np.arange(n, dtype=np.int64)
    keys, codes, lens = [], [], []

    def add(block, pos, sub, code, length):
        keys.append((block * 65 + pos) * 64 + sub)
        codes.append(code)
        lens.append(length)

    diff = coef[:, 0] - dc_pred
    dbits, dsize = _magnitude(diff)
    add(blk, 0, 0, dc_tab[0][dsize], dc_tab[1][dsize])
    has = dsize > 0
    add(blk[has], 0, 1, dbits[has], dsize[has])

    ac = coef[:, 1:]
    bi, ki = np.nonzero(ac)
    ki = ki + 1
    vals = coef[bi, ki]
    first = np.ones(bi.size, bool)
    first[1:] = bi[1:] != bi[:-1]
    prev = np.where(first, 0, np.concatenate([[0], ki[:-1]]))
    run = ki - prev - 1
    nzrl = run >> 4
    if nzrl.any():
        rep = np.repeat(np.arange(bi.size), nzrl)
        sub = np.arange(rep.size) - np.repeat(np.cumsum(nzrl) - nzrl, nzrl)
        add(bi[rep], ki[rep], sub, np.full(rep.size, ac_tab[0][0xF0]), np.full(rep.size, ac_tab[1][0xF0]))
    vbits, vsize = _magnitude(vals)
    sym = ((run & 15) << 4) + vsize
    add(bi, ki, 62, ac_tab[0][sym], ac_tab[1][sym])
    add(bi, ki, 63, vbits, vsize)
    last = np.zeros(n, np.int64)
    if bi.size:
        ends = np.ones(bi.size, bool)
        ends[:-1] = bi[:-1] != bi[1:]
        last[bi[ends]] = ki[ends]
    eob = last != 63
    add(blk[eob], 64, 0, np.full(int(eob.sum()), ac_tab[0][0]), np.full(int(eob.sum()), ac_tab[1][0]))
    return np.concatenate(keys), np.concatenate(codes), np.concatenate(lens)


class _Stream:
    """A ``jpeg_buf_t`` after a run of ``jpeg_writeBits``: stuffed bytes + pending bit state."""

    def __init__(self, data: bytes = b"", bitc: int = 0, bitb: int = 0):
        self.data = bytearray(data)
        self.bitc = bitc  # pending bits (0..7)
        self.bitb = bitb  # the pending bits sit at bits 23..24-bitc

    def write_tokens(self, codes: np.ndarray, lens: np.ndarray) -> None:
        """The bit concatenation of all tokens after the pending bits; full bytes emitted and stuffed."""
        lens = lens.astype(np.int64)
        pend = np.array([(self.bitb >> (23 - j)) & 1 for j in range(self.bitc)], np.uint8)
        total = int(lens.sum())
        tok = np.repeat(np.arange(lens.size), lens)
        j = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
        bits = ((codes[tok] >> (lens[tok] - 1 - j)) & 1).astype(np.uint8)
        bits = np.concatenate([pend, bits])
        nfull = bits.size // 8
        raw = np.packbits(bits[: nfull * 8])
        self.data += _stuff(raw)
        rest = bits[nfull * 8:]
        self.bitc = int(rest.size)
        self.bitb = sum(int(b) << (23 - j) for j, b in enumerate(rest))

    def write_bits(self, code: int, length: int) -> None:
        """``jpeg_writeBits`` for one token (C int arithmetic on ``bitb``)."""
        self.bitc += length
        self.bitb = (self.bitb | (code << (24 - self.bitc))) & 0xFFFFFFFF
        while self.bitc > 7:
            c = (self.bitb >> 16) & 255
            self.data.append(c)
            if c == 255:
                self.data.append(0)
            self.bitb = (self.bitb << 8) & 0xFFFFFFFF
            self.bitc -= 8


def _stuff(raw: np.ndarray) -> bytes:
    ff = np.nonzero(raw == 255)[0]
    return np.insert(raw, ff + 1, 0).tobytes() if ff.size else raw.tobytes()


def _splice(s0: _Stream, s1: _Stream) -> None:
    """``jpg_bpp2_end``: append core 1's stream to core 0's at its bit position (C semantics)."""
    rest = s1.data
    n1 = len(rest)

    def r(k: int) -> int:  # the firmware reads past core 1's bytes: 0 here
        return rest[k] if 0 <= k < n1 else 0

    bitc0, bitc1 = s0.bitc, s1.bitc
    out = s0.data
    i = 0
    out.append(((s0.bitb >> 16) & 0xFF) | (r(i) >> bitc0))
    while n1 - i > 1:
        if r(i) == 255:
            b = ((r(i) << (8 - bitc0)) | (r(i + 2) >> bitc0)) & 0xFF
            i += 1
        else:
            b = ((r(i) << (8 - bitc0)) | (r(i + 1) >> bitc0)) & 0xFF
        out.append(b)
        if b == 255:
            out.append(0)
        i += 1
    if bitc1 + bitc0 >= 8:
        out.append(((r(i) << (8 - bitc0)) | (s1.bitb >> (8 - bitc0))) & 0xFF)
        s0.bitc = bitc1 + bitc0 - 8
        s0.bitb = (s1.bitb << (8 - bitc0)) & 0xFFFFFFFF
    else:
        s0.bitc = bitc0 + bitc1
        s0.bitb = ((r(i) << (8 - bitc0 + 16)) | (s1.bitb >> bitc0)) & 0xFFFFFFFF


def _finish(stream: _Stream) -> bytes:
    stream.write_bits(0x7F, 7)  # fillBits: pad the last byte with ones
    return bytes(stream.data) + b"\xff\xd9"


# ---------------------------------------------------------------------- MCU assembly
def _padded(plane: np.ndarray, mh: int, mw: int, fill: int) -> np.ndarray:
    h, w = plane.shape
    ph, pw = -(-h // mh) * mh, -(-w // mw) * mw
    out = np.full((ph, pw), fill, dtype=plane.dtype)
    out[:h, :w] = plane
    return out


def _blocks(plane: np.ndarray) -> np.ndarray:
    """(H, W) with H, W multiples of 8 -> (H/8, W/8, 64) row-major 8x8 blocks."""
    h, w = plane.shape
    return plane.reshape(h // 8, 8, w // 8, 8).transpose(0, 2, 1, 3).reshape(h // 8, w // 8, 64)


def _encode_gray(samples: np.ndarray, fd_y: np.ndarray) -> _Stream:
    """Grayscale/bitmap (one core): 8x8 MCUs in raster order."""
    blocks = _blocks(_padded(samples, 8, 8, 0)).reshape(-1, 64)
    coef = quantised_blocks(blocks, fd_y)
    pred = np.concatenate([[0], coef[:-1, 0]])
    h = _huffman()
    keys, codes, lens = _tokens(coef, pred, h["ydc"], h["yac"])
    order = np.argsort(keys, kind="stable")
    stream = _Stream()
    stream.write_tokens(codes[order], lens[order])
    return stream


def _mcu_planes(pix: np.ndarray, sub: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, int]:
    """Per MCU row and column: the Y blocks (in MCU order), U and V blocks, and the MCU height."""
    mw, mh = (8, 8) if sub == SUBSAMPLE_1X1 else (16, 8) if sub == SUBSAMPLE_2X1 else (16, 16)
    padded = _padded(pix, mh, mw, 0)
    yuv = _tables.yuv_table()[padded]
    y, u, v = yuv[..., 0], yuv[..., 1], yuv[..., 2]
    ph, pw = padded.shape
    nr, nc = ph // mh, pw // mw
    yb = _blocks(y)  # (ph/8, pw/8, 64)
    if sub == SUBSAMPLE_1X1:
        ys = [yb.reshape(nr, nc, 64)]
        ub, vb = _blocks(u), _blocks(v)
    elif sub == SUBSAMPLE_2X1:
        ys = [yb[:, 0::2], yb[:, 1::2]]
        ub, vb = _blocks(u[:, 0::2]), _blocks(v[:, 0::2])
    else:
        ys = [yb[0::2, 0::2], yb[0::2, 1::2], yb[1::2, 0::2], yb[1::2, 1::2]]
        ub, vb = _blocks(u[0::2, 0::2]), _blocks(v[0::2, 0::2])
    return ys, ub, vb, mh


def _encode_color_rows(ys, ub, vb, fd_y, fd_uv, rows: range, preds: tuple[int, int, int]) -> tuple[_Stream, tuple]:
    """Encode MCU rows ``rows`` (one core's half) with DC predictors ``preds``; returns last DCs."""
    h = _huffman()
    ny = len(ys)
    if len(rows) == 0:
        return _Stream(), preds
    sel = slice(rows.start, rows.stop)
    ycoef = np.stack([quantised_blocks(b[sel].reshape(-1, 64), fd_y) for b in ys], axis=1).reshape(-1, 64)
    ucoef = quantised_blocks(ub[sel].reshape(-1, 64), fd_uv)
    vcoef = quantised_blocks(vb[sel].reshape(-1, 64), fd_uv)
    nm = ucoef.shape[0]
    ypred = np.concatenate([[preds[0]], ycoef[:-1, 0]])
    upred = np.concatenate([[preds[1]], ucoef[:-1, 0]])
    vpred = np.concatenate([[preds[2]], vcoef[:-1, 0]])
    ky, cy, ly = _tokens(ycoef, ypred, h["ydc"], h["yac"])
    ku, cu, lu = _tokens(ucoef, upred, h["uvdc"], h["uvac"])
    kv, cv, lv = _tokens(vcoef, vpred, h["uvdc"], h["uvac"])
    per = ny + 2  # blocks per MCU: the Y blocks, then U, then V
    ymcu, yidx = np.divmod(ky // (65 * 64), ny)
    key_y = ((ymcu * per + yidx) * 65 * 64) + ky % (65 * 64)
    key_u = (((ku // (65 * 64)) * per + ny) * 65 * 64) + ku % (65 * 64)
    key_v = (((kv // (65 * 64)) * per + ny + 1) * 65 * 64) + kv % (65 * 64)
    keys = np.concatenate([key_y, key_u, key_v])
    codes = np.concatenate([cy, cu, cv])
    lens = np.concatenate([ly, lu, lv])
    order = np.argsort(keys, kind="stable")
    stream = _Stream()
    stream.write_tokens(codes[order], lens[order])
    del nm
    return stream, (int(ycoef[-1, 0]), int(ucoef[-1, 0]), int(vcoef[-1, 0]))


def _dc_of_mcu(ys, ub, vb, fd_y, fd_uv, row: int, col: int) -> tuple[int, int, int]:
    """The DCs ``jpg_bpp2_*_unit(..., jpeg_buf=0)`` returns for one MCU (core 1's priming)."""
    if row < 0:
        # Images of one MCU row: core 1 does all the work and the firmware primes it from the
        # memory *before* the image (undefined; the board's tiny JPEGs get a DC offset). Here it
        # starts from 0, as a one-core encoder would.
        return 0, 0, 0
    yc = quantised_blocks(np.stack([b[row, col] for b in ys]), fd_y)
    uc = quantised_blocks(ub[row, col][None], fd_uv)
    vc = quantised_blocks(vb[row, col][None], fd_uv)
    return int(yc[-1, 0]), int(uc[0, 0]), int(vc[0, 0])


def compress(pix: np.ndarray, kind: str, quality: int) -> bytes:
    """``jpeg_compress`` of an image: ``kind`` is ``"rgb565"`` (byte-swapped uint16 (H, W)),
    ``"gray"`` (uint8 (H, W)) or ``"binary"`` (0/1 uint8 (H, W)). Returns the JPEG bytes."""
    if not 1 <= quality <= 100:
        raise ValueError("quality must be 1..100")
    h, w = pix.shape
    from ..state import current

    ytab, uvtab, fd_y, fd_uv = current().jpeg_encoder.init(quality)
    if compiled():
        data = _compress_compiled(pix, kind, quality, ytab, uvtab, fd_y, fd_uv)
        if data is not None:
            return data
    if kind in ("gray", "binary"):
        samples = (pix.astype(np.int16) * (255 if kind == "binary" else 1) - 128).astype(np.int8)
        # outside the image the MCU holds 0 (that is gray 128 after the -128 shift)
        return headers(w, h, 1, quality, ytab, uvtab) + _finish(_encode_gray(samples, fd_y))
    sub = subsampling(quality)
    ys, ub, vb, mh = _mcu_planes(pix, sub)
    rows_total = ub.shape[0]
    # jpg_bpp2_*: i_start = (h + mh - 1) * ps / mh / CORE_NUM * mh, in pixel rows
    split = ((h + mh - 1) // mh // _CORES) * mh // mh
    end1 = ((h + mh - 1) * 2 // mh // _CORES) * mh // mh
    top, preds = _encode_color_rows(ys, ub, vb, fd_y, fd_uv, range(0, split), (0, 0, 0))
    primed = _dc_of_mcu(ys, ub, vb, fd_y, fd_uv, split - 1, ub.shape[1] - 1)
    bottom, _ = _encode_color_rows(ys, ub, vb, fd_y, fd_uv, range(split, min(end1, rows_total)), primed)
    stream = _Stream(headers(w, h, 2, quality, ytab, uvtab), 0, 0)
    stream.data += top.data
    stream.bitc, stream.bitb = top.bitc, top.bitb
    _splice(stream, bottom)
    return _finish(stream)


# ---------------------------------------------------------------------- the compiled path
@lru_cache(maxsize=1)
def _code_tables() -> tuple[np.ndarray, np.ndarray]:
    """(4, 256) codes and lengths: Y DC, Y AC, UV DC, UV AC (``_jpeg_scan.encode_mcus``' order)."""
    h = _huffman()
    tabs = [h["ydc"], h["yac"], h["uvdc"], h["uvac"]]
    return np.stack([t[0] for t in tabs]), np.stack([t[1] for t in tabs])


@lru_cache(maxsize=2)
def _gray_samples(binary: bool) -> np.ndarray:
    """(256, 3) int8: the Y sample of each gray (or 0/1 bitmap) value, ``v - 128``."""
    v = np.arange(256, dtype=np.int64) * (255 if binary else 1) - 128
    table = np.zeros((256, 3), np.int8)
    table[:, 0] = np.clip(v, -128, 127)
    return table


def _scan(pix: np.ndarray, table: np.ndarray, pad: np.ndarray, ncomp: int, mcu: tuple[int, int],
          mcus: tuple[int, int, int], preds: tuple[int, int, int], fd_y: np.ndarray,
          fd_uv: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``encode_mcus`` over MCUs ``mcus = (first, first written, end)``: (the bytes, the state),
    the buffer grown until the run fits; None when the kernel is not served compiled yet."""
    hcode, hlen = _code_tables()
    state = np.zeros(7, np.int64)
    state[_jpeg_scan.MCU] = mcus[0]
    state[_jpeg_scan.DC_Y:_jpeg_scan.DC_V + 1] = preds
    out = np.empty(max(4096, pix.size // 2) + _jpeg_scan.MCU_MARGIN, np.uint8)
    while True:
        more = _jpeg_scan.encode_mcus.attempt(pix, table, pad, ncomp, mcu[0], mcu[1], mcus[1], mcus[2], fd_y, fd_uv,
                                              hcode, hlen, ZIGZAG, out, state)
        if more is NOT_SERVED:
            return None
        if not more:
            break
        grown = np.empty(out.size * 2, np.uint8)
        grown[:out.size] = out
        out = grown
    return out, state


def _compress_compiled(pix: np.ndarray, kind: str, quality: int, ytab: np.ndarray, uvtab: np.ndarray,
                       fd_y: np.ndarray, fd_uv: np.ndarray) -> bytes | None:
    """``jpeg_compress`` through the kernels: what :func:`compress` gives, byte for byte (None
    while they are not served compiled: the array form answers then)."""
    h, w = pix.shape
    raw = np.ascontiguousarray(pix, np.uint16)
    ix = _jpeg_scan
    if kind in ("gray", "binary"):
        mcus = ((w + 7) // 8) * ((h + 7) // 8)
        run = _scan(raw, _gray_samples(kind == "binary"), np.zeros(3, np.int64), 1, (8, 8), (0, 0, mcus), (0, 0, 0),
                    fd_y, fd_y)
        if run is None:
            return None
        out, state = run
        stream = _Stream(headers(w, h, 1, quality, ytab, uvtab) + out[:state[ix.IDX]].tobytes(),
                         int(state[ix.BITC]), int(state[ix.BITB]))
        return _finish(stream)
    sub = subsampling(quality)
    mw, mh = (8, 8) if sub == SUBSAMPLE_1X1 else (16, 8) if sub == SUBSAMPLE_2X1 else (16, 16)
    table = _tables.yuv_table()
    pad = table[0].astype(np.int64)
    per_row = (w + mw - 1) // mw
    rows_total = (h + mh - 1) // mh
    split = (h + mh - 1) // mh // _CORES  # jpg_bpp2_*'s i_start of core 1, in MCU rows
    end1 = min((h + mh - 1) * 2 // mh // _CORES, rows_total)
    first = split * per_row
    primed = (first - 1, first) if split > 0 else (first, first)  # one MCU row: primed from 0
    run0 = _scan(raw, table, pad, 3, (mw, mh), (0, 0, split * per_row), (0, 0, 0), fd_y, fd_uv)
    run1 = None if run0 is None else _scan(raw, table, pad, 3, (mw, mh), (primed[0], primed[1], max(end1 * per_row, first)),
                                           (0, 0, 0), fd_y, fd_uv)
    if run0 is None or run1 is None:
        return None
    (top, s0), (bottom, s1) = run0, run1
    head = headers(w, h, 2, quality, ytab, uvtab)
    n0, n1 = int(s0[ix.IDX]), int(s1[ix.IDX])
    joined = np.empty(n0 + 2 * n1 + 8, np.uint8)
    joined[:n0] = top[:n0]
    state = np.zeros(7, np.int64)
    if ix.splice.attempt(joined, n0, int(s0[ix.BITC]), int(s0[ix.BITB]), bottom[:n1], n1, int(s1[ix.BITC]),
                         int(s1[ix.BITB]), state) is NOT_SERVED:
        return None
    stream = _Stream(head + joined[:state[ix.IDX]].tobytes(), int(state[ix.BITC]), int(state[ix.BITB]))
    return _finish(stream)
