"""Every ``maixemu`` command runs with numpy's BLAS limited to ``MAIXEMU_THREADS`` threads
(default 1), so a script's and the CPU layers' small products do not spin a pool of BLAS threads."""

from __future__ import annotations

import pytest

from maixemu import cli
from maixemu.kmodel.kpu import blas

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list[int]:
    return [int(info["num_threads"]) for info in threadpoolctl.threadpool_info() if info.get("user_api") == "blas"]


def test_process_threads_limits_and_restores():
    import numpy  # noqa: F401

    before = _blas_threads()
    with blas.process_threads(1):
        assert all(n == 1 for n in _blas_threads())
    assert _blas_threads() == before


@pytest.mark.parametrize("env,want", [(None, 1), ("3", 3)])
def test_every_command_runs_inside_the_limit(monkeypatch, capsys, env, want):
    seen: list[int] = []
    real = blas.process_threads

    def recording(n):
        seen.append(n)
        return real(n)

    monkeypatch.setattr(blas, "process_threads", recording)
    if env is None:
        monkeypatch.delenv("MAIXEMU_THREADS", raising=False)
    else:
        monkeypatch.setenv("MAIXEMU_THREADS", env)
    assert cli.main(["info", str(cli.Path(cli.__file__).parent / "data" / "edge_filters.kmodel")]) == 0
    assert seen == [want]
    assert "edge_filters.kmodel" in capsys.readouterr().out


def _numpy_openblas_threads() -> list[int]:
    """The count of the OpenBLAS ``blas`` sets (another library loaded by then keeps its own)."""
    import os

    return [int(info["num_threads"]) for info in threadpoolctl.threadpool_info()
            if info.get("user_api") == "blas" and os.path.realpath(info["filepath"]) == os.path.realpath(blas.LIBRARY or "")]


def test_blocks_in_several_threads_share_one_limit_and_restore_the_count_before():
    """OpenBLAS's count is the process's: a block ending in one thread while another thread's block
    runs must keep the limit, and the last one restores what was there before (a save/restore per
    block left the process at 1 or at the old count depending on which thread ended first)."""
    import threading

    if not blas.available():
        pytest.skip("numpy's BLAS is not an OpenBLAS with openblas_set_num_threads_local")
    with blas.process_threads(3):
        if _numpy_openblas_threads() != [3]:
            pytest.skip("this BLAS does not take a count of 3")
        entered = {name: threading.Event() for name in "ab"}
        leave = {name: threading.Event() for name in "ab"}

        def block(name: str) -> None:
            with blas.blas_threads(1):
                entered[name].set()
                leave[name].wait(10)

        threads = {name: threading.Thread(target=block, args=(name,)) for name in "ab"}
        threads["a"].start()
        assert entered["a"].wait(10) and _numpy_openblas_threads() == [1]
        threads["b"].start()
        assert entered["b"].wait(10)
        leave["a"].set()
        threads["a"].join(10)
        assert _numpy_openblas_threads() == [1]  # b's products still run single-threaded
        leave["b"].set()
        threads["b"].join(10)
        assert _numpy_openblas_threads() == [3]
        with blas.blas_threads(1):  # the command's limit set inside a block is what the block restores
            with blas.process_threads(2):
                assert _numpy_openblas_threads() == [1]
            assert _numpy_openblas_threads() == [1]
        assert _numpy_openblas_threads() == [3]


def test_an_eval_worker_process_runs_with_the_commands_limit(monkeypatch):
    """A spawned ``--jobs`` worker starts with a BLAS thread per core; it takes MAIXEMU_THREADS
    as the command's own process does (the same numbers, no pool per worker over the same cores)."""
    import signal

    from maixemu.evaluate import executors

    monkeypatch.setenv("MAIXEMU_THREADS", "3")
    handler = signal.getsignal(signal.SIGINT)
    try:
        with blas.process_threads(1):  # (restores this process's count after the test)
            executors._start_worker()
            assert all(n == 3 for n in _blas_threads())
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, handler)
