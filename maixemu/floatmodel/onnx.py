"""``.onnx`` → :class:`FloatGraph`, with the ``onnx`` package and its shape inference.

Initializers and ``Constant`` outputs are the constants; a dimension without a value (a dynamic
batch) reads as 1, as nncase v0.2's importer takes it when it fixes the input shape.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .graph import FloatGraph, FloatOp, GraphError, TensorInfo

#: An .onnx larger than this is refused before it is parsed.
MAX_ONNX_BYTES = 1 << 30


def _onnx():
    try:
        import onnx
    except ImportError:
        raise GraphError("reading an .onnx needs the package onnx: pip install onnx (or pip install \"maixemu[eval]\")") from None
    return onnx


def read_onnx(path: Path) -> FloatGraph:
    onnx = _onnx()
    from onnx import numpy_helper, shape_inference

    size = path.stat().st_size
    if size > MAX_ONNX_BYTES:
        raise GraphError(f"{path}: {size} bytes is not a model a K210 can hold")
    try:
        model = onnx.load(str(path))
    except Exception as exc:  # protobuf's DecodeError and friends
        raise GraphError(f"{path}: not an ONNX model ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    if not model.graph.node:
        raise GraphError(f"{path}: the ONNX graph has no node")
    notes = []
    try:
        model = shape_inference.infer_shapes(model)
    except Exception as exc:
        notes.append(f"onnx shape inference failed ({str(exc).splitlines()[0]}); shapes are those the file declares")
    infos: dict[str, tuple[tuple[int, ...], str]] = {}
    for value in [*model.graph.input, *model.graph.value_info, *model.graph.output]:
        kind = value.type.tensor_type
        dims = tuple(int(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in kind.shape.dim)
        infos[value.name] = (dims, _dtype(onnx, kind.elem_type))
    constants: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value":
                    constants[node.output[0]] = numpy_helper.to_array(attr.t)
    order = {name: i for i, name in enumerate([*infos, *constants])}

    def tensor(name: str) -> TensorInfo:
        if name in constants:
            data = constants[name]
            return TensorInfo(name, tuple(int(v) for v in data.shape), str(data.dtype), data, order.get(name, -1))
        shape, dtype = infos.get(name, ((), "unknown"))
        return TensorInfo(name, shape, dtype, None, order.get(name, -1))

    ops: list[FloatOp] = []
    for node in model.graph.node:
        if node.op_type == "Constant":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        ops.append(FloatOp(len(ops), node.op_type, tuple(tensor(n) for n in node.input if n),
                           tuple(tensor(n) for n in node.output if n), _attrs(node.op_type, attrs, constants, node)))
    initializers = {i.name for i in model.graph.initializer}
    inputs = [tensor(v.name) for v in model.graph.input if v.name not in initializers]
    return FloatGraph(str(path), "onnx", "NCHW", inputs, [tensor(v.name) for v in model.graph.output], ops, notes)


def _dtype(onnx, elem_type: int) -> str:
    try:
        return str(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)))
    except (KeyError, TypeError, ValueError):
        return f"type{elem_type}"


def _attrs(op: str, attrs: dict, constants: dict[str, np.ndarray], node) -> dict:
    out: dict = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items() if not hasattr(v, "dims")}
    if "kernel_shape" in out and len(out["kernel_shape"]) == 2:
        out["kernel"] = tuple(int(v) for v in out["kernel_shape"])
    elif op in ("Conv", "ConvTranspose") and len(node.input) > 1 and node.input[1] in constants:
        w = constants[node.input[1]]
        if w.ndim == 4:
            out["kernel"] = (int(w.shape[2]), int(w.shape[3]))
    if "strides" in out and len(out["strides"]) == 2:
        out["stride"] = tuple(int(v) for v in out["strides"])
    elif op in ("Conv", "MaxPool", "AveragePool", "ConvTranspose"):
        out["stride"] = (1, 1)
    if "dilations" in out and len(out["dilations"]) == 2:
        out["dilation"] = tuple(int(v) for v in out["dilations"])
    elif op == "Conv":
        out["dilation"] = (1, 1)
    if "pads" in out and len(out["pads"]) == 4 and op != "Pad":
        top, left, bottom, right = (int(v) for v in out["pads"])
        out["padding"] = (top, bottom, left, right)
    auto = out.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out["padding"] = "same"
    elif auto == "VALID":
        out["padding"] = "valid"
    if op == "Conv":
        out["groups"] = int(out.get("group", 1))
    return out
