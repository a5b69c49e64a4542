"""Before converting or flashing: will this model convert for the K210 and fit MaixPy's memory?

MODEL is a float model (.tflite, .onnx) or a compiled .kmodel. For a float model each operator is
put through what nncase v0.1 (kmodel V3) and v0.2 (kmodel V4) do with it — their importers' op
tables and checks, the K210 rules that put convolutions, matrix products and pools on the KPU, the
rest on the CPU — and the KPU RAM, main memory and file size are estimated against the firmware's
model budget. A .kmodel gives the same verdicts from the file. One row per op, one verdict line, and
the nncase / MaixPy source lines every rule comes from. Exit 0: converts and fits; 1: it will not;
2: a file it cannot read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("model", type=Path, help="a .tflite, .onnx or .kmodel file")
    parser.add_argument("--firmware", choices=["full", "minimum", "none"], default="full",
                        help="the MaixPy build whose heap the model must fit: full (about 2 MiB for models, default), "
                             "minimum (about 4 MiB), none (the whole 6 MiB)")
    parser.add_argument("--board", help="the board (default, bit, dock, go, duino, cube, amigo, m5stickv, unitv): every "
                                        "one is a K210 with the same memories, so it only names the target")
    parser.add_argument("--no-sources", action="store_true", help="do not list the source lines of the rules applied")


def run(args: argparse.Namespace) -> int:
    from ..check import Unreadable, check_path
    from ._model_arg import _refusal

    board = None
    if args.board is not None:
        from ..firmware.board_profiles import get

        try:
            board = get(args.board).title
        except ValueError as exc:
            print(f"maixemu check: --board: {exc}", file=sys.stderr)
            return 2
    refusal = _refusal(args.model)
    if refusal is not None:
        print(f"maixemu check: {refusal}", file=sys.stderr)
        return 2
    try:
        result = check_path(args.model, args.firmware, board)
    except Unreadable as exc:
        print(f"maixemu check: {exc}", file=sys.stderr)
        return 2
    print(result.text(sources=not args.no_sources))
    return 0 if result.ok else 1
