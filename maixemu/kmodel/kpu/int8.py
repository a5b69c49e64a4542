"""Exact int8 products through onnxruntime's ``MatMulInteger``, u8 × s8 or u8 × u8, weights
prepacked, each proven exact for its weights on this CPU when a layer is loaded.

Every K210 (and nncase v0.2 CPU) convolution is ``G = Σ (x − a0)·(w − b0)`` with uint8 ``x`` and
``w`` and zero points ``a0``, ``b0`` in 0..255, which is ``MatMulInteger`` itself:

* ``u8u8`` — A = x (zero point a0), B = the raw uint8 weights (zero point b0);
* ``u8s8`` — the same with B = ``w − b0`` as int8 (zero point 0) when every such weight fits,
  else ``w − 128`` (zero point ``b0 − 128``): the very same integers.

onnxruntime computes in int32 and ``|G| < 2**31`` for every layer this module accepts (checked
from K), so the result is exact — unless the CPU kernel itself rounds. One does: without VNNI
(AVX2-only CPUs such as AMD Zen 3, AVX-512 without VNNI), MLAS's u8s8 kernel adds the products of
two neighbouring taps in *saturating* 16 bits (``vpmaddubsw``), which two large same-sign weights
overflow. So a layer takes a kind only after two checks:

1. ``pair_saturation(kind)``, once per process: a probe product that overflows any 16-bit pair
   sum. On a CPU whose kernel saturates, the kind is used only for weights that cannot reach the
   limit whatever taps the kernel pairs: in every output channel the two largest same-sign raw
   weights times 255 stay below 2**15 (``pair_safe``) — otherwise it is refused with the count.
2. The layer's own weights, run at load on rows that put every partial sum at its extreme
   (all-255, all-0, alternating, per-channel sign masks of the largest channels, random) and
   compared with the exact sums (float64, exact below 2**53). Any difference refuses the kind.

``Int8Gemm.build`` returns the product or the reason it was refused (``"u8s8: not exact on this
CPU, 23 of 640 proof sums"``); ``kpu.products`` chooses among kinds. Products write into the
caller's buffer through an onnxruntime IO binding bound once per buffer (a plain ``run`` builds
its feeds and output array on every call, as much as a small layer's product costs).
"""

from __future__ import annotations

import os
import threading
import weakref

import numpy as np

from . import onnx_graph
from .blas import blas_threads

_LOCK = threading.Lock()
_ORT = None
_ORT_ERROR: str | None = None
#: kind -> True when this CPU's kernel saturates 16-bit pair sums (``pair_saturation``)
_SATURATES: dict[str, bool] = {}

INT8_KINDS = ("u8s8", "u8u8")
#: the largest |raw sum| each kind's int32 accumulator holds without doubt (255·128·K, 255·255·K)
_RAW_BOUND = {"u8s8": 255 * 128, "u8u8": 255 * 255}
#: a 16-bit pair sum: ``vpmaddubsw`` clamps to ±32767
_PAIR_LIMIT = 32767
#: proof rows are repeated to at least this many (a GEMM of a handful of rows may take another kernel)
_PROOF_MIN_ROWS = 32
#: channels whose sign masks become proof rows (the largest positive and negative sums)
_PROOF_MASKED_CHANNELS = 8
#: channels whose raw weights ``proof_rows`` widens at a time
_PROOF_COLUMNS = 64


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


def _session(model: bytes, threads: int):
    ort = _runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    # no per-session arena: outputs go to the caller's buffers, and an arena would keep the
    # largest transient allocation of every layer's session for the life of the model
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    # a graph of one node has nothing to optimise, and the optimiser's copy of the graph doubled
    # what a session keeps (measured: 106 -> 54 KiB per session of 36 KiB weights)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if threads > 1:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    if getattr(session, "_model_bytes", None) is not None:
        # the Python wrapper keeps the serialised graph (a copy of the weights) only to rebuild
        # the session after a provider failure, which a CPU-only session never has
        session._model_bytes = None
    return session


def b_operand(w_kn: np.ndarray, b_zero: int, kind: str) -> tuple[np.ndarray, int]:
    """The B initializer and its zero point that make ``MatMulInteger`` compute ``Σ a'·(w − b_zero)``."""
    if kind == "u8u8":
        return np.ascontiguousarray(w_kn, dtype=np.uint8), b_zero
    w_kn = np.asarray(w_kn, dtype=np.uint8)
    # (uint8 arithmetic modulo 256 read as int8 is ``w − zero`` whenever that fits in int8: no
    # int16 copies of the weights, which were a layer's biggest load-time temporaries)
    lo = int(w_kn.min(initial=b_zero)) - b_zero
    hi = int(w_kn.max(initial=b_zero)) - b_zero
    if lo >= -128 and hi <= 127:
        return np.subtract(w_kn, np.uint8(b_zero), dtype=np.uint8, order="C").view(np.int8), 0
    return np.bitwise_xor(w_kn, np.uint8(0x80), order="C").view(np.int8), b_zero - 128


