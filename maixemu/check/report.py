"""``maixemu check``'s answer: one table (a row per operator or kmodel layer), memory, one verdict line."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..kmodel.inspect import size_text
from ..kmodel.k210 import K210_KPU_RAM_BYTES, MAIXPY_BUILD_NAMES, MAIXPY_MODEL_BUDGETS
from .sources import RULES, cite


@dataclass
class CheckResult:
    """The verdict and the text: ``ok`` (converts and fits) decides the exit code (0 or 1)."""

    ok: bool
    verdict: str
    lines: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    def text(self, sources: bool = True) -> str:
        out = list(self.lines)
        if sources and self.rules:
            out.append("")
            out.append("rules applied (nncase's and MaixPy's source lines):")
            out += [f"  [{r}] {RULES[r].text} — {RULES[r].source}" for r in self.rules]
        out.append(self.verdict)
        return "\n".join(out)


size = size_text


def table(headers: list[str], rows: list[list[str]], right: frozenset[int] = frozenset({0})) -> list[str]:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    out = []
    for j, row in enumerate([headers, *rows]):
        out.append("  " + "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                                    for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if j == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    return out


def budget_line(load: int, kpu: int, firmware: str) -> tuple[bool, str]:
    limit = MAIXPY_MODEL_BUDGETS[firmware]
    fits = load <= limit and kpu <= K210_KPU_RAM_BYTES
    parts = [f"kpu.load needs about {size(load)} of the {MAIXPY_BUILD_NAMES[firmware]}'s {size(limit)}"]
    if kpu > K210_KPU_RAM_BYTES:
        parts.append(f"KPU RAM {size(kpu)} of {size(K210_KPU_RAM_BYTES)}")
    return fits, ", ".join(parts) + (": fits" if fits else ": does NOT fit")


def rules_used(*groups) -> list[str]:
    seen: list[str] = []
    for group in groups:
        for rule in group:
            if rule not in seen:
                seen.append(rule)
    return seen


__all__ = ["CheckResult", "budget_line", "cite", "rules_used", "size", "table"]
