"""The released CanMV ``maix.KPU`` (branch ``main``, ``Maix_kpu.c``): ``load_kmodel``/``run_with_output``.

``KPU`` is a type there: ``KPU()`` objects load with ``load_kmodel(path | addr, size)``, run with
``run_with_output(img | path, getlist=, get_feature=)``, decode YOLOv2 with ``init_yolo2`` +
``regionlayer_yolo2`` (boxes scaled to ``img_w x img_h`` with darknet's letterbox correction), score
features with ``feature_compare`` (0..100) and read licence plates with
``lp_recog_load_weight_data`` + ``lp_recog``. ``sigmoid``, ``softmax`` and ``feature_compare`` work
on the class and on an instance (the C functions skip a leading ``KPU`` argument).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import advised
from .region import region_layer
from . import algorithm
from . import canmv_model as slot
from ..mp_args import float_arg, int_arg, items_of, require_list

_AI_MISSING = "Image formart error, use pix_to_ai() method to convert for kpu"
_DIRTY = "Model Buffer maybe dirty!"


def _leading_self(args: tuple, wanted: int) -> tuple | None:
    """The C rule of the class-or-instance helpers: drop a leading KPU, then exactly ``wanted`` args."""
    from .canmv import KPU

    if len(args) == wanted + 1 and isinstance(args[0], KPU):
        return args[1:]
    if len(args) == wanted and (not args or not isinstance(args[0], KPU)):
        return args
    return None


def _whole_file(path: str, announce: str | None = None, failure: str = "model buffer memory allocation failed") -> bytes:
    """``get_file_size`` + malloc + ``load_file_from_ff``: the whole file, its size printed first if asked."""
    size = slot.file_size(path)
    if announce is not None:
        print(announce.format(size), end="")
    slot.check_allocation(size, failure.format(size))
    data = slot.read_file(path, size)
    if data is None:
        raise OSError("Failed to read file")
    return data


class ReleasedApi:
    """Methods of the released ``KPU`` type; state lives in :class:`~.canmv.KPU`."""

    _loaded: slot.LoadedModel | None
    _yolo: dict[str, Any] | None
    _lp_weights: bytes | None
    _ran: bool

    def _commit(self, family: str, method: str) -> None:  # provided by KPU
        raise NotImplementedError

    # ---------------------------------------------------------------------------- loading
    def load_kmodel(self, path=None, size=0) -> None:
        """``load_kmodel(path)`` or ``load_kmodel(flash_addr, size)``; prints ``model load succeed``."""
        self._commit("released", "load_kmodel")
        size = int_arg(size)
        if path is None:
            raise ValueError("invalid path input")
        if isinstance(path, str):
            data = _whole_file(path, "model size {} \r\n")
            source: int | str = path
            label = path
        elif isinstance(path, int):
            if path <= 0:
                raise ValueError("path error!")
            if size <= 0:
                raise ValueError("size error!")
            slot.check_allocation(size, "model buffer memory allocation failed")
            mapped = slot.mapped_flash(path)
            data = slot.read_flash(path, size)
            source, label = path, f"flash 0x{path:x}"
            if mapped is None:
                raise advised(OSError("Failed to init model"), slot.unmapped_advice(path))
        else:
            raise ValueError("path error!")
        self._replace_model(data, label, source)
        print("model load succeed\r\n", end="")

    def _replace_model(self, data: bytes, label: str, source: int | str) -> None:
        if self._loaded is not None:  # the firmware leaks the old buffer; maixemu gives it back
            self._loaded.release()
            self._loaded = None
        try:
            self._loaded = slot.parse_and_reserve(data, label, source)
        except slot.ModelParseError as exc:
            raise advised(OSError("Failed to init model"), exc.advice) from None
        except slot.ModelMemoryError as exc:
            raise advised(MemoryError("model buffer memory allocation failed"), exc.advice) from None
        self._ran = False

    # ---------------------------------------------------------------------------- running
    def run_with_output(self, input=None, getlist=False, get_feature=False):  # noqa: A002 - firmware name
        """Run on an image's AI buffer (or a file's raw bytes); ``getlist``/``get_feature`` return lists."""
        from .. import image as image_module

        self._commit("released", "run_with_output")
        if input is None:
            raise ValueError("invalid input")
        if isinstance(input, str):
            flat = np.frombuffer(_whole_file(input, failure="memory allocation failed, allocating {} bytes"), dtype=np.uint8)
        elif isinstance(input, image_module.Image):
            ai = slot.ai_input(input, "KPU.run_with_output")
            if ai is None:
                raise OSError(_AI_MISSING)
            flat = ai.reshape(-1)
        else:
            raise ValueError("invalid input")
        loaded = self._require_model("run_with_output")
        try:
            slot.run_model(loaded, flat, "KPU.run_with_output")
        except (OSError, ValueError, MemoryError):
            raise
        except Exception as exc:
            raise advised(OSError(_DIRTY), f"{type(exc).__name__}: {exc}") from exc
        self._ran = True
        output = loaded.output_floats(0)
        if output is None:
            # no output 0: Maix_kpu.c ignores kpu_get_output's failure and lists output_size[0]
            # floats of a model that has none (was a TypeError here)
            output = np.zeros(0, np.float32)
        if getlist:
            return [float(v) for v in output]
        if get_feature:
            if output.size > algorithm.MAX_FEATURE_LEN:
                raise ValueError("feature len out of 256\r\n")
            return [float(v) for v in algorithm.l2normalize(output)]
        return None

    def _require_model(self, method: str) -> slot.LoadedModel:
        if self._loaded is None:
            raise advised(OSError(_DIRTY), f"call kpu.load_kmodel(path) before {method}() (the device would crash)")
        return self._loaded

    def _last_output(self, method: str) -> np.ndarray:
        loaded = self._require_model(method)
        output = loaded.output_floats(0) if self._ran else None
        if output is None:
            raise advised(OSError(_DIRTY), f"call kpu.run_with_output(img) before {method}() (the device reads "
                          "an output buffer that was never written)")
        return output

    # ---------------------------------------------------------------------------- YOLOv2
    def init_yolo2(self, anchor=None, anchor_num=5, img_w=320, img_h=240, net_w=320, net_h=240, layer_w=10,
                   layer_h=8, threshold=None, nms_value=None, classes=1) -> None:
        """Region-layer parameters; ``threshold``/``nms_value`` default to 0.7/0.4, ``classes=0``: objectness only."""
        self._commit("released", "init_yolo2")
        ints = dict(anchor_num=anchor_num, img_w=img_w, img_h=img_h, net_w=net_w, net_h=net_h,
                    layer_w=layer_w, layer_h=layer_h, classes=classes)
        values = {name: int_arg(v) for name, v in ints.items()}
        thr = 0.7 if threshold is None else float_arg(threshold)
        nms = 0.4 if nms_value is None else float_arg(nms_value)
        if anchor is None:
            raise ValueError("need input anchor")
        anchors = tuple(float_arg(a) for a in items_of(anchor))
        self._yolo = dict(anchors=anchors, threshold=thr, nms_value=nms, **values)

    def regionlayer_yolo2(self) -> list:
        """``[[x, y, w, h, classid, prob], ...]`` from the last ``run_with_output``; ``[]`` when nothing is found."""
        self._commit("released", "regionlayer_yolo2")
        y = self._yolo
        if y is None:
            raise advised(OSError(_DIRTY), "call kpu.init_yolo2(anchor, ...) before regionlayer_yolo2() "
                          "(the device would crash)")
        output = self._last_output("regionlayer_yolo2")
        loaded = self._require_model("regionlayer_yolo2")
        count = y["anchor_num"]
        if count <= 0 or len(y["anchors"]) < 2 * count:
            raise ValueError(f"[maixemu] init_yolo2 got {len(y['anchors'])} anchor values for anchor_num={count}; "
                             f"the region layer reads {2 * count} (the device reads past the list)")
        boxes = region_layer(
            output, layer_w=y["layer_w"], layer_h=y["layer_h"], anchors=y["anchors"][: 2 * count],
            threshold=y["threshold"], nms_value=y["nms_value"], classes=max(y["classes"], 0),
            net_w=y["net_w"], net_h=y["net_h"], img_w=y["img_w"], img_h=y["img_h"],
        )
        result = [[b.x, b.y, b.w, b.h, b.classid, b.value] for b in boxes]
        slot.record_boxes("KPU.regionlayer_yolo2", loaded, result)
        return result

    # ---------------------------------------------------------------------------- licence plates
    def lp_recog_load_weight_data(self, *args, **_ignored) -> None:
        """``(path)`` or ``(flash_addr, size)``: the 7 fully connected heads (``lp_weight.bin``)."""
        self._commit("released", "lp_recog_load_weight_data")
        if not args:
            raise TypeError("function missing 1 required positional arguments")
        where = args[0]
        if isinstance(where, str):
            data = _whole_file(where, "weight_data_size: {}\r\n", "weight data buffer memory allocation failed")
        elif isinstance(where, int):
            if len(args) < 2:
                raise TypeError("[maixemu] lp_recog_load_weight_data(flash_addr, size) needs the size")
            size = int_arg(args[1])
            if where <= 0:
                raise ValueError("path error!")
            if size <= 0:
                raise ValueError("size error!")
            print(f"weight_data_size: {size}\r\n", end="")
            slot.check_allocation(size, "weight data buffer memory allocation failed")
            data = slot.read_flash(where, size)
        else:
            raise ValueError("path error!")
        self._lp_weights = data

    def lp_recog(self) -> list:
        """Seven tuples of logits (31 provinces, 24 letters, 5 x 34) for the last ``run_with_output``."""
        self._commit("released", "lp_recog")
        if self._lp_weights is None:
            raise OSError("not find lp weight data, please load")
        return algorithm.lp_recog(self._last_output("lp_recog"), self._lp_weights)

    # ---------------------------------------------------------------------------- helpers
    @staticmethod
    def sigmoid(*args, **_ignored) -> float:
        """``KPU.sigmoid(x)`` or ``kpu.sigmoid(x)``: ``1 / (1 + exp(-x))`` in float32."""
        picked = _leading_self(args, 1)
        if picked is None:
            raise ValueError()
        return algorithm.sigmoid(float_arg(picked[0]))

    @staticmethod
    def softmax(*args, **_ignored) -> list:
        """``KPU.softmax(list)`` or ``kpu.softmax(list)``: a new list of float32 probabilities."""
        picked = _leading_self(args, 1)
        if picked is None:
            raise ValueError()
        values = require_list(picked[0])
        return algorithm.softmax([float_arg(v) for v in values])

    @staticmethod
    def feature_compare(*args, **_ignored) -> float:
        """``(0.5 + 0.5 * dot(f0, f1)) * 100`` of two equally long feature lists (0..100 for unit vectors)."""
        picked = _leading_self(args, 2)
        if picked is None:
            raise ValueError("need input 2 feature")
        f0, f1 = (items_of(f) for f in picked)
        if len(f0) != len(f1):
            raise ValueError("feature len error")
        score = algorithm.feature_score([float_arg(v) for v in f0], [float_arg(v) for v in f1])
        slot.record_score("KPU.feature_compare", score, len(f0))
        return score

    def _released_deinit(self) -> bool:
        self._lp_weights = None
        if self._loaded is None:
            return False
        self._loaded.release()
        self._loaded = None
        self._yolo = None
        self._ran = False
        print("free kpu model buf succeed\r\n", end="")
        return True

    def _released_repr(self) -> str:
        loaded = self._loaded
        size = loaded.size if loaded is not None else 0
        inputs = outputs = 0
        if loaded is not None:
            if loaded.model.version == 3:
                outputs = len(loaded.model.outputs)
            else:
                inputs, outputs = len(loaded.model.inputs), len(loaded.model.outputs)
        return (f"type        : kmodel (KPU) \nmodel_size  : {size}\n"
                f"inputs      : {inputs}\noutputs     : {outputs}\n")


__all__ = ["ReleasedApi"]
