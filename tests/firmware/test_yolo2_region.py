"""The YOLOv2 region layer on hand-made feature maps, with boxes computed by hand from maixpy-api.md §1.11."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maixemu.firmware.kpu.region import region_layer

NEG = -30.0  # sigmoid(-30) ~ 1e-13: "nothing here"
ANCHORS5 = (1.0, 1.5, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 5.0)


def empty_map(classes: int, lw: int, lh: int, anchors: int = 5) -> np.ndarray:
    out = np.zeros((anchors, 5 + classes, lh, lw), dtype=np.float32)
    out[:, 4] = NEG
    return out


def decode(out: np.ndarray, *, classes: int, threshold=0.5, nms=0.3, anchors=ANCHORS5, net=(320, 240)):
    lh, lw = out.shape[-2:]
    return region_layer(
        out.reshape(-1), layer_w=lw, layer_h=lh, anchors=anchors, threshold=threshold,
        nms_value=nms, classes=classes, net_w=net[0], net_h=net[1],
    )


def test_single_box_position_size_and_probability():
    out = empty_map(1, 2, 2)
    # anchor 0, row 1, col 0: tx = ty = tw = th = 0, objectness logit 10.
    out[0, 4, 1, 0] = 10.0
    (box,) = decode(out, classes=1)
    # x = (0 + 0.5)/2, y = (1 + 0.5)/2, w = e^0 * 1.0/2, h = e^0 * 1.5/2 (normalised)
    # x1 = 0.25*320 - 0.5*320/2 = 0, y1 = 0.75*240 - 0.75*240/2 = 90, x2 = 160, y2 = 270
    assert (box.x, box.y, box.w, box.h) == (0, 90, 160, 180)
    assert box.classid == 0
    assert box.value == pytest.approx(1 / (1 + math.exp(-10)), rel=1e-6)


def test_left_top_clamped_to_zero_right_bottom_not():
    out = empty_map(1, 2, 2)
    out[4, 4, 1, 1] = 10.0  # anchor 4 (5 x 5 cells): a box far larger than the image
    (box,) = decode(out, classes=1)
    # x = 0.75, w = 5/2 = 2.5 → x1 = 240 - 400 < 0 → 0; x2 = 240 + 400 = 640 → w = 640
    # y = 0.75, h = 2.5 → y1 = 180 - 300 < 0 → 0; y2 = 180 + 300 = 480
    assert (box.x, box.y, box.w, box.h) == (0, 0, 640, 480)


def test_threshold_is_strict_and_nothing_found_is_empty():
    out = empty_map(1, 2, 2)
    out[0, 4, 0, 0] = 0.0  # objectness exactly 0.5
    assert decode(out, classes=1, threshold=0.5) == []
    assert len(decode(out, classes=1, threshold=0.49)) == 1


def test_classes_use_softmax_times_objectness_and_first_max_wins():
    out = empty_map(2, 1, 1)
    out[0, 4, 0, 0] = 10.0
    out[0, 5, 0, 0] = 1.0
    out[0, 6, 0, 0] = 1.0 + math.log(3.0)  # class 1 three times as likely as class 0
    (box,) = decode(out, classes=2, threshold=0.1)
    obj = 1 / (1 + math.exp(-10))
    assert box.classid == 1
    assert box.value == pytest.approx(obj * 0.75, rel=1e-5)


def test_nms_suppresses_overlaps_of_the_same_class_only():
    out = empty_map(2, 2, 1)
    # Two neighbouring cells, same anchor and size: centres 0.25 and 0.75 (w = 4/2 = 2 → heavy overlap).
    for col, logit in ((0, 8.0), (1, 6.0)):
        out[3, 4, 0, col] = logit
        out[3, 5, 0, col] = 10.0  # class 0
    boxes = decode(out, classes=2, threshold=0.5, nms=0.3)
    assert [b.classid for b in boxes] == [0]
    assert boxes[0].value == pytest.approx(1 / (1 + math.exp(-8)), rel=1e-4)
    # Different classes: both survive.
    out[3, 5, 0, 1] = -10.0
    out[3, 6, 0, 1] = 10.0
    boxes = decode(out, classes=2, threshold=0.5, nms=0.3)
    assert sorted(b.classid for b in boxes) == [0, 1]


def test_order_is_anchor_major_then_row_major():
    out = empty_map(1, 2, 2)
    marks = {(1, 0, 0): 5.0, (0, 1, 1): 6.0, (0, 0, 1): 7.0}  # (anchor, row, col) → objectness logit
    for (a, r, c), logit in marks.items():
        out[a, 4, r, c] = logit
    boxes = decode(out, classes=1, threshold=0.5, nms=1.0)
    expected_values = [1 / (1 + math.exp(-v)) for v in (7.0, 6.0, 5.0)]  # (0,0,1), (0,1,1), (1,0,0)
    assert [b.value for b in boxes] == pytest.approx(expected_values, rel=1e-6)


def test_too_small_output_is_a_clear_error():
    with pytest.raises(ValueError, match="region layer needs"):
        region_layer(np.zeros(10, np.float32), layer_w=2, layer_h=2, anchors=ANCHORS5, threshold=0.5,
                     nms_value=0.3, classes=1, net_w=320, net_h=240)
