"""One KPU run of a legacy ``kpu`` model, as ``Maix_kpu.c`` does it: the AI buffer read and checked,
the model run (V3 up to ``set_layers``), the output typed into a ``kpu_fmap``, the call logged.

V3 outputs are typed by the last executed layer (a conv gives raw uint8 with its real w/h/ch; a
float layer gives ``w`` = byte count, a firmware bug kept); V4 outputs need ``set_outputs`` first.
``kpu.forward``, ``kpu.run_yolo2`` and ``kpu.classifier`` run models through here.
"""

from __future__ import annotations


import numpy as np

from .. import ai_memory as _ai_memory
from .. import ide_events
from ..notices import hint
from ..state import checkpoint
from . import calls as kpu_calls
from . import errors as codes
from .fmap import kpu_fmap
from .net import kpu_net


def model_input_chw(net: kpu_net) -> tuple[int, int, int]:
    model = net.model
    spec = model.inputs[0]
    if model.version == 3 and (not model.layers or not model.layers[0].on_kpu):
        raise ValueError("[MAIXPY]kpu: first layer not conv layer!\r\n")
    shape = tuple(int(s) for s in spec.shape)
    if len(shape) < 3 or spec.memory != "kpu" and np.dtype(spec.dtype) != np.uint8:
        raise codes.advised(ValueError("[MAIXPY]kpu: check img format err!\r\n"),
                            f"this model takes {np.dtype(spec.dtype).name} input of shape {shape}, not an image; "
                            "pass a list of numbers: kpu.forward(task, [..])")
    return shape[-3], shape[-2], shape[-1]


def input_array(net: kpu_net, data, call: str) -> np.ndarray:
    from .. import image as image_module

    checkpoint()  # a KPU call is a firmware call: the run's end reaches a script here too
    model = net.model
    spec = model.inputs[0]
    if isinstance(data, image_module.Image):
        chw = model_input_chw(net)
        ai = _ai_memory.read_ai_input(data, chw, call)
        kpu_calls.notify_input(ai, call)
        ide_events.kpu_call(call, model)
        return ai.reshape(spec.shape)
    if isinstance(data, list):
        if not data:
            raise ValueError("[MAIXPY]kpu: check input list format err!\r\n")
        values = np.asarray(data, dtype=np.float32).reshape(-1)
        if values.size != spec.size:
            hint(f"the list has {values.size} values, the model reads {spec.size}; the device does not "
                 "check and reads past or short of it — padded with zeros / truncated here")
            values = np.resize(np.concatenate([values, np.zeros(max(spec.size - values.size, 0), np.float32)]), spec.size)
        return values.astype(spec.dtype).reshape(spec.shape)
    raise ValueError("input not support")


