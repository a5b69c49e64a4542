"""Where the images are evaluated: this process, ``--jobs N`` processes, or a Dask cluster.

All three send the same batches to the same :func:`worker.evaluate_batch` and yield its records
as batches finish; the caller orders records by sample index, so the results never depend on
which executor ran or in which order batches came back.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator

from .dataset import Sample
from .errors import EvalError, MissingExtra
from .spec import WorkSpec
from .worker import evaluate_batch


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def batches(samples: list[Sample], size: int) -> list[list[Sample]]:
    return [samples[i : i + size] for i in range(0, len(samples), size)]


def batch_size(count: int, workers: int) -> int:
    """Small batches keep the progress bar moving and a checkpoint fine-grained; at least 4 per
    worker spread the load, at most 16 images each bound the loss of an interruption."""
    return max(1, min(16, count // max(1, workers * 4)))


def run_serial(spec: WorkSpec, samples: list[Sample]) -> Iterator[list[dict]]:
    for batch in batches(samples, 1):
        yield evaluate_batch(spec, batch)


def _start_worker() -> None:
    """A worker leaves Ctrl-C to the main process, which keeps what is done and stops them, and
    runs with the command's BLAS limit (``MAIXEMU_THREADS``, default 1): a spawned process starts
    with a BLAS thread per core, so ``--jobs`` workers each spun a pool over the same cores."""
    from ..session.compute import limit_process

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_process()


def run_processes(spec: WorkSpec, samples: list[Sample], jobs: int) -> Iterator[list[dict]]:
    """``jobs`` worker processes, started with ``spawn`` (no fork of a process that holds threads);
    at most two batches per worker are in flight, so an interruption loses little work."""
    queue = iter(batches(samples, batch_size(len(samples), jobs)))
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker)
    finished = False
    try:
        pending = {pool.submit(evaluate_batch, spec, batch) for _, batch in zip(range(jobs * 2), queue)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                following = next(queue, None)
                if following is not None:
                    pending.add(pool.submit(evaluate_batch, spec, following))
                yield future.result()
        finished = True
    except BrokenProcessPool as exc:
        raise EvalError(f"a worker process died ({exc}); what was done is kept: run the same command again to resume") from None
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)


def run_dask(spec: WorkSpec, samples: list[Sample], address: str) -> Iterator[list[dict]]:
    """Batches as Dask tasks on the cluster at ``address`` (its workers need maixemu installed and
    the model, reference and images at the same paths)."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise MissingExtra("dask[distributed]", "--dask") from None
    try:
        client = Client(address, timeout="20s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise EvalError(f"--dask {address}: cannot reach the scheduler ({exc})") from None
    try:
        workers = max(1, sum(client.nthreads().values()))
        work = batches(samples, batch_size(len(samples), workers))
        futures = [client.submit(evaluate_batch, spec, batch, pure=False) for batch in work]
        try:
            for future in as_completed(futures, loop=client.loop):
                yield future.result()
        finally:
            client.cancel(futures)
    finally:
        client.close()
