"""One evaluation from options to report: checks, dataset, executor, checkpoint, aggregation, files.

Everything that can be refused is refused before the first image runs (model input, labels,
anchors, reference outputs, extras), with what to do; after that a bad image costs only itself.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import executors, plots
from .aggregate import build_results
from .checkpoint import Checkpoint
from .compare import default_class_output
from .dataset import detect_task, load_dataset
from .device_input import check_recipe
from .errors import EvalError
from .html import write_html
from .labels import check_label_count, read_labels
from ..progress import LOG_EVERY_S, progress_bar
from .recipe import InputRecipe, Step
from .report import check_report, mark_report, summary_text, write_atomic, write_predictions, write_results
from .spec import WorkSpec, file_sha256, fingerprint
from .worker import model_chw, region_shape


@dataclass
class EvalOptions:
    model: Path
    data: Path
    report: Path = Path("maixemu-eval")
    task: str = "auto"
    labels: Path | None = None
    output: int | None = None
    anchors: tuple[float, ...] | None = None
    threshold: float = 0.5
    nms: float = 0.3
    input: str = "device"
    pixformat: str | None = None
    framesize: tuple[int, int] | None = None
    steps: tuple[Step, ...] = ()
    reference: Path | None = None
    #: None for both: guessed (see :mod:`.normalisation`); one given: the other is 0 / 1
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    jobs: int | None = None
    dask: str | None = None
    fresh: bool = False
    limit: int | None = None
    worst: int = 12
    quiet: bool = False
    #: ``--overwrite``: REPORT may hold report files maixemu did not write (they are replaced)
    overwrite: bool = False
    #: compare every kmodel layer with the float tensor it computes (needs ``reference``)
    layers: bool = False


@dataclass
class EvalOutcome:
    results: dict
    report: Path
    computed: int = 0
    resumed: int = 0
    interrupted: bool = False
    summary: str = ""
    files: list[Path] = field(default_factory=list)


def _load_model(path: Path):
    from ..kmodel import KmodelError, load_kmodel

    try:
        return load_kmodel(path)
    except FileNotFoundError:
        raise EvalError(f"no such model file: {path}") from None
    except (OSError, KmodelError) as exc:
        raise EvalError(f"{path}: {exc}") from None


def _check_region(options: EvalOptions) -> None:
    if not options.anchors:
        raise EvalError(
            "detection needs the region layer's anchors: --anchors A1,A2,... as the script passes them to "
            "kpu.init_yolo2(task, threshold, nms, anchor_num, anchors)"
        )
    if len(options.anchors) % 2:
        raise EvalError(f"--anchors needs pairs (w, h): got {len(options.anchors)} numbers")
    if not 0 <= options.threshold <= 1:
        raise EvalError("[MAIXPY]kpu: threshold only support 0 to 1")
    if not 0 <= options.nms <= 1:
        raise EvalError("[MAIXPY]kpu: nms_value only support 0 to 1")


def _region_classes(model, anchors: tuple[float, ...]) -> int:
    """Classes of the YOLOv2 region output, as the firmware counts them, checked against the anchors.

    MaixPy's region layer takes ``classes = channels / 5 - 5`` whatever ``anchor_num`` says
    (``components/kendryte_sdk/src/sipeed_yolo2.c:52``) and walks ``anchor_num`` boxes per cell, so
    anchors that do not make 5 x (5 + classes) channels give boxes from the wrong channels there.
    """
    channels = region_shape(model)[2]
    classes = channels // 5 - 5
    pairs = len(anchors) // 2
    if channels != 5 * (5 + classes) or pairs != 5:
        raise EvalError(
            f"the model's region output has {channels} channels but --anchors gives {pairs} anchor(s): MaixPy's "
            f"region layer needs 5 anchors x (5 + classes) channels (sipeed_yolo2.c: classes = channels / 5 - 5); "
            "give the 5 anchor pairs the model was trained with, or evaluate it with --task compare --reference FLOAT_MODEL"
        )
    return classes


def _check_class_scores(shapes: list[tuple[int, ...]], class_output: int, data: Path) -> None:
    """Refuse class folders for a model whose class output is not one row of scores (a detector)."""
    from .compare import row_count

    shape = shapes[class_output]
    count = row_count(shape)
    if count > 1:
        raise EvalError(
            f"{data} is a classification dataset ({'a CSV' if data.is_file() else 'class folders'}), but output {class_output} of the model is {list(shape)}: {count} rows of scores "
            "(a detector's per-position map, not one class vector); evaluate a detector on images with VOC .xml or "
            "YOLO .txt annotations (and --anchors for a YOLOv2 region layer), or compare it with its float model: "
            "--task compare --reference FLOAT_MODEL"
        )


def _final_size(recipe: InputRecipe) -> tuple[int, int] | None:
    """The frame size after the recipe's last geometric step, when it does not depend on the image."""
    last = next((s for s in reversed(recipe.steps) if s.op != "to_grayscale"), None)
    if last is not None:
        return last.args[-2], last.args[-1]  # (a geometric step's last two arguments: w, h)
    return recipe.framesize


