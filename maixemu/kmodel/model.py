"""Public types shared by every kmodel version: tensor specs, layer and memory summaries, Model.

V3, V4 and V5 containers differ a lot on disk; users, the firmware layer and the CLI see only
these types, so that ``kpu.forward``, ``maixemu info`` and ``maixemu bench`` work the same for all.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import numpy as np

from .errors import KmodelRuntimeError
from .k210 import K210_KPU_RAM_BYTES, K210_MAIN_MEMORY_BYTES


@dataclass(frozen=True)
class TensorSpec:
    """Shape and type of a model input or output as the device presents it.

    ``memory`` is ``"kpu"`` when the tensor lives in KPU RAM (row layout) and ``"main"`` for main
    memory; ``layout`` names the axis order (``"CHW"``, ``"NCHW"``, ``"NHWC"`` or ``"flat"``).
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    layout: str
    memory: str
    name: str = ""
    address: int | None = None

    @property
    def size(self) -> int:
        n = 1  # (a plain product: read on every run() to check the input, np.prod costs µs)
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class LayerInfo:
    """One layer (V3) or node (V4) as ``maixemu info`` lists it."""

    index: int
    kind: str
    on_kpu: bool
    input_shapes: tuple[tuple[int, ...], ...]
    output_shapes: tuple[tuple[int, ...], ...]
    param_bytes: int = 0
    macs: int = 0
    name: str = ""
    #: dtype of the layer's output buffer as the device types it ("uint8" or "float32").
    output_dtype: str = "uint8"
    #: Free-form details (kernel, pool, depthwise, ...) for tables and the device-time estimate.
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryUsage:
    """How much of the K210's memories a model needs."""

    file_bytes: int
    param_bytes: int
    main_memory_bytes: int
    kpu_ram_bytes: int

    @property
    def fits_k210(self) -> bool:
        return (
            self.main_memory_bytes + self.file_bytes <= K210_MAIN_MEMORY_BYTES
            and self.kpu_ram_bytes <= K210_KPU_RAM_BYTES
        )


@dataclass(frozen=True)
class TraceStep:
    """The output of one executed layer: what ``Model.trace`` yields and ``kpu.set_layers`` uses."""

    index: int
    kind: str
    output: np.ndarray
    on_kpu: bool = False
    name: str = ""


class Model(ABC):
    """A loaded kmodel, prepared once; ``run`` only does array work."""

    version: int
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    layers: list[LayerInfo]
    memory: MemoryUsage
    #: Notes for ``maixemu info`` (e.g. "byte-swapped V3 file, swapped back on load").
    notes: list[str]

    @abstractmethod
    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        """Run all layers; returns the raw output buffers typed as the device types them."""

    @abstractmethod
    def trace(self, *inputs: np.ndarray, limit: int | None = None) -> Iterator[TraceStep]:
        """Run layer by layer (the first ``limit`` layers if given), yielding each layer's output."""

    def layer_times(self, *inputs: np.ndarray, clock: Callable[[], float] = time.process_time) -> list[tuple[int, float]]:
        """One ``run`` that also reports ``(layer index, seconds by clock)`` per layer (what
        ``maixemu bench --layers`` shows), the same work as ``run`` apart from the clock reads."""
        raise NotImplementedError(f"layer_times for kmodel V{self.version} (it cannot run)")

    def describe(self) -> str:
        return f"kmodel V{self.version}: {len(self.layers)} layers, inputs {[i.shape for i in self.inputs]}, outputs {[o.shape for o in self.outputs]}"


def check_input(spec: TensorSpec, x: np.ndarray, index: int = 0) -> np.ndarray:
    """Coerce ``x`` to the input's dtype and shape, or raise a KmodelRuntimeError saying what fits."""
    arr = x if type(x) is np.ndarray else np.asarray(x)
    # the common case first, checked without a copy (and without the size product: same shape)
    if arr.shape == spec.shape and arr.dtype == spec.dtype and arr.flags.c_contiguous:
        return arr
    if arr.size != spec.size:
        raise KmodelRuntimeError(
            f"input {index} has {arr.size} elements (shape {tuple(arr.shape)}), the model expects "
            f"shape {spec.shape} ({spec.size} elements, {np.dtype(spec.dtype).name}, {spec.layout})"
        )
    if arr.dtype != spec.dtype:
        if np.dtype(spec.dtype) == np.uint8 and arr.dtype.kind == "f":
            raise KmodelRuntimeError(
                f"input {index} is {arr.dtype} but the model reads uint8 {spec.layout} pixels "
                f"(0..255); convert with .astype(np.uint8) after scaling"
            )
        arr = arr.astype(spec.dtype)
    return np.ascontiguousarray(arr.reshape(spec.shape))


def sequence_of_inputs(specs: Sequence[TensorSpec], inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    if len(inputs) != len(specs):
        raise KmodelRuntimeError(f"the model takes {len(specs)} input(s), got {len(inputs)}")
    if len(specs) == 1:  # (every public model: a run of a tiny model pays this per call)
        return [check_input(specs[0], inputs[0])]
    return [check_input(s, x, i) for i, (s, x) in enumerate(zip(specs, inputs))]
