"""How much memory the compiled model will need, from the float model and one compiler's verdicts.

An estimate, and a lower bound where it matters: nncase's allocators (first fit over tensor
lifetimes) can only do worse than the peak of the tensors alive at once, which is what is counted.

* KPU RAM: every map a KPU layer reads or writes, in the KPU's row layout (64-byte rows,
  ``get_kpu_bytes``), alive from the op that makes it to the last op that reads it.
* Main memory: every tensor a CPU op reads or writes, as float32, alive the same way, plus the
  uint8 copy each KPU→CPU or CPU→KPU hand-over goes through; the model outputs stay to the end.
* File: the kmodel's weights as nncase stores them — per KPU layer uint8 weights, 8 bytes of batch
  norm per output channel, 144 bytes of activation table and 96 of registers
  (``shared/docs/kmodel-v3.md`` / ``kmodel-v4.md``) — float32 for CPU layers, and the headers.

``kpu.load`` then needs the file plus the main memory in the heap the firmware leaves
(:func:`maixemu.kmodel.k210.kpu_load_bytes`, the budgets of :data:`MAIXPY_MODEL_BUDGETS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..floatmodel import FloatGraph
from ..kmodel.k210 import K210_KPU_RAM_BYTES, MAIXPY_MODEL_BUDGETS, kpu_load_bytes
from ..kmodel.v4.kpu import kpu_map_bytes
from .ops import nchw
from .verdicts import CompilerVerdict

#: Per KPU layer: activation table (16 segments + 16 bias bytes = 18 u64) and the 12 register words.
KPU_LAYER_FIXED_BYTES = 18 * 8 + 12 * 8
#: Per layer header and body alignment, and the file header, as the two formats lay them out.
LAYER_OVERHEAD_BYTES = 64
HEADER_BYTES = 256


@dataclass(frozen=True)
class MemoryEstimate:
    kpu_ram_bytes: int
    main_memory_bytes: int
    file_bytes: int

    @property
    def load_bytes(self) -> int:
        return kpu_load_bytes(self.main_memory_bytes, self.file_bytes)

    def fits(self, firmware: str) -> bool:
        return self.load_bytes <= MAIXPY_MODEL_BUDGETS[firmware] and self.kpu_ram_bytes <= K210_KPU_RAM_BYTES


def estimate(graph: FloatGraph, verdict: CompilerVerdict) -> MemoryEstimate:
    units = {v.index: v.unit for v in verdict.ops}
    into = {v.index: v.into for v in verdict.ops if v.into is not None}

    def unit(index: int) -> str:
        seen = set()
        while units.get(index) in ("fused", "folded") and index in into and index not in seen:
            seen.add(index)
            index = into[index]
        return units.get(index, "CPU")

    producer = {t.name: op.index for op in graph.ops for t in op.outputs}
    last_use: dict[str, int] = {}
    first: dict[str, int] = {t.name: -1 for t in graph.inputs}
    for op in graph.ops:
        for t in op.activations:
            last_use[t.name] = op.index
        for t in op.outputs:
            first.setdefault(t.name, op.index)
    end = len(graph.ops)
    for t in graph.outputs:
        last_use[t.name] = end
    tensors = {t.name: t for op in graph.ops for t in (*op.activations, *op.outputs)}
    tensors.update({t.name: t for t in graph.inputs})
    consumers = graph.consumers()
    kpu_live = np.zeros(end + 2, dtype=np.int64)
    main_live = np.zeros(end + 2, dtype=np.int64)
    for name, t in tensors.items():
        start, stop = first.get(name, -1) + 1, last_use.get(name, first.get(name, -1)) + 1
        readers = consumers.get(name, [])
        made_by = producer.get(name)
        sides = {unit(made_by) if made_by is not None else ("KPU" if readers and unit(readers[0].index) == "KPU" else "CPU")}
        sides |= {unit(op.index) for op in readers}
        shape = nchw(t.shape, graph.layout)
        if "KPU" in sides:
            kpu_live[start:stop + 1] += kpu_map_bytes(shape)
        if sides & {"CPU", "refused"} or name in {o.name for o in graph.outputs}:
            main_live[start:stop + 1] += 4 * t.size
        if "KPU" in sides and sides & {"CPU", "refused"}:
            main_live[start:stop + 1] += t.size  # the uint8 hand-over buffer
    file_bytes = HEADER_BYTES
    for op in graph.ops:
        weights = sum(c.size for c in op.constants if c.data is not None and c.data.ndim >= 2)
        bias = sum(c.size for c in op.constants if c.data is not None and c.data.ndim == 1 and c.data.dtype.kind == "f")
        u = unit(op.index)
        if units.get(op.index) in ("fused", "folded"):
            continue
        if u == "KPU":
            channels = nchw(op.outputs[0].shape, graph.layout)[1] if op.outputs else 0
            file_bytes += weights + 8 * channels + KPU_LAYER_FIXED_BYTES + LAYER_OVERHEAD_BYTES
        else:
            file_bytes += 4 * (weights + bias) + LAYER_OVERHEAD_BYTES
    return MemoryEstimate(int(kpu_live.max(initial=0)), int(main_live.max(initial=0)), int(file_bytes))
