"""One operator list for TFLite and ONNX models: what nncase's importers walk, op by op.

Shapes stay in the file's own layout (``FloatGraph.layout``: NHWC for TFLite, NCHW for ONNX);
:meth:`TensorInfo.nchw` gives the layout nncase and the kmodel use. Attributes are normalised
to the names the checks read: ``kernel`` (h, w), ``stride`` (h, w), ``dilation`` (h, w),
``padding`` ("same" / "valid" / explicit (top, bottom, left, right)), ``activation``,
``groups``, ``depth_multiplier``, ``axis``; anything else keeps the file's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class GraphError(Exception):
    """The file is not a model this reader can read (bad flatbuffer/protobuf, missing package)."""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    dtype: str
    #: the constant's values (weights, bias, paddings, axes); None for activations
    data: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: the file's index of the tensor (TFLite tensor index; ONNX: position in the value list)
    index: int = -1

    @property
    def constant(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def nchw(self, layout: str) -> tuple[int, ...]:
        """The shape in NCHW when it is a 4-D map of an NHWC file, else unchanged."""
        if layout == "NHWC" and len(self.shape) == 4:
            n, h, w, c = self.shape
            return (n, c, h, w)
        return self.shape


@dataclass(frozen=True)
class FloatOp:
    index: int
    op: str
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    attrs: dict = field(default_factory=dict, compare=False)

    @property
    def activations(self) -> tuple[TensorInfo, ...]:
        """The inputs that are not constants (what flows in from other ops or the model input)."""
        return tuple(t for t in self.inputs if not t.constant)

    @property
    def constants(self) -> tuple[TensorInfo, ...]:
        return tuple(t for t in self.inputs if t.constant)


@dataclass
class FloatGraph:
    path: str
    format: str  # "tflite" or "onnx"
    layout: str  # "NHWC" or "NCHW"
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    ops: list[FloatOp]
    notes: list[str] = field(default_factory=list)

    def producer(self) -> dict[str, FloatOp]:
        """Tensor name -> the op that writes it."""
        return {t.name: op for op in self.ops for t in op.outputs}

    def consumers(self) -> dict[str, list[FloatOp]]:
        """Tensor name -> the ops that read it, in file order."""
        found: dict[str, list[FloatOp]] = {}
        for op in self.ops:
            for t in op.activations:
                found.setdefault(t.name, []).append(op)
        return found


def read_graph(path: str | Path) -> FloatGraph:
    """The operators of a ``.tflite`` or ``.onnx`` file, or a :class:`GraphError` saying why not."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".tflite":
        from .tflite import read_tflite

        return read_tflite(path)
    if suffix == ".onnx":
        from .onnx import read_onnx

        return read_onnx(path)
    raise GraphError(f"{path}: not a .tflite or .onnx float model")
