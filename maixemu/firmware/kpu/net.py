"""The objects ``kpu.load`` and friends return, printed and queried as the firmware's (``Maix_kpu.c``).

``kpu_net`` is a loaded model (the firmware's ``task``), ``kpu_yolo2_find`` one ``run_yolo2`` box,
``kpu_netinfo_find`` one ``netinfo`` row; getters are methods, as on the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...kmodel.kpu import POOL_NAMES
from . import errors as codes
from .fmap import kpu_fmap
from .region import RegionBox


class yolo2_args:  # noqa: N801 - printed like the firmware's object
    def __init__(self, threshold: float, nms_value: float, anchors: tuple[float, ...]):
        self._threshold, self._nms, self._anchors = threshold, nms_value, anchors

    def threshold(self) -> float:
        return self._threshold

    def nms_value(self) -> float:
        return self._nms

    def anchor_number(self) -> int:
        return len(self._anchors) // 2

    def anchor(self) -> tuple[float, ...]:
        return self._anchors

    def __repr__(self) -> str:
        anchors = ", ".join(f"{a:f}" for a in self._anchors)
        return (
            f'{{"threshold":{self._threshold:f}, "nms_value":{self._nms:f}, '
            f'"anchor_number":{self.anchor_number()}, "anchor":"({anchors})"}}'
        )


class kpu_net:  # noqa: N801 - the firmware's type name
    """A loaded model (``task``); getters are methods, as on the device."""

    def __init__(self, model, source: int | str, size: int, label: str, streamed: bool):
        self._model = model
        self._addr = source if isinstance(source, int) else None
        self._path = None if isinstance(source, int) else str(source)
        self._size = size
        self._label = label
        self._streamed = streamed
        self._yolo: yolo2_args | None = None
        self._output_shapes: dict[int, tuple[int, int, int]] = {}
        self._layer_limit = 0
        self._buffers: dict[Any, np.ndarray] = {}
        #: the model's output buffers as its last complete run left them (``kpu.run.output_memory``)
        self._outputs: list[np.ndarray] | None = None
        self._alive = True

    # -- firmware getters -------------------------------------------------------------------
    def model_addr(self):
        return self._addr

    def model_size(self) -> int:
        return self._size

    def model_path(self):
        return self._path

    def net_arg(self):
        return self._yolo

    def __repr__(self) -> str:
        path = self._path if self._path is not None else "(null)"
        args = repr(self._yolo) if self._yolo is not None else '"(null)"'
        addr = self._addr if self._addr is not None else 0
        return f'{{"model_addr": {addr}, "model_size": {self._size}, "model_path": "{path}", "net_args": {args}}}'

    # -- helpers ----------------------------------------------------------------------------
    @property
    def model(self):
        if not self._alive:
            raise codes.advised(OSError(codes.error_text(codes.RUN_MODEL)), "this model was freed with kpu.deinit(); load it again")
        return self._model

    def _store(self, key, values: np.ndarray) -> np.ndarray:
        """Copy a result into this model's persistent output memory (fmaps are views of it)."""
        values = np.ascontiguousarray(values)
        buffer = self._buffers.get(key)
        if buffer is None or buffer.shape != values.shape or buffer.dtype != values.dtype:
            buffer = values.copy()
            self._buffers[key] = buffer
        else:
            np.copyto(buffer, values)
        return buffer


def check_net(net, what: str = "kpu_net type error") -> kpu_net:
    if not isinstance(net, kpu_net):
        raise TypeError(f"[MAIXPY]kpu: {what}")
    return net


class kpu_yolo2_find:  # noqa: N801 - the firmware's type name
    def __init__(self, box: RegionBox, index: int, count: int):
        self._box, self._index, self._count = box, index, count

    def rect(self) -> tuple[int, int, int, int]:
        b = self._box
        return (b.x, b.y, b.w, b.h)

    def x(self) -> int:
        return self._box.x

    def y(self) -> int:
        return self._box.y

    def w(self) -> int:
        return self._box.w

    def h(self) -> int:
        return self._box.h

    def classid(self) -> int:
        return self._box.classid

    def value(self) -> float:
        return self._box.value

    def index(self) -> int:
        return self._index

    def objnum(self) -> int:
        return self._count

    def __repr__(self) -> str:
        b = self._box
        return (
            f'{{"x":{b.x}, "y":{b.y}, "w":{b.w}, "h":{b.h}, "value":{b.value:f}, '
            f'"classid":{b.classid}, "index":{self._index}, "objnum":{self._count}}}'
        )


_POOL_CODES = {name: code for code, name in POOL_NAMES.items()}


class kpu_netinfo_find:  # noqa: N801
    def __init__(self, index: int, layer):
        self._index = index
        self._layer = layer
        details = layer.details or {}
        self._type = int(details.get("code", 0))
        on_kpu = layer.on_kpu
        ins = tuple(layer.input_shapes[0])[-3:] if on_kpu and layer.input_shapes else (0, 0, 0)
        outs = tuple(layer.output_shapes[0])[-3:] if on_kpu and layer.output_shapes else (0, 0, 0)
        self._chi, self._hi, self._wi = (tuple(ins) + (0, 0, 0))[:3]
        self._cho, self._ho, self._wo = (tuple(outs) + (0, 0, 0))[:3]
        self._dw = int(bool(details.get("depthwise", False))) if on_kpu else 0
        self._kernel = int(details.get("kernel") == "3x3") if on_kpu else 0
        self._pool = _POOL_CODES.get(details.get("pool", "bypass"), 0) if on_kpu else 0
        self._para = int(layer.param_bytes)

    def index(self): return self._index
    def type(self): return self._type
    def wi(self): return self._wi
    def hi(self): return self._hi
    def wo(self): return self._wo
    def ho(self): return self._ho
    def chi(self): return self._chi
    def cho(self): return self._cho
    def dw(self): return self._dw
    def kernel_type(self): return self._kernel
    def pool_type(self): return self._pool
    def para_size(self): return self._para

    def __repr__(self) -> str:
        return (
            f'{{"index":{self._index}, "type":"{self._layer.kind}", "wi":{self._wi}, "hi":{self._hi}, '
            f'"wo":{self._wo}, "ho":{self._ho}, "chi":{self._chi}, "cho":{self._cho}, "dw":{self._dw}, '
            f'"kernel_type":{self._kernel}, "pool_type":{self._pool}, "para_size":{self._para}}}'
        )


__all__ = ["check_net", "kpu_net", "kpu_netinfo_find", "kpu_yolo2_find"]
