"""``.tflite`` → :class:`FloatGraph`, with LiteRT's own flatbuffer schema (``ai_edge_litert``).

Why this reader: it is the schema module generated from TFLite's ``schema.fbs`` and shipped with
the LiteRT runtime that eval already uses for the float reference, so it always knows the ops and
options that runtime knows, and needs no second package. Only the first subgraph is read (nncase's
importers read ``subgraphs()->Get(0)`` too: ``src/importer/tflite/tflite_importer.cpp:25`` at
nncase v0.2.0-beta4).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .graph import FloatGraph, FloatOp, GraphError, TensorInfo

#: A .tflite larger than this is refused before it is read (the K210's flash holds 16 MiB).
MAX_TFLITE_BYTES = 1 << 30

_NUMPY = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "uint8": np.uint8, "int64": np.int64,
          "int16": np.int16, "int8": np.int8, "float64": np.float64, "bool": np.bool_, "uint32": np.uint32,
          "uint16": np.uint16, "uint64": np.uint64}


def _schema():
    try:
        from ai_edge_litert import schema_py_generated as schema
    except ImportError:
        raise GraphError("reading a .tflite needs the package ai-edge-litert: pip install ai-edge-litert "
                         "(or pip install \"maixemu[eval]\")") from None
    return schema


def _names(enum_class) -> dict[int, str]:
    return {v: k for k, v in vars(enum_class).items() if not k.startswith("_") and isinstance(v, int)}


def read_tflite(path: Path) -> FloatGraph:
    schema = _schema()
    size = path.stat().st_size
    if size > MAX_TFLITE_BYTES:
        raise GraphError(f"{path}: {size} bytes is not a model a K210 can hold")
    data = path.read_bytes()
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise GraphError(f"{path}: not a TFLite flatbuffer (no 'TFL3' identifier at byte 4)")
    try:
        model = schema.ModelT.InitFromPackedBuf(data, 0)
    except Exception as exc:  # a damaged flatbuffer fails in many ways inside the generated code
        raise GraphError(f"{path}: the TFLite flatbuffer is damaged ({type(exc).__name__}: {exc})") from None
    if not model.subgraphs:
        raise GraphError(f"{path}: the TFLite model has no subgraph")
    op_names = _names(schema.BuiltinOperator)
    type_names = {k: v.lower() for k, v in _names(schema.TensorType).items()}
    act_names = {k: v.lower() for k, v in _names(schema.ActivationFunctionType).items()}
    graph = model.subgraphs[0]
    tensors = list(graph.tensors or [])
    buffers = list(model.buffers or [])

    def tensor(index: int) -> TensorInfo:
        t = tensors[index]
        dtype = type_names.get(t.type, f"type{t.type}")
        shape = tuple(int(v) for v in (t.shape if t.shape is not None else ()))
        values: np.ndarray | None = None
        if 0 <= t.buffer < len(buffers) and buffers[t.buffer].data is not None and len(buffers[t.buffer].data):
            raw = np.asarray(buffers[t.buffer].data, dtype=np.uint8)
            numpy_type = _NUMPY.get(dtype)
            if numpy_type is not None and raw.size % np.dtype(numpy_type).itemsize == 0:
                values = raw.view(numpy_type)
                if values.size == int(np.prod(shape or (1,))):
                    values = values.reshape(shape)
            else:
                values = raw
        name = t.name.decode("utf-8", "replace") if isinstance(t.name, bytes) else str(t.name or index)
        return TensorInfo(name, shape, dtype, values, index)

    ops = []
    for i, op in enumerate(graph.operators or []):
        code = model.operatorCodes[op.opcodeIndex]
        builtin = max(int(code.builtinCode), int(code.deprecatedBuiltinCode))
        name = op_names.get(builtin, f"BUILTIN_{builtin}")
        if name == "CUSTOM":
            custom = code.customCode.decode("utf-8", "replace") if isinstance(code.customCode, bytes) else code.customCode
            name = f"CUSTOM:{custom}"
        inputs = tuple(tensor(int(j)) for j in (op.inputs if op.inputs is not None else ()) if j >= 0)
        outputs = tuple(tensor(int(j)) for j in (op.outputs if op.outputs is not None else ()) if j >= 0)
        ops.append(FloatOp(i, name, inputs, outputs, _attrs(name, op.builtinOptions, inputs, act_names)))
    return FloatGraph(
        str(path), "tflite", "NHWC",
        [tensor(int(j)) for j in (graph.inputs if graph.inputs is not None else ())],
        [tensor(int(j)) for j in (graph.outputs if graph.outputs is not None else ())],
        ops,
    )


def _attrs(name: str, options, inputs: tuple[TensorInfo, ...], act_names: dict[int, str]) -> dict:
    """The op's options under the common names of :mod:`.graph`, plus the file's own fields."""
    attrs: dict = {}
    if options is not None:
        attrs.update({k: v for k, v in vars(options).items() if not isinstance(v, (bytes, np.ndarray))})
    if "padding" in attrs:
        attrs["padding"] = "same" if attrs["padding"] == 0 else "valid"
    if "fusedActivationFunction" in attrs:
        attrs["activation"] = act_names.get(attrs["fusedActivationFunction"], str(attrs["fusedActivationFunction"]))
    if "strideH" in attrs:
        attrs["stride"] = (int(attrs["strideH"]), int(attrs["strideW"]))
    if "dilationHFactor" in attrs:
        attrs["dilation"] = (int(attrs["dilationHFactor"]), int(attrs["dilationWFactor"]))
    if "filterHeight" in attrs:
        attrs["kernel"] = (int(attrs["filterHeight"]), int(attrs["filterWidth"]))
    if "depthMultiplier" in attrs:
        attrs["depth_multiplier"] = int(attrs["depthMultiplier"])
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV") and len(inputs) >= 2:
        weights = inputs[1] if name != "TRANSPOSE_CONV" else inputs[1]
        if len(weights.shape) == 4:
            attrs["kernel"] = (weights.shape[1], weights.shape[2])
    if name == "CONV_2D" and len(inputs) >= 2 and len(inputs[0].shape) == 4 and len(inputs[1].shape) == 4:
        per_group = inputs[1].shape[3]
        attrs["groups"] = max(1, inputs[0].shape[3] // per_group) if per_group else 1
    return attrs
