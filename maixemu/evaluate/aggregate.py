"""Records → ``results.json``: every number the report shows, computed in sample order.

Nothing here depends on time, host or executor, so two runs over the same data with the same
options give byte-identical ``results.json`` files however they were spread or resumed.
"""

from __future__ import annotations

import numpy as np

from .ap import detection_metrics
from .compare import HIST_EDGES
from .metrics import classification_metrics


def reference_summary(records: list[dict], output_shapes: list[tuple[int, ...]], class_output: int, worst: int,
                      names: list[str] | None = None) -> dict:
    compared = [r for r in records if "ref" in r]
    outputs = []
    for i, shape in enumerate(output_shapes):
        per = [r["ref"]["outputs"][i] for r in compared]
        hist = np.sum([p["hist"] for p in per], axis=0).astype(int).tolist() if per else []
        outputs.append({
            "index": i,
            "shape": list(shape),
            "cosine_mean": _mean([p["cosine"] for p in per]),
            "cosine_min": min((p["cosine"] for p in per), default=None),
            "max_abs": max((p["max_abs"] for p in per), default=None),
            "mean_abs": _mean([p["mean_abs"] for p in per]),
            "error_histogram": {"edges": [float(e) for e in HIST_EDGES], "counts": hist},
        })
    top1 = [r for r in compared if "top1" in r["ref"] and r.get("top")]
    ranked = sorted(compared, key=lambda r: (r["ref"]["agreement"], r["ref"]["cosine"], r["index"]))
    summary = {
        "images": len(compared),
        "class_output": class_output,
        "cosine_mean": _mean([r["ref"]["cosine"] for r in compared]),
        "cosine_min": min((r["ref"]["cosine"] for r in compared), default=None),
        "agreement": _mean([r["ref"]["agreement"] for r in compared]),
        "outputs": outputs,
        "worst": [
            {"path": r["rel"], "cosine": r["ref"]["cosine"], "agreement": r["ref"]["agreement"],
             "kmodel_top1": r["top"][0] if r.get("top") else None, "reference_top1": r["ref"].get("top1")}
            for r in ranked[:worst]
        ],
    }
    if top1:
        summary["top1_agreement"] = _mean([float(r["top"][0] == r["ref"]["top1"]) for r in top1])
    labelled = [r for r in compared if "top1" in r["ref"] and r.get("label") is not None]
    if labelled:
        summary["float_accuracy"] = _mean([float(r["ref"]["top1"] == r["label"]) for r in labelled])
    summary["agreement_matrix"] = agreement_matrix(compared, names or [])
    return summary


#: The agreement matrix keeps this many classes (the most frequent); the rest are summed as "other".
MATRIX_CLASSES = 40


def agreement_matrix(records: list[dict], names: list[str]) -> dict:
    """Float model's arg-max (rows) against the kmodel's (columns), over every row of every image."""
    counts: dict[tuple[int, int], int] = {}
    for r in records:
        for a, b, n in r["ref"].get("pairs", ()):
            counts[(a, b)] = counts.get((a, b), 0) + n
    totals: dict[int, int] = {}
    for (a, b), n in counts.items():
        totals[a] = totals.get(a, 0) + n
        totals[b] = totals.get(b, 0) + n
    kept = sorted(sorted(totals, key=lambda c: (-totals[c], c))[:MATRIX_CLASSES])
    other = len(totals) > len(kept)
    position = {c: i for i, c in enumerate(kept)}
    size = len(kept) + int(other)
    matrix = [[0] * size for _ in range(size)]
    for (a, b), n in sorted(counts.items()):
        matrix[position.get(a, size - 1)][position.get(b, size - 1)] += n
    labels = [names[c] if 0 <= c < len(names) else str(c) for c in kept] + (["other"] if other else [])
    total = sum(counts.values())
    agree = sum(n for (a, b), n in counts.items() if a == b)
    return {"classes": kept + ([-1] if other else []), "names": labels, "matrix": matrix, "rows": total,
            "agreement": agree / total if total else None}


def build_results(*, task: str, records: list[dict], names: list[str], header: dict, output_shapes, class_output: int,
                  worst: int, iou: float = 0.5, layer_matches=None) -> dict:
    records = sorted(records, key=lambda r: r["index"])
    ok = [r for r in records if r["status"] == "ok"]
    results = dict(header)
    results["task"] = task
    results["images"] = len(ok)
    results["skipped"] = [{"path": r["rel"], "reason": r["reason"]} for r in records if r["status"] != "ok"]
    if task == "classify":
        results.update(classification_metrics(ok, names))
    elif task == "detect":
        results.update(detection_metrics(ok, names, iou))
    if any("ref" in r for r in ok):
        results["reference"].update(reference_summary(ok, output_shapes, class_output, worst, names))
    if layer_matches is not None:
        from .layers import output_errors, summarise_layers

        results.update(summarise_layers(layer_matches, ok, worst))
        results["input_error"], results["quantisation_error"] = output_errors(ok)
    if "reference" in results and results["reference"].get("images"):
        from .verdict import deploy_verdict

        results["verdict"] = deploy_verdict(results)
    results["worst"] = worst_images(ok, task, worst)
    return results


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def image_errors(record: dict, threshold: float = 0.5) -> int:
    """Misses plus false alarms of one detection record (greedy by score, same class, IoU ≥ threshold)."""
    from .ap import iou

    free = [g for g in record["gt"] if not g[5]]
    errors = 0
    for box in sorted(record["boxes"], key=lambda b: -b[5]):
        match = max(range(len(free)), key=lambda j: iou(box, free[j]) if free[j][4] == box[4] else -1, default=None)
        if match is not None and free[match][4] == box[4] and iou(box, free[match]) >= threshold:
            free.pop(match)
        else:
            errors += 1
    return errors + len(free)


def worst_images(records: list[dict], task: str, count: int) -> list[dict]:
    """The images to look at first: confidently wrong classifications, detections with the most
    misses and false alarms, or (comparing only) the largest disagreement with the float model."""
    ok = sorted((r for r in records if r["status"] == "ok"), key=lambda r: r["index"])
    if task == "classify":
        scored = [r for r in ok if r.get("top")]
        ranked = sorted(scored, key=lambda r: (r["top"][0] == r["label"], -r["scores"][0] if r["top"][0] != r["label"] else r["scores"][0], r["index"]))
        return [{"path": r["rel"], "label": r["label"], "prediction": r["top"][0], "score": r["scores"][0]} for r in ranked[:count]]
    if task == "detect":
        ranked = sorted(ok, key=lambda r: (-image_errors(r), r["index"]))
        return [{"path": r["rel"], "errors": image_errors(r), "objects": len(r["gt"]), "detections": len(r["boxes"])} for r in ranked[:count]]
    ranked = sorted((r for r in ok if "ref" in r), key=lambda r: (r["ref"]["agreement"], r["ref"]["cosine"], r["index"]))
    return [{"path": r["rel"], "cosine": r["ref"]["cosine"], "agreement": r["ref"]["agreement"]} for r in ranked[:count]]
