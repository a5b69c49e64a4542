"""Run a kmodel once and write every layer's feature maps as PNG grids plus an index.md.

One PNG per layer, one tile per channel. uint8 maps are shown raw, as ``kpu.fmap`` shows them on
the device; float maps are min-max scaled over the layer and the index says so. An image input is
prepared as ``maixemu forward`` prepares it (PIL RGB/L, BILINEAR resize to the model input, CHW);
a .npy is used as is. ``--layers N`` stops after N layers, like ``kpu.set_layers``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="a .kmodel (V3/V4) or .kfpkg")
    parser.add_argument("--input", type=Path, required=True, help="an image (any format PIL reads) or a .npy array")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNGs and index.md (created)")
    parser.add_argument("--layers", type=int, help="only the first N layers")
    parser.add_argument("--zoom", type=int, help="enlarge every tile by this factor (default: small maps to >= 32 px)")


def run(args: argparse.Namespace) -> int:
    from ..kmodel import KmodelError
    from ..progress import progress_bar
    from ._model_arg import load_model_arg
    from .trace_report import format_index, write_input, write_trace
    from .forward import image_to_input

    model = load_model_arg(args.model, "trace", needs_input=True)
    if model is None:
        return 2
    if args.zoom is not None and args.zoom < 1:
        print("maixemu trace: --zoom must be >= 1", file=sys.stderr)
        return 2
    spec = model.inputs[0]
    try:
        if args.input.suffix.lower() == ".npy":
            x = np.load(args.input)
            input_desc = f"{args.input.name} ({np.dtype(x.dtype).name} {'x'.join(map(str, x.shape))})"
        else:
            if np.dtype(spec.dtype) != np.uint8 or len(spec.shape) < 3:
                print(f"maixemu trace: the model takes {np.dtype(spec.dtype).name} {spec.shape}, not an image; "
                      "give a .npy", file=sys.stderr)
                return 2
            x = image_to_input(args.input, tuple(spec.shape))
            input_desc = (f"{args.input.name}, PIL convert {'L' if spec.shape[-3] == 1 else 'RGB'} + BILINEAR "
                          f"resize to {spec.shape[-1]}x{spec.shape[-2]}, CHW uint8")
    except (OSError, ValueError) as exc:
        print(f"maixemu trace: cannot read the input: {exc}", file=sys.stderr)
        return 2
    total = len(model.layers) if not args.layers else min(args.layers, len(model.layers))
    with progress_bar(total, "trace", "layer") as bar:
        try:
            reports = write_trace(model, x, args.out, limit=args.layers, zoom=args.zoom, on_layer=bar.update)
        except KmodelError as exc:
            bar.close()
            print(f"maixemu trace: {exc}", file=sys.stderr)
            return 2
    input_png = write_input(np.asarray(x).reshape(spec.shape), args.out)
    index = format_index(reports, model_name=args.model.name, input_desc=input_desc, input_png=input_png)
    (args.out / "index.md").write_text(index, encoding="utf-8")
    scaled = sum(r.grid.scaled for r in reports)
    print(f"{len(reports)} layers written to {args.out} ({scaled} float layer(s) min-max scaled); "
          f"open {args.out / 'index.md'}")
    return 0
