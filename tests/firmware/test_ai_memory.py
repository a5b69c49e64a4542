"""The pix_to_ai lesson: what the KPU reads, and the three --ai-memory modes on scripts that get it wrong."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from maixemu.firmware.state import current
from maixemu.firmware import KPU as kpu
from maixemu.firmware import ai_memory, image
from maixemu.host import storage
from maixemu.runner import DEMO_MODEL, DEMO_MODEL_ADDRESS

FORGETS_AFTER_RESIZE = """
import sensor, image, KPU as kpu
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.VGA)
task = kpu.load(0xF00000)
img = sensor.snapshot().resize(320, 240)
fmap = kpu.forward(task, img)
"""

STALE_AFTER_DRAW = """
import sensor, image, KPU as kpu
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
task = kpu.load(0xF00000)
canvas = image.Image(size=(320, 240))
canvas.pix_to_ai()
while True:
    canvas.draw_image(sensor.snapshot(), 0, 0)
    fmap = kpu.forward(task, canvas)
    print("sum", sum(fmap[:]))
"""


def run(tmp_path: Path, body: str, mode: str, frames: int = 3) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body).lstrip())
    return subprocess.run(
        [sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "--camera", "synthetic",
         "--frames", str(frames), "--ai-memory", mode],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("mode", ["device", "warn", "strict"])
def test_forgetting_pix_to_ai_after_resize_fails_as_on_the_device(tmp_path, mode):
    proc = run(tmp_path, FORGETS_AFTER_RESIZE, mode)
    assert proc.returncode == 1
    assert proc.stdout == "[MAIXPY]kpu: pix_ai is NULL!\n"  # \r\n on the device; text mode folds it
    assert "ValueError: [MAIXPY]kpu: check img format err!" in proc.stderr
    assert 'script.py", line 7' in proc.stderr
    advice = "script.py:7: kpu.forward got an image without AI memory"
    assert (advice in proc.stderr) == (mode != "device")


def test_stale_ai_memory_device_mode_is_silent_and_uses_the_old_buffer(tmp_path):
    proc = run(tmp_path, STALE_AFTER_DRAW, "device")
    assert proc.returncode == 0, proc.stderr
    sums = [line for line in proc.stdout.splitlines() if line.startswith("sum")]
    # The KPU keeps reading the black canvas: the blur channel stays 0, edges stay at their flat value.
    assert len(sums) == 3 and len(set(sums)) == 1
    assert "warning" not in proc.stderr


def test_stale_ai_memory_warn_mode_warns_once_with_the_line(tmp_path):
    proc = run(tmp_path, STALE_AFTER_DRAW, "warn", frames=4)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, proc.stderr
    assert "script.py:10: kpu.forward read the image's AI memory, which is older than its pixels" in warnings[0]
    assert "img.pix_to_ai()" in warnings[0]


def test_stale_ai_memory_strict_mode_raises_at_the_line(tmp_path):
    proc = run(tmp_path, STALE_AFTER_DRAW, "strict")
    assert proc.returncode == 1
    assert 'script.py", line 10' in proc.stderr
    assert "StaleAIMemoryError: [maixemu] script.py:10: kpu.forward read the image's AI memory" in proc.stderr


def test_pitfall_sample_prints_the_warning_with_its_line(repo_root):
    proc = subprocess.run(
        [sys.executable, "-m", "maixemu", "run", str(repo_root / "samples" / "pix_to_ai_pitfall.py"),
         "--ai-memory", "warn", "--frames", "3", "--lcd", "none", "--camera", "synthetic"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    source = (repo_root / "samples" / "pix_to_ai_pitfall.py").read_text().splitlines()
    stale_line = next(i for i, line in enumerate(source, 1) if "wrong = kpu.forward" in line)
    assert f"pix_to_ai_pitfall.py:{stale_line}: kpu.forward read the image's AI memory" in proc.stderr


@pytest.fixture
def demo_task(tmp_path):
    current().storage = storage.Storage(tmp_path, tmp_path, flash_map={DEMO_MODEL_ADDRESS: DEMO_MODEL})
    task = kpu.load(DEMO_MODEL_ADDRESS)
    yield task
    kpu.deinit(task)


def test_the_kpu_reads_the_ai_buffer_not_the_pixels(demo_task):
    img = image.Image(size=(320, 240))
    img.pix_to_ai()                                   # AI memory: black
    img.draw_rectangle(100, 80, 60, 40, fill=True)    # pixels: a white box the KPU does not see
    black = np.array(kpu.forward(demo_task, img)[:] + (0,), np.uint8)
    img.pix_to_ai()
    boxed = np.array(kpu.forward(demo_task, img)[:] + (0,), np.uint8)
    blur = slice(0, 160 * 120)
    assert black[blur].max() == 0
    assert boxed[blur].max() == 255                   # channel 0 = blur of the luma: the white box


def test_grayscale_snapshot_pixels_are_the_ai_plane():
    from maixemu.firmware import sensor

    sensor.reset()
    sensor.set_pixformat(sensor.GRAYSCALE)
    sensor.set_framesize(sensor.QQVGA)
    img = sensor.snapshot()
    img.set_pixel(3, 4, 77)
    assert img._ai_array()[0, 4, 3] == 77 and not img._ai_is_stale()
