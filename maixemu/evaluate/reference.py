"""The float model the kmodel was compiled from: ``.tflite`` through LiteRT, ``.onnx`` through onnxruntime.

It gets the file's RGB888 (``--input file``'s bytes), normalised as ``(x - mean) / std`` per
channel, in the layout its input declares (NHWC for TFLite, NCHW for ONNX, flat if it is a
vector). Quantised TFLite tensors are (de)quantised with their own scale and zero point, so what
is compared is always real-valued. Both runtimes run single-threaded: one image gives the same
numbers on every worker, which is what makes results identical however the run is spread.
"""

from __future__ import annotations

from dataclasses import dataclass
import warnings
from pathlib import Path

import numpy as np

from .errors import EvalError, MissingExtra


@dataclass(frozen=True)
class TappedTensor:
    """One operator output of the float model: its place in operator order, how to read it, what it is."""

    position: int
    key: str  # the TFLite tensor index, or the ONNX value name
    name: str
    op: str
    shape: tuple[int, ...]


class Reference:
    """A loaded float model: ``run((C, H, W) uint8) -> list of float32 outputs``.

    Opened with ``tensors=True`` (``eval --layers``), every operator's output stays readable:
    ``run_tensors(chw, keys)`` also returns the tensors named by ``keys`` (:attr:`tapped` lists
    them, in the file's operator order).
    """

    def __init__(self, path: str, mean: tuple[float, ...], std: tuple[float, ...], tensors: bool = False):
        self.path = path
        self.mean = np.asarray(mean, dtype=np.float32)
        self.std = np.asarray(std, dtype=np.float32)
        self.channels_last = True
        self.input_shape: tuple[int, ...] = ()
        self.tensors = tensors
        self.tapped: list[TappedTensor] = []

    def normalise(self, chw: np.ndarray) -> np.ndarray:
        c = chw.shape[0]
        mean = self.mean if self.mean.size == c else np.resize(self.mean, c)
        std = self.std if self.std.size == c else np.resize(self.std, c)
        x = (chw.astype(np.float32) - mean[:, None, None]) / std[:, None, None]
        shape = self.input_shape
        size = int(np.prod(shape)) if shape else x.size
        if size != x.size:
            raise EvalError(
                f"--reference {Path(self.path).name} takes {size} input values {list(shape)}; "
                f"the kmodel's input has {x.size} {list(chw.shape)}: it is not the same network"
            )
        if self.channels_last:
            x = x.transpose(1, 2, 0)
        return np.ascontiguousarray(x, dtype=np.float32).reshape(shape)

    def run(self, chw: np.ndarray) -> list[np.ndarray]:
        return self.run_tensors(chw, ())[0]

    def run_tensors(self, chw: np.ndarray, keys) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:  # pragma: no cover
        raise NotImplementedError

    def _tap_graph(self) -> None:
        """:attr:`tapped`: each operator's outputs, read from the file by :mod:`maixemu.floatmodel`."""
        from ..floatmodel import GraphError, read_graph

        try:
            graph = read_graph(self.path)
        except GraphError as exc:
            raise EvalError(f"--reference {self.path}: {exc}") from None
        self.tapped = []
        for op in graph.ops:
            for t in op.outputs:
                key = str(t.index) if graph.format == "tflite" else t.name
                self.tapped.append(TappedTensor(len(self.tapped), key, t.name, op.op, t.shape))

    def _only_input(self, inputs: list):
        if len(inputs) != 1:
            raise EvalError(f"--reference {self.path}: has {len(inputs)} inputs; eval compares single-input image models")
        return inputs[0]


