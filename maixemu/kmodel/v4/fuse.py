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

Also here: KPU heads (a layer's map → ``transpose`` → ``dequantize`` → ``memory_copy`` →
``concat``) as one lookup of the layer's native map into the model's output (``head_chains``),
and uploads of a map no node changed since it was last uploaded (``shared_uploads``).
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
    #: (node, span) of writes a run makes that the node does not declare (a head's slice of
    #: the output, written by its layer)
    early: tuple[tuple[int, _Span], ...] = ()

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


# --- KPU heads: conv → transpose → dequantize → [memory_copy] → [concat] as one lookup ----------
#
# ulffd_landmark and slim_320_face end in heads: a KPU layer writes its map to main memory (NCHW
# bytes), a ``transpose`` makes it NHWC, a ``dequantize`` floats, a ``memory_copy`` moves them and a
# ``concat`` (outer size 1: every input one contiguous slice) gathers the heads into the model's
# output. Every float of that output is a
# fixed function of one byte of the layer's map at a fixed place: the dequantize's table at the
# map's byte in the output's order. So the layer hands its native map (``Node.redirect``: HWC
# bytes on the compiled path, without writing main memory) to one compiled pass
# (``kernels.lookup_permuted``) that writes the head's slice of the final output — one call for
# the layer's ``hwc_to_chw`` and the four glue nodes, which a plain run skips.
#
# Only where nothing can tell (as for the byte chains above, over the whole plan): the skipped
# maps are read by no node outside the group and no model output unless a write that still
# happens covers those bytes; no node writes a map between its writer and reader in the group;
# the output slices are touched by no other node (nor another group's early writes) from the
# layer to the node that wrote them before; every range is in main memory.


@dataclass
class _Head:
    """One head's chain: layer ``conv`` (its map ``shape`` = (C, H, W)), optional ``transpose``,
    ``dequantize`` (``table``), optional ``copy``; ``out`` the chain's float output."""

    conv: Node
    transpose: Node | None
    dequantize: Node
    copy: Node | None
    table: np.ndarray
    shape: tuple[int, int, int]
    out: _Span

    @property
    def last(self) -> Node:
        return self.copy if self.copy is not None else self.dequantize

    @property
    def glue(self) -> list[Node]:
        return [n for n in (self.transpose, self.dequantize, self.copy) if n is not None]

    def maps(self) -> list[tuple[_Span, int, int]]:
        """(span, writer, reader) of the maps between the chain's nodes."""
        chain = [self.conv, *self.glue]
        n = math.prod(self.shape)
        out: list[tuple[_Span, int, int]] = []
        for w, r in zip(chain, chain[1:]):
            assert w.writes is not None
            out.append((_span(w.writes, n if w.out_dtype == np.uint8 else 4 * n), w.index, r.index))
        return out


def _latest_writer(nodes: Sequence[Node], before: int, span: _Span) -> Node | None:
    return next((n for n in reversed(nodes[:before]) if any(_overlap(span, w) for w in _writes(n))), None)


def _head(nodes: Sequence[Node], d: Node) -> _Head | None:
    """The head chain ending in dequantize ``d`` (or the memory_copy right after it), if any."""
    if d.kind != "dequantize" or d.byte_table is None or d.writes is None:
        return None
    n = d.reads[0].size
    src = _span(d.reads[0])
    w = _latest_writer(nodes, d.index, src)
    t = None
    if w is not None and w.kind == "transpose":
        s = w.in_shapes[0]
        if (w.writes is None or tuple(w.details.get("perm", ())) != (0, 2, 3, 1) or len(s) != 4 or s[0] != 1
                or w.out_dtype != np.uint8 or math.prod(s) != n or _span(w.writes, n) != src):
            return None
        t, src = w, _span(w.reads[0], n)
        w = _latest_writer(nodes, w.index, src)
    if t is None:
        # (a head in CHW order, yolo_20class's: the lookup would gather across the HWC map's
        # rows — measured in the model, 452 vs 402 µs for its 512x7x10 map against the layer's
        # own transposing write and a flat lookup)
        return None
    if (w is None or w.kind != "kpu_conv2d" or w.redirect is None or w.writes is None or _span(w.writes, n) != src
            or math.prod(w.out_shape) != n or len(w.out_shape) != 4):
        return None
    if t is not None and tuple(t.in_shapes[0]) != tuple(w.out_shape):
        return None
    out = _span(d.writes, 4 * n)
    copy = next((m for m in nodes[d.index + 1 :] if any(_overlap(out, s) for s in _reads(m) + _writes(m))), None)
    if (copy is not None and copy.kind == "memory_copy" and copy.writes is not None and _span(copy.reads[0]) == out
            and copy.writes.size >= 4 * n):
        out = _span(copy.writes, 4 * n)
    else:
        copy = None
    _, c, h, wd = (int(v) for v in w.out_shape)
    return _Head(w, t, d, copy, np.ascontiguousarray(d.byte_table, dtype=np.float32), (c, h, wd), out)


