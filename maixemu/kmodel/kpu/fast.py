"""Which KPU engine a layer may use: the compiled fast paths (the ``fast`` extra: numba, plus
onnxruntime for int8 products) or the numpy path, which needs nothing beyond numpy.

``MAIXEMU_KPU_ENGINE`` chooses, read when a model is loaded: ``auto`` (default: fast when numba
is installed), ``numpy`` (force the numpy path, e.g. to compare), ``fast`` (fail loudly when the
extra is missing). Every path gives the same bytes; the int64 reference of ``KpuConv`` is the
oracle the tests hold them all to.

numba compiles the kernels the first time a process needs them and caches the machine code on
disk in the user's cache folder (``cache_dir()``: ``$MAIXEMU_CACHE_DIR`` or the platform's user
cache, e.g. ``~/.cache/maixemu/numba``). Even from that cache a fresh process pays for importing
numba (~0.3 s) and for starting LLVM to load the first kernel (~0.3 s), so loading a model does
not wait for either: ``compiled_available()`` decides from the installed packages alone, and
``load_kmodel`` calls ``preload()`` when the model is prepared, which imports numba and the kernels
in a background thread and then runs each new kind of prepared layer once on zeros
(``schedule_warm_up()``), so the cached machine code is in memory before the first ``run()``
(which waits for it only if it comes sooner). Without ``preload`` (a ``KpuConv`` prepared
directly) the first ``run()`` imports them itself.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Iterator

ENGINES = ("auto", "numpy", "fast")

_LOCK = threading.Lock()
_KERNELS: ModuleType | None = None
_KERNELS_ERROR: str | None = None
#: the background thread of ``preload`` and the work it still has to do
_THREAD: threading.Thread | None = None
_PENDING: list = []
_WARM_KEYS: set = set()
_PENDING_LOCK = threading.Lock()


class FastEngineUnavailable(RuntimeError):
    """``MAIXEMU_KPU_ENGINE=fast`` but numba (the ``fast`` extra) cannot be imported."""


def engine() -> str:
    value = os.environ.get("MAIXEMU_KPU_ENGINE", "auto").strip().lower() or "auto"
    if value not in ENGINES:
        raise ValueError(f"MAIXEMU_KPU_ENGINE={value!r}; use one of {', '.join(ENGINES)}")
    return value


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$MAIXEMU_CACHE_DIR/numba`` or the user cache folder."""
    root = os.environ.get("MAIXEMU_CACHE_DIR")
    if root:
        return Path(root) / "numba"
    try:
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("maixemu", appauthor=False)) / "numba"
    except ImportError:  # platformdirs comes with the fast extra; a plain fallback otherwise
        return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "maixemu" / "numba"


@contextlib.contextmanager
def _numba_cache_in(path: Path) -> Iterator[None]:
    """Point numba's cache at ``path`` while our kernels are decorated, and only then (numba
    fixes a function's cache location when ``cache=True`` is applied): user code's own cached
    functions keep numba's default location."""
    from numba.core import config

    previous = config.CACHE_DIR
    try:
        path.mkdir(parents=True, exist_ok=True)
        config.CACHE_DIR = str(path)
    except OSError:  # an unwritable cache folder: numba then warns and compiles in memory
        pass
    try:
        yield
    finally:
        config.CACHE_DIR = previous


def kernels() -> ModuleType | None:
    """The compiled kernels module, or None when the fast engine is not to be used."""
    global _KERNELS, _KERNELS_ERROR
    choice = engine()
    if choice == "numpy":
        return None
    with _LOCK:
        if _KERNELS is None and _KERNELS_ERROR is None:
            try:
                import numba  # noqa: F401

                with _numba_cache_in(cache_dir()):
                    from . import kernels as compiled
                _KERNELS = compiled
            except ImportError as exc:
                _KERNELS_ERROR = f"numba is not installed ({exc}); install maixemu[fast]"
    if _KERNELS is None and choice == "fast":
        raise FastEngineUnavailable(f"MAIXEMU_KPU_ENGINE=fast: {_KERNELS_ERROR}")
    return _KERNELS


