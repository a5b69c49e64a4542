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

No call waits for numba (the KPU engine's rule, ``kmodel.kpu.warmup``; the same cache folder,
loader thread and compile worker): in the default ``MAIXEMU_KERNELS=background`` mode a kernel
runs its Python path until the compiled engine has started (the Python paths' CPU time counts
towards starting it), then its compiled code when numba's disk cache has it (a load of
milliseconds), else its Python path again while the compile worker compiles it.
``compiled_now()`` says whether kernels are served compiled at this moment, so a caller with a
vectorised numpy alternative takes that one until then (a slow Python path should have one), and
from then on asks the kernel's ``attempt`` and takes the array form again while that kernel's own
compile is under way (the engine being started says nothing of one kernel being in memory);
``compiled()`` whether they will be in this process at all. Kernels without an array form are the
sequential loops no array code does fast (union-find, span flood fills, running averages with
floor division, Huffman decoding, a ported qsort whose tie order matters, LSD's region growing):
they run their Python twin while cold rather than wait, as the worker compiles them in about the
time a wait would take while frames go on (a wait would stall the frame loop for the whole
compile: 1-19 s of CPU for those kernels, measured). Under ``MAIXEMU_KERNELS=wait`` the
first call compiles (numba's own behaviour: tests, benchmarks).
"""

from __future__ import annotations

import os
import threading
import time
from types import ModuleType
from typing import Any, Callable


_WARMUP: list[ModuleType] = []
#: ``kmodel.kpu.fast.numba_installed`` (asked at every call; the import is done once)
_INSTALLED: list[Callable[[], bool]] = []


def _warmup() -> ModuleType:
    """``kmodel.kpu.warmup``, imported on the first kernel call, not with the image module (the
    KPU package costs ~70 ms to import, which a script that calls no kernel need not pay); kept,
    as every kernel call asks for it (an import statement per call costs a microsecond)."""
    if not _WARMUP:
        from ...kmodel.kpu import warmup

        _WARMUP.append(warmup)
    return _WARMUP[0]


def _installed() -> bool:
    if not _INSTALLED:
        from ...kmodel.kpu.fast import numba_installed

        _INSTALLED.append(numba_installed)
    return _INSTALLED[0]()


def _numba():
    if os.environ.get("MAIXEMU_NO_JIT") or not _installed():
        return None
    try:
        import numba
    except Exception:  # pragma: no cover - numba missing or broken: the Python path is exact too
        return None
    return numba


def compiled() -> bool:
    """Whether kernels run compiled in this process (numba importable, ``MAIXEMU_NO_JIT`` unset):
    for decisions made once, such as registering helpers with numba. When they are served
    compiled is ``compiled_now()``'s answer."""
    return _numba() is not None


def compiled_now() -> bool:
    """Whether kernels are served compiled at this moment: at once under ``MAIXEMU_KERNELS=wait``,
    once the compiled engine has started in the background mode (see the module docstring). A
    caller with a vectorised numpy alternative takes that one while this is False, as a kernel's
    Python twin is slower; it asks nothing of numba (no import) before then."""
    if os.environ.get("MAIXEMU_NO_JIT") or not _installed():
        return False
    warmup = _warmup()
    if warmup.mode() == "wait":
        return _numba() is not None
    if warmup.active():
        return True
    _account_vectorised(warmup)
    return False


#: a thread's CPU clock at its last ``compiled_now()`` answer of False
_LAST_ASKED = threading.local()
#: most CPU time one interval between two such answers counts (the script's own work between two
#: image calls of a frame loop is counted, but not a long pause in an image-free stretch)
_MAX_INTERVAL_S = 0.1


def _account_vectorised(warmup: ModuleType) -> None:
    """Count the time since this thread last asked towards starting the compiled engine: a frame
    loop on the vectorised forms is time a compiled kernel could take as well, so it starts the
    engine as the Python twins' time does (without this an image-only script never would)."""
    now = time.thread_time()
    last = getattr(_LAST_ASKED, "t", None)
    _LAST_ASKED.t = now
    if last is not None:
        warmup.account(min(max(now - last, 0.0), _MAX_INTERVAL_S))


class _NotServed:
    """:data:`NOT_SERVED`'s type."""

    def __repr__(self) -> str:
        return "NOT_SERVED"


#: what ``kernel(...).attempt`` returns when the kernel's compiled code is not in memory yet
NOT_SERVED = _NotServed()


def _as_lists(fn, lists: tuple[int, ...], writes: tuple[int, ...]):
    """``fn`` called with the arrays at ``lists`` as Python lists, ``writes`` copied back."""

    def run(*given):
        args = list(given)
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
    """Compile ``fn`` with ``numba.njit`` when numba is available; plain Python otherwise (and,
    in the background mode, until its compiled code is in memory: see the module docstring).

    ``run.__wrapped__`` is the Python path (with the ``lists=`` conversion), for tests;
    ``run.dispatcher()`` numba's dispatcher of ``fn`` (the compile worker calls it);
    ``run.attempt(*args)`` the compiled answer or :data:`NOT_SERVED` (for callers with a
    vectorised form: see ``attempt``).
    """
    if fn is None:
        return lambda f: kernel(f, lists=lists, writes=writes)
    python = _as_lists(fn, lists, writes) if lists else fn
    made: list[Any] = []
    #: argument-type keys (``warmup.arg_key``) that ran compiled / that the worker is compiling
    ready: set = set()
    pending: set = set()

    def dispatcher():
        if not made:
            nb = _numba()
            if nb is None:
                raise RuntimeError(f"numba is not available for {fn.__qualname__}")
            from ...kmodel.kpu.fast import numba_cache_in

            with numba_cache_in():  # the user's cache folder, as the KPU kernels
                compiled_fn = nb.njit(cache=True, nogil=True)(fn)
            _warmup().install_guard()
            made.append(compiled_fn)
        return made[0]

    def plain(*args):
        """The Python path; its CPU time counts towards starting the compiled engine."""
        t0 = time.thread_time()
        try:
            return python(*args)
        finally:
            _warmup().account(time.thread_time() - t0)

    def attempt(*args):
        """The compiled code's answer if it is in memory (or, under ``wait``, once compiled), else
        :data:`NOT_SERVED` — having the worker compile it for later — so a caller with a
        vectorised form takes that one rather than the Python twin (whose statements are the
        C's, per pixel: seconds on a frame)."""
        if os.environ.get("MAIXEMU_NO_JIT") or not _installed():
            return NOT_SERVED
        warmup = _warmup()
        if ready and (warmup.active() or warmup.mode() == "wait") and warmup.arg_key(args) in ready:
            return made[0](*args)  # (the hot path: see ``run``)
        if warmup.mode() == "wait":
            if _numba() is None:
                return NOT_SERVED
            out = dispatcher()(*args)
            ready.add(warmup.arg_key(args))
            return out
        if not warmup.active():
            return NOT_SERVED
        key = warmup.arg_key(args)
        if key in pending or (key not in ready and warmup.compiling_here()):
            return NOT_SERVED  # (a compile in this process holds numba's lock: do not queue on it)
        try:
            with warmup.CACHE_ONLY:
                out = dispatcher()(*args)
        except warmup.NotCached as miss:
            pending.add(key)
            warmup.compile_later(miss, lambda: pending.discard(key))
            return NOT_SERVED
        ready.add(key)
        return out

    def run(*args):
        if os.environ.get("MAIXEMU_NO_JIT") or not _installed():
            return python(*args)
        warmup = _warmup()
        if ready and (warmup.active() or warmup.mode() == "wait"):
            # the hot path of a frame loop: argument types that ran compiled here before need no
            # cache guard (numba has their code in memory and compiles nothing) — a call costs
            # the key, not the microseconds of the checks below
            key = warmup.arg_key(args)
            if key in ready:
                return made[0](*args)
        if warmup.mode() == "wait" or warmup.active():
            out = attempt(*args)
            if out is not NOT_SERVED:
                return out
            if warmup.mode() == "wait":
                return python(*args)
        return plain(*args)

    run.__name__ = fn.__name__
    run.__qualname__ = fn.__qualname__
    run.__module__ = fn.__module__  # (where ``maixemu kernels`` finds it)
    run.__doc__ = fn.__doc__
    setattr(run, "__wrapped__", plain)  # the Python version, for tests
    setattr(run, "dispatcher", dispatcher)
    setattr(run, "attempt", attempt)
    return run


def python_twin(k):
    """A stand-in for the kernel ``k`` whose call and ``attempt`` both run its Python path: what a
    test puts in a caller's module to run the twin through a caller that asks ``attempt`` first
    (the twin must give the compiled kernel's and the vectorised form's answer)."""
    twin = k.__wrapped__

    def run(*args):
        return twin(*args)

    setattr(run, "__wrapped__", twin)
    setattr(run, "attempt", twin)
    return run
