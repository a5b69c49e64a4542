"""``maixemu run --show-ai``: the AI buffers the KPU read, recorded headless with ``record:DIR``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from _shared import REPO_ROOT, shared_path
from maixemu.cli import main
from maixemu.firmware.state import current
from maixemu.session.show_ai import CAPTION_H, GAP, MIN_PANEL_H, chw_to_rgb, compose


def _pngs(folder: Path) -> list[np.ndarray]:
    return [np.asarray(Image.open(p).convert("RGB")) for p in sorted(folder.glob("*.png"))]


def test_pix_to_ai_sample_shows_the_black_and_the_fresh_buffer(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    dog = shared_path("images", "dog.bmp")
    code = main(["run", str(REPO_ROOT / "samples" / "pix_to_ai_pitfall.py"), "--camera", str(dog), "--frames", "3",
                 "--lcd", f"record:{tmp_path / 'lcd'}", "--show-ai", f"record:{tmp_path / 'ai'}", "-q"])
    assert code == 0
    lcd, ai = _pngs(tmp_path / "lcd"), _pngs(tmp_path / "ai")
    # lcd.init() draws before any snapshot (no AI view for it); then one AI view per displayed frame
    assert len(lcd) == 3 and len(ai) == 2
    camera = np.asarray(Image.open(dog).convert("RGB"), dtype=int)  # 320x240: the sensor keeps it as is
    for view in ai:
        assert view.shape == (CAPTION_H + 240, 2 * 320 + GAP, 3)
        stale = view[CAPTION_H:, :320]
        fresh = view[CAPTION_H:, 320 + GAP :].astype(int)
        assert (stale == 0).all(), "the stale buffer was filled once from a black canvas"
        assert np.abs(fresh - camera).mean() < 8, "the refreshed buffer is the camera picture (RGB565 precision)"
    assert current().events.kpu_input == []  # the run's listeners never reach the board that is active now


def test_without_kpu_calls_the_last_snapshot_is_shown(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    script = tmp_path / "cam.py"
    script.write_text("import sensor, lcd\nlcd.init()\nsensor.reset()\nsensor.set_pixformat(sensor.RGB565)\n"
                      "sensor.set_framesize(sensor.QVGA)\nwhile True:\n    img = sensor.snapshot()\n"
                      "    img.draw_rectangle(0, 0, 100, 100, color=(255, 0, 0), fill=True)\n    lcd.display(img)\n")
    frame = np.zeros((240, 320, 3), np.uint8)
    frame[:, :, 2] = 255
    Image.fromarray(frame).save(tmp_path / "blue.png")
    code = main(["run", str(script), "--camera", str(tmp_path / "blue.png"), "--frames", "2",
                 "--lcd", "none", "--show-ai", f"record:{tmp_path / 'ai'}", "-q"])
    assert code == 0
    views = _pngs(tmp_path / "ai")
    assert len(views) == 2
    panel = views[-1][CAPTION_H:]
    # the drawn red square is in the pixels only: the AI buffer is still all camera blue
    assert panel.shape == (240, 320, 3) and (panel[..., 2] > 240).all() and (panel[..., 0] < 10).all()


def test_small_buffers_are_enlarged_and_gray_planes_replicated():
    digit = np.arange(28 * 28, dtype=np.uint8).reshape(1, 28, 28)
    rgb = chw_to_rgb(digit)
    assert rgb.shape == (28, 28, 3) and (rgb[..., 0] == rgb[..., 2]).all()
    picture = compose([("KPU.run_with_output #1", rgb)])
    zoom = -(-MIN_PANEL_H // 28)
    assert picture.shape == (CAPTION_H + 28 * zoom, 28 * zoom, 3)
    assert (picture[CAPTION_H : CAPTION_H + zoom, :zoom] == digit[0, 0, 0]).all()
    assert (picture[CAPTION_H + zoom * 27 :, zoom * 27 :] == digit[0, 27, 27]).all()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux decides 'no display' from DISPLAY")
def test_window_without_display_is_a_notice_not_a_failure(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    assert main(["run", str(script), "--lcd", "none", "--show-ai"]) == 0
    captured = capsys.readouterr()
    assert "hello" in captured.out and "--show-ai" in captured.err


@pytest.mark.parametrize("spec", ["record:", "bogus"])
def test_bad_sink_is_reported_as_show_ai(spec):
    from maixemu.host.display import DisplayError
    from maixemu.session.show_ai import open_ai_sink

    with pytest.raises(DisplayError, match="--show-ai"):
        open_ai_sink(spec, print)


def test_a_script_that_ends_after_lcd_display_keeps_its_last_frame_in_both_views(tmp_path, monkeypatch):
    """The recording holds the last picture until the run ends; the AI view must still be open then
    (it used to be closed first, and the last frame's flush crashed the run with WindowClosed)."""
    monkeypatch.delenv("DISPLAY", raising=False)
    script = tmp_path / "three.py"
    script.write_text("import sensor, lcd\nimport KPU as kpu\nlcd.init()\nsensor.reset()\n"
                      "sensor.set_pixformat(sensor.RGB565)\nsensor.set_framesize(sensor.QVGA)\n"
                      "task = kpu.load(0xF00000)\nfor i in range(3):\n    img = sensor.snapshot()\n"
                      "    kpu.forward(task, img)\n    lcd.display(img)\n")
    code = main(["run", str(script), "--camera", "synthetic", "--lcd", f"record:{tmp_path / 'lcd'}",
                 "--show-ai", f"record:{tmp_path / 'ai'}", "-q"])
    assert code == 0
    assert len(_pngs(tmp_path / "lcd")) == 4 and len(_pngs(tmp_path / "ai")) == 3  # lcd.init() + 3 frames
    assert current().events.kpu_input == []  # the run's listeners never reach the board that is active now
