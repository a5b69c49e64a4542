"""``maixemu check``: will this model convert for the K210 and fit MaixPy, before the board says so.

For a float model (``.tflite``, ``.onnx``) it applies, op by op, what nncase v0.1 (kmodel V3) and
v0.2 (kmodel V4) do: their importers' op tables and option checks, the K210 transforms that put
convolutions, matrix products and pools on the KPU (the rest runs on the CPU), and estimates the KPU
RAM, main memory and file size against the firmware's model budget. For a ``.kmodel`` it reads
the same verdicts from the file. Every rule is in :mod:`.sources` with the source lines it follows.

``check_path(path, firmware)`` returns a :class:`CheckResult` or raises :class:`Unreadable`.
"""

from __future__ import annotations

from pathlib import Path

from ..floatmodel import GraphError, read_graph
from .report import CheckResult


class Unreadable(Exception):
    """The file is not a model ``check`` can read (exit 2)."""


def check_path(path: Path, firmware: str = "full", board: str | None = None) -> CheckResult:
    suffix = path.suffix.lower()
    if suffix in (".tflite", ".onnx"):
        try:
            graph = read_graph(path)
        except GraphError as exc:
            raise Unreadable(str(exc)) from None
        from .float_model import check_graph

        return check_graph(graph, firmware, board)
    from .kmodel_file import check_kmodel

    return check_kmodel(path, firmware, board)


__all__ = ["CheckResult", "Unreadable", "check_path"]