def compiled_available() -> bool:
    """Whether layers take the compiled paths: the engine choice allows it and numba is installed
    (found without importing it; ``kernels()`` imports). ``MAIXEMU_KPU_ENGINE=fast`` raises
    ``FastEngineUnavailable`` when it is not."""
    choice = engine()
    if choice == "numpy":
        return False
    if _KERNELS is not None:
        return True
    if _KERNELS_ERROR is None and importlib.util.find_spec("numba") is not None:
        return True
    if choice == "fast":
        raise FastEngineUnavailable(f"MAIXEMU_KPU_ENGINE=fast: {_KERNELS_ERROR or 'numba is not installed; install maixemu[fast]'}")
    return False


def preload() -> None:
    """Import numba and the kernels in a background thread, then run what ``schedule_warm_up``
    queued; nothing when nothing is queued (no layer chose a compiled path)."""
    global _THREAD
    with _PENDING_LOCK:
        if _THREAD is None and _KERNELS_ERROR is None and _PENDING:
            _THREAD = threading.Thread(target=_background, name="maixemu-kernels", daemon=True)
            _THREAD.start()


def schedule_warm_up(key, fn) -> None:
    """Run ``fn()`` once in the background thread after the kernels are loaded, unless a call
    with the same ``key`` (the kernels and argument types a layer uses) was scheduled before."""
    with _PENDING_LOCK:
        if key in _WARM_KEYS:
            return
        _WARM_KEYS.add(key)
        _PENDING.append(fn)
        running = _THREAD is not None
    if running or _KERNELS is not None:
        preload()  # (otherwise the loader starts the thread once the whole model is prepared)


def _stand_in(a):
    """A copy of a kernel argument with the same numba type (dtype, dimensions, layout, read-only
    flag), so a warm-up compiles (or loads) the very specialisation a run will call without
    touching the model's memories."""
    import numpy as np

    if not isinstance(a, np.ndarray):
        return a
    c = np.array(a, copy=True, order="K")
    if not a.flags.writeable:
        c.setflags(write=False)
    return c


def schedule_kernel_warm_up(name: str, args: tuple) -> bool:
    """Have ``kernels.<name>(*args)`` compiled or loaded from the disk cache in the background
    thread, on stand-ins of ``args``; False (nothing scheduled) when the compiled engine is not
    to be used. For host ops that call a kernel directly (V3/V4 CPU layers)."""
    import numpy as np

    try:
        if not compiled_available():
            return False
    except FastEngineUnavailable:
        return False
    key = ("kernel", name) + tuple((a.dtype.str, a.ndim, a.flags.writeable, a.flags.aligned, a.flags.c_contiguous)
                                   if isinstance(a, np.ndarray) else type(a).__name__ for a in args)
    copies = tuple(_stand_in(a) for a in args)

    def warm() -> None:
        kn = kernels()
        if kn is not None:
            getattr(kn, name)(*copies)

    schedule_warm_up(key, warm)
    return True


def wait_for_warm_up(timeout: float | None = None) -> None:
    """Block until the background thread has nothing left to do (benchmarks and tests)."""
    thread = _THREAD
    if thread is not None:
        thread.join(timeout)


def _background() -> None:
    global _THREAD
    kernels()
    while True:
        with _PENDING_LOCK:
            if not _PENDING:
                _THREAD = None
                return
            fn = _PENDING.pop(0)
        try:
            fn()
        except Exception:  # a warm-up run that fails (e.g. a layer that raises on zeros) is harmless
            pass


def loaded_kernels() -> ModuleType | None:
    """The compiled kernels if a layer has loaded them already (no import, no lock): helpers that
    only pay off next to compiled layers (the HWC transposes of ``kpu.ram``) ask this."""
    return _KERNELS


def unavailable_reason() -> str | None:
    kernels()
    return _KERNELS_ERROR
