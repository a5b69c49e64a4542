"""kmodel V3 (nncase v0.1, MaixPy ``kpu.load``): parse once into prepared steps, run as numpy.

Modules: ``format`` (header, type codes, the declared-field body reader), ``layers`` (one
registered reader per layer type: ``register(code, NAME, fields)``), ``loader`` (``load_v3``:
tables, whole-model checks, KPU RAM plan), ``model`` (``V3Model``, its memories and execution).

The file is decoded layer by layer with each body's struct layout (kmodel-v3.md §3); every
offset, size and count is checked against the file length and the K210's memories before
anything is allocated, so a corrupt file raises KmodelFormatError naming the byte offset and the
field. Execution follows the SDK runner (``kpu_run_kmodel``): main memory is a byte arena of
``main_mem_usage`` bytes, KPU RAM a 2 MiB arena with the row layout, both zeroed at load and kept
between runs as on the device. KPU→KPU chains pass float32 arrays along without touching the
arena unless a later read needs the bytes (``kpu.plan_kpu_ram``).

What a loaded :class:`V3Model` offers beyond :class:`~maixemu.kmodel.model.Model`:

* ``input_chw`` — (C, H, W) of the first K210_CONV's input (what ``kpu.forward`` checks images
  against), or ``None`` when the first layer is FULLY_CONNECTED (float list input);
* ``layers[i].output_dtype`` ("uint8"/"float32"), ``layers[i].output_shapes``,
  ``layers[i].details["typecode"]`` and ``layer_output_typecode(i)`` ('B' or 'f', MaixPy's fmap
  typecode for a run stopped after layer ``i``);
* ``trace(x, limit=n)`` — the first ``n`` layers (``kpu.set_layers``); each step's ``output`` is a
  K210_CONV's pooled map as uint8 ``[C,H,W]`` or the CPU layer's output buffer (typed);
* ``outputs`` typed as the device types them: float32 unless the last layer is a quantised one
  (then uint8), shaped ``[C,H,W]`` when a conv's map can be traced to the output address;
* ``header`` (the seven header fields), ``file_bytes``, ``reset_memory()``.
"""

from __future__ import annotations

from .format import HEADER_BYTES, LAYER_CODES, LAYER_NAMES, MAX_LAYERS, UNSUPPORTED_CODES
from .layers import LAYERS, LUT_TOTAL_ENTRIES, QUANTIZED_OUTPUT, register
from .loader import load_v3
from .model import V3Model

__all__ = ["HEADER_BYTES", "LAYERS", "LAYER_CODES", "LAYER_NAMES", "LUT_TOTAL_ENTRIES", "MAX_LAYERS", "QUANTIZED_OUTPUT",
           "UNSUPPORTED_CODES", "V3Model", "load_v3", "register"]
