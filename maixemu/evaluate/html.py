"""``REPORT/index.html``: one static page with the numbers, tables and the plots beside it."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from html import escape
from pathlib import Path

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; }
th { background: #f5f5f5; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.key { display: inline-block; margin: 4px 14px 4px 0; padding: 8px 14px; background: #f2f6fb; border-radius: 6px; }
.key b { display: block; font-size: 20px; } img { max-width: 100%; border: 1px solid #eee; margin: 6px 0; }
.note { color: #666; } .verdict { padding: 10px 14px; border-radius: 6px; margin: 12px 0; font-weight: 600; }
.verdict.ready { background: #e6f4ea; } .verdict.check { background: #fff4e0; } .verdict.not { background: #fde8e8; }
tr.jump td { background: #fde8e8; }
"""


def _pct(value) -> str:
    return "–" if value is None else f"{100 * value:.2f} %"


def _num(value) -> str:
    return "–" if value is None else f"{value:.5g}"


def _table(headers: list[str], rows: list[list], numeric: AbstractSet[int] = frozenset()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td{' class=n' if i in numeric else ''}>{escape(str(c))}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def render(results: dict, plots: dict[str, str | None], plots_missing: bool) -> str:
    from .report import recipe_text

    model, data, recipe = results["model"], results["data"], results["input"]
    parts = [f"<h1>maixemu eval — {escape(model['file'])} on {escape(data['path'])}</h1>"]
    parts.append(
        f"<p class=note>kmodel V{model['version']} sha256 {escape(model['sha256'][:16])}…, {escape(data['layout'])}, "
        f"task {escape(results['task'])}; input <b>{escape(recipe_text(recipe))}</b>, "
        f"model input {'x'.join(map(str, recipe['model_input']))}</p>"
    )
    keys = [("images", str(results["images"]))]
    if results["task"] == "classify":
        keys += [("top-1", _pct(results["accuracy"])), ("top-5", _pct(results["top5"]))]
    if results["task"] == "detect":
        keys += [("mAP@0.5", _pct(results["map50"])), ("recall", _pct(results["recall"])), ("precision", _pct(results["precision"]))]
    reference = results.get("reference") or {}
    if reference.get("images"):
        keys += [("cosine (mean)", _num(reference["cosine_mean"])), ("agreement", _pct(reference["agreement"]))]
    if results["skipped"]:
        keys.append(("skipped", str(len(results["skipped"]))))
    parts.append("<div>" + "".join(f"<span class=key>{escape(k)}<b>{escape(v)}</b></span>" for k, v in keys) + "</div>")
    verdict = results.get("verdict")
    if verdict:
        parts.append(f"<p class=\"verdict {escape(verdict['level'].split()[0])}\">{escape(verdict['text'])}</p>")
    if plots_missing:
        parts.append("<p class=note>Plots need matplotlib: pip install matplotlib (or \"maixemu[eval]\").</p>")

    def figure(key: str, title: str) -> None:
        name = plots.get(key)
        if name:
            heading = f"<h2>{escape(title)}</h2>" if title else ""
            parts.append(f"{heading}<img src=\"plots/{escape(name)}\" alt=\"{escape(title or key)}\">")

    if results["task"] == "classify":
        figure("confusion", "Confusion matrix")
        figure("per_class", "Accuracy per class")
        parts.append("<h2>Per class</h2>" + _table(
            ["index", "class", "images", "correct", "top-1"],
            [[p["index"], p["name"], p["images"], p["correct"], _pct(p["accuracy"])] for p in results["per_class"]],
            {0, 2, 3, 4},
        ))
    if results["task"] == "detect":
        figure("per_class", "AP per class")
        region = results.get("region", {})
        parts.append(f"<p class=note>region layer: anchors {escape(str(region.get('anchors')))}, threshold "
                     f"{region.get('threshold')}, nms {region.get('nms')}</p>")
        parts.append("<h2>Per class</h2>" + _table(
            ["index", "class", "objects", "detections", "true positives", "AP@0.5"],
            [[p["index"], p["name"], p["objects"], p["detections"], p["true_positives"], _pct(p["ap"])] for p in results["per_class_ap"]],
            {0, 2, 3, 4, 5},
        ))
    if reference.get("images"):
        parts.append(f"<h2>Against the float model {escape(reference['file'])}</h2>")
        parts.append(f"<p class=note>mean {reference['mean']}, std {reference['std']}; the float model reads the file's RGB888; "
                     f"agreement = arg-max agreement on output {reference['class_output']}"
                     + (f"; top-1 agreement {_pct(reference['top1_agreement'])}" if "top1_agreement" in reference else "") + "</p>")
        parts.append(_table(
            ["output", "shape", "cosine mean", "cosine min", "max |err|", "mean |err|"],
            [[o["index"], "x".join(map(str, o["shape"])), _num(o["cosine_mean"]), _num(o["cosine_min"]), _num(o["max_abs"]),
              _num(o["mean_abs"])] for o in reference["outputs"]],
            {0, 2, 3, 4, 5},
        ))
        figure("error_histogram", "Error histogram")
        parts.append("<h2>Largest disagreements</h2>" + _table(
            ["image", "cosine", "agreement", "kmodel top-1", "float top-1"],
            [[w["path"], _num(w["cosine"]), _pct(w["agreement"]), w["kmodel_top1"] if w["kmodel_top1"] is not None else "–",
              w["reference_top1"] if w["reference_top1"] is not None else "–"] for w in reference["worst"]],
            {1, 2},
        ))
    if "layers" in results:
        parts.append("<h2>Layer by layer</h2>")
        figure("layers", "")
        parts.append(_layers_section(results))
    if reference.get("agreement_matrix", {}).get("matrix"):
        figure("agreement", "Agreement matrix: float model vs kmodel decisions")
    figure("worst", "Worst images")
    if results["skipped"]:
        parts.append("<h2>Skipped</h2>" + _table(["image", "why"], [[s["path"], s["reason"]] for s in results["skipped"]]))
    if results.get("excluded"):
        parts.append("<h2>Not evaluated</h2>" + _table(["file", "why"], [[e["path"], e["reason"]] for e in results["excluded"]]))
    body = "\n".join(parts)
    return f"<!doctype html>\n<html><head><meta charset=utf-8><title>maixemu eval — {escape(model['file'])}</title>" \
           f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"


def _layers_section(results: dict) -> str:
    """Layer by layer: the verdict's numbers, the plot, the worst layers first, then every layer in order."""
    from .report import LAYER_HEADERS, layer_rows

    mapping, summary = results.get("layer_mapping", {}), results.get("layer_summary", {})
    out = [f"<p class=note>{mapping.get('matched')} of {mapping.get('layers')} kmodel layers matched "
           f"to float tensors ({escape(str(mapping.get('method')))}); each layer runs on the file's input, so its error "
           "is the quantisation's. uint8 layers are dequantised with a scale and zero point fitted on the probe images.</p>"]
    keys = []
    for key, label in (("input_error", "device input path"), ("quantisation_error", "quantisation")):
        value = results.get(key)
        if value:
            db = "exact" if value["sqnr_db"] is None else f"{value['sqnr_db']:.1f} dB"
            keys.append(f"<span class=key>{escape(label)} (SQNR at the outputs)<b>{escape(db)}</b></span>")
    if keys:
        out.append("<div>" + "".join(keys) + "</div>")
    jump = summary.get("jump")
    if jump:
        before = "its own rounding floor" if jump["after"] is None else f"layer {jump['after']}"
        out.append(f"<p><b>The error jumps at layer {jump['index']}</b> ({escape(jump['kind'])}): SQNR {jump['sqnr_db']:.1f} dB, "
                   f"{jump['drop_db']:.1f} dB below {escape(before)}.</p>")
    rows = layer_rows(results)
    by_index = {r[0]: r for r in rows}
    worst = [by_index[str(i)] for i in summary.get("worst_layers", []) if str(i) in by_index]
    numeric = {0, 4, 5, 6, 7}
    if worst:
        out.append("<h3>Worst layers</h3>" + _table(LAYER_HEADERS[:-1], [r[:-1] for r in worst], numeric))
    samples = summary.get("worst_samples", [])
    if samples:
        out.append("<h3>Worst images (lowest mean layer SQNR)</h3>" + _table(
            ["image", "mean SQNR dB", "worst layer", "its SQNR dB"],
            [[s["path"], _num(s["sqnr_mean_db"]), s["worst_layer"], _num(s["worst_layer_sqnr_db"])] for s in samples], {1, 2, 3}))
    head = "".join(f"<th>{escape(h)}</th>" for h in LAYER_HEADERS[:-1])
    body = "".join(
        f"<tr{' class=jump' if r[-1] else ''}>" + "".join(f"<td{' class=n' if i in numeric else ''}>{escape(c)}</td>"
                                                         for i, c in enumerate(r[:-1])) + "</tr>" for r in rows)
    out.append(f"<h3>Every matched layer, model order</h3><table><tr>{head}</tr>{body}</table>")
    unmatched = mapping.get("unmatched", [])
    if unmatched:
        out.append("<h3>Not compared</h3>" + _table(["#", "kind", "shape", "why"],
                                                    [[u["index"], u["kind"], "x".join(map(str, u["shape"])), u["reason"]] for u in unmatched], {0}))
    return "\n".join(out)


def write_html(report: Path, results: dict, plots: dict[str, str | None], plots_missing: bool) -> Path:
    from .report import write_atomic

    path = report / "index.html"
    write_atomic(path, render(results, plots, plots_missing))
    return path
