"""The 2 MiB KPU RAM: its width-dependent row layout (kpu-hardware.md §7), the arena, the
engine's centred inter-layer representation, and the static plan that lets KPU→KPU chains skip
the arena (``plan_kpu_ram``) while aliasing behaves as on the chip."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import KmodelRuntimeError
from ..k210 import K210_KPU_RAM_BYTES as KPU_RAM_BYTES
from ..k210 import K210_KPU_ROW_BYTES as KPU_ROW_BYTES
from .fast import loaded_kernels, schedule_kernel_warm_up
from .zeros import clear as clear_arena
from .zeros import lazy_zeros

KPU_ROWS = KPU_RAM_BYTES // KPU_ROW_BYTES


def layout(width: int) -> tuple[int, int, int]:
    """(groups, row_len, row_pitch) of a map of this width (kpu-hardware.md §7)."""
    if width <= 16:
        return 4, 1, 16
    if width <= 32:
        return 2, 1, 32
    return 1, (width + 63) // 64, 64


def kpu_rows(c: int, h: int, w: int) -> int:
    groups, row_len, _ = layout(w)
    return row_len * h * ((c + groups - 1) // groups)


def kpu_bytes(c: int, h: int, w: int) -> int:
    return kpu_rows(c, h, w) * KPU_ROW_BYTES


def row_addr(row: int) -> int:
    return row * KPU_ROW_BYTES


def layout_view(arena: np.ndarray, base: int, shape: Sequence[int]) -> "np.ndarray | _ChannelView":
    """Writable no-copy access to a ``[C,H,W]`` map stored at byte ``base`` of ``arena``.

    Width > 32: a plain strided ndarray view. Widths ≤ 32 pack 2 or 4 channels per row, which
    one ndarray view cannot express for a channel count that is not a multiple of the group, so
    a :class:`_ChannelView` with ``read()``/``write()`` is returned instead.
    """
    c, h, w = (int(v) for v in shape)
    groups, row_len, pitch = layout(w)
    blocks = (c + groups - 1) // groups
    size = blocks * row_len * h * KPU_ROW_BYTES
    if base < 0 or base + size > arena.size:
        raise KmodelRuntimeError(f"a {c}x{h}x{w} map at KPU byte {base} runs past the end of the 2 MiB KPU RAM")
    region = arena[base : base + size]
    if groups == 1:
        return region.reshape(blocks, h, row_len * KPU_ROW_BYTES)[:, :, :w]
    strided = np.lib.stride_tricks.as_strided(
        region, shape=(blocks, groups, h, w), strides=(h * KPU_ROW_BYTES, pitch, KPU_ROW_BYTES, 1), writeable=True
    )
    return _ChannelView(strided, c)


class _ChannelView:
    """[C,H,W] access to a (blocks, groups, H, W) strided view without copying."""

    def __init__(self, strided: np.ndarray, channels: int):
        self.strided = strided
        self.channels = channels
        self.shape = (channels,) + strided.shape[2:]

    def read(self) -> np.ndarray:
        b, g, h, w = self.strided.shape
        return np.ascontiguousarray(self.strided).reshape(b * g, h, w)[: self.channels]

    def write(self, chw: np.ndarray) -> None:
        b, g, h, w = self.strided.shape
        full = b * g
        if full == self.channels:
            self.strided[...] = chw.reshape(b, g, h, w)
            return
        whole = self.channels // g
        if whole:
            self.strided[:whole] = chw[: whole * g].reshape(whole, g, h, w)
        rest = self.channels - whole * g
        if rest:
            self.strided[whole, :rest] = chw[whole * g :]


def layout_indices(base: int, shape: Sequence[int]) -> np.ndarray:
    """Flat byte addresses of every element of a ``[C,H,W]`` map (for analysis and tests)."""
    c, h, w = (int(v) for v in shape)
    groups, row_len, pitch = layout(w)
    ci = np.arange(c, dtype=np.int64)[:, None, None]
    yi = np.arange(h, dtype=np.int64)[None, :, None]
    xi = np.arange(w, dtype=np.int64)[None, None, :]
    return base + (ci // groups) * row_len * h * 64 + (ci % groups) * pitch + yi * row_len * 64 + xi


class KpuRam:
    """The 2 MiB KPU RAM: a zeroed uint8 arena with row-layout upload/download (``lazy_zeros``:
    only the rows a model writes are resident; most models pass their maps directly)."""

    #: views kept per (address, shape): a model touches a few dozen, made once instead of per run
    VIEW_CACHE_ENTRIES = 256

    def __init__(self, size: int = KPU_RAM_BYTES):
        self.arena = lazy_zeros(size)
        self._views: dict[tuple, "np.ndarray | _ChannelView"] = {}

    def view(self, addr: int, shape: Sequence[int]) -> "np.ndarray | _ChannelView":
        """No-copy access to the map at byte ``addr`` (see :func:`layout_view`); the arena is
        never replaced (``clear`` zeroes it in place), so a view stays valid and is reused."""
        key = (addr, *shape)
        v = self._views.get(key)
        if v is None:
            v = layout_view(self.arena, addr, shape)
            if len(self._views) >= self.VIEW_CACHE_ENTRIES:
                self._views.clear()
            self._views[key] = v
        return v

    def upload(self, addr: int, chw: np.ndarray) -> None:
        """Store a dense ``[C,H,W]`` uint8 map at byte ``addr`` with the row layout."""
        chw = np.asarray(chw)
        if chw.ndim != 3:
            raise KmodelRuntimeError(f"KPU upload needs a [C,H,W] map, got shape {chw.shape}")
        v = self.view(addr, chw.shape)
        if isinstance(v, _ChannelView):
            v.write(chw.astype(np.uint8, copy=False))
        else:
            v[...] = chw

    def download(self, addr: int, shape: Sequence[int]) -> np.ndarray:
        """Read a ``[C,H,W]`` map stored at byte ``addr`` into a dense uint8 array."""
        v = self.view(addr, shape)
        if isinstance(v, _ChannelView):
            return v.read()
        return np.ascontiguousarray(v)

    def clear(self) -> None:
        """Zero the arena in place (its pages are released, not written: ``kpu.zeros.clear``)."""
        clear_arena(self.arena)


def to_centered(x: np.ndarray) -> np.ndarray:
    """uint8 → int8 ``x - 128`` (flip the top bit): the engine's inter-layer representation."""
    return (np.asarray(x, dtype=np.uint8) ^ np.uint8(0x80)).view(np.int8)


