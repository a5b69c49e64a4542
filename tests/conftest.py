"""Shared fixtures: where ``../shared`` (models, golden vectors, images, scripts) lives.

The shared folder sits next to the repository root. When it is absent (a bare clone), tests that
need it skip with a reason that says so instead of failing.

Every test runs on a board of its own: :func:`board_state` (autouse) powers one on before the test
and switches it off after, so no test sees another's camera, panel, pins, models or ``sys.path``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Compiled kernels run from their first call in the tests (numba compiles on demand, as it does
# by default), so that a test comparing a kernel with its plain twin really runs the kernel and
# a path test sees the path it asks for; the default background mode (kpu.warmup) is what
# tests/kmodel/test_cold_start.py exercises, and what subprocesses get when a test clears this.
os.environ.setdefault("MAIXEMU_KERNELS", "wait")


def _take_back_background_signals() -> None:
    """Give this test process SIGINT's and SIGQUIT's default handling when it arrived with them ignored.

    A shell starts a background job (``cmd &`` in a CI script) with SIGINT and SIGQUIT ignored, and
    every process it starts inherits that; ``maixemu run`` rightly keeps an ignored signal ignored
    (as ``nohup`` expects), so the tests that stop a child with Ctrl-C or SIGQUIT would wait for a
    child that never stops. A background job gets no terminal signals anyway, so taking the two
    back here changes nothing else, and every child a test starts inherits the defaults.
    """
    import signal

    if os.name != "posix":
        return
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


_take_back_background_signals()

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path inside ../shared, or skip the calling test if it is not there."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: the shared data folder (../shared next to the repo root) is absent")
    return path


@pytest.fixture(autouse=True)
def board_state():
    """The one fresh-board fixture: a powered-on ``BoardState`` that firmware calls of the test read.

    Plug adapters into it directly: ``board_state.storage = Storage(...)``,
    ``board_state.camera.plug(lambda: source)``, ``board_state.display = sink``,
    ``board_state.events.snapshot.append(hook)``, ``board_state.clock.use(now_ns, sleep_ns)``.
    """
    from maixemu.firmware import state

    board = state.BoardState()
    state.activate(board)
    try:
        yield board
    finally:
        state.deactivate(board)
        board.close_parts()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return shared_path()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


#: The KPU engines every exactness test runs on: the numpy path and the compiled path with each
#: product kind forced (``MAIXEMU_KPU_PRODUCTS``; the load-time proof still guards a forced int8
#: kind, so on a CPU where it is not exact the layer takes float64 and says why). ``fast`` is the
#: compiled path with the products this machine chooses.
KPU_ENGINES = ("numpy", "fast-u8s8", "fast-u8u8", "fast-f32", "fast-f64")
#: engine name -> MAIXEMU_KPU_PRODUCTS
ENGINE_PRODUCTS = {"fast": "auto", "fast-u8s8": "u8s8", "fast-u8u8": "u8u8", "fast-f32": "f32", "fast-f64": "f64"}


def pytest_generate_tests(metafunc):
    """Tests that use ``kpu_engine`` run once per engine (``@pytest.mark.kpu_engines(...)`` narrows)."""
    if "kpu_engine" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("kpu_engines")
        metafunc.parametrize("kpu_engine", marker.args if marker else KPU_ENGINES, indirect=True)


def engine_key() -> tuple[str, str, str]:
    """What decides the paths of a model loaded now (a cache key for tests that reuse models)."""
    import os

    return tuple(os.environ.get(v, "") for v in ("MAIXEMU_KPU_ENGINE", "MAIXEMU_KPU_PRODUCTS", "MAIXEMU_KPU_INT8"))  # type: ignore[return-value]


@pytest.fixture
def kpu_engine(request, monkeypatch) -> str:
    """Models loaded in the test use this engine; the compiled ones skip when the extra is missing."""
    name = request.param
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "numpy" if name == "numpy" else "fast")
    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", ENGINE_PRODUCTS.get(name, "auto"))
    monkeypatch.delenv("MAIXEMU_KPU_INT8", raising=False)
    if name != "numpy":
        from maixemu.kmodel.kpu import fast

        try:
            fast.kernels()
        except fast.FastEngineUnavailable as exc:
            pytest.skip(str(exc))
    if name in ("fast-u8s8", "fast-u8u8"):
        from maixemu.kmodel.kpu import int8

        if int8.unavailable_reason():
            pytest.skip(int8.unavailable_reason())
    return name


@pytest.fixture
def sd_card(tmp_path, board_state):
    """The test board's /sd (and /flash) mapped to ``tmp_path``, so device paths like ``"kp.orb"`` land there."""
    from maixemu.host import storage

    board_state.storage = storage.Storage(sd_dir=tmp_path, flash_dir=tmp_path)
    return tmp_path
