"""What one compiler does with each operator, and whether the model converts at all."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Where an operator ends up: on the KPU, on the CPU, merged into a neighbour, or refused.
UNITS = ("KPU", "CPU", "fused", "folded", "refused")


@dataclass(frozen=True)
class OpVerdict:
    index: int
    unit: str
    why: str
    rules: tuple[str, ...] = ()
    #: for "fused"/"folded": the op it went into
    into: int | None = None


@dataclass
class CompilerVerdict:
    """One nncase version's reading of the whole model."""

    name: str  # "nncase v0.2 → kmodel V4"
    kmodel: int
    ops: list[OpVerdict] = field(default_factory=list)
    #: why the model does not convert (the first refusal), or None
    refusal: str | None = None
    refusal_rules: tuple[str, ...] = ()

    @property
    def converts(self) -> bool:
        return self.refusal is None

    def unit_of(self, index: int) -> str:
        return next((v.unit for v in self.ops if v.index == index), "CPU")

    def refuse(self, reason: str, *rules: str) -> None:
        if self.refusal is None:
            self.refusal = reason
            self.refusal_rules = rules
