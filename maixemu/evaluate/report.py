"""The report's text parts: ``results.json``, ``predictions.csv`` and the terminal summary, and the
report folder's rules: maixemu writes into a folder only where it replaces nothing it did not write
(:func:`check_report`), and marks the folders it writes (:data:`REPORT_MARKER`) so that a report kept
inside the dataset is never read as part of it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..host import outputs
from ..host.atomic_write import atomic_file, write_text_atomically
from .errors import EvalError

#: The file that marks a folder as a maixemu eval report (the next run may replace what is in it).
REPORT_MARKER = ".maixemu-eval"
#: What a run writes into its report folder.
REPORT_NAMES = ("results.json", "predictions.csv", "index.html", "run.json", "checkpoint.jsonl", "plots")


def check_report(report: Path, *, overwrite: bool) -> None:
    """Refuse, before anything runs, a ``--report`` that is a file, that cannot be written, or that
    holds report files maixemu did not write (an old report without the marker whose checkpoint is
    maixemu's counts as maixemu's)."""
    try:
        outputs.check_folder(report, "--report", marker=REPORT_MARKER, names=REPORT_NAMES,
                             overwrite=overwrite or _has_own_checkpoint(report))
    except outputs.OutputRefused as exc:
        raise EvalError(str(exc)) from None


def _has_own_checkpoint(report: Path) -> bool:
    from .checkpoint import NAME

    return outputs.is_maixemu_json_lines(report / NAME, ("maixemu_eval_checkpoint",))


def mark_report(report: Path) -> None:
    """Create the report folder with its marker (before the first file is written into it)."""
    try:
        report.mkdir(parents=True, exist_ok=True)
        marker = report / REPORT_MARKER
        if not marker.exists():
            marker.write_text("maixemu eval report: maixemu may replace the files it wrote here\n", encoding="utf-8")
    except OSError as exc:
        raise EvalError(f"--report {report}: cannot write it ({exc.strerror or exc})") from None


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file of its own and rename, so a reader never sees half a file (and two
    runs writing the same report never rename each other's)."""
    write_text_atomically(path, text)


def write_results(report: Path, results: dict) -> Path:
    path = report / "results.json"
    write_atomic(path, json.dumps(results, indent=2, sort_keys=True) + "\n")
    return path


def _name(names: list[str], index) -> str:
    return names[index] if isinstance(index, int) and 0 <= index < len(names) else ""


def prediction_rows(records: list[dict], task: str, names: list[str]) -> tuple[list[str], list[list]]:
    from .aggregate import image_errors

    columns = ["index", "path", "status", "reason"]
    if task == "classify":
        columns += ["label", "label_name", "prediction", "prediction_name", "score", "correct", "top5"]
    elif task == "detect":
        columns += ["objects", "detections", "errors", "boxes"]
    else:
        columns += ["prediction", "score"]
    with_reference = any("ref" in r for r in records)
    if with_reference:
        columns += ["cosine", "agreement", "reference_top1", "max_abs", "mean_abs"]
    rows = []
    for r in sorted(records, key=lambda r: r["index"]):
        ok = r["status"] == "ok"
        row = [r["index"], r["rel"], r["status"], r.get("reason", "")]
        top = r.get("top") or [None]
        score = r["scores"][0] if r.get("scores") else ""
        if task == "classify":
            label = r.get("label")
            row += [label, _name(names, label), top[0] if ok else "", _name(names, top[0]), score,
                    int(top[0] == label) if ok and top[0] is not None else "", " ".join(map(str, r.get("top") or []))]
        elif task == "detect":
            row += [len(r["gt"]), len(r["boxes"]), image_errors(r), json.dumps(r["boxes"])] if ok else ["", "", "", ""]
        else:
            row += [top[0] if ok and top[0] is not None else "", score]
        if with_reference:
            ref = r.get("ref")
            if ref:
                row += [ref["cosine"], ref["agreement"], ref.get("top1", ""), max(o["max_abs"] for o in ref["outputs"]),
                        sum(o["mean_abs"] for o in ref["outputs"]) / len(ref["outputs"])]
            else:
                row += ["", "", "", "", ""]
        rows.append(row)
    return columns, rows


def write_predictions(report: Path, records: list[dict], task: str, names: list[str]) -> Path:
    path = report / "predictions.csv"
    columns, rows = prediction_rows(records, task, names)
    with atomic_file(path, "w", newline="", encoding="utf-8") as fp:
        writer = csv.writer(fp)
        writer.writerow(columns)
        writer.writerows(rows)
    return path


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.2f} %"


def _num(value, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}" if abs(value) >= 1e4 or (value and abs(value) < 1e-3) else f"{value:.{digits}f}"


def recipe_text(recipe: dict) -> str:
    """``device (grayscale, frame 64x64, resize(28, 28))``: the input path in one line."""
    parts = [recipe["pixformat"]]
    if recipe.get("framesize"):
        parts.append("frame {}x{}".format(*recipe["framesize"]))
    parts += recipe["steps"]
    w = recipe["model_input"][2]
    h = recipe["model_input"][1]
    if recipe.get("auto_resize") is None:
        parts.append(f"resize({w}, {h}) where the size differs")
    elif recipe["auto_resize"]:
        parts.append(f"resize({w}, {h})")
    return f"{recipe['mode']} ({', '.join(parts)})"