#: The engine's native map forms: "CHW" = centred int8 ``[C,H,W]`` (numpy path), "HWC" = the
#: device's uint8 bytes ``[H,W,C]`` (compiled path), "U8" = the device's uint8 ``[C,H,W]`` (a
#: map placed in KPU RAM by the CPU — a model input, a V4 ``kpu_upload`` — kept for the conv that
#: reads it). KPU→KPU chains pass them along unchanged.
LAYOUTS = ("CHW", "HWC", "U8")


def warm_transposes() -> None:
    """Queue the compiled transposes for ``kpu.warmup`` (a layer's compiled path needs them at
    its layout's edges; every map is a C-ordered uint8 [C,H,W] / [H,W,C], so one warm-up each)."""
    schedule_kernel_warm_up("chw_to_hwc", (np.zeros((2, 2, 2), np.uint8), np.empty((2, 2, 2), np.uint8)))
    schedule_kernel_warm_up("hwc_to_chw", (np.zeros((2, 2, 2), np.uint8), np.empty((2, 2, 2), np.uint8)))


def chw_to_hwc(x: np.ndarray) -> np.ndarray:
    """uint8 ``[C,H,W]`` → ``[H,W,C]`` (the compiled transpose once the fast kernels are loaded)."""
    x = np.asarray(x, dtype=np.uint8)
    compiled = loaded_kernels()
    if compiled is None or x.ndim != 3:
        return np.ascontiguousarray(x.transpose(1, 2, 0))
    out = np.empty((x.shape[1], x.shape[2], x.shape[0]), np.uint8)
    compiled.chw_to_hwc(np.ascontiguousarray(x), out)
    return out


