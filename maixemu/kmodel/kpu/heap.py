"""Hand the heap's freed pages back to the system while a model loads (glibc ``malloc_trim``).

A load allocates and frees a lot: onnxruntime parses each layer's graph, copies its weights and
prepacks them, and the exactness proofs make their temporaries — in the loading thread and in the
warm-up thread (``kpu.warmup``) at once. glibc keeps what they free inside each thread's heap,
where the other thread cannot reuse it, and returns it only from the top of a heap. Measured on
mobilenet_v1 (2.5 MiB file): 17 MiB resident after the load and runs, 6 MiB of it still in use;
trimming after every warm-up job and at the end of the load: a peak of 10.3 MiB. The price is at
load only: ~0.1 ms per trim and the returned pages faulted in again, 15-30 ms more CPU for a load
and its warm-ups (10-25 %, mostly in the background thread; ``warmup.TRIM_EVERY``); a run does
not trim. Elsewhere (musl, macOS, Windows) this is a no-op: there is no such call, and their
allocators return memory their own way.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from typing import Callable

_TRIM: Callable[[int], int] | None = None
_LOOKED = False


def _malloc_trim() -> Callable[[int], int] | None:
    global _TRIM, _LOOKED
    if not _LOOKED:
        _LOOKED = True
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                trim = libc.malloc_trim
                trim.argtypes = [ctypes.c_size_t]
                trim.restype = ctypes.c_int
                _TRIM = trim
            except (OSError, AttributeError):  # (not glibc)
                _TRIM = None
    return _TRIM


def trim() -> None:
    """Release the free pages of every heap of this process (keeps nothing in use)."""
    fn = _malloc_trim()
    if fn is not None:
        fn(0)
