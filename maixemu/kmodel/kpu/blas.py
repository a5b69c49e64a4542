"""Per-thread control of OpenBLAS threading for the KPU engine (optional, best effort).

Why: the engine parallelises a layer itself (row tiles / output-channel groups on a small thread
pool) and wants each of those GEMMs single-threaded. Letting OpenBLAS also spawn its threads for
hundreds of mid-sized GEMMs per run costs more in spinning and hand-offs than it gains, and on a
loaded machine it collapses (measured: 5-10x slower runs). OpenBLAS ≥ 0.3.27 has
``openblas_set_num_threads_local``, which changes the count for the calling thread only, so
this never affects BLAS calls elsewhere in the process. When the symbol (or OpenBLAS itself) is
not found — other BLAS vendors, other platforms — everything is a no-op.
"""

from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

_SET_LOCAL: Callable[[int], int] | None = None
_SEARCHED = False


def _candidate_libraries() -> list[str]:
    paths: list[str] = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps") as maps:
                for line in maps:
                    path = line.split()[-1] if line.strip() else ""
                    if "openblas" in path.lower() and path not in paths:
                        paths.append(path)
        except OSError:
            pass
    try:
        import numpy as np

        config: Any = np.show_config(mode="dicts")  # (numpy's stubs type the dict loosely or not at all)
        libdir = config["Build Dependencies"]["blas"].get("lib directory")
        for folder in filter(None, [libdir, os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs"),
                                    os.path.join(os.path.dirname(np.__file__), ".dylibs")]):
            if os.path.isdir(folder):
                paths += [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if "openblas" in f.lower()]
    except Exception:  # pragma: no cover - numpy without show_config dicts
        pass
    return paths


def _find() -> None:
    global _SET_LOCAL, _SEARCHED
    _SEARCHED = True
    for path in _candidate_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        fn = getattr(lib, "openblas_set_num_threads_local", None)
        if fn is not None:
            fn.argtypes = [ctypes.c_int]
            fn.restype = ctypes.c_int
            _SET_LOCAL = fn
            return


def available() -> bool:
    if not _SEARCHED:
        _find()
    return _SET_LOCAL is not None


@contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Run the block with OpenBLAS limited to ``n`` threads for this thread (no-op if unknown)."""
    set_local = _SET_LOCAL if available() else None
    if set_local is None:
        yield
        return
    previous = set_local(int(n))
    try:
        yield
    finally:
        set_local(previous if previous > 0 else 0)


@contextmanager
def process_threads(n: int) -> Iterator[None]:
    """Every BLAS numpy links (OpenBLAS, MKL, BLIS, Accelerate) limited to ``n`` threads for the
    whole process inside the block, through threadpoolctl (the maintained way to reach every
    vendor; it only sees libraries already loaded, so numpy is imported first). The commands run
    in it with ``MAIXEMU_THREADS`` (default 1, ``session.compute``)."""
    import numpy  # noqa: F401  (loads the BLAS library threadpoolctl then finds)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a core dependency; without it the BLAS default stays
        yield
        return
    with threadpool_limits(limits=max(1, int(n)), user_api="blas"):
        yield


def set_local_threads(n: int) -> int | None:
    """Set this thread's OpenBLAS thread count; returns the previous one (None if unavailable)."""
    set_local = _SET_LOCAL if available() else None
    return None if set_local is None else int(set_local(int(n)))
