"""The JPEG encoder's per-MCU work in compiled kernels: ``jpeg_get_mcu``, ``jpeg_processDU`` (the
integer AAN DCT, the truncating quantisation, the Huffman tokens) and ``jpeg_writeBits`` (bytes
with ``0xFF`` stuffing) over a run of MCUs, and ``jpg_bpp2_end``'s splice of the second core's
bytes — the statements of MaixPy-v1 ``omv/img/jpeg.c``, one MCU at a time as the C runs them.

``_jpeg_encode`` keeps the same encoder as array code (all blocks at once, tokens sorted into the
C's order); it runs where kernels are not compiled, and the tests compare both byte for byte. The
kernels take the pixels as ``uint16`` (a gray image widened) and a sample table per raw value
(``yuv_table`` for RGB565, ``v - 128`` for gray), so one specialisation serves every format.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

#: ``state`` slots of :func:`encode_mcus` (kept between calls when the output buffer must grow)
MCU, DC_Y, DC_U, DC_V, BITC, BITB, IDX = range(7)
#: the bytes one MCU can need at most: 6 blocks of 64 tokens of <= 27 bits, every byte stuffed
MCU_MARGIN = 6 * 2 * (64 * 27 + 7) // 8 + 16


@kernel
def encode_mcus(pix, table, pad, ncomp, mcu_w, mcu_h, m_dry, m_end, fd_y, fd_uv, hcode, hlen, zigzag,
                out, state):
    """Encode MCUs ``state[MCU]`` .. ``m_end - 1`` (raster order, ``ceil(w / mcu_w)`` per row) of
    ``pix`` into ``out`` from byte ``state[IDX]`` with the pending bits ``state[BITC]``/``[BITB]``
    and the DC predictors ``state[DC_*]``; MCUs before ``m_dry`` only update the predictors (the
    second core's priming, ``jpeg_buf == 0``).

    ``table[raw]``: the (Y, U, V) samples of a pixel value (``ncomp`` 1: Y only); ``pad``: the
    samples of a pixel outside the image. ``hcode``/``hlen`` (4, 256): the Y DC, Y AC, UV DC and
    UV AC codes. Chroma is taken from every ``mcu_w / 8``-th column and ``mcu_h / 8``-th row (the
    even pixels); the Y blocks of an MCU are visited left to right, top to bottom.

    Returns 0 when done, 1 when ``out`` has less than :data:`MCU_MARGIN` bytes left before an MCU
    (``state`` then says where to resume with a larger buffer).
    """
    h, w = pix.shape
    per_row = (w + mcu_w - 1) // mcu_w
    bx = mcu_w // 8
    by = mcu_h // 8
    n_y = bx * by
    n_blocks = n_y + (2 if ncomp == 3 else 0)
    cdu = np.zeros(64, np.int64)
    du = np.zeros(64, np.int64)
    duq = np.zeros(64, np.int64)
    tok_code = np.zeros(160, np.int64)
    tok_len = np.zeros(160, np.int64)
    m = state[MCU]
    dc_y = state[DC_Y]
    dc_u = state[DC_U]
    dc_v = state[DC_V]
    bitc = state[BITC]
    bitb = state[BITB]
    idx = state[IDX]
    cap = out.size
    while m < m_end:
        if idx + MCU_MARGIN > cap:
            break
        x0 = (m % per_row) * mcu_w
        y0 = (m // per_row) * mcu_h
        write = m >= m_dry
        for b in range(n_blocks):
            # ---- jpeg_get_mcu + the sample tables: this block's 64 samples
            if b < n_y:
                comp = 0
                ox = x0 + (b % bx) * 8
                oy = y0 + (b // bx) * 8
                sx = 1
                sy = 1
            else:
                comp = b - n_y + 1
                ox = x0
                oy = y0
                sx = bx
                sy = by
            for r in range(8):
                yy = oy + r * sy
                for c in range(8):
                    xx = ox + c * sx
                    if xx < w and yy < h:
                        cdu[r * 8 + c] = table[pix[yy, xx], comp]
                    else:
                        cdu[r * 8 + c] = pad[comp]
            # ---- jpeg_processDU: DCT rows (cdu -> du), then columns (du in place); MULTIPLY = (x * c) >> 8
            for phase in range(2):
                src = cdu if phase == 0 else du
                step = 1 if phase == 0 else 8
                for line in range(8):
                    o = line * 8 if phase == 0 else line
                    t0 = src[o] + src[o + 7 * step]
                    t1 = src[o + step] + src[o + 6 * step]
                    t2 = src[o + 2 * step] + src[o + 5 * step]
                    t3 = src[o + 3 * step] + src[o + 4 * step]
                    t7 = src[o] - src[o + 7 * step]
                    t6 = src[o + step] - src[o + 6 * step]
                    t5 = src[o + 2 * step] - src[o + 5 * step]
                    t4 = src[o + 3 * step] - src[o + 4 * step]
                    t10 = t0 + t3
                    t13 = t0 - t3
                    t11 = t1 + t2
                    t12 = t1 - t2
                    z1 = ((t12 + t13) * 181) >> 8
                    du[o] = t10 + t11
                    du[o + 4 * step] = t10 - t11
                    du[o + 2 * step] = t13 + z1
                    du[o + 6 * step] = t13 - z1
                    t10 = t4 + t5
                    t11 = t5 + t6
                    t12 = t6 + t7
                    z5 = ((t10 - t12) * 98) >> 8
                    z2 = ((t10 * 139) >> 8) + z5
                    z4 = ((t12 * 334) >> 8) + z5
                    z3 = (t11 * 181) >> 8
                    z11 = t7 + z3
                    z13 = t7 - z3
                    du[o + 5 * step] = z13 + z2
                    du[o + 3 * step] = z13 - z2
                    du[o + step] = z11 + z4
                    du[o + 7 * step] = z11 - z4
            # ---- quantise (float32 product, truncated: fast_roundf) into zig-zag order
            fd = fd_y if comp == 0 else fd_uv
            end0 = 0
            for i in range(64):
                z = zigzag[i]
                q = int(np.float32(du[i]) * fd[i])
                duq[z] = q
                if z > end0 and q != 0:
                    end0 = z
            dc_prev = dc_y if comp == 0 else (dc_u if comp == 1 else dc_v)
            if comp == 0:
                dc_y = duq[0]
            elif comp == 1:
                dc_u = duq[0]
            else:
                dc_v = duq[0]
            if not write:
                continue
            # ---- the block's Huffman tokens (DC, then AC runs), in the C's order
            dct = 0 if comp == 0 else 2
            act = dct + 1
            n = 0
            diff = duq[0] - dc_prev
            if diff == 0:
                tok_code[n] = hcode[dct, 0]
                tok_len[n] = hlen[dct, 0]
                n += 1
            else:
                a = -diff if diff < 0 else diff
                size = 0
                while a:
                    size += 1
                    a >>= 1
                v = diff - 1 if diff < 0 else diff
                tok_code[n] = hcode[dct, size]
                tok_len[n] = hlen[dct, size]
                tok_code[n + 1] = v & ((1 << size) - 1)
                tok_len[n + 1] = size
                n += 2
            if end0 == 0:
                tok_code[n] = hcode[act, 0]
                tok_len[n] = hlen[act, 0]
                n += 1
            else:
                i = 1
                while i <= end0:
                    start = i
                    while duq[i] == 0 and i <= end0:
                        i += 1
                    zeros = i - start
                    if zeros >= 16:
                        for _k in range(zeros >> 4):
                            tok_code[n] = hcode[act, 0xF0]
                            tok_len[n] = hlen[act, 0xF0]
                            n += 1
                        zeros &= 15
                    val = duq[i]
                    a = -val if val < 0 else val
                    size = 0
                    while a:
                        size += 1
                        a >>= 1
                    v = val - 1 if val < 0 else val
                    tok_code[n] = hcode[act, (zeros << 4) + size]
                    tok_len[n] = hlen[act, (zeros << 4) + size]
                    tok_code[n + 1] = v & ((1 << size) - 1)
                    tok_len[n + 1] = size
                    n += 2
                    i += 1
                if end0 != 63:
                    tok_code[n] = hcode[act, 0]
                    tok_len[n] = hlen[act, 0]
                    n += 1
            # ---- jpeg_writeBits of each token (only the 24 live bits of bitb are kept)
            for t in range(n):
                bitc += tok_len[t]
                bitb = (bitb | (tok_code[t] << (24 - bitc))) & 0xFFFFFF
                while bitc > 7:
                    ch = (bitb >> 16) & 255
                    out[idx] = ch
                    idx += 1
                    if ch == 255:
                        out[idx] = 0
                        idx += 1
                    bitb = (bitb << 8) & 0xFFFFFF
                    bitc -= 8
        m += 1
    state[MCU] = m
    state[DC_Y] = dc_y
    state[DC_U] = dc_u
    state[DC_V] = dc_v
    state[BITC] = bitc
    state[BITB] = bitb
    state[IDX] = idx
    return 1 if m < m_end else 0


@kernel
def splice(out, n0, bitc0, bitb0, rest, n1, bitc1, bitb1, state):
    """``jpg_bpp2_end``: core 1's ``n1`` bytes ``rest`` appended to core 0's ``n0`` bytes of ``out``
    at core 0's bit position (a stuffing zero after an ``FF`` dropped and re-added; reads past
    ``rest`` see 0). ``out`` has room for ``n0 + 2 * n1 + 4`` bytes. ``state[IDX]``/``[BITC]``/
    ``[BITB]`` receive the joined stream's end."""
    idx = n0
    i = 0
    r_i = int(rest[i]) if i < n1 else 0  # (int: the Python twin must not shift in uint8)
    out[idx] = ((bitb0 >> 16) & 0xFF) | (r_i >> bitc0)
    idx += 1
    while n1 - i > 1:
        r_i = int(rest[i])
        if r_i == 255:
            r_n = int(rest[i + 2]) if i + 2 < n1 else 0
            b = ((r_i << (8 - bitc0)) | (r_n >> bitc0)) & 0xFF
            i += 1
        else:
            r_n = int(rest[i + 1]) if i + 1 < n1 else 0
            b = ((r_i << (8 - bitc0)) | (r_n >> bitc0)) & 0xFF
        out[idx] = b
        idx += 1
        if b == 255:
            out[idx] = 0
            idx += 1
        i += 1
    r_i = int(rest[i]) if 0 <= i < n1 else 0
    if bitc1 + bitc0 >= 8:
        out[idx] = ((r_i << (8 - bitc0)) | (bitb1 >> (8 - bitc0))) & 0xFF
        idx += 1
        state[BITC] = bitc1 + bitc0 - 8
        state[BITB] = (bitb1 << (8 - bitc0)) & 0xFFFFFFFF
    else:
        state[BITC] = bitc0 + bitc1
        state[BITB] = ((r_i << (8 - bitc0 + 16)) | (bitb1 >> bitc0)) & 0xFFFFFFFF
    state[IDX] = idx
