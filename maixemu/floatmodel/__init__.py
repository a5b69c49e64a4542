"""The float models K210 kmodels are compiled from, read as a list of operators.

``read_graph(path)`` reads a ``.tflite`` (LiteRT's own flatbuffer schema, the reader of the runtime
eval already uses for the float reference) or an ``.onnx`` (the ``onnx`` package, with its shape
inference) into one :class:`FloatGraph`: operators in file order, each with its input and output
tensors (shape, type, constant data) and its attributes under common names. ``maixemu check``
applies nncase's import and KPU rules to it; ``maixemu eval --layers`` uses it to name the float
tensors it compares kmodel layers with.
"""

from .graph import FloatGraph, FloatOp, GraphError, TensorInfo, read_graph

__all__ = ["FloatGraph", "FloatOp", "GraphError", "TensorInfo", "read_graph"]
