"""Every V4 opcode on small hand-built models, against direct-loop references.

The sample models use only 15 of the 28 opcodes, so each opcode is exercised here through a
synthetic kmodel written byte by byte from kmodel-v4.md (which also tests the body decoders),
and compared bit for bit with a slow reference that follows the nncase v0.2 C loops literally:
plain Python loops, float32 scalars (one rounding per C operator), Python integers.
"""

from __future__ import annotations

import itertools
import math
import struct

import numpy as np
import pytest

from maixemu.kmodel.ops import v4_float as vf
from maixemu.kmodel.v4 import load_v4

F32 = np.float32
KMDL = 0x4B4D444C
CONST, MAIN, KPU = 0, 1, 2
DF, DU = 0, 1  # float32, uint8
FULL = (-3.4028234663852886e38, 3.4028234663852886e38)


# --- a V4 writer ----------------------------------------------------------------------------


def mr(mtype: int, dtype: int, start: int, size: int) -> bytes:
    return struct.pack("<4I", mtype, dtype, start, size)


def shp(*dims: int) -> bytes:
    return struct.pack("<4i", *dims)


def vr(lo: float, hi: float) -> bytes:
    return struct.pack("<2f", lo, hi)


class V4Writer:
    """Writes a V4 file: header, input/output ranges, input shapes, constants, nodes (bodies padded
    to 8 bytes of absolute file offset, the padding counted in ``body_size``)."""

    def __init__(self, main_mem: int, constants: bytes = b"", target: int = 1):
        self.main_mem, self.constants, self.target = main_mem, constants, target
        self.inputs: list[tuple[bytes, tuple[int, ...]]] = []
        self.outputs: list[bytes] = []
        self.nodes: list[tuple[int, bytes]] = []

    def input(self, rng: bytes, shape) -> "V4Writer":
        self.inputs.append((rng, tuple(shape)))
        return self

    def output(self, rng: bytes) -> "V4Writer":
        self.outputs.append(rng)
        return self

    def node(self, opcode: int, body: bytes) -> "V4Writer":
        self.nodes.append((opcode, body))
        return self

    def build(self, drop_last_padding: bool = False) -> bytes:
        """``drop_last_padding`` leaves the last body's alignment padding out of the file (declared
        in ``body_size`` but missing, as in two of the sample models)."""
        head = struct.pack("<10I", KMDL, 4, 0, self.target, len(self.constants), self.main_mem, len(self.nodes),
                           len(self.inputs), len(self.outputs), 0xCCCCCCCC)
        tables = b"".join(r for r, _ in self.inputs) + b"".join(shp(*s) for _, s in self.inputs)
        tables += b"".join(self.outputs) + self.constants
        pos = len(head) + len(tables) + 8 * len(self.nodes)
        headers, bodies, pad = b"", b"", 0
        for opcode, body in self.nodes:
            pad = (-(pos + len(body))) % 8
            padded = body + b"\0" * pad
            headers += struct.pack("<2I", opcode, len(padded))
            bodies += padded
            pos += len(padded)
        data = head + tables + headers + bodies
        return data[: len(data) - pad] if drop_last_padding else data


def single_op(opcode: int, body: bytes, main_mem: int, inputs, outputs, constants: bytes = b"", **kw):
    w = V4Writer(main_mem, constants)
    for rng, shape in inputs:
        w.input(rng, shape)
    for rng in outputs:
        w.output(rng)
    w.node(opcode, body)
    return load_v4(w.build(), **kw)


def f32b(a) -> bytes:
    return np.asarray(a, dtype="<f4").tobytes()


def i32b(a) -> bytes:
    return np.asarray(a, dtype="<i4").tobytes()


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


RNG = np.random.default_rng(20240229)


def rand_f32(*shape, scale=4.0):
    return (RNG.standard_normal(shape) * scale).astype(F32)


def cmin(a, b):  # std::min
    return b if b < a else a


def cmax(a, b):  # std::max
    return b if a < b else a


def cclamp(v, lo, hi):  # std::clamp
    return lo if v < lo else (hi if hi < v else v)


# --- neutral float ops ---------------------------------------------------------------------


BIN = {0: lambda a, b: a + b, 1: lambda a, b: a - b, 2: lambda a, b: a * b, 3: lambda a, b: a / b, 4: cmin, 5: cmax}


def reduced(idx, shape):
    return tuple(0 if i >= d else i for i, d in zip(idx, shape))


@pytest.mark.parametrize("op", range(6))
@pytest.mark.parametrize("shapes", [((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)),
                                    ((1, 2, 3, 4), (1, 1, 3, 1), (1, 2, 3, 4)),
                                    ((1, 2, 1, 4), (1, 2, 3, 1), (1, 2, 3, 4)),
                                    ((1, 2, 2, 4), (1, 1, 1, 1), (1, 2, 3, 4))])  # a: index>=2 on H -> 0
