"""MaixPy's ``KPU`` module (``import KPU as kpu``): load kmodels, run them on images, decode YOLOv2.

Semantics follow the firmware (maixpy-api.md §1): the KPU reads the image's AI buffer only, no
resizing happens, V3 outputs are typed by the last executed layer (a conv gives raw uint8 with its
real w/h/ch; a float layer gives ``w`` = byte count), V4 outputs need ``set_outputs`` first, and
``run_yolo2`` returns ``None`` when nothing is found. Error texts are the firmware's; where maixemu
knows what to do on the PC it adds one ``[maixemu]`` line.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Sequence

import numpy as np

from . import ai_memory as _ai_memory
from . import ide_events, kpu_calls, kpu_loader
from . import kpu_errors as codes
from ..kmodel.kpu import POOL_NAMES
from .kpu_fmap import kpu_fmap
from .mp_args import fixed_items
from .state import checkpoint
from .yolo2 import RegionBox, region_layer

__all__ = [
    "load", "load_flash", "deinit", "set_outputs", "forward", "get_output", "fmap", "fmap_free",
    "set_layers", "init_yolo2", "run_yolo2", "netinfo", "memtest", "face_encode", "face_compare",
    "classifier",
]

class _yolo2_args:  # noqa: N801 - printed like the firmware's object
    def __init__(self, threshold: float, nms_value: float, anchors: tuple[float, ...]):
        self._threshold, self._nms, self._anchors = threshold, nms_value, anchors

    def threshold(self) -> float:
        return self._threshold

    def nms_value(self) -> float:
        return self._nms

    def anchor_number(self) -> int:
        return len(self._anchors) // 2

    def anchor(self) -> tuple[float, ...]:
        return self._anchors

    def __repr__(self) -> str:
        anchors = ", ".join(f"{a:f}" for a in self._anchors)
        return (
            f'{{"threshold":{self._threshold:f}, "nms_value":{self._nms:f}, '
            f'"anchor_number":{self.anchor_number()}, "anchor":"({anchors})"}}'
        )


class kpu_net:  # noqa: N801 - the firmware's type name
    """A loaded model (``task``); getters are methods, as on the device."""

    def __init__(self, model, source: int | str, size: int, label: str, streamed: bool):
        self._model = model
        self._addr = source if isinstance(source, int) else None
        self._path = None if isinstance(source, int) else str(source)
        self._size = size
        self._label = label
        self._streamed = streamed
        self._yolo: _yolo2_args | None = None
        self._output_shapes: dict[int, tuple[int, int, int]] = {}
        self._layer_limit = 0
        self._buffers: dict[Any, np.ndarray] = {}
        self._last: dict[int, kpu_fmap] = {}
        self._alive = True

    # -- firmware getters -------------------------------------------------------------------
    def model_addr(self):
        return self._addr

    def model_size(self) -> int:
        return self._size

    def model_path(self):
        return self._path

    def net_arg(self):
        return self._yolo

    def __repr__(self) -> str:
        path = self._path if self._path is not None else "(null)"
        args = repr(self._yolo) if self._yolo is not None else '"(null)"'
        addr = self._addr if self._addr is not None else 0
        return f'{{"model_addr": {addr}, "model_size": {self._size}, "model_path": "{path}", "net_args": {args}}}'

    # -- helpers ----------------------------------------------------------------------------
    @property
    def model(self):
        if not self._alive:
            raise OSError(
                codes.with_advice(codes.error_text(codes.RUN_MODEL), "this model was freed with kpu.deinit(); load it again")
            )
        return self._model

    def _store(self, key, values: np.ndarray) -> np.ndarray:
        """Copy a result into this model's persistent output memory (fmaps are views of it)."""
        values = np.ascontiguousarray(values)
        buffer = self._buffers.get(key)
        if buffer is None or buffer.shape != values.shape or buffer.dtype != values.dtype:
            buffer = values.copy()
            self._buffers[key] = buffer
        else:
            np.copyto(buffer, values)
        return buffer


def _check_net(net, what: str = "kpu_net type error") -> kpu_net:
    if not isinstance(net, kpu_net):
        raise TypeError(f"[MAIXPY]kpu: {what}")
    return net


