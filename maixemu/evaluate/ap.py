"""Detection metrics: average precision per class at an IoU threshold, and their mean (mAP@0.5).

Pascal VOC 2010+ rules: detections of a class are taken by falling score over the whole set, each
matches the unmatched ground-truth box of the same class and image with the highest IoU (≥ the
threshold) as a true positive, otherwise it is a false positive; "difficult" objects neither count
as misses nor penalise a detection that finds them. AP is the area under the precision envelope at
every recall step. Boxes are continuous rectangles (x, y, w, h): no +1 pixel convention.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def iou(a: list[float], b: list[float]) -> float:
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    w = min(ax2, bx2) - max(a[0], b[0])
    h = min(ay2, by2) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def average_precision(recall: np.ndarray, precision: np.ndarray) -> float:
    r = np.concatenate([[0.0], recall, [1.0]])
    p = np.concatenate([[0.0], precision, [0.0]])
    p = np.maximum.accumulate(p[::-1])[::-1]
    steps = np.flatnonzero(r[1:] != r[:-1])
    return float(np.sum((r[steps + 1] - r[steps]) * p[steps + 1]))


def detection_metrics(records: list[dict], names: list[str], threshold: float = 0.5) -> dict:
    # ``map50`` is the mean AP at ``threshold`` (0.5 unless a caller asks otherwise)
    """Per-class AP and mAP over records with ``gt`` [[x,y,w,h,class,difficult]] and ``boxes`` [[x,y,w,h,class,score]]."""
    classes = sorted({int(g[4]) for r in records for g in r["gt"]} | {int(b[4]) for r in records for b in r["boxes"]})
    per_class: list[dict[str, Any]] = []
    for c in classes:
        objects = sum(1 for r in records for g in r["gt"] if g[4] == c and not g[5])
        detections = [(b[5], r["index"], b) for r in records for b in r["boxes"] if b[4] == c]
        detections.sort(key=lambda d: (-d[0], d[1]))
        taken: dict[int, set[int]] = {}
        gt_of = {r["index"]: [g for g in r["gt"] if g[4] == c] for r in records}
        tp, fp = [], []
        for score, image, box in detections:
            candidates = gt_of.get(image, [])
            overlaps = [iou(box, g) for g in candidates]
            best = int(np.argmax(overlaps)) if overlaps and max(overlaps) >= threshold else -1
            if best >= 0 and candidates[best][5]:
                continue  # a difficult object found: neither hit nor false alarm
            hit = best >= 0 and best not in taken.setdefault(image, set())  # a second find is a false alarm
            if hit:
                taken[image].add(best)
            tp.append(int(hit))
            fp.append(int(not hit))
        tps, fps = np.cumsum(tp, dtype=np.float64), np.cumsum(fp, dtype=np.float64)
        if objects and len(tps):
            ap = average_precision(tps / objects, tps / np.maximum(tps + fps, np.finfo(np.float64).eps))
        else:
            ap = 0.0
        per_class.append({
            "index": c, "name": names[c] if 0 <= c < len(names) else str(c), "objects": objects,
            "detections": len(detections), "true_positives": int(sum(tp)), "ap": ap if objects else None,
        })
    scored = [p["ap"] for p in per_class if p["ap"] is not None]
    objects = sum(p["objects"] for p in per_class)
    found = sum(p["true_positives"] for p in per_class)
    detected = sum(p["detections"] for p in per_class)
    return {
        "map50": float(np.mean(scored)) if scored else None,
        "iou": threshold,
        "per_class_ap": per_class,
        "objects": objects,
        "detections": detected,
        "recall": found / objects if objects else None,
        "precision": found / detected if detected else None,
    }
