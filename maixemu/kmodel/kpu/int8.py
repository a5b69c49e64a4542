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

from . import onnx_graph

_LOCK = threading.Lock()
_ORT = None
_ORT_ERROR: str | None = None


def _runtime():
    global _ORT, _ORT_ERROR
    with _LOCK:
        if _ORT is None and _ORT_ERROR is None:
            try:
                import onnxruntime

                _ORT = onnxruntime
            except ImportError as exc:
                _ORT_ERROR = f"onnxruntime not installed ({exc}); install maixemu[fast]"
    return _ORT


def int8_enabled() -> bool:
    """``MAIXEMU_KPU_INT8=0`` keeps the compiled engine on float products (to compare or test)."""
    return os.environ.get("MAIXEMU_KPU_INT8", "1").strip() != "0"


def unavailable_reason() -> str | None:
    _runtime()
    return _ORT_ERROR


def _session(b: np.ndarray, b_zero: int, threads: int):
    ort = _runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    return ort.InferenceSession(onnx_graph.matmul_integer(b, 128, b_zero), options, providers=["CPUExecutionProvider"])


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
        # the compiled session under the Python wrapper: its ``run`` re-validates the feed on
        # every call (about half the cost of a small layer's product); ours is fixed at load
        inner = getattr(session, "_sess", None)
        outputs = [o.name for o in session.get_outputs()]
        self._run = (lambda a: inner.run(outputs, {"A": a}, None)[0]) if inner is not None and hasattr(inner, "run") else None

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
        # the int64 truth through float64 BLAS (exact: |sums| < 2**31 < 2**53; numpy's integer
        # matmul has no BLAS and cost most of a model's load time)
        want = ((rows.astype(np.float64) - 128) @ (w_kn.astype(np.float64) - zp)).astype(np.int64)
        try:
            got = gemm(rows)
        except Exception:  # an onnxruntime whose inner session differs: the public run() then
            gemm._run = None
            got = gemm(rows)
        if not np.array_equal(got, want):
            return None
        return gemm

    def __call__(self, a: np.ndarray) -> np.ndarray:
        if self._run is not None:
            return self._run(a)
        return self._session.run(None, {"A": a})[0]
