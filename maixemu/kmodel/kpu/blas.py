"""OpenBLAS's thread count around the KPU engine's products (optional, best effort).

Why: the engine parallelises a layer itself (row tiles / output-channel groups on a small thread
pool) and wants each of those GEMMs single-threaded. Letting OpenBLAS also spawn its threads for
hundreds of mid-sized GEMMs per run costs more in spinning and hand-offs than it gains, and on a
loaded machine it collapses (measured: 5-10x slower runs).

The count is the *process's*, whatever the name of the call says: OpenBLAS's
``openblas_set_num_threads_local`` (≥ 0.3.27) calls the global ``openblas_set_num_threads`` and
stores a plain global (``driver/others/openblas_set_num_threads.c``, ``blas_server.c``; a test
here shows it). So ``blas_threads`` is a process-wide limit shared by every thread inside one of
its blocks: set when the first block starts, the lowest count asked for while several run, the
count from before restored when the last one ends. Saving and restoring per block, as if the count
were the thread's, let the loader thread's warm-ups (``kpu.warmup``) and the main thread's runs
interleave their restores: the process was left at 1 or at a thread per core at random, and any
float BLAS reduction elsewhere in the process (an eval worker's sums) changed in its last bits
with the timing. When the symbol (or OpenBLAS itself) is not found — other BLAS vendors, other
platforms — everything is a no-op.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

_SET_LOCAL: Callable[[int], int] | None = None
#: the OpenBLAS library ``_SET_LOCAL`` belongs to (numpy's)
LIBRARY: str | None = None
_SEARCHED = False
#: guards the three below: blocks of ``blas_threads`` in any thread and the count around them
_LOCK = threading.Lock()
#: the count each running block asked for (any thread)
_held: list[int] = []
#: the process's count before the first running block started, and the count applied now
_before = 0
_applied = 0


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
    global _SET_LOCAL, _SEARCHED, LIBRARY
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
            _SET_LOCAL, LIBRARY = fn, path
            return


def available() -> bool:
    if not _SEARCHED:
        _find()
    return _SET_LOCAL is not None


def _apply_locked() -> None:
    """Set the process's count to what the running blocks ask for (the count from before when none
    runs); ``_LOCK`` is held."""
    global _applied
    assert _SET_LOCAL is not None
    want = min(_held) if _held else _before
    if want != _applied:
        _SET_LOCAL(want if want > 0 else 0)
        _applied = want


@contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Run the block with OpenBLAS at most ``n`` threads — for the whole process while it runs
    (see the module docstring: OpenBLAS has no per-thread count); a no-op if unknown."""
    global _before, _applied
    if not available():
        yield
        return
    n = max(1, int(n))
    with _LOCK:
        if not _held:
            assert _SET_LOCAL is not None
            _before, _applied = int(_SET_LOCAL(n)), n  # (it returns the count it replaced)
        _held.append(n)
        _apply_locked()
    try:
        yield
    finally:
        with _LOCK:
            _held.remove(n)
            _apply_locked()


@contextmanager
def process_threads(n: int) -> Iterator[None]:
    """Every BLAS numpy links (OpenBLAS, MKL, BLIS, Accelerate) limited to ``n`` threads for the
    whole process inside the block, through threadpoolctl (the maintained way to reach every
    vendor; it only sees libraries already loaded, so numpy is imported first). The commands run
    in it with ``MAIXEMU_THREADS`` (default 1, ``session.compute``). Blocks of ``blas_threads``
    running meanwhile (another thread's) keep their limit and restore this one's count."""
    import numpy  # noqa: F401  (loads the BLAS library threadpoolctl then finds)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a core dependency; without it the BLAS default stays
        yield
        return
    with _LOCK:
        # inside running blocks, threadpoolctl's "original" is their limit, not the process's count
        outside = _before if _held else None
        limits = threadpool_limits(limits=max(1, int(n)), user_api="blas")
        _behind_blocks()
    try:
        yield
    finally:
        with _LOCK:
            limits.restore_original_limits()
            _behind_blocks(outside)


def limit_process(n: int) -> None:
    """``process_threads(n)`` for the rest of the process (a worker process of a command)."""
    import numpy  # noqa: F401

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - see process_threads
        return
    with _LOCK:
        threadpool_limits(limits=max(1, int(n)), user_api="blas")
        _behind_blocks()


def _behind_blocks(outside: int | None = None) -> None:
    """threadpoolctl has just set the process's count (``_LOCK`` held): it — or ``outside``, the
    count to restore when threadpoolctl's own restore went back to a block's limit — becomes the
    count the running ``blas_threads`` blocks restore, and theirs is applied again."""
    global _before, _applied
    if not available():
        return
    assert _SET_LOCAL is not None
    if _held:
        replaced = int(_SET_LOCAL(min(_held)))
        _before, _applied = (replaced if outside is None else outside), min(_held)
    elif outside is not None:
        _SET_LOCAL(outside)
