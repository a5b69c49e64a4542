"""The background compile process: numba compiles kernels into its disk cache here, not in the
process that serves frames.

Why a process and not a thread: numba's compiler is mostly Python, so a compiling thread holds
the GIL for most of its time — measured on the face detector, the numpy engine's frames took 3x
their wall time while a thread compiled next to them. A process also keeps LLVM's compile-time
memory out of the run (its peak RSS was 350 MB with an in-process compile, 115 MB without), and a
compiler crash cannot take the run down. The parent (``kpu.warmup``) loads what this process
wrote from the cache folder (``kpu.fast.cache_dir()``), which takes milliseconds.

Protocol, one line per message: the parent writes ``{"id": N, "module": ..., "name": ...,
"sig": base64(pickle(argument types))}`` on stdin; this process answers ``ok N`` or
``fail N reason`` on stdout once the compiled code is in the cache. It runs at a lower priority
than the run (``NICE``), one kernel at a time, and holds a lock file in the cache folder while it
compiles, so that two runs started together do not compile the same kernels twice (the second
then finds them cached). Its stdin closing means the parent is gone: it exits at once, whatever
it was compiling (what it finished is in the cache; numba writes each file whole, then renames).
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import pickle
import queue
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

#: The worker's priority below the run's (``os.nice``): frames first, compiling in the idle time.
NICE = 5
LOCK_NAME = "compile.lock"


def request_line(ident: int, module: str, name: str, argtypes: tuple) -> str:
    """The line the parent sends for ``module.name`` compiled for ``argtypes`` (numba types)."""
    sig = base64.b64encode(pickle.dumps(tuple(argtypes))).decode("ascii")
    return json.dumps({"id": ident, "module": module, "name": name, "sig": sig}) + "\n"


def resolve(module: str, name: str) -> Any:
    """The numba dispatcher of a kernel: a module-level ``@njit`` function (``kpu.kernels``) or a
    ``firmware.image._jit.kernel`` wrapper, which makes its dispatcher on request."""
    from .fast import numba_cache_in

    with numba_cache_in():  # a module of @njit kernels fixes their cache folder as it is imported
        obj = getattr(importlib.import_module(module), name)
    make = getattr(obj, "dispatcher", None)
    return make() if callable(make) else obj


@contextlib.contextmanager
def _cache_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder/compile.lock`` across processes (POSIX ``flock``; elsewhere
    none: two workers then may compile the same kernel twice, which wastes time, not results)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read_requests(lines: "queue.Queue[dict]") -> None:
    for line in sys.stdin:
        line = line.strip()
        if line:
            lines.put(json.loads(line))
    os._exit(0)  # the parent closed the pipe (it ended or died): stop even in mid-compile


def main() -> None:
    os.environ["MAIXEMU_KERNELS"] = "wait"  # this process is where compiling is allowed
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(NICE)
    import numba  # noqa: F401  (before the first request arrives)

    from .fast import cache_dir

    folder = cache_dir()
    requests: queue.Queue[dict] = queue.Queue()
    threading.Thread(target=_read_requests, args=(requests,), name="requests", daemon=True).start()
    while True:
        req = requests.get()
        ident = req["id"]
        try:
            dispatcher = resolve(req["module"], req["name"])
            argtypes = pickle.loads(base64.b64decode(req["sig"]))
            with _cache_lock(folder):
                dispatcher.compile(tuple(argtypes))
        except Exception as exc:  # a kernel numba cannot compile: the parent keeps the plain form
            reason = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:500]
            print(f"fail {ident} {reason}", flush=True)
        else:
            print(f"ok {ident}", flush=True)


if __name__ == "__main__":
    main()
