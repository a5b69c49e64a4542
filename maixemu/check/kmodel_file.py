"""A compiled ``.kmodel``: the same verdicts read from the file (layers on the KPU or CPU, memory, version)."""

from __future__ import annotations

from pathlib import Path

from ..kmodel import KmodelError, KmodelVersionError, load_kmodel, sniff_container
from ..kmodel.inspect import fit_report
from ..kmodel.k210 import MAIXPY_BUILD_NAMES
from .report import CheckResult, budget_line, size, table
from .sources import cite


def check_kmodel(path: Path, firmware: str, board: str | None) -> CheckResult:
    from . import Unreadable

    try:
        with open(path, "rb") as fp:
            head = fp.read(64)
    except OSError as exc:
        raise Unreadable(f"{path}: {exc.strerror or exc}") from None
    kind = sniff_container(head)
    try:
        model = load_kmodel(path)
    except KmodelVersionError as exc:
        if kind.kind in ("v5", "v1", "v2"):
            verdict = (f"verdict: NO — {path.name} is {kind.description}: MaixPy's kpu.load refuses it "
                       f"('{KmodelVersionError.firmware_message}') {cite('maixpy-versions')}")
            return CheckResult(False, verdict, [f"maixemu check: {path} ({kind.description})", str(exc)], ["maixpy-versions"])
        raise Unreadable(f"{path}: {exc}") from None
    except (KmodelError, OSError, ValueError) as exc:
        raise Unreadable(f"{path}: {exc}") from None
    lines = [f"maixemu check: {path} (kmodel V{model.version}, {len(model.layers)} layers) for the {MAIXPY_BUILD_NAMES[firmware]}"
             + (f" on the {board}" if board else "")]
    rows = []
    for layer in model.layers:
        shape = " ".join("x".join(map(str, s)) for s in layer.output_shapes) or "-"
        why = "KPU layer in the file" if layer.on_kpu else "CPU layer in the file"
        rows.append([str(layer.index), layer.kind, shape, "KPU" if layer.on_kpu else "CPU", why])
    lines += table(["#", "layer", "output", "unit", "why"], rows)
    fit = fit_report(model)
    fits, budget = budget_line(fit.load_bytes, fit.kpu_ram_bytes, firmware)
    kpu = sum(1 for layer in model.layers if layer.on_kpu)
    lines.append("")
    lines.append(f"kmodel V{model.version}: {kpu} layer(s) on the KPU, {len(model.layers) - kpu} on the CPU; KPU RAM "
                 f"{size(fit.kpu_ram_bytes)}, main memory {size(model.memory.main_memory_bytes)}, file {size(model.memory.file_bytes)}; "
                 f"{budget} {cite('maixpy-budget')}")
    verdict = (f"verdict: {'OK' if fits else 'NO'} — kmodel V{model.version} runs on MaixPy's kpu.load with {kpu} of "
               f"{len(model.layers)} layers on the KPU and " + ("fits" if fits else "does NOT fit") + f" the {MAIXPY_BUILD_NAMES[firmware]}")
    return CheckResult(fits, verdict, lines, ["maixpy-versions", "maixpy-budget"])
