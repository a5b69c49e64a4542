"""JPEG decoding as the firmware does it: picojpeg (MaixPy-v1 ``omv/img/picojpeg.c`` +
``picojpeg_util.c``), so ``image.Image("x.jpg")`` holds the board's pixels, not libjpeg's.

picojpeg differs from libjpeg/PIL in ways that change pixels: a Winograd IDCT on 16-bit integers
with the quantisation table pre-scaled (``(q * W + 4) >> 3``), chroma upsampled by pixel
replication (no "fancy" interpolation), YCbCr->RGB with 8-bit fixed-point factors applied one
channel at a time with a clamp after each step (``G = clamp(clamp(Y - cbG) - crG)``), and RGB565
packing by truncation (``r >> 3``, ``g >> 2``, ``b >> 3``, not the rounding tables). Grayscale
JPEGs load as GRAYSCALE images. Only baseline Huffman JPEGs with 1 or 3 components and Y sampling
1x1, 2x1, 1x2 or 2x2 (chroma 1x1) decode; everything else fails as on the device.

Failures: a file the decoder cannot start on (progressive, arithmetic, 4:1:1, ...) prints the
firmware's messages and — as on the board — yields an empty 0x0 image rather than an exception
(:class:`UnsupportedJpeg` carries the printed lines); a broken entropy stream raises the board's
``OSError(EPERM)`` after printing ``pjpeg_decode_mcu() failed with status N``.

Huffman decoding walks the bit stream in Python (one table lookup per symbol); the IDCT, colour
conversion and assembly are numpy over all blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from functools import lru_cache

import numpy as np

from . import _color

# picojpeg.h status codes (the ones this decoder can report)
NO_MORE_BLOCKS = 1
BAD_DHT_COUNTS, BAD_DHT_INDEX, BAD_DHT_MARKER, BAD_DQT_MARKER, BAD_DQT_TABLE = 2, 3, 4, 5, 6
BAD_PRECISION, BAD_HEIGHT, BAD_WIDTH, TOO_MANY_COMPONENTS, BAD_SOF_LENGTH = 7, 8, 9, 10, 11
BAD_VARIABLE_MARKER, BAD_DRI_LENGTH, BAD_SOS_LENGTH, BAD_SOS_COMP_ID = 12, 13, 14, 15
NO_ARITHMETIC_SUPPORT, UNEXPECTED_MARKER, NOT_JPEG, UNSUPPORTED_MARKER, BAD_DQT_LENGTH = 17, 18, 19, 20, 21
UNDEFINED_QUANT_TABLE, UNDEFINED_HUFF_TABLE = 23, 24
UNSUPPORTED_COLORSPACE, UNSUPPORTED_SAMP_FACTORS, DECODE_ERROR, BAD_RESTART_MARKER = 26, 27, 28, 29
UNSUPPORTED_QUANT_TABLE, UNSUPPORTED_MODE = 36, 37

GRAYSCALE, YH1V1, YH2V1, YH1V2, YH2V2 = 0, 1, 2, 3, 4

ZAG = np.array([
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,
    27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63], dtype=np.int64)

_WINOGRAD = np.array([
    128, 178, 178, 167, 246, 167, 151, 232, 232, 151, 128, 209, 219, 209, 128, 101,
    178, 197, 197, 178, 101, 69, 139, 167, 177, 167, 139, 69, 35, 96, 131, 151,
    151, 131, 96, 35, 49, 91, 118, 128, 118, 91, 49, 46, 81, 101, 101, 81,
    46, 42, 69, 79, 69, 42, 35, 54, 54, 35, 28, 37, 28, 19, 19, 10], dtype=np.int64)


class JpegError(Exception):
    """A picojpeg status: ``stage`` is ``"init"`` (pjpeg_decode_init) or ``"mcu"``."""

    def __init__(self, status: int, stage: str):
        super().__init__(f"picojpeg status {status} ({stage})")
        self.status = status
        self.stage = stage

    def messages(self) -> list[str]:
        """What the firmware prints for this failure (picojpeg_util.c)."""
        if self.stage == "init":
            lines = [f"pjpeg_decode_init() failed with status {self.status}"]
            if self.status == UNSUPPORTED_MODE:
                lines.append("Progressive JPEG files are not supported.")
        else:
            lines = [f"pjpeg_decode_mcu() failed with status {self.status}"]
        return lines + ["Failed loading source image!"]


@dataclass
class _Frame:
    width: int = 0
    height: int = 0
    comps: int = 0
    ident: list[int] = field(default_factory=list)
    hsamp: list[int] = field(default_factory=list)
    vsamp: list[int] = field(default_factory=list)
    quant_sel: list[int] = field(default_factory=list)
    quant: dict[int, np.ndarray] = field(default_factory=dict)  # 0/1 -> int16 (64,) zag order, scaled
    huff: dict[int, tuple] = field(default_factory=dict)  # 0..3 -> (counts, values)
    restart_interval: int = 0
    dc_tab: list[int] = field(default_factory=lambda: [0, 0, 0])
    ac_tab: list[int] = field(default_factory=lambda: [0, 0, 0])
    scan_start: int = 0


def _int16(v):
    return ((np.asarray(v, dtype=np.int64) + 0x8000) & 0xFFFF) - 0x8000


def _winograd_quant(q: np.ndarray) -> np.ndarray:
    """``createWinogradQuant``: ``int16((q * W + 4) >> 3)``."""
    return _int16((q.astype(np.int64) * _WINOGRAD + 4) >> 3)


# ---------------------------------------------------------------------- marker parsing
def _parse(data: bytes) -> _Frame:
    """Markers up to the first SOS, with picojpeg's checks (raises :class:`JpegError` ``init``)."""
    n = len(data)
    pos = 0

    def byte() -> int:
        nonlocal pos
        # past the end picojpeg reads an endless FF D9 FF D9 ... (gTemFlag)
        v = data[pos] if pos < n else (0xFF if (pos - n) % 2 == 0 else 0xD9)
        pos += 1
        return v

    def word() -> int:
        return (byte() << 8) | byte()

    def fail(status: int):
        raise JpegError(status, "init")

    if not (n >= 2 and data[0] == 0xFF and data[1] == 0xD8):
        fail(NOT_JPEG)
    pos = 2
    frame = _Frame()

    def next_marker() -> int:
        while True:
            c = byte()
            while c != 0xFF:
                c = byte()
            c = byte()
            while c == 0xFF:
                c = byte()
            if c != 0:
                return c

    def process_markers() -> int:
        while True:
            c = next_marker()
            if c in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF,
                     0xD8, 0xD9, 0xDA):
                return c
            if c == 0xC4:
                _read_dht(word, byte, frame)
            elif c == 0xCC:
                fail(NO_ARITHMETIC_SUPPORT)
            elif c == 0xDB:
                _read_dqt(word, byte, frame)
            elif c == 0xDD:
                if word() != 4:
                    pass  # PJPG_BAD_DRI_LENGTH is ignored by processMarkers, as in the C code
                else:
                    frame.restart_interval = word()
            elif c in (0xC8, 0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0x01):
                fail(UNEXPECTED_MARKER)
            else:
                left = word()
                if left >= 2:
                    for _ in range(left - 2):
                        byte()

    c = process_markers()
    if c == 0xC2:
        fail(UNSUPPORTED_MODE)
    if c == 0xC9:
        fail(NO_ARITHMETIC_SUPPORT)
    if c != 0xC0:
        fail(UNSUPPORTED_MARKER)
    left = word()
    if byte() != 8:
        fail(BAD_PRECISION)
    frame.height = word()
    if not 0 < frame.height <= 16384:
        fail(BAD_HEIGHT)
    frame.width = word()
    if not 0 < frame.width <= 16384:
        fail(BAD_WIDTH)
    frame.comps = byte()
    if frame.comps > 3:
        fail(TOO_MANY_COMPONENTS)
    if left != frame.comps * 3 + 8:
        fail(BAD_SOF_LENGTH)
    for _ in range(frame.comps):
        frame.ident.append(byte())
        s = byte()
        frame.hsamp.append(s >> 4)
        frame.vsamp.append(s & 15)
        q = byte()
        if q > 1:
            fail(UNSUPPORTED_QUANT_TABLE)
        frame.quant_sel.append(q)
    _scan_type(frame)  # initFrame's checks
    c = process_markers()
    if c != 0xDA:
        fail(UNEXPECTED_MARKER)
    left = word()
    ncomp = byte()
    left -= 3
    if left != ncomp * 2 + 3 or not 1 <= ncomp <= 3:
        fail(BAD_SOS_LENGTH)
    comp_list = []
    for _ in range(ncomp):
        cc, t = byte(), byte()
        left -= 2
        if cc not in frame.ident:
            fail(BAD_SOS_COMP_ID)
        ci = frame.ident.index(cc)
        comp_list.append(ci)
        frame.dc_tab[ci] = (t >> 4) & 15
        frame.ac_tab[ci] = t & 15
    for _ in range(left):
        byte()
    for ci in comp_list:  # checkHuffTables / checkQuantTables
        if frame.dc_tab[ci] not in frame.huff or frame.ac_tab[ci] + 2 not in frame.huff:
            fail(UNDEFINED_HUFF_TABLE)
        if frame.quant_sel[ci] not in frame.quant:
            fail(UNDEFINED_QUANT_TABLE)
    frame.scan_start = pos
    return frame