def prepare(options: EvalOptions):
    """Everything checked and loaded: (spec, dataset, header, model) — or an EvalError."""
    data = Path(options.data)
    model = _load_model(Path(options.model))
    chw = model_chw(model)
    task = detect_task(data, Path(options.report)) if options.task == "auto" else options.task
    if options.layers and options.reference is None:
        raise EvalError("--layers compares the kmodel's layers with the float model's: give --reference FLOAT_MODEL "
                        "(the .tflite or .onnx it was compiled from)")
    if task == "compare" and options.reference is None:
        raise EvalError(
            f"{data}: no labels found (no class folders, CSV or .xml/.txt annotations next to the images): "
            "give --reference FLOAT_MODEL to compare the kmodel with its float model, or a labelled dataset"
        )
    shapes = [tuple(int(s) for s in o.shape) for o in model.outputs]
    if options.output is not None and not 0 <= options.output < len(shapes):
        raise EvalError(f"--output {options.output}: the model has {len(shapes)} output(s), 0..{len(shapes) - 1}")
    class_output = options.output if options.output is not None else (0 if task != "compare" else default_class_output(shapes))
    recipe = InputRecipe(
        options.input, options.pixformat or ("grayscale" if chw[0] == 1 else "rgb565"), options.framesize, tuple(options.steps)
    )
    check_recipe(recipe, chw)
    labels = read_labels(options.labels) if options.labels else None
    if task == "detect":
        _check_region(options)
        classes = _region_classes(model, options.anchors or ())
        what = f"the region layer ({region_shape(model)[2]} channels = 5 anchors x (5 + {classes}))"
    else:
        classes = int(np.prod(shapes[class_output]))
        what = f"output {class_output} ({classes} values)"
        if task == "classify" and classes < 2:
            raise EvalError(f"output {class_output} has {classes} value(s): not class scores; choose the class output with --output N")
        if task == "classify":
            _check_class_scores(shapes, class_output, data)
    if labels is not None and task != "compare":
        check_label_count(labels, classes, what, f"--labels {options.labels}")
    dataset = load_dataset(data, task, classes=classes, labels=labels, limit=options.limit,
                           exclude=Path(options.report))
    reference = str(Path(options.reference).resolve()) if options.reference else None
    spec = WorkSpec(
        model=str(Path(options.model).resolve()), task=task, recipe=recipe, output=class_output,
        anchors=tuple(options.anchors or ()), threshold=options.threshold, nms=options.nms,
        reference=reference, mean=tuple(options.mean or (0.0,)), std=tuple(options.std or (1.0,)),
    )
    normalisation = "given" if options.mean is not None or options.std is not None else "default"
    if reference and normalisation == "default":
        from .normalisation import guess_normalisation

        guess = guess_normalisation(spec, dataset.samples)
        if guess is not None:
            spec = replace(spec, mean=guess.mean, std=guess.std)
            normalisation = guess.describe()
    described = recipe.describe()
    described["model_input"] = list(chw)
    known = _final_size(recipe)
    # True: every image is resized to the model's input last; None: those whose size differs.
    described["auto_resize"] = None if known is None else known != (chw[2], chw[1])
    header = {
        "model": {"file": Path(options.model).name, "sha256": file_sha256(options.model), "version": int(model.version)},
        "data": {"path": data.name or str(data), "layout": dataset.layout, "classes": len(dataset.class_names)},
        "input": described,
        "excluded": [{"path": p, "reason": r} for p, r in dataset.excluded],
    }
    if task == "detect":
        header["region"] = {"anchors": list(spec.anchors), "threshold": spec.threshold, "nms": spec.nms,
                            "classes": classes, "output": list(shapes[0])}
    if reference:
        header["reference"] = {"file": Path(reference).name, "sha256": file_sha256(reference),
                               "mean": list(spec.mean), "std": list(spec.std), "normalisation": normalisation}
    if options.layers:
        from .layer_probe import probe_matches

        spec, unmatched, probes = probe_matches(spec, dataset.samples)
        header["layer_mapping"] = {
            "method": f"by values on the first {probes} image(s): each layer's output against the float tensors of its "
                      "size (same or channels-last arrangement), best Pearson correlation first, each tensor once",
            "probe_images": probes,
            "layers": len(model.layers),
            "matched": len(spec.layer_matches),
            "unmatched": [{"index": u.index, "kind": u.kind, "shape": list(u.shape), "reason": u.reason} for u in unmatched],
        }
    return spec, dataset, header, shapes


