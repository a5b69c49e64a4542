"""The report's figures, drawn with matplotlib (Agg, no display): confusion matrix, per-class bars,
error histogram and the worst images with their predictions.

Each function writes one PNG and returns its file name, or returns None when there is nothing to
draw; :func:`available` says whether matplotlib is installed at all (the report then has tables only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def confusion_matrix(results: dict, folder: Path) -> str | None:
    confusion = results.get("confusion")
    if not confusion or not confusion["classes"]:
        return None
    plt = _pyplot()
    matrix = np.asarray(confusion["matrix"], dtype=float)
    n = len(confusion["classes"])
    size = min(12.0, 2.5 + 0.45 * n)
    fig, ax = plt.subplots(figsize=(size, size))
    totals = matrix.sum(axis=1, keepdims=True)
    shown = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
    ax.imshow(shown, cmap="Blues", vmin=0, vmax=1)
    if n <= 30:
        ax.set_xticks(range(n), confusion["names"], rotation=90 if n > 10 else 0)
        ax.set_yticks(range(n), confusion["names"])
        for i in range(n):
            for j in range(n):
                if matrix[i, j]:
                    ax.text(j, i, int(matrix[i, j]), ha="center", va="center",
                            color="white" if shown[i, j] > 0.5 else "black", fontsize=8)
    ax.set_xlabel("predicted (kmodel top-1)")
    ax.set_ylabel("true label")
    ax.set_title(f"confusion matrix, top-1 {100 * results['accuracy']:.1f} %")
    return _save(fig, plt, folder, "confusion.png")


def per_class_bars(results: dict, folder: Path) -> str | None:
    if results["task"] == "classify":
        items = [(p["name"], p["accuracy"]) for p in results.get("per_class", [])]
        label = "top-1 accuracy"
    elif results["task"] == "detect":
        items = [(p["name"], p["ap"]) for p in results.get("per_class_ap", []) if p["ap"] is not None]
        label = "AP@0.5"
    else:
        return None
    if not items:
        return None
    plt = _pyplot()
    items = items[:60]
    fig, ax = plt.subplots(figsize=(min(14.0, 2.0 + 0.35 * len(items)), 4.0))
    ax.bar(range(len(items)), [100 * v for _, v in items], color="#4878b0")
    ax.set_xticks(range(len(items)), [n for n, _ in items], rotation=90 if len(items) > 10 else 0)
    ax.set_ylim(0, 100)
    ax.set_ylabel(f"{label} (%)")
    ax.set_title(f"{label} per class")
    return _save(fig, plt, folder, "per_class.png")


def error_histogram(results: dict, folder: Path) -> str | None:
    reference = results.get("reference") or {}
    outputs = [o for o in reference.get("outputs", []) if sum(o["error_histogram"]["counts"])]
    if not outputs:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.0, 4.0))
    edges = np.asarray(outputs[0]["error_histogram"]["edges"], dtype=float)
    # Plot each bin at its upper edge on a log axis; the [0, 1e-6) bin sits at 1e-6, the last at 1e3.
    centres = np.concatenate([edges[1:-1], [edges[-2] * 10]])
    for o in outputs:
        counts = np.asarray(o["error_histogram"]["counts"], dtype=float)
        share = 100 * counts / counts.sum()
        ax.step(centres, share, where="mid", label=f"output {o['index']} ({'x'.join(map(str, o['shape']))})")
    ax.set_xscale("log")
    ax.set_xlabel("|kmodel - float model| after dequantisation")
    ax.set_ylabel("share of output values (%)")
    ax.set_title("absolute error, all images")
    ax.legend(fontsize=8)
    return _save(fig, plt, folder, "error_histogram.png")


def layer_errors(results: dict, folder: Path) -> str | None:
    """SQNR (and cosine) of every matched layer in model order, saturation as bars, the jump marked."""
    entries = [e for e in results.get("layers") or [] if e["sqnr_db"] is not None]
    if not entries:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(min(14.0, 4.0 + 0.18 * len(entries)), 4.2))
    x = np.arange(len(entries))
    sqnr = [e["sqnr_db"] for e in entries]
    ax.plot(x, sqnr, marker="o", markersize=3.5, color="#4878b0", label="SQNR (dB)")
    jump = (results.get("layer_summary") or {}).get("jump") or {}
    for i, e in enumerate(entries):
        if e["index"] == jump.get("index"):
            ax.plot([i], [e["sqnr_db"]], marker="o", markersize=9, color="#d62728", fillstyle="none", mew=2,
                    label=f"error jumps (layer {e['index']})")
    ax.set_ylabel("SQNR, float vs kmodel (dB)")
    step = max(1, len(entries) // 40)
    ax.set_xticks(x[::step], [str(e["index"]) for e in entries][::step], fontsize=7, rotation=90 if len(entries) > 40 else 0)
    ax.set_xlabel("kmodel layer (matched layers, model order)")
    ax.grid(alpha=0.3)
    twin = ax.twinx()
    twin.bar(x, [100 * (e["saturated"] or 0) for e in entries], color="#f0a050", alpha=0.45, width=0.6, label="saturated (%)")
    twin.set_ylabel("saturated (%)")
    twin.set_ylim(0, max(5.0, 1.2 * max(100 * (e["saturated"] or 0) for e in entries)))
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    handles = ax.get_legend_handles_labels()
    extra = twin.get_legend_handles_labels()
    ax.legend(handles[0] + extra[0], handles[1] + extra[1], fontsize=8, loc="lower left")
    ax.set_title("error per layer: float model vs kmodel on the same input")
    return _save(fig, plt, folder, "layers.png")


def agreement_matrix(results: dict, folder: Path) -> str | None:
    """Float model's decisions (rows) against the kmodel's (columns)."""
    matrix_info = (results.get("reference") or {}).get("agreement_matrix")
    if not matrix_info or not matrix_info["matrix"]:
        return None
    plt = _pyplot()
    matrix = np.asarray(matrix_info["matrix"], dtype=float)
    n = len(matrix)
    size = min(10.0, 2.8 + 0.4 * n)
    fig, ax = plt.subplots(figsize=(size, size))
    totals = matrix.sum(axis=1, keepdims=True)
    shown = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
    ax.imshow(shown, cmap="Greens", vmin=0, vmax=1)
    names = matrix_info["names"]
    if n <= 30:
        ax.set_xticks(range(n), names, rotation=90 if n > 8 else 0, fontsize=8)
        ax.set_yticks(range(n), names, fontsize=8)
        for i in range(n):
            for j in range(n):
                if matrix[i, j]:
                    ax.text(j, i, int(matrix[i, j]), ha="center", va="center", fontsize=7,
                            color="white" if shown[i, j] > 0.5 else "black")
    ax.set_xlabel("kmodel arg-max")
    ax.set_ylabel("float model arg-max")
    agree = matrix_info.get("agreement")
    ax.set_title(f"agreement matrix ({matrix_info['rows']} decisions, {100 * agree:.2f} % agree)" if agree is not None
                 else "agreement matrix")
    return _save(fig, plt, folder, "agreement.png")


def worst_images(results: dict, records: dict[str, dict], root: Path, folder: Path, names: list[str]) -> str | None:
    worst = results.get("worst") or []
    if not worst:
        return None
    from PIL import Image

    plt = _pyplot()
    items = worst[:12]
    cols = min(6, len(items))
    rows = (len(items) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(2.5 * cols, 3.0 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, item in zip(axes.ravel(), items):
        record = records.get(item["path"], {})
        try:
            with Image.open(root / item["path"]) as img:
                ax.imshow(np.asarray(img.convert("RGB")))
        except (OSError, ValueError):
            continue
        ax.set_title(_caption(results["task"], item, record, names), fontsize=8)
        if results["task"] == "detect":
            _draw_boxes(ax, record, names)
    fig.suptitle("worst images", fontsize=10)
    return _save(fig, plt, folder, "worst.png")


def _label(names: list[str], index) -> str:
    return names[index] if isinstance(index, int) and 0 <= index < len(names) else str(index)


def _caption(task: str, item: dict, record: dict, names: list[str]) -> str:
    lines = [Path(item["path"]).name]
    if task == "classify":
        lines.append(f"true {_label(names, item['label'])}  kmodel {_label(names, item['prediction'])} ({item['score']:.2f})")
    elif task == "detect":
        lines.append(f"{item['objects']} objects, {item['detections']} found, {item['errors']} errors")
    ref = record.get("ref")
    if ref:
        text = f"cos {ref['cosine']:.3f}  agree {100 * ref['agreement']:.1f} %"
        if "top1" in ref:
            text += f"  float {_label(names, ref['top1'])}"
        lines.append(text)
    return "\n".join(lines)


def _draw_boxes(ax, record: dict, names: list[str]) -> None:
    from matplotlib.patches import Rectangle

    for x, y, w, h, label, _difficult in record.get("gt", []):
        ax.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor="#2ca02c", linewidth=1.5))
    for x, y, w, h, label, score in record.get("boxes", []):
        ax.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor="#d62728", linewidth=1.2, linestyle="--"))
        ax.text(x, y, f"{_label(names, label)} {score:.2f}", color="white", fontsize=6, backgroundcolor="#d62728", va="bottom")


def _save(fig, plt, folder: Path, name: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(folder / name, dpi=96)
    plt.close(fig)
    return name
