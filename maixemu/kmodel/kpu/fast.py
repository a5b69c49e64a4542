"""Which KPU engine a layer may use: the compiled fast paths (the ``fast`` extra: numba, plus
onnxruntime for int8 products) or the numpy path, which needs nothing beyond numpy.

``MAIXEMU_KPU_ENGINE`` chooses, read when a model is loaded: ``auto`` (default: fast when numba
imports), ``numpy`` (force the numpy path, e.g. to compare), ``fast`` (fail loudly when the
extra is missing). Every path gives the same bytes; the int64 reference of ``KpuConv`` is the
oracle the tests hold them all to.

numba compiles the kernels the first time a process needs them and caches the machine code on
disk in the user's cache folder (``cache_dir()``: ``$MAIXEMU_CACHE_DIR`` or the platform's user
cache, e.g. ``~/.cache/maixemu/numba``), so later runs start in milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Iterator

ENGINES = ("auto", "numpy", "fast")

_LOCK = threading.Lock()
_KERNELS: ModuleType | None = None
_KERNELS_ERROR: str | None = None


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


def unavailable_reason() -> str | None:
    kernels()
    return _KERNELS_ERROR
