"""The ONNX model bytes of the engine's one-node onnxruntime graphs, written without ``onnx``.

Why not the ``onnx`` package: importing it costs 0.8-0.9 s (it loads ``ml_dtypes``), more than
the whole load budget of a model, only to serialise a graph of one ``MatMulInteger`` node. The
handful of protobuf messages such a graph needs (kmodel-independent, from onnx's ``onnx.proto``:
ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto) are encoded here directly;
``tests/kmodel`` parses the bytes with ``onnx`` (a dev dependency) and compares them with the
graph ``onnx.helper`` builds.
"""

from __future__ import annotations

import numpy as np

#: TensorProto.DataType
FLOAT, UINT8, INT8, INT32 = 1, 2, 3, 6
_DTYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.uint8): UINT8, np.dtype(np.int8): INT8, np.dtype(np.int32): INT32}
IR_VERSION = 8
OPSET = 13


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values as two's complement (ten bytes)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(value)


def _bytes(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode())


#: bytes-like pieces of a message, joined once (``b"".join``): a weight tensor's payload is a
#: memoryview of the array, so the serialised graph is the only copy of the weights made here
#: (concatenating messages copied them once per level of nesting: 3-4 copies alive at once)
Parts = list


def _size(parts: Parts) -> int:
    return sum(len(p) for p in parts)


def _wrap(field: int, parts: Parts) -> Parts:
    """``_bytes(field, b"".join(parts))`` as parts."""
    return [_key(field, 2) + _varint(_size(parts))] + parts


def tensor_parts(name: str, array: np.ndarray) -> Parts:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian)."""
    a = np.asarray(array)  # (not ascontiguousarray: it turns a 0-d zero point into shape [1])
    head = b"".join(_int(1, int(d)) for d in a.shape) + _int(2, _DTYPES[a.dtype]) + _str(8, name)
    raw = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False)).reshape(-1)
    return [head] + _wrap(9, [raw.data.cast("B")])


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto of ``array`` (``tensor_parts`` joined)."""
    return b"".join(tensor_parts(name, array))


def value_info(name: str, elem_type: int, shape: tuple[int | None, ...]) -> bytes:
    """ValueInfoProto: name (1), type (2) = TypeProto.tensor_type (1) = elem_type (1), shape (2)
    of dims (1) with dim_value (1) or, for None, a dim_param (2)."""
    dims = b""
    for i, d in enumerate(shape):
        dims += _bytes(1, _int(1, d) if d is not None else _str(2, f"d{i}"))
    tensor_type = _int(1, elem_type) + _bytes(2, dims)
    return _str(1, name) + _bytes(2, _bytes(1, tensor_type))


def node(op_type: str, inputs: list[str], outputs: list[str]) -> bytes:
    """NodeProto: input (1), output (2), op_type (4)."""
    return b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs) + _str(4, op_type)


def model(nodes: list[bytes], name: str, inputs: list[bytes], outputs: list[bytes], initializers: list[bytes | Parts]) -> bytes:
    """ModelProto: ir_version (1), graph (7) = GraphProto node (1), name (2), initializer (5),
    input (11), output (12); opset_import (8) of the default domain. An initializer may be given
    as ``tensor_parts``."""
    graph: Parts = [b"".join(_bytes(1, n) for n in nodes) + _str(2, name)]
    for t in initializers:
        graph += _wrap(5, t if isinstance(t, list) else [t])
    graph.append(b"".join(_bytes(11, v) for v in inputs) + b"".join(_bytes(12, v) for v in outputs))
    return b"".join([_int(1, IR_VERSION)] + _wrap(7, graph) + [_bytes(8, _str(1, "") + _int(2, OPSET))])


def matmul_integer(b: np.ndarray, a_zero: int, b_zero: int) -> bytes:
    """``Y[P, N] = MatMulInteger(A[P, K] uint8, B initializer, a_zero uint8, b_zero)``: B and its
    zero point int8 (the u8s8 product) or uint8 (u8u8)."""
    k, n = b.shape
    bdt = np.uint8 if b.dtype == np.uint8 else np.int8
    return model(
        [node("MatMulInteger", ["A", "B", "a_zero", "b_zero"], ["Y"])],
        "kpu_conv",
        [value_info("A", UINT8, (None, k))],
        [value_info("Y", INT32, (None, n))],
        [tensor_parts("B", b.astype(bdt, copy=False)), tensor("a_zero", np.array(a_zero, np.uint8)), tensor("b_zero", np.array(b_zero, bdt))],
    )