def _read_dht(word, byte, frame: _Frame) -> None:
    left = word()
    if left < 2:
        return
    left -= 2
    while left:
        index = byte()
        if (index & 0xF) > 1 or (index & 0xF0) > 0x10:
            return
        table = ((index >> 3) & 2) + (index & 1)
        counts = [byte() for _ in range(16)]
        total = sum(counts)
        if total > (12 if table < 2 else 255):
            return
        values = [byte() for _ in range(total)]
        if left < 17 + total:
            return
        left -= 17 + total
        frame.huff[table] = (tuple(counts), tuple(values))


def _read_dqt(word, byte, frame: _Frame) -> None:
    left = word()
    if left < 2:
        return
    left -= 2
    while left:
        n = byte()
        prec, n = n >> 4, n & 0x0F
        if n > 1:
            return
        vals = []
        for _ in range(64):
            t = byte()
            if prec:
                t = ((t << 8) + byte()) & 0xFFFF
            vals.append(t)
        frame.quant[n] = _winograd_quant(_int16(np.array(vals)))
        total = 65 + (64 if prec else 0)
        if left < total:
            return
        left -= total


def _scan_type(frame: _Frame) -> int:
    """``initFrame``: the MCU organisation (raises for unsupported sampling)."""
    if frame.comps == 1:
        if frame.hsamp[0] != 1 or frame.vsamp[0] != 1:
            raise JpegError(UNSUPPORTED_SAMP_FACTORS, "init")
        return GRAYSCALE
    if frame.comps == 3:
        if (frame.hsamp[1], frame.vsamp[1], frame.hsamp[2], frame.vsamp[2]) != (1, 1, 1, 1):
            raise JpegError(UNSUPPORTED_SAMP_FACTORS, "init")
        kind = {(1, 1): YH1V1, (1, 2): YH1V2, (2, 1): YH2V1, (2, 2): YH2V2}.get((frame.hsamp[0], frame.vsamp[0]))
        if kind is None:
            raise JpegError(UNSUPPORTED_SAMP_FACTORS, "init")
        return kind
    raise JpegError(UNSUPPORTED_COLORSPACE, "init")