@dataclass
class _Group:
    """Heads written into ``dests`` (their slices of ``concat``'s output, or their own outputs)."""

    heads: list[_Head]
    concat: Node | None
    dests: list[_Span]

    @property
    def members(self) -> set[int]:
        out = {m.index for h in self.heads for m in (h.conv, *h.glue)}
        return out | ({self.concat.index} if self.concat is not None else set())

    def end(self, head: _Head) -> int:
        """The node that wrote ``head``'s slice before (the concat, or the chain's last node)."""
        return self.concat.index if self.concat is not None else head.last.index

    def shadows(self) -> list[tuple[_Span, int, int]]:
        """(span, writer, reader) of every map a fused run leaves unwritten."""
        out = [m for h in self.heads for m in h.maps()]
        if self.concat is not None:
            out += [(h.out, h.last.index, self.concat.index) for h in self.heads]
        return out


def _groups(nodes: Sequence[Node]) -> list[_Group]:
    heads = {h.last.index: h for h in (_head(nodes, d) for d in nodes) if h is not None}
    groups: list[_Group] = []
    used: set[int] = set()
    for c in nodes:
        if c.kind != "concat" or c.writes is None or int(c.details.get("outer", 0)) != 1:
            continue
        inner, dims = int(c.details.get("inner_bytes", 0)), c.details.get("dims", ())
        if len(dims) != len(c.reads):
            continue
        members: list[_Head] = []
        dests: list[_Span] = []
        at = c.writes.start
        for mr, dim in zip(c.reads, dims):
            want = _span(mr, inner * dim)
            w = _latest_writer(nodes, c.index, want)
            h = heads.get(w.index) if w is not None else None
            if h is None or h.out != want or h.last.index in used:
                break
            members.append(h)
            dests.append((c.writes.memory_type, at, at + inner * dim))
            at += inner * dim
        else:
            groups.append(_Group(members, c, dests))
            used.update(h.last.index for h in members)
    groups += [_Group([h], None, [h.out]) for i, h in heads.items() if i not in used]
    return groups


def _group_holds(g: _Group, nodes: Sequence[Node], outputs: Sequence[MemoryRange], groups: list[_Group]) -> list[bool] | None:
    """Whether a plain run of the whole plan, ``g`` fused, leaves every byte any node or output
    reads as the node-by-node run leaves it (see the section's comment): None if not, else per
    head whether its floats wait in a buffer of their own until its old writer's turn (another
    node touches its output slice in between) instead of going straight there."""
    members = g.members
    spans = [s for s, _, _ in g.shadows()] + list(g.dests)
    if any(s[0] != MEM_MAIN or s[1] % 4 for s in spans):
        return None
    # each skipped map is the one its writer in the chain left when its reader takes it
    for span, w, r in g.shadows():
        if any(_overlap(span, x) for n in nodes[w + 1 : r] for x in _writes(n)):
            return None
    # a slice goes straight to the output when no other node touches it between the layer and
    # its old writer (nor another group's early writes: every group's, whether it is fused or not)
    early = {h.conv.index: d for o in groups for h, d in zip(o.heads, o.dests)}
    buffered = []
    for h, dest in zip(g.heads, g.dests):
        between = [n for n in nodes[h.conv.index + 1 : g.end(h)] if n.index not in members]
        buffered.append(any(_overlap(dest, x) for n in between
                            for x in _reads(n) + _writes(n) + ([early[n.index]] if n.index in early else [])))
    # nothing reads a skipped map: between its writer and every later read of its bytes (a node
    # outside the group, a model output) a write that still happens covers the bytes read
    real = {(g.end(h), d) for h, d in zip(g.heads, g.dests)}

    def covered(writer: int, before: int, part: _Span) -> bool:
        for m in reversed(nodes[writer + 1 : before]):
            if m.index in members:
                if any(at == m.index and d[1] <= part[1] and part[2] <= d[2] for at, d in real):
                    return True
            elif any(x[0] == part[0] and x[1] <= part[1] and part[2] <= x[2] for x in _writes(m)):
                return True
        return False

    readers = [(n.index, r) for n in nodes if n.index not in members for r in _reads(n)]
    readers += [(len(nodes), _span(o)) for o in outputs]
    for at, read in readers:
        for span, w, _ in g.shadows():
            part = (span[0], max(span[1], read[1]), min(span[2], read[2]))
            if span[0] == read[0] and part[1] < part[2] and at > w and not covered(w, at, part):
                return None
    return buffered


