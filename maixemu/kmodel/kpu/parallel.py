"""How a layer's work runs: per-thread scratch buffers, the optional thread pool
(``MAIXEMU_THREADS``) and single-threaded BLAS per work item."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

_SCRATCH = threading.local()
_POOL = None
_POOL_LOCK = threading.Lock()


def workers() -> int:
    """Threads used per layer: ``MAIXEMU_THREADS`` (default 1, at most 8).

    Measured on the 2-core development machine: the layers' numpy work is short calls whose
    Python glue holds the GIL and whose data moves at memory speed, so a second thread made face
    detection 5-25 % slower, not faster (a pure GEMM does scale 2x). Sequential is the default;
    the threaded path stays available (and tested) for machines where it pays.
    """
    env = os.environ.get("MAIXEMU_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return min(int(env), 8)
    return 1


def _pool():
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor

            _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="maixemu-kpu")
        return _POOL


def release_scratch() -> None:
    """Free this thread's scratch buffers (they are otherwise kept for the next run; benchmarks
    measuring a model's memory start from none)."""
    _SCRATCH.buffers = {}
    _SCRATCH.views = {}
    _SCRATCH.arena = None
    _SCRATCH.carvings = {}
    _SCRATCH.plain = {}
    _SCRATCH.plain_used = False
    _SCRATCH.plain_quiet = 0


#: offsets of the arrays ``work_views`` carves (bytes): every dtype's alignment, and a cache line
_ALIGN = 64


def work_views(*specs: tuple[tuple[int, ...], Any]) -> tuple[np.ndarray, ...]:
    """Disjoint C-ordered arrays of the given ``(shape, dtype)`` specs, carved from this thread's
    one *work arena*: the buffers a layer uses only while it runs (a GEMM tile's source rows and
    sums, a depthwise layer's ring and sum rows). One arena for all of them, sized by the largest
    single request, instead of one buffer per name sized by each name's largest use: those maxima
    come from different layers (ulffd: 675 KiB of sources from a 3×3 layer, 900 KiB of sums from
    a 1×1 one, 323 KiB of depthwise rows), and the arena holds the largest layer's needs once.
    The same specs give the *same array objects* until the arena grows (onnxruntime's output
    binding is redone only when they change, see ``kpu.int8``); a caller holds them only while its
    layer runs (a later, larger request replaces the arena and drops every carving)."""
    carvings = getattr(_SCRATCH, "carvings", None)
    if carvings is None:
        carvings = _SCRATCH.carvings = {}
    views = carvings.get(specs)
    if views is not None:
        return views
    layout = []
    total = 0
    for shape, dtype in specs:
        dt = np.dtype(dtype)
        count = 1
        for d in shape:
            count *= d
        layout.append((total, count, dt, shape))
        total += -(-max(count * dt.itemsize, 1) // _ALIGN) * _ALIGN
    arena = getattr(_SCRATCH, "arena", None)
    if arena is None or arena.size < total + _ALIGN:
        arena = _SCRATCH.arena = np.empty(total + _ALIGN, np.uint8)
        carvings.clear()  # (views of the old arena would keep it alive)
    base = -arena.ctypes.data % _ALIGN
    views = tuple(arena[base + start : base + start + count * dt.itemsize].view(dt).reshape(shape)
                  for start, count, dt, shape in layout)
    carvings[specs] = views
    return views


def scratch_array(name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """``_scratch`` as an array of ``shape``, the *same object* for the same name, shape and
    dtype until the buffer grows: onnxruntime's IO binding of an output is then redone only when
    the array changes (``kpu.int8``), not on every call. For buffers that outlive a layer's own
    requests (a camera layer's padded source, read by all its tiles); what a layer uses only while
    it runs comes from ``work_views``. A hit is one dictionary lookup (the full checks once cost
    5 % of a small detector's run); ``_scratch`` drops a name's views when it replaces that name's
    buffer, so a view found here always lies in the live buffer."""
    try:
        return _SCRATCH.views[(name, dtype, shape)]
    except (AttributeError, KeyError):
        pass
    key = (name, dtype, shape)
    size = 1
    for d in shape:
        size *= d
    view = _scratch(name, size, dtype).reshape(shape)
    _SCRATCH.views[key] = view
    return view


#: Model runs in a row on one thread without the plain (numpy) forms after which that thread's
#: plain scratch is dropped (``run_finished``): once the compiled paths have taken over, the numpy
#: plans' tiles (14 MiB on a face detector: float32 im2col, float64 batch-norm values, index
#: arrays) served nobody and stayed for the life of the process. Two, not one: a process that
#: alternates a model still on its plain forms with one already compiled drops nothing, instead of
#: allocating the buffers again on every other run. (The pool threads of ``MAIXEMU_THREADS`` > 1
#: run no model themselves and keep the tiles of the work items they ran.)
PLAIN_QUIET_RUNS = 2


def plain_scratch(name: str, size: int, dtype) -> np.ndarray:
    """A per-thread reusable flat buffer for the plain (numpy) forms of a layer, kept apart from
    the compiled paths' buffers so that ``run_finished`` can drop them all at once; the thread
    remembers that its current run used them."""
    local = _SCRATCH
    pool_ = getattr(local, "plain", None)
    if pool_ is None:
        pool_ = local.plain = {}
    local.plain_used = True
    return _grown(pool_, name, size, dtype)[:size]


def plain_scratch_bytes() -> int:
    """Bytes the plain forms' buffers hold on this thread (what ``run_finished`` drops)."""
    return sum(buf.nbytes for buf in getattr(_SCRATCH, "plain", {}).values())


def run_finished() -> None:
    """A model run ended on this thread: after ``PLAIN_QUIET_RUNS`` runs in a row that asked no
    plain scratch, drop the plain forms' buffers (a later plain run makes them again)."""
    local = _SCRATCH
    if getattr(local, "plain_used", False):
        local.plain_used = False
        local.plain_quiet = 0
        return
    if not getattr(local, "plain", None):
        return
    local.plain_quiet = getattr(local, "plain_quiet", 0) + 1
    if local.plain_quiet >= PLAIN_QUIET_RUNS:
        local.plain = {}


def _grown(pool_: dict, name: str, size: int, dtype) -> np.ndarray:
    """``pool_``'s flat buffer for ``name`` and ``dtype``, replaced by a larger one when it holds
    fewer than ``size`` values (the whole buffer: callers slice it)."""
    dtype = np.dtype(dtype)
    key = (name, dtype.str)
    buf = pool_.get(key)
    if buf is None or buf.size < size:
        buf = pool_[key] = np.empty(max(size, 1), dtype=dtype)
    return buf


def _scratch(name: str, size: int, dtype) -> np.ndarray:
    """A per-thread reusable flat buffer (grown on demand) for intermediates never returned."""
    pool_ = getattr(_SCRATCH, "buffers", None)
    if pool_ is None:
        pool_ = _SCRATCH.buffers = {}
    views = getattr(_SCRATCH, "views", None)
    if views is None:
        views = _SCRATCH.views = {}
    before = pool_.get((name, np.dtype(dtype).str))
    buf = _grown(pool_, name, size, dtype)
    if buf is not before:
        # (views of the old buffer would keep it alive, and must not be handed out again: every
        # view of this name, whatever dtype spelling it was asked with)
        for stale in [k for k in views if k[0] == name and np.dtype(k[1]) == buf.dtype]:
            del views[stale]
    return buf[:size]