def test_binary(op, shapes):
    sa, sb, so = shapes
    a, b = rand_f32(*sa), rand_f32(*sb)
    a.reshape(-1)[0] = 0.0
    b.reshape(-1)[0] = -0.0
    na, nb, no = a.size * 4, b.size * 4, math.prod(so) * 4
    lo, hi = (-1.5, 2.5) if op == 2 else FULL
    body = (mr(MAIN, DF, 0, na) + mr(CONST, DF, 0, nb) + mr(MAIN, DF, na, no) + struct.pack("<I", op)
            + shp(*sa) + shp(*sb) + shp(*so) + vr(lo, hi))
    m = single_op(0x00, body, na + no, [(mr(MAIN, DF, 0, na), sa)], [mr(MAIN, DF, na, no)], f32b(b))
    (got,) = m.run(a)
    with np.errstate(all="ignore"):
        if sa == sb:
            want = np.array([cclamp(BIN[op](x, y), F32(lo), F32(hi)) for x, y in zip(a.reshape(-1), b.reshape(-1))], F32)
        else:
            want = np.empty(so, F32)
            for idx in itertools.product(*map(range, so)):
                want[idx] = cclamp(BIN[op](a[reduced(idx, sa)], b[reduced(idx, sb)]), F32(lo), F32(hi))
    assert same_bits(got.reshape(-1), want.reshape(-1))
    assert got.shape == (so if sa != sb else sa)


def test_concat_bytes_and_shape():
    x = np.arange(2 * 3 * 4, dtype=F32).reshape(2, 3, 4)
    c = (np.arange(2 * 2 * 4, dtype=F32) + 100).reshape(2, 2, 4)
    body = (mr(MAIN, DF, 1000, 4 * 40) + struct.pack("<3I", 16, 2, 2) + mr(MAIN, DF, 0, 96) + mr(CONST, DF, 0, 64)
            + struct.pack("<2i", 3, 2))
    m = single_op(0x01, body, 1160, [(mr(MAIN, DF, 0, 96), (1, 2, 3, 4))], [mr(MAIN, DF, 1000, 160)], f32b(c))
    (got,) = m.run(x.reshape(1, 2, 3, 4))
    assert same_bits(got.reshape(2, 5, 4), np.concatenate([x, c], axis=1))
    assert got.shape == (1, 2, 5, 4)  # the concat axis of the input's shape


def conv_ref(x, w, bias, groups, stride, dil, pads, act, order="ckk"):
    n, c, h, wd = x.shape
    oc, gic, kh, kw = w.shape
    goc = oc // groups
    oh = (h + sum(pads[0]) - ((kh - 1) * dil[0] + 1) + stride[0]) // stride[0]
    ow = (wd + sum(pads[1]) - ((kw - 1) * dil[1] + 1) + stride[1]) // stride[1]
    out = np.empty((n, oc, oh, ow), F32)
    for b, o, oy, ox in itertools.product(range(n), range(oc), range(oh), range(ow)):
        g = o // goc
        v = F32(bias[o])
        taps = [(i, ky, kx) for i in range(gic) for ky in range(kh) for kx in range(kw)]
        if order == "kkc":
            taps = [(i, ky, kx) for ky in range(kh) for kx in range(kw) for i in range(gic)]
        for i, ky, kx in taps:
            iy, ix = oy * stride[0] - pads[0][0] + ky * dil[0], ox * stride[1] - pads[1][0] + kx * dil[1]
            if 0 <= iy < h and 0 <= ix < wd:
                v = F32(v + F32(x[b, g * gic + i, iy, ix] * w[o, i, ky, kx]))
        out[b, o, oy, ox] = cclamp(v, F32(act[0]), F32(act[1]))
    return out


@pytest.mark.parametrize("groups,stride,dil,pads", [(1, (1, 1), (1, 1), ((1, 1), (1, 1))),
                                                    (2, (2, 1), (1, 2), ((0, 2), (1, 0))),
                                                    (4, (1, 2), (2, 1), ((-1, 1), (2, 2)))])
