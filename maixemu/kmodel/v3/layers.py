"""Every V3 layer type, table-driven: ``register(code, NAME, fields)`` declares a body's fixed
fields (kmodel-v3.md §3) and the reader that turns them into a prepared :class:`Step`.

A reader receives the decoded :class:`~.format.Body` (fields by name, each with its file offset
and error label) and the :class:`LoadContext`; it validates what it reads, records the
main-memory and KPU-RAM ranges the layer touches (the loader checks and plans them), fills in
what ``maixemu info`` shows, and sets ``step.fn``, a closure that does only array work at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import kpu as K
from ..kpu import fast
from ..kpu.fast import loaded_kernels
from ..errors import KmodelError, KmodelFormatError, KmodelUnsupportedError
from ..ops import activation as act_ops
from ..ops import elementwise, fully_connected, layout, pool, quantize
from ..reader import BinaryReader
from .format import LAYER_NAMES, Body, BodyLayout
from .model import F32, State, Step

#: Activation-table entries all K210_CONV layers of one model may hold (real V3 models: under
#: 8M). Layers beyond it take the exact int64 path, so thousands of wide-range layers in a
#: corrupt or hostile file cannot make the loader hold gigabytes of tables.
LUT_TOTAL_ENTRIES = 1 << 26


@dataclass
class LoadContext:
    """What readers share while one file loads."""

    reader: BinaryReader
    main_usage: int
    weight_bytes: int
    #: activation-table entries still allowed (see ``LUT_TOTAL_ENTRIES``)
    lut_left: int

    @property
    def data(self) -> bytes:
        return self.reader.data


Reader = Callable[[Body, Step, LoadContext], None]


@dataclass(frozen=True)
class LayerType:
    code: int
    name: str
    layout: BodyLayout
    read: Reader
    #: MaixPy types this layer's output as uint8 ('B'); all others are float32 ('f')
    quantized: bool


LAYERS: dict[int, LayerType] = {}


def register(code: int, name: str, fields: str, *, quantized: bool = False) -> Callable[[Reader], Reader]:
    """Declare layer type ``code`` named ``name`` whose body starts with ``fields`` (u32 unless ``:i``/``:f``)."""
    if LAYER_NAMES.get(code) != name:
        raise ValueError(f"layer code {code} is {LAYER_NAMES.get(code)}, not {name}")

    def decorate(read: Reader) -> Reader:
        LAYERS[code] = LayerType(code, name, BodyLayout.parse(fields), read, quantized)
        return read

    return decorate


def read_layer(step: Step, ctx: LoadContext) -> None:
    """Read ``step``'s body with its registered reader."""
    kind = LAYERS.get(step.code)
    if kind is None:  # pragma: no cover - the loader refuses unregistered codes first
        raise KmodelUnsupportedError(f"layer type {step.kind} not implemented", offset=step.body_offset, field="type")
    body = Body(ctx.reader, step.index, step.kind, step.body_offset, step.body_size, kind.layout)
    kind.read(body, step, ctx)
    step.out_dtype = "uint8" if kind.quantized else "float32"


def _compiled_step(name: str, warm_args: tuple, numpy_run: Callable, fast_run: Callable) -> Callable:
    """A CPU layer's ``step.fn``: ``fast_run(kernels, state)`` once ``kernels.<name>`` is in
    memory, else ``numpy_run(state)`` (the numpy form, same bits). The kernel is compiled or loaded
    from the disk cache in the background on stand-ins of ``warm_args``
    (``kpu.fast.schedule_kernel_warm_up``), like the KPU layers' kernels."""
    warm = fast.schedule_kernel_warm_up(name, warm_args)
    if warm is None:
        return numpy_run

    def run(state: State):
        kn = warm.kernels
        return numpy_run(state) if kn is None else fast_run(kn, state)

    return run


# ---------------------------------------------------------------------------------------------
# K210 layers
# ---------------------------------------------------------------------------------------------