def hwc_to_chw(y: np.ndarray) -> np.ndarray:
    """uint8 ``[H,W,C]`` → ``[C,H,W]``."""
    compiled = loaded_kernels()
    if compiled is None or y.ndim != 3 or y.dtype != np.uint8:
        return np.ascontiguousarray(y.transpose(2, 0, 1))
    out = np.empty((y.shape[2], y.shape[0], y.shape[1]), np.uint8)
    compiled.hwc_to_chw(np.ascontiguousarray(y), out)
    return out


def to_native(x: np.ndarray, layout: str) -> np.ndarray:
    """uint8 ``[C,H,W]`` → the native form of ``layout`` (always a new array)."""
    if layout == "HWC":
        return chw_to_hwc(x)
    if layout == "U8":
        return np.array(x, dtype=np.uint8)
    return to_centered(x)


def from_native(y: np.ndarray, layout: str) -> np.ndarray:
    """A native map → uint8 ``[C,H,W]`` (the bytes KPU RAM or main memory hold)."""
    if layout == "HWC":
        return hwc_to_chw(y)
    if layout == "U8":
        return y
    return from_centered(y)


def convert_native(y: np.ndarray, src: str, dst: str) -> np.ndarray:
    """A native map of layout ``src`` in layout ``dst``."""
    if src == dst:
        return y
    if src == "U8":
        return to_native(y, dst) if dst != "CHW" else to_centered(y)
    if dst == "U8":
        return from_native(y, src)
    if src == "HWC":  # uint8 HWC -> centred CHW
        return to_centered(hwc_to_chw(y))
    return chw_to_hwc(from_centered(y))


def from_centered(xc: np.ndarray) -> np.ndarray:
    """Centered values (int8 or float32 holding integers) → uint8 ``x``."""
    xc = np.asarray(xc)
    if xc.dtype == np.int8:
        return (xc.view(np.uint8) ^ np.uint8(0x80))
    return (xc + np.float32(128)).astype(np.uint8)


# --------------------------------------------------------------------------------------------
# KPU RAM access planning (the KPU→KPU fast path)
# --------------------------------------------------------------------------------------------


@dataclass
class KpuAccess:
    """One access of a layer sequence: ``kind`` 'r' or 'w', byte address, [C,H,W] shape.

    ``conv`` marks conv outputs (writes whose value is a cached array) and conv inputs (reads
    that may take a cached array).
    """

    kind: str
    addr: int
    shape: tuple[int, int, int]
    step: int
    conv: bool = False
    #: explicit flat byte addresses (for writes that do not follow the map layout, e.g. ADD_PADDING)
    indices: np.ndarray | None = None


@dataclass
class KpuRamPlan:
    """Result of :func:`plan_kpu_ram`.

    ``materialize``: steps whose conv output must be written into the arena.
    ``reuse``: read step → write step whose cached array the read may use instead of the arena.
    """

    materialize: set[int] = field(default_factory=set)
    reuse: dict[int, int] = field(default_factory=dict)


#: Total map elements above which :func:`plan_kpu_ram` gives up analysing (fallback: write all).
PLAN_WORK_LIMIT = 200_000_000


#: Elements of one access handled at a time by :func:`plan_kpu_ram` (bounded index arrays).
_PLAN_CHUNK = 1 << 16


