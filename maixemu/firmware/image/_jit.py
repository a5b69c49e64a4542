"""Compiled kernels for the firmware's inherently sequential loops (union-find, span flood fills,
running averages, Huffman decoding): numba when it is installed (the ``fast`` extra), the same
Python otherwise.

The kernels are written in the numba-compatible subset of Python over numpy arrays, so both paths
run the very same statements and give the same answer; numba only makes them fast. Set
``MAIXEMU_NO_JIT=1`` to force the Python path (the tests compare the two).

A kernel that only indexes its 1-D arrays element by element can name them in ``lists=``: the
Python path then receives them as lists (indexing a list is several times faster than indexing
a numpy array from Python) and copies the ones named in ``writes=`` back into the caller's arrays;
an argument that is a list already passes as it is.
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


def compiled() -> bool:
    """Whether kernels run compiled in this process (numba importable, ``MAIXEMU_NO_JIT`` unset)."""
    return _numba() is not None


def _as_lists(fn, lists: tuple[int, ...], writes: tuple[int, ...]):
    """``fn`` called with the arrays at ``lists`` as Python lists, ``writes`` copied back."""

    def run(*args):
        args = list(args)
        arrays = {i: args[i] for i in lists}
        for i in lists:
            if hasattr(args[i], "tolist"):  # a caller may hand over lists it keeps (a cached table)
                args[i] = args[i].tolist()
        out = fn(*args)
        for i in writes:
            arrays[i][...] = args[i]
        return out

    return run


def kernel(fn=None, *, lists: tuple[int, ...] = (), writes: tuple[int, ...] = ()):
    """Compile ``fn`` with ``numba.njit`` on first call when numba is available; plain Python otherwise.

    ``run.__wrapped__`` is the Python path (with the ``lists=`` conversion), for tests.
    """
    if fn is None:
        return lambda f: kernel(f, lists=lists, writes=writes)
    python = _as_lists(fn, lists, writes) if lists else fn
    compiled_fn = None

    def run(*args):
        nonlocal compiled_fn
        if compiled_fn is None:
            nb = _numba()
            if nb is None:
                compiled_fn = python
            else:
                from ...kmodel.kpu.fast import numba_cache_in

                with numba_cache_in():  # the user's cache folder, as the KPU kernels
                    compiled_fn = nb.njit(cache=True, nogil=True)(fn)
        return compiled_fn(*args)

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    run.__wrapped__ = python  # the Python version, for tests
    return run