def _executor(options: EvalOptions, spec: WorkSpec, todo: list):
    if options.dask:
        return "dask", executors.run_dask(spec, todo, options.dask)
    cores = executors.default_jobs()
    jobs = options.jobs or cores
    if jobs > cores and not options.quiet:  # more processes than cores only add start-up and contention
        print(f"maixemu eval: --jobs {jobs}: {cores} worker process(es), one per core", file=sys.stderr)
    jobs = max(1, min(jobs, cores, len(todo)))
    if jobs == 1:
        return "serial", executors.run_serial(spec, todo)
    return f"processes x{jobs}", executors.run_processes(spec, todo, jobs)


def evaluate(options: EvalOptions) -> EvalOutcome:
    started = time.monotonic()
    if Path(options.data).is_dir() and Path(options.report).resolve() == Path(options.data).resolve():
        raise EvalError(f"--report {options.report} is DATA itself: give the report a folder of its own")
    check_report(Path(options.report), overwrite=options.overwrite)
    spec, dataset, header, shapes = prepare(options)
    from .worker import _evaluator

    _evaluator(spec)  # load (and so check) the kmodel and the float model here, before any worker starts
    report = Path(options.report)
    checkpoint = Checkpoint(report, fingerprint(spec))
    earlier = checkpoint.load(options.fresh)
    records: dict[int, dict] = {}
    todo = []
    for sample in dataset.samples:
        found = earlier.get(sample.key)
        if found is not None:
            records[sample.index] = dict(found, index=sample.index)
        else:
            todo.append(sample)
    resumed = len(records)
    mark_report(report)
    checkpoint.open(options.fresh)
    bar = progress_bar(len(dataset.samples), "eval", "img", log_every=LOG_EVERY_S, disable=options.quiet,
                       initial=resumed)
    interrupted = False
    name = "serial"
    try:
        if todo:
            name, stream = _executor(options, spec, todo)
            for batch in stream:
                checkpoint.append(batch)
                for record in batch:
                    records[record["index"]] = record
                bar.update(len(batch))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
        checkpoint.close()
    outcome = EvalOutcome({}, report, computed=len(records) - resumed, resumed=resumed, interrupted=interrupted)
    if interrupted:
        outcome.summary = (f"interrupted: {len(records)} of {len(dataset.samples)} images done and kept in "
                           f"{checkpoint.path}; run the same command again to resume")
        return outcome
    ordered = [records[s.index] for s in dataset.samples]
    results = build_results(task=spec.task, records=ordered, names=dataset.class_names, header=header,
                            output_shapes=shapes, class_output=spec.output, worst=options.worst,
                            layer_matches=spec.layer_matches if spec.per_layer else None)
    outcome.results = results
    report.mkdir(parents=True, exist_ok=True)
    outcome.files.append(write_results(report, results))
    outcome.files.append(write_predictions(report, ordered, spec.task, dataset.class_names))
    figures: dict[str, str | None] = {}
    if plots.available():
        folder = report / "plots"
        by_path = {r["rel"]: r for r in ordered}
        figures = {
            "confusion": plots.confusion_matrix(results, folder),
            "per_class": plots.per_class_bars(results, folder),
            "error_histogram": plots.error_histogram(results, folder),
            "layers": plots.layer_errors(results, folder),
            "agreement": plots.agreement_matrix(results, folder),
            "worst": plots.worst_images(results, by_path, dataset.root, folder, dataset.class_names),
        }
    outcome.files.append(write_html(report, results, figures, not plots.available()))
    run_info = {"executor": name, "computed": outcome.computed, "resumed": resumed, "seconds": round(time.monotonic() - started, 3),
                "images": len(dataset.samples)}
    write_atomic(report / "run.json", json.dumps(run_info, indent=2) + "\n")
    outcome.summary = summary_text(results, report)
    if resumed:
        outcome.summary += f"\n  resumed    {resumed} image(s) from {checkpoint.path.name}, evaluated {outcome.computed}"
    return outcome


def main_summary(outcome: EvalOutcome) -> None:
    print(outcome.summary, file=sys.stdout if not outcome.interrupted else sys.stderr)
