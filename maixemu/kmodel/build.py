"""A kmodel V3 writer: layer descriptions in, file bytes out (the layout nncase v0.1 writes).

Why: the real models exercise only a few KPU configurations (pool types 0/1/5/9, no 16-bit
weights, one activation shape per model). Tests build small models that cover every register
setting and compare them with a direct-loop reference; the bundled demo model
(``maixemu/tools/make_sample_model.py``) is made the same way. The output follows kmodel-v3.md
to the byte: 28-byte header, output table, layer headers, bodies padded to 8 bytes (padding
counted in ``body_size``), and inside a K210_CONV body the registers 8-aligned, weights and
batch-norm 128-aligned and the activation table 256-aligned at absolute file offsets.

Example::

    b = V3Builder(main_mem_usage=4 * 9)
    conv = ConvSpec(in_shape=(1, 8, 8), out_channels=1, kernel=3, weights=w, src_row=0,
                    dst_row=100, main_out=0)
    b.add_conv(conv)
    b.add_dequantize(0, 0 + 36, 9, scale=0.1, bias=0.0)   # hypothetical addresses
    b.add_output(36, 36)
    data = b.build()
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .kpu import POOL_GEOMETRY, layout
from .v3 import LAYER_CODES

U64 = (1 << 64) - 1


def _u(value: int, bits: int) -> int:
    """Two's-complement encoding of ``value`` in ``bits`` bits (raises if it does not fit)."""
    lo, hi = -(1 << (bits - 1)), (1 << bits) - 1
    if not lo <= value <= hi:
        raise ValueError(f"{value} does not fit in {bits} bits")
    return value & ((1 << bits) - 1)


@dataclass
class Activation:
    """16 segments: ``x_start`` (s36), ``y_mul`` (s16), ``shift`` (u8), ``bias`` (u8)."""

    x_start: Sequence[int]
    y_mul: Sequence[int]
    shift: Sequence[int]
    bias: Sequence[int]

    @classmethod
    def relu(cls, scale_shift: int = 0) -> "Activation":
        """The V3 compiler's ReLU table: segment 10 starts at 0 with ``y_mul=1024, shift=20``.

        ``scale_shift`` moves extra right-shift into the linear segment (out = bn / 2**(10+s)).
        """
        lowest = -(1 << 35)
        xs = [lowest] * 10 + [0] + [(1 << 35) - 16 + i for i in range(5)]
        ym = [0] * 10 + [1024] + [0] * 5
        sh = [0] * 10 + [20 + scale_shift] + [0] * 5
        return cls(xs, ym, sh, [0] * 16)

    @classmethod
    def identity(cls) -> "Activation":
        """``out = clamp(bn, 0, 255)``: segment 1 starts at 0 with slope 1 (bn ≤ 0 gives 0)."""
        lowest = -(1 << 35)
        xs = [lowest, 0] + [(1 << 35) - 16 + i for i in range(14)]
        return cls(xs, [0, 1] + [0] * 14, [0] * 16, [0] * 16)

    def encode(self) -> bytes:
        words = []
        for i in range(16):
            w = (self.shift[i] & 0xFF) | (_u(int(self.y_mul[i]), 16) << 8) | (_u(int(self.x_start[i]), 36) << 24)
            words.append(w)
        b = bytes(int(v) & 0xFF for v in self.bias)
        words.append(int.from_bytes(b[:8], "little"))
        words.append(int.from_bytes(b[8:16], "little"))
        return struct.pack("<18Q", *words)


def encode_batchnorm(mul: Sequence[int], add: Sequence[int], shift: Sequence[int]) -> bytes:
    """One u64 per output channel: ``norm_mul`` s24 | ``norm_add`` s32 << 24 | ``norm_shift`` u4 << 56."""
    words = [_u(int(m), 24) | (_u(int(a), 32) << 24) | ((int(s) & 0xF) << 56) for m, a, s in zip(mul, add, shift)]
    return struct.pack(f"<{len(words)}Q", *words)