def head_chains(nodes: Sequence[Node], memory: Memory, outputs: Sequence[MemoryRange],
                fused: Sequence[Fused] = ()) -> list[Fused]:
    """Every fusable KPU head chain of ``nodes`` (``fused``: the chains already fused, whose
    nodes are not taken and whose skipped writes are not relied on)."""
    if not fast.compiled_available():  # (the numpy engine runs every node, as the reference)
        return []
    other = {i for f in fused for i in f.nodes}
    groups = [g for g in _groups(nodes) if not g.members & other]
    out: list[Fused] = []
    for g in groups:
        buffered = _group_holds(g, nodes, outputs, groups)
        if buffered is not None:
            out.append(_fused_group(g, buffered, memory))
    return out


def _fused_group(g: _Group, buffered: list[bool], memory: Memory) -> Fused:
    """The plain-run replacement of a group: each layer's redirected run, and the copies of the
    buffered slices where their old writer ran."""
    runs: dict[int, Callable[[], None]] = {}
    copies: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for h, dest, wait in zip(g.heads, g.dests, buffered):
        view = memory.arenas[dest[0]][dest[1] : dest[2]].view(np.float32)
        target = np.empty_like(view) if wait else view
        if wait:
            copies.setdefault(g.end(h), []).append((view, target))
        assert h.conv.redirect is not None
        runs[h.conv.index] = h.conv.redirect(_head_sink(h, target))
    for at, pairs in copies.items():
        runs[at] = _copy_run(pairs)
    early = tuple((h.conv.index, d) for h, d, wait in zip(g.heads, g.dests, buffered) if not wait)
    return Fused(runs, tuple(sorted(g.members - set(runs))), early)


def _copy_run(pairs: list[tuple[np.ndarray, np.ndarray]]) -> Callable[[], None]:
    def run() -> None:
        for dst, src in pairs:
            dst[...] = src

    return run


def _head_sink(h: _Head, dest: np.ndarray) -> Callable[[str, np.ndarray], None]:
    """``sink(layout, map)`` writing the head's floats into ``dest`` in one pass (numpy's take of
    the permuted view while the compiled kernel is not in memory: the same values)."""
    c, hh, w = h.shape
    nhwc = h.transpose is not None
    table = h.table
    # (dims, strides) of the output's order over the map's bytes, per layout of the map
    if nhwc:
        plans = {"HWC": ((hh, w, c), (w * c, c, 1)), "U8": ((hh, w, c), (w, 1, hh * w))}
    else:
        plans = {"HWC": ((c, hh, w), (1, w * c, c)), "U8": ((c, hh, w), (hh * w, w, 1))}
    shapes = {"HWC": (hh, w, c), "U8": (c, hh, w)}
    perms = {("HWC", True): (0, 1, 2), ("HWC", False): (2, 0, 1), ("U8", True): (1, 2, 0), ("U8", False): (0, 1, 2)}
    dims, strides = plans["HWC"]
    warm = fast.schedule_kernel_warm_up("lookup_permuted", (table, np.zeros(c * hh * w, np.uint8), *dims, *strides, dest))
    from ..kpu.ram import from_native

    def sink(layout: str, y: np.ndarray) -> None:
        if layout not in shapes:  # the numpy path's centred map
            y, layout = from_native(y, layout), "U8"
        if y.shape != shapes[layout] or y.dtype != np.uint8:
            raise ValueError(f"a {layout} map of shape {y.shape} for a head of {shapes[layout]}")
        compiled = warm.kernels if warm is not None else None
        if compiled is not None and y.flags.c_contiguous:
            d, s = plans[layout]
            compiled.lookup_permuted(table, y.reshape(-1), d[0], d[1], d[2], s[0], s[1], s[2], dest)
        else:
            np.take(table, y.transpose(perms[layout, nhwc]), out=dest.reshape(plans[layout][0]))

    return sink


# --- one map uploaded twice ------------------------------------------------------------------


def shared_uploads(nodes: Sequence[Node], fused: Sequence[Fused]) -> dict[int, int]:
    """node -> earlier node of every ``kpu_upload`` of a single map whose bytes (the same range,
    the same shape) no node wrote since an earlier upload of them (declared writes, and the
    writes fused runs add): it takes that upload's map (ulffd_landmark's 48x30x40 map three
    times, 37 µs of transposing copy each). The map's cache entry is shared as a KPU layer's
    output is among the layers that read it (no reader writes a cached map)."""
    extra: dict[int, list[_Span]] = {}
    for f in fused:
        for at, span in f.early:
            extra.setdefault(at, []).append(span)
    same: dict[int, int] = {}
    for i, u in enumerate(nodes):
        if u.kind != "kpu_upload" or u.in_shapes[0][0] != 1 or u.reads[0].memory_type != MEM_MAIN:
            continue
        src = _span(u.reads[0])
        for j in range(i - 1, -1, -1):
            m = nodes[j]
            if m.kind == "kpu_upload" and _span(m.reads[0]) == src and m.in_shapes == u.in_shapes:
                same[u.index] = same.get(m.index, m.index)
                break
            if any(_overlap(src, x) for x in _writes(m) + extra.get(m.index, [])):
                break
    return same
