"""A loaded V3 model: its memories (``State``), its prepared layers (``Step``) and ``V3Model``,
which places the input, runs the steps as the SDK runner does and reads the outputs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from .. import kpu as K
from ..errors import KmodelRuntimeError
from ..kpu.warmup import metered
from ..kpu.zeros import clear as clear_arena
from ..kpu.zeros import lazy_zeros
from ..model import LayerInfo, Model, TensorSpec, TraceStep, check_input
from .format import HEADER_BYTES, LAYER_CODES, LAYER_NAMES

F32 = np.float32


class State:
    """Memories of one loaded model (persist across runs, like the device's)."""

    def __init__(self, main_bytes: int):
        self.main = lazy_zeros(main_bytes)  # (untouched pages cost nothing: ``kpu.zeros``)
        self.kpu = K.KpuRam()
        #: conv step key -> (layout, map) of its output, for the layers that read it (``K.native``)
        self.cache: dict[int, tuple[str, np.ndarray]] = {}
        #: set while tracing: write every conv output into KPU RAM, not only what the plan needs
        self.materialize_all = False
        self.plan = K.KpuRamPlan()

    # typed main-memory access ------------------------------------------------------------
    def read_u8(self, addr: int, count: int) -> np.ndarray:
        return self.main[addr : addr + count]

    def read_f32(self, addr: int, count: int) -> np.ndarray:
        return self.main[addr : addr + 4 * count].view(F32) if addr % 4 == 0 else np.frombuffer(
            self.main[addr : addr + 4 * count].tobytes(), dtype=F32
        )

    def reusable_input(self, key: int) -> int | None:
        """Which cached conv output (step key) a conv read may take instead of the arena."""
        src = self.plan.reuse.get(key)
        return src if src is not None and src in self.cache else None

    def write(self, addr: int, arr: np.ndarray) -> None:
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        self.main[addr : addr + raw.size] = raw


@dataclass
class Step:
    """One prepared layer: ``run(state) -> output array`` plus what ``info`` reports."""

    index: int
    code: int
    body_offset: int
    body_size: int
    kind: str = ""
    on_kpu: bool = False
    in_shapes: tuple = ()
    out_shapes: tuple = ()
    param_bytes: int = 0
    macs: int = 0
    out_dtype: str = "float32"
    details: dict = field(default_factory=dict)
    # main-memory ranges (addr, nbytes) read and written, for validation and output shapes
    main_reads: list = field(default_factory=list)
    main_writes: list = field(default_factory=list)
    kpu_reads: list = field(default_factory=list)  # KpuAccess
    kpu_writes: list = field(default_factory=list)
    fn: Callable | None = None
    conv: K.KpuConv | None = None
    flags: int = 0
    main_out_addr: int | None = None
    #: FULLY_CONNECTED as the first layer: (main-memory address, channels) of the float input
    fc_in: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.kind = LAYER_NAMES.get(self.code, f"UNKNOWN_{self.code}")


class V3Model(Model):
    """A loaded V3 kmodel. See :func:`load_v3`."""

    version = 3
    # set by the loader (``loader.V3Loader``), which fills a V3Model()
    file_bytes: int
    header: dict
    _plan: K.KpuRamPlan
    _state: State

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.steps: list[Step] = []
        #: step index → cache keys a plain run may drop after it (see ``cache_drops``)
        self._drops: dict[int, list[int]] = {}
        self.inputs: list[TensorSpec] = []
        self.outputs: list[TensorSpec] = []
        self.layers: list[LayerInfo] = []

    # ------------------------------------------------------------------ public extras
    @property
    def input_chw(self) -> tuple[int, int, int] | None:
        """(C, H, W) of the first conv's input (what MaixPy checks images against), or None."""
        first = self.steps[0] if self.steps else None
        if first is not None and first.conv is not None:
            return first.conv.in_shape
        return None

    @property
    def first_layer_kind(self) -> str:
        return self.steps[0].kind if self.steps else ""

    def layer_output_typecode(self, index: int) -> str:
        """MaixPy fmap typecode of layer ``index``'s output: 'B' (uint8) or 'f' (float32)."""
        from .layers import fmap_typecode

        return fmap_typecode(self.steps[index])

    # ------------------------------------------------------------------ execution
    def _place_input(self, x: np.ndarray) -> None:
        state = self._state
        first = self.steps[0]
        if first.conv is not None:
            spec = self.inputs[0]
            arr = check_input(spec, x)
            layout = first.conv.layout
            state.cache[0] = (layout, K.to_native(arr, layout))
            if 0 in self._plan.materialize or state.materialize_all:
                state.kpu.upload(first.conv.src_addr, arr)
        elif first.code == LAYER_CODES["FULLY_CONNECTED"]:
            spec = self.inputs[0]
            arr = check_input(spec, x)
            assert spec.address is not None  # (the float input's main-memory address: Step.fc_in)
            state.write(spec.address, arr.astype(F32))
        else:
            raise self._first_layer_error()

    def _first_layer_error(self) -> KmodelRuntimeError:
        first = self.steps[0]
        return KmodelRuntimeError(
            f"the first layer is {first.kind}; the device runner only accepts a model whose first layer is "
            "K210_CONV or FULLY_CONNECTED (MaixPy: ERR_GET_CONV_LAYER: first layer should be conv layer)",
            offset=HEADER_BYTES + 8 * int(getattr(self, "header", {}).get("output_count", 0)),
            field="layers[0].type",
        )

    def _execute(self, inputs: tuple, limit: int | None, collect: bool,
                 times: list[tuple[int, float]] | None = None, clock: Callable[[], float] | None = None) -> Iterator[TraceStep]:
        """Run the layers. ``collect`` (trace) writes every conv output into KPU RAM as it goes, so
        however the trace ends (limit, caller stops early) the memories are what the device's are.
        A plain run writes only what the access plan says a later read needs. With ``times``,
        each step's ``(index, seconds by clock)`` is appended to it."""
        if not self.inputs:  # the model loaded but its first layer cannot take an input
            raise self._first_layer_error()
        if len(inputs) != 1:
            raise KmodelRuntimeError(f"a V3 model takes exactly one input, got {len(inputs)}")
        n = len(self.steps)
        if limit is not None and limit > 0:
            n = min(limit, n)
        state = self._state
        state.cache = {}
        state.materialize_all = collect
        self._place_input(inputs[0])
        done = False
        drops = self._drops
        try:
            for step in self.steps[:n]:
                fn = step.fn
                assert fn is not None  # (the loader gives every step its run)
                if times is not None and clock is not None:
                    start = clock()
                    out = fn(state)
                    times.append((step.index, clock() - start))
                else:
                    out = fn(state)
                if collect:
                    if callable(out):
                        out = out()
                    yield TraceStep(index=step.index, kind=step.kind, output=out, on_kpu=step.on_kpu, name=step.kind)
                else:
                    # a run holds a conv output only until the last layer that reads it has run
                    for key in drops.get(step.index, ()):
                        state.cache.pop(key, None)
                    out = None
            done = True
        finally:
            if not done and not collect:
                # a run that failed half way: put the conv outputs it made into KPU RAM in order
                for key in sorted(state.cache):
                    maker = self.steps[key - 1] if key > 0 else None
                    if maker is not None and maker.conv is not None:
                        layout, cached = state.cache[key]
                        state.kpu.upload(maker.conv.dst_addr, K.from_native(cached, layout))
            state.cache = {}
            state.materialize_all = False

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        with metered():  # the numpy forms' time decides when the compiled engine starts (kpu.warmup)
            for _ in self._execute(inputs, None, collect=False):
                pass
        return self.read_outputs()

    def layer_times(self, *inputs: np.ndarray, clock: Callable[[], float] = time.process_time) -> list[tuple[int, float]]:
        times: list[tuple[int, float]] = []
        for _ in self._execute(inputs, None, collect=False, times=times, clock=clock):
            pass
        return times

    def read_outputs(self) -> list[np.ndarray]:
        outs = []
        for spec in self.outputs:
            addr = spec.address
            assert addr is not None  # (a V3 output is a main-memory range of the file)
            raw = self._state.main[addr : addr + spec.nbytes]
            outs.append(raw.copy().view(spec.dtype).reshape(spec.shape))
        return outs

    def trace(self, *inputs: np.ndarray, limit: int | None = None) -> Iterator[TraceStep]:
        yield from self._execute(inputs, limit, collect=True)

    def reset_memory(self) -> None:
        """Zero main memory and KPU RAM (they otherwise persist between runs, as on the device)."""
        clear_arena(self._state.main)
        self._state.kpu.clear()


def cache_drops(plan: K.KpuRamPlan, conv_keys: list[int]) -> dict[int, list[int]]:
    """When a plain run may forget each cached conv output: step index → cache keys to drop.

    Key ``k`` is the output of step ``k - 1`` (key 0: the placed input). The plan says which
    later conv reads take a cached array (``reuse``: reader key → writer key); an output is kept
    until its last such reader has run, and one that no read takes is dropped right after the
    step that made it (whatever the arena needs was written by then).
    """
    last_reader: dict[int, int] = {}
    for reader, writer in plan.reuse.items():
        last_reader[writer] = max(last_reader.get(writer, reader), reader)
    drops: dict[int, list[int]] = {}
    for key in conv_keys:
        after = last_reader.get(key, max(key, 1)) - 1
        drops.setdefault(after, []).append(key)
    return drops


