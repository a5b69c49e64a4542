"""A new ``BoardState`` is a power-on reset (issue 11): whatever a run did to the camera, the LCD,
``sys.path``, the JPEG encoder's tables, the loaded font, the KPU's models, the FPIOA and the power
chip, the next board sees none of it; parts are made on first use, and a board's parts are closed
with it. The firmware calls here are the ones a script makes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from maixemu.firmware import KPU as kpu
from maixemu.firmware import fpioa_manager, image, lcd, pmu, sensor, state, usys
from maixemu.firmware.kpu import loader
from maixemu.host import storage

DEMO_MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"
BASE_PARTS = {"console", "events", "framebuffer", "notices", "pins", "power", "imu", "powered_on_ns",
              "run", "system"}


def _use_everything(folder: Path) -> object:
    """What a script does to a board: every part that keeps state, changed by firmware calls.
    Returns the loaded model (the budget counts a model for as long as the script holds it)."""
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QQVGA)
    img = sensor.snapshot()
    lcd.init()
    lcd.display(img)
    usys.path.append("/sd/lib")
    img.compress(quality=50)
    task = kpu.load("/sd/m.kmodel")
    (folder / "f.Dzk").write_bytes(bytes(64 * 1024))
    image.font_load(image.UTF8, 16, 16, "/sd/f.Dzk")
    fpioa_manager.fm.register(12, fpioa_manager.fm.fpioa.GPIO0)
    pmu.axp192().setScreenBrightness(9)
    return task


def test_a_new_board_is_a_power_on_reset(tmp_path):
    shutil.copy(DEMO_MODEL, tmp_path / "m.kmodel")
    used = state.BoardState(storage=storage.Storage(sd_dir=tmp_path, flash_dir=tmp_path))
    with state.bind(used):
        task = _use_everything(tmp_path)
        assert (sensor.width(), len(loader.budget().used)) == (160, 1)
    font_file = used.font.font.handle
    fresh = state.BoardState()
    assert set(fresh.parts()) == BASE_PARTS  # nothing powered on before a firmware call needs it
    with state.bind(fresh):
        with pytest.raises(TypeError, match="not found sensor"):
            sensor.snapshot()
        assert lcd.screen() is None
        assert usys.path == ["", ".", "/sd", "/flash"]
        assert len(loader.budget().used) == 0
        assert fpioa_manager.fm.get_pin_by_function(fpioa_manager.fm.fpioa.GPIO0) is None
        assert not image._fonts.board_font().is_utf8
        assert fresh.jpeg_encoder.q == 0 and fresh.power is None and fresh.imu is None
    assert not font_file.closed
    del task
    used.close_parts()
    assert font_file.closed  # the board's open files close with it


def test_a_thread_keeps_the_board_it_was_bound_to(tmp_path):
    """A thread left behind by a run reads its own (ended) board, never the one active now."""
    import threading

    first, second = state.BoardState(), state.BoardState()
    seen = []
    go = threading.Event()

    def worker() -> None:
        with state.bind(first):
            go.wait(30)
            seen.append(state.current())

    thread = threading.Thread(target=worker)
    thread.start()
    state.activate(second)
    try:
        go.set()
        thread.join(30)
        assert seen == [first] and state.current() is second
    finally:
        state.deactivate(second)
