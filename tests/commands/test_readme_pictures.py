"""The README's pictures of a recording and of a trace grid, made here from a digit drawn with PIL.

* ``docs/view-recording.png``: frame of ``maixemu run samples/mnist_fmaps.py --lcd record:DIR``
  looking at a 3 written on paper (the sample's screen: the digit as the KPU reads it, the answer, the
  16 feature maps of the first layer and the camera with the square it read).
* ``docs/view-trace.png``: ``maixemu trace`` of the same model on a light-on-black 3, the first
  layer's grid (16 maps, one tile each).

The window picture comes from ``tests/session/test_show_ai_window.py``. See ``tests/_pictures.py``
for when a picture is rewritten.
"""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from _digits import draw_digit, paper_digit
from _pictures import regenerate
from _shared import REPO_ROOT, shared_path
from maixemu.cli import main


def test_recording_frame_picture(tmp_path):
    mnist = shared_path("models", "v3", "mnist.kmodel")
    camera = tmp_path / "three.png"
    Image.fromarray(paper_digit(3, seed=3, height=130, width=16, centre=(120, 110), noise=2)).save(camera)
    log = tmp_path / "kpu.jsonl"
    code = main(["run", str(REPO_ROOT / "samples" / "mnist_fmaps.py"), "--flash", f"0x300000={mnist}",
                 "--camera", str(camera), "--frames", "2", "--lcd", f"record:{tmp_path / 'lcd'}",
                 "--kpu-log", str(log), "-q"])
    assert code == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["output"]["argmax"] for c in calls if c["fmap"]["typecode"] == "f"] == [3, 3]
    frames = sorted((tmp_path / "lcd").glob("*.png"))
    frame = np.asarray(Image.open(frames[-1]).convert("RGB"))
    assert frame.shape == (240, 320, 3)
    assert frame[60:118, 0:238].std() > 10  # the feature maps are there
    regenerate("view-recording.png", frame)


def test_trace_grid_picture(tmp_path):
    mnist = shared_path("models", "v3", "mnist.kmodel")
    digit = 255 - draw_digit(3)[:224, :224]  # MNIST's convention: light digit on black
    Image.fromarray(np.ascontiguousarray(digit)).save(tmp_path / "three.png")
    out = tmp_path / "trace"
    assert main(["trace", str(mnist), "--input", str(tmp_path / "three.png"), "--out", str(out), "--layers", "1",
                 "--zoom", "6"]) == 0
    (grid_png,) = out.glob("layer_000_*.png")
    grid = np.asarray(Image.open(grid_png).convert("RGB"))
    assert grid.shape == (4 * 85 - 1, 4 * 85 - 1, 3)  # 4x4 tiles of 14x14 maps x6, 1-pixel separators
    regenerate("view-trace.png", grid)