def load(model: int | str) -> kpu_net:
    """``kpu.load(0x300000)`` or ``kpu.load("/sd/face.kmodel")``."""
    if isinstance(model, bool) or not isinstance(model, (int, str)):
        raise TypeError("[MAIXPY]kpu: only accept int or string")
    if isinstance(model, int):
        if model <= 0:
            raise ValueError("[MAIXPY]kpu: model_addr must > 0 ")
    elif not any(ext in model for ext in (".kmodel", ".smodel", ".emodel")):
        raise ValueError("[MAIXPY]kpu: model format don't match, only supply .kmodel ")
    elif ".smodel" in model or ".emodel" in model:
        raise codes.load_error(codes.DECRYPT, "encrypted .smodel/.emodel files are bound to one board and cannot be emulated")
    loaded, size, label = kpu_loader.load_model(model)
    net = kpu_net(loaded, model, size, label, streamed=False)
    kpu_loader.reserve(net, loaded, size, streamed=False, flash=False)
    return net


def load_flash(*args) -> kpu_net:
    """``kpu.load_flash(addr, is_dual_buf, batch_size, spi_speed)``: a byte-swapped model streamed from flash."""
    if len(args) < 4 or not all(isinstance(a, int) and not isinstance(a, bool) for a in args[:4]):
        raise ValueError(
            "[MAIXPY]kpu: load_flash arg format error: task=kpu.load_flash(flash_addr, is_dual_buf, batch_size, spi_speed)"
        )
    addr, _dual, _batch, spi_speed = args[:4]
    if addr <= 0:
        raise ValueError("[MAIXPY]kpu: model_addr must > 0 ")
    print(f"SPI freq {spi_speed} Hz")
    loaded, size, label = kpu_loader.load_model(addr, flash=True)
    net = kpu_net(loaded, addr, size, label, streamed=True)
    kpu_loader.reserve(net, loaded, size, streamed=True, flash=True)
    return net


def deinit(net, *_ignored) -> bool:
    net = _check_net(net)
    kpu_loader.release(net)
    net._alive = False
    net._yolo = None
    return True


def _flat_output_count(net: kpu_net, idx: int) -> int | None:
    outputs = net.model.outputs
    if not 0 <= idx < len(outputs):
        return None
    return int(outputs[idx].size)


def set_outputs(*args) -> bool:
    """V4: label output ``idx`` with shape (w, h, ch); prints and returns False on a mismatch."""
    if len(args) != 5 or not isinstance(args[0], kpu_net) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in args[1:]
    ):
        raise ValueError("[MAIXPY]kpu: set_outputs arg format error: set_outputs(task, int idx, int w, int h, int ch)")
    net, idx, w, h, ch = args
    if net.model.version != 4:
        print(f"[MAIXPY]kpu: set_outputs ctx error, maybe init err:{codes.KMODEL_VERSION}\r\n", end="")
        return False
    count = _flat_output_count(net, idx)
    if count is None:
        print(f"[MAIXPY]kpu: set_outputs arg value error:kmodel output idx {idx} out of range\r\n", end="")
        return False
    if w * h * ch != count:
        print("[MAIXPY]kpu: set_outputs arg value error: w,c,ch size not match output size\r\n", end="")
        print(f"[maixemu] output {idx} has {count} values; w*h*ch = {w}*{h}*{ch} = {w * h * ch}", file=sys.stderr)
        return False
    net._output_shapes[idx] = (w, h, ch)
    return True


def set_layers(net, n) -> bool:
    net = _check_net(net)
    total = len(net.model.layers)
    n = int(n)
    if n > total:
        print(f"err: set layers_length to {n}, but max {total}\r\n", end="")
        return False
    net._layer_limit = max(n, 0)
    return True


def _model_input_chw(net: kpu_net) -> tuple[int, int, int]:
    model = net.model
    spec = model.inputs[0]
    if model.version == 3 and (not model.layers or not model.layers[0].on_kpu):
        raise ValueError("[MAIXPY]kpu: first layer not conv layer!\r\n")
    shape = tuple(int(s) for s in spec.shape)
    if len(shape) < 3 or spec.memory != "kpu" and np.dtype(spec.dtype) != np.uint8:
        raise ValueError(
            codes.with_advice(
                "[MAIXPY]kpu: check img format err!\r\n",
                f"this model takes {np.dtype(spec.dtype).name} input of shape {shape}, not an image; "
                "pass a list of numbers: kpu.forward(task, [..])",
            )
        )
    return shape[-3], shape[-2], shape[-1]


