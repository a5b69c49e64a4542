"""Benchmarks of the sequential finders (skipped by default: ``--benchmark-skip`` in setup.cfg).

Run with ``python -m pytest tests/firmware/test_bench_finders.py --benchmark-only``; each result's
``extra_info`` has ``x_matmul``: the finder's mean time over the time of a 256x256 float64 numpy
matmul measured in the same run (a machine-independent figure; the CI machine is a busy 2-core).
With numba installed (the ``fast`` extra) the compiled kernels run; ``MAIXEMU_NO_JIT=1`` compares.
"""

from __future__ import annotations

import numpy as np
import pytest

from _shared import shared_path
from maixemu.firmware import image
from maixemu.firmware.image import _color


@pytest.fixture(scope="module")
def photo():
    from PIL import Image as PILImage

    path = shared_path("images", "face_group.jpg")
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    return np.asarray(PILImage.open(path).convert("RGB"))


@pytest.fixture(scope="module")
def matmul_seconds():
    """Seconds of a 256x256 float64 matmul, as ``maixemu bench`` measures its reference (the better
    of BLAS's own threads and one thread, so a loaded machine does not flatter the ratio)."""
    from maixemu.commands.bench import matmul_gmacs

    return 256**3 / (matmul_gmacs(256**3) * 1e9)


def _rgb(photo, w, h):
    from PIL import Image as PILImage

    img = image.Image(size=(w, h))
    img._pix[...] = _color.rgb888_to_565(np.asarray(PILImage.fromarray(photo).resize((w, h))))
    return img


CASES = {
    "find_line_segments_160x120": (160, 120, lambda img: img.find_line_segments()),
    "find_rects_320x240": (320, 240, lambda img: img.find_rects()),
    "find_apriltags_160x120": (160, 120, lambda img: img.find_apriltags()),
    "selective_search_320x240": (320, 240, lambda img: img.selective_search()),
    "find_displacement_128x128": (128, 128, lambda img: img.find_displacement(img, logpolar=False)),
    "find_barcodes_320x240": (320, 240, lambda img: img.find_barcodes()),
    "find_keypoints_320x240": (320, 240, lambda img: img.find_keypoints()),
    "find_features_frontalface_320x240": (320, 240, lambda img: img.find_features(image.HaarCascade("frontalface"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_finder_speed(benchmark, photo, matmul_seconds, name):
    w, h, call = CASES[name]
    img = _rgb(photo, w, h)
    try:
        call(img)  # compile the kernels, fill caches
    except NotImplementedError as exc:  # e.g. no libzbar here
        pytest.skip(str(exc))
    benchmark.pedantic(call, args=(img,), rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info["x_matmul"] = round(benchmark.stats.stats.mean / matmul_seconds, 1)
