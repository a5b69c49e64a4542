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

Huffman decoding is one compiled kernel over the whole scan (``_jit``: numba, or the same statements
in Python on lists); the IDCT (int16 arithmetic, which wraps as the C's int16 assignments do),
colour conversion (tables over two 8-bit inputs) and assembly are numpy over all blocks until
kernels are served compiled, then kernels too (``_idct_blocks``, ``_assemble565``: block by block,
pixel by pixel, the same arithmetic; the tests compare both forms).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from functools import lru_cache

import numpy as np

from . import _color
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (the vectorised form until kernels are served compiled)

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
    """Markers up to the first SOS, with picojpeg's checks (raises :class:`JpegError` ``init``).
    Loading a file asks for its geometry, its components and its pixels, each from the same bytes:
    the last few frames are kept (read-only from here on) so the markers are walked once."""
    return _parsed(bytes(data))


@lru_cache(maxsize=4)
def _parsed(data: bytes) -> _Frame:
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
def _lookup(counts: tuple, values: tuple) -> np.ndarray:
    """``huffDecode`` as a table over the next 16 bits: ``symbol | bits_used << 8`` (int64).

    Codes picojpeg cannot match consume 17 bits and decode as symbol 0 (its ``i == 16`` exit).
    """
    sym = np.zeros(65536, np.int64)
    used = np.full(65536, 17, np.int64)
    code, k = 0, 0
    for length, num in enumerate(counts, start=1):
        for _ in range(num):
            lo = code << (16 - length)
            hi = min(lo + (1 << (16 - length)), 65536)
            if lo < hi:
                free = used[lo:hi] == 17  # the first code to claim a slot keeps it
                sym[lo:hi][free] = values[k] if k < len(values) else 0
                used[lo:hi][free] = length
            code += 1
            k += 1
        code <<= 1
    table = sym | (used << 8)
    table.flags.writeable = False
    return table


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


def _windows(seg: bytes) -> np.ndarray:
    """``win[i]``: the 24-bit big-endian word at byte ``i`` of the segment padded with FF bytes."""
    b = np.frombuffer(seg + b"\xff" * 8, np.uint8).astype(np.int64)
    return ((b[:-2] << 16) | (b[1:-1] << 8) | b[2:]).astype(np.int32)  # (24 bits: half the memory of int64)


def _segments(data: bytes, frame: _Frame, intervals: int) -> tuple[list[bytes], bool]:
    """The entropy segments of the scan's restart intervals, as ``processRestart`` finds them,
    and whether a bad restart marker cut the list short (the decoder fails when it gets there)."""
    seg, seg_end = _entropy_segment(data, frame.scan_start)
    segments = [seg]
    for t in range(1, intervals):
        marker, after = _restart_marker(data, seg_end)
        if marker != 0xD0 + ((t - 1) & 7):
            return segments, True
        seg, seg_end = _entropy_segment(data, after)
        segments.append(seg)
    return segments, False


@kernel(lists=(0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 13), writes=(13,))
def _decode_scan(win, seg_start, seg_end, n_segments, interval, total, block_comp, block_dc, block_ac, block_qo,
                 quant, luts, zag, coef):
    """Huffman-decode the scan's MCUs into ``coef`` (flat, dequantised, natural order, MCU order).

    ``win[seg_start[t]:seg_end[t]]`` are the 24-bit windows (:func:`_windows`) of restart interval
    ``t`` (``interval`` MCUs each; the DC predictions restart with each); reads past a segment's
    end see 1 bits, as picojpeg's reader pads. Per block of an MCU: its component, DC/AC table
    (offsets into the flat ``luts`` of :func:`_lookup` entries) and quantisation row (offset into
    ``quant``). Returns (status, blocks decoded): 0, or ``DECODE_ERROR`` as ``decodeNextMCU``
    reports it.
    """
    n_blocks = len(block_comp)
    last_dc = [0, 0, 0]
    base = 0
    for t in range(n_segments):
        last_dc[0] = 0
        last_dc[1] = 0
        last_dc[2] = 0
        end = seg_end[t]
        p = seg_start[t] * 8
        n_mcus = total - t * interval
        if n_mcus > interval:
            n_mcus = interval
        for _m in range(n_mcus):
            for b in range(n_blocks):
                comp = block_comp[b]
                dct = block_dc[b]
                act = block_ac[b]
                qo = block_qo[b]
                i = p >> 3
                word = win[i] if i < end else 0xFFFFFF
                e = int(luts[dct + ((word >> (8 - (p & 7))) & 0xFFFF)])
                s = e & 0xFF
                p += e >> 8
                nx = s & 0xF
                r = 0
                if nx:
                    i = p >> 3
                    word = win[i] if i < end else 0xFFFFFF
                    r = (word >> (24 - (p & 7) - nx)) & ((1 << nx) - 1)
                    p += nx
                if 1 <= s <= 15 and r < (1 << (s - 1)):  # huffExtend
                    r += ((-1) << s) + 1
                dc = (r + last_dc[comp]) & 0xFFFF
                last_dc[comp] = dc
                at = base * 64
                coef[at] = dc * quant[qo]
                k = 1
                while k < 64:
                    i = p >> 3
                    word = win[i] if i < end else 0xFFFFFF
                    e = int(luts[act + ((word >> (8 - (p & 7))) & 0xFFFF)])
                    s = e & 0xFF
                    p += e >> 8
                    run = s >> 4
                    s &= 15
                    if s:
                        i = p >> 3
                        word = win[i] if i < end else 0xFFFFFF
                        extra = (word >> (24 - (p & 7) - s)) & ((1 << s) - 1)
                        p += s
                        if run:
                            if k + run > 63:
                                return DECODE_ERROR, base
                            k += run
                        if extra < (1 << (s - 1)):
                            extra += ((-1) << s) + 1
                        coef[at + zag[k]] = extra * quant[qo + k]
                    elif run == 15:
                        if k + 16 > 64:
                            return DECODE_ERROR, base
                        k += 15
                    else:
                        break
                    k += 1
                base += 1
    return 0, base


@lru_cache(maxsize=16)
def _tables(huff: tuple) -> tuple[np.ndarray, list[int], dict[int, int]]:
    """The frame's Huffman tables as one flat lookup array (and as a list, for the Python path),
    with each table's offset."""
    luts = np.concatenate([_lookup(*tab) for _, tab in huff]).astype(np.uint16)  # (entries < 2**13: cache-sized)
    luts.flags.writeable = False
    return luts, luts.tolist(), {t: 65536 * i for i, (t, _) in enumerate(huff)}


#: Tests set this to run :func:`_decode_scan`'s Python statements even where numba compiles it.
_KERNEL_PYTHON = False


def _decode_coefficients(data: bytes, frame: _Frame, kind: int) -> np.ndarray:
    """All blocks' dequantised coefficients (natural order, int16: the C's int16 stores wrap) in
    MCU order."""
    mcu_w, mcu_h, org = _MCU[kind]
    per_row = (frame.width + mcu_w - 1) // mcu_w
    per_col = (frame.height + mcu_h - 1) // mcu_h
    total = per_row * per_col
    luts, luts_list, offset = _tables(tuple(sorted(frame.huff.items())))
    quants = sorted(frame.quant)
    quant = np.concatenate([frame.quant[n].astype(np.int64) for n in quants])
    block_comp = np.array(org, np.int64)
    block_dc = np.array([offset[1 if frame.dc_tab[c] else 0] for c in org], np.int64)
    block_ac = np.array([offset[3 if frame.ac_tab[c] else 2] for c in org], np.int64)
    block_qo = np.array([64 * quants.index(frame.quant_sel[c]) for c in org], np.int64)
    interval = frame.restart_interval or total
    segments, bad_restart = _segments(data, frame, (total + interval - 1) // interval)
    windows = [_windows(seg) for seg in segments]
    ends = np.cumsum([len(w) for w in windows]).astype(np.int64)
    starts = ends - np.array([len(w) for w in windows], np.int64)
    run = _decode_scan.__wrapped__ if _KERNEL_PYTHON or not compiled() else _decode_scan
    # compiled, the kernel's int64 products go straight into int16 (its stores truncate, wrapping
    # as the C's int16 stores do); Python's ints would not fit there, so its path keeps int64
    coef = np.zeros(total * len(org) * 64, np.int16 if run is _decode_scan else np.int64)
    status, _ = run(np.concatenate(windows), starts, ends, len(segments), interval, total, block_comp, block_dc,
                    block_ac, block_qo, quant, luts_list if run is not _decode_scan else luts, ZAG, coef)
    if status:
        raise JpegError(status, "mcu")
    if bad_restart:
        raise JpegError(BAD_RESTART_MARKER, "mcu")
    return coef.astype(np.int16, copy=False).reshape(-1, 64)  # (the cast wraps as _int16 does)


# ---------------------------------------------------------------------- IDCT (int16 Winograd)
def _imul(w: np.ndarray, c: int) -> np.ndarray:
    """``imul_b*``: ``int16((w * c + 128) >> 8)`` in 32-bit arithmetic."""
    return ((w.astype(np.int32) * c + 128) >> 8).astype(np.int16)


def _idct_pass(s: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """One pass of idctRows/idctCols on int16 arrays: numpy's int16 arithmetic wraps as every
    ``int16`` assignment of the C does. Returns the eight outputs as (a, b, sign): ``a + sign * b``
    is the output before its last addition, which idctCols descales in ``int`` (not wrapped)."""
    x4, x7 = s[5] - s[3], s[5] + s[3]
    x5, x6 = s[1] + s[7], s[1] - s[7]
    tmp1 = _imul(x4 - x6, 196)
    stg26 = _imul(x6, 277) - tmp1
    x24 = tmp1 - _imul(x4, 669)
    x15, x17 = x5 - x7, x5 + x7
    tmp2 = stg26 - x17
    tmp3 = _imul(x15, 362) - tmp2
    x44 = tmp3 + x24
    x30, x31 = s[0] + s[4], s[0] - s[4]
    x12, x13 = s[2] - s[6], s[2] + s[6]
    x32 = _imul(x12, 362) - x13
    x40, x43 = x30 + x13, x30 - x13
    x41, x42 = x31 + x32, x31 - x32
    return [(x40, x17, 1), (x41, tmp2, 1), (x42, tmp3, 1), (x43, x44, -1), (x43, x44, 1), (x42, tmp3, -1),
            (x41, tmp2, -1), (x40, x17, -1)]


def idct(coef: np.ndarray) -> np.ndarray:
    """(N, 64) dequantised coefficients -> (N, 64) uint8 samples (picojpeg's transform).

    The short cuts of idctRows/idctCols for rows/columns with only a DC term give what the full
    transform gives (every other term is 0), so all blocks take the full one. Where kernels are
    served compiled, :func:`_idct_blocks` runs it block by block (the same wrapping arithmetic).
    """
    if compiled():
        out = np.empty(coef.size, np.uint8)
        if _idct_blocks.attempt(np.ascontiguousarray(coef, np.int16).reshape(-1), out) is not NOT_SERVED:
            return out.reshape(-1, 64)
    c = coef.reshape(-1, 8, 8).astype(np.int16)  # int16 values already; the cast keeps them
    t = np.ascontiguousarray(c.transpose(2, 0, 1))  # [column k][block, row]
    rows = [a + b if sign > 0 else a - b for a, b, sign in _idct_pass(list(t))]  # into the int16 buffer: wraps
    o = np.ascontiguousarray(np.stack(rows).transpose(2, 0, 1))  # [row k][column, block]
    cols = [a.astype(np.int32) + b if sign > 0 else a.astype(np.int32) - b
            for a, b, sign in _idct_pass(list(o))]  # summed in int, then descaled
    out = np.stack([np.clip(((v + 64) >> 7) + 128, 0, 255) for v in cols])  # [row, column, block]
    return out.transpose(2, 0, 1).reshape(-1, 64).astype(np.uint8)


@kernel
def _idct_blocks(coef, out):
    """picojpeg's idctRows then idctCols of each block of ``coef`` (flat int16, 64 per block,
    row-major) into ``out`` (flat uint8): every int16 assignment of the C
    wraps, the columns' last sum is an int, descaled by ``(v + 64) >> 7`` and clamped.
    The eight values of a row or column live in local variables (registers), not in arrays."""

    def w(v):  # an int16 assignment
        return ((v + 32768) & 0xFFFF) - 32768

    def imul(v, c):  # imul_b*: int16((w * c + 128) >> 8)
        return w((v * c + 128) >> 8)

    def butterfly(s0, s1, s2, s3, s4, s5, s6, s7):
        """The eight outputs before their last int16 assignment (idctRows wraps them, idctCols
        descales them as ints)."""
        x4 = w(s5 - s3)
        x7 = w(s5 + s3)
        x5 = w(s1 + s7)
        x6 = w(s1 - s7)
        tmp1 = imul(w(x4 - x6), 196)
        stg26 = w(imul(x6, 277) - tmp1)
        x24 = w(tmp1 - imul(x4, 669))
        x15 = w(x5 - x7)
        x17 = w(x5 + x7)
        tmp2 = w(stg26 - x17)
        tmp3 = w(imul(x15, 362) - tmp2)
        x44 = w(tmp3 + x24)
        x30 = w(s0 + s4)
        x31 = w(s0 - s4)
        x12 = w(s2 - s6)
        x13 = w(s2 + s6)
        x32 = w(imul(x12, 362) - x13)
        x40 = w(x30 + x13)
        x43 = w(x30 - x13)
        x41 = w(x31 + x32)
        x42 = w(x31 - x32)
        return (x40 + x17, x41 + tmp2, x42 + tmp3, x43 - x44, x43 + x44, x42 - tmp3, x41 - tmp2, x40 - x17)

    def pixel(v):  # idctCols' descale and clamp
        v = ((v + 64) >> 7) + 128
        return 0 if v < 0 else (255 if v > 255 else v)

    tmp = np.zeros(64, np.int64)
    for blk in range(coef.size // 64):
        o = blk * 64
        for line in range(8):
            i = o + line * 8
            r0, r1, r2, r3, r4, r5, r6, r7 = butterfly(
                np.int64(coef[i]), np.int64(coef[i + 1]), np.int64(coef[i + 2]), np.int64(coef[i + 3]),
                np.int64(coef[i + 4]), np.int64(coef[i + 5]), np.int64(coef[i + 6]), np.int64(coef[i + 7]))
            t = line * 8
            tmp[t] = w(r0)
            tmp[t + 1] = w(r1)
            tmp[t + 2] = w(r2)
            tmp[t + 3] = w(r3)
            tmp[t + 4] = w(r4)
            tmp[t + 5] = w(r5)
            tmp[t + 6] = w(r6)
            tmp[t + 7] = w(r7)
        for line in range(8):
            r0, r1, r2, r3, r4, r5, r6, r7 = butterfly(
                tmp[line], tmp[8 + line], tmp[16 + line], tmp[24 + line],
                tmp[32 + line], tmp[40 + line], tmp[48 + line], tmp[56 + line])
            i = o + line
            out[i] = pixel(r0)
            out[i + 8] = pixel(r1)
            out[i + 16] = pixel(r2)
            out[i + 24] = pixel(r3)
            out[i + 32] = pixel(r4)
            out[i + 40] = pixel(r5)
            out[i + 48] = pixel(r6)
            out[i + 56] = pixel(r7)


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


@lru_cache(maxsize=1)
def _colour_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """picojpeg's YCbCr -> RGB steps as tables over two 8-bit inputs (index ``a * 256 + b``), the
    RGB565 fields already shifted and byte-swapped (truncating packing):
    ``R[y, cr]``, ``B[y, cb]``, ``G1[y, cb]`` (the first clamped step) and ``G[G1, cr]``."""
    v = np.arange(256, dtype=np.int64)
    cb_g, cb_b, cr_r, cr_g = _chroma_terms(v, v)
    y = v[:, None]
    r = _add_clamp(y, cr_r[None, :])
    b = _add_clamp(y, cb_b[None, :])
    g1 = _sub_clamp(y, cb_g[None, :])  # Cb block first, then Cr (MCU block order)
    g = _sub_clamp(y, cr_g[None, :])  # indexed by the first step's result
    zero = np.zeros((256, 256), np.int64)
    tables = (_color.pack565(r >> 3, zero, zero), _color.pack565(zero, zero, b >> 3), g1.astype(np.uint8),
              _color.pack565(zero, g >> 2, zero))
    red, blue, green1, green = (np.ascontiguousarray(t.reshape(-1)) for t in tables)
    return red, blue, green1, green


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
    red, blue, green1, green = _colour_tables()
    if compiled():
        pix = np.empty((h, w), np.uint16)
        if _assemble565.attempt(samples.reshape(-1), per_row, len(org), bx, by, red, blue, green1, green,
                                pix) is not NOT_SERVED:
            return "rgb565", pix
    # Y blocks in MCU order: TL, TR, BL, BR (YH1V2: top, bottom)
    yb = samples[:, :, :ny].reshape(per_col, per_row, by, bx, 8, 8)
    y = yb.transpose(0, 2, 4, 1, 3, 5).reshape(per_col * mcu_h, per_row * mcu_w)[:h, :w].astype(np.intp)
    cb = _tile(samples[:, :, ny], per_col, per_row)
    cr = _tile(samples[:, :, ny + 1], per_col, per_row)
    cb = np.repeat(np.repeat(cb, by, axis=0), bx, axis=1)[:h, :w]  # pixel replication (upsampleCb*)
    cr = np.repeat(np.repeat(cr, by, axis=0), bx, axis=1)[:h, :w]
    y <<= 8
    y_cb = y | cb
    pix = red[y | cr]
    pix |= blue[y_cb]
    pix |= green[(green1[y_cb].astype(np.intp) << 8) | cr]
    return "rgb565", pix


@kernel
def _assemble565(samples, per_row, n_blocks, bx, by, red, blue, green1, green, pix):
    """``decode``'s assembly, pixel by pixel: the Y sample of pixel (x, y) in its MCU's Y blocks
    (left to right, top to bottom), Cb and Cr from the MCU's chroma blocks at ``(x // bx,
    y // by)`` (pixel replication), and picojpeg's colour steps as :func:`_colour_tables` hold
    them. ``samples``: flat uint8, ``n_blocks`` blocks of 64 per MCU, MCUs in raster order."""
    h, w = pix.shape
    mcu_w = bx * 8
    mcu_h = by * 8
    ny = bx * by
    sx = 1 if bx == 2 else 0  # the MCU's chroma subsampling as shifts (bx, by are 1 or 2)
    sy = 1 if by == 2 else 0
    per_col = (h + mcu_h - 1) // mcu_h
    for my in range(per_col):
        for mx in range(per_row):
            base = (my * per_row + mx) * n_blocks * 64
            y0 = my * mcu_h
            x0 = mx * mcu_w
            for ly in range(min(mcu_h, h - y0)):
                row_y = base + (ly >> 3) * bx * 64 + (ly & 7) * 8
                row_c = base + ny * 64 + (ly >> sy) * 8
                prow = pix[y0 + ly]
                for lx in range(min(mcu_w, w - x0)):
                    y = np.int64(samples[row_y + (lx >> 3) * 64 + (lx & 7)]) << 8
                    c = row_c + (lx >> sx)
                    cb = np.int64(samples[c])
                    cr = np.int64(samples[c + 64])
                    prow[x0 + lx] = red[y | cr] | blue[y | cb] | green[(np.int64(green1[y | cb]) << 8) | cr]


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
