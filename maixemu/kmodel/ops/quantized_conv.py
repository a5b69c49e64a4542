"""nncase v0.2's quantized convolutions (``quantized_conv2d``, NCHW; ``cpu_quantized_conv2d`` and
``cpu_quantized_depthwise_conv2d``, NHWC) and ``quantized_matmul``, prepared once and run on the
KPU engine's exact fast paths.

``acc = bias + Σ (x + in_add)·(w + w_add)`` over the taps inside the map, wrapped to int32, then
``requantize``. nncase's offsets are minus zero points in 0..255, so with ``a0 = −in_add`` and
``b0 = −w_add`` the sums are ``Σ (x − a0)·(w − b0)`` — ``MatMulInteger`` itself, where a tap
outside the map reads ``a0`` and adds nothing. Each group's GEMM takes the product
``kpu.products`` proves exact for its weights on this CPU (u8s8, u8u8, else float sums below
2**24 / 2**53) over rows written by ``kernels.im2col_taps`` (none for an unpadded 1×1 layer on
HWC maps), in row tiles of about ``TILE_BYTES``, and ``kernels.requantize_rows`` finishes them
into the output layout. Depthwise layers (one input channel per group) take one compiled loop
(``kernels.qconv_depthwise``, int32 sums when they fit). Offsets outside 0..255 (no compiler
emits them), the numpy engine and a first run before the kernels are loaded use the exact int64
form of ``ops.v4_quant.quantized_conv2d``: the same bytes.
"""

from __future__ import annotations

import numpy as np

from ..kpu import fast
from ..kpu.blas import blas_threads
from ..kpu.parallel import _scratch, scratch_array
from ..kpu.products import ProductPlan, ProductsInexact, choose
from . import v4_quant as vq

I64 = np.int64