def signed_raw(b: np.ndarray) -> np.ndarray:
    """The signed 8-bit values a pairing kernel multiplies for this B (u8u8 kernels that reuse
    the u8s8 one flip B's sign bit: ``w − 128``)."""
    return b.astype(np.int16) if b.dtype == np.int8 else b.astype(np.int16) - 128


def pair_safe(b: np.ndarray) -> np.ndarray:
    """Per output channel: can no two same-sign raw weights overflow a 16-bit pair sum of
    products with inputs up to 255, whichever two taps the kernel pairs?"""
    raw = signed_raw(b)
    if raw.shape[0] < 2:
        return np.ones(raw.shape[1], bool)
    pos = -np.sort(-np.maximum(raw, 0), axis=0)[:2].astype(np.int64)
    neg = -np.sort(np.minimum(raw, 0), axis=0)[:2].astype(np.int64)
    return (255 * pos.sum(axis=0) <= _PAIR_LIMIT) & (255 * neg.sum(axis=0) <= _PAIR_LIMIT)


def pair_saturation(kind: str) -> bool:
    """Does this CPU's onnxruntime kernel for ``kind`` saturate 16-bit pair sums? (A product
    where every pair of taps overflows 16 bits at once, run once per process.) Reported by
    ``maixemu bench``; never asserted — it is a fact about the CPU and the onnxruntime build."""
    with _LOCK:
        known = _SATURATES.get(kind)
    if known is not None:
        return known
    k, n = 64, 4
    w = np.empty((k, n), np.uint8)
    w[:, 0], w[:, 1], w[:, 2], w[:, 3] = 255, 0, 250, 5
    b, b_zero = (w, 128) if kind == "u8u8" else ((w.astype(np.int16) - 128).astype(np.int8), 0)
    a = np.full((_PROOF_MIN_ROWS, k), 255, np.uint8)
    want = (a.astype(np.float64) - 128) @ (w.astype(np.float64) - 128)
    try:
        got = _PlainRun(_session(onnx_graph.matmul_integer(b, 128, b_zero), 1))(a)
        saturates = not np.array_equal(got, want)
    except Exception:  # an onnxruntime that cannot run the probe: every layer's own proof decides
        saturates = False
    with _LOCK:
        _SATURATES[kind] = saturates
    return saturates


def proof_rows(b: np.ndarray, k: int) -> np.ndarray:
    """Inputs that put the layer's partial sums at their extremes (see the module docstring)."""
    rng = np.random.default_rng(k)
    rows = [np.full(k, 255, np.uint8), np.zeros(k, np.uint8), np.resize(np.array([255, 0], np.uint8), k),
            np.resize(np.array([0, 255], np.uint8), k), rng.integers(0, 256, k, dtype=np.uint8)]
    # per channel, the sums of the positive and of the negative raw weights, a block of
    # channels at a time (bounded int16 temporaries, not three [K, N] copies)
    n = b.shape[1]
    pos = np.empty(n, np.int64)
    neg = np.empty(n, np.int64)
    for c0 in range(0, n, _PROOF_COLUMNS):
        block = signed_raw(b[:, c0 : c0 + _PROOF_COLUMNS])
        pos[c0 : c0 + _PROOF_COLUMNS] = np.maximum(block, 0).sum(axis=0, dtype=np.int64)
        neg[c0 : c0 + _PROOF_COLUMNS] = np.minimum(block, 0).sum(axis=0, dtype=np.int64)
    for sums, positive in ((pos, True), (neg, False)):
        for col in np.argsort(-np.abs(sums), kind="stable")[:_PROOF_MASKED_CHANNELS]:
            raw = signed_raw(b[:, col])
            rows.append(np.where(raw > 0 if positive else raw < 0, 255, 0).astype(np.uint8))
    out = np.stack(rows)
    return np.resize(out, (max(_PROOF_MIN_ROWS, out.shape[0]), k))


#: columns of the weights converted at a time by ``exact_sums`` (a bounded float64 copy)
_EXACT_COLUMNS = 64


def exact_sums(rows: np.ndarray, a_zero: int, w_kn: np.ndarray, b_zero: int) -> np.ndarray:
    """``(rows − a_zero) @ (w − b_zero)`` exactly, through float64 BLAS (|sums| < 2**31 < 2**53;
    numpy's integer matmul has no BLAS and cost most of a model's load time), a block of columns
    at a time so that the float64 copy of the weights stays small."""
    a = rows.astype(np.float64) - a_zero
    out = np.empty((rows.shape[0], w_kn.shape[1]), np.float64)
    with blas_threads(1):  # (a load in a process that left BLAS at a thread per core: 14x the CPU)
        for c0 in range(0, w_kn.shape[1], _EXACT_COLUMNS):
            out[:, c0 : c0 + _EXACT_COLUMNS] = a @ (w_kn[:, c0 : c0 + _EXACT_COLUMNS].astype(np.float64) - b_zero)
    return out


