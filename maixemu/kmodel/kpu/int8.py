"""Exact int8 products through onnxruntime's ``MatMulInteger`` (u8 × s8, weights prepacked).

Why it is exact: a K210 layer's sums are ``G = Σ (x − 128)·(w − zp)`` with uint8 ``x``, uint8
``w`` and the weights' zero point ``zp = −(arg_x >> shr_x)`` in 0..255, so with ``A = x`` (zero
point 128) and ``B = w − 128`` as int8 (zero point ``zp − 128``) ``MatMulInteger`` computes the
very same integers, and ``|G| ≤ 128·255·9216 < 2**31`` for any KPU layer (1024 channels × 9 taps).
The caveat: without VNNI/AMX, onnxruntime's u8s8 kernel adds pairs of products in saturating
16 bits (``vpmaddubsw``), which two large same-sign weights next to each other overflow. The
worst case for every pair at once is an all-255 input row, so each layer's own weights are run
once at load on all-255, all-0, alternating and random rows and compared with int64 numpy;
only a layer that passes takes this path (``Int8Gemm.build`` returns None otherwise).
"""

from __future__ import annotations

import os
import threading

import numpy as np

_LOCK = threading.Lock()
_ORT = None
_ORT_ERROR: str | None = None


def _runtime():
    global _ORT, _ORT_ERROR
    with _LOCK:
        if _ORT is None and _ORT_ERROR is None:
            try:
                import onnx  # noqa: F401  (builds the one-node graphs)
                import onnxruntime

                _ORT = onnxruntime
            except ImportError as exc:
                _ORT_ERROR = f"onnxruntime/onnx not installed ({exc}); install maixemu[fast]"
    return _ORT


def int8_enabled() -> bool:
    """``MAIXEMU_KPU_INT8=0`` keeps the compiled engine on float products (to compare or test)."""
    return os.environ.get("MAIXEMU_KPU_INT8", "1").strip() != "0"


def unavailable_reason() -> str | None:
    _runtime()
    return _ORT_ERROR