_MCU = {  # scan type -> (MCU width, height, component of each block)
    GRAYSCALE: (8, 8, (0,)), YH1V1: (8, 8, (0, 1, 2)), YH1V2: (8, 16, (0, 0, 1, 2)),
    YH2V1: (16, 8, (0, 0, 1, 2)), YH2V2: (16, 16, (0, 0, 0, 0, 1, 2)),
}


# ---------------------------------------------------------------------- entropy decoding
@lru_cache(maxsize=64)
def _lookup(counts: tuple, values: tuple) -> tuple[list[int], list[int]]:
    """``huffDecode`` as a table over the next 16 bits: (symbol, bits used) lists.

    Codes picojpeg cannot match consume 17 bits and decode as symbol 0 (its ``i == 16`` exit).
    """
    sym = [0] * 65536
    used = [17] * 65536
    code, k = 0, 0
    for length, num in enumerate(counts, start=1):
        for _ in range(num):
            lo = code << (16 - length)
            span = 1 << (16 - length)
            value = values[k] if k < len(values) else 0
            for p in range(lo, min(lo + span, 65536)):
                if used[p] == 17:
                    sym[p], used[p] = value, length
            code += 1
            k += 1
        code <<= 1
    return sym, used


_MARKER = re.compile(rb"\xff[^\x00]|\xff$")


