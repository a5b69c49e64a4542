"""Chains of V4 glue fused into one table lookup per input byte (exact: the same output bytes).

nncase v0.2 joins the maps of two KPU layers on the CPU as ``dequantize`` (each map) → ``concat``
→ ``quantize`` → often a ``quantized_binary`` with a constant byte (a ReLU-like max), then a
``kpu_upload`` of the result (ulffd_landmark three times, 38 400 + 19 200 bytes the largest).
Every output byte of such a chain is a fixed function of one input byte: quantize (host kernel,
element-wise) of dequantize's float, then the binary op's table column. So the chain is, per
input map, one lookup through the composition of the tables — one pass over the bytes instead
of four over bytes and floats. Each lookup runs where its dequantize ran (the bytes it read
then) into the chain's own buffer, copied to the output where the chain's last node ran; the
concat and the quantize are skipped in a plain run (``Fused``).

Only where nothing can tell: the float maps and the quantized map between the nodes are read by
no other node and are no model output unless a node that still runs wrote those bytes since
(``covered``), no other node writes them between their writer and reader in the chain, every
range is in main memory, and the model
follows the host kernels (``float_mode="host"``: the device's quantize rounds pairs of
elements, not one element at a time). ``V4Model.trace`` runs the nodes one by one as before,
so every node's own output stays observable there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..kpu import fast
from ..ops import v4_float as vf
from .format import MEM_MAIN, MemoryRange
from .nodes import Memory, Node, _lookup

_Span = tuple[int, int, int]  # (memory type, first byte, end byte)


@dataclass
class Fused:
    """A chain's plain-run replacement: ``runs[i]`` takes the place of node ``i`` (each
    dequantize: its map's lookup into the chain's buffer; the last node: the buffer into the
    output), the ``skipped`` nodes do nothing."""

    runs: dict[int, Callable[[], None]]
    skipped: tuple[int, ...]

    @property
    def nodes(self) -> tuple[int, ...]:
        return tuple(sorted((*self.runs, *self.skipped)))


def _span(mr: MemoryRange, nbytes: int | None = None) -> _Span:
    return (mr.memory_type, mr.start, mr.start + (mr.size if nbytes is None else nbytes))


def _overlap(a: _Span, b: _Span) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _reads(node: Node) -> list[_Span]:
    return [_span(r) for r in node.reads]


def _writes(node: Node) -> list[_Span]:
    return [_span(node.writes)] if node.writes is not None else []


def byte_chains(nodes: Sequence[Node], memory: Memory, outputs: Sequence[MemoryRange], float_mode: str) -> list[Fused]:
    """Every fusable ``dequantize…→ concat → quantize [→ quantized_binary]`` chain of ``nodes``."""
    if float_mode != "host" or not fast.compiled_available():
        return []
    fused: list[Fused] = []
    taken: set[int] = set()
    for c in nodes:
        if c.kind == "concat" and c.index not in taken:
            chain = _chain(nodes, c, memory, outputs)
            if chain is not None and not taken.intersection(chain.nodes):
                fused.append(chain)
                taken.update(chain.nodes)
    return fused


def _chain(nodes: Sequence[Node], c: Node, memory: Memory, outputs: Sequence[MemoryRange]) -> Fused | None:
    inner, outer, dims = int(c.details.get("inner_bytes", 0)), int(c.details.get("outer", 0)), c.details.get("dims", ())
    if outer != 1 or c.writes is None or inner % 4 or len(dims) != len(c.reads):
        return None
    # each input: the whole output of the latest node before the concat that writes its bytes, a dequantize
    producers: list[Node] = []
    for mr, d in zip(c.reads, dims):
        want = _span(mr, inner * d)
        writer = next((n for n in reversed(nodes[: c.index]) if any(_overlap(want, w) for w in _writes(n))), None)
        if (writer is None or writer.kind != "dequantize" or writer.byte_table is None or writer.writes is None
                or _span(writer.writes, 4 * writer.reads[0].size) != want):
            return None
        producers.append(writer)
    c_out = _span(c.writes, inner * sum(dims))
    after = [n for n in nodes[c.index + 1 :] if any(_overlap(c_out, s) for s in _reads(n) + _writes(n))]
    if not after or after[0].kind != "quantize" or after[0].writes is None:
        return None
    q = after[0]
    q_range = q.writes
    if q_range is None or _span(q.reads[0], 4 * (q.reads[0].size // 4)) != c_out:
        return None
    zp, scale = int(q.details["zero_point"]), float(q.details["scale"])
    n_out = q.reads[0].size // 4
    last, out_range = q, q_range
    q_out = _span(q_range, n_out)
    later = [n for n in nodes[q.index + 1 :] if any(_overlap(q_out, s) for s in _reads(n) + _writes(n))]
    column = None
    qb = later[0] if later else None
    if (qb is not None and qb.kind == "quantized_binary" and qb.byte_table is not None and qb.writes is not None
            and _span(qb.reads[0], n_out) == q_out):
        last, out_range, column = qb, qb.writes, qb.byte_table
    if column is not None and (math.prod(last.in_shapes[0]) != n_out or math.prod(last.out_shape) != n_out):
        return None
    chain = {p.index for p in producers} | {c.index, q.index, last.index}
    final = _span(out_range, n_out)
    # (span, the chain node that writes it, the chain node that reads it) of the maps a fused run skips
    inner_maps = [(_span(p.writes, 4 * p.reads[0].size), p.index, c.index) for p in producers if p.writes is not None]
    inner_maps.append((c_out, c.index, q.index))
    if last is not q and q_out != final:  # (the binary op in place: its output is the chain's)
        if _overlap(q_out, final):
            return None
        inner_maps.append((q_out, q.index, last.index))
    sources = [(_span(p.reads[0]), p.index) for p in producers]
    if any(s[0] != MEM_MAIN for s, *_ in inner_maps + sources) or final[0] != MEM_MAIN:
        return None
    # the chain computes what its nodes do: every map it reads is the one its writer left ...
    for span, writer_at, reader_at in inner_maps:
        if any(_overlap(span, x) for n in nodes[writer_at + 1 : reader_at] for x in _writes(n)):
            return None
    # nothing reads a skipped map: every other read of those bytes, and the model's outputs, take
    # what a node that still runs wrote there last
    def covered(before: int, part: _Span) -> bool:
        for m in reversed(nodes[:before]):
            for x in _writes(m):
                if _overlap(x, part):
                    real = m.index not in chain or (m is last and x == _span(out_range))
                    return real and x[1] <= part[1] and part[2] <= x[2]
        return False

    readers = [(n.index, r) for n in nodes if n.index not in chain for r in _reads(n)]
    readers += [(len(nodes), _span(o)) for o in outputs]
    for at, read in readers:
        for span, _, _ in inner_maps:
            part = (span[0], max(span[1], read[1]), min(span[2], read[2]))
            if part[1] < part[2] and span[0] == read[0] and not covered(at, part):
                return None
    # per input map the composition of the tables, looked up when its dequantize ran (the bytes
    # it read then) into the chain's own buffer, which becomes the output when the last node ran
    out = memory.view(out_range, np.uint8, n_out)
    buffer = np.empty(n_out, np.uint8)
    runs: dict[int, Callable[[], None]] = {}
    at = 0
    for p, d in zip(producers, dims):
        assert p.byte_table is not None
        table = vf.quantize(p.byte_table, zp, scale, "host")
        if column is not None:
            table = column[table]
        n = inner * d // 4
        args = (np.ascontiguousarray(table, dtype=np.uint8), memory.view(p.reads[0], np.uint8, n), buffer[at : at + n])
        runs[p.index] = _lookup_run(args)
        at += n

    def finish() -> None:
        out[...] = buffer

    runs[last.index] = finish
    return Fused(runs, tuple(sorted(chain - set(runs))))


def _lookup_run(args: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Callable[[], None]:
    warm = fast.schedule_kernel_warm_up("lookup", args)
    table, src, dst = args

    def run() -> None:
        _lookup(table, src, dst, warm)

    return run
