"""Human-readable summaries of a loaded model: layer table, memory, and whether it fits a K210.

Generic over :class:`~maixemu.kmodel.model.Model` (V3 and V4 alike): it only reads ``version``,
``inputs``, ``outputs``, ``layers``, ``memory`` and ``notes``. ``maixemu info`` prints
:func:`format_model`.

The fit check uses the numbers MaixPy users meet, from :mod:`.k210` (the one source ``kpu.load``
uses too): the K210 has 6 MiB of general RAM and 2 MiB of KPU RAM; ``kpu.load`` keeps the whole
file plus the model's main-memory scratch in general RAM, and each MaixPy build leaves 2 MiB (full),
4 MiB (minimum) or the whole 6 MiB (none) of it to models. ``kpu.load_flash`` streams weights
instead (not modelled here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .k210 import (K210_KPU_RAM_BYTES, K210_MAIN_MEMORY_BYTES, MAIXPY_BUILD_NAMES, MAIXPY_MODEL_BUDGETS, MIB,
                   kpu_load_bytes)
from .model import Model


@dataclass(frozen=True)
class FitReport:
    """How a model's memory compares with the K210 and MaixPy's budgets."""

    load_bytes: int  # file + main-memory scratch (what kpu.load allocates in general RAM)
    kpu_ram_bytes: int
    fits_chip: bool
    #: ``--firmware`` build -> does ``kpu.load`` fit it there
    budgets: dict[str, bool]


def fit_report(model: Model) -> FitReport:
    mem = model.memory
    load = kpu_load_bytes(mem.main_memory_bytes, mem.file_bytes)
    fits_chip = load <= K210_MAIN_MEMORY_BYTES and mem.kpu_ram_bytes <= K210_KPU_RAM_BYTES
    budgets = {build: load <= limit and mem.kpu_ram_bytes <= K210_KPU_RAM_BYTES
               for build, limit in MAIXPY_MODEL_BUDGETS.items()}
    return FitReport(load, mem.kpu_ram_bytes, fits_chip, budgets)


def _shape(shapes) -> str:
    if not shapes:
        return "-"
    return " ".join("x".join(str(int(v)) for v in s) if len(s) else "scalar" for s in shapes)


def size_text(n: int) -> str:
    """A byte count as MaixPy users read it: B, KiB or MiB."""
    if n >= MIB:
        return f"{n / MIB:.2f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def _detail(details: dict) -> str:
    parts = []
    if "kernel" in details:
        k = details["kernel"]
        parts.append(f"{k}x{k}" if isinstance(k, int) else str(k))
    if details.get("depthwise"):
        parts.append("dw")
    pool = details.get("pool")
    if pool and pool != "bypass":
        parts.append(f"pool {pool}")
    if details.get("act"):
        parts.append(str(details["act"]))
    return " ".join(parts)


def layer_table(model: Model) -> str:
    """One row per layer: index, kind, KPU/CPU, input and output shapes, params, MACs, notes."""
    rows = [("#", "kind", "unit", "input", "output", "params", "MACs", "out", "details")]
    for layer in model.layers:
        rows.append(
            (
                str(layer.index),
                layer.kind,
                "KPU" if layer.on_kpu else "CPU",
                _shape(layer.input_shapes),
                _shape(layer.output_shapes),
                size_text(layer.param_bytes) if layer.param_bytes else "-",
                f"{layer.macs / 1e6:.2f}M" if layer.macs else "-",
                "u8" if np.dtype(layer.output_dtype) == np.uint8 else "f32",
                _detail(layer.details),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(c.rjust(w) if i in (0, 5, 6) else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def memory_summary(model: Model) -> str:
    mem = model.memory
    fit = fit_report(model)
    kpu_layers = sum(1 for layer in model.layers if layer.on_kpu)
    macs = sum(layer.macs for layer in model.layers)
    kpu_macs = sum(layer.macs for layer in model.layers if layer.on_kpu)
    lines = [
        f"layers: {len(model.layers)} ({kpu_layers} on the KPU, {len(model.layers) - kpu_layers} on the CPU); "
        f"{macs / 1e6:.1f} M MACs ({kpu_macs / 1e6:.1f} M on the KPU)",
        f"file: {size_text(mem.file_bytes)}, parameters: {size_text(mem.param_bytes)}",
        f"main memory (scratch): {size_text(mem.main_memory_bytes)}; KPU RAM: {size_text(mem.kpu_ram_bytes)} of {size_text(K210_KPU_RAM_BYTES)}",
        f"kpu.load needs about {size_text(fit.load_bytes)} of general RAM (file + scratch) of the K210's "
        f"{size_text(K210_MAIN_MEMORY_BYTES)}: {'fits the chip' if fit.fits_chip else 'does NOT fit the chip'}",
        "MaixPy budgets (--firmware): " + ", ".join(
            f"{MAIXPY_BUILD_NAMES[build]} {size_text(limit)}: {'ok' if fit.budgets[build] else 'too big'}"
            for build, limit in MAIXPY_MODEL_BUDGETS.items()),
    ]
    if not fit.budgets["full"]:
        lines.append("  (too big for kpu.load on the full firmware: use a minimum build or kpu.load_flash)")
    return "\n".join(lines)


def set_outputs_hint(shape: tuple[int, ...], index: int) -> str:
    """What a MaixPy script must declare for a V4 output: ``kpu.set_outputs(task, i, w, h, ch)``.

    The firmware only checks ``w*h*ch`` against the element count and never reorders data, so the
    last three axes of the graph's own shape (NCHW: ch, h, w) are the natural labels.
    """
    dims = (1, 1, 1) + tuple(int(d) for d in shape)
    ch, h, w = dims[-3:]
    lead = int(np.prod(dims[:-3]))
    ch *= lead
    return f"MaixPy: kpu.set_outputs(task, {index}, {w}, {h}, {ch})  (w*h*ch = {w * h * ch})"


def io_summary(model: Model) -> str:
    lines = []
    for kind, specs in (("input", model.inputs), ("output", model.outputs)):
        for i, spec in enumerate(specs):
            where = f"{spec.memory} memory" + (f" @{spec.address}" if spec.address is not None else "")
            line = f"{kind} {i}: {np.dtype(spec.dtype).name} {'x'.join(str(v) for v in spec.shape)} {spec.layout}, {where}"
            if kind == "output" and model.version == 4:
                line += f"; {set_outputs_hint(spec.shape, i)}"
            lines.append(line)
    if not model.inputs:
        lines.append("input: none the device runner accepts (first layer must be a KPU conv or FULLY_CONNECTED)")
    return "\n".join(lines)


def format_model(model: Model, name: str | None = None) -> str:
    """The full ``maixemu info`` text."""
    head = f"{name}: " if name else ""
    parts = [f"{head}kmodel V{model.version}", io_summary(model), "", layer_table(model), "", memory_summary(model)]
    notes = list(getattr(model, "notes", []) or [])
    if notes:
        parts += [""] + [f"note: {n}" for n in notes]
    return "\n".join(parts)