def _entropy_segment(data: bytes, start: int) -> tuple[bytes, int]:
    """Unstuffed entropy-coded bytes from ``start`` to the first ``FF xx`` with ``xx != 0``.

    picojpeg's ``getOctet`` pushes such an ``FF xx`` back and returns FF again, so from there on it
    reads 1 bits forever (the reader pads with them). Returns (bytes, index of that FF).
    """
    m = _MARKER.search(data, start)
    end = m.start() if m else len(data)
    return data[start:end].replace(b"\xff\x00", b"\xff"), end


def _restart_marker(data: bytes, pos: int) -> tuple[int, int]:
    """``processRestart``'s raw scan from ``pos``: (marker byte, index after it); -1 if none."""
    n = len(data)
    i, budget = pos, 1536
    while budget > 0 and i < n and data[i] != 0xFF:
        i += 1
        budget -= 1
    if budget == 0 or i >= n:
        return -1, i
    while budget > 0 and i < n and data[i] == 0xFF:
        i += 1
        budget -= 1
    if budget == 0 or i >= n:
        return -1, i
    return data[i], i + 1


class _Bits:
    """An MSB-first bit reader over one segment, reading 1 bits past its end: ``win[i]`` is the
    24-bit big-endian word at byte ``i``."""

    __slots__ = ("win",)

    def __init__(self, seg: bytes):
        b = np.frombuffer(seg + b"\xff" * 8, np.uint8).astype(np.int64)
        self.win = ((b[:-2] << 16) | (b[1:-1] << 8) | b[2:]).tolist()

    def grow(self) -> None:  # the decoder ran far past the data: more 1 bits
        self.win.extend([0xFFFFFF] * 272)


