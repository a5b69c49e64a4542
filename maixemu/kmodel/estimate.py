"""An estimate of how long one ``kpu.forward`` takes on a K210 at 400 MHz (not a measurement).

The emulator runs bit-exact but at PC speed; users also want to know "will this run at 20 fps on
the board?". This module answers with a small analytical cost model of the chip, per layer:

* **KPU convolutions.** The KPU convolves one input channel into one output channel at a time, a
  64-byte line of the map per step; narrow maps share a line (width <= 16: 4 rows, <= 32: 2 rows,
  as in the KPU's row layout), wider ones need ``ceil(width / 64)`` lines per row. A normal
  convolution therefore costs ``OC * IC * lines * k`` cycles, with ``k`` per kernel size (a 3x3
  kernel uses all 9 multipliers of a lane, a 1x1 only one, so 1x1 layers reach far fewer MAC/s), plus
  a per-output-channel cost (accumulator drain, batchnorm, activation, pooling, write-back). A
  depthwise convolution is ``C * (lines * k_dw + per-channel cost)``: one pass per channel, where
  the per-channel set-up dominates on small maps. Every layer also pays a fixed start-up (register
  load, interrupt, runtime) and the weight load over the 64-bit bus (``param_bytes / 8`` cycles).
* **CPU layers** (V3 ``DEQUANTIZE``/``SOFTMAX``/..., V4 ``dequantize``/``transpose``/...) run on
  one RV64 core at 400 MHz: cycles per element (or per MAC) by op type, plus a fixed per-layer cost.

**Calibration.** The KPU constants were fitted to MaixPy's stock face detector
(``face_detect_320x240.kmodel``: 23 KPU layers, one CPU layer), whose published device time is
12.33 ms on the KPU + 0.40 ms on the CPU, with per-layer rates of about 161 GMAC/s for the first
3x3 layer, 22-71 GMAC/s for the depthwise layers and 13-19 GMAC/s for the 1x1 layers. The CPU
dequantize rate is fitted to the 0.40 ms; the other CPU op rates are stated assumptions of the
RV64 core (scalar FPU, no SIMD), not measurements — treat CPU-heavy models' numbers as rougher.

``kmodel`` imports nothing from the rest of maixemu; this module only reads ``Model.layers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .model import LayerInfo, Model

CLOCK_HZ = 400_000_000
#: What the calibration was done against (printed with every estimate).
CALIBRATION = (
    "calibrated on MaixPy's face detector (face_detect_320x240.kmodel), published at 12.33 ms KPU + "
    "0.40 ms CPU = 12.73 ms per frame at 400 MHz (first 3x3 layer ~161 GMAC/s, depthwise 22-71, "
    "1x1 13-19 GMAC/s); CPU op rates other than dequantize are assumptions"
)


@dataclass(frozen=True)
class KpuCosts:
    """Cycle costs of the KPU model (see the module docstring for what each term stands for)."""

    line_3x3: float = 1.40  # cycles per (input channel, output channel, 64-byte line), 3x3 kernel
    line_1x1: float = 1.12  # the same for a 1x1 kernel
    line_dw: float = 2.50  # cycles per line of a depthwise 3x3 channel
    per_out_channel: float = 40.0  # per output channel of a normal conv
    per_dw_channel: float = 20.0  # per channel of a depthwise conv
    per_layer: float = 1000.0  # start-up of any KPU layer
    weight_bytes_per_cycle: float = 8.0  # weights stream over a 64-bit bus


#: CPU cycles per element (per MAC for "mac" ops) by lower-case op kind, and per CPU layer.
CPU_CYCLES_PER_ELEMENT: dict[str, float] = {
    "dequantize": 17.5,  # fitted: 9000 elements in ~0.40 ms with the per-layer cost
    "quantize": 17.5,
    "softmax": 60.0,  # exp + division per element
    "unary": 40.0,  # exp/log/sqrt-like
    "binary": 8.0,
    "quantized_binary": 12.0,
    "table_lookup1d": 4.0,
    "transpose": 6.0,  # strided gather
    "concat": 2.0,  # memcpy of rows
    "memory_copy": 2.0,
    "pad": 3.0,
    "tensorflow_flatten": 3.0,
    "kpu_upload": 4.0,  # main memory -> KPU RAM in the 64-byte row layout
    "k210_upload": 4.0,
    "k210_add_padding": 4.0,
    "k210_remove_padding": 4.0,
    "global_average_pool2d": 4.0,  # per input element
    "reduce": 4.0,  # per input element
    "reduce_window2d": 6.0,  # per input element and window tap
    "resize_image": 20.0,
}
#: Ops costed per multiply-accumulate (``LayerInfo.macs``) rather than per element.
CPU_CYCLES_PER_MAC: dict[str, float] = {"fully_connected": 4.0, "matmul": 4.0, "conv2d": 4.0}
CPU_DEFAULT_PER_ELEMENT = 10.0
CPU_PER_LAYER = 2500.0


@dataclass(frozen=True)
class LayerEstimate:
    index: int
    kind: str
    unit: str  # "KPU" or "CPU"
    cycles: float
    macs: int
    note: str = ""

    @property
    def ms(self) -> float:
        return self.cycles / CLOCK_HZ * 1e3

    @property
    def gmacs(self) -> float | None:
        """GMAC/s this layer reaches in the estimate (None for layers without MACs)."""
        return self.macs / (self.cycles / CLOCK_HZ) / 1e9 if self.macs and self.cycles else None


@dataclass
class ModelEstimate:
    layers: list[LayerEstimate] = field(default_factory=list)

    def _ms(self, unit: str | None = None) -> float:
        return sum(layer.ms for layer in self.layers if unit is None or layer.unit == unit)

    @property
    def kpu_ms(self) -> float:
        return self._ms("KPU")

    @property
    def cpu_ms(self) -> float:
        return self._ms("CPU")

    @property
    def total_ms(self) -> float:
        return self._ms()

    @property
    def fps(self) -> float:
        return 1000.0 / self.total_ms if self.total_ms > 0 else math.inf


def lines_per_channel(h: int, w: int) -> int:
    """64-byte lines a (h, w) map takes in the KPU's row layout (narrow rows share a line)."""
    if w <= 16:
        return math.ceil(h / 4)
    if w <= 32:
        return math.ceil(h / 2)
    return h * math.ceil(w / 64)