@dataclass
class ConvSpec:
    """Geometry, quantisation and data of one K210_CONV layer (kpu-hardware.md §1–§5)."""

    in_shape: tuple[int, int, int]
    out_channels: int
    weights: np.ndarray  # [OC, IC or 1, k, k] unsigned (u8, or u16 with 16-bit weights)
    kernel: int = 3
    depthwise: bool = False
    pool_type: int = 0
    pad_value: int = 0
    arg_x: int = 0
    shr_x: int = 0
    arg_w: int = 0
    shr_w: int = 0
    arg_add: int = 0
    bn_mul: Sequence[int] | None = None
    bn_add: Sequence[int] | None = None
    bn_shift: Sequence[int] | None = None
    activation: Activation = field(default_factory=Activation.relu)
    src_row: int = 0
    dst_row: int = 0
    main_out: int | None = None
    o_ch_num_coef: int | None = None  # weight-load tiling; results do not depend on it

    @property
    def out_shape(self) -> tuple[int, int, int]:
        _, stride = POOL_GEOMETRY[self.pool_type]
        _, h, w = self.in_shape
        return (self.out_channels, h // stride, w // stride)

    def registers(self, weight_bytes: int = 1) -> list[int]:
        ic, ih, iw = self.in_shape
        oc, oh, ow = self.out_shape
        k = self.kernel
        gi, rli, _ = layout(iw)
        go, rlo, _ = layout(ow)
        coef = self.o_ch_num_coef if self.o_ch_num_coef is not None else oc
        per_oc = (1 if self.depthwise else ic) * k * k * weight_bytes
        load_time = -(-oc // coef) - 1
        limits = [
            ("i_ch_num", ic - 1, 10), ("o_ch_num", oc - 1, 10), ("i_row_wid", iw - 1, 10), ("i_col_high", ih - 1, 9),
            ("o_row_wid", ow - 1, 10), ("o_col_high", oh - 1, 9), ("channel_switch_addr", rli * ih, 15),
            ("wb_channel_switch_addr", rlo * oh, 15), ("channel_byte_num", ow * oh - 1, 16),
            ("para_size", coef * per_oc, 17), ("load_time", load_time, 6), ("pad_value", self.pad_value, 8),
            ("src_row", self.src_row, 15), ("dst_row", self.dst_row, 15), ("shr_x", self.shr_x, 4), ("shr_w", self.shr_w, 4),
        ]
        for name, value, bits in limits:
            if not 0 <= value < (1 << bits):
                raise ValueError(f"{name}={value} does not fit its {bits}-bit register field")
        w = [0] * 12
        w[0] = (1 if self.depthwise else 0) << 3
        w[1] = self.src_row | (self.dst_row << 32)
        w[2] = (ic - 1) | ((oc - 1) << 32) | ((coef - 1) << 48)
        w[3] = (iw - 1) | ((ih - 1) << 10) | ((ow - 1) << 32) | ((oh - 1) << 42)
        w[4] = (1 if k == 3 else 0) | (self.pool_type << 4) | (1 << 10) | (15 << 16) | (self.pad_value << 24)
        w[5] = 1 | (load_time << 1) | ((coef * per_oc) << 15)
        w[6] = 0
        w[7] = (rli * ih) | (rli << 16) | (gi << 28) | (1 << 31)
        w[8] = (rlo * oh) | (rlo << 16) | (go << 20)
        w[9] = self.shr_w | (self.shr_x << 4) | (_u(self.arg_w, 24) << 8) | (_u(self.arg_x, 24) << 32)
        w[10] = _u(self.arg_add, 40)
        w[11] = ((ow * oh - 1) << 16) | ((ow * oh * oc - 1) << 32)
        return w


class V3Builder:
    """Collects layers and writes a V3 file. Addresses are main-memory bytes / KPU rows."""

    def __init__(self, main_mem_usage: int, *, eight_bit: bool = True, max_start_address: int | None = None):
        self.main_mem_usage = main_mem_usage
        self.eight_bit = eight_bit
        self.max_start_address = max_start_address
        self.layers: list[tuple[int, Callable[[int], bytes]]] = []  # (code, body maker: file offset -> body)
        self.outputs: list[tuple[int, int]] = []
        self._min_row = 32768

    # ------------------------------------------------------------------ layers
    def add_output(self, address: int, size: int) -> None:
        self.outputs.append((address, size))

    def add_conv(self, spec: ConvSpec) -> None:
        wb = 1 if self.eight_bit else 2
        regs = spec.registers(wb)
        oc = spec.out_channels
        weights = np.asarray(spec.weights)
        k = spec.kernel
        expect = (oc, 1 if spec.depthwise else spec.in_shape[0], k, k)
        if weights.shape != expect:
            raise ValueError(f"weights must be shaped {expect}, got {weights.shape}")
        wbytes = weights.astype("<u1" if wb == 1 else "<u2").tobytes()
        mul = spec.bn_mul if spec.bn_mul is not None else [1] * oc
        add = spec.bn_add if spec.bn_add is not None else [0] * oc
        shift = spec.bn_shift if spec.bn_shift is not None else [0] * oc
        bn = encode_batchnorm(mul, add, shift)
        act = spec.activation.encode()
        flags = 1 if spec.main_out is not None else 0
        main_out = spec.main_out or 0
        self._min_row = min(self._min_row, spec.src_row, spec.dst_row)

        def body(start: int) -> bytes:
            out = bytearray(24)
            pos = start + 24

            def place(blob: bytes, align: int) -> int:
                nonlocal pos
                off = -(-pos // align) * align
                out.extend(b"\0" * (off - pos))
                out.extend(blob)
                pos = off + len(blob)
                return off

            layer_off = place(struct.pack("<12Q", *regs), 8)
            w_off = place(wbytes, 128)
            bn_off = place(bn, 128)
            act_off = place(act, 256)
            struct.pack_into("<6I", out, 0, flags, main_out, layer_off, w_off, bn_off, act_off)
            return bytes(out)

        self.layers.append((LAYER_CODES["K210_CONV"], body))

    def add_raw(self, kind: str, payload: bytes) -> None:
        """Any layer from its packed body (``flags`` first), e.g. for hand-made corrupt files."""
        def body(start: int) -> bytes:
            return payload

        self.layers.append((LAYER_CODES[kind], body))

    def add_dequantize(self, main_in: int, main_out: int, count: int, scale: float, bias: float) -> None:
        self.add_raw("DEQUANTIZE", struct.pack("<4I2f", 0, main_in, main_out, count, scale, bias))

    def add_quantize(self, main_in: int, main_out: int, count: int, scale: float, bias: float) -> None:
        self.add_raw("QUANTIZE", struct.pack("<4I2f", 0, main_in, main_out, count, scale, bias))

    def add_softmax(self, main_in: int, main_out: int, channels: int) -> None:
        self.add_raw("SOFTMAX", struct.pack("<4I", 0, main_in, main_out, channels))

    def add_logistic(self, main_in: int, main_out: int, channels: int) -> None:
        self.add_raw("LOGISTIC", struct.pack("<4I", 0, main_in, main_out, channels))

    def add_fully_connected(self, main_in: int, main_out: int, weights: np.ndarray, bias: np.ndarray, act: int = 0) -> None:
        weights = np.asarray(weights, dtype="<f4")
        out_c, in_c = weights.shape
        payload = struct.pack("<6I", 0, main_in, main_out, in_c, out_c, act) + weights.tobytes() + np.asarray(bias, "<f4").tobytes()
        self.add_raw("FULLY_CONNECTED", payload)

    def add_flatten(self, main_in: int, main_out: int, width: int, height: int, channels: int) -> None:
        self.add_raw("TENSORFLOW_FLATTEN", struct.pack("<6I", 0, main_in, main_out, width, height, channels))

    def add_padding(self, main_in: int, kpu_row: int, channels: int) -> None:
        self._min_row = min(self._min_row, kpu_row)
        self.add_raw("K210_ADD_PADDING", struct.pack("<4I", 0, main_in, kpu_row, channels))

    def remove_padding(self, main_in: int, main_out: int, channels: int) -> None:
        self.add_raw("K210_REMOVE_PADDING", struct.pack("<4I", 0, main_in, main_out, channels))

    def add_upload(self, main_in: int, kpu_row: int, width: int, height: int, channels: int) -> None:
        self._min_row = min(self._min_row, kpu_row)
        self.add_raw("K210_UPLOAD", struct.pack("<6I", 0, main_in, kpu_row, width, height, channels))

    # ------------------------------------------------------------------ file
    def build(self) -> bytes:
        n_layers, n_out = len(self.layers), len(self.outputs)
        start = 28 + 8 * n_out + 8 * n_layers
        bodies: list[bytes] = []
        pos = start
        for code, make in self.layers:
            blob = make(pos)
            padded = blob + b"\0" * ((-(pos + len(blob))) % 8)
            bodies.append(padded)
            pos += len(padded)
        max_start = self.max_start_address if self.max_start_address is not None else self._min_row
        head = struct.pack("<7I", 3, 1 if self.eight_bit else 0, 0, n_layers, max_start, self.main_mem_usage, n_out)
        outs = b"".join(struct.pack("<2I", a, s) for a, s in self.outputs)
        hdrs = b"".join(struct.pack("<2I", code, len(body)) for (code, _), body in zip(self.layers, bodies))
        return head + outs + hdrs + b"".join(bodies)