def _decode_coefficients(data: bytes, frame: _Frame, kind: int) -> np.ndarray:
    """All blocks' dequantised coefficients (natural order, int16 values) in MCU order."""
    mcu_w, mcu_h, org = _MCU[kind]
    per_row = (frame.width + mcu_w - 1) // mcu_w
    per_col = (frame.height + mcu_h - 1) // mcu_h
    total = per_row * per_col
    luts = {t: _lookup(*frame.huff[t]) for t in frame.huff}
    seg, seg_end = _entropy_segment(data, frame.scan_start)
    bits = _Bits(seg)
    win = bits.win
    p = 0
    last_dc = [0, 0, 0]
    restarts_left = frame.restart_interval
    next_rst = 0
    zag = ZAG.tolist()
    plan = [(comp, frame.quant[frame.quant_sel[comp]].tolist(), luts[1 if frame.dc_tab[comp] else 0],
             luts[3 if frame.ac_tab[comp] else 2]) for comp in org]
    where: list[int] = []  # flat coefficient index (block * 64 + natural position)
    value: list[int] = []
    base = 0
    for _mcu in range(total):
        if frame.restart_interval:
            if restarts_left == 0:
                marker, after = _restart_marker(data, seg_end)
                if marker != 0xD0 + next_rst:
                    raise JpegError(BAD_RESTART_MARKER, "mcu")
                last_dc = [0, 0, 0]
                restarts_left = frame.restart_interval
                next_rst = (next_rst + 1) & 7
                seg, seg_end = _entropy_segment(data, after)
                bits = _Bits(seg)
                win = bits.win
                p = 0
            restarts_left -= 1
        for comp, q, (dsym, dlen), (asym, alen) in plan:
            if (p >> 3) + 264 >= len(win):  # a block reads at most 64 symbols of 17 + 15 bits
                bits.grow()
                win = bits.win
            peek = (win[p >> 3] >> (8 - (p & 7))) & 0xFFFF
            s = dsym[peek]
            p += dlen[peek]
            nx = s & 0xF
            r = 0
            if nx:
                r = (win[p >> 3] >> (24 - (p & 7) - nx)) & ((1 << nx) - 1)
                p += nx
            if 1 <= s <= 15 and r < (1 << (s - 1)):  # huffExtend
                r += ((-1) << s) + 1
            dc = (r + last_dc[comp]) & 0xFFFF
            last_dc[comp] = dc
            where.append(base)
            value.append(dc * q[0])
            k = 1
            while k < 64:
                peek = (win[p >> 3] >> (8 - (p & 7))) & 0xFFFF
                s = asym[peek]
                p += alen[peek]
                run = s >> 4
                s &= 15
                if s:
                    extra = (win[p >> 3] >> (24 - (p & 7) - s)) & ((1 << s) - 1)
                    p += s
                    if run:
                        if k + run > 63:
                            raise JpegError(DECODE_ERROR, "mcu")
                        k += run
                    if extra < (1 << (s - 1)):
                        extra += ((-1) << s) + 1
                    where.append(base + zag[k])
                    value.append(extra * q[k])
                elif run == 15:
                    if k + 16 > 64:
                        raise JpegError(DECODE_ERROR, "mcu")
                    k += 15
                else:
                    break
                k += 1
            base += 64
    coef = np.zeros(base, np.int64)
    coef[np.array(where, np.int64)] = np.array(value, np.int64)
    return _int16(coef).reshape(-1, 64)


# ---------------------------------------------------------------------- IDCT (int16 Winograd)
def _imul(w: np.ndarray, c: int) -> np.ndarray:
    return _int16((w * c + 128) >> 8)


def _idct_pass(s: list[np.ndarray]) -> list[np.ndarray]:
    """One pass of idctRows/idctCols before the final descale (int16 at every assignment)."""
    x4, x7 = _int16(s[5] - s[3]), _int16(s[5] + s[3])
    x5, x6 = _int16(s[1] + s[7]), _int16(s[1] - s[7])
    tmp1 = _imul(_int16(x4 - x6), 196)
    stg26 = _int16(_imul(x6, 277) - tmp1)
    x24 = _int16(tmp1 - _imul(x4, 669))
    x15, x17 = _int16(x5 - x7), _int16(x5 + x7)
    tmp2 = _int16(stg26 - x17)
    tmp3 = _int16(_imul(x15, 362) - tmp2)
    x44 = _int16(tmp3 + x24)
    x30, x31 = _int16(s[0] + s[4]), _int16(s[0] - s[4])
    x12, x13 = _int16(s[2] - s[6]), _int16(s[2] + s[6])
    x32 = _int16(_imul(x12, 362) - x13)
    x40, x43 = _int16(x30 + x13), _int16(x30 - x13)
    x41, x42 = _int16(x31 + x32), _int16(x31 - x32)
    return [x40 + x17, x41 + tmp2, x42 + tmp3, x43 - x44, x43 + x44, x42 - tmp3, x41 - tmp2, x40 - x17]