def _graph(b: np.ndarray, b_zero: int) -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    k, n = b.shape
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B", "a_zero", "b_zero"], ["Y"])],
        "kpu_conv",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [None, k])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [None, n])],
        [numpy_helper.from_array(b, "B"), numpy_helper.from_array(np.array(128, np.uint8), "a_zero"),
         numpy_helper.from_array(np.array(b_zero, np.int8), "b_zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def _session(b: np.ndarray, b_zero: int, threads: int):
    ort = _runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    return ort.InferenceSession(_graph(b, b_zero), options, providers=["CPUExecutionProvider"])


def _proof_rows(k: int) -> np.ndarray:
    rng = np.random.default_rng(k)
    rows = [np.full(k, 255, np.uint8), np.zeros(k, np.uint8), np.resize(np.array([255, 0], np.uint8), k),
            np.resize(np.array([0, 255], np.uint8), k), rng.integers(0, 256, k, dtype=np.uint8)]
    return np.stack(rows)


class Int8Gemm:
    """``G[P, N] = (A − 128) @ (w − zp)`` for uint8 ``A`` [P, K] via a prepacked onnxruntime session."""

    def __init__(self, session, k: int, n: int):
        self._session = session
        self.k = k
        self.n = n

    @classmethod
    def build(cls, w_kn: np.ndarray, zp: int, threads: int = 1) -> "Int8Gemm | None":
        """``w_kn``: the uint8 weights as [K, N] (K in the im2col order); ``zp`` in 0..255.

        Returns None when onnxruntime is missing or its products are not exact for these weights
        on this CPU (the load-time proof above).
        """
        if _runtime() is None or not 0 <= zp <= 255 or w_kn.dtype != np.uint8:
            return None
        b = (w_kn.astype(np.int16) - 128).astype(np.int8)
        gemm = cls(_session(np.ascontiguousarray(b), zp - 128, threads), *w_kn.shape)
        rows = _proof_rows(gemm.k)
        want = (rows.astype(np.int64) - 128) @ (w_kn.astype(np.int64) - zp)
        if not np.array_equal(gemm(rows), want):
            return None
        return gemm

    def __call__(self, a: np.ndarray) -> np.ndarray:
        return self._session.run(None, {"A": a})[0]


#: pool_type -> (window, stride, end padding) of the max pools ``Int8Conv3x3`` applies itself
MAX_POOLS = {1: (2, 2, 0), 3: (4, 4, 0), 9: (2, 1, 1)}


def _conv_graph(w: np.ndarray, zp: int, stride: int, pool_type: int) -> bytes:
    """ConvInteger (u8×u8) → [Cast to float → MaxPool] → Transpose to NHWC."""
    from onnx import TensorProto, helper, numpy_helper

    oc, ic = w.shape[:2]
    nodes = [helper.make_node("ConvInteger", ["X", "W", "x_zero", "w_zero"], ["G"], kernel_shape=[3, 3], strides=[stride, stride])]
    last, out_type = "G", TensorProto.INT32
    if pool_type in MAX_POOLS:
        k, s, end = MAX_POOLS[pool_type]
        nodes += [helper.make_node("Cast", ["G"], ["Gf"], to=TensorProto.FLOAT),
                  helper.make_node("MaxPool", ["Gf"], ["P"], kernel_shape=[k, k], strides=[s, s], pads=[0, 0, end, end])]
        last, out_type = "P", TensorProto.FLOAT
    nodes.append(helper.make_node("Transpose", [last], ["Y"], perm=[0, 2, 3, 1]))
    graph = helper.make_graph(
        nodes, "kpu_conv3x3",
        [helper.make_tensor_value_info("X", TensorProto.UINT8, [1, ic, None, None])],
        [helper.make_tensor_value_info("Y", out_type, [1, None, None, oc])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array(128, np.uint8), "x_zero"),
         numpy_helper.from_array(np.array(zp, np.uint8), "w_zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def _conv_reference(xp: np.ndarray, w: np.ndarray, zp: int, stride: int) -> np.ndarray:
    """``Σ (x − 128)·(w − zp)`` of a valid 3×3 convolution of a padded [IC, H, W] map (float64, exact)."""
    ic, h, wd = xp.shape
    oh, ow = (h - 3) // stride + 1, (wd - 3) // stride + 1
    xc = xp.astype(np.float64) - 128
    cols = np.stack([xc[:, ky : ky + stride * (oh - 1) + 1 : stride, kx : kx + stride * (ow - 1) + 1 : stride]
                     for ky in range(3) for kx in range(3)], axis=1)  # [IC, 9, OH, OW]
    wm = (w.astype(np.float64) - zp).reshape(w.shape[0], ic * 9)
    return (wm @ cols.reshape(ic * 9, oh * ow)).reshape(-1, oh, ow)


class Int8Conv3x3:
    """A 3×3 layer with few input channels through onnxruntime ``ConvInteger`` (u8×u8), its max
    pool included, delivering the sums as [OH, OW, OC] for the epilogue.

    For a 3-channel camera image the im2col matrix of a GEMM costs more than the products
    (nine copies of three bytes per pixel); ``ConvInteger`` does that inside its own kernel.
    The max pool (pools 1, 3, 9, before the activation) runs on the sums cast to float32, exact
    because the caller only asks for it when ``|G| < 2**24``. u8×u8 widens to 16 bits before it
    multiplies, and the same load-time proof as ``Int8Gemm`` (all-255, all-0, alternating and
    random maps against float64 numpy, pooled by ``kpu.pool``) decides.
    """

    def __init__(self, session, stride: int):
        self._session = session
        self.stride = stride

    @classmethod
    def build(cls, w: np.ndarray, zp: int, stride: int, pool_type: int = 0, threads: int = 1) -> "Int8Conv3x3 | None":
        ort = _runtime()
        if ort is None or not 0 <= zp <= 255 or w.dtype != np.uint8:
            return None
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(_conv_graph(np.ascontiguousarray(w), zp, stride, pool_type), options,
                                       providers=["CPUExecutionProvider"])
        conv = cls(session, stride)
        ic = w.shape[1]
        rng = np.random.default_rng(ic)
        size = 4 * stride + 7
        for fill in (255, 0, None, "alt"):
            if fill == "alt":
                xp = np.resize(np.array([255, 0], np.uint8), (ic, size, size + 1))[:, :, :size].copy()
            elif fill is None:
                xp = rng.integers(0, 256, (ic, size, size), dtype=np.uint8)
            else:
                xp = np.full((ic, size, size), fill, np.uint8)
            want = _conv_reference(xp, w, zp, stride)
            if pool_type in MAX_POOLS:
                from .pool import pool

                want = pool(want, pool_type)
            if not np.array_equal(conv(xp[None]), want.transpose(1, 2, 0)):
                return None
        return conv

    def __call__(self, xp: np.ndarray) -> np.ndarray:
        """``xp``: uint8 [1, IC, H, W] (already padded) → the (pooled) sums [OH, OW, OC]."""
        return self._session.run(None, {"X": xp})[0][0]