@register(10240, "K210_CONV", "flags main_mem_out_address layer_offset weights_offset bn_offset act_offset", quantized=True)
def read_k210_conv(b: Body, step: Step, ctx: LoadContext) -> None:
    r = ctx.reader
    f = b.prefix
    b0, b1 = b.offset, b.end
    for name in ("layer_offset", "weights_offset", "bn_offset", "act_offset"):
        off = b.values[name]
        if not (b0 + 24 <= off < b1):
            raise b.fail(f"{name} {off} lies outside the layer's body [{b0 + 24}, {b1})", name)
    layer_off, w_off, bn_off, act_off = b.layer_offset, b.weights_offset, b.bn_offset, b.act_offset
    flags, main_out = b.flags, b.main_mem_out_address
    words = r.at(layer_off).array("<u8", 12, f"{f} registers")
    try:
        regs = K.decode_registers([int(v) for v in words], offset=layer_off)
        regs.validate_layout(offset=layer_off)
    except KmodelError as exc:
        if exc.offset is None:
            exc.offset = layer_off
        raise
    wsize = regs.weight_count * ctx.weight_bytes
    r.require(w_off, wsize, f"{f} weights")
    if w_off + wsize > b1:
        raise b.fail(f"weights ({wsize} bytes) run past the layer's body", "weights_offset")
    # (a view into the file's bytes, not a copy: the weights share the file's one copy)
    weights = np.frombuffer(ctx.data, dtype="<u1" if ctx.weight_bytes == 1 else "<u2", count=regs.weight_count, offset=w_off)
    oc = regs.out_channels
    bn_words = r.at(bn_off).array("<u8", oc, f"{f} batchnorm")
    if bn_off + 8 * oc > b1:
        raise b.fail("batch-norm table runs past the layer's body", "bn_offset")
    r.require(act_off, 144, f"{f} activation table")
    act_raw = ctx.data[act_off : act_off + 144]
    lut_limit = max(0, min(K.LUT_MAX_ENTRIES, ctx.lut_left))
    conv = K.KpuConv.prepare(regs, weights, bn_words, act_raw, weight_bytes=ctx.weight_bytes, lut_max_entries=lut_limit)
    conv.act_where = (act_off, f"{f}.act_offset (activation table)")
    ctx.lut_left -= conv.table_entries
    step.conv = conv
    step.on_kpu = True
    step.flags = flags
    step.param_bytes = wsize + 8 * oc + 144 + 96
    step.macs = regs.macs
    step.in_shapes = (regs.in_shape,)
    step.out_shapes = (regs.out_shape,)
    step.details = {
        "kernel": f"{regs.kernel_size}x{regs.kernel_size}",
        "depthwise": regs.depthwise,
        "pool": K.POOL_NAMES[regs.pool_type],
        "pad_value": regs.pad_value,
        "src_row": regs.image_src_addr,
        "dst_row": regs.image_dst_addr,
        "main_out": main_out if flags & 1 else None,
        "path": conv.path,
        "refused": conv.refused,
    }
    for name, row, shape in (("image_src_addr", regs.image_src_addr, regs.in_shape), ("image_dst_addr", regs.image_dst_addr, regs.out_shape)):
        if row * 64 + K.kpu_bytes(*shape) > K.KPU_RAM_BYTES:
            raise KmodelFormatError(f"a {shape} map at KPU row {row} runs past the 2 MiB KPU RAM", offset=layer_off + 8,
                                      field=f"{f}.{name}")
    step.kpu_reads = [K.KpuAccess("r", conv.src_addr, regs.in_shape, step.index + 1, conv=True)]
    step.kpu_writes = [K.KpuAccess("w", conv.dst_addr, regs.out_shape, step.index + 1, conv=True)]
    n_out = int(np.prod(regs.out_shape))
    if flags & 1:
        step.main_writes = [b.access("main_mem_out_address", n_out)]
        step.main_out_addr = main_out
    key = step.index + 1
    conv.on_switch.append(lambda: step.details.__setitem__("path", conv.path))

    def run(state: State, conv=conv, key=key, flags=flags, main_out=main_out) -> Callable[[], np.ndarray]:
        layout, run_native = conv.native()  # the compiled path may take over between two runs
        src = state.reusable_input(key)
        if src is not None:
            src_layout, cached = state.cache[src]
            xn = K.convert_native(cached, src_layout, layout)
        else:
            xn = K.to_native(state.kpu.download(conv.src_addr, conv.in_shape), layout)
        yn = run_native(xn)
        state.cache[key] = (layout, yn)
        y8 = None
        if state.materialize_all or key in state.plan.materialize:
            y8 = K.from_native(yn, layout)
            state.kpu.upload(conv.dst_addr, y8)
        if flags & 1:
            if y8 is None and layout == "HWC" and (kn := loaded_kernels()) is not None:
                # the transpose writes main memory itself (no [C,H,W] temporary)
                kn.hwc_to_chw(yn, state.main[main_out : main_out + n_out].reshape(conv.out_shape))
            else:
                state.write(main_out, y8 if y8 is not None else K.from_native(yn, layout))
        return lambda: K.from_native(yn, layout)

    step.fn = run


