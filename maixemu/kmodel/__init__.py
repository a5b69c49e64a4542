"""kmodel V3/V4 (and V5 inspection) on a numpy emulation of the K210's KPU.

This package knows nothing of images, cameras or MicroPython: it turns model bytes into a
prepared :class:`Model` whose ``run`` reproduces the device's output bytes.
"""

from __future__ import annotations

from .container import load_kmodel, sniff_container
from .errors import (
    KmodelError,
    KmodelFormatError,
    KmodelRuntimeError,
    KmodelUnsupportedError,
    KmodelVersionError,
)
from .model import LayerInfo, MemoryUsage, Model, TensorSpec, TraceStep

__all__ = [
    "load_kmodel",
    "sniff_container",
    "KmodelError",
    "KmodelFormatError",
    "KmodelRuntimeError",
    "KmodelUnsupportedError",
    "KmodelVersionError",
    "LayerInfo",
    "MemoryUsage",
    "Model",
    "TensorSpec",
    "TraceStep",
]
