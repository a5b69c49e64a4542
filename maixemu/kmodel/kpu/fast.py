"""Which KPU engine a layer may use: the compiled fast paths (the ``fast`` extra: numba, plus
onnxruntime for int8 products) or the numpy path, which needs nothing beyond numpy.

``MAIXEMU_KPU_ENGINE`` chooses, read when a model is loaded: ``auto`` (default: fast when numba
is installed), ``numpy`` (force the numpy path, e.g. to compare), ``fast`` (compiled from the
first run, waiting for numba if it must; fail loudly when the extra is missing). Every path gives
the same bytes; the int64 reference of ``KpuConv`` is the oracle the tests hold them all to.

numba compiles a kernel the first time a process needs it and keeps the machine code in the
user's cache folder (``cache_dir()``: ``$MAIXEMU_CACHE_DIR/numba`` or the platform's user cache,
e.g. ``~/.cache/maixemu/numba``), never next to the sources; every compiled kernel of maixemu
(the KPU's here, the image module's in ``firmware.image._jit``) is decorated inside
``numba_cache_in()``. When kernels are compiled and loaded is ``kpu.warmup``'s business: by
default the numpy forms serve the first runs and the compiled paths take over layer by layer
once they are in memory, so that no run waits for numba (``MAIXEMU_KERNELS=wait``: the compiled
paths from the first run). This module keeps the engine choice, the cache folder and the
warm-up entry points the layers call (``schedule_warm_up``, ``schedule_kernel_warm_up``,
``preload``, ``wait_for_warm_up``, ``loaded_kernels``).
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
#: the compiled kernels module once imported
_KERNELS: ModuleType | None = None
_KERNELS_ERROR: str | None = None
#: what ``loaded_kernels()`` answers: ``_KERNELS`` once the warm-ups ``kpu.warmup`` holds are done
_SERVING: ModuleType | None = None
_NUMBA_INSTALLED: bool | None = None


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


_CACHE_DIR_LOCK = threading.Lock()


@contextlib.contextmanager
def numba_cache_in(path: Path | None = None) -> Iterator[None]:
    """Point numba's cache at ``path`` (default ``cache_dir()``) while our kernels are decorated,
    and only then (numba fixes a function's cache location when ``cache=True`` is applied): user
    code's own cached functions keep numba's default location. Every compiled kernel of maixemu
    (the KPU's here, the image module's in ``firmware.image._jit``) is decorated inside this, so
    none is written next to the installed sources (with ``pip install -e``, the user's checkout).
    One lock, because the setting is process-wide and two threads may decorate at once."""
    from numba.core import config

    path = cache_dir() if path is None else path
    with _CACHE_DIR_LOCK:
        previous = getattr(config, "CACHE_DIR")
        try:
            path.mkdir(parents=True, exist_ok=True)
            setattr(config, "CACHE_DIR", str(path))
        except OSError:  # an unwritable cache folder: numba then warns and compiles in memory
            pass
        try:
            yield
        finally:
            setattr(config, "CACHE_DIR", previous)


def kernels() -> ModuleType | None:
    """The compiled kernels module, or None when the fast engine is not to be used."""
    global _KERNELS, _KERNELS_ERROR, _SERVING
    choice = engine()
    if choice == "numpy":
        return None
    with _LOCK:
        if _KERNELS is None and _KERNELS_ERROR is None:
            try:
                import numba  # noqa: F401

                with numba_cache_in():
                    from . import kernels as compiled
                _KERNELS = compiled
                from . import warmup

                warmup.install_guard()
                if warmup.mode() == "wait" or not warmup.holding():
                    _SERVING = compiled  # (in the background mode, once the warm-ups are done)
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


def numba_installed() -> bool:
    """Whether numba can be found (without importing it: that costs ~0.4 s and 65 MB)."""
    global _NUMBA_INSTALLED
    if _NUMBA_INSTALLED is None:
        _NUMBA_INSTALLED = importlib.util.find_spec("numba") is not None
    return _NUMBA_INSTALLED


def preload() -> None:
    """Called once a model is prepared: ``kpu.warmup.preload`` (loads now in the ``wait`` mode)."""
    from . import warmup

    warmup.preload()


def schedule_warm_up(key, fn):
    """Run ``fn()`` once in the background thread after the kernels are loaded; the same ``key``
    (the kernels and argument types a layer uses; None: never shared) gives the same warm-up.
    Returns its ``kpu.warmup.WarmUp``: ``.kernels`` is the kernels module once it has run."""
    from . import warmup

    return warmup.schedule(fn, key)


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


def schedule_kernel_warm_up(name: str, args: tuple):
    """Have ``kernels.<name>(*args)`` compiled or loaded from the disk cache in the background
    thread, on stand-ins of ``args``; returns its ``WarmUp`` (``.kernels`` is what a run calls
    once it is in memory), or None when the compiled engine is not to be used. For host ops that
    call a kernel directly (V3/V4 CPU layers)."""
    from . import warmup

    try:
        if not compiled_available():
            return None
    except FastEngineUnavailable:
        return None
    copies = tuple(_stand_in(a) for a in args)

    def warm() -> None:
        kn = kernels()
        if kn is not None:
            getattr(kn, name)(*copies)

    return warmup.schedule(warm, ("kernel", name) + warmup.arg_key(args))


def wait_for_warm_up(timeout: float | None = None) -> None:
    """Start the compiled engine if it has not and block until every queued warm-up is done,
    compiles included (benchmarks and tests)."""
    from . import warmup

    warmup.wait(timeout)


def loaded_kernels() -> ModuleType | None:
    """The compiled kernels once they are in memory and every layer warm-up queued so far is done
    (no import, no lock; in the ``wait`` mode: once imported): helpers that call kernels straight
    away (the HWC transposes of ``kpu.ram``, V4's float convolutions) ask this."""
    return _SERVING


def unavailable_reason() -> str | None:
    kernels()
    return _KERNELS_ERROR
