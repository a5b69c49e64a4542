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