class QuantizedConv:
    """One prepared quantized convolution; ``run(x, out)`` with ``x`` and ``out`` in ``layout``
    ("NCHW" or "NHWC"), ``out`` the node's output view (written, never read)."""

    #: Target bytes of one row tile's GEMM source and sums (tests lower it to exercise tiling).
    TILE_BYTES = 1 << 20

    def __init__(self, w: np.ndarray, bias: np.ndarray, groups: int, stride: tuple[int, int], dilation: tuple[int, int],
                 pads: tuple[tuple[int, int], tuple[int, int]], in_add: int, w_add: int, mul: int, shift: int, out_off: int,
                 in_shape: tuple[int, int, int, int], layout: str):
        """``w`` uint8 [OC, IC/groups, KH, KW]; ``in_shape`` (N, C, H, W) whatever the layout."""
        self.w, self.bias, self.groups = w, bias, groups
        self.stride, self.dilation, self.pads = stride, dilation, pads
        self.in_add, self.w_add, self.mul, self.shift, self.out_off = in_add, w_add, mul, shift, out_off
        self.layout = layout
        n, c, h, wd = in_shape
        oc, gic, kh, kw = w.shape
        self.in_hw, self.channels = (h, wd), c
        self.out_hw = (vq.out_size(h, kh, stride[0], dilation[0], pads[0]), vq.out_size(wd, kw, stride[1], dilation[1], pads[1]))
        self.goc, self.gic = oc // groups, gic
        self.refused: list[str] = []
        self.plans: list[ProductPlan] = []
        self.compiled = _compiled_engine()
        a0, b0 = -in_add, -w_add
        self.path = "int64"
        if not self.compiled:
            self.refused.append("fast paths: the numpy engine (MAIXEMU_KPU_ENGINE=numpy, or numba missing)")
            return
        if not (0 <= a0 <= 255 and 0 <= b0 <= 255):
            self.refused.append("fast paths: the offsets are not zero points in 0..255")
            return
        self.a0, self.b0 = a0, b0
        self.bias64 = bias.astype(I64)
        taps = kh * kw
        if gic == 1 and groups == c:
            self.path = "dw"
            wt = (w.reshape(oc, taps).astype(I64) + w_add).T  # [taps, OC]
            narrow = 255 * int(np.abs(wt).max(initial=0)) * taps < 1 << 31
            self.wt = np.ascontiguousarray(wt, dtype=np.int32 if narrow else I64)
            self.acc = np.zeros(0, self.wt.dtype)
            self._schedule()
            return
        xmax = max(a0, 255 - a0)
        try:
            for g in range(groups):
                wg = w[g * self.goc : (g + 1) * self.goc]
                w_kn = np.ascontiguousarray(wg.transpose(2, 3, 1, 0).reshape(taps * gic, self.goc))  # rows (ky, kx, i)
                self.plans.append(choose(w_kn, w_kn.astype(I64) - b0, b_zero=b0, a_zero=a0, xmax=xmax))
        except ProductsInexact as why:
            self.path, self.plans = "int64", []
            self.refused.append(f"fast paths: {why}")
            return
        self.path = self.plans[0].kind
        self.refused = list(self.plans[0].refused)
        self.wmats: list[np.ndarray | None] = [None if p.gemm is not None else np.ascontiguousarray(
            w[g * self.goc : (g + 1) * self.goc].transpose(2, 3, 1, 0).reshape(taps * gic, self.goc).astype(I64) - b0, dtype=p.dtype)
            for g, p in enumerate(self.plans)]
        self.tiles = self._row_tiles()
        self._schedule()

    # -------------------------------------------------------------------------------------------
    def _row_tiles(self) -> list[tuple[int, int]]:
        """Output rows per GEMM: each tile's source ([rows·OW, KH·KW·gic]) and sums about TILE_BYTES."""
        oh, ow = self.out_hw
        kh, kw = self.w.shape[2:]
        item = 1 if self.plans[0].gemm is not None else np.dtype(self.plans[0].dtype).itemsize
        per_row = ow * (kh * kw * self.gic * item + 8 * self.goc)
        step = max(1, self.TILE_BYTES // max(per_row, 1))
        return [(y0, min(oh, y0 + step)) for y0 in range(0, oh, step)]

    def _unpadded_pointwise(self) -> bool:
        kh, kw = self.w.shape[2:]
        return kh == kw == 1 and self.stride == (1, 1) and self.pads == ((0, 0), (0, 0)) and self.groups == 1

    def _schedule(self) -> None:
        """The kernels this layer calls, compiled or loaded in the background (``kpu.fast``)."""
        h, wd = self.in_hw
        x = np.zeros((h, wd, self.channels), np.uint8)
        oh, ow = self.out_hw
        if self.path == "dw":
            out = np.zeros((oh, ow, self.w.shape[0]), np.uint8)
            fast.schedule_kernel_warm_up("qconv_depthwise", (x, self.wt, I64(self.in_add), self.goc, 1, 1, 1, 1, 1, 1, 0, 0,
                                                             self.bias64, I64(1), 0, I64(0), self.acc, out))
        else:
            for plan in self.plans[:1]:
                dt = np.uint8 if plan.gemm is not None else plan.dtype
                a = np.zeros((ow, self.w.shape[2] * self.w.shape[3] * self.gic), dt)
                fast.schedule_kernel_warm_up("im2col_taps", (x, 0, self.gic, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, a))
                g = np.zeros((1, self.goc), np.int32 if plan.gemm is not None else plan.dtype)
                nchw = self.layout == "NCHW"
                flat = np.zeros((self.goc, 1) if nchw else (1, self.goc), np.uint8)  # (the shape the layout indexes)
                fast.schedule_kernel_warm_up("requantize_rows", (g, self.bias64[: self.goc], I64(1), 0, I64(0), flat, 0, 0, nchw))
        if self.layout == "NCHW":
            fast.schedule_kernel_warm_up("chw_to_hwc", (np.zeros((self.channels, h, wd), np.uint8), x))
            if self.path == "dw":
                fast.schedule_kernel_warm_up("hwc_to_chw", (np.zeros((oh, ow, self.w.shape[0]), np.uint8),
                                                            np.zeros((self.w.shape[0], oh, ow), np.uint8)))

    # -------------------------------------------------------------------------------------------
    def run(self, x: np.ndarray, out: np.ndarray) -> None:
        kn = fast.loaded_kernels() if self.path != "int64" else None
        if kn is None:
            self._run_reference(x, out)
            return
        if np.shares_memory(out, x):  # (the reference reads the whole input before it writes)
            x = x.copy()
        for b in range(x.shape[0]):
            if self.layout == "NCHW":
                h, wd = self.in_hw
                xb = _scratch("qconv_hwc", h * wd * self.channels, np.uint8).reshape(h, wd, self.channels)
                kn.chw_to_hwc(x[b], xb)
            else:
                xb = x[b]
            if self.path == "dw":
                self._run_depthwise(kn, xb, out[b])
            else:
                self._run_gemm(kn, xb, out[b])

    def _run_reference(self, x: np.ndarray, out: np.ndarray) -> None:
        (sh, sw), (dh, dw) = self.stride, self.dilation
        if self.layout == "NCHW":
            out[...] = vq.quantized_conv2d(x, self.w, self.bias, self.groups, sh, sw, dh, dw, *self.pads, self.in_add,
                                           self.w_add, self.mul, self.shift, self.out_off)
            return
        y = vq.quantized_conv2d(np.transpose(x, (0, 3, 1, 2)), self.w, self.bias, self.groups, sh, sw, dh, dw, *self.pads,
                                self.in_add, self.w_add, self.mul, self.shift, self.out_off)
        out[...] = np.transpose(y, (0, 2, 3, 1))

    def _run_depthwise(self, kn, xb: np.ndarray, ob: np.ndarray) -> None:
        (sh, sw), (dh, dw) = self.stride, self.dilation
        kh, kw = self.w.shape[2:]
        oc = self.w.shape[0]
        oh, ow = self.out_hw
        dst = ob if self.layout == "NHWC" else _scratch("qconv_out", oh * ow * oc, np.uint8).reshape(oh, ow, oc)
        kn.qconv_depthwise(xb, self.wt, I64(self.in_add), self.goc, kh, kw, sh, sw, dh, dw, self.pads[0][0], self.pads[1][0],
                           self.bias64, I64(self.mul), self.shift, I64(self.out_off), self.acc, dst)
        if self.layout == "NCHW":
            kn.hwc_to_chw(dst, ob)

    def _run_gemm(self, kn, xb: np.ndarray, ob: np.ndarray) -> None:
        (sh, sw), (dh, dw) = self.stride, self.dilation
        kh, kw = self.w.shape[2:]
        oh, ow = self.out_hw
        h, wd = self.in_hw
        nchw = self.layout == "NCHW"
        flat = ob.reshape(ob.shape[0], oh * ow) if nchw else ob.reshape(oh * ow, ob.shape[2])
        k = kh * kw * self.gic
        n = self.goc
        mul, off = I64(self.mul), I64(self.out_off)
        for g, (plan, wmat) in enumerate(zip(self.plans, self.wmats)):
            bias = self.bias64[g * n : (g + 1) * n]
            for y0, y1 in self.tiles:
                p = (y1 - y0) * ow
                if plan.gemm is not None:
                    if self._unpadded_pointwise():
                        a = xb.reshape(h * wd, self.channels)[y0 * ow : y1 * ow]
                    else:
                        a = scratch_array("qconv_cols", (p, k), np.uint8)
                        kn.im2col_taps(xb, g * self.gic, self.gic, kh, kw, sh, sw, dh, dw, self.pads[0][0], self.pads[1][0],
                                       self.a0, 0, y0, y1 - y0, a)
                    s = plan.gemm(a, scratch_array("qconv_sums", (p, n), np.int32))
                else:
                    assert wmat is not None  # (the float kinds' centred weights)
                    a = scratch_array("qconv_cols", (p, k), plan.dtype)
                    kn.im2col_taps(xb, g * self.gic, self.gic, kh, kw, sh, sw, dh, dw, self.pads[0][0], self.pads[1][0],
                                   self.a0, self.a0, y0, y1 - y0, a)
                    with blas_threads(1):  # (one BLAS thread per work item)
                        if len(plan.chunks) == 1:
                            s = np.matmul(a, wmat, out=scratch_array("qconv_sums", (p, n), plan.dtype))
                        else:
                            s = np.zeros((p, n), np.float64)
                            for k0, k1 in plan.chunks:
                                s += a[:, k0:k1] @ wmat[k0:k1]
                kn.requantize_rows(s, bias, mul, self.shift, off, flat, y0 * ow, g * n, nchw)


def _compiled_engine() -> bool:
    """Whether this layer may take the compiled kernels (``kpu.fast``: the engine choice and numba);
    an unknown engine name or a missing extra is reported by the KPU layers, not here."""
    try:
        return fast.compiled_available()
    except (ValueError, fast.FastEngineUnavailable):
        return False


class QuantizedMatmul:
    """nncase v0.2's ``quantized_matmul``, ``clamp(requant(bias[c] + Σ (a + a_off)(b + b_off)))``,
    with a constant B: the exact product ``kpu.products`` proves for B on this CPU (as a
    convolution's weights), then ``kernels.requantize_rows``. A B that lives in main memory (a
    runtime tensor), offsets that are no zero points and the numpy engine use the exact int64
    form (``ops.v4_quant.quantized_matmul``)."""

    def __init__(self, b: np.ndarray, constant: bool, bias: np.ndarray, a_off: int, b_off: int, mul: int, shift: int,
                 out_off: int):
        self.b, self.bias, self.a_off, self.b_off = b, bias, a_off, b_off
        self.mul, self.shift, self.out_off = mul, shift, out_off
        self.path, self.refused = "int64", []
        self.plan: ProductPlan | None = None
        a0, b0 = -a_off, -b_off
        if not _compiled_engine():
            self.refused.append("fast paths: the numpy engine (MAIXEMU_KPU_ENGINE=numpy, or numba missing)")
        elif not constant:
            self.refused.append("fast paths: B is a runtime tensor (nothing to prepare)")
        elif not (0 <= a0 <= 255 and 0 <= b0 <= 255):
            self.refused.append("fast paths: the offsets are not zero points in 0..255")
        else:
            try:
                w_kn = np.ascontiguousarray(b, dtype=np.uint8)
                self.plan = choose(w_kn, w_kn.astype(I64) - b0, b_zero=b0, a_zero=a0, xmax=max(a0, 255 - a0))
            except ProductsInexact as why:
                self.refused.append(f"fast paths: {why}")
        if self.plan is not None:
            self.path, self.refused, self.a0 = self.plan.kind, list(self.plan.refused), a0
            self.bias64 = bias.astype(I64)
            self.wmat = None if self.plan.gemm is not None else (w_kn.astype(I64) - b0).astype(self.plan.dtype)
            n = b.shape[1]
            fast.schedule_kernel_warm_up("requantize_rows", (np.zeros((1, n), np.int32 if self.plan.gemm is not None else self.plan.dtype),
                                                             self.bias64, I64(1), 0, I64(0), np.zeros((1, n), np.uint8), 0, 0, False))

    def run(self, a: np.ndarray, out: np.ndarray) -> None:
        kn = fast.loaded_kernels() if self.plan is not None else None
        if kn is None or self.plan is None:
            out[...] = vq.quantized_matmul(a, self.b, self.bias, self.a_off, self.b_off, self.mul, self.shift, self.out_off)
            return
        plan = self.plan
        if plan.gemm is not None:
            s = plan.gemm(np.ascontiguousarray(a), scratch_array("qmm_sums", (a.shape[0], self.b.shape[1]), np.int32))
        else:
            assert self.wmat is not None
            with blas_threads(1):
                s = (a.astype(self.wmat.dtype) - self.a0) @ self.wmat
        if np.shares_memory(out, a):
            s = s.copy()
        kn.requantize_rows(s, self.bias64, I64(self.mul), self.shift, I64(self.out_off), out, 0, 0, False)
