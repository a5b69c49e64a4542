"""Small float .tflite files written with LiteRT's own flatbuffer schema, for the tests.

TensorFlow is not a test dependency; the schema module that ships with ai-edge-litert writes the
same flatbuffers the converter writes, and LiteRT's interpreter runs them (a test of the file, too).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.int32): "INT32", np.dtype(np.uint8): "UINT8",
          np.dtype(np.int8): "INT8", np.dtype(np.int64): "INT64"}


class TFLiteBuilder:
    def __init__(self) -> None:
        self.schema = pytest.importorskip("ai_edge_litert.schema_py_generated", reason="ai-edge-litert writes .tflite files")
        self.tensors: list = []
        self.buffers: list = [self.schema.BufferT()]  # buffer 0: the empty one every tflite starts with
        self.ops: list = []
        self.codes: list[tuple[int, str | None]] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def tensor(self, name: str, shape, dtype=np.float32, data: np.ndarray | None = None) -> int:
        S = self.schema
        t = S.TensorT()
        t.name = name
        t.shape = np.asarray(shape, dtype=np.int32)
        t.type = getattr(S.TensorType, _TYPES[np.dtype(dtype)])
        if data is not None:
            b = S.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(np.asarray(data, dtype=dtype)).tobytes(), dtype=np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        else:
            t.buffer = 0
        self.tensors.append(t)
        return len(self.tensors) - 1

    def constant(self, name: str, data: np.ndarray) -> int:
        data = np.asarray(data)
        return self.tensor(name, data.shape, data.dtype, data)

    def op(self, builtin: str, inputs: list[int], outputs: list[int], options: str | None = None, custom: str | None = None,
           **fields) -> None:
        S = self.schema
        code = getattr(S.BuiltinOperator, builtin)
        key = (code, custom)
        if key not in self.codes:
            self.codes.append(key)
        o = S.OperatorT()
        o.opcodeIndex = self.codes.index(key)
        o.inputs = np.asarray(inputs, dtype=np.int32)
        o.outputs = np.asarray(outputs, dtype=np.int32)
        if options is not None:
            obj = getattr(S, f"{options}T")()
            for k, v in fields.items():
                setattr(obj, k, v)
            o.builtinOptionsType = getattr(S.BuiltinOptions, options)
            o.builtinOptions = obj
        self.ops.append(o)

    def conv(self, x: int, name: str, out_channels: int, kernel: int, stride: int = 1, padding: str = "SAME",
             act: str = "RELU", depthwise: bool = False, rng: np.random.Generator | None = None, scale: float = 0.3) -> int:
        """A conv (or depthwise conv) after tensor ``x`` (NHWC), with seeded random weights."""
        S = self.schema
        rng = rng or np.random.default_rng(len(self.tensors))
        n, h, w, c = (int(v) for v in self.tensors[x].shape)
        if depthwise:
            weights = rng.normal(0, scale, (1, kernel, kernel, c)).astype(np.float32)
            out_channels = c
        else:
            weights = rng.normal(0, scale / np.sqrt(kernel * kernel * c), (out_channels, kernel, kernel, c)).astype(np.float32)
        bias = rng.normal(0, 0.05, (out_channels,)).astype(np.float32)
        if padding == "SAME":
            oh, ow = -(-h // stride), -(-w // stride)
        else:
            oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
        y = self.tensor(name, (n, oh, ow, out_channels))
        pad = getattr(S.Padding, padding)
        actv = getattr(S.ActivationFunctionType, act)
        wi, bi = self.constant(f"{name}/w", weights), self.constant(f"{name}/b", bias)
        if depthwise:
            self.op("DEPTHWISE_CONV_2D", [x, wi, bi], [y], "DepthwiseConv2DOptions", padding=pad, strideW=stride,
                    strideH=stride, depthMultiplier=1, fusedActivationFunction=actv, dilationWFactor=1, dilationHFactor=1)
        else:
            self.op("CONV_2D", [x, wi, bi], [y], "Conv2DOptions", padding=pad, strideW=stride, strideH=stride,
                    fusedActivationFunction=actv, dilationWFactor=1, dilationHFactor=1)
        return y

    def write(self, path: Path) -> Path:
        import flatbuffers

        S = self.schema
        model = S.ModelT()
        model.version = 3
        model.description = "maixemu test model"
        codes = []
        for code, custom in self.codes:
            oc = S.OperatorCodeT()
            oc.builtinCode = code
            oc.deprecatedBuiltinCode = min(code, 127)
            oc.customCode = custom
            oc.version = 1
            codes.append(oc)
        model.operatorCodes = codes
        graph = S.SubGraphT()
        graph.tensors = self.tensors
        graph.operators = self.ops
        graph.inputs = np.asarray(self.inputs, dtype=np.int32)
        graph.outputs = np.asarray(self.outputs, dtype=np.int32)
        graph.name = "main"
        model.subgraphs = [graph]
        model.buffers = self.buffers
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        path.write_bytes(bytes(builder.Output()))
        return path


def small_cnn(path: Path, *, height: int = 32, width: int = 32, extra: str | None = None, channels: int = 8) -> Path:
    """conv 3x3 → max pool 2x2 → depthwise 3x3 → conv 1x1 → (an ``extra`` op) → mean → fully connected → softmax."""
    b = TFLiteBuilder()
    S = b.schema
    x = b.tensor("input", (1, height, width, 3))
    b.inputs = [x]
    y = b.conv(x, "conv1", channels, 3)
    p = b.tensor("pool1", (1, height // 2, width // 2, channels))
    b.op("MAX_POOL_2D", [y], [p], "Pool2DOptions", padding=S.Padding.VALID, strideW=2, strideH=2, filterWidth=2,
         filterHeight=2, fusedActivationFunction=S.ActivationFunctionType.NONE)
    y = b.conv(p, "dw2", channels, 3, depthwise=True)
    y = b.conv(y, "pw2", 2 * channels, 1)
    if extra is not None:
        shape = tuple(int(v) for v in b.tensors[y].shape)
        z = b.tensor(extra.lower(), shape)
        if extra == "SQUARED_DIFFERENCE":
            b.op(extra, [y, y], [z], "SquaredDifferenceOptions")
        else:
            b.op(extra, [y], [z])
        y = z
    axes = b.constant("axes", np.array([1, 2], dtype=np.int32))
    m = b.tensor("mean", (1, 2 * channels))
    b.op("MEAN", [y, axes], [m], "ReducerOptions", keepDims=False)
    rng = np.random.default_rng(7)
    w = b.constant("fc/w", rng.normal(0, 0.3, (10, 2 * channels)).astype(np.float32))
    bias = b.constant("fc/b", np.zeros(10, np.float32))
    f = b.tensor("logits", (1, 10))
    b.op("FULLY_CONNECTED", [m, w, bias], [f], "FullyConnectedOptions", fusedActivationFunction=S.ActivationFunctionType.NONE)
    s = b.tensor("scores", (1, 10))
    b.op("SOFTMAX", [f], [s], "SoftmaxOptions", beta=1.0)
    b.outputs = [s]
    return b.write(path)


def big_cnn(path: Path, *, channels: int = 512, convs: int = 3) -> Path:
    """A 3x3 conv stack of ``channels`` channels on 16x16: each conv has 9·c² weights (2.25 MiB at 512)."""
    b = TFLiteBuilder()
    x = b.tensor("input", (1, 16, 16, 3))
    b.inputs = [x]
    y = b.conv(x, "stem", channels, 3)
    for i in range(convs):
        y = b.conv(y, f"conv{i}", channels, 3)
    b.outputs = [y]
    return b.write(path)