def test_conv2d(groups, stride, dil, pads):
    x = rand_f32(1, 4, 6, 7)
    w = rand_f32(4, 4 // groups, 3, 2, scale=1.0)
    bias = rand_f32(4)
    act = (-2.0, 3.0)
    want = conv_ref(x, w, bias, groups, stride, dil, pads, act)
    n_in, n_out = x.size * 4, want.size * 4
    body = (mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + shp(*x.shape) + struct.pack("<2i", groups, 4)
            + struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", 3, 2, *stride, *dil) + vr(*act)
            + f32b(w) + f32b(bias))
    m = single_op(0x02, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), x.shape)], [mr(MAIN, DF, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got, want)
    assert m.layers[0].macs == want.size * (4 // groups) * 6


@pytest.mark.parametrize("order", ["ckk", "kkc"])
@pytest.mark.parametrize("groups,stride,dil,pads", [(1, (1, 1), (1, 1), ((1, 1), (1, 1))),
                                                    (2, (2, 1), (1, 2), ((0, 2), (1, 0))),
                                                    (4, (1, 2), (2, 1), ((-1, 1), (2, 2))),
                                                    (4, (2, 3), (1, 1), ((3, 0), (0, 4)))])
def test_conv2d_compiled_kernel_gives_the_same_bits(monkeypatch, order, groups, stride, dil, pads):
    """With the fast kernels loaded the float conv runs as one compiled pass per output row:
    the reference's products and sums in its order, NaN, infinities and signed zeros included,
    the same bits as the per-tap numpy passes and the scalar reference."""
    from maixemu.kmodel.kpu import fast

    if fast.kernels() is None:
        pytest.skip(f"compiled kernels unavailable: {fast.unavailable_reason()}")
    x = rand_f32(2, 4, 6, 7)
    x.flat[[0, 13, 40, 77]] = [np.nan, np.inf, -0.0, -np.inf]
    w = rand_f32(4, 4 // groups, 3, 2, scale=1.0)
    w.flat[3] = -0.0
    bias = rand_f32(4)
    bias[1] = -0.0
    act = (-2.5, 3.5)
    args = (x, w, bias, groups, *stride, *dil, pads[0], pads[1], *act, order)
    got = vf.conv2d(*args)
    assert same_bits(got, conv_ref(x, w, bias, groups, stride, dil, pads, act, order))
    monkeypatch.setattr(fast, "_SERVING", None)  # loaded_kernels() -> None: the numpy passes
    assert same_bits(vf.conv2d(*args), got)


@pytest.mark.parametrize("mode", ["host", "device"])
def test_dequantize_and_quantize_round_trip_rules(mode, kpu_engine):
    q = np.arange(256, dtype=np.uint8)
    zp, scale = 131, 22.34
    body = mr(MAIN, DU, 0, 256) + mr(MAIN, DF, 256, 1024) + struct.pack("<if", zp, scale)
    m = single_op(0x03, body, 1280, [(mr(MAIN, DU, 0, 256), (1, 1, 16, 16))], [mr(MAIN, DF, 256, 1024)], float_mode=mode)
    (got,) = m.run(q.reshape(1, 1, 16, 16))
    inv = F32(1) / F32(scale)
    if mode == "host":
        want = np.array([F32(F32(int(v) - zp) * inv) for v in q], F32)
    else:
        zero = F32(F32(-zp) * inv)
        want = np.array([F32(float(v) * float(inv) + float(zero)) for v in q], F32)  # fused multiply-add
    assert same_bits(got.reshape(-1), want)

    # quantize: ties, negative ties, saturation, NaN, out-of-int32-range; odd count for the device tail
    x = np.array([0.5, 1.5, 2.5, -0.5, 254.5, 300.0, -7.0, np.nan, 3e9, -3e9, 127.49999, 5.5, 6.5], F32)
    qb = mr(MAIN, DF, 0, 4 * x.size) + mr(MAIN, DU, 64, x.size) + struct.pack("<if", 0, 1.0)
    m = single_op(0x06, qb, 128, [(mr(MAIN, DF, 0, 4 * x.size), (1, 1, 1, x.size))], [mr(MAIN, DU, 64, x.size)],
                  float_mode=mode)
    (gq,) = m.run(x.reshape(1, 1, 1, -1))
    if mode == "host":  # roundf, (int32_t) of out-of-range/NaN on x86 = INT32_MIN -> clamps to 0
        want_q = [1, 2, 3, 0, 255, 255, 0, 0, 0, 0, 127, 6, 7]
    else:  # pairs round half to even, the odd last element uses roundf; fcvt saturates, NaN -> max
        want_q = [0, 2, 2, 0, 254, 255, 0, 255, 255, 0, 127, 6, 7]
    assert gq.reshape(-1).tolist() == want_q


def test_matmul_sums_in_order():
    a, b, bias = rand_f32(3, 5), rand_f32(5, 4), rand_f32(4)
    na, nb, no = a.size * 4, b.size * 4, 3 * 4 * 4
    body = (mr(MAIN, DF, 0, na) + mr(CONST, DF, 0, nb) + mr(MAIN, DF, na, no) + struct.pack("<3i", 3, 5, 4)
            + vr(-5.0, 5.0) + f32b(bias))
    m = single_op(0x04, body, na + no, [(mr(MAIN, DF, 0, na), (1, 1, 3, 5))], [mr(MAIN, DF, na, no)], f32b(b))
    (got,) = m.run(a.reshape(1, 1, 3, 5))
    want = np.empty((3, 4), F32)
    for r, c in itertools.product(range(3), range(4)):
        v = F32(bias[c])
        for i in range(5):
            v = F32(v + F32(a[r, i] * b[i, c]))
        want[r, c] = cclamp(v, F32(-5), F32(5))
    assert same_bits(got, want)


@pytest.mark.parametrize("dtype", [DU, DF])
def test_pad_grows_and_crops(dtype):
    s = (1, 2, 5, 6)
    pads = [(0, 0), (1, 0), (-1, 2), (2, -3)]
    x = (np.arange(60) % 251).astype(np.uint8 if dtype == DU else F32).reshape(s)
    es = 1 if dtype == DU else 4
    pv = struct.pack("<I", dtype) + (bytes([7, 0, 0, 0]) if dtype == DU else struct.pack("<f", -1.25))
    out_shape = tuple(d + b + a for d, (b, a) in zip(s, pads))
    n_in, n_out = 60 * es, math.prod(out_shape) * es
    body = mr(MAIN, dtype, 0, n_in) + mr(MAIN, dtype, n_in, n_out) + shp(*s) + b"".join(struct.pack("<2i", *p) for p in pads) + pv
    m = single_op(0x05, body, n_in + n_out, [(mr(MAIN, dtype, 0, n_in), s)], [mr(MAIN, dtype, n_in, n_out)])
    (got,) = m.run(x)
    want = np.empty(out_shape, x.dtype)
    fill = 7 if dtype == DU else -1.25
    for idx in itertools.product(*map(range, out_shape)):
        if any(d < b or d >= o - a for d, o, (b, a) in zip(idx, out_shape, pads)):
            want[idx] = fill
        else:
            want[idx] = x[tuple(d - b for d, (b, _) in zip(idx, pads))]
    assert same_bits(got, want)


@pytest.mark.parametrize("op", range(4))
def test_reduce(op):
    s, so = (2, 3, 4, 5), (2, 1, 4, 1)
    x = rand_f32(*s)
    n_in, n_out = x.size * 4, math.prod(so) * 4
    body = mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + struct.pack("<I", op) + shp(*s) + shp(*so) + struct.pack("<f", 0.25)
    m = single_op(0x07, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), s)], [mr(MAIN, DF, n_in, n_out)])
    (got,) = m.run(x)
    want = np.full(so, F32(0.25), F32)
    fold = {0: lambda o, v: o + v, 1: lambda o, v: cmin(o, v), 2: lambda o, v: cmax(o, v), 3: lambda o, v: o + v}[op]
    for idx in itertools.product(*map(range, s)):
        r = reduced(idx, so)
        want[r] = fold(want[r], x[idx])
    if op == 0:
        mul = F32(F32(math.prod(so)) / F32(x.size))
        want = (want * mul).astype(F32)
    assert same_bits(got, want)


