"""``--show-ai`` under a private Xvfb: the AI window opens beside the LCD window, not on top of it.

Without a window manager both OpenCV windows would open at the screen's top-left corner, the AI
view hiding the LCD (a window manager places a new window as it likes, often over the first one).
The screenshot of both windows is also the README's picture of the window view
(``docs/view-window.png``): the pix_to_ai sample looking at a digit drawn with PIL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

from _digits import draw_digit
from _pictures import regenerate
from _xvfb import require_screenshot_tool, take_screenshot, xvfb_server
from maixemu.host.display import WINDOW_GAP
from maixemu.session.show_ai import CAPTION_H, GAP, GAP_COLOUR

pytestmark = pytest.mark.display

LCD_W, LCD_H = 640, 480  # the 320x240 LCD shown x2
AI_W, AI_H = 2 * 320 + GAP, CAPTION_H + 240  # two AI buffers side by side, shown x1


def _gap_columns(shot: np.ndarray) -> np.ndarray:
    """x of the screen columns that hold the AI view's gap between panels (a 240-pixel run of its colour)."""
    is_gap = (shot == GAP_COLOUR).all(-1)
    return np.nonzero(is_gap.sum(axis=0) >= 240)[0]


def _both_windows(display: str, camera, tmp_path, lcd_top: int = 0) -> np.ndarray | None:
    env = dict(os.environ, DISPLAY=display)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "maixemu", "run", "--sample", "pix_to_ai_pitfall", "--camera",
                             str(camera), "--lcd", "window", "--show-ai", "--timeout", "60", "-q"],
                            env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            shot = take_screenshot(display, tmp_path)
            lcd_shown = (shot[lcd_top:lcd_top + LCD_H, :LCD_W] == (255, 0, 0)).all(-1).sum() > 50  # the red caption
            if lcd_shown and _gap_columns(shot).size:
                time.sleep(0.5)  # one more repaint of both, then the picture
                return take_screenshot(display, tmp_path)
        return None
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err


def test_ai_window_opens_beside_the_lcd_window(tmp_path):
    require_screenshot_tool()
    camera = tmp_path / "digit.png"
    Image.fromarray(draw_digit(3, height=160, width=20)).save(camera)
    shot = None
    for _ in range(3):  # Qt on a bare Xvfb now and then never paints a window (see test_display_xvfb)
        with xvfb_server(width=LCD_W + WINDOW_GAP + AI_W + 40, height=LCD_H) as display:
            shot = _both_windows(display, camera, tmp_path)
        if shot is not None:
            break
    assert shot is not None, "the LCD and AI windows never both showed (3 fresh Xvfb starts)"
    gap = _gap_columns(shot)
    ai_left = int(gap[0]) - 320  # the AI view's first panel is 320 wide, then the gap
    assert ai_left == LCD_W + WINDOW_GAP, (ai_left, gap)
    # the LCD window is whole: its four quadrants are the sample's screen, nothing of the AI view on it
    lcd = shot[:LCD_H, :LCD_W]
    assert (lcd[250:480, 0:320] == 0).all(-1).mean() > 0.9  # "without pix_to_ai": a flat black map
    regenerate("view-window.png", shot[: max(AI_H, LCD_H), : ai_left + AI_W])


def test_on_a_1280_pixel_screen_the_ai_window_opens_under_the_lcd_window(tmp_path):
    """640 + 16 + 648 pixels do not fit side by side on a 1280x800 laptop screen: the AI window goes
    under the LCD window (it ran 24 pixels off the right edge before)."""
    require_screenshot_tool()
    camera = tmp_path / "digit.png"
    Image.fromarray(draw_digit(3, height=160, width=20)).save(camera)
    shot = None
    for _ in range(3):  # Qt on a bare Xvfb now and then never paints a window (see test_display_xvfb)
        with xvfb_server(width=1280, height=800) as display:
            shot = _both_windows(display, camera, tmp_path)
        if shot is not None:
            break
    assert shot is not None, "the LCD and AI windows never both showed (3 fresh Xvfb starts)"
    gap = _gap_columns(shot)
    ai_left = int(gap[0]) - 320
    assert 0 <= ai_left and ai_left + AI_W <= 1280, (ai_left, gap)  # whole on the screen
    rows = np.nonzero((shot[:, int(gap[0])] == GAP_COLOUR).all(-1))[0]
    assert rows[0] >= LCD_H + WINDOW_GAP and rows[-1] < 800, (rows[0], rows[-1])  # under the LCD window, on screen
    lcd = shot[:LCD_H, :LCD_W]
    assert (lcd[250:480, 0:320] == 0).all(-1).mean() > 0.9  # the LCD window is whole