class TFLiteReference(Reference):
    def __init__(self, path: str, mean, std, tensors: bool = False):
        super().__init__(path, mean, std, tensors)
        try:
            from ai_edge_litert.interpreter import Interpreter, OpResolverType
        except ImportError:
            raise MissingExtra("ai-edge-litert", "--reference MODEL.tflite") from None
        extra = {}
        if tensors:
            # every intermediate tensor kept, and TFLite's own kernels op by op: XNNPACK would
            # fuse operators into one delegate node whose inner tensors are never written
            extra = {"experimental_preserve_all_tensors": True,
                     "experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # LiteRT's "for debugging" notice on preserve_all_tensors
                self._interp = Interpreter(model_path=path, num_threads=1, **extra)
            self._interp.allocate_tensors()
        except (ValueError, RuntimeError) as exc:
            raise EvalError(f"--reference {path}: LiteRT cannot load it ({str(exc).splitlines()[0]})") from None
        self._input = self._only_input(self._interp.get_input_details())
        self._outputs = self._interp.get_output_details()
        self.input_shape = tuple(int(v) for v in self._input["shape"])
        self.channels_last = not (len(self.input_shape) == 4 and self.input_shape[1] in (1, 3) and self.input_shape[-1] not in (1, 3))
        if tensors:
            self._tap_graph()
            self._details = {str(d["index"]): d for d in self._interp.get_tensor_details()}

    def run_tensors(self, chw: np.ndarray, keys) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        x = self.normalise(chw)
        detail = self._input
        if np.dtype(detail["dtype"]).kind in "iu":
            scale, zero = detail["quantization"]
            info = np.iinfo(detail["dtype"])
            x = np.clip(np.round(x / (scale or 1.0) + zero), info.min, info.max).astype(detail["dtype"])
        self._interp.set_tensor(detail["index"], x)
        self._interp.invoke()
        outputs = []
        for out in self._outputs:
            value = self._interp.get_tensor(out["index"])
            if np.dtype(out["dtype"]).kind in "iu":
                scale, zero = out["quantization"]
                value = (value.astype(np.float32) - np.float32(zero)) * np.float32(scale or 1.0)
            outputs.append(np.asarray(value, dtype=np.float32).copy())
        tapped = {}
        for key in keys:
            value = self._interp.get_tensor(int(key))
            detail = self._details[key]
            if np.dtype(detail["dtype"]).kind in "iu" and detail["quantization"][0]:
                scale, zero = detail["quantization"]
                value = (value.astype(np.float32) - np.float32(zero)) * np.float32(scale)
            tapped[key] = np.asarray(value, dtype=np.float32).copy()
        return outputs, tapped


class OnnxReference(Reference):
    def __init__(self, path: str, mean, std, tensors: bool = False):
        super().__init__(path, mean, std, tensors)
        try:
            import onnxruntime as ort
        except ImportError:
            raise MissingExtra("onnxruntime", "--reference MODEL.onnx") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        source: str | bytes = path
        self._extra_outputs: list[str] = []
        if tensors:
            self._tap_graph()
            source = self._with_all_outputs(path)
        try:
            self._session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EvalError(f"--reference {path}: onnxruntime cannot load it ({str(exc).splitlines()[0]})") from None
        only = self._only_input(self._session.get_inputs())
        self._input_name = only.name
        self.input_shape = tuple(d if isinstance(d, int) and d > 0 else 1 for d in only.shape)
        self.channels_last = len(self.input_shape) == 4 and self.input_shape[-1] in (1, 3) and self.input_shape[1] not in (1, 3)

        self._output_count = len(self._session.get_outputs()) - len(self._extra_outputs)

    def _with_all_outputs(self, path: str) -> bytes:
        """The model with every node output made a graph output, so onnxruntime returns it."""
        try:
            import onnx
        except ImportError:
            raise MissingExtra("onnx", "--layers with an .onnx reference") from None
        model = onnx.load(path)
        present = {o.name for o in model.graph.output}
        self._extra_outputs = [t.key for t in self.tapped if t.key not in present]
        for name in self._extra_outputs:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
        return model.SerializeToString()

    def run_tensors(self, chw: np.ndarray, keys) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        if not self.tensors:
            outs = self._session.run(None, {self._input_name: self.normalise(chw)})
            return [np.asarray(o, dtype=np.float32) for o in outs], {}
        names = [o.name for o in self._session.get_outputs()]
        values = dict(zip(names, self._session.run(None, {self._input_name: self.normalise(chw)})))
        outputs = [np.asarray(values[n], dtype=np.float32) for n in names[: self._output_count]]
        return outputs, {k: np.asarray(values[k], dtype=np.float32) for k in keys}


def open_reference(path: str, mean, std, tensors: bool = False) -> Reference:
    suffix = Path(path).suffix.lower()
    if not Path(path).is_file():
        raise EvalError(f"--reference {path}: no such file")
    if suffix == ".tflite":
        return TFLiteReference(path, mean, std, tensors)
    if suffix == ".onnx":
        return OnnxReference(path, mean, std, tensors)
    raise EvalError(f"--reference {path}: give a .tflite (LiteRT) or .onnx (onnxruntime) float model")


def align(ref: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A reference output in the kmodel output's shape: same order, channels-last → NCHW, or flat."""
    target = tuple(int(s) for s in shape)
    if ref.shape == target:
        return ref
    squeezed_ref = tuple(s for s in ref.shape if s != 1)
    squeezed_k = tuple(s for s in target if s != 1)
    if squeezed_ref == squeezed_k:
        return ref.reshape(target)
    if len(squeezed_k) >= 2 and squeezed_ref == squeezed_k[1:] + squeezed_k[:1]:
        # TFLite convolutions give (H, W, C); kmodel outputs are (C, H, W).
        return np.moveaxis(ref.reshape(squeezed_ref), -1, 0).reshape(target)
    return ref.reshape(target)


def match_outputs(kmodel_shapes: list[tuple[int, ...]], ref_outputs: list[np.ndarray]) -> list[int]:
    """For each kmodel output, the reference output with the same number of values (in order)."""
    used: set[int] = set()
    chosen = []
    for i, shape in enumerate(kmodel_shapes):
        size = int(np.prod(shape))
        pick = next((j for j, r in enumerate(ref_outputs) if j not in used and r.size == size), None)
        if pick is None:
            sizes = ", ".join(f"{r.size} {list(r.shape)}" for r in ref_outputs)
            raise EvalError(
                f"kmodel output {i} has {size} values {list(shape)}; no output of the reference has that many "
                f"(it has: {sizes}): is --reference the float model this kmodel was compiled from?"
            )
        used.add(pick)
        chosen.append(pick)
    return chosen
