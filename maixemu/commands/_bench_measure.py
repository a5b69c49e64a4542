"""What ``maixemu bench`` measures besides the run time: a model's working memory (the peak
resident memory its load and runs add to a process whose kernels are already loaded) and the
first output of a fresh process, with an empty kernel cache (cold) and then with that cache
filled (warm): process CPU time, wall time and peak resident memory.

Resident memory, not Python's traced heap: it counts what onnxruntime and numba allocate too, and
not the pages of an arena that is reserved but never written (the 2 MiB KPU RAM of a model whose
KPU layers pass their maps directly). Linux only (``/proc/self``); elsewhere these are None.
What it leaves out: the kernels, onnxruntime and numba themselves (loaded by the timed load
before), and the scratch of other threads than this one (``MAIXEMU_THREADS`` > 1). Tables are
counted: the caches that share them hold them weakly, and the timed model is gone by then (it
used to stay alive, so its tables were found built and the load measured none of them).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Start VmHWM again from the current resident size (Linux ≥ 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def _trim() -> None:
    """Hand freed heap pages back to the system (glibc), so a baseline holds no reusable slack."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def working_memory(path: Path, inputs: list, runs: int = 3) -> int | None:
    """Bytes of resident memory a fresh load of ``path`` and ``runs`` runs add at their peak, in
    this process (kernels loaded by an earlier load of the model): weights as the engine holds
    them, onnxruntime's prepacked products, tables, maps and scratch buffers."""
    from ..kmodel import load_kmodel
    from ..kmodel.kpu import fast
    from ..kmodel.kpu.parallel import release_scratch

    release_scratch()
    gc.collect()
    _trim()
    base = _status("VmRSS")
    if base is None or not _reset_peak():
        return None
    model = load_kmodel(path)
    fast.wait_for_warm_up()
    for _ in range(runs):
        model.run(*inputs)
    peak = _status("VmHWM")
    del model
    release_scratch()
    gc.collect()
    return None if peak is None else max(0, peak - base)


@dataclass
class FirstOutput:
    """A fresh process up to its first output: ``cpu`` (process CPU s, every thread), ``wall`` (s),
    ``rss`` (peak resident bytes by then); ``ready_*``: the same once every kernel is loaded."""

    cpu: float
    wall: float
    rss: int
    ready_cpu: float
    ready_wall: float
    ready_rss: int


#: (the peak is the process's own VmHWM: ``ru_maxrss`` survives ``exec``, so a child started by a
#: bench that already holds 200 MB reported those 200 MB as its own)
_FRESH_SCRIPT = """
import json, sys, time
w0, c0 = time.perf_counter(), time.process_time()
def peak():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024
import numpy as np
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.kpu import fast
m = load_kmodel(sys.argv[1])
x = [np.zeros(s.shape, s.dtype) for s in m.inputs]
m.run(*x)
w1, c1, r1 = time.perf_counter(), time.process_time(), peak()
fast.wait_for_warm_up()
w2, c2, r2 = time.perf_counter(), time.process_time(), peak()
print(json.dumps([c1 - c0, w1 - w0, r1, c2 - c0, w2 - w0, r2]))
"""


def first_output(path: Path, cache_dir: Path) -> FirstOutput:
    """``import`` + ``load_kmodel`` + the first ``run()`` in a new Python process whose kernel
    cache is ``cache_dir`` (``MAIXEMU_CACHE_DIR``)."""
    env = dict(os.environ, MAIXEMU_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", _FRESH_SCRIPT, str(path)], capture_output=True, text=True, timeout=1800,
                          check=True, env=env)
    values = json.loads(done.stdout.strip().splitlines()[-1])
    return FirstOutput(float(values[0]), float(values[1]), int(values[2]), float(values[3]), float(values[4]), int(values[5]))


def cold_and_warm(path: Path) -> tuple[FirstOutput, FirstOutput]:
    """The first output with an empty kernel cache, then with the cache that run left."""
    with tempfile.TemporaryDirectory(prefix="maixemu-bench-cache-") as folder:
        cold = first_output(path, Path(folder))
        warm = first_output(path, Path(folder))
    return cold, warm
