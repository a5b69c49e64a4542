"""The facts nncase's rules ask about an operator, read once from a :class:`FloatGraph` op.

Both compilers think in NCHW; TFLite files are NHWC, so shapes are turned here. Padding is given
per side (before, after) for height and width, as nncase's importers compute it
(``get_windowed_padding``: SAME puts the odd pixel after).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..floatmodel import FloatGraph, FloatOp

CONV_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "Conv"}
POOL_OPS = {"MAX_POOL_2D": "max", "AVERAGE_POOL_2D": "mean", "MaxPool": "max", "AveragePool": "mean"}
FC_OPS = {"FULLY_CONNECTED", "MatMul", "Gemm"}
PAD_OPS = {"PAD", "SPACE_TO_BATCH_ND", "Pad"}


@dataclass(frozen=True)
class Window:
    """A conv or pool as nncase sees it."""

    in_shape: tuple[int, int, int, int]  # NCHW
    out_shape: tuple[int, int, int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad_h: tuple[int, int]
    pad_w: tuple[int, int]
    depthwise: bool
    groups: int
    padding: str  # "same", "valid" or "explicit"
    activation: str
    weights_range: float | None  # max - min of the weights (convs)
    weights: int  # weight count


def nchw(shape: tuple[int, ...], layout: str) -> tuple[int, int, int, int]:
    s = tuple(int(v) for v in shape)
    if len(s) == 4:
        return (s[0], s[3], s[1], s[2]) if layout == "NHWC" else (s[0], s[1], s[2], s[3])
    if len(s) == 2:
        return (s[0], s[1], 1, 1)
    if len(s) == 1:
        return (1, s[0], 1, 1)
    if len(s) == 3:
        return (1, s[0], s[1], s[2]) if layout == "NCHW" else (1, s[2], s[0], s[1])
    return (1, int(np.prod(s or (1,))), 1, 1)


def _same(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    out = -(-size // stride)
    effective = (kernel - 1) * dilation + 1
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def window(op: FloatOp, graph: FloatGraph) -> Window | None:
    """The conv/pool facts of ``op``, or None for other ops (or one without a 4-D input)."""
    if op.op not in CONV_OPS and op.op not in POOL_OPS or not op.activations or not op.outputs:
        return None
    src = op.activations[0]
    if len(src.shape) != 4 or len(op.outputs[0].shape) != 4:
        return None
    n, c, h, w = nchw(src.shape, graph.layout)
    out = nchw(op.outputs[0].shape, graph.layout)
    attrs = op.attrs
    kernel = tuple(attrs.get("kernel", (1, 1)))
    stride = tuple(attrs.get("stride", (1, 1)))
    dilation = tuple(attrs.get("dilation", (1, 1)))
    padding = attrs.get("padding", "valid")
    if padding == "same":
        pad_h, pad_w = _same(h, kernel[0], stride[0], dilation[0]), _same(w, kernel[1], stride[1], dilation[1])
    elif isinstance(padding, tuple):
        pad_h, pad_w, padding = (padding[0], padding[1]), (padding[2], padding[3]), "explicit"
    else:
        pad_h, pad_w = (0, 0), (0, 0)
    groups = int(attrs.get("groups", 1))
    depthwise = op.op == "DEPTHWISE_CONV_2D" or (op.op == "Conv" and groups > 1 and groups == c == out[1])
    if op.op == "DEPTHWISE_CONV_2D":
        groups = c
    weights = op.constants[0].data if op.op in CONV_OPS and op.constants else None
    wrange = float(np.max(weights) - np.min(weights)) if weights is not None and weights.size and weights.dtype.kind == "f" else None
    return Window((n, c, h, w), out, (int(kernel[0]), int(kernel[1])), (int(stride[0]), int(stride[1])),
                  (int(dilation[0]), int(dilation[1])), (int(pad_h[0]), int(pad_h[1])), (int(pad_w[0]), int(pad_w[1])),
                  depthwise, groups, padding, str(attrs.get("activation", "none")), wrange,
                  int(weights.size) if weights is not None else 0)


def fc_weights(op: FloatOp) -> np.ndarray | None:
    """The constant weight matrix of a FULLY_CONNECTED / MatMul / Gemm, if it has one."""
    for t in op.constants:
        if t.data is not None and t.data.ndim == 2:
            return t.data
    return None


def pad_amounts(op: FloatOp, graph: FloatGraph) -> list[int] | None:
    """PAD's paddings flattened as the file holds them (TFLite: [[n0,n1],[h0,h1],[w0,w1],[c0,c1]])."""
    for t in op.constants:
        if t.data is not None and t.data.dtype.kind in "iu":
            return [int(v) for v in np.asarray(t.data).reshape(-1)]
    pads = op.attrs.get("pads")
    return [int(v) for v in pads] if pads is not None else None


def describe(op: FloatOp, graph: FloatGraph) -> str:
    """``CONV_2D 3x3 s2`` / ``DEPTHWISE_CONV_2D 3x3`` / ``MAX_POOL_2D 2x2 s2``: the op and its window."""
    win = window(op, graph)
    if win is None:
        return op.op
    text = f"{op.op} {win.kernel[0]}x{win.kernel[1]}"
    if win.stride != (1, 1):
        text += f" s{win.stride[0]}" if win.stride[0] == win.stride[1] else f" s{win.stride[0]}x{win.stride[1]}"
    return text
