"""A float model through both compilers: the per-op table, the memory, the verdict."""

from __future__ import annotations

from ..floatmodel import FloatGraph
from ..kmodel.k210 import MAIXPY_BUILD_NAMES
from . import nncase_v01, nncase_v02
from .memory import estimate
from .ops import describe, nchw
from .report import CheckResult, budget_line, rules_used, size, table
from .sources import cite
from .verdicts import CompilerVerdict


def _cell(verdict: CompilerVerdict, index: int) -> str:
    v = next(v for v in verdict.ops if v.index == index)
    unit = {"fused": "fused", "folded": "folded"}.get(v.unit, v.unit)
    return f"{unit}: {v.why} {cite(*v.rules)}"


def check_graph(graph: FloatGraph, firmware: str, board: str | None) -> CheckResult:
    compilers = [nncase_v01.check(graph), nncase_v02.check(graph)]
    memories = [estimate(graph, c) for c in compilers]
    source = graph.inputs[0].shape if graph.inputs else ()
    lines = [f"maixemu check: {graph.path} ({graph.format}, {len(graph.ops)} ops, input {'x'.join(map(str, source))}) for the "
             f"{MAIXPY_BUILD_NAMES[firmware]}" + (f" on the {board}" if board else "")
             + "; ncc's defaults: --inference-type uint8, --weights-quantize-threshold 64, --output-quantize-threshold 1024"]
    rows = []
    for op in graph.ops:
        shape = "x".join(map(str, nchw(op.outputs[0].shape, graph.layout))) if op.outputs else "-"
        rows.append([str(op.index), describe(op, graph), shape] + [_cell(c, op.index) for c in compilers])
    lines += table(["#", "op", "output (NCHW)"] + [c.name for c in compilers], rows)
    lines.append("")
    summaries = []
    ok_any = False
    for compiler, memory in zip(compilers, memories):
        kpu = sum(1 for v in compiler.ops if v.unit == "KPU")
        cpu = sum(1 for v in compiler.ops if v.unit == "CPU")
        fits, budget = budget_line(memory.load_bytes, memory.kpu_ram_bytes, firmware)
        if compiler.converts:
            ram_rule = "v01-kpu-ram" if compiler.kmodel == 3 else "v02-kpu-ram"
            lines.append(f"{compiler.name}: converts; {kpu} op(s) on the KPU, {cpu} on the CPU; estimated KPU RAM "
                         f"{size(memory.kpu_ram_bytes)}, main memory {size(memory.main_memory_bytes)}, file "
                         f"{size(memory.file_bytes)}; {budget} {cite(ram_rule, 'maixpy-budget')}")
            summaries.append(f"{compiler.name} converts it ({kpu} KPU / {cpu} CPU ops) and "
                             + ("fits" if fits else f"does NOT fit ({size(memory.load_bytes)})"))
            ok_any = ok_any or fits
        else:
            lines.append(f"{compiler.name}: does NOT convert: {compiler.refusal} {cite(*compiler.refusal_rules)}")
            summaries.append(f"{compiler.name} refuses it ({compiler.refusal})")
    verdict = ("verdict: OK — " if ok_any else "verdict: NO — ") + "; ".join(summaries) + f" ({MAIXPY_BUILD_NAMES[firmware]})"
    used = rules_used(*(r for c in compilers for v in c.ops for r in (v.rules,)), *(c.refusal_rules for c in compilers),
                      ["v01-kpu-ram", "v02-kpu-ram", "maixpy-budget"])
    return CheckResult(ok_any, verdict, lines, used)
