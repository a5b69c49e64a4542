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


# ------------------------------------------------------------------------- AprilTag 3, the peer
@pytest.mark.parametrize("roi", [(0, 0, 160, 120), (0, 0, 240, 240)], ids=["160x120", "240x240"])
def test_find_apriltags_against_apriltag3(benchmark, roi):
    """find_apriltags and AprilTag 3 (``maixemu.tools.apriltag_peer``) on the same frames with tags,
    timed call for call in process CPU time; ``extra_info`` has both means and ``x_apriltag3``, ours
    over theirs. Both must find the same tags (what the comparison is of), the times are not judged."""
    import time

    from maixemu.tools import apriltag_peer, image_bench

    try:
        peer_detector = apriltag_peer.detector()
    except ImportError as exc:
        pytest.skip(str(exc))
    photo = image_bench.PHOTO
    if not photo.is_file():
        pytest.skip(f"{photo} not found (../shared is absent)")
    rgb = apriltag_peer.tag_scene(image_bench._read_rgb(photo))
    x, y, w, h = roi
    frames = [(image.Image._from_rgb888(rgb, fmt), fmt) for fmt in (image.GRAYSCALE, image.RGB565)]
    for img, _ in frames:
        gray = image.Image._from_rgb888(rgb, image.GRAYSCALE)._pix[y:y + h, x:x + w].copy()
        ours = sorted(t.id() for t in img.find_apriltags(roi=roi))
        assert ours == sorted(d.tag_id for d in peer_detector.detect(gray)) and len(ours) >= 2
    peers = [apriltag_peer.prepare(roi)(_bgr_or_gray(img)) for img, _ in frames]
    ours_s, theirs_s = [], []
    for _ in range(10):
        for (img, _), peer in zip(frames, peers):
            start = time.process_time()
            img.find_apriltags(roi=roi)
            mid = time.process_time()
            peer()
            theirs_s.append(time.process_time() - mid)
            ours_s.append(mid - start)
    benchmark.pedantic(lambda: frames[0][0].find_apriltags(roi=roi), rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(ours_ms=round(1e3 * float(np.mean(ours_s)), 3),
                                apriltag3_ms=round(1e3 * float(np.mean(theirs_s)), 3),
                                x_apriltag3=round(float(np.mean(ours_s) / np.mean(theirs_s)), 2))


def _bgr_or_gray(img) -> np.ndarray:
    """The frame as OpenCV holds it (gray uint8, or BGR uint8 of the RGB565 pixels)."""
    from maixemu.firmware.image import _color

    if img._fmt == image.GRAYSCALE:
        return img._pix.copy()
    return np.ascontiguousarray(_color.rgb565_to_888(img._pix)[:, :, ::-1])


def test_the_apriltag_peer_keeps_one_detector():
    """One AprilTag 3 detector per process (``apriltag_peer.detector``): pupil-apriltags 1.0.4 corrupts
    the heap when detectors are made and destroyed in turn, and the image benchmark, which prepares
    its peer once per case, then died (SIGABRT) before its table."""
    pytest.importorskip("pupil_apriltags", reason="the AprilTag 3 peer is a benchmark-only dependency")
    from maixemu.tools import apriltag_peer

    first = apriltag_peer.detector()
    rois = [(0, 0, 320, 240), (10, 10, 100, 100)]
    frame = np.zeros((240, 320), np.uint8)
    for roi in rois:
        apriltag_peer.prepare(roi)(frame)()
    assert apriltag_peer.detector() is first
