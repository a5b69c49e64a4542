"""Show a kmodel's layers, shapes, which run on the KPU, and its memory against the K210's budget.

Prints one row per layer (index, kind, KPU/CPU, input/output shapes, parameter bytes, MACs) and
the memory summary: file, main-memory scratch and KPU RAM, whether ``kpu.load`` fits it on the
full/minimum MaixPy firmware. Works for V3 (including byte-swapped files and .kfpkg packages) and
V4 models.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="a .kmodel (V3/V4) or a .kfpkg holding one")
    parser.add_argument("--estimate", action="store_true",
                        help="add a per-layer device-time estimate for a K210 at 400 MHz (a calibrated cost model)")


def run(args: argparse.Namespace) -> int:
    from ..kmodel.inspect import format_model
    from ._model_arg import load_model_arg

    model = load_model_arg(args.model, "info")
    if model is None:
        return 2
    print(format_model(model, str(args.model)))
    if getattr(args, "estimate", False):
        from ..kmodel.estimate import estimate, format_estimate

        print()
        print(format_estimate(estimate(model)))
    return 0
