"""Classification metrics over the records: top-1, top-5, per-class accuracy, confusion matrix."""

from __future__ import annotations


def classification_metrics(records: list[dict], names: list[str], top: int = 5) -> dict:
    scored = [r for r in records if r.get("top")]
    total = len(scored)
    correct = sum(1 for r in scored if r["top"][0] == r["label"])
    in_top = sum(1 for r in scored if r["label"] in r["top"][:top])
    classes = sorted({r["label"] for r in scored} | {r["top"][0] for r in scored})
    position = {c: i for i, c in enumerate(classes)}
    matrix = [[0] * len(classes) for _ in classes]
    for r in scored:
        matrix[position[r["label"]]][position[r["top"][0]]] += 1
    per_class = []
    for c in sorted({r["label"] for r in scored}):
        members = [r for r in scored if r["label"] == c]
        hits = sum(1 for r in members if r["top"][0] == c)
        per_class.append({"index": c, "name": _name(names, c), "images": len(members), "correct": hits,
                          "accuracy": hits / len(members)})
    return {
        "accuracy": correct / total if total else None,
        "top5": in_top / total if total else None,
        "correct": correct,
        "per_class": per_class,
        "confusion": {"classes": classes, "names": [_name(names, c) for c in classes], "matrix": matrix},
    }


def _name(names: list[str], index: int) -> str:
    return names[index] if 0 <= index < len(names) else str(index)
