"""Small 1×1 KPU layers in one compiled call (``kernels.small_conv1x1``): exact int32 sums and
the layer's own epilogue, instead of an onnxruntime product and a second kernel call.

Why: a layer of a few ten thousand MACs (the 10-class head of mnist on a 4×4 map, the box and
landmark heads of ulffd on 10×8 and 20×15 maps) costs more in calls than in work. An
onnxruntime ``MatMulInteger`` costs ~3 µs a call whatever its size, the epilogue's call ~2 µs,
the Python around them ~2 µs more: 9 µs for 15 360 MACs (0.6 GMAC/s after the layer's other
costs). Its plain dot products take ~1 µs of that work and one call.

Exact: ``G = Σ_c (x − 128)·(w + ax)`` in int32 — every ``|w + ax| <= 255`` (int16 weights) and
``128·Σ|w + ax| < 2**31`` per output channel, checked here — the very integers the int8 product
gives, then the same ``epilogue`` with the same arguments (``HwcPath._epilogue_args``). Taken by
1×1 layers on a single tile with stride-1 grid and an int8 product (so the epilogue is the one
the layer warmed up with int32 sums) whose ``cost`` is at most ``max_cost()``; the tests force it
on every such layer of the public models (``MAIXEMU_KPU_SMALL_COST``) and compare with the int64
reference.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import KmodelRuntimeError
from . import fast

#: Per output value (one dot product), the kernel's cost in MACs: the loop's set-up and store.
DOT_COST_MACS = 70
#: Layers whose ``cost`` (MACs + ``DOT_COST_MACS`` per output value) is at most this take the
#: path. Fitted to the public models' 1×1 layers (process CPU time of the layer, same run, this
#: kernel vs the onnxruntime product and epilogue): the kernel costs ~2.3 µs + 1.5 ns per output
#: value + 0.033 ns per MAC, the other ~8.5 µs + 0.012 ns per MAC. K = 48: 15k MACs 4.2 vs
#: 8.7 µs, 77k 8.7 vs 9.9, 115k 10.6 vs 11.1, 461k 30 vs 15; K = 256..512: 82k 6.4 vs 14.9,
#: 262k 11.1 vs 14.6, 1.3M 38 vs 18.
SMALL_MAX_COST = 320_000


def cost(macs: int, outputs: int) -> int:
    """The kernel's cost of a layer in MACs (see ``SMALL_MAX_COST``)."""
    return macs + DOT_COST_MACS * outputs


def max_cost() -> int:
    """``MAIXEMU_KPU_SMALL_COST`` (read at load; 0 switches the path off, a large value forces it
    on every eligible layer, as the tests do), else ``SMALL_MAX_COST``."""
    value = os.environ.get("MAIXEMU_KPU_SMALL_COST", "").strip()
    if not value:
        return SMALL_MAX_COST
    try:
        return max(0, int(value))
    except ValueError:
        raise ValueError(f"MAIXEMU_KPU_SMALL_COST={value!r}: give a cost in MACs (0: off)") from None


class SmallConv:
    """``run(x)``: uint8 HWC [H, W, C] → uint8 [OH, OW, N], as ``HwcPath.run`` of the same layer,
    once ``ready`` (its kernel in memory: ``kpu.fast.schedule_kernel_warm_up``)."""

    def __init__(self, path: Any, wt: np.ndarray):
        self.path = path
        self.wt = wt
        self.out_shape = tuple(path.out_shape_hwc)
        self.args = path._epilogue_args
        h, w = path.in_hw
        ic = path.conv.in_shape[0]
        self.warm = fast.schedule_kernel_warm_up(
            "small_conv1x1", (np.zeros((h, w, ic), np.uint8), wt, np.empty(self.out_shape, np.uint8), *self.args))
        self._kernel = None

    @classmethod
    def attach(cls, path: Any, bounds: Any, limit: int | None = None) -> "SmallConv | None":
        """The small path of a prepared ``HwcPath``, or None when the layer does not qualify."""
        limit = max_cost() if limit is None else limit
        conv = path.conv
        oc, h, w = conv.conv_shape
        if (conv.depthwise or path.kk != 1 or path.gemm is None or path.products not in ("u8s8", "u8u8")
                or path.grid[0] != 1 or len(path.tiles) != 1 or cost(conv.macs, oc * h * w) > limit):
            return None
        wf = np.asarray(bounds.wf)  # [OC, IC]: w + ax (int16 for 8-bit weights: ``conv._shifted_weights``)
        if wf.size == 0 or int(np.abs(wf).max()) > 255 or 128 * int(np.abs(wf).sum(axis=1).max()) >= 1 << 31:
            return None
        small = cls(path, np.ascontiguousarray(wf, dtype=np.int16))
        return small if small.warm is not None else None

    @property
    def ready(self) -> bool:
        return self.warm is not None and self.warm.kernels is not None

    def run(self, x: np.ndarray) -> np.ndarray:
        kernel = self._kernel
        if kernel is None:
            assert self.warm is not None and self.warm.kernels is not None  # (``KpuConv.native`` asks ``ready`` first)
            kernel = self._kernel = self.warm.kernels.small_conv1x1
        if not x.flags.c_contiguous:  # (the warmed specialisation takes C-ordered maps)
            return self.path.run(x)
        out = np.empty(self.out_shape, np.uint8)
        if kernel(x, self.wt, out, *self.args):
            offset, fld = self.path.conv.act_where
            raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start", offset=offset, field=fld)
        return out