class _PlainRun:
    """``run(a)`` through the compiled session under the Python wrapper (``run`` of the wrapper
    re-validates the feed on every call), or the wrapper itself when that is not there."""

    def __init__(self, session):
        self.session = session
        inner = getattr(session, "_sess", None)
        self._inner = inner if inner is not None and hasattr(inner, "run") else None

    def __call__(self, a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if self._inner is not None:
            y = self._inner.run(["Y"], {"A": a}, None)[0]
        else:
            y = self.session.run(None, {"A": a})[0]
        if out is None:
            return y
        out[...] = y
        return out


class _BoundRun:
    """``run(a, out)`` through an IO binding per thread: the input bound by reference on every
    call (the cheapest way in: no feed dict, no output array made), the output rebound only when
    ``out`` is another array than last time (``parallel.scratch_array`` hands out the same one)."""

    def __init__(self, session, n: int):
        from onnxruntime.capi import _pybind_state as C

        self.session = session
        self.n = n
        self._inner = session._sess
        self._device = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
        self._options = C.RunOptions()
        self._local = threading.local()
        self._new_binding = lambda: session.io_binding()._iobinding

    def __call__(self, a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        result: np.ndarray = np.empty((a.shape[0], self.n), np.int32) if out is None else out
        out = result
        local = self._local
        binding = getattr(local, "binding", None)
        if binding is None:
            binding = local.binding = self._new_binding()
            local.out = None
        binding.bind_input("A", a)
        bound = local.out() if local.out is not None else None
        if out is not bound:
            binding.bind_output("Y", self._device, np.int32, out.shape, out.ctypes.data)
            # (weakly: a scratch buffer that grew must not stay alive for every layer bound to
            # it; a dead one reads as None, never as the new array, so it is rebound before use)
            local.out = weakref.ref(out)
        self._inner.run_with_iobinding(binding, self._options)
        return result

    def forget(self) -> None:
        """Drop this thread's binding and the output it holds (a thread that will not call
        again: the warm-up thread, whose output buffer would otherwise stay alive)."""
        self._local.__dict__.clear()


class Int8Gemm:
    """``G[P, N] = (A − a_zero) @ (w − b_zero)`` for uint8 ``A`` [P, K] (C-contiguous) via a
    prepacked onnxruntime session: ``gemm(a)`` returns int32 [P, N], ``gemm(a, out)`` fills
    ``out`` (int32, C-contiguous)."""

    def __init__(self, run, kind: str, k: int, n: int):
        self._run = run
        self.kind = kind
        self.k = k
        self.n = n

    @classmethod
    def build(cls, w_kn: np.ndarray, b_zero: int, kind: str, *, a_zero: int = 128,
              threads: int = 1) -> tuple["Int8Gemm | None", str | None]:
        """``w_kn``: the uint8 weights as [K, N] (K in the im2col order), ``b_zero``/``a_zero``
        in 0..255. Returns ``(gemm, None)`` or ``(None, why this kind was refused)``."""
        if _runtime() is None:
            return None, f"{kind}: {_ORT_ERROR}"
        if w_kn.dtype != np.uint8 or not (0 <= b_zero <= 255 and 0 <= a_zero <= 255):
            return None, f"{kind}: weights or zero points are not 8-bit"
        k, n = w_kn.shape
        if _RAW_BOUND[kind] * max(k, 1) >= 1 << 31:
            return None, f"{kind}: {k} taps per sum can leave int32"
        b, bz = b_operand(w_kn, b_zero, kind)
        if pair_saturation(kind):
            unsafe = int((~pair_safe(b)).sum())
            if unsafe:
                return None, f"{kind}: saturates 16-bit pair sums on this CPU (no VNNI); {unsafe} of {n} channels can overflow"
        session = _session(onnx_graph.matmul_integer(b, a_zero, bz), threads)
        rows = proof_rows(b, k)
        want = exact_sums(rows, a_zero, w_kn, b_zero)
        runners: list[_PlainRun | _BoundRun] = []
        try:
            runners.append(_BoundRun(session, n))
        except Exception:  # an onnxruntime without these bindings: the plain calls below
            pass
        runners.append(_PlainRun(session))
        for run in runners:
            try:
                got = run(rows, np.empty((rows.shape[0], n), np.int32))
            except Exception:  # this way of calling does not work with this onnxruntime: the next one
                continue
            wrong = int((got != want).sum())
            if wrong:
                return None, f"{kind}: not exact on this CPU, {wrong} of {got.size} proof sums"
            return cls(run, kind, k, n), None
        return None, f"{kind}: onnxruntime could not run the product"

    def __call__(self, a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        return self._run(a, out)

    def forget_thread(self) -> None:
        """Release what this thread's calls hold (``_BoundRun.forget``; nothing for plain runs)."""
        forget = getattr(self._run, "forget", None)
        if forget is not None:
            forget()
