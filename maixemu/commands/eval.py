"""Evaluate a kmodel over a dataset as the device sees it, optionally against its float model.

DATA is a folder of class folders or a path,label CSV (classification), images with VOC .xml or
YOLO .txt annotations next to them (detection: the firmware's region layer, mAP@0.5), or any
folder of images with --reference (comparison only). --input device feeds each image through the
camera's RGB565 frame and the firmware's image functions, as a script does; --input file feeds the
file's RGB888. --reference FLOAT_MODEL (.tflite via LiteRT, .onnx via onnxruntime) adds cosine,
absolute errors and top-1 agreement per image. Writes REPORT/results.json, predictions.csv,
index.html (plots); an interrupted run resumes from REPORT/checkpoint.jsonl.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _steps_action(op: str, count: int, example: str):
    class StepAction(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            from ..evaluate.errors import EvalError
            from ..evaluate.recipe import Step, parse_ints

            try:
                args = parse_ints(values, count, option_string, example) if count else ()
            except EvalError as exc:
                parser.error(str(exc))
            steps = list(getattr(namespace, "steps", None) or [])
            steps.append(Step(op, args))
            namespace.steps = steps

    return StepAction


def _floats(option: str):
    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(float(v) for v in text.replace(" ", ",").split(",") if v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} takes comma-separated numbers, got {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"{option} needs at least one number")
        return values

    return parse


def _framesize(text: str) -> tuple[int, int]:
    from ..evaluate.errors import EvalError
    from ..evaluate.recipe import parse_framesize

    try:
        return parse_framesize(text)
    except EvalError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("model", type=Path, help="the .kmodel (V3/V4)")
    parser.add_argument("data", type=Path, help="class folders, a path,label CSV, annotated images, or a folder of images")
    what = parser.add_argument_group("what to measure")
    what.add_argument("--task", choices=["auto", "classify", "detect", "compare"], default="auto",
                      help="default: from DATA (CSV/class folders: classify; .xml/.txt next to images: detect; else compare)")
    what.add_argument("--labels", type=Path, help="class names, one per line in output order (as the MaixPy script loads them)")
    what.add_argument("--output", type=int, help="which model output holds the class scores (default 0; comparing: the one "
                      "with the fewest values along its last axis)")
    what.add_argument("--anchors", type=_floats("--anchors"), help="detection: the anchors given to kpu.init_yolo2, e.g. 1.08,1.19,3.42,...")
    what.add_argument("--threshold", type=float, default=0.5, help="detection: init_yolo2's threshold (default 0.5)")
    what.add_argument("--nms", type=float, default=0.3, help="detection: init_yolo2's nms_value (default 0.3)")
    inp = parser.add_argument_group("input path (steps run in the order given, like script lines)")
    inp.add_argument("--input", choices=["device", "file"], default="device",
                     help="device: camera RGB565/grayscale frame -> firmware image steps -> pix_to_ai (default); file: the file's RGB888")
    inp.add_argument("--pixformat", choices=["rgb565", "grayscale"], help="the camera's sensor.set_pixformat (default: from the model's channels)")
    inp.add_argument("--framesize", type=_framesize, help="the camera's sensor.set_framesize: QVGA, B64X64, ... or WxH (default: each image's own size)")
    inp.add_argument("--crop", action=_steps_action("crop", 4, "0,0,224,224"), metavar="X,Y,W,H", help="img.cut(x, y, w, h)")
    inp.add_argument("--resize", action=_steps_action("resize", 2, "224,224"), metavar="W,H", help="img.resize(w, h) (the model's size is added last if needed)")
    inp.add_argument("--to-grayscale", action=_steps_action("to_grayscale", 0, ""), nargs=0, help="img.to_grayscale()")
    ref = parser.add_argument_group("float reference")
    ref.add_argument("--reference", type=Path, metavar="FLOAT_MODEL", help=".tflite (LiteRT) or .onnx (onnxruntime) the kmodel was compiled from")
    ref.add_argument("--mean", type=_floats("--mean"), help="its input normalisation (x - mean) / std: one value or one per channel "
                     "(default: the usual ones are tried on the first images and the best agreeing is used and named; "
                     "with only --std, 0)")
    ref.add_argument("--std", type=_floats("--std"), help="(with only --mean, 1)")
    ref.add_argument("--layers", action="store_true", help="compare every kmodel layer with the float tensor it computes "
                     "(cosine, SQNR, saturation, the layer where the error jumps) and split the output error into the "
                     "device input path's and the quantisation's")
    run = parser.add_argument_group("running")
    run.add_argument("--report", type=Path, default=Path("maixemu-eval"), metavar="REPORT", help="output folder (default ./maixemu-eval)")
    run.add_argument("--jobs", type=_positive, help="worker processes (default: the cores)")
    run.add_argument("--dask", metavar="ADDRESS", help="run on a Dask distributed cluster, e.g. tcp://scheduler:8786")
    run.add_argument("--fresh", action="store_true", help="ignore REPORT's checkpoint and start over")
    run.add_argument("--overwrite", action="store_true", help="let REPORT hold report files maixemu did not write "
                     "(they are replaced); without it only maixemu's own earlier report is")
    run.add_argument("--limit", type=_positive, help="only the first N images")
    run.add_argument("--worst", type=int, default=12, help="how many worst images the report lists (default 12)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(steps=[])


def run(args: argparse.Namespace) -> int:
    from ..evaluate import EvalError, EvalOptions, evaluate

    options = EvalOptions(
        model=args.model, data=args.data, report=args.report, task=args.task, labels=args.labels, output=args.output,
        anchors=args.anchors, threshold=args.threshold, nms=args.nms, input=args.input, pixformat=args.pixformat,
        framesize=args.framesize, steps=tuple(args.steps), reference=args.reference, mean=args.mean, std=args.std,
        jobs=args.jobs, dask=args.dask, fresh=args.fresh, limit=args.limit, worst=args.worst, quiet=args.quiet,
        overwrite=args.overwrite,
        layers=args.layers,
    )
    try:
        outcome = evaluate(options)
    except EvalError as exc:
        print(f"maixemu eval: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # while loading or writing the report: the checkpoint has every finished image
        print(f"maixemu eval: interrupted; finished images are kept in {args.report / 'checkpoint.jsonl'}: "
              "run the same command again to resume", file=sys.stderr)
        return 130
    if outcome.interrupted:
        print(f"maixemu eval: {outcome.summary}", file=sys.stderr)
        return 130
    print(outcome.summary)
    return 0
