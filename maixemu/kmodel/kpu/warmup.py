"""Compiled kernels without waiting for them: the exact numpy (or plain Python) forms serve until
the compiled ones are in memory, then each layer switches, on the same bytes.

Every compiled path of maixemu has a plain twin that computes the same bytes: a KPU layer its
numpy plan (``KpuConv._prepare_fast``), a CPU layer its numpy op, an image kernel
(``firmware.image._jit``) its own statements run by Python. So nothing has to wait for numba:

* ``MAIXEMU_KERNELS=background`` (default). A model loads with its numpy plans and queues the
  compiled ones (``schedule``); the compiled engine starts (``start``) once the plain forms have
  spent ``START_AFTER_S`` of CPU time in this process (``account``, ``metered``: model runs and
  image kernels' Python twins). Then a loader thread imports numba, prepares each queued layer's
  compiled path and runs it once on zeros *without compiling* (``CACHE_ONLY``: a kernel that is
  in numba's disk cache loads in milliseconds; one that is not raises ``NotCached``). A kernel
  that is not cached goes to the background compile process (``compile_worker``), the layer waits
  parked, and when the kernel is in the cache its warm-up runs again. A layer whose warm-up ran
  puts its compiled path in place (``WarmUp.when_ready``): a run reads the path once, so it never
  mixes the two. ``loaded_kernels()`` (helpers such as the HWC transposes) answers once every
  queued warm-up is done. Nothing here blocks a caller on a compile; a test makes the compile
  hang and still gets its answers.
* ``MAIXEMU_KERNELS=wait`` (also implied by ``MAIXEMU_KPU_ENGINE=fast``). The compiled paths run
  from the first call and compile in this process when they must, as numba does by default:
  what tests and benchmarks use, to know which path they measure.

Why wait ``START_AFTER_S`` before starting (a rent-or-buy rule): from a warm cache, starting
costs 0.4–0.7 s of CPU and ~150 MB (importing numba, llvmlite and onnxruntime, LLVM's first use,
preparing and loading the layers' kernels: measured on the bundled sample's model and a face
detector) and the compiled paths then save 60–80 % of each run (1.2 against 3.0 ms, 6.6 against
31.8 ms CPU), so starting pays once the numpy forms have spent about 1 s; a run that ends sooner
was cheaper without it (a 3-frame face-detection run stays at ~0.8 s CPU and 110 MB), and a
longer one pays at most that start-up once more than the best choice made in hindsight.
Compiling (an empty cache) costs far more — 15–40 s of CPU for a face detector — and is paid once
per installed version, in the worker, while frames go on.

Why a worker process for compiling, not a thread: numba's compiler is mostly Python and holds the
GIL, so frames served next to a compiling thread took 3x their wall time (measured, face
detector); the worker also keeps LLVM's compile-time memory out of the run. If the worker cannot
run (no writable cache folder, it died), the loader thread compiles instead — slower frames
meanwhile, still never a wait.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import fast, heap
from .parallel import release_scratch, run_finished

MODES = ("background", "wait")
#: CPU seconds the plain forms may spend before the compiled engine starts (see the docstring)
START_AFTER_S = 1.0

_TLS = threading.local()
_COND = threading.Condition()


def mode() -> str:
    """``MAIXEMU_KERNELS``: ``background`` (default) or ``wait``; ``MAIXEMU_KPU_ENGINE=fast`` waits."""
    value = os.environ.get("MAIXEMU_KERNELS", "background").strip().lower() or "background"
    if value not in MODES:
        raise ValueError(f"MAIXEMU_KERNELS={value!r}; use one of {', '.join(MODES)}")
    if value == "background" and fast.engine() == "fast":
        return "wait"
    return value


class NotCached(Exception):
    """A kernel call inside ``CACHE_ONLY`` needs numba to compile: ``dispatcher`` is the kernel,
    ``args`` the numba types it was called with (what the compile worker is given)."""

    def __init__(self, dispatcher: Any, args: tuple):
        name = getattr(getattr(dispatcher, "py_func", None), "__qualname__", dispatcher)
        super().__init__(f"{name} is not compiled for {args}")
        self.dispatcher = dispatcher
        self.args = tuple(args)


class _CacheOnly:
    """``with CACHE_ONLY:`` kernels called in the block may load from numba's disk cache but not
    compile: they raise ``NotCached`` (numba's ``numba:compile`` event, see ``install_guard``)."""

    __slots__ = ()

    def __enter__(self) -> None:
        _TLS.cache_only = getattr(_TLS, "cache_only", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _TLS.cache_only -= 1


CACHE_ONLY = _CacheOnly()
_GUARD: Any = None


def install_guard() -> None:
    """Make numba's compile event raise ``NotCached`` inside ``CACHE_ONLY`` (once per process;
    elsewhere, user code's own numba functions included, numba compiles as usual)."""
    global _GUARD
    if _GUARD is not None:
        return
    from numba.core import event

    class _Refuse(event.Listener):
        def on_start(self, ev: Any) -> None:
            if getattr(_TLS, "cache_only", 0):
                data = ev.data or {}
                raise NotCached(data.get("dispatcher"), tuple(data.get("args", ())))

        def on_end(self, ev: Any) -> None:
            pass

    with _COND:
        if _GUARD is None:
            _GUARD = _Refuse()
            event.register("numba:compile", _GUARD)


def arg_key(args: tuple) -> tuple:
    """What decides the numba types of ``args`` (dtype, dimensions, layout, read-only and aligned
    flags of arrays; the Python or numpy type of scalars), as a cheap hashable key."""
    return tuple(_type_of(a) for a in args)


#: the array flags numba's types depend on (contiguity, writeable, aligned; not OWNDATA)
_TYPED_FLAGS = 0x1 | 0x2 | 0x100 | 0x400  # NPY_ARRAY_C_CONTIGUOUS, F_CONTIGUOUS, ALIGNED, WRITEABLE


def _type_of(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        # (the dtype object and the flags' bitmask: a kernel call in a frame loop builds this key,
        # and ``dtype.str`` or four flag attributes cost microseconds)
        return (a.dtype, a.ndim, a.flags.num & _TYPED_FLAGS)
    if isinstance(a, tuple):
        return (tuple, tuple(_type_of(x) for x in a))
    if isinstance(a, list):
        return (list, _type_of(a[0]) if a else None)
    return type(a)


class WarmUp:
    """One warm-up: ``fn`` runs compiled kernels once (in the loader thread) so that they are in
    memory. ``kernels`` is the compiled kernels module once it has run (in ``wait`` mode: as soon
    as the module is imported, as numba compiles on demand there), else None — what a layer reads
    on each run to choose its path. ``failed`` says why a warm-up gave up (the plain form stays)."""

    __slots__ = ("fn", "waits", "holds", "ready", "failed", "misses", "_callbacks")

    def __init__(self, fn: Callable[[], object], waits: bool, holds: bool = False):
        self.fn = fn
        self.waits = waits
        #: counts in ``_holding`` (see ``schedule``'s ``holds_helpers``)
        self.holds = holds
        self.ready = False
        self.failed: str | None = None
        self.misses: dict[int, int] = {}
        self._callbacks: list[Callable[[], None]] = []

    @property
    def kernels(self) -> ModuleType | None:
        if self.waits or self.ready:
            return fast._KERNELS
        return None

    def when_ready(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (in the loader thread) once the warm-up has run; now if it has."""
        with _COND:
            if not self.ready:
                self._callbacks.append(callback)
                return
        callback()


# --- the queue -----------------------------------------------------------------------------------
_jobs: deque[WarmUp] = deque()
_keys: dict[Any, WarmUp] = {}
#: worker request id -> warm-ups waiting for that kernel
_parked: dict[int, list[WarmUp]] = {}
_busy = 0
#: warm-ups queued and finished in this process (``progress``)
_counts = [0, 0]
#: why warm-ups gave up, in order (``failures``)
_failures: list[str] = []
#: queued layer warm-ups not done yet: ``loaded_kernels()`` answers None while there are any
_holding = 0
_thread: threading.Thread | None = None
_started = False
#: the interpreter is exiting: the loader takes no more jobs (``_quiesce_loader``)
_closing = False
_imported = False
#: numba is imported in this process and the guard installed (image kernels may load from the cache)
_active = False
#: the loader thread is compiling a kernel itself (no worker): callers must not touch numba's lock
_compiling_here = False
_spent = 0.0
_worker: Any = None
_worker_unusable: str | None = None
#: where a run learns that kernels are being compiled: a ``logging`` logger, so that the session
#: (which says it as a ``[maixemu]`` notice, once per run) needs no import of this package to listen
#: before the first kernel is asked for; it does not propagate (a script's own logging setup does
#: not print it again)
NOTICE_LOGGER = "maixemu.kernels"
_NOTICES = logging.getLogger(NOTICE_LOGGER)
_NOTICES.propagate = False
_NOTICES.setLevel(logging.INFO)
#: CPU seconds of compiling every kernel a face detector and the image module use, from an empty
#: cache (``maixemu kernels --compile``, measured on a busy AVX-512 machine)
FULL_COMPILE_CPU_S = 20


def compile_notice() -> str:
    """What a run says when it finds kernels missing (the session says it once per run)."""
    return (f"compiling the compiled engine's kernels in the background (about {FULL_COMPILE_CPU_S} s of CPU once); "
            "`maixemu kernels --compile` builds them all now")


def _tell_compiling() -> None:
    _NOTICES.info(compile_notice())


def schedule(fn: Callable[[], object], key: Any = None, *, holds_helpers: bool = True) -> WarmUp:
    """Queue ``fn`` for the loader thread; the same ``key`` (not None) gives the same warm-up.
    ``holds_helpers``: ``loaded_kernels()`` answers None until it is done (a layer's warm-up;
    not an image kernel's compile, which no KPU helper needs)."""
    global _holding
    waits = mode() == "wait"
    with _COND:
        if key is not None and key in _keys:
            return _keys[key]
        job = WarmUp(fn, waits, holds=holds_helpers and not waits)
        _counts[0] += 1
        if key is not None:
            _keys[key] = job
        _jobs.append(job)
        if job.holds:
            _holding += 1
            fast._SERVING = None  # loaded_kernels(): not until this warm-up is done too
        _COND.notify_all()
    if waits and fast._KERNELS is not None:
        start()  # (the wait mode: kernels in use already, so load these at once too)
    return job


def start() -> None:
    """Start the compiled engine: the loader thread imports numba and works through the queue."""
    global _started, _thread
    with _COND:
        _started = True
        if _thread is None:
            _thread = threading.Thread(target=_loader, name="maixemu-kernels", daemon=True)
            _thread.start()
        _COND.notify_all()


def preload() -> None:
    """After a model is prepared: in ``wait`` mode start loading at once (the first run usually
    finds the kernels in memory); in ``background`` mode the rule of ``account`` decides."""
    if mode() == "wait" and _jobs:
        start()


def started() -> bool:
    return _started


def active() -> bool:
    """Whether numba is in memory here (cached kernels may be loaded; ``CACHE_ONLY`` works)."""
    return _active


def holding() -> bool:
    """Whether layer warm-ups are queued and not done (``loaded_kernels()`` then answers None)."""
    return _holding > 0


def compiling_here() -> bool:
    return _compiling_here


def account(seconds: float) -> None:
    """``seconds`` of CPU spent in a plain form that a compiled kernel could take: past
    ``START_AFTER_S`` in all, the compiled engine starts."""
    global _spent
    if _started:
        return
    _spent += seconds
    if _spent >= START_AFTER_S and fast.numba_installed():
        start()


class _Metered:
    """The scope of a model run: times it while its compiled paths are queued and the engine has
    not started, and tells this thread's scratch that a run ended (``parallel.run_finished``:
    the plain forms' buffers go once the compiled paths serve every run)."""

    __slots__ = ("t0",)

    def __enter__(self) -> None:
        self.t0 = time.thread_time() if not _started and _jobs else -1.0

    def __exit__(self, *exc: object) -> None:
        if self.t0 >= 0.0:
            account(time.thread_time() - self.t0)
        run_finished()


def metered() -> _Metered:
    return _Metered()


def compile_later(miss: NotCached, on_ready: Callable[[], None]) -> None:
    """Have the kernel of ``miss`` compiled (worker) and loaded here; then call ``on_ready``.

    The request is recorded in the cache folder now (``kernel_cache.record``), not only when the
    loader thread hands it to the worker: a short run on a busy machine ended with jobs still
    queued, whose kernels ``maixemu kernels --compile`` then never heard of (the next run asked
    the worker for them again)."""
    dispatcher, args = miss.dispatcher, miss.args
    named = request_name(dispatcher)
    if named is not None:
        from .kernel_cache import record

        record(fast.cache_dir(), *named, args)
    job = schedule(lambda: dispatcher.compile(args), key=("compile", id(dispatcher), args), holds_helpers=False)
    job.when_ready(on_ready)
    if not _started:
        start()


def request_name(dispatcher: Any) -> tuple[str, str] | None:
    """The module and name by which the compile worker finds ``dispatcher``'s kernel, or None for
    a function it cannot import (a closure, a lambda)."""
    fn = getattr(dispatcher, "py_func", None)
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or "<" in name:
        return None
    return module, name


def idle() -> bool:
    """Nothing queued, parked or running (and numba's import, once started, is over)."""
    return (_imported or not _started) and not _jobs and not _parked and _busy == 0


def progress() -> tuple[int, int]:
    """``(finished, queued)`` warm-ups in this process so far (``maixemu kernels --compile``'s bar)."""
    return _counts[1], _counts[0]


def failures() -> list[str]:
    """Why warm-ups gave up in this process (their plain forms stay), in order."""
    return list(_failures)


def schedule_compile(module: str, name: str, argtypes: tuple) -> WarmUp:
    """Queue the kernel ``module.name`` for ``argtypes`` as the compile worker is asked for it: in
    the background mode a job that loads it from the cache or, when it is missing, has the worker
    compile it (``NotCached``) and then loads it."""
    from .compile_worker import resolve

    def load() -> None:
        resolve(module, name).compile(tuple(argtypes))

    return schedule(load, key=("request", module, name, tuple(argtypes)), holds_helpers=False)


def wait(timeout: float | None = None) -> bool:
    """Start the engine and block until every queued warm-up is done (benchmarks, tests); False
    when ``timeout`` ran out first."""
    if not _jobs and not _parked and not _busy and not _started:
        return True
    start()
    with _COND:
        return _COND.wait_for(lambda: _imported and not _jobs and not _parked and _busy == 0, timeout)


# --- the loader thread ---------------------------------------------------------------------------
def _import_numba() -> bool:
    try:
        import numba  # noqa: F401
    except Exception:
        return False
    install_guard()
    return True


#: warm-up jobs between two trims of the heap (``kpu.heap``). Measured: after every job a load and
#: its warm-ups take 10-25 % more CPU (15-30 ms; the returned pages are faulted in again, most in
#: this thread) for the lowest peak (mobilenet_v1 10.3 MiB); every 4th job 3-16 ms for 14.8 MiB;
#: none 17 MiB. The issue is the memory: every job.
TRIM_EVERY = 1
_since_trim = 0


def _loader() -> None:
    global _active, _imported, _busy, _since_trim
    ok = _import_numba()
    if ok:
        try:
            fast.kernels()  # the KPU kernels, in numba's cache folder (None on the numpy engine)
        except Exception:
            pass
    with _COND:
        _active = ok
        _imported = True
        if _holding == 0:
            fast._SERVING = fast._KERNELS
        _COND.notify_all()
    while True:
        with _COND:
            while not (_jobs and _started) and not _closing:
                _COND.wait()
            if _closing:
                return
            job = _jobs.popleft()
            _busy += 1
        try:
            _run(job)
        finally:
            # the warm-up's scratch buffers: a run on zeros needs them once, and this thread's
            # copies of a model's largest tiles stayed alive next to the running thread's; then,
            # every TRIM_EVERY jobs and when the queue is empty, what the jobs freed (the layers'
            # onnxruntime session builds) back to the system (``kpu.heap``)
            release_scratch()
            _since_trim += 1
            if _since_trim >= TRIM_EVERY or not _jobs:
                _since_trim = 0
                heap.trim()
            with _COND:
                _busy -= 1
                _COND.notify_all()


def _run(job: WarmUp) -> None:
    try:
        if job.waits:
            job.fn()
        else:
            with CACHE_ONLY:
                job.fn()
    except NotCached as miss:
        _park(job, miss)
        return
    except Exception as exc:  # e.g. a layer that raises on zeros: its plain form stays
        _finish(job, f"{type(exc).__name__}: {exc}")
        return
    _finish(job, None)


def _done() -> None:
    pass


def _finish(job: WarmUp, failed: str | None) -> None:
    global _holding
    with _COND:
        job.failed = failed
        job.ready = failed is None
        _counts[1] += 1
        if failed is not None:
            _failures.append(failed)
        job.fn = _done  # (what it held — a layer, stand-in arrays — may go)
        callbacks, job._callbacks = (job._callbacks if job.ready else []), []
        if job.holds:
            job.holds = False
            _holding = max(0, _holding - 1)  # (a job that outlived a test's ``_reset``)
            if _holding == 0:
                fast._SERVING = fast._KERNELS  # every queued layer warm-up is done
    for callback in callbacks:
        try:
            callback()
        except Exception:  # pragma: no cover - an install step cannot fail the other layers
            pass


def _park(job: WarmUp, miss: NotCached) -> None:
    """The warm-up needs a kernel compiled: by the worker (the job waits parked until it says the
    kernel is in the cache), or here when there is no usable worker or it already failed to."""
    worker = _get_worker()
    ident = worker.submit(miss) if worker is not None else None
    if worker is not None and ident is not None:
        answer = worker.answers.get(ident)
        job.misses[ident] = job.misses.get(ident, 0) + 1
        if answer is None:
            with _COND:
                if ident not in worker.answers:
                    _parked.setdefault(ident, []).append(job)
                    return
            answer = worker.answers[ident]
        if answer != "ok":
            _finish(job, f"compile failed: {answer}")
            return
        if job.misses[ident] == 1:
            _requeue([job])  # compiled meanwhile (another warm-up asked first): load it from the cache
            return
        # the worker says it is compiled, yet the cache does not give it (a foreign or unwritable
        # cache folder): compile it here
    _compile_here(job, miss)


def _compile_here(job: WarmUp, miss: NotCached) -> None:
    global _compiling_here
    _tell_compiling()
    saved = getattr(_TLS, "cache_only", 0)
    _TLS.cache_only = 0
    _compiling_here = True
    try:
        miss.dispatcher.compile(miss.args)
    except Exception as exc:
        _finish(job, f"compile failed: {type(exc).__name__}: {exc}")
        return
    finally:
        _compiling_here = False
        _TLS.cache_only = saved
    _requeue([job])


def _requeue(jobs: list[WarmUp]) -> None:
    with _COND:
        _jobs.extendleft(reversed(jobs))
        _COND.notify_all()


def _answered(ident: int) -> None:
    with _COND:
        jobs = _parked.pop(ident, [])
    if jobs:
        _requeue(jobs)


def _worker_gone(reason: str) -> None:
    """The worker exited: compile in the loader thread from now on; parked jobs try again."""
    global _worker_unusable
    with _COND:
        _worker_unusable = reason
        jobs = [j for waiting in _parked.values() for j in waiting]
        _parked.clear()
    _requeue(jobs)


# --- the compile worker --------------------------------------------------------------------------
class _Worker:
    """The parent's end of ``compile_worker``: requests by kernel and argument types, answers."""

    def __init__(self, folder: Path):
        env = dict(os.environ, MAIXEMU_KERNELS="wait")
        package_root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self.folder = folder
        log = open(folder / "compile.log", "wb")  # the worker's warnings and tracebacks, if any
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "maixemu.kmodel.kpu.compile_worker"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=log, cwd=folder, env=env, text=True, bufsize=1)
        finally:
            log.close()
        self._lock = threading.Lock()
        self._ids: dict[tuple, int] = {}
        #: request id -> "ok" or the failure's reason
        self.answers: dict[int, str] = {}
        threading.Thread(target=self._read, name="maixemu-compile-answers", daemon=True).start()

    def submit(self, miss: NotCached) -> int | None:
        """The request id of compiling ``miss`` (an earlier identical request's), or None when it
        cannot be sent (a kernel not reachable by module and name, the worker gone)."""
        from .compile_worker import request_line

        named = request_name(miss.dispatcher)
        if named is None:
            return None
        module, name = named
        try:
            key = (module, name, miss.args)
            hash(key)
        except TypeError:
            return None
        with self._lock:
            ident = self._ids.get(key)
            if ident is not None:
                return ident
            ident = len(self._ids) + 1
            try:
                line = request_line(ident, module, name, miss.args)
                assert self.proc.stdin is not None
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except Exception:
                return None
            self._ids[key] = ident
        from .kernel_cache import record

        record(self.folder, module, name, miss.args)  # (``maixemu kernels --compile`` compiles it too)
        _tell_compiling()
        return ident

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            word, _, rest = line.strip().partition(" ")
            ident_s, _, reason = rest.partition(" ")
            if word in ("ok", "fail") and ident_s.isdigit():
                ident = int(ident_s)
                self.answers[ident] = "ok" if word == "ok" else (reason or "failed")
                _answered(ident)
        _worker_gone(f"the compile worker exited ({self.proc.wait()})")

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _get_worker() -> _Worker | None:
    global _worker, _worker_unusable
    with _COND:
        if _worker is not None or _worker_unusable is not None:
            return _worker if _worker_unusable is None else None
        try:
            folder = fast.cache_dir()
            folder.mkdir(parents=True, exist_ok=True)
            if not os.access(folder, os.W_OK):
                raise OSError(f"{folder} is not writable")
            _worker = _Worker(folder)
        except Exception as exc:  # no cache to share, or no process to start: compile here
            _worker_unusable = f"{type(exc).__name__}: {exc}"
            return None
        return _worker


#: how long the interpreter's exit waits for the loader's running warm-up (one layer's, well
#: under a second; a bound so that an exit never hangs on a job that does not end)
EXIT_WAIT_S = 10.0


def _quiesce_loader(timeout: float = EXIT_WAIT_S) -> None:
    """The interpreter is exiting: the loader takes no more jobs, and the exit waits for the one
    it runs. Why: Python ends a daemon thread that takes the GIL back during finalisation with
    ``pthread_exit``, and a thread inside onnxruntime (a warm-up's exactness proof or its run on
    zeros) takes it back in a C++ destructor, so the unwind aborts the whole process ("terminate
    called without an active exception", SIGABRT) after the script's result. A numba compile
    here holds no C++ frame over that step: the exit does not wait for it."""
    global _closing
    thread = _thread
    deadline = time.monotonic() + timeout
    try:
        with _COND:
            _closing = True
            _COND.notify_all()
            _COND.wait_for(lambda: _busy == 0 or _compiling_here, timeout)
        if thread is not None and thread is not threading.current_thread() and not _compiling_here:
            thread.join(max(0.0, deadline - time.monotonic()))  # (one bound for the whole wait)
    except KeyboardInterrupt:  # a second Ctrl-C while the exit waits: leave now
        pass


def stop_worker() -> None:
    """The run is over: the worker stops (what it finished is in the cache; the rest another run
    compiles). Also ``maixemu kernels --compile``'s end, so that its CPU time counts."""
    worker = _worker
    if worker is not None:
        worker.close()


@atexit.register
def _at_exit() -> None:
    _quiesce_loader()
    stop_worker()


_stop_worker = stop_worker  # (the name tests use)


def _after_fork() -> None:
    """A forked child has neither the loader thread nor the worker (the parent's): it starts its
    own when its own runs call for them; warm-ups parked on the parent's worker queue again."""
    global _COND, _thread, _worker, _worker_unusable, _started, _spent, _busy, _compiling_here, _closing
    _COND = threading.Condition()
    _thread, _worker, _worker_unusable, _closing = None, None, None, False
    _started, _spent, _busy, _compiling_here = False, 0.0, 0, False
    _jobs.extend(j for waiting in _parked.values() for j in waiting)
    _parked.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _reset() -> None:
    """Forget the queue and stop the worker (tests switching modes; not for production use)."""
    global _started, _spent, _worker, _worker_unusable, _holding
    with _COND:
        _holding = 0
        _jobs.clear()
        _parked.clear()
        _keys.clear()
        _started = False
        _spent = 0.0
        worker, _worker, _worker_unusable = _worker, None, None
        fast._SERVING = fast._KERNELS
        _COND.notify_all()
    if worker is not None:
        worker.close()