def window_ref(x, op, init, k, stride, dil, pads, act, nhwc=False):
    if nhwc:
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    oh = (h + sum(pads[0]) - ((k[0] - 1) * dil[0] + 1) + stride[0]) // stride[0]
    ow = (w + sum(pads[1]) - ((k[1] - 1) * dil[1] + 1) + stride[1]) // stride[1]
    out = np.empty((n, c, oh, ow), F32)
    for b, ch, oy, ox in itertools.product(range(n), range(c), range(oh), range(ow)):
        v, cnt = F32(init), 0
        for ky, kx in itertools.product(range(k[0]), range(k[1])):
            iy, ix = oy * stride[0] - pads[0][0] + ky * dil[0], ox * stride[1] - pads[1][0] + kx * dil[1]
            if 0 <= iy < h and 0 <= ix < w:
                e = x[b, ch, iy, ix]
                v = {0: lambda: F32(v + e), 1: lambda: cmin(v, e), 2: lambda: cmax(v, e), 3: lambda: F32(v + e)}[op]()
                cnt += 1
        if op == 0:
            v = F32(v / F32(cnt))
        out[b, ch, oy, ox] = cclamp(v, F32(act[0]), F32(act[1]))
    return out.transpose(0, 2, 3, 1) if nhwc else out


