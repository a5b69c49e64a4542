"""Compiled kernels for the firmware's inherently sequential loops (union-find, span flood fills,
running averages): numba when it is installed (the ``fast`` extra), the same Python otherwise.

The kernels are written in the numba-compatible subset of Python over numpy arrays, so both paths
run the very same statements and give the same answer; numba only makes them fast. Set
``MAIXEMU_NO_JIT=1`` to force the Python path (the tests compare the two).
"""

from __future__ import annotations

import os


def _numba():
    if os.environ.get("MAIXEMU_NO_JIT"):
        return None
    try:
        import numba
    except Exception:  # pragma: no cover - numba missing or broken: the Python path is exact too
        return None
    return numba


def kernel(fn):
    """Compile ``fn`` with ``numba.njit`` on first call when numba is available; plain Python otherwise."""
    compiled = None

    def run(*args):
        nonlocal compiled
        if compiled is None:
            nb = _numba()
            compiled = nb.njit(cache=True, nogil=True)(fn) if nb is not None else fn
        return compiled(*args)

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn  # the Python version, for tests
    return run