@register(10241, "K210_ADD_PADDING", "flags main_mem_in_address kpu_mem_out_address channels", quantized=True)
def read_k210_add_padding(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, kpu_out, channels = b.main_mem_in_address, b.kpu_mem_out_address, b.channels
    step.on_kpu = False
    step.main_reads = [b.access("main_mem_in_address", channels)]
    base = kpu_out * 64
    last = base + ((channels - 1) // 4) * 256 + ((channels - 1) % 4) * 16 if channels else base
    if last >= K.KPU_RAM_BYTES:  # checked before the index array is allocated
        raise b.fail(f"{channels} channels at KPU row {kpu_out} run past the KPU RAM", "kpu_mem_out_address")
    c = np.arange(channels, dtype=np.int64)
    idx = base + (c // 4) * 256 + (c % 4) * 16
    step.kpu_writes = [K.KpuAccess("w", base, (channels, 1, 1), step.index + 1, indices=idx)]
    step.in_shapes = ((channels,),)
    step.out_shapes = ((channels, 4, 4),)
    step.details = {"kpu_row": kpu_out}

    def run(state: State) -> np.ndarray:
        v = state.read_u8(main_in, channels)
        state.kpu.arena[idx] = v
        return v.reshape(channels, 1, 1).copy()

    step.fn = run


@register(10242, "K210_REMOVE_PADDING", "flags main_mem_in_address main_mem_out_address channels", quantized=True)
def read_k210_remove_padding(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, channels = b.main_mem_in_address, b.main_mem_out_address, b.channels
    step.main_reads = [b.access("main_mem_in_address", 16 * channels - 15 if channels else 0)]
    step.main_writes = [b.access("main_mem_out_address", channels)]
    step.in_shapes = ((channels, 4, 4),)
    step.out_shapes = ((channels,),)

    def run(state: State) -> np.ndarray:
        v = state.main[main_in : main_in + 16 * channels : 16].copy()
        state.write(main_out, v)
        return v

    step.fn = run


@register(10243, "K210_UPLOAD", "flags main_mem_in_address kpu_mem_out_address width height channels", quantized=True)
def read_k210_upload(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, kpu_out, width, height, channels = b.main_mem_in_address, b.kpu_mem_out_address, b.width, b.height, b.channels
    n = width * height * channels
    step.main_reads = [b.access("main_mem_in_address", n)]
    shape = (channels, height, width)
    if width == 0 or height == 0 or channels == 0 or width > 1024 or kpu_out * 64 + K.kpu_bytes(*shape) > K.KPU_RAM_BYTES:
        raise b.fail(f"a {channels}x{height}x{width} upload at KPU row {kpu_out} does not fit the KPU RAM", "kpu_mem_out_address")
    step.kpu_writes = [K.KpuAccess("w", kpu_out * 64, shape, step.index + 1)]
    step.in_shapes = (shape,)
    step.out_shapes = (shape,)

    def run(state: State) -> np.ndarray:
        v = state.read_u8(main_in, n).reshape(shape)
        state.kpu.upload(kpu_out * 64, v)
        return v.copy()

    step.fn = run


# ---------------------------------------------------------------------------------------------
# CPU layers
# ---------------------------------------------------------------------------------------------


@register(1, "ADD", "flags main_mem_in_a_address main_mem_in_b_address main_mem_out_address count")
def read_add(b: Body, step: Step, ctx: LoadContext) -> None:
    a, bb, out, count = b.main_mem_in_a_address, b.main_mem_in_b_address, b.main_mem_out_address, b.count
    step.main_reads = [b.access("main_mem_in_a_address", 4 * count), b.access("main_mem_in_b_address", 4 * count)]
    step.main_writes = [b.access("main_mem_out_address", 4 * count)]
    step.in_shapes = ((count,), (count,))
    step.out_shapes = ((count,),)

    def run(state: State) -> np.ndarray:
        v = elementwise.add_f32(state.read_f32(a, count), state.read_f32(bb, count))
        state.write(out, v)
        return v

    step.fn = run


@register(2, "QUANTIZED_ADD", "flags main_mem_in_a_address main_mem_in_b_address main_mem_out_address count "
          "in_a_offset:i in_a_mul:i in_a_shift:i in_b_offset:i in_b_mul:i in_b_shift:i out_offset:i out_mul:i out_shift:i",
          quantized=True)
def read_quantized_add(b: Body, step: Step, ctx: LoadContext) -> None:
    a, bb, out, count = b.main_mem_in_a_address, b.main_mem_in_b_address, b.main_mem_out_address, b.count
    params = [b.values[n] for n in b.layout.names[5:]]
    step.main_reads = [b.access("main_mem_in_a_address", count), b.access("main_mem_in_b_address", count)]
    step.main_writes = [b.access("main_mem_out_address", count)]
    step.in_shapes = ((count,), (count,))
    step.out_shapes = ((count,),)
    # the device processes ceil(count/8)*8 elements; emulate the over-write inside main memory
    n8 = -(-count // 8) * 8
    n_eff = max(0, min(n8, ctx.main_usage - a, ctx.main_usage - bb, ctx.main_usage - out))
    n_eff = max(n_eff, count)
    step.details = {"processed_elements": n_eff}

    def run(state: State) -> np.ndarray:
        va = state.read_u8(a, n_eff)
        vb = state.read_u8(bb, n_eff)
        v = elementwise.quantized_add(va, vb, *params)
        state.write(out, v)
        return v[:count].copy()

    step.fn = run


@register(5, "GLOBAL_AVERAGE_POOL2D", "flags main_mem_in_address main_mem_out_address kernel_size channels")
def read_global_average_pool2d(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, kernel_size, channels = b.main_mem_in_address, b.main_mem_out_address, b.kernel_size, b.channels
    step.main_reads = [b.access("main_mem_in_address", 4 * kernel_size * channels)]
    step.main_writes = [b.access("main_mem_out_address", 4 * channels)]
    step.in_shapes = ((channels, kernel_size),)
    step.out_shapes = ((channels,),)

    def run(state: State) -> np.ndarray:
        v = pool.global_average_pool(state.read_f32(main_in, channels * kernel_size), channels, kernel_size)
        state.write(main_out, v)
        return v

    step.fn = run


_POOL_FIELDS = ("flags main_mem_in_address main_mem_out_address in_width in_height in_channels out_width out_height "
                "out_channels kernel_width kernel_height stride_width stride_height padding_width padding_height")


def _read_pool(b: Body, step: Step, *, quantized: bool) -> None:
    """QUANTIZED_MAX_POOL2D (u8) and AVERAGE_POOL2D (f32) share their body and main-memory plan."""
    iw, ih, ic, ow, oh, oc = b.in_width, b.in_height, b.in_channels, b.out_width, b.out_height, b.out_channels
    kw, kh, sw, sh, pw, ph = b.kernel_width, b.kernel_height, b.stride_width, b.stride_height, b.padding_width, b.padding_height
    if oc != ic:
        raise b.fail(f"pool changes the channel count {ic} -> {oc}", "out_channels", label="out_shape.channels")
    if sw == 0 or sh == 0:
        raise b.fail("pool stride is 0", "stride_width", label="stride")
    if max(iw, ih, ow, oh, kw, kh) > 4096 or ic > 65536:
        raise b.fail("pool sizes are implausibly large", "in_width", label="in_shape")
    main_in, main_out = b.main_mem_in_address, b.main_mem_out_address
    elem = 1 if quantized else 4
    step.main_reads = [b.access("main_mem_in_address", elem * ic * ih * iw)]
    step.main_writes = [b.access("main_mem_out_address", elem * oc * oh * ow)]
    step.in_shapes = ((ic, ih, iw),)
    step.out_shapes = ((oc, oh, ow),)
    step.details = {"kernel": f"{kh}x{kw}", "stride": f"{sh}x{sw}", "padding": f"{ph}x{pw}"}
    if not quantized:
        step.details["act_ignored"] = b.act  # the device ignores AVERAGE_POOL2D's activation
    geometry = ((oh, ow), (kh, kw), (sh, sw), (ph, pw))

    def run(state: State) -> np.ndarray:
        if quantized:
            x = state.read_u8(main_in, ic * ih * iw).reshape(ic, ih, iw)
            v = pool.quantized_max_pool2d(x, *geometry)
        else:
            x = state.read_f32(main_in, ic * ih * iw).reshape(ic, ih, iw)
            v = pool.average_pool2d(x, *geometry)
        state.write(main_out, v)
        return v

    step.fn = run


@register(8, "QUANTIZED_MAX_POOL2D", _POOL_FIELDS, quantized=True)
def read_quantized_max_pool2d(b: Body, step: Step, ctx: LoadContext) -> None:
    _read_pool(b, step, quantized=True)


@register(9, "AVERAGE_POOL2D", _POOL_FIELDS + " act")
def read_average_pool2d(b: Body, step: Step, ctx: LoadContext) -> None:
    _read_pool(b, step, quantized=False)


@register(11, "QUANTIZE", "flags main_mem_in_address mem_out_address count scale:f bias:f", quantized=True)
def read_quantize(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, count, scale, bias = b.main_mem_in_address, b.mem_out_address, b.count, b.scale, b.bias
    step.main_reads = [b.access("main_mem_in_address", 4 * count)]
    step.main_writes = [b.access("mem_out_address", count)]
    step.in_shapes = ((count,),)
    step.out_shapes = ((count,),)
    step.details = {"scale": scale, "bias": bias}

    def run(state: State) -> np.ndarray:
        v = quantize.quantize_v3(state.read_f32(main_in, count), scale, bias)
        state.write(main_out, v)
        return v

    # one compiled pass straight into main memory once the fast kernels are loaded; byte i is
    # written after float i was read, so an output at or before the input may overlap it
    if main_in % 4 == 0 and (main_out <= main_in or main_out >= main_in + 4 * count):
        with np.errstate(all="ignore"):
            inv, bias32 = F32(1.0) / F32(scale), F32(bias)

        def quantize_fast(kn, state: State):
            out = state.main[main_out : main_out + count]
            kn.quantize_v3(state.main[main_in : main_in + 4 * count].view(F32), bias32, inv, out)
            return out.copy

        run = _compiled_step("quantize_v3", (np.zeros(count, F32), bias32, inv, np.zeros(count, np.uint8)), run,
                             quantize_fast)

    step.fn = run


@register(12, "DEQUANTIZE", "flags main_mem_in_address main_mem_out_address count scale:f bias:f")
def read_dequantize(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, count, scale, bias = b.main_mem_in_address, b.main_mem_out_address, b.count, b.scale, b.bias
    step.main_reads = [b.access("main_mem_in_address", count)]
    step.main_writes = [b.access("main_mem_out_address", 4 * count)]
    step.in_shapes = ((count,),)
    step.out_shapes = ((count,),)
    step.details = {"scale": scale, "bias": bias}

    def run(state: State) -> np.ndarray:
        v = quantize.dequantize_v3(state.read_u8(main_in, count), scale, bias)
        state.write(main_out, v)
        return v

    # a function of one byte: the 256 results of the kernel, looked up straight into main memory
    # (when the output does not overlap the input: the lookup writes as it reads)
    if main_out % 4 == 0 and (main_out >= main_in + count or main_out + 4 * count <= main_in):
        table = quantize.dequantize_v3(np.arange(256, dtype=np.uint8), scale, bias)

        def dequantize_fast(kn, state: State):
            out = state.main[main_out : main_out + 4 * count].view(F32)
            kn.lookup(table, state.main[main_in : main_in + count], out)
            return out.copy

        run = _compiled_step("lookup", (table, np.zeros(count, np.uint8), np.zeros(count, F32)), run, dequantize_fast)

    step.fn = run


@register(13, "REQUANTIZE", "flags main_mem_in_address main_mem_out_address count", quantized=True)
def read_requantize(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, count = b.main_mem_in_address, b.main_mem_out_address, b.count
    table = np.frombuffer(ctx.reader.at(b.offset + 16).bytes(256, f"{b.prefix} table"), dtype=np.uint8)
    if b.size < 272:
        raise KmodelFormatError("REQUANTIZE body is shorter than its 256-byte table", offset=b.offset,
                                  field=f"layers[{step.index}].body_size")
    step.main_reads = [b.access("main_mem_in_address", count)]
    step.main_writes = [b.access("main_mem_out_address", count)]
    step.in_shapes = ((count,),)
    step.out_shapes = ((count,),)
    step.param_bytes = 256
    step.details = {}

    def run(state: State) -> np.ndarray:
        v = quantize.requantize(state.read_u8(main_in, count), table)
        state.write(main_out, v)
        return v

    step.fn = run


_UNARY_FIELDS = "flags main_mem_in_address main_mem_out_address channels"


def _read_unary_f32(b: Body, step: Step, kernel) -> None:
    main_in, main_out, channels = b.main_mem_in_address, b.main_mem_out_address, b.channels
    step.main_reads = [b.access("main_mem_in_address", 4 * channels)]
    step.main_writes = [b.access("main_mem_out_address", 4 * channels)]
    step.in_shapes = ((channels,),)
    step.out_shapes = ((channels,),)

    def run(state: State) -> np.ndarray:
        v = kernel(state.read_f32(main_in, channels).copy())
        state.write(main_out, v)
        return v

    step.fn = run


@register(14, "L2_NORMALIZATION", _UNARY_FIELDS)
def read_l2_normalization(b: Body, step: Step, ctx: LoadContext) -> None:
    _read_unary_f32(b, step, act_ops.l2_normalize)


@register(15, "SOFTMAX", _UNARY_FIELDS)
def read_softmax(b: Body, step: Step, ctx: LoadContext) -> None:
    _read_unary_f32(b, step, act_ops.softmax_v3)
    main_in, main_out, channels = b.main_mem_in_address, b.main_mem_out_address, b.channels
    if main_in % 4 or main_out % 4:
        return
    args = act_ops.EXPF_ARGS

    def softmax_fast(kn, state: State):
        # the input is copied first, as the numpy form reads it whole before it writes
        x = state.main[main_in : main_in + 4 * channels].view(F32).copy()
        out = state.main[main_out : main_out + 4 * channels].view(F32)
        kn.softmax_v3(x, *args, out)
        return out.copy

    numpy_run = step.fn
    assert numpy_run is not None  # (_read_unary_f32 set the numpy form)
    step.fn = _compiled_step("softmax_v3", (np.zeros(channels, F32), *args, np.zeros(channels, F32)), numpy_run,
                             softmax_fast)


@register(25, "LOGISTIC", _UNARY_FIELDS)
def read_logistic(b: Body, step: Step, ctx: LoadContext) -> None:
    _read_unary_f32(b, step, act_ops.logistic)


def _read_concat(b: Body, step: Step, ctx: LoadContext) -> None:
    main_out, count = b.main_mem_out_address, b.input_count
    o = b.offset
    if 12 + 8 * count > b.size:
        raise b.fail(f"{count} inputs do not fit in the {b.size}-byte body", "input_count")
    ranges = [ctx.reader.at(o + 12 + 8 * j).struct("2I", f"{b.prefix}.inputs[{j}]") for j in range(count)]
    total = sum(s for _, s in ranges)
    step.main_reads = [(a, s, o + 12 + 8 * j, f"{b.prefix}.inputs[{j}].start") for j, (a, s) in enumerate(ranges)]
    step.main_writes = [b.access("main_mem_out_address", total)]
    step.in_shapes = tuple((s,) for _, s in ranges)
    step.out_shapes = ((total,),)
    quantized = step.kind == "QUANTIZED_CONCAT"
    if quantized:
        step.details = {}

    def run(state: State) -> np.ndarray:
        parts = [state.main[a : a + s].copy() for a, s in ranges]
        v = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
        state.main[main_out : main_out + total] = v
        return v if quantized or total % 4 else v.view(F32)

    step.fn = run


register(16, "CONCAT", "flags main_mem_out_address input_count")(_read_concat)
register(17, "QUANTIZED_CONCAT", "flags main_mem_out_address input_count", quantized=True)(_read_concat)


@register(18, "FULLY_CONNECTED", "flags main_mem_in_address main_mem_out_address in_channels out_channels act")
def read_fully_connected(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, cin, cout, act = b.main_mem_in_address, b.main_mem_out_address, b.in_channels, b.out_channels, b.act
    o = b.offset
    n_w = cin * cout
    need = 24 + 4 * (n_w + cout)
    if need > b.size:
        raise b.fail(f"{cin}x{cout} weights need {need} bytes, body_size is {b.size}", "in_channels")
    weights = ctx.reader.at(o + 24).array("<f4", n_w, f"{b.prefix} weights").reshape(cout, cin)
    bias = ctx.reader.at(o + 24 + 4 * n_w).array("<f4", cout, f"{b.prefix} bias")
    if act not in fully_connected.ACTIVATIONS:
        raise KmodelUnsupportedError(f"FULLY_CONNECTED activation {act}", offset=b.at("act"), field=b.field("act"))
    step.main_reads = [b.access("main_mem_in_address", 4 * cin)]
    step.main_writes = [b.access("main_mem_out_address", 4 * cout)]
    step.in_shapes = ((cin,),)
    step.out_shapes = ((cout,),)
    step.param_bytes = 4 * (n_w + cout)
    step.macs = n_w
    step.details = {"act": fully_connected.ACTIVATIONS[act]}
    step.fc_in = (main_in, cin)

    weights_t = np.ascontiguousarray(weights.T)
    # (the plain form takes ``kernels.fully_connected`` once loaded_kernels() answers: in memory by then)
    fast.schedule_kernel_warm_up("fully_connected", (np.zeros(cin, F32), weights_t, np.zeros(cout, F32)))

    def run(state: State) -> np.ndarray:
        v = fully_connected.fully_connected(state.read_f32(main_in, cin), weights, bias, act, weights_t=weights_t)
        state.write(main_out, v)
        return v

    if main_in % 4 == 0 and main_out % 4 == 0 and (main_out >= main_in + 4 * cin or main_out + 4 * cout <= main_in):
        bias32 = np.ascontiguousarray(bias, dtype=F32)

        def fully_connected_fast(kn, state: State):  # one compiled call straight into main memory
            out = state.main[main_out : main_out + 4 * cout].view(F32)
            kn.fully_connected_v3(state.main[main_in : main_in + 4 * cin].view(F32), weights_t, bias32, act, out)
            return out.copy

        run = _compiled_step("fully_connected_v3", (np.zeros(cin, F32), weights_t, bias32, act, np.zeros(cout, F32)),
                             run, fully_connected_fast)

    step.fn = run


@register(20, "TENSORFLOW_FLATTEN", "flags main_mem_in_address main_mem_out_address width height channels")
def read_tensorflow_flatten(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, width, height, channels = b.main_mem_in_address, b.main_mem_out_address, b.width, b.height, b.channels
    n = width * height * channels
    step.main_reads = [b.access("main_mem_in_address", 4 * n)]
    step.main_writes = [b.access("main_mem_out_address", 4 * n)]
    step.in_shapes = ((channels, height, width),)
    step.out_shapes = ((n,),)

    def run(state: State) -> np.ndarray:
        v = layout.tf_flatten(state.read_f32(main_in, n).copy(), channels, height, width)
        state.write(main_out, v)
        return v

    step.fn = run
    if main_in % 4 == 0 and main_out % 4 == 0 and (main_out >= main_in + 4 * n or main_out + 4 * n <= main_in):
        # the permutation once: output element j is input element order[j] (a gather, no temporary)
        order = layout.tf_flatten(np.arange(n, dtype=np.intp), channels, height, width)

        def run_gather(state: State) -> Callable[[], np.ndarray]:
            out = state.main[main_out : main_out + 4 * n].view(F32)
            np.take(state.main[main_in : main_in + 4 * n].view(F32), order, out=out)
            return out.copy

        step.fn = run_gather


_RESIZE_FIELDS = "flags main_mem_in_address main_mem_out_address in_width in_height in_channels out_width out_height align_corners"


def _read_resize_nearest_neighbor(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out = b.main_mem_in_address, b.main_mem_out_address
    iw, ih, ic, ow, oh, align = b.in_width, b.in_height, b.in_channels, b.out_width, b.out_height, b.align_corners
    esize = 1 if step.kind.startswith("QUANTIZED") else 4
    if max(iw, ih, ow, oh) > 65536 or ic > 65536:
        raise b.fail("resize sizes are implausibly large", "in_width", label="in_shape")
    step.main_reads = [b.access("main_mem_in_address", esize * ic * ih * iw)]
    step.main_writes = [b.access("main_mem_out_address", esize * ic * oh * ow)]
    step.in_shapes = ((ic, ih, iw),)
    step.out_shapes = ((ic, oh, ow),)
    step.details = {"align_corners_ignored": align}

    def run(state: State) -> np.ndarray:
        n = ic * ih * iw
        x = (state.read_u8(main_in, n) if esize == 1 else state.read_f32(main_in, n)).reshape(ic, ih, iw)
        v = layout.resize_nearest(x, oh, ow)
        state.write(main_out, v)
        return v

    step.fn = run


register(22, "RESIZE_NEAREST_NEIGHBOR", _RESIZE_FIELDS)(_read_resize_nearest_neighbor)
register(23, "QUANTIZED_RESIZE_NEAREST_NEIGHBOR", _RESIZE_FIELDS, quantized=True)(_read_resize_nearest_neighbor)


@register(24, "CHANNELWISE_DEQUANTIZE", "flags main_mem_in_address main_mem_out_address channels channel_size")
def read_channelwise_dequantize(b: Body, step: Step, ctx: LoadContext) -> None:
    main_in, main_out, channels, csize = b.main_mem_in_address, b.main_mem_out_address, b.channels, b.channel_size
    if 20 + 8 * channels > b.size:
        raise b.fail(f"{channels} channel parameters do not fit in the body", "channels")
    params = ctx.reader.at(b.offset + 20).array("<f4", 2 * channels, f"{b.prefix} params").reshape(channels, 2)
    scales, biases = params[:, 0].copy(), params[:, 1].copy()
    n = channels * csize
    step.main_reads = [b.access("main_mem_in_address", n)]
    step.main_writes = [b.access("main_mem_out_address", 4 * n)]
    step.in_shapes = ((channels, csize),)
    step.out_shapes = ((channels, csize),)
    step.param_bytes = 8 * channels

    def run(state: State) -> np.ndarray:
        v = quantize.channelwise_dequantize(state.read_u8(main_in, n).reshape(channels, csize), scales, biases)
        state.write(main_out, v)
        return v.reshape(-1)

    step.fn = run


#: Names of the layer types whose output MaixPy types as uint8 ('B').
QUANTIZED_OUTPUT = frozenset(t.name for t in LAYERS.values() if t.quantized)


def fmap_typecode(step: Step) -> str:
    """MaixPy's fmap typecode of a layer's output, from the layer table (``register(..., quantized=)``):
    'B' (uint8) for the quantized layer types, else 'f' (float32). The one rule for it."""
    return "B" if step.out_dtype == "uint8" else "f"
