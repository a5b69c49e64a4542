"""AprilTag 3 as the benchmark peer of ``find_apriltags``: the frame with tags, and the detector set
up as the firmware's runs.

The peer is ``pupil-apriltags`` (AprilTag 3's C library with Python bindings), a benchmark-only
dependency (``pip install pupil-apriltags``): tag36h11, no decimation (the firmware does not
decimate), no blur, edges refined, one thread, on the same roi as the case (the firmware takes at
most 64K pixels, so a QVGA frame is searched in a 240x240 roi). ``tag_scene`` pastes tag36h11
markers into a photo so that both detectors have the same tags to find among real clutter: the
positions are ones where the firmware's detector finds them too (at (150, 150) on the bench photo
the firmware's C, and so maixemu, misses the third marker; AprilTag 3 finds it).

``tests/firmware/test_bench_finders.py`` times the two interleaved on these frames;
``image_bench``'s peer column takes :func:`prepare` for its ``find_apriltags`` rows.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

#: (id, top-left corner) of each marker: two inside the 160x120 corner, one more inside 240x240
SCENE_TAGS = ((3, (8, 40)), (21, (88, 8)), (17, (160, 140)))
MARKER_SIDE = 56  # pixels of the marker itself; a white quiet zone of 8 pixels goes round it
QUIET_ZONE = 8


def tag_scene(rgb: np.ndarray, tags=SCENE_TAGS) -> np.ndarray:
    """``rgb`` (H, W, 3) with tag36h11 markers (OpenCV's dictionary) pasted in at ``tags``."""
    import cv2

    out = rgb.copy()
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_36h11)
    for tag_id, (x, y) in tags:
        marker = cv2.aruco.generateImageMarker(dictionary, tag_id, MARKER_SIDE)
        marker = cv2.copyMakeBorder(marker, QUIET_ZONE, QUIET_ZONE, QUIET_ZONE, QUIET_ZONE, cv2.BORDER_CONSTANT,
                                    value=255)
        h, w = marker.shape
        out[y:y + h, x:x + w] = marker[:, :, None]
    return out


@functools.cache
def detector():
    """AprilTag 3's detector as the firmware's runs (ImportError, saying how to install it, when absent).

    One per process, kept for its life: pupil-apriltags 1.0.4 crashes the process (heap corruption,
    then SIGABRT or SIGSEGV in ``Detector.__del__``) after a few detectors are made and destroyed in
    turn, as a benchmark of many cases did with one per case; one detector reused is sound."""
    try:
        import pupil_apriltags  # a benchmark-only peer (untyped: pyproject.toml)
    except ImportError as exc:
        raise ImportError(f"the AprilTag 3 peer needs pupil-apriltags ({exc}): pip install pupil-apriltags") from None
    return pupil_apriltags.Detector(families="tag36h11", nthreads=1, quad_decimate=1.0, quad_sigma=0.0,
                                    refine_edges=1, decode_sharpening=0.25)


def prepare(roi: tuple[int, int, int, int]) -> Callable[[np.ndarray, Any, str], Callable[[], list]]:
    """A peer ``prepare(frame, fixtures, fmt)`` for ``roi``: AprilTag 3 on the roi of an OpenCV frame
    (gray uint8, or BGR uint8 whose gray conversion is timed with it, as ours is)."""

    def prepare_frame(frame: np.ndarray, fixtures=None, fmt: str = "") -> Callable[[], list]:
        import cv2

        det = detector()
        x, y, w, h = roi

        def run() -> list:
            gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            return det.detect(np.ascontiguousarray(gray[y:y + h, x:x + w]))

        return run

    return prepare_frame