def _input_array(net: kpu_net, data, call: str) -> np.ndarray:
    from . import image as image_module

    checkpoint()  # a KPU call is a firmware call: the run's end reaches a script here too
    model = net.model
    spec = model.inputs[0]
    if isinstance(data, image_module.Image):
        chw = _model_input_chw(net)
        ai = _ai_memory.read_ai_input(data, chw, call)
        kpu_calls.notify_input(ai, call)
        ide_events.kpu_call(call, model)
        return ai.reshape(spec.shape)
    if isinstance(data, list):
        if not data:
            raise ValueError("[MAIXPY]kpu: check input list format err!\r\n")
        values = np.asarray(data, dtype=np.float32).reshape(-1)
        if values.size != spec.size:
            print(
                f"[maixemu] the list has {values.size} values, the model reads {spec.size}; the device does not "
                "check and reads past or short of it — padded with zeros / truncated here",
                file=sys.stderr,
            )
            values = np.resize(np.concatenate([values, np.zeros(max(spec.size - values.size, 0), np.float32)]), spec.size)
        return values.astype(spec.dtype).reshape(spec.shape)
    raise ValueError("input not support")


def _v3_fmap(net: kpu_net, output: np.ndarray, layer_index: int, key) -> kpu_fmap:
    layer = net.model.layers[layer_index]
    if layer.on_kpu:
        data = net._store(key, np.asarray(output, dtype=np.uint8))
        ch, h, w = ((1, 1, 1) + tuple(layer.output_shapes[0]))[-3:] if layer.output_shapes else (1, 1, data.size)
        # nncase stores the DMA byte count as w*h*ch - 1 and the firmware reports it unchanged.
        return kpu_fmap(data, size=max(w * h * ch - 1, 0), index=layer_index, w=w, h=h, ch=ch, typecode="B")
    typecode = net.model.layer_output_typecode(layer_index)  # the kmodel's layer table says
    values = np.asarray(output, dtype=np.float32 if typecode == "f" else np.uint8).reshape(-1)
    data = net._store(key, values)
    nbytes = data.nbytes
    # Firmware bug kept: the element-size helper returns 1, so w is the byte count.
    return kpu_fmap(data, size=nbytes, index=layer_index, w=nbytes, h=1, ch=1, typecode=typecode)


def _v4_fmap(net: kpu_net, output: np.ndarray, out_index: int) -> kpu_fmap:
    shape = net._output_shapes.get(out_index)
    count = int(np.asarray(output).size)
    if shape is None:
        raise OSError(
            codes.with_advice(
                codes.error_text(codes.OUTPUTS_NODONE),
                f"V4 models need kpu.set_outputs(task, {out_index}, w, h, ch) before forward/run_yolo2; "
                f"output {out_index} has {count} values (w*h*ch must equal it; `maixemu info MODEL` lists them)",
            )
        )
    data = net._store(("out", out_index), np.asarray(output, dtype=np.float32).reshape(-1))
    w, h, ch = shape
    return kpu_fmap(data, size=data.nbytes, index=len(net.model.layers) - 1, w=w, h=h, ch=ch, typecode="f")


def _run(net: kpu_net, data, out_index: int, call: str) -> kpu_fmap:
    model = net.model
    x = _input_array(net, data, call)
    limit = net._layer_limit
    try:
        if model.version == 3 and limit and limit < len(model.layers):
            last = None
            for step in model.trace(x, limit=limit):
                last = step
            fm = _v3_fmap(net, last.output, limit - 1, ("layer", limit - 1))
        else:
            outputs = model.run(x)
            if not 0 <= out_index < len(outputs):
                raise OSError("sipeed_kpu_get_output err")
            if model.version == 3:
                fm = _v3_fmap(net, outputs[out_index], len(model.layers) - 1, ("out", out_index))
            else:
                fm = _v4_fmap(net, outputs[out_index], out_index)
    except (OSError, ValueError):
        raise
    except Exception as exc:  # a model that cannot run: the device's run error, with the reason
        raise OSError(codes.with_advice(codes.error_text(codes.RUN_MODEL), f"{type(exc).__name__}: {exc}")) from exc
    net._last[out_index] = fm
    if kpu_calls.enabled():
        kpu_calls.record(
            call, net._label, input_shape=list(x.shape), out_index=out_index,
            fmap={"w": fm.w(), "h": fm.h(), "ch": fm.ch(), "typecode": fm.typecode(), "size": fm.size()},
            output=kpu_calls.summarize(fm._items()),
        )
    return fm


def forward(kpu_net=None, img=None, out_index: int = 0, dma: int = -1) -> kpu_fmap:
    """Run the model on an image's AI buffer (or a list of floats); returns output ``out_index``."""
    net = _check_net(kpu_net)
    return _run(net, img, int(out_index), "kpu.forward")


def get_output(*args) -> kpu_fmap:
    if len(args) != 2 or not isinstance(args[0], kpu_net) or not isinstance(args[1], int):
        raise ValueError("[MAIXPY]kpu: get_output arg format error: get_output(task, int idx)")
    net, idx = args
    fm = net._last.get(idx)
    if fm is None:
        raise OSError("get_output err" if net.model.version == 4 else str(codes.RUN_MODEL))
    return fm


