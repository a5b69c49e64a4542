"""The newer class API (``from maix import KPU``; CanMV firmware): ``KPU()`` objects.

Same engine and region layer as the legacy module; the differences are the firmware's: no image
size check, ``run_with_output`` returns lists, ``regionlayer_yolo2`` returns ``[]`` (not ``None``)
and scales boxes to ``img_w x img_h`` with darknet's letterbox correction, and the class count is
an argument.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..host import storage
from . import KPU as legacy
from . import ai_memory, kpu_calls, kpu_loader
from .yolo2 import region_layer

_AI_MISSING = "Image formart error, use pix_to_ai() method to convert for kpu"


class KPU:
    """One model slot, as ``kpu = KPU(); kpu.load_kmodel("/sd/x.kmodel")``."""

    def __init__(self):
        self._net: legacy.kpu_net | None = None
        self._output: np.ndarray | None = None
        self._yolo: dict | None = None

    def load_kmodel(self, path_or_addr, size: int = 0) -> None:
        if isinstance(path_or_addr, int) and not isinstance(path_or_addr, bool):
            if size <= 0:
                raise ValueError("size error!")
            source = path_or_addr
        elif isinstance(path_or_addr, str):
            source = path_or_addr
            try:
                print(f"model size {storage.resolve(path_or_addr).stat().st_size}")
            except OSError:
                pass
        else:
            raise ValueError("path error!")
        try:
            model, file_size, label = kpu_loader.load_model(source)
        except ValueError as exc:
            text = str(exc)
            if "2001" in text or "2005" in text:
                raise OSError("Failed to read file") from exc
            if "2006" in text:
                raise MemoryError("model buffer memory allocation failed") from exc
            raise OSError("Failed to init model\n" + text.split("\n", 1)[-1]) from exc
        net = legacy.kpu_net(model, source, file_size, label, streamed=False)
        try:
            kpu_loader.reserve(net, model, file_size, streamed=False, flash=False)
        except ValueError as exc:
            raise MemoryError("model buffer memory allocation failed") from exc
        if self._net is not None:
            kpu_loader.release(self._net)
        self._net = net
        print("model load succeed")

    def _require(self) -> legacy.kpu_net:
        if self._net is None:
            raise OSError("Model Buffer maybe dirty!\n[maixemu] call kpu.load_kmodel(path) first")
        return self._net

    def run_with_output(self, img=None, getlist: bool = False, get_feature: bool = False):
        from . import image as image_module

        net = self._require()
        model = net.model
        if isinstance(img, str):
            img = image_module.Image(img)
            img.pix_to_ai()
        if not isinstance(img, image_module.Image):
            raise OSError(_AI_MISSING)
        ai = img._ai_array()
        if ai is None:
            raise OSError(_AI_MISSING)
        ai_memory._check_stale(img, "KPU.run_with_output")
        kpu_calls.notify_input(ai, "KPU.run_with_output")
        spec = model.inputs[0]
        flat = np.asarray(ai, dtype=np.uint8).reshape(-1)
        if flat.size != spec.size:
            print(
                f"[maixemu] the image's AI buffer has {flat.size} bytes, the model reads {spec.size} "
                f"(shape {spec.shape}); the class API does not check sizes and the result is garbage on the device",
                file=sys.stderr,
            )
            flat = np.resize(flat, spec.size)
        try:
            output = model.run(flat.reshape(spec.shape).astype(spec.dtype))[0]
        except Exception as exc:
            raise OSError(f"Model Buffer maybe dirty!\n[maixemu] {type(exc).__name__}: {exc}") from exc
        self._output = np.asarray(output, dtype=np.float32).reshape(-1)
        if kpu_calls.enabled():
            kpu_calls.record("KPU.run_with_output", net._label, input_shape=list(spec.shape),
                             output=kpu_calls.summarize(self._output))
        if get_feature:
            if self._output.size > 256:
                raise ValueError("feature len out of 256\r\n")
            norm = float(np.linalg.norm(self._output))
            return (self._output / norm if norm else self._output).tolist()
        if getlist:
            return self._output.tolist()
        return None

    def init_yolo2(
        self,
        anchor=None,
        anchor_num: int = 5,
        img_w: int = 320,
        img_h: int = 240,
        net_w: int = 320,
        net_h: int = 240,
        layer_w: int = 10,
        layer_h: int = 8,
        threshold: float = 0.7,
        nms_value: float = 0.4,
        classes: int = 1,
    ) -> None:
        if anchor is None:
            raise ValueError("need input anchor")
        self._yolo = dict(
            anchors=tuple(float(a) for a in anchor)[: 2 * int(anchor_num)],
            img_w=int(img_w), img_h=int(img_h), net_w=int(net_w), net_h=int(net_h),
            layer_w=int(layer_w), layer_h=int(layer_h), threshold=float(threshold),
            nms_value=float(nms_value), classes=int(classes),
        )

    def regionlayer_yolo2(self) -> list:
        if self._yolo is None or self._output is None:
            raise OSError("Model Buffer maybe dirty!\n[maixemu] call init_yolo2() and run_with_output() first")
        y = self._yolo
        boxes = region_layer(
            self._output, layer_w=y["layer_w"], layer_h=y["layer_h"], anchors=y["anchors"],
            threshold=y["threshold"], nms_value=y["nms_value"], classes=y["classes"],
            net_w=y["net_w"], net_h=y["net_h"], img_w=y["img_w"], img_h=y["img_h"],
        )
        return [[b.x, b.y, b.w, b.h, b.classid, b.value] for b in boxes]

    def feature_compare(self, f0, f1) -> float:
        return feature_compare(f0, f1)

    def deinit(self) -> None:
        if self._net is not None:
            legacy.deinit(self._net)
        self._net = None
        self._output = None


def feature_compare(f0, f1) -> float:
    a = np.asarray(list(f0), dtype=np.float64)
    b = np.asarray(list(f1), dtype=np.float64)
    if a.size != b.size:
        raise ValueError("feature len error")
    norm = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / norm if norm else 0.0