def summary_text(results: dict, report: Path) -> str:
    """The table printed at the end of a run."""
    lines = []
    model = results["model"]
    source = results["data"]
    lines.append(f"maixemu eval: {model['file']} (V{model['version']}) on {source['path']} ({source['layout']}, task {results['task']})")
    recipe = results["input"]
    lines.append(f"  input      {recipe_text(recipe)}")
    skipped = results["skipped"]
    lines.append(f"  images     {results['images']}" + (f"  ({len(skipped)} skipped: see below)" if skipped else ""))
    if results["task"] == "classify":
        lines.append(f"  top-1      {_pct(results['accuracy'])}  ({results['correct']} of {results['images']})")
        lines.append(f"  top-5      {_pct(results['top5'])}")
        per = results["per_class"]
        if per:
            lines.append("  per class  " + "  ".join(f"{p['name']}: {_pct(p['accuracy'])}" for p in per[:12]) + (" ..." if len(per) > 12 else ""))
    elif results["task"] == "detect":
        lines.append(f"  mAP@0.5    {_pct(results['map50'])}  ({results['objects']} objects, {results['detections']} detections, "
                     f"recall {_pct(results['recall'])}, precision {_pct(results['precision'])})")
        for p in results["per_class_ap"][:20]:
            lines.append(f"    {p['name']:<16} AP {_pct(p['ap']):>9}  objects {p['objects']:>4}  detections {p['detections']:>4}")
    reference = results.get("reference")
    if reference and reference.get("images"):
        lines.append(f"  reference  {reference['file']}: cosine mean {_num(reference['cosine_mean'])} (min {_num(reference['cosine_min'])}), "
                     f"agreement {_pct(reference['agreement'])} on output {reference['class_output']}"
                     + (f", top-1 agreement {_pct(reference['top1_agreement'])}" if "top1_agreement" in reference else ""))
        if reference.get("normalisation") not in (None, "given", "default"):
            lines.append(f"    input   {reference['normalisation']}")
        lines.append("    output  shape            cosine mean  cosine min    max |err|   mean |err|")
        for o in reference["outputs"]:
            shape = "x".join(str(s) for s in o["shape"])
            lines.append(f"    {o['index']:<6}  {shape:<15}  {_num(o['cosine_mean']):>11}  {_num(o['cosine_min']):>10}  "
                         f"{_num(o['max_abs']):>11}  {_num(o['mean_abs']):>11}")
    if "layers" in results:
        lines += layers_text(results)
    if results.get("verdict"):
        lines.append(f"  {results['verdict']['text']}")
    for item in skipped[:10]:
        lines.append(f"  skipped    {item['path']}: {item['reason']}")
    if len(skipped) > 10:
        lines.append(f"  skipped    ... and {len(skipped) - 10} more (results.json lists them all)")
    lines.append(f"  report     {report / 'index.html'}")
    return "\n".join(lines)


def _db(value) -> str:
    return "exact" if value is None else f"{value:.1f}"


def layer_rows(results: dict) -> list[list[str]]:
    """The per-layer table as text cells (shared by the terminal summary and the report)."""
    jump = (results.get("layer_summary") or {}).get("jump") or {}
    rows = []
    for e in results["layers"]:
        rows.append([
            str(e["index"]), e["kind"], "x".join(map(str, e["shape"])), e["float_tensor"], _num(e["cosine"]), _db(e["sqnr_db"]),
            "-" if e["rmse_steps"] is None else f"{e['rmse_steps']:.2f}", _pct(e["saturated"]),
            "{:.3g}..{:.3g}".format(*e["float_range"]) if e["float_range"] else "-",
            "{:.3g}..{:.3g}".format(*e["kmodel_range"]) if e["kmodel_range"] else "-",
            "<- error jumps" if e["index"] == jump.get("index") else "",
        ])
    return rows


LAYER_HEADERS = ["#", "kind", "shape", "float tensor", "cosine", "SQNR dB", "RMSE/step", "saturated", "float range",
                 "kmodel range", ""]


def layers_text(results: dict) -> list[str]:
    mapping = results.get("layer_mapping", {})
    summary = results.get("layer_summary", {})
    lines = [f"  layers     {mapping.get('matched')} of {mapping.get('layers')} kmodel layers matched to float tensors "
             f"(by values on {mapping.get('probe_images')} image(s)); per layer on the file's input:"]
    rows = [LAYER_HEADERS] + layer_rows(results)
    widths = [min(36, max(len(r[i]) for r in rows)) for i in range(len(LAYER_HEADERS))]
    for row in rows:
        cells = [c if len(c) <= w else "…" + c[-(w - 1):] for c, w in zip(row, widths)]
        lines.append("    " + "  ".join(c.rjust(w) if i in (0, 4, 5, 6, 7) else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
    compute = [u for u in mapping.get("unmatched", []) if not u["reason"].startswith("moves or converts")]
    for u in compute[:10]:
        lines.append(f"    unmatched layer {u['index']} {u['kind']} {'x'.join(map(str, u['shape']))}: {u['reason']}")
    moved = len(mapping.get("unmatched", [])) - len(compute)
    if moved:
        lines.append(f"    ({moved} layer(s) that only move or convert values are not compared)")
    jump = summary.get("jump")
    if jump:
        before = "its own rounding floor" if jump["after"] is None else f"layer {jump['after']}"
        lines.append(f"  jump       layer {jump['index']} ({jump['kind']}): SQNR {_db(jump['sqnr_db'])} dB, "
                     f"{jump['drop_db']:.1f} dB below {before}")
    if summary.get("worst_layers"):
        lines.append("  worst      layers " + ", ".join(map(str, summary["worst_layers"])) + " (lowest SQNR); images "
                     + ", ".join(f"{w['path']} ({_db(w['sqnr_mean_db'])} dB)" for w in summary.get("worst_samples", [])[:3]))
    for key, label in (("input_error", "input path"), ("quantisation_error", "quantisation")):
        value = results.get(key)
        if value:
            lines.append(f"  {label:<10} SQNR {_db(value['sqnr_db'])} dB, cosine {_num(value['cosine'])} at the outputs "
                         f"({value['compares']})")
    return lines