def _access_chunks(a: KpuAccess, lo: int):
    """The bytes ``a`` touches, relative to ``lo``, as index arrays of at most about
    ``_PLAN_CHUNK`` elements (whole channels: the layout of :func:`layout_indices`)."""
    if a.indices is not None:
        yield a.indices.reshape(-1) - lo
        return
    c, h, w = (int(v) for v in a.shape)
    groups, row_len, pitch = layout(w)
    yi = np.arange(h, dtype=np.int32)[None, :, None] * np.int32(row_len * 64)
    xi = np.arange(w, dtype=np.int32)[None, None, :]
    step = max(1, _PLAN_CHUNK // max(h * w, 1))
    for c0 in range(0, c, step):
        ci = np.arange(c0, min(c, c0 + step), dtype=np.int32)[:, None, None]
        yield ((a.addr - lo) + (ci // groups) * (row_len * h * 64) + (ci % groups) * pitch + yi + xi).reshape(-1)


def _span(a: KpuAccess) -> tuple[int, int]:
    if a.indices is not None:
        return (int(a.indices.min()), int(a.indices.max()) + 1) if a.indices.size else (a.addr, a.addr)
    return a.addr, a.addr + kpu_bytes(*a.shape)


def plan_kpu_ram(accesses: Sequence[KpuAccess], size: int = KPU_RAM_BYTES) -> KpuRamPlan:
    """Decide which conv outputs must reach the arena for every read to see device bytes.

    Simulates two passes of the (cyclic: the model runs again and again) access sequence over a
    "last writer" map of the arena. A read whose bytes were all last written by one conv output
    of exactly the same address and shape can reuse that array; any other read forces every writer
    it sees to be materialized. Non-conv writes (input placement, uploads, padding) always go to
    the arena. (The map covers only the bytes the accesses span, one byte per byte when fewer
    than 255 steps write, and each access's addresses are made a few channels at a time: the
    analysis of a face detector needed 28 MB of index arrays and an int32 map of all 2 MiB.)
    """
    plan = KpuRamPlan()
    work = sum(int(np.prod(a.shape)) if a.indices is None else a.indices.size for a in accesses)
    if work > PLAN_WORK_LIMIT:
        # absurdly many/large maps (a corrupt or adversarial file): skip the analysis and write
        # every conv output, which is always correct, just slower
        plan.materialize = {a.step for a in accesses if a.kind == "w" and a.conv}
        return plan
    if not accesses:
        return plan
    spans = [_span(a) for a in accesses]
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    writers = sorted({a.step for a in accesses if a.kind == "w"})
    dense = {step: i + 1 for i, step in enumerate(writers)}  # 0: never written
    dtype = np.uint8 if len(writers) < 255 else np.uint16 if len(writers) < 65535 else np.int32
    # (lazily mapped: only the bytes the accesses mark become resident, not the span's 2 MiB)
    owner = lazy_zeros(max(hi - lo, 1) * np.dtype(dtype).itemsize).view(dtype)
    by_step = {a.step: a for a in accesses if a.kind == "w"}
    seen_by_read: dict[int, set[int]] = {}
    reusable: dict[int, list[int | None]] = {}
    for _ in range(2):
        for a in accesses:
            if a.kind == "w":
                mark = dense[a.step]
                for ids in _access_chunks(a, lo):
                    owner[ids] = mark
                continue
            found: set[int] = set()
            for ids in _access_chunks(a, lo):
                got = owner[ids]
                if got.size:
                    g_lo, g_hi = int(got.min()), int(got.max())
                    found.update([g_lo] if g_lo == g_hi else (int(v) for v in np.unique(got)))
            seen = [writers[v - 1] for v in sorted(found) if v > 0]
            seen_by_read.setdefault(a.step, set()).update(seen)
            candidate = None
            if a.conv and len(seen) == 1 and 0 not in found:
                wr = by_step.get(seen[0])
                if wr is not None and wr.conv and wr.step < a.step and wr.addr == a.addr and wr.shape == a.shape:
                    candidate = wr.step
            reusable.setdefault(a.step, []).append(candidate)
    for step, cands in reusable.items():
        if cands[0] is not None and all(c == cands[0] for c in cands):
            plan.reuse[step] = cands[0]
        else:
            for s in seen_by_read[step]:
                w = by_step.get(s)
                if w is not None and w.conv:
                    plan.materialize.add(s)
    return plan