def idct(coef: np.ndarray) -> np.ndarray:
    """(N, 64) dequantised coefficients -> (N, 64) uint8 samples (picojpeg's transform)."""
    c = coef.reshape(-1, 8, 8).astype(np.int64)
    rows = [_int16(v) for v in _idct_pass([c[:, :, k] for k in range(8)])]  # (N, 8) per column index
    r = np.stack(rows, axis=2)  # (N, row, col)
    cols = _idct_pass([r[:, k, :] for k in range(8)])
    out = np.stack([np.clip(_int16(((v + 64) >> 7) + 128), 0, 255) for v in cols], axis=1)
    return out.reshape(-1, 64).astype(np.uint8)


# ---------------------------------------------------------------------- colour
def _add_clamp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.clip(_int16(a.astype(np.int64) + b), 0, 255)


def _sub_clamp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.clip(_int16(a.astype(np.int64) - b), 0, 255)


def _chroma_terms(cb: np.ndarray, cr: np.ndarray):
    cb = cb.astype(np.int64)
    cr = cr.astype(np.int64)
    cb_g = _int16(((cb * 88) >> 8) - 44)
    cb_b = _int16((cb + ((cb * 198) >> 8)) - 227)
    cr_r = _int16((cr + ((cr * 103) >> 8)) - 179)
    cr_g = _int16(((cr * 183) >> 8) - 91)
    return cb_g, cb_b, cr_r, cr_g


def _tile(blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(R, C, 8, 8) blocks -> (R*8, C*8) plane."""
    return blocks.transpose(0, 2, 1, 3).reshape(rows * 8, cols * 8)


def decode(data: bytes) -> tuple[str, np.ndarray]:
    """``("gray", uint8 (H, W))`` or ``("rgb565", byte-swapped uint16 (H, W))`` for JPEG bytes.

    Raises :class:`JpegError`.
    """
    frame = _parse(data)
    kind = _scan_type(frame)
    mcu_w, mcu_h, org = _MCU[kind]
    per_row = (frame.width + mcu_w - 1) // mcu_w
    per_col = (frame.height + mcu_h - 1) // mcu_h
    samples = idct(_decode_coefficients(data, frame, kind)).reshape(per_col, per_row, len(org), 8, 8)
    w, h = frame.width, frame.height
    if kind == GRAYSCALE:
        return "gray", _tile(samples[:, :, 0], per_col, per_row)[:h, :w].copy()
    bx, by = mcu_w // 8, mcu_h // 8
    ny = bx * by
    # Y blocks in MCU order: TL, TR, BL, BR (YH1V2: top, bottom)
    yb = samples[:, :, :ny].reshape(per_col, per_row, by, bx, 8, 8)
    y = yb.transpose(0, 2, 4, 1, 3, 5).reshape(per_col * mcu_h, per_row * mcu_w)
    cb_blocks, cr_blocks = samples[:, :, ny], samples[:, :, ny + 1]
    cb = _tile(cb_blocks, per_col, per_row)
    cr = _tile(cr_blocks, per_col, per_row)
    cb = np.repeat(np.repeat(cb, by, axis=0), bx, axis=1)  # pixel replication (upsampleCb*)
    cr = np.repeat(np.repeat(cr, by, axis=0), bx, axis=1)
    cb_g, cb_b, cr_r, cr_g = _chroma_terms(cb, cr)
    g = _sub_clamp(_sub_clamp(y, cb_g), cr_g)  # Cb block first, then Cr (MCU block order)
    b = _add_clamp(y, cb_b)
    r = _add_clamp(y, cr_r)
    r, g, b = (ch[:h, :w].astype(np.uint8) for ch in (r, g, b))
    return "rgb565", _color.pack565(r >> 3, g >> 2, b >> 3)


def geometry(data: bytes) -> tuple[int, int] | None:
    """(width, height) of the first SOF (``jpeg_read_geometry``), None if there is none."""
    try:
        frame = _parse(data)
        return frame.width, frame.height
    except JpegError:
        return None


def components(data: bytes) -> int:
    """Components of the first SOF (0 when there is none)."""
    try:
        return _parse(data).comps
    except JpegError:
        return 0