def fmap(fm: kpu_fmap, ch: int):
    """Channel ``ch`` of a uint8 feature map as a grayscale image that shares the fmap's memory."""
    from . import image as image_module

    if fm.typecode() == "f":
        raise ValueError("[MAIXPY]kpu: can't convet float fmap yet\r\n")
    if not 0 <= ch < fm.ch():
        raise ValueError(f"[MAIXPY]kpu: ch err,input 0~{fm.ch()}\r\n")
    plane_size = fm.w() * fm.h()
    flat = fm._data.reshape(-1)
    plane = flat[ch * plane_size : (ch + 1) * plane_size]
    if plane.size < plane_size:  # the last byte is outside the reported size on the device too
        plane = np.concatenate([plane, np.zeros(plane_size - plane.size, np.uint8)])
    return image_module.Image._from_gray_view(plane.reshape(fm.h(), fm.w()))


def fmap_free(fm) -> None:
    return None


def init_yolo2(kpu_net=None, threshold=None, nms_value=None, anchor_number=None, anchor=None, dma: int = -1) -> bool:
    net = _check_net(kpu_net)
    if threshold is None or nms_value is None or anchor_number is None or anchor is None:
        raise TypeError("function missing required positional arguments (kpu_net, threshold, nms_value, anchor_number, anchor)")
    threshold, nms_value = float(threshold), float(nms_value)
    if not 0 <= threshold <= 1:
        raise ValueError("[MAIXPY]kpu: threshold only support 0 to 1")
    if not 0 <= nms_value <= 1:
        raise ValueError("[MAIXPY]kpu: nms_value only support 0 to 1")
    if int(anchor_number) <= 0:
        raise ValueError("[MAIXPY]kpu: anchor_number should > 0")
    anchors = tuple(float(a) for a in fixed_items(anchor, 2 * int(anchor_number)))  # mp_obj_get_array_fixed_n
    net._yolo = _yolo2_args(threshold, nms_value, anchors)
    return True


class kpu_yolo2_find:  # noqa: N801 - the firmware's type name
    def __init__(self, box: RegionBox, index: int, count: int):
        self._box, self._index, self._count = box, index, count

    def rect(self) -> tuple[int, int, int, int]:
        b = self._box
        return (b.x, b.y, b.w, b.h)

    def x(self) -> int:
        return self._box.x

    def y(self) -> int:
        return self._box.y

    def w(self) -> int:
        return self._box.w

    def h(self) -> int:
        return self._box.h

    def classid(self) -> int:
        return self._box.classid

    def value(self) -> float:
        return self._box.value

    def index(self) -> int:
        return self._index

    def objnum(self) -> int:
        return self._count

    def __repr__(self) -> str:
        b = self._box
        return (
            f'{{"x":{b.x}, "y":{b.y}, "w":{b.w}, "h":{b.h}, "value":{b.value:f}, '
            f'"classid":{b.classid}, "index":{self._index}, "objnum":{self._count}}}'
        )


def _last_layer_whc(net: kpu_net) -> tuple[int, int, int]:
    model = net.model
    if model.version == 4:
        shape = net._output_shapes.get(0)
        if shape is None:
            raise OSError(
                codes.with_advice(
                    codes.error_text(codes.OUTPUTS_NODONE),
                    f"call kpu.set_outputs(task, 0, w, h, ch) first; output 0 has {model.outputs[0].size} values",
                )
            )
        return shape
    convs = [layer for layer in model.layers if layer.on_kpu and layer.output_shapes]
    if not convs:
        raise ValueError("[MAIXPY]kpu: region_layer_init err!\r\n")
    ch, h, w = tuple(convs[-1].output_shapes[0])[-3:]
    return w, h, ch


