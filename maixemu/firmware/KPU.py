"""MaixPy's ``KPU`` module (``import KPU as kpu``): load kmodels, run them on images, decode YOLOv2.

Semantics follow the firmware (maixpy-api.md §1): the KPU reads the image's AI buffer only, no
resizing happens, V3 outputs are typed by the last executed layer (a conv gives raw uint8 with its
real w/h/ch; a float layer gives ``w`` = byte count), V4 outputs need ``set_outputs`` first, and
``run_yolo2`` returns ``None`` when nothing is found. Error texts are the firmware's; where maixemu
knows what to do on the PC it adds one ``[maixemu]`` line.

This module holds the MaixPy functions; their helpers are the ``maixemu.firmware.kpu`` package
(``net``: the returned objects, ``run``: one model run, ``loader``: files and the memory budget,
``region``: YOLOv2 decoding, ``face``, ``classifier``, ``fmap``, ``calls``, ``errors``).
"""

from __future__ import annotations


import numpy as np

from .kpu import calls as kpu_calls
from .kpu import errors as codes
from .kpu import loader as kpu_loader
from .kpu.classifier import classifier
from .kpu.face import face_compare, face_encode
from .kpu.fmap import kpu_fmap
from .kpu.net import check_net, kpu_net, kpu_netinfo_find, kpu_yolo2_find, yolo2_args
from .kpu.region import region_layer
from .kpu.run import input_array, last_layer_whc, model_input_chw, output_fmap, run, run_model
from .mp_args import fixed_items
from .notices import hint

__all__ = [
    "load", "load_flash", "deinit", "set_outputs", "forward", "get_output", "fmap", "fmap_free",
    "set_layers", "init_yolo2", "run_yolo2", "netinfo", "memtest", "face_encode", "face_compare",
    "classifier",
]


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
    net = check_net(net)
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
        hint(f"set_outputs is for V4 models; this is a V{net.model.version} model, whose output shape its "
             "last layer gives: leave the call out")
        return False
    count = _flat_output_count(net, idx)
    if count is None:
        print(f"[MAIXPY]kpu: set_outputs arg value error:kmodel output idx {idx} out of range\r\n", end="")
        hint(f"the model has {len(net.model.outputs)} output(s), numbered from 0 (`maixemu info MODEL` lists them)")
        return False
    if w * h * ch != count:
        print("[MAIXPY]kpu: set_outputs arg value error: w,c,ch size not match output size\r\n", end="")
        hint(f"output {idx} has {count} values; w*h*ch = {w}*{h}*{ch} = {w * h * ch} (`maixemu info MODEL` "
             "lists each output's shape)")
        return False
    net._output_shapes[idx] = (w, h, ch)
    return True


def set_layers(net, n) -> bool:
    net = check_net(net)
    total = len(net.model.layers)
    n = int(n)
    if n > total:
        print(f"err: set layers_length to {n}, but max {total}\r\n", end="")
        hint(f"the model has {total} layers: kpu.set_layers(task, 1..{total})")
        return False
    net._layer_limit = max(n, 0)
    return True


def forward(kpu_net=None, img=None, out_index: int = 0, dma: int = -1) -> kpu_fmap:
    """Run the model on an image's AI buffer (or a list of floats); returns output ``out_index``."""
    net = check_net(kpu_net)
    return run(net, img, int(out_index), "kpu.forward")


def get_output(*args) -> kpu_fmap:
    """Output ``idx`` of the model's last run (``py_kpu_get_output``): it reads the output buffers
    the last ``forward``/``run_yolo2`` wrote (every output, whichever one that call returned) and
    runs nothing. V3 outputs are typed by the last layer; a V4 output has its ``set_outputs``
    shape, 0x0x0 while none was set (the library hands out the zeroed table entry)."""
    if len(args) != 2 or not isinstance(args[0], kpu_net) or type(args[1]) is not int:
        raise ValueError("[MAIXPY]kpu: get_output arg format error: get_output(task, int idx)")
    net, idx = args
    idx &= 0xFFFF  # the firmware keeps it in a uint16_t
    fm = output_fmap(net, idx, shape_set=False)
    if fm is None:  # the library's range check: ERR_PARAM for V3; the firmware's text for V4
        count = len(net.model.outputs)
        advice = f"the model has {count} output(s), numbered from 0 (`maixemu info MODEL` lists them)"
        raise codes.advised(OSError("get_output err" if net.model.version == 4 else str(codes.PARAM)), advice)
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
    net = check_net(kpu_net)
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
    net._yolo = yolo2_args(threshold, nms_value, anchors)
    return True


def run_yolo2(kpu_net=None, img=None):
    """Run the model and decode its YOLOv2 output; ``None`` when nothing is found (as the firmware)."""
    net = check_net(kpu_net)
    if net._yolo is None:
        raise codes.advised(ValueError("[MAIXPY]kpu: kpu_net has no yolo2 args"), "call kpu.init_yolo2(task, threshold, nms, anchor_num, anchors) first (the device would crash)")
    chw = model_input_chw(net)
    model = net.model
    x = input_array(net, img, "kpu.run_yolo2")
    lw, lh, ch = last_layer_whc(net)
    output = run_model(net, x)[0]
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


def netinfo(net) -> list:
    net = check_net(net)
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
