"""Run a kmodel once on an image or a .npy file and print its outputs' shapes and top values.

An image is prepared the way the reference vectors were: PIL ``convert("RGB")`` (``"L"`` for a
1-channel model), ``resize((W, H), BILINEAR)`` to the model input, then HWC → CHW uint8 — the
planar "AI memory" a MaixPy ``image`` feeds to ``kpu.forward``. A .npy is used as is (its size
must match the input). Models with a float input (e.g. iris) take ``--values 5.1,3.5,1.4,0.2``.
``--layers N`` stops after the first N layers, like ``kpu.set_layers(task, N)``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="a .kmodel (V3/V4) or .kfpkg")
    parser.add_argument("--input", type=Path, help="an image (any format PIL reads) or a .npy array")
    parser.add_argument("--values", help="comma-separated floats for models with a float input")
    parser.add_argument("--out", type=Path, help="save the outputs: .npy (first output; others as _1, _2...) or .npz (all)")
    parser.add_argument("--layers", type=int, help="run only the first N layers and show that layer's output")
    parser.add_argument("--top", type=int, default=5, help="how many largest values to list per output (default 5)")


def image_to_input(path: Path, shape: tuple[int, ...]) -> np.ndarray:
    """Load an image as the model's uint8 CHW input (golden README conventions)."""
    from PIL import Image

    from ..evaluate.file_input import pil_to_chw

    c, h, w = (int(v) for v in shape[-3:])
    with Image.open(path) as img:
        return pil_to_chw(img, c, h, w).reshape(shape)


def describe(arr: np.ndarray, top: int) -> str:
    flat = arr.reshape(-1)
    text = f"{np.dtype(arr.dtype).name} {'x'.join(str(v) for v in arr.shape)}"
    if flat.size == 0:
        return text + " (empty)"
    values = flat.astype(np.float64)
    text += f"  min {values.min():.6g} max {values.max():.6g} mean {values.mean():.6g}"
    k = min(top, flat.size)
    if k > 0:
        order = np.argsort(-values, kind="stable")[:k]
        pairs = ", ".join(f"[{int(i)}]={flat[i]:.6g}" if arr.dtype.kind == "f" else f"[{int(i)}]={int(flat[i])}" for i in order)
        text += f"\n    top {k}: {pairs}"
    return text


def run(args: argparse.Namespace) -> int:
    from ..kmodel import KmodelError
    from ._model_arg import load_model_arg

    model = load_model_arg(args.model, "forward", needs_input=True)
    if model is None:
        return 2
    spec = model.inputs[0]
    try:
        if args.values is not None:
            x = np.array([float(v) for v in args.values.split(",") if v.strip()], dtype=np.float32)
        elif args.input is None:
            print("maixemu forward: give --input IMAGE|NPY (or --values for a float-input model)", file=sys.stderr)
            return 2
        elif args.input.suffix.lower() == ".npy":
            x = np.load(args.input)
        else:
            if np.dtype(spec.dtype) != np.uint8 or len(spec.shape) < 3:
                print(f"maixemu forward: the model takes {np.dtype(spec.dtype).name} {spec.shape}, not an image", file=sys.stderr)
                return 2
            x = image_to_input(args.input, tuple(spec.shape))
    except (OSError, ValueError) as exc:
        print(f"maixemu forward: cannot read the input: {exc}", file=sys.stderr)
        return 2
    try:
        if args.layers:
            last = None
            for last in model.trace(x, limit=args.layers):
                pass
            if last is None:
                print("maixemu forward: the model has no layer to stop after (run it without --layers)", file=sys.stderr)
                return 2
            outputs = [np.asarray(last.output)]
            print(f"after layer {last.index} ({last.kind}):")
        else:
            outputs = model.run(x)
    except KmodelError as exc:
        print(f"maixemu forward: {exc}", file=sys.stderr)
        return 2
    for i, out in enumerate(outputs):
        print(f"output {i}: {describe(out, args.top)}")
    if args.out is not None:
        if args.out.suffix.lower() == ".npz":
            # (Any: numpy's stubs would match a name against savez's own keyword allow_pickle)
            named: dict[str, Any] = {f"output_{i}": o for i, o in enumerate(outputs)}
            np.savez(args.out, **named)
        else:
            np.save(args.out, outputs[0])
            for i, out in enumerate(outputs[1:], start=1):
                np.save(args.out.with_name(f"{args.out.stem}_{i}.npy"), out)
        print(f"saved to {args.out}")
    return 0
