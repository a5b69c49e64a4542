"""What this machine gives the KPU engine, in words: the CPU and the flags that decide its products
(VNNI / AMX for onnxruntime's u8s8 kernel, AVX2 / AVX-512, ARM's dot product), whether the u8s8
kernel saturates 16-bit pair sums here (``int8.pair_saturation``), the BLAS numpy links and its
threads. ``maixemu bench`` prints it: benchmark numbers mean little without the machine, and these
are facts to report, never to assert.
"""

from __future__ import annotations

import os
import platform

#: flags that change which product is exact or fast (x86 and ARM names as Linux lists them)
DECISIVE_FLAGS = ("sse4_1", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8",
                  "asimd", "asimddp", "i8mm", "sve")


def cpu() -> tuple[str, set[str]]:
    """(model name, flags) from ``/proc/cpuinfo`` (Linux), else what ``platform`` knows."""
    name, flags = "", set[str]()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                if key in ("model name", "hardware", "cpu model") and not name:
                    name = value.strip()
                elif key in ("flags", "features") and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return name or platform.processor() or platform.machine(), flags


def describe() -> list[str]:
    """Lines: the CPU and its decisive flags; the int8 products; the BLAS and its threads."""
    from . import int8, parallel

    name, flags = cpu()
    have = [f for f in DECISIVE_FLAGS if f in flags]
    lacks = [f for f in ("avx2", "avx512_vnni", "avx_vnni", "amx_int8") if f not in flags and platform.machine() in ("x86_64", "AMD64")]
    lines = [f"CPU: {name} ({platform.machine()}, {os.cpu_count()} logical cores): " + (" ".join(have) or "no flags listed")
             + (f"; no {' '.join(lacks)}" if lacks else "")]
    why = int8.unavailable_reason()
    if why:
        lines.append(f"int8 products: none ({why})")
    else:
        import onnxruntime

        kinds = []
        for kind in int8.INT8_KINDS:
            kinds.append(f"{kind} {'saturates 16-bit pair sums (taken only where the weights cannot overflow one)' if int8.pair_saturation(kind) else 'sums exact'}")
        lines.append(f"int8 products: onnxruntime {onnxruntime.__version__}: " + "; ".join(kinds))
    lines.append(_blas_line(parallel.workers()))
    return lines


def _blas_line(workers: int) -> str:
    try:
        import numpy  # noqa: F401
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS: unknown (threadpoolctl missing)"
    libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not libs:
        return "BLAS: none found"
    parts = [f"{i.get('internal_api')} {i.get('version') or ''} {i.get('architecture') or ''}".replace("  ", " ").strip()
             + f", {i.get('num_threads')} threads now" for i in libs]
    return f"BLAS: {'; '.join(parts)} (the engine's products: 1 per work item; MAIXEMU_THREADS={workers})"
