"""The YOLOv2 region layer exactly as MaixPy's firmware decodes it (``sipeed_yolo2.c``).

Scripts draw whatever this returns, so its quirks are part of the API: the class count is derived
as ``channels // 5 - 5`` (five anchors hard-coded), scores use ``>``, NMS is per class, results come
anchor-major then row-major, boxes are clamped to 0 on the left/top only, and the legacy API returns
``None`` (not ``[]``) when nothing is found. Both the legacy ``kpu.run_yolo2`` and the newer
``KPU().regionlayer_yolo2`` use :func:`region_layer`; only the class count and the letterbox
correction differ.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np


@dataclass(frozen=True)
class RegionBox:
    """One detection: pixel rectangle (ints) in the output space, class id and probability."""

    x: int
    y: int
    w: int
    h: int
    classid: int
    value: float


_F = TypeVar("_F", bound=Callable[..., Any])


def _device_float_math(func: _F) -> _F:
    """Run ``func`` with IEEE results and no numpy warnings: the K210's ``expf`` of a large logit
    is inf and ``1 / (1 + inf)`` is 0, silently, as here (a warning would reach the script's output)."""

    @functools.wraps(func)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            return func(*args, **kwargs)

    return quiet  # type: ignore[return-value]


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return (np.float32(1.0) / (np.float32(1.0) + np.exp(-v, dtype=np.float32))).astype(np.float32)


def _to_uint(values: np.ndarray) -> np.ndarray:
    """C's float → uint32 conversion on the K210: truncation toward zero, negatives become 0."""
    return np.where(values > 0, np.trunc(values), 0).astype(np.int64)


def _nms_per_class(probs: np.ndarray, boxes: np.ndarray, nms_value: float) -> None:
    """Zero ``probs[b, k]`` for boxes overlapping a better box of class k by IoU > nms_value (in place).

    Only boxes with a non-zero probability can suppress anything, and suppressing a zero changes
    nothing, so the greedy pass runs over the (few) candidates of each class.
    """
    x, y, w, h = boxes.T
    left, right = x - w / 2, x + w / 2
    top, bottom = y - h / 2, y + h / 2
    area = w * h
    for k in range(probs.shape[1]):
        column = probs[:, k]
        candidates = np.flatnonzero(column)
        if candidates.size < 2:
            continue
        order = candidates[np.argsort(-column[candidates], kind="stable")]
        for pos, a in enumerate(order[:-1]):
            if column[a] == 0:
                continue
            later = order[pos + 1 :]
            ow = np.minimum(right[a], right[later]) - np.maximum(left[a], left[later])
            oh = np.minimum(bottom[a], bottom[later]) - np.maximum(top[a], top[later])
            inter = np.where((ow < 0) | (oh < 0), 0, ow * oh)
            iou = inter / (area[a] + area[later] - inter)
            column[later[iou > nms_value]] = 0


@_device_float_math
def region_layer(
    output: np.ndarray,
    *,
    layer_w: int,
    layer_h: int,
    anchors: tuple[float, ...],
    threshold: float,
    nms_value: float,
    classes: int,
    net_w: int,
    net_h: int,
    img_w: int | None = None,
    img_h: int | None = None,
) -> list[RegionBox]:
    """Decode a YOLOv2 output (flat float32, channel-major) into boxes in firmware order.

    ``img_w/img_h`` (class API) different from the net size apply darknet's letterbox correction;
    the legacy API passes neither, which is the identity the firmware computes.
    """
    anchor_count = len(anchors) // 2
    entries = 5 + classes
    cells = layer_w * layer_h
    needed = anchor_count * entries * cells
    flat = np.asarray(output, dtype=np.float32).reshape(-1)
    if flat.size < needed:
        raise ValueError(
            f"region layer needs {anchor_count} anchors x (5+{classes}) x {layer_w}x{layer_h} = {needed} values, "
            f"the output has {flat.size}"
        )
    data = flat[:needed].reshape(anchor_count, entries, layer_h, layer_w)
    tx, ty = _sigmoid(data[:, 0]), _sigmoid(data[:, 1])
    tw, th = data[:, 2], data[:, 3]
    objectness = _sigmoid(data[:, 4])
    if classes > 0:
        scores = data[:, 5:]
        shifted = scores - scores.max(axis=1, keepdims=True)
        exps = np.exp(shifted, dtype=np.float32)
        soft = (exps / exps.sum(axis=1, keepdims=True, dtype=np.float32)).astype(np.float32)
        probs = (objectness[:, None] * soft).astype(np.float32)
    else:
        probs = objectness[:, None].astype(np.float32)

    cols = np.arange(layer_w, dtype=np.float32)[None, None, :]
    rows = np.arange(layer_h, dtype=np.float32)[None, :, None]
    anchor_w = np.asarray(anchors[0::2], dtype=np.float32)[:, None, None]
    anchor_h = np.asarray(anchors[1::2], dtype=np.float32)[:, None, None]
    bx = ((cols + tx) / np.float32(layer_w)).astype(np.float32)
    by = ((rows + ty) / np.float32(layer_h)).astype(np.float32)
    bw = (np.exp(tw, dtype=np.float32) * anchor_w / np.float32(layer_w)).astype(np.float32)
    bh = (np.exp(th, dtype=np.float32) * anchor_h / np.float32(layer_h)).astype(np.float32)

    out_w, out_h = net_w, net_h
    if img_w is not None and img_h is not None and (img_w, img_h) != (net_w, net_h):
        if net_w / img_w < net_h / img_h:
            new_w, new_h = net_w, (img_h * net_w) // img_w
        else:
            new_h, new_w = net_h, (img_w * net_h) // img_h
        bx = ((bx - (net_w - new_w) / 2.0 / net_w) / (new_w / net_w)).astype(np.float32)
        by = ((by - (net_h - new_h) / 2.0 / net_h) / (new_h / net_h)).astype(np.float32)
        bw = (bw * (net_w / new_w)).astype(np.float32)
        bh = (bh * (net_h / new_h)).astype(np.float32)
        out_w, out_h = img_w, img_h

    # Box index b = anchor * cells + row * layer_w + col: anchor-major, then row-major.
    prob_table = np.moveaxis(probs, 1, -1).reshape(-1, probs.shape[1]).copy()
    prob_table[prob_table <= np.float32(threshold)] = 0
    boxes = np.stack([bx.reshape(-1), by.reshape(-1), bw.reshape(-1), bh.reshape(-1)], axis=1)
    _nms_per_class(prob_table, boxes, nms_value)

    best_class = prob_table.argmax(axis=1)
    best = prob_table[np.arange(prob_table.shape[0]), best_class]
    keep = np.flatnonzero(best > np.float32(threshold))
    if keep.size == 0:
        return []
    W, H = np.float32(out_w), np.float32(out_h)
    x, y, w, h = (boxes[keep, i] for i in range(4))
    x1 = _to_uint(x * W - w * W / 2)
    y1 = _to_uint(y * H - h * H / 2)
    x2 = _to_uint(x * W + w * W / 2)
    y2 = _to_uint(y * H + h * H / 2)
    return [
        RegionBox(int(x1[i]), int(y1[i]), int(x2[i] - x1[i]), int(y2[i] - y1[i]), int(best_class[keep[i]]), float(best[keep[i]]))
        for i in range(keep.size)
    ]
