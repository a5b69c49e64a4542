"""How much of the machine a command's numeric work takes: numpy's BLAS (OpenBLAS, MKL, ...)
limited to ``MAIXEMU_THREADS`` threads (default 1) for the whole process, as the KPU engine
limits its own products. The ``maixemu`` commands run inside ``limited_threads()``: the engine and
the firmware make many small products, for which a pool of BLAS threads, one per core, only spins
(measured: 4x the CPU time of a face-detection frame)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ..kmodel.kpu import blas, parallel


@contextmanager
def limited_threads() -> Iterator[None]:
    with blas.process_threads(parallel.workers()):
        yield


def limit_process() -> None:
    """The same limit for the rest of this process (a command's worker process)."""
    blas.limit_process(parallel.workers())