def _kernel(details: dict) -> int:
    k = details.get("kernel", 3)
    if isinstance(k, str):  # V3 writes "3x3"
        k = k.split("x")[0]
    try:
        return int(k)
    except (TypeError, ValueError):
        return 3


def _chw(shape) -> tuple[int, int, int]:
    dims = [int(v) for v in shape]
    while len(dims) > 3 and dims[0] == 1:
        dims = dims[1:]
    dims = ([1, 1, 1] + dims)[-3:]
    return dims[0], dims[1], dims[2]


def kpu_conv_cycles(layer: LayerInfo, costs: KpuCosts = KpuCosts()) -> tuple[float, str]:
    details = layer.details or {}
    ic, h, w = _chw(layer.input_shapes[0]) if layer.input_shapes else (1, 1, 1)
    oc = _chw(layer.output_shapes[0])[0] if layer.output_shapes else 1
    lines = lines_per_channel(h, w)
    kernel = _kernel(details)
    fixed = costs.per_layer + layer.param_bytes / costs.weight_bytes_per_cycle
    if details.get("depthwise"):
        return fixed + oc * (lines * costs.line_dw + costs.per_dw_channel), f"{kernel}x{kernel} dw"
    per_line = costs.line_1x1 if kernel == 1 else costs.line_3x3
    return fixed + oc * (ic * lines * per_line + costs.per_out_channel), f"{kernel}x{kernel}"


def _elements(shapes) -> int:
    return sum(math.prod(int(v) for v in s) for s in shapes) if shapes else 0


def cpu_cycles(layer: LayerInfo) -> tuple[float, str]:
    kind = layer.kind.lower()
    if kind in CPU_CYCLES_PER_MAC and layer.macs:
        return CPU_PER_LAYER + layer.macs * CPU_CYCLES_PER_MAC[kind], "per MAC"
    elements = max(_elements(layer.input_shapes[:1]), _elements(layer.output_shapes))
    rate = CPU_CYCLES_PER_ELEMENT.get(kind)
    note = "" if rate is not None else "op rate assumed"
    if rate is None:
        rate = CPU_DEFAULT_PER_ELEMENT
    if kind == "reduce_window2d":
        kh, kw = (layer.details or {}).get("kernel", (2, 2))
        rate *= int(kh) * int(kw)
    return CPU_PER_LAYER + elements * rate, note


def estimate(model: Model, costs: KpuCosts = KpuCosts()) -> ModelEstimate:
    """Per-layer device-time estimate of one run of ``model``."""
    result = ModelEstimate()
    for layer in model.layers:
        if layer.on_kpu:
            cycles, note = kpu_conv_cycles(layer, costs)
            unit = "KPU"
        else:
            cycles, note = cpu_cycles(layer)
            unit = "CPU"
        result.layers.append(LayerEstimate(layer.index, layer.kind, unit, cycles, int(layer.macs or 0), note))
    return result


def format_estimate(est: ModelEstimate) -> str:
    """The per-layer table, totals and fps, with the words "estimate" and how it was calibrated."""
    rows = [
        "Device-time ESTIMATE (K210 at 400 MHz; a cost model, not a measurement):",
        "",
        " #  kind                  unit       ms   GMAC/s  note",
        "--  --------------------  ----  -------  -------  ----",
    ]
    for layer in est.layers:
        rate = f"{layer.gmacs:7.1f}" if layer.gmacs is not None else "      -"
        rows.append(f"{layer.index:>2}  {layer.kind[:20]:<20}  {layer.unit:<4}  {layer.ms:7.3f}  {rate}  {layer.note}")
    rows += [
        "",
        f"estimate: {est.total_ms:.2f} ms per forward (KPU {est.kpu_ms:.2f} ms + CPU {est.cpu_ms:.2f} ms), "
        f"about {est.fps:.1f} fps for the model alone (camera, drawing and LCD not included)",
        f"how: {CALIBRATION}",
    ]
    return "\n".join(rows)