@pytest.mark.parametrize("opcode,op", [(0x08, 0), (0x08, 1), (0x08, 2), (0x08, 3), (0x1003, 0), (0x1003, 1), (0x1003, 2)])
def test_reduce_window2d(op, opcode):
    s = (1, 3, 5, 6) if opcode == 0x08 else (1, 5, 6, 3)
    x = rand_f32(*s)
    pads, k, stride, dil, act = ((1, 1), (0, 2)), (3, 2), (2, 1), (1, 2), (-3.0, 3.5)
    want = window_ref(x, op, 0.0 if op in (0, 3) else (1e30 if op == 1 else -1e30), k, stride, dil, pads, act, opcode == 0x1003)
    n_in, n_out = x.size * 4, want.size * 4
    init = 0.0 if op in (0, 3) else (1e30 if op == 1 else -1e30)
    body = (mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + struct.pack("<I", op) + shp(*s)
            + struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", *k, *stride, *dil) + struct.pack("<f", init) + vr(*act))
    m = single_op(opcode, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), s)], [mr(MAIN, DF, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got, want)


def test_tap_slices_cover_exactly_the_valid_taps():
    from maixemu.kmodel.ops.v4_float import tap_slices

    for in_size, k, stride, dil, before, after in itertools.product((1, 2, 5, 9), (1, 2, 3), (1, 2, 3), (1, 2), (-2, 0, 1, 3), (-1, 0, 2)):
        out_n = (in_size + before + after - ((k - 1) * dil + 1) + stride) // stride
        if out_n <= 0:
            continue
        got = {t: (o, i) for t, o, i in tap_slices(in_size, out_n, k, stride, dil, before)}
        for t in range(k):
            valid = [(o, o * stride - before + t * dil) for o in range(out_n) if 0 <= o * stride - before + t * dil < in_size]
            if not valid:
                assert t not in got
                continue
            o_sl, i_sl = got[t]
            assert list(zip(range(out_n)[o_sl], range(in_size)[i_sl])) == valid


def test_memory_copy_copies_whole_words_only():
    x = np.arange(10, dtype=np.uint8)
    body = mr(MAIN, DU, 0, 10) + mr(MAIN, DU, 16, 10)
    m = single_op(0x09, body, 32, [(mr(MAIN, DU, 0, 10), (1, 1, 1, 10))], [mr(MAIN, DU, 16, 10)])
    (got,) = m.run(x.reshape(1, 1, 1, 10))
    assert got.reshape(-1).tolist() == list(range(8)) + [0, 0]  # 10 bytes = 2 words + 2 uncopied


def resize_ref(x, oh, ow, mode, align):
    n, c, h, w = x.shape
    hs, ws = F32(F32(h) / F32(oh)), F32(F32(w) / F32(ow))
    out = np.empty((n, c, oh, ow), x.dtype)
    if mode == 1:
        for b, ch, y, xx in itertools.product(range(n), range(c), range(oh), range(ow)):
            out[b, ch, y, xx] = x[b, ch, min(int(math.floor(F32(y) * hs)), h - 1), min(int(math.floor(F32(xx) * ws)), w - 1)]
        return out
    if align and oh > 1:
        hs = F32(F32(h - 1) / F32(oh - 1))
    if align and ow > 1:
        ws = F32(F32(w - 1) / F32(ow - 1))
    one = F32(1)
    for b, ch, y, xx in itertools.product(range(n), range(c), range(oh), range(ow)):
        fy, fx = F32(F32(y) * hs), F32(F32(xx) * ws)
        y0, x0 = int(math.floor(fy)), int(math.floor(fx))
        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
        dy, dx = F32(fy - F32(y0)), F32(fx - F32(x0))
        a0, a1 = F32((one - dy) * (one - dx)), F32(dy * (one - dx))
        a2, a3 = F32((one - dy) * dx), F32(dy * dx)
        v = [F32(x[b, ch, yy, xq]) for yy, xq in ((y0, x0), (y1, x0), (y0, x1), (y1, x1))]
        r = F32(F32(F32(F32(v[0] * a0) + F32(v[1] * a1)) + F32(v[2] * a2)) + F32(v[3] * a3))
        out[b, ch, y, xx] = int(r) if x.dtype == np.uint8 else r
    return out


@pytest.mark.parametrize("mode,align", [(0, False), (0, True), (1, False)])
@pytest.mark.parametrize("dtype", [DU, DF])
def test_resize_image(mode, align, dtype):
    s, oh, ow = (1, 2, 5, 7), 8, 3
    x = RNG.integers(0, 256, s).astype(np.uint8 if dtype == DU else F32)
    es = 1 if dtype == DU else 4
    n_in, n_out = x.size * es, 2 * oh * ow * es
    body = (mr(MAIN, dtype, 0, n_in) + mr(MAIN, dtype, n_in, n_out) + shp(*s) + struct.pack("<iiI", oh, ow, mode)
            + bytes([int(align), 0, 0, 0]))
    m = single_op(0x0A, body, n_in + n_out, [(mr(MAIN, dtype, 0, n_in), s)], [mr(MAIN, dtype, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got, resize_ref(x, oh, ow, mode, align))


def test_softmax():
    x = rand_f32(3, 7)
    x[1, 3] = np.nan  # a NaN after the first element: the C max skips it, the row is NaN anyway
    x[2, :3] = [-0.0, 0.0, -0.0]
    x[2, 3:] = -1.0
    body = mr(MAIN, DF, 0, 84) + mr(MAIN, DF, 84, 84) + struct.pack("<iif", 7, 3, 0.75)
    m = single_op(0x0B, body, 168, [(mr(MAIN, DF, 0, 84), (1, 1, 3, 7))], [mr(MAIN, DF, 84, 84)])
    (got,) = m.run(x.reshape(1, 1, 3, 7))
    want = np.empty((3, 7), F32)
    for r in range(3):
        mx = x[r, 0]
        for v in x[r, 1:]:
            mx = v if mx < v else mx
        with np.errstate(all="ignore"):
            e = [F32(np.exp(np.float64(F32(F32(v - mx) * F32(0.75))))) for v in x[r]]
            s = F32(0)
            for v in e:
                s = F32(s + v)
            want[r] = [F32(v / s) for v in e]
    assert same_bits(got.reshape(3, 7), want)


@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (3, 1, 0, 2), (0, 1, 3, 2)])
def test_transpose(perm):
    s = (2, 3, 4, 5)
    x = np.arange(120, dtype=np.uint8).reshape(s)
    body = mr(MAIN, DU, 0, 120) + mr(MAIN, DU, 120, 120) + shp(*s) + shp(*perm)
    m = single_op(0x0C, body, 240, [(mr(MAIN, DU, 0, 120), s)], [mr(MAIN, DU, 120, 120)])
    (got,) = m.run(x)
    assert same_bits(got, np.ascontiguousarray(x.transpose(perm)))


def test_strided_slice_with_negative_stride():
    s = (1, 3, 6, 5)
    x = rand_f32(*s)
    begin, end, strides = (0, 2, 5, 0), (1, -1, 0, 5), (1, -1, -2, 2)
    want = np.array([x[d0, d1, d2, d3] for d0 in range(0, 1) for d1 in range(2, -1, -1) for d2 in range(5, 0, -2)
                     for d3 in range(0, 5, 2)], F32)
    n_in, n_out = x.size * 4, want.size * 4
    body = (mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + shp(*s) + shp(*begin) + shp(*end) + shp(*strides)
            + struct.pack("<5i", 0, 0, 0, 0, 0))
    m = single_op(0x0D, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), s)], [mr(MAIN, DF, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got.reshape(-1), want)
    assert got.shape == (1, 3, 3, 3)


UNARY = [np.abs, np.ceil, np.cos, np.exp, np.floor, np.log, np.negative, lambda v: 1.0 / np.sqrt(v), np.sin, lambda v: v * v]


@pytest.mark.parametrize("op", range(10))
def test_unary(op):
    x = np.concatenate([rand_f32(30), np.array([0.0, -0.0, 1e-40, 88.7, -1.0, 2.5, -2.5], F32)])
    n = x.size * 4
    body = mr(MAIN, DF, 0, n) + mr(MAIN, DF, n, n) + struct.pack("<I", op)
    m = single_op(0x0E, body, 2 * n, [(mr(MAIN, DF, 0, n), (1, 1, 1, x.size))], [mr(MAIN, DF, n, n)])
    (got,) = m.run(x.reshape(1, 1, 1, -1))
    with np.errstate(all="ignore"):
        if op in (2, 3, 5, 8):  # libm functions: correctly rounded double result, rounded to float
            want = UNARY[op](x.astype(np.float64)).astype(F32)
        elif op == 7:
            want = (F32(1) / np.sqrt(x)).astype(F32)
        else:
            want = UNARY[op](x).astype(F32)
    assert same_bits(got.reshape(-1), want)


def rshift_round(v: int, s: int) -> int:
    return (v + (1 << (s - 1))) >> s if s > 0 else v


def wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def test_quantized_conv2d_bias_before_weights():
    x = RNG.integers(0, 256, (1, 4, 5, 6)).astype(np.uint8)
    w = RNG.integers(0, 256, (6, 2, 3, 3)).astype(np.uint8)
    bias = RNG.integers(-5000, 5000, 6).astype(np.int32)
    groups, pads, stride, dil = 2, ((1, 0), (2, 1)), (1, 2), (1, 1)
    in_off, w_off, mul, shift, out_off = -120, -131, 1234567, 30, 77
    oh = (5 + 1 - 3 + 1) // 1
    ow = (6 + 3 - 3 + 2) // 2
    want = np.empty((1, 6, oh, ow), np.uint8)
    for o, oy, ox in itertools.product(range(6), range(oh), range(ow)):
        g = o // 3
        v = int(bias[o])
        for i, ky, kx in itertools.product(range(2), range(3), range(3)):
            iy, ix = oy - 1 + ky, ox * 2 - 2 + kx
            if 0 <= iy < 5 and 0 <= ix < 6:
                v += (int(x[0, g * 2 + i, iy, ix]) + in_off) * (int(w[o, i, ky, kx]) + w_off)
        r = wrap32(rshift_round(wrap32(v) * mul, shift)) + out_off
        want[0, o, oy, ox] = min(max(r, 0), 255)
    n_in, n_out = x.size, want.size
    body = (mr(MAIN, DU, 0, n_in) + mr(MAIN, DU, n_in, n_out) + shp(*x.shape) + struct.pack("<2i", groups, 6)
            + struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", 3, 3, *stride, *dil)
            + struct.pack("<5i", in_off, w_off, mul, shift, out_off) + i32b(bias) + w.tobytes())
    m = single_op(0x0F, body, n_in + n_out, [(mr(MAIN, DU, 0, n_in), x.shape)], [mr(MAIN, DU, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got, want)


def test_quantized_matmul():
    a = RNG.integers(0, 256, (3, 5)).astype(np.uint8)
    b = RNG.integers(0, 256, (5, 4)).astype(np.uint8)
    bias = RNG.integers(-100000, 100000, 4).astype(np.int32)
    a_off, b_off, mul, shift, out_off = -128, -3, 40000, 24, 100
    want = np.empty((3, 4), np.uint8)
    for r, c in itertools.product(range(3), range(4)):
        v = int(bias[c]) + sum((int(a[r, i]) + a_off) * (int(b[i, c]) + b_off) for i in range(5))
        want[r, c] = min(max(wrap32(rshift_round(v * mul, shift)) + out_off, 0), 255)
    body = (mr(MAIN, DU, 0, 15) + mr(CONST, DU, 0, 20) + mr(MAIN, DU, 16, 12)
            + struct.pack("<8i", 3, 5, 4, a_off, b_off, mul, shift, out_off) + i32b(bias))
    m = single_op(0x10, body, 28, [(mr(MAIN, DU, 0, 15), (1, 1, 3, 5))], [mr(MAIN, DU, 16, 12)], b.tobytes())
    (got,) = m.run(a.reshape(1, 1, 3, 5))
    assert same_bits(got, want)


def cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


@pytest.mark.parametrize("op", range(6))
@pytest.mark.parametrize("broadcast", ["none", "rows", "scalar"])
def test_quantized_binary(op, broadcast):
    sa, sb = (1, 2, 3, 4), {"none": (1, 2, 3, 4), "rows": (1, 1, 3, 1), "scalar": (1, 1, 1, 1)}[broadcast]
    a = RNG.integers(0, 256, sa).astype(np.uint8)
    b = RNG.integers(0, 256, sb).astype(np.uint8)
    p = dict(a_off=-120, a_mul=23456, a_shift=9, b_off=-7, b_mul=3000, b_shift=8, out_off=13, out_mul=19000, out_shift=12)
    if op == 2:
        p.update(out_mul=70, out_shift=14)
    fn = {0: lambda x, y: x + y, 1: lambda x, y: x - y, 2: lambda x, y: x * y,
          3: lambda x, y: cdiv(x + cdiv(y, 2), y) if y else 0, 4: min, 5: max}[op]
    want = np.empty(sa, np.uint8)
    for idx in itertools.product(*map(range, sa)):
        av = wrap32(rshift_round((int(a[idx]) + p["a_off"]) * p["a_mul"], p["a_shift"]))
        bv = wrap32(rshift_round((int(b[reduced(idx, sb)]) + p["b_off"]) * p["b_mul"], p["b_shift"]))
        r = wrap32(rshift_round(wrap32(fn(av, bv)) * p["out_mul"], p["out_shift"])) + p["out_off"]
        want[idx] = min(max(r, 0), 255)
    body = (mr(MAIN, DU, 0, 24) + mr(CONST, DU, 0, b.size) + mr(MAIN, DU, 32, 24) + struct.pack("<I", op)
            + shp(*sa) + shp(*sb) + shp(*sa)
            + struct.pack("<9i", p["a_off"], p["a_mul"], p["a_shift"], p["b_off"], p["b_mul"], p["b_shift"],
                          p["out_off"], p["out_mul"], p["out_shift"]))
    m = single_op(0x11, body, 56, [(mr(MAIN, DU, 0, 24), sa)], [mr(MAIN, DU, 32, 24)], b.tobytes())
    (got,) = m.run(a)
    assert same_bits(got, want)


def test_table_lookup1d():
    table = RNG.integers(0, 256, 256).astype(np.uint8)
    x = np.arange(256, dtype=np.uint8)[::-1].copy()
    body = mr(MAIN, DU, 0, 256) + mr(CONST, DU, 0, 256) + mr(MAIN, DU, 256, 256)
    m = single_op(0x12, body, 512, [(mr(MAIN, DU, 0, 256), (1, 1, 16, 16))], [mr(MAIN, DU, 256, 256)], table.tobytes())
    (got,) = m.run(x.reshape(1, 1, 16, 16))
    assert same_bits(got.reshape(-1), table[x])


def test_table_lookup1d_rejects_float_input():
    body = mr(MAIN, DF, 0, 256) + mr(CONST, DU, 0, 256) + mr(MAIN, DU, 256, 64)
    with pytest.raises(Exception, match="uint8"):
        single_op(0x12, body, 512, [(mr(MAIN, DF, 0, 256), (1, 1, 1, 64))], [mr(MAIN, DU, 256, 64)], bytes(256))


def test_conv2d_transpose_ignores_bias():
    x = rand_f32(1, 4, 3, 4)
    w = rand_f32(6, 2, 3, 2, scale=1.0)
    groups, stride, dil, pads = 2, (2, 3), (1, 1), ((1, 0), (0, 1))
    so = (1, 6, 6, 10)
    want = np.zeros(so, F32)
    gic, goc = 2, 3
    for g, i, iy, ix in itertools.product(range(groups), range(gic), range(3), range(4)):
        v = x[0, g * gic + i, iy, ix]
        for o, ky, kx in itertools.product(range(goc), range(3), range(2)):
            oy, ox = iy * stride[0] - pads[0][0] + ky * dil[0], ix * stride[1] - pads[1][0] + kx * dil[1]
            if 0 <= oy < so[2] and 0 <= ox < so[3]:
                want[0, g * goc + o, oy, ox] = F32(want[0, g * goc + o, oy, ox] + F32(v * w[g * goc + o, i, ky, kx]))
    want = np.array([cclamp(v, F32(-1.0), F32(1.0)) for v in want.reshape(-1)], F32).reshape(so)
    n_in, n_out = x.size * 4, want.size * 4
    body = (mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + shp(*x.shape) + shp(*so) + struct.pack("<i", groups)
            + struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", 3, 2, *stride, *dil) + vr(-1.0, 1.0)
            + f32b(w) + f32b(np.full(6, 100.0)))
    m = single_op(0x13, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), x.shape)], [mr(MAIN, DF, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got, want)


def test_nnil_unary_method_program():
    # clamp(sin(x+1)*(x+1) + 1/(x*x), -2, ldc 3.5) with a dup (of a computed value) and a pop
    code = bytes([0x03, 0x05, 0x40, 0x01, 0x28, 0x42, 0x05, 0x03, 0x29, 0x43, 0x40, 0x04, 0x02, 0x06]) + struct.pack("<f", -2.0)
    code += bytes([0x06]) + struct.pack("<f", 3.5) + bytes([0x80, 0xA0])
    x = np.concatenate([rand_f32(20), np.array([0.0, -0.0, 1e-20], F32)])
    n = x.size * 4
    body = mr(MAIN, DF, 0, n) + mr(MAIN, DF, n, n) + code
    m = single_op(0x14, body, 2 * n, [(mr(MAIN, DF, 0, n), (1, 1, 1, x.size))], [mr(MAIN, DF, n, n)])
    (got,) = m.run(x.reshape(1, 1, 1, -1))
    want = []
    for v in x:
        with np.errstate(all="ignore"):
            u = F32(v + F32(1.0))
            s = F32(np.sin(np.float64(u)))
            t = F32(F32(s * u) + F32(F32(1.0) / F32(v * v)))
        want.append(cclamp(t, F32(-2.0), F32(3.5)))
    assert same_bits(got.reshape(-1), np.array(want, F32))
    assert "ret" in m.layers[0].details["nnil"][-1]
    # a second run with other data must not reuse the first run's shared (dup) value
    (again,) = m.run((x * 2).reshape(1, 1, 1, -1))
    (fresh,) = single_op(0x14, body, 2 * n, [(mr(MAIN, DF, 0, n), (1, 1, 1, x.size))], [mr(MAIN, DF, n, n)]).run(
        (x * 2).reshape(1, 1, 1, -1))
    assert same_bits(again, fresh) and not same_bits(again, got)


@pytest.mark.parametrize("code,msg", [(bytes([0x03, 0x40, 0xA0]), "underflow"), (bytes([0x03, 0x07, 0xA0]), "invalid opcode 0x07"),
                                      (bytes([0x03, 0x26]), "without 'ret'"), (bytes([0x04] * 5 + [0x06, 0, 0]), "past the end"),
                                      (bytes([0x04] * 65 + [0xA0]), "overflow")])
def test_nnil_rejects_bad_programs(code, msg):
    from maixemu.kmodel import KmodelFormatError

    body = mr(MAIN, DF, 0, 16) + mr(MAIN, DF, 16, 16) + code
    w = V4Writer(32).input(mr(MAIN, DF, 0, 16), (1, 1, 1, 4)).output(mr(MAIN, DF, 16, 16)).node(0x14, body)
    data = w.build()  # body starts 8-aligned: 32 bytes of ranges + 8 code bytes end exactly at the body end
    with pytest.raises(KmodelFormatError, match=msg) as err:
        load_v4(data)
    assert err.value.offset is not None and err.value.offset > 0


# --- cpu_* (NHWC) ---------------------------------------------------------------------------


@pytest.mark.parametrize("depthwise", [False, True])
def test_cpu_conv2d(depthwise):
    s = (1, 5, 6, 3)  # NHWC
    x = rand_f32(*s)
    oc = 3 if depthwise else 4
    w = rand_f32(oc, 3, 2, 1 if depthwise else 3, scale=1.0)  # [oc][kh][kw][ic]
    bias = rand_f32(oc)
    pads, stride, dil, act = ((1, 1), (0, 1)), (1, 2), (2, 1), (-4.0, 4.0)
    w_nchw = w.transpose(0, 3, 1, 2)
    want = conv_ref(x.transpose(0, 3, 1, 2), w_nchw, bias, 3 if depthwise else 1, stride, dil, pads, act, "kkc")
    want = np.ascontiguousarray(want.transpose(0, 2, 3, 1))
    n_in, n_out = x.size * 4, want.size * 4
    geo = struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", 3, 2, *stride, *dil) + vr(*act)
    body = mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + shp(*s) + (b"" if depthwise else struct.pack("<i", oc)) + geo
    body += f32b(w) + f32b(bias)
    m = single_op(0x1002 if depthwise else 0x1001, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), s)], [mr(MAIN, DF, n_in, n_out)])
    (got,) = m.run(x)
    assert same_bits(got, want)


