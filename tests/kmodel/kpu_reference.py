"""A slow, obviously-correct K210 KPU model written straight from docs/kpu-hardware.md.

Plain Python integers and loops, no numpy tricks and nothing shared with maixemu.kmodel.kpu:
decode the 12 register words (§1), the batch-norm (§2) and activation tables (§3), read the input
from a 2 MiB KPU RAM with the row layout (§7), compute every output element tap by tap (§5.1),
batch-norm (§5.2), activation with nncase's rounding (§5.3), pool (§6), write back (§7).
Meant for small maps only.
"""

from __future__ import annotations

import struct


def sext(v: int, n: int) -> int:
    v &= (1 << n) - 1
    return v - (1 << n) if v & (1 << (n - 1)) else v


def field(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def decode(words: list[int]) -> dict:
    w = words
    return {
        "dw": field(w[0], 3, 3),
        "src": field(w[1], 0, 14),
        "dst": field(w[1], 32, 46),
        "ic": field(w[2], 0, 9) + 1,
        "oc": field(w[2], 32, 41) + 1,
        "iw": field(w[3], 0, 9) + 1,
        "ih": field(w[3], 10, 18) + 1,
        "ow": field(w[3], 32, 41) + 1,
        "oh": field(w[3], 42, 50) + 1,
        "k": 3 if field(w[4], 0, 2) == 1 else 1,
        "pool": field(w[4], 4, 7),
        "pad": field(w[4], 24, 31),
        "shr_w": field(w[9], 0, 3),
        "shr_x": field(w[9], 4, 7),
        "arg_w": sext(field(w[9], 8, 31), 24),
        "arg_x": sext(field(w[9], 32, 55), 24),
        "arg_add": sext(field(w[10], 0, 39), 40),
    }


def addr(base: int, c: int, y: int, x: int, h: int, w: int) -> int:
    if w <= 16:
        groups, row_len, pitch = 4, 1, 16
    elif w <= 32:
        groups, row_len, pitch = 2, 1, 32
    else:
        groups, row_len, pitch = 1, (w + 63) // 64, 64
    return base + (c // groups) * row_len * h * 64 + (c % groups) * pitch + y * row_len * 64 + x


def upload(ram: bytearray, base: int, chw) -> None:
    c_n, h, w = len(chw), len(chw[0]), len(chw[0][0])
    for c in range(c_n):
        for y in range(h):
            for x in range(w):
                ram[addr(base, c, y, x, h, w)] = chw[c][y][x]


def download(ram: bytearray, base: int, c_n: int, h: int, w: int):
    return [[[ram[addr(base, c, y, x, h, w)] for x in range(w)] for y in range(h)] for c in range(c_n)]


def round_shift(t: int, s: int) -> int:
    if s == 0:
        return t
    q = t >> s
    f = t & ((1 << s) - 1)
    half = 1 << (s - 1)
    sign = -1 if t < 0 else 1
    if f < half:
        return q
    if f > half:
        return q + sign
    return q + sign if q & 1 else q


def activation(bn: int, act_bytes: bytes) -> int:
    words = struct.unpack("<18Q", act_bytes)
    biases = words[16].to_bytes(8, "little") + words[17].to_bytes(8, "little")
    chosen = None
    for i in range(16):
        if bn > sext(field(words[i], 24, 59), 36):
            chosen = i
    assert chosen is not None, "bn below every segment"
    seg = words[chosen]
    t = (bn - sext(field(seg, 24, 59), 36)) * sext(field(seg, 8, 23), 16)
    r = round_shift(t, field(seg, 0, 7)) + biases[chosen]
    return max(0, min(255, r))


def pool(a, pool_type: int):
    c_n, h, w = len(a), len(a[0]), len(a[0][0])
    if pool_type == 0:
        return a
    if pool_type in (1, 2, 5, 6):
        s = 2
    elif pool_type in (3, 4, 7):
        s = 4
    else:
        s = 1
    oh, ow = h // s, w // s
    out = []
    for c in range(c_n):
        plane = []
        for y in range(oh):
            row = []
            for x in range(ow):
                if pool_type in (1, 3):
                    v = max(a[c][s * y + i][s * x + j] for i in range(s) for j in range(s))
                elif pool_type in (2, 4):
                    v = sum(a[c][s * y + i][s * x + j] for i in range(s) for j in range(s)) // (s * s)
                elif pool_type in (5, 7):
                    v = a[c][s * y][s * x]
                elif pool_type == 6:
                    v = a[c][2 * y][2 * x + 1] if 2 * x + 1 < w else 0
                elif pool_type == 8:
                    v = sum(a[c][min(y + i, h - 1)][min(x + j, w - 1)] for i in range(2) for j in range(2)) // 4
                elif pool_type == 9:
                    v = max(a[c][y + i][x + j] for i in range(2) for j in range(2) if y + i < h and x + j < w)
                else:
                    raise ValueError(pool_type)
                row.append(v)
            plane.append(row)
        out.append(plane)
    return out


def conv_layer(ram: bytearray, regs: list[int], weights: bytes, bn: bytes, act: bytes, weight_bytes: int = 1):
    """Run one layer on ``ram`` in place; returns the pooled output as nested lists [C][H][W]."""
    r = decode(regs)
    ic, ih, iw, oc, k = r["ic"], r["ih"], r["iw"], r["oc"], r["k"]
    x = download(ram, r["src"] * 64, ic, ih, iw)
    fmt = "<%dB" if weight_bytes == 1 else "<%dH"
    per = (1 if r["dw"] else ic) * k * k
    wts = struct.unpack(fmt % (oc * per), weights[: oc * per * weight_bytes])
    bnw = struct.unpack("<%dQ" % oc, bn[: 8 * oc])
    half = k // 2
    act_out = []
    for o in range(oc):
        mul = sext(field(bnw[o], 0, 23), 24)
        add = sext(field(bnw[o], 24, 55), 32)
        shift = field(bnw[o], 56, 59)
        chans = [o] if r["dw"] else list(range(ic))
        plane = []
        for y in range(ih):
            row = []
            for xx in range(iw):
                s = sx = sw = 0
                for n, i in enumerate(chans):
                    for ky in range(k):
                        for kx in range(k):
                            yy, xi = y + ky - half, xx + kx - half
                            v = x[i][yy][xi] if 0 <= yy < ih and 0 <= xi < iw else r["pad"]
                            wv = wts[o * per + (0 if r["dw"] else n) * k * k + ky * k + kx]
                            s += v * wv
                            sx += v
                            sw += wv
                n_mul = 1 if r["dw"] else ic
                acc = s + ((r["arg_x"] * sx) >> r["shr_x"]) + ((r["arg_w"] * sw) >> r["shr_w"]) + r["arg_add"] * n_mul
                bnv = ((acc * mul) >> shift) + add
                row.append(activation(bnv, act))
            plane.append(row)
        act_out.append(plane)
    out = pool(act_out, r["pool"])
    assert len(out[0]) == r["oh"] and len(out[0][0]) == r["ow"]
    upload(ram, r["dst"] * 64, out)
    return out