def run_yolo2(kpu_net=None, img=None):
    """Run the model and decode its YOLOv2 output; ``None`` when nothing is found (as the firmware)."""
    net = _check_net(kpu_net)
    if net._yolo is None:
        raise ValueError(codes.with_advice("[MAIXPY]kpu: kpu_net has no yolo2 args", "call kpu.init_yolo2(task, threshold, nms, anchor_num, anchors) first (the device would crash)"))
    chw = _model_input_chw(net)
    model = net.model
    x = _input_array(net, img, "kpu.run_yolo2")
    lw, lh, ch = _last_layer_whc(net)
    try:
        output = model.run(x)[0]
    except Exception as exc:
        raise OSError(codes.with_advice(codes.error_text(codes.RUN_MODEL), f"{type(exc).__name__}: {exc}")) from exc
    net._store(("out", 0), np.asarray(output))
    args = net._yolo
    boxes = region_layer(
        np.asarray(output, dtype=np.float32),
        layer_w=lw,
        layer_h=lh,
        anchors=args.anchor(),
        threshold=args.threshold(),
        nms_value=args.nms_value(),
        classes=ch // 5 - 5,
        net_w=chw[2],
        net_h=chw[1],
    )
    if kpu_calls.enabled():
        kpu_calls.record(
            "kpu.run_yolo2", net._label, input_shape=list(x.shape),
            boxes=[{"rect": [b.x, b.y, b.w, b.h], "classid": b.classid, "value": b.value} for b in boxes],
        )
    if not boxes:
        return None
    return [kpu_yolo2_find(box, i, len(boxes)) for i, box in enumerate(boxes)]


_POOL_CODES = {name: code for code, name in POOL_NAMES.items()}


class kpu_netinfo_find:  # noqa: N801
    def __init__(self, index: int, layer):
        self._index = index
        self._layer = layer
        details = layer.details or {}
        self._type = int(details.get("code", 0))
        on_kpu = layer.on_kpu
        ins = tuple(layer.input_shapes[0])[-3:] if on_kpu and layer.input_shapes else (0, 0, 0)
        outs = tuple(layer.output_shapes[0])[-3:] if on_kpu and layer.output_shapes else (0, 0, 0)
        self._chi, self._hi, self._wi = (tuple(ins) + (0, 0, 0))[:3]
        self._cho, self._ho, self._wo = (tuple(outs) + (0, 0, 0))[:3]
        self._dw = int(bool(details.get("depthwise", False))) if on_kpu else 0
        self._kernel = int(details.get("kernel") == "3x3") if on_kpu else 0
        self._pool = _POOL_CODES.get(details.get("pool", "bypass"), 0) if on_kpu else 0
        self._para = int(layer.param_bytes)

    def index(self): return self._index
    def type(self): return self._type
    def wi(self): return self._wi
    def hi(self): return self._hi
    def wo(self): return self._wo
    def ho(self): return self._ho
    def chi(self): return self._chi
    def cho(self): return self._cho
    def dw(self): return self._dw
    def kernel_type(self): return self._kernel
    def pool_type(self): return self._pool
    def para_size(self): return self._para

    def __repr__(self) -> str:
        return (
            f'{{"index":{self._index}, "type":"{self._layer.kind}", "wi":{self._wi}, "hi":{self._hi}, '
            f'"wo":{self._wo}, "ho":{self._ho}, "chi":{self._chi}, "cho":{self._cho}, "dw":{self._dw}, '
            f'"kernel_type":{self._kernel}, "pool_type":{self._pool}, "para_size":{self._para}}}'
        )


def netinfo(net) -> list:
    net = _check_net(net)
    layers = net.model.layers
    if net._layer_limit:
        layers = layers[: net._layer_limit]
    if not layers:
        raise ValueError("get layer num error!")
    infos = [kpu_netinfo_find(i, layer) for i, layer in enumerate(layers)]
    for info in infos:
        print(info)
    return infos


def memtest() -> None:
    import importlib

    from .registry import MAIXPY_MODULES

    gc_free = importlib.import_module(MAIXPY_MODULES["gc"]).mem_free()
    sys_free = max(kpu_loader.budget().free(), 0)
    print(f"###free gc heap memory : {gc_free // 1024} KB")
    print(f"###free sys heap memory: {sys_free // 1024} KB")


def face_encode(feature: Sequence[float]) -> bytearray:
    values = np.asarray(list(feature), dtype=np.float64)
    if values.size > 512:
        raise ValueError("feature dim <=200\r\n")
    peak = float(np.max(np.abs(values))) if values.size else 0.0
    scale = 127.0 / peak if peak > 0 else 0.0
    quantised = np.clip(np.round(values * scale), -128, 127).astype(np.int8)
    return bytearray(quantised.tobytes())


def face_compare(a, b) -> float:
    va = np.frombuffer(bytes(a), dtype=np.int8).astype(np.float64)
    vb = np.frombuffer(bytes(b), dtype=np.int8).astype(np.float64)
    if va.size != vb.size:
        raise ValueError("compare feature must in same dim!\r\n")
    norm = math.sqrt(float(va @ va) * float(vb @ vb))
    cosine = float(va @ vb) / norm if norm else 0.0
    return (cosine / 2 + 0.5) * 100


from .kpu_classifier import classifier  # noqa: E402  (needs the names above)