@pytest.mark.parametrize("depthwise", [False, True])
def test_cpu_quantized_conv2d_subtracts_offsets_and_reads_weights_before_bias(depthwise):
    s = (1, 4, 5, 3)
    x = RNG.integers(0, 256, s).astype(np.uint8)
    oc = 3 if depthwise else 2
    w = RNG.integers(0, 256, (oc, 3, 3, 1 if depthwise else 3)).astype(np.uint8)
    bias = RNG.integers(-3000, 3000, oc).astype(np.int32)
    in_off, w_off, mul, shift, out_off = 120, 131, 5000, 20, 9
    pads, stride, dil = ((1, 1), (1, 1)), (1, 1), (1, 1)
    want = np.empty((1, 4, 5, oc), np.uint8)
    for oy, ox, o in itertools.product(range(4), range(5), range(oc)):
        v = int(bias[o])
        for ky, kx in itertools.product(range(3), range(3)):
            iy, ix = oy - 1 + ky, ox - 1 + kx
            if 0 <= iy < 4 and 0 <= ix < 5:
                if depthwise:
                    v += (int(x[0, iy, ix, o]) - in_off) * (int(w[o, ky, kx, 0]) - w_off)
                else:
                    v += sum((int(x[0, iy, ix, i]) - in_off) * (int(w[o, ky, kx, i]) - w_off) for i in range(3))
        want[0, oy, ox, o] = min(max(wrap32(rshift_round(wrap32(v) * mul, shift)) + out_off, 0), 255)
    geo = struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", 3, 3, *stride, *dil)
    body = mr(MAIN, DU, 0, x.size) + mr(MAIN, DU, 64, want.size) + shp(*s) + (b"" if depthwise else struct.pack("<i", oc)) + geo
    body += struct.pack("<5i", in_off, w_off, mul, shift, out_off) + w.tobytes() + i32b(bias)
    m = single_op(0x1005 if depthwise else 0x1004, body, 64 + want.size, [(mr(MAIN, DU, 0, x.size), s)],
                  [mr(MAIN, DU, 64, want.size)])
    (got,) = m.run(x)
    assert same_bits(got, want)


def test_compiled_host_quantize_matches_the_numpy_kernel():
    """The one-pass compiled quantize (fast engine) against ``v4_float.quantize``: random values
    around every rounding boundary and the int32 edge, NaN and infinities, several scales."""
    from maixemu.kmodel.kpu import fast

    kernels = fast.kernels()
    if kernels is None:
        pytest.skip(fast.unavailable_reason() or "fast engine off")
    rng = np.random.default_rng(77)
    edges = np.array([np.nan, np.inf, -np.inf, 2.0**31, 2.0**31 - 128, -(2.0**31), 0.5, -0.5, 254.5, 255.5, -0.0], F32)
    for scale, zp in [(1.0, 0), (22.34, 131), (0.0173, 7), (3.0e7, 200), (1e-3, -5)]:
        x = np.concatenate([(rng.standard_normal(20000) * 300 / scale).astype(F32), (rng.integers(-600, 600, 5000) / 2 / scale).astype(F32), edges])
        out = np.empty(x.size, np.uint8)
        kernels.quantize_host(x, F32(scale), F32(zp), out)
        np.testing.assert_array_equal(out, vf.quantize(x, zp, scale, "host"))