def v3_fmap(net: kpu_net, output: np.ndarray, layer_index: int, key) -> kpu_fmap:
    layer = net.model.layers[layer_index]
    if layer.on_kpu:
        data = net._store(key, np.asarray(output, dtype=np.uint8))
        ch, h, w = ((1, 1, 1) + tuple(layer.output_shapes[0]))[-3:] if layer.output_shapes else (1, 1, data.size)
        # nncase stores the DMA byte count as w*h*ch - 1 and the firmware reports it unchanged.
        return kpu_fmap(data, size=max(w * h * ch - 1, 0), index=layer_index, w=w, h=h, ch=ch, typecode="B")
    typecode = net.model.layer_output_typecode(layer_index)  # the kmodel's layer table says
    # The output buffer's bytes read as the last layer's type (an output another layer wrote in
    # another type is reinterpreted, as the firmware's pointer cast does).
    raw = np.ascontiguousarray(output).reshape(-1).view(np.uint8)
    values = raw[: raw.size // 4 * 4].view("<f4") if typecode == "f" else raw
    data = net._store(key, values)
    nbytes = data.nbytes
    # Firmware bug kept: the element-size helper returns 1, so w is the byte count.
    return kpu_fmap(data, size=nbytes, index=layer_index, w=nbytes, h=1, ch=1, typecode=typecode)


def v4_fmap(net: kpu_net, output: np.ndarray, out_index: int, *, shape_set: bool = True) -> kpu_fmap:
    """Output ``out_index`` as a float fmap shaped by ``set_outputs``. ``shape_set`` False: a shape
    never set reads as 0x0x0 (``sipeed_kpu_get_outputs_shape`` returns the zeroed table entry)
    instead of failing as ``forward`` does."""
    shape = net._output_shapes.get(out_index, None if shape_set else (0, 0, 0))
    count = int(np.asarray(output).size)
    if shape is None:
        raise codes.advised(OSError(codes.error_text(codes.OUTPUTS_NODONE)),
                            f"V4 models need kpu.set_outputs(task, {out_index}, w, h, ch) before forward/run_yolo2; "
                            f"output {out_index} has {count} values (w*h*ch must equal it; `maixemu info MODEL` lists them)")
    data = net._store(("out", out_index), np.asarray(output, dtype=np.float32).reshape(-1))
    w, h, ch = shape
    return kpu_fmap(data, size=data.nbytes, index=len(net.model.layers) - 1, w=w, h=h, ch=ch, typecode="f")


def output_memory(net: kpu_net) -> list[np.ndarray]:
    """The model's output buffers as its last complete run left them (zeros before any: the
    firmware allocates them when it loads the model). Every run of the whole model writes all of
    them, whichever output the call reads: ``kpu.get_output(task, i)`` reads them afterwards."""
    if net._outputs is None:
        net._outputs = [np.zeros(spec.shape, spec.dtype) for spec in net.model.outputs]
    return net._outputs


def run_model(net: kpu_net, x: np.ndarray) -> list[np.ndarray]:
    """Run the whole model on ``x``; its outputs become the model's output memory."""
    try:
        outputs = [np.asarray(o) for o in net.model.run(x)]
    except Exception as exc:  # a model that cannot run: the device's run error, with the reason
        raise codes.advised(OSError(codes.error_text(codes.RUN_MODEL)), f"{type(exc).__name__}: {exc}") from exc
    net._outputs = outputs
    return outputs


def output_fmap(net: kpu_net, out_index: int, *, shape_set: bool = True) -> kpu_fmap | None:
    """Output ``out_index`` of the output memory typed as ``sipeed_kpu_get_output`` hands it out:
    V3 by the model's last layer (for every output index, as the firmware does), V4 by its
    ``set_outputs`` shape (see :func:`v4_fmap` for ``shape_set``). None when there is no such output."""
    outputs = output_memory(net)
    if not 0 <= out_index < len(outputs):
        return None
    if net.model.version == 3:
        return v3_fmap(net, outputs[out_index], len(net.model.layers) - 1, ("out", out_index))
    return v4_fmap(net, outputs[out_index], out_index, shape_set=shape_set)


def run(net: kpu_net, data, out_index: int, call: str) -> kpu_fmap:
    model = net.model
    x = input_array(net, data, call)
    limit = net._layer_limit
    if model.version == 3 and limit and limit < len(model.layers):
        try:
            *_, last = model.trace(x, limit=limit)
        except Exception as exc:  # a model that cannot run: the device's run error, with the reason
            raise codes.advised(OSError(codes.error_text(codes.RUN_MODEL)), f"{type(exc).__name__}: {exc}") from exc
        fm = v3_fmap(net, last.output, limit - 1, ("layer", limit - 1))
    else:
        run_model(net, x)
        found = output_fmap(net, out_index)
        if found is None:
            raise OSError("sipeed_kpu_get_output err")
        fm = found
    if kpu_calls.enabled():
        kpu_calls.record(
            call, net._label, input_shape=list(x.shape), out_index=out_index,
            fmap={"w": fm.w(), "h": fm.h(), "ch": fm.ch(), "typecode": fm.typecode(), "size": fm.size()},
            output=kpu_calls.summarize(fm._items()),
        )
    return fm


def last_layer_whc(net: kpu_net) -> tuple[int, int, int]:
    model = net.model
    if model.version == 4:
        shape = net._output_shapes.get(0)
        if shape is None:
            raise codes.advised(OSError(codes.error_text(codes.OUTPUTS_NODONE)),
                                f"call kpu.set_outputs(task, 0, w, h, ch) first; output 0 has {model.outputs[0].size} values")
        return shape
    convs = [layer for layer in model.layers if layer.on_kpu and layer.output_shapes]
    if not convs:
        raise ValueError("[MAIXPY]kpu: region_layer_init err!\r\n")
    ch, h, w = tuple(convs[-1].output_shapes[0])[-3:]
    return w, h, ch


__all__ = ["input_array", "last_layer_whc", "model_input_chw", "output_fmap", "output_memory", "run", "run_model"]
